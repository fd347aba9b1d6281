package configs_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/configs"
)

func TestEveryPresetIsValid(t *testing.T) {
	names := configs.Names()
	if len(names) == 0 {
		t.Fatal("no presets embedded")
	}
	for _, n := range names {
		if err := expand(n).err; err != nil {
			t.Errorf("preset %s: %v", n, err)
		}
	}
	if _, ok := configs.Read("nosuch"); ok {
		t.Error("unknown preset found")
	}
}

func TestSummary(t *testing.T) {
	if got := configs.Summary("minsum-check", 200); got != "Min-sum by 20 % of 10 nodes against the mean, trimmed mean and Multi-Krum (models and updates)." {
		t.Errorf("summary %q", got)
	}
	if got := []rune(configs.Summary("quickstart", 25)); len(got) != 25 || got[24] != '…' {
		t.Errorf("cut summary %q, want 25 runes ending in …", string(got))
	}
	if configs.Summary("nosuch", 80) != "" {
		t.Error("an unknown preset has a summary")
	}
}

// Every preset file in this directory is embedded (a family left out of
// the go:embed line cannot be run by name).
func TestEveryPresetFileIsEmbedded(t *testing.T) {
	names := map[string]bool{}
	for _, n := range configs.Names() {
		names[n] = true
	}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".toml") {
			return err
		}
		if n := strings.TrimSuffix(filepath.ToSlash(p), ".toml"); !names[n] {
			t.Errorf("%s is not embedded: `trellis run %s` would not find it", p, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := configs.Read("secagg/modes-quick"); !ok {
		t.Error("secagg/modes-quick is not a preset")
	}
}
