package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// world is a set of informers over many types, all in one factory.
type world struct {
	s       *Session
	factory *informer.Factory
	stores  []index.GraphStore
	kinds   map[schema.GroupKind]bool
	// full holds the stores of whole objects per kind, one per namespace
	// read or one for the world's scope.
	full map[schema.GroupKind][]cache.Indexer
	// namespace is the scope of the world's namespaced informers.
	namespace string
	// extra are the per-namespace factories loadFull started.
	extra []*informer.Factory
	// indexers are the indexes of the metadata informers.
	indexers cache.Indexers
	// owners reads the owner kinds the world's types do not cover, and
	// ownerStores are its stores so far.
	owners      *informer.OwnerResolver
	ownerStores []index.GraphStore
}

// newWorld builds an empty world whose namespaced informers cover namespace
// ("" for all).
func (s *Session) newWorld(ctx context.Context, namespace string) (*world, error) {
	cfg := informer.Config{Namespace: namespace}
	if s.cfg.Progress != nil {
		cfg.Progress, cfg.ProgressDelay = s.cfg.Progress, time.Second
	}
	f, err := s.newWideFactory(cfg)
	if err != nil {
		return nil, err
	}
	f.Start(reflectorContext(ctx))
	return &world{s: s, factory: f, namespace: namespace, indexers: index.GraphIndexers(),
		owners: s.newOwnerResolver(namespace),
		kinds:  map[schema.GroupKind]bool{}, full: map[schema.GroupKind][]cache.Indexer{}}, nil
}

func (w *world) shutdown() {
	w.factory.Shutdown()
	w.owners.Shutdown()
	for _, f := range w.extra {
		f.Shutdown()
	}
}

// add starts metadata-only informers, indexed for the graph, for the
// resources not yet in the world and waits for them. A type that cannot be
// listed is skipped with a warning naming it.
func (w *world) add(ctx context.Context, resources []informer.Resource) error {
	var added []informer.Resource
	var infs []cache.SharedIndexInformer
	for _, r := range resources {
		gk := r.GVK.GroupKind()
		if w.kinds[gk] {
			continue
		}
		w.kinds[gk] = true
		inf, err := w.factory.Informer(r, informer.MetadataOnly, w.indexers)
		if err != nil {
			return err
		}
		added = append(added, r)
		infs = append(infs, inf)
	}
	if len(added) == 0 {
		return nil
	}
	failed, err := w.s.syncPartial(ctx, w.factory, informer.MetadataOnly, "cannot list %s, the answer may be incomplete: %s")
	if err != nil {
		return err
	}
	for i, r := range added {
		if failed[r.GVR] {
			continue
		}
		w.stores = append(w.stores, index.GraphStore{GVK: r.GVK, Namespaced: r.Namespaced, Indexer: infs[i].GetIndexer()})
	}
	return nil
}

// addListable adds every listable type (namespaced ones only if asked).
func (w *world) addListable(ctx context.Context, namespacedOnly bool) error {
	resources, errs := w.s.listable(namespacedOnly)
	for _, err := range errs {
		w.s.warn("%s, the answer may be incomplete", w.s.warningText(err))
	}
	if len(resources) == 0 && len(errs) > 0 {
		return errs[0]
	}
	return w.add(ctx, resources)
}

// addOwnerKinds adds the kinds that objects of the world name as owners, level
// by level, until every referenced kind is in or known to be unavailable.
func (w *world) addOwnerKinds(ctx context.Context) error {
	tried := map[schema.GroupKind]bool{}
	for depth := 0; depth < index.MaxOwnerDepth; depth++ {
		var todo []schema.GroupVersionKind
		names := map[schema.GroupKind]string{}
		for _, gk := range w.graph().OwnerKinds() {
			if w.kinds[gk] || tried[gk] {
				continue
			}
			tried[gk] = true
			m, err := w.s.cfg.Mapper.RESTMapping(gk)
			if err != nil {
				w.s.warn("owners of kind %s cannot be looked up: the server doesn't serve it", kindName(gk))
				continue
			}
			todo = append(todo, m.GroupVersionKind)
			names[gk] = informer.FromMapping(m).Name()
		}
		if len(todo) == 0 {
			return nil
		}
		errs := w.owners.Prepare(ctx, todo)
		for _, gvk := range todo {
			gk := gvk.GroupKind()
			w.kinds[gk] = true
			if err, ok := errs[gk]; ok {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				w.s.warn("cannot list %s, the answer may be incomplete: %s", names[gk], w.s.warningText(err))
			}
		}
		w.ownerStores = w.owners.Stores()
	}
	return nil
}

// graph returns the graph over the world's synced stores.
func (w *world) graph() *index.Graph {
	return index.NewGraph(append(slices.Clip(w.stores), w.ownerStores...))
}

// statusKinds are the built-in kinds whose trees show readiness and status;
// custom resources always do (their Ready condition). Other kinds would cost
// a full list for an empty column.
var statusKinds = map[schema.GroupKind]bool{
	{Kind: "Pod"}: true, {Kind: "Node"}: true, {Kind: "ReplicationController"}: true,
	{Kind: "PersistentVolumeClaim"}: true, {Kind: "PersistentVolume"}: true,
	{Group: "apps", Kind: "Deployment"}: true, {Group: "apps", Kind: "ReplicaSet"}: true,
	{Group: "apps", Kind: "StatefulSet"}: true, {Group: "apps", Kind: "DaemonSet"}: true,
	{Group: "batch", Kind: "Job"}: true, {Group: "batch", Kind: "CronJob"}: true,
}

// secretKind is the kind whose objects a question over every type never
// reads beyond metadata.
var secretKind = schema.GroupKind{Kind: "Secret"}

// fullNamespaceLimit is how many namespaces a cluster-wide world reads full
// objects from one namespace at a time; beyond it, one cluster-wide list per
// kind is cheaper than many small ones.
const fullNamespaceLimit = 8

// loadFull starts full informers for the kinds among nodes that have a status
// worth showing, or whose objects --where reads beyond metadata, and waits for
// them. Failures only cost the status column. In
// a cluster-wide world, a kind whose nodes live in a few namespaces is read
// from those namespaces only: a tree of one Deployment must not cost a full
// list of every pod in the cluster.
func (w *world) loadFull(ctx context.Context, nodes []index.Node) error {
	type want struct {
		res        informer.Resource
		namespaces map[string]bool
	}
	wants := map[schema.GroupKind]*want{}
	var order []schema.GroupKind
	for _, n := range nodes {
		gk := n.GVK.GroupKind()
		if w.full[gk] != nil {
			continue
		}
		wt, ok := wants[gk]
		if !ok {
			builtin := gk.Group == "" || strings.HasSuffix(gk.Group, ".k8s.io") || !strings.Contains(gk.Group, ".")
			// --where may read any kind's objects; a Secret's data is never
			// read (its expressions see its metadata).
			if builtin && !statusKinds[gk] && (!w.s.readsObject(gk) || gk == secretKind) {
				continue
			}
			r := informer.Resource{GVR: w.resourceFor(gk), GVK: n.GVK, Namespaced: n.Namespaced}
			if r.GVR.Empty() {
				continue
			}
			wt = &want{res: r, namespaces: map[string]bool{}}
			wants[gk] = wt
			order = append(order, gk)
		}
		wt.namespaces[n.Object.GetNamespace()] = true
	}
	// Group the kinds by the factory that reads them: "" is the world's own.
	scopes := map[string][]informer.Resource{}
	var scopeOrder []string
	addScope := func(ns string, r informer.Resource) {
		if _, ok := scopes[ns]; !ok {
			scopeOrder = append(scopeOrder, ns)
		}
		scopes[ns] = append(scopes[ns], r)
	}
	for _, gk := range order {
		wt := wants[gk]
		if !wt.res.Namespaced || w.namespace != metav1.NamespaceAll || len(wt.namespaces) > fullNamespaceLimit {
			addScope("", wt.res)
			continue
		}
		for ns := range wt.namespaces {
			addScope(ns, wt.res)
		}
	}
	var mu sync.Mutex
	var eg errgroup.Group
	eg.SetLimit(relationMaxLists)
	for _, ns := range scopeOrder {
		f := w.factory
		if ns != "" {
			var err error
			if f, err = w.s.newWideFactory(informer.Config{Namespace: ns}); err != nil {
				return err
			}
			w.extra = append(w.extra, f)
		}
		infs := make([]cache.SharedIndexInformer, len(scopes[ns]))
		for i, r := range scopes[ns] {
			inf, err := f.Informer(r, informer.Full, nil)
			if err != nil {
				return err
			}
			infs[i] = inf
		}
		eg.Go(func() error {
			failed, err := w.s.syncPartial(ctx, f, informer.Full, "cannot read the status of %s: %s")
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for i, r := range scopes[ns] {
				if !failed[r.GVR] {
					gk := r.GVK.GroupKind()
					w.full[gk] = append(w.full[gk], infs[i].GetIndexer())
				}
			}
			return nil
		})
	}
	return eg.Wait()
}

// resourceFor returns the resource of a kind in the world or among its owners.
func (w *world) resourceFor(gk schema.GroupKind) schema.GroupVersionResource {
	for _, r := range w.factory.Resources() {
		if r.GVK.GroupKind() == gk {
			return r.GVR
		}
	}
	if r, ok := w.owners.Resource(gk); ok {
		return r.GVR
	}
	return schema.GroupVersionResource{}
}

// fullObject returns the whole object behind a node, when loaded.
func (w *world) fullObject(n index.Node) runtime.Object {
	key := n.Object.GetName()
	if ns := n.Object.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	for _, idx := range w.full[n.GVK.GroupKind()] {
		obj, ok, err := idx.GetByKey(key)
		if err != nil || !ok {
			continue
		}
		ro, _ := obj.(runtime.Object)
		if a, err := meta.Accessor(ro); err != nil || a.GetUID() != n.Object.GetUID() {
			return nil
		}
		return ro
	}
	return nil
}

// item describes a node for a tree document, with its readiness and status
// when the whole object was read.
func (w *world) item(n index.Node, now time.Time) *v1alpha1.TreeItem {
	it := v1alpha1.ItemFor(n.GVK, n.Object)
	if full := w.fullObject(n); full != nil && w.s.cfg.ObjectStatus != nil {
		it.Ready, it.Status = w.s.cfg.ObjectStatus(full, now)
	}
	return it
}

// lookupRoot finds the object named on the command line, or kubectl's
// NotFound. A type the user may not list is the error itself: there is no
// answer without the object.
func (w *world) lookupRoot(ref ObjectRef, namespace string) (index.Node, error) {
	gk := ref.Resource.GVK.GroupKind()
	g := w.graph()
	if !g.Has(gk) {
		return index.Node{}, fmt.Errorf("cannot list %s, so %s cannot be found", ref.Resource.Name(), ref)
	}
	n, ok, err := g.Get(gk, ref.key(namespace))
	if err != nil {
		return index.Node{}, err
	}
	if !ok {
		return index.Node{}, ref.NotFound()
	}
	return n, nil
}
