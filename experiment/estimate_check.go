package experiment

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trellis-fl/trellis/config"
)

// Memory is what this machine (or container) has available for a run.
type Memory struct {
	// Available is the smaller of MemAvailable and what the cgroup limit
	// leaves; 0 when neither could be read.
	Available int64 `json:"available_bytes"`
	// MemAvailable is /proc/meminfo's (0: unknown).
	MemAvailable int64 `json:"mem_available_bytes"`
	// CgroupLimit is the memory cgroup's limit (0: none) and CgroupFree
	// what it leaves: the limit less the cgroup's usage without its
	// reclaimable page cache.
	CgroupLimit int64 `json:"cgroup_limit_bytes,omitempty"`
	CgroupFree  int64 `json:"cgroup_free_bytes,omitempty"`
	// Source says where Available comes from.
	Source string `json:"source"`
}

// EnvMemoryAvailable, when set (bytes, or with a unit: 512MiB, 2GiB, 4G),
// is taken as the available memory instead of what the machine reports.
const EnvMemoryAvailable = "TRELLIS_MEMORY_AVAILABLE"

// MachineMemory reads the available memory: MemAvailable from
// /proc/meminfo and, when the process runs in a memory cgroup with a limit
// (a container, a Slurm job, a Kubernetes pod), the limit less the
// cgroup's usage (v2: memory.max, memory.current; v1:
// memory.limit_in_bytes, memory.usage_in_bytes; page cache it can reclaim
// not counted as used). EnvMemoryAvailable overrides both.
func MachineMemory() (Memory, error) {
	if v := os.Getenv(EnvMemoryAvailable); v != "" {
		b, err := ParseBytes(v)
		if err != nil {
			return Memory{}, fmt.Errorf("%s=%q: %w", EnvMemoryAvailable, v, err)
		}
		return Memory{Available: b, Source: EnvMemoryAvailable}, nil
	}
	return readMemory("/")
}

// readMemory is MachineMemory under the file-system root root (tests give
// a fake /proc and /sys).
func readMemory(root string) (Memory, error) {
	var m Memory
	if b, err := os.ReadFile(filepath.Join(root, "proc/meminfo")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
				f := strings.Fields(rest)
				if len(f) >= 1 {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						m.MemAvailable = kb * 1024
					}
				}
			}
		}
	}
	m.CgroupLimit, m.CgroupFree = cgroupMemory(root)
	switch {
	case m.MemAvailable > 0 && m.CgroupLimit > 0 && m.CgroupFree < m.MemAvailable:
		m.Available, m.Source = m.CgroupFree, "cgroup limit"
	case m.MemAvailable > 0:
		m.Available, m.Source = m.MemAvailable, "MemAvailable"
	case m.CgroupLimit > 0:
		m.Available, m.Source = m.CgroupFree, "cgroup limit"
	default:
		return m, errors.New("cannot read the available memory (no /proc/meminfo MemAvailable, no cgroup limit)")
	}
	return m, nil
}

// cgroupMemory is the process's memory cgroup limit (0: none) and what it
// leaves free.
func cgroupMemory(root string) (limit, free int64) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, 0
	}
	readInt := func(path string) (int64, bool) {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, false
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, false
		}
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	}
	stat := func(path, key string) int64 {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == key {
				v, _ := strconv.ParseInt(f[1], 10, 64)
				return v
			}
		}
		return 0
	}
	// The cgroup's directory: its path under the hierarchy, or the
	// hierarchy's root in a cgroup namespace (a container).
	dirs := func(base, path string) []string {
		return []string{filepath.Join(root, base, path), filepath.Join(root, base)}
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var limitFile, usageFile, cacheKey string
		var candidates []string
		switch {
		case parts[0] == "0" && parts[1] == "": // v2
			candidates = dirs("sys/fs/cgroup", parts[2])
			limitFile, usageFile, cacheKey = "memory.max", "memory.current", "inactive_file"
		case slices.Contains(strings.Split(parts[1], ","), "memory"): // v1
			candidates = dirs("sys/fs/cgroup/memory", parts[2])
			limitFile, usageFile, cacheKey = "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"
		default:
			continue
		}
		for _, dir := range candidates {
			l, ok := readInt(filepath.Join(dir, limitFile))
			if !ok || l <= 0 || l >= 1<<60 { // "max", or v1's "no limit"
				continue
			}
			used, _ := readInt(filepath.Join(dir, usageFile))
			used -= stat(filepath.Join(dir, "memory.stat"), cacheKey)
			return l, max(0, l-max(0, used))
		}
	}
	return 0, 0
}

// ParseBytes reads a size: a number of bytes, or one with a unit (K, M,
// G, T: powers of 1000; KiB, MiB, GiB, TiB or Ki, Mi, Gi, Ti: of 1024).
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("want a size such as 4GiB or 512M, got %q", s)
	}
	scale := map[string]float64{"": 1, "B": 1, "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9, "T": 1e12, "TB": 1e12,
		"KI": 1 << 10, "KIB": 1 << 10, "MI": 1 << 20, "MIB": 1 << 20, "GI": 1 << 30, "GIB": 1 << 30, "TI": 1 << 40, "TIB": 1 << 40}
	f, ok := scale[strings.ToUpper(unit)]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q in %q (want B, K, M, G, T, KiB, MiB, GiB, TiB)", unit, s)
	}
	return int64(v * f), nil
}

// A MemoryError refuses a run whose estimate exceeds the available memory.
type MemoryError struct {
	Estimate Estimate
	Memory   Memory
	// Fits are changes of the config that would fit, as "key = value".
	Fits []string
}

func (e *MemoryError) Error() string {
	est := e.Estimate
	var b strings.Builder
	what := fmt.Sprintf("%s %q", est.Kind, est.Name)
	fmt.Fprintf(&b, "%s needs about %s of memory (expected peak %s), and %s is available (%s)", what,
		bytesText(est.Live), bytesText(est.Peak), bytesText(e.Memory.Available), e.Memory.Source)
	parts := slices.DeleteFunc(slices.Clone(est.Parts), func(p EstimatePart) bool { return p.Garbage })
	slices.SortStableFunc(parts, func(a, b EstimatePart) int { return cmpInt64(b.Bytes, a.Bytes) })
	b.WriteString(":\n  the largest parts:")
	for _, p := range parts[:min(3, len(parts))] {
		fmt.Fprintf(&b, "\n    %-36s %10s", p.Name, bytesText(p.Bytes))
		if p.PerNode {
			fmt.Fprintf(&b, "  (%s nodes × %s)", group(int64(p.Count)), bytesText(p.Each))
		}
		if p.How != "" {
			fmt.Fprintf(&b, "  %s", p.How)
		}
	}
	if len(e.Fits) > 0 {
		b.WriteString("\n  it would fit with")
		for i, f := range e.Fits {
			if i > 0 {
				b.WriteString(", or")
			}
			b.WriteString(" " + f)
		}
	} else {
		b.WriteString("\n  no smaller model, node count or batch fits on this machine: run it on a larger one (Slurm, Kubernetes: README, \"Scaling out\")")
	}
	b.WriteString("\n  (--no-memory-check runs it anyway; --dry-run prints the whole estimate)")
	return b.String()
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CheckMemory refuses a run whose live memory exceeds m.Available, with
// the estimate's largest parts and the changes that would make it fit. A
// zero m.Available (unknown) passes.
func CheckMemory(c config.Config, e Estimate, d DataShape, m Memory) error {
	if m.Available <= 0 || e.Live <= m.Available {
		return nil
	}
	return &MemoryError{Estimate: e, Memory: m, Fits: fits(c, e.Kind, d, m.Available)}
}

// fits lists changes of c whose estimate fits in avail: fewer nodes,
// narrower hidden layers, a smaller batch, a sparser graph.
func fits(c config.Config, kind string, d DataShape, avail int64) []string {
	live := func(x config.Config) int64 {
		e, err := estimate(x, kind, d)
		if err != nil {
			return math.MaxInt64
		}
		return e.Live
	}
	var out []string
	// The most nodes that fit (a node process does not depend on it much).
	if kind == "run" && c.Nodes > 1 {
		if most := mostNodes(c, func(x config.Config) bool { return live(x) <= avail }); most >= 1 {
			out = append(out, fmt.Sprintf("nodes = %d", most))
		}
	}
	// Hidden widths scaled down alike.
	if c.Model.Kind == "mlp" && len(c.Model.Hidden) > 0 {
		scaled := func(f float64) []int {
			h := make([]int, len(c.Model.Hidden))
			for i, w := range c.Model.Hidden {
				h[i] = max(1, niceFloor(float64(w)*f))
			}
			return h
		}
		lo, hi := 0.0, 1.0
		for range 40 {
			mid := (lo + hi) / 2
			x := c
			x.Model.Hidden = scaled(mid)
			if live(x) <= avail {
				lo = mid
			} else {
				hi = mid
			}
		}
		x := c
		x.Model.Hidden = scaled(lo)
		if lo > 0 && live(x) <= avail && !slices.Equal(x.Model.Hidden, c.Model.Hidden) {
			out = append(out, fmt.Sprintf("model.hidden = %v", strings.ReplaceAll(fmt.Sprint(x.Model.Hidden), " ", ", ")))
		}
	}
	// A smaller batch, when the activations are what does not fit.
	if c.Training.Batch > 1 {
		for b := c.Training.Batch / 2; b >= 1; b /= 2 {
			x := c
			x.Training.Batch = b
			if live(x) <= avail {
				out = append(out, fmt.Sprintf("training.batch = %d", b))
				break
			}
		}
	}
	// A sparser graph, when every node holding a record per peer is what
	// does not fit.
	if c.Topology.Kind != "kregular" && c.Topology.Kind != "ring" && c.Nodes > 11 {
		x := c
		x.Topology.Kind, x.Topology.K = "kregular", 10
		if live(x) <= avail {
			out = append(out, `topology.kind = "kregular" with k = 10`)
		}
	}
	return out
}

// mostNodes is the largest node count below c.Nodes for which fits
// holds of c with that many nodes (0: none), found by a binary search: what
// fits is assumed to hold of every count below one that fits.
func mostNodes(c config.Config, fits func(config.Config) bool) int {
	lo, hi := 0, c.Nodes // lo fits (0: none), hi does not
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		x := c
		x.Nodes = mid
		if fits(x) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// niceFloor is x rounded down to two significant digits.
func niceFloor(x float64) int {
	if x < 100 {
		return int(x)
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-1)
	return int(math.Floor(x/p) * p)
}

// bytesText is b in binary units: 512 B, 12.0 KiB, 340 MiB, 1.25 GiB.
func bytesText(b int64) string {
	if b >= satMax {
		return "more than an exbibyte"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, u := float64(b), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	switch {
	case u == 0:
		return fmt.Sprintf("%d B", b)
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, units[u])
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.2f %s", v, units[u])
}

// BytesText is b in binary units (512 B, 340 MiB, 1.25 GiB).
func BytesText(b int64) string { return bytesText(b) }

// Thousands is n with thousands separators: 1,663,370.
func Thousands(n int64) string { return group(n) }

// group is n with thousands separators: 1,663,370.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// Text renders the estimate as a table.
func (e Estimate) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memory estimate: %s %s", e.Kind, e.Name)
	if e.Kind != "monitor" {
		fmt.Fprintf(&b, " (%s nodes; model %s: %s parameters, %s a vector)", group(int64(e.Nodes)), e.Model, group(e.Params), bytesText(mul(4, e.Params)))
	}
	b.WriteString("\n")
	for _, per := range []bool{true, false} {
		first := true
		for _, p := range e.Parts {
			if p.PerNode != per {
				continue
			}
			if first {
				if per {
					n := 0
					if len(e.Parts) > 0 {
						n = p.Count
					}
					fmt.Fprintf(&b, "  %-38s %10s %12s\n", fmt.Sprintf("per node (× %s)", group(int64(n))), "each", "total")
				} else {
					b.WriteString("  shared\n")
				}
				first = false
			}
			each := ""
			if per {
				each = bytesText(p.Each)
			}
			fmt.Fprintf(&b, "    %-36s %10s %12s", p.Name, each, bytesText(p.Bytes))
			if p.How != "" {
				fmt.Fprintf(&b, "  %s", p.How)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "  %-38s %10s %12s\n", "live (while rounds run)", "", bytesText(e.Live))
	fmt.Fprintf(&b, "  %-38s %10s %12s\n", "expected peak resident set", "", bytesText(e.Peak))
	if e.TrainSamples > 0 {
		fmt.Fprintf(&b, "  a round's work: %s training samples; %s samples evaluated in an evaluated round (--probe times a round)\n",
			group(e.TrainSamples), group(e.EvalSamples))
		if v := e.Eval; v != nil {
			b.WriteString("  " + v.text() + "\n")
		}
	}
	for _, n := range e.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return b.String()
}

// Text renders the available memory.
func (m Memory) Text() string {
	if m.Available <= 0 {
		return "available memory: unknown"
	}
	s := fmt.Sprintf("available memory: %s (%s", bytesText(m.Available), m.Source)
	if m.MemAvailable > 0 && m.Source != "MemAvailable" {
		s += "; MemAvailable " + bytesText(m.MemAvailable)
	}
	if m.CgroupLimit > 0 {
		s += fmt.Sprintf("; cgroup limit %s, %s free", bytesText(m.CgroupLimit), bytesText(m.CgroupFree))
	}
	return s + ")"
}

// text says what an evaluated round evaluates and its share of the
// round's samples.
func (v *EvalWork) text() string {
	var global string
	switch v.GlobalSample {
	case "none":
		global = "no global test samples"
	case "all":
		global = fmt.Sprintf("all %s global test samples", group(v.GlobalPerNode))
	case "rotating":
		global = fmt.Sprintf("%s global test samples (a rotating window per node and round)", group(v.GlobalPerNode))
	default:
		global = fmt.Sprintf("the first %s global test samples", group(v.GlobalPerNode))
	}
	return fmt.Sprintf("evaluation: %s %% of an evaluated round's samples (each node: %s + %s local test); %d of %d rounds evaluated (eval_every, evaluation.global_test, evaluation.global_sample cut it)",
		percent(v.Share), global, group(v.LocalPerNode), v.EvaluatedRounds, v.Rounds)
}

// percent is 100·x with two decimals, or as many as it takes to tell it
// from 0 and 100.
func percent(x float64) string {
	p := 100 * x
	for d := 2; d < 6; d++ {
		t := strconv.FormatFloat(p, 'f', d, 64)
		if (t != strconv.FormatFloat(100, 'f', d, 64) || p == 100) && (p == 0 || strings.Trim(t, "0.") != "") {
			return t
		}
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}
