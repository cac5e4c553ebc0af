package index

import (
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// newStore returns an indexer like an informer's, with Indexers() plus the
// UID, label and JSONPath indexes a command would add.
func newStore(t *testing.T) cache.Indexer {
	t.Helper()
	ix := Indexers()
	ix[UIDIndex] = UIDIndexFunc
	ix[LabelIndexName("app")] = LabelIndexFunc("app")
	jp, err := JSONPathIndexFunc(".spec.containers[*].image")
	if err != nil {
		t.Fatal(err)
	}
	ix[JSONPathIndexName(".spec.containers[*].image")] = jp
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, ix)
}

// names returns the sorted namespace/name keys of objs.
func names(t *testing.T, objs []any) []string {
	t.Helper()
	out := orderedNames(t, objs)
	slices.Sort(out)
	return out
}

// groupNames renders Group's result as sorted store keys per index key.
func groupNames(t *testing.T, s cache.Indexer, index string) map[string][]string {
	t.Helper()
	g, err := Group(s, index)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for k, objs := range g {
		out[k] = names(t, objs)
	}
	return out
}

func unindexedNames(t *testing.T, s cache.Indexer, index string) []string {
	t.Helper()
	objs, err := Unindexed(s, index)
	if err != nil {
		t.Fatal(err)
	}
	return names(t, objs)
}

func assertGroups(t *testing.T, s cache.Indexer, index string, want map[string][]string, wantNone []string) {
	t.Helper()
	if got := groupNames(t, s, index); !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Group(%s) = %v, want %v", index, got, want)
	}
	if got := unindexedNames(t, s, index); !slices.Equal(got, wantNone) {
		t.Errorf("Unindexed(%s) = %q, want %q", index, got, wantNone)
	}
	values := s.ListIndexFuncValues(index)
	slices.Sort(values)
	if wantKeys := slices.Sorted(maps.Keys(want)); !slices.Equal(values, wantKeys) {
		t.Errorf("ListIndexFuncValues(%s) = %q, want %q", index, values, wantKeys)
	}
}

func byIndex(t *testing.T, s cache.Indexer, index, key string) []string {
	t.Helper()
	objs, err := s.ByIndex(index, key)
	if err != nil {
		t.Fatal(err)
	}
	return names(t, objs)
}

func TestStore(t *testing.T) {
	s := newStore(t)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", UID: "rs-uid"}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid", Labels: map[string]string{"app": ""}}}
	web1 := newPod("default", "web-1", onNode("node-1"), withLabels("app", "web"),
		ownedBy(ref("ReplicaSet", "web", "rs-uid", true), ref("ConfigMap", "cfg", "cm-uid", false)))
	web2 := newPod("default", "web-2", onNode("node-2"), withLabels("app", "web"),
		ownedBy(ref("ReplicaSet", "web", "rs-uid", true)))
	pending := newPod("other", "pending", withLabels("app", "db"))
	// A custom resource as the dynamic informer holds it, owned by the pod.
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Thing",
		"metadata": map[string]any{
			"namespace": "default", "name": "thing", "uid": "thing-uid",
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "Pod", "name": "web-1", "uid": "uid-default-web-1", "controller": true}},
		},
	}}
	objs := []any{rs, node, web1, web2, pending, cr}
	unchanged := addAll(t, s, objs)

	t.Run("after add", func(t *testing.T) {
		assertGroups(t, s, ControllerIndex, map[string][]string{
			"rs-uid":            {"default/web-1", "default/web-2"},
			"uid-default-web-1": {"default/thing"},
		}, []string{"default/web", "node-1", "other/pending"})
		assertGroups(t, s, OwnerIndex, map[string][]string{
			"rs-uid":            {"default/web-1", "default/web-2"},
			"cm-uid":            {"default/web-1"},
			"uid-default-web-1": {"default/thing"},
		}, []string{"default/web", "node-1", "other/pending"})
		assertGroups(t, s, NodeIndex, map[string][]string{
			"node-1": {"default/web-1"},
			"node-2": {"default/web-2"},
		}, []string{"default/thing", "default/web", "node-1", "other/pending"})
		assertGroups(t, s, NamespaceIndex, map[string][]string{
			"default": {"default/thing", "default/web", "default/web-1", "default/web-2"},
			"other":   {"other/pending"},
		}, []string{"node-1"})
		// The node's empty app label is a key; objects without it are <none>.
		assertGroups(t, s, LabelIndexName("app"), map[string][]string{
			"web": {"default/web-1", "default/web-2"},
			"db":  {"other/pending"},
			"":    {"node-1"},
		}, []string{"default/thing", "default/web"})
		assertGroups(t, s, JSONPathIndexName("{.spec.containers[*].image}"), map[string][]string{
			"nginx:1": {"default/web-1", "default/web-2", "other/pending"},
		}, []string{"default/thing", "default/web", "node-1"})

		// Owner trees go from an ownerReference's UID to the owner.
		if got := byIndex(t, s, UIDIndex, "rs-uid"); !slices.Equal(got, []string{"default/web"}) {
			t.Errorf("ByIndex(uid, rs-uid) = %q", got)
		}
		keys, err := s.IndexKeys(NamespaceIndex, "other")
		if err != nil || !slices.Equal(keys, []string{"other/pending"}) {
			t.Errorf("IndexKeys(namespace, other) = %q, %v", keys, err)
		}
	})

	t.Run("update", func(t *testing.T) {
		// New objects, as an informer stores them: cached ones stay untouched.
		adopted := web2.DeepCopy()
		adopted.OwnerReferences = []metav1.OwnerReference{ref("ReplicaSet", "web-new", "rs2-uid", true)}
		adopted.Labels = nil
		scheduled := pending.DeepCopy()
		scheduled.Spec.NodeName = "node-1"
		scheduled.Spec.Containers[0].Image = "postgres:16"
		for _, o := range []any{adopted, scheduled} {
			if err := s.Update(o); err != nil {
				t.Fatal(err)
			}
		}
		assertGroups(t, s, ControllerIndex, map[string][]string{
			"rs-uid":            {"default/web-1"},
			"rs2-uid":           {"default/web-2"},
			"uid-default-web-1": {"default/thing"},
		}, []string{"default/web", "node-1", "other/pending"})
		assertGroups(t, s, NodeIndex, map[string][]string{
			"node-1": {"default/web-1", "other/pending"},
			"node-2": {"default/web-2"},
		}, []string{"default/thing", "default/web", "node-1"})
		assertGroups(t, s, LabelIndexName("app"), map[string][]string{
			"web": {"default/web-1"},
			"db":  {"other/pending"},
			"":    {"node-1"},
		}, []string{"default/thing", "default/web", "default/web-2"})
		assertGroups(t, s, JSONPathIndexName("spec.containers[*].image"), map[string][]string{
			"nginx:1":     {"default/web-1", "default/web-2"},
			"postgres:16": {"other/pending"},
		}, []string{"default/thing", "default/web", "node-1"})
	})

	t.Run("delete", func(t *testing.T) {
		for _, o := range []any{web1, node} {
			if err := s.Delete(o); err != nil {
				t.Fatal(err)
			}
		}
		if got := byIndex(t, s, ControllerIndex, "rs-uid"); len(got) != 0 {
			t.Errorf("ByIndex(controller, rs-uid) after delete = %q", got)
		}
		assertGroups(t, s, OwnerIndex, map[string][]string{
			"rs2-uid":           {"default/web-2"},
			"uid-default-web-1": {"default/thing"},
		}, []string{"default/web", "other/pending"})
		assertGroups(t, s, NodeIndex, map[string][]string{
			"node-1": {"other/pending"},
			"node-2": {"default/web-2"},
		}, []string{"default/thing", "default/web"})
		assertGroups(t, s, LabelIndexName("app"), map[string][]string{
			"db": {"other/pending"},
		}, []string{"default/thing", "default/web", "default/web-2"})
	})

	unchanged()
}

func TestQueryUnknownIndex(t *testing.T) {
	s := newStore(t)
	if err := s.Add(newPod("default", "p")); err != nil {
		t.Fatal(err)
	}
	const want = `index "label:tier" does not exist`
	if _, err := Group(s, LabelIndexName("tier")); err == nil || err.Error() != want {
		t.Errorf("Group error = %v, want %q", err, want)
	}
	if _, err := Unindexed(s, LabelIndexName("tier")); err == nil || err.Error() != want {
		t.Errorf("Unindexed error = %v, want %q", err, want)
	}
}

func TestQueryEmptyStore(t *testing.T) {
	s := newStore(t)
	g, err := Group(s, NodeIndex)
	if err != nil || len(g) != 0 {
		t.Errorf("Group = %v, %v; want an empty map", g, err)
	}
	none, err := Unindexed(s, NodeIndex)
	if err != nil || none != nil {
		t.Errorf("Unindexed = %v, %v; want nil", none, err)
	}
}
