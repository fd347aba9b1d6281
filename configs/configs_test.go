package configs_test

import (
	"testing"

	"github.com/trellis-fl/trellis/configs"
	"github.com/trellis-fl/trellis/experiment"
)

func TestEveryPresetIsValid(t *testing.T) {
	names := configs.Names()
	if len(names) == 0 {
		t.Fatal("no presets embedded")
	}
	for _, n := range names {
		b, _ := configs.Read(n)
		c, err := experiment.ParseConfig(b, n)
		if err != nil {
			t.Errorf("preset %s: %v", n, err)
			continue
		}
		if _, _, err := c.Expand(); err != nil {
			t.Errorf("preset %s sweep: %v", n, err)
		}
	}
	if _, ok := configs.Read("nosuch"); ok {
		t.Error("unknown preset found")
	}
}
