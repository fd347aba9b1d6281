package experiment

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/rundir"
)

// Shard is one share of a sweep's runs, for running a sweep as several
// jobs (a Slurm job array, a Kubernetes Indexed Job): shard Index of Count
// runs exactly the runs k (0-based, in Expand order) with k mod Count =
// Index. The assignment depends on the config alone, so any shard can be
// rerun alone, and the shards of one Count partition the sweep. The zero
// Shard is the whole sweep.
type Shard struct {
	Index, Count int
}

// Owns says whether run k (in Expand order) is the shard's.
func (s Shard) Owns(k int) bool { return s.Count <= 1 || k%s.Count == s.Index }

// Sharded says whether s is a share rather than the whole sweep.
func (s Shard) Sharded() bool { return s.Count > 1 }

func (s Shard) String() string {
	if s.Count == 0 {
		return "0/1"
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ShardRuns lists the indices (in Expand order) of the runs shard s of a
// sweep of n runs owns.
func ShardRuns(n int, s Shard) []int {
	var ks []int
	for k := range n {
		if s.Owns(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

const shardForm = "want I/N with 0 ≤ I < N (e.g. 0/4 for the first of 4 shards), or auto"

// ParseShard reads a shard as I/N, 0 ≤ I < N, I 0-based.
func ParseShard(text string) (Shard, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(text), "/")
	i, ierr := strconv.Atoi(strings.TrimSpace(a))
	n, nerr := strconv.Atoi(strings.TrimSpace(b))
	if !ok || ierr != nil || nerr != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard %q: %s", text, shardForm)
	}
	return Shard{Index: i, Count: n}, nil
}

// Environment variables ShardFromEnv reads.
const (
	EnvSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	EnvSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	EnvSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	EnvK8sIndex       = "JOB_COMPLETION_INDEX"
	// EnvShardCount is the number of shards where the scheduler does not
	// say it (a Kubernetes Indexed Job: set it to the Job's completions).
	EnvShardCount = "TRELLIS_SHARD_COUNT"
)

// ShardFromEnv is the shard of this job in its array, from the scheduler's
// environment (getenv, os.Getenv in a job): a Slurm job array's
// SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN, so --array=1-4 works as
// 0-3) of SLURM_ARRAY_TASK_COUNT, or a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX of count (when count > 0, else TRELLIS_SHARD_COUNT).
// The error names what is missing.
func ShardFromEnv(getenv func(string) string, count int) (Shard, error) {
	num := func(k string) (int, bool, error) {
		v := strings.TrimSpace(getenv(k))
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, true, fmt.Errorf("--shard auto: %s=%q is not an integer", k, v)
		}
		return n, true, nil
	}
	check := func(s Shard, from string) (Shard, error) {
		if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
			return Shard{}, fmt.Errorf("--shard auto: %s gives shard %d of %d; want 0 ≤ index < count", from, s.Index, s.Count)
		}
		return s, nil
	}
	id, ok, err := num(EnvSlurmTaskID)
	if err != nil {
		return Shard{}, err
	}
	if ok {
		n, nok, err := num(EnvSlurmTaskCount)
		if err != nil {
			return Shard{}, err
		}
		if count > 0 {
			n, nok = count, true
		}
		if !nok {
			return Shard{}, fmt.Errorf("--shard auto: %s is set but not %s (a Slurm older than 17.11?); give --shard-count", EnvSlurmTaskID, EnvSlurmTaskCount)
		}
		lo, _, err := num(EnvSlurmTaskMin)
		if err != nil {
			return Shard{}, err
		}
		return check(Shard{Index: id - lo, Count: n}, EnvSlurmTaskID+"−"+EnvSlurmTaskMin+" of "+EnvSlurmTaskCount)
	}
	id, ok, err = num(EnvK8sIndex)
	if err != nil {
		return Shard{}, err
	}
	if ok {
		n := count
		if n <= 0 {
			var nok bool
			if n, nok, err = num(EnvShardCount); err != nil {
				return Shard{}, err
			} else if !nok {
				return Shard{}, fmt.Errorf("--shard auto: %s is set but not the number of shards: give --shard-count or set %s (the Job's completions)", EnvK8sIndex, EnvShardCount)
			}
		}
		return check(Shard{Index: id, Count: n}, EnvK8sIndex)
	}
	return Shard{}, fmt.Errorf("--shard auto: neither %s (a Slurm job array) nor %s (a Kubernetes Indexed Job) is set; give --shard I/N", EnvSlurmTaskID, EnvK8sIndex)
}

// MissingRunsError is MergeSweep's error when some runs of the sweep are
// not finished in any of the directories.
type MissingRunsError struct {
	Total   int
	Missing []int // indices in Expand order
	Dirs    []string
}

func (e *MissingRunsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d runs of the sweep are not finished in any directory given:", len(e.Missing), e.Total)
	const most = 20
	for i, k := range e.Missing {
		if i == most {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Missing)-most)
			break
		}
		fmt.Fprintf(&b, "\n  run %d: %s", k, e.Dirs[i])
	}
	b.WriteString("\n(run k is shard k mod N's of N shards; rerun that shard, then merge again)")
	return b.String()
}

// MergeSweep assembles the sweep of c in out from finished runs: each run
// is looked up in out, then in each of from (other shards' output
// directories, when the shards did not share one), and one found elsewhere
// is copied into out. A run counts only when finished with this config (its
// manifest's config_sha256, its summary.csv). When every run is there, it
// writes out's summary.csv, byte for byte the one an unsharded sweep
// writes; else it returns a *MissingRunsError naming the missing runs and
// writes no summary.
func MergeSweep(c config.Config, out string, from []string) (*SweepResult, error) {
	runs, keys, err := c.Expand()
	if err != nil {
		return nil, err
	}
	res := &SweepResult{Keys: keys, Runs: runs, Fin: make([]rundir.Final, len(runs)), Errs: make([]error, len(runs))}
	missing := &MissingRunsError{Total: len(runs)}
	var rows []rundir.SummaryRow
	for i, r := range runs {
		hash, err := ConfigHash(r.Config)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(out, r.Dir)
		fin, ok, err := rundir.FinishedRun(dst, hash)
		if err != nil {
			return nil, err
		}
		for _, d := range from {
			if ok {
				break
			}
			src := filepath.Join(d, r.Dir)
			if sameDir(src, dst) {
				continue
			}
			if fin, ok, err = rundir.FinishedRun(src, hash); err != nil {
				return nil, err
			}
			if ok {
				if err := rundir.Copy(src, dst); err != nil {
					return nil, fmt.Errorf("merge run %s from %s: %w", r.Dir, d, err)
				}
			}
		}
		if !ok {
			missing.Missing = append(missing.Missing, i)
			missing.Dirs = append(missing.Dirs, r.Dir)
			res.Errs[i] = fmt.Errorf("run %s: not finished", r.Dir)
			continue
		}
		res.Fin[i] = fin
		rows = append(rows, rundir.SummaryRow{Name: r.Config.Name, Seed: r.Config.Seed, Params: r.Params, Final: fin})
	}
	if len(missing.Missing) > 0 {
		return res, missing
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return res, err
	}
	return res, rundir.WriteSummary(out, keys, rows)
}

func sameDir(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}
