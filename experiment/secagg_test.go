package experiment

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/data"
	"github.com/trellis-fl/trellis/rundir"
)

// Every bad [secagg] value is an error naming the key, the value and what
// is allowed.
func TestSecAggKeysAreChecked(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[secagg]\nmode = \"star\"", `secagg.mode = "star": want "none", "neighbourhood", "screened", "paillier" or "ckks"`},
		{"[secagg]\nmode = \"neighbourhood\"", "secagg.threshold = 0: need a whole number ≥ 2"},
		{"[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\nscale_bits = 30", "secagg.scale_bits = 30: allowed range 1 to 24"},
		{"[secagg]\nmode = \"screened\"\nthreshold = 2", "screened groups need the trust layer"},
		{"[strategy]\nname = \"local\"\n[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\nacross = true", "secagg.across = true: the strategy must send its model only"},
		{"[strategy]\nname = \"robust\"\n[secagg]\nmode = \"neighbourhood\"\nthreshold = 2", `strategy.name = "robust": secagg with across = false`},
		{"[privacy]\nmode = \"node\"\nnoise_multiplier = 1.0\n[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\nacross = true", `privacy.mode = "node" covers the noisy model`},
		{"[privacy]\nmode = \"laplace_decaying\"\nnoise_scale = 1.0\nclip = 1.0\n[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\nacross = true", `privacy.mode = "laplace_decaying" covers the noisy model`},
		{"[secagg]\nmode = \"paillier\"\npaillier_bits = 256", "secagg.paillier_bits = 256: allowed 512 to 8192, a multiple of 256"},
		{"[secagg]\nmode = \"paillier\"\npaillier_bits = 576", "secagg.paillier_bits = 576: allowed 512 to 8192, a multiple of 256"},
		{"[secagg]\nmode = \"paillier\"\nbound = 0.0", "secagg.bound = 0"},
		{"[secagg]\nmode = \"paillier\"\nthreshold = 3", "the Paillier relay takes no threshold"},
		{"[secagg]\nmode = \"ckks\"\nckks_ciphertexts = 0", "secagg.ckks_ciphertexts = 0: allowed range 1 to 4096"},
		{"[strategy]\nname = \"robust\"\n[secagg]\nmode = \"ckks\"", `strategy.name = "robust": CKKS makes the neighbourhood's mean the model`},
	} {
		_, err := config.Parse([]byte(c.toml+"\n"), "s.toml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.toml, err, c.want)
		}
	}
	_, err := config.Parse([]byte("[secagg]\nthresold = 2\n"), "s.toml")
	if err == nil || !strings.Contains(err.Error(), `(did you mean "secagg.threshold"?)`) {
		t.Errorf("misspelt key: %v", err)
	}
}

// A threshold no group can meet is refused before the run: above a node's
// degree, or so low that 2t ≤ n.
func TestSecAggImpossibleGroupsRefusedBeforeTheRun(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"[secagg]\nmode = \"neighbourhood\"\nthreshold = 4\n", "secagg.threshold = 4: node 0 has 3 neighbours, so its group can never reach t"},
		{"[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\n", "node 0's group of 4 needs t > 2"},
	} {
		c0 := tinyConfig(t, c.extra)
		if strings.Contains(c.extra, "threshold = 2") {
			c0.Nodes = 5
		}
		_, err := SetupOf(c0, loadMNIST(t))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.extra, err, c.want)
		}
	}
}

// A run with secure aggregation in neighbourhoods: every node's group sum
// succeeds, and the accuracy is FedAvg's (the group mean is FedAvg's
// uniform average up to fixed-point rounding). Screened groups with a
// robust rule across the groups' means run too.
func TestSecAggRun(t *testing.T) {
	if testing.Short() {
		t.Skip("two simulations (node/secagg/masks_test.go covers the layer under -short)")
	}
	// One of the four nodes is the adversary's (sending honest payloads):
	// the simulator re-signs its messages over every exchange phase.
	plain := tinyConfig(t, "[adversary]\nfraction = 0.25\n")
	sec := tinyConfig(t, "[adversary]\nfraction = 0.25\n[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\n")
	var acc [2]float64
	var metricsOf [3][]byte
	for k, c := range []config.Config{plain, sec, sec} {
		dir := t.TempDir()
		if _, err := RunToDir(context.Background(), c, dir, nil); err != nil {
			t.Fatal(err)
		}
		var err error
		if metricsOf[k], err = os.ReadFile(dir + "/" + rundir.MetricsFile); err != nil {
			t.Fatal(err)
		}
		if k == 2 {
			// Same config and seed: bit-identical records (keys, shares
			// and masks all come from the seed in simulation).
			if !bytes.Equal(metricsOf[1], metricsOf[2]) {
				t.Error("two secagg runs of one config differ")
			}
			break
		}
		_, recs, err := rundir.LastRound(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, nr := range recs {
			acc[k] += nr.GlobalAcc / float64(len(recs))
			if k == 0 {
				continue
			}
			if sa := nr.SecAgg; sa == nil || sa.Fallback || sa.Members != 3 || sa.Survivors != 3 {
				t.Fatalf("node %d: %+v", nr.Node, nr.SecAgg)
			}
			if nr.Rejected != 0 {
				t.Fatalf("node %d: %d rejected", nr.Node, nr.Rejected)
			}
		}
	}
	if math.Abs(acc[0]-acc[1]) > 0.01 {
		t.Errorf("global accuracy: FedAvg %.4f, secagg %.4f", acc[0], acc[1])
	}
	across := tinyConfig(t, "[trust]\nenabled = true\n[strategy]\nname = \"robust\"\nrule = \"median\"\n[secagg]\nmode = \"screened\"\nthreshold = 3\nacross = true\n")
	across.Nodes = 5
	dir := t.TempDir()
	if _, err := RunToDir(context.Background(), across, dir, nil); err != nil {
		t.Fatal(err)
	}
	_, recs, err := rundir.LastRound(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, nr := range recs {
		if nr.SecAgg == nil || nr.SecAgg.Fallback || nr.SecAgg.Survivors < 3 {
			t.Fatalf("node %d: %+v", nr.Node, nr.SecAgg)
		}
	}
}

// The Paillier relay through the config: every group's mean goes through
// ciphertexts, and the accuracy is FedAvg's.
func TestPaillierRun(t *testing.T) {
	if testing.Short() {
		t.Skip("Paillier key generation and encryption take seconds")
	}
	matchesFedAvg(t, tinyConfig(t, "[secagg]\nmode = \"paillier\"\npaillier_bits = 512\n"), "Paillier relay")
}

// CKKS through the config: a model too large for the allowed ciphertexts
// is refused before the run; a run's group means match FedAvg's accuracy.
func TestCKKSRun(t *testing.T) {
	c := tinyConfig(t, "[secagg]\nmode = \"ckks\"\nckks_ciphertexts = 2\n") // 784·16+16+16·10+10 = 12,730 parameters: 4 ciphertexts
	s, err := SetupOf(c, loadMNIST(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Build(); err == nil || !strings.Contains(err.Error(), "need 4 ciphertexts of 4096 slots, more than the 2 allowed") {
		t.Fatalf("a model too large for the ciphertexts: %v", err)
	}
	if testing.Short() {
		return
	}
	matchesFedAvg(t, tinyConfig(t, "[secagg]\nmode = \"ckks\"\n"), "CKKS")
}

// matchesFedAvg runs the tiny FedAvg config and c: every node's group
// mean of c succeeds with all 3 neighbours' inputs, nothing is rejected,
// and the global accuracy is FedAvg's within 0.01.
func matchesFedAvg(t *testing.T, c config.Config, name string) {
	t.Helper()
	var acc [2]float64
	for k, c := range []config.Config{tinyConfig(t, ""), c} {
		dir := t.TempDir()
		if _, err := RunToDir(context.Background(), c, dir, nil); err != nil {
			t.Fatal(err)
		}
		_, recs, err := rundir.LastRound(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, nr := range recs {
			acc[k] += nr.GlobalAcc / float64(len(recs))
			if k == 1 && (nr.SecAgg == nil || nr.SecAgg.Fallback || nr.SecAgg.Survivors != 3 || nr.Rejected != 0) {
				t.Fatalf("%s: node %d: %+v, %d rejected", name, nr.Node, nr.SecAgg, nr.Rejected)
			}
		}
	}
	if math.Abs(acc[0]-acc[1]) > 0.01 {
		t.Errorf("global accuracy: FedAvg %.4f, %s %.4f", acc[0], name, acc[1])
	}
}

// validate (Check) and run/launch (SetupOf) give the same verdict, with the
// same message, on every secure-aggregation mode over small topologies:
// one rule (config.CheckSecAggGroups) decides for both.
func TestValidateAndRunAgreeOnSecAgg(t *testing.T) {
	modes := []string{
		"[secagg]\nmode = \"none\"\n",
		"[secagg]\nmode = \"neighbourhood\"\nthreshold = 2\n",
		"[secagg]\nmode = \"neighbourhood\"\nthreshold = 3\n",
		"[secagg]\nmode = \"screened\"\nthreshold = 2\n[trust]\nenabled = true\n",
		"[secagg]\nmode = \"paillier\"\npaillier_bits = 512\n",
		"[secagg]\nmode = \"ckks\"\n",
	}
	topologies := []string{
		"kind = \"ring\"",
		"kind = \"complete\"",
		"kind = \"star\"",
		"kind = \"kregular\"\nk = 3",
		"kind = \"kregular\"\nk = 4",
		"kind = \"erdos_renyi\"\np = 0.5",
		"kind = \"small_world\"\nk = 4\nbeta = 0.2",
		"kind = \"mobility\"",
	}
	accepted, refused := 0, 0
	for _, mode := range modes {
		for _, topo := range topologies {
			for _, nodes := range []int{6, 8} {
				c, err := config.Parse([]byte(fmt.Sprintf("nodes = %d\nrounds = 3\n[model]\nhidden = [16]\n[topology]\n%s\n%s", nodes, topo, mode)), "agree.toml")
				if err != nil {
					t.Fatal(err)
				}
				valid := Check(c)
				_, run := SetupOf(c, data.TrainTest{})
				if (valid == nil) != (run == nil) || valid != nil && valid.Error() != run.Error() {
					t.Errorf("%d nodes, %q, %q: validate says %v, run says %v", nodes, topo, mode, valid, run)
				}
				if valid == nil {
					accepted++
				} else {
					refused++
				}
			}
		}
	}
	t.Logf("%d accepted, %d refused", accepted, refused)
	if accepted == 0 || refused == 0 {
		t.Fatalf("%d accepted, %d refused: the cases do not cover both verdicts", accepted, refused)
	}
}

// On a ring (two neighbours) both encryption modes are refused before the
// run, and the message names the mode asked for.
func TestEncryptedModesOnARingNameTheirMode(t *testing.T) {
	for _, mode := range []string{"paillier", "ckks"} {
		c := tinyConfig(t, "[topology]\nkind = \"ring\"\n[secagg]\nmode = \""+mode+"\"\npaillier_bits = 512\n")
		err := Check(c)
		want := `secagg.mode = "` + mode + `": node 0 has 2 neighbours; a group needs at least 3`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", mode, err, want)
		}
	}
}
