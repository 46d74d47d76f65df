package e2e_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pactd.dev/pactd/internal/a2aerr"
)

// TestNoInputStopsTheFrontend (docs/frontends.md, "Limits and failures"):
// odd requests nobody authenticated, such as a non-ASCII Brand id in the
// demo sign-in's path (which names its cookie), get an answer, and the
// frontend goes on serving every Brand afterwards.
func TestNoInputStopsTheFrontend(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		form := "Content-Type: application/x-www-form-urlencoded"
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/demo/%C3%A9t%C3%A9/login?return_to=%2Fa2a%2F%C3%A9t%C3%A9%2Foauth%2Fconsent", ""},
			{"POST", "/demo/%C3%A9t%C3%A9/login", "username=alice&return_to=%2Fa2a%2F%C3%A9t%C3%A9%2Foauth%2Fconnected"},
			{"POST", "/demo/%C3%A9t%C3%A9/login", "username=alice&return_to="}, // a sign-in that succeeds: the cookie's name holds the id
			{"POST", "/demo/a%20b%3B%2C/login", "username=alice&return_to="},
			{"POST", "/demo/%E2%80%AE/login", "username=%C3%A9&return_to=%2F%2Fevil.example"},
			{"GET", "/a2a/%C3%A9t%C3%A9/oauth/consent?user_code=%00", ""},
			{"POST", "/a2a/%C3%A9t%C3%A9/oauth/consent", "assertion=x"},
			{"GET", "/a2a/" + shop + "/oauth/connected?status=%FF", ""},
			{"POST", "/a2a/" + shop + "/oauth/consent/decision", "csrf=%zz&decision=allow"},
			// The frontend's own pages: the root page, the 404 page, the
			// connected pages of both login modes, self-registration.
			{"GET", "/?%C3%A9=%0D%0A", ""},
			{"GET", "/a2a/%0D%0ASet-Cookie:%20x=1/", ""},
			{"GET", "/a2a/%E2%80%AE%00/.well-known/agent-card.json", ""},
			{"POST", "/a2a/" + mart + "/oauth/connected", "assertion=%FF%FE%0D%0A&session=%zz"},
			{"POST", "/a2a/" + mart + "/oauth/connected", "session=a.b.c&session=%00"},
			{"POST", "/a2a/" + mart + "/oauth/connected/revoke", "session=%E2%80%AE&agent_id=%0D%0A&confirm=1"},
			{"POST", "/a2a/" + shop + "/oauth/connected/revoke", "agent_id=%C3%A9&csrf=%0A"},
			{"POST", "/api/platforms", `{"name":"\ud800\u00e9\r\n","jwksUri":"https://%E2%80%AE.example/jwks"}`},
			{"POST", "/api/platforms", `{"name":[],"jwksUri":{},"name":"x"}`},
		} {
			req, err := http.NewRequestWithContext(t.Context(), c.method, w.feURL+c.path, strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.body != "" {
				k, v, _ := strings.Cut(form, ": ")
				req.Header.Set(k, v)
			}
			if c.path == "/api/platforms" {
				req.Header.Set("Authorization", "Bearer e30. e30.x\t") // whitespace inside and after a token
				req.Header.Set("Content-Type", "application/json")
			}
			req.Header.Set("Accept", "text/html") // the 404 page's branch
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s: no answer: %v", c.method, c.path, err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode >= 500 {
				t.Errorf("%s %s: %d; an odd request is the client's problem, not a server failure", c.method, c.path, res.StatusCode)
			}
			// Still serving every Brand.
			if r := w.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", ""); r.status != 200 {
				t.Fatalf("after %s %s the card answers %d", c.method, c.path, r.status)
			}
		}
	})
}

// TestOversizedBodyNeverHangsTheConnection (RFC 9112 §9.3): after the
// frontend refuses a body past its bound, a keep-alive client that sends
// its next request on the same connection gets, within a bounded wait,
// either end of file (the connection was closed) or a proper answer to that
// request; never a hang, never the rest of the body read as a request. The
// control: a small refused body leaves the connection serving.
func TestOversizedBodyNeverHangsTheConnection(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		tok := w.token(t, "user-big")
		auth := "Authorization: Bearer " + tok + "\r\n"
		next := "GET /a2a/acme/.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n"
		big := func(n int) string { return "csrf=" + strings.Repeat("a", n-5) }
		tooLarge := errBody(a2aerr.InvalidParams, "The request body is unreadable or too large")
		cases := []struct {
			name, head, body string
			status           int
			a2a              string // the exact A2A body, for message:send
		}{
			{"fail/send-2MiB", "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: " + strconv.Itoa(2<<20) + "\r\n\r\n",
				big(2 << 20), 400, tooLarge},
			{"fail/send-just-past-1MiB", "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: " + strconv.Itoa(1<<20+64) + "\r\n\r\n",
				big(1<<20 + 64), 400, tooLarge},
			// mart's decision form is read before anything else (its session is in it).
			{"fail/form-20KiB", "POST /a2a/" + mart + "/oauth/consent/decision HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
				strconv.Itoa(20<<10) + "\r\n\r\n", big(20 << 10), 413, ""},
			// The connected page of a signed-assertion Brand reads its form first too.
			{"fail/connected-form-20KiB", "POST /a2a/" + mart + "/oauth/connected HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
				strconv.Itoa(20<<10) + "\r\n\r\n", big(20 << 10), 413, ""},
			// pactd's OAuth token endpoint: a form past every bound, on a
			// keep-alive connection.
			{"fail/oauth-token-1536KiB", "POST /a2a/" + shop + "/oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
				strconv.Itoa(1536<<10) + "\r\n\r\n", big(1536 << 10), 413, ""},
			{"ok/small-refused-body", "POST /a2a/acme/message:send HTTP/1.1\r\nHost: x\r\n" + auth + "Content-Length: 1\r\n\r\n", "{", 400,
				errBody(a2aerr.InvalidParams, `The body must be JSON: {"message": Message}`)},
		}
		// POST /api/platforms bounds its body at 8 KiB where it is mounted
		// (the SDK examples answer 404 without reading it).
		regStatus := 404
		if slices.Contains(selfRegistering, frontendFor(t).name) {
			regStatus = 413
		}
		cases = append(cases, struct {
			name, head, body string
			status           int
			a2a              string
		}{"fail/registration-64KiB", "POST /api/platforms HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer e30.e30.x\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(64<<10) + "\r\n\r\n", `{"name":"` + strings.Repeat("a", 64<<10-11) + `"}`, regStatus, ""})
		for _, c := range cases {
			conn, err := net.Dial("tcp", strings.TrimPrefix(w.feURL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			_ = conn.SetDeadline(time.Now().Add(20 * time.Second)) // a hang fails the test, never blocks it
			go func() {
				_, _ = io.WriteString(conn, c.head+c.body) // fails once the server closes: as it should
				_, _ = io.WriteString(conn, next)
			}()
			br := bufio.NewReader(conn)
			res, err := http.ReadResponse(br, nil)
			if err != nil {
				conn.Close()
				t.Fatalf("%s: reading the refusal: %v", c.name, err)
			}
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != c.status || c.a2a != "" && string(b) != c.a2a {
				t.Errorf("%s: %d %.200s; want %d %s", c.name, res.StatusCode, b, c.status, c.a2a)
			}
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			second, err := http.ReadResponse(br, nil)
			var ne net.Error
			switch {
			case err == nil:
				b, _ := io.ReadAll(second.Body)
				if second.StatusCode != 200 || !strings.Contains(string(b), `"supportedInterfaces"`) {
					t.Errorf("%s: the next request on the connection got %d %.200s; want the card (or a closed connection)", c.name, second.StatusCode, b)
				}
			case strings.HasPrefix(c.name, "ok/"):
				t.Errorf("%s: the connection did not serve the next request: %v", c.name, err)
			case errors.As(err, &ne) && ne.Timeout():
				t.Errorf("%s: the connection hangs after the refusal", c.name)
			case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), strings.Contains(err.Error(), "connection reset"):
				// closed: what was left of the body never became a request
			default:
				t.Errorf("%s: after the refusal: %v", c.name, err)
			}
			conn.Close()
		}
	})
}

// TestBrandIDNotUTF8IsNotFound: a Brand id whose percent-escapes decode to
// bytes that are not UTF-8 names no Brand: every frontend answers the 404
// PACT 1.0 §1.2 asks for (bare for API clients, the 404 page for a
// browser), never a server failure; a real Brand's card is the control.
func TestBrandIDNotUTF8IsNotFound(t *testing.T) {
	frontendsAndEngines(t, func(t *testing.T, dbURL string) {
		w := newWorld(t, dbURL)
		auth := "Authorization: Bearer " + w.token(t, "user-1")
		for _, path := range []string{"/a2a/%FF/.well-known/agent-card.json", "/a2a/%FF%FE/message:send", "/a2a/a%C3/oauth/connected"} {
			wantBare(t, "GET "+path, w.do(t, "GET", path, ""), 404)
			if r := w.do(t, "GET", path, "", "Accept: text/html"); r.status != 404 || !strings.Contains(r.body, "There is no page at this address.") {
				t.Errorf("browser GET %s: %d %.200s", path, r.status, r.body)
			}
			if r := w.do(t, "POST", path, "{}", auth); r.status != 404 && r.status != 405 {
				t.Errorf("POST %s: %d; want 404 (or 405 for the card's path)", path, r.status)
			}
		}
		if r := w.do(t, "GET", "/a2a/acme/.well-known/agent-card.json", ""); r.status != 200 {
			t.Fatalf("the control: acme's card answers %d", r.status)
		}
	})
}
