package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A finished run whose records were cut short or edited afterwards is not
// kept as finished: Previous and FinishedRun name the file and --force;
// a manifest without digests (an older trellis) is checked by its rounds.
func TestFinishedRunIsVerified(t *testing.T) {
	accs := []float64{0.1, 0.2, 0.3, 0.4}
	for _, c := range []struct {
		file, want string
		edit       func(b []byte) []byte
		oldMan     bool
	}{
		{MetricsFile, "metrics.jsonl has SHA-256", func(b []byte) []byte { return b[:len(b)-20] }, false},
		{RoundsFile, "rounds.jsonl has SHA-256", func(b []byte) []byte { return []byte(strings.Replace(string(b), "0.4", "0.9", 1)) }, false},
		{RoundsFile, "rounds.jsonl is missing", nil, false},
		{RoundsFile, "rounds.jsonl holds 3 complete lines for the 4 rounds", func(b []byte) []byte {
			return b[:strings.LastIndex(strings.TrimSuffix(string(b), "\n"), "\n")+1]
		}, true},
	} {
		dir := t.TempDir()
		if _, err := writeRun(t, dir, spec(0), accs, nil); err != nil {
			t.Fatal(err)
		}
		if n, err := Previous(dir, "abc", 4, false); n != Finished || err != nil {
			t.Fatalf("an intact finished run: %d, %v", n, err)
		}
		if c.oldMan {
			man, _ := ReadManifest(dir)
			man.Records = nil
			if err := WriteManifest(dir, man); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(dir, c.file)
		if c.edit == nil {
			os.Remove(path)
		} else {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, c.edit(b), 0o644)
		}
		_, err := Previous(dir, "abc", 4, false)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("%s: Previous: %v, want %q and --force", c.want, err, c.want)
		}
		if _, ok, err := FinishedRun(dir, "abc"); ok || err == nil {
			t.Errorf("%s: FinishedRun kept it (%v)", c.want, err)
		}
		if n, err := Previous(dir, "abc", 4, true); n != 0 || err != nil {
			t.Errorf("%s: --force: %d, %v", c.want, n, err)
		}
	}
}

// An output path that is a file is refused whatever --force says.
func TestPreviousOfAFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, force := range []bool{false, true} {
		if _, err := Previous(file, "abc", 4, force); err == nil || !strings.Contains(err.Error(), "is a file, not a run directory") || strings.Contains(err.Error(), "--force") {
			t.Errorf("force %v: %v", force, err)
		}
	}
}

// The manifest records the build's commit, or says why it has none.
func TestManifestSaysWhichCommit(t *testing.T) {
	m := NewManifest("n", 1, "seeded")
	b := ReadBuild()
	if m.Revision != b.Revision || m.Modified != b.Modified || m.VCSTime != b.Time {
		t.Errorf("manifest %+v, build %+v", m, b)
	}
	if m.Revision == "" && m.VCSMissing != VCSAbsent {
		t.Errorf("no revision and no reason: %q", m.VCSMissing)
	}
}
