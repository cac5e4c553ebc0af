package feed

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
)

// ownerGraph is an OwnerScope's memory of ownership, kept in the order the feed
// handles notifications. It is what lets an owner count after it is deleted,
// and what finds the objects to judge again when an owner changes.
//
// A node remembers the ownerReferences of one UID. There is a node for every
// feed object that has ownerReferences (the objects that may have to be judged
// again), and for every owner something remembered references. A node with
// feed objects takes its references from them; one without, from the lookup's
// reports, or from the object's last state once it is deleted. A node goes when
// it is neither: an owner nothing remembered references any more, a feed object
// without references and without dependents, or a deleted object whose
// dependents are all gone.
type ownerGraph struct {
	nodes map[types.UID]*ownerNode
	// dependents are, by owner UID, the nodes referencing the owner, whether or
	// not the owner is a node itself.
	dependents map[types.UID]map[types.UID]struct{}
	// feedUIDs is the UID of every feed object a node holds.
	feedUIDs map[objectKey]types.UID
	// appeared are owners found after they had been missing: their dependents
	// were judged without them and are to be judged again.
	appeared []types.UID
	// dirty and dirtyKeys are the nodes and feed objects changed since the
	// feed last recorded its State; nil when it does not (Config.Record).
	dirty     map[types.UID]struct{}
	dirtyKeys map[objectKey]struct{}
}

// touch records that the node of uid changed.
func (g *ownerGraph) touch(uid types.UID) {
	if g.dirty != nil {
		g.dirty[uid] = struct{}{}
	}
}

// touchKey records that what the graph holds of feed object k changed.
func (g *ownerGraph) touchKey(k objectKey) {
	if g.dirtyKeys != nil {
		g.dirtyKeys[k] = struct{}{}
	}
}

// ownerNode is what is remembered of one UID.
type ownerNode struct {
	refs []metav1.OwnerReference
	// objs are the feed's objects with this UID in the state last notified
	// (one, unless two of the feed's resources serve the same objects). Empty
	// once the feed has seen the object deleted, or when only the lookup knows
	// it.
	objs []feedObject
}

// feedObject is one object of the feed, as last notified.
type feedObject struct {
	key objectKey
	obj runtime.Object
}

func newOwnerGraph() ownerGraph {
	return ownerGraph{
		nodes:      map[types.UID]*ownerNode{},
		dependents: map[types.UID]map[types.UID]struct{}{},
		feedUIDs:   map[objectKey]types.UID{},
	}
}

func (g *ownerGraph) referenced(uid types.UID) bool {
	return len(g.dependents[uid]) > 0
}

// dependentsOf returns the UIDs referencing uid, sorted so that events come in
// the same order every time.
func (g *ownerGraph) dependentsOf(uid types.UID) []types.UID {
	deps := make([]types.UID, 0, len(g.dependents[uid]))
	for d := range g.dependents[uid] {
		deps = append(deps, d)
	}
	slices.Sort(deps)
	return deps
}

// feedObjects returns a copy of the feed objects with uid.
func (g *ownerGraph) feedObjects(uid types.UID) []feedObject {
	if n := g.nodes[uid]; n != nil {
		return slices.Clone(n.objs)
	}
	return nil
}

// takeAppeared returns and clears the owners that appeared.
func (g *ownerGraph) takeAppeared() []types.UID {
	a := g.appeared
	g.appeared = nil
	return a
}

// remember adds the node of an owner found through the lookup.
func (s *OwnerScope) remember(uid types.UID, refs []metav1.OwnerReference) {
	n := &ownerNode{}
	s.graph.nodes[uid] = n
	s.graph.touch(uid)
	s.setRefs(uid, n, refs)
}

// observe records the state of a feed object as notified, before the object is
// judged. It reports whether the objects below it are to be judged again: its
// ownerReferences changed, or it is an owner the feed had not known.
func (s *OwnerScope) observe(key objectKey, obj runtime.Object, m metav1.Object) bool {
	uid := m.GetUID()
	if old, ok := s.graph.feedUIDs[key]; ok && old != uid {
		// Deleted and created again under the same name while the watch was
		// down: the old object goes as if deleted, with its last references.
		s.forget(key, old, nil)
	}
	refs := s.refsOf(m)
	n := s.graph.nodes[uid]
	changed := false
	if n == nil {
		if len(refs) == 0 && !s.graph.referenced(uid) {
			return false
		}
		n = &ownerNode{}
		s.graph.nodes[uid] = n
		s.graph.touch(uid)
		// Referenced but not remembered: its dependents may have been judged
		// while it was missing from the lookup.
		changed = s.graph.referenced(uid)
		delete(s.missing, uid)
	}
	s.graph.touchKey(key)
	i := slices.IndexFunc(n.objs, func(o feedObject) bool { return o.key == key })
	if i < 0 {
		n.objs = append(n.objs, feedObject{key: key, obj: obj})
	} else {
		n.objs[i].obj = obj
	}
	s.graph.feedUIDs[key] = uid
	if s.setRefs(uid, n, refs) {
		changed = true
	}
	s.prune(uid)
	return changed
}

// forget records that the feed object key with uid is gone; m, when known, is
// its last state. The node stays, with the last references, while something
// references it. It reports whether the objects below are to be judged again,
// which is only when the last state has references the feed had not seen.
func (s *OwnerScope) forget(key objectKey, uid types.UID, m metav1.Object) bool {
	if s.graph.feedUIDs[key] == uid {
		delete(s.graph.feedUIDs, key)
		s.graph.touchKey(key)
	}
	n := s.graph.nodes[uid]
	if n == nil {
		return false
	}
	s.graph.touch(uid)
	n.objs = slices.DeleteFunc(n.objs, func(o feedObject) bool { return o.key == key })
	changed := false
	if len(n.objs) == 0 && m != nil {
		changed = s.setRefs(uid, n, s.refsOf(m))
	}
	s.prune(uid)
	return changed
}

// ownerChanged records what the lookup reported, for an object something
// remembered references, unless the feed's own informers hold the object: in
// queue order they are the authority on it. It reports whether the objects
// below it are to be judged again.
func (s *OwnerScope) ownerChanged(ctx context.Context, ch OwnerChange) bool {
	n := s.graph.nodes[ch.UID]
	if n == nil && !s.graph.referenced(ch.UID) || n != nil && len(n.objs) > 0 {
		return false
	}
	refs := ch.Refs
	if !ch.Deleted {
		var ok bool
		if refs, ok = s.lookup.OwnerReferences(ctx, ch.Kind, ch.UID, false); !ok {
			// Deleted since; the deletion is reported next.
			return false
		}
	}
	delete(s.missing, ch.UID)
	if n == nil {
		// Referenced but not remembered: its dependents may have been judged
		// while it was missing.
		s.remember(ch.UID, refs)
		return true
	}
	return s.setRefs(ch.UID, n, refs)
}

// setRefs gives node n of uid the references refs, keeping dependents in step,
// and reports whether they differ from the ones it had.
func (s *OwnerScope) setRefs(uid types.UID, n *ownerNode, refs []metav1.OwnerReference) bool {
	if index.SameOwnerRefs(n.refs, refs) {
		return false
	}
	old := n.refs
	n.refs = refs
	s.graph.touch(uid)
	// New links first, so that an owner referenced before and after is never
	// unreferenced in between, which would forget it.
	for _, r := range refs {
		if r.UID == "" {
			continue
		}
		deps := s.graph.dependents[r.UID]
		if deps == nil {
			deps = map[types.UID]struct{}{}
			s.graph.dependents[r.UID] = deps
		}
		deps[uid] = struct{}{}
	}
	for _, r := range old {
		if !slices.ContainsFunc(refs, func(n metav1.OwnerReference) bool { return n.UID == r.UID }) {
			s.unlink(uid, r.UID)
		}
	}
	return true
}

// unlink removes dependent from owner's dependents, and forgets owner if that
// was the last one.
func (s *OwnerScope) unlink(dependent, owner types.UID) {
	deps, ok := s.graph.dependents[owner]
	if !ok {
		return
	}
	if _, ok := deps[dependent]; !ok {
		return
	}
	delete(deps, dependent)
	if len(deps) == 0 {
		delete(s.graph.dependents, owner)
	}
	s.prune(owner)
}

// prune forgets uid if nothing needs it remembered: nothing references it, and
// it is not a feed object with references (which may have to be judged again).
// Forgetting it may leave its owners unreferenced, which are pruned in turn.
func (s *OwnerScope) prune(uid types.UID) {
	if s.graph.referenced(uid) {
		s.collectCycle(uid)
		return
	}
	delete(s.missing, uid)
	n := s.graph.nodes[uid]
	if n == nil || len(n.objs) > 0 && len(n.refs) > 0 {
		return
	}
	for _, o := range n.objs {
		delete(s.graph.feedUIDs, o.key)
		s.graph.touchKey(o.key)
	}
	delete(s.graph.nodes, uid)
	s.graph.touch(uid)
	refs := n.refs
	n.refs = nil
	for _, r := range refs {
		s.unlink(uid, r.UID)
	}
}

// collectCycle forgets uid and everything referencing it, directly or not, when
// none of them is a feed object. They then only reference each other through
// a cycle, and no feed object's owners lead through them: were one to, it would
// reference uid too. The walk ends at the first feed object, which is at once
// in the usual case of an owner of pods.
func (s *OwnerScope) collectCycle(uid types.UID) {
	if n := s.graph.nodes[uid]; n == nil || len(n.objs) > 0 {
		return
	}
	seen := map[types.UID]bool{uid: true}
	set := []types.UID{uid}
	for i := 0; i < len(set); i++ {
		for dep := range s.graph.dependents[set[i]] {
			if seen[dep] {
				continue
			}
			if n := s.graph.nodes[dep]; n == nil || len(n.objs) > 0 {
				return
			}
			seen[dep] = true
			set = append(set, dep)
		}
	}
	for _, u := range set {
		n := s.graph.nodes[u]
		if n == nil {
			// Forgotten already, as an owner the ones before left unreferenced.
			continue
		}
		delete(s.graph.nodes, u)
		s.graph.touch(u)
		delete(s.missing, u)
		refs := n.refs
		n.refs = nil
		for _, r := range refs {
			s.unlink(u, r.UID)
		}
	}
}
