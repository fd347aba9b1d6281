package config

import (
	"strings"
	"testing"
)

// TestDecayingKeysAreChecked: every bad key of mode "laplace_decaying" is
// an error naming the key, the value and what is allowed; the decaying
// keys are refused in the other modes.
func TestDecayingKeysAreChecked(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"mode = \"laplace_decaying\"\nnoise_scale = 1.0\ntarget_epsilon = 2.0", "privacy.noise_scale = 1: set noise_scale or target_epsilon, not both"},
		{"mode = \"laplace_decaying\"\nnoise_scale = -1.0", "privacy.noise_scale = -1: need a finite value > 0"},
		{"mode = \"laplace_decaying\"\ntarget_epsilon = -1.0", "privacy.target_epsilon = -1: need a finite value > 0"},
		{"mode = \"laplace_decaying\"\nnoise_decay = 1.5", "privacy.noise_decay = 1.5: allowed range (0, 1]"},
		{"mode = \"laplace_decaying\"\nstep_decay = -0.5", "privacy.step_decay = -0.5: allowed range (0, 1]"},
		{"mode = \"laplace_decaying\"\nclip = 0.0", "privacy.clip = 0: need a finite value > 0"},
		{"mode = \"laplace_decaying\"\ndelta = 1e-5", "do not apply"},
		{"mode = \"node\"\nnoise_multiplier = 1.0\nnoise_decay = 0.9", `keys of mode = "laplace_decaying"`},
		{"mode = \"laplace\"", `privacy.mode = "laplace": want "none", "node" or "sample", or "laplace_decaying" or "ternary"`},
		{"mode = \"laplace_decaying\"\nlevel = 2.0", "level do not apply"},
	} {
		_, err := Parse([]byte("[privacy]\n"+c.toml+"\n"), "p.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.toml, err, c.want)
		}
	}
	// Gradient tracking has its own layer ([121]); Ditto stays refused.
	if _, err := Parse([]byte("[strategy]\nname = \"gradient_tracking\"\n[privacy]\nmode = \"laplace_decaying\"\n"), "p.toml"); err != nil {
		t.Errorf("gradient tracking with decaying Laplace noise: %v", err)
	}
	_, err := Parse([]byte("[strategy]\nname = \"ditto\"\n[privacy]\nmode = \"laplace_decaying\"\n"), "p.toml")
	if err == nil || !strings.Contains(err.Error(), "strategy ditto sends a model trained in Share") {
		t.Errorf("ditto with decaying Laplace noise: %v", err)
	}
	// The secret-sharing strategies send shares and perturbations that no
	// DP mode's one release covers: refused by the file, not the run;
	// except gradient_tracking_sd with decaying Laplace noise, the state
	// and the exchanged share each noised (ref. [122]).
	for _, st := range []string{"gradient_tracking_sd", "function_sharing"} {
		for _, mode := range []string{"mode = \"laplace_decaying\"", "mode = \"node\"\nnoise_multiplier = 1.0", "mode = \"ternary\"\nlevel = 2.0"} {
			_, err := Parse([]byte("[strategy]\nname = \""+st+"\"\n[privacy]\n"+mode+"\n"), "p.toml")
			if st == "gradient_tracking_sd" && mode == "mode = \"laplace_decaying\"" {
				if err != nil {
					t.Errorf("%s with %s: %v", st, mode, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), "strategy "+st+" sends") {
				t.Errorf("%s with %s: %v", st, mode, err)
			}
		}
	}
}

// TestTernaryKeysAreChecked: every bad key of mode "ternary" is an error
// naming it, and so are the strategies and the secure aggregation whose
// vectors the quantizer does not cover; level or delta alone is valid.
func TestTernaryKeysAreChecked(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[privacy]\nmode = \"ternary\"", "privacy.level = 0: mode = \"ternary\" needs level ≥ clip"},
		{"[privacy]\nmode = \"ternary\"\nlevel = 2.0\ndelta = 0.1", "set level or delta, not both"},
		{"[privacy]\nmode = \"ternary\"\nclip = 3.0\nlevel = 2.0", "privacy.level = 2: need a finite value ≥ clip"},
		{"[privacy]\nmode = \"ternary\"\ndelta = 1.5", "privacy.delta = 1.5: allowed range (0, 1)"},
		{"[privacy]\nmode = \"ternary\"\nclip = -1.0\nlevel = 2.0", "privacy.clip = -1: need a finite value > 0"},
		{"[privacy]\nmode = \"ternary\"\nlevel = 2.0\nnoise_scale = 1.0", "do not apply"},
		{"[privacy]\nmode = \"ternary\"\nlevel = 2.0\ntarget_epsilon = 1.0", "do not apply"},
		{"[privacy]\nmode = \"node\"\nnoise_multiplier = 1.0\nlevel = 2.0", `level is a key of mode = "ternary"`},
		{"[strategy]\nname = \"gradient_tracking\"\n[privacy]\nmode = \"ternary\"\nlevel = 2.0", "only the quantized model is released"},
		{"[strategy]\nname = \"ditto\"\n[privacy]\nmode = \"ternary\"\nlevel = 2.0", "only the quantized model is released"},
		{"[privacy]\nmode = \"ternary\"\nlevel = 2.0\n[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\nacross = true", "covers the quantized model, not the group mean"},
	} {
		_, err := Parse([]byte(c.toml+"\n"), "p.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.toml, err, c.want)
		}
	}
	for _, ok := range []string{"level = 2.0", "delta = 0.1", "clip = 0.5\nlevel = 0.5"} {
		if _, err := Parse([]byte("[privacy]\nmode = \"ternary\"\n"+ok+"\n"), "p.toml"); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestDecayingDefaults: with only the mode set, the run gets the stated
// defaults (q = 0.95, p = 0.9, ε = 1 over the run); set keys are kept.
func TestDecayingDefaults(t *testing.T) {
	c, err := Parse([]byte("[privacy]\nmode = \"laplace_decaying\"\n"), "p.toml")
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Privacy.Decaying(); d.NoiseDecay != 0.95 || d.StepDecay != 0.9 || d.TargetEpsilon != 1 || d.NoiseScale != 0 || d.Clip != 1 {
		t.Errorf("defaults %+v", d)
	}
	c, err = Parse([]byte("[privacy]\nmode = \"laplace_decaying\"\nnoise_scale = 3.0\nnoise_decay = 0.5\nstep_decay = 0.25\n"), "p.toml")
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Privacy.Decaying(); d.NoiseDecay != 0.5 || d.StepDecay != 0.25 || d.TargetEpsilon != 0 || d.NoiseScale != 3 {
		t.Errorf("set keys %+v", d)
	}
}

// TestDecayingKeysCanBeSet: the decaying keys, left out of the defaults,
// are still valid --set keys.
func TestDecayingKeysCanBeSet(t *testing.T) {
	c := Default()
	for k, v := range map[string]string{"privacy.mode": "laplace_decaying", "privacy.noise_scale": "0.5", "privacy.noise_decay": "0.8", "privacy.step_decay": "0.7", "privacy.level": "3"} {
		if err := c.Set(k, v); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	if p := c.Privacy; p.NoiseScale != 0.5 || p.NoiseDecay != 0.8 || p.StepDecay != 0.7 || p.Level != 3 {
		t.Errorf("set %+v", p)
	}
}
