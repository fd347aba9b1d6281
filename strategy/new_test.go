package strategy

import (
	"strings"
	"testing"
)

func TestNewEveryNameAndDefaults(t *testing.T) {
	for _, name := range Names() {
		p := Params{}
		if name == "robust" {
			p.Rule = "median"
		}
		s, err := New(name, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := s.Name(); !strings.HasPrefix(got, name) {
			t.Errorf("New(%q).Name() = %q", name, got)
		}
	}
	s, _ := New("balance", Params{})
	if b := s.(*BALANCE); b.Gamma != 0.3 || b.Kappa != 1 || b.Alpha != 0.5 {
		t.Errorf("balance defaults %+v", b)
	}
	s, _ = New("balance", Params{Options: map[string]float64{"kappa": 0}})
	if b := s.(*BALANCE); b.Kappa != 0 || b.Gamma != 0.3 {
		t.Errorf("balance kappa=0 %+v", b)
	}
	s, _ = New("ubar", Params{})
	if u := s.(*UBAR); u.Rho != 0.4 || u.Alpha != 0.5 {
		t.Errorf("ubar defaults %+v", u)
	}
	s, _ = New("scclip", Params{})
	if c := s.(*SCClip); c.F != 1 {
		t.Errorf("scclip default f %d", c.F)
	}
	zero := 0
	s, _ = New("scclip", Params{F: &zero})
	if c := s.(*SCClip); c.F != 0 {
		t.Errorf("scclip f=0 gave %d", c.F)
	}
	s, _ = New("clipped_gossip", Params{Weighting: MetropolisHastings})
	if c := s.(*ClippedGossip); c.F != 1 || c.Weighting != MetropolisHastings {
		t.Errorf("clipped_gossip %+v", c)
	}
	s, _ = New("afa", Params{})
	if a := s.(*AFA); a.Xi0 != 2 || a.DeltaXi != 0.25 || a.Alpha0 != 3 || a.Beta0 != 3 || a.BlockAt != 0.95 {
		t.Errorf("afa defaults %+v", a)
	}
	two := 2
	s, err := New("robust", Params{Rule: "trimmed_mean", F: &two})
	if err != nil || s.Name() != "robust/trimmed_mean" {
		t.Errorf("robust trimmed_mean: %v %v", s, err)
	}
	a, _ := New("fedavg", Params{})
	b, _ := New("fedavg", Params{})
	if a == b {
		t.Error("New returned a shared value")
	}
}

func TestNewErrorsNameTheChoices(t *testing.T) {
	neg := -1
	cases := []struct {
		name string
		p    Params
		want []string
	}{
		{"krum_peer", Params{}, []string{`"krum_peer"`, "balance", "cfl"}},
		{"robust", Params{}, []string{"rule missing", "median"}},
		{"robust", Params{Rule: "nope"}, []string{"nope"}},
		{"balance", Params{Options: map[string]float64{"gama": 1}}, []string{`"gama"`, "gamma, kappa, alpha"}},
		{"balance", Params{Options: map[string]float64{"alpha": 2}}, []string{"alpha = 2", "[0, 1]"}},
		{"ubar", Params{Options: map[string]float64{"rho": 0}}, []string{"rho = 0", "(0, 1]"}},
		{"afa", Params{Options: map[string]float64{"block_at": 1}}, []string{"block_at = 1"}},
		{"asmr", Params{Options: map[string]float64{"k": 1}}, []string{"takes no options"}},
		{"balance", Params{Rule: "median"}, []string{"only robust"}},
		{"balance", Params{Weighting: MetropolisHastings}, []string{"weighting"}},
		{"afa", Params{F: &neg}, []string{"f = -1", "not used", "only robust, scclip, clipped_gossip, rdpfl take f"}},
		{"scclip", Params{F: &neg}, []string{"f = -1"}},
	}
	for _, c := range cases {
		_, err := New(c.name, c.p)
		if err == nil {
			t.Errorf("New(%q, %+v) accepted", c.name, c.p)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("New(%q): error %q does not mention %q", c.name, err, w)
			}
		}
	}
}
