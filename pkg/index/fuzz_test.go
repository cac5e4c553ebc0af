package index

import (
	"cmp"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/tools/cache"
)

// fuzzJSONPaths cover every node type the evaluator has: fields, slices,
// filters, wildcards, recursive descent and unions.
var fuzzJSONPaths = []string{
	".spec.nodeName",
	"{.metadata.labels}",
	".spec.containers[*].image",
	".spec.containers[-1:].name",
	".spec.containers[?(@.name==\"app\")].image",
	".spec.containers[?(@.port>80)].port",
	".spec.*",
	"..name",
	".spec['nodeName','x']",
	".a[0:2:1]",
	".spec.selector",
	".metadata.creationTimestamp",
	".spec.containers[0].resources.requests.cpu",
	".spec.template.spec.containers[*].ports[*].containerPort",
	".involvedObject.uid",
}

// fuzzIndex is one index function as the fuzz targets run it.
type fuzzIndex struct {
	name string
	fn   cache.IndexFunc
	// accepts reports whether fn indexes obj, rather than refusing its type
	// with an error.
	accepts func(obj any) bool
	// noEmpty says the keys are identifiers, of which "" is never one.
	noEmpty bool
}

// fuzzCovered names the index function constructors of the package that
// fuzzIndexes runs; TestFuzzCoversEveryIndexFunc keeps it complete.
var fuzzCovered = []string{
	"OwnerIndexFunc", "ControllerIndexFunc", "NamespaceIndexFunc", "NodeIndexFunc", "UIDIndexFunc",
	"LabelIndexFunc", "JSONPathIndexFunc", "UsesIndexFunc", "LabelPairIndexFunc", "SelectorIndexFunc",
	"OwnerKindIndexFunc", "InvolvedObjectIndexFunc",
}

// fuzzIndexes returns every index function of the package, JSONPath ones for
// each of fuzzJSONPaths and label ones for a valid and two invalid keys.
func fuzzIndexes(tb testing.TB) []fuzzIndex {
	all := func(any) bool { return true }
	podSpecs := func(obj any) bool {
		switch unwrap(obj).(type) {
		case *unstructured.Unstructured, *metav1.PartialObjectMetadata:
			return true
		}
		_, known := podSpecOf(unwrap(obj))
		return known
	}
	events := func(obj any) bool {
		_, ok := unwrap(obj).(*corev1.Event)
		return ok
	}
	idx := []fuzzIndex{
		{OwnerIndex, OwnerIndexFunc, all, true},
		{ControllerIndex, ControllerIndexFunc, all, true},
		{NamespaceIndex, NamespaceIndexFunc, all, true},
		{NodeIndex, NodeIndexFunc, all, true},
		{UIDIndex, UIDIndexFunc, all, true},
		{UsesIndex, UsesIndexFunc, podSpecs, true},
		{LabelPairIndex, LabelPairIndexFunc, all, false},
		{SelectorIndex, SelectorIndexFunc, all, false},
		{OwnerKindIndex, OwnerKindIndexFunc, all, true},
		{InvolvedObjectIndex, InvolvedObjectIndexFunc, events, true},
	}
	for _, key := range []string{"app", "", "a b"} {
		idx = append(idx, fuzzIndex{LabelIndexName(key), LabelIndexFunc(key), all, false})
	}
	for _, expr := range fuzzJSONPaths {
		fn, err := JSONPathIndexFunc(expr)
		if err != nil {
			tb.Fatal(err)
		}
		idx = append(idx, fuzzIndex{JSONPathIndexName(expr), fn, all, false})
	}
	return idx
}

// TestFuzzCoversEveryIndexFunc fails when the package gains an index function
// that the fuzz targets do not run: every exported function named
// ...IndexFunc outside tests must be in fuzzCovered.
func TestFuzzCoversEveryIndexFunc(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() && strings.HasSuffix(fn.Name.Name, "IndexFunc") {
				found = append(found, fn.Name.Name)
			}
		}
	}
	for _, name := range found {
		if !slices.Contains(fuzzCovered, name) {
			t.Errorf("%s is not run by the fuzz targets: add it to fuzzIndexes and fuzzCovered", name)
		}
	}
	for _, name := range fuzzCovered {
		if !slices.Contains(found, name) {
			t.Errorf("fuzzCovered names %s, which the package does not have", name)
		}
	}
}

// fuzzTyped are the typed objects each fuzz input is also decoded into, with
// the apiVersion and kind their unstructured twins get.
var fuzzTyped = []struct {
	apiVersion, kind string
	new              func() runtime.Object
}{
	{"v1", "Pod", func() runtime.Object { return &corev1.Pod{} }},
	{"v1", "Service", func() runtime.Object { return &corev1.Service{} }},
	{"apps/v1", "Deployment", func() runtime.Object { return &appsv1.Deployment{} }},
	{"v1", "Event", func() runtime.Object { return &corev1.Event{} }},
}

// fuzzObject is one object built from a fuzz input.
type fuzzObject struct {
	what string
	obj  runtime.Object
	// twin is the same object as the dynamic client delivers it, for typed
	// objects: decoded from its JSON with apiVersion and kind set.
	twin *unstructured.Unstructured
	// plain is the typed object's JSON as a map without apiVersion and kind,
	// which typed objects in stores lack: what JSONPath keys must agree with.
	plain map[string]any
}

// fuzzObjects builds every object data can be read as: unstructured with
// float64 numbers (plain JSON) and with int64 numbers (as the dynamic client
// decodes), metadata only, and typed Pod, Service, Deployment and Event.
// Typed objects are decoded as far as the JSON fits them; a field of the wrong
// type is left out, and what remains is still an object a store may hold.
func fuzzObjects(t *testing.T, data []byte) []fuzzObject {
	var objs []fuzzObject
	var m map[string]any
	if json.Unmarshal(data, &m) == nil {
		objs = append(objs, fuzzObject{what: "unstructured (float64)", obj: &unstructured.Unstructured{Object: m}})
	}
	u := &unstructured.Unstructured{}
	if u.UnmarshalJSON(data) == nil {
		objs = append(objs, fuzzObject{what: "unstructured", obj: u})
	}
	p := &metav1.PartialObjectMetadata{}
	if json.Unmarshal(data, p) == nil {
		objs = append(objs, fuzzObject{what: "metadata only", obj: p})
	}
	for _, ty := range fuzzTyped {
		obj := ty.new()
		_ = json.Unmarshal(data, obj)
		// Stores hold typed objects without TypeMeta.
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatalf("%s: %v", ty.kind, err)
		}
		var plain map[string]any
		if err := utiljson.Unmarshal(b, &plain); err != nil {
			t.Fatalf("%s: %v", ty.kind, err)
		}
		withKind := obj.DeepCopyObject()
		withKind.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(ty.apiVersion, ty.kind))
		if b, err = json.Marshal(withKind); err != nil {
			t.Fatalf("%s: %v", ty.kind, err)
		}
		twin := &unstructured.Unstructured{}
		if err := twin.UnmarshalJSON(b); err != nil {
			t.Fatalf("%s: its own JSON does not decode: %v", ty.kind, err)
		}
		objs = append(objs, fuzzObject{what: "typed " + ty.kind, obj: obj, twin: twin, plain: plain})
	}
	return objs
}

// uniqueSorted returns keys sorted and without repeats, nil for none.
func uniqueSorted(keys []string) []string {
	if len(keys) == 0 {
		return nil
	}
	keys = slices.Clone(keys)
	slices.Sort(keys)
	return slices.Compact(keys)
}

// fuzzKeyFunc keys store entries by type too: a typed pod and service built
// from one input share namespace and name.
func fuzzKeyFunc(obj any) (string, error) {
	k, err := cache.MetaNamespaceKeyFunc(obj)
	return fmt.Sprintf("%T/%s", unwrap(obj), k), err
}

// FuzzIndexFuncs feeds arbitrary JSON, as unstructured, metadata-only and
// typed objects, through every index function and a store. None may panic,
// modify the object, return an error for an object of a type it indexes
// (a store panics on one) or fail to return one for a type it does not, or
// produce a "" key where "" is no value; a tombstone gets its object's keys, a
// typed object those of its unstructured twin; a store finds each object under
// each of its keys and forgets it on delete. Selected and SelectedBy agree
// with matching every object.
func FuzzIndexFuncs(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","uid":"u","labels":{"app":"web","tier":""},
		  "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-uid","controller":true},{"uid":"cm-uid"}]},
		  "spec":{"nodeName":"node-1","containers":[{"name":"app","image":"nginx:1","port":8080},{"name":"b","image":"x"}]}}`,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":3,"namespace":[],"labels":{"app":null,"n":1},"ownerReferences":"x"},"spec":{"nodeName":7}}`,
		`{"metadata":{"ownerReferences":[null,1,{"uid":""},{"uid":"a","controller":"true"}]},"spec":[]}`,
		`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"name":"app","port":"eighty"},{"port":{"a":1}}]},"a":[1,"2",null,3.5]}`,
		`{"metadata":null,"spec":{"nodeName":""}}`,
		`{}`,
		`[]`,
		`"pod"`,
		// Typed shapes: a pod using every kind of reference, a service and a
		// deployment selecting it, an event about it.
		`{"metadata":{"name":"web-0","namespace":"shop","uid":"p-uid","labels":{"app":"web","example.com/tier":"front"},
		  "creationTimestamp":"2024-01-02T03:04:05Z","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"rs","controller":true}]},
		  "spec":{"nodeName":"w1","serviceAccountName":"web","imagePullSecrets":[{"name":"reg"}],
		  "volumes":[{"name":"cfg","configMap":{"name":"cfg","optional":true}},{"name":"tls","secret":{"secretName":"tls"}},
		  {"name":"data","persistentVolumeClaim":{"claimName":"data"}},{"name":"scratch","ephemeral":{}},
		  {"name":"p","projected":{"sources":[{"secret":{"name":"s"}},{"configMap":{"name":"c"}}]}}],
		  "containers":[{"name":"app","image":"nginx:1","ports":[{"containerPort":8080}],"resources":{"requests":{"cpu":"100m","memory":"64Mi"}},
		  "env":[{"name":"P","valueFrom":{"secretKeyRef":{"name":"db","key":"p"}}}],"envFrom":[{"configMapRef":{"name":"env"}}]}]},
		  "status":{"phase":"Running"}}`,
		`{"metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"app":"web"},"ports":[{"port":80,"targetPort":"http"}]}}`,
		`{"metadata":{"name":"web","namespace":"shop"},"spec":{"selector":{"matchLabels":{"app":"web"},
		  "matchExpressions":[{"key":"tier","operator":"In","values":["front","back"]},{"key":"canary","operator":"DoesNotExist"}]},
		  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"app","envFrom":[{"secretRef":{"name":"s"}}]}]}}}}`,
		`{"metadata":{"name":"e","namespace":"shop"},"involvedObject":{"kind":"Pod","namespace":"shop","name":"web-0"},"reason":"Started"}`,
		`{"metadata":{"name":"x","namespace":"shop","labels":{"":"v","a=b":"c"}},"spec":{"selector":{"matchExpressions":[{"key":"a","operator":"Bogus"}]}}}`,
		`{"metadata":{"name":"x","labels":{"app":"web"}},"spec":{"selector":{"":"x"}},"involvedObject":{"uid":"u"}}`,
		`{"metadata":{"name":"x","namespace":"n","ownerReferences":[{"kind":"","apiVersion":"","uid":"u"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	idx := fuzzIndexes(f)
	fixturePods, fixtureSelectors := fuzzSelectorFixtures()

	f.Fuzz(func(t *testing.T, data []byte) {
		objs := fuzzObjects(t, data)
		for _, o := range objs {
			before := o.obj.DeepCopyObject()
			store := cache.Indexers{}
			allKeys := map[string][]string{}
			for _, x := range idx {
				accepts := x.accepts(o.obj)
				var keys []string
				for i, in := range []any{o.obj, cache.DeletedFinalStateUnknown{Key: "k", Obj: o.obj}} {
					got, err := x.fn(in)
					switch {
					case !accepts && err == nil:
						t.Fatalf("%s, %s: no error for a type it does not index", x.name, o.what)
					case !accepts && !strings.Contains(err.Error(), fmt.Sprintf("%T", o.obj)):
						t.Errorf("%s, %s: error %q does not name the type", x.name, o.what, err)
					case accepts && err != nil:
						t.Fatalf("%s, %s: %v", x.name, o.what, err)
					}
					if err != nil && got != nil {
						t.Errorf("%s, %s: keys %q alongside an error", x.name, o.what, got)
					}
					if got != nil && len(got) == 0 {
						t.Errorf("%s, %s: empty non-nil keys", x.name, o.what)
					}
					if x.noEmpty && slices.Contains(got, "") {
						t.Errorf("%s, %s: keys %q contain \"\"", x.name, o.what, got)
					}
					if i == 0 {
						keys = got
					} else if !slices.Equal(uniqueSorted(got), uniqueSorted(keys)) {
						t.Errorf("%s, %s: tombstone keys %q, object keys %q", x.name, o.what, got, keys)
					}
				}
				if !accepts {
					continue
				}
				// Stores treat every index function alike: two JSONPath ones
				// are enough there, and the rest would only slow the fuzzer.
				if !strings.HasPrefix(x.name, jsonPathIndexPrefix) || x.name == idx[len(idx)-1].name || x.name == idx[len(idx)-2].name {
					store[x.name] = x.fn
				}
				allKeys[x.name] = keys
				if o.twin == nil || !x.accepts(o.twin) || strings.HasPrefix(x.name, jsonPathIndexPrefix) {
					continue
				}
				twinKeys, err := x.fn(o.twin)
				if err != nil {
					t.Fatalf("%s, unstructured twin of %s: %v", x.name, o.what, err)
				}
				if !slices.Equal(uniqueSorted(keys), uniqueSorted(twinKeys)) {
					t.Errorf("%s: %s has keys %q, its unstructured twin %q", x.name, o.what, keys, twinKeys)
				}
			}
			if o.plain != nil {
				fuzzJSONPathAgree(t, idx, o)
			}
			assertUnchanged(t, before, o.obj)
			fuzzStore(t, store, allKeys, o)
		}
		fuzzSelected(t, objs, fixturePods, fixtureSelectors)
	})
}

// fuzzJSONPathAgree checks that a typed object has the JSONPath keys of its
// JSON form, the documented exceptions (apiVersion and kind, Go field names)
// left out of fuzzJSONPaths.
func fuzzJSONPathAgree(t *testing.T, idx []fuzzIndex, o fuzzObject) {
	t.Helper()
	for _, x := range idx {
		if !strings.HasPrefix(x.name, jsonPathIndexPrefix) {
			continue
		}
		typed, err := x.fn(o.obj)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := x.fn(&unstructured.Unstructured{Object: o.plain})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(uniqueSorted(typed), uniqueSorted(plain)) {
			t.Errorf("%s: %s has keys %q, its JSON form %q", x.name, o.what, typed, plain)
		}
	}
}

// fuzzStore adds o to a store with indexers, which accept it and gave it
// allKeys, updates it, checks ByIndex finds it under each of its keys and that Group
// and Unindexed work, then deletes it and checks no key is left.
func fuzzStore(t *testing.T, indexers cache.Indexers, allKeys map[string][]string, o fuzzObject) {
	t.Helper()
	s := cache.NewIndexer(fuzzKeyFunc, indexers)
	if err := s.Add(o.obj); err != nil {
		// A key function error (no usable name) is not ours to test.
		return
	}
	if err := s.Update(o.obj.DeepCopyObject()); err != nil {
		t.Fatal(err)
	}
	for name := range indexers {
		keys := allKeys[name]
		for _, k := range keys {
			got, err := s.ByIndex(name, k)
			if err != nil || len(got) != 1 {
				t.Errorf("ByIndex(%s, %q) = %d objects, %v; want the %s", name, k, len(got), err, o.what)
			}
		}
		if _, err := Group(s, name); err != nil {
			t.Fatalf("Group(%s): %v", name, err)
		}
		none, err := Unindexed(s, name)
		if err != nil {
			t.Fatalf("Unindexed(%s): %v", name, err)
		}
		if (len(none) == 0) != (len(keys) > 0) {
			t.Errorf("Unindexed(%s) = %d objects for a %s with keys %q", name, len(none), o.what, keys)
		}
	}
	if err := s.Delete(o.obj); err != nil {
		t.Fatal(err)
	}
	for name := range indexers {
		if v := s.ListIndexFuncValues(name); len(v) > 0 {
			t.Errorf("%s still has keys %q after delete", name, v)
		}
	}
}

// fuzzSelectorFixtures returns pods and selector-holding objects for the
// Selected and SelectedBy checks, beside what the fuzz input gives.
func fuzzSelectorFixtures() (pods, selectors []runtime.Object) {
	mk := func(ns, name string, l map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: l}}
	}
	pods = []runtime.Object{
		mk("shop", "web-0", map[string]string{"app": "web", "tier": "front"}),
		mk("shop", "web-1", map[string]string{"app": "web", "canary": "true"}),
		mk("shop", "db-0", map[string]string{"app": "db", "n": "3"}),
		mk("other", "web-0", map[string]string{"app": "web"}),
		mk("shop", "bare", nil),
	}
	selectors = []runtime.Object{
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "manual"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "not-db"}, Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}}},
		}}},
	}
	return pods, selectors
}

// fuzzSelected indexes the typed pods of the input with the fixture pods, and
// its typed services and deployments with the fixture selectors, in stores of
// one type each as informers have them. Selected must return exactly the pods
// each selector matches, SelectedBy exactly the objects whose selector
// matches each pod's labels, in every namespace and in each.
func fuzzSelected(t *testing.T, objs []fuzzObject, fixturePods, fixtureSelectors []runtime.Object) {
	t.Helper()
	podStores := map[reflect.Type]cache.Indexer{}
	selStores := map[reflect.Type]cache.Indexer{}
	add := func(stores map[reflect.Type]cache.Indexer, indexers cache.Indexers, obj runtime.Object) {
		ty := reflect.TypeOf(obj)
		if stores[ty] == nil {
			stores[ty] = cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers)
		}
		_ = stores[ty].Add(obj)
	}
	podIndexers := cache.Indexers{LabelPairIndex: LabelPairIndexFunc, NamespaceIndex: NamespaceIndexFunc}
	selIndexers := cache.Indexers{SelectorIndex: SelectorIndexFunc}
	for _, p := range fixturePods {
		add(podStores, podIndexers, p)
	}
	for _, s := range fixtureSelectors {
		add(selStores, selIndexers, s)
	}
	var selectors []labels.Selector
	var labelSets []labels.Set
	for _, o := range objs {
		if _, ok := o.obj.(*corev1.Event); ok {
			continue
		}
		add(podStores, podIndexers, o.obj)
		if sel, has, err := SelectorOf(o.obj); err == nil && has {
			add(selStores, selIndexers, o.obj)
			selectors = append(selectors, sel)
		}
		if m, err := meta.Accessor(o.obj); err == nil {
			labelSets = append(labelSets, m.GetLabels())
		}
	}
	for _, s := range fixtureSelectors {
		sel, _, err := SelectorOf(s)
		if err != nil {
			t.Fatal(err)
		}
		selectors = append(selectors, sel)
	}
	for _, p := range fixturePods {
		labelSets = append(labelSets, p.(metav1.Object).GetLabels())
	}
	namespaces := []string{metav1.NamespaceAll, "shop"}
	for _, store := range podStores {
		for _, sel := range selectors {
			for _, ns := range namespaces {
				got, err := Selected(store, ns, sel)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteForce(store.List(), ns, func(obj any) bool {
					m, _ := meta.Accessor(obj)
					return sel.Matches(labels.Set(m.GetLabels()))
				})
				if g, w := storeNames(got), storeNames(want); !slices.Equal(g, w) {
					t.Errorf("Selected(%q, %q) = %q, want %q", ns, sel, g, w)
				}
			}
		}
	}
	for _, store := range selStores {
		for _, set := range labelSets {
			for _, ns := range namespaces {
				got, err := SelectedBy(store, ns, set)
				if err != nil {
					t.Fatal(err)
				}
				want := bruteForce(store.List(), ns, func(obj any) bool {
					sel, has, err := SelectorOf(obj)
					return err == nil && has && sel.Matches(set)
				})
				if g, w := storeNames(got), storeNames(want); !slices.Equal(g, w) {
					t.Errorf("SelectedBy(%q, %v) = %q, want %q", ns, set, g, w)
				}
			}
		}
	}
}

// bruteForce returns the objects in namespace ("" for all) that match, by
// looking at every one.
func bruteForce(objs []any, namespace string, match func(any) bool) []any {
	var out []any
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil || namespace != "" && m.GetNamespace() != namespace || !match(obj) {
			continue
		}
		out = append(out, obj)
	}
	return out
}

// storeNames returns namespace/name of objs, sorted.
func storeNames(objs []any) []string {
	out := make([]string, 0, len(objs))
	for _, obj := range objs {
		m, _ := meta.Accessor(obj)
		out = append(out, m.GetNamespace()+"/"+m.GetName())
	}
	slices.SortFunc(out, cmp.Compare)
	return out
}

// fuzzExprObjects are the objects FuzzJSONPathExpr evaluates expressions on:
// typed (with their JSON forms, as in fuzzObjects), unstructured with every
// JSON value shape, metadata only, and a tombstone.
func fuzzExprObjects(tb testing.TB) (typed []fuzzObject, others []any) {
	pod := richPod()
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{Spec: pod.Spec},
		},
	}
	for _, obj := range []runtime.Object{pod, dep} {
		b, err := json.Marshal(obj)
		if err != nil {
			tb.Fatal(err)
		}
		var plain map[string]any
		if err := utiljson.Unmarshal(b, &plain); err != nil {
			tb.Fatal(err)
		}
		typed = append(typed, fuzzObject{what: fmt.Sprintf("%T", obj), obj: obj, plain: plain})
	}
	odd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": "odd", "namespace": "shop", "labels": map[string]any{"app": "web"}},
		"spec": map[string]any{
			"n": int64(3), "f": 0.5, "big": float64(1 << 60), "t": true, "nil": nil, "s": "<b>&",
			"list": []any{int64(1), "two", nil, []any{}, map[string]any{}, map[string]any{"name": "x", "port": int64(80)}},
			"map":  map[string]any{"b": int64(2), "a": []any{"x"}},
		},
	}}
	return typed, []any{
		toUnstructured(tb, pod, "v1", "Pod"), odd, partial(pod, "v1", "Pod"),
		cache.DeletedFinalStateUnknown{Key: "shop/odd", Obj: odd},
	}
}

// goFieldName finds a field written with a capital, which only a Go field
// name has: typed objects match those, their JSON forms do not.
var goFieldName = regexp.MustCompile(`[.'"\[][A-Z]`)

// FuzzJSONPathExpr feeds arbitrary --by expressions to JSONPathIndexFunc. An
// expression that parses must have a stable index name (naming the same
// index when given in its normalised form), must key every fixed object
// without error or panic, with sorted unique keys, and must give a typed
// object the keys of its JSON form unless it names a Go field; one that does
// not parse returns no function.
func FuzzJSONPathExpr(f *testing.F) {
	for _, expr := range append(slices.Clone(fuzzJSONPaths),
		"", " ", "{}", "{.}", ".", "..", "{..}", "{.a}{.b}", "{.spec.containers[}", ".spec.x[?(@.a==", ".a,.b",
		".spec nodeName", "{range .items[*]}{.x}{end}", "{.metadata.Name}", ".spec.NodeName", "{$}", "{@}",
		".spec.containers[?(@.name)]", ".spec.containers[?(@.ports[0].containerPort>=8080)].name",
		".spec.list[-1]", ".spec.list[10]", ".spec.list[1:0]", ".spec.list[::-1]", ".spec.map.*", "{.spec.map['a','b']}",
		".spec.*.name", ".metadata.labels.app", `{.metadata.annotations.note}`, "{.spec.big}", ".spec['n']",
		`{.spec.containers[?(@.image=~"nginx")].name}`, "{.spec.f}", "{.spec.nil}", "{\"x\"}", "{.a\n}", "{.a\x00}",
		".status.containerStatuses[*].ready", "{.metadata.creationTimestamp}", ".spec.containers[*].resources",
	) {
		f.Add(expr)
	}
	typed, others := fuzzExprObjects(f)

	f.Fuzz(func(t *testing.T, expr string) {
		fn, err := JSONPathIndexFunc(expr)
		if err != nil {
			if fn != nil {
				t.Error("returned a function alongside an error")
			}
			return
		}
		name := JSONPathIndexName(expr)
		normal := strings.TrimPrefix(name, jsonPathIndexPrefix)
		if again := JSONPathIndexName(normal); again != name {
			t.Errorf("JSONPathIndexName(%q) = %q, but of that expression %q", expr, name, again)
		}
		if _, err := JSONPathIndexFunc(normal); err != nil {
			t.Errorf("%q parses, its normalised form %q does not: %v", expr, normal, err)
		}
		check := func(what string, obj any) []string {
			keys, err := fn(obj)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if keys != nil && len(keys) == 0 {
				t.Errorf("%s: empty non-nil keys", what)
			}
			if !slices.Equal(keys, uniqueSorted(keys)) {
				t.Errorf("%s: keys %q are not sorted and unique", what, keys)
			}
			return keys
		}
		for _, obj := range others {
			check(fmt.Sprintf("%T", obj), obj)
		}
		for _, o := range typed {
			before := o.obj.DeepCopyObject()
			keys := check(o.what, o.obj)
			assertUnchanged(t, before, o.obj)
			if goFieldName.MatchString(normal) {
				continue
			}
			plain := check(o.what+" as JSON", &unstructured.Unstructured{Object: o.plain})
			if !slices.Equal(keys, plain) {
				t.Errorf("%s has keys %q, its JSON form %q", o.what, keys, plain)
			}
		}
	})
}
