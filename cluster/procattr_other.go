//go:build !unix

package cluster

import "syscall"

// childAttr has nothing to set where there are no process groups.
func childAttr() *syscall.SysProcAttr { return nil }
