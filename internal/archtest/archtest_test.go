package archtest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// module is the main module's path; every package of the repository is under it.
const module = "pactd.dev/pactd"

// ---------------------------------------------------------------------------
// Walking the repository

// repoRoot returns the directory of pactd's go.mod, found upwards from the
// test's working directory (the package directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			if !regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(module) + `\s*$`).Match(b) {
				t.Fatalf("%s/go.mod is not module %s", dir, module)
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// goFile is one .go file of the main module.
type goFile struct {
	rel    string // slash path from the repository root, e.g. "db/open.go"
	pkg    string // import path of its directory, e.g. "pactd.dev/pactd/db"
	isTest bool
}

// goFiles lists the .go files the go command sees as part of the main module:
// it skips testdata, vendor, directories starting with "." or "_", and nested
// modules (tools/ has its own go.mod).
func goFiles(t *testing.T, root string) []goFile {
	t.Helper()
	var out []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			name := d.Name()
			if name == "testdata" || name == "vendor" || name == "node_modules" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		pkg := module
		if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
			pkg += "/" + dir
		}
		out = append(out, goFile{rel: rel, pkg: pkg, isTest: strings.HasSuffix(rel, "_test.go")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// under reports whether the slash path p is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// ---------------------------------------------------------------------------
// Layering

// classify returns a package's rank and its tree: the unit inside which
// imports are free (one service, one leaf helper, gen/, ...). ok is false
// for a package the rank table does not know.
//
// Each rank is one top-level folder (rank 0 is gen/, db's sqlc output and
// internal/, which holds leaf helpers only):
//
//	0  pactd.dev/pactd/gen/..., pactd.dev/pactd/db/internal/..., pactd.dev/pactd/internal/<leaf>/...
//	1  pactd.dev/pactd/db, pactd.dev/pactd/db/dbtest
//	2  pactd.dev/pactd/core/<name>/...      (the store-using core)
//	3  pactd.dev/pactd/services/<name>/...  (one package per API service)
//	4  pactd.dev/pactd/server/...           (the composition root)
//	4  pactd.dev/pactd/frontends/<name>/... (they see pactd only through gen/; see edgeProblem)
//	5  pactd.dev/pactd/cmd/<name>/...
func classify(importPath string) (rank int, tree string, ok bool) {
	rel, found := strings.CutPrefix(importPath, module+"/")
	if !found {
		return 0, "", false
	}
	first2 := func() string {
		parts := strings.SplitN(rel, "/", 3)
		if len(parts) < 2 {
			return rel
		}
		return parts[0] + "/" + parts[1]
	}
	switch {
	case under(rel, "gen"):
		return 0, "gen", true
	case under(rel, "db/internal"):
		return 0, "db/internal", true
	case under(rel, "server"):
		return 4, "server", true
	case strings.HasPrefix(rel, "core/"):
		return 2, first2(), true
	case strings.HasPrefix(rel, "internal/"):
		return 0, first2(), true
	case rel == "db":
		return 1, "db", true
	case under(rel, "db/dbtest"):
		return 1, "db/dbtest", true
	case strings.HasPrefix(rel, "services/"):
		return 3, first2(), true
	case strings.HasPrefix(rel, "frontends/"):
		return 4, first2(), true
	case strings.HasPrefix(rel, "cmd/"):
		return 5, first2(), true
	}
	return 0, "", false
}

// sameRankAllowed are the imports between two trees of the same rank that
// are allowed, each with why; add an entry only with a reason (the list
// should shrink, not grow). Inside one tree (a leaf helper
// and its subpackages, one service) imports are free, and every leaf helper
// may import gen/, the floor of rank 0; neither needs an entry.
var sameRankAllowed = map[string]string{
	"pactd.dev/pactd/db/dbtest -> pactd.dev/pactd/db": "the store contract suite judges engines through db.Store",

	"pactd.dev/pactd/internal/oauthhttp -> pactd.dev/pactd/internal/oauthwire": "the OAuth endpoints read forms and write errors in the one OAuth wire form the services decide in",

	"pactd.dev/pactd/internal/paging -> pactd.dev/pactd/internal/rpcerr": "a bad page token is an InvalidArgument with a field violation",
	"pactd.dev/pactd/internal/rpcerr -> pactd.dev/pactd/internal/reqlog": "Fault marks the request's fault as logged, so the RPC boundary does not log it twice",
	"pactd.dev/pactd/internal/pajwt -> pactd.dev/pactd/internal/jose":    "PA-JWT verification runs on the jose key set and JWKS client",

	"pactd.dev/pactd/internal/pajwt -> pactd.dev/pactd/internal/jws":          "PA JWTs are parsed and verified by the one compact-JWS core",
	"pactd.dev/pactd/internal/pajwt -> pactd.dev/pactd/internal/offheap":      "the repeat-token cache keeps its slots and strings outside the Go heap, out of the collector's goal and sweep",
	"pactd.dev/pactd/internal/delegtoken -> pactd.dev/pactd/internal/jws":     "delegation tokens, receipts and consent sessions are parsed, signed and verified by the one compact-JWS core",
	"pactd.dev/pactd/internal/jose -> pactd.dev/pactd/internal/jws":           "JWK documents are read with the core's strict unique-member JSON reader",
	"pactd.dev/pactd/internal/jose -> pactd.dev/pactd/internal/es256":         "a key set's P-256 keys carry their precomputed ES256 tables, which live and die with the set",
	"pactd.dev/pactd/internal/es256 -> pactd.dev/pactd/internal/offheap":      "ES256 tables are large, long-lived and pointer-free: kept outside the Go heap, they neither raise the collector's heap goal nor leave garbage to sweep when evicted",
	"pactd.dev/pactd/internal/jws -> pactd.dev/pactd/internal/es256":          "ES256 signatures are checked by the one ES256 verifier (crypto/ecdsa or a key's precomputed table)",
	"pactd.dev/pactd/internal/authzdetails -> pactd.dev/pactd/internal/jws":   "authorization_details are read and canonicalized by the one strict JSON value reader",
	"pactd.dev/pactd/internal/brandassert -> pactd.dev/pactd/internal/jose":   "Brand login assertions are verified against the Brand's JWKS through the jose key set",
	"pactd.dev/pactd/internal/brandassert -> pactd.dev/pactd/internal/jws":    "Brand login assertions are parsed and verified by the one compact-JWS core",
	"pactd.dev/pactd/internal/brandassert -> pactd.dev/pactd/internal/rpcerr": "an assertion refusal is an RPC error in pactd's ErrorInfo domain",
	"pactd.dev/pactd/internal/regjwt -> pactd.dev/pactd/internal/jose":        "registration JWTs are verified against a JWKS fetched under the onboarding address rules",
	"pactd.dev/pactd/internal/regjwt -> pactd.dev/pactd/internal/jws":         "registration JWTs are parsed and verified by the one compact-JWS core",
	"pactd.dev/pactd/internal/regjwt -> pactd.dev/pactd/internal/urlrule":     "a registration's URLs follow the onboarding URL rules",

	"pactd.dev/pactd/internal/delegtoken -> pactd.dev/pactd/internal/scopeid": "a delegation token's and a receipt's scopes follow the one scope-id rule",
	"pactd.dev/pactd/internal/jose -> pactd.dev/pactd/internal/urlrule":       "the dial guard applies the one public-address rule, the one onboarding applies",
	"pactd.dev/pactd/internal/config -> pactd.dev/pactd/internal/tracing":     "the configuration says whether the OTEL_* variables it is given turn tracing on, by the tracing package's rule",
	"pactd.dev/pactd/internal/hdtp/wire -> pactd.dev/pactd/internal/jws":      "fingerprints, card certificates and every HDTP member are base64url read by the one strict decoder",
	"pactd.dev/pactd/internal/hdtp/envelope -> pactd.dev/pactd/internal/jws":  "envelope arguments, headers and plaintexts are read by the one strict unique-member JSON reader",
}

// knownExceptions are imports that break the rule today and are to be
// removed, each with why it is still here. The list only shrinks: an entry
// that no longer occurs fails the test.
var knownExceptions = map[string]string{}

// edgeProblem returns why from may not import to, or "" when it may.
// Exceptions are not consulted here.
func edgeProblem(from, to string) string {
	fr, ftree, ok := classify(from)
	if !ok {
		return from + " has no rank: place it in the rank table (classify)"
	}
	tr, ttree, ok := classify(to)
	if !ok {
		return to + " has no rank: place it in the rank table (classify)"
	}
	edge := from + " -> " + to
	relFrom := strings.TrimPrefix(from, module+"/")
	relTo := strings.TrimPrefix(to, module+"/")
	switch {
	case ftree == ttree:
		return ""
	case under(relTo, "cmd") || strings.HasPrefix(relTo, "cmd/"):
		return edge + ": nothing imports cmd/"
	case under(relFrom, "frontends/pacta2a") && !under(relTo, "gen"):
		return edge + ": frontends/pacta2a (the frontend library) sees pactd only through the generated clients in gen/"
	case strings.HasPrefix(relFrom, "frontends/") && !under(relTo, "gen") && !strings.HasPrefix(relTo, "frontends/"):
		return edge + ": the frontends see pactd only through the generated clients in gen/ (and each other)"
	case under(relFrom, "cmd/pact-a2a") && !under(relTo, "gen") && !strings.HasPrefix(relTo, "frontends/"):
		return edge + ": cmd/pact-a2a sees pactd only through the frontends and the generated clients in gen/"
	case strings.HasPrefix(relTo, "frontends/") && !strings.HasPrefix(relFrom, "frontends/") && !strings.HasPrefix(relFrom, "cmd/"):
		return edge + ": only cmd/ and the frontends import frontends/"
	case strings.HasPrefix(relFrom, "frontends/") && strings.HasPrefix(relTo, "frontends/"):
		return "" // the demo and the example build on the library
	case under(relTo, "db/internal") && from != module+"/db":
		return edge + ": db/internal (sqlc output) is imported only by pactd.dev/pactd/db"
	case from == module+"/db" && (under(relTo, "gen") || strings.HasPrefix(relTo, "services/")):
		return edge + ": pactd.dev/pactd/db stays free of protobuf and of services"
	case strings.HasPrefix(relFrom, "services/") && strings.HasPrefix(relTo, "services/"):
		return edge + ": a service never imports another service; move what they share into core/ or internal/"
	case strings.HasPrefix(relTo, "services/") && !under(relFrom, "server"):
		return edge + ": only server/ (the composition root) imports services/"
	case tr < fr:
		return ""
	case fr == 0 && ttree == "gen":
		return "" // gen/ is the floor of rank 0
	case fr == tr:
		if _, ok := sameRankAllowed[edge]; ok {
			return ""
		}
		return fmt.Sprintf("%s: both rank %d; an import between two trees of one rank needs an entry in sameRankAllowed", edge, fr)
	}
	return fmt.Sprintf("%s: rank %d imports rank %d; an import may only point to a lower rank", edge, fr, tr)
}

// imports returns the pactd imports of every non-test file outside gen/ and
// db/internal/ (generated code is not held to the rule), by importing
// package, and how many files it parsed.
func imports(t *testing.T, root string) (graph map[string]map[string]string, files int) {
	t.Helper()
	graph = map[string]map[string]string{} // importer -> imported -> first file
	fset := token.NewFileSet()
	for _, f := range goFiles(t, root) {
		if f.isTest || under(f.rel, "gen") || under(f.rel, "db/internal") {
			continue
		}
		af, err := parser.ParseFile(fset, filepath.Join(root, f.rel), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("parse %s: %v", f.rel, err)
		}
		files++
		if graph[f.pkg] == nil {
			graph[f.pkg] = map[string]string{}
		}
		for _, imp := range af.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatalf("%s: import %s: %v", f.rel, imp.Path.Value, err)
			}
			if p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			if _, seen := graph[f.pkg][p]; !seen {
				graph[f.pkg][p] = f.rel
			}
		}
	}
	return graph, files
}

func TestImportsPointDownTheRanks(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	graph, files := imports(t, root)

	// The control: a guard that reads nothing passes everything.
	edges := 0
	for _, to := range graph {
		edges += len(to)
	}
	if files < 20 || len(graph) < 10 || edges < 15 {
		t.Fatalf("read %d files in %d packages with %d pactd imports; the repository has more, so the walk is broken", files, len(graph), edges)
	}
	if _, ok := graph[module+"/cmd/pactd"][module+"/server"]; !ok {
		t.Fatalf("did not see cmd/pactd import server; the import reader is broken")
	}
	// The frontends are read too: the rule for them judges real edges.
	for _, e := range [][2]string{{"cmd/pact-a2a", "frontends/pacta2a"}, {"frontends/demo", "frontends/pacta2a"},
		{"frontends/a2a-go-example", "frontends/pacta2a"}, {"frontends/a2a-go-example", "frontends/demo"}, {"frontends/pacta2a", "gen/pact/v1"}} {
		if _, ok := graph[module+"/"+e[0]][module+"/"+e[1]]; !ok {
			t.Fatalf("did not see %s import %s; the walk misses the frontends", e[0], e[1])
		}
	}

	var problems []string
	used := map[string]bool{}
	for from, tos := range graph {
		if _, _, ok := classify(from); !ok {
			problems = append(problems, from+" has no rank: place it in the rank table (classify)")
			continue
		}
		for to, file := range tos {
			p := edgeProblem(from, to)
			edge := from + " -> " + to
			if _, ok := sameRankAllowed[edge]; ok {
				used["allow:"+edge] = true
			}
			if p == "" {
				continue
			}
			if _, ok := knownExceptions[edge]; ok {
				used["exception:"+edge] = true
				continue
			}
			problems = append(problems, p+" (in "+file+")")
		}
	}
	for edge, why := range knownExceptions {
		if strings.TrimSpace(why) == "" {
			problems = append(problems, "knownExceptions["+edge+"] has no reason")
		}
		if !used["exception:"+edge] {
			problems = append(problems, edge+" is a known exception but no longer happens: remove it from knownExceptions")
		}
	}
	for edge, why := range sameRankAllowed {
		if strings.TrimSpace(why) == "" {
			problems = append(problems, "sameRankAllowed["+edge+"] has no reason")
		}
		if !used["allow:"+edge] {
			problems = append(problems, edge+" is allowed but no longer happens: remove it from sameRankAllowed")
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("checked %d pactd imports of %d packages (%d files); %d known exception(s)", edges, len(graph), files, len(knownExceptions))
}

// TestEdgeProblem holds the rule itself to account, so a broken rule cannot
// pass a repository that happens to be clean.
func TestEdgeProblem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, from, to string
		ok             bool
	}{
		{"ok/server-service", "pactd.dev/pactd/server", "pactd.dev/pactd/services/agent", true},
		{"ok/server-db", "pactd.dev/pactd/server", "pactd.dev/pactd/db", true},
		{"ok/cmd-server", "pactd.dev/pactd/cmd/pactd", "pactd.dev/pactd/server", true},
		{"ok/cmd-config", "pactd.dev/pactd/cmd/pactd", "pactd.dev/pactd/internal/config", true},
		{"ok/service-db", "pactd.dev/pactd/services/brand", "pactd.dev/pactd/db", true},
		{"ok/service-gen", "pactd.dev/pactd/services/brand", "pactd.dev/pactd/gen/pact/v1/pactv1connect", true},
		{"ok/service-leaf", "pactd.dev/pactd/services/brand", "pactd.dev/pactd/internal/rpcerr", true},
		{"ok/service-own-subpackage", "pactd.dev/pactd/services/verification", "pactd.dev/pactd/services/verification/internal/x", true},
		{"ok/leaf-gen", "pactd.dev/pactd/internal/rpcerr", "pactd.dev/pactd/gen/pact/v1", true},
		{"ok/leaf-own-subpackage", "pactd.dev/pactd/internal/jose", "pactd.dev/pactd/internal/jose/jwk", true},
		{"ok/leaf-leaf-allowed", "pactd.dev/pactd/internal/paging", "pactd.dev/pactd/internal/rpcerr", true},
		{"ok/db-generated", "pactd.dev/pactd/db", "pactd.dev/pactd/db/internal/pgq", true},
		{"ok/dbtest-db", "pactd.dev/pactd/db/dbtest", "pactd.dev/pactd/db", true},
		{"ok/a2a-gen", "pactd.dev/pactd/cmd/pact-a2a", "pactd.dev/pactd/gen/pact/v1/pactv1connect", true},
		{"ok/a2a-frontend", "pactd.dev/pactd/cmd/pact-a2a", "pactd.dev/pactd/frontends/pacta2a", true},
		{"ok/a2a-demo", "pactd.dev/pactd/cmd/pact-a2a", "pactd.dev/pactd/frontends/demo", true},
		{"ok/pacta2a-gen", "pactd.dev/pactd/frontends/pacta2a", "pactd.dev/pactd/gen/pact/v1/pactv1connect", true},
		{"ok/demo-pacta2a", "pactd.dev/pactd/frontends/demo", "pactd.dev/pactd/frontends/pacta2a", true},
		{"ok/demo-gen", "pactd.dev/pactd/frontends/demo", "pactd.dev/pactd/gen/pact/v1", true},
		{"ok/example-pacta2a", "pactd.dev/pactd/frontends/a2a-go-example", "pactd.dev/pactd/frontends/pacta2a", true},
		{"ok/example-demo", "pactd.dev/pactd/frontends/a2a-go-example", "pactd.dev/pactd/frontends/demo", true},
		{"ok/pact-demo-demo", "pactd.dev/pactd/cmd/pact-demo", "pactd.dev/pactd/frontends/demo", true},

		{"ok/core-db", "pactd.dev/pactd/core/agentdir", "pactd.dev/pactd/db", true},
		{"ok/core-leaf", "pactd.dev/pactd/core/agentdir", "pactd.dev/pactd/internal/ttlcache", true},
		{"ok/service-core", "pactd.dev/pactd/services/verification", "pactd.dev/pactd/core/agentdir", true},
		{"ok/server-core", "pactd.dev/pactd/server", "pactd.dev/pactd/core/provkeys", true},
		{"ok/cmd-core", "pactd.dev/pactd/cmd/pactd", "pactd.dev/pactd/core/provkeys", true},

		{"fail/db-core", "pactd.dev/pactd/db", "pactd.dev/pactd/core/auth", false},
		{"fail/leaf-core", "pactd.dev/pactd/internal/pajwt", "pactd.dev/pactd/core/agentdir", false},
		{"fail/core-core-unlisted", "pactd.dev/pactd/core/auth", "pactd.dev/pactd/core/agentdir", false},
		{"fail/core-service", "pactd.dev/pactd/core/auth", "pactd.dev/pactd/services/agent", false},
		{"fail/core-server", "pactd.dev/pactd/core/provkeys", "pactd.dev/pactd/server", false},
		{"fail/cmd-service", "pactd.dev/pactd/cmd/pactd", "pactd.dev/pactd/services/agent", false},
		{"fail/db-gen", "pactd.dev/pactd/db", "pactd.dev/pactd/gen/pact/v1", false},
		{"fail/db-service", "pactd.dev/pactd/db", "pactd.dev/pactd/services/agent", false},
		{"fail/db-server", "pactd.dev/pactd/db", "pactd.dev/pactd/server", false},
		{"fail/service-service", "pactd.dev/pactd/services/verification", "pactd.dev/pactd/services/agent", false},
		{"fail/service-server", "pactd.dev/pactd/services/agent", "pactd.dev/pactd/server", false},
		{"fail/service-db-internal", "pactd.dev/pactd/services/agent", "pactd.dev/pactd/db/internal/pgq", false},
		{"fail/server-db-internal", "pactd.dev/pactd/server", "pactd.dev/pactd/db/internal/liteq", false},
		{"fail/dbtest-db-internal", "pactd.dev/pactd/db/dbtest", "pactd.dev/pactd/db/internal/pgq", false},
		{"fail/leaf-db", "pactd.dev/pactd/internal/rpcerr", "pactd.dev/pactd/db", false},
		{"fail/leaf-service", "pactd.dev/pactd/internal/jose", "pactd.dev/pactd/services/agent", false},
		{"fail/leaf-server", "pactd.dev/pactd/internal/config", "pactd.dev/pactd/server", false},
		{"fail/leaf-leaf-unlisted", "pactd.dev/pactd/internal/ids", "pactd.dev/pactd/internal/jose", false},
		{"fail/leaf-db-internal", "pactd.dev/pactd/internal/jose", "pactd.dev/pactd/db/internal/pgq", false},
		{"fail/server-cmd", "pactd.dev/pactd/server", "pactd.dev/pactd/cmd/pactd", false},
		{"fail/cmd-cmd", "pactd.dev/pactd/cmd/pact-a2a", "pactd.dev/pactd/cmd/pactd", false},
		{"fail/a2a-server", "pactd.dev/pactd/cmd/pact-a2a", "pactd.dev/pactd/server", false},
		{"fail/a2a-leaf", "pactd.dev/pactd/cmd/pact-a2a", "pactd.dev/pactd/internal/rpcerr", false},
		{"fail/a2a-db", "pactd.dev/pactd/cmd/pact-a2a", "pactd.dev/pactd/db", false},
		{"fail/pacta2a-demo", "pactd.dev/pactd/frontends/pacta2a", "pactd.dev/pactd/frontends/demo", false},
		{"fail/pacta2a-leaf", "pactd.dev/pactd/frontends/pacta2a", "pactd.dev/pactd/internal/a2aerr", false},
		{"fail/pacta2a-db", "pactd.dev/pactd/frontends/pacta2a", "pactd.dev/pactd/db", false},
		{"fail/demo-leaf", "pactd.dev/pactd/frontends/demo", "pactd.dev/pactd/internal/rpcerr", false},
		{"fail/example-server", "pactd.dev/pactd/frontends/a2a-go-example", "pactd.dev/pactd/server", false},
		{"fail/example-service", "pactd.dev/pactd/frontends/a2a-go-example", "pactd.dev/pactd/services/brand", false},
		{"fail/example-cmd", "pactd.dev/pactd/frontends/a2a-go-example", "pactd.dev/pactd/cmd/pact-a2a", false},
		{"fail/server-frontend", "pactd.dev/pactd/server", "pactd.dev/pactd/frontends/pacta2a", false},
		{"fail/service-frontend", "pactd.dev/pactd/services/brand", "pactd.dev/pactd/frontends/demo", false},
		{"fail/leaf-frontend", "pactd.dev/pactd/internal/a2aerr", "pactd.dev/pactd/frontends/pacta2a", false},
		{"fail/unranked-importer", "pactd.dev/pactd/tools/x", "pactd.dev/pactd/db", false},
		{"fail/unranked-imported", "pactd.dev/pactd/services/agent", "pactd.dev/pactd/misc", false},
		{"fail/root-package", "pactd.dev/pactd/server", "pactd", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := edgeProblem(tc.from, tc.to)
			if tc.ok && p != "" {
				t.Errorf("%s -> %s refused: %s", tc.from, tc.to, p)
			}
			if !tc.ok && p == "" {
				t.Errorf("%s -> %s allowed; want it refused", tc.from, tc.to)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// No SQL and no database driver outside db/

// driverImports are refused outside db/ (prefix match on the import path).
var driverImports = []string{
	"database/sql",
	"github.com/jackc/pgx",
	"github.com/jackc/pgconn",
	"github.com/jackc/pgtype",
	"github.com/lib/pq",
	"modernc.org/sqlite",
	"github.com/mattn/go-sqlite3",
	"github.com/ncruces/go-sqlite3",
}

// sqlStatement matches a string literal that is a SQL statement, after any
// leading "-- ..." comment lines (sqlc prefixes its queries with one). It is
// narrower than "starts with a SQL verb" so that error text such as
// "delete brand %s: %w" is not taken for SQL.
var (
	sqlLeadingComments = regexp.MustCompile(`^(\s*--[^\n]*\n)*`)
	sqlStatement       = regexp.MustCompile(`(?is)^\s*(` +
		`SELECT\s.*\bFROM\s|SELECT\s+\d+\s*;?\s*$|` +
		`INSERT\s+(OR\s+\w+\s+)?INTO\s|` +
		`UPDATE\s+\S+\s+SET\s|` +
		`DELETE\s+FROM\s|` +
		`WITH\s+(RECURSIVE\s+)?\w+\s+AS\s*\(|` +
		`(CREATE|ALTER|DROP)\s+(UNIQUE\s+)?(TABLE|INDEX|VIEW|SCHEMA|DATABASE|SEQUENCE|TYPE|TRIGGER)\s|` +
		`TRUNCATE\s)`)
)

func isSQL(s string) bool {
	return sqlStatement.MatchString(sqlLeadingComments.ReplaceAllString(s, ""))
}

// sqlFinding is one driver import or SQL string found in a file.
type sqlFinding struct{ pos, what string }

// scanSQL parses one file and returns its driver imports and SQL string
// literals, and how many string literals it looked at.
func scanSQL(t *testing.T, fset *token.FileSet, path, rel string) (found []sqlFinding, literals int) {
	t.Helper()
	af, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", rel, err)
	}
	for _, imp := range af.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		for _, d := range driverImports {
			if p == d || strings.HasPrefix(p, d+"/") {
				found = append(found, sqlFinding{fset.Position(imp.Pos()).String(), "imports " + p})
			}
		}
	}
	ast.Inspect(af, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if importPathLit(af, lit) {
			return true
		}
		literals++
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if isSQL(s) {
			short := s
			if len(short) > 60 {
				short = short[:60] + "…"
			}
			found = append(found, sqlFinding{fset.Position(lit.Pos()).String(), "SQL string " + strconv.Quote(short)})
		}
		return true
	})
	return found, literals
}

func importPathLit(f *ast.File, lit *ast.BasicLit) bool {
	for _, imp := range f.Imports {
		if imp.Path == lit {
			return true
		}
	}
	return false
}

func TestNoSQLOutsideDB(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	fset := token.NewFileSet()
	var problems []string
	outsideFiles, outsideLits := 0, 0
	insideSQL := 0
	for _, f := range goFiles(t, root) {
		if f.isTest {
			continue
		}
		found, lits := scanSQL(t, fset, filepath.Join(root, f.rel), f.rel)
		if under(f.rel, "db") {
			// The positive control: the scanner must recognise db's own SQL.
			for _, fd := range found {
				if strings.HasPrefix(fd.what, "SQL string") {
					insideSQL++
				}
			}
			continue
		}
		outsideFiles++
		outsideLits += lits
		for _, fd := range found {
			problems = append(problems, fmt.Sprintf("%s: %s outside db/; statements belong in db/queries and drivers in db/", fd.pos, fd.what))
		}
	}
	// .sql files outside db/ would be SQL by another door (go:embed).
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || rel == "db") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".sql") {
			problems = append(problems, rel+": a .sql file outside db/")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	if outsideFiles < 20 || outsideLits < 100 {
		t.Fatalf("read %d files and %d string literals outside db/; the repository has more, so the walk is broken", outsideFiles, outsideLits)
	}
	if insideSQL < 5 {
		t.Fatalf("found %d SQL strings inside db/; the generated queries alone have more, so the SQL matcher is broken", insideSQL)
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("no SQL in %d files (%d string literals) outside db/; %d SQL strings recognised inside db/", outsideFiles, outsideLits, insideSQL)
}

func TestIsSQL(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, s string
		sql     bool
	}{
		{"sql/select", "SELECT id, name FROM brands WHERE id = $1", true},
		{"sql/select-lowercase-multiline", "\n  select id\n  from agents\n  where issuer = ?", true},
		{"sql/select-1", "SELECT 1", true},
		{"sql/insert", "INSERT INTO agents (id) VALUES ($1)", true},
		{"sql/insert-or-ignore", "insert or ignore into agents (id) values (?)", true},
		{"sql/update", "UPDATE agents SET name = $2 WHERE id = $1", true},
		{"sql/delete", "DELETE FROM brands WHERE id = ?", true},
		{"sql/cte", "WITH x AS (SELECT 1) SELECT * FROM x", true},
		{"sql/create-table", "CREATE TABLE t (id TEXT)", true},
		{"sql/create-unique-index", "create unique index t_i on t (id)", true},
		{"sql/alter-table", "ALTER TABLE t ADD COLUMN x INT", true},
		{"sql/drop-table", "DROP TABLE t", true},
		{"sql/create-database", "CREATE DATABASE pactd_test_1", true},
		{"sql/sqlc-comment", "-- name: GetAgent :one\nSELECT id FROM agents WHERE id = $1\n", true},
		{"text/error-delete", "delete brand %s: %w", false},
		{"text/error-update", "update agent: %w", false},
		{"text/error-insert", "insert credential: %w", false},
		{"text/select-word", "select a brand first", false},
		{"text/create", "create token for %s", false},
		{"text/drop", "drop the connection", false},
		{"text/procedure", "/pact.v1.AgentService/DeleteAgent", false},
		{"text/empty", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := isSQL(tc.s); got != tc.sql {
				t.Errorf("isSQL(%q) = %v, want %v", tc.s, got, tc.sql)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// Every fuzz target runs under -fuzz

// fuzzTargets returns "./dir FuzzName" for every fuzz target the go command
// knows: a top-level func FuzzXxx(*testing.F) in a _test.go file. It also
// returns how many test files it parsed.
func fuzzTargets(t *testing.T, root string) (targets []string, testFiles int) {
	t.Helper()
	fset := token.NewFileSet()
	for _, f := range goFiles(t, root) {
		if !f.isTest {
			continue
		}
		af, err := parser.ParseFile(fset, filepath.Join(root, f.rel), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", f.rel, err)
		}
		testFiles++
		for _, decl := range af.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !isFuzzName(fn.Name.Name) || !takesTestingF(af, fn) {
				continue
			}
			targets = append(targets, "./"+filepath.ToSlash(filepath.Dir(f.rel))+" "+fn.Name.Name)
		}
	}
	sort.Strings(targets)
	return targets, testFiles
}

// isFuzzName reports whether name is Fuzz or FuzzXxx with Xxx not starting
// with a lower-case letter, as the go command requires.
func isFuzzName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Fuzz")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return !unicode.IsLower(r)
}

// takesTestingF reports whether fn has the one parameter *testing.F.
func takesTestingF(f *ast.File, fn *ast.FuncDecl) bool {
	params := fn.Type.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "F" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	for _, imp := range f.Imports {
		if imp.Path.Value == `"testing"` {
			name := "testing"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			return pkg.Name == name
		}
	}
	return false
}

func TestEveryFuzzTargetRunsInTheFuzzSmoke(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	want, testFiles := fuzzTargets(t, root)

	// The control: the walk must have seen the repository's test files.
	if testFiles < 5 {
		t.Fatalf("parsed %d _test.go files; the repository has more, so the walk is broken", testFiles)
	}

	// The script must run what its discovery finds, not a list of its own.
	script, err := os.ReadFile(filepath.Join(root, "scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{
		`grep -rl '^func Fuzz' --include='*_test.go'`,
		`targets=$(discover_fuzz)`,
		`-fuzz "^${name}\$"`,
	} {
		if !bytes.Contains(script, []byte(must)) {
			t.Errorf("scripts/test.sh no longer contains %q: the fuzz smoke must run every target its discovery finds", must)
		}
	}
	if m := regexp.MustCompile(`-fuzz[= ]+['"]?\^?Fuzz\w`).Find(script); m != nil {
		t.Errorf("scripts/test.sh names a fuzz target itself (%q); let the discovery find them", m)
	}

	// Run the script's own discovery and compare it with the parsed targets.
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed to run the discovery of scripts/test.sh: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), bash, filepath.Join(root, "scripts", "test.sh"), "--list-fuzz")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash scripts/test.sh --list-fuzz: %v\n%s", err, stderr.Bytes())
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" {
			got = append(got, line)
		}
	}
	sort.Strings(got)
	gotSet := map[string]bool{}
	for _, g := range got {
		gotSet[g] = true
	}
	wantSet := map[string]bool{}
	for _, w := range want {
		wantSet[w] = true
		if !gotSet[w] {
			t.Errorf("fuzz target %q is not found by scripts/test.sh's discovery, so it never runs under -fuzz", w)
		}
	}
	for _, g := range got {
		if !wantSet[g] {
			t.Errorf("scripts/test.sh's discovery lists %q, which is not a fuzz target (func FuzzXxx(*testing.F) in a _test.go file)", g)
		}
	}
	if len(want) == 0 {
		t.Logf("no fuzz targets yet (%d test files parsed)", testFiles)
		return
	}
	t.Logf("%d fuzz target(s), all in the fuzz smoke: %s", len(want), strings.Join(want, ", "))
}
