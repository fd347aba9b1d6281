//go:build !unix

package cluster

import (
	"os"
	"syscall"
)

// childAttr has nothing to set where there are no process groups.
func childAttr() *syscall.SysProcAttr { return nil }

// peakRSS is not known here (no getrusage).
func peakRSS(*os.ProcessState) int64 { return 0 }
