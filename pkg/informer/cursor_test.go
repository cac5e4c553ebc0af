package informer_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/scripted"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// marks records what a cursor's handler is told, one line per call.
type marks struct {
	scripted.Lines
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

func (r *marks) OnAdd(obj any, initial bool, m informer.Mark) {
	s := "add " + objName(obj)
	if initial {
		s += " initial"
	}
	r.Add(s + describeMark(m))
}
func (r *marks) OnUpdate(_, obj any, m informer.Mark) {
	r.Add("update " + objName(obj) + describeMark(m))
}
func (r *marks) OnDelete(obj any, m informer.Mark) { r.Add("delete " + objName(obj) + describeMark(m)) }
func (r *marks) OnPosition(m informer.Mark)        { r.Add("position" + describeMark(m)) }

// wantTold waits until the handler has been told as many things as want
// holds, and checks they are want, in order.
func (r *marks) wantTold(t *testing.T, want ...string) {
	t.Helper()
	if got := r.WaitFor(t, len(want)); !slices.Equal(got, want) {
		t.Errorf("told\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// startCursor runs a feed informer of pods on h with a cursor resuming from
// from, and returns what its handler is told and the gaps onGap heard.
func startCursor(t *testing.T, h *scripted.Pods, from *informer.ResumePoint) (*marks, *scripted.Lines) {
	t.Helper()
	f := informer.NewFactoryWithClients(informer.Clients{Metadata: h.Client}, informer.Config{})
	gaps := &scripted.Lines{}
	c := informer.NewCursor(podsRes, from, func(res informer.Resource, g informer.Gap) {
		gaps.Add(fmt.Sprintf("%s %s-%s %s", res.Name(), g.From, g.To, g.Reason))
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
	return r, gaps
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
	h := scripted.New(t)
	h.List("10", scripted.Pod("a", "4"), scripted.Pod("b", "7"))
	w := h.Watch()
	h.List("40", scripted.Pod("a", "30"), scripted.Pod("c", "35"))
	r, gaps := startCursor(t, h, nil)
	r.WaitFor(t, 3)
	w.Modify(scripted.Pod("a", "11"))
	w.Action(watch.Bookmark, bookmark("20"))
	r.WaitFor(t, 5)
	// The server no longer has 20: the informer lists again.
	w.Error(expired())
	r.wantTold(t,
		"add a@4 initial",
		"add b@7 initial",
		"position at 10",
		"update a@11 at 11",
		"position at 20",
		"delete tombstone b@7 gap 20-40 expired",
		"update a@30 gap 20-40 expired",
		"add c@35 gap 20-40 expired",
		"position at 40",
	)
	if g := gaps.All(); !slices.Equal(g, []string{"pods 20-40 expired"}) {
		t.Errorf("onGap heard %q", g)
	}
	if req := h.Requests(); !slices.Equal(req[:4], []string{"list", "watch rv=10", "list", "watch rv=40"}) {
		t.Errorf("requests %q", req)
	}
}

// A watch that ends at once without a word, as the API server answers a
// watch of Events from a resourceVersion etcd compacted away
// (kubernetes/kubernetes#137089): the informer lists again, marked expired.
func TestCursorStaleWatchIsExpired(t *testing.T) {
	h := scripted.New(t)
	h.List("10", scripted.Pod("a", "4"))
	w := h.Watch()
	stale := h.Watch()
	h.List("50", scripted.Pod("a", "45"))
	r, gaps := startCursor(t, h, nil)
	r.WaitFor(t, 2)
	w.Modify(scripted.Pod("a", "12"))
	r.WaitFor(t, 3)
	// The watch ends as a server's timeout ends it; the next one, from 12,
	// ends at once.
	w.Stop()
	stale.Stop()
	r.wantTold(t, "add a@4 initial", "position at 10", "update a@12 at 12", "update a@45 gap 12-50 expired", "position at 50")
	if g := gaps.All(); !slices.Equal(g, []string{"pods 12-50 expired"}) {
		t.Errorf("onGap heard %q", g)
	}
}

// A watch that fails with another error lists again too: the gap says
// interrupted, and an informer that holds nothing finds nothing deleted, so
// the list's end is handed on at once.
func TestCursorInterruptedRelist(t *testing.T) {
	h := scripted.New(t)
	h.List("10")
	w := h.Watch()
	h.List("60")
	r, gaps := startCursor(t, h, nil)
	r.WaitFor(t, 1)
	w.Error(&apierrors.NewInternalError(fmt.Errorf("etcd is sad")).ErrStatus)
	r.wantTold(t, "position at 10", "position at 60")
	if g := gaps.All(); !slices.Equal(g, []string{"pods 10-60 interrupted"}) {
		t.Errorf("onGap heard %q", g)
	}
}

// Resuming: the first list is the server's, with the known objects it lacks
// added, at the resume point; the watch starts there and tells each change
// since, unmarked by any gap.
func TestCursorResumes(t *testing.T) {
	h := scripted.New(t)
	// At 5 the feed knew a and x; since, a changed (9), x went (8), n came (7).
	h.List("12", scripted.Pod("a", "9"), scripted.Pod("n", "7"))
	w := h.Watch()
	r, _ := startCursor(t, h, &informer.ResumePoint{ResourceVersion: "5", Known: []runtime.Object{scripted.Pod("a", "3"), scripted.Pod("x", "2")}})
	r.WaitFor(t, 4)
	w.Add(scripted.Pod("n", "7"))
	w.Delete(scripted.Pod("x", "8"))
	w.Modify(scripted.Pod("a", "9"))
	r.wantTold(t,
		"add a@9 initial",
		"add n@7 initial",
		"add x@2 initial",
		"position at 5",
		"update n@7 at 7",
		"delete x@8 at 8",
		"update a@9 at 9",
	)
	if req := h.Requests(); !slices.Equal(req[:2], []string{"list", "watch rv=5"}) {
		t.Errorf("requests %q", req)
	}
}

// Resuming from a point the server no longer has: the watch is refused with
// 410, and the relist's notifications fill the gap from the resume point,
// the known object deleted since among them.
func TestCursorResumesFromExpiredPoint(t *testing.T) {
	h := scripted.New(t)
	h.List("12", scripted.Pod("a", "9"))
	h.WatchFails(apierrors.NewResourceExpired("too old resource version: 5 (10)"))
	h.List("14", scripted.Pod("a", "13"))
	r, gaps := startCursor(t, h, &informer.ResumePoint{ResourceVersion: "5", Known: []runtime.Object{scripted.Pod("a", "3"), scripted.Pod("x", "2")}})
	r.wantTold(t,
		"add a@9 initial",
		"add x@2 initial",
		"position at 5",
		"delete tombstone x@2 gap 5-14 expired",
		"update a@13 gap 5-14 expired",
		"position at 14",
	)
	if g := gaps.All(); !slices.Equal(g, []string{"pods 5-14 expired"}) {
		t.Errorf("onGap heard %q", g)
	}
}

// Resuming while the checkpoint says a relist was being printed: the
// informer lists again at once, the gap keeping that relist's reason.
func TestCursorResumesARelist(t *testing.T) {
	h := scripted.New(t)
	h.List("12", scripted.Pod("a", "9"))
	h.List("14", scripted.Pod("a", "13"))
	r, gaps := startCursor(t, h, &informer.ResumePoint{ResourceVersion: "5", Known: []runtime.Object{scripted.Pod("a", "3")}, Relist: &informer.Gap{From: "5", To: "11", Reason: informer.GapInterrupted}})
	r.wantTold(t, "add a@9 initial", "position at 5", "update a@13 gap 5-14 interrupted", "position at 14")
	if g := gaps.All(); !slices.Equal(g, []string{"pods 5-14 interrupted"}) {
		t.Errorf("onGap heard %q", g)
	}
	if req := h.Requests(); !slices.Equal(req[:3], []string{"list", "list", "watch rv=14"}) {
		t.Errorf("requests %q, want no watch from the resume point", req)
	}
}
