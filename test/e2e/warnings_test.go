package e2e

import (
	"strings"
	"testing"
)

// TestServerWarnings: a warning the API server sends with its answer reaches
// stderr as kubectl prints it, once, however many requests carried it (the
// informer's LIST and WATCH both do). v1 Endpoints is deprecated since
// v1.33, so every API server the tests run against (v1.34 and v1.37) warns
// on each request for it.
func TestServerWarnings(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{name: "a table", args: []string{"endpoints", "-n", "default"}},
		{name: "every namespace, -o json", args: []string{"endpoints", "-A", "-o", "json"}},
		{name: "by namespace", args: []string{"endpoints", "-A", "--by-namespace", "-o", "name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kubectlArgs := tt.args
			if strings.HasPrefix(tt.name, "by namespace") {
				kubectlArgs = []string{"endpoints", "-A", "-o", "name"}
			}
			idxRes, kubectlRes := bothSucceed(t, as(""), tt.args, kubectlArgs)
			want := warningLines(kubectlRes.Stderr)
			if len(want) != 1 || !strings.Contains(want[0], "Endpoints is deprecated") {
				t.Fatalf("kubectl's warnings changed: %q: update the test", want)
			}
			if got := warningLines(idxRes.Stderr); len(got) != 1 || got[0] != want[0] {
				t.Errorf("warnings on stderr = %q, want kubectl's %q once\nstderr:\n%s", got, want, idxRes.Stderr)
			}
			if strings.Contains(idxRes.Stdout, "Warning") {
				t.Errorf("stdout has the warning:\n%s", idxRes.Stdout)
			}
		})
	}
}

// warningLines returns the lines of stderr that are a server's warnings.
func warningLines(stderr string) []string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "Warning: ") {
			lines = append(lines, l)
		}
	}
	return lines
}
