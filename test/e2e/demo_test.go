package e2e

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// TestDemoInterrupt runs `make demo` as a user does and interrupts it once the control plane
// is up: the demo program stops the control plane and exits 0, and make prints no error
// line. The demo uses the binaries the tests use (KUBECTL_IDX_BINARY, the cached control
// plane), so make demo builds only the demo program; its timings go to a file of the test's.
func TestDemoInterrupt(t *testing.T) {
	root, abs := repoAndBinary(t)
	for _, tc := range []struct {
		name string
		// signal interrupts the demo: make's pid (its process group's too) and the demo
		// program's.
		signal func(makePID, demoPID int) error
		// signalled: make ends by the signal it was sent, as after Ctrl-C in a terminal, where
		// it re-raises SIGINT once its recipe is done; otherwise it exits 0.
		signalled bool
	}{
		{
			name:   "SIGINT to the demo program",
			signal: func(_, demo int) error { return syscall.Kill(demo, syscall.SIGINT) },
		}, {
			// A terminal sends Ctrl-C's SIGINT to the foreground process group: make, the
			// recipe's shell and the demo program at once.
			name:      "Ctrl-C",
			signal:    func(mk, _ int) error { return syscall.Kill(-mk, syscall.SIGINT) },
			signalled: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			timings := filepath.Join(dir, "demo-timings")
			environ := testenv.MergeEnv(os.Environ(), "KUBECTL_IDX_BINARY="+abs, "KUBECTL_IDX_DEMO_TIMINGS="+timings,
				// Not a sub-make of make test-e2e: its own messages, no inherited flags.
				"MAKEFLAGS=", "MAKELEVEL=", "MFLAGS=")
			p, err := testenv.StartProcess(t.Context(), testenv.Cmd{
				Path:    "make",
				Args:    []string{"--no-print-directory", "demo", "DEMO_FLAGS=-dir " + filepath.Join(dir, "demo")},
				Env:     environ,
				Dir:     root,
				Timeout: 5 * time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Kill()
			ended := make(chan struct{})
			go func() {
				defer close(ended)
				for range p.Lines { // stdout: the commands' answers, not checked here
				}
			}()

			deadline := time.After(4 * time.Minute)
			for !strings.Contains(p.Stderr(), "demo: control plane up") {
				select {
				case <-ended:
					res, _ := p.Wait(time.Minute)
					t.Fatalf("make demo ended before the control plane was up:\n%s", res)
				case <-deadline:
					t.Fatalf("no \"demo: control plane up\" line within 4 minutes:\n%s", p.Stderr())
				case <-time.After(100 * time.Millisecond):
				}
			}
			procs := descendants(t, p.Pid())
			demoPID := 0
			for pid, name := range procs {
				if name == "demo" {
					demoPID = pid
				}
			}
			if demoPID == 0 {
				t.Fatalf("no demo program among make's descendants %v", procs)
			}
			for _, want := range []string{"kube-apiserver", "etcd", "kube-controller", "kube-scheduler", "kwok"} {
				if !hasName(procs, want) {
					t.Fatalf("no %s among make's descendants %v", want, procs)
				}
			}

			if err := tc.signal(p.Pid(), demoPID); err != nil {
				t.Fatal(err)
			}
			res, err := p.Wait(2 * time.Minute)
			if err != nil {
				t.Fatalf("%v\n%s", err, res.Stderr)
			}
			// exec.ProcessState.ExitCode is -1 for a process ended by a signal.
			if want := map[bool]int{false: 0, true: -1}[tc.signalled]; res.ExitCode != want {
				t.Errorf("make demo exit code %d, want %d:\n%s", res.ExitCode, want, res.Stderr)
			}
			for _, line := range strings.Split(res.Stderr, "\n") {
				if strings.Contains(line, "Error") || strings.Contains(line, "error") || strings.Contains(line, "***") {
					t.Errorf("make demo printed %q after the interrupt:\n%s", line, res.Stderr)
				}
			}
			if !strings.Contains(res.Stderr, "demo: interrupted; nothing of the demo is left running\n") {
				t.Errorf("make demo did not say it stopped:\n%s", res.Stderr)
			}
			for pid, name := range procs {
				if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil && !zombie(pid) {
					t.Errorf("%s (pid %d) still runs after make demo ended", name, pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}

			// Every step said how long it took last time on the next run; this one kept the
			// durations of the steps it finished, the build steps' and the control plane's.
			data, err := os.ReadFile(timings)
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []string{"control-plane-binaries", "demo-program", "control-plane", "workload"} {
				if !strings.Contains(string(data), step+"\t") {
					t.Errorf("the timings lack %s:\n%s", step, data)
				}
			}
		})
	}
}

// descendants returns every process below pid with its command name.
func descendants(t *testing.T, pid int) map[int]string {
	t.Helper()
	out := map[int]string{}
	queue := []int{pid}
	for len(queue) > 0 {
		children, err := testenv.Children(queue[0])
		if err != nil {
			t.Fatal(err)
		}
		queue = queue[1:]
		for _, c := range children {
			out[c.PID] = c.Name
			queue = append(queue, c.PID)
		}
	}
	return out
}

func hasName(procs map[int]string, prefix string) bool {
	for _, name := range procs {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// zombie reports whether pid has exited and waits for its parent to reap it.
func zombie(pid int) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return true
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if state, ok := strings.CutPrefix(sc.Text(), "State:"); ok {
			return strings.HasPrefix(strings.TrimSpace(state), "Z")
		}
	}
	return false
}

// repoAndBinary returns the absolute paths of the repository's root and of the binary under
// test, for a run of make or go run from the root.
func repoAndBinary(t *testing.T) (root, bin string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin, err = filepath.Abs(binary)
	if err != nil {
		t.Fatal(err)
	}
	return root, bin
}
