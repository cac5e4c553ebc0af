package index

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// staticPods are pods over two namespaces, four owners of two kinds, two nodes and label
// sets that overlap, and one pod of its own without labels.
func staticPods() []any {
	var out []any
	for i := range 40 {
		ns := fmt.Sprintf("ns-%d", i%2)
		owner := ref("ReplicaSet", fmt.Sprintf("web-%d", i%3), fmt.Sprintf("rs-%d", i%3), true)
		if i%5 == 0 {
			owner = ref("StatefulSet", "db", "sts", true)
		}
		out = append(out, newPod(ns, fmt.Sprintf("web-%d", i), onNode(fmt.Sprintf("node-%d", i%2)), ownedBy(owner),
			withLabels("app", "web", "shard", fmt.Sprint(i%4))))
	}
	return append(out, newPod("ns-0", "loner"))
}

func staticIndexers() cache.Indexers {
	return cache.Indexers{OwnerIndex: OwnerIndexFunc, OwnerKindIndex: OwnerKindIndexFunc, LabelPairIndex: LabelPairIndexFunc,
		NamespaceIndex: NamespaceIndexFunc, NodeIndex: NodeIndexFunc}
}

// keysOf returns the cache keys of objs, sorted.
func keysOf(t *testing.T, objs []any) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		k, err := cache.MetaNamespaceKeyFunc(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestStaticAnswersAsClientGoIndexer: every lookup of a Static answers what
// client-go's indexer answers over the same objects (up to order), and
// List keeps the order of adding.
func TestStaticAnswersAsClientGoIndexer(t *testing.T) {
	pods := staticPods()
	want := cache.NewIndexer(cache.MetaNamespaceKeyFunc, staticIndexers())
	got := NewStatic(cache.MetaNamespaceKeyFunc, staticIndexers(), len(pods))
	for _, p := range pods {
		if err := want.Add(p); err != nil {
			t.Fatal(err)
		}
		if err := got.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if g := got.ListKeys(); !slices.Equal(g, keysOfInOrder(t, pods)) {
		t.Errorf("ListKeys %v, want the order of adding %v", g, keysOfInOrder(t, pods))
	}
	if g := keysOf(t, got.List()); !slices.Equal(g, keysOf(t, want.List())) {
		t.Errorf("List %v, want %v", g, keysOf(t, want.List()))
	}
	for name := range staticIndexers() {
		values := want.ListIndexFuncValues(name)
		if g := got.ListIndexFuncValues(name); !equalSorted(g, values) {
			t.Errorf("%s: values %v, want %v", name, g, values)
		}
		if len(values) < 2 {
			t.Errorf("%s: %d values; the fixture should give several", name, len(values))
		}
		for _, v := range append(values, "no-such-value") {
			w, err := want.ByIndex(name, v)
			if err != nil {
				t.Fatal(err)
			}
			g, err := got.ByIndex(name, v)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keysOf(t, g), keysOf(t, w)) {
				t.Errorf("%s=%s: %v, want %v", name, v, keysOf(t, g), keysOf(t, w))
			}
			wk, _ := want.IndexKeys(name, v)
			gk, _ := got.IndexKeys(name, v)
			if !equalSorted(gk, wk) {
				t.Errorf("%s=%s: keys %v, want %v", name, v, gk, wk)
			}
		}
		for _, p := range pods[:3] {
			w, _ := want.Index(name, p)
			g, err := got.Index(name, p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keysOf(t, g), keysOf(t, w)) {
				t.Errorf("%s of %v: %v, want %v", name, keysOf(t, []any{p}), keysOf(t, g), keysOf(t, w))
			}
		}
	}
	for _, p := range pods {
		k, _ := cache.MetaNamespaceKeyFunc(p)
		if o, ok, err := got.GetByKey(k); err != nil || !ok || o != p {
			t.Errorf("GetByKey(%s) = %v, %v, %v", k, o, ok, err)
		}
		if o, ok, err := got.Get(p); err != nil || !ok || o != p {
			t.Errorf("Get(%s) = %v, %v, %v", k, o, ok, err)
		}
	}
	if _, ok, err := got.GetByKey("ns-0/none"); ok || err != nil {
		t.Errorf("GetByKey of a key not held: %v, %v", ok, err)
	}
}

func keysOfInOrder(t *testing.T, objs []any) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		k, _ := cache.MetaNamespaceKeyFunc(o)
		out = append(out, k)
	}
	return out
}

func equalSorted(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestStaticRefusesChanges: a key added twice, an update, a delete, a
// replace and new indexers are errors and change nothing; an unknown index
// is an error as in client-go.
func TestStaticRefusesChanges(t *testing.T) {
	pods := staticPods()
	s := NewStatic(cache.MetaNamespaceKeyFunc, staticIndexers(), 0)
	for _, p := range pods {
		if err := s.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	changed := pods[0]
	for name, err := range map[string]error{
		"Add again":   s.Add(changed),
		"Update":      s.Update(changed),
		"Delete":      s.Delete(changed),
		"Replace":     s.Replace(pods[:1], "1"),
		"AddIndexers": s.AddIndexers(cache.Indexers{"x": NamespaceIndexFunc}),
	} {
		if !errors.Is(err, errStatic) {
			t.Errorf("%s: %v, want the static error", name, err)
		}
	}
	if n := len(s.List()); n != len(pods) {
		t.Errorf("%d objects after refused changes, want %d", n, len(pods))
	}
	if g, _ := s.ByIndex(NamespaceIndex, "ns-0"); len(g) != 21 {
		t.Errorf("ns-0 holds %d after refused changes, want 21", len(g))
	}
	if _, err := s.ByIndex("nope", "x"); err == nil {
		t.Error("ByIndex of an unknown index: no error")
	}
	if _, err := s.Index("nope", pods[0]); err == nil {
		t.Error("Index of an unknown index: no error")
	}
	if _, err := s.IndexKeys("nope", "x"); err == nil {
		t.Error("IndexKeys of an unknown index: no error")
	}
}

// TestStaticConcurrentReads: lookups while objects are still added (run
// with -race) see each object whole or not at all.
func TestStaticConcurrentReads(t *testing.T) {
	pods := staticPods()
	s := NewStatic(cache.MetaNamespaceKeyFunc, staticIndexers(), len(pods))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, p := range pods {
			if err := s.Add(p); err != nil {
				t.Error(err)
			}
		}
	}()
	for range 50 {
		objs, err := s.ByIndex(NamespaceIndex, "ns-1")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o == nil {
				t.Fatal("ByIndex gave a nil object")
			}
		}
		_ = s.List()
	}
	wg.Wait()
	if n := len(s.ListKeys()); n != len(pods) {
		t.Errorf("%d keys, want %d", n, len(pods))
	}
}
