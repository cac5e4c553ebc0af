package informer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
)

// ownerPrepareParallelism bounds the owner kinds synced at once.
const ownerPrepareParallelism = 8

// ownerWait bounds how long a lookup waits for an owner not yet seen.
const ownerWait = 2 * time.Second

// OwnerResolver finds owners by kind and UID. It is the one owner lookup of
// every question: --by-owner walks controller references up through it
// (index.ResolveOwners), tree, owners and orphans add its stores to their
// graph (Stores), and the change feed's --owner scope reads references and
// hears of owner changes through it (OwnerReferences, OnOwnerChange).
//
// Each owner kind gets one metadata-only informer, indexed for the graph (UID,
// owner, owner kind), started the first time the kind is asked for, from a
// factory of its own without selectors: owners need not match the user's. It
// is safe for concurrent use.
type OwnerResolver struct {
	newFactory func() (*Factory, error)
	mapper     meta.RESTMapper
	// Warn, when set, hears once per kind why owners of that kind cannot be
	// read.
	Warn func(error)

	mu        sync.Mutex
	kinds     map[schema.GroupKind]*ownerKind
	factories []*Factory
	onChange  []func(index.OwnerChange)
	// stopPrefetch ends the informers Prefetch started; prefetching counts
	// the goroutines starting them.
	stopPrefetch context.CancelFunc
	prefetching  sync.WaitGroup
}

// ownerKind is the informer of one owner kind, or why there is none.
type ownerKind struct {
	res      Resource
	informer cache.SharedIndexInformer
	store    cache.Indexer
	err      error
	ready    chan struct{}
	// warned is set once Warn heard of err.
	warned bool
}

// NewOwnerResolver returns a resolver whose informers come from newFactory
// (one factory per kind, scoped to the namespace owners are looked up in) and
// whose kinds map to resources through mapper.
func NewOwnerResolver(newFactory func() (*Factory, error), mapper meta.RESTMapper) *OwnerResolver {
	return &OwnerResolver{newFactory: newFactory, mapper: mapper, kinds: map[schema.GroupKind]*ownerKind{}}
}

// Prepare implements index.OwnerLookup: it starts and syncs the informers of
// kinds in parallel and returns an error per kind that cannot be read (not
// served, or not listable by this user). A kind that fails does not hold up
// the others.
func (r *OwnerResolver) Prepare(ctx context.Context, kinds []schema.GroupVersionKind) map[schema.GroupKind]error {
	var eg errgroup.Group
	eg.SetLimit(ownerPrepareParallelism)
	for _, gvk := range kinds {
		eg.Go(func() error {
			r.kind(ctx, gvk, true)
			return nil
		})
	}
	_ = eg.Wait()
	errs := map[schema.GroupKind]error{}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, gvk := range kinds {
		if k := r.kinds[gvk.GroupKind()]; k != nil && k.err != nil {
			errs[gvk.GroupKind()] = k.err
		}
	}
	return errs
}

// Prefetch starts the informers of kinds in the background, before anything
// asks for them: a question that will walk up from objects to their owners
// lists the likely owner kinds while it lists the objects, instead of one
// kind after the other once they are in. A kind that cannot be read is
// reported only if it is asked for (Prepare). Shutdown stops them.
func (r *OwnerResolver) Prefetch(ctx context.Context, kinds []schema.GroupVersionKind) {
	r.mu.Lock()
	ctx, cancel := context.WithCancel(ctx)
	if stop := r.stopPrefetch; stop != nil {
		r.stopPrefetch = func() { stop(); cancel() }
	} else {
		r.stopPrefetch = cancel
	}
	r.mu.Unlock()
	for _, gvk := range kinds {
		r.prefetching.Add(1)
		go func() {
			defer r.prefetching.Done()
			r.kind(ctx, gvk, false)
		}()
	}
}

// Get implements index.OwnerLookup: the owner of kind gk that ref names, nil
// when there is none. The object stored under the reference's name is it when
// its UID is the reference's (a name never changes); the UID index finds an
// owner the reference misnames. A group-by at 100,000 pods looks up 20,000
// owners this way: by key it is one map lookup, by the UID index a list made
// for each.
func (r *OwnerResolver) Get(gk schema.GroupKind, ref index.OwnerRef) (metav1.Object, error) {
	k := r.known(gk)
	if k == nil {
		return nil, fmt.Errorf("kind %s was not prepared", kindName(gk))
	}
	if k.err != nil {
		return nil, k.err
	}
	key := cache.ObjectName{Name: ref.Name}
	if k.res.Namespaced {
		key.Namespace = ref.Namespace
	}
	if obj, ok, err := k.store.GetByKey(key.String()); err == nil && ok {
		if m, err := meta.Accessor(obj); err == nil && m.GetUID() == ref.UID {
			return m, nil
		}
	}
	objs, err := k.store.ByIndex(index.UIDIndex, string(ref.UID))
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	return meta.Accessor(objs[0])
}

// Namespaced implements index.OwnerLookup: the scope the REST mapper gave gk;
// a kind not prepared counts as namespaced, the common case.
func (r *OwnerResolver) Namespaced(gk schema.GroupKind) bool {
	k := r.known(gk)
	return k == nil || k.err != nil || k.res.Namespaced
}

// OwnerReferences returns the ownerReferences of the object of kind gvk (the
// version is the reference's, a hint) with uid, and whether it exists. With
// wait, an object not yet known is waited for briefly: an owner is created
// before what it owns, but its informer may deliver it a moment later.
func (r *OwnerResolver) OwnerReferences(ctx context.Context, gvk schema.GroupVersionKind, uid types.UID, wait bool) ([]metav1.OwnerReference, bool) {
	k := r.kind(ctx, gvk, true)
	if k.err != nil {
		return nil, false
	}
	deadline := time.Now().Add(ownerWait)
	for {
		objs, err := k.store.ByIndex(index.UIDIndex, string(uid))
		if err == nil && len(objs) > 0 {
			if m, err := meta.Accessor(objs[0]); err == nil {
				return m.GetOwnerReferences(), true
			}
		}
		if !wait || time.Now().After(deadline) {
			return nil, false
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// OnOwnerChange has fn hear of every owner created, deleted or changing its
// ownerReferences, from the informers started so far and from those started
// later. When fn hears of a change, OwnerReferences already answers with that
// state or a newer one.
func (r *OwnerResolver) OnOwnerChange(fn func(index.OwnerChange)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onChange = append(r.onChange, fn)
	// Kinds whose informer exists get fn now; start gives the others every
	// handler when it makes theirs. Both happen under r.mu: each once.
	for _, k := range r.kinds {
		if k.informer != nil {
			if _, err := k.informer.AddEventHandler(index.OwnerChangeHandler(k.res.GVK, fn)); err != nil && r.Warn != nil {
				r.Warn(fmt.Errorf("changes of owners of kind %s cannot be followed: %w", kindName(k.res.GVK.GroupKind()), err))
			}
		}
	}
}

// Stores returns the synced stores of the kinds prepared so far, for a graph.
func (r *OwnerResolver) Stores() []index.GraphStore {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []index.GraphStore
	for _, k := range r.kinds {
		if k.store != nil && k.err == nil {
			out = append(out, index.GraphStore{GVK: k.res.GVK, Namespaced: k.res.Namespaced, Indexer: k.store})
		}
	}
	return out
}

// Resource returns the resource of owner kind gk if it was read.
func (r *OwnerResolver) Resource(gk schema.GroupKind) (Resource, bool) {
	k := r.known(gk)
	if k == nil || k.err != nil {
		return Resource{}, false
	}
	return k.res, true
}

// known returns the kind if it was asked for and is ready, nil otherwise.
func (r *OwnerResolver) known(gk schema.GroupKind) *ownerKind {
	r.mu.Lock()
	k := r.kinds[gk]
	r.mu.Unlock()
	if k == nil {
		return nil
	}
	select {
	case <-k.ready:
		return k
	default:
		return nil
	}
}

// kind returns the informer of gvk's kind, starting and syncing it on first
// use; concurrent callers for the same kind wait for the one start. warn
// says the kind is asked for: Warn hears, once, why it cannot be read.
func (r *OwnerResolver) kind(ctx context.Context, gvk schema.GroupVersionKind, warn bool) *ownerKind {
	gk := gvk.GroupKind()
	r.mu.Lock()
	k, ok := r.kinds[gk]
	if !ok {
		k = &ownerKind{ready: make(chan struct{})}
		r.kinds[gk] = k
	}
	r.mu.Unlock()
	if ok {
		<-k.ready
	} else {
		res, inf, err := r.start(ctx, gvk, k)
		r.mu.Lock()
		k.res, k.err = res, err
		if err == nil {
			k.store = inf.GetIndexer()
		}
		r.mu.Unlock()
		close(k.ready)
	}
	r.mu.Lock()
	warn = warn && k.err != nil && !k.warned
	k.warned = k.warned || warn
	r.mu.Unlock()
	if warn && r.Warn != nil {
		r.Warn(fmt.Errorf("owners of kind %s cannot be followed: %w", kindName(gk), k.err))
	}
	return k
}

// start starts and syncs the informer of gvk's kind, with the OnOwnerChange
// handlers registered before it runs.
func (r *OwnerResolver) start(ctx context.Context, gvk schema.GroupVersionKind, k *ownerKind) (Resource, cache.SharedIndexInformer, error) {
	gk := gvk.GroupKind()
	mapping, err := r.mapper.RESTMapping(gk, gvk.Version)
	if err != nil {
		// The reference's version may no longer be served; any version will do.
		if mapping, err = r.mapper.RESTMapping(gk); err != nil {
			return Resource{GVK: gvk}, nil, fmt.Errorf("the server doesn't have a resource type for kind %s", kindName(gk))
		}
	}
	res := FromMapping(mapping)
	f, err := r.newFactory()
	if err != nil {
		return res, nil, err
	}
	inf, err := r.register(f, res, k)
	if err != nil {
		return res, nil, err
	}
	f.Start(ctx)
	// The API error's own text names verb, resource and scope.
	if err := f.WaitForSync(ctx); err != nil {
		return res, nil, err
	}
	return res, inf, nil
}

// register makes the informer of res in f, with every OnOwnerChange handler
// so far, and records it on k.
func (r *OwnerResolver) register(f *Factory, res Resource, k *ownerKind) (cache.SharedIndexInformer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.factories = append(r.factories, f)
	inf, err := f.Informer(res, MetadataOnly, index.GraphIndexers())
	if err != nil {
		return nil, err
	}
	for _, fn := range r.onChange {
		if _, err := inf.AddEventHandler(index.OwnerChangeHandler(res.GVK, fn)); err != nil {
			return nil, err
		}
	}
	k.res, k.informer = res, inf
	return inf, nil
}

// Shutdown stops the informers started so far; their stores stay readable.
func (r *OwnerResolver) Shutdown() {
	r.mu.Lock()
	stop := r.stopPrefetch
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
	r.prefetching.Wait()
	r.mu.Lock()
	factories := r.factories
	r.factories = nil
	r.mu.Unlock()
	for _, f := range factories {
		f.Shutdown()
	}
}

// kindName names a kind with its group, as kubectl does: ReplicaSet.apps.
func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}
