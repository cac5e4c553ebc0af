package cmd

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
)

func TestContextsOutcome(t *testing.T) {
	tests := []struct {
		name          string
		failed, total int
		wantCode      int // 0: nil
		wantMsg       string
	}{
		{name: "none failed", failed: 0, total: 3},
		{name: "one context, fine", failed: 0, total: 1},
		{name: "some failed", failed: 1, total: 3, wantCode: ExitPartial, wantMsg: "1 of 3 contexts failed"},
		{name: "all but one failed", failed: 2, total: 3, wantCode: ExitPartial, wantMsg: "2 of 3 contexts failed"},
		{name: "all failed", failed: 3, total: 3, wantCode: ExitError, wantMsg: "no context could answer: all 3 failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := contextsOutcome(tc.failed, tc.total)
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("contextsOutcome(%d, %d) = %v, want nil", tc.failed, tc.total, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("contextsOutcome(%d, %d) = nil, want an error", tc.failed, tc.total)
			}
			if err.Error() != tc.wantMsg {
				t.Errorf("message %q, want %q", err.Error(), tc.wantMsg)
			}
			var exit *exitError
			isExit := errors.As(err, &exit)
			switch {
			case tc.wantCode == ExitPartial && (!isExit || exit.code != ExitPartial):
				t.Errorf("contextsOutcome(%d, %d) = %#v, want an *exitError with code %d", tc.failed, tc.total, err, ExitPartial)
			case tc.wantCode == ExitError && isExit:
				// Every context failed: an error Execute prints, exit 1.
				t.Errorf("contextsOutcome(%d, %d) = *exitError code %d, want a plain error", tc.failed, tc.total, exit.code)
			}
		})
	}
}

// TestExecuteContexts runs the command line through Execute against
// contexts whose server refuses connections.
func TestExecuteContexts(t *testing.T) {
	addr := fixtures.ClosedAddress(t)
	kubeconfig := fixtures.ContextsKubeconfig(t, "http://"+addr, "a", "b", "c")

	t.Run("every context fails", func(t *testing.T) {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		code := Execute(streams, []string{"pods", "--context", "a,b", "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "--request-timeout", "10s"})
		if code != ExitError {
			t.Errorf("exit code %d, want %d", code, ExitError)
		}
		if out.Len() != 0 {
			t.Errorf("stdout = %q, want nothing", out)
		}
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("stderr has %d lines, want a warning per context and the error:\n%s", len(lines), errOut)
		}
		for i, name := range []string{"a", "b"} {
			prefix := fmt.Sprintf("warning: context %q: ", name)
			if !strings.HasPrefix(lines[i], prefix) || len(lines[i]) == len(prefix) {
				t.Errorf("stderr line %d = %q, want %q and why", i+1, lines[i], prefix)
			}
			if !strings.Contains(lines[i], addr) {
				t.Errorf("stderr line %d = %q does not name the server %s", i+1, lines[i], addr)
			}
		}
		if want := "error: no context could answer: all 2 failed"; lines[2] != want {
			t.Errorf("last stderr line = %q, want %q", lines[2], want)
		}
	})

	bad := []struct {
		name string
		args []string
		want string
	}{
		{name: "empty name", args: []string{"pods", "--context", "a,,b"}, want: `error: invalid --context "a,,b": empty context name`},
		{name: "named twice", args: []string{"pods", "--context", "a,b,a"}, want: `error: invalid --context "a,b,a": context "a" is named twice`},
		{name: "unknown", args: []string{"pods", "--context", "a,nope"}, want: `error: context "nope" does not exist`},
		{name: "one unknown", args: []string{"pods", "--context", "nope"}, want: `error: context "nope" does not exist`},
		{name: "one unknown, with -n", args: []string{"pods", "--context", "nope", "-n", "shop"}, want: `error: context "nope" does not exist`},
		{name: "tree: one unknown", args: []string{"tree", "deploy/web", "--context", "nope"}, want: `error: context "nope" does not exist`},
		{name: "with --all-contexts", args: []string{"pods", "--context", "a", "--all-contexts"}, want: "error: --all-contexts and --context cannot be used together"},
		{name: "tree: empty name", args: []string{"tree", "deploy/web", "--context", ",a"}, want: `error: invalid --context ",a": empty context name`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			code := Execute(streams, append(tc.args, "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()))
			if code != ExitError {
				t.Errorf("exit code %d, want %d", code, ExitError)
			}
			if got := errOut.String(); got != tc.want+"\n" {
				t.Errorf("stderr = %q, want %q", got, tc.want+"\n")
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
}
