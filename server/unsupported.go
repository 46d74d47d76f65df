package server

import (
	"io"
	"net/http"
	"strconv"
)

// explainUnsupported gives connect-go's 415 a body. connect-go answers a
// POST whose Content-Type names no protocol and codec the handler serves
// (none at all, or curl's application/x-www-form-urlencoded for -d) with a
// bare 415 and an Accept-Post header; a person trying the API with curl
// then sees nothing. The body says what was sent and what to send, in
// plain text. A call whose Content-Type is in served (the types the
// handler accepts as they stand) is passed on untouched, with no wrapper;
// any other goes through one, which changes nothing unless the answer is
// 415.
func explainUnsupported(next http.Handler, served func(contentType string) bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || served(r.Header.Get("Content-Type")) {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&unsupportedWriter{ResponseWriter: w, got: r.Header.Values("Content-Type")}, r)
	})
}

// servedUnary reports whether a unary RPC handler serves ct as it stands:
// the Connect protocol, gRPC and gRPC-Web, each with the proto and JSON
// codecs, as connect-go names them in Accept-Post (a test holds every one
// of them to the handlers' own list, so no 415 can pass unexplained).
func servedUnary(ct string) bool {
	switch ct {
	case "application/proto", "application/json", "application/json; charset=utf-8",
		"application/grpc", "application/grpc+proto", "application/grpc+json",
		"application/grpc-web", "application/grpc-web+proto", "application/grpc-web+json":
		return true
	}
	return false
}

// servedStream is servedUnary for a streaming handler (reflection): the
// Connect streaming types instead of the unary ones.
func servedStream(ct string) bool {
	switch ct {
	case "application/connect+proto", "application/connect+json",
		"application/grpc", "application/grpc+proto", "application/grpc+json",
		"application/grpc-web", "application/grpc-web+proto", "application/grpc-web+json":
		return true
	}
	return false
}

// unsupportedWriter writes the explanation when the handler answers 415.
type unsupportedWriter struct {
	http.ResponseWriter
	got       []string // the request's Content-Type values
	explained bool
}

// maxEchoedContentType bounds how much of the caller's Content-Type the
// answer repeats.
const maxEchoedContentType = 100

func (w *unsupportedWriter) WriteHeader(code int) {
	if code != http.StatusUnsupportedMediaType || w.explained {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.explained = true
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.ResponseWriter.WriteHeader(code)
	_, _ = io.WriteString(w.ResponseWriter, unsupportedMessage(w.got, h.Get("Accept-Post")))
}

// unsupportedMessage is the 415 body: what the call sent, the one line
// that fixes a JSON call, and every Content-Type pactd accepts (connect-go's
// Accept-Post).
func unsupportedMessage(got []string, accepted string) string {
	var sent string
	switch {
	case len(got) == 0 || len(got) == 1 && got[0] == "":
		sent = "This call has no Content-Type."
	case len(got) > 1:
		sent = "This call has " + strconv.Itoa(len(got)) + " Content-Type headers; send one."
	default:
		ct := got[0]
		if len(ct) > maxEchoedContentType {
			ct = ct[:maxEchoedContentType] + "…"
		}
		sent = "pactd does not serve the Content-Type " + strconv.Quote(ct) + "."
	}
	msg := sent + " A JSON body over the Connect protocol needs \"Content-Type: application/json\"" +
		" (curl: -H 'Content-Type: application/json'); gRPC and gRPC-Web clients set theirs.\n"
	if accepted != "" {
		msg += "Accepted: " + accepted + "\n"
	}
	return msg
}

// Flush lets a streaming handler flush through the wrapper.
func (w *unsupportedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *unsupportedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
