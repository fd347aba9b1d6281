package trust

import (
	"slices"
	"testing"
)

// TestDefaultConfigIsTheSpec pins every default to the DMTT paper (the
// section named per field), so a changed default fails here and not silently in an
// experiment.
func TestDefaultConfigIsTheSpec(t *testing.T) {
	c := DefaultConfig()
	for _, f := range []struct {
		name, section string
		got, want     float64
	}{
		{"Rho", `§III-D: ρ = 0.1`, c.Rho, 0.1},
		{"InitialReliability", `§III-D: p_ij init 0.5`, c.InitialReliability, 0.5},
		{"Timeout", `§III-D: timeout = 3 rounds`, float64(c.Timeout), 3},
		{"Xi", `"Topology claims": ξ = 0.5`, c.Xi, 0.5},
		{"TauAdd", `"Topology claims": τ_add = 0.6`, c.TauAdd, 0.6},
		{"MinWitnesses", `"Topology claims": m = 2`, float64(c.MinWitnesses), 2},
		{"Epsilon", `"Topology claims": χ = S+/(S+ + S- + 1e-9)`, c.Epsilon, 1e-9},
		{"TauFwd", `"Topology claims" (Algorithm 3): τ_fwd = 0.3`, c.TauFwd, 0.3},
		{"Budget", `"Topology claims" (Algorithm 3): 2 claims per round`, float64(c.Budget), 2},
		{"HopLimit", `"Topology claims" (Algorithm 3): H = 2`, float64(c.HopLimit), 2},
		{"MaxAge", `package doc "Freshness": H = 2`, float64(c.MaxAge), 2},
		{"Lambda", `"Source trust": λ = 0.9`, c.Lambda, 0.9},
		{"Wd", `"Source trust": w_d = 1`, c.Wd, 1},
		{"Wc", `"Source trust": w_c = 0.5`, c.Wc, 0.5},
		{"Wf", `"Source trust": w_f = 0.25`, c.Wf, 0.25},
		{"Wx", `"Source trust": w_x = 1`, c.Wx, 1},
		{"Wq", `"Source trust": w_q = 1`, c.Wq, 1},
		{"Ws", `"Source trust": w_s = 1`, c.Ws, 1},
		{"Floor", `"Source trust": floored at 0.01`, c.Floor, 0.01},
		{"Eta", `"Source trust": η = 5`, c.Eta, 5},
		{"TauU", `"Source trust": τ_U = 0.3`, c.TauU, 0.3},
		{"MinReliability", `§IV-E: p_ij >= 0.1`, c.MinReliability, 0.1},
		{"TauTrust", `§IV-E: τ_trust = 0.25`, c.TauTrust, 0.25},
	} {
		if f.got != f.want {
			t.Errorf("DefaultConfig().%s = %v, the DMTT paper %s", f.name, f.got, f.section)
		}
	}
}

// TestScreenedAppliesBothThresholds: Screened keeps a direct neighbor only
// with p_ij >= MinReliability and T_topo >= TauTrust (the DMTT
// paper, §IV-E). Peer 1 is heard every round, peer 2 falls silent (its p decays by ρ
// per round; a long timeout keeps it in N_dir), peer 3 lies about node 0.
func TestScreenedAppliesBothThresholds(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Timeout = 100
	cfg.Rho = 0.5 // p: 0.5 → 0.75 heard; silent: 0.375, 0.19, 0.094
	s, err := New(testIDs[0], testDir, []uint32{1, 2, 3}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for r := uint64(0); r < 4; r++ {
		begin(t, s, r)
		for _, j := range []uint32{1, 3} {
			if err := s.Heard(j); err != nil {
				t.Fatal(err)
			}
		}
		if r == 0 {
			if err := s.Heard(2); err != nil {
				t.Fatal(err)
			}
		}
		mustIngest(t, s, 1, signed(t, 1, r, r+1, 0))
		mustIngest(t, s, 3, signed(t, 3, r, r+1, 4)) // omits 0: x
		end(t, s)
	}
	if p := s.Reliability(2); p >= cfg.MinReliability {
		t.Fatalf("fixture: p_02 = %v, want < %v", p, cfg.MinReliability)
	}
	if tr := s.Trust(3); tr >= cfg.TauTrust {
		t.Fatalf("fixture: T_03 = %v, want < %v", tr, cfg.TauTrust)
	}
	if got := s.Screened(); !slices.Equal(got, []uint32{1}) {
		t.Errorf("Screened = %v, want [1]", got)
	}
	cfg.MinReliability, cfg.TauTrust = 0, 0
	s.cfg = cfg
	if got := s.Screened(); !slices.Equal(got, []uint32{1, 2, 3}) {
		t.Errorf("with both thresholds 0: Screened = %v, want [1 2 3]", got)
	}
}
