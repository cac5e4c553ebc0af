package index

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// GraphStore is one resource type of a Graph: its kind, scope and an indexer
// with OwnerIndex and UIDIndex.
type GraphStore struct {
	GVK        schema.GroupVersionKind
	Namespaced bool
	Indexer    cache.Indexer
}

// GraphIndexers are the indexes every GraphStore must have.
func GraphIndexers() cache.Indexers {
	return cache.Indexers{OwnerIndex: OwnerIndexFunc, UIDIndex: UIDIndexFunc, OwnerKindIndex: OwnerKindIndexFunc}
}

// OwnerKindIndex is the name of the index from an owner's "Kind.group" (as
// schema.GroupKind prints it) to the objects that reference an owner of that
// kind. Its keys are the owner kinds a store's objects name, which tells a
// query which owner types it must list before it can judge a reference.
const OwnerKindIndex = "ownerkind"

// OwnerKindIndexFunc is the IndexFunc of OwnerKindIndex.
func OwnerKindIndexFunc(obj any) ([]string, error) {
	m, err := objectMeta(OwnerKindIndex, obj)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, ref := range m.GetOwnerReferences() {
		// A reference without a kind (the API server rejects it; hand-built
		// objects may have one) names no owner type: no key, not "" or ".apps".
		if ref.Kind == "" {
			continue
		}
		k := RefFromOwnerReference(ref, "").GroupKind().String()
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// OwnerKinds returns the owner kinds referenced by the objects of every store.
func (g *Graph) OwnerKinds() []schema.GroupKind {
	seen := map[string]bool{}
	var out []schema.GroupKind
	for _, s := range g.stores {
		for _, k := range s.Indexer.ListIndexFuncValues(OwnerKindIndex) {
			if !seen[k] {
				seen[k] = true
				out = append(out, schema.ParseGroupKind(k))
			}
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// Graph answers ownership questions across many resource types: who owns an
// object, what an object owns, which references lead nowhere. Every lookup goes
// through the stores' UID and owner indexes, so a tree costs one index lookup
// per node and type, not a scan.
type Graph struct {
	stores []GraphStore
	byKind map[schema.GroupKind]int
}

// NewGraph returns a Graph over stores. A kind listed twice keeps the first.
func NewGraph(stores []GraphStore) *Graph {
	g := &Graph{byKind: map[schema.GroupKind]int{}}
	for _, s := range stores {
		gk := s.GVK.GroupKind()
		if _, ok := g.byKind[gk]; ok {
			continue
		}
		g.byKind[gk] = len(g.stores)
		g.stores = append(g.stores, s)
	}
	return g
}

// Node is an object of a Graph with its kind.
type Node struct {
	GVK        schema.GroupVersionKind
	Namespaced bool
	Object     metav1.Object
}

// Ref returns the node as an owner reference would name it.
func (n Node) Ref() OwnerRef {
	return OwnerRef{APIVersion: n.GVK.GroupVersion().String(), Kind: n.GVK.Kind, Namespace: n.Object.GetNamespace(), Name: n.Object.GetName(), UID: n.Object.GetUID()}
}

// Has reports whether the graph holds kind gk, that is whether an owner of
// that kind can be found or known missing.
func (g *Graph) Has(gk schema.GroupKind) bool {
	_, ok := g.byKind[gk]
	return ok
}

// Get returns the object of kind gk with key "namespace/name" (or "name").
func (g *Graph) Get(gk schema.GroupKind, key string) (Node, bool, error) {
	i, ok := g.byKind[gk]
	if !ok {
		return Node{}, false, fmt.Errorf("kind %s is not in the graph", gk)
	}
	s := g.stores[i]
	obj, exists, err := s.Indexer.GetByKey(key)
	if err != nil || !exists {
		return Node{}, false, err
	}
	n, err := s.node(obj)
	return n, err == nil, err
}

// ByUID returns the object of kind gk with uid.
func (g *Graph) ByUID(gk schema.GroupKind, uid types.UID) (Node, bool, error) {
	i, ok := g.byKind[gk]
	if !ok {
		return Node{}, false, fmt.Errorf("kind %s is not in the graph", gk)
	}
	s := g.stores[i]
	objs, err := s.Indexer.ByIndex(UIDIndex, string(uid))
	if err != nil || len(objs) == 0 {
		return Node{}, false, err
	}
	n, err := s.node(objs[0])
	return n, err == nil, err
}

func (s GraphStore) node(obj any) (Node, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return Node{}, fmt.Errorf("reading %s: %w", s.GVK.Kind, err)
	}
	return Node{GVK: s.GVK, Namespaced: s.Namespaced, Object: m}, nil
}

// Children returns the objects of every kind that list uid among their
// ownerReferences, sorted by kind, namespace and name.
func (g *Graph) Children(uid types.UID) ([]Node, error) {
	var out []Node
	for _, s := range g.stores {
		objs, err := s.Indexer.ByIndex(OwnerIndex, string(uid))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.GVK.Kind, err)
		}
		for _, obj := range objs {
			n, err := s.node(obj)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
	}
	SortNodes(out)
	return out, nil
}

// SortNodes orders nodes by kind, then namespace, then name.
func SortNodes(nodes []Node) {
	slices.SortFunc(nodes, func(a, b Node) int {
		if c := strings.Compare(a.GVK.Kind, b.GVK.Kind); c != 0 {
			return c
		}
		if c := strings.Compare(a.GVK.Group, b.GVK.Group); c != 0 {
			return c
		}
		if c := strings.Compare(a.Object.GetNamespace(), b.Object.GetNamespace()); c != 0 {
			return c
		}
		return strings.Compare(a.Object.GetName(), b.Object.GetName())
	})
}

// TreeNode is an object and the tree below (or, for owner chains, above) it.
type TreeNode struct {
	Node
	Children []*TreeNode
	// Cycle marks an object already shown higher up the same branch; its
	// children are not repeated.
	Cycle bool
}

// Descendants returns the tree of everything root owns, directly or through
// other owned objects. An object owned by two objects of the tree appears under
// each; a reference cycle is cut where it closes and marked.
func (g *Graph) Descendants(root Node) (*TreeNode, error) {
	return g.descend(root, map[types.UID]bool{}, 0)
}

func (g *Graph) descend(n Node, onPath map[types.UID]bool, depth int) (*TreeNode, error) {
	t := &TreeNode{Node: n}
	uid := n.Object.GetUID()
	if onPath[uid] || depth > MaxOwnerDepth {
		t.Cycle = true
		return t, nil
	}
	onPath[uid] = true
	defer delete(onPath, uid)
	children, err := g.Children(uid)
	if err != nil {
		return nil, err
	}
	for _, c := range children {
		ct, err := g.descend(c, onPath, depth+1)
		if err != nil {
			return nil, err
		}
		t.Children = append(t.Children, ct)
	}
	return t, nil
}

// OwnerLink is one ownerReference of an object and where it leads.
type OwnerLink struct {
	Ref        OwnerRef
	Controller bool
	// Owner is set when the owner exists; then Up holds its own owners.
	Owner *Node
	Up    []OwnerLink
	// Missing is true when the owner's kind is in the graph but no object of
	// it has the UID; Unknown when the kind is not in the graph.
	Missing bool
	Unknown bool
	Cycle   bool
}

// Owners follows every ownerReference of n upwards, controller or not.
func (g *Graph) Owners(n Node) []OwnerLink {
	return g.owners(n, map[types.UID]bool{n.Object.GetUID(): true}, 0)
}

func (g *Graph) owners(n Node, onPath map[types.UID]bool, depth int) []OwnerLink {
	var out []OwnerLink
	for _, ref := range n.Object.GetOwnerReferences() {
		r := RefFromOwnerReference(ref, n.Object.GetNamespace())
		l := OwnerLink{Ref: r, Controller: ref.Controller != nil && *ref.Controller}
		gk := r.GroupKind()
		switch {
		case !g.Has(gk):
			l.Unknown = true
		case onPath[ref.UID] || depth >= MaxOwnerDepth:
			l.Cycle = true
		default:
			owner, ok, err := g.ByUID(gk, ref.UID)
			// The garbage collector treats a namespaced owner in another
			// namespace as absent, and so do we.
			ok = ok && sameNamespace(owner, n)
			if err != nil || !ok {
				l.Missing = err == nil
				l.Unknown = err != nil
				break
			}
			l.Owner = &owner
			l.Ref.Namespace = owner.Object.GetNamespace()
			onPath[ref.UID] = true
			l.Up = g.owners(owner, onPath, depth+1)
			delete(onPath, ref.UID)
		}
		if l.Owner == nil {
			if i, ok := g.byKind[gk]; ok && !g.stores[i].Namespaced {
				l.Ref.Namespace = ""
			}
		}
		out = append(out, l)
	}
	return out
}

// Orphan is an object with at least one ownerReference to an owner that does
// not exist, or that is being deleted with orphan propagation.
type Orphan struct {
	Node
	// Missing are the references that lead nowhere.
	Missing []OwnerRef
	// Orphaning are owners being deleted with propagationPolicy=Orphan (the
	// "orphan" finalizer): the garbage collector will strip the references
	// and leave the object without an owner.
	Orphaning []OwnerRef
}

// Orphans returns the objects whose ownerReferences name an owner, of a kind
// the graph holds, that does not exist, sorted like SortNodes. References to
// kinds the graph does not hold cannot be judged; they are returned as unknown
// kinds so the caller can say the answer may be incomplete.
func (g *Graph) Orphans() ([]Orphan, []schema.GroupKind, error) {
	var out []Orphan
	unknown := map[schema.GroupKind]bool{}
	for _, s := range g.stores {
		// Each owner UID is checked once, however many objects reference it.
		for _, uid := range s.Indexer.ListIndexFuncValues(OwnerIndex) {
			objs, err := s.Indexer.ByIndex(OwnerIndex, uid)
			if err != nil {
				return nil, nil, err
			}
			if len(objs) == 0 {
				continue
			}
			first, err := s.node(objs[0])
			if err != nil {
				return nil, nil, err
			}
			var ref *metav1.OwnerReference
			for _, r := range first.Object.GetOwnerReferences() {
				if string(r.UID) == uid {
					ref = &r
					break
				}
			}
			if ref == nil {
				continue
			}
			owner := RefFromOwnerReference(*ref, first.Object.GetNamespace())
			gk := owner.GroupKind()
			if !g.Has(gk) {
				unknown[gk] = true
				continue
			}
			found, ok, err := g.ByUID(gk, ref.UID)
			if err != nil {
				return nil, nil, err
			}
			if i := g.byKind[gk]; !g.stores[i].Namespaced {
				owner.Namespace = ""
			}
			for _, obj := range objs {
				n, err := s.node(obj)
				if err != nil {
					return nil, nil, err
				}
				valid := ok && sameNamespace(found, n)
				orphaning := valid && orphaningDependents(found.Object)
				if valid && !orphaning {
					continue
				}
				r := owner
				r.Namespace = ownerNamespace(owner, n)
				o := Orphan{Node: n}
				if orphaning {
					o.Orphaning = []OwnerRef{r}
				} else {
					o.Missing = []OwnerRef{r}
				}
				out = append(out, o)
			}
		}
	}
	out = mergeOrphans(out)
	kinds := make([]schema.GroupKind, 0, len(unknown))
	for gk := range unknown {
		kinds = append(kinds, gk)
	}
	slices.SortFunc(kinds, func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) })
	return out, kinds, nil
}

// sameNamespace reports whether owner may own dependent: a namespaced owner
// must share its dependent's namespace.
func sameNamespace(owner, dependent Node) bool {
	return !owner.Namespaced || owner.Object.GetNamespace() == dependent.Object.GetNamespace()
}

// orphaningDependents reports whether obj is being deleted with orphan
// propagation.
func orphaningDependents(obj metav1.Object) bool {
	return obj.GetDeletionTimestamp() != nil && slices.Contains(obj.GetFinalizers(), metav1.FinalizerOrphanDependents)
}

func ownerNamespace(owner OwnerRef, n Node) string {
	if owner.Namespace == "" {
		return ""
	}
	return n.Object.GetNamespace()
}

// mergeOrphans folds the entries of an object with several missing owners
// into one and sorts the result.
func mergeOrphans(in []Orphan) []Orphan {
	byUID := map[types.UID]int{}
	var out []Orphan
	for _, o := range in {
		uid := o.Object.GetUID()
		if i, ok := byUID[uid]; ok {
			out[i].Missing = append(out[i].Missing, o.Missing...)
			out[i].Orphaning = append(out[i].Orphaning, o.Orphaning...)
			continue
		}
		byUID[uid] = len(out)
		out = append(out, o)
	}
	nodes := make([]Node, len(out))
	pos := map[types.UID]int{}
	for i, o := range out {
		nodes[i] = o.Node
		pos[o.Object.GetUID()] = i
	}
	SortNodes(nodes)
	sorted := make([]Orphan, len(out))
	for i, n := range nodes {
		o := out[pos[n.Object.GetUID()]]
		byName := func(a, b OwnerRef) int { return strings.Compare(a.Kind+"/"+a.Name, b.Kind+"/"+b.Name) }
		slices.SortFunc(o.Missing, byName)
		slices.SortFunc(o.Orphaning, byName)
		sorted[i] = o
	}
	return sorted
}
