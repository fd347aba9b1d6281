package cluster

import (
	"os"
	"syscall"
)

// childAttr puts a launched process in its own process group (the launch
// forwards Ctrl-C itself) and has the kernel kill it if the launch dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// peakRSS is an exited process's peak resident set in bytes (getrusage's
// ru_maxrss, in KiB on Linux), or 0 when it is not known.
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		return ru.Maxrss * 1024
	}
	return 0
}
