package feed

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
)

// These tests play what the API server, the garbage collector and the
// informers do, one notification batch at a time, and check after each
// scenario that replaying the feed's events gives exactly the objects under
// the root, and that the scope has forgotten everything once the objects are
// gone.

var kindVersions = map[string]string{
	"Pod": "v1", "ReplicaSet": "apps/v1", "Deployment": "apps/v1",
	"Job": "batch/v1", "CronJob": "batch/v1", "App": "example.com/v1",
}

// object returns a metadata-only object of kind, as MetadataOnly informers
// deliver them, with UID "<kind>-<name>".
func object(kind, name string, owners ...*metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: kindVersions[kind], Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(strings.ToLower(kind) + "-" + name)},
	}
	for _, ow := range owners {
		o.OwnerReferences = append(o.OwnerReferences, refTo(ow))
	}
	return o
}

func refTo(o *metav1.PartialObjectMetadata) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID, Controller: ptr.To(true)}
}

// lookupMode is how the owner lookup keeps up with the API server.
type lookupMode int

const (
	// inStep: the lookup's store changes and its report is queued with the
	// change, as when its informer and the feed's are equally fast.
	inStep lookupMode = iota
	// storeAhead: the store changes at once, the report comes at catch-up: an
	// informer's store is updated before its handlers run.
	storeAhead
	// down: the lookup's watch is down; at catch-up it lists again, reporting
	// what changed in the gap, deletions with their last state.
	down
)

// scriptLookup is an OwnerLookup whose store the world sets.
type scriptLookup struct {
	mu      sync.Mutex
	store   map[types.UID]*metav1.PartialObjectMetadata
	fn      func(OwnerChange)
	mode    lookupMode
	pending []OwnerChange
}

func (l *scriptLookup) OwnerReferences(_ context.Context, _ schema.GroupVersionKind, uid types.UID, _ bool) ([]metav1.OwnerReference, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o, ok := l.store[uid]
	if !ok {
		return nil, false
	}
	return o.OwnerReferences, true
}

func (l *scriptLookup) OnOwnerChange(fn func(OwnerChange)) { l.fn = fn }

// world is a namespace, the feed watching some of its kinds with --owner, and
// the lookup following the other kinds.
type world struct {
	t       *testing.T
	root    types.UID
	sources []string
	rv      int
	// truth is what the API server holds.
	truth map[types.UID]*metav1.PartialObjectMetadata
	// seen is what the feed's informers hold, by kind and name as an
	// informer's store keys them; feedDown names the kinds whose watch is
	// down, so that changes wait for a relist.
	seen     map[string]*metav1.PartialObjectMetadata
	feedDown map[string]bool
	lookup   *scriptLookup
	scope    *OwnerScope
	f        *Feed
	handlers []cache.ResourceEventHandler

	pushed     int
	done, next chan struct{}
	stopped    atomic.Bool
	cancel     context.CancelFunc
	runErr     chan error

	// replay is what a consumer rebuilds from the events: UID to
	// resourceVersion.
	replay map[types.UID]string
	// recorded adds up the feed's Deltas; emitted counts its events.
	recorded *Checkpoint
	emitted  int
	// backlog, while the feed is stopped (restart), holds the notifications
	// its informers' watches will deliver when it resumes.
	backlog  []backlogged
	lines    []string
	problems []string
}

// newWorld starts a feed of sources (kinds, in source order) under root, with
// objs as the initial state.
func newWorld(t *testing.T, root *metav1.PartialObjectMetadata, sources []string, objs ...*metav1.PartialObjectMetadata) *world {
	t.Helper()
	w := &world{
		t: t, root: root.UID, sources: sources,
		truth: map[types.UID]*metav1.PartialObjectMetadata{}, seen: map[string]*metav1.PartialObjectMetadata{},
		feedDown: map[string]bool{},
		lookup:   &scriptLookup{store: map[types.UID]*metav1.PartialObjectMetadata{}},
		done:     make(chan struct{}), next: make(chan struct{}), runErr: make(chan error, 1),
		replay: map[types.UID]string{}, recorded: NewCheckpoint(),
	}
	w.scope = NewOwnerScope(root.UID, w.lookup)
	w.f = New(Config{Scope: AllOf(NameScope{}, w.scope), Now: func() time.Time { return time.Unix(0, 0) }, Record: w.recordAndCheck})
	inner := w.lookup.fn
	w.lookup.fn = func(ch OwnerChange) { w.pushed++; inner(ch) }
	for i := range sources {
		w.handlers = append(w.handlers, w.f.Handler(i))
	}
	for _, o := range append([]*metav1.PartialObjectMetadata{root}, objs...) {
		o = w.stamp(o.DeepCopy())
		w.truth[o.UID] = o
		if o.Kind != "Pod" {
			w.lookup.store[o.UID] = o
		}
		if src := slices.Index(sources, o.Kind); src >= 0 {
			w.seen[storeKey(o)] = o
			w.handlers[src].OnAdd(o, true)
		}
	}
	w.run()
	return w
}

// run runs the feed in the background and waits for its first flush: each
// flush then holds the feed until the next step has queued its
// notifications.
func (w *world) run() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go func() {
		w.runErr <- w.f.Run(ctx, w.emit, func() error {
			if w.stopped.Load() {
				return nil
			}
			w.done <- struct{}{}
			<-w.next
			return nil
		})
	}()
	<-w.done
}

func (w *world) stamp(o *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	w.rv++
	o.ResourceVersion = strconv.Itoa(w.rv)
	return o
}

func (w *world) emit(ev *Event) error {
	w.emitted++
	m := ev.Object.(*metav1.PartialObjectMetadata)
	line := fmt.Sprintf("%s %s/%s", ev.Type, m.Kind, m.Name)
	if ev.DetectedOnRelist {
		line += " (relist)"
	}
	if ev.LeftScope {
		line += " (left)"
	}
	w.lines = append(w.lines, line)
	_, present := w.replay[m.UID]
	switch {
	case ev.Type == Added && present, ev.Type != Added && !present:
		w.problems = append(w.problems, line+": does not apply to the replayed state")
	case ev.Type == Deleted:
		delete(w.replay, m.UID)
	default:
		w.replay[m.UID] = m.ResourceVersion
	}
	if ev.LeftScope && (ev.Type != Deleted || w.truth[m.UID] == nil) {
		w.problems = append(w.problems, line+": left the scope but is not an existing object's DELETED")
	}
	return nil
}

// settle lets the feed handle what the last step queued.
func (w *world) settle() {
	if w.pushed == 0 {
		return
	}
	w.pushed = 0
	w.next <- struct{}{}
	<-w.done
}

func (w *world) toFeed(old, o *metav1.PartialObjectMetadata) {
	kind := cmpOr(o, old).Kind
	src := slices.Index(w.sources, kind)
	if src < 0 || w.feedDown[kind] {
		return
	}
	if w.backlog != nil {
		w.backlog = append(w.backlog, backlogged{src: src, deleted: o == nil, obj: cmpOr(o, old)})
		return
	}
	key := storeKey(cmpOr(o, old))
	prev := w.seen[key]
	w.pushed++
	switch {
	case o == nil:
		delete(w.seen, key)
		w.handlers[src].OnDelete(prev)
	case prev == nil:
		w.seen[key] = o
		w.handlers[src].OnAdd(o, false)
	default:
		w.seen[key] = o
		w.handlers[src].OnUpdate(prev, o)
	}
}

func storeKey(o *metav1.PartialObjectMetadata) string {
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

func cmpOr(a, b *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	if a != nil {
		return a
	}
	return b
}

func (w *world) toLookup(old, o *metav1.PartialObjectMetadata) {
	cur := cmpOr(o, old)
	if cur.Kind == "Pod" || w.lookup.mode == down {
		return
	}
	w.lookup.mu.Lock()
	if o == nil {
		delete(w.lookup.store, cur.UID)
	} else {
		w.lookup.store[cur.UID] = o
	}
	w.lookup.mu.Unlock()
	ch := OwnerChange{Kind: schema.FromAPIVersionAndKind(cur.APIVersion, cur.Kind), UID: cur.UID, Deleted: o == nil, Refs: cur.OwnerReferences}
	if old != nil && o != nil && index.SameOwnerRefs(old.OwnerReferences, o.OwnerReferences) {
		return
	}
	if w.lookup.mode == storeAhead {
		w.lookup.pending = append(w.lookup.pending, ch)
		return
	}
	w.lookup.fn(ch)
}

// create, update and remove change the API server's objects and let the feed
// handle the notifications.
func (w *world) create(o *metav1.PartialObjectMetadata) {
	o = w.stamp(o.DeepCopy())
	w.truth[o.UID] = o
	w.toFeed(nil, o)
	w.toLookup(nil, o)
	w.settle()
}

func (w *world) update(o *metav1.PartialObjectMetadata, mutate func(*metav1.PartialObjectMetadata)) {
	old := w.truth[o.UID]
	if old == nil {
		w.t.Fatalf("update of %s, which does not exist", o.Name)
	}
	n := old.DeepCopy()
	mutate(n)
	n = w.stamp(n)
	w.truth[o.UID] = n
	w.toFeed(old, n)
	w.toLookup(old, n)
	w.settle()
}

func (w *world) remove(o *metav1.PartialObjectMetadata) {
	old := w.truth[o.UID]
	if old == nil {
		w.t.Fatalf("delete of %s, which does not exist", o.Name)
	}
	delete(w.truth, o.UID)
	w.toFeed(old, nil)
	w.toLookup(old, nil)
	w.settle()
}

// terminating is what a graceful deletion changes first.
func terminating(o *metav1.PartialObjectMetadata) {
	o.DeletionTimestamp = ptr.To(metav1.Unix(1, 0))
}

// relistFeed ends the gap of kind's watch: the informer lists again.
func (w *world) relistFeed(kind string) {
	w.feedDown[kind] = false
	src := slices.Index(w.sources, kind)
	listed := map[string]*metav1.PartialObjectMetadata{}
	for _, o := range w.truth {
		if o.Kind == kind {
			listed[storeKey(o)] = o
		}
	}
	// As client-go's DeltaFIFO replaces: every object listed, then a tombstone
	// for every one that is gone.
	for _, key := range slices.Sorted(maps.Keys(listed)) {
		o, prev := listed[key], w.seen[key]
		w.seen[key] = o
		w.pushed++
		if prev == nil {
			w.handlers[src].OnAdd(o, false)
		} else {
			w.handlers[src].OnUpdate(prev, o)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(w.seen)) {
		if prev := w.seen[key]; prev.Kind == kind && listed[key] == nil {
			delete(w.seen, key)
			w.pushed++
			w.handlers[src].OnDelete(cache.DeletedFinalStateUnknown{Key: "shop/" + prev.Name, Obj: prev})
		}
	}
	w.settle()
}

// catchUp brings the lookup up to date: the reports a storeAhead lookup held
// back, or a relist after it was down.
func (w *world) catchUp() {
	switch w.lookup.mode {
	case storeAhead:
		for _, ch := range w.lookup.pending {
			w.lookup.fn(ch)
		}
		w.lookup.pending = nil
	case down:
		w.lookup.mu.Lock()
		var changes []OwnerChange
		for uid, o := range w.truth {
			if o.Kind == "Pod" {
				continue
			}
			prev := w.lookup.store[uid]
			w.lookup.store[uid] = o
			if prev == nil || !index.SameOwnerRefs(prev.OwnerReferences, o.OwnerReferences) {
				changes = append(changes, OwnerChange{Kind: schema.FromAPIVersionAndKind(o.APIVersion, o.Kind), UID: uid, Refs: o.OwnerReferences})
			}
		}
		for uid, prev := range w.lookup.store {
			if w.truth[uid] == nil {
				delete(w.lookup.store, uid)
				changes = append(changes, OwnerChange{Kind: schema.FromAPIVersionAndKind(prev.APIVersion, prev.Kind), UID: uid, Deleted: true, Refs: prev.OwnerReferences})
			}
		}
		w.lookup.mu.Unlock()
		for _, ch := range changes {
			w.lookup.fn(ch)
		}
	}
	w.lookup.mode = inStep
	w.settle()
}

// underRoot is what `kubectl get` shows under the root now: the watched
// objects that are the root or reach it through existing owners.
func (w *world) underRoot() map[types.UID]string {
	want := map[types.UID]string{}
	var reaches func(o *metav1.PartialObjectMetadata, depth int) bool
	reaches = func(o *metav1.PartialObjectMetadata, depth int) bool {
		if o.UID == w.root {
			return true
		}
		if depth > 16 {
			return false
		}
		for _, r := range o.OwnerReferences {
			if owner := w.truth[r.UID]; owner != nil && reaches(owner, depth+1) {
				return true
			}
		}
		return false
	}
	for uid, o := range w.truth {
		if slices.Contains(w.sources, o.Kind) && reaches(o, 0) {
			want[uid] = o.ResourceVersion
		}
	}
	return want
}

// check compares the replay with what is under the root.
func (w *world) check(when string) {
	w.t.Helper()
	if diff := cmp.Diff(w.underRoot(), w.replay); diff != "" {
		w.t.Errorf("%s: replayed feed differs from the objects under the root (-want +got):\n%s\nevents:\n%s", when, diff, strings.Join(w.lines, "\n"))
	}
	for _, p := range w.problems {
		w.t.Errorf("%s: %s", when, p)
	}
	w.problems = nil
}

// events returns the events emitted since the last call.
func (w *world) events() []string {
	l := w.lines
	w.lines = nil
	return l
}

// finish deletes what is left, children first, checks the feed and that the
// scope remembers nothing, and stops the feed.
func (w *world) finish() {
	w.t.Helper()
	for len(w.truth) > 0 {
		var leaf *metav1.PartialObjectMetadata
		for _, o := range w.truth {
			owned := false
			for _, d := range w.truth {
				for _, r := range d.OwnerReferences {
					owned = owned || r.UID == o.UID && d.UID != o.UID
				}
			}
			if !owned && (leaf == nil || o.UID < leaf.UID) {
				leaf = o
			}
		}
		if leaf == nil {
			// A cycle: break it anywhere.
			for _, o := range w.truth {
				if leaf == nil || o.UID < leaf.UID {
					leaf = o
				}
			}
		}
		w.remove(leaf)
	}
	w.check("after deleting everything")
	g := &w.scope.graph
	if len(g.nodes)+len(g.dependents)+len(g.feedUIDs)+len(w.scope.missing) > 0 {
		w.t.Errorf("the scope still remembers %d nodes, %d owners' dependents, %d feed objects, %d missing owners", len(g.nodes), len(g.dependents), len(g.feedUIDs), len(w.scope.missing))
	}
	w.stopped.Store(true)
	w.cancel()
	w.next <- struct{}{}
	if err := <-w.runErr; err != nil {
		w.t.Fatalf("Run: %v", err)
	}
	for _, p := range w.problems {
		w.t.Errorf("at the end: %s", p)
	}
}

func (w *world) wantEvents(when string, want ...string) {
	w.t.Helper()
	if diff := cmp.Diff(want, w.events()); diff != "" {
		w.t.Errorf("%s: events (-want +got):\n%s", when, diff)
	}
}

// deploymentWorld is a world of sources over deploymentObjects, rooted at the Deployment,
// whose initial events have been taken; it returns the world, the Deployment, its ReplicaSet
// and their two pods.
func deploymentWorld(t *testing.T, sources []string) (w *world, deploy, rs, a, b *metav1.PartialObjectMetadata) {
	t.Helper()
	deploy, rs, a, b, objs := deploymentObjects()
	w = newWorld(t, deploy, sources, objs...)
	w.events()
	return w, deploy, rs, a, b
}

// deployment returns a Deployment web with ReplicaSet web-1 and pods a and b,
// and an unrelated Deployment api with its ReplicaSet and pod.
func deploymentObjects() (deploy, rs, a, b *metav1.PartialObjectMetadata, others []*metav1.PartialObjectMetadata) {
	deploy = object("Deployment", "web")
	rs = object("ReplicaSet", "web-1", deploy)
	a, b = object("Pod", "web-1-a", rs), object("Pod", "web-1-b", rs)
	api := object("Deployment", "api")
	apiRS := object("ReplicaSet", "api-1", api)
	return deploy, rs, a, b, []*metav1.PartialObjectMetadata{rs, a, b, api, apiRS, object("Pod", "api-1-a", apiRS), object("Pod", "bare")}
}

// cronJobObjects returns a CronJob backup with the Jobs of two runs, old and
// cur, and a pod of each.
func cronJobObjects() (cj, old, cur, oldPod, curPod *metav1.PartialObjectMetadata) {
	cj = object("CronJob", "backup")
	old, cur = object("Job", "backup-100", cj), object("Job", "backup-200", cj)
	oldPod, curPod = object("Pod", "backup-100-x", old), object("Pod", "backup-200-x", cur)
	return cj, old, cur, oldPod, curPod
}

var (
	allKinds = []string{"Pod", "ReplicaSet", "Deployment"}
	podsOnly = []string{"Pod"}
)

// variants runs a scenario with the ReplicaSets in the feed or only known to the
// lookup, and with the lookup in step or ahead of the feed.
func variants(t *testing.T, run func(t *testing.T, sources []string, mode lookupMode)) {
	for _, sources := range [][]string{allKinds, podsOnly} {
		for _, mode := range []lookupMode{inStep, storeAhead} {
			t.Run(fmt.Sprintf("%s/lookup %s", strings.Join(sources, ","), []string{"in step", "ahead"}[mode]), func(t *testing.T) {
				run(t, sources, mode)
			})
		}
	}
}

// wantCascade checks the events of a cascade that deleted the Deployment's two
// pods: theirs, and the owners' before and after them when the feed watches
// the owners' kinds too; then the scope after it, and its end.
func (w *world) wantCascade(sources, before, after []string) {
	w.t.Helper()
	want := []string{"MODIFIED Pod/web-1-a", "MODIFIED Pod/web-1-b", "DELETED Pod/web-1-a", "DELETED Pod/web-1-b"}
	if len(sources) > 1 {
		want = slices.Concat(before, want, after)
	}
	w.wantEvents("cascade", want...)
	w.check("after the cascade")
	w.finish()
}

func TestOwnerScopeBackgroundCascade(t *testing.T) {
	variants(t, func(t *testing.T, sources []string, mode lookupMode) {
		deploy, rs, a, b, objs := deploymentObjects()
		w := newWorld(t, deploy, sources, objs...)
		w.check("initial state")
		w.events()
		w.lookup.mode = mode
		// kubectl delete deployment web: the Deployment goes at once.
		w.remove(deploy)
		// The garbage collector then deletes its ReplicaSet and the pods.
		w.update(rs, terminating)
		w.remove(rs)
		w.update(a, terminating)
		w.update(b, terminating)
		w.catchUp()
		w.remove(a)
		w.remove(b)
		w.wantCascade(sources, []string{"DELETED Deployment/web", "MODIFIED ReplicaSet/web-1", "DELETED ReplicaSet/web-1"}, nil)
	})
}

func TestOwnerScopeForegroundCascade(t *testing.T) {
	variants(t, func(t *testing.T, sources []string, mode lookupMode) {
		w, deploy, rs, a, b := deploymentWorld(t, sources)
		w.lookup.mode = mode
		foreground := func(o *metav1.PartialObjectMetadata) {
			terminating(o)
			o.Finalizers = []string{metav1.FinalizerDeleteDependents}
		}
		w.update(deploy, foreground)
		w.update(rs, foreground)
		w.update(a, terminating)
		w.update(b, terminating)
		w.remove(a)
		w.remove(b)
		w.catchUp()
		w.remove(rs)
		w.remove(deploy)
		w.wantCascade(sources, []string{"MODIFIED Deployment/web", "MODIFIED ReplicaSet/web-1"}, []string{"DELETED ReplicaSet/web-1", "DELETED Deployment/web"})
	})
}

func TestOwnerScopeOrphanCascade(t *testing.T) {
	variants(t, func(t *testing.T, sources []string, mode lookupMode) {
		w, deploy, rs, _, _ := deploymentWorld(t, sources)
		w.lookup.mode = mode
		// kubectl delete deployment web --cascade=orphan: the garbage collector
		// strips the ReplicaSet's reference, then lets the Deployment go. The
		// pods do not change.
		w.update(deploy, func(o *metav1.PartialObjectMetadata) {
			terminating(o)
			o.Finalizers = []string{metav1.FinalizerOrphanDependents}
		})
		w.update(rs, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = nil })
		w.catchUp()
		w.update(deploy, func(o *metav1.PartialObjectMetadata) { o.Finalizers = nil })
		w.remove(deploy)
		want := []string{"DELETED Pod/web-1-a (left)", "DELETED Pod/web-1-b (left)"}
		if len(sources) > 1 {
			want = append([]string{"MODIFIED Deployment/web", "DELETED ReplicaSet/web-1 (left)"}, want...)
			want = append(want, "MODIFIED Deployment/web", "DELETED Deployment/web")
		}
		w.wantEvents("orphaning", want...)
		w.check("after orphaning")
		// What left is not followed any more.
		w.update(rs, func(o *metav1.PartialObjectMetadata) { o.Labels = map[string]string{"x": "y"} })
		w.wantEvents("a change of the orphan")
		w.finish()
	})
}

func TestOwnerScopeAdoption(t *testing.T) {
	variants(t, func(t *testing.T, sources []string, mode lookupMode) {
		deploy := object("Deployment", "web")
		rs := object("ReplicaSet", "web-old")
		a, b := object("Pod", "web-old-a", rs), object("Pod", "web-old-b", rs)
		w := newWorld(t, deploy, sources, rs, a, b)
		w.check("initial state")
		w.events()
		w.lookup.mode = mode
		// The Deployment controller adopts a ReplicaSet its selector matches; the
		// pods do not change.
		w.update(rs, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = []metav1.OwnerReference{refTo(deploy)} })
		w.catchUp()
		want := []string{"ADDED Pod/web-old-a", "ADDED Pod/web-old-b"}
		if len(sources) > 1 {
			want = append([]string{"ADDED ReplicaSet/web-old"}, want...)
		}
		w.wantEvents("adoption", want...)
		w.check("after adoption")
		// Released again, then adopted again: out, then back in.
		w.update(rs, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = nil })
		w.catchUp()
		w.check("after release")
		w.update(rs, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = []metav1.OwnerReference{refTo(deploy)} })
		w.catchUp()
		w.check("after adoption again")
		w.finish()
	})
}

func TestOwnerScopeCronJobHistory(t *testing.T) {
	for _, sources := range [][]string{{"Pod"}, {"Pod", "Job"}} {
		for _, mode := range []lookupMode{inStep, storeAhead} {
			t.Run(fmt.Sprintf("%s/%d", strings.Join(sources, ","), mode), func(t *testing.T) {
				cj, old, cur, oldPod, curPod := cronJobObjects()
				w := newWorld(t, cj, sources, old, cur, oldPod, curPod)
				w.check("initial state")
				w.events()
				w.lookup.mode = mode
				// The CronJob controller deletes the oldest Job in the background;
				// the garbage collector then deletes its pod.
				w.remove(old)
				w.catchUp()
				w.update(oldPod, terminating)
				w.remove(oldPod)
				want := []string{"MODIFIED Pod/backup-100-x", "DELETED Pod/backup-100-x"}
				if len(sources) > 1 {
					want = append([]string{"DELETED Job/backup-100"}, want...)
				}
				w.wantEvents("history cleanup", want...)
				w.check("after the cleanup")
				w.finish()
			})
		}
	}
}

// TestOwnerScopeDepth follows a chain of four: App → Deployment → ReplicaSet →
// Pod, with only pods watched, so the links in between are only the lookup's.
func TestOwnerScopeDepth(t *testing.T) {
	for _, mode := range []lookupMode{inStep, storeAhead} {
		t.Run(strconv.Itoa(int(mode)), func(t *testing.T) {
			app := object("App", "shop")
			deploy := object("Deployment", "web", app)
			rs := object("ReplicaSet", "web-1", deploy)
			a := object("Pod", "web-1-a", rs)
			w := newWorld(t, app, podsOnly, deploy, rs, a)
			w.wantEvents("initial state", "ADDED Pod/web-1-a")
			w.lookup.mode = mode
			// The App orphans the Deployment: the pod two levels below leaves.
			w.update(deploy, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = nil })
			w.catchUp()
			w.wantEvents("orphaned two levels up", "DELETED Pod/web-1-a (left)")
			w.check("after orphaning")
			w.update(deploy, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = []metav1.OwnerReference{refTo(app)} })
			w.catchUp()
			w.wantEvents("adopted two levels up", "ADDED Pod/web-1-a")
			// A new rollout: its ReplicaSet and pod enter as they are created.
			rs2 := object("ReplicaSet", "web-2", deploy)
			w.create(rs2)
			w.create(object("Pod", "web-2-a", rs2))
			w.catchUp()
			w.check("after a rollout")
			// Background deletion from the top, each level after the one above.
			w.remove(app)
			w.remove(deploy)
			w.catchUp()
			w.remove(rs)
			w.remove(rs2)
			w.catchUp()
			w.update(a, terminating)
			w.wantEvents("deletion above", "ADDED Pod/web-2-a", "MODIFIED Pod/web-1-a")
			w.finish()
		})
	}
}

// TestOwnerScopeRelist: the feed's watch of pods is down while the
// Deployment is deleted in the background; the relist finds the pods gone. The
// lookup's watch is down too and finds the ReplicaSet gone.
func TestOwnerScopeRelist(t *testing.T) {
	for _, sources := range [][]string{allKinds, podsOnly} {
		t.Run(strings.Join(sources, ","), func(t *testing.T) {
			w, deploy, rs, a, b := deploymentWorld(t, sources)
			w.feedDown["Pod"] = true
			w.lookup.mode = down
			w.remove(deploy)
			w.remove(rs)
			w.update(a, terminating)
			w.update(b, terminating)
			w.remove(a)
			// A pod that changed while the watch was down, then had its
			// ReplicaSet deleted, is still in scope when the relist finds it.
			w.catchUp()
			w.relistFeed("Pod")
			w.remove(b)
			want := []string{"MODIFIED Pod/web-1-b", "DELETED Pod/web-1-a (relist)", "DELETED Pod/web-1-b"}
			if len(sources) > 1 {
				want = append([]string{"DELETED Deployment/web", "DELETED ReplicaSet/web-1"}, want...)
			}
			w.wantEvents("relist", want...)
			w.check("after the relist")
			w.finish()
		})
	}
	t.Run("orphaned while the ReplicaSets' watch was down", func(t *testing.T) {
		w, _, rs, _, _ := deploymentWorld(t, allKinds)
		w.feedDown["ReplicaSet"] = true
		w.lookup.mode = down
		w.update(rs, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = nil })
		w.relistFeed("ReplicaSet")
		w.catchUp()
		w.wantEvents("relist", "DELETED ReplicaSet/web-1 (left)", "DELETED Pod/web-1-a (left)", "DELETED Pod/web-1-b (left)")
		w.check("after the relist")
		w.finish()
	})
	t.Run("pods deleted and created again under the same name", func(t *testing.T) {
		w, _, rs, a, _ := deploymentWorld(t, podsOnly)
		w.feedDown["Pod"] = true
		w.remove(a)
		again := object("Pod", a.Name, rs)
		again.UID = "pod-web-1-a-again"
		w.create(again)
		w.relistFeed("Pod")
		w.wantEvents("relist", "DELETED Pod/web-1-a (relist)", "ADDED Pod/web-1-a")
		w.check("after the relist")
		w.finish()
	})
}

func TestOwnerScopeCycle(t *testing.T) {
	deploy := object("Deployment", "web")
	x, y := object("ReplicaSet", "x"), object("ReplicaSet", "y")
	x.OwnerReferences = []metav1.OwnerReference{refTo(y)}
	y.OwnerReferences = []metav1.OwnerReference{refTo(x)}
	p := object("Pod", "x-a", x)
	w := newWorld(t, deploy, allKinds, x, y, p)
	w.wantEvents("initial state", "ADDED Deployment/web")
	// y is adopted: the cycle and what hangs from it enter.
	w.update(y, func(o *metav1.PartialObjectMetadata) {
		o.OwnerReferences = append(o.OwnerReferences, refTo(deploy))
	})
	w.wantEvents("adoption", "ADDED ReplicaSet/y", "ADDED ReplicaSet/x", "ADDED Pod/x-a")
	w.check("after adoption")
	w.update(y, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = o.OwnerReferences[:1] })
	w.wantEvents("release", "DELETED ReplicaSet/y (left)", "DELETED ReplicaSet/x (left)", "DELETED Pod/x-a (left)")
	w.check("after release")
	w.finish()
}

// TestOwnerScopeLateOwner: a pod seen before its ReplicaSet (the lookup did
// not have it in time) enters when the ReplicaSet shows up.
func TestOwnerScopeLateOwner(t *testing.T) {
	for _, sources := range [][]string{allKinds, podsOnly} {
		t.Run(strings.Join(sources, ","), func(t *testing.T) {
			deploy := object("Deployment", "web")
			rs := object("ReplicaSet", "web-1", deploy)
			w := newWorld(t, deploy, sources)
			w.events()
			w.lookup.mode = down
			w.create(object("Pod", "web-1-a", rs))
			w.create(rs)
			w.catchUp()
			w.check("after the ReplicaSet showed up")
			w.finish()
		})
	}
}
