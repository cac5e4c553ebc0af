package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds a child process when Cmd.Timeout is zero.
const DefaultTimeout = 2 * time.Minute

// Cmd describes one child process.
type Cmd struct {
	// Path is the program, looked up on the PATH of Env when it has no slash.
	Path string
	Args []string
	// Env is the complete environment; nil means the current one.
	Env []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Stdin is fed to the child; nil means no input.
	Stdin io.Reader
	// Stdout, if set, receives stdout instead of Result.Stdout (the bench discards output
	// through a counting writer).
	Stdout io.Writer
	// Timeout kills the child; zero means DefaultTimeout.
	Timeout time.Duration
	// Credential, when set, runs the child as that user (and group): a test
	// running as root runs a command as another user would.
	Credential *syscall.Credential
}

// Result is what a finished child process left behind.
type Result struct {
	Stdout   string
	Stderr   string
	ExitCode int
	Wall     time.Duration
	// MaxRSSKB is the peak resident set size of the child and its waited-for descendants, in
	// KiB (getrusage's ru_maxrss on Linux).
	MaxRSSKB int64
	// TimedOut is set when the child was killed at Cmd.Timeout.
	TimedOut bool
}

// String renders the result for test failure messages.
func (r Result) String() string {
	return fmt.Sprintf("exit code %d after %s\n--- stdout ---\n%s\n--- stderr ---\n%s", r.ExitCode, r.Wall.Round(time.Millisecond), r.Stdout, r.Stderr)
}

// timeout is c.Timeout, DefaultTimeout when zero.
func (c Cmd) timeout() time.Duration {
	if c.Timeout == 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

// command is the exec.Cmd of c, killed when ctx ends. A bare name is looked
// up on the child's PATH (c.Env's), not ours: that is the one that counts
// for `kubectl` next to a plugin dir.
func (c Cmd) command(ctx context.Context) *exec.Cmd {
	path := c.Path
	if !strings.Contains(path, "/") && c.Env != nil {
		if p, err := lookPath(path, c.Env); err == nil {
			path = p
		}
	}
	cmd := exec.CommandContext(ctx, path, c.Args...)
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	cmd.Stdin = c.Stdin
	return cmd
}

// Run starts c and waits for it. A non-zero exit is reported in Result.ExitCode, not as an
// error; the error is for a child that could not start or was killed at its timeout.
func Run(ctx context.Context, c Cmd) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout())
	defer cancel()
	cmd := c.command(ctx)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	}
	cmd.Stderr = &stderr
	// Own process group, so a timeout also kills what a shell pipeline started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.Credential}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second

	start := time.Now()
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Wall: time.Since(start), ExitCode: -1}
	if ps := cmd.ProcessState; ps != nil {
		res.ExitCode = ps.ExitCode()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSSKB = ru.Maxrss
		}
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.TimedOut = true
		return res, fmt.Errorf("%s %s: killed after %s", c.Path, strings.Join(c.Args, " "), c.timeout())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return res, fmt.Errorf("running %s: %w", c.Path, err)
	}
	return res, nil
}

// Shell runs script with `bash -o pipefail -c`, for pipelines such as `kubectl idx ... | jq`.
func Shell(ctx context.Context, env []string, script string) (Result, error) {
	return Run(ctx, Cmd{Path: "bash", Args: []string{"-o", "pipefail", "-c", script}, Env: env})
}

// MergeEnv returns base with each KEY=value of overrides replacing the same KEY.
func MergeEnv(base []string, overrides ...string) []string {
	keys := map[string]bool{}
	for _, kv := range overrides {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := make([]string, 0, len(base)+len(overrides))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, overrides...)
}

func lookPath(name string, env []string) (string, error) {
	for i := len(env) - 1; i >= 0; i-- {
		if p, ok := strings.CutPrefix(env[i], "PATH="); ok {
			for _, dir := range strings.Split(p, ":") {
				if dir == "" {
					continue
				}
				cand := dir + "/" + name
				if _, err := exec.LookPath(cand); err == nil {
					return cand, nil
				}
			}
			break
		}
	}
	return "", exec.ErrNotFound
}

// Kubectl runs `kubectl args...` against this server as the user of kubeconfig.
func (e *Env) Kubectl(ctx context.Context, kubeconfig string, args ...string) (Result, error) {
	return Run(ctx, Cmd{Path: KubectlPath(), Args: args, Env: e.Environ(kubeconfig, "")})
}

// Exec runs binary with args against this server as the user of kubeconfig.
func (e *Env) Exec(ctx context.Context, kubeconfig, binary string, args ...string) (Result, error) {
	return Run(ctx, Cmd{Path: binary, Args: args, Env: e.Environ(kubeconfig, "")})
}

// KubectlEnv names the variable that picks the kubectl the tests and the bench compare
// against; unset means `kubectl` on PATH.
const KubectlEnv = "KUBECTL"

// KubectlPath returns $KUBECTL or "kubectl".
func KubectlPath() string {
	if p := os.Getenv(KubectlEnv); p != "" {
		return p
	}
	return "kubectl"
}
