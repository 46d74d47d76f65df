// Package buildinfo says which pactd this is: its version, the commit it was
// built from and the Go version, for `pactd version` and the
// pactd_build_info metric.
package buildinfo

import (
	"cmp"
	"runtime"
	"runtime/debug"
)

// version and commit may be set at link time, for builds outside a git
// checkout (a release tarball, a container build without .git):
//
//	go build -ldflags "-X pactd.dev/pactd/server/buildinfo.version=v1.2.0 -X pactd.dev/pactd/server/buildinfo.commit=abc123" ./cmd/pactd
var version, commit string

// Info describes the running binary.
type Info struct {
	// Version is the -ldflags version, else the module version ("(devel)"
	// for a build in the checkout).
	Version string
	// Commit is the -ldflags commit, else the VCS revision Go stamped into
	// the binary, with "+dirty" when the tree had changes; "unknown" without.
	Commit string
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string
}

// Get reads the build information of the running binary.
func Get() Info {
	in := Info{Version: version, Commit: commit, GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		in.Version = cmp.Or(in.Version, bi.Main.Version)
		if in.Commit == "" {
			var rev, dirty string
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					if s.Value == "true" {
						dirty = "+dirty"
					}
				}
			}
			if rev != "" {
				in.Commit = rev + dirty
			}
		}
	}
	in.Version = cmp.Or(in.Version, "(devel)")
	in.Commit = cmp.Or(in.Commit, "unknown")
	return in
}
