package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The checks of the controller-driven suite. Each runs one kubectl idx command through
// steady, so the truth it is compared with is what `kubectl get -o json` said at the same
// moment, and computes that truth from the objects alone, never from what a scenario meant to
// create: ownerReferences followed by UID, selectors evaluated with
// k8s.io/apimachinery/pkg/labels, references read from pod specs and templates.

// ctrlNS is a namespace of the controller-driven control plane ("" for all of them), with the
// types a read of everything in it lists.
type ctrlNS struct {
	c    *ctrlCluster
	name string
	// kinds are every namespaced type that can be listed but Events, comma-separated.
	kinds string
}

// scope is the namespace as kubectl and kubectl idx take it: -n NAME, or -A.
func (n *ctrlNS) scope() []string {
	if n.name == "" {
		return []string{"-A"}
	}
	return []string{"-n", n.name}
}

// world reads everything in the namespace but Events, and the Nodes, which own Leases and
// mirror pods there.
func (n *ctrlNS) world(t *testing.T) workloads {
	t.Helper()
	kinds := n.kinds
	if n.name == "" {
		// Across namespaces, other tests' custom resources come and go
		// (TestWhy's WhyApps own Deployments): every type served now.
		kinds = n.c.listableKinds(t)
	}
	return n.c.read(t, kinds+",nodes", n.scope()...)
}

// read reads the objects of kinds in the namespace.
func (n *ctrlNS) read(t *testing.T, kinds string) workloads {
	t.Helper()
	return n.c.read(t, kinds, n.scope()...)
}

// command is kubectl idx VERB OBJECT in the namespace, with -o json.
func (n *ctrlNS) command(verb, object string, more ...string) []string {
	return append(append(append([]string{verb, object}, n.scope()...), more...), "-o", "json")
}

// objectList is a v1 List as kubectl idx prints it for a type, selects, selected-by and events.
type objectList struct {
	APIVersion string                       `json:"apiVersion"`
	Kind       string                       `json:"kind"`
	Items      []*unstructured.Unstructured `json:"items"`
}

// ofKinds returns the objects whose kind is one of kinds.
func (w workloads) ofKinds(kinds ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range w.items {
		if slices.Contains(kinds, o.GetKind()) {
			out = append(out, o)
		}
	}
	return out
}

// refs renders objects as "Kind namespace/name uid", sorted, to compare sets of objects.
func refs(objs []*unstructured.Unstructured) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, fmt.Sprintf("%s %s %s", o.GetKind(), nsName(o), o.GetUID()))
	}
	slices.Sort(out)
	return out
}

// objectPath is how a relation command names an object: the kind in lower case and the
// name, which kubectl resolves as it resolves `kubectl get widget/w1`.
func objectPath(kind, name string) string {
	return strings.ToLower(kind) + "/" + name
}

// mustGet returns the object of kind named name in w, failing t if there is none.
func mustGet(t *testing.T, w workloads, kind, name string) *unstructured.Unstructured {
	t.Helper()
	o := w.get(kind, name)
	if o == nil {
		t.Fatalf("the truth has no %s %s", kind, name)
	}
	return o
}

// checkList: `kubectl idx RESOURCES -o json` prints the List `kubectl get RESOURCES -o json`
// prints at the same moment: the same objects, by UID, at the same resourceVersions, in the
// same order, field for field but managedFields. scope nil means the namespace.
func (n *ctrlNS) checkList(t *testing.T, resources string, scope ...string) {
	t.Helper()
	if scope == nil {
		scope = n.scope()
	}
	var got map[string]any
	w := n.c.answer(t, &got, func() workloads { return n.c.read(t, resources, scope...) }, nil,
		append(append([]string{resources}, scope...), "-o", "json")...)
	if len(w.items) == 0 {
		t.Fatalf("scenario problem: kubectl get %s %s finds nothing", resources, strings.Join(scope, " "))
	}
	gotVersions := map[string]string{}
	items, _ := got["items"].([]any)
	for _, it := range items {
		u := unstructured.Unstructured{Object: it.(map[string]any)}
		gotVersions[string(u.GetUID())] = u.GetResourceVersion()
	}
	wantVersions := map[string]string{}
	for _, o := range w.items {
		wantVersions[string(o.GetUID())] = o.GetResourceVersion()
	}
	// The truth as kubectl printed it, decoded as kubectl idx's output is (numbers as float64).
	data, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": w.items})
	if err != nil {
		t.Fatal(err)
	}
	want := decodeDoc(t, "kubectl get "+resources, string(data), false)
	if diff := cmp.Diff(wantVersions, gotVersions); diff != "" {
		t.Errorf("kubectl idx %s: UIDs and resourceVersions differ (-kubectl get +kubectl idx):\n%s", resources, diff)
	}
	compareLists(t, got, want)
}

// checkTable: `kubectl idx RESOURCES` prints the tables `kubectl get RESOURCES` prints at the
// same moment, cell for cell but the ages and durations, which may be a second apart.
func (n *ctrlNS) checkTable(t *testing.T, resources string) {
	t.Helper()
	var human string
	read := func() workloads {
		human = n.c.mustKubectl(t, "", append([]string{"get", resources}, n.scope()...)...).Stdout
		return n.read(t, resources)
	}
	_, res := n.c.steady(t, read, nil, append([]string{resources}, n.scope()...)...)
	if res.Stderr != "" {
		t.Errorf("kubectl idx %s: stderr not empty:\n%s", resources, res.Stderr)
	}
	got, want := parseTables(res.Stdout), parseTables(human)
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("kubectl idx %s prints %d tables, kubectl get %d:\n%s\n%s", resources, len(got), len(want), res.Stdout, human)
	}
	for i := range want {
		times := []string{"AGE", "DURATION", "LAST SCHEDULE"}
		if diff := cmp.Diff(maskColumns(t, "kubectl get", want[i], times...), maskColumns(t, "kubectl idx", got[i], times...), cmp.AllowUnexported(table{})); diff != "" {
			t.Errorf("kubectl idx %s: table %d differs (-kubectl get +kubectl idx):\n%s", resources, i, diff)
		}
	}
}

// checkByOwner: `kubectl idx KINDS --by-owner` puts each object under the top of its chain of
// controller references, walked by UID through everything in the namespace read at the same
// moment, and counts each group's pods as their status says. kinds are kinds as kubectl takes
// them (Pod,ReplicaSet).
func (n *ctrlNS) checkByOwner(t *testing.T, kinds string) groupList {
	t.Helper()
	var doc groupList
	w := n.c.answer(t, &doc, func() workloads { return n.world(t) }, workloads.ownershipAndPods,
		append(append([]string{kinds}, n.scope()...), "--by-owner", "-o", "json")...)
	members := w.ofKinds(strings.Split(kinds, ",")...)
	checkOwnerGroups(t, doc, members, w.owners())
	checkPodSummaries(t, doc, w)
	return doc
}

// checkGroups: a grouping by key (--by-label, --by-namespace, --by JSONPATH) of the objects
// read: the groups key makes of them, sorted, <none> last, members in typeOrder, then by
// namespace and name.
func (c *ctrlCluster) checkGroups(t *testing.T, read func() workloads, typeOrder []string, key func(*unstructured.Unstructured) (string, bool), args ...string) {
	t.Helper()
	var doc groupList
	w := c.answer(t, &doc, read, nil, append(args, "-o", "json")...)
	if len(w.items) == 0 {
		t.Fatalf("scenario problem: nothing to group for %s", strings.Join(args, " "))
	}
	names, members := keyedTruth(w.items, typeOrder, key)
	if got := groupNames(doc); !slices.Equal(got, names) {
		t.Errorf("kubectl idx %s: groups %q, want %q", strings.Join(args, " "), got, names)
	}
	if diff := cmp.Diff(members, docMembers(doc)); diff != "" {
		t.Errorf("kubectl idx %s: members differ (-kubectl get +kubectl idx):\n%s", strings.Join(args, " "), diff)
	}
	checkPodSummaries(t, doc, w)
}

// checkByNode: `kubectl idx pods --by-node` lists every node, its pods (by spec.nodeName) and
// what the README says of its state and requests, then the unscheduled pods under <none>.
func (n *ctrlNS) checkByNode(t *testing.T) {
	t.Helper()
	var doc groupList
	w := n.c.answer(t, &doc, func() workloads { return n.read(t, "nodes,pods") }, nil,
		append(append([]string{"pods"}, n.scope()...), "--by-node", "-o", "json")...)
	pods := typedAll[corev1.Pod](t, w.ofKind("Pod"))
	names, members := keyedTruth(w.ofKind("Pod"), []string{"Pod"}, func(u *unstructured.Unstructured) (string, bool) {
		node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
		return node, node != ""
	})
	for _, u := range w.ofKind("Node") {
		if _, ok := members[u.GetName()]; !ok {
			members[u.GetName()] = []string{}
			names = append(names, u.GetName())
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		// <none> last, nodes by name.
		return strings.Compare(strings.Replace(a, "<none>", "\xff", 1), strings.Replace(b, "<none>", "\xff", 1))
	})
	if got := groupNames(doc); !slices.Equal(got, names) {
		t.Errorf("--by-node: groups %q, want %q", got, names)
	}
	if diff := cmp.Diff(members, docMembers(doc)); diff != "" {
		t.Errorf("--by-node: members differ (-kubectl get +kubectl idx):\n%s", diff)
	}
	checkPodSummaries(t, doc, w)
	for _, g := range doc.Groups {
		if g.Key.None {
			continue
		}
		u := w.get("Node", g.Name)
		if u == nil || g.Summary.Node == nil {
			t.Errorf("--by-node: group %s is not a node with a node summary", g.Name)
			continue
		}
		got := *g.Summary.Node
		got.Requests.CPU, got.Requests.Memory, got.Allocatable.CPU, got.Allocatable.Memory = "", "", "", ""
		if diff := cmp.Diff(nodeTruth(t, typed[corev1.Node](t, u), pods, false), got); diff != "" {
			t.Errorf("--by-node: node %s summary differs (-kubectl get +kubectl idx):\n%s", g.Name, diff)
		}
	}
}

// treeTruth is root and everything under it as a Tree document holds it (without READY,
// STATUS and creationTimestamp): the objects whose ownerReferences name root's UID, or the
// UID of an object under it (a namespaced owner owns only in its own namespace), each level
// sorted by kind, namespace and name, an object owned twice under each owner.
func treeTruth(w workloads, root *unstructured.Unstructured) *treeItem {
	children := map[types.UID][]*unstructured.Unstructured{}
	for _, o := range w.items {
		seen := map[types.UID]bool{}
		for _, r := range o.GetOwnerReferences() {
			if !seen[r.UID] {
				seen[r.UID] = true
				children[r.UID] = append(children[r.UID], o)
			}
		}
	}
	onPath := map[types.UID]bool{}
	var build func(o *unstructured.Unstructured) *treeItem
	build = func(o *unstructured.Unstructured) *treeItem {
		it := itemOf(o)
		if onPath[o.GetUID()] {
			it.Cycle = true
			return it
		}
		onPath[o.GetUID()] = true
		defer delete(onPath, o.GetUID())
		var kids []*unstructured.Unstructured
		for _, k := range children[o.GetUID()] {
			if o.GetNamespace() == "" || k.GetNamespace() == o.GetNamespace() {
				kids = append(kids, k)
			}
		}
		slices.SortFunc(kids, func(a, b *unstructured.Unstructured) int {
			return strings.Compare(a.GetKind()+" "+a.GroupVersionKind().Group+" "+nsName(a), b.GetKind()+" "+b.GroupVersionKind().Group+" "+nsName(b))
		})
		for _, k := range kids {
			it.Children = append(it.Children, build(k))
		}
		return it
	}
	return build(root)
}

// itemOf is an object as a tree document names it.
func itemOf(o *unstructured.Unstructured) *treeItem {
	return &treeItem{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID())}
}

// flattenTree lists the items of a tree, root first.
func flattenTree(it *treeItem) []*treeItem {
	out := []*treeItem{it}
	for _, c := range append(slices.Clone(it.Children), it.Owners...) {
		out = append(out, flattenTree(c)...)
	}
	return out
}

// settleItems checks what a tree document says of each object found (a creationTimestamp,
// and for pods READY as kubectl counts ready containers), then blanks those fields, which the
// truth does not hold, so the documents compare as trees of UIDs.
func settleItems(t *testing.T, what string, root *treeItem, w workloads) {
	t.Helper()
	idx := w.owners()
	for _, it := range flattenTree(root) {
		if !it.Missing && !it.Unknown && it.CreationTimestamp == "" {
			t.Errorf("%s: %s/%s has no creationTimestamp", what, it.Kind, it.Name)
		}
		if u := idx.byUID[types.UID(it.UID)]; u != nil && it.Kind == "Pod" {
			p := typed[corev1.Pod](t, u)
			ready := 0
			for _, cs := range p.Status.ContainerStatuses {
				if cs.Ready {
					ready++
				}
			}
			if want := fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers)); it.Ready != want {
				t.Errorf("%s: pod %s READY %q, want %q", what, it.Name, it.Ready, want)
			}
		}
		it.CreationTimestamp, it.Ready, it.Status = "", "", ""
	}
}

// checkTree: `kubectl idx tree KIND/NAME` is the tree of UIDs under the object by
// ownerReferences, across every type in the namespace. It returns the truth.
func (n *ctrlNS) checkTree(t *testing.T, kind, name string) *treeItem {
	t.Helper()
	return n.checkTreeDoc(t, "tree", "Tree", kind, name, treeTruth)
}

// checkTreeDoc runs `kubectl idx VERB KIND/NAME -o json`, which prints a tree document of
// docKind, and compares it with what truth makes of the object and the namespace read at the
// same moment. It returns the truth.
func (n *ctrlNS) checkTreeDoc(t *testing.T, verb, docKind, kind, name string, truth func(workloads, *unstructured.Unstructured) *treeItem) *treeItem {
	t.Helper()
	var doc treeDoc
	args := n.command(verb, objectPath(kind, name))
	w := n.c.answer(t, &doc, func() workloads { return n.world(t) }, workloads.ownershipAndPods, args...)
	want := truth(w, mustGet(t, w, kind, name))
	if doc.Kind != docKind || doc.Root == nil || len(doc.Warnings) != 0 {
		t.Fatalf("kubectl idx %s: document %s, warnings %q", strings.Join(args, " "), doc.Kind, doc.Warnings)
	}
	settleItems(t, verb, doc.Root, w)
	if diff := cmp.Diff(want, doc.Root); diff != "" {
		t.Errorf("kubectl idx %s differs (-kubectl get +kubectl idx):\n%s", strings.Join(args, " "), diff)
	}
	return want
}

// ownersTruth is what an OwnerTree document holds above o: each of its ownerReferences in
// order, controller or not, to the owner found by UID (in o's namespace when namespaced) with
// that owner's own owners, or marked missing.
func ownersTruth(idx ownerIndex, o *unstructured.Unstructured, onPath map[types.UID]bool) []*treeItem {
	var out []*treeItem
	for _, r := range o.GetOwnerReferences() {
		owner := idx.byUID[r.UID]
		if owner != nil && owner.GetNamespace() != "" && owner.GetNamespace() != o.GetNamespace() {
			owner = nil
		}
		var it *treeItem
		switch {
		case owner == nil:
			ns := o.GetNamespace()
			if idx.clusterScoped[r.Kind] {
				ns = ""
			}
			it = &treeItem{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: ns, Name: r.Name, UID: string(r.UID), Missing: true}
		case onPath[r.UID]:
			it = itemOf(owner)
			it.Cycle = true
		default:
			it = itemOf(owner)
			onPath[r.UID] = true
			it.Owners = ownersTruth(idx, owner, onPath)
			delete(onPath, r.UID)
		}
		it.Controller = r.Controller != nil && *r.Controller
		out = append(out, it)
	}
	return out
}

// checkOwners: `kubectl idx owners KIND/NAME` is the chain of every ownerReference up from the
// object, by UID. It returns the truth.
func (n *ctrlNS) checkOwners(t *testing.T, kind, name string) *treeItem {
	t.Helper()
	return n.checkTreeDoc(t, "owners", "OwnerTree", kind, name, func(w workloads, o *unstructured.Unstructured) *treeItem {
		it := itemOf(o)
		it.Owners = ownersTruth(w.owners(), o, map[types.UID]bool{o.GetUID(): true})
		return it
	})
}

// selectorKinds are the kinds with a pod selector, as the README lists them for selects.
var selectorKinds = []string{"Service", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController", "PodDisruptionBudget", "NetworkPolicy"}

// selectorOf is the pod selector of o, one of selectorKinds, with the API's meaning: a
// Service or ReplicationController without a selector selects nothing; a nil LabelSelector
// selects nothing and an empty one everything (a PodDisruptionBudget's in policy/v1, any
// NetworkPolicy's podSelector).
func selectorOf(t *testing.T, o *unstructured.Unstructured) labels.Selector {
	t.Helper()
	data, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	var spec struct {
		Spec struct {
			Selector    json.RawMessage       `json:"selector"`
			PodSelector *metav1.LabelSelector `json:"podSelector"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), nsName(o), err)
	}
	var sel *metav1.LabelSelector
	switch o.GetKind() {
	case "Service", "ReplicationController":
		var set map[string]string
		if len(spec.Spec.Selector) > 0 {
			if err := json.Unmarshal(spec.Spec.Selector, &set); err != nil {
				t.Fatalf("%s %s: selector: %v", o.GetKind(), nsName(o), err)
			}
		}
		if len(set) == 0 {
			return labels.Nothing()
		}
		return labels.SelectorFromSet(set)
	case "NetworkPolicy":
		sel = spec.Spec.PodSelector
		if sel == nil {
			sel = &metav1.LabelSelector{}
		}
	default:
		if len(spec.Spec.Selector) > 0 && string(spec.Spec.Selector) != "null" {
			sel = &metav1.LabelSelector{}
			if err := json.Unmarshal(spec.Spec.Selector, sel); err != nil {
				t.Fatalf("%s %s: selector: %v", o.GetKind(), nsName(o), err)
			}
		}
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("%s %s: selector: %v", o.GetKind(), nsName(o), err)
	}
	return s
}

// checkSelects: `kubectl idx selects KIND/NAME` lists the pods of the namespace the object's
// selector matches.
func (n *ctrlNS) checkSelects(t *testing.T, kind, name string) {
	t.Helper()
	var list objectList
	args := n.command("selects", objectPath(kind, name))
	w := n.c.answer(t, &list, func() workloads { return n.world(t) }, nil, args...)
	sel := selectorOf(t, mustGet(t, w, kind, name))
	var want []*unstructured.Unstructured
	for _, p := range w.ofKind("Pod") {
		if sel.Matches(labels.Set(p.GetLabels())) {
			want = append(want, p)
		}
	}
	if len(want) == 0 {
		t.Errorf("scenario problem: %s %s selects no pod", kind, name)
	}
	if list.Kind != "List" {
		t.Errorf("kubectl idx %s: document kind %q, want List", strings.Join(args, " "), list.Kind)
	}
	if diff := cmp.Diff(refs(want), refs(list.Items)); diff != "" {
		t.Errorf("kubectl idx %s (selector %s) differs (-kubectl get +kubectl idx):\n%s", strings.Join(args, " "), sel, diff)
	}
}

// checkSelectedBy: `kubectl idx selected-by pod/NAME` lists every object of the namespace with
// a pod selector that matches the pod's labels.
func (n *ctrlNS) checkSelectedBy(t *testing.T, pod string) {
	t.Helper()
	var list objectList
	args := n.command("selected-by", "pod/"+pod)
	w := n.c.answer(t, &list, func() workloads { return n.world(t) }, nil, args...)
	set := labels.Set(mustGet(t, w, "Pod", pod).GetLabels())
	var want []*unstructured.Unstructured
	for _, o := range w.ofKinds(selectorKinds...) {
		if selectorOf(t, o).Matches(set) {
			want = append(want, o)
		}
	}
	if diff := cmp.Diff(refs(want), refs(list.Items)); diff != "" {
		t.Errorf("kubectl idx %s differs (-kubectl get +kubectl idx):\n%s", strings.Join(args, " "), diff)
	}
}

// podSpecPaths are where the objects with a pod spec or pod template keep it.
var podSpecPaths = map[string][]string{
	"Pod":                   {"spec"},
	"Deployment":            {"spec", "template", "spec"},
	"ReplicaSet":            {"spec", "template", "spec"},
	"StatefulSet":           {"spec", "template", "spec"},
	"DaemonSet":             {"spec", "template", "spec"},
	"Job":                   {"spec", "template", "spec"},
	"ReplicationController": {"spec", "template", "spec"},
	"CronJob":               {"spec", "jobTemplate", "spec", "template", "spec"},
	"PodTemplate":           {"template", "spec"},
}

// refKey names an object a pod spec refers to.
type refKey struct{ kind, name string }

// podRefs returns every object spec refers to, each with where, in the README's words (volume
// V, projected volume V, env C/VAR, envFrom C, initContainer ..., imagePullSecrets,
// serviceAccountName), sorted, and whether every one of those references is optional.
func podRefs(spec *corev1.PodSpec) map[refKey]*relationItem {
	out := map[refKey]*relationItem{}
	add := func(kind, name, where string, opt *bool) {
		if name == "" {
			return
		}
		it := out[refKey{kind, name}]
		if it == nil {
			it = &relationItem{APIVersion: "v1", Kind: kind, Name: name, Optional: true}
			out[refKey{kind, name}] = it
		}
		it.Via = append(it.Via, where)
		it.Optional = it.Optional && opt != nil && *opt
	}
	for _, v := range spec.Volumes {
		if v.ConfigMap != nil {
			add("ConfigMap", v.ConfigMap.Name, "volume "+v.Name, v.ConfigMap.Optional)
		}
		if v.Secret != nil {
			add("Secret", v.Secret.SecretName, "volume "+v.Name, v.Secret.Optional)
		}
		if v.PersistentVolumeClaim != nil {
			add("PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName, "volume "+v.Name, nil)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					add("ConfigMap", src.ConfigMap.Name, "projected volume "+v.Name, src.ConfigMap.Optional)
				}
				if src.Secret != nil {
					add("Secret", src.Secret.Name, "projected volume "+v.Name, src.Secret.Optional)
				}
			}
		}
	}
	containers := func(prefix string, cs []corev1.Container) {
		for _, c := range cs {
			for _, e := range c.Env {
				if from := e.ValueFrom; from != nil && from.ConfigMapKeyRef != nil {
					add("ConfigMap", from.ConfigMapKeyRef.Name, prefix+"env "+c.Name+"/"+e.Name, from.ConfigMapKeyRef.Optional)
				} else if from != nil && from.SecretKeyRef != nil {
					add("Secret", from.SecretKeyRef.Name, prefix+"env "+c.Name+"/"+e.Name, from.SecretKeyRef.Optional)
				}
			}
			for _, e := range c.EnvFrom {
				if e.ConfigMapRef != nil {
					add("ConfigMap", e.ConfigMapRef.Name, prefix+"envFrom "+c.Name, e.ConfigMapRef.Optional)
				}
				if e.SecretRef != nil {
					add("Secret", e.SecretRef.Name, prefix+"envFrom "+c.Name, e.SecretRef.Optional)
				}
			}
		}
	}
	containers("", spec.Containers)
	containers("initContainer ", spec.InitContainers)
	for _, s := range spec.ImagePullSecrets {
		add("Secret", s.Name, "imagePullSecrets", nil)
	}
	switch {
	case spec.ServiceAccountName != "":
		add("ServiceAccount", spec.ServiceAccountName, "serviceAccountName", nil)
	case spec.DeprecatedServiceAccount != "":
		add("ServiceAccount", spec.DeprecatedServiceAccount, "serviceAccount", nil)
	default:
		add("ServiceAccount", "default", "serviceAccountName (default)", nil)
	}
	for _, it := range out {
		slices.Sort(it.Via)
	}
	return out
}

// podSpec returns the pod spec or pod template spec of o, or nil if its kind has none.
func podSpec(t *testing.T, o *unstructured.Unstructured) *corev1.PodSpec {
	t.Helper()
	path, ok := podSpecPaths[o.GetKind()]
	if !ok {
		return nil
	}
	m, found, err := unstructured.NestedMap(o.Object, path...)
	if !found || err != nil {
		return nil
	}
	spec := &corev1.PodSpec{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, spec); err != nil {
		t.Fatalf("pod spec of %s %s: %v", o.GetKind(), nsName(o), err)
	}
	return spec
}

// checkUses: `kubectl idx uses KIND/NAME`. For a ConfigMap, Secret, PersistentVolumeClaim or
// ServiceAccount, the pods and pod templates of the namespace whose specs refer to it, and
// how; one that is gone while something still refers to it is a warning. For an object with
// a pod spec, what that spec refers to, and whether each exists. It returns the truth.
func (n *ctrlNS) checkUses(t *testing.T, kind, name string) map[string]*relationItem {
	t.Helper()
	args := n.command("uses", objectPath(kind, name))
	w, res := n.c.steady(t, func() workloads { return n.world(t) }, nil, args...)
	var doc relationList
	mustDecode(t, "kubectl idx "+strings.Join(args, " "), res.Stdout, &doc)
	subject := w.get(kind, name)
	want := map[string]*relationItem{}
	direction := "users"
	if _, hasSpec := podSpecPaths[kind]; hasSpec {
		direction = "uses"
		for k, it := range podRefs(podSpec(t, mustGet(t, w, kind, name))) {
			it.Namespace = n.name
			it.Exists = ptr.To(w.get(k.kind, k.name) != nil)
			want[k.kind+"/"+k.name] = it
		}
	} else {
		for _, o := range w.ofKinds(slices.Collect(maps.Keys(podSpecPaths))...) {
			if spec := podSpec(t, o); spec != nil {
				if r := podRefs(spec)[refKey{kind, name}]; r != nil {
					want[o.GetKind()+"/"+o.GetName()] = &relationItem{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(),
						UID: string(o.GetUID()), Via: r.Via, Optional: r.Optional}
				}
			}
		}
	}
	var wantStderr []string
	if subject == nil && len(want) > 0 {
		wantStderr = []string{"warning: " + objectPath(kind, name) + " does not exist, yet the objects listed refer to it"}
	}
	if got := stderrLines(res.Stderr); !slices.Equal(got, wantStderr) {
		t.Errorf("kubectl idx %s: stderr %q, want %q", strings.Join(args, " "), got, wantStderr)
	}
	if s := doc.Subject; doc.Direction != direction || s == nil || s.Kind != kind || s.Name != name || s.Namespace != n.name ||
		direction == "users" && (s.Exists == nil || *s.Exists != (subject != nil)) || subject != nil && s.UID != string(subject.GetUID()) {
		t.Errorf("kubectl idx %s: direction %q, subject %+v; want %s of %s %s/%s, existing: %v", strings.Join(args, " "), doc.Direction, s, direction, kind, n.name, name, subject != nil)
	}
	got := map[string]*relationItem{}
	for _, it := range doc.Items {
		if direction == "users" && it.CreationTimestamp == "" {
			t.Errorf("kubectl idx %s: %s/%s has no creationTimestamp", strings.Join(args, " "), it.Kind, it.Name)
		}
		it.CreationTimestamp = ""
		got[it.Kind+"/"+it.Name] = it
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubectl idx %s differs (-kubectl get +kubectl idx):\n%s", strings.Join(args, " "), diff)
	}
	return want
}

// orphansTruth is what an OrphanList holds about the objects of w in namespace ns ("" for
// every namespace): each object with an ownerReference to a UID that no object of w has (a
// namespaced owner counts only in the object's namespace), and each whose owner is being
// deleted with the orphan finalizer.
func orphansTruth(w workloads, ns string) map[string]*relationItem {
	idx := w.owners()
	out := map[string]*relationItem{}
	for _, o := range w.items {
		if ns != "" && o.GetNamespace() != ns {
			continue
		}
		it := &relationItem{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName(), UID: string(o.GetUID())}
		for _, r := range o.GetOwnerReferences() {
			owner := idx.byUID[r.UID]
			valid := owner != nil && (owner.GetNamespace() == "" || owner.GetNamespace() == o.GetNamespace())
			ref := ownerRef{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: o.GetNamespace(), Name: r.Name, UID: string(r.UID)}
			if idx.clusterScoped[r.Kind] {
				ref.Namespace = ""
			}
			switch {
			case !valid:
				it.MissingOwners = append(it.MissingOwners, ref)
			case owner.GetDeletionTimestamp() != nil && slices.Contains(owner.GetFinalizers(), metav1.FinalizerOrphanDependents):
				it.OrphaningOwners = append(it.OrphaningOwners, ref)
			}
		}
		if it.MissingOwners != nil || it.OrphaningOwners != nil {
			out[it.UID] = it
		}
	}
	return out
}

// checkOrphans: `kubectl idx orphans` lists the objects of the namespace whose owners are gone
// or orphaning them. Only who owns what must hold still while it runs. It returns the truth.
func (n *ctrlNS) checkOrphans(t *testing.T) map[string]*relationItem {
	t.Helper()
	var doc relationList
	args := append(append([]string{"orphans"}, n.scope()...), "-o", "json")
	w := n.c.answer(t, &doc, func() workloads { return n.world(t) }, workloads.ownership, args...)
	want := orphansTruth(w, n.name)
	if doc.Kind != "OrphanList" || len(doc.Warnings) != 0 {
		t.Errorf("kubectl idx %s: document %s, warnings %q", strings.Join(args, " "), doc.Kind, doc.Warnings)
	}
	got := map[string]*relationItem{}
	for _, it := range doc.Items {
		it.CreationTimestamp = ""
		got[it.UID] = it
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubectl idx %s differs (-kubectl get +kubectl idx):\n%s", strings.Join(args, " "), diff)
	}
	return want
}

// checkEvents: `kubectl idx events KIND/NAME` lists the Events of the namespace whose
// involvedObject is in the object's tree: by UID, or, for an event recorded without one, by
// kind, namespace and name. eventTypes narrow them as --types does. It returns the events of the
// truth as "reason Kind/name".
func (n *ctrlNS) checkEvents(t *testing.T, kind, name string, eventTypes ...string) []string {
	t.Helper()
	relevant := func(w workloads) []*unstructured.Unstructured {
		root := w.get(kind, name)
		if root == nil {
			return nil
		}
		uids, keys := map[string]bool{}, map[string]bool{}
		for _, it := range flattenTree(treeTruth(w, root)) {
			uids[it.UID] = true
			keys[it.Kind+"/"+it.Namespace+"/"+it.Name] = true
		}
		out := []*unstructured.Unstructured{root}
		for _, e := range w.ofKind("Event") {
			ev := typed[corev1.Event](t, e)
			io := ev.InvolvedObject
			in := uids[string(io.UID)] || io.UID == "" && keys[io.Kind+"/"+io.Namespace+"/"+io.Name]
			if in && (len(eventTypes) == 0 || slices.ContainsFunc(eventTypes, func(ty string) bool { return strings.EqualFold(ty, ev.Type) })) {
				out = append(out, e)
			}
		}
		return out
	}
	var more []string
	if len(eventTypes) > 0 {
		more = []string{"--types", strings.Join(eventTypes, ",")}
	}
	args := n.command("events", objectPath(kind, name), more...)
	var list objectList
	w := n.c.answer(t, &list, func() workloads { return n.c.read(t, n.kinds+",nodes,events", n.scope()...) },
		func(w workloads) map[types.UID]string { return workloads{items: relevant(w)}.versions() }, args...)
	mustGet(t, w, kind, name)
	want := relevant(w)[1:]
	if len(want) == 0 {
		t.Fatalf("scenario problem: no events for %s %s", kind, name)
	}
	if diff := cmp.Diff(refs(want), refs(list.Items)); diff != "" {
		t.Errorf("kubectl idx %s differs (-kubectl get +kubectl idx):\n%s", strings.Join(args, " "), diff)
	}
	// Newest last, by the time kubectl events sorts on: the series' last observation, else
	// lastTimestamp, else eventTime.
	var times []time.Time
	for _, e := range list.Items {
		ev := typed[corev1.Event](t, e)
		switch {
		case ev.Series != nil:
			times = append(times, ev.Series.LastObservedTime.Time)
		case !ev.LastTimestamp.IsZero():
			times = append(times, ev.LastTimestamp.Time)
		default:
			times = append(times, ev.EventTime.Time)
		}
	}
	if !slices.IsSortedFunc(times, time.Time.Compare) {
		t.Errorf("kubectl idx %s: events not oldest first: %v", strings.Join(args, " "), times)
	}
	var reasons []string
	for _, e := range want {
		ev := typed[corev1.Event](t, e)
		reasons = append(reasons, ev.Reason+" "+ev.InvolvedObject.Kind+"/"+ev.InvolvedObject.Name)
	}
	slices.Sort(reasons)
	return reasons
}
