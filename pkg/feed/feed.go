package feed

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// Type is the kind of change an Event reports, named as in a watch.Event.
type Type string

const (
	// Added: the object is new to the feed: it was in the initial state,
	// created, or (with a Scope) came into scope, again or for the first time.
	Added Type = "ADDED"
	// Modified: the object changed since it was last emitted.
	Modified Type = "MODIFIED"
	// Deleted: the object is gone, or (with LeftScope) is no longer in scope.
	Deleted Type = "DELETED"
)

// Event is one change, as emitted by Run.
type Event struct {
	Type Type
	// Time is when the informer delivered the change to the feed; for an
	// object that entered or left the scope because of an owner, when the
	// owner's change was delivered.
	Time time.Time
	// Source is the index of the resource the object belongs to.
	Source int
	// Object is the new state, or for DELETED the last state known. It is a
	// read-only cache object.
	Object runtime.Object
	// Old is, for MODIFIED, the state emitted before. Read-only.
	Old runtime.Object
	// DetectedOnRelist marks a DELETED that happened while the watch was down and
	// was found when the informer listed again; the object is its last state
	// known, so changes it went through just before deletion may be missing.
	DetectedOnRelist bool
	// LeftScope marks a DELETED of an object that still exists but no longer
	// belongs to the Scope: it stopped matching, or (OwnerScope) it, or an
	// owner above it, was orphaned or adopted elsewhere. The object is its current state. A replay that removes
	// objects on DELETED stays right without reading it; if the object comes
	// back into scope it is ADDED again.
	LeftScope bool
	// Gap is set on the events of a relist (see Mark): an object changed
	// several times in the gap is one MODIFIED, one deleted is DELETED with
	// its last state known.
	Gap *Gap
	// OldUnknown marks a MODIFIED whose state before is not known: the first
	// change of an object after a resume (Config.Restore) that changed since
	// the checkpoint, which keeps versions, not objects. Old is nil and
	// Changes empty.
	OldUnknown bool
	// Changes are, for MODIFIED with Config.Diff, the fields that changed.
	Changes []Change
	// Context is the kubeconfig context of the event in a feed over several
	// clusters; the feed leaves it empty, the caller that merges feeds sets it.
	Context string
}

// Scope decides which objects belong to the feed, beyond what the server-side
// selectors already decided.
type Scope interface {
	// Contains reports whether obj, of the resource source, belongs to the
	// feed. It is called from Run's goroutine only, and may block to look
	// things up.
	Contains(ctx context.Context, source int, obj runtime.Object) bool
}

// AllOf is the Scope of objects every one of scopes contains; nil scopes are
// skipped, and no scope at all is nil.
func AllOf(scopes ...Scope) Scope {
	var s allOf
	for _, sc := range scopes {
		if sc != nil {
			s = append(s, sc)
		}
	}
	if len(s) == 0 {
		return nil
	}
	return s
}

type allOf []Scope

func (a allOf) Contains(ctx context.Context, source int, obj runtime.Object) bool {
	for _, s := range a {
		if !s.Contains(ctx, source, obj) {
			return false
		}
	}
	return true
}

// NameScope is the Scope of objects named on the command line: names[source]
// lists the names wanted of that source; a source without names is not
// narrowed.
type NameScope map[int][]string

// Contains implements Scope.
func (n NameScope) Contains(_ context.Context, source int, obj runtime.Object) bool {
	names, ok := n[source]
	if !ok || len(names) == 0 {
		return true
	}
	m, err := meta.Accessor(obj)
	return err == nil && slices.Contains(names, m.GetName())
}

// Config is what a Feed needs besides its informers.
type Config struct {
	// WatchOnly records the informers' initial state without emitting it.
	WatchOnly bool
	// Diff fills Event.Changes for MODIFIED events.
	Diff bool
	// Scope, when non-nil, narrows the feed; an object that enters it is
	// ADDED, one that leaves it while it still exists is DELETED with
	// LeftScope, whichever scope it left. With an OwnerScope in it (alone or
	// in AllOf), membership follows the garbage collector (see OwnerScope);
	// other scopes decide by the object alone (a --where predicate: an object
	// leaves when a change makes it stop matching).
	Scope Scope
	// Now returns the time stamped on events; nil means time.Now.
	Now func() time.Time
	// Order, when set, orders the initial state within a source in place of
	// namespace and name (the events of `kubectl idx events -w` come oldest
	// first). Objects it finds equal keep namespace and name order.
	Order func(a, b runtime.Object) int
	// Restore, when set, is the State a checkpoint kept: the feed resumes
	// from it. Its informers are to resume from its positions (their first
	// list, which carries Stubs, prints nothing), and it prints what happened
	// since. Stub makes the object that stands for a restored one until a
	// list brings it whole; it is what a DELETED found on relisting prints of
	// an object deleted meanwhile.
	Restore *State
	Stub    func(Known) runtime.Object
	// Record, when set, is handed what changed in the feed's State after
	// every flush of the events that changed it (see Delta). Its error ends
	// Run.
	Record func(*Delta) error
}

// Feed turns informer notifications into Events. Create it with New, register
// Handler with every informer before starting them, then call Run.
type Feed struct {
	cfg  Config
	q    *queue
	last map[objectKey]emitted
	// owners are the OwnerScopes in cfg.Scope, which the feed tells about every
	// object it is notified of and whose objects it judges again when an owner
	// changes.
	owners []*OwnerScope

	// positions are, by source, the resourceVersion each has been delivered
	// up to (Mark).
	positions map[int]string
	// journal tracks the changes Record is to hear of; nil without Record.
	journal *journal
	// stubs stand for the objects of a restored State (see restore); resume
	// is set when there is one.
	stubs          map[runtime.Object]bool
	stubsBySource  map[int][]runtime.Object
	resume         bool
	restoredOwners []types.UID
}

// objectKey identifies an object across the feed's resources.
type objectKey struct {
	source int
	key    string
}

// emitted is what the feed last emitted for an object.
type emitted struct {
	uid types.UID
	rv  string
	obj runtime.Object
}

// New returns a Feed.
func New(cfg Config) *Feed {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	f := &Feed{cfg: cfg, q: newQueue(), last: map[objectKey]emitted{}, owners: ownerScopes(cfg.Scope),
		positions: map[int]string{}, stubsBySource: map[int][]runtime.Object{}}
	if cfg.Record != nil {
		f.journal = newJournal()
		if s := f.ownerScope(); s != nil {
			s.graph.dirty, s.graph.dirtyKeys = map[types.UID]struct{}{}, map[objectKey]struct{}{}
		}
	}
	if cfg.Restore != nil {
		f.restore(cfg.Restore)
	}
	for _, s := range f.owners {
		// Owner changes take the same queue as the informers' notifications, so
		// that what they move in or out is emitted in order with the rest.
		s.lookup.OnOwnerChange(func(ch OwnerChange) {
			f.q.push(notification{kind: notifyOwner, obj: ch, owner: s, time: f.cfg.Now()})
		})
	}
	return f
}

// ownerScopes returns the OwnerScopes in s.
func ownerScopes(s Scope) []*OwnerScope {
	switch s := s.(type) {
	case *OwnerScope:
		return []*OwnerScope{s}
	case allOf:
		var out []*OwnerScope
		for _, sc := range s {
			out = append(out, ownerScopes(sc)...)
		}
		return out
	}
	return nil
}

// Handler returns the event handler for the informer of source. It only
// timestamps and enqueues; it never blocks on the reader.
func (f *Feed) Handler(source int) cache.ResourceEventHandler {
	return handler{f: f, source: source}
}

type handler struct {
	f      *Feed
	source int
}

func (h handler) OnAdd(obj any, isInInitialList bool) {
	h.f.q.push(notification{kind: notifyAdd, source: h.source, obj: obj, initial: isInInitialList, time: h.f.cfg.Now()})
}

func (h handler) OnUpdate(_, newObj any) {
	h.f.q.push(notification{kind: notifyUpdate, source: h.source, obj: newObj, time: h.f.cfg.Now()})
}

func (h handler) OnDelete(obj any) {
	h.f.q.push(notification{kind: notifyDelete, source: h.source, obj: obj, time: h.f.cfg.Now()})
}

// drainTimeout bounds the work Run still does after ctx ends: the events
// already received are emitted, unless that takes longer than this.
const drainTimeout = 2 * time.Second

// Run emits events until ctx ends or emit fails, and returns emit's error, or
// nil when ctx ended. Call it after the informers' handlers have synced: the
// notifications queued by then are the initial state, which is emitted first,
// ordered by source, namespace and name. Run takes everything queued at once
// and calls flush after emitting it, so a buffered writer is flushed as soon as
// the feed has caught up: output stays prompt in a pipe, and under load it is
// written in batches as large as what arrived meanwhile. When ctx ends, the
// events already received are emitted and flushed before Run returns.
func (f *Feed) Run(ctx context.Context, emit func(*Event) error, flush func() error) error {
	var batch []notification
	first := true
	if f.journal != nil {
		emit = f.counted(emit)
		flush = f.recorded(flush)
	}
	f.followRestoredOwners(ctx)
	for {
		stopping := ctx.Err() != nil
		workCtx := ctx
		if stopping {
			var cancel context.CancelFunc
			workCtx, cancel = context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
			defer cancel()
		}
		batch = f.q.take(batch)
		if first {
			orderInitial(batch, f.cfg.Order)
			first = false
		}
		for i := range batch {
			if err := f.process(workCtx, &batch[i], emit); err != nil {
				return err
			}
			if stopping && workCtx.Err() != nil {
				return flush()
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if stopping {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-f.q.ready:
		}
	}
}

// counted counts the events emit took, for Delta.Printed.
func (f *Feed) counted(emit func(*Event) error) func(*Event) error {
	return func(e *Event) error {
		if err := emit(e); err != nil {
			return err
		}
		f.journal.printed++
		return nil
	}
}

// recorded hands Record what changed once flush has written the events
// that changed it.
func (f *Feed) recorded(flush func() error) func() error {
	return func() error {
		if err := flush(); err != nil {
			return err
		}
		return f.record()
	}
}

// orderInitial moves the notifications of the initial lists to the front,
// ordered by source, then by order when given, then namespace and name. Each
// object's later notifications follow its initial one in any case, so
// per-object order is kept.
func orderInitial(batch []notification, order func(a, b runtime.Object) int) {
	type keyed struct {
		n        notification
		ns, name string
	}
	var initial []keyed
	rest := batch[:0:0]
	for _, n := range batch {
		if !n.initial {
			rest = append(rest, n)
			continue
		}
		k := keyed{n: n}
		if m, err := meta.Accessor(n.obj); err == nil {
			k.ns, k.name = m.GetNamespace(), m.GetName()
		}
		initial = append(initial, k)
	}
	if len(initial) == 0 {
		return
	}
	slices.SortStableFunc(initial, func(a, b keyed) int {
		if c := cmp.Compare(a.n.source, b.n.source); c != 0 || order == nil {
			return cmp.Or(c, cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name))
		}
		ao, aok := a.n.obj.(runtime.Object)
		bo, bok := b.n.obj.(runtime.Object)
		if aok && bok {
			if c := order(ao, bo); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name))
	})
	i := 0
	for _, k := range initial {
		batch[i] = k.n
		i++
	}
	copy(batch[i:], rest)
}

// process turns one notification into events: for the object itself, and with
// an OwnerScope for the objects below it that entered or left the scope.
func (f *Feed) process(ctx context.Context, n *notification, emit func(*Event) error) error {
	if err := f.handle(ctx, n, emit); err != nil {
		return err
	}
	f.setPosition(n.source, n.pos)
	return nil
}

// handle is process but for the notification's position.
func (f *Feed) handle(ctx context.Context, n *notification, emit func(*Event) error) error {
	switch {
	case n.kind == notifyPosition:
		return nil
	case n.initial && f.resume:
		return f.resumed(n)
	case n.gap != nil:
		gapEmit := emit
		emit = func(e *Event) error {
			e.Gap = n.gap
			return gapEmit(e)
		}
	}
	if n.initial {
		ctx = context.WithValue(ctx, initialKey{}, true)
	}
	if n.kind == notifyOwner {
		ch := n.obj.(OwnerChange)
		if n.owner.ownerChanged(ctx, ch) {
			if err := f.rejudge(ctx, n, n.owner, ch.UID, emit); err != nil {
				return err
			}
		}
		return f.rejudgeAppeared(ctx, n, emit)
	}
	obj, tombstone := n.obj, false
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, tombstone = d.Obj, true
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return fmt.Errorf("feed: expected an API object, got %T", obj)
	}
	m, err := meta.Accessor(ro)
	if err != nil {
		return fmt.Errorf("feed: %T has no metadata: %w", ro, err)
	}
	k := keyOf(n.source, m)
	if n.kind != notifyDelete && f.stale(k, m) {
		return nil
	}
	// moved are the scopes whose objects below this one are to be judged again.
	var moved []*OwnerScope
	if n.kind == notifyDelete {
		for _, s := range f.owners {
			if s.forget(k, m.GetUID(), m) {
				moved = append(moved, s)
			}
		}
		if err := f.deleted(n, k, ro, tombstone, emit); err != nil {
			return err
		}
	} else {
		for _, s := range f.owners {
			if s.observe(k, ro, m) {
				moved = append(moved, s)
			}
		}
		if err := f.changed(ctx, n, k, ro, m, emit); err != nil {
			return err
		}
	}
	for _, s := range moved {
		if err := f.rejudge(ctx, n, s, m.GetUID(), emit); err != nil {
			return err
		}
	}
	return f.rejudgeAppeared(ctx, n, emit)
}

func (f *Feed) deleted(n *notification, k objectKey, obj runtime.Object, tombstone bool, emit func(*Event) error) error {
	prev, known := f.last[k]
	if !known {
		// Never in scope, never emitted; or, in a feed resumed from a position
		// before the last one recorded, deleted and emitted already.
		return nil
	}
	if m, err := meta.Accessor(obj); err == nil && m.GetUID() != "" && m.GetUID() != prev.uid {
		// The deletion of an earlier object of that name, emitted already.
		return nil
	}
	delete(f.last, k)
	f.touch(k)
	return emit(&Event{Type: Deleted, Time: n.time, Source: n.source, Object: obj, DetectedOnRelist: tombstone})
}

func (f *Feed) changed(ctx context.Context, n *notification, k objectKey, obj runtime.Object, m metav1.Object, emit func(*Event) error) error {
	prev, known := f.last[k]
	ev := func(t Type, obj runtime.Object) *Event {
		return &Event{Type: t, Time: n.time, Source: n.source, Object: obj}
	}
	if known && prev.uid != m.GetUID() {
		// Deleted and created again under the same name while the watch was
		// down: the relist saw one name with a new UID.
		delete(f.last, k)
		f.touch(k)
		known = false
		gone := ev(Deleted, prev.obj)
		gone.DetectedOnRelist = true
		if err := emit(gone); err != nil {
			return err
		}
	}
	if f.cfg.Scope != nil && !f.cfg.Scope.Contains(ctx, n.source, obj) {
		if !known {
			return nil
		}
		delete(f.last, k)
		f.touch(k)
		e := ev(Deleted, obj)
		e.LeftScope = true
		return emit(e)
	}
	f.last[k] = emitted{uid: m.GetUID(), rv: m.GetResourceVersion(), obj: obj}
	f.touch(k)
	switch {
	case !known:
		if n.initial && f.cfg.WatchOnly {
			return nil
		}
		return emit(ev(Added, obj))
	case prev.rv == m.GetResourceVersion():
		// A relist's update of an object that did not change.
		return nil
	}
	return f.emitModified(n, prev, obj, emit)
}

// rejudge judges again the feed objects below the owner with UID from, through
// any chain of references s remembers, at the time of n: those that entered
// the scope are emitted as ADDED, those that left as DELETED with LeftScope.
// The objects are in the state last notified, which is the state last emitted
// for those in scope.
func (f *Feed) rejudge(ctx context.Context, n *notification, s *OwnerScope, from types.UID, emit func(*Event) error) error {
	seen := map[types.UID]bool{from: true}
	next := []types.UID{from}
	for len(next) > 0 {
		uid := next[0]
		next = next[1:]
		for _, dep := range s.graph.dependentsOf(uid) {
			if seen[dep] {
				// A reference cycle, or two paths to one object.
				continue
			}
			seen[dep] = true
			next = append(next, dep)
			for _, o := range s.graph.feedObjects(dep) {
				if err := f.judgeAgain(ctx, n, o, emit); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// rejudgeAppeared judges again what is below the owners found after they had
// been missing.
func (f *Feed) rejudgeAppeared(ctx context.Context, n *notification, emit func(*Event) error) error {
	for _, s := range f.owners {
		for uids := s.graph.takeAppeared(); len(uids) > 0; uids = s.graph.takeAppeared() {
			for _, uid := range uids {
				if err := f.rejudge(ctx, n, s, uid, emit); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (f *Feed) judgeAgain(ctx context.Context, n *notification, o feedObject, emit func(*Event) error) error {
	if f.isStub(o.obj) {
		// Restored, and changed since the checkpoint: the notifications of
		// its changes, still to come, judge it in its own states.
		return nil
	}
	in := f.cfg.Scope.Contains(ctx, o.key.source, o.obj)
	_, known := f.last[o.key]
	switch {
	case in && !known:
		m, err := meta.Accessor(o.obj)
		if err != nil {
			return fmt.Errorf("feed: %T has no metadata: %w", o.obj, err)
		}
		f.last[o.key] = emitted{uid: m.GetUID(), rv: m.GetResourceVersion(), obj: o.obj}
		f.touch(o.key)
		if n.initial && f.cfg.WatchOnly {
			return nil
		}
		return emit(&Event{Type: Added, Time: n.time, Source: o.key.source, Object: o.obj})
	case !in && known:
		delete(f.last, o.key)
		f.touch(o.key)
		return emit(&Event{Type: Deleted, Time: n.time, Source: o.key.source, Object: o.obj, LeftScope: true})
	}
	return nil
}

func (f *Feed) emitModified(n *notification, prev emitted, obj runtime.Object, emit func(*Event) error) error {
	e := &Event{Type: Modified, Time: n.time, Source: n.source, Object: obj, Old: prev.obj}
	if f.isStub(prev.obj) {
		e.Old, e.OldUnknown = nil, true
		return emit(e)
	}
	if f.cfg.Diff {
		changes, err := Diff(prev.obj, obj)
		if err != nil {
			return err
		}
		e.Changes = changes
	}
	return emit(e)
}
