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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// scripted is a metadata client whose pod lists and watches a test scripts,
// in order; a watch not scripted stays open and silent.
type scripted struct {
	client  *metadatafake.FakeMetadataClient
	mu      sync.Mutex
	lists   []runtime.Object
	watches []func() (watch.Interface, error)
	// watchedFrom are the resourceVersions watches asked for.
	watchedFrom []string
}

func newScripted(t *testing.T) *scripted {
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	s := &scripted{client: metadatafake.NewSimpleMetadataClient(scheme)}
	s.client.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.lists) == 0 {
			return true, nil, apierrors.NewServiceUnavailable("no list scripted")
		}
		l := s.lists[0]
		s.lists = s.lists[1:]
		return true, l, nil
	})
	s.client.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.watchedFrom = append(s.watchedFrom, a.(clienttesting.WatchAction).GetWatchRestrictions().ResourceVersion)
		if len(s.watches) == 0 {
			return true, watch.NewRaceFreeFake(), nil
		}
		next := s.watches[0]
		s.watches = s.watches[1:]
		w, err := next()
		return true, w, err
	})
	return s
}

func (s *scripted) list(rv string, objs ...*metav1.PartialObjectMetadata) {
	l := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, o := range objs {
		l.Items = append(l.Items, runtime.RawExtension{Object: o.DeepCopy()})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists = append(s.lists, l)
}

func (s *scripted) watch() *watch.RaceFreeFakeWatcher {
	w := watch.NewRaceFreeFake()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches = append(s.watches, func() (watch.Interface, error) { return w, nil })
	return w
}

func (s *scripted) watchFails(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watches = append(s.watches, func() (watch.Interface, error) { return nil, err })
}

func (s *scripted) from() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.watchedFrom)
}

func metaPod(name, rv string) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv}}
	p.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	return p
}

// feedRun is one run of a checkpointed feed of pods over s.
type feedRun struct {
	t      *testing.T
	cancel context.CancelFunc
	done   chan error
	file   *checkpoint.File
	mu     sync.Mutex
	lines  []string
	gaps   []string
}

// startRun opens the checkpoint at path and runs the feed of pods (-o name,
// metadata only) over s until stop.
func startRun(t *testing.T, s *scripted, path string) *feedRun {
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
			return informer.NewFactoryWithClients(informer.Clients{Metadata: s.client}, cfg), nil
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
				r.mu.Lock()
				defer r.mu.Unlock()
				r.lines = append(r.lines, line)
				return nil
			}, func() error { return nil })
	}()
	return r
}

// waitFor waits for n events and returns them.
func (r *feedRun) waitFor(n int) []string {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := slices.Clone(r.lines)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d events, want %d: %q", len(got), n, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

// TestWatchResumesFromCheckpoint: a feed stopped and started again with its
// checkpoint watches from where it was and prints what happened meanwhile,
// change by change; when the server no longer has that point, it lists and
// prints the difference, each line marked with the gap, and says so.
func TestWatchResumesFromCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pods.checkpoint")
	s := newScripted(t)

	// A new checkpoint: the feed starts as without one.
	s.list("10", metaPod("a", "4"), metaPod("b", "7"))
	w := s.watch()
	run := startRun(t, s, path)
	run.waitFor(2)
	w.Modify(metaPod("a", "11"))
	if diff := diffLines([]string{"ADDED a@4", "ADDED b@7", "MODIFIED a@11"}, run.waitFor(3)); diff != "" {
		t.Errorf("first run: %s", diff)
	}
	run.stop()

	// Meanwhile b was deleted (13), c created (15), a changed (18).
	s.list("20", metaPod("a", "18"), metaPod("c", "15"))
	w = s.watch()
	run = startRun(t, s, path)
	time.Sleep(200 * time.Millisecond)
	w.Delete(metaPod("b", "13"))
	w.Add(metaPod("c", "15"))
	w.Modify(metaPod("a", "18"))
	want := []string{"DELETED b@13", "ADDED c@15", "MODIFIED a@18 (old unknown)"}
	if diff := diffLines(want, run.waitFor(3)); diff != "" {
		t.Errorf("resumed: %s", diff)
	}
	run.stop()
	if got := s.from(); !slices.Equal(got, []string{"10", "11"}) {
		t.Errorf("watched from %q, want the first list's and then the checkpoint's", got)
	}

	// The server no longer has 18: the watch is refused, the informer lists
	// again: c deleted, a changed twice (one MODIFIED), d new.
	s.list("30", metaPod("a", "25"), metaPod("c", "15"))
	s.watchFails(apierrors.NewResourceExpired("too old resource version: 18 (28)"))
	s.list("31", metaPod("a", "26"), metaPod("d", "29"))
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
	s.list("31", metaPod("a", "26"), metaPod("d", "29"))
	run = startRun(t, s, path)
	if got := run.stop(); len(got) != 0 {
		t.Errorf("resumed with nothing new: %q", got)
	}
	if got := s.from(); got[len(got)-1] != "31" {
		t.Errorf("watched from %q, want 31 last", got)
	}
}

// TestWatchResumesFromStaleEventsPoint: a watch that ends at once, as the API
// server answers a watch of Events from a compacted resourceVersion, is taken
// as expired: the feed lists and marks the difference.
func TestWatchResumesFromStaleEventsPoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	s := newScripted(t)
	s.list("10", metaPod("a", "4"))
	run := startRun(t, s, path)
	run.waitFor(1)
	run.stop()

	s.list("40", metaPod("a", "35"))
	closed := s.watch()
	closed.Stop()
	s.list("41", metaPod("a", "35"))
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
