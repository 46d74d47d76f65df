// Package paging turns pact.v1.PageRequest into keyset bounds and back. Page
// tokens are opaque to clients: a versioned, base64url-encoded last id.
package paging

import (
	"encoding/base64"
	"strings"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
	"pactd.dev/pactd/internal/rpcerr"
)

// Limits of a page.
const (
	DefaultSize = 50
	MaxSize     = 500
	maxToken    = 512
)

// Page is a validated page request.
type Page struct {
	// AfterID is the last id of the previous page ("" for the first).
	AfterID string
	// Size is the number of items to return.
	Size int
}

// Parse validates a page request; field names are for field violations.
func Parse(p *pactv1.PageRequest) (Page, error) {
	var v rpcerr.Violations
	out := Page{Size: DefaultSize}
	switch n := p.GetPageSize(); {
	case n < 0 || n > MaxSize:
		v.Add("page.page_size", "must be between 0 and %d", MaxSize)
	case n > 0:
		out.Size = int(n)
	}
	if tok := p.GetPageToken(); tok != "" {
		after, ok := decode(tok)
		if !ok {
			v.Add("page.page_token", "is not a token this listing returned")
		}
		out.AfterID = after
	}
	return out, v.Err()
}

// Next returns the token for the page after one that ended at lastID, or ""
// when the page was not full (so there is no next page).
func Next(got, size int, lastID string) string {
	if got < size {
		return ""
	}
	return "v1." + base64.RawURLEncoding.EncodeToString([]byte(lastID))
}

func decode(tok string) (string, bool) {
	if len(tok) > maxToken || !strings.HasPrefix(tok, "v1.") {
		return "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(tok[3:])
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
}
