package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pactLines parses src and returns the lines whose trailing comment starts
// with "// PACT" (a comment alone on its line does not count: it is not
// code), and the lines that use PACT (package pacta2a or demo, or a PACT
// setting) without such a comment.
func pactLines(t *testing.T, src []byte) (marked []int, unmarked []string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "main.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	isMarked := map[int]bool{}
	for _, g := range f.Comments {
		for _, c := range g.List {
			p := fset.Position(c.Slash)
			if strings.HasPrefix(c.Text, "// PACT") && strings.TrimSpace(lines[p.Line-1][:p.Column-1]) != "" {
				isMarked[p.Line] = true
				marked = append(marked, p.Line)
			}
		}
	}
	settings := regexp.MustCompile(`PACTD_URL|PACT_FRONTEND_TOKEN|A2A_DEMO|A2A_AGENT_URL`)
	ast.Inspect(f, func(n ast.Node) bool {
		line := 0
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && (x.Name == "pacta2a" || x.Name == "demo") {
				line = fset.Position(n.Pos()).Line
			}
		case *ast.BasicLit:
			if settings.MatchString(n.Value) {
				line = fset.Position(n.Pos()).Line
			}
		}
		if line != 0 && !isMarked[line] {
			unmarked = append(unmarked, strconv.Itoa(line)+": "+strings.TrimSpace(lines[line-1]))
		}
		return true
	})
	return marked, unmarked
}

// TestPACTLinesAreFewAndCounted: the example's PACT wiring stays within 40
// lines, every line that uses PACT is marked (so the count cannot be made
// small by leaving marks off). internal/archtest checks that
// docs/frontend-servers.md shows these lines and gives their number.
func TestPACTLinesAreFewAndCounted(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	marked, unmarked := pactLines(t, src)
	for _, u := range unmarked {
		t.Errorf("main.go:%s uses PACT but has no // PACT mark", u)
	}
	if len(marked) == 0 || len(marked) > 40 {
		t.Fatalf("%d PACT lines; the example promises at most 40 (and has some)", len(marked))
	}
	t.Logf("%d PACT lines: %v", len(marked), marked)
}

// TestPACTLineCounter holds the counter to account: a trailing mark
// counts, a comment line does not, and an unmarked use of PACT is found.
func TestPACTLineCounter(t *testing.T) {
	src := []byte(`package main

// PACT: a comment line is not code
import "pactd.dev/pactd/frontends/pacta2a"

var a = pacta2a.EchoAgent{} // PACT
var b = pacta2a.EchoAgent{}
var c = "PACTD_URL"
var d = 1 // PACT: marked, though it uses nothing
`)
	marked, unmarked := pactLines(t, src)
	if len(marked) != 2 || marked[0] != 6 || marked[1] != 9 {
		t.Errorf("marked = %v, want [6 9]", marked)
	}
	if len(unmarked) != 2 || !strings.HasPrefix(unmarked[0], "7: ") || !strings.HasPrefix(unmarked[1], "8: ") {
		t.Errorf("unmarked = %q, want lines 7 and 8", unmarked)
	}
}

// TestRunNeedsAFrontendToken: without PACT_FRONTEND_TOKEN the server does
// not start, and says what to set.
func TestRunNeedsAFrontendToken(t *testing.T) {
	err := run(t.Context(), []string{"-listen", "127.0.0.1:0"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "PACT_FRONTEND_TOKEN") {
		t.Fatalf("run without a token = %v", err)
	}
}
