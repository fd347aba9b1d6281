package cpu

import (
	"os"
	"runtime"
	"strings"
)

// ModelName is the CPU's model name as Linux reports it (/proc/cpuinfo's
// "model name"), for the record next to a measurement; elsewhere, or where
// the kernel gives none (many ARM boards), the architecture (GOARCH).
func ModelName() string {
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}
