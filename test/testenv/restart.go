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
	children, err := Children(os.Getpid())
	if err != nil {
		return 0, fmt.Errorf("finding kube-apiserver: %w", err)
	}
	for _, c := range children {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c.PID), "cmdline"))
		if err != nil {
			continue
		}
		for _, arg := range bytes.Split(cmdline, []byte{0}) {
			if bytes.Equal(arg, want) {
				return c.PID, nil
			}
		}
	}
	return 0, fmt.Errorf("no child kube-apiserver serves port %s", port)
}

// Child is a child process: its pid and its command name.
type Child struct {
	PID  int
	Name string
}

// Children lists the running children of the process parent, as /proc
// shows them (Linux only).
func Children(parent int) ([]Child, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []Child
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		// The command name is in parentheses and may hold spaces and
		// parentheses; the fields after it start with the state, then the
		// parent's pid.
		open, closeIdx := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
		if open < 0 || closeIdx < open {
			continue
		}
		fields := strings.Fields(string(stat[closeIdx+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(parent) {
			out = append(out, Child{PID: pid, Name: string(stat[open+1 : closeIdx])})
		}
	}
	return out, nil
}
