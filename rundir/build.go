package rundir

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// VCSAbsent is BuildInfo.Missing for a binary without a stamped commit: `go run`,
// `go test` and `go build -buildvcs=false` stamp none, nor does a build
// outside a git checkout.
const VCSAbsent = "no commit recorded: built by go run or go test, with -buildvcs=false, or outside a git checkout; build with `go build ./cmd/trellis` in the checkout to record it"

// BuildInfo is what the binary knows of its own build: its module version
// and the commit the Go toolchain stamped into it (vcs.revision,
// vcs.modified, vcs.time), or why there is none. Manifests record it.
type BuildInfo struct {
	Module    string `json:"module"`
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
	// Revision, Modified and Time are the commit, whether the work tree
	// had uncommitted changes, and the commit's time (RFC 3339), as the
	// toolchain stamped them; empty when it stamped none.
	Revision string `json:"vcs_revision,omitempty"`
	Modified bool   `json:"vcs_modified,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	// Missing says why Revision is empty ("" when it is known).
	Missing string `json:"vcs_missing,omitempty"`
}

// ReadBuild is this binary's BuildInfo.
func ReadBuild() BuildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return BuildInfo{Version: "unknown", GoVersion: runtime.Version(), Missing: "built without module information"}
	}
	return buildOf(bi)
}

func buildOf(bi *debug.BuildInfo) BuildInfo {
	in := BuildInfo{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if in.Version == "" {
		in.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		case "vcs.time":
			in.Time = s.Value
		}
	}
	if in.Revision == "" {
		in.Missing = VCSAbsent
	}
	return in
}

// String is the one-line version: module, version, commit (or why there
// is none), Go version.
func (in BuildInfo) String() string {
	if in.Revision == "" {
		return fmt.Sprintf("%s %s (%s), %s", in.Module, in.Version, in.Missing, in.GoVersion)
	}
	mod := ""
	if in.Modified {
		mod = ", modified"
	}
	at := ""
	if in.Time != "" {
		at = " of " + in.Time
	}
	return fmt.Sprintf("%s %s (commit %s%s%s), %s", in.Module, in.Version, in.Revision, at, mod, in.GoVersion)
}
