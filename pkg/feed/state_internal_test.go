package feed

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// exportState is the whole State the feed knows, computed afresh: what the
// Deltas handed to Record must add up to.
func (f *Feed) exportState() *State {
	keys := map[objectKey]bool{}
	for k := range f.last {
		keys[k] = true
	}
	st := &State{Positions: maps.Clone(f.positions)}
	if s := f.ownerScope(); s != nil {
		for k := range s.graph.feedUIDs {
			keys[k] = true
		}
		for _, uid := range slices.Sorted(maps.Keys(s.graph.nodes)) {
			if n := s.graph.nodes[uid]; len(n.objs) == 0 {
				st.Owners = append(st.Owners, Owner{UID: uid, Refs: n.refs})
			}
		}
	}
	for k := range keys {
		if kn, ok := f.known(k); ok {
			st.Objects = append(st.Objects, kn)
		}
	}
	sortKnown(st.Objects)
	return st
}

// Checkpoint adds up Deltas as a checkpoint does. The external tests use it
// too, as the Record of the feeds they run: it is safe for concurrent use.
type Checkpoint struct {
	mu        sync.Mutex
	positions map[int]string
	objects   map[string]Known
	owners    map[types.UID]Owner
	printed   int
}

// NewCheckpoint returns an empty Checkpoint.
func NewCheckpoint() *Checkpoint {
	return &Checkpoint{positions: map[int]string{}, objects: map[string]Known{}, owners: map[types.UID]Owner{}}
}

// Record applies d.
func (c *Checkpoint) Record(d *Delta) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.Copy(c.positions, d.Positions)
	key := func(k Known) string { return fmt.Sprintf("%d %s/%s", k.Source, k.Namespace, k.Name) }
	for _, k := range d.Drop {
		delete(c.objects, key(k))
	}
	for _, k := range d.Put {
		c.objects[key(k)] = k
	}
	for _, uid := range d.DropOwners {
		delete(c.owners, uid)
	}
	for _, o := range d.PutOwners {
		c.owners[o.UID] = o
	}
	c.printed += d.Printed
	return nil
}

// State is what the Deltas add up to, sorted as the feed sorts its State.
func (c *Checkpoint) State() *State {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := &State{Positions: maps.Clone(c.positions), Objects: slices.Collect(maps.Values(c.objects))}
	sortKnown(st.Objects)
	for _, uid := range slices.Sorted(maps.Keys(c.owners)) {
		st.Owners = append(st.Owners, c.owners[uid])
	}
	return st
}

// Printed is the number of events the Deltas count as printed.
func (c *Checkpoint) Printed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.printed
}

// recordAndCheck is the world's Record: the Deltas so far must add up to
// what the feed knows, and count every event emitted.
func (w *world) recordAndCheck(d *Delta) error {
	_ = w.recorded.Record(d)
	if diff := cmp.Diff(w.f.exportState(), w.recorded.State()); diff != "" {
		w.problems = append(w.problems, "the Deltas do not add up to the feed's State (-feed +recorded):\n"+diff)
	}
	if w.recorded.Printed() != w.emitted {
		w.problems = append(w.problems, fmt.Sprintf("the Deltas count %d events printed, the feed emitted %d", w.recorded.Printed(), w.emitted))
	}
	return nil
}

// backlogged is a notification a watch resumed from a checkpoint delivers.
type backlogged struct {
	src     int
	deleted bool
	obj     *metav1.PartialObjectMetadata
}

// restart stops the feed as SIGTERM does, runs whileDown with the feed's
// informers and the lookup not running, then starts a feed restored from
// what the Deltas recorded, as `kubectl idx watch --checkpoint` resumes: its
// informers list what the API server holds now, with stubs for what was
// recorded and is gone, then their watches, resumed from the recorded
// positions, deliver what whileDown changed; the lookup, started afresh,
// reports every owner it lists, before those watch notifications when
// reportsFirst is set, after them otherwise.
func (w *world) restart(reportsFirst bool, whileDown func()) {
	w.t.Helper()
	w.settle()
	w.stopped.Store(true)
	w.cancel()
	w.next <- struct{}{}
	if err := <-w.runErr; err != nil {
		w.t.Fatalf("Run: %v", err)
	}
	w.backlog = []backlogged{}
	mode := w.lookup.mode
	w.lookup.mode = down
	whileDown()
	backlog := w.backlog
	w.backlog = nil
	w.lookup.mode = mode

	w.scope = NewOwnerScope(w.root, w.lookup)
	w.f = New(Config{
		Scope: AllOf(NameScope{}, w.scope), Now: func() time.Time { return time.Unix(0, 0) }, Record: w.recordAndCheck,
		Restore: w.recorded.State(),
		Stub: func(k Known) runtime.Object {
			kind := w.sources[k.Source]
			return &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{APIVersion: kindVersions[kind], Kind: kind},
				ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name, UID: k.UID, ResourceVersion: k.ResourceVersion, OwnerReferences: k.Refs},
			}
		},
	})
	inner := w.lookup.fn
	w.lookup.fn = func(ch OwnerChange) { w.pushed++; inner(ch) }
	w.handlers = nil
	for i := range w.sources {
		w.handlers = append(w.handlers, w.f.Handler(i))
	}
	// The informers' first lists.
	w.seen = map[string]*metav1.PartialObjectMetadata{}
	for src, kind := range w.sources {
		var listed []*metav1.PartialObjectMetadata
		for _, o := range w.truth {
			if o.Kind == kind {
				listed = append(listed, o)
			}
		}
		for _, st := range w.f.Stubs(src) {
			o := st.(*metav1.PartialObjectMetadata)
			if !slices.ContainsFunc(listed, func(l *metav1.PartialObjectMetadata) bool { return l.Name == o.Name }) {
				listed = append(listed, o)
			}
		}
		slices.SortFunc(listed, func(a, b *metav1.PartialObjectMetadata) int { return strings.Compare(a.Name, b.Name) })
		for _, o := range listed {
			w.seen[storeKey(o)] = o
			w.handlers[src].OnAdd(o, true)
		}
	}
	// The lookup lists afresh.
	w.lookup.mu.Lock()
	w.lookup.store = map[types.UID]*metav1.PartialObjectMetadata{}
	var reports []OwnerChange
	for _, uid := range slices.Sorted(maps.Keys(w.truth)) {
		if o := w.truth[uid]; o.Kind != "Pod" {
			w.lookup.store[uid] = o
			reports = append(reports, OwnerChange{Kind: schema.FromAPIVersionAndKind(o.APIVersion, o.Kind), UID: uid, Refs: o.OwnerReferences})
		}
	}
	w.lookup.mu.Unlock()
	report := func() {
		for _, ch := range reports {
			w.lookup.fn(ch)
		}
	}
	if reportsFirst {
		report()
	}
	for _, b := range backlog {
		if b.deleted {
			w.handlers[b.src].OnDelete(b.obj)
		} else {
			w.handlers[b.src].OnUpdate(nil, b.obj)
		}
	}
	if !reportsFirst {
		report()
	}
	w.stopped.Store(false)
	w.run()
	w.pushed = 0
}

// restartVariants runs a restart scenario with the ReplicaSets in the feed or
// only known to the lookup, and the lookup's reports before or after the
// resumed watches' notifications.
func restartVariants(t *testing.T, run func(t *testing.T, sources []string, reportsFirst bool)) {
	for _, sources := range [][]string{allKinds, podsOnly} {
		for _, first := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/reports first %v", strings.Join(sources, ","), first), func(t *testing.T) {
				run(t, sources, first)
			})
		}
	}
}

// TestOwnerScopeAcrossRestart: what the garbage collector and the
// controllers do while the feed is stopped is printed once it resumes,
// exactly once, and the restored memory of owners is forgotten once the
// objects are gone.
func TestOwnerScopeAcrossRestart(t *testing.T) {
	t.Run("nothing changed", func(t *testing.T) {
		restartVariants(t, func(t *testing.T, sources []string, first bool) {
			w, _, _, _, _ := deploymentWorld(t, sources)
			w.restart(first, func() {})
			w.wantEvents("after the restart")
			w.check("after the restart")
			w.finish()
		})
	})
	t.Run("orphan cascade", func(t *testing.T) {
		restartVariants(t, func(t *testing.T, sources []string, first bool) {
			w, deploy, rs, _, _ := deploymentWorld(t, sources)
			w.restart(first, func() {
				w.update(deploy, func(o *metav1.PartialObjectMetadata) {
					terminating(o)
					o.Finalizers = []string{metav1.FinalizerOrphanDependents}
				})
				w.update(rs, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = nil })
				w.update(deploy, func(o *metav1.PartialObjectMetadata) { o.Finalizers = nil })
				w.remove(deploy)
			})
			w.check("after the restart")
			left := 0
			for _, l := range w.events() {
				if strings.HasSuffix(l, "(left)") {
					left++
				}
			}
			// The pods, and the ReplicaSet when the feed watches it.
			want := 2
			if slices.Contains(sources, "ReplicaSet") {
				want = 3
			}
			if left != want {
				t.Errorf("%d objects left the scope, want %d", left, want)
			}
			w.finish()
		})
	})
	t.Run("background cascade", func(t *testing.T) {
		restartVariants(t, func(t *testing.T, sources []string, first bool) {
			w, deploy, rs, a, b := deploymentWorld(t, sources)
			w.restart(first, func() {
				w.remove(deploy)
				w.remove(rs)
				w.update(a, terminating)
				w.remove(a)
			})
			// The pod still there counts under its deleted owners, which
			// kubectl no longer shows: the feed agrees with kubectl once it
			// is gone.
			w.update(b, terminating)
			w.remove(b)
			w.check("after the last pod went")
			w.finish()
		})
	})
	t.Run("adoption", func(t *testing.T) {
		restartVariants(t, func(t *testing.T, sources []string, first bool) {
			deploy := object("Deployment", "web")
			rs := object("ReplicaSet", "web-old")
			a, b := object("Pod", "web-old-a", rs), object("Pod", "web-old-b", rs)
			w := newWorld(t, deploy, sources, rs, a, b)
			w.events()
			w.restart(first, func() {
				w.update(rs, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = []metav1.OwnerReference{refTo(deploy)} })
			})
			w.check("after the restart")
			w.finish()
		})
	})
	t.Run("rollout", func(t *testing.T) {
		restartVariants(t, func(t *testing.T, sources []string, first bool) {
			w, deploy, rs, a, b := deploymentWorld(t, sources)
			rs2 := object("ReplicaSet", "web-2", deploy)
			w.restart(first, func() {
				w.create(rs2)
				w.create(object("Pod", "web-2-a", rs2))
				w.update(a, terminating)
				w.remove(a)
				w.create(object("Pod", "web-2-b", rs2))
				w.update(b, terminating)
				w.remove(b)
				w.update(rs, func(o *metav1.PartialObjectMetadata) { o.Labels = map[string]string{"replicas": "0"} })
			})
			w.check("after the restart")
			w.finish()
		})
	})
	t.Run("cronjob history", func(t *testing.T) {
		for _, sources := range [][]string{{"Pod"}, {"Pod", "Job"}} {
			for _, first := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%v", strings.Join(sources, ","), first), func(t *testing.T) {
					cj, old, cur, oldPod, curPod := cronJobObjects()
					w := newWorld(t, cj, sources, old, cur, oldPod, curPod)
					w.events()
					w.restart(first, func() {
						next := object("Job", "backup-300", cj)
						w.create(next)
						w.create(object("Pod", "backup-300-x", next))
						w.remove(old)
						w.update(oldPod, terminating)
						w.remove(oldPod)
					})
					w.check("after the restart")
					w.finish()
				})
			}
		}
	})
}
