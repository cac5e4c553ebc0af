package query

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// NoOwner is the OWNER cell of an object no controller owns.
const NoOwner = "<none>"

// TopOwners names the top-level controller of objects, the OWNER column of
// --show-owner: the last owner reachable through controller references, as
// Kind/name, from the owner index (one metadata-only informer per owner kind,
// started the first time a reference names the kind). An owner that is gone,
// or whose kind cannot be read, ends the walk: the column then shows the last
// owner known. Safe for concurrent use.
type TopOwners struct {
	ctx      context.Context
	resolver *informer.OwnerResolver

	mu       sync.Mutex
	prepared map[schema.GroupKind]error
}

// TopOwners returns a resolver of top-level owners in the session's scope and
// a function that stops its informers.
func (s *Session) TopOwners(ctx context.Context) (*TopOwners, func()) {
	r := s.newOwnerResolver(s.cfg.Namespace)
	return &TopOwners{ctx: ctx, resolver: r, prepared: map[schema.GroupKind]error{}}, r.Shutdown
}

// Of returns obj's top-level controller as Kind/name, NoOwner when no
// controller owns it.
func (t *TopOwners) Of(obj runtime.Object) string {
	ctrl, _ := t.top(obj)
	if ctrl == nil {
		return NoOwner
	}
	return ctrl.Kind + "/" + ctrl.Name
}

// top walks obj's controller references up and returns the last one it
// could follow, with the owner it names when that owner was found: nil, nil
// when no controller owns obj.
func (t *TopOwners) top(obj runtime.Object) (*metav1.OwnerReference, metav1.Object) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	ctrl := metav1.GetControllerOfNoCopy(acc)
	if ctrl == nil {
		return nil, nil
	}
	ns := acc.GetNamespace()
	for depth := 1; depth < index.MaxOwnerDepth; depth++ {
		gv, _ := schema.ParseGroupVersion(ctrl.APIVersion)
		if t.prepare(gv.WithKind(ctrl.Kind)) != nil {
			return ctrl, nil
		}
		owner, err := t.resolver.Get(schema.GroupKind{Group: gv.Group, Kind: ctrl.Kind}, index.RefFromOwnerReference(*ctrl, ns))
		if err != nil || owner == nil {
			return ctrl, nil
		}
		next := metav1.GetControllerOfNoCopy(owner)
		if next == nil {
			return ctrl, owner
		}
		ctrl, ns = next, owner.GetNamespace()
	}
	return ctrl, nil
}

// prepare syncs the informer of owner kind gvk once.
func (t *TopOwners) prepare(gvk schema.GroupVersionKind) error {
	gk := gvk.GroupKind()
	t.mu.Lock()
	defer t.mu.Unlock()
	if err, done := t.prepared[gk]; done {
		return err
	}
	err := t.resolver.Prepare(t.ctx, []schema.GroupVersionKind{gvk})[gk]
	t.prepared[gk] = err
	return err
}
