package cluster

import "syscall"

// childAttr puts a launched process in its own process group (the launch
// forwards Ctrl-C itself) and has the kernel kill it if the launch dies.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
