package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runSteps runs the named steps, each taking its duration of took on a fake clock, with the
// timings kept at path, and returns what they printed.
func runSteps(t *testing.T, path string, names []string, took []time.Duration) string {
	t.Helper()
	var out bytes.Buffer
	s := newSteps(&out, path)
	now := time.Unix(0, 0)
	s.now = func() time.Time { return now }
	for i, name := range names {
		done := s.begin(name, "doing "+name)
		now = now.Add(took[i])
		done()
	}
	return out.String()
}

func TestStepsReportLastRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache", "demo-timings")
	// hack/demo.sh's build steps come first, in whole seconds; a line it never writes is
	// ignored.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("control-plane-binaries\t282\nnot a timing\nworkload\tsoon\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Each run reports the one before it and keeps its own figures, the script's untouched.
	for _, run := range []struct {
		name     string
		took     []time.Duration
		want     string
		wantFile string
	}{{
		name: "first",
		took: []time.Duration{3200 * time.Millisecond, 12 * time.Second},
		want: "demo: doing control-plane (no earlier run here)\n" +
			"demo: done in 3.2s\n" +
			"demo: doing workload (no earlier run here)\n" +
			"demo: done in 12s\n",
		wantFile: "control-plane\t3.2\ncontrol-plane-binaries\t282.0\nworkload\t12.0\n",
	}, {
		name: "second",
		took: []time.Duration{2 * time.Second, 75 * time.Second},
		want: "demo: doing control-plane (last time 3.2s)\n" +
			"demo: done in 2s\n" +
			"demo: doing workload (last time 12s)\n" +
			"demo: done in 1m15s\n",
		wantFile: "control-plane\t2.0\ncontrol-plane-binaries\t282.0\nworkload\t75.0\n",
	}} {
		if got := runSteps(t, path, []string{"control-plane", "workload"}, run.took); got != run.want {
			t.Errorf("%s run printed:\n%s\nwant:\n%s", run.name, got, run.want)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != run.wantFile {
			t.Errorf("timings file after the %s run:\n%s\nwant:\n%s", run.name, data, run.wantFile)
		}
	}
}

// A step that is begun and never done (failed, interrupted) keeps the last complete figure.
func TestStepsUnfinishedKeepsLastFigure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo-timings")
	if err := os.WriteFile(path, []byte("workload\t12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := newSteps(&out, path)
	_ = s.begin("workload", "rolling out")
	if got := newSteps(&out, path).last["workload"]; got != 12 {
		t.Errorf("workload after an unfinished step: %v, want 12", got)
	}
}

// Without a file (go run ./test/demo without -timings) the steps are reported and nothing
// is written.
func TestStepsWithoutFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	got := runSteps(t, "", []string{"commands"}, []time.Duration{time.Second})
	if want := "demo: doing commands (no earlier run here)\ndemo: done in 1s\n"; got != want {
		t.Errorf("printed:\n%s\nwant:\n%s", got, want)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("wrote %v, want nothing", entries)
	}
}

// hack/demo.sh prints its build steps' durations in the same shape as the program prints
// its own, so the two kinds of lines read alike.
func TestHumanMatchesDemoScript(t *testing.T) {
	script, err := os.ReadFile(filepath.Join("..", "..", "hack", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// The script's human function, from its line to the closing brace.
	start := strings.Index(string(script), "\nhuman() {")
	end := strings.Index(string(script)[start+1:], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("hack/demo.sh has no human function")
	}
	fn := string(script)[start+1 : start+1+end+2]
	for _, tc := range []struct {
		secs float64
		want string
	}{
		{0, "0s"},
		{2.94, "2.9s"},
		{3, "3s"},
		{12, "12s"},
		{59.4, "59s"},
		{59.6, "1m0s"},
		{282, "4m42s"},
	} {
		if got := human(tc.secs); got != tc.want {
			t.Errorf("human(%v) = %q, want %q", tc.secs, got, tc.want)
		}
		out, err := exec.Command("bash", "-c", fn+"\nhuman \"$1\"", "bash", strconv.FormatFloat(tc.secs, 'f', -1, 64)).Output()
		if err != nil {
			t.Fatalf("hack/demo.sh human %v: %v", tc.secs, err)
		}
		if got := strings.TrimSpace(string(out)); got != tc.want {
			t.Errorf("hack/demo.sh human %v = %q, want %q", tc.secs, got, tc.want)
		}
	}
}
