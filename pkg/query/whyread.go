package query

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-idx/kubectl-idx/pkg/diagnose"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// The kinds `why` reads, by role.
var (
	nodeKind        = schema.GroupKind{Kind: "Node"}
	claimKind       = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	serviceKind     = schema.GroupKind{Kind: "Service"}
	budgetKind      = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}
	limitRangeKind  = schema.GroupKind{Kind: "LimitRange"}
	deploymentKind  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	replicaSetKind  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	statefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	daemonSetKind   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	jobKind         = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobKind     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	rcKind          = schema.GroupKind{Kind: "ReplicationController"}

	// workloadKinds are the kinds that make pods, read whole with the
	// owner graph's indexes: a subtree of any of them is a walk down the
	// owner index.
	workloadKinds = []schema.GroupKind{deploymentKind, replicaSetKind, statefulSetKind, daemonSetKind, cronJobKind, jobKind, rcKind}
	// existenceKinds are the kinds pod specs refer to, read as metadata: a
	// reference is checked by name, and a Secret's data is never read.
	existenceKinds = []schema.GroupKind{{Kind: "ConfigMap"}, {Kind: "Secret"}, {Kind: "ServiceAccount"}}
)

// subtreeKinds are the kinds a subtree of each built-in kind is made of,
// itself first: all why reads whole of its namespace for one object, with
// the Services, PodDisruptionBudgets, claims, references and events every
// diagnosis reads (whyReader). A Service's are its pods' owners.
var subtreeKinds = map[schema.GroupKind][]schema.GroupKind{
	deploymentKind:  {deploymentKind, replicaSetKind, podKind},
	replicaSetKind:  {replicaSetKind, podKind},
	statefulSetKind: {statefulSetKind, podKind},
	daemonSetKind:   {daemonSetKind, podKind},
	jobKind:         {jobKind, podKind},
	cronJobKind:     {cronJobKind, jobKind, podKind},
	rcKind:          {rcKind, podKind},
	podKind:         {podKind},
	claimKind:       {},
	serviceKind:     append([]schema.GroupKind{podKind}, workloadKinds...),
}

// whyReader reads what a diagnosis needs with one factory of whole objects
// per scope and one of Warning events, and answers diagnose.Sources from
// their indexes. Each kind is read once, in the one namespace of the object
// asked about (every namespace for a cluster-scoped one or -A).
type whyReader struct {
	s   *Session
	ctx context.Context
	// namespace is the scope of the namespaced informers ("" for all).
	namespace string
	factories []*informer.Factory
	// stores holds each kind read, by kind; resources their types.
	stores    map[schema.GroupKind]cache.Indexer
	resources map[schema.GroupKind]informer.Resource
	// refs hold the metadata of the kinds pod specs refer to.
	refs   map[schema.GroupKind]cache.Indexer
	events cache.Indexer
	// unseen are the types that could not be read.
	mu     sync.Mutex
	unseen map[string]bool
	// limitRanges and requested are read on first use, per namespace and
	// per node, under lazy: subjects are diagnosed concurrently. lazy also
	// guards what those reads add to factories and resources.
	lazy        sync.Mutex
	limitRanges map[string][]*corev1.LimitRange
	requested   map[string]corev1.ResourceList
	// podsEverywhere is set when the pods read are every namespace's: a
	// node's requests are then added up from them.
	podsEverywhere bool
	// owners are the owner kinds the stores' objects name that no store
	// holds (custom resources), read as metadata.
	owners      *informer.OwnerResolver
	ownerStores []index.GraphStore
	// triage is set between newWhyReader and triagedPods when the pods
	// are read for triage (whytriage.go).
	triage *podTriage
}

// whyRead describes what to read: whole objects of kinds, the reference
// kinds' metadata, events and nodes; eventsSelector narrows the events.
type whyRead struct {
	kinds          []schema.GroupKind
	refs, nodes    bool
	events         bool
	eventsSelector string
	// triagePods reads the pods of kinds as metadata and the server's
	// table of them, for triagedPods to read whole only those that need it.
	triagePods bool
}

// newWhyReader starts and syncs the informers of what, in namespace. A type
// that cannot be listed is a warning naming it, and unseen.
func (s *Session) newWhyReader(ctx context.Context, namespace string, what whyRead) (*whyReader, error) {
	r := &whyReader{s: s, ctx: ctx, namespace: namespace, stores: map[schema.GroupKind]cache.Indexer{}, resources: map[schema.GroupKind]informer.Resource{},
		refs: map[schema.GroupKind]cache.Indexer{}, unseen: map[string]bool{}, limitRanges: map[string][]*corev1.LimitRange{}, requested: map[string]corev1.ResourceList{},
		podsEverywhere: namespace == metav1.NamespaceAll}
	r.owners = s.newOwnerResolver(namespace)
	// Whole objects past the unpaged budget (more than about 37,000
	// realistic pods) are read in pages, never by a watch-list: on 20,000
	// realistic pods, why -A took 4.1 s of CPU and kube-apiserver 2.0-2.3 s
	// by watch-list, against 3.1-3.2 s and 1.2 s in pages, with the same
	// peak memory (750-800 MB). The watch-list's saving is memory over an
	// unpaged answer, which pages bound as well.
	f, err := s.newWideFactory(informer.Config{Namespace: namespace, WatchListStall: -1})
	if err != nil {
		return nil, err
	}
	r.factories = append(r.factories, f)
	infs := map[schema.GroupKind]cache.SharedIndexInformer{}
	kinds := slices.Clone(what.kinds)
	if what.nodes {
		kinds = append(kinds, nodeKind)
	}
	var podMeta cache.SharedIndexInformer
	for _, gk := range kinds {
		res, ok := r.resource(gk)
		if !ok {
			continue
		}
		if gk == podKind && what.triagePods {
			if podMeta, err = f.Informer(res, informer.MetadataOnly, nil); err != nil {
				r.shutdown()
				return nil, err
			}
			r.triage = &podTriage{res: res}
			continue
		}
		inf, err := f.Informer(res, informer.Full, whyIndexers(gk))
		if err != nil {
			r.shutdown()
			return nil, err
		}
		infs[gk] = inf
	}
	metaInfs := map[schema.GroupKind]cache.SharedIndexInformer{}
	if what.refs {
		for _, gk := range existenceKinds {
			res, ok := r.resource(gk)
			if !ok {
				continue
			}
			inf, err := f.Informer(res, informer.MetadataOnly, nil)
			if err != nil {
				r.shutdown()
				return nil, err
			}
			metaInfs[gk] = inf
		}
	}
	var ef *informer.Factory
	var einf cache.SharedIndexInformer
	if what.events {
		// Only Warning events name causes; Normal ones are most of a
		// cluster's events.
		sel := "type=" + corev1.EventTypeWarning
		if what.eventsSelector != "" {
			sel += "," + what.eventsSelector
		}
		if ef, err = s.newWideFactory(informer.Config{Namespace: namespace, FieldSelector: sel}); err != nil {
			r.shutdown()
			return nil, err
		}
		r.factories = append(r.factories, ef)
		if einf, err = ef.Informer(eventsResource, informer.Full, cache.Indexers{index.InvolvedObjectIndex: index.InvolvedObjectIndexFunc}); err != nil {
			r.shutdown()
			return nil, err
		}
	}
	var eg errgroup.Group
	var failed, eventsFailed map[schema.GroupVersionResource]bool
	var metaFailed map[schema.GroupVersionResource]bool
	eg.Go(func() error {
		var err error
		failed, err = s.syncPartial(ctx, f, informer.Full, whyWarning)
		if err != nil {
			return err
		}
		metaFailed, err = s.syncPartial(ctx, f, informer.MetadataOnly, whyWarning)
		return err
	})
	if ef != nil {
		eg.Go(func() error {
			var err error
			eventsFailed, err = s.syncPartial(ctx, ef, informer.Full, whyWarning)
			return err
		})
	}
	if t := r.triage; t != nil {
		eg.Go(func() error {
			r.readTriageTables(ctx)
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		r.shutdown()
		return nil, err
	}
	r.keepSynced(infs, failed, r.stores)
	if t := r.triage; t != nil {
		if metaFailed[t.res.GVR] {
			r.unseen[t.res.Name()] = true
		} else {
			t.meta = podMeta.GetIndexer()
		}
	}
	r.keepSynced(metaInfs, metaFailed, r.refs)
	if einf != nil {
		if eventsFailed[eventsResource.GVR] {
			r.unseen[eventsResource.Name()] = true
		} else {
			r.events = einf.GetIndexer()
		}
	}
	return r, nil
}

// whyWarning words a type why cannot read, as tree words it.
const whyWarning = "cannot list %s, the answer may be incomplete: %s"

// whyIndexers are the indexes of the informer of gk.
func whyIndexers(gk schema.GroupKind) cache.Indexers {
	switch gk {
	case podKind:
		// No UIDIndex: pods own nothing a walk up looks for by UID, and the
		// index costs about as much again as the others on every pod.
		return cache.Indexers{index.OwnerIndex: index.OwnerIndexFunc, index.OwnerKindIndex: index.OwnerKindIndexFunc,
			index.LabelPairIndex: index.LabelPairIndexFunc, index.NamespaceIndex: index.NamespaceIndexFunc, index.NodeIndex: index.NodeIndexFunc}
	case serviceKind, budgetKind:
		return cache.Indexers{index.SelectorIndex: index.SelectorIndexFunc, index.NamespaceIndex: index.NamespaceIndexFunc}
	case nodeKind:
		return nil
	}
	return index.GraphIndexers()
}

// resource returns the type of gk the server serves, remembering it.
func (r *whyReader) resource(gk schema.GroupKind) (informer.Resource, bool) {
	if res, ok := r.resources[gk]; ok {
		return res, true
	}
	m, err := r.s.cfg.Mapper.RESTMapping(gk)
	if err != nil {
		return informer.Resource{}, false
	}
	res := informer.FromMapping(m)
	r.resources[gk] = res
	return res, true
}

// keepSynced keeps the store of each of infs in stores, by kind, or marks its
// type unseen where failed says it could not be listed.
func (r *whyReader) keepSynced(infs map[schema.GroupKind]cache.SharedIndexInformer, failed map[schema.GroupVersionResource]bool, stores map[schema.GroupKind]cache.Indexer) {
	for gk, inf := range infs {
		res := r.resources[gk]
		if failed[res.GVR] {
			r.unseen[res.Name()] = true
			continue
		}
		stores[gk] = inf.GetIndexer()
	}
}

// readAlone reads res on a factory of its own, stopped with r's. ok is false
// when res could not be listed; what that means is the caller's to say.
func (r *whyReader) readAlone(ctx context.Context, cfg informer.Config, res informer.Resource, mode informer.Mode, indexers cache.Indexers) (st cache.Indexer, ok bool, err error) {
	f, err := r.s.newWideFactory(cfg)
	if err != nil {
		return nil, false, err
	}
	r.factories = append(r.factories, f)
	inf, err := f.Informer(res, mode, indexers)
	if err != nil {
		return nil, false, err
	}
	failed, err := r.s.syncPartial(ctx, f, mode, whyWarning)
	if err != nil || failed[res.GVR] {
		return nil, false, err
	}
	return inf.GetIndexer(), true, nil
}

func (r *whyReader) shutdown() {
	for _, f := range r.factories {
		f.Shutdown()
	}
	r.owners.Shutdown()
}

// unseenTypes are the types that could not be read, sorted.
func (r *whyReader) unseenTypes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.unseen))
}

// graph is the owner graph over the stores of whole objects, and the owner
// kinds read as metadata.
func (r *whyReader) graph() *index.Graph {
	var stores []index.GraphStore
	for _, gk := range slices.SortedFunc(maps.Keys(r.stores), func(a, b schema.GroupKind) int { return cmpKind(a, b) }) {
		if gk == nodeKind || gk == serviceKind || gk == budgetKind || gk == limitRangeKind {
			continue
		}
		res := r.resources[gk]
		stores = append(stores, index.GraphStore{GVK: res.GVK, Namespaced: res.Namespaced, Indexer: r.stores[gk]})
	}
	return index.NewGraph(append(stores, r.ownerStores...))
}

func cmpKind(a, b schema.GroupKind) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	return strings.Compare(a.Kind, b.Kind)
}

// addOwnerKinds reads, as metadata, the owner kinds the stores' objects
// name that no store holds: the custom resources that own pods.
func (r *whyReader) addOwnerKinds(ctx context.Context) {
	var todo []schema.GroupVersionKind
	for _, gk := range r.graph().OwnerKinds() {
		if _, ok := r.stores[gk]; ok {
			continue
		}
		m, err := r.s.cfg.Mapper.RESTMapping(gk)
		if err != nil {
			continue
		}
		todo = append(todo, m.GroupVersionKind)
	}
	if len(todo) == 0 {
		return
	}
	for gk, err := range r.owners.Prepare(ctx, todo) {
		if ctx.Err() == nil {
			r.s.warn(whyWarning, kindName(gk), r.s.warningText(err))
		}
	}
	r.ownerStores = r.owners.Stores()
}

// objects returns every object of kind gk read.
func (r *whyReader) objects(gk schema.GroupKind) []any {
	if st, ok := r.stores[gk]; ok {
		return st.List()
	}
	return nil
}

// diagnose.Sources.

// Events implements diagnose.Sources: the Warning events about obj, by UID
// or, for emitters that name no UID, by kind and name, oldest first.
func (r *whyReader) Events(kind string, obj metav1.Object) []*corev1.Event {
	if r.events == nil {
		return nil
	}
	var out []*corev1.Event
	seen := map[string]bool{}
	for _, key := range []string{string(obj.GetUID()), index.InvolvedObjectKey(kind, obj.GetNamespace(), obj.GetName())} {
		objs, _ := r.events.ByIndex(index.InvolvedObjectIndex, key)
		for _, o := range objs {
			e, ok := o.(*corev1.Event)
			if !ok || seen[string(e.UID)] || e.InvolvedObject.Kind != kind {
				continue
			}
			seen[string(e.UID)] = true
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, compareEvents)
	return out
}

// Nodes implements diagnose.Sources.
func (r *whyReader) Nodes() ([]*corev1.Node, bool) {
	st, ok := r.stores[nodeKind]
	if !ok {
		return nil, false
	}
	var out []*corev1.Node
	for _, o := range st.List() {
		if n, ok := o.(*corev1.Node); ok {
			out = append(out, n)
		}
	}
	return out, true
}

// Node implements diagnose.Sources.
func (r *whyReader) Node(name string) (*corev1.Node, bool) {
	st, ok := r.stores[nodeKind]
	if !ok {
		return nil, false
	}
	o, exists, err := st.GetByKey(name)
	if err != nil {
		return nil, false
	}
	n, _ := o.(*corev1.Node)
	return n, !exists || n != nil
}

// Exists implements diagnose.Sources for the kinds read as metadata and
// claims.
func (r *whyReader) Exists(kind, namespace, name string) (bool, bool) {
	gk := schema.GroupKind{Kind: kind}
	st, ok := r.refs[gk]
	if !ok {
		st, ok = r.stores[gk]
	}
	if !ok || r.namespace != metav1.NamespaceAll && r.namespace != namespace {
		return false, false
	}
	_, exists, err := st.GetByKey(namespace + "/" + name)
	return exists, err == nil
}

// Claim implements diagnose.Sources.
func (r *whyReader) Claim(namespace, name string) (*corev1.PersistentVolumeClaim, bool) {
	st, ok := r.stores[claimKind]
	if !ok || r.namespace != metav1.NamespaceAll && r.namespace != namespace {
		return nil, false
	}
	o, exists, err := st.GetByKey(namespace + "/" + name)
	if err != nil {
		return nil, false
	}
	if !exists {
		return nil, true
	}
	c, ok := o.(*corev1.PersistentVolumeClaim)
	return c, ok
}

// SelectedBy implements diagnose.Sources through the selector index.
func (r *whyReader) SelectedBy(namespace string, set labels.Set) []runtime.Object {
	var out []runtime.Object
	for _, gk := range []schema.GroupKind{serviceKind, budgetKind} {
		st, ok := r.stores[gk]
		if !ok {
			continue
		}
		objs, err := index.SelectedBy(st, namespace, set)
		if err != nil {
			continue
		}
		out = append(out, runtimeObjects(objs)...)
	}
	return out
}

// SelectedPods implements diagnose.Sources through the label pair index.
func (r *whyReader) SelectedPods(namespace string, sel labels.Selector) ([]*corev1.Pod, bool) {
	st, ok := r.stores[podKind]
	if !ok {
		return nil, false
	}
	objs, err := index.Selected(st, namespace, sel)
	if err != nil {
		return nil, false
	}
	out := make([]*corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, p)
		}
	}
	return out, true
}

// LimitRanges implements diagnose.Sources, reading the namespace's
// LimitRanges on first use: only a FailedCreate that quotes one needs them.
func (r *whyReader) LimitRanges(namespace string) ([]*corev1.LimitRange, bool) {
	r.lazy.Lock()
	defer r.lazy.Unlock()
	if lrs, ok := r.limitRanges[namespace]; ok {
		return lrs, lrs != nil
	}
	r.limitRanges[namespace] = nil
	res, ok := r.resource(limitRangeKind)
	if !ok {
		return nil, false
	}
	st, ok, err := r.readAlone(r.ctx, informer.Config{Namespace: namespace}, res, informer.Full, nil)
	if err != nil {
		return nil, false
	}
	if !ok {
		r.mu.Lock()
		r.unseen[res.Name()] = true
		r.mu.Unlock()
		return nil, false
	}
	lrs := []*corev1.LimitRange{}
	for _, o := range st.List() {
		if lr, ok := o.(*corev1.LimitRange); ok {
			lrs = append(lrs, lr)
		}
	}
	slices.SortFunc(lrs, func(a, b *corev1.LimitRange) int { return strings.Compare(a.Name, b.Name) })
	r.limitRanges[namespace] = lrs
	return lrs, true
}

// Requested implements diagnose.Sources: what the pods bound to node
// request, from the pods read when they are every namespace's, else read
// for the node alone (pods with that spec.nodeName, summaries only) on
// first use: only a pod the scheduler found too big needs it.
func (r *whyReader) Requested(node string) (corev1.ResourceList, bool) {
	r.lazy.Lock()
	defer r.lazy.Unlock()
	if req, ok := r.requested[node]; ok {
		return req, req != nil
	}
	r.requested[node] = nil
	var pods []any
	if st, ok := r.stores[podKind]; ok && r.podsEverywhere {
		var err error
		if pods, err = st.ByIndex(index.NodeIndex, node); err != nil {
			return nil, false
		}
	} else {
		res, ok := r.resource(podKind)
		if !ok {
			return nil, false
		}
		st, ok, err := r.readAlone(r.ctx, informer.Config{FieldSelector: "spec.nodeName=" + node}, res, informer.Summary, nil)
		if err != nil || !ok {
			return nil, false
		}
		pods = st.List()
	}
	sum := corev1.ResourceList{}
	n := int64(0)
	for _, o := range pods {
		p, ok := o.(*corev1.Pod)
		if !ok || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		n++
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			cur := sum[name]
			cur.Add(q)
			sum[name] = cur
		}
	}
	sum[corev1.ResourcePods] = *resource.NewQuantity(n, resource.DecimalSI)
	r.requested[node] = sum
	return sum, true
}

var _ diagnose.Sources = (*whyReader)(nil)

// key is obj's cache key.
func key(obj metav1.Object) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// fullOf returns the whole object of n from the stores, nil when its kind
// is not read whole.
func (r *whyReader) fullOf(n index.Node) runtime.Object {
	st, ok := r.stores[n.GVK.GroupKind()]
	if !ok {
		return nil
	}
	o, exists, err := st.GetByKey(key(n.Object))
	if err != nil || !exists {
		return nil
	}
	ro, _ := o.(runtime.Object)
	if a, err := meta.Accessor(ro); err != nil || a.GetUID() != n.Object.GetUID() {
		return nil
	}
	return ro
}
