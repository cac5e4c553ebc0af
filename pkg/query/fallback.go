package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// fallbackParallelism is how many namespaces a per-namespace fallback lists at
// once.
const fallbackParallelism = 4

// fallbackNamesShown caps the namespaces a fallback warning names.
const fallbackNamesShown = 10

var namespacesResource = informer.Resource{
	GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
	GVK: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
}

// canFallBack reports whether a failed -A sync may be retried namespace by
// namespace: RBAC often grants a user list in some namespaces (RoleBindings)
// but not at the cluster scope.
func (s *Session) canFallBack(err error, reqs []Request) bool {
	return s.cfg.Namespace == metav1.NamespaceAll && apierrors.IsForbidden(err) && anyNamespaced(reqs)
}

// perNamespace answers an -A query the user may not run at the cluster scope
// by listing each namespace on its own and merging the stores. Namespaces where
// the list is forbidden too are skipped and named in a warning, so the answer
// says it is partial. When namespaces themselves cannot be listed, or no
// namespace can be read, the original error stands: it names the verb, the
// resource and the scope.
func (s *Session) perNamespace(ctx context.Context, cause error, reqs []Request, indexers cache.Indexers) ([]cache.Indexer, error) {
	namespaces, err := s.namespaceNames(ctx)
	if err != nil || len(namespaces) == 0 {
		return nil, cause
	}
	if indexers == nil {
		indexers = cache.Indexers{}
	}
	idxs := make([]cache.Indexer, len(reqs))
	for i := range idxs {
		idxs[i] = cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, indexers)
	}
	var mu sync.Mutex
	skipped := map[string][]string{} // resource name -> namespaces
	read := 0                        // namespaces where at least one type was read

	// load lists the requests of one scope into the merged stores.
	load := func(ns string, namespaced bool) error {
		f, err := s.newFactory(s.listConfig(ns, nil, reqs))
		if err != nil {
			return err
		}
		defer f.Shutdown()
		infs := map[int]cache.SharedIndexInformer{}
		for i, r := range reqs {
			if r.Resource.Namespaced != namespaced {
				continue
			}
			inf, err := f.Informer(r.Resource, r.Mode, indexers)
			if err != nil {
				return err
			}
			infs[i] = inf
		}
		if len(infs) == 0 {
			return nil
		}
		f.Start(ctx)
		var failed []informer.Skipped
		if namespaced {
			if failed, err = f.WaitForSyncPartial(ctx); err != nil {
				return err
			}
		} else if err := f.WaitForSync(ctx); err != nil {
			// Cluster-scoped types have no narrower scope to fall back to.
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		gone := map[schema.GroupVersionResource]bool{}
		for _, sk := range failed {
			gone[sk.Resource.GVR] = true
			skipped[sk.Resource.Name()] = append(skipped[sk.Resource.Name()], ns)
		}
		if len(gone) < len(infs) {
			read++
		}
		for i, inf := range infs {
			if gone[reqs[i].Resource.GVR] {
				continue
			}
			for _, obj := range inf.GetStore().List() {
				if err := idxs[i].Add(obj); err != nil {
					return err
				}
			}
		}
		return nil
	}

	eg, egctx := errgroup.WithContext(ctx)
	eg.SetLimit(fallbackParallelism)
	eg.Go(func() error { return load("", false) })
	for _, ns := range namespaces {
		eg.Go(func() error {
			if err := load(ns, true); err != nil {
				return fmt.Errorf("listing namespace %s: %w", ns, err)
			}
			return egctx.Err()
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	if read == 0 {
		return nil, cause
	}
	var names []string
	for _, r := range reqs {
		if r.Resource.Namespaced && !slices.Contains(names, r.Resource.Name()) {
			names = append(names, r.Resource.Name())
		}
	}
	for _, name := range names {
		sk := skipped[name]
		slices.Sort(sk)
		w := fmt.Sprintf("cannot list %s at the cluster scope; listed them in each of the %d namespaces instead", name, len(namespaces))
		if len(sk) > 0 {
			shown := sk[:min(len(sk), fallbackNamesShown)]
			more := ""
			if len(sk) > len(shown) {
				more = fmt.Sprintf(" and %d more", len(sk)-len(shown))
			}
			w += fmt.Sprintf(", skipping %d where that is forbidden too: %s%s", len(sk), strings.Join(shown, ", "), more)
		}
		s.warn("%s", w)
	}
	return idxs, nil
}

// readCluster reads every object of the cluster-scoped res through a
// short-lived informer of its own.
func (s *Session) readCluster(ctx context.Context, res informer.Resource, mode informer.Mode) ([]any, error) {
	f, err := s.newFactory(informer.Config{SyncTimeout: s.cfg.SyncTimeout})
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	inf, err := f.Informer(res, mode, nil)
	if err != nil {
		return nil, err
	}
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		return nil, err
	}
	return inf.GetStore().List(), nil
}

// namespaceNames lists the namespaces' names, metadata only.
func (s *Session) namespaceNames(ctx context.Context) ([]string, error) {
	objs, err := s.readCluster(ctx, namespacesResource, informer.MetadataOnly)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		if m, ok := o.(metav1.Object); ok {
			names = append(names, m.GetName())
		}
	}
	slices.Sort(names)
	return names, nil
}
