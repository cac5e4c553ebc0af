package query

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// Tree answers `kubectl idx tree`: obj and everything it owns, through
// ownerReferences, across every listable type. Kinds in the tree with a
// status worth showing are then read in full for READY and STATUS.
func (s *Session) Tree(ctx context.Context, obj ObjectRef) (*v1alpha1.Tree, error) {
	w, tree, err := s.descendants(ctx, obj)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	m, err := s.whereMatcher(ctx, nodeKinds(flatten(tree)), false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	if err := w.loadFull(ctx, flatten(tree)); err != nil {
		return nil, err
	}
	if m != nil {
		if err := m.ready(ctx); err != nil {
			return nil, err
		}
		tree = pruneTree(tree, w.matches(m), true)
	}
	doc := v1alpha1.NewTree(v1alpha1.TreeKind, treeItems(w, tree, time.Now()))
	doc.Warnings = s.Warnings()
	doc.AsOf = s.AsOf()
	return doc, nil
}

// Owners answers `kubectl idx owners`: obj's owners, and theirs, up to the
// top-level owner, following every ownerReference, controller or not.
func (s *Session) Owners(ctx context.Context, obj ObjectRef) (*v1alpha1.Tree, error) {
	rootNS := s.rootNamespace()
	ns := rootNS
	if !obj.Resource.Namespaced {
		ns = metav1.NamespaceAll
	}
	w, err := s.newWorld(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	if err := w.add(ctx, []informer.Resource{obj.Resource}); err != nil {
		return nil, err
	}
	root, err := w.lookupRoot(obj, rootNS)
	if err != nil {
		return nil, err
	}
	if err := w.addOwnerKinds(ctx); err != nil {
		return nil, err
	}
	links := w.graph().Owners(root)
	nodes := []index.Node{root}
	collectOwners(links, &nodes)
	m, err := s.whereMatcher(ctx, nodeKinds(nodes), false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	if err := w.loadFull(ctx, nodes); err != nil {
		return nil, err
	}
	if m != nil {
		if err := m.ready(ctx); err != nil {
			return nil, err
		}
		links = pruneOwners(links, w.matches(m))
	}
	now := time.Now()
	item := w.item(root, now)
	item.Owners = ownerItems(w, links, now)
	doc := v1alpha1.NewTree(v1alpha1.OwnerTreeKind, item)
	doc.Warnings = s.Warnings()
	doc.AsOf = s.AsOf()
	return doc, nil
}

// Orphans answers `kubectl idx orphans`: objects whose ownerReferences point
// to owners that no longer exist, and objects whose owner is being deleted
// with --cascade=orphan, in the session's namespace or everywhere.
func (s *Session) Orphans(ctx context.Context) (*v1alpha1.RelationList, error) {
	ns := s.cfg.Namespace
	w, err := s.newWorld(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	if err := w.addListable(ctx, ns != metav1.NamespaceAll); err != nil {
		return nil, err
	}
	if err := w.addOwnerKinds(ctx); err != nil {
		return nil, err
	}
	orphans, unknown, err := w.graph().Orphans()
	if err != nil {
		return nil, err
	}
	if orphans, err = s.whereOrphans(ctx, w, orphans); err != nil {
		return nil, err
	}
	for _, gk := range unknown {
		s.warn("references to owners of kind %s were not checked: the kind cannot be listed", kindName(gk))
	}
	doc := v1alpha1.NewRelationList(v1alpha1.OrphanListKind)
	for _, orphan := range orphans {
		// Owner kinds are read cluster-wide; report only what the scope holds.
		if ns != metav1.NamespaceAll && (!orphan.Namespaced || orphan.Object.GetNamespace() != ns) {
			continue
		}
		it := v1alpha1.RelationItemFor(orphan.GVK, orphan.Object)
		it.MissingOwners, it.OrphaningOwners = ownerReferences(orphan.Missing), ownerReferences(orphan.Orphaning)
		doc.Items = append(doc.Items, it)
	}
	doc.Warnings = s.Warnings()
	doc.AsOf = s.AsOf()
	return doc, nil
}

// ownerReferences converts the graph's references for a document.
func ownerReferences(refs []index.OwnerRef) []v1alpha1.OwnerReference {
	if refs == nil {
		return nil
	}
	out := make([]v1alpha1.OwnerReference, len(refs))
	for i, r := range refs {
		out[i] = v1alpha1.OwnerReference{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, UID: r.UID}
	}
	return out
}

// scope returns the namespace the informers of a tree under obj cover and
// whether cluster-scoped types are needed: dependents of a namespaced object
// live in its namespace, those of a cluster-scoped object anywhere.
func (s *Session) scope(obj ObjectRef) (namespace string, clusterWide bool) {
	if !obj.Resource.Namespaced || s.cfg.Namespace == metav1.NamespaceAll {
		return metav1.NamespaceAll, true
	}
	return s.cfg.Namespace, false
}

// descendants builds the world a tree under obj needs and the tree itself.
// The caller shuts the world down.
func (s *Session) descendants(ctx context.Context, obj ObjectRef) (*world, *index.TreeNode, error) {
	rootNS := s.rootNamespace()
	ns, clusterWide := s.scope(obj)
	w, err := s.newWorld(ctx, ns)
	if err != nil {
		return nil, nil, err
	}
	// Descendants are found through the owner index alone; the UID and
	// owner-kind indexes cost as much again on every object of the cluster.
	w.indexers = cache.Indexers{index.OwnerIndex: index.OwnerIndexFunc}
	fail := func(err error) (*world, *index.TreeNode, error) {
		w.shutdown()
		return nil, nil, err
	}
	if err := w.addListable(ctx, !clusterWide); err != nil {
		return fail(err)
	}
	root, err := w.lookupRoot(obj, rootNS)
	if err != nil {
		return fail(err)
	}
	tree, err := w.graph().Descendants(root)
	if err != nil {
		return fail(err)
	}
	return w, tree, nil
}

// flatten lists the nodes of a tree.
func flatten(t *index.TreeNode) []index.Node {
	out := []index.Node{t.Node}
	for _, c := range t.Children {
		out = append(out, flatten(c)...)
	}
	return out
}

func treeItems(w *world, t *index.TreeNode, now time.Time) *v1alpha1.TreeItem {
	it := w.item(t.Node, now)
	it.Cycle = t.Cycle
	for _, c := range t.Children {
		it.Children = append(it.Children, treeItems(w, c, now))
	}
	return it
}

func collectOwners(links []index.OwnerLink, nodes *[]index.Node) {
	for _, l := range links {
		if l.Owner != nil {
			*nodes = append(*nodes, *l.Owner)
			collectOwners(l.Up, nodes)
		}
	}
}

func ownerItems(w *world, links []index.OwnerLink, now time.Time) []*v1alpha1.TreeItem {
	var out []*v1alpha1.TreeItem
	for _, l := range links {
		var it *v1alpha1.TreeItem
		if l.Owner != nil {
			it = w.item(*l.Owner, now)
		} else {
			it = &v1alpha1.TreeItem{APIVersion: l.Ref.APIVersion, Kind: l.Ref.Kind, Namespace: l.Ref.Namespace, Name: l.Ref.Name, UID: string(l.Ref.UID)}
		}
		if l.Unknown {
			w.s.warn("owner %s/%s cannot be looked up: its kind cannot be listed", l.Ref.Kind, l.Ref.Name)
		}
		it.Controller = l.Controller
		it.Missing, it.Unknown, it.Cycle = l.Missing, l.Unknown, l.Cycle
		it.Owners = ownerItems(w, l.Up, now)
		out = append(out, it)
	}
	return out
}
