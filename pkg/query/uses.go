package query

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// Uses answers `kubectl idx uses`: for a ConfigMap, Secret,
// PersistentVolumeClaim or ServiceAccount, the pods and pod templates that
// use it and how (direction "users"); for a Pod or a workload, what its pod
// spec uses and whether each object exists (direction "uses"). Secrets are
// only read as metadata. obj must be one of those kinds (IsUsesSubject or
// index.HasPodSpec).
func (s *Session) Uses(ctx context.Context, obj ObjectRef) (*v1alpha1.RelationList, error) {
	if IsUsesSubject(obj.Resource.GVK.GroupKind()) {
		return s.users(ctx, obj)
	}
	return s.uses(ctx, obj)
}

// IsUsesSubject reports whether gk is a kind pod specs refer to.
func IsUsesSubject(gk schema.GroupKind) bool {
	_, ok := usesSubjectKinds[gk]
	return ok
}

// usesSubjectKinds are the kinds pod specs refer to.
var usesSubjectKinds = map[schema.GroupKind]string{
	{Kind: index.RefConfigMap}:      index.RefConfigMap,
	{Kind: index.RefSecret}:         index.RefSecret,
	{Kind: index.RefPVC}:            index.RefPVC,
	{Kind: index.RefServiceAccount}: index.RefServiceAccount,
}

// usersKinds are the kinds whose specs are searched, in output order.
var usersKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Version: "v1", Kind: "ReplicationController"},
	{Version: "v1", Kind: "PodTemplate"},
	{Version: "v1", Kind: "Pod"},
}

// users finds the pods and templates that refer to the object.
func (s *Session) users(ctx context.Context, obj ObjectRef) (*v1alpha1.RelationList, error) {
	ns := s.rootNamespace()
	var kinds []schema.GroupVersionKind
	for _, gvk := range usersKinds {
		if _, err := s.cfg.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			kinds = append(kinds, gvk)
		}
	}
	m, err := s.whereMatcher(ctx, kinds, false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	f, err := s.newWideFactory(informer.Config{Namespace: ns})
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	// The subject itself, by name and metadata only: a Secret's data is never
	// fetched.
	subject, err := s.namedMetadata(ctx, obj, ns)
	if err != nil {
		return nil, err
	}
	type typed struct {
		gvk schema.GroupVersionKind
		res informer.Resource
		inf cache.SharedIndexInformer
	}
	var users []typed
	for _, gvk := range usersKinds {
		m, err := s.cfg.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			continue
		}
		res := informer.FromMapping(m)
		inf, err := f.Informer(res, informer.Full, cache.Indexers{index.UsesIndex: index.UsesIndexFunc})
		if err != nil {
			return nil, err
		}
		users = append(users, typed{gvk: gvk, res: res, inf: inf})
	}
	failed, err := s.syncPartial(ctx, f, informer.Full, "cannot list %s, the answer may be incomplete: %s")
	if err != nil {
		return nil, err
	}
	kind := usesSubjectKinds[obj.Resource.GVK.GroupKind()]
	key := index.UsesKey(kind, ns, obj.Name)
	doc := v1alpha1.NewRelationList(v1alpha1.UsesListKind)
	doc.Direction = "users"
	subjectItem := v1alpha1.RelationItem{APIVersion: obj.Resource.GVK.GroupVersion().String(), Kind: obj.Resource.GVK.Kind, Namespace: ns, Name: obj.Name}
	if subject != nil {
		subjectItem = v1alpha1.RelationItemFor(obj.Resource.GVK, subject)
	}
	exists := subject != nil
	subjectItem.Exists = &exists
	doc.Subject = &subjectItem
	if err := m.ready(ctx); err != nil {
		return nil, err
	}
	for _, u := range users {
		if failed[u.res.GVR] {
			continue
		}
		objs, err := u.inf.GetIndexer().ByIndex(index.UsesIndex, key)
		if err != nil {
			return nil, err
		}
		var items []v1alpha1.RelationItem
		for _, user := range objs {
			if ro, ok := user.(runtime.Object); !ok || !m.match(u.gvk, ro) {
				continue
			}
			acc, err := meta.Accessor(user)
			if err != nil {
				return nil, err
			}
			spec, ok := index.PodSpecOf(user)
			if !ok {
				continue
			}
			podName := ""
			if u.gvk.Kind == "Pod" {
				podName = acc.GetName()
			}
			it := v1alpha1.RelationItemFor(u.gvk, acc)
			for _, r := range index.SpecReferences(spec, podName) {
				if r.Kind == kind && r.Name == obj.Name {
					it.Via, it.Optional = r.Via, r.Optional
				}
			}
			items = append(items, it)
		}
		sortItems(items)
		doc.Items = append(doc.Items, items...)
	}
	if subject == nil {
		if len(doc.Items) == 0 {
			return nil, obj.NotFound()
		}
		s.warn("%s does not exist, yet the objects listed refer to it", obj)
	}
	doc.Warnings = s.Warnings()
	doc.AsOf = s.AsOf()
	return doc, nil
}

// uses lists what a pod or workload refers to and whether each exists.
func (s *Session) uses(ctx context.Context, ref ObjectRef) (*v1alpha1.RelationList, error) {
	ns := s.rootNamespace()
	if s.where != nil && s.whereUses().ObjectBeyondMetadata {
		return nil, errWhereUsesMetadata
	}
	var kinds []schema.GroupVersionKind
	for gk := range usesSubjectKinds {
		kinds = append(kinds, gk.WithVersion("v1"))
	}
	slices.SortFunc(kinds, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.Kind, b.Kind) })
	m, err := s.whereMatcher(ctx, kinds, false)
	if err != nil {
		return nil, err
	}
	defer m.close()
	obj, err := s.namedFull(ctx, ref, ns)
	if err != nil {
		return nil, err
	}
	om, _ := meta.Accessor(obj)
	spec, _ := index.PodSpecOf(obj)
	podName := ""
	if ref.Resource.GVK.Kind == "Pod" {
		podName = ref.Name
	}
	refs := index.SpecReferences(spec, podName)

	// Which of them exist: metadata of the four kinds in the namespace.
	f, err := s.newWideFactory(informer.Config{Namespace: ns})
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	stores := map[string]cache.SharedIndexInformer{}
	resources := map[string]informer.Resource{}
	for gk, kind := range usesSubjectKinds {
		mp, err := s.cfg.Mapper.RESTMapping(gk, "v1")
		if err != nil {
			continue
		}
		res := informer.FromMapping(mp)
		inf, err := f.Informer(res, informer.MetadataOnly, nil)
		if err != nil {
			return nil, err
		}
		stores[kind], resources[kind] = inf, res
	}
	failed, err := s.syncPartial(ctx, f, informer.MetadataOnly, "cannot list %s, whether those objects exist is unknown: %s")
	if err != nil {
		return nil, err
	}
	for kind, r := range resources {
		if failed[r.GVR] {
			delete(stores, kind)
		}
	}
	subject := v1alpha1.RelationItemFor(ref.Resource.GVK, om)
	doc := v1alpha1.NewRelationList(v1alpha1.UsesListKind)
	doc.Direction, doc.Subject = "uses", &subject
	if err := m.ready(ctx); err != nil {
		return nil, err
	}
	for _, r := range refs {
		it := v1alpha1.RelationItem{APIVersion: "v1", Kind: r.Kind, Namespace: ns, Name: r.Name, Via: r.Via, Optional: r.Optional}
		var found runtime.Object
		if inf, ok := stores[r.Kind]; ok {
			obj, exists, err := inf.GetIndexer().GetByKey(ns + "/" + r.Name)
			if err != nil {
				return nil, err
			}
			it.Exists = &exists
			found, _ = obj.(runtime.Object)
		}
		// With --where, an object that does not exist, or whose existence
		// is unknown, has nothing to match.
		if m != nil && (found == nil || !m.match(resources[r.Kind].GVK, found)) {
			continue
		}
		doc.Items = append(doc.Items, it)
	}
	doc.Warnings = s.Warnings()
	doc.AsOf = s.AsOf()
	return doc, nil
}

// sortItems orders items by namespace, then name.
func sortItems(items []v1alpha1.RelationItem) {
	slices.SortFunc(items, func(a, b v1alpha1.RelationItem) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}
