package e2e

import (
	"strings"
	"testing"
	"time"
)

// demoHint is the line that follows kubectl's error when the kubeconfig read does not
// exist.
const demoHint = "No kubeconfig found: to try kubectl idx on a local cluster, run `make demo` in a clone of https://github.com/kubectl-idx/kubectl-idx"

// TestBadInput: every failure is exit code 1, nothing on stdout and exactly one line on
// stderr, `error: ...` or, for an API error, kubectl's `Error from server (Reason): ...`
// (or whatever kubectl itself prints last, where the case compares with kubectl), then
// demoHint where the kubeconfig read does not exist; never a panic or a goroutine dump.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		user string
		// kubeconfig, when set, is KUBECONFIG instead of the user's.
		kubeconfig string
		args       []string
		// hint: demoHint follows the error line.
		hint bool
		// exact is the whole stderr line.
		exact string
		// sameAsKubectl: the line must equal the last stderr line of `kubectl get args`.
		sameAsKubectl bool
		// kubectlDetail: the line must contain what follows this marker in kubectl's line
		// (kubectl reports the server's wording around a detail both must name).
		kubectlDetail string
		contains      []string
		// maxWall bounds the run, for network failures that must not hang.
		maxWall time.Duration
	}{
		{
			name: "unknown resource type", args: []string{"podz"},
			exact: `error: the server doesn't have a resource type "podz"`, sameAsKubectl: true,
		},
		{
			name: "unknown type in a comma list", args: []string{"pods,podz", "-A"},
			exact: `error: the server doesn't have a resource type "podz"`, sameAsKubectl: true,
		},
		{
			name: "malformed label selector", args: []string{"pods", "-l", "a in (b"},
			kubectlDetail: "unable to parse requirement",
		},
		{
			name: "unknown profile", args: []string{"pods", "--profile", "bogus"},
			exact: `error: unknown profile 'bogus'`, sameAsKubectl: true,
		},
		{
			name: "unknown output format", args: []string{"pods", "-o", "yamlx"},
			sameAsKubectl: true, contains: []string{`"yamlx"`, "json", "yaml", "name", "wide", "jsonpath", "go-template", "custom-columns"},
		},
		{
			name: "missing kubeconfig file", args: []string{"pods", "--kubeconfig", "/nonexistent"},
			sameAsKubectl: true, contains: []string{"/nonexistent"}, hint: true,
		},
		{
			// A token, or kubectl would ask for a user name on stdin.
			name: "KUBECONFIG names no file that exists", kubeconfig: "/nonexistent", args: []string{"pods", "--server", "https://127.0.0.1:1", "--token", "t", "--request-timeout", "2s"},
			sameAsKubectl: true, contains: []string{"127.0.0.1:1"}, hint: true, maxWall: 15 * time.Second,
		},
		{
			name: "unreachable server", args: []string{"pods", "--server", "https://127.0.0.1:1", "--request-timeout", "2s"},
			sameAsKubectl: true, contains: []string{"127.0.0.1:1"}, maxWall: 15 * time.Second,
		},
		{
			name: "forbidden in all namespaces", user: narrowUser, args: []string{"pods", "-A"},
			contains: []string{`"` + narrowUser + `"`, "list", `"pods"`, "cluster scope"},
		},
		{
			name: "forbidden in another namespace", user: narrowUser, args: []string{"pods", "-n", "ops"},
			contains: []string{`"` + narrowUser + `"`, "list", `"pods"`, `namespace "ops"`},
		},
		{
			name: "forbidden resource type in the user's namespace", user: narrowUser, args: []string{"deployments", "-n", "shop"},
			contains: []string{`"` + narrowUser + `"`, "list", `"deployments"`, `namespace "shop"`},
		},
		{
			name: "name across all namespaces", args: []string{"pods", "-A", "web"},
			exact: "error: a resource cannot be retrieved by name across all namespaces", sameAsKubectl: true,
		},
		{
			name: "caches cannot sync in time", args: []string{"pods,deploy", "-A", "--sync-timeout", "1ns"},
			contains: []string{"pods", "deployments"},
		},
		{
			name: "kubectl get's -w on a listing", args: []string{"pods", "-n", "shop", "-w"},
			exact: "error: kubectl idx lists once; to follow changes use: kubectl idx watch pods -n shop",
		},
		{
			name: "name not found", args: []string{"pods", "nope", "-n", "shop"},
			contains: []string{`pods "nope" not found`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := as(tt.user)
			if tt.kubeconfig != "" {
				r = runner{kubeconfig: tt.kubeconfig}
			}
			res := r.idx(t, tt.args...)
			noPanic(t, "kubectl-idx", res)
			if res.ExitCode != 1 {
				t.Errorf("exit code %d, want 1", res.ExitCode)
			}
			if res.Stdout != "" {
				t.Errorf("stdout not empty:\n%s", res.Stdout)
			}
			if tt.maxWall > 0 && res.Wall > tt.maxWall {
				t.Errorf("took %s, want at most %s", res.Wall, tt.maxWall)
			}
			lines := stderrLines(res.Stderr)
			if tt.hint {
				if len(lines) != 2 || lines[1] != demoHint {
					t.Fatalf("want the error and the hint on stderr, got:\n%s", res.Stderr)
				}
				lines = lines[:1]
			}
			if len(lines) != 1 {
				t.Fatalf("want exactly one line on stderr, got %d:\n%s", len(lines), res.Stderr)
			}
			line := lines[0]
			var refLine string
			if tt.sameAsKubectl || tt.kubectlDetail != "" {
				ref := r.kubectl(t, append([]string{"get"}, tt.args...)...)
				refLines := stderrLines(ref.Stderr)
				if ref.ExitCode != 1 || len(refLines) == 0 {
					t.Fatalf("kubectl did not fail as expected:\n%s", ref)
				}
				refLine = refLines[len(refLines)-1]
			}
			// kubectl's own wording wins over the `error: ` prefix: kubectl prints, for one,
			// "The connection to the server ... was refused - ..." bare.
			if !strings.HasPrefix(line, "error: ") && !strings.HasPrefix(line, "Error from server (") && !(tt.sameAsKubectl && line == refLine) {
				t.Errorf("stderr line does not start with `error: ` or `Error from server (`: %q", line)
			}
			if tt.exact != "" && line != tt.exact {
				t.Errorf("stderr:\n got %q\nwant %q", line, tt.exact)
			}
			for _, s := range tt.contains {
				if !strings.Contains(line, s) {
					t.Errorf("stderr %q does not contain %q", line, s)
				}
			}
			if tt.sameAsKubectl && line != refLine {
				t.Errorf("stderr differs from kubectl's:\n got %q\nwant %q", line, refLine)
			}
			if tt.kubectlDetail != "" {
				i := strings.Index(refLine, tt.kubectlDetail)
				if i < 0 {
					t.Fatalf("kubectl's message %q lacks %q: update the test", refLine, tt.kubectlDetail)
				}
				if detail := refLine[i:]; !strings.Contains(line, detail) {
					t.Errorf("stderr %q does not contain kubectl's %q", line, detail)
				}
			}
		})
	}
}
