package buildinfo

import (
	"runtime"
	"testing"
)

func TestGet(t *testing.T) {
	in := Get()
	if in.GoVersion != runtime.Version() {
		t.Errorf("GoVersion = %q, want %q", in.GoVersion, runtime.Version())
	}
	if in.Version == "" || in.Commit == "" {
		t.Errorf("Get() = %+v: empty fields", in)
	}
}

// TestLinkerOverride: -X values win over what the toolchain stamped.
func TestLinkerOverride(t *testing.T) {
	oldV, oldC := version, commit
	t.Cleanup(func() { version, commit = oldV, oldC })
	version, commit = "v9.8.7", "0123abc"
	if in := Get(); in.Version != "v9.8.7" || in.Commit != "0123abc" {
		t.Errorf("Get() = %+v, want the linker's v9.8.7 and 0123abc", in)
	}
}
