package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// steps reports the demo's steps as they start and end, each with how long it took in the
// last run, and keeps the durations in a file between runs: one "step<TAB>seconds" line
// each, which hack/demo.sh reads and writes too for the build steps before the program
// starts (~/.cache/kubectl-idx/demo-timings, next to the control plane's binaries). A
// newcomer waiting for the first answer sees where the time goes; a missing or unreadable
// file only means no figures.
type steps struct {
	out  io.Writer
	path string // "" keeps nothing between runs
	now  func() time.Time
	// last holds every step's seconds, the script's too, so that a save keeps them.
	last map[string]float64
}

// newSteps reads the durations kept at path ("" for none) and reports to out.
func newSteps(out io.Writer, path string) *steps {
	s := &steps{out: out, path: path, now: time.Now, last: map[string]float64{}}
	if path == "" {
		return s
	}
	f, err := os.Open(path)
	if err != nil {
		return s
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			continue
		}
		if secs, err := strconv.ParseFloat(value, 64); err == nil && secs >= 0 {
			s.last[key] = secs
		}
	}
	return s
}

// begin prints what the step named key does and how long it took last time, and returns
// the function that ends it: done prints and keeps its duration. A step that failed or
// was interrupted is not ended, so the figure of the last complete run stays.
func (s *steps) begin(key, what string) (done func()) {
	if secs, ok := s.last[key]; ok {
		fmt.Fprintf(s.out, "demo: %s (last time %s)\n", what, human(secs))
	} else {
		fmt.Fprintf(s.out, "demo: %s (no earlier run here)\n", what)
	}
	start := s.now()
	return func() {
		took := s.now().Sub(start)
		fmt.Fprintf(s.out, "demo: done in %s\n", human(took.Seconds()))
		s.last[key] = took.Seconds()
		if err := s.save(); err != nil {
			// The figures are a courtesy; the demo goes on without them.
			fmt.Fprintf(s.out, "warning: keeping the demo's timings: %v\n", err)
		}
	}
}

// save writes every step's duration to the file, through a temporary file so that an
// interrupted write never leaves half a file.
func (s *steps) save() error {
	if s.path == "" {
		return nil
	}
	keys := make([]string, 0, len(s.last))
	for k := range s.last {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s\t%s\n", k, strconv.FormatFloat(s.last[k], 'f', 1, 64))
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
		return err
	}
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, s.path)
}

// human prints seconds as hack/demo.sh does: 2.9s under ten seconds, 31s under a minute,
// 4m42s above.
func human(secs float64) string {
	d := time.Duration(secs * float64(time.Second))
	switch {
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
