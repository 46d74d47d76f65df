package pacta2a

import (
	"errors"
	"io"
	"net/http"
)

// maxFormBytes bounds the body of a page's form.
const maxFormBytes = 16 << 10

// readBody reads a request body of at most limit bytes. Past the bound, or
// on a read error, it reports false and marks the connection to be closed
// after the answer (RFC 9112 §9.3): what is left of the body must never be
// read as the next request.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		w.Header().Set("Connection", "close")
		return nil, false
	}
	return body, true
}

// parseForm reads a page's POST form (at most maxFormBytes) into
// r.PostForm. It returns 0, or the status to refuse it with: 413 past the
// bound, 400 when it cannot be read; either way the connection is closed
// after the answer, as readBody does.
func parseForm(w http.ResponseWriter, r *http.Request) int {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	err := r.ParseForm()
	if err == nil {
		return 0
	}
	w.Header().Set("Connection", "close")
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}
