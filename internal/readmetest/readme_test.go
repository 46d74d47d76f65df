package readmetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"pactd.dev/pactd/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// block is one marked block of README.md or a docs page (or a stop marker).
type block struct {
	file       string // the page, relative to the checkout's root
	line       int    // the marker's line in file
	kind, name string // run, serve or stop; a server's name
	opts       map[string][]string
	code       string
}

// at is where the block's marker is, as FILE:LINE.
func (b block) at() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

func (b block) opt(k string) string {
	if v := b.opts[k]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

func (b block) list(k string) []string {
	if v := b.opt(k); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

var markerRE = regexp.MustCompile(`(?m)^<!-- readme-test: (.*?) -->\n`)

// fenceLineRE is a line that opens or closes a fenced code block.
var fenceLineRE = regexp.MustCompile("(?m)^```.*$")

// inFence reports whether offset i of text lies inside a fenced code block
// (a page showing what a marker looks like is not marking a block).
func inFence(text string, i int) bool {
	return len(fenceLineRE.FindAllStringIndex(text[:i], -1))%2 == 1
}

// parseBlocks finds the marked blocks of one page (file names it in
// errors and progress lines), in order; a marker inside a fenced code block
// is an example, not a marker.
func parseBlocks(file, readme string) ([]block, error) {
	var blocks []block
	for _, m := range markerRE.FindAllStringSubmatchIndex(readme, -1) {
		if inFence(readme, m[0]) {
			continue
		}
		b := block{file: file, line: strings.Count(readme[:m[0]], "\n") + 1, opts: map[string][]string{}}
		words, err := splitOptions(readme[m[2]:m[3]])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.at(), err)
		}
		if len(words) == 0 {
			return nil, fmt.Errorf("%s: an empty readme-test marker", b.at())
		}
		b.kind, words = words[0], words[1:]
		if b.kind == "serve" || b.kind == "stop" {
			if len(words) == 0 || strings.Contains(words[0], "=") {
				return nil, fmt.Errorf("%s: %s needs a name", b.at(), b.kind)
			}
			b.name, words = words[0], words[1:]
		}
		for _, w := range words {
			k, v, ok := strings.Cut(w, "=")
			if !ok {
				return nil, fmt.Errorf("%s: option %q is not KEY=VALUE", b.at(), w)
			}
			switch k {
			case "ready", "ports", "capture", "set", "env", "paste", "expect", "engines":
			default:
				return nil, fmt.Errorf("%s: unknown option %q", b.at(), k)
			}
			b.opts[k] = append(b.opts[k], v)
		}
		switch b.kind {
		case "stop":
		case "run", "serve":
			fence := regexp.MustCompile("(?s)\\A(?:<!--.*?-->\n)*```(?:sh|bash)\n(.*?)\n```\n").FindStringSubmatch(readme[m[1]:])
			if fence == nil {
				return nil, fmt.Errorf("%s: no ```sh block right after the marker", b.at())
			}
			b.code = fence[1]
			if b.kind == "serve" && b.opt("ready") == "" {
				return nil, fmt.Errorf("%s: serve %s has no ready=", b.at(), b.name)
			}
		default:
			return nil, fmt.Errorf("%s: unknown kind %q (run, serve, stop)", b.at(), b.kind)
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// splitOptions splits a marker into words; KEY="VALUE" may hold spaces,
// with \" and \\ as its only escapes (a regexp's \S stays as it is).
func splitOptions(s string) ([]string, error) {
	var words []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		i := strings.IndexAny(s, " \"")
		if i < 0 || s[i] == ' ' {
			if i < 0 {
				i = len(s)
			}
			words = append(words, s[:i])
			s = s[i:]
			continue
		}
		var w strings.Builder
		w.WriteString(s[:i])
		j := i + 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
				j++
			}
			w.WriteByte(s[j])
		}
		if j == len(s) {
			return nil, fmt.Errorf("unterminated quote in %q", s)
		}
		words = append(words, w.String())
		s = s[j+1:]
	}
	return words, nil
}

// TestParseReadmeMarkers: the marker grammar, so a typo in a marker is an
// error and not a block silently left out.
func TestParseReadmeMarkers(t *testing.T) {
	good := "<!-- readme-test: serve s ready=\"a b\" capture=\"X=y (\\S+)\" -->\n```sh\nrun it\n```\n" +
		"<!-- readme-test: stop s -->\n" +
		"<!-- readme-test: run expect=\"say \\\"hi\\\"\" expect=two -->\n```sh\necho hi\n```\n"
	bs, err := parseBlocks("README.md", good+"```\n<!-- readme-test: an example inside a fence -->\n```\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 3 || bs[0].at() != "README.md:1" || bs[2].at() != "README.md:6" || bs[0].kind != "serve" || bs[0].name != "s" || bs[0].opt("ready") != "a b" || bs[0].opt("capture") != `X=y (\S+)` ||
		bs[0].code != "run it" || bs[1].kind != "stop" || bs[2].code != "echo hi" || fmt.Sprint(bs[2].opts["expect"]) != `[say "hi" two]` {
		t.Fatalf("parsed %+v", bs)
	}
	for _, bad := range []string{
		"<!-- readme-test: walk -->\n```sh\nx\n```\n",               // unknown kind
		"<!-- readme-test: run expct=x -->\n```sh\nx\n```\n",        // unknown option
		"<!-- readme-test: run -->\nno block\n",                     // no block
		"<!-- readme-test: serve s -->\n```sh\nx\n```\n",            // no ready=
		"<!-- readme-test: run expect=\"open -->\n```sh\nx\n```\n",  // unterminated quote
		"<!-- readme-test: stop -->\n",                              // no name
		"<!-- readme-test: run -->\n```go\nfunc main() {}\n```\n",   // not a shell block
		"<!-- readme-test: serve ready=x -->\n```sh\nx\n```\n",      // no name
		"<!-- readme-test: run set -->\n```sh\nx\n```\n",            // not KEY=VALUE
		"<!-- readme-test: run expect=\"a\\\" -->\n```sh\nx\n```\n", // escaped closing quote
		"<!-- readme-test: -->\n```sh\nx\n```\n",                    // empty
		"<!-- readme-test: serve s ports=1 -->\n```sh\nx\n```\n",    // no ready=
	} {
		bs, err := parseBlocks("README.md", bad)
		if err == nil && len(bs) > 0 {
			t.Errorf("parseBlocks accepted %q: %+v", bad, bs)
		}
	}
}

// TestUserSteps: the test plays only the browser steps it knows, so an
// instruction it would misread fails instead of passing by accident.
func TestUserSteps(t *testing.T) {
	steps, err := userSteps("go run ./cmd/pact-demo pa connect orders:read orders:cancel\n" +
		"#   open the printed link, sign in as alice, uncheck \"Cancel…\", check the code matches, Allow\n" +
		"go run ./cmd/pact-demo pa connect -as alice \\\n  orders:cancel\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || !steps[0].interactive || steps[0].user != "alice" || fmt.Sprint(steps[0].uncheck) != "[Cancel]" || steps[1].interactive {
		t.Fatalf("steps %+v", steps)
	}
	for _, bad := range []string{
		"pa connect orders:read\n", // no instruction
		"x pa connect orders:read\n#   open the printed link, sign in with any name, Allow\n",   // no user named
		"x pa connect orders:read\n#   open the printed link, sign in as bob, press Deny\n",     // unknown step
		"x pa connect orders:read\n#   open the printed link, sign in as bob, uncheck Cancel\n", // unquoted
	} {
		if steps, err := userSteps(bad); err == nil {
			t.Errorf("userSteps(%q) = %+v, want an error", bad, steps)
		}
	}
}

// TestReadmeInOrder runs every marked block of README.md and then of the
// docs pages, in the order the docs index (docs/README.md) links them, in
// one pass as written, on a fresh copy of the checkout: the servers the
// pages start (pactd, the demo, a frontend, pactd on PostgreSQL) in the
// background, the commands in between (sharing what the servers printed),
// the User's browser steps where a block waits for them, and the container
// build with podman and with docker's flags. It needs bash, go, git,
// PostgreSQL (db/dbtest) and podman, and the README's fixed ports (7070,
// 7071, 3000) free: without them it skips, except under CI=true.
func TestReadmeInOrder(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	need := func(why string) {
		t.Helper()
		if ci {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	for _, tool := range []string{"bash", "go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			need(tool + " is not on PATH")
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := walkOrder(root)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []block
	for _, page := range pages {
		raw, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := parseBlocks(page, string(raw))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	kinds := map[string]int{}
	for _, b := range blocks {
		kinds[b.kind]++
	}
	if kinds["serve"] < 3 || kinds["run"] < 6 {
		t.Fatalf("README.md and the docs pages (%s) mark %v blocks; the walk needs pactd, the demo and pactd on PostgreSQL served, and the blocks between", strings.Join(pages, ", "), kinds)
	}

	h := &harness{t: t, root: root, ci: ci, vals: map[string]string{}, servers: map[string]*server{}}
	h.scratch = h.copyCheckout()
	h.vals["PACT_FRONTEND_TOKEN"] = "pact_fe_readme_" + rand.Text()
	h.logf("a fresh copy of the checkout in %s; %d blocks in %s", h.scratch, len(blocks), strings.Join(pages, ", "))
	defer h.stopAll()
	for i, b := range blocks {
		t0 := time.Now()
		what := b.kind + " " + b.name
		if b.kind == "run" {
			first, _, _ := strings.Cut(b.code, "\n")
			what = "run: " + first
		}
		h.logf("[%d/%d] %s %s ...", i+1, len(blocks), b.at(), what)
		switch b.kind {
		case "run":
			if engines := b.list("engines"); len(engines) > 0 {
				for _, e := range engines {
					h.runEngine(b, e)
				}
			} else {
				h.run(b, nil)
			}
		case "serve":
			h.serve(b)
		case "stop":
			h.stop(b.name, b.at())
		}
		if t.Failed() {
			return
		}
		h.logf("[%d/%d] %s %s: ok (%.1fs)", i+1, len(blocks), b.at(), what, time.Since(t0).Seconds())
	}
	h.stopAll()
}

type harness struct {
	t       *testing.T
	root    string
	scratch string
	ci      bool
	vals    map[string]string
	servers map[string]*server
	order   []string // servers in start order
}

// logf prints a progress line (scripts/test.sh shows these as they come).
func (h *harness) logf(format string, args ...any) {
	h.t.Helper()
	h.t.Logf("readme-test progress: "+format, args...)
}

// copyCheckout copies the checkout's files (tracked and untracked, not
// ignored: what a fresh clone holds, with this tree's edits) to a fixed
// directory per checkout, so a second run finds its build cache warm (Go
// keys a package's compilation on its directory).
func (h *harness) copyCheckout() string {
	t := h.t
	out, err := exec.Command("git", "-C", h.root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	base := filepath.Join(os.TempDir(), "pactd-readme-test-"+fmt.Sprintf("%x", fnv(h.root)))
	if err := os.RemoveAll(base); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(base, "pactd")
	for _, rel := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		src := filepath.Join(h.root, rel)
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, to); err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(to, data, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(base, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	return dst
}

func fnv(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// env is a new user's shell: this environment without PACT_* and
// CONTAINER_ENGINE, a private TMPDIR (the demo's registry and directories),
// and extra.
func (h *harness) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PACT_") || strings.HasPrefix(kv, "CONTAINER_ENGINE=") || strings.HasPrefix(kv, "TMPDIR=") {
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "TMPDIR="+filepath.Join(filepath.Dir(h.scratch), "tmp")), extra...)
}

// value is the test's value of VAR for set= and env=.
func (h *harness) value(b block, name string) string {
	h.t.Helper()
	if v, ok := h.vals[name]; ok {
		return v
	}
	switch name {
	case "PACT_DATABASE_URL":
		h.vals[name] = dbtest.PostgresURL(h.t) // skips without PostgreSQL, except under CI=true
	case "PACT_ADMIN_TOKEN":
		h.vals[name] = "pact_adm_readme_" + rand.Text()
	default:
		h.t.Fatalf("%s: the test has no value for %s", b.at(), name)
	}
	return h.vals[name]
}

// script is the block's code with set= and env= applied.
func (h *harness) script(b block) string {
	h.t.Helper()
	code := b.code
	for _, name := range b.list("set") {
		re := regexp.MustCompile(`(^|[\s;])` + regexp.QuoteMeta(name) + `=('[^']*'|"[^"]*"|[^\s;]*)`)
		if !re.MatchString(code) {
			h.t.Fatalf("%s: set=%s, but the block assigns no %s", b.at(), name, name)
		}
		v := shellQuote(h.value(b, name))
		code = re.ReplaceAllStringFunc(code, func(m string) string {
			sub := re.FindStringSubmatch(m)
			return sub[1] + name + "=" + v
		})
	}
	var pre strings.Builder
	pre.WriteString("set -euo pipefail\n")
	for _, name := range b.list("env") {
		fmt.Fprintf(&pre, "export %s=%s\n", name, shellQuote(h.value(b, name)))
	}
	for _, name := range b.list("paste") {
		v, ok := h.vals[name]
		if !ok {
			h.t.Fatalf("%s: paste=%s, but no server printed it", b.at(), name)
		}
		pre.WriteString(v + "\n") // a line a server printed for pasting, verbatim
	}
	return pre.String() + code
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// command is bash running the block in the copy, in its own process group
// (a terminal's job: Ctrl-C reaches every process of it).
func (h *harness) command(ctx context.Context, b block, out io.Writer, extraEnv []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", h.script(b))
	cmd.Dir = h.scratch
	cmd.Env = h.env(extraEnv...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs a command block to its end (at most 6 minutes: a cold build
// cache compiles), playing the User where it waits for one, and checks its
// exit status and expect= texts.
func (h *harness) run(b block, extraEnv []string) string {
	t := h.t
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	var out lockedBuffer
	cmd := h.command(ctx, b, &out, extraEnv)
	user := h.user(ctx, b, &out)
	err := cmd.Run()
	cancel()
	uerr := <-user
	if err != nil {
		t.Fatalf("%s: the block failed: %v\n--- block\n%s\n--- output\n%s", b.at(), err, b.code, out.String())
	}
	if uerr != nil {
		t.Fatalf("%s: playing the User: %v\n--- output\n%s", b.at(), uerr, out.String())
	}
	h.expect(b, out.String())
	return out.String()
}

// expect checks the expect= texts, in order.
func (h *harness) expect(b block, got string) {
	h.t.Helper()
	rest := got
	for _, w := range b.opts["expect"] {
		i := strings.Index(rest, w)
		if i < 0 {
			h.t.Fatalf("%s: the output lacks %q (in order) in:\n%s\n--- whole output\n%s", b.at(), w, rest, got)
		}
		rest = rest[i+len(w):]
	}
}

// grantRE is a device grant a pa connect prints for the User.
var grantRE = regexp.MustCompile(`Open:\s+(\S+)\n\s+Code:\s+(\S+)`)

// connectRE finds a pa connect command.
var connectRE = regexp.MustCompile(`(^|\s)pa (-dir \S+ )?connect\s`)

// step is what the User does for one interactive pa connect of a block.
type step struct {
	interactive bool
	user        string
	uncheck     []string // scope labels starting with these are unchecked
	compare     bool     // the consent page must show the code the PA printed
}

// userSteps reads the block's pa connect commands in order; one without
// -as waits for the User, who does what the comment line after it says.
func userSteps(code string) ([]step, error) {
	lines := strings.Split(strings.ReplaceAll(code, "\\\n", " "), "\n")
	var steps []step
	instruction := regexp.MustCompile(`^#\s+open the printed link, (.*)$`)
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#") || !connectRE.MatchString(l) {
			continue
		}
		if strings.Contains(l, " -as ") {
			steps = append(steps, step{})
			continue
		}
		var m []string
		if i+1 < len(lines) {
			m = instruction.FindStringSubmatch(strings.TrimSpace(lines[i+1]))
		}
		if m == nil {
			return nil, fmt.Errorf("%q waits for the User, but no \"#   open the printed link, …\" line after it says what to do", l)
		}
		s := step{interactive: true}
		for _, part := range strings.Split(m[1], ", ") {
			switch {
			case strings.HasPrefix(part, "sign in as "):
				s.user = strings.TrimPrefix(part, "sign in as ")
			case strings.HasPrefix(part, `uncheck "`) && strings.HasSuffix(part, `…"`):
				s.uncheck = append(s.uncheck, strings.TrimSuffix(strings.TrimPrefix(part, `uncheck "`), `…"`))
			case part == "check the code matches":
				s.compare = true
			case part == "Allow":
			default:
				return nil, fmt.Errorf("the instruction %q: the test does not know how to %q", m[0], part)
			}
		}
		if s.user == "" {
			return nil, fmt.Errorf("the instruction %q names no user to sign in as", m[0])
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// user watches a running block's output for device grants and plays the
// User for the interactive ones; the channel gets its result once ctx ends.
func (h *harness) user(ctx context.Context, b block, out *lockedBuffer) <-chan error {
	res := make(chan error, 1)
	steps, err := userSteps(b.code)
	if err != nil {
		res <- err
		return res
	}
	go func() {
		seen := 0
		for {
			grants := grantRE.FindAllStringSubmatch(out.String(), -1)
			for ; seen < len(grants); seen++ {
				if seen >= len(steps) {
					res <- fmt.Errorf("device grant %d, but the block has %d pa connect commands", seen+1, len(steps))
					return
				}
				if s := steps[seen]; s.interactive {
					h.logf("%s: playing the User's browser: sign in as %s, uncheck %q, check the code %s matches, Allow", b.at(), s.user, s.uncheck, grants[seen][2])
					if err := playBrowser(ctx, grants[seen][1], grants[seen][2], s); err != nil {
						res <- err
						return
					}
				}
			}
			select {
			case <-ctx.Done():
				res <- nil
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return res
}

var (
	formRE     = regexp.MustCompile(`(?s)<form method="post"([^>]*)>(.*?)</form>`)
	inputRE    = regexp.MustCompile(`<input ([^>]*)>`)
	attrRE     = regexp.MustCompile(`(\w[\w-]*)(?:="([^"]*)")?`)
	labelRE    = regexp.MustCompile(`(?s)<label for="([^"]*)">(.*?)</label>`)
	tagRE      = regexp.MustCompile(`<[^>]*>`)
	actionAttr = regexp.MustCompile(`action="([^"]*)"`)
)

// playBrowser does in HTTP what the User does in a browser: open the
// link, sign in on the page it shows, then on the consent page uncheck
// the scopes named, check the code it shows is the one the PA printed
// (RFC 8628 §5.4: compare, not copy) and press Allow.
func playBrowser(ctx context.Context, link, code string, s step) error {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 15 * time.Second}
	get := func(u string) (*url.URL, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, "", err
		}
		return do(c, req)
	}
	at, page, err := get(link)
	if err != nil {
		return err
	}
	// The sign-in form: its hidden fields and the text field for the name.
	action, fields, err := form(at, page)
	if err != nil {
		return fmt.Errorf("the link's page: %w", err)
	}
	fields.Set("username", s.user)
	at, page, err = post(ctx, c, action, fields)
	if err != nil {
		return err
	}
	action, fields, err = form(at, page)
	if err != nil {
		return fmt.Errorf("after signing in: %w", err)
	}
	labels := map[string]string{}
	for _, m := range labelRE.FindAllStringSubmatch(page, -1) {
		labels[html.UnescapeString(m[1])] = strings.TrimSpace(html.UnescapeString(tagRE.ReplaceAllString(m[2], "")))
	}
	fields.Del("scope")
	found := map[string]bool{}
	for _, in := range inputs(page) {
		if in["type"] != "checkbox" {
			continue
		}
		label := labels[in["id"]]
		keep := true
		for _, u := range s.uncheck {
			if strings.HasPrefix(label, u) {
				keep, found[u] = false, true
			}
		}
		if keep && in["checked"] == "checked" {
			fields.Add(in["name"], in["value"])
		}
	}
	for _, u := range s.uncheck {
		if !found[u] {
			return fmt.Errorf("the consent page has no scope labelled %q… to uncheck (labels %v)", u, labels)
		}
	}
	if s.compare && !strings.Contains(tagRE.ReplaceAllString(page, ""), code) {
		return fmt.Errorf("the consent page does not show the code %s the PA printed:\n%s", code, page)
	}
	fields.Set("decision", "allow")
	at, page, err = post(ctx, c, action, fields)
	if err != nil {
		return err
	}
	if at.Query().Get("status") != "approved" {
		return fmt.Errorf("Allow led to %s, not an approval:\n%s", at, page)
	}
	return nil
}

func post(ctx context.Context, c *http.Client, u string, form url.Values) (*url.URL, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(c, req)
}

// do sends req, following redirects, and returns where it ended and the page.
func do(c *http.Client, req *http.Request) (*url.URL, string, error) {
	res, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, "", err
	}
	if res.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("%s %s: %s\n%s", req.Method, req.URL, res.Status, body)
	}
	return res.Request.URL, string(body), nil
}

// inputs are a page's input elements' attributes (a bare attribute has
// its own name as value).
func inputs(page string) []map[string]string {
	var all []map[string]string
	for _, m := range inputRE.FindAllStringSubmatch(page, -1) {
		attrs := map[string]string{}
		for _, a := range attrRE.FindAllStringSubmatch(m[1], -1) {
			v := a[2]
			if !strings.Contains(a[0], "=") {
				v = a[1]
			}
			attrs[a[1]] = html.UnescapeString(v)
		}
		all = append(all, attrs)
	}
	return all
}

// form is a page's first POST form: its absolute action and hidden fields.
func form(at *url.URL, page string) (string, url.Values, error) {
	m := formRE.FindStringSubmatch(page)
	if m == nil {
		return "", nil, fmt.Errorf("no POST form on %s:\n%s", at, page)
	}
	action := at.String()
	if a := actionAttr.FindStringSubmatch(m[1]); a != nil && a[1] != "" {
		u, err := at.Parse(html.UnescapeString(a[1]))
		if err != nil {
			return "", nil, err
		}
		action = u.String()
	}
	fields := url.Values{}
	for _, in := range inputs(m[2]) {
		if in["type"] == "hidden" {
			fields.Set(in["name"], in["value"])
		}
	}
	return action, fields, nil
}

// runEngine runs the container block with one engine: podman as
// installed, or docker as a stand-in that judges docker build's flags as
// docker does (deploy/testdata/fake-docker; no docker is installed here,
// and no engine could run the image).
func (h *harness) runEngine(b block, engine string) {
	t := h.t
	t.Helper()
	h.logf("%s: with %s", b.at(), engine)
	switch engine {
	case "podman":
		if _, err := exec.LookPath("podman"); err != nil {
			if h.ci {
				t.Fatalf("%s: podman is not installed (scripts/test.sh installs it under CI=true)", b.at())
			}
			h.logf("%s: SKIP the podman build: podman is not installed", b.at())
			return
		}
		h.run(b, nil)
		tag := b.opt("expect")
		if out, err := exec.Command("podman", "rmi", tag).CombinedOutput(); err != nil {
			t.Errorf("podman rmi %s: %v\n%s", tag, err, out)
		}
	case "docker":
		fake, err := os.ReadFile(filepath.Join(h.root, "deploy", "testdata", "fake-docker"))
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(filepath.Dir(h.scratch), "docker-bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "docker"), fake, 0o755); err != nil {
			t.Fatal(err)
		}
		record := filepath.Join(bin, "args")
		h.run(b, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "CONTAINER_ENGINE=docker", "RECORD=" + record})
		args, err := os.ReadFile(record)
		if err != nil {
			t.Fatalf("%s: the docker stand-in was not called: %v", b.at(), err)
		}
		if strings.Contains(string(args), "--pull") {
			t.Errorf("%s: docker build got a --pull flag:\n%s", b.at(), args)
		}
	default:
		t.Fatalf("%s: unknown engine %q", b.at(), engine)
	}
}

// server is a serve block running in the background.
type server struct {
	b    block
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan error
}

// serve starts a server block once its ports are free and waits until its
// output says it is ready, then takes its captures.
func (h *harness) serve(b block) {
	t := h.t
	t.Helper()
	if _, dup := h.servers[b.name]; dup {
		t.Fatalf("%s: a server %q is already running", b.at(), b.name)
	}
	for _, p := range b.list("ports") {
		h.waitFree(b, p)
	}
	s := &server{b: b, out: &lockedBuffer{}, done: make(chan error, 1)}
	s.cmd = h.command(context.WithoutCancel(t.Context()), b, s.out, nil)
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", b.at(), err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	h.servers[b.name] = s
	h.order = append(h.order, b.name)
	ready := regexp.MustCompile(b.opt("ready"))
	deadline := time.After(6 * time.Minute) // a cold build cache compiles first
	for !ready.MatchString(s.out.String()) {
		select {
		case err := <-s.done:
			delete(h.servers, b.name)
			t.Fatalf("%s: %s exited before it was ready (%v):\n%s", b.at(), b.name, err, s.out.String())
		case <-deadline:
			t.Fatalf("%s: %s not ready (%q) in 6 minutes:\n%s", b.at(), b.name, b.opt("ready"), s.out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, c := range b.opts["capture"] {
		name, re, _ := strings.Cut(c, "=")
		m := regexp.MustCompile(re).FindStringSubmatch(s.out.String())
		if len(m) < 2 {
			t.Fatalf("%s: %s printed nothing matching %q for %s:\n%s", b.at(), b.name, re, name, s.out.String())
		}
		h.vals[name] = m[1]
	}
}

// waitFree waits up to a minute for a loopback port the README's server
// needs (another pactd or demo on this machine holds it meanwhile).
func (h *harness) waitFree(b block, port string) {
	h.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err == nil {
			ln.Close()
			return
		}
		if time.Now().After(deadline) {
			if h.ci {
				h.t.Fatalf("%s: port %s stayed busy for a minute (%v): the README's %s needs it", b.at(), port, err, b.name)
			}
			h.t.Skipf("%s: port %s is busy (%v): stop the pactd or demo using it to run the README's blocks", b.at(), port, err)
		}
		time.Sleep(time.Second)
	}
}

// stop sends a server Ctrl-C (SIGINT to its process group) and requires a
// clean exit within 30 seconds.
func (h *harness) stop(name, at string) {
	t := h.t
	t.Helper()
	s, ok := h.servers[name]
	if !ok {
		t.Fatalf("%s: stop %s: no such server running", at, name)
	}
	delete(h.servers, name)
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	select {
	case err := <-s.done:
		// go run exits 1 after an interrupt even when the program it ran
		// exited 0 (it reports the signal it got); anything else is a failure.
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1 && endsInGoRun(s.b.code)) || strings.Contains(s.out.String(), "panic:") {
			t.Errorf("%s: %s did not exit cleanly on Ctrl-C: %v\n%s", s.b.at(), name, err, s.out.String())
		}
		if left := h.leftBehind(); s.b.name == "demo" && len(left) > 0 {
			t.Errorf("%s: the demo left %v behind after Ctrl-C", s.b.at(), left)
		}
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
		t.Errorf("%s: %s did not stop within 30 s of Ctrl-C:\n%s", s.b.at(), name, s.out.String())
	}
}

// leftBehind lists what stopped demos left in the shell's TMPDIR: each
// deletes its directory and its registry entry on Ctrl-C (README: "Ctrl-C
// stops everything and deletes the directory").
func (h *harness) leftBehind() []string {
	tmp := filepath.Join(filepath.Dir(h.scratch), "tmp")
	dirs, _ := filepath.Glob(filepath.Join(tmp, "pact-demo-*"))
	entries, _ := filepath.Glob(filepath.Join(tmp, "pact-demo.d", "*"))
	return append(dirs, entries...)
}

// endsInGoRun says whether a block's last command is a go run.
func endsInGoRun(code string) bool {
	lines := strings.Split(strings.TrimSpace(code), "\n")
	return strings.HasPrefix(strings.TrimSpace(lines[len(lines)-1]), "go run ")
}

// stopAll stops the servers still running, the last started first.
func (h *harness) stopAll() {
	for i := len(h.order) - 1; i >= 0; i-- {
		if _, ok := h.servers[h.order[i]]; ok {
			h.stop(h.order[i], h.servers[h.order[i]].b.at())
		}
	}
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
