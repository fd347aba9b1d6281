package config

import (
	"strings"
	"testing"
)

const worstCaseBase = `
name = "wc"
nodes = 10
[adversary]
fraction = 0.2
`

// TestWorstCaseDefaults: a [worst_case] section that names only its
// defences gets the defaults, and each defence is the config its keys
// make.
func TestWorstCaseDefaults(t *testing.T) {
	c, err := Parse([]byte(worstCaseBase+`
[worst_case.defences.krum]
"strategy.name" = "robust"
"strategy.rule" = "krum"
`), "wc.toml")
	if err != nil {
		t.Fatal(err)
	}
	w := c.WorstCase
	if w.Grid != WorstCaseGrid || w.Tolerance != WorstCaseTolerance || w.Refine != WorstCaseRefine || w.Confirm != WorstCaseConfirm {
		t.Errorf("defaults not filled: %+v", *w)
	}
	if got := c.SearchRoundsOf(); got != c.Rounds/5 {
		t.Errorf("search rounds %d, want rounds/5 = %d", got, c.Rounds/5)
	}
	d, err := c.Defence("krum")
	if err != nil || d.Strategy.Name != "robust" || d.Strategy.Rule != "krum" || d.WorstCase != nil {
		t.Errorf("defence krum: %+v, %v", d.Strategy, err)
	}
	// A config without the section keeps its hash: nothing is encoded.
	plain, _ := Parse([]byte(worstCaseBase), "plain.toml")
	if f := Flatten(plain); f["worst_case.grid"] != "" {
		t.Errorf("a config without [worst_case] encodes it: %v", f["worst_case.grid"])
	}
}

// TestWorstCaseRefusals: each mistake is named with the key and what to
// do.
func TestWorstCaseRefusals(t *testing.T) {
	defence := "\n[worst_case.defences.median]\n\"strategy.name\" = \"robust\"\n\"strategy.rule\" = \"median\"\n"
	cases := []struct{ text, want string }{
		{worstCaseBase + "[worst_case]\ngrid = 3\n", "names no defence"},
		{worstCaseBase + "[worst_case]\ngrid = 1\n" + defence, "worst_case.grid = 1"},
		{worstCaseBase + "[worst_case]\ntolerance = 0.9\n" + defence, "worst_case.tolerance = 0.9"},
		{worstCaseBase + "[worst_case]\nsearch_rounds = 50\n" + defence, "worst_case.search_rounds = 50"},
		{worstCaseBase + "[worst_case]\nrefine = -1\n" + defence, "worst_case.refine = -1"},
		{worstCaseBase + "[worst_case]\nattacks = [\"alie\", \"none\"]\n" + defence, `worst_case.attacks = "none"`},
		{worstCaseBase + "[worst_case]\nattacks = [\"sfa\"]\n" + defence, `worst_case.attacks = "sfa"`},
		{worstCaseBase + "[worst_case]\nplacements = [\"hub\"]\n" + defence, `worst_case.placements = "hub"`},
		{worstCaseBase + "[worst_case]\nsearch_seeds = [1, 1]\n" + defence, "each seed once"},
		{worstCaseBase + "[worst_case]\ngrid = 3\n[worst_case.defences.x]\n\"strategy.rule\" = \"no_such_rule\"\n\"strategy.name\" = \"robust\"\n", "worst_case.defences.x"},
		{worstCaseBase + "[worst_case]\ngrid = 3\n[worst_case.defences.x]\n\"adversary.attack\" = \"alie\"\n", "the search chooses the attack"},
		{worstCaseBase + "[worst_case]\ngrid = 3\n[worst_case.defences.x]\n\"strategy.nmae\" = \"robust\"\n", `did you mean "strategy.name"`},
		{worstCaseBase + "[worst_case]\ngird = 3\n" + defence, `did you mean "worst_case.grid"`},
		{worstCaseBase + "[sweep]\nseeds = [1, 2]\n[worst_case]\n" + defence, "remove [sweep]"},
		{"name = \"wc\"\n[worst_case]\n" + defence, "needs Byzantine nodes to place"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.text), "wc.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n→ %v\nwant an error containing %q", c.text, err, c.want)
		}
	}
}
