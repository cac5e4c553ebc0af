package testenv

import "syscall"

// setDeathSignal makes the kernel kill a control plane component when the test binary dies
// without running Stop (a panic, go test's -timeout), so no controller outlives its run.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
