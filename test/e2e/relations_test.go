package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/shapes"
	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
)

// The relation tests (tree, owners, selects, selected-by, uses, orphans, events) each build
// what they ask about in a namespace of their own, as the controllers would have left it
// (envtest runs none): owners created first, their real UIDs in the dependents'
// ownerReferences, pod statuses written through UpdateStatus. The top-level tests are not
// parallel, so the parallel tests that compare whole-cluster listings with kubectl run
// after them, and each removes its namespace and everything in it when it ends.

// The documents as the README documents them (internal/testing/shapes).
type (
	treeDoc      = shapes.Tree
	treeItem     = shapes.TreeItem
	relationList = shapes.RelationList
	relationItem = shapes.RelationItem
	ownerRef     = shapes.OwnerRef
)

// relNS is the namespace of one relation test and what the test created in it.
type relNS struct {
	t    *testing.T
	ctx  context.Context
	name string
	// uids maps "Kind/name" of every object created to its UID.
	uids map[string]types.UID
}

// newRelNS creates namespace name, and removes it with everything in it when t ends.
func newRelNS(t *testing.T, name string) *relNS {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{fixtures.LabelKey: fixtures.LabelValue}}}
	if _, err := env.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() { removeNamespace(t, name) })
	return &relNS{t: t, ctx: ctx, name: name, uids: map[string]types.UID{}}
}

// removeNamespace deletes everything in ns and then ns itself. envtest runs neither the
// namespace controller nor the garbage collector, so each collection is deleted, and the
// namespace's own finalizer is cleared as the namespace controller would once it is empty.
func removeNamespace(t *testing.T, ns string) {
	ctx := context.Background()
	lists, err := env.Clientset.Discovery().ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		t.Errorf("cleanup of %s: discovery: %v", ns, err)
		return
	}
	zero := int64(0)
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "deletecollection") {
				continue
			}
			err := env.Dynamic.Resource(gv.WithResource(r.Name)).Namespace(ns).DeleteCollection(ctx,
				metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
			if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
				t.Errorf("cleanup of %s: deleting %s: %v", ns, r.Name, err)
			}
		}
	}
	if err := env.Clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		t.Errorf("cleanup: deleting namespace %s: %v", ns, err)
		return
	}
	got, err := env.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("cleanup: reading namespace %s: %v", ns, err)
		return
	}
	got.Spec.Finalizers = nil
	if _, err := env.Clientset.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: finalizing namespace %s: %v", ns, err)
	}
	if _, err := env.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("cleanup: namespace %s is still there (%v): the tests after this one would see it", ns, err)
	}
}

func (n *relNS) must(what string, err error) {
	n.t.Helper()
	if err != nil {
		n.t.Fatalf("%s in %s: %v", what, n.name, err)
	}
}

func (n *relNS) record(kind string, m metav1.Object) {
	n.uids[kind+"/"+m.GetName()] = m.GetUID()
}

// uid returns the UID of the object created as "Kind/name".
func (n *relNS) uid(kindName string) string {
	n.t.Helper()
	u, ok := n.uids[kindName]
	if !ok {
		n.t.Fatalf("test bug: no %s created in %s", kindName, n.name)
	}
	return string(u)
}

// controllerOf is the controller reference to an object created earlier.
func (n *relNS) controllerOf(apiVersion, kind, name string) metav1.OwnerReference {
	n.t.Helper()
	r := n.ownerRef(apiVersion, kind, name)
	r.Controller, r.BlockOwnerDeletion = ptr.To(true), ptr.To(true)
	return r
}

// ownerRef is a plain (not controller) reference to an object created earlier.
func (n *relNS) ownerRef(apiVersion, kind, name string) metav1.OwnerReference {
	n.t.Helper()
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(n.uid(kind + "/" + name))}
}

// pod creates a Running pod on worker-1 (one "app" container unless mod changes the spec),
// every container ready or none, and returns it as stored.
func (n *relNS) pod(name string, lbls map[string]string, owners []metav1.OwnerReference, ready bool, mod func(*corev1.Pod)) *corev1.Pod {
	n.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n.name, Labels: lbls, OwnerReferences: owners},
		Spec: corev1.PodSpec{
			NodeName:   "worker-1",
			Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36", Command: []string{"sleep", "infinity"}}},
		},
	}
	if mod != nil {
		mod(p)
	}
	p, err := env.Clientset.CoreV1().Pods(n.name).Create(n.ctx, p, metav1.CreateOptions{})
	n.must("creating pod "+name, err)
	started := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	p.Status = corev1.PodStatus{
		Phase:     corev1.PodRunning,
		HostIP:    "172.18.0.3",
		PodIP:     "10.244.3.200",
		StartTime: &started,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
			{Type: corev1.ContainersReady, Status: cond, LastTransitionTime: started},
			{Type: corev1.PodReady, Status: cond, LastTransitionTime: started},
		},
	}
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "docker.io/library/" + c.Image, Ready: ready, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
		})
	}
	p, err = env.Clientset.CoreV1().Pods(n.name).UpdateStatus(n.ctx, p, metav1.UpdateOptions{})
	n.must("updating status of pod "+name, err)
	n.record("Pod", p)
	return p
}

// deployment creates a Deployment selecting lbls with replicas pods, ready of them ready.
func (n *relNS) deployment(name string, lbls map[string]string, replicas, ready int32, mod func(*appsv1.Deployment)) *appsv1.Deployment {
	n.t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n.name, Labels: lbls},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: appTemplate(lbls),
		},
	}
	if mod != nil {
		mod(d)
	}
	d, err := env.Clientset.AppsV1().Deployments(n.name).Create(n.ctx, d, metav1.CreateOptions{})
	n.must("creating deployment "+name, err)
	d.Status = appsv1.DeploymentStatus{
		ObservedGeneration: d.Generation, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: ready, AvailableReplicas: ready,
	}
	d, err = env.Clientset.AppsV1().Deployments(n.name).UpdateStatus(n.ctx, d, metav1.UpdateOptions{})
	n.must("updating status of deployment "+name, err)
	n.record("Deployment", d)
	return d
}

// appTemplate is the pod template of the workloads deployment and replicaSet create: pods
// labelled lbls, of one container, app.
func appTemplate(lbls map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: lbls},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36"}}},
	}
}

// replicaSet creates a ReplicaSet selecting lbls plus pod-template-hash=hash, named
// prefix-hash, owned by owners.
func (n *relNS) replicaSet(prefix, hash string, lbls map[string]string, owners []metav1.OwnerReference, replicas, ready int32) *appsv1.ReplicaSet {
	n.t.Helper()
	sel := map[string]string{"pod-template-hash": hash}
	for k, v := range lbls {
		sel[k] = v
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + hash, Namespace: n.name, Labels: sel, OwnerReferences: owners},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: appTemplate(sel),
		},
	}
	rs, err := env.Clientset.AppsV1().ReplicaSets(n.name).Create(n.ctx, rs, metav1.CreateOptions{})
	n.must("creating replicaset "+rs.Name, err)
	rs.Status = appsv1.ReplicaSetStatus{Replicas: replicas, FullyLabeledReplicas: replicas, ReadyReplicas: ready, AvailableReplicas: ready, ObservedGeneration: rs.Generation}
	rs, err = env.Clientset.AppsV1().ReplicaSets(n.name).UpdateStatus(n.ctx, rs, metav1.UpdateOptions{})
	n.must("updating status of replicaset "+rs.Name, err)
	n.record("ReplicaSet", rs)
	return rs
}

func (n *relNS) configMap(name string, owners []metav1.OwnerReference) *corev1.ConfigMap {
	n.t.Helper()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n.name, OwnerReferences: owners},
		Data:       map[string]string{"LOG_LEVEL": "debug"},
	}
	cm, err := env.Clientset.CoreV1().ConfigMaps(n.name).Create(n.ctx, cm, metav1.CreateOptions{})
	n.must("creating configmap "+name, err)
	n.record("ConfigMap", cm)
	return cm
}

func (n *relNS) service(name string, selector map[string]string) *corev1.Service {
	n.t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n.name},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
		},
	}
	svc, err := env.Clientset.CoreV1().Services(n.name).Create(n.ctx, svc, metav1.CreateOptions{})
	n.must("creating service "+name, err)
	n.record("Service", svc)
	return svc
}

// event creates a core/v1 Event about the object created as kind/name (with its UID
// unless noUID), last seen ago.
func (n *relNS) event(name, apiVersion, kind, objName, typ, reason, msg string, ago time.Duration, count int32, noUID bool) {
	n.t.Helper()
	ref := corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: n.name, Name: objName}
	if !noUID {
		ref.UID = types.UID(n.uid(kind + "/" + objName))
	}
	last := metav1.NewTime(time.Now().Add(-ago).Truncate(time.Second))
	first := last
	if count > 1 {
		first = metav1.NewTime(last.Add(-20 * time.Minute))
	}
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: n.name},
		InvolvedObject: ref, Type: typ, Reason: reason, Message: msg, Count: count,
		Source:         corev1.EventSource{Component: "e2e"},
		FirstTimestamp: first, LastTimestamp: last,
	}
	_, err := env.Clientset.CoreV1().Events(n.name).Create(n.ctx, e, metav1.CreateOptions{})
	n.must("creating event "+name, err)
}

// kindNames returns "Kind/name" of each item of doc, in its order.
func kindNames(doc relationList) []string {
	var out []string
	for _, it := range doc.Items {
		out = append(out, it.Kind+"/"+it.Name)
	}
	return out
}

// idxDoc runs kubectl-idx ARGS -o json as r, checks the exit code, decodes stdout into doc
// refusing fields the README does not document, and returns stderr.
func idxDoc(t *testing.T, r runner, doc any, args ...string) string {
	t.Helper()
	args = append(slices.Clone(args), "-o", "json")
	res := r.idx(t, args...)
	mustSucceed(t, "kubectl-idx "+strings.Join(args, " "), res)
	dec := json.NewDecoder(strings.NewReader(res.Stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		t.Fatalf("kubectl-idx %s: %v\n%s", strings.Join(args, " "), err, res.Stdout)
	}
	var raw map[string]any
	mustDecode(t, "output", res.Stdout, &raw)
	if raw["kind"] != "List" {
		if w, ok := raw["warnings"].([]any); !ok {
			t.Errorf("kubectl-idx %s: warnings is not an array: %v", strings.Join(args, " "), raw["warnings"])
		} else if len(w) != len(stderrLines(res.Stderr)) {
			t.Errorf("kubectl-idx %s: %d warnings in the document, stderr:\n%s", strings.Join(args, " "), len(w), res.Stderr)
		}
	}
	return res.Stderr
}

// idxOK runs kubectl-idx as r and returns stdout after checking it exited 0 with stderr
// as wanted (nil: empty).
func idxOK(t *testing.T, r runner, wantStderr []string, args ...string) string {
	t.Helper()
	res := r.idx(t, args...)
	mustSucceed(t, "kubectl-idx "+strings.Join(args, " "), res)
	if got := stderrLines(res.Stderr); !slices.Equal(got, wantStderr) {
		t.Errorf("kubectl-idx %s: stderr\n%s\nwant\n%s", strings.Join(args, " "), strings.Join(got, "\n"), strings.Join(wantStderr, "\n"))
	}
	return res.Stdout
}

// treeLines renders a tree or owner document one object a line, indented by depth, as
// "apiVersion Kind namespace/name [ready] [status] [controller] [missing] [unknown] [cycle]".
func treeLines(it *treeItem) []string {
	var out []string
	var walk func(it *treeItem, depth int)
	walk = func(it *treeItem, depth int) {
		parts := []string{it.APIVersion, it.Kind, it.Namespace + "/" + it.Name}
		for _, p := range []string{it.Ready, it.Status} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		for _, f := range []struct {
			name string
			on   bool
		}{{"controller", it.Controller}, {"missing", it.Missing}, {"unknown", it.Unknown}, {"cycle", it.Cycle}} {
			if f.on {
				parts = append(parts, f.name)
			}
		}
		out = append(out, strings.Repeat("  ", depth)+strings.Join(parts, " "))
		for _, c := range it.Children {
			walk(c, depth+1)
		}
		for _, o := range it.Owners {
			walk(o, depth+1)
		}
	}
	walk(it, 0)
	return out
}

// checkUIDs checks that every item of a tree that is neither missing nor unknown has a
// creationTimestamp and the UID its object was created with (uids by "Kind/name").
func checkUIDs(t *testing.T, it *treeItem, uids map[string]types.UID) {
	t.Helper()
	if !it.Missing && !it.Unknown {
		if want, ok := uids[it.Kind+"/"+it.Name]; ok && string(want) != it.UID {
			t.Errorf("%s/%s: uid %q, want %q", it.Kind, it.Name, it.UID, want)
		}
		if it.UID == "" || it.CreationTimestamp == "" {
			t.Errorf("%s/%s: no uid or creationTimestamp: %+v", it.Kind, it.Name, it)
		}
	}
	for _, c := range append(slices.Clone(it.Children), it.Owners...) {
		checkUIDs(t, c, uids)
	}
}

// runeTable is parseTables for one table whose cells may hold multi-byte characters (the
// tree-drawing ones): columns start where the (ASCII) header's cells do, counted in runes,
// as text/tabwriter aligns them.
func runeTable(out string) table {
	return parseTable(strings.Split(strings.TrimRight(out, "\n"), "\n"), true)
}

// column returns the cells of column name.
func (tb table) column(t *testing.T, name string) []string {
	t.Helper()
	i := slices.Index(tb.cols, name)
	if i < 0 {
		t.Fatalf("no column %s in %q", name, tb.header)
	}
	var out []string
	for _, r := range tb.rows {
		out = append(out, r[i])
	}
	return out
}

// checkFormats runs kubectl-idx args with each printer other than json and checks what it
// prints against the -o json document of the same query: yaml is the same document,
// jsonpath and go-template read its kind (and its items'), -o name prints wantNames,
// custom-columns prints a row per item of a document with items (List, OrphanList,
// UsesList) and a row per node of a tree document (Tree, OwnerTree), depth first as the
// table draws it.
func checkFormats(t *testing.T, r runner, wantNames []string, args ...string) {
	t.Helper()
	jsonRes := r.idx(t, append(slices.Clone(args), "-o", "json")...)
	mustSucceed(t, "-o json", jsonRes)
	doc := decodeDoc(t, "-o json", jsonRes.Stdout, false)
	kind, _ := doc["kind"].(string)
	items, isList := doc["items"].([]any)

	t.Run("yaml", func(t *testing.T) {
		t.Parallel()
		res := r.idx(t, append(slices.Clone(args), "-o", "yaml")...)
		mustSucceed(t, "-o yaml", res)
		if diff := cmp.Diff(doc, decodeDoc(t, "-o yaml", res.Stdout, true)); diff != "" {
			t.Errorf("-o yaml differs from -o json (-json +yaml):\n%s", diff)
		}
	})
	t.Run("jsonpath", func(t *testing.T) {
		t.Parallel()
		res := r.idx(t, append(slices.Clone(args), "-o", "jsonpath={.kind} {.apiVersion}")...)
		mustSucceed(t, "-o jsonpath", res)
		if want := kind + " " + doc["apiVersion"].(string); res.Stdout != want {
			t.Errorf("-o jsonpath printed %q, want %q", res.Stdout, want)
		}
	})
	t.Run("go-template", func(t *testing.T) {
		t.Parallel()
		tmpl := `{{.kind}}{{range .items}} {{.kind}}{{end}}`
		res := r.idx(t, append(slices.Clone(args), "-o", "go-template="+tmpl)...)
		mustSucceed(t, "-o go-template", res)
		want := kind
		for _, it := range items {
			want += " " + it.(map[string]any)["kind"].(string)
		}
		if res.Stdout != want {
			t.Errorf("-o go-template printed %q, want %q", res.Stdout, want)
		}
	})
	t.Run("name", func(t *testing.T) {
		t.Parallel()
		res := r.idx(t, append(slices.Clone(args), "-o", "name")...)
		mustSucceed(t, "-o name", res)
		got := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
		if res.Stdout == "" {
			got = nil
		}
		if !slices.Equal(got, wantNames) {
			t.Errorf("-o name printed\n%s\nwant\n%s", res.Stdout, strings.Join(wantNames, "\n"))
		}
	})
	t.Run("custom-columns", func(t *testing.T) {
		t.Parallel()
		res := r.idx(t, append(slices.Clone(args), "-o", "custom-columns=KIND:.kind,NAME:.name,METANAME:.metadata.name")...)
		mustSucceed(t, "-o custom-columns", res)
		rows := parseHeaderless(res.Stdout)
		if len(rows) == 0 || !slices.Equal(rows[0], []string{"KIND", "NAME", "METANAME"}) {
			t.Fatalf("-o custom-columns: no header:\n%s", res.Stdout)
		}
		var want [][]string
		if isList {
			for _, it := range items {
				m := it.(map[string]any)
				name, metaName := "<none>", "<none>"
				if s, ok := m["name"].(string); ok {
					name = s
				}
				if md, ok := m["metadata"].(map[string]any); ok {
					metaName = md["name"].(string)
				}
				want = append(want, []string{m["kind"].(string), name, metaName})
			}
		} else {
			var walk func(node map[string]any)
			walk = func(node map[string]any) {
				want = append(want, []string{node["kind"].(string), node["name"].(string), "<none>"})
				branches, _ := node["children"].([]any)
				if owners, ok := node["owners"].([]any); ok {
					branches = owners
				}
				for _, b := range branches {
					walk(b.(map[string]any))
				}
			}
			root, ok := doc["root"].(map[string]any)
			if !ok {
				t.Fatalf("a %s document without a root:\n%s", kind, jsonRes.Stdout)
			}
			walk(root)
		}
		if diff := cmp.Diff(want, rows[1:]); diff != "" {
			t.Errorf("-o custom-columns rows differ (-want +got):\n%s\n%s", diff, res.Stdout)
		}
	})
}

// TestRelationsTree: a four-level tree under a custom resource (Rollout → ReplicaSet → Pods
// → a ConfigMap and a Lease each pod owns, and a ConfigMap both pods own), a Service's
// EndpointSlice, and a Node whose mirror pods live in two namespaces; then the owner chains
// of the same objects, upwards.
func TestRelationsTree(t *testing.T) {
	n := newRelNS(t, "rel-tree")
	ro := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": fixtures.RolloutGVR.GroupVersion().String(),
		"kind":       "Rollout",
		"metadata":   map[string]any{"name": "canary", "namespace": n.name, "labels": map[string]any{"app": "canary"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "canary"}},
		},
	}}
	ro, err := env.Dynamic.Resource(fixtures.RolloutGVR).Namespace(n.name).Create(n.ctx, ro, metav1.CreateOptions{})
	n.must("creating rollout", err)
	_ = unstructured.SetNestedSlice(ro.Object, []any{map[string]any{"type": "Ready", "status": "False", "reason": "CanaryPaused"}}, "status", "conditions")
	ro, err = env.Dynamic.Resource(fixtures.RolloutGVR).Namespace(n.name).UpdateStatus(n.ctx, ro, metav1.UpdateOptions{})
	n.must("updating status of rollout", err)
	n.record("Rollout", ro)

	app := map[string]string{"app": "canary"}
	rs := n.replicaSet("canary", "7f9b", app, []metav1.OwnerReference{n.controllerOf("example.com/v1alpha1", "Rollout", "canary")}, 2, 1)
	rsRef := []metav1.OwnerReference{n.controllerOf("apps/v1", "ReplicaSet", rs.Name)}
	podA := n.pod("canary-7f9b-a", rs.Spec.Template.Labels, rsRef, true, nil)
	n.pod("canary-7f9b-b", rs.Spec.Template.Labels, rsRef, false, nil)
	n.configMap("canary-7f9b-a-state", []metav1.OwnerReference{n.controllerOf("v1", "Pod", podA.Name)})
	n.configMap("shared", []metav1.OwnerReference{n.ownerRef("v1", "Pod", "canary-7f9b-a"), n.ownerRef("v1", "Pod", "canary-7f9b-b")})
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: podA.Name, Namespace: n.name, OwnerReferences: []metav1.OwnerReference{n.controllerOf("v1", "Pod", podA.Name)}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(podA.Name)},
	}
	lease, err = env.Clientset.CoordinationV1().Leases(n.name).Create(n.ctx, lease, metav1.CreateOptions{})
	n.must("creating lease", err)
	n.record("Lease", lease)
	// A ConfigMap whose owners are a pod that is gone and a kind the server does not serve.
	n.configMap("adopted", []metav1.OwnerReference{
		{APIVersion: "v1", Kind: "Pod", Name: "canary-7f9b-gone", UID: "0b5e3c1a-0000-4000-8000-000000000001"},
		{APIVersion: "widgets.example.org/v1", Kind: "Widget", Name: "w", UID: "0b5e3c1a-0000-4000-8000-000000000002", Controller: ptr.To(true)},
	})

	svc := n.service("canary", app)
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: "canary-x7k2p", Namespace: n.name,
			Labels:          map[string]string{discoveryv1.LabelServiceName: svc.Name},
			OwnerReferences: []metav1.OwnerReference{n.controllerOf("v1", "Service", svc.Name)},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	_, err = env.Clientset.DiscoveryV1().EndpointSlices(n.name).Create(n.ctx, slice, metav1.CreateOptions{})
	n.must("creating endpointslice", err)

	// A mirror pod of worker-1 next to the fixture's, which lives in another namespace.
	worker1, err := env.Clientset.CoreV1().Nodes().Get(n.ctx, "worker-1", metav1.GetOptions{})
	n.must("reading node worker-1", err)
	n.uids["Node/worker-1"] = worker1.UID
	n.pod("probe-worker-1", map[string]string{"app": "probe"}, []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "Node", Name: worker1.Name, UID: worker1.UID, Controller: ptr.To(true),
	}}, true, nil)

	r := as("")
	wantTree := []string{
		"example.com/v1alpha1 Rollout rel-tree/canary CanaryPaused",
		"  apps/v1 ReplicaSet rel-tree/canary-7f9b 1/2",
		"    v1 Pod rel-tree/canary-7f9b-a 1/1 Running",
		"      v1 ConfigMap rel-tree/canary-7f9b-a-state",
		"      v1 ConfigMap rel-tree/shared",
		"      coordination.k8s.io/v1 Lease rel-tree/canary-7f9b-a",
		"    v1 Pod rel-tree/canary-7f9b-b 0/1 Running",
		"      v1 ConfigMap rel-tree/shared",
	}
	wantNames := []string{
		"rollout.example.com/canary",
		"replicaset.apps/canary-7f9b",
		"pod/canary-7f9b-a",
		"configmap/canary-7f9b-a-state",
		"configmap/shared",
		"lease.coordination.k8s.io/canary-7f9b-a",
		"pod/canary-7f9b-b",
	}

	t.Run("tree of a custom resource, four levels down", func(t *testing.T) {
		t.Parallel()
		var doc treeDoc
		stderr := idxDoc(t, r, &doc, "tree", "rollout/canary", "-n", n.name)
		if stderr != "" {
			t.Errorf("stderr: %s", stderr)
		}
		if doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Kind != "Tree" || len(doc.Warnings) != 0 {
			t.Errorf("document %s %s, warnings %q; want kubectl-idx.io/v1alpha1 Tree and none", doc.APIVersion, doc.Kind, doc.Warnings)
		}
		if diff := cmp.Diff(wantTree, treeLines(doc.Root)); diff != "" {
			t.Errorf("tree differs (-want +got):\n%s", diff)
		}
		checkUIDs(t, doc.Root, n.uids)
	})
	t.Run("every way to name the object", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{
			{"tree", "ro/canary", "-n", n.name},
			{"tree", "rollouts.example.com", "canary", "-n", n.name},
			{"tree", "Rollout/canary", "-n", n.name},
			// -A: a namespaced object is still looked for in -n, its dependents everywhere.
			{"tree", "rollout/canary", "-n", n.name, "-A"},
		} {
			var doc treeDoc
			idxDoc(t, r, &doc, args...)
			if diff := cmp.Diff(wantTree, treeLines(doc.Root)); diff != "" {
				t.Errorf("%s: tree differs (-want +got):\n%s", strings.Join(args, " "), diff)
			}
		}
	})
	t.Run("human", func(t *testing.T) {
		t.Parallel()
		out := idxOK(t, r, nil, "tree", "rollout/canary", "-n", n.name)
		tb := runeTable(out)
		if want := []string{"NAMESPACE", "NAME", "READY", "STATUS", "AGE"}; !slices.Equal(tb.cols, want) {
			t.Fatalf("columns %q, want %q\n%s", tb.cols, want, out)
		}
		tb = maskColumns(t, "tree", tb, "AGE")
		want := [][]string{
			{"rel-tree", "Rollout.example.com/canary", "", "CanaryPaused", "<age>"},
			{"rel-tree", "└─ReplicaSet/canary-7f9b", "1/2", "", "<age>"},
			{"rel-tree", "  ├─Pod/canary-7f9b-a", "1/1", "Running", "<age>"},
			{"rel-tree", "  │ ├─ConfigMap/canary-7f9b-a-state", "", "", "<age>"},
			{"rel-tree", "  │ ├─ConfigMap/shared", "", "", "<age>"},
			{"rel-tree", "  │ └─Lease.coordination.k8s.io/canary-7f9b-a", "", "", "<age>"},
			{"rel-tree", "  └─Pod/canary-7f9b-b", "0/1", "Running", "<age>"},
			{"rel-tree", "    └─ConfigMap/shared", "", "", "<age>"},
		}
		if diff := cmp.Diff(want, tb.rows); diff != "" {
			t.Errorf("rows differ (-want +got):\n%s\n%s", diff, out)
		}
		noHeaders := idxOK(t, r, nil, "tree", "rollout/canary", "-n", n.name, "--no-headers")
		if first, _, _ := strings.Cut(noHeaders, "\n"); !strings.HasPrefix(first, "rel-tree") || strings.Count(noHeaders, "\n") != len(want) {
			t.Errorf("--no-headers:\n%s", noHeaders)
		}
	})
	t.Run("wide adds the UID", func(t *testing.T) {
		t.Parallel()
		out := idxOK(t, r, nil, "tree", "rollout/canary", "-n", n.name, "-o", "wide")
		tb := runeTable(out)
		uids := tb.column(t, "UID")
		want := []string{n.uid("Rollout/canary"), n.uid("ReplicaSet/canary-7f9b"), n.uid("Pod/canary-7f9b-a"),
			n.uid("ConfigMap/canary-7f9b-a-state"), n.uid("ConfigMap/shared"), n.uid("Lease/canary-7f9b-a"),
			n.uid("Pod/canary-7f9b-b"), n.uid("ConfigMap/shared")}
		if !slices.Equal(uids, want) {
			t.Errorf("UID column %q, want %q", uids, want)
		}
	})
	t.Run("printers", func(t *testing.T) {
		t.Parallel()
		checkFormats(t, r, wantNames, "tree", "rollout/canary", "-n", n.name)
	})
	t.Run("jsonpath over the tree", func(t *testing.T) {
		t.Parallel()
		out := idxOK(t, r, nil, "tree", "rollout/canary", "-n", n.name, "-o", `jsonpath={range .root.children[*].children[*]}{.name} {.ready}{"\n"}{end}`)
		if want := "canary-7f9b-a 1/1\ncanary-7f9b-b 0/1\n"; out != want {
			t.Errorf("printed %q, want %q", out, want)
		}
	})
	t.Run("a Service owns its EndpointSlice", func(t *testing.T) {
		t.Parallel()
		out := idxOK(t, r, nil, "tree", "svc/canary", "-n", n.name, "-o", "name")
		if want := "service/canary\nendpointslice.discovery.k8s.io/canary-x7k2p\n"; out != want {
			t.Errorf("printed %q, want %q", out, want)
		}
	})
	t.Run("a Node's tree spans namespaces", func(t *testing.T) {
		t.Parallel()
		// Through kubectl's plugin discovery, as a user types it.
		cmd := `kubectl idx tree node/worker-1 -o json | jq -r '.root.kind + "/" + .root.name + " " + (.root.namespace // "-"), (.root.children[] | "  " + .kind + "/" + .namespace + "/" + .name + " " + .ready)'`
		res := r.shell(t, cmd)
		mustSucceed(t, cmd, res)
		probe := kubectlItems(t, r, "pods", "-n", fixtures.Rollouts, "-l", "app=node-probe")
		if len(probe) != 1 {
			t.Fatalf("fixture problem: want one mirror pod in %s, got %d", fixtures.Rollouts, len(probe))
		}
		want := "Node/worker-1 -\n  Pod/rel-tree/probe-worker-1 1/1\n  Pod/" + fixtures.Rollouts + "/" + probe[0].GetName() + " 1/1\n"
		if res.Stdout != want || res.Stderr != "" {
			t.Errorf("%s\nprinted:\n%s\nwant:\n%s", cmd, res, want)
		}
		out := idxOK(t, r, nil, "tree", "nodes", "worker-1")
		tb := runeTable(out)
		if ns := tb.column(t, "NAMESPACE"); !slices.Equal(ns, []string{"", "rel-tree", fixtures.Rollouts}) {
			t.Errorf("NAMESPACE column %q:\n%s", ns, out)
		}
		if st := tb.column(t, "STATUS"); st[0] != "Ready" {
			t.Errorf("the Node's STATUS is %q, want Ready:\n%s", st[0], out)
		}
		// READY has one shape: ready parts out of all, which a Node has none of.
		if ready := tb.column(t, "READY"); !slices.Equal(ready, []string{"", "1/1", "1/1"}) {
			t.Errorf("READY column %q, want the pods' 1/1 and nothing for the Node:\n%s", ready, out)
		}
	})

	wantChain := []string{
		"coordination.k8s.io/v1 Lease rel-tree/canary-7f9b-a",
		"  v1 Pod rel-tree/canary-7f9b-a 1/1 Running controller",
		"    apps/v1 ReplicaSet rel-tree/canary-7f9b 1/2 controller",
		"      example.com/v1alpha1 Rollout rel-tree/canary CanaryPaused controller",
	}
	t.Run("owners up four levels", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{
			{"owners", "lease/canary-7f9b-a", "-n", n.name},
			{"owners", "leases.coordination.k8s.io", "canary-7f9b-a", "-n", n.name, "-A"},
		} {
			var doc treeDoc
			if stderr := idxDoc(t, r, &doc, args...); stderr != "" {
				t.Errorf("stderr: %s", stderr)
			}
			if doc.Kind != "OwnerTree" || len(doc.Warnings) != 0 {
				t.Errorf("document kind %s, warnings %q", doc.Kind, doc.Warnings)
			}
			if diff := cmp.Diff(wantChain, treeLines(doc.Root)); diff != "" {
				t.Errorf("%s: owners differ (-want +got):\n%s", strings.Join(args, " "), diff)
			}
			checkUIDs(t, doc.Root, n.uids)
		}
	})
	t.Run("owners human and printers", func(t *testing.T) {
		t.Parallel()
		out := idxOK(t, r, nil, "owners", "lease/canary-7f9b-a", "-n", n.name, "-o", "wide")
		tb := maskColumns(t, "owners", runeTable(out), "AGE")
		want := [][]string{
			{"rel-tree", "Lease.coordination.k8s.io/canary-7f9b-a", "", "", "<age>", n.uid("Lease/canary-7f9b-a")},
			{"rel-tree", "└─Pod/canary-7f9b-a", "1/1", "Running", "<age>", n.uid("Pod/canary-7f9b-a")},
			{"rel-tree", "  └─ReplicaSet/canary-7f9b", "1/2", "", "<age>", n.uid("ReplicaSet/canary-7f9b")},
			{"rel-tree", "    └─Rollout.example.com/canary", "", "CanaryPaused", "<age>", n.uid("Rollout/canary")},
		}
		if diff := cmp.Diff(want, tb.rows); diff != "" {
			t.Errorf("rows differ (-want +got):\n%s\n%s", diff, out)
		}
		checkFormats(t, r, []string{"lease.coordination.k8s.io/canary-7f9b-a", "pod/canary-7f9b-a", "replicaset.apps/canary-7f9b", "rollout.example.com/canary"},
			"owners", "lease/canary-7f9b-a", "-n", n.name)
	})
	t.Run("owners of an object with two owners", func(t *testing.T) {
		t.Parallel()
		var doc treeDoc
		idxDoc(t, r, &doc, "owners", "configmap/shared", "-n", n.name)
		want := []string{
			"v1 ConfigMap rel-tree/shared",
			"  v1 Pod rel-tree/canary-7f9b-a 1/1 Running",
			"    apps/v1 ReplicaSet rel-tree/canary-7f9b 1/2 controller",
			"      example.com/v1alpha1 Rollout rel-tree/canary CanaryPaused controller",
			"  v1 Pod rel-tree/canary-7f9b-b 0/1 Running",
			"    apps/v1 ReplicaSet rel-tree/canary-7f9b 1/2 controller",
			"      example.com/v1alpha1 Rollout rel-tree/canary CanaryPaused controller",
		}
		if diff := cmp.Diff(want, treeLines(doc.Root)); diff != "" {
			t.Errorf("owners differ (-want +got):\n%s", diff)
		}
	})
	t.Run("owners missing and unknown", func(t *testing.T) {
		t.Parallel()
		var doc treeDoc
		stderr := idxDoc(t, r, &doc, "owners", "configmap/adopted", "-n", n.name)
		want := []string{
			"v1 ConfigMap rel-tree/adopted",
			"  v1 Pod rel-tree/canary-7f9b-gone missing",
			"  widgets.example.org/v1 Widget rel-tree/w controller unknown",
		}
		if diff := cmp.Diff(want, treeLines(doc.Root)); diff != "" {
			t.Errorf("owners differ (-want +got):\n%s", diff)
		}
		if len(doc.Warnings) == 0 || !slices.ContainsFunc(doc.Warnings, func(w string) bool { return strings.Contains(w, "Widget") }) {
			t.Errorf("warnings %q do not name the Widget kind", doc.Warnings)
		}
		for _, line := range stderrLines(stderr) {
			if !strings.HasPrefix(line, "warning: ") {
				t.Errorf("stderr line %q is not a warning", line)
			}
		}
		out := r.idx(t, "owners", "configmap/adopted", "-n", n.name)
		mustSucceed(t, "owners configmap/adopted", out)
		st := runeTable(out.Stdout).column(t, "STATUS")
		if !slices.Equal(st, []string{"", "<missing>", "<unknown>"}) {
			t.Errorf("STATUS column %q:\n%s", st, out.Stdout)
		}
	})
	t.Run("owners of a mirror pod is its Node", func(t *testing.T) {
		t.Parallel()
		var doc treeDoc
		idxDoc(t, r, &doc, "owners", "pod/probe-worker-1", "-n", n.name)
		want := []string{"v1 Pod rel-tree/probe-worker-1 1/1 Running", "  v1 Node /worker-1 Ready controller"}
		if diff := cmp.Diff(want, treeLines(doc.Root)); diff != "" {
			t.Errorf("owners differ (-want +got):\n%s", diff)
		}
		checkUIDs(t, doc.Root, n.uids)
	})
}

// TestRelationsSelectors: selects and selected-by over Services (with and without a
// selector), a Deployment and its ReplicaSet, PodDisruptionBudgets (one with the empty
// selector, which selects every pod) and NetworkPolicies with set-based selectors. selects
// prints kubectl's List of pods, so each answer is compared with `kubectl get pods -l` for
// the same selector, printer by printer.
func TestRelationsSelectors(t *testing.T) {
	n := newRelNS(t, "rel-sel")
	web := map[string]string{"app": "web"}
	n.deployment("web", web, 3, 2, nil)
	rs := n.replicaSet("web", "5d8f", web, []metav1.OwnerReference{n.controllerOf("apps/v1", "Deployment", "web")}, 3, 2)
	rsRef := []metav1.OwnerReference{n.controllerOf("apps/v1", "ReplicaSet", rs.Name)}
	podLabels := map[string]string{"app": "web", "pod-template-hash": "5d8f", "tier": "frontend"}
	n.pod("web-5d8f-a", podLabels, rsRef, true, nil)
	n.pod("web-5d8f-b", podLabels, rsRef, true, nil)
	n.pod("web-5d8f-c", podLabels, rsRef, false, nil)
	n.pod("canary", map[string]string{"app": "web", "tier": "frontend", "track": "canary"}, nil, true, nil)
	n.pod("worker", map[string]string{"app": "worker", "tier": "backend"}, nil, true, nil)
	n.service("web", web)
	n.service("external", nil)
	pdbs := []*policyv1.PodDisruptionBudget{
		{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: web}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "everything"}, Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("10%")), Selector: &metav1.LabelSelector{}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "backend"}, Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"backend"}}},
		}}},
	}
	for _, p := range pdbs {
		_, err := env.Clientset.PolicyV1().PodDisruptionBudgets(n.name).Create(n.ctx, p, metav1.CreateOptions{})
		n.must("creating poddisruptionbudget "+p.Name, err)
	}
	nps := []*networkingv1.NetworkPolicy{
		{ObjectMeta: metav1.ObjectMeta{Name: "frontend"}, Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"frontend"}},
				{Key: "track", Operator: metav1.LabelSelectorOpDoesNotExist},
			},
		}, PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "default-deny"}, Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}},
	}
	for _, p := range nps {
		_, err := env.Clientset.NetworkingV1().NetworkPolicies(n.name).Create(n.ctx, p, metav1.CreateOptions{})
		n.must("creating networkpolicy "+p.Name, err)
	}
	r := as("")
	// The printers: -o json, yaml, name, jsonpath, go-template, custom-columns and wide, each
	// as kubectl prints the same pods.
	allFormats := []string{"json", "yaml", "name", "wide",
		`jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}`,
		`go-template={{range .items}}{{.metadata.name}} {{.spec.nodeName}}{{"\n"}}{{end}}`,
		"custom-columns=NAME:.metadata.name,APP:.metadata.labels.app,IP:.status.podIP",
	}

	selects := []struct {
		object string
		// selector is the same selection for kubectl get -l; "" means every pod.
		selector string
		warning  string
		want     []string
		// formats are the printers compared with kubectl's; json only when nil.
		formats []string
	}{
		{object: "service/web", selector: "app=web", want: []string{"canary", "web-5d8f-a", "web-5d8f-b", "web-5d8f-c"}, formats: allFormats},
		{object: "deployment/web", selector: "app=web", want: []string{"canary", "web-5d8f-a", "web-5d8f-b", "web-5d8f-c"}},
		{object: "rs/web-5d8f", selector: "app=web,pod-template-hash=5d8f", want: []string{"web-5d8f-a", "web-5d8f-b", "web-5d8f-c"}},
		{object: "pdb/web", selector: "app=web", want: []string{"canary", "web-5d8f-a", "web-5d8f-b", "web-5d8f-c"}},
		{object: "pdb/backend", selector: "tier in (backend)", want: []string{"worker"}},
		{object: "pdb/everything", warning: "warning: poddisruptionbudget/everything selects every pod in namespace rel-sel",
			want: []string{"canary", "web-5d8f-a", "web-5d8f-b", "web-5d8f-c", "worker"}, formats: allFormats},
		{object: "networkpolicy/frontend", selector: "tier in (frontend),!track", want: []string{"web-5d8f-a", "web-5d8f-b", "web-5d8f-c"}, formats: allFormats},
		{object: "netpol/default-deny", warning: "warning: networkpolicy/default-deny selects every pod in namespace rel-sel",
			want: []string{"canary", "web-5d8f-a", "web-5d8f-b", "web-5d8f-c", "worker"}},
	}
	for _, tc := range selects {
		t.Run("selects "+tc.object, func(t *testing.T) {
			t.Parallel()
			var warnings []string
			if tc.warning != "" {
				warnings = []string{tc.warning}
			}
			kubectlArgs := []string{"pods", "-n", n.name}
			if tc.selector != "" {
				kubectlArgs = append(kubectlArgs, "-l", tc.selector)
			}
			ref := kubectlItems(t, r, kubectlArgs...)
			var names []string
			for _, p := range ref {
				names = append(names, p.GetName())
			}
			if !slices.Equal(names, tc.want) {
				t.Fatalf("kubectl get %s: %q, want %q", strings.Join(kubectlArgs, " "), names, tc.want)
			}
			formats := tc.formats
			if formats == nil {
				formats = []string{"json"}
			}
			for _, format := range formats {
				got := idxOK(t, r, warnings, "selects", tc.object, "-n", n.name, "-o", format)
				want := r.kubectl(t, append(append([]string{"get"}, kubectlArgs...), "-o", format)...)
				mustSucceed(t, "kubectl get -o "+format, want)
				switch format {
				case "json", "yaml":
					compareLists(t, decodeDoc(t, format, got, format == "yaml"), decodeDoc(t, format, want.Stdout, format == "yaml"))
				case "wide":
					g, w := parseTables(got), parseTables(want.Stdout)
					if len(g) != 1 || len(w) != 1 {
						t.Fatalf("-o wide: want one table each:\n%s\n%s", got, want.Stdout)
					}
					if diff := cmp.Diff(maskColumns(t, "kubectl", w[0], "AGE"), maskColumns(t, "kubectl-idx", g[0], "AGE"), cmp.AllowUnexported(table{})); diff != "" {
						t.Errorf("-o wide differs (-kubectl +kubectl-idx):\n%s", diff)
					}
				default:
					if got != want.Stdout {
						t.Errorf("-o %s printed\n%s\nkubectl get prints\n%s", format, got, want.Stdout)
					}
				}
			}
			// Human, against kubectl get, and across all namespaces.
			got := idxOK(t, r, warnings, "selects", tc.object, "-n", n.name)
			want := r.kubectl(t, append([]string{"get"}, kubectlArgs...)...)
			g, w := parseTables(got), parseTables(want.Stdout)
			if len(g) != 1 || len(w) != 1 {
				t.Fatalf("want one table each:\n%s\n%s", got, want.Stdout)
			}
			if diff := cmp.Diff(maskColumns(t, "kubectl", w[0], "AGE"), maskColumns(t, "kubectl-idx", g[0], "AGE"), cmp.AllowUnexported(table{})); diff != "" {
				t.Errorf("human output differs (-kubectl +kubectl-idx):\n%s", diff)
			}
			all := idxOK(t, r, warnings, "selects", tc.object, "-n", n.name, "-A", "-o", "name")
			if wantNames := "pod/" + strings.Join(tc.want, "\npod/") + "\n"; all != wantNames {
				t.Errorf("-A -o name printed\n%s\nwant\n%s", all, wantNames)
			}
		})
	}
	t.Run("selects a Service without a selector", func(t *testing.T) {
		t.Parallel()
		warning := "warning: service/external has no selector, so it selects no pods"
		out := idxOK(t, r, []string{warning, "No resources found in rel-sel namespace."}, "selects", "svc/external", "-n", n.name)
		if out != "" {
			t.Errorf("stdout: %s", out)
		}
		var list struct {
			Kind  string `json:"kind"`
			Items []any  `json:"items"`
		}
		mustDecode(t, "output", idxOK(t, r, []string{warning}, "selects", "svc/external", "-n", n.name, "-o", "json"), &list)
		if list.Kind != "List" || len(list.Items) != 0 {
			t.Errorf("-o json: %+v, want an empty List", list)
		}
	})

	selectedBy := []struct {
		pod  string
		want []string
	}{
		{"web-5d8f-a", []string{
			"service/web", "deployment.apps/web", "replicaset.apps/web-5d8f",
			"poddisruptionbudget.policy/everything", "poddisruptionbudget.policy/web",
			"networkpolicy.networking.k8s.io/default-deny", "networkpolicy.networking.k8s.io/frontend",
		}},
		{"canary", []string{
			"service/web", "deployment.apps/web",
			"poddisruptionbudget.policy/everything", "poddisruptionbudget.policy/web",
			"networkpolicy.networking.k8s.io/default-deny",
		}},
		{"worker", []string{
			"poddisruptionbudget.policy/backend", "poddisruptionbudget.policy/everything",
			"networkpolicy.networking.k8s.io/default-deny",
		}},
	}
	for _, tc := range selectedBy {
		t.Run("selected-by pod/"+tc.pod, func(t *testing.T) {
			t.Parallel()
			for _, args := range [][]string{
				{"selected-by", "pod/" + tc.pod, "-n", n.name, "-o", "name"},
				{"selected-by", "pods", tc.pod, "-n", n.name, "-A", "-o", "name"},
			} {
				out := idxOK(t, r, nil, args...)
				if want := strings.Join(tc.want, "\n") + "\n"; out != want {
					t.Errorf("%s printed\n%s\nwant\n%s", strings.Join(args, " "), out, want)
				}
			}
			// The same objects as kubectl gets them, in every printer.
			kubectlArgs := append(slices.Clone(tc.want), "-n", n.name)
			for _, format := range []string{"json", "yaml", "jsonpath={.items[*].kind}", "custom-columns=KIND:.kind,NAME:.metadata.name",
				`go-template={{range .items}}{{.kind}}/{{.metadata.name}} {{end}}`} {
				got := idxOK(t, r, nil, "selected-by", "pod/"+tc.pod, "-n", n.name, "-o", format)
				want := r.kubectl(t, append(append([]string{"get"}, kubectlArgs...), "-o", format)...)
				mustSucceed(t, "kubectl get", want)
				if format == "json" || format == "yaml" {
					compareLists(t, decodeDoc(t, format, got, format == "yaml"), decodeDoc(t, format, want.Stdout, format == "yaml"))
				} else if got != want.Stdout {
					t.Errorf("-o %s printed\n%s\nkubectl get prints\n%s", format, got, want.Stdout)
				}
			}
		})
	}
	t.Run("selected-by human", func(t *testing.T) {
		t.Parallel()
		want := selectedBy[0].want
		for _, wide := range [][]string{nil, {"-o", "wide"}} {
			got := idxOK(t, r, nil, append([]string{"selected-by", "pod/web-5d8f-a", "-n", n.name}, wide...)...)
			ref := r.kubectl(t, append(append(append([]string{"get"}, want...), "-n", n.name), wide...)...)
			mustSucceed(t, "kubectl get", ref)
			g, w := parseTables(got), parseTables(ref.Stdout)
			if len(g) != len(w) {
				t.Fatalf("kubectl-idx prints %d tables, kubectl %d:\n%s\n%s", len(g), len(w), got, ref.Stdout)
			}
			for i := range w {
				if diff := cmp.Diff(maskColumns(t, "kubectl", w[i], "AGE"), maskColumns(t, "kubectl-idx", g[i], "AGE"), cmp.AllowUnexported(table{})); diff != "" {
					t.Errorf("%q: table %d differs (-kubectl +kubectl-idx):\n%s", wide, i, diff)
				}
			}
		}
	})
}

// TestRelationsUses: pods and a Deployment that use a ConfigMap through a volume, env
// valueFrom, envFrom and a projected volume, a Secret through env, envFrom of an init
// container, imagePullSecrets and a projected volume, a PVC through a volume and a
// ServiceAccount; and what a pod uses, missing objects included. No output, at any
// verbosity, holds the Secret's data.
func TestRelationsUses(t *testing.T) {
	n := newRelNS(t, "rel-uses")
	buf := make([]byte, 12)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	secretValue := "e2e-s3cr3t-" + hex.EncodeToString(buf)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "app-secret", Namespace: n.name},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"DB_PASSWORD": []byte(secretValue)},
	}
	secret, err := env.Clientset.CoreV1().Secrets(n.name).Create(n.ctx, secret, metav1.CreateOptions{})
	n.must("creating secret", err)
	n.record("Secret", secret)
	n.configMap("app-config", nil)
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: n.name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	pvc, err = env.Clientset.CoreV1().PersistentVolumeClaims(n.name).Create(n.ctx, pvc, metav1.CreateOptions{})
	n.must("creating pvc", err)
	n.record("PersistentVolumeClaim", pvc)
	sa, err := env.Clientset.CoreV1().ServiceAccounts(n.name).Create(n.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: n.name}}, metav1.CreateOptions{})
	n.must("creating serviceaccount", err)
	n.record("ServiceAccount", sa)

	cmRef := corev1.LocalObjectReference{Name: "app-config"}
	secretRef := corev1.LocalObjectReference{Name: "app-secret"}
	spec := func(s *corev1.PodSpec) {
		s.ServiceAccountName = "app"
		s.ImagePullSecrets = []corev1.LocalObjectReference{secretRef}
		s.Volumes = []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef}}},
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			{Name: "bundle", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: secretRef}},
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			}}}},
		}
		s.InitContainers = []corev1.Container{{Name: "migrate", Image: "busybox:1.36",
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: secretRef}}}}}
		s.Containers = []corev1.Container{{
			Name: "app", Image: "busybox:1.36",
			Env: []corev1.EnvVar{
				{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: secretRef, Key: "DB_PASSWORD"}}},
				{Name: "LOG_LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: cmRef, Key: "LOG_LEVEL"}}},
			},
			EnvFrom: []corev1.EnvFromSource{
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: cmRef}},
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "feature-flags"}, Optional: ptr.To(true)}},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "data", MountPath: "/data"}, {Name: "bundle", MountPath: "/bundle"}},
		}}
	}
	n.deployment("app", map[string]string{"app": "app"}, 1, 1, func(d *appsv1.Deployment) { spec(&d.Spec.Template.Spec) })
	n.pod("app-0", map[string]string{"app": "app"}, nil, true, func(p *corev1.Pod) {
		node := p.Spec.NodeName
		spec(&p.Spec)
		p.Spec.NodeName = node
	})
	n.pod("sidecar-only", nil, nil, true, func(p *corev1.Pod) {
		p.Spec.Containers[0].Name = "sidecar"
		p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "FLAG", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: cmRef, Key: "FLAG", Optional: ptr.To(true)},
		}}}
	})
	r := as("")

	cmVia := []string{"env app/LOG_LEVEL", "envFrom app", "projected volume bundle", "volume config"}
	secretVia := []string{"env app/DB_PASSWORD", "imagePullSecrets", "initContainer envFrom migrate", "projected volume bundle"}
	item := func(apiVersion, kind, name string, via []string, optional bool) *relationItem {
		return &relationItem{APIVersion: apiVersion, Kind: kind, Namespace: n.name, Name: name, UID: n.uid(kind + "/" + name), Via: via, Optional: optional}
	}
	users := []struct {
		subject, kind, name string
		want                []*relationItem
	}{
		{"configmap/app-config", "ConfigMap", "app-config", []*relationItem{
			item("apps/v1", "Deployment", "app", cmVia, false),
			item("v1", "Pod", "app-0", cmVia, false),
			item("v1", "Pod", "sidecar-only", []string{"env sidecar/FLAG"}, true),
		}},
		{"secret/app-secret", "Secret", "app-secret", []*relationItem{
			item("apps/v1", "Deployment", "app", secretVia, false),
			item("v1", "Pod", "app-0", secretVia, false),
		}},
		{"pvc/data", "PersistentVolumeClaim", "data", []*relationItem{
			item("apps/v1", "Deployment", "app", []string{"volume data"}, false),
			item("v1", "Pod", "app-0", []string{"volume data"}, false),
		}},
		{"sa/app", "ServiceAccount", "app", []*relationItem{
			item("apps/v1", "Deployment", "app", []string{"serviceAccountName"}, false),
			item("v1", "Pod", "app-0", []string{"serviceAccountName"}, false),
		}},
	}
	// outputs collects what the answers printed, for the secret check at the end.
	var (
		mu      sync.Mutex
		outputs []string
	)
	keep := func(out ...string) {
		mu.Lock()
		defer mu.Unlock()
		outputs = append(outputs, out...)
	}
	exists := func(b bool) *bool { return &b }
	t.Run("answers", func(t *testing.T) {
		for _, tc := range users {
			t.Run("uses "+tc.subject, func(t *testing.T) {
				t.Parallel()
				var doc relationList
				stderr := idxDoc(t, r, &doc, "uses", tc.subject, "-n", n.name)
				if stderr != "" {
					t.Errorf("stderr: %s", stderr)
				}
				for _, it := range doc.Items {
					if it.CreationTimestamp == "" {
						t.Errorf("%s/%s has no creationTimestamp", it.Kind, it.Name)
					}
					it.CreationTimestamp = ""
				}
				if doc.Kind != "UsesList" || doc.Direction != "users" || len(doc.Warnings) != 0 {
					t.Errorf("document %s, direction %q, warnings %q", doc.Kind, doc.Direction, doc.Warnings)
				}
				if s := doc.Subject; s == nil || s.Kind != tc.kind || s.Name != tc.name || s.Namespace != n.name || s.UID != n.uid(tc.kind+"/"+tc.name) || s.Exists == nil || !*s.Exists {
					t.Errorf("subject %+v, want the existing %s/%s", s, tc.kind, tc.name)
				}
				if diff := cmp.Diff(tc.want, doc.Items); diff != "" {
					t.Errorf("items differ (-want +got):\n%s", diff)
				}
				out := idxOK(t, r, nil, "uses", tc.subject, "-n", n.name)
				tb := parseTables(out)
				if len(tb) != 1 || !slices.Equal(tb[0].cols, []string{"NAMESPACE", "KIND", "NAME", "VIA"}) {
					t.Fatalf("human output:\n%s", out)
				}
				var want [][]string
				for _, it := range tc.want {
					want = append(want, []string{n.name, it.Kind, it.Name, strings.Join(it.Via, ", ")})
				}
				if diff := cmp.Diff(want, tb[0].rows); diff != "" {
					t.Errorf("rows differ (-want +got):\n%s", diff)
				}
				// -A finds the same users (a pod only refers to its own namespace); -o wide
				// has no more columns to show.
				all := idxOK(t, r, nil, "uses", tc.subject, "-n", n.name, "-A")
				wide := idxOK(t, r, nil, "uses", tc.subject, "-n", n.name, "-o", "wide")
				if all != out || wide != out {
					t.Errorf("-A printed\n%s\n-o wide printed\n%s\nwant both\n%s", all, wide, out)
				}
				keep(out, all)
			})
		}
		t.Run("printers", func(t *testing.T) {
			t.Parallel()
			checkFormats(t, r, []string{"deployment.apps/app", "pod/app-0", "pod/sidecar-only"}, "uses", "configmap/app-config", "-n", n.name)
		})
		for _, subject := range []string{"pod/app-0", "deployment/app"} {
			t.Run("uses "+subject, func(t *testing.T) {
				t.Parallel()
				var doc relationList
				if stderr := idxDoc(t, r, &doc, "uses", subject, "-n", n.name); stderr != "" {
					t.Errorf("stderr: %s", stderr)
				}
				kind, name, _ := strings.Cut(subject, "/")
				if doc.Direction != "uses" || doc.Subject == nil || !strings.EqualFold(doc.Subject.Kind, kind) || doc.Subject.Name != name {
					t.Errorf("direction %q, subject %+v", doc.Direction, doc.Subject)
				}
				want := []*relationItem{
					{APIVersion: "v1", Kind: "ConfigMap", Namespace: n.name, Name: "app-config", Via: cmVia, Exists: exists(true)},
					{APIVersion: "v1", Kind: "ConfigMap", Namespace: n.name, Name: "feature-flags", Via: []string{"envFrom app"}, Optional: true, Exists: exists(false)},
					{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: n.name, Name: "data", Via: []string{"volume data"}, Exists: exists(true)},
					{APIVersion: "v1", Kind: "Secret", Namespace: n.name, Name: "app-secret", Via: secretVia, Exists: exists(true)},
					{APIVersion: "v1", Kind: "ServiceAccount", Namespace: n.name, Name: "app", Via: []string{"serviceAccountName"}, Exists: exists(true)},
				}
				if diff := cmp.Diff(want, doc.Items); diff != "" {
					t.Errorf("%s: items differ (-want +got):\n%s", subject, diff)
				}
				out := idxOK(t, r, nil, "uses", subject, "-n", n.name)
				keep(out)
				tb := parseTables(out)
				if len(tb) != 1 || !slices.Equal(tb[0].cols, []string{"NAMESPACE", "KIND", "NAME", "VIA", "EXISTS"}) {
					t.Fatalf("human output:\n%s", out)
				}
				if ex := tb[0].column(t, "EXISTS"); !slices.Equal(ex, []string{"true", "false", "true", "true", "true"}) {
					t.Errorf("EXISTS column %q:\n%s", ex, out)
				}
			})
		}
		t.Run("a missing object that is still referenced", func(t *testing.T) {
			t.Parallel()
			var doc relationList
			stderr := idxDoc(t, r, &doc, "uses", "configmap/feature-flags", "-n", n.name)
			want := "configmap/feature-flags does not exist, yet the objects listed refer to it"
			if !slices.Equal(stderrLines(stderr), []string{"warning: " + want}) || !slices.Equal(doc.Warnings, []string{want}) {
				t.Errorf("stderr %q, warnings %q; want %q", stderr, doc.Warnings, want)
			}
			if doc.Subject == nil || doc.Subject.Exists == nil || *doc.Subject.Exists {
				t.Errorf("subject %+v, want exists: false", doc.Subject)
			}
			if got, want := kindNames(doc), []string{"Deployment/app", "Pod/app-0"}; !slices.Equal(got, want) {
				t.Errorf("items %q, want %q", got, want)
			}
		})
	})
	t.Run("no secret data anywhere", func(t *testing.T) {
		encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
		var runs []string
		for _, args := range [][]string{
			{"uses", "secret/app-secret", "-n", n.name, "-v=10"},
			{"uses", "secret/app-secret", "-n", n.name, "-o", "yaml", "-v=10"},
			{"uses", "pod/app-0", "-n", n.name, "-o", "json", "-v=10"},
			{"uses", "deployment/app", "-n", n.name, "-v=10"},
			{"tree", "secret/app-secret", "-n", n.name, "-o", "json", "-v=10"},
			{"orphans", "-n", n.name, "-v=10"},
		} {
			res := r.idx(t, args...)
			mustSucceed(t, strings.Join(args, " "), res)
			runs = append(runs, res.Stdout+res.Stderr)
		}
		// -v=10 must have logged the requests, or the check below proves nothing.
		if !strings.Contains(runs[0], "/api/v1/namespaces/rel-uses/secrets") {
			t.Errorf("-v=10 did not log the secrets request:\n%s", runs[0])
		}
		for i, out := range append(runs, outputs...) {
			for _, s := range []string{secretValue, encoded} {
				if strings.Contains(out, s) {
					t.Errorf("output %d holds the secret's data %q:\n%s", i, s, out)
				}
			}
		}
	})
}

// TestRelationsOrphans: a ReplicaSet whose Deployment is being deleted with
// propagationPolicy=Orphan (envtest has no garbage collector, so the Deployment stays with
// the orphan finalizer), then after the Deployment is gone; and a pod whose owning Node
// never existed.
func TestRelationsOrphans(t *testing.T) {
	n := newRelNS(t, "rel-orphans")
	lbls := map[string]string{"app": "old"}
	d := n.deployment("old", lbls, 1, 1, nil)
	rs := n.replicaSet("old", "6b7c", lbls, []metav1.OwnerReference{n.controllerOf("apps/v1", "Deployment", "old")}, 1, 1)
	n.pod("old-6b7c-x", rs.Spec.Template.Labels, []metav1.OwnerReference{n.controllerOf("apps/v1", "ReplicaSet", rs.Name)}, true, nil)
	goneNode := types.UID("7d1e2f3a-0000-4000-8000-00000000beef")
	n.pod("stray", nil, []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "gone-node", UID: goneNode, Controller: ptr.To(true)}}, true, nil)
	r := as("")

	orphan := metav1.DeletePropagationOrphan
	n.must("deleting deployment old with orphan propagation",
		env.Clientset.AppsV1().Deployments(n.name).Delete(n.ctx, d.Name, metav1.DeleteOptions{PropagationPolicy: &orphan}))
	t.Cleanup(func() {
		_, _ = env.Clientset.AppsV1().Deployments(n.name).Patch(context.Background(), d.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	got, err := env.Clientset.AppsV1().Deployments(n.name).Get(n.ctx, d.Name, metav1.GetOptions{})
	n.must("reading deployment old", err)
	if got.DeletionTimestamp == nil || !slices.Contains(got.Finalizers, metav1.FinalizerOrphanDependents) {
		t.Fatalf("deployment old: deletionTimestamp %v, finalizers %q; want it held by the orphan finalizer", got.DeletionTimestamp, got.Finalizers)
	}
	deploymentRef := ownerRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: n.name, Name: "old", UID: string(d.UID)}
	strayItem := &relationItem{APIVersion: "v1", Kind: "Pod", Namespace: n.name, Name: "stray", UID: n.uid("Pod/stray"),
		MissingOwners: []ownerRef{{APIVersion: "v1", Kind: "Node", Name: "gone-node", UID: string(goneNode)}}}
	rsItem := &relationItem{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: n.name, Name: rs.Name, UID: n.uid("ReplicaSet/" + rs.Name)}

	check := func(t *testing.T, args []string, want []*relationItem) {
		t.Helper()
		var doc relationList
		if stderr := idxDoc(t, r, &doc, args...); stderr != "" {
			t.Errorf("stderr: %s", stderr)
		}
		if doc.Kind != "OrphanList" || len(doc.Warnings) != 0 {
			t.Errorf("document %s, warnings %q", doc.Kind, doc.Warnings)
		}
		var mine []*relationItem
		for _, it := range doc.Items {
			if it.CreationTimestamp == "" {
				t.Errorf("%s/%s has no creationTimestamp", it.Kind, it.Name)
			}
			it.CreationTimestamp = ""
			if it.Namespace == n.name {
				mine = append(mine, it)
			}
		}
		if diff := cmp.Diff(want, mine); diff != "" {
			t.Errorf("%s: orphans in %s differ (-want +got):\n%s", strings.Join(args, " "), n.name, diff)
		}
	}

	t.Run("owner being deleted with orphan propagation", func(t *testing.T) {
		rs := *rsItem
		rs.OrphaningOwners = []ownerRef{deploymentRef}
		check(t, []string{"orphans", "-n", n.name}, []*relationItem{strayItem, &rs})
		out := idxOK(t, r, nil, "orphans", "-n", n.name)
		tb := maskColumns(t, "orphans", runeTable(out), "AGE")
		want := [][]string{
			{n.name, "Pod", "stray", "Node/gone-node", "OwnerNotFound", "<age>"},
			{n.name, "ReplicaSet", rs.Name, "Deployment/old", "OwnerOrphaning", "<age>"},
		}
		if diff := cmp.Diff(want, tb.rows); diff != "" {
			t.Errorf("rows differ (-want +got):\n%s\n%s", diff, out)
		}
	})

	// The garbage collector's work: strip the finalizer, and the Deployment is gone.
	_, err = env.Clientset.AppsV1().Deployments(n.name).Patch(n.ctx, d.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	n.must("removing the orphan finalizer", err)
	if _, err := env.Clientset.AppsV1().Deployments(n.name).Get(n.ctx, d.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("deployment old still exists: %v", err)
	}
	rsMissing := *rsItem
	rsMissing.MissingOwners = []ownerRef{deploymentRef}

	t.Run("owner gone", func(t *testing.T) {
		t.Parallel()
		check(t, []string{"orphans", "-n", n.name}, []*relationItem{strayItem, &rsMissing})
	})
	t.Run("all namespaces", func(t *testing.T) {
		t.Parallel()
		check(t, []string{"orphans", "-A"}, []*relationItem{strayItem, &rsMissing})
		var doc relationList
		idxDoc(t, r, &doc, "orphans", "-A")
		var legacy []string
		for _, it := range doc.Items {
			if it.Namespace == fixtures.Rollouts && len(it.MissingOwners) == 1 && it.MissingOwners[0].Name == fixtures.DanglingOwner {
				legacy = append(legacy, it.Name)
			}
		}
		if len(legacy) != 2 {
			t.Errorf("orphans -A: the fixture's pods of %s are %q, want two", fixtures.DanglingOwner, legacy)
		}
		out := idxOK(t, r, nil, "orphans", "-A", "-o", "wide")
		if tb := parseTables(out); len(tb) != 1 || len(tb[0].rows) != len(doc.Items) {
			t.Errorf("-o wide: want %d rows:\n%s", len(doc.Items), out)
		}
	})
	t.Run("printers", func(t *testing.T) {
		t.Parallel()
		checkFormats(t, r, []string{"pod/stray", "replicaset.apps/" + rs.Name}, "orphans", "-n", n.name)
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		if out := idxOK(t, r, []string{"No resources found in " + fixtures.EmptyNamespace + " namespace."}, "orphans", "-n", fixtures.EmptyNamespace); out != "" {
			t.Errorf("stdout: %s", out)
		}
		var doc relationList
		idxDoc(t, r, &doc, "orphans", "-n", fixtures.EmptyNamespace)
		if doc.Items == nil || len(doc.Items) != 0 {
			t.Errorf("items %v, want []", doc.Items)
		}
	})
}

// TestRelationsEvents: the events of a Deployment, its ReplicaSet and its pods (one event
// recorded without the object's UID), newest last, without those of an unrelated pod, as
// kubectl events prints them.
func TestRelationsEvents(t *testing.T) {
	n := newRelNS(t, "rel-events")
	lbls := map[string]string{"app": "api"}
	n.deployment("api", lbls, 2, 1, nil)
	n.deployment("quiet", map[string]string{"app": "quiet"}, 0, 0, nil)
	rs := n.replicaSet("api", "7c9d", lbls, []metav1.OwnerReference{n.controllerOf("apps/v1", "Deployment", "api")}, 2, 1)
	rsRef := []metav1.OwnerReference{n.controllerOf("apps/v1", "ReplicaSet", rs.Name)}
	n.pod("api-7c9d-a", rs.Spec.Template.Labels, rsRef, true, nil)
	n.pod("api-7c9d-b", rs.Spec.Template.Labels, rsRef, false, nil)
	n.pod("loner", nil, nil, true, nil)
	// Minutes only: ages of ten minutes and more print without seconds, so kubectl and
	// kubectl-idx agree however far apart they run.
	n.event("e1-scaled", "apps/v1", "Deployment", "api", corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set api-7c9d from 0 to 2", 50*time.Minute, 1, false)
	n.event("e2-created", "apps/v1", "ReplicaSet", rs.Name, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: api-7c9d-a", 49*time.Minute, 1, false)
	n.event("e3-failed", "apps/v1", "ReplicaSet", rs.Name, corev1.EventTypeWarning, "FailedCreate", "Error creating: pods \"api-7c9d-\" is forbidden: exceeded quota", 45*time.Minute, 1, true)
	n.event("e4-pulled", "v1", "Pod", "api-7c9d-a", corev1.EventTypeNormal, "Pulled", "Container image \"busybox:1.36\" already present on machine", 40*time.Minute, 1, false)
	n.event("e5-loner", "v1", "Pod", "loner", corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container", 20*time.Minute, 3, false)
	n.event("e6-backoff", "v1", "Pod", "api-7c9d-b", corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container app", 10*time.Minute, 5, false)
	r := as("")

	names := func(t *testing.T, args ...string) []string {
		t.Helper()
		var list struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Items      []struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"items"`
		}
		mustDecode(t, "output", idxOK(t, r, nil, append(args, "-o", "json")...), &list)
		if list.Kind != "List" || list.APIVersion != "v1" {
			t.Errorf("document %s %s, want v1 List", list.APIVersion, list.Kind)
		}
		var out []string
		for _, it := range list.Items {
			if it.Kind != "Event" {
				t.Errorf("item of kind %s", it.Kind)
			}
			out = append(out, it.Metadata.Name)
		}
		return out
	}
	all := []string{"e1-scaled", "e2-created", "e3-failed", "e4-pulled", "e6-backoff"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"events", "deployment/api", "-n", n.name}, all},
		{[]string{"events", "deployment/api", "-n", n.name, "-A"}, all},
		{[]string{"events", "deployment/api", "-n", n.name, "--types", "Warning"}, []string{"e3-failed", "e6-backoff"}},
		{[]string{"events", "deployment/api", "-n", n.name, "--types", "normal"}, []string{"e1-scaled", "e2-created", "e4-pulled"}},
		{[]string{"events", "deployment/api", "-n", n.name, "--types", "Normal,Warning"}, all},
		{[]string{"events", "rs/" + rs.Name, "-n", n.name}, []string{"e2-created", "e3-failed", "e4-pulled", "e6-backoff"}},
		{[]string{"events", "pod/api-7c9d-b", "-n", n.name}, []string{"e6-backoff"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			if got := names(t, tc.args...); !slices.Equal(got, tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("human, as kubectl events prints them", func(t *testing.T) {
		t.Parallel()
		for _, allNS := range []bool{false, true} {
			args := []string{"events", "deployment/api", "-n", n.name}
			kubectlArgs := []string{"events", "-n", n.name}
			if allNS {
				args = append(args, "-A")
				kubectlArgs = []string{"events", "-A"}
			}
			out := idxOK(t, r, nil, args...)
			ref := r.kubectl(t, kubectlArgs...)
			mustSucceed(t, "kubectl events", ref)
			got, want := parseTables(out), parseTables(ref.Stdout)
			if len(got) != 1 || len(want) != 1 {
				t.Fatalf("want one table each:\n%s\n%s", out, ref.Stdout)
			}
			if !slices.Equal(got[0].cols, want[0].cols) {
				t.Errorf("columns %q, kubectl events %q", got[0].cols, want[0].cols)
			}
			// kubectl's rows of this namespace, less the unrelated pod's.
			var wantRows [][]string
			obj := slices.Index(want[0].cols, "OBJECT")
			nsCol := slices.Index(want[0].cols, "NAMESPACE")
			for _, row := range want[0].rows {
				if row[obj] != "Pod/loner" && (nsCol < 0 || row[nsCol] == n.name) {
					wantRows = append(wantRows, row)
				}
			}
			if diff := cmp.Diff(wantRows, got[0].rows); diff != "" {
				t.Errorf("-A=%v: rows differ (-kubectl events +kubectl-idx):\n%s", allNS, diff)
			}
		}
	})
	t.Run("printers", func(t *testing.T) {
		t.Parallel()
		var wantNames []string
		for _, e := range all {
			wantNames = append(wantNames, "event/"+e)
		}
		checkFormats(t, r, wantNames, "events", "deployment/api", "-n", n.name)
		out := idxOK(t, r, nil, "events", "deployment/api", "-n", n.name, "--types", "Warning", "-o", "custom-columns=REASON:.reason,OBJECT:.involvedObject.name,COUNT:.count", "--no-headers")
		if rows := parseHeaderless(out); !cmp.Equal(rows, [][]string{{"FailedCreate", rs.Name, "1"}, {"BackOff", "api-7c9d-b", "5"}}) {
			t.Errorf("custom-columns printed\n%s", out)
		}
	})
	t.Run("wide is kubectl events' table", func(t *testing.T) {
		t.Parallel()
		human := idxOK(t, r, nil, "events", "deployment/api", "-n", n.name)
		if wide := idxOK(t, r, nil, "events", "deployment/api", "-n", n.name, "-o", "wide"); wide != human {
			t.Errorf("-o wide printed\n%s\nwant\n%s", wide, human)
		}
	})
	t.Run("no events", func(t *testing.T) {
		t.Parallel()
		if out := idxOK(t, r, []string{"No events found in rel-events namespace."}, "events", "deployment/quiet", "-n", n.name); out != "" {
			t.Errorf("stdout: %s", out)
		}
	})
}

// TestRelationsForbiddenType: a user who may read everything in a namespace except
// ReplicaSets gets answers that skip them, with a warning on stderr and in the document; a
// user who cannot list the type of the object asked about gets an error.
func TestRelationsForbiddenType(t *testing.T) {
	n := newRelNS(t, "rel-rbac")
	lbls := map[string]string{"app": "web"}
	n.deployment("web", lbls, 1, 1, func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}}
	})
	rs := n.replicaSet("web", "1a2b", lbls, []metav1.OwnerReference{n.controllerOf("apps/v1", "Deployment", "web")}, 1, 1)
	n.pod("web-1a2b-x", rs.Spec.Template.Labels, []metav1.OwnerReference{n.controllerOf("apps/v1", "ReplicaSet", rs.Name)}, true, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}}
	})
	n.configMap("web-config", nil)
	n.service("web", lbls)
	n.event("web-scaled", "apps/v1", "Deployment", "web", corev1.EventTypeNormal, "ScalingReplicaSet", "Scaled up replica set web-1a2b from 0 to 1", 30*time.Minute, 1, false)

	// Every namespaced type the server serves but replicasets.
	lists, err := env.Clientset.Discovery().ServerPreferredNamespacedResources()
	if err != nil {
		t.Fatal(err)
	}
	byGroup := map[string]sets.Set[string]{}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		for _, res := range l.APIResources {
			if res.Name == "replicasets" || strings.Contains(res.Name, "/") {
				continue
			}
			if byGroup[gv.Group] == nil {
				byGroup[gv.Group] = sets.New[string]()
			}
			byGroup[gv.Group].Insert(res.Name)
		}
	}
	var rules []rbacv1.PolicyRule
	for _, g := range sets.List(sets.KeySet(byGroup)) {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: sets.List(byGroup[g]), Verbs: []string{"get", "list", "watch"}})
	}
	u, err := env.AddRoleUser(n.ctx, "rel-no-replicasets", n.name, rules)
	if err != nil {
		t.Fatal(err)
	}
	r := runner{kubeconfig: u.Kubeconfig}
	forbidden := regexp.MustCompile(`^cannot list replicasets\.apps, the answer may be incomplete: Error from server \(Forbidden\): replicasets\.apps is forbidden: User "rel-no-replicasets" cannot list resource "replicasets" in API group "apps" in the namespace "rel-rbac"`)
	checkWarnings := func(t *testing.T, what, stderr string, docWarnings []string, also ...*regexp.Regexp) {
		t.Helper()
		lines := stderrLines(stderr)
		want := append([]*regexp.Regexp{forbidden}, also...)
		if len(lines) != len(want) {
			t.Fatalf("%s: stderr\n%s\nwant %d warnings", what, stderr, len(want))
		}
		for i, re := range want {
			if !strings.HasPrefix(lines[i], "warning: ") || !re.MatchString(strings.TrimPrefix(lines[i], "warning: ")) {
				t.Errorf("%s: stderr line %q does not match %s", what, lines[i], re)
			}
			if docWarnings != nil && (i >= len(docWarnings) || "warning: "+docWarnings[i] != lines[i]) {
				t.Errorf("%s: document warnings %q, stderr %q: want the same", what, docWarnings, lines)
			}
		}
	}
	// namesPrinted runs verb object -o name in the namespace: it succeeds, warns of the
	// forbidden type alone and prints want.
	namesPrinted := func(t *testing.T, verb, object, want string) {
		t.Helper()
		res := r.idx(t, verb, object, "-n", n.name, "-o", "name")
		mustSucceed(t, verb, res)
		checkWarnings(t, verb, res.Stderr, nil)
		if res.Stdout != want {
			t.Errorf("printed\n%s\nwant\n%s", res.Stdout, want)
		}
	}

	t.Run("tree", func(t *testing.T) {
		t.Parallel()
		var doc treeDoc
		stderr := idxDoc(t, r, &doc, "tree", "deployment/web", "-n", n.name)
		checkWarnings(t, "tree -o json", stderr, doc.Warnings)
		if diff := cmp.Diff([]string{"apps/v1 Deployment rel-rbac/web 1/1 Available"}, treeLines(doc.Root)); diff != "" {
			t.Errorf("tree differs (-want +got):\n%s", diff)
		}
		res := r.idx(t, "tree", "deployment/web", "-n", n.name)
		mustSucceed(t, "tree", res)
		checkWarnings(t, "tree", res.Stderr, nil)
		if !strings.Contains(res.Stdout, "Deployment/web") {
			t.Errorf("stdout does not show the deployment:\n%s", res.Stdout)
		}
	})
	t.Run("owners", func(t *testing.T) {
		t.Parallel()
		var doc treeDoc
		stderr := idxDoc(t, r, &doc, "owners", "pod/web-1a2b-x", "-n", n.name)
		checkWarnings(t, "owners", stderr, doc.Warnings, regexp.MustCompile(`^owner ReplicaSet/web-1a2b cannot be looked up`))
		want := []string{"v1 Pod rel-rbac/web-1a2b-x 1/1 Running", "  apps/v1 ReplicaSet rel-rbac/web-1a2b controller unknown"}
		if diff := cmp.Diff(want, treeLines(doc.Root)); diff != "" {
			t.Errorf("owners differ (-want +got):\n%s", diff)
		}
	})
	t.Run("orphans", func(t *testing.T) {
		t.Parallel()
		var doc relationList
		stderr := idxDoc(t, r, &doc, "orphans", "-n", n.name)
		checkWarnings(t, "orphans", stderr, doc.Warnings, regexp.MustCompile(`^references to owners of kind ReplicaSet\.apps were not checked`))
		if len(doc.Items) != 0 {
			t.Errorf("orphans: %+v", doc.Items)
		}
	})
	t.Run("selected-by", func(t *testing.T) {
		t.Parallel()
		namesPrinted(t, "selected-by", "pod/web-1a2b-x", "service/web\ndeployment.apps/web\n")
	})
	t.Run("uses", func(t *testing.T) {
		t.Parallel()
		var doc relationList
		stderr := idxDoc(t, r, &doc, "uses", "configmap/web-config", "-n", n.name)
		checkWarnings(t, "uses", stderr, doc.Warnings)
		if got, want := kindNames(doc), []string{"Deployment/web", "Pod/web-1a2b-x"}; !slices.Equal(got, want) {
			t.Errorf("items %q, want %q", got, want)
		}
	})
	t.Run("events", func(t *testing.T) {
		t.Parallel()
		namesPrinted(t, "events", "deployment/web", "event/web-scaled\n")
	})
	t.Run("the object's own type cannot be listed", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			r    runner
			args []string
			want string
		}{
			{r, []string{"tree", "rs/" + rs.Name, "-n", n.name}, "error: cannot list replicasets.apps, so replicaset/" + rs.Name + " cannot be found"},
			{r, []string{"owners", "rs/" + rs.Name, "-n", n.name}, "error: cannot list replicasets.apps, so replicaset/" + rs.Name + " cannot be found"},
			{r, []string{"events", "rs/" + rs.Name, "-n", n.name}, "error: cannot list replicasets.apps, so replicaset/" + rs.Name + " cannot be found"},
			{as(narrowUser), []string{"tree", "deployment/web", "-n", fixtures.Shop}, "error: cannot list deployments.apps, so deployment/web cannot be found"},
			{r, []string{"selects", "rs/" + rs.Name, "-n", n.name}, `Error from server (Forbidden): replicasets.apps "` + rs.Name + `" is forbidden: User "rel-no-replicasets" cannot list resource "replicasets" in API group "apps" in the namespace "rel-rbac"`},
		} {
			res := tc.r.idx(t, tc.args...)
			noPanic(t, strings.Join(tc.args, " "), res)
			if res.ExitCode != 1 || res.Stdout != "" || !slices.Equal(stderrLines(res.Stderr), []string{tc.want}) {
				t.Errorf("%s: exit %d, stdout %q, stderr\n%s\nwant exit 1 and the one line\n%s", strings.Join(tc.args, " "), res.ExitCode, res.Stdout, res.Stderr, tc.want)
			}
		}
	})
}

// TestRelationsBadInput: each relation command's errors through the real binary: exit 1,
// nothing on stdout, one line on stderr.
func TestRelationsBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"tree", "deployment/x", "-n", fixtures.Shop}, `Error from server (NotFound): deployments.apps "x" not found`},
		{[]string{"tree", "deployment", "x", "-n", fixtures.Shop}, `Error from server (NotFound): deployments.apps "x" not found`},
		{[]string{"owners", "pod/x", "-n", fixtures.Shop}, `Error from server (NotFound): pods "x" not found`},
		{[]string{"selects", "deployment/x", "-n", fixtures.Shop}, `Error from server (NotFound): deployments.apps "x" not found`},
		{[]string{"selected-by", "pod/x", "-n", fixtures.Shop}, `Error from server (NotFound): pods "x" not found`},
		{[]string{"uses", "configmap/x", "-n", fixtures.Shop}, `Error from server (NotFound): configmaps "x" not found`},
		{[]string{"uses", "pod/x", "-n", fixtures.Shop}, `Error from server (NotFound): pods "x" not found`},
		{[]string{"events", "deployment/x", "-n", fixtures.Shop}, `Error from server (NotFound): deployments.apps "x" not found`},
		{[]string{"tree", "node/x"}, `Error from server (NotFound): nodes "x" not found`},
		// In the context's namespace, not in every one: a namespaced object needs one.
		{[]string{"tree", "deployment/web", "-A"}, `Error from server (NotFound): deployments.apps "web" not found`},
		{[]string{"tree", "deployment", "-n", fixtures.Shop}, `error: you must specify the object to show the tree of as TYPE/NAME, e.g. deployment/NAME; got "deployment"`},
		{[]string{"owners", "web", "-n", fixtures.Shop}, `error: you must specify the object to show the owners of as TYPE/NAME, e.g. web/NAME; got "web"`},
		{[]string{"tree", "-n", fixtures.Shop}, "error: you must specify the object to show the tree of as TYPE/NAME, e.g. deployment/web"},
		{[]string{"tree", "deployment/web/x", "-n", fixtures.Shop}, `error: arguments in resource/name form must have a single resource and name, got "deployment/web/x"`},
		{[]string{"tree", "deploy,po/web", "-n", fixtures.Shop}, `error: you must specify one object to show the tree of, not a list of types: "deploy,po"`},
		{[]string{"events", "deployment/web", "pod/x", "-n", fixtures.Shop}, `error: you must specify one object to list the events of as TYPE/NAME or TYPE NAME, got "deployment/web pod/x"`},
		{[]string{"tree", "podz/x"}, `error: the server doesn't have a resource type "podz"`},
		{[]string{"selects", "configmap/web-config", "-n", fixtures.Shop}, "error: selects needs an object with a pod selector (Service, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, ReplicationController, PodDisruptionBudget, NetworkPolicy); configmap/web-config has none"},
		{[]string{"uses", "service/web", "-n", fixtures.Shop}, "error: uses needs a ConfigMap, Secret, PersistentVolumeClaim or ServiceAccount, or an object with a pod spec (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController, PodTemplate); service/web is neither"},
		{[]string{"events", "deployment/web", "-n", fixtures.Shop, "--types", "Error"}, "error: valid --types are Normal or Warning"},
		{[]string{"orphans", "pods"}, `error: unknown command "pods" for "kubectl idx orphans"`},
		{[]string{"tree", "deployment/web", "-n", fixtures.Shop, "-o", "tree"}, `error: unable to match a printer suitable for the output format "tree", allowed formats are: custom-columns,custom-columns-file,dot,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,mermaid,name,template,templatefile,wide,yaml`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			failsWith(t, as("").idx(t, tc.args...), regexp.QuoteMeta(tc.want), cmdTimeout)
		})
	}
}
