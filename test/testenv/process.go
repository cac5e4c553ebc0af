package testenv

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/syncbuf"
)

// Line is one line a Process wrote to stdout, without its newline, and when it was read.
type Line struct {
	Text string
	At   time.Time
}

// Process is a child process left running, for commands that do not end by themselves (a
// change feed): its stdout is read line by line as it comes, its stderr collected.
type Process struct {
	// Lines receives every stdout line, in order, and is closed when stdout ends.
	Lines <-chan Line

	cmd    *exec.Cmd
	stderr syncbuf.Buffer
	start  time.Time
	done   chan struct{}
	err    error
}

// StartProcess starts c and returns at once. c.Timeout (DefaultTimeout when zero) kills the
// child if it is still running then; c.Stdout is ignored: stdout goes to Lines.
func StartProcess(ctx context.Context, c Cmd) (*Process, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	cmd := c.command(ctx)
	p := &Process{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.Credential}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("starting %s: %w", c.Path, err)
	}
	lines := make(chan Line, 4096)
	p.Lines = lines
	go func() {
		defer cancel()
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			lines <- Line{Text: sc.Text(), At: time.Now()}
		}
		close(lines)
		// Drain what a too long line left behind, so the child never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stdout)
		p.err = cmd.Wait()
	}()
	return p, nil
}

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the child.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill kills the child and everything it started (its process group) and waits for it, for
// cleanups after a test failed half-way; it is a no-op once the child has exited.
func (p *Process) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Stderr returns what the child wrote to stderr so far.
func (p *Process) Stderr() string { return p.stderr.String() }

// Wait waits up to timeout for the child to exit and its stdout to end, and returns its
// result; Result.Stdout stays empty. The caller must keep reading Lines meanwhile: a child
// blocked on a full pipe does not exit. A child still running at the timeout is killed.
func (p *Process) Wait(timeout time.Duration) (Result, error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		return p.result(), fmt.Errorf("%s did not exit within %s; killed", p.cmd.Path, timeout)
	}
	return p.result(), nil
}

func (p *Process) result() Result {
	res := Result{Stderr: p.Stderr(), Wall: time.Since(p.start), ExitCode: -1}
	if ps := p.cmd.ProcessState; ps != nil {
		res.ExitCode = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSSKB = ru.Maxrss
		}
	}
	return res
}

// RSSKB returns the child's current resident set size in KiB, from /proc (Linux only).
func (p *Process) RSSKB() (int64, error) {
	return ProcField("/proc/"+strconv.Itoa(p.Pid())+"/status", "VmRSS:")
}

// ProcField returns the number of the line of the /proc file path that starts with name
// ("VmRSS:" of /proc/PID/status, "MemAvailable:" of /proc/meminfo), without its kB unit if
// it has one.
func ProcField(path, name string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in %s", strings.TrimSuffix(name, ":"), path)
}
