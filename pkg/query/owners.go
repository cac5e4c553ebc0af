package query

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
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// ownerPrepareParallelism bounds the owner kinds synced at once.
const ownerPrepareParallelism = 8

// ownerWait bounds how long a lookup waits for an owner not yet seen.
const ownerWait = 2 * time.Second

// OwnerResolver finds owners by kind and UID. It is the one owner lookup of
// every question: --by-owner walks controller references up through it
// (index.ResolveOwners), tree, owners and orphans add its stores to their
// graph, and the watch's --owner scope reads references through it.
//
// Each owner kind gets one metadata-only informer, indexed for the graph (UID,
// owner, owner kind), started the first time the kind is asked for. Owners are
// looked up in the resolver's namespace or, for cluster-scoped kinds,
// everywhere; they need not match the user's selectors. It is safe for
// concurrent use.
type OwnerResolver struct {
	s         *Session
	namespace string
	// warn hears, once per kind, why owners of that kind cannot be read.
	warn func(error)

	mu        sync.Mutex
	kinds     map[schema.GroupKind]*ownerKind
	factories []*informer.Factory
}

// ownerKind is the informer of one owner kind, or why there is none.
type ownerKind struct {
	res   informer.Resource
	store cache.Indexer
	err   error
	ready chan struct{}
}

// OwnerResolver returns a resolver over the session's namespace; the caller
// shuts it down.
func (s *Session) OwnerResolver() *OwnerResolver {
	return s.newOwnerResolver(s.cfg.Namespace)
}

// newOwnerResolver returns a resolver over namespace ("" for all).
func (s *Session) newOwnerResolver(namespace string) *OwnerResolver {
	return &OwnerResolver{s: s, namespace: namespace, kinds: map[schema.GroupKind]*ownerKind{}}
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
			r.kind(ctx, gvk)
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

// Get implements index.OwnerLookup: the owner of kind gk with uid, nil when
// there is none.
func (r *OwnerResolver) Get(gk schema.GroupKind, uid types.UID) (metav1.Object, error) {
	k := r.known(gk)
	if k == nil {
		return nil, fmt.Errorf("kind %s was not prepared", kindName(gk))
	}
	if k.err != nil {
		return nil, k.err
	}
	objs, err := k.store.ByIndex(index.UIDIndex, string(uid))
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
	k := r.kind(ctx, gvk)
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

// stores returns the synced stores of the kinds prepared so far, for a graph.
func (r *OwnerResolver) stores() []index.GraphStore {
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
// use; concurrent callers for the same kind wait for the one start.
func (r *OwnerResolver) kind(ctx context.Context, gvk schema.GroupVersionKind) *ownerKind {
	gk := gvk.GroupKind()
	r.mu.Lock()
	if k, ok := r.kinds[gk]; ok {
		r.mu.Unlock()
		<-k.ready
		return k
	}
	k := &ownerKind{ready: make(chan struct{})}
	r.kinds[gk] = k
	r.mu.Unlock()
	defer close(k.ready)
	k.res, k.store, k.err = r.start(ctx, gvk)
	if k.err != nil && r.warn != nil {
		r.warn(fmt.Errorf("owners of kind %s cannot be followed: %w", kindName(gk), k.err))
	}
	return k
}

func (r *OwnerResolver) start(ctx context.Context, gvk schema.GroupVersionKind) (informer.Resource, cache.Indexer, error) {
	gk := gvk.GroupKind()
	mapping, err := r.s.cfg.Mapper.RESTMapping(gk, gvk.Version)
	if err != nil {
		// The reference's version may no longer be served; any version will do.
		if mapping, err = r.s.cfg.Mapper.RESTMapping(gk); err != nil {
			return informer.Resource{GVK: gvk}, nil, fmt.Errorf("the server doesn't have a resource type for kind %s", kindName(gk))
		}
	}
	res := informer.FromMapping(mapping)
	f, err := r.s.newWideFactory(informer.Config{Namespace: r.namespace})
	if err != nil {
		return res, nil, err
	}
	r.mu.Lock()
	r.factories = append(r.factories, f)
	r.mu.Unlock()
	inf, err := f.Informer(res, informer.MetadataOnly, index.GraphIndexers())
	if err != nil {
		return res, nil, err
	}
	f.Start(reflectorContext(ctx))
	// The API error's own text names verb, resource and scope.
	if err := f.WaitForSync(ctx); err != nil {
		return res, nil, err
	}
	return res, inf.GetIndexer(), nil
}

// Shutdown stops the informers started so far; their stores stay readable.
func (r *OwnerResolver) Shutdown() {
	r.mu.Lock()
	factories := r.factories
	r.factories = nil
	r.mu.Unlock()
	for _, f := range factories {
		f.Shutdown()
	}
}
