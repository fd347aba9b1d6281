// Package scale writes what runs trellis on the engines clusters already
// have, rather than a scheduler of its own: Slurm batch scripts (a job
// array for a sharded sweep, one job of N tasks for a deployed run) and
// Kubernetes manifests (an Indexed Job for a sweep; an Indexed Job of
// nodes behind a headless Service, with the monitor, for a deployed run).
//
// A sweep's shard i of n runs the sweep's runs k with k mod n = i
// (experiment.Shard); every array task or pod writes into the same sweep
// directory, and `trellis sweep CFG --merge` assembles the summary once
// all are done. Every path and argument put in a script is shell-quoted
// (Quote).
//
// What `trellis k8s` fills in when not given comes from here too: the
// objects' name made a DNS label from the config's (DNSName), and each
// pod's memory request from the run's memory estimate (SweepMemoryRequest,
// NodeMemoryRequest, MonitorMemoryRequest).
package scale

import (
	"fmt"
	"strings"
	"time"
)

// Quote is s as one word for a POSIX shell: unchanged when it has only
// safe characters, else in single quotes with each ' written '\”.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Slurm are the job settings of a generated batch script.
type Slurm struct {
	// Trellis is the trellis binary on the compute nodes (default: trellis
	// on the PATH).
	Trellis string
	// Config is the config file (an absolute path on the shared file
	// system) or a preset name.
	Config string
	// Preset says Config is a preset name.
	Preset bool
	// Out is the run or sweep directory (shared by every task).
	Out string
	// Name is the job's name.
	Name string
	// Partition, Time (e.g. 02:00:00), Mem (per CPU, e.g. 2G), CPUs (per
	// task) and Extra (#SBATCH lines' options, as given) are passed on
	// when set.
	Partition, Time, Mem string
	CPUs                 int
	Extra                []string
	// Overcommit lets more tasks than CPUs run (sbatch --overcommit): a
	// small cluster, a test.
	Overcommit bool
}

func (s Slurm) trellis() string {
	if s.Trellis == "" {
		return "trellis"
	}
	return s.Trellis
}

// sbatchSafe says whether s can stand in an #SBATCH line as it is: sbatch
// reads those lines without a shell, and expands % in file names.
func sbatchSafe(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+=:,./_-", r))
	}) < 0
}

// SweepLogs and LaunchLogs are the jobs' log files, sbatch --output
// patterns in Out.
func SweepLogs(s Slurm) string  { return s.Out + "/slurm-%A_%a.out" }
func LaunchLogs(s Slurm) string { return s.Out + "/slurm-%j.out" }

// header writes the #SBATCH lines and the variables. The log option is
// there only when Out can stand in an #SBATCH line; else a comment says
// to give it to sbatch.
func (s Slurm) header(b *strings.Builder, logs string, extra ...string) {
	b.WriteString("#!/bin/bash\n")
	line := func(opt string) { fmt.Fprintf(b, "#SBATCH %s\n", opt) }
	line("--job-name=" + s.Name)
	for _, o := range extra {
		line(o)
	}
	if s.Partition != "" {
		line("--partition=" + s.Partition)
	}
	if s.Time != "" {
		line("--time=" + s.Time)
	}
	if s.Mem != "" {
		line("--mem-per-cpu=" + s.Mem)
	}
	if s.CPUs > 0 {
		line(fmt.Sprintf("--cpus-per-task=%d", s.CPUs))
	}
	if s.Overcommit {
		line("--overcommit")
	}
	for _, o := range s.Extra {
		line(o)
	}
	if sbatchSafe(s.Out) {
		line("--output=" + logs)
	} else {
		fmt.Fprintf(b, "# The output directory cannot stand in an #SBATCH line: submit with\n#   sbatch --output=%s SCRIPT\n", Quote(logs))
	}
	b.WriteString("set -euo pipefail\n")
	fmt.Fprintf(b, "TRELLIS=%s\nCONFIG=%s\nOUT=%s\n", Quote(s.trellis()), Quote(s.Config), Quote(s.Out))
}

// SlurmSweep is a batch script running a sweep as a job array of shards
// tasks (--array=0-(shards−1)), each `trellis sweep CONFIG --shard auto`,
// all into Out; at most parallel (0: no limit) run at once. Its logs go
// to Out/slurm-JOB_TASK.out. Submit the merge after it (SlurmMerge).
func SlurmSweep(s Slurm, shards, parallel int) (string, error) {
	if shards < 1 {
		return "", fmt.Errorf("a job array of %d shards: want at least 1", shards)
	}
	if err := s.check(); err != nil {
		return "", err
	}
	array := fmt.Sprintf("--array=0-%d", shards-1)
	if parallel > 0 {
		array += fmt.Sprintf("%%%d", parallel)
	}
	var b strings.Builder
	s.header(&b, SweepLogs(s), array, "--ntasks=1")
	fmt.Fprintf(&b, "# Shard $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_TASK_COUNT runs the sweep's runs k with k mod %d = the shard\n", shards)
	b.WriteString("# (in `trellis validate` order); rerunning one shard redoes nothing finished.\n")
	b.WriteString("\"$TRELLIS\" sweep \"$CONFIG\" --shard auto --quiet -o \"$OUT\"\n")
	return b.String(), nil
}

// SlurmMerge is the command that assembles the sweep once the array is
// done, for `sbatch --dependency=afterany:JOB --wrap`.
func SlurmMerge(s Slurm) string {
	return fmt.Sprintf("%s sweep %s --merge --quiet -o %s", Quote(s.trellis()), Quote(s.Config), Quote(s.Out))
}

func (s Slurm) check() error {
	if s.Config == "" || s.Out == "" {
		return fmt.Errorf("a batch script needs the config and the output directory")
	}
	if strings.ContainsAny(s.Out, "%\n") {
		return fmt.Errorf("output directory %q: Slurm expands %% in log file names, and a newline ends a script line; choose another", s.Out)
	}
	for _, f := range []struct{ what, v string }{{"job name", s.Name},
		{"partition", s.Partition}, {"time", s.Time}, {"memory", s.Mem}} {
		if (f.v != "" || f.what == "job name") && !sbatchSafe(f.v) {
			return fmt.Errorf("%s %q: an #SBATCH line takes letters, digits and +=:,./_- only (sbatch reads it without a shell and expands %%); choose another", f.what, f.v)
		}
	}
	return nil
}

// Timing is a deployed run's round timing.
type Timing struct {
	// Mode is lockstep or wallclock.
	Mode string
	// Delta is Δ, the wall-clock round length; Start how long after the
	// keys are written round 0 starts (Slurm); Epoch is t0 itself
	// (Kubernetes, where pods start whenever they are scheduled).
	Delta, Start time.Duration
	Epoch        time.Time
}

func (t Timing) check(epoch bool) error {
	switch t.Mode {
	case "lockstep":
		return nil
	case "wallclock":
		if t.Delta <= 0 {
			return fmt.Errorf("wallclock: give the round length Δ (--delta)")
		}
		if epoch && t.Epoch.IsZero() {
			return fmt.Errorf("wallclock: give t0, the start of round 0 (--epoch, RFC 3339), late enough for every pod to be running")
		}
		return nil
	}
	return fmt.Errorf("mode %q: want lockstep or wallclock", t.Mode)
}

// nodeArgs and monitorArgs are the processes' timing flags (the epoch
// apart); the monitor writes a round 2Δ after its first record even if a
// node never reports, in wall-clock mode.
func (t Timing) nodeArgs() []string {
	if t.Mode == "wallclock" {
		return []string{"--mode", t.Mode, "--delta", t.Delta.String()}
	}
	return []string{"--mode", t.Mode}
}

func (t Timing) monitorArgs() []string {
	if t.Mode == "wallclock" {
		return []string{"--mode", t.Mode, "--gap", (2 * t.Delta).String()}
	}
	return []string{"--mode", t.Mode}
}

func words(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// SlurmLaunch is a batch script for a deployed run of nodes node
// processes: one job of nodes tasks. A first job step records the host of
// each task (SLURM_PROCID) in a rendezvous directory, Out/cluster/hosts;
// the script then writes the peers file and keys (`trellis keys`, node i
// on tcp://HOST_i:(port+1+i), the monitor on the batch host's port),
// starts the monitor on the batch host, and `srun` starts `trellis node
// --id $SLURM_PROCID` in every task, with the same placement (block
// distribution). In wall-clock mode round 0 starts t.Start after the keys
// are written.
func SlurmLaunch(s Slurm, nodes, port int, t Timing) (string, error) {
	if err := s.check(); err != nil {
		return "", err
	}
	if nodes < 1 {
		return "", fmt.Errorf("a deployed run of %d nodes: want at least 1", nodes)
	}
	if port < 1 || port+nodes > 65535 {
		return "", fmt.Errorf("port %d: want 1 … %d for %d nodes (node i listens on port+1+i)", port, 65535-nodes, nodes)
	}
	if err := t.check(false); err != nil {
		return "", err
	}
	var b strings.Builder
	s.header(&b, LaunchLogs(s), fmt.Sprintf("--ntasks=%d", nodes), "--distribution=block")
	fmt.Fprintf(&b, "NODES=%d\nPORT=%d\nNODE_ARGS=(%s)\nMONITOR_ARGS=(%s)\n", nodes, port, words(t.nodeArgs()), words(t.monitorArgs()))
	b.WriteString(`CL="$OUT/cluster"
mkdir -p "$CL/hosts"
rm -f "$CL/hosts/"*
`)
	if s.Preset {
		b.WriteString("\"$TRELLIS\" presets show \"$CONFIG\" > \"$CL/config.toml\"\n")
	} else {
		b.WriteString("cp -- \"$CONFIG\" \"$CL/config.toml\"\n")
	}
	b.WriteString(`# Rendezvous: each task writes its host under its id (SLURM_PROCID).
srun --ntasks="$NODES" --distribution=block bash -c 'hostname > "$1/$SLURM_PROCID"' _ "$CL/hosts"
ENDPOINTS=()
for ((i = 0; i < NODES; i++)); do
	ENDPOINTS+=(--endpoint "tcp://$(cat "$CL/hosts/$i"):$((PORT + 1 + i))")
done
rm -f "$CL"/node-*.key "$CL/monitor.key" "$CL/peers.toml" "$CL/directory.keys"
"$TRELLIS" keys --nodes "$NODES" "${ENDPOINTS[@]}" --monitor "tcp://$(hostname):$PORT" --quiet -o "$CL"
`)
	if t.Mode == "wallclock" {
		fmt.Fprintf(&b, "NODE_ARGS+=(--epoch \"$(date -u -d \"@$(($(date +%%s) + %d))\" +%%Y-%%m-%%dT%%H:%%M:%%SZ)\")\n", int(t.Start.Seconds()+0.5))
	}
	b.WriteString(`"$TRELLIS" monitor --config "$CL/config.toml" --peers "$CL/peers.toml" --key "$CL/monitor.key" "${MONITOR_ARGS[@]}" --quiet -o "$OUT" &
MONITOR=$!
srun --ntasks="$NODES" --distribution=block --kill-on-bad-exit=1 bash -c \
	'exec "$1" node --config "$2/config.toml" --peers "$2/peers.toml" --key "$2/node-$SLURM_PROCID.key" --id "$SLURM_PROCID" --quiet "${@:3}" 2> "$2/node-$SLURM_PROCID.log"' \
	_ "$TRELLIS" "$CL" "${NODE_ARGS[@]}"
wait "$MONITOR"
`)
	return b.String(), nil
}
