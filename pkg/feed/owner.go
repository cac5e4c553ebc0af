package feed

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
)

// OwnerLookup finds the owners of an object by its kind and UID, and reports
// the changes that can move objects into or out of an OwnerScope.
// informer.OwnerResolver is the one the commands use.
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
// changed its ownerReferences. For a creation or change the Feed asks
// OwnerReferences again when it handles the report: by then the lookup may
// know a newer state, and going back to an older one would move dependents
// out and in again.
type OwnerChange = index.OwnerChange

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
	// refs, when set, gives an object's references in place of its
	// ownerReferences (see NewInvolvedObjectScope).
	refs func(metav1.Object) []metav1.OwnerReference
	// noInitialWait skips the wait for an owner not yet known while the feed
	// judges its initial state (see NewInvolvedObjectScope).
	noInitialWait bool
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
	return s.ownedBy(ctx, s.refsOf(m), 0)
}

// refsOf returns the references that tie a feed object to its owners.
func (s *OwnerScope) refsOf(m metav1.Object) []metav1.OwnerReference {
	if s.refs != nil {
		return s.refs(m)
	}
	return m.GetOwnerReferences()
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
	wait := !wasMissing && !(s.noInitialWait && initialNotification(ctx))
	parents, ok := s.lookup.OwnerReferences(ctx, gvk, ref.UID, wait)
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
