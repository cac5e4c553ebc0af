// Package scripted is a fake metadata client whose pod lists and watches a test scripts, in
// order: each LIST of pods answers with the next scripted list (ServiceUnavailable when none
// is left), each WATCH with the next scripted watch (open and silent when none is left). It
// records the requests, so that the tests of a feed resumed from a checkpoint, in
// pkg/informer and pkg/query, can check where each watch started.
//
// It does not import pkg/informer, so that package's own tests can use it.
package scripted

import (
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
)

// Pods is the scripted metadata client of pods.
type Pods struct {
	// Client is the metadata client to hand to the code under test.
	Client *metadatafake.FakeMetadataClient

	mu      sync.Mutex
	lists   []runtime.Object
	watches []func() (watch.Interface, error)
	// asked are the list and watch requests, as "list" and "watch rv=...".
	asked []string
	// watchedFrom are the resourceVersions the watches asked for.
	watchedFrom []string
}

// New returns a client with nothing scripted yet.
func New(t testing.TB) *Pods {
	t.Helper()
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	p := &Pods{Client: metadatafake.NewSimpleMetadataClient(scheme)}
	p.Client.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		// The fake does not keep a list's resourceVersion.
		p.asked = append(p.asked, "list")
		if len(p.lists) == 0 {
			return true, nil, apierrors.NewServiceUnavailable("no list scripted")
		}
		l := p.lists[0]
		p.lists = p.lists[1:]
		return true, l, nil
	})
	p.Client.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		rv := a.(clienttesting.WatchAction).GetWatchRestrictions().ResourceVersion
		p.asked = append(p.asked, "watch rv="+rv)
		p.watchedFrom = append(p.watchedFrom, rv)
		if len(p.watches) == 0 {
			// Stays open, silent.
			return true, watch.NewRaceFreeFake(), nil
		}
		next := p.watches[0]
		p.watches = p.watches[1:]
		w, err := next()
		return true, w, err
	})
	return p
}

// List scripts a list answer of copies of objs at resourceVersion rv.
func (p *Pods) List(rv string, objs ...*metav1.PartialObjectMetadata) {
	l := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	for _, o := range objs {
		l.Items = append(l.Items, runtime.RawExtension{Object: o.DeepCopy()})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lists = append(p.lists, l)
}

// Watch scripts a watch answer: the returned watcher, driven by the test.
func (p *Pods) Watch() *watch.RaceFreeFakeWatcher {
	w := watch.NewRaceFreeFake()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watches = append(p.watches, func() (watch.Interface, error) { return w, nil })
	return w
}

// WatchFails scripts a watch request that fails with err.
func (p *Pods) WatchFails(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watches = append(p.watches, func() (watch.Interface, error) { return nil, err })
}

// Requests returns the requests so far, in order: "list", or "watch rv=" and the
// resourceVersion the watch asked for.
func (p *Pods) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asked)
}

// WatchedFrom returns the resourceVersions the watches so far asked for, in order.
func (p *Pods) WatchedFrom() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.watchedFrom)
}

// Pod returns the metadata of pod shop/name at resourceVersion rv, of UID "uid-" + name.
func Pod(name, rv string) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv}}
	p.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	return p
}

// Lines collects lines added from several goroutines: what a handler or a feed is told, one
// line a call. The zero value is ready to use.
type Lines struct {
	mu    sync.Mutex
	lines []string
}

// Add appends s.
func (l *Lines) Add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

// All returns the lines so far.
func (l *Lines) All() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// WaitFor waits until there are n lines or more, for at most 20 seconds, and returns them; it
// fails t with the lines so far when they do not come.
func (l *Lines) WaitFor(t testing.TB, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := l.All()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d lines, want %d:\n%s", len(got), n, strings.Join(got, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
