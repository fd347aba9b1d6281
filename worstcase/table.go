package worstcase

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/rundir"
)

// The files Write writes in the search's output directory.
const (
	MarkdownFile = "worst_case.md"
	CSVFile      = "worst_case.csv"
	// FamiliesCSVFile holds every family's worst point per defence.
	FamiliesCSVFile = "worst_case_families.csv"
)

// Describe is a point's attack as table cells: the attack, its discrete
// choices and parameter ("z = 1.7, minus = true"), its placement.
func (s *Search) Describe(p Point) (attack, params, placement string) {
	set := s.Setting(p)
	if set == nil {
		return "none", "", p.Placement
	}
	var parts []string
	if set.Param != nil {
		parts = append(parts, set.Param.Key+" = "+num(p.Value))
	}
	if d := set.Describe(); d != "" {
		parts = append(parts, d)
	}
	return set.Family, strings.Join(parts, ", "), p.Placement
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func acc(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// Markdown is the search's report: one row per defence, then each
// family's worst point per defence.
func (s *Search) Markdown(res *Result) string {
	c := s.cfg
	w := c.WorstCase
	var b strings.Builder
	fmt.Fprintf(&b, "# Worst-case search: %s\n\n", c.Name)
	fmt.Fprintf(&b, "%d nodes, topology %s, Byzantine fraction %g. Search runs: %d rounds, seeds %s; grid of %d values per continuous parameter, golden-section refinement of %s to %g of the parameter's range (in log scale). Confirmed points: %d rounds, seeds %s, %s and the run without attack.\n\n",
		c.Nodes, c.Topology.Kind, c.Adversary.Fraction, c.SearchRoundsOf(), seedsText(s.Space.SearchSeeds), w.Grid, families(w.Refine), w.Tolerance, c.Rounds, seedsText(s.Space.ConfirmSeeds), families(w.Confirm))
	b.WriteString("Accuracy is the honest nodes' mean final accuracy (local for personalized methods, global otherwise), mean over the seeds; δ_max and the worst honest node's accuracy are those of the worst point.\n\n")
	b.WriteString("| defence | accuracy | no attack | worst found | drop | δ_max | worst node | attack | parameters | placement | runs |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for d, dr := range res.Defences {
		a, p, pl := s.Describe(dr.Worst.Point)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", dr.Name, metricName(s.Metric[d]),
			acc(dr.NoAttack.Acc), acc(dr.Worst.Outcome.Acc), acc(dr.NoAttack.Acc-dr.Worst.Outcome.Acc),
			acc(dr.Worst.Outcome.DeltaMax), acc(dr.Worst.Outcome.WorstNode), a, p, pl, dr.Runs)
	}
	b.WriteString("\n## Each attack family's worst point\n\n")
	fmt.Fprintf(&b, "The search accuracy is that of the %d-round search runs; a confirmed one is of the full runs.\n", c.SearchRoundsOf())
	for _, dr := range res.Defences {
		fmt.Fprintf(&b, "\n### %s\n\n", dr.Name)
		b.WriteString("| family | search accuracy | confirmed | parameters | placement | refined |\n|---|---|---|---|---|---|\n")
		for _, f := range dr.Families {
			_, p, pl := s.Describe(f.Worst.Point)
			conf := ""
			if f.Confirmed != nil {
				conf = acc(f.Confirmed.Acc)
			}
			ref := ""
			if f.Refined {
				ref = "yes"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", f.Family, acc(f.Worst.Outcome.Acc), conf, p, pl, ref)
		}
		if len(dr.Skipped) > 0 {
			b.WriteString("\nNot usable with this defence:\n\n")
			for _, k := range slices.Sorted(maps.Keys(dr.Skipped)) {
				fmt.Fprintf(&b, "- %s: %s\n", k, dr.Skipped[k])
			}
		}
	}
	return b.String()
}

// families is "the worst family" or "the N worst families".
func families(n int) string {
	if n == 1 {
		return "the worst family"
	}
	return fmt.Sprintf("the %d worst families", n)
}

func metricName(m string) string {
	if m == "honest_local_acc" {
		return "local"
	}
	return "global"
}

func seedsText(ss []uint64) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, ", ")
}

// CSV writes the one-row-per-defence table.
func (s *Search) CSV(w io.Writer, res *Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"defence", "metric", "no_attack_acc", "worst_acc", "worst_delta_max", "worst_node_acc", "attack", "parameters", "placement", "runs", "worst_dir"})
	for d, dr := range res.Defences {
		a, p, pl := s.Describe(dr.Worst.Point)
		_ = cw.Write([]string{dr.Name, s.Metric[d], acc(dr.NoAttack.Acc), acc(dr.Worst.Outcome.Acc), acc(dr.Worst.Outcome.DeltaMax),
			acc(dr.Worst.Outcome.WorstNode), a, p, pl, strconv.Itoa(dr.Runs),
			filepath.Dir(s.Dir(Run{Point: dr.Worst.Point, Seed: s.Space.ConfirmSeeds[0], Full: true}))})
	}
	cw.Flush()
	return cw.Error()
}

// FamiliesCSV writes every family's worst point per defence.
func (s *Search) FamiliesCSV(w io.Writer, res *Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"defence", "family", "search_acc", "confirmed_acc", "confirmed_delta_max", "confirmed_worst_node_acc", "parameters", "placement", "refined"})
	for _, dr := range res.Defences {
		for _, f := range dr.Families {
			_, p, pl := s.Describe(f.Worst.Point)
			row := []string{dr.Name, f.Family, acc(f.Worst.Outcome.Acc), "", "", "", p, pl, strconv.FormatBool(f.Refined)}
			if f.Confirmed != nil {
				row[3], row[4], row[5] = acc(f.Confirmed.Acc), acc(f.Confirmed.DeltaMax), acc(f.Confirmed.WorstNode)
			}
			_ = cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// Write writes worst_case.md and the CSV files into out.
func (s *Search) Write(out string, res *Result) error {
	if err := rundir.WriteAtomic(filepath.Join(out, MarkdownFile), []byte(s.Markdown(res))); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := s.CSV(&b, res); err != nil {
		return err
	}
	if err := rundir.WriteAtomic(filepath.Join(out, CSVFile), b.Bytes()); err != nil {
		return err
	}
	b.Reset()
	if err := s.FamiliesCSV(&b, res); err != nil {
		return err
	}
	return rundir.WriteAtomic(filepath.Join(out, FamiliesCSVFile), b.Bytes())
}

// ConfirmedDirs are the directories (relative to out) of every confirmed
// run, the runs without attack first: what report.html draws.
func (s *Search) ConfirmedDirs(res *Result) []string {
	var dirs []string
	for d, dr := range res.Defences {
		pts := []Point{noAttack(d)}
		for _, f := range dr.Families {
			if f.Confirmed != nil {
				pts = append(pts, f.Worst.Point)
			}
		}
		for _, p := range pts {
			for _, sd := range s.Space.ConfirmSeeds {
				dirs = append(dirs, s.Dir(Run{Point: p, Seed: sd, Full: true}))
			}
		}
	}
	return dirs
}

// Row is a defence's line of the tables, for JSON.
type Row struct {
	Defence    string      `json:"defence"`
	Metric     string      `json:"metric"`
	NoAttack   Outcome     `json:"no_attack"`
	Worst      Outcome     `json:"worst"`
	Attack     string      `json:"attack"`
	Parameters string      `json:"parameters"`
	Placement  string      `json:"placement"`
	Runs       int         `json:"runs"`
	Families   []FamilyRow `json:"families"`
}

// FamilyRow is a family's worst point against a defence, for JSON.
type FamilyRow struct {
	Family     string   `json:"family"`
	SearchAcc  float64  `json:"search_acc"`
	Confirmed  *Outcome `json:"confirmed,omitempty"`
	Parameters string   `json:"parameters"`
	Placement  string   `json:"placement"`
	Refined    bool     `json:"refined"`
}

// Rows is the result as the tables show it.
func (s *Search) Rows(res *Result) []Row {
	var rows []Row
	for d, dr := range res.Defences {
		a, p, pl := s.Describe(dr.Worst.Point)
		r := Row{Defence: dr.Name, Metric: s.Metric[d], NoAttack: dr.NoAttack, Worst: dr.Worst.Outcome, Attack: a, Parameters: p, Placement: pl, Runs: dr.Runs}
		for _, f := range dr.Families {
			_, fp, fpl := s.Describe(f.Worst.Point)
			r.Families = append(r.Families, FamilyRow{Family: f.Family, SearchAcc: f.Worst.Outcome.Acc, Confirmed: f.Confirmed, Parameters: fp, Placement: fpl, Refined: f.Refined})
		}
		rows = append(rows, r)
	}
	return rows
}
