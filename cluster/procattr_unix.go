//go:build unix && !linux

package cluster

import (
	"os"
	"runtime"
	"syscall"
)

// childAttr puts a launched process in its own process group (the launch
// forwards Ctrl-C itself). Only Linux kills it when the launch dies
// (Pdeathsig); elsewhere a launch killed with SIGKILL leaves its nodes to
// stop at the end of their rounds.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// peakRSS is an exited process's peak resident set in bytes (getrusage's
// ru_maxrss: bytes on macOS, KiB on the BSDs), or 0 when it is not known.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}

// resetPeakRSS has nothing to reset here (a child's ru_maxrss is its own).
func resetPeakRSS() bool { return true }
