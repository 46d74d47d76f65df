package e2e_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A headless Chromium driven over the DevTools protocol, with a minimal
// WebSocket client (RFC 6455: text frames, client masking, continuation,
// ping and close), so the browser test needs no dependency but the
// Debian chromium package.

// chromium starts a headless Chromium for the test. Without one the test
// is skipped, except under CI=true, where it fails: CI installs chromium
// (scripts/test.sh).
func chromium(t *testing.T) *page {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed; CI must install it (scripts/test.sh does, as root): %v", err)
		}
		t.Skip("chromium is not installed (apt-get install chromium); CI=true makes this a failure")
	}
	profile, err := os.MkdirTemp("", "pactd-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers end with it
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var b *cdp
	t.Cleanup(func() {
		if b != nil {
			_, _ = b.call("", "Browser.close", nil)
			b.close()
		}
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group this test started
		<-exited
		_ = os.RemoveAll(profile)
	})

	// Chromium writes its port and browser endpoint to DevToolsActivePort.
	var port, path string
	deadline := time.Now().Add(30 * time.Second)
	for port == "" {
		if raw, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil {
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			if len(lines) == 2 {
				port, path = lines[0], lines[1]
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("chromium exited: %s", stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium did not open its DevTools port: %s", stderr.String())
		}
	}
	if b, err = dialCDP(t.Context(), "ws://127.0.0.1:"+port+path); err != nil {
		t.Fatal(err)
	}
	target, err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	var created struct{ TargetID string }
	_ = json.Unmarshal(target, &created)
	attached, err := b.call("", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var session struct{ SessionID string }
	_ = json.Unmarshal(attached, &session)
	p := &page{t: t, b: b, session: session.SessionID}
	p.do("Emulation.setDeviceMetricsOverride", map[string]any{"width": 820, "height": 720, "deviceScaleFactor": 1, "mobile": false})
	return p
}

// page is one browser tab.
type page struct {
	t       *testing.T
	b       *cdp
	session string
}

// do runs a DevTools command in the tab.
func (p *page) do(method string, params map[string]any) json.RawMessage {
	p.t.Helper()
	res, err := p.b.call(p.session, method, params)
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	return res
}

// eval evaluates JavaScript in the page and decodes its value into v.
func (p *page) eval(js string, v any) error {
	res, err := p.b.call(p.session, "Runtime.evaluate", map[string]any{"expression": js, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return err
	}
	var out struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return err
	}
	if out.ExceptionDetails != nil {
		return fmt.Errorf("%s: %s", js, out.ExceptionDetails.Text)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(out.Result.Value, v)
}

// run evaluates JavaScript and fails the test on an exception.
func (p *page) run(js string) {
	p.t.Helper()
	if err := p.eval(js, nil); err != nil {
		p.t.Fatal(err)
	}
}

// waitFor waits until a JavaScript condition holds in a loaded page (a
// page being replaced counts as not yet), for at most 15 seconds.
func (p *page) waitFor(cond string) {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var ok bool
		if err := p.eval(`document.readyState === "complete" && !!(`+cond+`)`, &ok); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			var where string
			_ = p.eval("location.href + ' ' + document.title", &where)
			p.t.Fatalf("waited 15s for %s; the page is %s", cond, where)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// open navigates and waits for the page at a path starting with want.
func (p *page) open(u, want string) {
	p.t.Helper()
	p.do("Page.navigate", map[string]any{"url": u})
	p.waitFor(`location.pathname.startsWith(` + jsString(want) + `)`)
}

// typeInto focuses an element and types text into it, as a keyboard does.
func (p *page) typeInto(selector, text string) {
	p.t.Helper()
	p.run(`document.querySelector(` + jsString(selector) + `).focus()`)
	p.do("Input.insertText", map[string]any{"text": text})
}

// click clicks an element (a button submits its form).
func (p *page) click(selector string) {
	p.t.Helper()
	p.run(`document.querySelector(` + jsString(selector) + `).click()`)
}

// screenshot returns a PNG of the whole page.
func (p *page) screenshot() []byte {
	p.t.Helper()
	var shot struct{ Data []byte }
	if err := json.Unmarshal(p.do("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}), &shot); err != nil {
		p.t.Fatal(err)
	}
	return shot.Data
}

// viewport sets the tab's width and height in CSS pixels; mobile makes it
// a phone's (the viewport meta tag applies, as on a phone).
func (p *page) viewport(width, height int, mobile bool) {
	p.t.Helper()
	scale := 1
	if mobile {
		scale = 2
	}
	p.do("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile})
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// cdp is a DevTools protocol connection: one call at a time, events
// ignored.
type cdp struct {
	conn net.Conn
	r    *bufio.Reader
	next int
}

func dialCDP(ctx context.Context, wsURL string) (*cdp, error) {
	u, err := url.Parse(wsURL)
	if err != nil {
		return nil, err
	}
	conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	key := base64.StdEncoding.EncodeToString(nonce)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.RequestURI(), u.Host, key)
	r := bufio.NewReader(conn)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		conn.Close()
		return nil, fmt.Errorf("websocket handshake: %s", res.Status)
	}
	return &cdp{conn: conn, r: r}, nil
}

func (c *cdp) close() { _ = c.conn.Close() }

// call sends a command and waits (at most 30 s) for its answer.
func (c *cdp) call(session, method string, params map[string]any) (json.RawMessage, error) {
	c.next++
	msg := map[string]any{"id": c.next, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	_ = c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if err := c.writeFrame(0x1, b); err != nil {
		return nil, err
	}
	for {
		data, err := c.readMessage()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		var res struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &res) != nil || res.ID != c.next {
			continue // an event, or not ours
		}
		if res.Error != nil {
			return nil, errors.New(res.Error.Message)
		}
		return res.Result, nil
	}
}

// writeFrame sends one final, masked frame.
func (c *cdp) writeFrame(opcode byte, payload []byte) error {
	hdr := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126)
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := make([]byte, 4)
	_, _ = rand.Read(mask)
	masked := make([]byte, len(payload))
	for i, v := range payload {
		masked[i] = v ^ mask[i%4]
	}
	_, err := c.conn.Write(append(append(hdr, mask...), masked...))
	return err
}

// readMessage reads one whole data message, answering pings.
func (c *cdp) readMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return nil, err
		}
		fin, opcode, n := h[0]&0x80 != 0, h[0]&0x0f, uint64(h[1]&0x7f)
		switch n {
		case 126:
			var e [2]byte
			if _, err := io.ReadFull(c.r, e[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(e[:]))
		case 127:
			var e [8]byte
			if _, err := io.ReadFull(c.r, e[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(e[:])
		}
		if n > 64<<20 {
			return nil, fmt.Errorf("websocket frame of %d bytes", n)
		}
		var mask [4]byte
		if h[1]&0x80 != 0 {
			if _, err := io.ReadFull(c.r, mask[:]); err != nil {
				return nil, err
			}
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(c.r, payload); err != nil {
			return nil, err
		}
		if h[1]&0x80 != 0 {
			for i := range payload {
				payload[i] ^= mask[i%4]
			}
		}
		switch opcode {
		case 0x8:
			return nil, errors.New("websocket closed")
		case 0x9:
			if err := c.writeFrame(0xA, payload); err != nil {
				return nil, err
			}
			continue
		case 0xA:
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}
