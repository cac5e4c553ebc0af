package feed

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// OwnerLookup finds the owners of an object by its kind and UID.
type OwnerLookup interface {
	// OwnerReferences returns the ownerReferences of the object of kind gvk
	// (the version is the reference's, a hint) with uid and whether it exists. When wait is true and the object is not
	// known, it may wait briefly for it to show up: an owner is created before
	// what it owns, but its informer may deliver it a moment later.
	OwnerReferences(ctx context.Context, gvk schema.GroupVersionKind, uid types.UID, wait bool) ([]metav1.OwnerReference, bool)
}

// OwnerScope is the Scope of `--owner`: an object belongs to it when it is the
// root object or is owned, through any chain of ownerReferences (controller or
// not), by the root. Ownership is read afresh on
// every event, walking up from the object, so owners that appear later (the new
// ReplicaSet of a rollout) are followed as they appear, and objects orphaned or
// adopted move out of or into the feed.
type OwnerScope struct {
	root   types.UID
	lookup OwnerLookup
	// missing remembers owners that did not show up, so that a dangling
	// reference costs one wait, not one per event.
	missing map[types.UID]bool
}

// NewOwnerScope returns the scope of the object with UID root.
func NewOwnerScope(root types.UID, lookup OwnerLookup) *OwnerScope {
	return &OwnerScope{root: root, lookup: lookup, missing: map[types.UID]bool{}}
}

// Contains implements Scope.
func (s *OwnerScope) Contains(ctx context.Context, _ int, obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if m.GetUID() == s.root {
		return true
	}
	return s.ownedBy(ctx, m.GetOwnerReferences(), 0)
}

func (s *OwnerScope) ownedBy(ctx context.Context, refs []metav1.OwnerReference, depth int) bool {
	for _, ref := range refs {
		if ref.UID == s.root {
			return true
		}
	}
	if depth >= index.MaxOwnerDepth {
		// A cycle, which the API server does not prevent.
		return false
	}
	for _, ref := range refs {
		if ref.UID == "" {
			continue
		}
		gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
		parents, ok := s.lookup.OwnerReferences(ctx, gvk, ref.UID, !s.missing[ref.UID])
		if !ok {
			s.missing[ref.UID] = true
			continue
		}
		delete(s.missing, ref.UID)
		if s.ownedBy(ctx, parents, depth+1) {
			return true
		}
	}
	return false
}

// InformerLookup is an OwnerLookup backed by one metadata-only informer per
// owner kind, indexed by UID and started the first time a reference names the
// kind. It is safe for concurrent use.
type InformerLookup struct {
	// Mapper resolves owner kinds to resources.
	Mapper meta.RESTMapper
	// NewFactory returns the factory of one owner kind's informer; it should
	// have no selectors, since owners need not match the feed's.
	NewFactory func() (*informer.Factory, error)
	// Wait bounds how long OwnerReferences waits for an owner not yet seen;
	// zero means two seconds.
	Wait time.Duration
	// Warn hears, once per kind, why owners of that kind cannot be followed.
	Warn func(error)

	mu        sync.Mutex
	kinds     map[schema.GroupKind]*ownerKind
	factories []*informer.Factory
}

type ownerKind struct {
	store cache.Indexer
	err   error
}

// OwnerReferences implements OwnerLookup.
func (l *InformerLookup) OwnerReferences(ctx context.Context, gvk schema.GroupVersionKind, uid types.UID, wait bool) ([]metav1.OwnerReference, bool) {
	k := l.kind(ctx, gvk)
	if k.err != nil {
		return nil, false
	}
	limit := l.Wait
	if limit == 0 {
		limit = 2 * time.Second
	}
	deadline := time.Now().Add(limit)
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

// kind returns the informer of gvk's kind, starting and syncing it on first use.
func (l *InformerLookup) kind(ctx context.Context, gvk schema.GroupVersionKind) *ownerKind {
	gk := gvk.GroupKind()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.kinds == nil {
		l.kinds = map[schema.GroupKind]*ownerKind{}
	}
	if k, ok := l.kinds[gk]; ok {
		return k
	}
	k := &ownerKind{}
	l.kinds[gk] = k
	k.store, k.err = l.start(ctx, gvk)
	if k.err != nil && l.Warn != nil {
		l.Warn(fmt.Errorf("owners of kind %s cannot be followed: %w", kindName(gk), k.err))
	}
	return k
}

func (l *InformerLookup) start(ctx context.Context, gvk schema.GroupVersionKind) (cache.Indexer, error) {
	mapping, err := l.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		// The reference's version may no longer be served; any version will do.
		if mapping, err = l.Mapper.RESTMapping(gvk.GroupKind()); err != nil {
			return nil, err
		}
	}
	f, err := l.NewFactory()
	if err != nil {
		return nil, err
	}
	l.factories = append(l.factories, f)
	inf, err := f.Informer(informer.FromMapping(mapping), informer.MetadataOnly, cache.Indexers{index.UIDIndex: index.UIDIndexFunc})
	if err != nil {
		return nil, err
	}
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		return nil, err
	}
	return inf.GetIndexer(), nil
}

// Shutdown stops the informers started so far.
func (l *InformerLookup) Shutdown() {
	l.mu.Lock()
	factories := l.factories
	l.factories = nil
	l.mu.Unlock()
	for _, f := range factories {
		f.Shutdown()
	}
}

func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}
