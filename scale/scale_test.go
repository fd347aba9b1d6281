package scale

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestQuote(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH")
	}
	for _, s := range []string{"plain/path.toml", "with space", "it's", `$HOME "x" \n`, "", "a;rm -rf b", "*"} {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh read Quote(%q) = %s as %q (%v)", s, Quote(s), out, err)
		}
	}
}

func bashSyntax(t *testing.T, script string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	if out, err := exec.Command("bash", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s\n%s", err, out, script)
	}
}

func TestSlurmSweep(t *testing.T) {
	s := Slurm{Config: "/shared/my sweep's.toml", Out: "/shared/runs/x", Name: "x", Time: "01:00:00", Overcommit: true}
	sc, err := SlurmSweep(s, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0-3%2\n", "#SBATCH --time=01:00:00\n", "#SBATCH --overcommit\n",
		`CONFIG='/shared/my sweep'\''s.toml'`, `"$TRELLIS" sweep "$CONFIG" --shard auto`} {
		if !strings.Contains(sc, want) {
			t.Errorf("script lacks %q:\n%s", want, sc)
		}
	}
	bashSyntax(t, sc)
	if m := SlurmMerge(s); !strings.Contains(m, `'/shared/my sweep'\''s.toml' --merge`) {
		t.Errorf("merge command %s", m)
	}
	spaced, err := SlurmSweep(Slurm{Config: "c", Out: "/a b", Name: "x"}, 2, 0)
	if err != nil || strings.Contains(spaced, "#SBATCH --output") || !strings.Contains(spaced, `sbatch --output='/a b/slurm-%A_%a.out' SCRIPT`) {
		t.Errorf("an output directory with a space: %v\n%s", err, spaced)
	}
	bashSyntax(t, spaced)
	for _, bad := range []Slurm{{Config: "c", Out: "/a%b", Name: "x"}, {Config: "c", Out: "o", Name: "x y"}, {Out: "o", Name: "x"}} {
		if _, err := SlurmSweep(bad, 2, 0); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := SlurmSweep(s, 0, 0); err == nil {
		t.Error("0 shards: no error")
	}
}

func TestSlurmLaunch(t *testing.T) {
	sc, err := SlurmLaunch(Slurm{Config: "quickstart", Preset: true, Out: "/shared/runs/q", Name: "q"}, 20, 7000, Timing{Mode: "lockstep"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --ntasks=20\n", `"$TRELLIS" presets show "$CONFIG"`, `--id "$SLURM_PROCID"`,
		`"$TRELLIS" keys --nodes "$NODES"`, `"$TRELLIS" monitor`, "wait \"$MONITOR\""} {
		if !strings.Contains(sc, want) {
			t.Errorf("script lacks %q:\n%s", want, sc)
		}
	}
	bashSyntax(t, sc)
	wc, err := SlurmLaunch(Slurm{Config: "/c.toml", Out: "/o", Name: "q"}, 4, 7000, Timing{Mode: "wallclock", Delta: 5 * time.Second, Start: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NODE_ARGS=(--mode wallclock --delta 5s)", "MONITOR_ARGS=(--mode wallclock --gap 10s)", "NODE_ARGS+=(--epoch", "+ 30))"} {
		if !strings.Contains(wc, want) {
			t.Errorf("wall-clock script lacks %q:\n%s", want, wc)
		}
	}
	bashSyntax(t, wc)
	// The epoch line gives an RFC 3339 time bash and date agree on.
	if _, err := exec.LookPath("date"); err == nil {
		line := wc[strings.Index(wc, "NODE_ARGS+=("):]
		line = line[:strings.Index(line, "\n")]
		out, err := exec.Command("bash", "-c", "NODE_ARGS=(); "+line+`; printf %s "${NODE_ARGS[1]}"`).Output()
		if _, perr := time.Parse(time.RFC3339, string(out)); err != nil || perr != nil {
			t.Errorf("epoch %q: %v %v", out, err, perr)
		}
	}
	for _, bad := range []Timing{{Mode: "fast"}, {Mode: "wallclock"}} {
		if _, err := SlurmLaunch(Slurm{Config: "c", Out: "o", Name: "q"}, 4, 7000, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := SlurmLaunch(Slurm{Config: "c", Out: "o", Name: "q"}, 4, 65533, Timing{Mode: "lockstep"}); err == nil {
		t.Error("ports past 65535: no error")
	}
}
