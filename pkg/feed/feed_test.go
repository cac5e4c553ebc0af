package feed_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

func cm(ns, name, uid, rv string, data ...string) *corev1.ConfigMap {
	c := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), ResourceVersion: rv}}
	if len(data) > 0 {
		c.Data = map[string]string{}
		for i := 0; i+1 < len(data); i += 2 {
			c.Data[data[i]] = data[i+1]
		}
	}
	return c
}

// step is one handler call of one source.
type step struct {
	source int
	kind   string // add, initial, update, delete
	obj    any
}

func add(src int, obj any) step     { return step{source: src, kind: "add", obj: obj} }
func initial(src int, obj any) step { return step{source: src, kind: "initial", obj: obj} }
func update(src int, obj any) step  { return step{source: src, kind: "update", obj: obj} }
func del(src int, obj any) step     { return step{source: src, kind: "delete", obj: obj} }

func tombstone(obj runtime.Object) cache.DeletedFinalStateUnknown {
	key, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return cache.DeletedFinalStateUnknown{Key: key, Obj: obj}
}

// deliver calls f's handlers as informers would.
func deliver(f *feed.Feed, steps []step) {
	handlers := map[int]cache.ResourceEventHandler{}
	for _, s := range steps {
		h, ok := handlers[s.source]
		if !ok {
			h = f.Handler(s.source)
			handlers[s.source] = h
		}
		switch s.kind {
		case "add":
			h.OnAdd(s.obj, false)
		case "initial":
			h.OnAdd(s.obj, true)
		case "update":
			// The old object is the informer's; the feed compares with what it emitted.
			h.OnUpdate(nil, s.obj)
		case "delete":
			h.OnDelete(s.obj)
		}
	}
}

// runFeed delivers steps, runs f until the queue is drained and returns the events as
// "TYPE source ns/name@rv" lines, "(relist)" marking DetectedOnRelist and
// "(left)" LeftScope.
func runFeed(t *testing.T, cfg feed.Config, steps []step) ([]string, []*feed.Event) {
	t.Helper()
	f := feed.New(cfg)
	deliver(f, steps)
	return drain(t, f, func(ev *feed.Event) string {
		line := eventLine(ev)
		if ev.LeftScope {
			line += " (left)"
		}
		return line
	})
}

// drain runs f until it has emitted everything delivered to it (its first
// flush) and returns its events, each also as the line line makes of it.
func drain(t *testing.T, f *feed.Feed, line func(*feed.Event) string) ([]string, []*feed.Event) {
	t.Helper()
	var lines []string
	var events []*feed.Event
	ctx, cancel := context.WithCancel(context.Background())
	err := f.Run(ctx, func(ev *feed.Event) error {
		lines = append(lines, line(ev))
		events = append(events, ev)
		return nil
	}, func() error {
		// Everything delivered has been emitted.
		cancel()
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return lines, events
}

// eventLine is "TYPE source ns/name@rv", with "(relist)" marking
// DetectedOnRelist.
func eventLine(ev *feed.Event) string {
	m := ev.Object.(metav1.Object)
	line := fmt.Sprintf("%s %d %s/%s@%s", ev.Type, ev.Source, m.GetNamespace(), m.GetName(), m.GetResourceVersion())
	if ev.DetectedOnRelist {
		line += " (relist)"
	}
	return line
}

func TestFeedEvents(t *testing.T) {
	a1 := cm("shop", "a", "uid-a", "10", "v", "1")
	a2 := cm("shop", "a", "uid-a", "11", "v", "2")
	a3 := cm("shop", "a", "uid-a", "12", "v", "3")
	b1 := cm("shop", "b", "uid-b", "20")
	c1 := cm("other", "c", "uid-c", "30")
	aNew := cm("shop", "a", "uid-a2", "40")
	tests := []struct {
		name  string
		cfg   feed.Config
		steps []step
		want  []string
	}{
		{
			name:  "initial state sorted by source, namespace and name, then changes in order",
			steps: []step{initial(1, c1), initial(0, b1), initial(0, a1), update(0, a2), initial(1, cm("", "n", "uid-n", "5")), del(0, b1)},
			want: []string{
				"ADDED 0 shop/a@10", "ADDED 0 shop/b@20", "ADDED 1 /n@5", "ADDED 1 other/c@30",
				"MODIFIED 0 shop/a@11", "DELETED 0 shop/b@20",
			},
		},
		{
			name:  "watch-only records the initial state without emitting it",
			cfg:   feed.Config{WatchOnly: true},
			steps: []step{initial(0, a1), initial(0, b1), update(0, a2), add(0, c1)},
			want:  []string{"MODIFIED 0 shop/a@11", "ADDED 0 other/c@30"},
		},
		{
			name: "relist: unchanged objects are not repeated, a changed one is one MODIFIED",
			steps: []step{
				initial(0, a1), initial(0, b1),
				// The relist calls OnUpdate for every object it lists.
				update(0, a3), update(0, b1),
			},
			want: []string{"ADDED 0 shop/a@10", "ADDED 0 shop/b@20", "MODIFIED 0 shop/a@12"},
		},
		{
			name:  "relist: a deletion comes as a tombstone",
			steps: []step{initial(0, a1), initial(0, b1), update(0, b1), del(0, tombstone(a1))},
			want:  []string{"ADDED 0 shop/a@10", "ADDED 0 shop/b@20", "DELETED 0 shop/a@10 (relist)"},
		},
		{
			name:  "relist: deleted and created again under the same name",
			steps: []step{initial(0, a1), update(0, aNew)},
			want:  []string{"ADDED 0 shop/a@10", "DELETED 0 shop/a@10 (relist)", "ADDED 0 shop/a@40"},
		},
		{
			name:  "relist: a new object is ADDED",
			steps: []step{initial(0, a1), update(0, a1), add(0, b1)},
			want:  []string{"ADDED 0 shop/a@10", "ADDED 0 shop/b@20"},
		},
		{
			name:  "a repeated add of the same state is dropped",
			steps: []step{add(0, a1), add(0, a1)},
			want:  []string{"ADDED 0 shop/a@10"},
		},
		{
			name:  "the same name in two sources is two objects",
			steps: []step{add(0, a1), add(1, a1), update(1, a2)},
			want:  []string{"ADDED 0 shop/a@10", "ADDED 1 shop/a@10", "MODIFIED 1 shop/a@11"},
		},
		{
			name: "scope: objects out of scope are not fed; leaving is a DELETED that left the scope, entering an ADDED",
			cfg:  feed.Config{Scope: dataScope{"in": "yes"}},
			steps: []step{
				add(0, cm("shop", "x", "uid-x", "1", "in", "yes")),
				add(0, cm("shop", "y", "uid-y", "2", "in", "no")),
				update(0, cm("shop", "y", "uid-y", "3", "in", "no")),
				update(0, cm("shop", "x", "uid-x", "4", "in", "no")),
				update(0, cm("shop", "x", "uid-x", "5", "in", "no")),
				update(0, cm("shop", "y", "uid-y", "6", "in", "yes")),
				del(0, cm("shop", "x", "uid-x", "5", "in", "no")),
				del(0, cm("shop", "y", "uid-y", "6", "in", "yes")),
			},
			want: []string{"ADDED 0 shop/x@1", "DELETED 0 shop/x@4 (left)", "ADDED 0 shop/y@6", "DELETED 0 shop/y@6"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runFeed(t, tc.cfg, tc.steps)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// dataScope contains configmaps whose data holds every key and value of it.
type dataScope map[string]string

func (d dataScope) Contains(_ context.Context, _ int, obj runtime.Object) bool {
	c := obj.(*corev1.ConfigMap)
	for k, v := range d {
		if c.Data[k] != v {
			return false
		}
	}
	return true
}

func TestFeedModifiedCarriesOldStateAndDiff(t *testing.T) {
	a1 := cm("shop", "a", "uid-a", "10", "v", "1")
	a2 := cm("shop", "a", "uid-a", "11", "v", "2")
	_, events := runFeed(t, feed.Config{Diff: true}, []step{add(0, a1), update(0, a2)})
	if len(events) != 2 {
		t.Fatalf("got %d events, want 2", len(events))
	}
	mod := events[1]
	if mod.Old != a1 || mod.Object != a2 {
		t.Errorf("MODIFIED old %v new %v, want the emitted state and the new one", mod.Old, mod.Object)
	}
	want := []feed.Change{{Path: ".data.v", Old: "1", New: "2", HasOld: true, HasNew: true}}
	if diff := cmp.Diff(want, mod.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	// Without Diff, no changes are computed.
	_, events = runFeed(t, feed.Config{}, []step{add(0, a1), update(0, a2)})
	if events[1].Changes != nil {
		t.Errorf("changes without Config.Diff: %v", events[1].Changes)
	}
}

// TestFeedKeepsOrderUnderConcurrentInformers: several informers deliver at once while the
// writer is stuck; the handlers return regardless, and once the writer moves again each
// object's events come out in the order they went in, none lost.
func TestFeedKeepsOrderUnderConcurrentInformers(t *testing.T) {
	const sources, objects, versions = 4, 25, 40
	f := feed.New(feed.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := map[string][]string{}
	total := 0
	stuck := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- f.Run(ctx, func(ev *feed.Event) error {
			// A terminal that does not read until every informer has delivered.
			<-stuck
			m := ev.Object.(metav1.Object)
			k := fmt.Sprintf("%d/%s", ev.Source, m.GetName())
			got[k] = append(got[k], m.GetResourceVersion())
			total++
			if total == sources*objects*versions {
				cancel()
			}
			return nil
		}, func() error { return nil })
	}()
	var wg sync.WaitGroup
	for s := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := f.Handler(s)
			for v := 1; v <= versions; v++ {
				for o := range objects {
					obj := cm("ns", fmt.Sprintf("o%d", o), fmt.Sprintf("uid-%d-%d", s, o), fmt.Sprint(v))
					if v == 1 {
						h.OnAdd(obj, false)
					} else {
						h.OnUpdate(nil, obj)
					}
				}
			}
		}()
	}
	delivered := make(chan struct{})
	go func() { wg.Wait(); close(delivered) }()
	select {
	case <-delivered:
	case <-time.After(30 * time.Second):
		t.Fatal("handlers blocked on a stuck writer; they must only enqueue")
	}
	close(stuck)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("only %d of %d events after 30s", total, sources*objects*versions)
	}
	for k, rvs := range got {
		for i, rv := range rvs {
			if rv != fmt.Sprint(i+1) {
				t.Fatalf("%s: events out of order or missing: %v", k, rvs)
			}
		}
	}
	if len(got) != sources*objects {
		t.Errorf("%d objects fed, want %d", len(got), sources*objects)
	}
}

// TestFeedRunDrainsOnCancel: when ctx ends, what was received is still emitted and flushed.
func TestFeedRunDrainsOnCancel(t *testing.T) {
	f := feed.New(feed.Config{})
	h := f.Handler(0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 3 {
		h.OnAdd(cm("ns", fmt.Sprint(i), fmt.Sprint(i), "1"), false)
	}
	var emitted, flushes int
	err := f.Run(ctx, func(*feed.Event) error { emitted++; return nil }, func() error { flushes++; return nil })
	if err != nil || emitted != 3 || flushes == 0 {
		t.Errorf("Run = %v, emitted %d, flushed %d times; want nil, 3, at least once", err, emitted, flushes)
	}
}

func TestFeedRunReturnsWriteErrors(t *testing.T) {
	f := feed.New(feed.Config{})
	f.Handler(0).OnAdd(cm("ns", "a", "a", "1"), false)
	boom := errors.New("write /dev/stdout: broken pipe")
	err := f.Run(context.Background(), func(*feed.Event) error { return boom }, func() error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("Run = %v, want %v", err, boom)
	}
	f = feed.New(feed.Config{})
	f.Handler(0).OnAdd(cm("ns", "a", "a", "1"), false)
	err = f.Run(context.Background(), func(*feed.Event) error { return nil }, func() error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("Run with a failing flush = %v, want %v", err, boom)
	}
}

func TestFeedRejectsObjectsWithoutMetadata(t *testing.T) {
	f := feed.New(feed.Config{})
	f.Handler(0).OnAdd("not an object", false)
	err := f.Run(context.Background(), func(*feed.Event) error { return nil }, func() error { return nil })
	if err == nil || !strings.Contains(err.Error(), "string") {
		t.Errorf("Run = %v, want an error naming the type", err)
	}
}

func TestNameScopeAndAllOf(t *testing.T) {
	names := feed.NameScope{0: {"a", "b"}}
	ctx := context.Background()
	for _, tc := range []struct {
		source int
		name   string
		want   bool
	}{{0, "a", true}, {0, "c", false}, {1, "c", true}} {
		if got := names.Contains(ctx, tc.source, cm("ns", tc.name, "u", "1")); got != tc.want {
			t.Errorf("NameScope.Contains(%d, %s) = %v, want %v", tc.source, tc.name, got, tc.want)
		}
	}
	if feed.AllOf(nil, nil) != nil {
		t.Error("AllOf of no scope is not nil")
	}
	both := feed.AllOf(names, dataScope{"k": "v"})
	if both.Contains(ctx, 0, cm("ns", "a", "u", "1")) || !both.Contains(ctx, 0, cm("ns", "a", "u", "1", "k", "v")) {
		t.Error("AllOf does not require every scope")
	}
}
