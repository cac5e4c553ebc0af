package query_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/scripted"
	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// feedRun is one run of a checkpointed feed of pods over s.
type feedRun struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan error
	file   *checkpoint.File
	lines  scripted.Lines
	mu     sync.Mutex
	gaps   []string
}

// startRun opens the checkpoint at path and runs the feed of pods (-o name,
// metadata only) over s until stop.
func startRun(t *testing.T, s *scripted.Pods, path string) *feedRun {
	t.Helper()
	file, err := checkpoint.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	streams := []checkpoint.Stream{{Context: "test", Command: "watch", Resources: []string{"pods"}, Namespace: "shop"}}
	handles, err := file.Resume(streams, nil)
	if err != nil {
		t.Fatal(err)
	}
	session := query.NewSession(query.Config{Target: query.Target{Namespace: "shop", Hooks: query.Hooks{
		NewFactory: func(cfg informer.Config) (*informer.Factory, error) {
			return informer.NewFactoryWithClients(informer.Clients{Metadata: s.Client}, cfg), nil
		},
	}}, SyncTimeout: 20 * time.Second})
	r := &feedRun{t: t, done: make(chan error, 1), file: file}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	notices := query.FeedNotices{OnGap: func(res informer.Resource, g informer.Gap) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.gaps = append(r.gaps, fmt.Sprintf("%s %s-%s %s", res.Name(), g.From, g.To, g.Reason))
	}}
	go func() {
		r.done <- session.Watch(ctx, []query.Request{{Resource: fixtures.Pods, Mode: informer.MetadataOnly}},
			query.FeedOptions{Checkpoint: handles[0], FeedNotices: notices},
			func(ev *feed.Event) error {
				m := ev.Object.(metav1.Object)
				line := fmt.Sprintf("%s %s@%s", ev.Type, m.GetName(), m.GetResourceVersion())
				if ev.Gap != nil {
					line += fmt.Sprintf(" gap %s-%s %s", ev.Gap.From, ev.Gap.To, ev.Gap.Reason)
				}
				if ev.DetectedOnRelist {
					line += " (relist)"
				}
				if ev.OldUnknown {
					line += " (old unknown)"
				}
				r.lines.Add(line)
				return nil
			}, func() error { return nil })
	}()
	return r
}

// waitFor waits for n events and returns them.
func (r *feedRun) waitFor(n int) []string {
	r.t.Helper()
	return r.lines.WaitFor(r.t, n)
}

// stop ends the feed as Ctrl-C does and closes the checkpoint; it returns
// every event printed.
func (r *feedRun) stop() []string {
	r.t.Helper()
	// What was delivered last is flushed and recorded before Watch returns.
	time.Sleep(100 * time.Millisecond)
	r.cancel()
	if err := <-r.done; err != nil {
		r.t.Fatalf("Watch: %v", err)
	}
	if err := r.file.Close(); err != nil {
		r.t.Fatal(err)
	}
	return r.lines.All()
}

// TestWatchResumesFromCheckpoint: a feed stopped and started again with its
// checkpoint watches from where it was and prints what happened meanwhile,
// change by change; when the server no longer has that point, it lists and
// prints the difference, each line marked with the gap, and says so.
func TestWatchResumesFromCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pods.checkpoint")
	s := scripted.New(t)

	// A new checkpoint: the feed starts as without one.
	s.List("10", scripted.Pod("a", "4"), scripted.Pod("b", "7"))
	w := s.Watch()
	run := startRun(t, s, path)
	run.waitFor(2)
	w.Modify(scripted.Pod("a", "11"))
	if diff := diffLines([]string{"ADDED a@4", "ADDED b@7", "MODIFIED a@11"}, run.waitFor(3)); diff != "" {
		t.Errorf("first run: %s", diff)
	}
	run.stop()

	// Meanwhile b was deleted (13), c created (15), a changed (18).
	s.List("20", scripted.Pod("a", "18"), scripted.Pod("c", "15"))
	w = s.Watch()
	run = startRun(t, s, path)
	time.Sleep(200 * time.Millisecond)
	w.Delete(scripted.Pod("b", "13"))
	w.Add(scripted.Pod("c", "15"))
	w.Modify(scripted.Pod("a", "18"))
	want := []string{"DELETED b@13", "ADDED c@15", "MODIFIED a@18 (old unknown)"}
	if diff := diffLines(want, run.waitFor(3)); diff != "" {
		t.Errorf("resumed: %s", diff)
	}
	run.stop()
	if got := s.WatchedFrom(); !slices.Equal(got, []string{"10", "11"}) {
		t.Errorf("watched from %q, want the first list's and then the checkpoint's", got)
	}

	// The server no longer has 18: the watch is refused, the informer lists
	// again: c deleted, a changed twice (one MODIFIED), d new.
	s.List("30", scripted.Pod("a", "25"), scripted.Pod("c", "15"))
	s.WatchFails(apierrors.NewResourceExpired("too old resource version: 18 (28)"))
	s.List("31", scripted.Pod("a", "26"), scripted.Pod("d", "29"))
	run = startRun(t, s, path)
	want = []string{"DELETED c@15 gap 18-31 expired (relist)", "MODIFIED a@26 gap 18-31 expired (old unknown)", "ADDED d@29 gap 18-31 expired"}
	if diff := diffLines(want, run.waitFor(3)); diff != "" {
		t.Errorf("resumed across a gap: %s", diff)
	}
	run.stop()
	if diff := diffLines([]string{"pods 18-31 expired"}, run.gaps); diff != "" {
		t.Errorf("gaps told: %s", diff)
	}

	// Stopped right after: nothing happened, nothing is printed.
	s.List("31", scripted.Pod("a", "26"), scripted.Pod("d", "29"))
	run = startRun(t, s, path)
	if got := run.stop(); len(got) != 0 {
		t.Errorf("resumed with nothing new: %q", got)
	}
	if got := s.WatchedFrom(); got[len(got)-1] != "31" {
		t.Errorf("watched from %q, want 31 last", got)
	}
}

// TestWatchResumesFromStaleEventsPoint: a watch that ends at once, as the API
// server answers a watch of Events from a compacted resourceVersion, is taken
// as expired: the feed lists and marks the difference.
func TestWatchResumesFromStaleEventsPoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	s := scripted.New(t)
	s.List("10", scripted.Pod("a", "4"))
	run := startRun(t, s, path)
	run.waitFor(1)
	run.stop()

	s.List("40", scripted.Pod("a", "35"))
	closed := s.Watch()
	closed.Stop()
	s.List("41", scripted.Pod("a", "35"))
	run = startRun(t, s, path)
	if diff := diffLines([]string{"MODIFIED a@35 gap 10-41 expired (old unknown)"}, run.waitFor(1)); diff != "" {
		t.Errorf("resumed: %s", diff)
	}
	run.stop()
}

func diffLines(want, got []string) string {
	if slices.Equal(want, got) {
		return ""
	}
	return fmt.Sprintf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
}
