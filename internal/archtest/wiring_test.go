package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// wiringPage shows each SDK example's complete PACT wiring.
const wiringPage = "docs/frontend-servers.md"

// wiringPage shows each SDK example's complete PACT wiring, at most 40
// lines each, so a reader sees all of it in one place. A block after
// "<!-- wiring: PATH -->" must be an excerpt of PATH (its lines, in order;
// a line that is only "// …" marks an elision), must hold every
// PACT-marked line of PATH, and the page must state how many there are in
// the sentence after the block ("**N lines of PACT-specific code**"). So
// the page cannot show a wiring that is not the example's, leave part of
// it out, or give a wrong count.
func TestDocsShowEachExamplesWholePACTWiring(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(wiringPage)))
	if err != nil {
		t.Fatal(err)
	}
	marked := regexp.MustCompile(`\S.*// PACT(:.*)?$`) // code, then the mark (a comment alone on its line is not code)
	blocks := regexp.MustCompile("(?s)<!-- wiring: ([^ ]+) -->\n```[a-z]*\n(.*?)\n```\n(.*?)\n\n").FindAllSubmatch(page, -1)
	want := []string{"frontends/a2a-go-example/main.go", "frontends/a2a-js-example/src/main.ts"}
	if len(blocks) != len(want) {
		t.Fatalf("%s has %d wiring blocks, want one each for %v", wiringPage, len(blocks), want)
	}
	for i, b := range blocks {
		path, block, after := string(b[1]), strings.Split(string(b[2]), "\n"), string(b[3])
		if path != want[i] {
			t.Errorf("wiring block %d is of %s, want %s", i, path, want[i])
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		// An excerpt: each block line is a later line of the file.
		at := 0
		for _, l := range block {
			if strings.TrimSpace(l) == "// …" {
				continue
			}
			for at < len(lines) && lines[at] != l {
				at++
			}
			if at == len(lines) {
				t.Errorf("%s: %s's line %q is not (in this order) a line of the file", path, wiringPage, l)
				break
			}
			at++
		}
		// Complete: every marked line of the file is in the block.
		shown := map[string]bool{}
		for _, l := range block {
			shown[l] = true
		}
		n := 0
		for k, l := range lines {
			if !marked.MatchString(l) || strings.HasPrefix(strings.TrimSpace(l), "//") {
				continue
			}
			n++
			if !shown[l] {
				t.Errorf("%s:%d is PACT wiring %s leaves out: %s", path, k+1, wiringPage, strings.TrimSpace(l))
			}
		}
		if n == 0 || n > 40 {
			t.Errorf("%s has %d PACT-marked lines; the examples promise 1 to 40", path, n)
		}
		m := regexp.MustCompile(`\*\*(\d+) lines of PACT-specific code\*\*`).FindStringSubmatch(after)
		if m == nil || m[1] != strconv.Itoa(n) {
			t.Errorf("after %s's block %s says %v; the file has %d PACT-marked lines", path, wiringPage, m, n)
		}
	}
}
