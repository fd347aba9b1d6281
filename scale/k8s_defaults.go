package scale

import (
	"strings"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
)

// What `trellis k8s` fills in when it is not given: the objects' name from
// the config's, and each pod's memory request from the run's estimate.

// DNSName is s made a DNS label of at most 40 characters (K8s.Name):
// lower-cased, every character other than a-z and 0-9 made a -, trimmed of
// leading and trailing -; "trellis" when nothing is left.
func DNSName(s string) string {
	b := []byte(strings.ToLower(s))
	for i, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			b[i] = '-'
		}
	}
	out := strings.Trim(string(b), "-")
	if len(out) > 40 {
		out = strings.Trim(out[:40], "-")
	}
	if out == "" {
		out = "trellis"
	}
	return out
}

// SweepMemoryRequest is the memory request of a sweep's pods: a pod runs
// its shard's runs one after another, so the largest run's expected peak.
func SweepMemoryRequest(c config.Config) (string, error) {
	es, err := experiment.EstimateSweep(c, experiment.Shard{})
	if err != nil {
		return "", err
	}
	if len(es) == 0 {
		return "", nil
	}
	return MemoryRequest(es[experiment.Largest(es)].Estimate), nil
}

// NodeMemoryRequest is the memory request of a deployed run's node pods:
// one node process's expected peak (it loads its dataset to learn its
// shape unless KnownShape knows it).
func NodeMemoryRequest(c config.Config) (string, error) {
	d, err := (experiment.Shapes{}).Of(c)
	if err != nil {
		return "", err
	}
	e, err := experiment.EstimateNodeProcess(c, d)
	if err != nil {
		return "", err
	}
	return MemoryRequest(e), nil
}

// MonitorMemoryRequest is the memory request of a deployed run's monitor
// pod: its expected peak.
func MonitorMemoryRequest(c config.Config) string {
	return MemoryRequest(experiment.EstimateMonitor(c))
}
