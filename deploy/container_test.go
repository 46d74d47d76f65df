package deploy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakePodman is podman as the script sees it: its --version names it, and
// it records the build arguments.
const fakePodman = `#!/usr/bin/env bash
if [[ "${1:-}" == "--version" ]]; then echo "podman version 4.3.1"; exit 0; fi
shift
printf '%s\n' "$@" >"$RECORD"
`

// fakeGo stands in for the static "go build … -o FILE ./cmd/pactd" the
// script runs first (the real build is checked by scripts/test.sh's image
// step): it writes FILE.
const fakeGo = `#!/usr/bin/env bash
out=""
while (($#)); do
	if [[ $1 == -o ]]; then out=$2; shift; fi
	shift
done
[[ -n $out ]] && echo "fake pactd" >"$out"
`

func writeExe(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestContainerScriptEngineFlags: scripts/container.sh builds with docker's
// flags under docker (no --pull=never, which docker refuses) and with
// --pull=never under podman; with a real docker CLI on PATH, its own flag
// parser accepts the command line (it then finds no daemon).
func TestContainerScriptEngineFlags(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	fakes := t.TempDir()
	fakeDocker, err := os.ReadFile(filepath.Join("testdata", "fake-docker"))
	if err != nil {
		t.Fatal(err)
	}
	docker := writeExe(t, fakes, "docker", string(fakeDocker))
	writeExe(t, fakes, "podman", fakePodman)
	writeExe(t, fakes, "go", fakeGo)
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, []byte("not checked here\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "args")
	script := func(pathPrefix string, env ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bash, "scripts/container.sh", "localhost/pactd:flags")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), append([]string{"PATH=" + pathPrefix + string(os.PathListSeparator) + os.Getenv("PATH"),
			"CA_BUNDLE=" + ca, "RECORD=" + record}, env...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	recorded := func() []string {
		t.Helper()
		b, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(record)
		return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	}

	// The fake judges like docker: the old command line is refused.
	refused := exec.Command(docker, "build", "--pull=never", "-f", ca, "-t", "x", t.TempDir())
	refused.Env = append(os.Environ(), "RECORD="+record)
	if out, err := refused.CombinedOutput(); !exitedWith(err, 125) || !strings.Contains(string(out), `invalid argument "never" for "--pull" flag`) {
		t.Fatalf("the fake docker accepted --pull=never: %v\n%s", err, out)
	}

	// docker: docker's flags, the tag, and the context as the one argument.
	if out, err := script(fakes, "CONTAINER_ENGINE=docker"); err != nil {
		t.Fatalf("container.sh with docker: %v\n%s", err, out)
	}
	args := recorded()
	if len(args) != 5 || args[0] != "-f" || !strings.HasSuffix(args[1], "/Containerfile") || args[2] != "-t" || args[3] != "localhost/pactd:flags" {
		t.Errorf("docker build %q", args)
	}
	// podman: the same, offline.
	if out, err := script(fakes, "CONTAINER_ENGINE=podman"); err != nil {
		t.Fatalf("container.sh with podman: %v\n%s", err, out)
	}
	if args := recorded(); len(args) != 6 || args[0] != "--pull=never" || args[1] != "-f" || args[4] != "localhost/pactd:flags" {
		t.Errorf("podman build %q", args)
	}
	// Without CONTAINER_ENGINE, podman comes first.
	if out, err := script(fakes); err != nil {
		t.Fatalf("container.sh: %v\n%s", err, out)
	}
	if args := recorded(); args[0] != "--pull=never" {
		t.Errorf("with both on PATH the script did not pick podman: %q", args)
	}

	// A real docker CLI, when installed: its parser must accept the flags.
	real, err := exec.LookPath("docker")
	if err != nil {
		t.Log("no docker CLI installed: checked against the fake only")
		return
	}
	if v, _ := exec.Command(real, "--version").Output(); strings.Contains(strings.ToLower(string(v)), "podman") {
		t.Log("docker is podman here: checked against the fake only")
		return
	}
	onlyGo := t.TempDir()
	writeExe(t, onlyGo, "go", fakeGo)
	out, err := script(onlyGo, "CONTAINER_ENGINE="+real, "DOCKER_HOST=unix:///nonexistent/docker.sock")
	if err == nil {
		t.Fatalf("container.sh built with a docker that has no daemon:\n%s", out)
	}
	for _, bad := range []string{"invalid argument", "unknown flag", "unknown shorthand flag", "requires exactly 1 argument"} {
		if strings.Contains(out, bad) {
			t.Errorf("docker's own parser refused the command line (%q):\n%s", bad, out)
		}
	}
	if !strings.Contains(out, "docker daemon") && !strings.Contains(out, "Docker daemon") {
		t.Errorf("docker did not get as far as its daemon:\n%s", out)
	}
}

func exitedWith(err error, code int) bool {
	ee, ok := err.(*exec.ExitError)
	return ok && ee.ExitCode() == code
}
