//go:build !linux

package cluster_test

import "syscall"

// dieWithTheTest has no parent-death signal to set outside Linux (the
// network-namespace tests that use it skip there).
func dieWithTheTest() *syscall.SysProcAttr { return nil }
