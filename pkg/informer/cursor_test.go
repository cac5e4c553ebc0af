package informer_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// history is a metadata client whose lists and watches the test scripts: each
// list answers with the next of lists, each watch with the next of watches.
type history struct {
	t      *testing.T
	client *metadatafake.FakeMetadataClient

	mu      sync.Mutex
	lists   []func() (runtime.Object, error)
	watches []func() (watch.Interface, error)
	// asked are the list and watch requests, as "list" and "watch rv=...".
	asked []string
}

func newHistory(t *testing.T) *history {
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	h := &history{t: t, client: metadatafake.NewSimpleMetadataClient(scheme)}
	h.client.PrependReactor("list", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		// The fake does not keep a list's resourceVersion.
		h.asked = append(h.asked, "list")
		if len(h.lists) == 0 {
			return true, nil, apierrors.NewServiceUnavailable("no list scripted")
		}
		next := h.lists[0]
		h.lists = h.lists[1:]
		obj, err := next()
		return true, obj, err
	})
	h.client.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.asked = append(h.asked, "watch rv="+a.(clienttesting.WatchAction).GetWatchRestrictions().ResourceVersion)
		if len(h.watches) == 0 {
			// Stays open, silent.
			return true, watch.NewRaceFreeFake(), nil
		}
		next := h.watches[0]
		h.watches = h.watches[1:]
		w, err := next()
		return true, w, err
	})
	return h
}

// list scripts a list answer of objs at rv.
func (h *history) list(rv string, objs ...*metav1.PartialObjectMetadata) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lists = append(h.lists, func() (runtime.Object, error) {
		l := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: rv}}
		for _, o := range objs {
			l.Items = append(l.Items, runtime.RawExtension{Object: o.DeepCopy()})
		}
		return l, nil
	})
}

// watch scripts a watch answer: the returned watcher, driven by the test.
func (h *history) watch() *watch.RaceFreeFakeWatcher {
	w := watch.NewRaceFreeFake()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watches = append(h.watches, func() (watch.Interface, error) { return w, nil })
	return w
}

// watchFails scripts a watch request that fails with err.
func (h *history) watchFails(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.watches = append(h.watches, func() (watch.Interface, error) { return nil, err })
}

func (h *history) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.asked)
}

func pod(name, uid, rv string) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + uidOf(name, uid)), ResourceVersion: rv}}
	p.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	return p
}

func uidOf(name, uid string) string {
	if uid != "" {
		return uid
	}
	return name
}

// marks records what a cursor's handler is told, one line per call.
type marks struct {
	mu    sync.Mutex
	lines []string
}

func describeMark(m informer.Mark) string {
	s := ""
	if m.Position != "" {
		s += " at " + m.Position
	}
	if m.Gap != nil {
		s += fmt.Sprintf(" gap %s-%s %s", m.Gap.From, m.Gap.To, m.Gap.Reason)
	}
	return s
}

func objName(obj any) string {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return "tombstone " + objName(d.Obj)
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return m.GetName() + "@" + m.GetResourceVersion()
}

func (r *marks) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, s)
}

func (r *marks) OnAdd(obj any, initial bool, m informer.Mark) {
	s := "add " + objName(obj)
	if initial {
		s += " initial"
	}
	r.add(s + describeMark(m))
}
func (r *marks) OnUpdate(_, obj any, m informer.Mark) {
	r.add("update " + objName(obj) + describeMark(m))
}
func (r *marks) OnDelete(obj any, m informer.Mark) { r.add("delete " + objName(obj) + describeMark(m)) }
func (r *marks) OnPosition(m informer.Mark)        { r.add("position" + describeMark(m)) }

// waitFor waits until the handler has been told n things, and returns them.
func (r *marks) waitFor(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := slices.Clone(r.lines)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("told %d things, want %d:\n%s", len(got), n, strings.Join(got, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startCursor runs a feed informer of pods on h with a cursor resuming from
// from, and returns what its handler is told and the gaps onGap heard.
func startCursor(t *testing.T, h *history, from *informer.ResumePoint) (*marks, func() []string) {
	t.Helper()
	f := informer.NewFactoryWithClients(informer.Clients{Metadata: h.client}, informer.Config{})
	var mu sync.Mutex
	var gaps []string
	c := informer.NewCursor(podsRes, from, func(res informer.Resource, g informer.Gap) {
		mu.Lock()
		defer mu.Unlock()
		gaps = append(gaps, fmt.Sprintf("%s %s-%s %s", res.Name(), g.From, g.To, g.Reason))
	})
	inf, err := f.FeedInformer(podsRes, informer.MetadataOnly, c)
	if err != nil {
		t.Fatal(err)
	}
	r := &marks{}
	if _, err := inf.AddEventHandler(c.Handler(r)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); f.Shutdown() })
	f.Start(ctx)
	return r, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(gaps)
	}
}

func bookmark(rv string) runtime.Object {
	p := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	p.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Pod"})
	return p
}

func expired() runtime.Object {
	return &apierrors.NewResourceExpired("too old resource version: 11 (40)").ErrStatus
}

func TestCursorMarksWatchAndRelist(t *testing.T) {
	h := newHistory(t)
	h.list("10", pod("a", "", "4"), pod("b", "", "7"))
	w := h.watch()
	h.list("40", pod("a", "", "30"), pod("c", "", "35"))
	r, gaps := startCursor(t, h, nil)
	r.waitFor(t, 3)
	w.Modify(pod("a", "", "11"))
	w.Action(watch.Bookmark, bookmark("20"))
	r.waitFor(t, 5)
	// The server no longer has 20: the informer lists again.
	w.Error(expired())
	got := r.waitFor(t, 9)
	want := []string{
		"add a@4 initial",
		"add b@7 initial",
		"position at 10",
		"update a@11 at 11",
		"position at 20",
		"delete tombstone b@7 gap 20-40 expired",
		"update a@30 gap 20-40 expired",
		"add c@35 gap 20-40 expired",
		"position at 40",
	}
	if !slices.Equal(got, want) {
		t.Errorf("told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g := gaps(); !slices.Equal(g, []string{"pods 20-40 expired"}) {
		t.Errorf("onGap heard %q", g)
	}
	if req := h.requests(); !slices.Equal(req[:4], []string{"list", "watch rv=10", "list", "watch rv=40"}) {
		t.Errorf("requests %q", req)
	}
}

// A watch that ends at once without a word, as the API server answers a
// watch of Events from a resourceVersion etcd compacted away
// (kubernetes/kubernetes#137089): the informer lists again, marked expired.
func TestCursorStaleWatchIsExpired(t *testing.T) {
	h := newHistory(t)
	h.list("10", pod("a", "", "4"))
	w := h.watch()
	stale := h.watch()
	h.list("50", pod("a", "", "45"))
	r, gaps := startCursor(t, h, nil)
	r.waitFor(t, 2)
	w.Modify(pod("a", "", "12"))
	r.waitFor(t, 3)
	// The watch ends as a server's timeout ends it; the next one, from 12,
	// ends at once.
	w.Stop()
	stale.Stop()
	got := r.waitFor(t, 5)
	want := []string{"add a@4 initial", "position at 10", "update a@12 at 12", "update a@45 gap 12-50 expired", "position at 50"}
	if !slices.Equal(got, want) {
		t.Errorf("told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g := gaps(); !slices.Equal(g, []string{"pods 12-50 expired"}) {
		t.Errorf("onGap heard %q", g)
	}
}

// A watch that fails with another error lists again too: the gap says
// interrupted, and an informer that holds nothing finds nothing deleted, so
// the list's end is handed on at once.
func TestCursorInterruptedRelist(t *testing.T) {
	h := newHistory(t)
	h.list("10")
	w := h.watch()
	h.list("60")
	r, gaps := startCursor(t, h, nil)
	r.waitFor(t, 1)
	w.Error(&apierrors.NewInternalError(fmt.Errorf("etcd is sad")).ErrStatus)
	got := r.waitFor(t, 2)
	if want := []string{"position at 10", "position at 60"}; !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}
	if g := gaps(); !slices.Equal(g, []string{"pods 10-60 interrupted"}) {
		t.Errorf("onGap heard %q", g)
	}
}

// Resuming: the first list is the server's, with the known objects it lacks
// added, at the resume point; the watch starts there and tells each change
// since, unmarked by any gap.
func TestCursorResumes(t *testing.T) {
	h := newHistory(t)
	// At 5 the feed knew a and x; since, a changed (9), x went (8), n came (7).
	h.list("12", pod("a", "", "9"), pod("n", "", "7"))
	w := h.watch()
	r, _ := startCursor(t, h, &informer.ResumePoint{ResourceVersion: "5", Known: []runtime.Object{pod("a", "", "3"), pod("x", "", "2")}})
	r.waitFor(t, 4)
	w.Add(pod("n", "", "7"))
	w.Delete(pod("x", "", "8"))
	w.Modify(pod("a", "", "9"))
	got := r.waitFor(t, 7)
	want := []string{
		"add a@9 initial",
		"add n@7 initial",
		"add x@2 initial",
		"position at 5",
		"update n@7 at 7",
		"delete x@8 at 8",
		"update a@9 at 9",
	}
	if !slices.Equal(got, want) {
		t.Errorf("told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if req := h.requests(); !slices.Equal(req[:2], []string{"list", "watch rv=5"}) {
		t.Errorf("requests %q", req)
	}
}

// Resuming from a point the server no longer has: the watch is refused with
// 410, and the relist's notifications fill the gap from the resume point,
// the known object deleted since among them.
func TestCursorResumesFromExpiredPoint(t *testing.T) {
	h := newHistory(t)
	h.list("12", pod("a", "", "9"))
	h.watchFails(apierrors.NewResourceExpired("too old resource version: 5 (10)"))
	h.list("14", pod("a", "", "13"))
	r, gaps := startCursor(t, h, &informer.ResumePoint{ResourceVersion: "5", Known: []runtime.Object{pod("a", "", "3"), pod("x", "", "2")}})
	got := r.waitFor(t, 6)
	want := []string{
		"add a@9 initial",
		"add x@2 initial",
		"position at 5",
		"delete tombstone x@2 gap 5-14 expired",
		"update a@13 gap 5-14 expired",
		"position at 14",
	}
	if !slices.Equal(got, want) {
		t.Errorf("told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g := gaps(); !slices.Equal(g, []string{"pods 5-14 expired"}) {
		t.Errorf("onGap heard %q", g)
	}
}

// Resuming while the checkpoint says a relist was being printed: the
// informer lists again at once, the gap keeping that relist's reason.
func TestCursorResumesARelist(t *testing.T) {
	h := newHistory(t)
	h.list("12", pod("a", "", "9"))
	h.list("14", pod("a", "", "13"))
	r, gaps := startCursor(t, h, &informer.ResumePoint{ResourceVersion: "5", Known: []runtime.Object{pod("a", "", "3")}, Relist: &informer.Gap{From: "5", To: "11", Reason: informer.GapInterrupted}})
	got := r.waitFor(t, 4)
	want := []string{"add a@9 initial", "position at 5", "update a@13 gap 5-14 interrupted", "position at 14"}
	if !slices.Equal(got, want) {
		t.Errorf("told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if g := gaps(); !slices.Equal(g, []string{"pods 5-14 interrupted"}) {
		t.Errorf("onGap heard %q", g)
	}
	if req := h.requests(); !slices.Equal(req[:3], []string{"list", "list", "watch rv=14"}) {
		t.Errorf("requests %q, want no watch from the resume point", req)
	}
}
