package admin

import (
	"flag"
	"fmt"
	"io"
	"math"

	pactv1 "pactd.dev/pactd/gen/pact/v1"
)

const (
	// allPageSize is the page size of a listing that reads every page.
	allPageSize = 100
	// maxPages stops a listing whose pages never end (a pactd fault).
	maxPages = 100000
)

// pageFlags are a listing's -page-size and -page-token. Without either,
// a listing reads every page and prints them as one response whose
// next_page_token is empty; with either, it reads that one page and prints
// its response as it came, next_page_token included.
type pageFlags struct {
	size  int
	token string
	fs    *flag.FlagSet
}

func addPageFlags(fs *flag.FlagSet) *pageFlags {
	p := &pageFlags{fs: fs}
	fs.IntVar(&p.size, "page-size", 0, "read one page of at most `N` items (pactd allows 1 to 500; 0: its default, 50) instead of every page")
	fs.StringVar(&p.token, "page-token", "", "read the page after this `token` (the next_page_token of the page before)")
	return p
}

func (p *pageFlags) onePage() bool {
	one := false
	p.fs.Visit(func(f *flag.Flag) { one = one || f.Name == "page-size" || f.Name == "page-token" })
	return one
}

// each calls fetch for one page or for every page in turn; fetch returns
// the page's next_page_token. each returns the token after the last page
// read: empty unless one page was asked for and more follow.
func (p *pageFlags) each(fetch func(*pactv1.PageRequest) (string, error)) (string, error) {
	if p.onePage() {
		if p.size < 0 || p.size > math.MaxInt32 {
			return "", usageError("-page-size %d is out of range (pactd allows 1 to 500, or 0 for its default)", p.size)
		}
		return fetch(&pactv1.PageRequest{PageSize: int32(p.size), PageToken: p.token})
	}
	token := ""
	seen := map[string]bool{}
	for range maxPages {
		next, err := fetch(&pactv1.PageRequest{PageSize: allPageSize, PageToken: token})
		if err != nil || next == "" {
			return "", err
		}
		if seen[next] {
			return "", failure("pactd returned the page token %q twice: the listing does not end", next)
		}
		seen[next] = true
		token = next
	}
	return "", failure("pactd's listing did not end after %d pages", maxPages)
}

// footer tells a person how to read the next page, if there is one.
func (p *pageFlags) footer(w io.Writer, next string) {
	if next != "" {
		fmt.Fprintf(w, "more follow: add -page-token %s\n", next)
	}
}
