package rundir

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildOf(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.x", Main: debug.Module{Path: "example.com/m"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}}}
	in := buildOf(bi)
	if in.Revision != "abc123" || !in.Modified || in.Time != "2026-01-02T03:04:05Z" || in.Missing != "" || in.Version != "(devel)" {
		t.Errorf("stamped build: %+v", in)
	}
	if s := in.String(); !strings.Contains(s, "commit abc123 of 2026-01-02T03:04:05Z, modified") {
		t.Errorf("String() = %q", s)
	}
	bare := buildOf(&debug.BuildInfo{GoVersion: "go1.x", Main: debug.Module{Path: "example.com/m", Version: "v1.2.3"}})
	if bare.Revision != "" || bare.Missing != VCSAbsent || !strings.Contains(bare.String(), "no commit recorded") || !strings.Contains(bare.String(), "v1.2.3") {
		t.Errorf("unstamped build: %+v %q", bare, bare.String())
	}
}
