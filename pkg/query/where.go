package query

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// --where enters the engine here, and only here: Config.Where holds the
// expressions the command layer parsed, Target.Schemas the server's OpenAPI
// schemas they are typed with. A question asks this file four things:
//
//   - readMode: how much of each object to read, from what the expressions
//     read (where.Uses), not from the flag's presence: a predicate on labels
//     keeps metadata-only informers, one on status reads whole objects;
//   - compileWhere: the filter of each kind it lists, typed against the
//     kind's schema, before anything is listed;
//   - pageKeep: for a one-shot listing whose expressions read the object
//     alone, the informer's page filter, so that objects that do not match
//     never reach a store;
//   - a matcher: the filter with owner and node bound, for the objects of
//     stores, streams, trees and feeds.
//
// Run-time errors are counted per session (each Session forks the command's
// Conditions) and said with the session's warnings (Session.Warnings).

// whereState is a session's --where: its Conditions, counting their errors
// apart from other sessions', and the filter of each kind compiled so far.
type whereState struct {
	conds   *where.Conditions
	schemas *where.Schemas

	mu    sync.Mutex
	kinds map[schema.GroupVersionKind]*kindFilter
}

// kindFilter is the expressions compiled for one kind.
type kindFilter struct {
	filter *where.Filter
	// never is set when the expressions cannot apply to the kind at all: they
	// name node, which only pods have.
	never bool
	// err is why the expressions do not fit the kind's schema, in which case
	// filter types them dynamically; nil when they fit.
	err error
}

// newWhereState returns the --where of a session over target t, nil without
// --where.
func newWhereState(conds *where.Conditions, t Target) *whereState {
	if conds == nil {
		return nil
	}
	return &whereState{conds: conds.Fork(), schemas: t.Schemas, kinds: map[schema.GroupVersionKind]*kindFilter{}}
}

// whereUses reports what the session's --where reads; nothing without one.
func (s *Session) whereUses() where.Uses {
	if s.where == nil {
		return where.Uses{}
	}
	return s.where.conds.Uses()
}

// readsObject reports whether --where reads more of objects of kind gk than
// their metadata: beyond it, or a pod's node (spec.nodeName).
func (s *Session) readsObject(gk schema.GroupKind) bool {
	u := s.whereUses()
	return u.ObjectBeyondMetadata || u.Node && gk == podKind
}

// readMode is mode, the one the output needs, raised to what --where reads
// of objects of kind gk: metadata-only informers read whole objects, and so
// do the pod summaries of grouped tables (whose pods are stripped of what the
// expressions may read), rows carry whole objects.
func (s *Session) readMode(gk schema.GroupKind, mode informer.Mode) informer.Mode {
	if !s.readsObject(gk) {
		return mode
	}
	switch mode {
	case informer.MetadataOnly, informer.Summary:
		return informer.Full
	case informer.Rows:
		return informer.FullRows
	}
	return mode
}

// compileWhere compiles --where for every kind of kinds not compiled yet,
// before the question lists anything. The expressions must fit at least one
// of the kinds, typed by its schema; otherwise the error of the first kind
// they do not fit is returned: object.spec.replica is an error, not an empty
// answer. In a question over several kinds (deploy,pods; a tree), a kind they
// do not fit gets them typed dynamically, where what its objects lack is an
// error on each object (false, and a warning) unless has() guards it, and a
// kind other than Pod never matches expressions that name node.
func (s *Session) compileWhere(kinds []schema.GroupVersionKind) error {
	if s.where == nil || len(kinds) == 0 {
		return nil
	}
	var first error
	fits := false
	for _, gvk := range kinds {
		kf := s.where.filter(gvk)
		fits = fits || kf.err == nil
		if first == nil {
			first = kf.err
		}
	}
	if fits {
		return nil
	}
	return first
}

// filter returns the filter of gvk, compiling it on first use.
func (w *whereState) filter(gvk schema.GroupVersionKind) *kindFilter {
	w.mu.Lock()
	defer w.mu.Unlock()
	if kf, ok := w.kinds[gvk]; ok {
		return kf
	}
	kf := &kindFilter{}
	w.kinds[gvk] = kf
	if kf.filter, kf.err = w.conds.Compile(gvk, w.schemas); kf.err == nil {
		return kf
	}
	if w.conds.Uses().Node && gvk.GroupKind() != podKind {
		kf.never = true
		return kf
	}
	if kf.filter, _ = w.conds.Compile(gvk, nil); kf.filter == nil {
		kf.never = true
	}
	return kf
}

// whereWarnings words --where's run-time errors so far as warnings.
func (s *Session) whereWarnings() []string {
	if s.where == nil {
		return nil
	}
	var out []string
	for _, w := range s.where.conds.Warnings() {
		out = append(out, w.String())
	}
	return out
}

// pageKeep returns the page filter of a one-shot listing (informer.Config's
// Keep) when --where reads the object alone: an object that does not match
// is dropped with its LIST page and never held. Expressions that name owner
// or node are judged once the lists have synced, by a matcher, since the
// owners and nodes are not known while the pages arrive. nil without --where,
// and for informers lent by a Source other than OneShot.
func (s *Session) pageKeep() func(informer.Resource, runtime.Object) bool {
	u := s.whereUses()
	if s.where == nil || u.Owner || u.Node || s.cfg.Source != nil {
		// A Source other than OneShot lends informers that other
		// questions read too: their pages are not this question's to drop.
		return nil
	}
	return func(r informer.Resource, obj runtime.Object) bool {
		kf := s.where.filter(r.GVK)
		return !kf.never && kf.filter.Match(where.Input{Object: unwrapRow(obj)})
	}
}

// unwrapRow returns the object a server's table row describes, obj itself
// for any other object.
func unwrapRow(obj runtime.Object) runtime.Object {
	if r, ok := obj.(interface{ Unwrap() runtime.Object }); ok {
		return r.Unwrap()
	}
	return obj
}

// matcher evaluates a session's --where on objects, with owner and node
// bound: the top-level controller as --by-owner resolves it (TopOwners) and a
// pod's Node from a nodes informer, each started only when the expressions
// name it. A nil *matcher matches everything. It is safe for concurrent use.
type matcher struct {
	s    *Session
	uses where.Uses

	owners    *TopOwners
	stopOwner func()
	// live is set for a feed, whose owners change while it runs: the top
	// owner of a controller is then looked up on every evaluation.
	live bool
	mu   sync.Mutex
	tops map[types.UID]*where.Owner

	nodes     cache.Indexer
	nodeSync  func(context.Context) error
	nodesOnce sync.Once
	nodesErr  error
	stopNodes func()
}

// whereMatcher compiles --where for kinds (see compileWhere) and returns the
// matcher of a question over them, with the informers owner and node need
// started: they list while the question's own informers do. live is set for
// a feed. The caller closes it. Without --where it returns nil.
func (s *Session) whereMatcher(ctx context.Context, kinds []schema.GroupVersionKind, live bool) (*matcher, error) {
	if s.where == nil {
		return nil, nil
	}
	if err := s.compileWhere(kinds); err != nil {
		return nil, err
	}
	m := &matcher{s: s, uses: s.whereUses(), live: live, tops: map[types.UID]*where.Owner{}}
	if m.uses.Owner {
		m.owners, m.stopOwner = s.TopOwners(ctx)
		if slices.ContainsFunc(kinds, func(k schema.GroupVersionKind) bool { return k.GroupKind() == podKind }) {
			m.owners.resolver.Prefetch(ctx, podOwnerKinds)
		}
	}
	if m.uses.Node && slices.ContainsFunc(kinds, func(k schema.GroupVersionKind) bool { return k.GroupKind() == podKind }) {
		if err := m.startNodes(ctx); err != nil {
			m.close()
			return nil, err
		}
	}
	return m, nil
}

// nodesResource is the core Node type.
var nodesResource = informer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("nodes"), GVK: corev1.SchemeGroupVersion.WithKind("Node")}

// startNodes starts the informer of the nodes pods run on, metadata only when
// the expressions read nothing else of them. Nodes are cluster-scoped and the
// user's selectors are about the objects listed, not their nodes.
func (m *matcher) startNodes(ctx context.Context) error {
	mode := informer.Full
	if m.uses.NodeMetadataOnly() {
		mode = informer.MetadataOnly
	}
	f, err := m.s.newFactory(informer.Config{SyncTimeout: m.s.cfg.SyncTimeout})
	if err != nil {
		return err
	}
	inf, err := f.Informer(nodesResource, mode, nil)
	if err != nil {
		f.Shutdown()
		return err
	}
	f.Start(reflectorContext(ctx))
	m.nodes, m.nodeSync, m.stopNodes = inf.GetIndexer(), f.WaitForSync, f.Shutdown
	return nil
}

// ready waits for the nodes informer, if there is one: no pod is judged
// before every node is known. A nodes list that fails is the question's
// error: without nodes, expressions that name node cannot be judged.
func (m *matcher) ready(ctx context.Context) error {
	if m == nil || m.nodeSync == nil {
		return nil
	}
	m.nodesOnce.Do(func() {
		if err := m.nodeSync(ctx); err != nil {
			m.nodesErr = fmt.Errorf("--where names node: %w", err)
		}
	})
	return m.nodesErr
}

// close stops the informers of owner and node.
func (m *matcher) close() {
	if m == nil {
		return
	}
	if m.stopOwner != nil {
		m.stopOwner()
	}
	if m.stopNodes != nil {
		m.stopNodes()
	}
}

// match reports whether obj, of kind gvk, matches every expression. Call
// ready first.
func (m *matcher) match(gvk schema.GroupVersionKind, obj runtime.Object) bool {
	if m == nil {
		return true
	}
	kf := m.s.where.filter(gvk)
	if kf.never {
		return false
	}
	obj = unwrapRow(obj)
	in := where.Input{Object: obj}
	if m.uses.Owner {
		in.Owner = m.owner(obj)
	}
	if m.uses.Node && gvk.GroupKind() == podKind {
		in.Node = m.node(obj)
	}
	return kf.filter.Match(in)
}

// filter returns the objects of objs, all of kind gvk, that match, in their
// order.
func (m *matcher) filter(gvk schema.GroupVersionKind, objs []runtime.Object) []runtime.Object {
	if m == nil {
		return objs
	}
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		if m.match(gvk, o) {
			out = append(out, o)
		}
	}
	return out
}

// owner returns what the owner variable holds for obj: its top-level
// controller, the last controller reference --by-owner would follow up from
// it, with the owner's metadata; only the reference's name, namespace and
// UID when that owner is gone or its kind cannot be read; nil when no
// controller owns obj. Owners are shared by many objects (a ReplicaSet's
// pods), so one walk serves every object of the same controller, but in a
// feed.
func (m *matcher) owner(obj runtime.Object) *where.Owner {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	ctrl := metav1.GetControllerOfNoCopy(acc)
	if ctrl == nil {
		return nil
	}
	if !m.live {
		m.mu.Lock()
		o, ok := m.tops[ctrl.UID]
		m.mu.Unlock()
		if ok {
			return o
		}
	}
	top, found := m.owners.top(obj)
	o := &where.Owner{APIVersion: top.APIVersion, Kind: top.Kind}
	if found != nil {
		o.Object = found
	} else {
		gv, _ := schema.ParseGroupVersion(top.APIVersion)
		om := &metav1.ObjectMeta{Name: top.Name, UID: top.UID}
		if m.owners.resolver.Namespaced(schema.GroupKind{Group: gv.Group, Kind: top.Kind}) {
			om.Namespace = acc.GetNamespace()
		}
		o.Object = om
	}
	if !m.live {
		m.mu.Lock()
		m.tops[ctrl.UID] = o
		m.mu.Unlock()
	}
	return o
}

// node returns the Node pod obj runs on, nil when it is unscheduled or names
// a node that does not exist.
func (m *matcher) node(obj runtime.Object) any {
	if m.nodes == nil {
		return nil
	}
	names, err := index.NodeIndexFunc(obj)
	if err != nil || len(names) == 0 {
		return nil
	}
	n, ok, err := m.nodes.GetByKey(names[0])
	if err != nil || !ok {
		return nil
	}
	return n
}

// errWhereUsesMetadata is the error of `kubectl idx uses POD|WORKLOAD` with
// a --where that reads beyond metadata: the objects a pod spec refers to are
// read as metadata, Secrets above all.
var errWhereUsesMetadata = errors.New("--where reads beyond metadata, and kubectl idx uses reads the objects a pod spec refers to as metadata only (a Secret's data is never read): use object.metadata, object.kind and object.apiVersion")

// filterMembers returns members with the objects that match, leaving out the
// kinds none of whose objects does.
func filterMembers(m *matcher, members []v1alpha1.Members) []v1alpha1.Members {
	if m == nil {
		return members
	}
	out := members[:0:0]
	for _, mb := range members {
		if mb.Objects = m.filter(mb.GVK, mb.Objects); len(mb.Objects) > 0 {
			out = append(out, mb)
		}
	}
	return out
}

// mappedKinds returns the kinds of gks the server serves, at the version its
// mapper prefers, in order.
func (s *Session) mappedKinds(gks []schema.GroupKind) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, gk := range gks {
		if m, err := s.cfg.Mapper.RESTMapping(gk); err == nil {
			out = append(out, m.GroupVersionKind)
		}
	}
	return out
}

// nodeKinds returns the kinds of nodes, each once, in order.
func nodeKinds(nodes []index.Node) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for _, n := range nodes {
		if !slices.Contains(out, n.GVK) {
			out = append(out, n.GVK)
		}
	}
	return out
}

// matches returns m's judgement of the nodes of w's graph: on the whole
// object where the expressions read more than metadata and w read it
// (loadFull reads every kind then, but Secrets), on the metadata otherwise.
func (w *world) matches(m *matcher) func(index.Node) bool {
	return func(n index.Node) bool {
		var full runtime.Object
		if w.s.readsObject(n.GVK.GroupKind()) {
			full = w.fullObject(n)
		}
		return m.matchNode(n, full)
	}
}

// matchNode reports whether node n matches every expression: its whole
// object full where read (nil where not), its own (metadata) otherwise.
func (m *matcher) matchNode(n index.Node, full runtime.Object) bool {
	obj := full
	if obj == nil {
		ro, ok := n.Object.(runtime.Object)
		if !ok {
			return false
		}
		obj = ro
	}
	return m.match(n.GVK, obj)
}

// pruneTree returns t without the objects that do not match and own nothing
// that does, so that what matches stays connected to the root; the root
// stays when root is set.
func pruneTree(t *index.TreeNode, match func(index.Node) bool, root bool) *index.TreeNode {
	var children []*index.TreeNode
	for _, c := range t.Children {
		if kept := pruneTree(c, match, false); kept != nil {
			children = append(children, kept)
		}
	}
	if !root && len(children) == 0 && !match(t.Node) {
		return nil
	}
	out := *t
	out.Children = children
	return &out
}

// pruneOwners returns the owner links of links whose owner matches or has an
// owner above it that does: an owners chain stays connected to its object.
func pruneOwners(links []index.OwnerLink, match func(index.Node) bool) []index.OwnerLink {
	var out []index.OwnerLink
	for _, l := range links {
		l.Up = pruneOwners(l.Up, match)
		if len(l.Up) > 0 || l.Owner != nil && match(*l.Owner) {
			out = append(out, l)
		}
	}
	return out
}

// whereOrphans returns the orphans that match --where, all of them without
// one. Where the expressions read more than metadata, the orphans' kinds are
// read in full first.
func (s *Session) whereOrphans(ctx context.Context, w *world, orphans []index.Orphan) ([]index.Orphan, error) {
	if s.where == nil {
		return orphans, nil
	}
	nodes := make([]index.Node, len(orphans))
	for i, o := range orphans {
		nodes[i] = o.Node
	}
	kinds := nodeKinds(nodes)
	if len(kinds) == 0 {
		return orphans, nil
	}
	m, err := s.whereMatcher(ctx, kinds, false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	if err := w.loadFull(ctx, nodes); err != nil {
		return nil, err
	}
	if err := m.ready(ctx); err != nil {
		return nil, err
	}
	match := w.matches(m)
	out := orphans[:0:0]
	for _, o := range orphans {
		if match(o.Node) {
			out = append(out, o)
		}
	}
	return out, nil
}

// scope returns the feed.Scope of --where over a feed of kinds (by source):
// an object that starts matching enters the feed (ADDED), one that stops
// leaves it (DELETED, LeftScope). nil for a nil matcher. In a feed, a change
// of an owner or a node alone judges nothing again: the objects below it are
// judged at their own next change.
func (m *matcher) scope(kinds []schema.GroupVersionKind) feed.Scope {
	if m == nil {
		return nil
	}
	return whereScope{m: m, kinds: kinds}
}

// whereScope is the feed.Scope of --where.
type whereScope struct {
	m     *matcher
	kinds []schema.GroupVersionKind
}

// Contains implements feed.Scope.
func (w whereScope) Contains(_ context.Context, source int, obj runtime.Object) bool {
	if source < 0 || source >= len(w.kinds) {
		return false
	}
	return w.m.match(w.kinds[source], obj)
}

// warnWhere hands --where's run-time errors to warn, once a feed has ended:
// a feed's count is known only then.
func (s *Session) warnWhere(warn func(error)) {
	if warn == nil {
		return
	}
	for _, w := range s.whereWarnings() {
		warn(errors.New(w))
	}
}
