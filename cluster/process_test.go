package cluster_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/experiment"
)

// The tests here start real processes: the trellis binary, built once per
// test run. They are skipped under -short and where no Go toolchain is
// found (the binary is built from this checkout).

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// trellisBinary builds cmd/trellis into a temporary directory once.
func trellisBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes (the trellis binary, one per node): skipped under -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the trellis binary with")
	}
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "trellis-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "trellis")
		out, err := exec.Command(goTool, "build", "-o", binPath, "github.com/trellis-fl/trellis/cmd/trellis").CombinedOutput()
		if err != nil {
			binErr = &buildError{out: string(out), err: err}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return "building trellis: " + e.err.Error() + "\n" + e.out }

// small configs: FedAvg on a 2-regular graph, and DMTT on the mobility
// graph under the Gaussian attack (one draw per node and round for all its
// recipients, idle Byzantine nodes) and the omission liar, as
// configs/dmtt does, at a size that runs in seconds.
const fedavgConfig = `
name = "cluster-fedavg"
nodes = 4
rounds = 3
seed = 7
[data]
samples = 2000
[model]
kind = "logreg"
[topology]
kind = "kregular"
k = 2
[strategy]
name = "fedavg"
[evaluation]
global_test = 200
`

const dmttConfig = `
name = "cluster-dmtt"
nodes = 6
rounds = 3
seed = 42
[data]
samples = 3000
[model]
kind = "mlp"
hidden = [32]
head = "evidential"
[partition]
method = "dirichlet"
alpha = 0.5
split = [0.7, 0.1, 0.2]
[topology]
kind = "mobility"
[evaluation]
global_test = 0
[adversary]
fraction = 0.34
attack = "gaussian"
sigma = 10.0
same_for_all = true
idle = true
liar = "omission"
[strategy]
name = "dmtt"
`

// TestLockstepMatchesSimulator is acceptance item 1 on small configs:
// `trellis launch` (a monitor and one process per node over IPC, fresh
// key files, private randomness) writes metrics.jsonl and rounds.jsonl
// bit-identical to the simulator's run of the same config.
func TestLockstepMatchesSimulator(t *testing.T) {
	bin := trellisBinary(t)
	for _, tc := range []struct{ name, text string }{{"fedavg", fedavgConfig}, {"dmtt", dmttConfig}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "cfg.toml")
			if err := os.WriteFile(cfgPath, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := experiment.LoadConfig(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			simDir := filepath.Join(dir, "sim")
			if _, err := experiment.RunToDir(context.Background(), c, simDir, nil); err != nil {
				t.Fatal(err)
			}
			cluDir := filepath.Join(dir, "cluster")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard, not a measurement
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "launch", cfgPath, "-o", cluDir, "-q")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("trellis launch: %v\n%s", err, out)
			}
			for _, f := range []string{experiment.MetricsFile, experiment.RoundsFile} {
				want, err := os.ReadFile(filepath.Join(simDir, f))
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(cluDir, f))
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 || !bytes.Equal(got, want) {
					t.Errorf("%s differs from the simulator's (%d bytes, simulator %d)\ncluster:   %.300s\nsimulator: %.300s", f, len(got), len(want), got, want)
				}
			}
			if _, err := os.Stat(filepath.Join(cluDir, experiment.SummaryFile)); err != nil {
				t.Errorf("no summary: %v", err)
			}
		})
	}
}

// TestLaunchRefusesOmniscientAttack: an attack that needs every honest
// payload of the round cannot run in node processes; launch says so
// before starting any.
func TestLaunchRefusesOmniscientAttack(t *testing.T) {
	bin := trellisBinary(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "cfg.toml")
	text := fedavgConfig + "[adversary]\nfraction = 0.25\nattack = \"alie\"\n"
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "launch", cfgPath, "-o", filepath.Join(dir, "out"), "-q").CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("omniscient")) || !bytes.Contains(out, []byte("alie")) {
		t.Fatalf("launch with alie: err %v, output %q; want a refusal naming the attack and the omniscient view", err, out)
	}
}
