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
// ru_maxrss, in KiB on Linux), or 0 when it is not known. Linux carries
// the launching process's own peak over the exec into the child's (the
// child shares its memory until then): resetPeakRSS before each start
// keeps the launch's one-time peak (the dataset it decoded) out of it.
func peakRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		return ru.Maxrss * 1024
	}
	return 0
}

// resetPeakRSS sets this process's peak resident set to its current one
// (clear_refs 5, Linux 4.0 and later), so a process started next starts
// its own peak from no more than that; it reports whether it could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
