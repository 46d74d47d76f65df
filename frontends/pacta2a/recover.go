package pacta2a

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// Recover returns next with every panic turned into an answer, so no input
// stops a process that serves many Brands: before any of the answer was
// sent, a bare 500;
// after, the answer is aborted (http.ErrAbortHandler), never left looking
// complete. Each panic is logged once, with its value and stack. A Handler
// recovers its own panics; Recover is for what a program mounts beside it,
// such as a demo sign-in. logger may be nil (no log).
func Recover(next http.Handler, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		serveRecovered(w, r, logger, func(w http.ResponseWriter) { next.ServeHTTP(w, r) })
	})
}

// serveRecovered runs serve with w, answering for a panic as Recover says.
func serveRecovered(w http.ResponseWriter, r *http.Request, logger *slog.Logger, serve func(http.ResponseWriter)) {
	tw := &trackingWriter{ResponseWriter: w}
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler {
			panic(v) // a deliberate abort, which net/http does not log
		}
		logger.ErrorContext(r.Context(), "handler panicked", slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
		if tw.wrote {
			panic(http.ErrAbortHandler) // half an answer is out: cut the connection, quietly (logged above)
		}
		h := w.Header()
		for k := range h {
			if k != "Connection" { // keep a close a body bound asked for
				delete(h, k)
			}
		}
		w.WriteHeader(http.StatusInternalServerError)
	}()
	serve(tw)
}

// trackingWriter notes whether any of the answer has been sent.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols { // other 1xx are interim: the answer is still to come
		t.wrote = true
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// FlushError lets http.ResponseController flush.
func (t *trackingWriter) FlushError() error {
	t.wrote = true
	return http.NewResponseController(t.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the writer's other features.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
