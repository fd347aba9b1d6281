//go:build unix && !linux

package cluster

import "syscall"

// childAttr puts a launched process in its own process group (the launch
// forwards Ctrl-C itself). Only Linux kills it when the launch dies
// (Pdeathsig); elsewhere a launch killed with SIGKILL leaves its nodes to
// stop at the end of their rounds.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
