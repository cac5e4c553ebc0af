package index

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

const benchPods = 10000

// benchPodSet returns benchPods pods spread over 100 nodes, 50 ReplicaSets and
// 10 namespaces, one in ten pending, like a mid-sized cluster.
func benchPodSet() []*corev1.Pod {
	pods := make([]*corev1.Pod, benchPods)
	for i := range pods {
		rs := fmt.Sprintf("rs-%d", i%50)
		opts := []podOpt{
			withLabels("app", rs, "pod-template-hash", "abc123"),
			ownedBy(ref("ReplicaSet", rs, "uid-"+rs, true)),
		}
		if i%10 != 0 {
			opts = append(opts, onNode(fmt.Sprintf("node-%d", i%100)))
		}
		pods[i] = newPod(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("pod-%d", i), opts...)
	}
	return pods
}

// BenchmarkIndexFuncs measures one call per op, over a rotation of pods so
// that caches see realistic variety.
func BenchmarkIndexFuncs(b *testing.B) {
	pods := benchPodSet()
	unstructuredPods := make([]any, len(pods))
	for i, p := range pods {
		unstructuredPods[i] = toUnstructured(b, p, "v1", "Pod")
	}
	typedPods := make([]any, len(pods))
	for i, p := range pods {
		typedPods[i] = p
	}
	mustJSONPath := func(expr string) cache.IndexFunc {
		fn, err := JSONPathIndexFunc(expr)
		if err != nil {
			b.Fatal(err)
		}
		return fn
	}
	for _, bc := range []struct {
		name string
		fn   cache.IndexFunc
		objs []any
	}{
		{"owner", OwnerIndexFunc, typedPods},
		{"controller", ControllerIndexFunc, typedPods},
		{"namespace", NamespaceIndexFunc, typedPods},
		{"node", NodeIndexFunc, typedPods},
		{"uid", UIDIndexFunc, typedPods},
		{"label", LabelIndexFunc("app"), typedPods},
		{"controller/unstructured", ControllerIndexFunc, unstructuredPods},
		{"node/unstructured", NodeIndexFunc, unstructuredPods},
		{"label/unstructured", LabelIndexFunc("app"), unstructuredPods},
		// Typed fast path, except for the pending tenth, which is converted.
		{"jsonpath-field/typed", mustJSONPath(".spec.nodeName"), typedPods},
		{"jsonpath-field/unstructured", mustJSONPath(".spec.nodeName"), unstructuredPods},
		// A filter always converts typed objects to unstructured first.
		{"jsonpath-filter/typed", mustJSONPath(`.spec.containers[?(@.name=="app")].image`), typedPods},
		{"jsonpath-filter/unstructured", mustJSONPath(`.spec.containers[?(@.name=="app")].image`), unstructuredPods},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := bc.fn(bc.objs[i%len(bc.objs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// benchStore returns a store of benchPodSet with Indexers().
func benchStore(b *testing.B) cache.Indexer {
	s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, Indexers())
	for _, p := range benchPodSet() {
		if err := s.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkGroup measures a whole group-by over 10,000 pods.
func BenchmarkGroup(b *testing.B) {
	s := benchStore(b)
	for _, index := range []string{NodeIndex, ControllerIndex, NamespaceIndex} {
		b.Run(index, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Group(s, index); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("unindexed/"+NodeIndex, func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Unindexed(s, NodeIndex); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStoreAdd measures filling a store with 10,000 pods with and
// without Indexers(): what the indexes add to an informer's initial sync, and
// what UIDIndex, left out of Indexers(), would add.
func BenchmarkStoreAdd(b *testing.B) {
	pods := benchPodSet()
	for _, bc := range []struct {
		name     string
		indexers func() cache.Indexers
	}{
		{"none", func() cache.Indexers { return cache.Indexers{} }},
		{"Indexers", Indexers},
		{"Indexers+uid", func() cache.Indexers {
			ix := Indexers()
			ix[UIDIndex] = UIDIndexFunc
			return ix
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, bc.indexers())
				for _, p := range pods {
					if err := s.Add(p); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkStaticAdd measures filling a store with 10,000 pods (why's pod
// indexes: owner, owner kind, label pairs, namespace) in client-go's indexer,
// and in a Static.
func BenchmarkStaticAdd(b *testing.B) {
	pods := benchPodSet()
	objs := make([]any, len(pods))
	for i, p := range pods {
		objs[i] = p
	}
	indexers := func() cache.Indexers {
		return cache.Indexers{OwnerIndex: OwnerIndexFunc, OwnerKindIndex: OwnerKindIndexFunc, LabelPairIndex: LabelPairIndexFunc, NamespaceIndex: NamespaceIndexFunc}
	}
	b.Run("client-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, indexers())
			for _, p := range objs {
				if err := s.Add(p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("Static.Add", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := NewStatic(cache.MetaNamespaceKeyFunc, indexers(), len(objs))
			for _, p := range objs {
				if err := s.Add(p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
