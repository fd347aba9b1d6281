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

// The names New's refusals list are the registry's: the unknown-name error
// lists every row, and "only … take X" lists exactly the rows that take X.
func TestNewErrorsListTheRegistry(t *testing.T) {
	_, err := New("nosuch", Params{})
	want := "(valid: " + strings.Join(Names(), ", ") + ")"
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("unknown name: %v, want it to end in %q", err, want)
	}
	var rows []string
	for _, r := range Registry() {
		rows = append(rows, r.Name)
		if _, err := New(r.Name, paramsFor(r.Name)); err != nil {
			t.Errorf("%s: %v", r.Name, err)
		}
	}
	if strings.Join(rows, ",") != strings.Join(Names(), ",") || len(rows) != 22 {
		t.Errorf("registry %v, names %v", rows, Names())
	}
	one := 1
	for _, c := range []struct {
		p     Params
		takes func(Row) bool
	}{
		{Params{Weighting: MetropolisHastings}, func(r Row) bool { return r.Weighting }},
		{Params{F: &one}, func(r Row) bool { return r.F }},
		{Params{Rule: "median"}, func(r Row) bool { return r.Rule }},
		{Params{Score: "cosine"}, func(r Row) bool { return r.Score }},
	} {
		var takers []string
		for _, r := range Registry() {
			if c.takes(r) {
				takers = append(takers, r.Name)
			}
		}
		_, err := New("local", c.p)
		if err == nil || !strings.Contains(err.Error(), "only "+strings.Join(takers, ", ")+" take") {
			t.Errorf("%+v: %v, want it to list %v", c.p, err, takers)
		}
		for _, name := range takers {
			p := paramsFor(name)
			switch {
			case c.p.Weighting != Uniform:
				p.Weighting = c.p.Weighting
			case c.p.F != nil:
				p.F = c.p.F
			case c.p.Score != "":
				p.Score = c.p.Score
			}
			if _, err := New(name, p); err != nil {
				t.Errorf("%s refuses what its row says it takes (%+v): %v", name, c.p, err)
			}
		}
	}
}

// paramsFor is the least a strategy needs: a rule for robust (trimmed_mean,
// so that an f applies) and for rdpfl.
func paramsFor(name string) Params {
	if name == "robust" || name == "rdpfl" {
		return Params{Rule: "trimmed_mean"}
	}
	return Params{}
}

// Every option's default is in its range, and a value just outside the
// range is refused with the option's key.
func TestOptionRanges(t *testing.T) {
	for _, r := range Registry() {
		for _, o := range r.Options {
			if !o.check(o.Default) {
				t.Errorf("%s: %s default %v outside %s", r.Name, o.Name, o.Default, o.Range())
			}
			below := o.Lo - 0.5
			if o.LoOpen {
				below = o.Lo
			}
			p := paramsFor(r.Name)
			p.Options = map[string]float64{o.Name: below}
			if _, err := New(r.Name, p); err == nil || !strings.Contains(err.Error(), "options."+o.Name) {
				t.Errorf("%s: %s = %v: %v", r.Name, o.Name, below, err)
			}
		}
	}
}
