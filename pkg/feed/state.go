package feed

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// Gap is the stretch of a resource's history an informer skipped by listing
// again: the events it makes fold every change of an object in it into one
// (see Mark). The watch event document carries it.
type Gap = v1alpha1.WatchGap

// Mark says where a notification stands in its resource's history, as a
// feed informer's cursor tells it (informer.Cursor).
type Mark struct {
	// Position is the resourceVersion the source has been delivered up to once
	// the notification is handled; empty when it does not move.
	Position string
	// Gap is set on the notifications of a relist.
	Gap *Gap
}

// MarkedHandler takes an informer's notifications with their Marks. Like
// Handler, it only timestamps and enqueues.
type MarkedHandler struct {
	f      *Feed
	source int
}

// Marked returns the MarkedHandler of source.
func (f *Feed) Marked(source int) MarkedHandler { return MarkedHandler{f: f, source: source} }

func (h MarkedHandler) push(kind notifyKind, obj any, initial bool, m Mark) {
	h.f.q.push(notification{kind: kind, source: h.source, obj: obj, initial: initial, time: h.f.cfg.Now(), pos: m.Position, gap: m.Gap})
}

// OnAdd takes an OnAdd notification with its mark.
func (h MarkedHandler) OnAdd(obj any, isInInitialList bool, m Mark) {
	h.push(notifyAdd, obj, isInInitialList, m)
}

// OnUpdate takes an OnUpdate notification with its mark.
func (h MarkedHandler) OnUpdate(_, newObj any, m Mark) { h.push(notifyUpdate, newObj, false, m) }

// OnDelete takes an OnDelete notification with its mark.
func (h MarkedHandler) OnDelete(obj any, m Mark) { h.push(notifyDelete, obj, false, m) }

// OnPosition takes a position reached without a notification.
func (h MarkedHandler) OnPosition(m Mark) { h.push(notifyPosition, nil, false, m) }

// Known is one object a feed knows, as a checkpoint keeps it: its identity
// and version, not its content.
type Known struct {
	Source          int
	Namespace, Name string
	UID             types.UID
	ResourceVersion string
	// Printed is set when the feed printed the object in this version and
	// holds it as in scope; unset for an object an OwnerScope only follows,
	// out of scope or not yet printed.
	Printed bool
	// Followed is set when an OwnerScope follows the object's references
	// (Refs): it has some, or something references it.
	Followed bool
	// Refs are the references the OwnerScope follows from it: its
	// ownerReferences, or an Event's involvedObject.
	Refs []metav1.OwnerReference
}

// Owner is an owner an OwnerScope remembers that is not one of the feed's
// objects: one the lookup found walking up, or one of the feed's since
// deleted that something still references.
type Owner struct {
	UID  types.UID
	Refs []metav1.OwnerReference
}

// State is what a feed knows, as a checkpoint keeps it.
type State struct {
	// Positions are, by source, the resourceVersion each source had been
	// delivered up to.
	Positions map[int]string
	Objects   []Known
	Owners    []Owner
}

// Delta is what changed in a feed's State since the last Delta, handed to
// Config.Record after every flush of the events it covers.
type Delta struct {
	// Positions are the sources' new positions.
	Positions map[int]string
	// Put are objects known now, in their new version; Drop those no longer
	// known (Namespace and Name set).
	Put, Drop []Known
	// PutOwners and DropOwners are the remembered owners that changed.
	PutOwners  []Owner
	DropOwners []types.UID
	// Printed counts the events emitted (and flushed) since the last Delta.
	Printed int
}

// Empty reports whether d records nothing.
func (d *Delta) Empty() bool {
	return len(d.Positions) == 0 && len(d.Put) == 0 && len(d.Drop) == 0 && len(d.PutOwners) == 0 && len(d.DropOwners) == 0 && d.Printed == 0
}

// journal tracks what changed since the last Delta.
type journal struct {
	positions map[int]string
	objects   map[objectKey]struct{}
	printed   int
}

func newJournal() *journal {
	return &journal{positions: map[int]string{}, objects: map[objectKey]struct{}{}}
}

// touch records that what the feed knows of k changed.
func (f *Feed) touch(k objectKey) {
	if f.journal != nil {
		f.journal.objects[k] = struct{}{}
	}
}

// setPosition records that source has been delivered up to rv.
func (f *Feed) setPosition(source int, rv string) {
	if rv == "" || f.positions[source] == rv {
		return
	}
	f.positions[source] = rv
	if f.journal != nil {
		f.journal.positions[source] = rv
	}
}

// record hands Config.Record what changed since it was last called.
func (f *Feed) record() error {
	if f.journal == nil {
		return nil
	}
	j := f.journal
	d := &Delta{Printed: j.printed}
	if len(j.positions) > 0 {
		d.Positions = j.positions
	}
	s := f.ownerScope()
	if s != nil {
		// A node whose references changed changes what is known of its
		// objects; a remembered owner is kept on its own.
		for uid := range s.graph.dirty {
			n := s.graph.nodes[uid]
			switch {
			case n == nil:
				d.DropOwners = append(d.DropOwners, uid)
			case len(n.objs) == 0:
				d.PutOwners = append(d.PutOwners, Owner{UID: uid, Refs: n.refs})
			default:
				d.DropOwners = append(d.DropOwners, uid)
				for _, o := range n.objs {
					j.objects[o.key] = struct{}{}
				}
			}
		}
		clear(s.graph.dirty)
		for k := range s.graph.dirtyKeys {
			j.objects[k] = struct{}{}
		}
		clear(s.graph.dirtyKeys)
	}
	for k := range j.objects {
		if kn, ok := f.known(k); ok {
			d.Put = append(d.Put, kn)
		} else {
			ns, name := splitKey(k.key)
			d.Drop = append(d.Drop, Known{Source: k.source, Namespace: ns, Name: name})
		}
	}
	sortKnown(d.Put)
	sortKnown(d.Drop)
	slices.SortFunc(d.PutOwners, func(a, b Owner) int { return strings.Compare(string(a.UID), string(b.UID)) })
	slices.Sort(d.DropOwners)
	f.journal = newJournal()
	if d.Empty() {
		return nil
	}
	return f.cfg.Record(d)
}

func sortKnown(ks []Known) {
	slices.SortFunc(ks, func(a, b Known) int {
		if a.Source != b.Source {
			return a.Source - b.Source
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
}

func splitKey(key string) (namespace, name string) {
	if ns, name, ok := strings.Cut(key, "/"); ok {
		return ns, name
	}
	return "", key
}

// known returns what the feed knows of k, for a checkpoint.
func (f *Feed) known(k objectKey) (Known, bool) {
	ns, name := splitKey(k.key)
	kn := Known{Source: k.source, Namespace: ns, Name: name}
	prev, printed := f.last[k]
	if printed {
		kn.UID, kn.ResourceVersion, kn.Printed = prev.uid, prev.rv, true
	}
	if s := f.ownerScope(); s != nil {
		if uid, ok := s.graph.feedUIDs[k]; ok {
			if n := s.graph.nodes[uid]; n != nil {
				for _, o := range n.objs {
					if o.key != k {
						continue
					}
					kn.Followed, kn.Refs = true, n.refs
					if !printed {
						kn.UID, kn.ResourceVersion = uid, resourceVersionOf(o.obj)
					}
				}
			}
		}
	}
	return kn, kn.Printed || kn.Followed
}

func resourceVersionOf(obj runtime.Object) string {
	if m, err := meta.Accessor(obj); err == nil {
		return m.GetResourceVersion()
	}
	return ""
}

// ownerScope returns the feed's OwnerScope, the one whose memory a
// checkpoint keeps; a feed has one at most.
func (f *Feed) ownerScope() *OwnerScope {
	if len(f.owners) == 0 {
		return nil
	}
	return f.owners[0]
}

// restore takes up st: the objects it knows stand as stubs until the
// informers' first lists bring them in the same version (see resumed), and
// the OwnerScope's memory is as it was.
func (f *Feed) restore(st *State) {
	f.stubs = map[runtime.Object]bool{}
	f.resume = true
	for src, rv := range st.Positions {
		f.positions[src] = rv
	}
	s := f.ownerScope()
	for _, kn := range st.Objects {
		stub := f.cfg.Stub(kn)
		f.stubs[stub] = true
		f.stubsBySource[kn.Source] = append(f.stubsBySource[kn.Source], stub)
		k := objectKey{source: kn.Source, key: kn.Name}
		if kn.Namespace != "" {
			k.key = kn.Namespace + "/" + kn.Name
		}
		if kn.Printed {
			f.last[k] = emitted{uid: kn.UID, rv: kn.ResourceVersion, obj: stub}
		}
		if kn.Followed && s != nil {
			n := s.graph.nodes[kn.UID]
			if n == nil {
				n = &ownerNode{}
				s.graph.nodes[kn.UID] = n
			}
			n.objs = append(n.objs, feedObject{key: k, obj: stub})
			s.graph.feedUIDs[k] = kn.UID
			s.setRefs(kn.UID, n, kn.Refs)
		}
	}
	if s == nil {
		return
	}
	for _, o := range st.Owners {
		if s.graph.nodes[o.UID] == nil {
			s.remember(o.UID, o.Refs)
		}
		f.restoredOwners = append(f.restoredOwners, o.UID)
	}
	clear(s.graph.dirty)
	clear(s.graph.dirtyKeys)
}

// Stubs returns the objects that stand for the restored objects of source
// (Config.Restore), for its informer's resume point.
func (f *Feed) Stubs(source int) []runtime.Object { return f.stubsBySource[source] }

// isStub reports whether obj stands for a restored object.
func (f *Feed) isStub(obj runtime.Object) bool { return f.stubs[obj] }

// followRestoredOwners asks the lookup about every restored owner, so that
// the informer of its kind runs and reports what changed while the feed was
// not running: a report that differs from what was restored has the objects
// below judged again, as live.
func (f *Feed) followRestoredOwners(ctx context.Context) {
	s := f.ownerScope()
	if s == nil {
		return
	}
	for _, uid := range f.restoredOwners {
		// The kind is the one the references name.
		for dep := range s.graph.dependents[uid] {
			n := s.graph.nodes[dep]
			if n == nil {
				continue
			}
			i := slices.IndexFunc(n.refs, func(r metav1.OwnerReference) bool { return r.UID == uid })
			if i < 0 {
				continue
			}
			s.lookup.OwnerReferences(ctx, schema.FromAPIVersionAndKind(n.refs[i].APIVersion, n.refs[i].Kind), uid, false)
			break
		}
	}
	f.restoredOwners = nil
}

// resumed takes a notification of an informer's first list when the feed
// resumes: it prints nothing (the watch from the position brings every
// change since), and an object known in the same version replaces its stub,
// so that what is printed of it later (its old state, its state when it
// leaves the scope) is whole.
func (f *Feed) resumed(n *notification) error {
	ro, ok := n.obj.(runtime.Object)
	if !ok || f.isStub(ro) {
		return nil
	}
	m, err := meta.Accessor(ro)
	if err != nil {
		return nil
	}
	k := keyOf(n.source, m)
	if prev, ok := f.last[k]; ok && f.isStub(prev.obj) && prev.uid == m.GetUID() && prev.rv == m.GetResourceVersion() {
		prev.obj = ro
		f.last[k] = prev
	}
	if s := f.ownerScope(); s != nil {
		if nd := s.graph.nodes[m.GetUID()]; nd != nil {
			for i, o := range nd.objs {
				if o.key == k && f.isStub(o.obj) && resourceVersionOf(o.obj) == m.GetResourceVersion() {
					nd.objs[i].obj = ro
				}
			}
		}
	}
	return nil
}

// keyOf returns the key of the object m of source.
func keyOf(source int, m metav1.Object) objectKey {
	k := objectKey{source: source, key: m.GetName()}
	if ns := m.GetNamespace(); ns != "" {
		k.key = ns + "/" + k.key
	}
	return k
}

// stale reports whether m is an older version of the object the feed knows
// under k: a watch resumed from a position before the last one recorded
// delivers again what was handled already. resourceVersions of one resource
// compare as integers (Kubernetes 1.35, KEP-5504); ones that do not parse
// are never stale.
func (f *Feed) stale(k objectKey, m metav1.Object) bool {
	known := ""
	if prev, ok := f.last[k]; ok && prev.uid == m.GetUID() {
		known = prev.rv
	} else if s := f.ownerScope(); s != nil {
		if uid, ok := s.graph.feedUIDs[k]; ok && uid == m.GetUID() {
			if nd := s.graph.nodes[uid]; nd != nil {
				for _, o := range nd.objs {
					if o.key == k {
						known = resourceVersionOf(o.obj)
					}
				}
			}
		}
	}
	if known == "" {
		return false
	}
	c, err := resourceversion.CompareResourceVersion(m.GetResourceVersion(), known)
	return err == nil && c < 0
}
