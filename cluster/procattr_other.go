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

// resetPeakRSS has nothing to reset here (a child's ru_maxrss is its own).
func resetPeakRSS() bool { return true }
