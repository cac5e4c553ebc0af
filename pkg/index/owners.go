package index

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// MaxOwnerDepth bounds the walk up controller references. Real chains are at
// most three or four deep (CronJob, Job, Pod); the bound only guards against a
// reference cycle, which the API server does not prevent.
const MaxOwnerDepth = 16

// OwnerRef names one owner as a reference does, plus the namespace it lives in
// ("" for cluster-scoped owners).
type OwnerRef struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Namespace  string    `json:"namespace,omitempty"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid"`
}

// GroupKind parses the reference's apiVersion; a malformed one yields the kind
// alone.
func (r OwnerRef) GroupKind() schema.GroupKind {
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	if err != nil {
		return schema.GroupKind{Kind: r.Kind}
	}
	return schema.GroupKind{Group: gv.Group, Kind: r.Kind}
}

// RefFromOwnerReference converts a reference held by an object in namespace.
// Owners of namespaced objects share their namespace or are cluster-scoped; the
// lookup decides which (see OwnerLookup.Namespaced).
func RefFromOwnerReference(ref metav1.OwnerReference, namespace string) OwnerRef {
	return OwnerRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: namespace, Name: ref.Name, UID: ref.UID}
}

// OwnerLookup finds owners by kind and UID. The command layer implements it with
// metadata-only informers, started only for the kinds references actually name.
type OwnerLookup interface {
	// Prepare readies lookups for kinds, typically by starting and syncing one
	// informer per kind, and returns an error per kind that cannot be looked
	// up (unknown to the server, or not listable by this user).
	Prepare(ctx context.Context, kinds []schema.GroupVersionKind) map[schema.GroupKind]error
	// Get returns the owner of kind gk that ref names (by UID: its name and
	// namespace are hints), or nil when there is none. The namespace of a
	// reference to a cluster-scoped kind may be its dependent's.
	Get(gk schema.GroupKind, ref OwnerRef) (metav1.Object, error)
	// Namespaced reports whether gk is a namespaced kind; unknown kinds count
	// as namespaced, the common case.
	Namespaced(gk schema.GroupKind) bool
}

// Resolution is where a walk up controller references ended.
type Resolution struct {
	// Top is the top-level owner: the last reference that could be followed.
	Top OwnerRef `json:"top"`
	// Chain lists the owners from the direct one up to Top.
	Chain []OwnerRef `json:"chain"`
	// Dangling is true when Top does not exist any more.
	Dangling bool `json:"dangling,omitempty"`
	// Unknown is true when Top's kind could not be looked up; Reason says why.
	// Owners above Top, if any, are not known.
	Unknown bool   `json:"unknown,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

type ownerNode struct {
	ref      OwnerRef
	gk       schema.GroupKind
	visited  bool
	found    bool
	lookErr  error
	parent   *ownerNode
	resolved *Resolution
}

// ResolveOwners walks each direct owner in refs up through controller references
// to its top-level owner and returns the resolution per direct owner UID. It
// works level by level so each level prepares all the kinds it needs at once:
// a Deployment's pods cost one ReplicaSet lookup level and one Deployment level,
// however many pods there are. Each owner is looked up by its reference, and
// once: its node links to its parent's.
func ResolveOwners(ctx context.Context, lookup OwnerLookup, refs []OwnerRef) (map[types.UID]Resolution, error) {
	nodes := make(map[types.UID]*ownerNode, 2*len(refs))
	kindErrs := map[schema.GroupKind]error{}
	prepared := map[schema.GroupKind]bool{}
	node := func(r OwnerRef) (n *ownerNode, created bool) {
		if n, ok := nodes[r.UID]; ok {
			return n, false
		}
		n = &ownerNode{ref: r, gk: r.GroupKind()}
		nodes[r.UID] = n
		return n, true
	}

	pending := make([]*ownerNode, 0, len(refs))
	for _, r := range refs {
		if n, created := node(r); created {
			pending = append(pending, n)
		}
	}
	for depth := 0; len(pending) > 0 && depth < MaxOwnerDepth; depth++ {
		var kinds []schema.GroupVersionKind
		for _, n := range pending {
			if prepared[n.gk] {
				continue
			}
			prepared[n.gk] = true
			gv, _ := schema.ParseGroupVersion(n.ref.APIVersion)
			kinds = append(kinds, gv.WithKind(n.ref.Kind))
		}
		if len(kinds) > 0 {
			for gk, err := range lookup.Prepare(ctx, kinds) {
				kindErrs[gk] = err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var next []*ownerNode
		for _, n := range pending {
			n.visited = true
			if !lookup.Namespaced(n.gk) {
				n.ref.Namespace = ""
			}
			if err := kindErrs[n.gk]; err != nil {
				n.lookErr = err
				continue
			}
			obj, err := lookup.Get(n.gk, n.ref)
			if err != nil {
				n.lookErr = err
				continue
			}
			if obj == nil {
				continue
			}
			n.found = true
			n.ref.Name, n.ref.Namespace = obj.GetName(), obj.GetNamespace()
			ctrl := metav1.GetControllerOfNoCopy(obj)
			if ctrl == nil {
				continue
			}
			parent, created := node(RefFromOwnerReference(*ctrl, obj.GetNamespace()))
			n.parent = parent
			if created {
				next = append(next, parent)
			}
		}
		pending = next
	}

	out := make(map[types.UID]Resolution, len(refs))
	for _, r := range refs {
		out[r.UID] = *resolve(nodes[r.UID])
	}
	return out, nil
}

// resolve follows parents from n and memoizes each node's resolution, so a
// ReplicaSet shared by a thousand pods is walked once.
func resolve(n *ownerNode) *Resolution {
	if n.resolved != nil {
		return n.resolved
	}
	var res Resolution
	switch {
	case !n.visited:
		// The walk stopped at MaxOwnerDepth before reaching this owner.
		res = Resolution{Top: n.ref, Unknown: true, Reason: "owner chain too deep or cyclic"}
	case n.lookErr != nil:
		res = Resolution{Top: n.ref, Unknown: true, Reason: n.lookErr.Error()}
	case !n.found:
		res = Resolution{Top: n.ref, Dangling: true, Reason: "owner not found"}
	case n.parent == nil:
		res = Resolution{Top: n.ref}
	default:
		// Mark before recursing so a cycle ends here instead of looping.
		n.resolved = &Resolution{Top: n.ref, Unknown: true, Reason: "owner reference cycle"}
		up := resolve(n.parent)
		res = *up
		res.Chain = append([]OwnerRef{n.ref}, up.Chain...)
		n.resolved = &res
		return n.resolved
	}
	res.Chain = []OwnerRef{n.ref}
	n.resolved = &res
	return n.resolved
}

// OwnerChange is an owner that was created, deleted or changed its
// ownerReferences, as an informer over its kind saw it.
type OwnerChange struct {
	// Kind is the object's kind.
	Kind schema.GroupVersionKind
	UID  types.UID
	// Deleted is set when the object is gone.
	Deleted bool
	// Refs are the object's ownerReferences; for a deletion, the last known.
	Refs []metav1.OwnerReference
}

// OwnerChangeHandler turns the notifications of an informer over owners of
// kind into OwnerChanges for fn: creations, deletions and changes of
// ownerReferences. The status updates owners get all the time move nothing
// below them and are not reported. fn is called from the informer's goroutine
// and must not block.
func OwnerChangeHandler(kind schema.GroupVersionKind, fn func(OwnerChange)) cache.ResourceEventHandler {
	return ownerChangeHandler{kind: kind, fn: fn}
}

type ownerChangeHandler struct {
	kind schema.GroupVersionKind
	fn   func(OwnerChange)
}

func (h ownerChangeHandler) OnAdd(obj any, _ bool) { h.report(obj, false) }

func (h ownerChangeHandler) OnUpdate(oldObj, newObj any) {
	o, err1 := meta.Accessor(oldObj)
	n, err2 := meta.Accessor(newObj)
	if err1 == nil && err2 == nil && SameOwnerRefs(o.GetOwnerReferences(), n.GetOwnerReferences()) {
		return
	}
	h.report(newObj, false)
}

func (h ownerChangeHandler) OnDelete(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	h.report(obj, true)
}

func (h ownerChangeHandler) report(obj any, deleted bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	h.fn(OwnerChange{Kind: h.kind, UID: m.GetUID(), Deleted: deleted, Refs: m.GetOwnerReferences()})
}

// SameOwnerRefs reports whether a and b name the same owners (UID, kind and
// apiVersion) in the same order.
func SameOwnerRefs(a, b []metav1.OwnerReference) bool {
	return slices.EqualFunc(a, b, func(x, y metav1.OwnerReference) bool {
		return x.UID == y.UID && x.Kind == y.Kind && x.APIVersion == y.APIVersion
	})
}
