package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/rundir"
)

// writeFile writes text into dir/name and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A sweep too large for the machine: validate refuses it with run's
// refusal, before building its graph (a complete graph of 100 000 nodes
// does not fit in memory).
func TestValidateRefusesWhatRunRefusesForMemory(t *testing.T) {
	t.Setenv(experiment.EnvMemoryAvailable, "64MiB")
	cfg := writeFile(t, t.TempDir(), "big.toml", "name = \"big\"\nnodes = 2000\n")
	out := filepath.Join(t.TempDir(), "out")
	runErr := run([]string{"run", cfg, "-o", out}, &bytes.Buffer{}, &bytes.Buffer{})
	valErr := run([]string{"validate", cfg}, &bytes.Buffer{}, &bytes.Buffer{})
	if runErr == nil || !strings.Contains(runErr.Error(), "needs about") {
		t.Fatalf("run: %v", runErr)
	}
	if valErr == nil || valErr.Error() != runErr.Error() {
		t.Errorf("validate: %v\nwant run's refusal: %v", valErr, runErr)
	}
}

func TestValidateOfAHundredThousandNodesIsAClearRefusal(t *testing.T) {
	dir := t.TempDir()
	// MNIST's 60,000 samples cannot give 100,000 nodes one each.
	exact := writeFile(t, dir, "exact.toml", "name = \"big\"\nnodes = 100000\n")
	if err := run([]string{"validate", exact}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `partition.method = "sampled"`) {
		t.Errorf("validate 100000 nodes of 60000 samples: %v", err)
	}
	cfg := writeFile(t, dir, "big.toml", "name = \"big\"\nnodes = 100000\n[partition]\nmethod = \"sampled\"\nper_node = 10\n")
	err := run([]string{"validate", cfg}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "needs about") || !strings.Contains(err.Error(), "it would fit with nodes =") {
		t.Errorf("validate nodes = 100000: %v", err)
	}
	// A robust rule's warnings resolve f on the graph: after the check.
	robust := []string{"--set", "strategy.name=robust", "--set", "strategy.rule=trimmed_mean", "--set", "adversary.fraction=0.1", "--set", "adversary.attack=gaussian"}
	for _, cmd := range []string{"validate", "run"} {
		err := run(append([]string{cmd, cfg, "-o", filepath.Join(dir, "out")}, robust...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "needs about") {
			t.Errorf("%s of a robust rule on 100 000 nodes: %v", cmd, err)
		}
	}
}

// The command printed after an interrupted sweep resumes it: it carries
// the --set flags that define the runs (without them the directory holds
// "a run of another config").
func TestInterruptedSweepPrintsAResumeCommandThatResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a small sweep")
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "s.toml", tinyToml("resume", 4, 2, "[sweep]\nseeds = [1, 2]\n"))
	out := filepath.Join(dir, "out")
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	root.SetArgs([]string{"sweep", cfg, "--set", "rounds=3", "--set", "model.hidden=[8]", "-q", "-o", out})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := root.ExecuteContext(ctx)
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("interrupted sweep: %v", err)
	}
	m := regexp.MustCompile("`trellis ([^`]*)` resumes").FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no resume command in %v", err)
	}
	var args []string
	for _, w := range strings.Fields(m[1]) {
		args = append(args, strings.Trim(w, "'"))
	}
	for _, want := range []string{"--set rounds=3", "--set 'model.hidden=[8]'", "-o " + out} {
		if !strings.Contains(m[1], want) {
			t.Errorf("resume command %q lacks %q", m[1], want)
		}
	}
	var errb bytes.Buffer
	if err := run(args, &bytes.Buffer{}, &errb); err != nil {
		t.Errorf("following %q: %v\n%s", m[1], err, errb.String())
	}
}

// `trellis validate` lists a sweep's runs numbered as --shard counts them,
// which run --help refers to.
func TestValidateListsTheRunsAsShardCountsThem(t *testing.T) {
	cfg := writeFile(t, t.TempDir(), "s.toml", shardSweep)
	var out bytes.Buffer
	if err := run([]string{"validate", cfg}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"valid, 3 run(s)", "\n  0  seed-1\n", "\n  1  seed-2\n", "\n  2  seed-3\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("validate lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := run([]string{"validate", cfg, "--json"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Dirs []string `json:"run_dirs"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || strings.Join(v.Dirs, " ") != "seed-1 seed-2 seed-3" {
		t.Errorf("validate --json run_dirs: %v %s", err, out.String())
	}
	out.Reset()
	_ = run([]string{"run", "--help"}, &out, &bytes.Buffer{})
	if !strings.Contains(out.String(), "as `trellis validate` lists them") {
		t.Errorf("run --help does not say where the runs' order is listed:\n%s", out.String())
	}
}

// privacy's -q is its sampling rate, not the global --quiet.
func TestPrivacyShortQIsTheSamplingRate(t *testing.T) {
	var short, long bytes.Buffer
	if err := run([]string{"privacy", "-q", "0.5", "--sigma", "1", "--steps", "10", "--json"}, &short, &bytes.Buffer{}); err != nil {
		t.Fatalf("privacy -q 0.5: %v", err)
	}
	if err := run([]string{"privacy", "--q", "0.5", "--sigma", "1", "--steps", "10", "--json"}, &long, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if short.String() != long.String() || !strings.Contains(short.String(), "0.5") {
		t.Errorf("-q 0.5:\n%s\n--q 0.5:\n%s", short.String(), long.String())
	}
}

// keys refuses a deployment of fewer than two nodes and writes nothing.
func TestKeysRefusesTooFewNodes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"0", "-3", "1"} {
		out := filepath.Join(dir, "keys"+n)
		err := run([]string{"keys", "--nodes", n, "--ipc", filepath.Join(dir, "ipc"), "-o", out}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "--nodes "+n+": a deployment needs at least 2 nodes") {
			t.Errorf("--nodes %s: %v", n, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--nodes %s wrote %s", n, out)
		}
	}
}

// -o naming a file is refused up front, without suggesting --force (which
// could not help); -o "" is refused rather than taken as the default.
func TestOutputThatIsAFileOrEmpty(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "exist", "x")
	for _, args := range [][]string{
		{"run", "quickstart", "-o", file},
		{"run", "quickstart", "-o", file, "--force"},
		{"sweep", "byzantine-sweep", "-o", file},
		{"demo", "-o", file},
		{"keys", "--nodes", "2", "--ipc", dir, "-o", file},
	} {
		err := run(args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "is a file, not a directory") || strings.Contains(err.Error(), "--force") {
			t.Errorf("%v: %v", args, err)
		}
	}
	for _, args := range [][]string{{"run", "quickstart", "-o", "", "--dry-run"}, {"validate", "quickstart", "-o", " "}} {
		err := run(args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), `-o "": the output directory is empty`) {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// validate --json prints a JSON error object for an invalid config.
func TestValidateJSONOnAnInvalidConfig(t *testing.T) {
	var out bytes.Buffer
	err := run([]string{"validate", "quickstart", "--set", "rounds=0", "--json"}, &out, &bytes.Buffer{})
	if err == nil {
		t.Fatal("rounds = 0 accepted")
	}
	var v struct {
		Valid *bool  `json:"valid"`
		Error string `json:"error"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &v); jerr != nil || v.Valid == nil || *v.Valid || v.Error != err.Error() {
		t.Errorf("validate --json of an invalid config printed %q (%v)", out.String(), jerr)
	}
}

// --json is honoured by --version and bench rules, and refused where a
// command has no machine-readable output.
func TestJSONIsHonouredOrRefused(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--version", "--json"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var b rundir.BuildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil || b.Module != "github.com/trellis-fl/trellis" || (b.Revision == "") == (b.Missing == "") {
		t.Errorf("--version --json: %v %s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"--version"}, &out, &bytes.Buffer{}); err != nil || !strings.HasPrefix(out.String(), "trellis version github.com/trellis-fl/trellis") {
		t.Errorf("--version: %v %q", err, out.String())
	}
	if b.Revision == "" && !strings.Contains(out.String(), "no commit recorded") {
		t.Errorf("--version of a build without a commit does not say so: %q", out.String())
	}
	out.Reset()
	if err := run([]string{"bench", "rules", "--n", "10", "--f", "2", "--d", "5", "--trials", "2", "--json"}, &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var br struct {
		N     int `json:"n"`
		Cells []struct {
			Rule, Attack string
			Kappa        *float64
		} `json:"cells"`
	}
	if err := json.Unmarshal(out.Bytes(), &br); err != nil || br.N != 10 || len(br.Cells) == 0 {
		t.Errorf("bench rules --json: %v %.300s", err, out.String())
	}
	out.Reset()
	if err := run([]string{"launch", "quickstart", "--dry-run", "--json"}, &out, &bytes.Buffer{}); err != nil || !json.Valid(out.Bytes()) {
		t.Errorf("launch --dry-run --json: %v %.200s", err, out.String())
	}
	for _, args := range [][]string{{"keys", "--nodes", "2", "--ipc", t.TempDir(), "-o", t.TempDir(), "--json"}, {"slurm", "sweep", "quickstart", "--json"}} {
		err := run(args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "--json: ") {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// launch --dry-run refuses what the launch refuses; a launch whose data
// cannot be loaded leaves no directory.
func TestLaunchDryRunRefusesWhatLaunchRefuses(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "alie.toml", tinyToml("alie", 6, 1, "[adversary]\nfraction = 0.2\nattack = \"alie\"\n"))
	err := run([]string{"launch", cfg, "--dry-run"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "cannot run as one process per node") {
		t.Errorf("launch --dry-run of an omniscient attack: %v", err)
	}
	err = run([]string{"launch", "byzantine-sweep", "--dry-run"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "this config's [sweep] has 27 runs") {
		t.Errorf("launch --dry-run of a sweep: %v", err)
	}
	one := writeFile(t, dir, "one.toml", tinyToml("one", 4, 1, "[sweep]\nseeds = [2]\n"))
	if err := run([]string{"launch", one, "--dry-run"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Errorf("launch --dry-run of a sweep of one run: %v", err)
	}
	cifar := writeFile(t, dir, "cifar.toml", "name = \"c\"\n[data]\ndataset = \"cifar10\"\ndir = \""+filepath.Join(dir, "none")+"\"\n")
	out := filepath.Join(dir, "out")
	if err := run([]string{"launch", cifar, "-o", out, "-q"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("launch without its data started")
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a launch whose data failed to load left %s", out)
	}
}

// A preset name with a typo gets the closest names.
func TestPresetTypoSaysDidYouMean(t *testing.T) {
	for arg, want := range map[string]string{"quickstrat": `did you mean "quickstart"?`, "main-quick": `did you mean "dmtt/main-quick"?`, "byzantine": `"byzantine-sweep"`} {
		for _, args := range [][]string{{"run", arg}, {"presets", "show", arg}} {
			err := run(args, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "lightyear/sfa-full") {
				t.Errorf("%v: %v, want %s and not the whole list", args, err, want)
			}
		}
	}
}
