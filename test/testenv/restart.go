package testenv

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// StopAPIServer stops kube-apiserver gracefully (SIGTERM), leaving etcd running. The
// environment must have been started with Options.RestartableAPIServer.
func (e *Env) StopAPIServer() error {
	if err := e.env.ControlPlane.APIServer.Stop(); err != nil {
		return fmt.Errorf("stopping kube-apiserver: %w", err)
	}
	return nil
}

// KillAPIServer kills kube-apiserver with SIGKILL, as a crash would: clients see their
// connections reset, not closed. It finds the process among this process's children by the
// secure port it serves, then lets envtest reap it.
func (e *Env) KillAPIServer() error {
	pid, err := e.apiServerPID()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing kube-apiserver (pid %d): %w", pid, err)
	}
	// envtest sees the process has exited and only waits for it.
	return e.StopAPIServer()
}

// StartAPIServer starts kube-apiserver again, on the same etcd and address, and waits until
// it is healthy.
func (e *Env) StartAPIServer() error {
	if err := e.env.ControlPlane.APIServer.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver again: %w", err)
	}
	return nil
}

// apiServerPID returns the pid of the kube-apiserver child serving this environment.
func (e *Env) apiServerPID() (int, error) {
	port := e.env.ControlPlane.APIServer.SecureServing.Port
	if port == "" {
		return 0, errors.New("kube-apiserver has no secure port")
	}
	want := []byte("--secure-port=" + port)
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("finding kube-apiserver: %w", err)
	}
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses and may hold spaces.
		rest := stat[bytes.LastIndexByte(stat, ')')+1:]
		fields := strings.Fields(string(rest))
		if len(fields) < 2 || fields[1] != strconv.Itoa(self) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("no child kube-apiserver serves port %s", port)
}
