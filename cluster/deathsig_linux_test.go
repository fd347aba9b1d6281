package cluster_test

import "syscall"

// dieWithTheTest has the kernel kill a process the test starts if the
// test process dies first (Linux's parent-death signal).
func dieWithTheTest() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
