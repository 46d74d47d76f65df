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
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// module is the main module's path; every package of the repository is under it.
const module = "pactd.dev/pactd"

// nestedModules are the repository's other modules with Go code, read with
// the main module: each folder's module path is module + "/" + folder, so
// its packages' import paths follow the tree as the main module's do. The
// lab (bench/: load generators, the failover lab, benchmark scripts) is a
// module of its own so that the product's go.mod carries nothing only it
// needs. Any other nested module (tools/, bench/peers/*: module files of
// pinned tools) must hold no Go code; goFiles fails on one that does.
var nestedModules = []string{"bench"}

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

// goFile is one .go file of the main module or of a nested module in
// nestedModules.
type goFile struct {
	rel    string // slash path from the repository root, e.g. "db/open.go"
	pkg    string // import path of its directory, e.g. "pactd.dev/pactd/db"
	isTest bool
}

// goFiles lists the .go files the go command sees as part of the main module
// and of the nestedModules: it skips testdata, vendor, directories starting
// with "." or "_", and any other nested module (tools/ has its own go.mod),
// which must hold no .go file.
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
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				rel = filepath.ToSlash(rel)
				if slices.Contains(nestedModules, rel) {
					checkModulePath(t, path, module+"/"+rel)
					return nil
				}
				if code := goCodeIn(t, path); code != "" {
					file, _ := filepath.Rel(root, code)
					t.Errorf("%s is a module of its own with Go code (%s) that no guard reads: add it to nestedModules", rel, filepath.ToSlash(file))
				}
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

// checkModulePath fails the test unless dir/go.mod declares module want.
func checkModulePath(t *testing.T, dir, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^module\s+` + regexp.QuoteMeta(want) + `\s*$`).Match(b) {
		t.Fatalf("%s/go.mod is not module %s: its import paths would not follow the tree", dir, want)
	}
}

// goCodeIn returns the first .go file under dir (outside testdata), or "".
func goCodeIn(t *testing.T, dir string) string {
	t.Helper()
	var found string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			found = path
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// under reports whether the slash path p is dir or inside it.
func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// ---------------------------------------------------------------------------
// Layering

// rank is a package's place in the layers. An import may only point to a
// lower rank: a lower layer, or a lower level inside the same layer. Two
// trees of one rank never import each other; there is no list of allowed
// edges and no list of exceptions.
type rank struct{ layer, level int }

func (r rank) below(o rank) bool {
	return r.layer < o.layer || r.layer == o.layer && r.level < o.level
}

func (r rank) String() string { return fmt.Sprintf("%d.%d", r.layer, r.level) }

// The layers, bottom up; each is one top-level folder (or two that never
// import each other), so the tree shows them.
const (
	layerGen     = iota // gen/, db/internal/: generated code
	layerLeaf           // internal/<leaf>: helpers that import nothing of pactd but gen/
	layerToken          // token/<pkg>: the token/JOSE core, levels in tokenLevels
	layerHDTP           // hdtp/<pkg>: the HDTP protocol core, levels in hdtpLevels
	layerDB             // db (level 0) and its contract suite db/dbtest (level 1)
	layerCore           // core/<name>: the shared core below the services
	layerService        // services/<name>: one package per API service
	layerRoot           // server/... (the composition root), frontends/<name>/... (levels in frontendLevels)
	layerCmd            // cmd/<name>: the programs
	layerLab            // bench/internal/<name> (level 0), bench/cmd/<name> (level 1): the lab, a module of its own
)

// tokenLevels ranks the token/JOSE core's packages inside their layer.
var tokenLevels = map[string]int{
	"offheap":      0, // memory outside the Go heap
	"es256":        1, // ES256 verification and per-key tables
	"jws":          2, // the compact-JWS core and its strict JSON reader
	"jose":         3, // key sets and the hardened JWKS client
	"authzdetails": 3, // authorization_details, read with the core's JSON reader
	"delegtoken":   3, // pactd's own tokens: at+jwt, receipts, consent sessions
	"pajwt":        4, // PA JWTs, verified against a fetched JWKS
	"regjwt":       4, // registration JWTs, verified against a fetched JWKS
	"brandassert":  4, // Brand login assertions, verified against a fetched JWKS
}

// hdtpLevels ranks the HDTP protocol core's packages inside their layer.
var hdtpLevels = map[string]int{
	"address":  0, // endpoint normal form and the address guard
	"wire":     0, // generations, error codes, fingerprints, the base64url codec
	"cert":     1, // the certificate profile and chains
	"invite":   1, // invite tokens
	"hdtptest": 1, // the published vectors, for tests
	"card":     2, // cards
	"envelope": 2, // envelopes
	"peertest": 3, // another person's agent, for tests
}

// frontendLevels ranks the Go frontends inside the root layer: a demo
// builds on its library, an example on both.
var frontendLevels = map[string]int{
	"pacta2a":         0,
	"hdtphost":        0,
	"demo":            1,
	"hdtpdemo":        1,
	"a2a-go-example":  2,
	"hdtp-go-example": 2,
}

// classify returns a package's rank and its tree: the unit inside which
// imports are free (one service, one leaf helper, one package of the token
// core, server/ with its adapters, ...). ok is false for a package the rank
// table does not know, including a token/, hdtp/ or frontends/ package
// without a level.
//
//	0    pactd.dev/pactd/gen/..., pactd.dev/pactd/db/internal/...
//	1    pactd.dev/pactd/internal/<leaf>/...
//	2.n  pactd.dev/pactd/token/<pkg>/...     (n from tokenLevels)
//	3.n  pactd.dev/pactd/hdtp/<pkg>/...      (n from hdtpLevels)
//	4.0  pactd.dev/pactd/db
//	4.1  pactd.dev/pactd/db/dbtest
//	5    pactd.dev/pactd/core/<name>/...
//	6    pactd.dev/pactd/services/<name>/...
//	7.0  pactd.dev/pactd/server/...          (the composition root and its adapters)
//	7.n  pactd.dev/pactd/frontends/<name>/... (n from frontendLevels; they see pactd only through gen/, see edgeProblem)
//	8    pactd.dev/pactd/cmd/<name>/...
//	9.0  pactd.dev/pactd/bench/internal/<name>/... (the lab's helpers)
//	9.1  pactd.dev/pactd/bench/cmd/<name>/...      (the lab's programs)
func classify(importPath string) (r rank, tree string, ok bool) {
	rel, found := strings.CutPrefix(importPath, module+"/")
	if !found {
		return rank{}, "", false
	}
	parts := strings.SplitN(rel, "/", 3)
	first2 := rel
	if len(parts) >= 2 {
		first2 = parts[0] + "/" + parts[1]
	}
	leveled := func(layer int, levels map[string]int) (rank, string, bool) {
		if len(parts) < 2 {
			return rank{}, "", false
		}
		n, ok := levels[parts[1]]
		return rank{layer, n}, first2, ok
	}
	switch {
	case under(rel, "gen"):
		return rank{layerGen, 0}, "gen", true
	case under(rel, "db/internal"):
		return rank{layerGen, 0}, "db/internal", true
	case strings.HasPrefix(rel, "internal/"):
		return rank{layerLeaf, 0}, first2, true
	case strings.HasPrefix(rel, "token/"):
		return leveled(layerToken, tokenLevels)
	case strings.HasPrefix(rel, "hdtp/"):
		return leveled(layerHDTP, hdtpLevels)
	case rel == "db":
		return rank{layerDB, 0}, "db", true
	case under(rel, "db/dbtest"):
		return rank{layerDB, 1}, "db/dbtest", true
	case strings.HasPrefix(rel, "core/"):
		return rank{layerCore, 0}, first2, true
	case strings.HasPrefix(rel, "services/"):
		return rank{layerService, 0}, first2, true
	case under(rel, "server"):
		return rank{layerRoot, 0}, "server", true
	case strings.HasPrefix(rel, "frontends/"):
		return leveled(layerRoot, frontendLevels)
	case strings.HasPrefix(rel, "cmd/"):
		return rank{layerCmd, 0}, first2, true
	case strings.HasPrefix(rel, "bench/"):
		lab := strings.SplitN(rel, "/", 4) // "bench", "internal" or "cmd", <name>, ...
		if len(lab) < 3 {
			return rank{}, "", false
		}
		tree := strings.Join(lab[:3], "/")
		switch lab[1] {
		case "internal":
			return rank{layerLab, 0}, tree, true
		case "cmd":
			return rank{layerLab, 1}, tree, true
		}
	}
	return rank{}, "", false
}

// testOnly are the folders whose packages only tests import: the one fake
// clock and the one fake signer (a PA's key and JWKS, or the Provider's
// key ring). A non-test file importing one fails TestImportsPointDownTheRanks.
var testOnly = []string{"internal/testkit"}

// edgeProblem returns why from may not import to, or "" when it may.
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
	for _, dir := range testOnly {
		if under(relTo, dir) && !under(relFrom, dir) {
			return edge + ": " + dir + " is for tests; only _test.go files import it"
		}
	}
	switch {
	case ftree == ttree:
		return ""
	case strings.HasPrefix(relTo, "cmd/"):
		return edge + ": nothing imports cmd/"
	case strings.HasPrefix(relTo, "bench/") && !strings.HasPrefix(relFrom, "bench/"):
		return edge + ": the product never imports the lab (bench/, a module of its own)"
	case strings.HasPrefix(relTo, "bench/cmd/"):
		return edge + ": nothing imports the lab's programs (bench/cmd/)"
	case under(relFrom, "frontends/pacta2a") && !under(relTo, "gen"):
		return edge + ": frontends/pacta2a (the frontend library) sees pactd only through the generated clients in gen/"
	case strings.HasPrefix(relFrom, "frontends/") && !under(relTo, "gen") && !strings.HasPrefix(relTo, "frontends/"):
		return edge + ": the frontends see pactd only through the generated clients in gen/ (and each other)"
	case under(relFrom, "cmd/pact-a2a") && !under(relTo, "gen") && !strings.HasPrefix(relTo, "frontends/"):
		return edge + ": cmd/pact-a2a sees pactd only through the frontends and the generated clients in gen/"
	case strings.HasPrefix(relTo, "frontends/") && !strings.HasPrefix(relFrom, "frontends/") && !strings.HasPrefix(relFrom, "cmd/"):
		return edge + ": only cmd/ and the frontends import frontends/"
	case under(relTo, "db/internal") && from != module+"/db":
		return edge + ": db/internal (sqlc output) is imported only by pactd.dev/pactd/db"
	case from == module+"/db" && under(relTo, "gen"):
		return edge + ": pactd.dev/pactd/db stays free of protobuf"
	case strings.HasPrefix(relFrom, "services/") && strings.HasPrefix(relTo, "services/"):
		return edge + ": a service never imports another service; move what they share into core/"
	case strings.HasPrefix(relTo, "services/") && !under(relFrom, "server"):
		return edge + ": only server/ (the composition root) imports services/"
	case tr.below(fr):
		return ""
	case tr == fr:
		return fmt.Sprintf("%s: both rank %s; two trees of one rank never import each other (give one a lower level in classify, or move what they share down)", edge, fr)
	}
	return fmt.Sprintf("%s: rank %s imports rank %s; an import may only point to a lower rank", edge, fr, tr)
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
	// The lab's module is read too, its edges into the product and its own.
	for _, e := range [][2]string{{"bench/cmd/pactd-failover", "server"}, {"bench/cmd/pactd-loadgen", "bench/internal/loadstat"},
		{"bench/cmd/pactd-failover", "db/dbtest"}} {
		if _, ok := graph[module+"/"+e[0]][module+"/"+e[1]]; !ok {
			t.Fatalf("did not see %s import %s; the walk misses the lab's module (bench/)", e[0], e[1])
		}
	}
	// The frontends are read too: the rule for them judges real edges,
	for _, e := range [][2]string{{"cmd/pact-a2a", "frontends/pacta2a"}, {"frontends/demo", "frontends/pacta2a"},
		{"frontends/a2a-go-example", "frontends/pacta2a"}, {"frontends/a2a-go-example", "frontends/demo"}, {"frontends/pacta2a", "gen/pact/v1"},
		// and the levels inside the token and HDTP cores.
		{"token/pajwt", "token/jose"}, {"token/jws", "token/es256"}, {"hdtp/envelope", "hdtp/cert"}, {"hdtp/wire", "token/jws"}} {
		if _, ok := graph[module+"/"+e[0]][module+"/"+e[1]]; !ok {
			t.Fatalf("did not see %s import %s; the walk misses a layer", e[0], e[1])
		}
	}

	var problems []string
	for from, tos := range graph {
		if _, _, ok := classify(from); !ok {
			problems = append(problems, from+" has no rank: place it in the rank table (classify)")
			continue
		}
		for to, file := range tos {
			if p := edgeProblem(from, to); p != "" {
				problems = append(problems, p+" (in "+file+")")
			}
		}
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("checked %d pactd imports of %d packages (%d files)", edges, len(graph), files)
}

// TestEdgeProblem holds the rule itself to account, so a broken rule cannot
// pass a repository that happens to be clean.
func TestEdgeProblem(t *testing.T) {
	t.Parallel()
	const m = module + "/"
	cases := []struct {
		name, from, to string
		ok             bool
	}{
		// Layer 0, generated code: imports nothing of pactd's (it is not
		// read), and only db imports db/internal.
		{"ok/gen-gen", m + "gen/pact/v1/pactv1connect", m + "gen/pact/v1", true},
		{"fail/gen-leaf", m + "gen/pact/v1", m + "internal/rpcerr", false},

		// Layer 1, leaves: gen/ only.
		{"ok/leaf-gen", m + "internal/rpcerr", m + "gen/pact/v1", true},
		{"ok/leaf-own-subpackage", m + "internal/testkit/testsigner", m + "internal/testkit/testclock", true},
		{"fail/leaf-leaf", m + "internal/ids", m + "internal/urlrule", false},
		{"fail/leaf-token", m + "internal/rpcerr", m + "token/jws", false},
		{"fail/leaf-db", m + "internal/rpcerr", m + "db", false},
		{"fail/leaf-db-internal", m + "internal/ids", m + "db/internal/pgq", false},
		{"fail/leaf-service", m + "internal/oauthwire", m + "services/agent", false},
		{"fail/leaf-server", m + "internal/ratelimit", m + "server", false},
		{"fail/leaf-frontend", m + "internal/a2aerr", m + "frontends/pacta2a", false},

		// Layer 2, the token/JOSE core: leaves, gen/, and lower levels.
		{"ok/token-leaf", m + "token/regjwt", m + "internal/urlrule", true},
		{"ok/token-gen", m + "token/authzdetails", m + "gen/pact/v1", true},
		{"ok/token-lower-level", m + "token/pajwt", m + "token/jose", true},
		{"ok/jws-es256", m + "token/jws", m + "token/es256", true},
		{"ok/es256-offheap", m + "token/es256", m + "token/offheap", true},
		{"ok/token-own-subpackage", m + "token/jws", m + "token/jws/jwstest", true},
		{"fail/token-same-level", m + "token/pajwt", m + "token/regjwt", false},
		{"fail/token-same-level-2", m + "token/jose", m + "token/delegtoken", false},
		{"fail/token-higher-level", m + "token/jws", m + "token/jose", false},
		{"fail/offheap-es256", m + "token/offheap", m + "token/es256", false},
		{"fail/token-hdtp", m + "token/jws", m + "hdtp/wire", false},
		{"fail/token-db", m + "token/authzdetails", m + "db", false},
		{"fail/token-core", m + "token/pajwt", m + "core/agentdir", false},
		{"fail/token-unlevelled", m + "token/newthing", m + "token/jws", false},

		// Layer 3, the HDTP core: the token core, leaves, lower levels.
		{"ok/hdtp-token", m + "hdtp/wire", m + "token/jws", true},
		{"ok/hdtp-leaf", m + "hdtp/address", m + "internal/urlrule", true},
		{"ok/hdtp-lower-level", m + "hdtp/envelope", m + "hdtp/cert", true},
		{"fail/hdtp-same-level", m + "hdtp/card", m + "hdtp/envelope", false},
		{"fail/hdtp-higher-level", m + "hdtp/wire", m + "hdtp/cert", false},
		{"fail/hdtp-db", m + "hdtp/cert", m + "db", false},
		{"fail/hdtp-unlevelled", m + "hdtp/newthing", m + "hdtp/wire", false},

		// Layer 4, db: its generated code and the cores; dbtest above db.
		{"ok/db-generated", m + "db", m + "db/internal/pgq", true},
		{"ok/db-token", m + "db", m + "token/authzdetails", true},
		{"ok/dbtest-db", m + "db/dbtest", m + "db", true},
		{"ok/dbtest-leaf", m + "db/dbtest", m + "internal/freeport", true},
		{"fail/db-dbtest", m + "db", m + "db/dbtest", false},
		{"fail/db-gen", m + "db", m + "gen/pact/v1", false},
		{"fail/db-core", m + "db", m + "core/auth", false},
		{"fail/db-service", m + "db", m + "services/agent", false},
		{"fail/db-server", m + "db", m + "server", false},
		{"fail/dbtest-db-internal", m + "db/dbtest", m + "db/internal/pgq", false},

		// Layer 5, core: db and below; never another core package.
		{"ok/core-db", m + "core/agentdir", m + "db", true},
		{"ok/core-token", m + "core/agentdir", m + "token/pajwt", true},
		{"ok/core-leaf", m + "core/paging", m + "internal/rpcerr", true},
		{"fail/core-core", m + "core/auth", m + "core/agentdir", false},
		{"fail/core-service", m + "core/auth", m + "services/agent", false},
		{"fail/core-server", m + "core/provkeys", m + "server", false},
		{"fail/core-db-internal", m + "core/auth", m + "db/internal/liteq", false},

		// Layer 6, services: core and below; never another service.
		{"ok/service-core", m + "services/verification", m + "core/agentdir", true},
		{"ok/service-db", m + "services/brand", m + "db", true},
		{"ok/service-hdtp", m + "services/hdtp", m + "hdtp/envelope", true},
		{"ok/service-gen", m + "services/brand", m + "gen/pact/v1/pactv1connect", true},
		{"ok/service-own-subpackage", m + "services/delegation/token", m + "services/delegation/base", true},
		{"fail/service-service", m + "services/verification", m + "services/agent", false},
		{"fail/service-server", m + "services/agent", m + "server", false},
		{"fail/service-server-adapter", m + "services/delegation", m + "server/oauthhttp", false},
		{"fail/service-db-internal", m + "services/agent", m + "db/internal/pgq", false},
		{"fail/service-frontend", m + "services/brand", m + "frontends/demo", false},

		// Layer 7, the composition root (with its adapters) and the frontends.
		{"ok/server-service", m + "server", m + "services/agent", true},
		{"ok/server-db", m + "server", m + "db", true},
		{"ok/server-core", m + "server", m + "core/provkeys", true},
		{"ok/server-adapter", m + "server", m + "server/oauthhttp", true},
		{"ok/adapter-adapter", m + "server/config", m + "server/tracing", true},
		{"ok/pacta2a-gen", m + "frontends/pacta2a", m + "gen/pact/v1/pactv1connect", true},
		{"ok/demo-pacta2a", m + "frontends/demo", m + "frontends/pacta2a", true},
		{"ok/example-demo", m + "frontends/a2a-go-example", m + "frontends/demo", true},
		{"ok/hdtpdemo-hdtphost", m + "frontends/hdtpdemo", m + "frontends/hdtphost", true},
		{"fail/server-db-internal", m + "server", m + "db/internal/liteq", false},
		{"fail/server-frontend", m + "server", m + "frontends/pacta2a", false},
		{"fail/server-cmd", m + "server", m + "cmd/pactd", false},
		{"fail/pacta2a-demo", m + "frontends/pacta2a", m + "frontends/demo", false},
		{"fail/pacta2a-hdtphost", m + "frontends/pacta2a", m + "frontends/hdtphost", false},
		{"fail/demo-example", m + "frontends/demo", m + "frontends/a2a-go-example", false},
		{"fail/pacta2a-leaf", m + "frontends/pacta2a", m + "internal/a2aerr", false},
		{"fail/pacta2a-db", m + "frontends/pacta2a", m + "db", false},
		{"fail/demo-leaf", m + "frontends/demo", m + "internal/rpcerr", false},
		{"fail/example-server", m + "frontends/a2a-go-example", m + "server", false},
		{"fail/example-service", m + "frontends/a2a-go-example", m + "services/brand", false},
		{"fail/example-cmd", m + "frontends/a2a-go-example", m + "cmd/pact-a2a", false},
		{"fail/frontend-unlevelled", m + "frontends/newthing", m + "frontends/pacta2a", false},

		// Layer 8, the programs: anything below but services/; nothing imports them.
		{"ok/cmd-server", m + "cmd/pactd", m + "server", true},
		{"ok/cmd-config", m + "cmd/pactd", m + "server/config", true},
		{"ok/cmd-core", m + "cmd/pactd", m + "core/provkeys", true},
		{"ok/a2a-frontend", m + "cmd/pact-a2a", m + "frontends/pacta2a", true},
		{"ok/a2a-gen", m + "cmd/pact-a2a", m + "gen/pact/v1/pactv1connect", true},
		{"ok/pact-demo-demo", m + "cmd/pact-demo", m + "frontends/demo", true},
		{"ok/cmd-own-subpackage", m + "cmd/pactd", m + "cmd/pactd/admin", true},
		{"fail/cmd-service", m + "cmd/pactd", m + "services/agent", false},
		{"fail/cmd-cmd", m + "cmd/pact-a2a", m + "cmd/pactd", false},
		{"fail/a2a-server", m + "cmd/pact-a2a", m + "server", false},
		{"fail/a2a-leaf", m + "cmd/pact-a2a", m + "internal/rpcerr", false},
		{"fail/a2a-db", m + "cmd/pact-a2a", m + "db", false},

		// Layer 9, the lab (bench/, a module of its own): anything of the
		// product but services/, its helpers below its programs; the
		// product never imports it.
		{"ok/lab-server", m + "bench/cmd/pactd-loadgen", m + "server", true},
		{"ok/lab-config", m + "bench/cmd/pactd-failover", m + "server/config", true},
		{"ok/lab-dbtest", m + "bench/cmd/pactd-failover", m + "db/dbtest", true},
		{"ok/lab-leaf", m + "bench/cmd/pactd-loadgen", m + "internal/freeport", true},
		{"ok/lab-helper", m + "bench/cmd/pactd-peerload", m + "bench/internal/loadstat", true},
		{"ok/lab-helper-leaf", m + "bench/internal/loadstat", m + "internal/cpumeter", true},
		{"ok/lab-own-subpackage", m + "bench/cmd/pactd-loadgen/x", m + "bench/cmd/pactd-loadgen", true},
		{"fail/lab-service", m + "bench/cmd/pactd-loadgen", m + "services/verification", false},
		{"fail/lab-cmd", m + "bench/cmd/pactd-loadgen", m + "cmd/pactd", false},
		{"fail/lab-program-program", m + "bench/cmd/pactd-peerload", m + "bench/cmd/pactd-loadgen", false},
		{"fail/lab-helper-program", m + "bench/internal/loadstat", m + "bench/cmd/pactd-loadgen", false},
		{"fail/lab-helper-helper", m + "bench/internal/loadstat", m + "bench/internal/other", false},
		{"fail/lab-testkit", m + "bench/cmd/pactd-loadgen", m + "internal/testkit/testclock", false},
		{"fail/cmd-lab", m + "cmd/pactd", m + "bench/internal/loadstat", false},
		{"fail/leaf-lab", m + "internal/cpumeter", m + "bench/internal/loadstat", false},
		{"fail/server-lab", m + "server", m + "bench/cmd/pactd-loadgen", false},
		{"fail/lab-unranked", m + "bench/misc", m + "server", false},

		// The test kit: only _test.go files import it (they are not read
		// here, so any edge into it is a non-test file's).
		{"fail/service-testkit", m + "services/token", m + "internal/testkit/testclock", false},
		{"fail/dbtest-testkit", m + "db/dbtest", m + "internal/testkit/testsigner", false},
		{"fail/cmd-testkit", m + "cmd/pactd", m + "internal/testkit/testclock", false},

		// Outside the table.
		{"fail/unranked-importer", m + "tools/x", m + "db", false},
		{"fail/unranked-imported", m + "services/agent", m + "misc", false},
		{"fail/root-package", m + "server", "pactd", false},
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
		// in the target's own module: bench/ is not the main module's
		`go -C "$mod" test`,
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
