package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/trellis-fl/trellis/internal/cpu"
)

// Manifest records what a run needs to be re-run exactly.
type Manifest struct {
	Name     string `json:"name"`
	Seed     uint64 `json:"seed"`
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"vcs_revision,omitempty"`
	// Modified and VCSTime are vcs.modified and vcs.time of the binary's
	// build; VCSMissing says why there is no revision (VCSAbsent).
	Modified   bool      `json:"vcs_modified,omitempty"`
	VCSTime    string    `json:"vcs_time,omitempty"`
	VCSMissing string    `json:"vcs_missing,omitempty"`
	GoVersion  string    `json:"go_version"`
	GOOS       string    `json:"goos"`
	GOARCH     string    `json:"goarch"`
	CPU        string    `json:"cpu"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end,omitzero"`
	Rounds     int       `json:"rounds_finished"`
	// Randomness says where the nodes' random streams came from: "seeded"
	// (from the seed: reproducible, so DP noise, masks and keys are not
	// private), "crypto" or "mixed".
	Randomness string `json:"randomness"`
	// ConfigHash is the SHA-256 of the run's config (experiment.ConfigHash):
	// a rerun into the directory with another config is refused.
	ConfigHash string `json:"config_sha256"`
	// Resumed lists when the run was resumed after an interruption.
	Resumed []time.Time `json:"resumed,omitempty"`
	// F is strategy.f as resolved per node (robust rules with an f), as
	// the JSON of experiment.FRecord: the run directory keeps it without
	// knowing the config's types.
	F json.RawMessage `json:"f,omitempty"`
	// Evaluation says what an evaluated round measured (which global test
	// samples, how many, how often), as the JSON of
	// experiment.EvalRecord, so that a curve of a sample is not read as
	// one of the whole test set.
	Evaluation json.RawMessage `json:"evaluation,omitempty"`
	// Async is the virtual clock of an asynchronous run (nil for a run in
	// rounds): its rounds are windows of virtual time.
	Async *AsyncClock `json:"async,omitempty"`
	// Records is, once the run finished, the SHA-256 (hex) of each record
	// file by name (metrics.jsonl, rounds.jsonl): VerifyFinished checks a
	// finished run's records against it before it is kept.
	Records map[string]string `json:"records_sha256,omitempty"`
}

// NewManifest is the manifest of a run starting now: its name, seed and
// randomness, this binary's module and revision, this machine.
func NewManifest(name string, seed uint64, randomness string) Manifest {
	m := Manifest{Name: name, Seed: seed, GoVersion: runtime.Version(), GOOS: runtime.GOOS,
		GOARCH: runtime.GOARCH, CPU: cpu.ModelName(), GOMAXPROCS: runtime.GOMAXPROCS(0), Start: time.Now().UTC(),
		Randomness: randomness}
	b := ReadBuild()
	m.Module, m.Version, m.Revision, m.Modified, m.VCSTime, m.VCSMissing = b.Module, b.Version, b.Revision, b.Modified, b.Time, b.Missing
	return m
}

// ReadManifest reads dir's manifest.json.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestFile), err)
	}
	return m, nil
}

// WriteManifest writes dir's manifest.json (atomically).
func WriteManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return WriteAtomic(filepath.Join(dir, ManifestFile), append(b, '\n'))
}

// ErrOtherConfig is wrapped by the error of a run directory that holds a
// run of another config.
var ErrOtherConfig = errors.New("the directory holds a run of another config")

// Finished is what Previous returns for a directory holding a finished run.
const Finished = -1

// Previous says what dir holds for a run of the config whose hash is hash
// and which has rounds rounds: Finished for a finished run, else the
// number of complete rounds on file to resume from (0: none, the run
// files then removed). Another config's run is an error wrapping
// ErrOtherConfig, or with force removed (force also redoes a run of the
// same config).
func Previous(dir, hash string, rounds int, force bool) (int, error) {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		// Not a run, and --force would not make it one.
		return 0, fmt.Errorf("%s is a file, not a run directory: remove it, or use another output directory", dir)
	}
	man, err := ReadManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		if Has(dir, MetricsFile) && !force {
			return 0, fmt.Errorf("%s: %w (it has run files but no %s); use another output directory, or --force to redo it", dir, ErrOtherConfig, ManifestFile)
		}
		return 0, Remove(dir)
	}
	if err != nil {
		if !force {
			return 0, fmt.Errorf("%s: %w; use another output directory, or --force to redo the run", dir, err)
		}
		return 0, Remove(dir)
	}
	if man.ConfigHash != hash {
		if !force && man.ConfigHash == "" {
			return 0, fmt.Errorf("%s: %w (its %s has no config_sha256: written by an older trellis); use another output directory, or --force to redo the run", dir, ErrOtherConfig, ManifestFile)
		}
		if !force {
			return 0, fmt.Errorf("%s: %w (config_sha256 %.12s…, this config's %.12s…); use another output directory, or --force to redo the run with this config",
				dir, ErrOtherConfig, man.ConfigHash, hash)
		}
		return 0, Remove(dir)
	}
	if force {
		return 0, Remove(dir)
	}
	if _, ok := ReadFinal(dir); ok {
		if err := VerifyFinished(dir, man); err != nil {
			return 0, err
		}
		return Finished, nil
	}
	return completeRounds(dir, rounds)
}

// FinishedRun reads a run directory's final metrics if it holds a
// finished run of the config with this hash (false: no run, or an
// unfinished one); another config's run is an error wrapping
// ErrOtherConfig.
func FinishedRun(dir, hash string) (Final, bool, error) {
	man, err := ReadManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		return Final{}, false, nil
	}
	if err != nil {
		return Final{}, false, fmt.Errorf("%s: %w", dir, err)
	}
	if man.ConfigHash != hash {
		return Final{}, false, fmt.Errorf("%s: %w (config_sha256 %.12s…, this sweep's run has %.12s…)", dir, ErrOtherConfig, man.ConfigHash, hash)
	}
	fin, ok := ReadFinal(dir)
	if ok {
		if err := VerifyFinished(dir, man); err != nil {
			return Final{}, false, err
		}
	}
	return fin, ok, nil
}

// completeRounds counts the rounds whose aggregate line in rounds.jsonl
// is complete (the writer writes a round's node lines before its
// aggregate line, and flushes both before the next round), at most
// rounds.
func completeRounds(dir string, rounds int) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, RoundsFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return min(bytes.Count(b, []byte{'\n'}), rounds), nil
}
