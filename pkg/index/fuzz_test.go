package index

import (
	"encoding/json"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
}

// FuzzIndexFuncs feeds arbitrary JSON, as unstructured objects, through every
// index function and a store: none may fail or panic (a store panics on index
// errors), modify the object, or produce a "" key where "" is no value.
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
	} {
		f.Add([]byte(seed))
	}
	fns := map[string]cache.IndexFunc{}
	for name, fn := range Indexers() {
		fns[name] = fn
	}
	fns[UIDIndex] = UIDIndexFunc
	fns[LabelIndexName("app")] = LabelIndexFunc("app")
	for _, expr := range fuzzJSONPaths {
		fn, err := JSONPathIndexFunc(expr)
		if err != nil {
			f.Fatal(err)
		}
		fns[JSONPathIndexName(expr)] = fn
	}
	// Indexes whose keys are identifiers: "" is never one.
	noEmpty := []string{OwnerIndex, ControllerIndex, NamespaceIndex, NodeIndex, UIDIndex}

	f.Fuzz(func(t *testing.T, data []byte) {
		var objs []*unstructured.Unstructured
		// Plain JSON decoding gives float64 numbers; the unstructured scheme,
		// as the dynamic client uses it, gives int64 and needs a kind.
		var m map[string]any
		if json.Unmarshal(data, &m) == nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
		u := &unstructured.Unstructured{}
		if u.UnmarshalJSON(data) == nil {
			objs = append(objs, u)
		}
		for _, obj := range objs {
			before := runtime.DeepCopyJSON(obj.Object)
			for name, fn := range fns {
				for _, in := range []any{obj, cache.DeletedFinalStateUnknown{Key: "k", Obj: obj}} {
					keys, err := fn(in)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if keys != nil && len(keys) == 0 {
						t.Errorf("%s: empty non-nil keys", name)
					}
					if slices.Contains(noEmpty, name) && slices.Contains(keys, "") {
						t.Errorf("%s: keys %q contain \"\"", name, keys)
					}
				}
			}
			if obj.Object != nil {
				assertUnchanged(t, before, obj.Object)
			}
			s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, fns)
			if err := s.Add(obj); err != nil {
				// A key function error (no usable name) is not ours to test.
				continue
			}
			for name := range fns {
				if _, err := Group(s, name); err != nil {
					t.Fatalf("Group(%s): %v", name, err)
				}
				if _, err := Unindexed(s, name); err != nil {
					t.Fatalf("Unindexed(%s): %v", name, err)
				}
			}
			if err := s.Delete(obj); err != nil {
				t.Fatal(err)
			}
		}
	})
}
