package query

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// podGVK is the kind selectors select.
var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// Selects answers `kubectl idx selects`: the pods obj's selector matches in
// its namespace. Pods are indexed by label pair, so the selector is answered
// from the smallest bucket its requirements name. obj must be of a kind with a
// pod selector (index.HasSelector).
func (s *Session) Selects(ctx context.Context, obj ObjectRef) ([]v1alpha1.Members, error) {
	ns := s.rootNamespace()
	o, err := s.namedFull(ctx, obj, ns)
	if err != nil {
		return nil, err
	}
	sel, _, err := index.SelectorOf(o)
	if err != nil {
		return nil, err
	}
	if sel.Empty() {
		s.warn("%s selects every pod in namespace %s", obj, ns)
	} else if _, selectable := sel.Requirements(); !selectable {
		s.warn("%s has no selector, so it selects no pods", obj)
	}
	m, err := s.cfg.Mapper.RESTMapping(podGVK.GroupKind(), podGVK.Version)
	if err != nil {
		return nil, err
	}
	pods := informer.FromMapping(m)
	f, err := s.newWideFactory(informer.Config{Namespace: ns})
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	inf, err := f.Informer(pods, informer.Full, cache.Indexers{index.LabelPairIndex: index.LabelPairIndexFunc, index.NamespaceIndex: index.NamespaceIndexFunc})
	if err != nil {
		return nil, err
	}
	f.Start(reflectorContext(ctx))
	if err := f.WaitForSync(ctx); err != nil {
		return nil, err
	}
	matched, err := index.Selected(inf.GetIndexer(), ns, sel)
	if err != nil {
		return nil, err
	}
	return []v1alpha1.Members{{GVK: pods.GVK, Namespaced: true, Objects: runtimeObjects(matched)}}, nil
}

// SelectedBy answers `kubectl idx selected-by`: the objects of every kind with
// a pod selector (Services, PodDisruptionBudgets, NetworkPolicies, workloads)
// whose selectors match obj's labels, one Members per kind with matches.
// Selectors are indexed by the label pairs a matching pod must carry. A kind
// the user may not list is skipped with a warning.
func (s *Session) SelectedBy(ctx context.Context, obj ObjectRef) ([]v1alpha1.Members, error) {
	ns := s.rootNamespace()
	o, err := s.namedMetadata(ctx, obj, ns)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, obj.NotFound()
	}
	set := labels.Set(o.GetLabels())
	f, err := s.newWideFactory(informer.Config{Namespace: ns})
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	type kindInformer struct {
		res informer.Resource
		inf cache.SharedIndexInformer
	}
	var infs []kindInformer
	for _, gk := range index.SelectorKinds() {
		m, err := s.cfg.Mapper.RESTMapping(gk)
		if err != nil {
			continue // not served, e.g. a trimmed-down API server
		}
		res := informer.FromMapping(m)
		inf, err := f.Informer(res, informer.Full, cache.Indexers{index.SelectorIndex: index.SelectorIndexFunc, index.NamespaceIndex: index.NamespaceIndexFunc})
		if err != nil {
			return nil, err
		}
		infs = append(infs, kindInformer{res: res, inf: inf})
	}
	failed, err := s.syncPartial(ctx, f, informer.Full, "cannot list %s, the answer may be incomplete: %s")
	if err != nil {
		return nil, err
	}
	var out []v1alpha1.Members
	for _, k := range infs {
		if failed[k.res.GVR] {
			continue
		}
		matched, err := index.SelectedBy(k.inf.GetIndexer(), ns, set)
		if err != nil {
			return nil, err
		}
		if len(matched) > 0 {
			out = append(out, v1alpha1.Members{GVK: k.res.GVK, Namespaced: true, Objects: runtimeObjects(matched)})
		}
	}
	return out, nil
}

// runtimeObjects keeps the API objects among objs.
func runtimeObjects(objs []any) []runtime.Object {
	out := make([]runtime.Object, 0, len(objs))
	for _, obj := range objs {
		if ro, ok := obj.(runtime.Object); ok {
			if _, err := meta.Accessor(ro); err == nil {
				out = append(out, ro)
			}
		}
	}
	return out
}

// namedMetadata reads one object's metadata; nil when it does not exist.
func (s *Session) namedMetadata(ctx context.Context, ref ObjectRef, ns string) (metav1.Object, error) {
	obj, err := s.named(ctx, ref, informer.Config{Namespace: ns}, informer.MetadataOnly)
	if err != nil || obj == nil {
		return nil, err
	}
	return meta.Accessor(obj)
}

// namedFull reads one whole object, or kubectl's NotFound.
func (s *Session) namedFull(ctx context.Context, ref ObjectRef, ns string) (any, error) {
	obj, err := s.named(ctx, ref, informer.Config{Namespace: ns}, informer.Full)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, ref.NotFound()
	}
	return obj, nil
}

// named reads one object of cfg.Namespace through an informer narrowed to
// its name, so the object goes through the same decoding and transforms as
// every other; nil when it does not exist.
func (s *Session) named(ctx context.Context, ref ObjectRef, cfg informer.Config, mode informer.Mode) (any, error) {
	cfg.FieldSelector = NameSelector(ref.Name, "")
	f, err := s.newWideFactory(cfg)
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	inf, err := f.Informer(ref.Resource, mode, nil)
	if err != nil {
		return nil, err
	}
	f.Start(reflectorContext(ctx))
	if err := f.WaitForSync(ctx); err != nil {
		return nil, err
	}
	obj, ok, err := inf.GetIndexer().GetByKey(ref.key(cfg.Namespace))
	if err != nil || !ok {
		return nil, err
	}
	return obj, nil
}
