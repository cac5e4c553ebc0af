package index

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/cache"
)

// selectorForm is how a kind writes its pod selector.
type selectorForm int

const (
	// setForm is a map of labels, every one required (Service,
	// ReplicationController); an empty map selects nothing.
	setForm selectorForm = iota
	// pointerForm is a *metav1.LabelSelector: nil selects nothing, {} every pod.
	pointerForm
	// valueForm is a metav1.LabelSelector that cannot be nil, so an absent
	// one is {} and selects every pod (NetworkPolicy).
	valueForm
)

// selectorField says where a kind keeps its pod selector. It serves
// unstructured objects, whose fields are found by path, and names the field in
// errors for typed ones.
type selectorField struct {
	gk   schema.GroupKind
	path []string
	form selectorForm
}

var (
	serviceSelector     = selectorField{schema.GroupKind{Kind: "Service"}, []string{"spec", "selector"}, setForm}
	deploymentSelector  = selectorField{schema.GroupKind{Group: "apps", Kind: "Deployment"}, []string{"spec", "selector"}, pointerForm}
	replicaSetSelector  = selectorField{schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}, []string{"spec", "selector"}, pointerForm}
	statefulSetSelector = selectorField{schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, []string{"spec", "selector"}, pointerForm}
	daemonSetSelector   = selectorField{schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, []string{"spec", "selector"}, pointerForm}
	jobSelector         = selectorField{schema.GroupKind{Group: "batch", Kind: "Job"}, []string{"spec", "selector"}, pointerForm}
	rcSelector          = selectorField{schema.GroupKind{Kind: "ReplicationController"}, []string{"spec", "selector"}, setForm}
	pdbSelector         = selectorField{schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}, []string{"spec", "selector"}, pointerForm}
	netpolSelector      = selectorField{schema.GroupKind{Group: "networking.k8s.io", Kind: "NetworkPolicy"}, []string{"spec", "podSelector"}, valueForm}

	// selectorFields is in the order SelectorKinds lists kinds: the common
	// ones first, as a user reading an error message would look for them.
	selectorFields = []selectorField{
		serviceSelector, deploymentSelector, replicaSetSelector, statefulSetSelector, daemonSetSelector,
		jobSelector, rcSelector, pdbSelector, netpolSelector,
	}
)

// SelectorKinds lists the kinds whose pod selector SelectorOf reads, for
// messages naming what a selects query accepts. The caller owns the slice.
func SelectorKinds() []schema.GroupKind {
	out := make([]schema.GroupKind, len(selectorFields))
	for i, f := range selectorFields {
		out[i] = f.gk
	}
	return out
}

// HasSelector reports whether objects of kind gk have a pod selector that
// SelectorOf reads, that is whether SelectorIndex can hold them. As with
// HasNode, a missing key is read per type: such objects must come from a full
// informer, since metadata-only ones carry no spec and never have a key.
func HasSelector(gk schema.GroupKind) bool {
	return slices.ContainsFunc(selectorFields, func(f selectorField) bool { return f.gk == gk })
}

// SelectorOf returns the pod selector of obj and whether its kind has one
// (see SelectorKinds); other objects, and metadata-only ones, which carry no
// spec, return has=false and no error. Typed objects and unstructured ones of
// those kinds are read alike, and tombstones are unwrapped.
//
// The selectors follow what the controllers act on. A Service's or
// ReplicationController's selector map selects nothing when nil or empty: a
// Service without one has endpoints managed by hand, and the API server
// defaults a ReplicationController's from its template labels, so an empty
// one was never stored. A metav1.LabelSelector is read by
// metav1.LabelSelectorAsSelector: nil selects nothing, {} selects every pod in
// the namespace, as for a PodDisruptionBudget in policy/v1 and a NetworkPolicy
// (the API server rejects {} on the apps kinds).
//
// A selector map is not validated again, as the endpoints and replication
// controllers do not: the API server did, and validating would be half of
// SelectedBy's time; it matches exactly whatever it holds. An invalid
// LabelSelector, or an unstructured field of the wrong type, which only an
// object the API server never saw can hold, is an error naming the object and
// the field; has is then true. An argument without metadata is an error naming
// its type.
func SelectorOf(obj any) (sel labels.Selector, has bool, err error) {
	obj = unwrap(obj)
	m, err := objectMeta(SelectorIndex, obj)
	if err != nil {
		return nil, false, err
	}
	var (
		f   selectorField
		set map[string]string
		ls  *metav1.LabelSelector
	)
	switch o := obj.(type) {
	case *corev1.Service:
		f, set = serviceSelector, o.Spec.Selector
	case *corev1.ReplicationController:
		f, set = rcSelector, o.Spec.Selector
	case *appsv1.Deployment:
		f, ls = deploymentSelector, o.Spec.Selector
	case *appsv1.ReplicaSet:
		f, ls = replicaSetSelector, o.Spec.Selector
	case *appsv1.StatefulSet:
		f, ls = statefulSetSelector, o.Spec.Selector
	case *appsv1.DaemonSet:
		f, ls = daemonSetSelector, o.Spec.Selector
	case *batchv1.Job:
		f, ls = jobSelector, o.Spec.Selector
	case *policyv1.PodDisruptionBudget:
		f, ls = pdbSelector, o.Spec.Selector
	case *networkingv1.NetworkPolicy:
		f, ls = netpolSelector, &o.Spec.PodSelector
	case *unstructured.Unstructured:
		gk := o.GroupVersionKind().GroupKind()
		i := slices.IndexFunc(selectorFields, func(f selectorField) bool { return f.gk == gk })
		if i < 0 {
			return nil, false, nil
		}
		f = selectorFields[i]
		set, ls, err = f.read(o.Object)
	default:
		return nil, false, nil
	}
	if err == nil {
		if f.form == setForm {
			sel = setSelector(set)
		} else {
			sel, err = metav1.LabelSelectorAsSelector(ls)
		}
	}
	if err != nil {
		return nil, true, fmt.Errorf("invalid %s of %s %s/%s: %w",
			strings.Join(f.path, "."), f.gk.Kind, m.GetNamespace(), m.GetName(), err)
	}
	return sel, true, nil
}

// read finds f's selector in an unstructured object, as a map for setForm and
// a LabelSelector otherwise. Only the selector is converted: converting the
// whole object would also convert its pod template, for nothing.
func (f selectorField) read(obj map[string]any) (map[string]string, *metav1.LabelSelector, error) {
	if f.form == setForm {
		set, _, err := unstructured.NestedStringMap(obj, f.path...)
		return set, nil, err
	}
	v, found, err := unstructured.NestedFieldNoCopy(obj, f.path...)
	if err != nil {
		return nil, nil, err
	}
	if !found || v == nil {
		if f.form == valueForm {
			// What decoding into the typed object would give.
			return nil, &metav1.LabelSelector{}, nil
		}
		return nil, nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("expected an object, got %T", v)
	}
	ls := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, ls); err != nil {
		return nil, nil, err
	}
	return nil, ls, nil
}

// setSelector is labels.SelectorFromValidatedSet, except that an empty set
// selects nothing rather than everything.
func setSelector(set map[string]string) labels.Selector {
	if len(set) == 0 {
		return labels.Nothing()
	}
	return labels.SelectorFromValidatedSet(set)
}

// LabelPairIndex is the name of the index from labels to the objects carrying
// them, under two keys per label: "k=v" for the label k with value v and "k"
// for its key alone. Label keys cannot contain '=', so the forms never clash.
// Selected reads it to find the pods a selector matches, and its keys are
// those SelectorIndex is looked up with.
const LabelPairIndex = "labelpair"

// LabelPairIndexFunc is the IndexFunc of LabelPairIndex. It reads metadata
// only, so it works on every object, metadata-only ones included. The bare key
// serves Exists requirements (and gt, lt, which also need the label), at the
// cost of a second key per label.
func LabelPairIndexFunc(obj any) ([]string, error) {
	m, err := objectMeta(LabelPairIndex, obj)
	if err != nil {
		return nil, err
	}
	return labelPairKeys(m.GetLabels()), nil
}

// labelPairKeys returns the LabelPairIndex keys of a label set, nil for none.
func labelPairKeys(set map[string]string) []string {
	if len(set) == 0 {
		return nil
	}
	keys := make([]string, 0, 2*len(set))
	for k, v := range set {
		keys = append(keys, k+"="+v, k)
	}
	return keys
}

// SelectorIndex is the name of the index from LabelPairIndex keys to the
// objects whose pod selector needs a pod to carry them: a pod's selectors are
// found under its own LabelPairIndex keys and SelectAllKey, instead of by
// matching every selector against every pod.
const SelectorIndex = "selector"

// SelectAllKey is the SelectorIndex key of selectors that require no label to
// be present: those selecting every pod, and those made only of negative
// requirements (!=, notin, !key), which a pod without labels meets.
const SelectAllKey = "*"

// SelectorIndexFunc is the IndexFunc of SelectorIndex. An object is indexed
// under the keys of one requirement of its selector, so that every pod the
// selector matches carries at least one of them: the first equality ("k=v") in
// key order, else the first in ("k=v" per value), else the first exists, gt
// or lt ("k"), else SelectAllKey. One requirement is enough because a match
// meets them all, and an equality gives the fewest candidates to check.
//
// Objects without a selector (see HasSelector), selectors that select nothing
// and invalid ones have no key: a store panics on an index error, and one odd
// object must not take the command down. Only an argument without metadata is
// an error.
func SelectorIndexFunc(obj any) ([]string, error) {
	if _, err := objectMeta(SelectorIndex, obj); err != nil {
		return nil, err
	}
	sel, has, err := SelectorOf(obj)
	if err != nil || !has {
		return nil, nil
	}
	return selectorKeys(sel), nil
}

// selectorKeys returns the SelectorIndex keys of sel.
func selectorKeys(sel labels.Selector) []string {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return nil
	}
	best, bestRank := -1, 0
	for i := range reqs {
		if rank := requirementRank(reqs[i].Operator()); rank > 0 && (best < 0 || rank < bestRank) {
			best, bestRank = i, rank
		}
	}
	if best < 0 {
		return []string{SelectAllKey}
	}
	return requirementKeys(&reqs[best])
}

// requirementRank orders the operators whose match needs a label present, the
// most selective first; 0 means a pod without the label can match.
func requirementRank(op selection.Operator) int {
	switch op {
	case selection.Equals, selection.DoubleEquals:
		return 1
	case selection.In:
		return 2
	case selection.Exists, selection.GreaterThan, selection.LessThan:
		return 3
	}
	return 0
}

// requirementKeys returns the LabelPairIndex keys one of which every label set
// meeting r carries, for an r of non-zero rank. An in without values matches
// nothing and gets none.
func requirementKeys(r *labels.Requirement) []string {
	switch r.Operator() {
	case selection.Equals, selection.DoubleEquals, selection.In:
		// Sorted values keep the keys, and so the store's index, stable.
		vals := r.Values().List()
		if len(vals) == 0 {
			return nil
		}
		keys := make([]string, len(vals))
		for i, v := range vals {
			keys[i] = r.Key() + "=" + v
		}
		return keys
	}
	return []string{r.Key()}
}

// Selected returns the objects of store in namespace ("" for all) that sel
// matches, sorted by namespace and name; a nil selector, like labels.Nothing(),
// matches none. store must have LabelPairIndex and NamespaceIndex.
//
// The candidates are the smallest LabelPairIndex bucket among the
// requirements that need a label (the union of a bucket per value for in).
// The Indexer interface cannot count a bucket without copying it, which costs
// about as much per object as checking it, so buckets are read most selective
// operator first (equality, in, then exists) and reading stops once the
// candidates are few (fewCandidates) or none. Only a selector without such a
// requirement falls back to the namespace's objects, or to all of them.
// Candidates are then checked with sel.Matches and the namespace. Objects are
// the cached ones: read-only.
func Selected(store cache.Indexer, namespace string, sel labels.Selector) ([]any, error) {
	for _, name := range []string{LabelPairIndex, NamespaceIndex} {
		if err := checkIndex(store, name); err != nil {
			return nil, err
		}
	}
	if sel == nil {
		return nil, nil
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return nil, nil
	}
	// Requirements come in key order; a stable sort by rank keeps it within
	// a rank, so equal selectors read the same buckets.
	order := make([]int, 0, len(reqs))
	for i := range reqs {
		if requirementRank(reqs[i].Operator()) > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(requirementRank(reqs[a].Operator()), requirementRank(reqs[b].Operator()))
	})
	var candidates []any
	for n, i := range order {
		bucket, err := byIndexKeys(store, LabelPairIndex, requirementKeys(&reqs[i]))
		if err != nil {
			return nil, err
		}
		if n == 0 || len(bucket) < len(candidates) {
			candidates = bucket
		}
		if len(candidates) == 0 {
			// A requirement no object meets: nothing matches.
			return nil, nil
		}
		if len(candidates) <= fewCandidates {
			break
		}
	}
	if len(order) == 0 {
		if namespace == metav1.NamespaceAll {
			candidates = store.List()
		} else {
			var err error
			if candidates, err = store.ByIndex(NamespaceIndex, namespace); err != nil {
				return nil, fmt.Errorf("listing index %q for %q: %w", NamespaceIndex, namespace, err)
			}
		}
	}
	return collect(candidates, namespace, func(_ any, m metav1.Object) bool {
		return sel.Matches(labels.Set(m.GetLabels()))
	}), nil
}

// fewCandidates is the number of candidates below which Selected reads no
// further bucket: checking them costs a few microseconds, about what reading
// a bucket of that size costs, and a further bucket may hold every pod.
const fewCandidates = 64

// SelectedBy returns the objects of store in namespace ("" for all) whose pod
// selector matches the label set, sorted by namespace and name: what selects
// a pod with those labels. store must have SelectorIndex.
//
// The candidates are the union of the SelectorIndex buckets of the set's
// LabelPairIndex keys and of SelectAllKey, so the cost follows the number of
// labels and of selectors naming them, not of all selectors. Candidates are
// then checked with SelectorOf and the namespace. Objects are the cached ones:
// read-only.
func SelectedBy(store cache.Indexer, namespace string, set labels.Set) ([]any, error) {
	if err := checkIndex(store, SelectorIndex); err != nil {
		return nil, err
	}
	candidates, err := byIndexKeys(store, SelectorIndex, append(labelPairKeys(set), SelectAllKey))
	if err != nil {
		return nil, err
	}
	return collect(candidates, namespace, func(obj any, _ metav1.Object) bool {
		sel, has, err := SelectorOf(obj)
		// An invalid selector has no key and so cannot be a candidate, unless
		// the store was indexed by another function; it selects nothing.
		return err == nil && has && sel.Matches(set)
	}), nil
}

// byIndexKeys returns the union of the buckets of keys in the index named
// indexName. ByIndex rather than IndexKeys: the latter sorts the keys it
// returns, and these buckets can hold every pod.
func byIndexKeys(store cache.Indexer, indexName string, keys []string) ([]any, error) {
	var out []any
	for _, k := range keys {
		objs, err := store.ByIndex(indexName, k)
		if err != nil {
			return nil, fmt.Errorf("listing index %q for %q: %w", indexName, k, err)
		}
		if out == nil {
			out = objs
		} else {
			out = append(out, objs...)
		}
	}
	return out, nil
}

// collect keeps the candidates in namespace that match, once each, sorted by
// namespace and name. An object can be in two buckets of a union only when
// its labels hold an '=' the API server would have refused; dropping repeats
// by name keeps even that right.
func collect(candidates []any, namespace string, match func(any, metav1.Object) bool) []any {
	type named struct {
		namespace, name string
		obj             any
	}
	kept := make([]named, 0, len(candidates))
	for _, obj := range candidates {
		m, err := meta.Accessor(obj)
		if err != nil {
			// Not in a store whose index functions accepted it.
			continue
		}
		if namespace != metav1.NamespaceAll && m.GetNamespace() != namespace || !match(obj, m) {
			continue
		}
		kept = append(kept, named{m.GetNamespace(), m.GetName(), obj})
	}
	if len(kept) == 0 {
		return nil
	}
	// Sorting indexes rather than the structs avoids moving their pointers,
	// with a write barrier each, which made the sort most of Selected's time.
	order := make([]int, len(kept))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		if c := strings.Compare(kept[i].namespace, kept[j].namespace); c != 0 {
			return c
		}
		return strings.Compare(kept[i].name, kept[j].name)
	})
	out := make([]any, 0, len(kept))
	for n, i := range order {
		if n > 0 {
			if prev := kept[order[n-1]]; prev.namespace == kept[i].namespace && prev.name == kept[i].name {
				continue
			}
		}
		out = append(out, kept[i].obj)
	}
	return out
}
