package feed

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// OwnerLookup finds the owners of an object by its kind and UID, and reports
// the changes that can move objects into or out of an OwnerScope.
type OwnerLookup interface {
	// OwnerReferences returns the ownerReferences of the object of kind gvk
	// (the version is the reference's, a hint) with uid and whether it exists.
	// When wait is true and the object is not known, it may wait briefly for it
	// to show up: an owner is created before what it owns, but its informer may
	// deliver it a moment later.
	OwnerReferences(ctx context.Context, gvk schema.GroupVersionKind, uid types.UID, wait bool) ([]metav1.OwnerReference, bool)
	// OnOwnerChange has fn called whenever an object OwnerReferences can find,
	// of a kind followed now or later, is created, deleted or changes its
	// ownerReferences. Other changes need not be reported. By the time fn
	// hears of a change, OwnerReferences answers with that state or a newer
	// one (an informer updates its store before it calls its handlers). fn
	// may be called from any goroutine and must not block; a Feed's only
	// queues. A Feed calls OnOwnerChange once, when it is created.
	OnOwnerChange(fn func(OwnerChange))
}

// OwnerChange is an object an OwnerLookup follows that was created, deleted or
// changed its ownerReferences.
type OwnerChange struct {
	// Kind is the object's kind, as OwnerReferences takes it.
	Kind schema.GroupVersionKind
	UID  types.UID
	// Deleted is set when the object is gone.
	Deleted bool
	// Refs are the object's ownerReferences; for a deletion, the last known.
	// For a creation or change the Feed asks OwnerReferences again when it
	// handles the report: by then the lookup may know a newer state, and going
	// back to an older one would move dependents out and in again.
	Refs []metav1.OwnerReference
}

// OwnerScope is the Scope of `--owner`: an object belongs to it when it is the
// root object or is owned, through any chain of ownerReferences (controller or
// not), by the root.
//
// Used alone, Contains reads ownership afresh on every call, walking up from
// the object through the lookup. Used in a Feed's Config.Scope (directly or in
// AllOf), the scope also follows membership as the garbage collector sees it:
//   - An owner keeps counting after it is deleted, with the last
//     ownerReferences known for it, for as long as something the feed knows
//     still references it. So what a deleted owner owned stays in the feed until
//     it is deleted itself, whatever the cascade mode and however deep it is.
//   - When an owner changes its ownerReferences (it is orphaned or adopted), is
//     created after what it owns, or is found after being missing, the feed's
//     objects below it are judged again. Those that left are emitted as DELETED
//     with LeftScope, those that entered as ADDED, although they did not change.
//
// The feed remembers, per UID, the ownerReferences of its own objects that
// have some and of the owners met walking up from them; an owner's memory goes
// when nothing remembered references it any more. An OwnerScope serves one
// Feed.
type OwnerScope struct {
	root   types.UID
	lookup OwnerLookup
	// missing remembers owners that did not show up, so that a dangling
	// reference costs one wait, not one per event.
	missing map[types.UID]bool
	// graph is the membership memory; it is only filled when the scope serves a
	// Feed.
	graph ownerGraph
}

// NewOwnerScope returns the scope of the object with UID root.
func NewOwnerScope(root types.UID, lookup OwnerLookup) *OwnerScope {
	return &OwnerScope{root: root, lookup: lookup, missing: map[types.UID]bool{}, graph: newOwnerGraph()}
}

// Contains implements Scope.
func (s *OwnerScope) Contains(ctx context.Context, _ int, obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if m.GetUID() == s.root {
		return true
	}
	return s.ownedBy(ctx, m.GetOwnerReferences(), 0)
}

func (s *OwnerScope) ownedBy(ctx context.Context, refs []metav1.OwnerReference, depth int) bool {
	for _, ref := range refs {
		if ref.UID == s.root {
			return true
		}
	}
	if depth >= index.MaxOwnerDepth {
		// A cycle, which the API server does not prevent.
		return false
	}
	for _, ref := range refs {
		if ref.UID == "" {
			continue
		}
		parents, ok := s.ownerReferences(ctx, ref)
		if ok && s.ownedBy(ctx, parents, depth+1) {
			return true
		}
	}
	return false
}

// ownerReferences returns the references of the owner ref names: the ones
// remembered, or else the lookup's. An owner found is remembered when
// something remembered references it, which is only ever the case in a feed.
func (s *OwnerScope) ownerReferences(ctx context.Context, ref metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	if n := s.graph.nodes[ref.UID]; n != nil {
		return n.refs, true
	}
	wasMissing := s.missing[ref.UID]
	parents, ok := s.lookup.OwnerReferences(ctx, gvk, ref.UID, !wasMissing)
	if !ok {
		s.missing[ref.UID] = true
		return nil, false
	}
	delete(s.missing, ref.UID)
	if s.graph.referenced(ref.UID) {
		s.remember(ref.UID, parents)
		if wasMissing {
			// What references it was judged without it.
			s.graph.appeared = append(s.graph.appeared, ref.UID)
		}
	}
	return parents, true
}

// InformerLookup is an OwnerLookup backed by one metadata-only informer per
// owner kind, indexed by UID and started the first time a reference names the
// kind. Its informers report owner changes to the functions given to
// OnOwnerChange. It is safe for concurrent use.
type InformerLookup struct {
	// Mapper resolves owner kinds to resources.
	Mapper meta.RESTMapper
	// NewFactory returns the factory of one owner kind's informer; it should
	// have no selectors, since owners need not match the feed's.
	NewFactory func() (*informer.Factory, error)
	// Wait bounds how long OwnerReferences waits for an owner not yet seen;
	// zero means two seconds.
	Wait time.Duration
	// Warn hears, once per kind, why owners of that kind cannot be followed.
	Warn func(error)

	mu        sync.Mutex
	kinds     map[schema.GroupKind]*ownerKind
	factories []*informer.Factory
	onChange  []func(OwnerChange)
}

type ownerKind struct {
	gvk      schema.GroupVersionKind
	informer cache.SharedIndexInformer
	store    cache.Indexer
	err      error
}

// OnOwnerChange implements OwnerLookup: fn hears from the informers started so
// far and from those started later.
func (l *InformerLookup) OnOwnerChange(fn func(OwnerChange)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onChange = append(l.onChange, fn)
	for _, k := range l.kinds {
		if k.err == nil {
			if _, err := k.informer.AddEventHandler(ownerHandler{kind: k.gvk, fn: fn}); err != nil && l.Warn != nil {
				l.Warn(fmt.Errorf("changes of owners of kind %s cannot be followed: %w", kindName(k.gvk.GroupKind()), err))
			}
		}
	}
}

// ownerHandler turns an owner informer's notifications into OwnerChanges.
type ownerHandler struct {
	kind schema.GroupVersionKind
	fn   func(OwnerChange)
}

func (h ownerHandler) OnAdd(obj any, _ bool) { h.report(obj, false) }

func (h ownerHandler) OnUpdate(oldObj, newObj any) {
	o, err1 := meta.Accessor(oldObj)
	n, err2 := meta.Accessor(newObj)
	// Only a change of references can move what the object owns; the status
	// updates owners get all the time are not worth a trip through the queue.
	if err1 == nil && err2 == nil && sameRefs(o.GetOwnerReferences(), n.GetOwnerReferences()) {
		return
	}
	h.report(newObj, false)
}

func (h ownerHandler) OnDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	h.report(obj, true)
}

func (h ownerHandler) report(obj any, deleted bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	h.fn(OwnerChange{Kind: h.kind, UID: m.GetUID(), Deleted: deleted, Refs: m.GetOwnerReferences()})
}

// sameRefs reports whether a and b name the same owners in the same order.
func sameRefs(a, b []metav1.OwnerReference) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.OwnerReference) bool {
		return x.UID == y.UID && x.Kind == y.Kind && x.APIVersion == y.APIVersion
	})
}

// OwnerReferences implements OwnerLookup.
func (l *InformerLookup) OwnerReferences(ctx context.Context, gvk schema.GroupVersionKind, uid types.UID, wait bool) ([]metav1.OwnerReference, bool) {
	k := l.kind(ctx, gvk)
	if k.err != nil {
		return nil, false
	}
	limit := l.Wait
	if limit == 0 {
		limit = 2 * time.Second
	}
	deadline := time.Now().Add(limit)
	for {
		objs, err := k.store.ByIndex(index.UIDIndex, string(uid))
		if err == nil && len(objs) > 0 {
			if m, err := meta.Accessor(objs[0]); err == nil {
				return m.GetOwnerReferences(), true
			}
		}
		if !wait || time.Now().After(deadline) {
			return nil, false
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// kind returns the informer of gvk's kind, starting and syncing it on first use.
func (l *InformerLookup) kind(ctx context.Context, gvk schema.GroupVersionKind) *ownerKind {
	gk := gvk.GroupKind()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kinds == nil {
		l.kinds = map[schema.GroupKind]*ownerKind{}
	}
	if k, ok := l.kinds[gk]; ok {
		return k
	}
	k := &ownerKind{}
	l.kinds[gk] = k
	k.gvk, k.informer, k.err = l.start(ctx, gvk)
	if k.err == nil {
		k.store = k.informer.GetIndexer()
	}
	if k.err != nil && l.Warn != nil {
		l.Warn(fmt.Errorf("owners of kind %s cannot be followed: %w", kindName(gk), k.err))
	}
	return k
}

// start starts and syncs the informer of gvk's kind, with the OnOwnerChange
// handlers registered before it starts. l.mu is held.
func (l *InformerLookup) start(ctx context.Context, gvk schema.GroupVersionKind) (schema.GroupVersionKind, cache.SharedIndexInformer, error) {
	mapping, err := l.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// The reference's version may no longer be served; any version will do.
		if mapping, err = l.Mapper.RESTMapping(gvk.GroupKind()); err != nil {
			return gvk, nil, err
		}
	}
	f, err := l.NewFactory()
	if err != nil {
		return gvk, nil, err
	}
	l.factories = append(l.factories, f)
	inf, err := f.Informer(informer.FromMapping(mapping), informer.MetadataOnly, cache.Indexers{index.UIDIndex: index.UIDIndexFunc})
	if err != nil {
		return gvk, nil, err
	}
	for _, fn := range l.onChange {
		if _, err := inf.AddEventHandler(ownerHandler{kind: mapping.GroupVersionKind, fn: fn}); err != nil {
			return gvk, nil, err
		}
	}
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		return gvk, nil, err
	}
	return mapping.GroupVersionKind, inf, nil
}

// Shutdown stops the informers started so far.
func (l *InformerLookup) Shutdown() {
	l.mu.Lock()
	factories := l.factories
	l.factories = nil
	l.mu.Unlock()
	for _, f := range factories {
		f.Shutdown()
	}
}

func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}
