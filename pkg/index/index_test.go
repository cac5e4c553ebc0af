package index

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// tombstone wraps obj as an informer hands out an object deleted while its
// watch was down.
func tombstone(obj any) cache.DeletedFinalStateUnknown {
	return cache.DeletedFinalStateUnknown{Key: "default/gone", Obj: obj}
}

// wrongTypes are values no index function can key; each error must name the
// type, and none may panic.
func wrongTypes(index string) []indexCase {
	return []indexCase{
		{name: "untyped nil", obj: nil, wantErr: index + " index: expected an object with metadata, got nil <nil>"},
		{name: "nil pod", obj: (*corev1.Pod)(nil), wantErr: "got nil *v1.Pod"},
		{name: "nil unstructured", obj: (*unstructured.Unstructured)(nil), wantErr: "got nil *unstructured.Unstructured"},
		{name: "string", obj: "default/web", wantErr: "got string"},
		{name: "pod value", obj: corev1.Pod{}, wantErr: "got v1.Pod"},
		{name: "list", obj: &corev1.PodList{}, wantErr: "got *v1.PodList"},
		{name: "tombstone of a key", obj: tombstone("default/web"), wantErr: "got string"},
	}
}

func TestOwnerIndexFunc(t *testing.T) {
	rs := ref("ReplicaSet", "web", "rs-uid", true)
	cm := ref("ConfigMap", "cfg", "cm-uid", false)
	node := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "node-1", UID: "node-uid"}
	owned := newPod("default", "web-1", ownedBy(rs, cm))
	cases := []indexCase{
		{name: "no owners", obj: newPod("default", "bare"), want: nil},
		{name: "one non-controller", obj: newPod("default", "p", ownedBy(cm)), want: []string{"cm-uid"}},
		{name: "controller and non-controller", obj: owned, want: []string{"cm-uid", "rs-uid"}},
		// Static pods' mirror pods are owned by their (cluster-scoped) node.
		{name: "cluster-scoped owner", obj: newPod("kube-system", "etcd", ownedBy(node)), want: []string{"node-uid"}},
		{name: "duplicate reference", obj: newPod("default", "p", ownedBy(cm, cm)), want: []string{"cm-uid"}},
		{name: "reference without UID", obj: newPod("default", "p", ownedBy(ref("ConfigMap", "x", "", false))), want: nil},
		{
			name: "cluster-scoped object",
			obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
				Name: "aggregate", OwnerReferences: []metav1.OwnerReference{ref("Operator", "op", "op-uid", true)},
			}},
			want: []string{"op-uid"},
		},
		{name: "unstructured", obj: toUnstructured(t, owned, "v1", "Pod"), want: []string{"cm-uid", "rs-uid"}},
		{name: "partial metadata", obj: partial(owned, "v1", "Pod"), want: []string{"cm-uid", "rs-uid"}},
		{name: "tombstone", obj: tombstone(owned), want: []string{"cm-uid", "rs-uid"}},
		{
			name: "malformed ownerReferences",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": "x", "ownerReferences": "rs-uid"},
			}},
			want: nil,
		},
		{name: "empty unstructured", obj: &unstructured.Unstructured{}, want: nil},
	}
	runIndexCases(t, OwnerIndexFunc, append(cases, wrongTypes(OwnerIndex)...))
}

func TestControllerIndexFunc(t *testing.T) {
	rs := ref("ReplicaSet", "web", "rs-uid", true)
	cm := ref("ConfigMap", "cfg", "cm-uid", false)
	notController := ref("ReplicaSet", "old", "old-uid", false)
	f := false
	notController.Controller = &f
	owned := newPod("default", "web-1", ownedBy(cm, rs))
	cases := []indexCase{
		{name: "no owners", obj: newPod("default", "bare"), want: nil},
		{name: "only non-controllers", obj: newPod("default", "p", ownedBy(cm)), want: nil},
		{name: "controller=false", obj: newPod("default", "p", ownedBy(notController)), want: nil},
		{name: "controller among others", obj: owned, want: []string{"rs-uid"}},
		{name: "controller without UID", obj: newPod("default", "p", ownedBy(ref("ReplicaSet", "x", "", true))), want: nil},
		{
			name: "cluster-scoped controller of a cluster-scoped object",
			obj: &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{
				Name: "aggregate", OwnerReferences: []metav1.OwnerReference{ref("Operator", "op", "op-uid", true)},
			}},
			want: []string{"op-uid"},
		},
		{name: "unstructured", obj: toUnstructured(t, owned, "v1", "Pod"), want: []string{"rs-uid"}},
		{name: "partial metadata", obj: partial(owned, "v1", "Pod"), want: []string{"rs-uid"}},
		{name: "tombstone", obj: tombstone(owned), want: []string{"rs-uid"}},
		{
			name: "malformed controller flag",
			obj: &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{
				"ownerReferences": []any{map[string]any{"uid": "u", "controller": "yes"}},
			}}},
			want: nil,
		},
	}
	runIndexCases(t, ControllerIndexFunc, append(cases, wrongTypes(ControllerIndex)...))
}

func TestNamespaceIndexFunc(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	cases := []indexCase{
		{name: "namespaced", obj: newPod("default", "p"), want: []string{"default"}},
		{name: "cluster-scoped", obj: node, want: nil},
		{name: "unstructured namespaced", obj: toUnstructured(t, newPod("kube-system", "p"), "v1", "Pod"), want: []string{"kube-system"}},
		{name: "unstructured cluster-scoped", obj: toUnstructured(t, node, "v1", "Node"), want: nil},
		{name: "partial metadata", obj: partial(newPod("ns", "p"), "v1", "Pod"), want: []string{"ns"}},
		{name: "tombstone", obj: tombstone(newPod("default", "p")), want: []string{"default"}},
	}
	runIndexCases(t, NamespaceIndexFunc, append(cases, wrongTypes(NamespaceIndex)...))
}

func TestUIDIndexFunc(t *testing.T) {
	cases := []indexCase{
		{name: "typed", obj: newPod("default", "p"), want: []string{"uid-default-p"}},
		{name: "no UID", obj: &corev1.Pod{}, want: nil},
		{name: "unstructured", obj: toUnstructured(t, newPod("default", "p"), "v1", "Pod"), want: []string{"uid-default-p"}},
		{name: "partial metadata", obj: partial(newPod("default", "p"), "v1", "Pod"), want: []string{"uid-default-p"}},
		{name: "tombstone", obj: tombstone(newPod("default", "p")), want: []string{"uid-default-p"}},
	}
	runIndexCases(t, UIDIndexFunc, append(cases, wrongTypes(UIDIndex)...))
}

func TestNodeIndexFunc(t *testing.T) {
	scheduled := newPod("default", "p", onNode("node-1"))
	cases := []indexCase{
		{name: "scheduled pod", obj: scheduled, want: []string{"node-1"}},
		{name: "pending pod", obj: newPod("default", "pending"), want: nil},
		{name: "unstructured pod", obj: toUnstructured(t, scheduled, "v1", "Pod"), want: []string{"node-1"}},
		{name: "unstructured pending pod", obj: toUnstructured(t, newPod("default", "p"), "v1", "Pod"), want: nil},
		{
			name: "unstructured pod with a non-string nodeName",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Pod", "spec": map[string]any{"nodeName": int64(3)},
			}},
			want: nil,
		},
		// VolumeAttachment has a spec.nodeName too, but HasNode says only pods
		// have nodes and the two must agree.
		{
			name: "other kind with spec.nodeName",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment", "spec": map[string]any{"nodeName": "node-1"},
			}},
			want: nil,
		},
		{
			name: "Pod kind of another group",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "example.com/v1", "kind": "Pod", "spec": map[string]any{"nodeName": "node-1"},
			}},
			want: nil,
		},
		{name: "partial metadata pod", obj: partial(scheduled, "v1", "Pod"), want: nil},
		{name: "node", obj: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}, want: nil},
		{name: "deployment", obj: &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "default"}}, want: nil},
		{name: "tombstone", obj: tombstone(scheduled), want: []string{"node-1"}},
		{name: "unstructured tombstone", obj: tombstone(toUnstructured(t, scheduled, "v1", "Pod")), want: []string{"node-1"}},
	}
	runIndexCases(t, NodeIndexFunc, append(cases, wrongTypes(NodeIndex)...))
}

func TestHasNode(t *testing.T) {
	for _, tc := range []struct {
		gk   schema.GroupKind
		want bool
	}{
		{schema.GroupKind{Kind: "Pod"}, true},
		{schema.GroupKind{Kind: "Node"}, false},
		{schema.GroupKind{Group: "example.com", Kind: "Pod"}, false},
		{schema.GroupKind{Group: "storage.k8s.io", Kind: "VolumeAttachment"}, false},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, false},
	} {
		if got := HasNode(tc.gk); got != tc.want {
			t.Errorf("HasNode(%v) = %v, want %v", tc.gk, got, tc.want)
		}
	}
}

func TestLabelIndexFunc(t *testing.T) {
	labelled := newPod("default", "p", withLabels("app", "web", "tier", "", "app.kubernetes.io/name", "shop"))
	for _, tc := range []struct {
		key   string
		cases []indexCase
	}{
		{key: "app", cases: []indexCase{
			{name: "present", obj: labelled, want: []string{"web"}},
			{name: "no labels", obj: newPod("default", "p"), want: nil},
			{name: "other labels only", obj: newPod("default", "p", withLabels("tier", "db")), want: nil},
			{name: "unstructured", obj: toUnstructured(t, labelled, "v1", "Pod"), want: []string{"web"}},
			{name: "partial metadata", obj: partial(labelled, "v1", "Pod"), want: []string{"web"}},
			{name: "tombstone", obj: tombstone(labelled), want: []string{"web"}},
			{name: "cluster-scoped", obj: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"app": "x"}}}, want: []string{"x"}},
		}},
		// A present label with an empty value is a key, as app= matches it in
		// a selector; an absent one is not.
		{key: "tier", cases: []indexCase{
			{name: "empty value", obj: labelled, want: []string{""}},
			{name: "empty value unstructured", obj: toUnstructured(t, labelled, "v1", "Pod"), want: []string{""}},
			{name: "empty value partial metadata", obj: partial(labelled, "v1", "Pod"), want: []string{""}},
			{name: "absent", obj: newPod("default", "p", withLabels("app", "web")), want: nil},
		}},
		{key: "app.kubernetes.io/name", cases: []indexCase{
			{name: "prefixed key", obj: labelled, want: []string{"shop"}},
		}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			runIndexCases(t, LabelIndexFunc(tc.key), append(tc.cases, wrongTypes(LabelIndexName(tc.key))...))
		})
	}
}

func TestIndexNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{LabelIndexName("app"), "label:app"},
		{LabelIndexName("app.kubernetes.io/name"), "label:app.kubernetes.io/name"},
		{JSONPathIndexName("spec.nodeName"), "jsonpath:{.spec.nodeName}"},
		{JSONPathIndexName(".spec.nodeName"), "jsonpath:{.spec.nodeName}"},
		{JSONPathIndexName("{.spec.nodeName}"), "jsonpath:{.spec.nodeName}"},
		{JSONPathIndexName("{.a}{.b}"), "jsonpath:{.a}{.b}"},
		{NamespaceIndex, cache.NamespaceIndex},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestIndexers(t *testing.T) {
	a, b := Indexers(), Indexers()
	for _, name := range []string{OwnerIndex, ControllerIndex, NamespaceIndex, NodeIndex} {
		if a[name] == nil {
			t.Errorf("Indexers() lacks %q", name)
		}
	}
	// UIDIndex, one key per object, is left to owner-tree callers.
	if len(a) != 4 {
		t.Errorf("Indexers() has %d indexes, want 4", len(a))
	}
	// Callers add their label and JSONPath indexes to the map they get.
	a[LabelIndexName("app")] = LabelIndexFunc("app")
	if _, ok := b[LabelIndexName("app")]; ok {
		t.Error("Indexers() returned a shared map")
	}
}
