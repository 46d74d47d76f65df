package readmetest

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode"
)

// docsIndex is the docs tree's index: it links every page, and its order
// is the order the walk runs the pages' marked blocks in.
const docsIndex = "docs/README.md"

// readmeMaxLines bounds README.md: it is the front door, and the detail
// lives in docs/.
const readmeMaxLines = 250

var (
	// linkRE finds a Markdown link's target: [text](target).
	linkRE = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	// fenceRE is a fenced code block, whose text holds no links.
	fenceRE = regexp.MustCompile("(?ms)^```.*?^```[ \t]*$")
)

// links returns the local targets a page links, in order, as paths from the
// checkout's root (without #anchors; web and mail links left out).
func links(page, text string) []string {
	var out []string
	for _, l := range anchoredLinks(page, text) {
		if !l.samePage {
			out = append(out, l.path)
		}
	}
	return out
}

// link is a local link's target: a path from the checkout's root and an
// anchor (without "#"; "" for none).
type link struct {
	path, anchor string
	samePage     bool // the link is "#anchor" alone
}

// anchoredLinks returns every local link of a page, anchors included.
func anchoredLinks(page, text string) []link {
	var out []link
	for _, m := range linkRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(text, ""), -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		file, anchor, _ := strings.Cut(target, "#")
		if file == "" {
			out = append(out, link{path: page, anchor: anchor, samePage: true})
			continue
		}
		out = append(out, link{path: path.Clean(path.Join(path.Dir(page), file)), anchor: anchor})
	}
	return out
}

// headingRE is an ATX heading line.
var headingRE = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#* *$`)

// anchors are the ids a Markdown renderer gives a page's headings
// (GitHub's rule: lower case, spaces to hyphens, punctuation but - and _
// dropped, a repeated id numbered -1, -2, ...).
func anchors(text string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingRE.FindAllStringSubmatch(fenceRE.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			ids[fmt.Sprintf("%s-%d", id, n)] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

// walkOrder is the order of the pages whose marked blocks the walk runs:
// README.md, the docs index, then each docs page in the order the index
// first links it.
func walkOrder(root string) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join(root, docsIndex))
	if err != nil {
		return nil, err
	}
	order := []string{"README.md", docsIndex}
	for _, l := range links(docsIndex, string(raw)) {
		if strings.HasPrefix(l, "docs/") && strings.HasSuffix(l, ".md") && !slices.Contains(order, l) {
			order = append(order, l)
		}
	}
	return order, nil
}

// TestWalkOrder: the pages run in the index's order, each once, and only
// pages (not the README again, nor a folder or a file elsewhere).
func TestWalkOrder(t *testing.T) {
	got := links(docsIndex, "[a](getting-started.md) [b](api.md#agentservice) [c](../README.md) [d](https://x.example/y.md)\n"+
		"```sh\n[e](inside-a-fence.md)\n```\n[f](pages/) [g](#top) [h](getting-started.md#run-it)\n")
	want := []string{"docs/getting-started.md", "docs/api.md", "README.md", "docs/pages", "docs/getting-started.md"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("links = %v, want %v", got, want)
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, docsIndex), []byte("[b](b.md) [a](a.md) [b again](b.md#x) [up](../README.md) [dir](pages/)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	order, err := walkOrder(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[README.md docs/README.md docs/b.md docs/a.md]"; fmt.Sprint(order) != want {
		t.Errorf("walkOrder = %v, want %s", order, want)
	}
}

// TestDocsTree: the index links every page of docs/, every local link of
// README.md, of the lab's bench/README.md (its own module, outside docs/)
// and of the docs pages leads to a file or folder that exists,
// and the README is a front door: at most readmeMaxLines lines, linking the
// index, with no microsecond figures on its first screen.
func TestDocsTree(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 5 {
		t.Fatalf("docs/ has %d pages; the walk read the wrong folder", len(pages))
	}
	linked := map[string]bool{}
	ids := map[string]map[string]bool{} // a linked page's anchors
	all := append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "bench", "README.md")}, pages...)
	for _, p := range all {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range anchoredLinks(rel, string(raw)) {
			if rel == docsIndex {
				linked[l.path] = true
			}
			target, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(l.path)))
			if err != nil && !errors.Is(err, syscall.EISDIR) {
				t.Errorf("%s links %s, which does not exist", rel, l.path)
				continue
			}
			if ids[l.path] == nil {
				ids[l.path] = anchors(string(target))
			}
			if l.anchor != "" && !ids[l.path][l.anchor] {
				t.Errorf("%s links %s#%s, but %s has no heading with that anchor", rel, l.path, l.anchor, l.path)
			}
		}
	}
	for _, p := range pages {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel != docsIndex && !linked[rel] {
			t.Errorf("%s links no %s: add it to the index (a page's marked blocks run in the index's order)", docsIndex, rel)
		}
	}

	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: it is the front door; put the detail in a docs/ page and link it from %s", len(lines), readmeMaxLines, docsIndex)
	}
	if !slices.Contains(links("README.md", string(raw)), docsIndex) {
		t.Errorf("README.md does not link %s", docsIndex)
	}
	for i, l := range lines[:min(len(lines), 50)] {
		if strings.Contains(l, "µs") {
			t.Errorf("README.md:%d: a microsecond figure on the first screen (performance belongs in docs/performance.md): %s", i+1, l)
		}
	}
}

// TestAnchors: heading ids as a renderer makes them, so a link to a
// section that was renamed or moved fails TestDocsTree.
func TestAnchors(t *testing.T) {
	got := anchors("# Top\n## The API: `hdtp.v1`\n### Resource-bound delegation (spec §5.7, RFC 9396)\n" +
		"```sh\n# a comment, not a heading\n```\n## Top\n#### PACT 2.2 / HDTP 1.0\n")
	for _, want := range []string{"top", "the-api-hdtpv1", "resource-bound-delegation-spec-57-rfc-9396", "top-1", "pact-22--hdtp-10"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["a-comment-not-a-heading"] || len(got) != 5 {
		t.Errorf("anchors = %v, want the five headings outside the fence", got)
	}
}
