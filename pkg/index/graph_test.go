package index

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// The kinds of the graph fixture: metadata-only stores for most, a typed
// store for pods and an unstructured one for the custom resource, as the
// command layer mixes them.
var (
	graphDeployGVK  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	graphRSGVK      = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	graphPodGVK     = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	graphCMGVK      = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	graphNodeGVK    = schema.GroupVersionKind{Version: "v1", Kind: "Node"}
	graphLeaseGVK   = schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}
	graphRolloutGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1alpha1", Kind: "Rollout"}
)

// graphWorld is a small cluster in Graph stores. Objects named "gone" or
// "worker-9" are referenced but never added; Widget and Operator are kinds the
// graph does not hold.
type graphWorld struct {
	g      *Graph
	stores map[schema.GroupKind]cache.Indexer
	// all holds every added object with a deep copy taken before any query.
	all, snapshots []any

	deploy, rs5, rs4, shared                     *metav1.PartialObjectMetadata
	pod5a, pod5b, pod4a                          *corev1.Pod
	rollout                                      *unstructured.Unstructured
	rolloutRS                                    *metav1.PartialObjectMetadata
	canaryPod                                    *corev1.Pod
	node, lease                                  *metav1.PartialObjectMetadata
	mirror, static                               *corev1.Pod
	loopA, loopB, self                           *metav1.PartialObjectMetadata
	orphanRS, leaving, leavingRS, going, goingRS *metav1.PartialObjectMetadata
	orphanPod, multi, widgetPod                  *corev1.Pod
	opState                                      *metav1.PartialObjectMetadata

	// Referenced, never added.
	goneDeploy, goneRS, goneCM, goneNode, widget, operator *metav1.PartialObjectMetadata
}

// unstructuredOwner is owner as a dynamic informer holds a custom resource.
func unstructuredOwner(apiVersion, kind, namespace, name string, parents ...metav1.OwnerReference) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetUID(uidOf(kind, namespace, name))
	u.SetOwnerReferences(parents)
	return u
}

func newGraphWorld(t *testing.T) *graphWorld {
	t.Helper()
	w := &graphWorld{stores: map[schema.GroupKind]cache.Indexer{}}

	w.goneDeploy = owner("apps/v1", "Deployment", "shop", "gone")
	w.goneRS = owner("apps/v1", "ReplicaSet", "shop", "gone")
	w.goneCM = owner("v1", "ConfigMap", "shop", "gone-cm")
	w.goneNode = owner("v1", "Node", "", "worker-9")
	w.widget = owner("widgets.example.com/v1", "Widget", "shop", "w")
	w.operator = owner("ops.io/v1", "Operator", "shop", "op")

	// Deployment → ReplicaSets → Pods; a ConfigMap owned by the Deployment
	// (plain reference) and by one of its ReplicaSets (controller).
	w.deploy = owner("apps/v1", "Deployment", "shop", "web")
	w.rs5 = owner("apps/v1", "ReplicaSet", "shop", "web-5d4", ctrlOf(w.deploy))
	w.rs4 = owner("apps/v1", "ReplicaSet", "shop", "web-4c3", ctrlOf(w.deploy))
	w.pod5a = newPod("shop", "web-5d4-a", ownedBy(ctrlOf(w.rs5)))
	w.pod5b = newPod("shop", "web-5d4-b", ownedBy(ctrlOf(w.rs5)))
	w.pod4a = newPod("shop", "web-4c3-a", ownedBy(ctrlOf(w.rs4)))
	w.shared = owner("v1", "ConfigMap", "shop", "shared", refOf(w.deploy), ctrlOf(w.rs5))

	// A custom resource owning a ReplicaSet.
	w.rollout = unstructuredOwner("example.com/v1alpha1", "Rollout", "shop", "canary")
	w.rolloutRS = owner("apps/v1", "ReplicaSet", "shop", "canary-7f9", metav1.OwnerReference{
		APIVersion: "example.com/v1alpha1", Kind: "Rollout", Name: "canary", UID: w.rollout.GetUID(), Controller: ptr.To(true),
	})
	w.canaryPod = newPod("shop", "canary-7f9-a", ownedBy(ctrlOf(w.rolloutRS)))

	// A cluster-scoped Node owning its mirror pod and its Lease; a static pod
	// whose node is gone.
	w.node = owner("v1", "Node", "", "worker-1")
	w.mirror = newPod("kube-system", "kube-apiserver-worker-1", ownedBy(ctrlOf(w.node)))
	w.lease = owner("coordination.k8s.io/v1", "Lease", "kube-node-lease", "worker-1", refOf(w.node))
	w.static = newPod("kube-system", "kube-proxy-worker-9", ownedBy(ctrlOf(w.goneNode)))

	// A reference cycle, and an object that owns itself.
	w.loopA = owner("v1", "ConfigMap", "shop", "loop-a")
	w.loopB = owner("v1", "ConfigMap", "shop", "loop-b", refOf(w.loopA))
	w.loopA.OwnerReferences = []metav1.OwnerReference{refOf(w.loopB)}
	w.self = owner("v1", "ConfigMap", "shop", "self")
	w.self.OwnerReferences = []metav1.OwnerReference{refOf(w.self)}

	// Dangling references.
	w.orphanRS = owner("apps/v1", "ReplicaSet", "shop", "orphan", ctrlOf(w.goneDeploy))
	w.orphanPod = newPod("shop", "orphan-x", ownedBy(ctrlOf(w.goneRS)))

	// Owners being deleted: with the orphan finalizer (kubectl delete
	// --cascade=orphan) and in the foreground, which is no orphaning.
	deleted := metav1.NewTime(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC))
	w.leaving = owner("apps/v1", "Deployment", "shop", "leaving")
	w.leaving.DeletionTimestamp = &deleted
	w.leaving.Finalizers = []string{metav1.FinalizerOrphanDependents}
	w.leavingRS = owner("apps/v1", "ReplicaSet", "shop", "leaving-6b8", ctrlOf(w.leaving))
	w.going = owner("apps/v1", "Deployment", "shop", "going")
	w.going.DeletionTimestamp = &deleted
	w.going.Finalizers = []string{metav1.FinalizerDeleteDependents}
	w.goingRS = owner("apps/v1", "ReplicaSet", "shop", "going-1", ctrlOf(w.going))

	// Several owners gone or going at once, listed out of order.
	w.multi = newPod("shop", "multi", ownedBy(ctrlOf(w.goneRS), refOf(w.leaving), refOf(w.goneCM)))

	// References to kinds the graph does not hold.
	w.widgetPod = newPod("shop", "widget-pod", ownedBy(ctrlOf(w.widget)))
	w.opState = owner("v1", "ConfigMap", "shop", "op-state", ctrlOf(w.operator))

	byKind := []struct {
		gvk        schema.GroupVersionKind
		namespaced bool
		objs       []any
	}{
		{graphDeployGVK, true, []any{w.deploy, w.leaving, w.going}},
		{graphRSGVK, true, []any{w.rs5, w.rs4, w.rolloutRS, w.orphanRS, w.leavingRS, w.goingRS}},
		{graphPodGVK, true, []any{w.pod5a, w.pod5b, w.pod4a, w.canaryPod, w.mirror, w.static, w.orphanPod, w.multi, w.widgetPod}},
		{graphCMGVK, true, []any{w.shared, w.loopA, w.loopB, w.self, w.opState}},
		{graphNodeGVK, false, []any{w.node}},
		{graphLeaseGVK, true, []any{w.lease}},
		{graphRolloutGVK, true, []any{w.rollout}},
	}
	var stores []GraphStore
	for _, k := range byKind {
		s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, GraphIndexers())
		for _, o := range k.objs {
			if err := s.Add(o); err != nil {
				t.Fatal(err)
			}
			w.all = append(w.all, o)
			w.snapshots = append(w.snapshots, snapshot(o))
		}
		w.stores[k.gvk.GroupKind()] = s
		stores = append(stores, GraphStore{GVK: k.gvk, Namespaced: k.namespaced, Indexer: s})
	}
	w.g = NewGraph(stores)
	return w
}

// assertUnchanged checks that no query modified a cached object.
func (w *graphWorld) assertUnchanged(t *testing.T) {
	t.Helper()
	for i, o := range w.all {
		assertUnchanged(t, w.snapshots[i], o)
	}
}

// nodeOf returns the graph's node for an object of the fixture.
func (w *graphWorld) nodeOf(t *testing.T, gvk schema.GroupVersionKind, obj metav1.Object) Node {
	t.Helper()
	key := obj.GetName()
	if obj.GetNamespace() != "" {
		key = obj.GetNamespace() + "/" + key
	}
	n, ok, err := w.g.Get(gvk.GroupKind(), key)
	if err != nil || !ok {
		t.Fatalf("Get(%s, %s) = %v, %v", gvk.Kind, key, ok, err)
	}
	return n
}

// nodeName renders a node as "Kind.group namespace/name".
func nodeName(n Node) string {
	key := n.Object.GetName()
	if ns := n.Object.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	return n.GVK.GroupKind().String() + " " + key
}

func nodeNames(nodes []Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, nodeName(n))
	}
	return out
}

// fmtTree renders a tree one node per line, indented by depth.
func fmtTree(t *TreeNode) []string {
	var out []string
	var walk func(t *TreeNode, indent string)
	walk = func(t *TreeNode, indent string) {
		line := indent + nodeName(t.Node)
		if t.Cycle {
			line += " (cycle)"
		}
		out = append(out, line)
		for _, c := range t.Children {
			walk(c, indent+"  ")
		}
	}
	walk(t, "")
	return out
}

// fmtLinks renders owner links one per line, indented by depth, with their
// flags.
func fmtLinks(t *testing.T, links []OwnerLink) []string {
	t.Helper()
	var out []string
	var walk func(links []OwnerLink, indent string)
	walk = func(links []OwnerLink, indent string) {
		for _, l := range links {
			key := l.Ref.Name
			if l.Ref.Namespace != "" {
				key = l.Ref.Namespace + "/" + key
			}
			line := indent + l.Ref.Kind + " " + key
			if l.Controller {
				line += " controller"
			}
			if l.Owner != nil {
				line += " found"
				if l.Owner.Object.GetUID() != l.Ref.UID {
					t.Errorf("link to %s leads to %s", l.Ref.UID, l.Owner.Object.GetUID())
				}
			}
			for _, f := range []struct {
				set  bool
				name string
			}{{l.Missing, "missing"}, {l.Unknown, "unknown"}, {l.Cycle, "cycle"}} {
				if f.set {
					line += " " + f.name
				}
			}
			if l.Owner == nil && len(l.Up) > 0 {
				t.Errorf("link to %s has owners above it but no owner", key)
			}
			out = append(out, line)
			walk(l.Up, indent+"  ")
		}
	}
	walk(links, "")
	return out
}

func assertLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %s\n want %s", what, strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

func TestGraphIndexers(t *testing.T) {
	ix := GraphIndexers()
	if got, want := slices.Sorted(maps.Keys(ix)), []string{OwnerIndex, OwnerKindIndex, UIDIndex}; !slices.Equal(got, want) {
		t.Errorf("GraphIndexers() has %q, want %q", got, want)
	}
	for name, fn := range ix {
		if fn == nil {
			t.Errorf("index %q has no function", name)
		}
	}
	// Each call is a fresh map: a command adding an index to one must not
	// change another's.
	ix["extra"] = UIDIndexFunc
	if _, ok := GraphIndexers()["extra"]; ok {
		t.Error("GraphIndexers() returned a shared map")
	}
}

func TestOwnerKindIndexFunc(t *testing.T) {
	rs := ref("ReplicaSet", "web", "rs-uid", true)
	rs2 := ref("ReplicaSet", "web-2", "rs2-uid", false)
	node := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: "node-uid"}
	rollout := metav1.OwnerReference{APIVersion: "example.com/v1alpha1", Kind: "Rollout", Name: "canary", UID: "ro-uid"}
	owned := newPod("shop", "p", ownedBy(rs, node))
	cases := []indexCase{
		{name: "no owners", obj: newPod("shop", "bare"), want: nil},
		{name: "apps kind", obj: newPod("shop", "p", ownedBy(rs)), want: []string{"ReplicaSet.apps"}},
		{name: "core kind", obj: newPod("kube-system", "mirror", ownedBy(node)), want: []string{"Node"}},
		{name: "custom kind", obj: newPod("shop", "p", ownedBy(rollout)), want: []string{"Rollout.example.com"}},
		// One key per kind, however many owners of it.
		{name: "two owners of one kind", obj: newPod("shop", "p", ownedBy(rs, rs2)), want: []string{"ReplicaSet.apps"}},
		// The version does not matter: the owner's store is found by kind.
		{
			name: "two versions of one kind",
			obj:  newPod("shop", "p", ownedBy(rollout, metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Rollout", Name: "b", UID: "b"})),
			want: []string{"Rollout.example.com"},
		},
		{name: "several kinds", obj: owned, want: []string{"Node", "ReplicaSet.apps"}},
		// A malformed apiVersion keeps the kind, as OwnerRef.GroupKind does.
		{
			name: "malformed apiVersion",
			obj:  newPod("shop", "p", ownedBy(metav1.OwnerReference{APIVersion: "a/b/c", Kind: "Thing", Name: "t", UID: "t"})),
			want: []string{"Thing"},
		},
		// References the API server would reject have no kind to key by.
		{
			name: "reference without kind",
			obj:  newPod("shop", "p", ownedBy(metav1.OwnerReference{APIVersion: "apps/v1", Name: "x", UID: "x"})),
			want: nil,
		},
		{name: "unstructured", obj: toUnstructured(t, owned, "v1", "Pod"), want: []string{"Node", "ReplicaSet.apps"}},
		{name: "partial metadata", obj: partial(owned, "v1", "Pod"), want: []string{"Node", "ReplicaSet.apps"}},
		{name: "tombstone", obj: tombstone(owned), want: []string{"Node", "ReplicaSet.apps"}},
		{
			name: "malformed ownerReferences",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": "x", "ownerReferences": "rs-uid"},
			}},
			want: nil,
		},
	}
	runIndexCases(t, OwnerKindIndexFunc, append(cases, wrongTypes(OwnerKindIndex)...))
}

func TestOwnerKindIndexStore(t *testing.T) {
	s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, GraphIndexers())
	rs := ref("ReplicaSet", "web", "rs-uid", true)
	node := metav1.OwnerReference{APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: "node-uid"}
	a := newPod("shop", "a", ownedBy(rs))
	b := newPod("shop", "b", ownedBy(rs, node))
	for _, o := range []any{a, b, newPod("shop", "bare")} {
		if err := s.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	assertGroups(t, s, OwnerKindIndex, map[string][]string{
		"ReplicaSet.apps": {"shop/a", "shop/b"},
		"Node":            {"shop/b"},
	}, []string{"shop/bare"})

	// b loses its ReplicaSet, a is deleted: ReplicaSet.apps is no key any more.
	b2 := newPod("shop", "b", ownedBy(node))
	if err := s.Update(b2); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(a); err != nil {
		t.Fatal(err)
	}
	assertGroups(t, s, OwnerKindIndex, map[string][]string{"Node": {"shop/b"}}, []string{"shop/bare"})
	if got := byIndex(t, s, OwnerKindIndex, "ReplicaSet.apps"); len(got) != 0 {
		t.Errorf("ByIndex(ReplicaSet.apps) = %q after the last owner went", got)
	}
}

func TestNewGraph(t *testing.T) {
	first := cache.NewIndexer(cache.MetaNamespaceKeyFunc, GraphIndexers())
	second := cache.NewIndexer(cache.MetaNamespaceKeyFunc, GraphIndexers())
	if err := first.Add(owner("apps/v1", "ReplicaSet", "shop", "in-first")); err != nil {
		t.Fatal(err)
	}
	if err := second.Add(owner("apps/v1beta2", "ReplicaSet", "shop", "in-second")); err != nil {
		t.Fatal(err)
	}
	g := NewGraph([]GraphStore{
		{GVK: graphRSGVK, Namespaced: true, Indexer: first},
		{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1beta2", Kind: "ReplicaSet"}, Namespaced: true, Indexer: second},
	})
	rsGK := graphRSGVK.GroupKind()
	if !g.Has(rsGK) {
		t.Fatal("Has(ReplicaSet.apps) = false")
	}
	for _, gk := range []schema.GroupKind{{Kind: "ReplicaSet"}, {Group: "extensions", Kind: "ReplicaSet"}, {Group: "apps", Kind: "Deployment"}} {
		if g.Has(gk) {
			t.Errorf("Has(%s) = true", gk)
		}
	}
	// A kind listed twice keeps the first store.
	if _, ok, err := g.Get(rsGK, "shop/in-first"); !ok || err != nil {
		t.Errorf("Get(in-first) = %v, %v; want the first store", ok, err)
	}
	if _, ok, err := g.Get(rsGK, "shop/in-second"); ok || err != nil {
		t.Errorf("Get(in-second) = %v, %v; want the second store ignored", ok, err)
	}
	if kinds := NewGraph(nil).OwnerKinds(); len(kinds) != 0 {
		t.Errorf("empty graph OwnerKinds() = %v", kinds)
	}
}

func TestGraphGet(t *testing.T) {
	w := newGraphWorld(t)
	tests := []struct {
		name   string
		gk     schema.GroupKind
		key    string
		uid    types.UID
		want   metav1.Object
		gvk    schema.GroupVersionKind
		nsd    bool
		errMsg string
	}{
		{name: "metadata only", gk: graphRSGVK.GroupKind(), key: "shop/web-5d4", uid: w.rs5.UID, want: w.rs5, gvk: graphRSGVK, nsd: true},
		{name: "typed", gk: graphPodGVK.GroupKind(), key: "kube-system/kube-apiserver-worker-1", uid: w.mirror.UID, want: w.mirror, gvk: graphPodGVK, nsd: true},
		{name: "unstructured", gk: graphRolloutGVK.GroupKind(), key: "shop/canary", uid: w.rollout.GetUID(), want: w.rollout, gvk: graphRolloutGVK, nsd: true},
		{name: "cluster-scoped", gk: graphNodeGVK.GroupKind(), key: "worker-1", uid: w.node.UID, want: w.node, gvk: graphNodeGVK},
		{name: "absent", gk: graphRSGVK.GroupKind(), key: "shop/gone", uid: w.goneRS.UID},
		// The Deployment's UID looked up among ReplicaSets: UIDs are unique,
		// but a lookup only searches the kind it is given.
		{name: "UID of another kind", gk: graphRSGVK.GroupKind(), key: "shop/web", uid: w.deploy.UID},
		{
			name: "kind not in the graph", gk: schema.GroupKind{Group: "widgets.example.com", Kind: "Widget"}, key: "shop/w", uid: w.widget.UID,
			errMsg: "kind Widget.widgets.example.com is not in the graph",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := func(what string, n Node, ok bool, err error) {
				t.Helper()
				if tc.errMsg != "" {
					if err == nil || err.Error() != tc.errMsg {
						t.Errorf("%s error = %v, want %q", what, err, tc.errMsg)
					}
					if ok {
						t.Errorf("%s ok = true alongside an error", what)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if ok != (tc.want != nil) {
					t.Fatalf("%s ok = %v, want %v", what, ok, tc.want != nil)
				}
				if !ok {
					return
				}
				// The node holds the cached object itself, not a copy.
				if n.Object != tc.want {
					t.Errorf("%s object = %p, want the cached %p", what, n.Object, tc.want)
				}
				if n.GVK != tc.gvk || n.Namespaced != tc.nsd {
					t.Errorf("%s = %v namespaced=%v, want %v namespaced=%v", what, n.GVK, n.Namespaced, tc.gvk, tc.nsd)
				}
			}
			n, ok, err := w.g.Get(tc.gk, tc.key)
			check("Get", n, ok, err)
			n, ok, err = w.g.ByUID(tc.gk, tc.uid)
			check("ByUID", n, ok, err)
		})
	}
	w.assertUnchanged(t)
}

func TestNodeRef(t *testing.T) {
	w := newGraphWorld(t)
	tests := []struct {
		node Node
		want OwnerRef
	}{
		{w.nodeOf(t, graphRSGVK, w.rs5), OwnerRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d4", UID: w.rs5.UID}},
		{w.nodeOf(t, graphPodGVK, w.pod5a), OwnerRef{APIVersion: "v1", Kind: "Pod", Namespace: "shop", Name: "web-5d4-a", UID: w.pod5a.UID}},
		{w.nodeOf(t, graphNodeGVK, w.node), OwnerRef{APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: w.node.UID}},
		{w.nodeOf(t, graphRolloutGVK, w.rollout), OwnerRef{APIVersion: "example.com/v1alpha1", Kind: "Rollout", Namespace: "shop", Name: "canary", UID: w.rollout.GetUID()}},
	}
	for _, tc := range tests {
		if got := tc.node.Ref(); got != tc.want {
			t.Errorf("Ref() = %+v, want %+v", got, tc.want)
		}
		// What a reference names leads back to the node.
		if back, ok, err := w.g.ByUID(tc.node.Ref().GroupKind(), tc.node.Ref().UID); err != nil || !ok || back.Object != tc.node.Object {
			t.Errorf("ByUID(Ref() of %s) = %v, %v, %v", nodeName(tc.node), nodeName(back), ok, err)
		}
	}
}

func TestGraphChildren(t *testing.T) {
	w := newGraphWorld(t)
	tests := []struct {
		name string
		uid  types.UID
		want []string
	}{
		// Sorted by kind, then namespace and name, across stores.
		{"deployment", w.deploy.UID, []string{"ConfigMap shop/shared", "ReplicaSet.apps shop/web-4c3", "ReplicaSet.apps shop/web-5d4"}},
		{"replicaset", w.rs5.UID, []string{"ConfigMap shop/shared", "Pod shop/web-5d4-a", "Pod shop/web-5d4-b"}},
		{"custom resource", w.rollout.GetUID(), []string{"ReplicaSet.apps shop/canary-7f9"}},
		// A cluster-scoped owner has children in any namespace.
		{"node", w.node.UID, []string{"Lease.coordination.k8s.io kube-node-lease/worker-1", "Pod kube-system/kube-apiserver-worker-1"}},
		// Children are found by the UID they name, whether it exists or not.
		{"absent owner", w.goneRS.UID, []string{"Pod shop/multi", "Pod shop/orphan-x"}},
		{"owner of a kind not in the graph", w.widget.UID, []string{"Pod shop/widget-pod"}},
		{"owner being deleted", w.leaving.UID, []string{"Pod shop/multi", "ReplicaSet.apps shop/leaving-6b8"}},
		{"self", w.self.UID, []string{"ConfigMap shop/self"}},
		{"leaf", w.pod5a.UID, nil},
		{"no UID", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := w.g.Children(tc.uid)
			if err != nil {
				t.Fatal(err)
			}
			assertLines(t, "Children", nodeNames(got), tc.want)
		})
	}
	// Children carry their store's kind and scope.
	got, err := w.g.Children(w.node.UID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].GVK != graphLeaseGVK || got[1].GVK != graphPodGVK || !got[0].Namespaced || !got[1].Namespaced {
		t.Errorf("Children(node) = %+v", got)
	}
	w.assertUnchanged(t)
}

func TestSortNodes(t *testing.T) {
	n := func(group, kind, ns, name string) Node {
		return Node{GVK: schema.GroupVersionKind{Group: group, Version: "v1", Kind: kind}, Object: &metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	nodes := []Node{
		n("b.example.com", "Widget", "shop", "a"),
		n("", "Pod", "shop", "b"),
		n("a.example.com", "Widget", "shop", "z"),
		n("", "Pod", "ops", "z"),
		n("", "Pod", "shop", "a"),
		n("apps", "Deployment", "shop", "web"),
		n("", "Node", "", "worker-1"),
		n("", "Pod", "", "cluster-scoped-first"),
	}
	SortNodes(nodes)
	assertLines(t, "SortNodes", nodeNames(nodes), []string{
		"Deployment.apps shop/web",
		"Node worker-1",
		"Pod cluster-scoped-first",
		"Pod ops/z",
		"Pod shop/a",
		"Pod shop/b",
		// Same kind in two groups: by group, before namespace and name.
		"Widget.a.example.com shop/z",
		"Widget.b.example.com shop/a",
	})
	SortNodes(nil) // must not panic
}

func TestGraphDescendants(t *testing.T) {
	w := newGraphWorld(t)
	tests := []struct {
		name string
		root Node
		want []string
	}{
		{
			// The ConfigMap has two owners in the tree and appears under each.
			name: "deployment",
			root: w.nodeOf(t, graphDeployGVK, w.deploy),
			want: []string{
				"Deployment.apps shop/web",
				"  ConfigMap shop/shared",
				"  ReplicaSet.apps shop/web-4c3",
				"    Pod shop/web-4c3-a",
				"  ReplicaSet.apps shop/web-5d4",
				"    ConfigMap shop/shared",
				"    Pod shop/web-5d4-a",
				"    Pod shop/web-5d4-b",
			},
		},
		{
			name: "custom resource",
			root: w.nodeOf(t, graphRolloutGVK, w.rollout),
			want: []string{
				"Rollout.example.com shop/canary",
				"  ReplicaSet.apps shop/canary-7f9",
				"    Pod shop/canary-7f9-a",
			},
		},
		{
			name: "cluster-scoped root",
			root: w.nodeOf(t, graphNodeGVK, w.node),
			want: []string{
				"Node worker-1",
				"  Lease.coordination.k8s.io kube-node-lease/worker-1",
				"  Pod kube-system/kube-apiserver-worker-1",
			},
		},
		{
			// The cycle is cut where it closes: loop-a is shown again,
			// marked, without its children.
			name: "cycle",
			root: w.nodeOf(t, graphCMGVK, w.loopA),
			want: []string{
				"ConfigMap shop/loop-a",
				"  ConfigMap shop/loop-b",
				"    ConfigMap shop/loop-a (cycle)",
			},
		},
		{
			name: "owns itself",
			root: w.nodeOf(t, graphCMGVK, w.self),
			want: []string{"ConfigMap shop/self", "  ConfigMap shop/self (cycle)"},
		},
		{
			name: "owner being deleted",
			root: w.nodeOf(t, graphDeployGVK, w.leaving),
			want: []string{"Deployment.apps shop/leaving", "  Pod shop/multi", "  ReplicaSet.apps shop/leaving-6b8"},
		},
		{
			name: "leaf",
			root: w.nodeOf(t, graphPodGVK, w.pod5a),
			want: []string{"Pod shop/web-5d4-a"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := w.g.Descendants(tc.root)
			if err != nil {
				t.Fatal(err)
			}
			if tree.Node.Object != tc.root.Object || tree.Cycle {
				t.Errorf("root = %s cycle=%v, want %s", nodeName(tree.Node), tree.Cycle, nodeName(tc.root))
			}
			assertLines(t, "Descendants", fmtTree(tree), tc.want)
		})
	}

	// A branch that closes the cycle further down is marked there, and the
	// walk forgets the branch once it leaves it: the shared ConfigMap is not
	// a cycle the second time.
	tree, err := w.g.Descendants(w.nodeOf(t, graphDeployGVK, w.deploy))
	if err != nil {
		t.Fatal(err)
	}
	var cycles int
	var count func(*TreeNode)
	count = func(t *TreeNode) {
		if t.Cycle {
			cycles++
		}
		for _, c := range t.Children {
			count(c)
		}
	}
	count(tree)
	if cycles != 0 {
		t.Errorf("%d cycles in a tree without one", cycles)
	}
	w.assertUnchanged(t)
}

// chainGraph is a graph of n ConfigMaps, each owned by the one before.
func chainGraph(t *testing.T, n int) (*Graph, []*metav1.PartialObjectMetadata) {
	t.Helper()
	s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, GraphIndexers())
	var objs []*metav1.PartialObjectMetadata
	for i := range n {
		o := owner("v1", "ConfigMap", "shop", fmt.Sprintf("c%02d", i))
		if i > 0 {
			o.OwnerReferences = []metav1.OwnerReference{refOf(objs[i-1])}
		}
		objs = append(objs, o)
		if err := s.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return NewGraph([]GraphStore{{GVK: graphCMGVK, Namespaced: true, Indexer: s}}), objs
}

// TestGraphDepthBound checks that chains deeper than MaxOwnerDepth end, marked,
// rather than recursing without bound.
func TestGraphDepthBound(t *testing.T) {
	const n = MaxOwnerDepth + 5
	g, objs := chainGraph(t, n)
	node := func(o *metav1.PartialObjectMetadata) Node {
		return Node{GVK: graphCMGVK, Namespaced: true, Object: o}
	}

	tree, err := g.Descendants(node(objs[0]))
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for cur := tree; ; depth++ {
		if cur.Cycle || len(cur.Children) == 0 {
			if !cur.Cycle {
				tree = nil
			}
			break
		}
		cur = cur.Children[0]
	}
	if tree == nil || depth != MaxOwnerDepth+1 {
		t.Errorf("Descendants of a chain of %d: a marked end at depth %d, want one at %d", n, depth, MaxOwnerDepth+1)
	}

	links := g.Owners(node(objs[n-1]))
	depth = 0
	var last OwnerLink
	for len(links) == 1 {
		last = links[0]
		if last.Owner == nil {
			break
		}
		links = last.Up
		depth++
	}
	if !last.Cycle || depth != MaxOwnerDepth {
		t.Errorf("Owners of a chain of %d: %d owners found then cycle=%v, want %d then a marked end", n, depth, last.Cycle, MaxOwnerDepth)
	}

	// A chain within the bound is walked whole.
	g, objs = chainGraph(t, MaxOwnerDepth)
	lines := fmtLinks(t, g.Owners(node(objs[MaxOwnerDepth-1])))
	if len(lines) != MaxOwnerDepth-1 || strings.Contains(strings.Join(lines, "\n"), "cycle") {
		t.Errorf("Owners of a chain of %d:\n%s", MaxOwnerDepth, strings.Join(lines, "\n"))
	}
}

func TestGraphOwners(t *testing.T) {
	w := newGraphWorld(t)
	tests := []struct {
		name string
		node Node
		want []string
	}{
		{
			name: "pod of a deployment",
			node: w.nodeOf(t, graphPodGVK, w.pod5a),
			want: []string{
				"ReplicaSet shop/web-5d4 controller found",
				"  Deployment shop/web controller found",
			},
		},
		{
			// Every reference is followed, controller or not, in the
			// object's order.
			name: "two owners",
			node: w.nodeOf(t, graphCMGVK, w.shared),
			want: []string{
				"Deployment shop/web found",
				"ReplicaSet shop/web-5d4 controller found",
				"  Deployment shop/web controller found",
			},
		},
		{
			name: "custom resource owner",
			node: w.nodeOf(t, graphPodGVK, w.canaryPod),
			want: []string{
				"ReplicaSet shop/canary-7f9 controller found",
				"  Rollout shop/canary controller found",
			},
		},
		{
			// The owner's namespace is the owner's own: none for a Node.
			name: "cluster-scoped owner",
			node: w.nodeOf(t, graphPodGVK, w.mirror),
			want: []string{"Node worker-1 controller found"},
		},
		{
			name: "lease of a node",
			node: w.nodeOf(t, graphLeaseGVK, w.lease),
			want: []string{"Node worker-1 found"},
		},
		{
			// A missing owner of a cluster-scoped kind has no namespace
			// either, though the reference is held in kube-system.
			name: "missing cluster-scoped owner",
			node: w.nodeOf(t, graphPodGVK, w.static),
			want: []string{"Node worker-9 controller missing"},
		},
		{
			name: "missing namespaced owner",
			node: w.nodeOf(t, graphRSGVK, w.orphanRS),
			want: []string{"Deployment shop/gone controller missing"},
		},
		{
			// An owner being deleted still exists.
			name: "missing, deleted and orphaning owners",
			node: w.nodeOf(t, graphPodGVK, w.multi),
			want: []string{
				"ReplicaSet shop/gone controller missing",
				"Deployment shop/leaving found",
				"ConfigMap shop/gone-cm missing",
			},
		},
		{
			// The scope of a kind the graph does not hold is not known; the
			// reference keeps the dependent's namespace.
			name: "kind not in the graph",
			node: w.nodeOf(t, graphPodGVK, w.widgetPod),
			want: []string{"Widget shop/w controller unknown"},
		},
		{
			name: "cycle",
			node: w.nodeOf(t, graphCMGVK, w.loopB),
			want: []string{
				"ConfigMap shop/loop-a found",
				"  ConfigMap shop/loop-b cycle",
			},
		},
		{
			name: "owns itself",
			node: w.nodeOf(t, graphCMGVK, w.self),
			want: []string{"ConfigMap shop/self cycle"},
		},
		{name: "no owners", node: w.nodeOf(t, graphDeployGVK, w.deploy), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertLines(t, "Owners", fmtLinks(t, w.g.Owners(tc.node)), tc.want)
		})
	}

	t.Run("references", func(t *testing.T) {
		// The Ref is the reference as held, with the namespace resolved; the
		// Owner is the cached object with its store's kind.
		links := w.g.Owners(w.nodeOf(t, graphPodGVK, w.mirror))
		want := OwnerRef{APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: w.node.UID}
		if len(links) != 1 || links[0].Ref != want {
			t.Fatalf("Owners(mirror) = %+v, want a link to %+v", links, want)
		}
		if o := links[0].Owner; o.Object != w.node || o.GVK != graphNodeGVK || o.Namespaced {
			t.Errorf("owner = %+v, want the cached node", o)
		}
		links = w.g.Owners(w.nodeOf(t, graphPodGVK, w.static))
		want = OwnerRef{APIVersion: "v1", Kind: "Node", Name: "worker-9", UID: w.goneNode.UID}
		if len(links) != 1 || links[0].Ref != want || links[0].Owner != nil {
			t.Errorf("Owners(static) = %+v, want a missing link to %+v", links, want)
		}
		links = w.g.Owners(w.nodeOf(t, graphPodGVK, w.widgetPod))
		want = OwnerRef{APIVersion: "widgets.example.com/v1", Kind: "Widget", Namespace: "shop", Name: "w", UID: w.widget.UID}
		if len(links) != 1 || links[0].Ref != want {
			t.Errorf("Owners(widget-pod) = %+v, want a link to %+v", links, want)
		}
	})
	w.assertUnchanged(t)
}

// fmtOrphan renders an orphan with its references.
func fmtOrphan(o Orphan) string {
	refs := func(rs []OwnerRef) string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s %s %s/%s %s", r.APIVersion, r.Kind, r.Namespace, r.Name, r.UID))
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	s := nodeName(o.Node)
	if len(o.Missing) > 0 {
		s += " missing=" + refs(o.Missing)
	}
	if len(o.Orphaning) > 0 {
		s += " orphaning=" + refs(o.Orphaning)
	}
	return s
}

func TestGraphOrphans(t *testing.T) {
	w := newGraphWorld(t)
	orphans, unknown, err := w.g.Orphans()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range orphans {
		got = append(got, fmtOrphan(o))
	}
	// One entry per object, its references merged and sorted; sorted like
	// SortNodes. A missing Node has no namespace; the foreground deletion of
	// Deployment "going" orphans nothing.
	assertLines(t, "Orphans", got, []string{
		"Pod kube-system/kube-proxy-worker-9 missing=[v1 Node /worker-9 node--worker-9]",
		"Pod shop/multi missing=[v1 ConfigMap shop/gone-cm configmap-shop-gone-cm, apps/v1 ReplicaSet shop/gone replicaset-shop-gone]" +
			" orphaning=[apps/v1 Deployment shop/leaving deployment-shop-leaving]",
		"Pod shop/orphan-x missing=[apps/v1 ReplicaSet shop/gone replicaset-shop-gone]",
		"ReplicaSet.apps shop/leaving-6b8 orphaning=[apps/v1 Deployment shop/leaving deployment-shop-leaving]",
		"ReplicaSet.apps shop/orphan missing=[apps/v1 Deployment shop/gone deployment-shop-gone]",
	})
	// References to kinds the graph does not hold cannot be judged.
	wantUnknown := []schema.GroupKind{{Group: "ops.io", Kind: "Operator"}, {Group: "widgets.example.com", Kind: "Widget"}}
	if !slices.Equal(unknown, wantUnknown) {
		t.Errorf("unknown kinds = %v, want %v", unknown, wantUnknown)
	}
	// Orphans are the cached objects with their store's kind.
	for _, o := range orphans {
		if o.Object.GetName() == "orphan-x" && (o.Object != w.orphanPod || o.GVK != graphPodGVK || !o.Namespaced) {
			t.Errorf("orphan %s = %+v, want the cached pod", nodeName(o.Node), o.Node)
		}
	}
	w.assertUnchanged(t)

	t.Run("none", func(t *testing.T) {
		g, _ := chainGraph(t, 3)
		orphans, unknown, err := g.Orphans()
		if err != nil || len(orphans) != 0 || len(unknown) != 0 {
			t.Errorf("Orphans() = %v, %v, %v; want none", orphans, unknown, err)
		}
		orphans, unknown, err = NewGraph(nil).Orphans()
		if err != nil || len(orphans) != 0 || len(unknown) != 0 {
			t.Errorf("empty graph Orphans() = %v, %v, %v; want none", orphans, unknown, err)
		}
	})

	t.Run("owner deleted later", func(t *testing.T) {
		// The graph reads its stores at each call: once the Deployment is
		// gone from its informer, its ReplicaSets are orphans.
		s := w.stores[graphDeployGVK.GroupKind()]
		if err := s.Delete(w.deploy); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Add(w.deploy) })
		orphans, _, err := w.g.Orphans()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, o := range orphans {
			if slices.ContainsFunc(o.Missing, func(r OwnerRef) bool { return r.UID == w.deploy.UID }) {
				names = append(names, nodeName(o.Node))
			}
		}
		assertLines(t, "orphans of the deleted Deployment", names, []string{
			"ConfigMap shop/shared", "ReplicaSet.apps shop/web-4c3", "ReplicaSet.apps shop/web-5d4",
		})
	})
}

func TestGraphOwnerKinds(t *testing.T) {
	w := newGraphWorld(t)
	want := []schema.GroupKind{
		{Kind: "ConfigMap"},
		{Group: "apps", Kind: "Deployment"},
		{Kind: "Node"},
		{Group: "ops.io", Kind: "Operator"},
		{Group: "apps", Kind: "ReplicaSet"},
		{Group: "example.com", Kind: "Rollout"},
		{Group: "widgets.example.com", Kind: "Widget"},
	}
	if got := w.g.OwnerKinds(); !slices.Equal(got, want) {
		t.Errorf("OwnerKinds() = %v, want %v", got, want)
	}
}

// TestGraphMissingIndexes checks that a store built without GraphIndexers is
// an error, not an empty answer, where the graph can tell.
func TestGraphMissingIndexes(t *testing.T) {
	bare := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	rs := owner("apps/v1", "ReplicaSet", "shop", "web")
	if err := bare.Add(rs); err != nil {
		t.Fatal(err)
	}
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, GraphIndexers())
	pod := newPod("shop", "web-1", ownedBy(ctrlOf(rs)))
	if err := pods.Add(pod); err != nil {
		t.Fatal(err)
	}
	g := NewGraph([]GraphStore{
		{GVK: graphPodGVK, Namespaced: true, Indexer: pods},
		{GVK: graphRSGVK, Namespaced: true, Indexer: bare},
	})
	if _, err := g.Children(rs.UID); err == nil || !strings.Contains(err.Error(), "ReplicaSet") {
		t.Errorf("Children error = %v, want one naming ReplicaSet", err)
	}
	if _, err := g.Descendants(Node{GVK: graphRSGVK, Namespaced: true, Object: rs}); err == nil {
		t.Error("Descendants: no error")
	}
	if _, _, err := g.ByUID(graphRSGVK.GroupKind(), rs.UID); err == nil {
		t.Error("ByUID: no error")
	}
	// Owners has no error to return: an owner that cannot be looked up is
	// unknown, not missing.
	links := g.Owners(Node{GVK: graphPodGVK, Namespaced: true, Object: pod})
	assertLines(t, "Owners", fmtLinks(t, links), []string{"ReplicaSet shop/web controller unknown"})
}

// TestGraphConcurrentReads runs queries while the stores change, for the race
// detector: the graph keeps no state of its own between calls.
func TestGraphConcurrentReads(t *testing.T) {
	w := newGraphWorld(t)
	rs := w.stores[graphRSGVK.GroupKind()]
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 200 {
			o := owner("apps/v1", "ReplicaSet", "shop", fmt.Sprintf("churn-%d", i%5), ctrlOf(w.deploy))
			_ = rs.Add(o)
			_ = rs.Delete(o)
		}
	}()
	root := w.nodeOf(t, graphDeployGVK, w.deploy)
	for range 50 {
		if _, err := w.g.Descendants(root); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.g.Orphans(); err != nil {
			t.Fatal(err)
		}
		_ = w.g.Owners(w.nodeOf(t, graphPodGVK, w.pod5a))
	}
	<-done
	w.assertUnchanged(t)
}

// TestGraphOwnerInAnotherNamespace: a namespaced owner with the right UID in
// another namespace does not own the object, as the garbage collector sees it;
// a store without indexes makes Orphans fail rather than report nothing.
func TestGraphOwnerInAnotherNamespace(t *testing.T) {
	rss := cache.NewIndexer(cache.MetaNamespaceKeyFunc, GraphIndexers())
	rs := owner("apps/v1", "ReplicaSet", "shop", "web")
	if err := rss.Add(rs); err != nil {
		t.Fatal(err)
	}
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, GraphIndexers())
	inShop := newPod("shop", "web-1", ownedBy(ctrlOf(rs)))
	elsewhere := newPod("ops", "web-1", ownedBy(ctrlOf(rs)))
	for _, p := range []*corev1.Pod{inShop, elsewhere} {
		if err := pods.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	g := NewGraph([]GraphStore{
		{GVK: graphPodGVK, Namespaced: true, Indexer: pods},
		{GVK: graphRSGVK, Namespaced: true, Indexer: rss},
	})
	orphans, _, err := g.Orphans()
	if err != nil {
		t.Fatal(err)
	}
	if len(orphans) != 1 || orphans[0].Object.GetNamespace() != "ops" || len(orphans[0].Missing) != 1 || orphans[0].Missing[0].Namespace != "ops" {
		t.Errorf("orphans = %+v, want the ops pod only, missing ReplicaSet ops/web", orphans)
	}
	links := g.Owners(Node{GVK: graphPodGVK, Namespaced: true, Object: elsewhere})
	if len(links) != 1 || !links[0].Missing || links[0].Owner != nil {
		t.Errorf("owners of ops/web-1 = %+v, want one missing link", links)
	}
	links = g.Owners(Node{GVK: graphPodGVK, Namespaced: true, Object: inShop})
	if len(links) != 1 || links[0].Owner == nil {
		t.Errorf("owners of shop/web-1 = %+v, want the ReplicaSet", links)
	}

	bare := NewGraph([]GraphStore{
		{GVK: graphPodGVK, Namespaced: true, Indexer: pods},
		{GVK: graphRSGVK, Namespaced: true, Indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})},
	})
	if _, _, err := bare.Orphans(); err == nil {
		t.Error("Orphans over a store without UID index: no error")
	}
}
