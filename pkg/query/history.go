package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/history"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// HistoryOptions are what History asks besides its object.
type HistoryOptions struct {
	// Since starts the window; zero starts it when the object was created.
	Since time.Time
	// Now ends the window: when the question is asked. Zero is time.Now().
	Now time.Time
	// Uses adds what the object's pod spec uses: ConfigMaps, Secrets (as
	// metadata, their data never read), PersistentVolumeClaims and the
	// ServiceAccount.
	Uses bool
	// Checkpoint is a `kubectl idx watch --checkpoint` file to fold in, ""
	// for none. ContextName is what a plain run's one context is called
	// there (the kubeconfig's).
	Checkpoint  string
	ContextName string
	// EventTTL is how long the API server keeps an event after it last
	// happened (its --event-ttl); zero is DefaultEventTTL.
	EventTTL time.Duration
}

// DefaultEventTTL is how long an API server keeps an event after it last
// happened, unless its --event-ttl says otherwise.
const DefaultEventTTL = time.Hour

// usedKinds are the kinds of what a pod spec uses (--uses), and how much of
// their objects a history reads: they are, with the object asked about and
// its revisions, the objects a history explains field by field, read with
// their managedFields. The rest of the tool, and the rest of a history,
// reads objects without them.
var usedKinds = []struct {
	kind string
	gk   schema.GroupKind
	mode informer.Mode
}{
	{index.RefConfigMap, schema.GroupKind{Kind: index.RefConfigMap}, informer.Full},
	// A Secret's data is never read: its metadata names its fields' writers.
	{index.RefSecret, schema.GroupKind{Kind: index.RefSecret}, informer.MetadataOnly},
	{index.RefPVC, schema.GroupKind{Kind: index.RefPVC}, informer.Full},
	{index.RefServiceAccount, schema.GroupKind{Kind: index.RefServiceAccount}, informer.Full},
}

// historyRun is one History question as it is answered.
type historyRun struct {
	s    *Session
	opts HistoryOptions
	w    *world
	tree *index.TreeNode
	// nodes are the tree's objects, root first; root is nodes[0].
	nodes []index.Node
	root  index.Node
	ns    string
	from  time.Time
	to    time.Time
	// rootObj is the root read whole, with its managedFields; nil when it
	// could not be read so (managedFields and revisions are then unknown).
	rootObj     runtime.Object
	rootContent map[string]any
	managers    *history.Managers
	// used are the objects the root's pod spec uses, read with their
	// managedFields (--uses).
	used []explainedObject
	// revs are the root's revisions, nil for a kind without; rollouts their
	// entries.
	revs     []revision
	rollouts []v1alpha1.HistoryEntry
	// unavailable says, by source, why it could not be read.
	unavailable map[string]string
	// events is the store of the scope's events, nil when unreadable.
	events cache.Indexer
	doc    *v1alpha1.History
	// revisionKind names the revisions' resource (replicasets) and
	// revisionsLimit the workload's revisionHistoryLimit, for the coverage.
	revisionKind   string
	revisionsLimit string
}

// explainedObject is an object read whole (or, a Secret, as metadata) with
// its managedFields.
type explainedObject struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	obj        runtime.Object
	meta       metav1.Object
	content    map[string]any
	managers   *history.Managers
}

// History answers `kubectl idx history`: what changed under obj, oldest
// first, from what the cluster keeps: the revisions of its pod template
// (ReplicaSets, ControllerRevisions), diffed one after the other as kubectl
// rollout history reads them; the Events of the objects under it; who last
// wrote which field (managedFields, read for the object, its revisions and
// what it uses only); the objects' own creation and deletion times; and,
// given a checkpoint of `kubectl idx watch`, what that feed recorded. Each
// stretch of the window no source covers is a gap. The tree is found as
// Tree finds it. A type that cannot be listed is a warning and a source the
// coverage says could not be read.
func (s *Session) History(ctx context.Context, obj ObjectRef, opts HistoryOptions) (*v1alpha1.History, error) {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.EventTTL <= 0 {
		opts.EventTTL = DefaultEventTTL
	}
	w, tree, err := s.descendants(ctx, obj)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	h := &historyRun{s: s, opts: opts, w: w, tree: tree, nodes: flatten(tree), root: tree.Node,
		ns: tree.Node.Object.GetNamespace(), to: opts.Now, unavailable: map[string]string{}}
	h.from = opts.Since
	if h.from.IsZero() {
		h.from = h.root.Object.GetCreationTimestamp().Time
	}
	h.doc = v1alpha1.NewHistory(v1alpha1.HistoryObjectFor(h.root.GVK, h.root.Object))
	h.doc.From, h.doc.To = metav1.NewTime(h.from), metav1.NewTime(h.to)

	kinds := nodeKinds(h.nodes)
	if opts.Uses {
		for _, u := range usedKinds {
			if m, err := s.cfg.Mapper.RESTMapping(u.gk); err == nil && !slices.Contains(kinds, m.GroupVersionKind) {
				kinds = append(kinds, m.GroupVersionKind)
			}
		}
	}
	m, err := s.whereMatcher(ctx, kinds, false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	if err := h.read(ctx); err != nil {
		return nil, err
	}
	if m != nil {
		if err := w.loadFull(ctx, h.nodes); err != nil {
			return nil, err
		}
		if err := m.ready(ctx); err != nil {
			return nil, err
		}
	}
	if len(h.revs) > 0 {
		h.rollouts = revisionEntries(h.doc.Object, h.rootContent, h.managers, h.revs, metav1.NewTime(h.to))
	}
	var entries []v1alpha1.HistoryEntry
	entries = append(entries, h.rollouts...)
	entries = append(entries, h.managedFieldsEntries()...)
	entries = append(entries, h.objectEntries()...)
	entries = append(entries, h.eventEntries()...)
	var covered []history.Interval
	if opts.Checkpoint != "" {
		ce, iv, err := h.checkpointEntries(ctx)
		if err != nil {
			return nil, err
		}
		entries = append(entries, ce...)
		covered = append(covered, iv...)
	}
	entries = slices.DeleteFunc(entries, func(e v1alpha1.HistoryEntry) bool {
		t := e.Time.Time
		if e.Until != nil {
			t = e.Until.Time
		}
		return t.Before(h.from) || e.Time.After(h.to)
	})
	if m != nil {
		entries = h.matching(m, entries)
	}
	slices.SortStableFunc(entries, compareEntries)
	h.doc.Entries = entries
	covered = append(covered, h.coverage()...)
	h.gaps(covered)
	h.doc.Warnings = s.Warnings()
	h.doc.AsOf = s.AsOf()
	return h.doc, nil
}

// sourceOrder orders the entries of one time: the rollout before the
// writes and events it explains.
var sourceOrder = map[string]int{v1alpha1.SourceRevision: 0, v1alpha1.SourceManagedFields: 1, v1alpha1.SourceObject: 2, v1alpha1.SourceEvent: 3, v1alpha1.SourceCheckpoint: 4}

func compareEntries(a, b v1alpha1.HistoryEntry) int {
	if c := a.Time.Compare(b.Time.Time); c != 0 {
		return c
	}
	if c := sourceOrder[a.Source] - sourceOrder[b.Source]; c != 0 {
		return c
	}
	if a.Revision != nil && b.Revision != nil {
		return int(a.Revision.Number - b.Revision.Number)
	}
	return strings.Compare(a.Object.Kind+"/"+a.Object.Name, b.Object.Kind+"/"+b.Object.Name)
}

// read reads what the sources need beside the tree: the root, its revisions
// and what it uses, whole with their managedFields, and the scope's events.
func (h *historyRun) read(ctx context.Context) error {
	s := h.s
	f, err := s.newWideFactory(informer.Config{Namespace: h.ns, KeepManagedFields: true})
	if err != nil {
		return err
	}
	defer f.Shutdown()
	rootRes := informer.Resource{GVR: h.w.resourceFor(h.root.GVK.GroupKind()), GVK: h.root.GVK, Namespaced: h.root.Namespaced}
	rootMode := informer.Full
	if h.root.GVK.GroupKind() == secretKind {
		// A Secret's data is never read: its metadata names its writers.
		rootMode = informer.MetadataOnly
	}
	rootInf, err := f.Informer(rootRes, rootMode, nil)
	if err != nil {
		return err
	}
	var revRes informer.Resource
	var revInf cache.SharedIndexInformer
	if gk, ok := revisionsKind(h.root.GVK.GroupKind()); ok {
		h.revisionKind = strings.ToLower(gk.Kind) + "s"
		if mp, err := s.cfg.Mapper.RESTMapping(gk); err != nil {
			h.unavailable[v1alpha1.SourceRevision] = fmt.Sprintf("the server doesn't serve %s", kindName(gk))
		} else {
			revRes = informer.FromMapping(mp)
			if revInf, err = f.Informer(revRes, informer.Full, nil); err != nil {
				return err
			}
		}
	}
	// The events in a factory of their own: the world's lists the tree's
	// kinds again in full for --where, which says what it could not read.
	ef, err := s.newWideFactory(informer.Config{Namespace: h.ns})
	if err != nil {
		return err
	}
	defer ef.Shutdown()
	evInf, err := ef.Informer(eventsResource, informer.Full, cache.Indexers{index.InvolvedObjectIndex: index.InvolvedObjectIndexFunc})
	if err != nil {
		return err
	}
	ef.Start(reflectorContext(ctx))
	failed, err := h.sync(ctx, f)
	if err != nil {
		return err
	}
	evFailed, err := h.sync(ctx, ef)
	if err != nil {
		return err
	}
	if why, ok := evFailed[eventsResource.GVR]; ok {
		h.unavailable[v1alpha1.SourceEvent] = why
	} else {
		h.events = evInf.GetIndexer()
	}
	if why, ok := failed[rootRes.GVR]; ok {
		h.unavailable[v1alpha1.SourceManagedFields] = why
	} else if o := lookupUID(rootInf.GetIndexer(), h.root); o != nil {
		h.rootObj = o
		if h.rootContent, h.managers, err = s.explain(o, h.root.GVK); err != nil {
			return err
		}
	}
	if revInf != nil {
		if why, ok := failed[revRes.GVR]; ok {
			h.unavailable[v1alpha1.SourceRevision] = why
		} else if h.rootObj != nil {
			if err := h.readRevisions(revInf.GetIndexer(), revRes.GVK); err != nil {
				return err
			}
		} else {
			h.unavailable[v1alpha1.SourceRevision] = "the object itself could not be read whole"
		}
	}
	if h.opts.Uses {
		return h.readUsed(ctx)
	}
	return nil
}

// sync starts f and waits for its informers; those whose list failed for
// good are warnings naming the type, and returned with why.
func (h *historyRun) sync(ctx context.Context, f *informer.Factory) (map[schema.GroupVersionResource]string, error) {
	f.Start(reflectorContext(ctx))
	skipped, err := f.WaitForSyncPartial(ctx)
	if err != nil {
		return nil, err
	}
	out := map[schema.GroupVersionResource]string{}
	for _, sk := range skipped {
		text := h.s.warningText(sk.Err)
		out[sk.Resource.GVR] = fmt.Sprintf("cannot list %s: %s", sk.Resource.Name(), text)
		h.s.warn("cannot list %s, the answer may be incomplete: %s", sk.Resource.Name(), text)
	}
	return out, nil
}

// lookupUID returns the object of store that n names, nil when the store
// holds another object of that name (deleted and made again since).
func lookupUID(store cache.Indexer, n index.Node) runtime.Object {
	key := n.Object.GetName()
	if n.Object.GetNamespace() != "" {
		key = n.Object.GetNamespace() + "/" + key
	}
	obj, ok, err := store.GetByKey(key)
	if err != nil || !ok {
		return nil
	}
	ro, ok := obj.(runtime.Object)
	if !ok {
		return nil
	}
	if a, err := meta.Accessor(ro); err != nil || a.GetUID() != n.Object.GetUID() {
		return nil
	}
	return ro
}

// explain returns obj, of kind gvk, as decoded JSON with its kind and
// without its managedFields, and its managedFields parsed. Fields that do
// not parse are a warning, and no managers.
func (s *Session) explain(obj runtime.Object, gvk schema.GroupVersionKind) (map[string]any, *history.Managers, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", strings.ToLower(gvk.Kind), err)
	}
	content["apiVersion"], content["kind"] = gvk.GroupVersion().String(), gvk.Kind
	if md, ok := content["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	a, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	m, err := history.ParseManagers(a.GetManagedFields())
	if err != nil {
		s.warn("%s/%s: %s", strings.ToLower(gvk.Kind), a.GetName(), err)
		return content, nil, nil
	}
	return content, m, nil
}

// readRevisions reads the root's revisions from store, of kind gvk: the
// objects of that kind under the root in the tree, whole.
func (h *historyRun) readRevisions(store cache.Indexer, gvk schema.GroupVersionKind) error {
	var rss []*appsv1.ReplicaSet
	var crs []*appsv1.ControllerRevision
	objs := map[types.UID]runtime.Object{}
	for _, c := range h.tree.Children {
		if c.GVK.GroupKind() != gvk.GroupKind() {
			continue
		}
		o := lookupUID(store, c.Node)
		switch t := o.(type) {
		case *appsv1.ReplicaSet:
			rss = append(rss, t)
		case *appsv1.ControllerRevision:
			crs = append(crs, t)
		default:
			continue
		}
		objs[c.Object.GetUID()] = o
	}
	var err error
	if gvk.GroupKind() == replicaSetKind {
		d, ok := h.rootObj.(*appsv1.Deployment)
		if !ok {
			return fmt.Errorf("reading the revisions of %T: not a Deployment", h.rootObj)
		}
		h.revs, err = deploymentRevisions(d, rss)
		if d.Spec.RevisionHistoryLimit != nil {
			h.revisionsLimit = fmt.Sprintf("revisionHistoryLimit %d", *d.Spec.RevisionHistoryLimit)
		}
	} else {
		h.revs, err = controllerRevisions(h.rootObj, crs)
		switch t := h.rootObj.(type) {
		case *appsv1.StatefulSet:
			if t.Spec.RevisionHistoryLimit != nil {
				h.revisionsLimit = fmt.Sprintf("revisionHistoryLimit %d", *t.Spec.RevisionHistoryLimit)
			}
		case *appsv1.DaemonSet:
			if t.Spec.RevisionHistoryLimit != nil {
				h.revisionsLimit = fmt.Sprintf("revisionHistoryLimit %d", *t.Spec.RevisionHistoryLimit)
			}
		}
	}
	if err != nil {
		return err
	}
	for i := range h.revs {
		r := &h.revs[i]
		if r.content, r.managers, err = h.s.explain(objs[r.obj.GetUID()], r.gvk); err != nil {
			return err
		}
	}
	return nil
}

// readUsed reads what the root's pod spec uses, with managedFields.
func (h *historyRun) readUsed(ctx context.Context) error {
	spec, ok := index.PodSpecOf(h.rootObj)
	if !ok {
		return nil
	}
	podName := ""
	if h.root.GVK.GroupKind() == podKind {
		podName = h.root.Object.GetName()
	}
	refs := index.SpecReferences(spec, podName)
	if len(refs) == 0 {
		return nil
	}
	f, err := h.s.newWideFactory(informer.Config{Namespace: h.ns, KeepManagedFields: true})
	if err != nil {
		return err
	}
	defer f.Shutdown()
	type started struct {
		res informer.Resource
		inf cache.SharedIndexInformer
	}
	stores := map[string]started{}
	for _, u := range usedKinds {
		if !slices.ContainsFunc(refs, func(r index.Reference) bool { return r.Kind == u.kind }) {
			continue
		}
		mp, err := h.s.cfg.Mapper.RESTMapping(u.gk)
		if err != nil {
			continue
		}
		res := informer.FromMapping(mp)
		inf, err := f.Informer(res, u.mode, nil)
		if err != nil {
			return err
		}
		stores[u.kind] = started{res, inf}
	}
	f.Start(reflectorContext(ctx))
	skipped, err := f.WaitForSyncPartial(ctx)
	if err != nil {
		return err
	}
	failed := map[schema.GroupVersionResource]bool{}
	for _, sk := range skipped {
		failed[sk.Resource.GVR] = true
		text := h.s.warningText(sk.Err)
		h.unavailable["uses "+sk.Resource.Name()] = fmt.Sprintf("cannot list %s: %s", sk.Resource.Name(), text)
		h.s.warn("cannot list %s, the answer may be incomplete: %s", sk.Resource.Name(), text)
	}
	for _, r := range refs {
		st, ok := stores[r.Kind]
		if !ok || failed[st.res.GVR] {
			continue
		}
		obj, exists, err := st.inf.GetIndexer().GetByKey(h.ns + "/" + r.Name)
		if err != nil || !exists {
			continue
		}
		ro, ok := obj.(runtime.Object)
		if !ok {
			continue
		}
		content, managers, err := h.s.explain(ro, st.res.GVK)
		if err != nil {
			return err
		}
		a, _ := meta.Accessor(ro)
		h.used = append(h.used, explainedObject{gvk: st.res.GVK, namespaced: st.res.Namespaced, obj: ro, meta: a, content: content, managers: managers})
	}
	return nil
}

// objectName names an object as kubectl does in messages: deployment/web.
func objectName(gvk schema.GroupVersionKind, o metav1.Object) string {
	return strings.ToLower(gvk.Kind) + "/" + o.GetName()
}

// managedFieldsEntries are the last writes of each manager of the root and
// of what it uses: the fields each owns, with their values now. A write the
// root's rollout entries already name as theirs leaves out the template's
// fields, which the rollout shows with their old values.
func (h *historyRun) managedFieldsEntries() []v1alpha1.HistoryEntry {
	var out []v1alpha1.HistoryEntry
	if h.managers != nil {
		rollouts := map[string]bool{}
		for _, e := range h.rollouts {
			if e.Until != nil {
				// A rollback, whose time is not kept.
				continue
			}
			for _, m := range e.Managers {
				if m.Time != nil && wroteAt(m.Time.Time, e.Time.Time) {
					rollouts[m.Manager+"/"+m.Operation+"/"+m.Subresource] = true
				}
			}
		}
		out = append(out, writtenEntries(h.doc.Object, h.root.GVK, h.rootContent, h.managers, h.root.Object.GetCreationTimestamp(), metav1.NewTime(h.to), func(m metav1.ManagedFieldsEntry, p history.Path) bool {
			return !rollouts[m.Manager+"/"+string(m.Operation)+"/"+m.Subresource] || !p.HasPrefix(templatePath)
		})...)
	}
	for _, u := range h.used {
		if u.managers != nil {
			out = append(out, writtenEntries(v1alpha1.HistoryObjectFor(u.gvk, u.meta), u.gvk, u.content, u.managers, u.meta.GetCreationTimestamp(), metav1.NewTime(h.to), nil)...)
		}
	}
	return out
}

// writtenEntries are the Written entries of an object's managers: each
// manager's fields (keep, when set, keeps some), with their values now. A
// write whose time is not kept is said to be between the object's creation
// and now.
func writtenEntries(obj v1alpha1.HistoryObject, gvk schema.GroupVersionKind, content map[string]any, managers *history.Managers, created, now metav1.Time, keep func(metav1.ManagedFieldsEntry, history.Path) bool) []v1alpha1.HistoryEntry {
	var out []v1alpha1.HistoryEntry
	keys := history.KeysFor(gvk)
	for i, m := range managers.Entries {
		e := v1alpha1.HistoryEntry{Object: obj, Source: v1alpha1.SourceManagedFields, Action: "Written",
			Managers: []v1alpha1.FieldManager{fieldManager(m)}}
		if m.Time != nil {
			e.Time = *m.Time
		} else {
			// The API server keeps no time for some writes (through the
			// scale subresource): they came after the object's creation,
			// no more is known.
			e.Time, e.Until = created, &now
			e.Note = "managedFields keep no time for this write"
		}
		for _, p := range managers.Fields(i, content, keys) {
			if keep != nil && !keep(m, p) {
				continue
			}
			v, ok := history.Lookup(content, p)
			if !ok {
				continue
			}
			e.Changes = append(e.Changes, v1alpha1.HistoryChange{Path: p.String(), New: rawJSON(v), OldUnknown: true})
		}
		if len(e.Changes) == 0 {
			continue
		}
		out = append(out, e)
	}
	return out
}

// objectEntries are what the objects say of themselves: their creation and
// a deletion under way. A revision's creation is its rollout.
func (h *historyRun) objectEntries() []v1alpha1.HistoryEntry {
	revKind, hasRevs := revisionsKind(h.root.GVK.GroupKind())
	var out []v1alpha1.HistoryEntry
	add := func(gvk schema.GroupVersionKind, o metav1.Object) {
		ref := v1alpha1.HistoryObjectFor(gvk, o)
		if ts := o.GetCreationTimestamp(); !ts.IsZero() && !(hasRevs && len(h.revs) > 0 && gvk.GroupKind() == revKind) {
			out = append(out, v1alpha1.HistoryEntry{Time: ts, Object: ref, Source: v1alpha1.SourceObject, Action: "Created"})
		}
		if ts := o.GetDeletionTimestamp(); ts != nil {
			out = append(out, v1alpha1.HistoryEntry{Time: *ts, Object: ref, Source: v1alpha1.SourceObject, Action: "Deleting",
				Note: "deletion requested; finalizers: " + strings.Join(o.GetFinalizers(), ",")})
		}
	}
	for _, n := range h.nodes {
		add(n.GVK, n.Object)
	}
	for _, u := range h.used {
		add(u.gvk, u.meta)
	}
	return out
}

// eventEntries are the events of the tree's objects and of what the root
// uses.
func (h *historyRun) eventEntries() []v1alpha1.HistoryEntry {
	if h.events == nil {
		return nil
	}
	type subject struct {
		gvk schema.GroupVersionKind
		o   metav1.Object
	}
	var subjects []subject
	for _, n := range h.nodes {
		subjects = append(subjects, subject{n.GVK, n.Object})
	}
	for _, u := range h.used {
		subjects = append(subjects, subject{u.gvk, u.meta})
	}
	seen := map[types.UID]bool{}
	var out []v1alpha1.HistoryEntry
	for _, sj := range subjects {
		keys := []string{string(sj.o.GetUID()), index.InvolvedObjectKey(sj.gvk.Kind, sj.o.GetNamespace(), sj.o.GetName())}
		for _, key := range keys {
			objs, err := h.events.ByIndex(index.InvolvedObjectIndex, key)
			if err != nil {
				continue
			}
			for _, obj := range objs {
				e, ok := obj.(*corev1.Event)
				if !ok || seen[e.UID] {
					continue
				}
				seen[e.UID] = true
				reporter := e.ReportingController
				if reporter == "" {
					reporter = e.Source.Component
				}
				count := e.Count
				if e.Series != nil {
					count = e.Series.Count
				}
				out = append(out, v1alpha1.HistoryEntry{
					Time: metav1.NewTime(EventTime(e)), Object: v1alpha1.HistoryObjectFor(sj.gvk, sj.o), Source: v1alpha1.SourceEvent, Action: e.Reason,
					Event: &v1alpha1.HistoryEvent{Type: e.Type, Reason: e.Reason, Message: e.Message, Count: count, Reporter: reporter},
				})
			}
		}
	}
	return out
}

// matching keeps the entries whose object, as it is now, matches m: an
// object gone has nothing to match.
func (h *historyRun) matching(m *matcher, entries []v1alpha1.HistoryEntry) []v1alpha1.HistoryEntry {
	match := h.w.matches(m)
	byUID := map[string]bool{}
	for _, n := range h.nodes {
		byUID[string(n.Object.GetUID())] = match(n)
	}
	for _, u := range h.used {
		byUID[string(u.meta.GetUID())] = m.match(u.gvk, u.obj)
	}
	return slices.DeleteFunc(entries, func(e v1alpha1.HistoryEntry) bool { return !byUID[e.Object.UID] })
}
