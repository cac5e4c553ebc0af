//go:build !linux

package testenv

import "syscall"

// setDeathSignal does nothing where there is no parent-death signal: a component outlives a
// test binary that dies without running Stop.
func setDeathSignal(*syscall.SysProcAttr) {}
