package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	discoveryfake "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// relationAPIResources is the discovery document of the relation tests.
func relationAPIResources() []*metav1.APIResourceList {
	v := metav1.Verbs{"get", "list", "watch"}
	return []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: v, ShortNames: []string{"po"}},
			{Name: "nodes", SingularName: "node", Kind: "Node", Verbs: v, ShortNames: []string{"no"}},
			{Name: "services", SingularName: "service", Namespaced: true, Kind: "Service", Verbs: v, ShortNames: []string{"svc"}},
			{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", Verbs: v, ShortNames: []string{"cm"}},
			{Name: "secrets", SingularName: "secret", Namespaced: true, Kind: "Secret", Verbs: v},
			{Name: "events", SingularName: "event", Namespaced: true, Kind: "Event", Verbs: v, ShortNames: []string{"ev"}},
			{Name: "persistentvolumeclaims", SingularName: "persistentvolumeclaim", Namespaced: true, Kind: "PersistentVolumeClaim", Verbs: v, ShortNames: []string{"pvc"}},
			{Name: "serviceaccounts", SingularName: "serviceaccount", Namespaced: true, Kind: "ServiceAccount", Verbs: v, ShortNames: []string{"sa"}},
		}},
		{GroupVersion: "policy/v1", APIResources: []metav1.APIResource{
			{Name: "poddisruptionbudgets", SingularName: "poddisruptionbudget", Namespaced: true, Kind: "PodDisruptionBudget", Verbs: v, ShortNames: []string{"pdb"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: v, ShortNames: []string{"deploy"}},
			{Name: "replicasets", SingularName: "replicaset", Namespaced: true, Kind: "ReplicaSet", Verbs: v, ShortNames: []string{"rs"}},
		}},
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{
			{Name: "rollouts", SingularName: "rollout", Namespaced: true, Kind: "Rollout", Verbs: v, ShortNames: []string{"ro"}},
		}},
		{GroupVersion: "coordination.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "leases", SingularName: "lease", Namespaced: true, Kind: "Lease", Verbs: v},
		}},
	}
}

const (
	uidDeploy  types.UID = "00000000-0000-0000-0000-0000000000d1"
	uidRS      types.UID = "00000000-0000-0000-0000-0000000000a1"
	uidPod1    types.UID = "00000000-0000-0000-0000-0000000000b1"
	uidPod2    types.UID = "00000000-0000-0000-0000-0000000000b2"
	uidNode    types.UID = "00000000-0000-0000-0000-0000000000c1"
	uidRollo   types.UID = "00000000-0000-0000-0000-0000000000e1"
	uidRolloRS types.UID = "00000000-0000-0000-0000-0000000000e2"
	uidGone    types.UID = "00000000-0000-0000-0000-0000000000ff"
	uidOldDep  types.UID = "00000000-0000-0000-0000-0000000000d2"
)

func ctrlRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
}

func relPod(name string, uid types.UID, phase corev1.PodPhase, owners ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: uid, OwnerReferences: owners},
		Spec:       corev1.PodSpec{NodeName: "worker-1", Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		Status: corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", Ready: phase == corev1.PodRunning, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}}},
	}
}

// relationObjects is a small cluster: Deployment web -> ReplicaSet -> two
// pods, a Rollout (custom resource) owning a ReplicaSet, a Node owning a
// mirror pod, a ReplicaSet whose Deployment is gone and one whose Deployment
// is being deleted with orphan propagation, and events about some of them.
func relationObjects() []runtime.Object {
	now := metav1.NewTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	deleting := metav1.NewTime(now.Add(time.Minute))
	rollout := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Rollout",
		"metadata": map[string]any{"namespace": "shop", "name": "checkout", "uid": string(uidRollo)},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "Paused"}}},
	}}
	ev := func(name string, uid types.UID, kind, obj, typ, reason string, at time.Time) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("ev-" + name)},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "shop", Name: obj, UID: uid},
			Type:           typ, Reason: reason, Message: reason + " happened", Count: 1,
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at),
		}
	}
	return []runtime.Object{
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: uidDeploy, Generation: 1},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
			Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, AvailableReplicas: 2, ObservedGeneration: 1},
		},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: "old", UID: uidOldDep, DeletionTimestamp: &deleting,
			Finalizers: []string{metav1.FinalizerOrphanDependents},
		}},
		&appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-7d9c", UID: uidRS, OwnerReferences: []metav1.OwnerReference{ctrlRef("apps/v1", "Deployment", "web", uidDeploy)}},
			Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2)},
			Status:     appsv1.ReplicaSetStatus{ReadyReplicas: 2},
		},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "checkout-1", UID: uidRolloRS, OwnerReferences: []metav1.OwnerReference{ctrlRef("example.com/v1", "Rollout", "checkout", uidRollo)}}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "legacy-1", UID: "rs-legacy", OwnerReferences: []metav1.OwnerReference{ctrlRef("apps/v1", "Deployment", "legacy", uidGone)}}},
		&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "old-1", UID: "rs-old", OwnerReferences: []metav1.OwnerReference{ctrlRef("apps/v1", "Deployment", "old", uidOldDep)}}},
		relPod("web-7d9c-a", uidPod1, corev1.PodRunning, ctrlRef("apps/v1", "ReplicaSet", "web-7d9c", uidRS)),
		relPod("web-7d9c-b", uidPod2, corev1.PodPending, ctrlRef("apps/v1", "ReplicaSet", "web-7d9c", uidRS)),
		relPod("probe-worker-1", "pod-mirror", corev1.PodRunning, ctrlRef("v1", "Node", "worker-1", uidNode)),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", UID: uidNode}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}},
		rollout,
		ev("e3", uidPod2, "Pod", "web-7d9c-b", corev1.EventTypeWarning, "FailedScheduling", now.Add(3*time.Minute)),
		ev("e1", uidDeploy, "Deployment", "web", corev1.EventTypeNormal, "ScalingReplicaSet", now.Add(time.Minute)),
		ev("e2", "", "ReplicaSet", "web-7d9c", corev1.EventTypeNormal, "SuccessfulCreate", now.Add(2*time.Minute)),
		ev("e4", "other-uid", "Pod", "unrelated", corev1.EventTypeWarning, "BackOff", now.Add(4*time.Minute)),
	}
}

type relationCase struct {
	server     *fakeapi.Server
	allNS      bool
	output     string
	forbidden  []string // resources whose lists fail with Forbidden
	stdout     *strings.Builder
	stderr     *strings.Builder
	namespaces []string // namespaces informers were asked for, per factory
}

func newRelationCase(t *testing.T, output string) *relationCase {
	t.Helper()
	return &relationCase{server: fakeapi.New(nil, relationObjects()...), output: output, stdout: &strings.Builder{}, stderr: &strings.Builder{}}
}

// options returns RelationOptions wired to the fakes, as complete would.
func (c *relationCase) options(t *testing.T) *RelationOptions {
	t.Helper()
	for _, r := range c.forbidden {
		c.server.Metadata.PrependReactor("list", r, func(a clienttesting.Action) (bool, runtime.Object, error) {
			gr := a.GetResource().GroupResource()
			return true, nil, apierrors.NewForbidden(gr, "", errors.New(`User "jane" cannot list resource "`+gr.Resource+`"`))
		})
	}
	dc := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: relationAPIResources()}}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	o := newRelationOptions(nil, genericiooptions.IOStreams{In: strings.NewReader(""), Out: c.stdout, ErrOut: c.stderr})
	*o.PrintFlags.OutputFormat = c.output
	o.SyncTimeout = 20 * time.Second
	o.AllNamespaces = c.allNS
	o.namespace = "shop"
	if c.allNS {
		o.namespace = ""
	}
	o.mapper = restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), dc, func(string) {})
	o.newFactory = func(cfg informer.Config) (*informer.Factory, error) {
		c.namespaces = append(c.namespaces, cfg.Namespace)
		f := informer.NewFactoryWithClients(informer.Clients{Typed: c.server.Typed, Dynamic: c.server.Dynamic, Metadata: c.server.Metadata}, cfg)
		t.Cleanup(f.Shutdown)
		return f, nil
	}
	o.listable = func(namespacedOnly bool) ([]informer.Resource, []error) {
		return informer.ListableResources(dc, namespacedOnly)
	}
	if err := o.complete(nil); err != nil {
		t.Fatalf("complete: %v", err)
	}
	return o
}

func runRelation(t *testing.T, run func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return run(ctx)
}

func decodeTree(t *testing.T, out string) v1alpha1.Tree {
	t.Helper()
	var doc v1alpha1.Tree
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not a tree document: %v\n%s", err, out)
	}
	if doc.APIVersion != v1alpha1.GroupVersion || doc.Warnings == nil {
		t.Errorf("document header: apiVersion %q, warnings %v", doc.APIVersion, doc.Warnings)
	}
	return doc
}

// treeLines flattens a tree document into "depth:Kind/name ready status" lines.
func treeLines(it *v1alpha1.TreeItem, depth int, out *[]string) {
	if it == nil {
		return
	}
	fields := []string{it.Kind + "/" + it.Name}
	for _, f := range []string{it.Ready, it.Status} {
		if f != "" {
			fields = append(fields, f)
		}
	}
	if it.Missing {
		fields = append(fields, "missing")
	}
	*out = append(*out, strings.Repeat(" ", depth)+strings.Join(fields, " "))
	for _, c := range it.Children {
		treeLines(c, depth+1, out)
	}
	for _, c := range it.Owners {
		treeLines(c, depth+1, out)
	}
}

func TestTreeRun(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		allNS     bool
		forbidden []string
		want      []string
		warnings  []string
		wantNS    []string // the namespaces of the factories, in order
	}{
		{
			name: "deployment to pods, with status",
			args: []string{"deployment/web"},
			want: []string{
				"Deployment/web 2/2 Available",
				" ReplicaSet/web-7d9c 2/2",
				"  Pod/web-7d9c-a 1/1 Running",
				"  Pod/web-7d9c-b 0/1 Pending",
			},
			wantNS: []string{"shop"},
		},
		{
			name: "custom resource at the top, TYPE NAME form",
			args: []string{"rollout", "checkout"},
			want: []string{
				"Rollout/checkout False Paused",
				" ReplicaSet/checkout-1 0/1",
			},
			wantNS: []string{"shop"},
		},
		{
			name: "cluster-scoped root searches every namespace",
			args: []string{"node/worker-1"},
			want: []string{"Node/worker-1 True Ready", " Pod/probe-worker-1 1/1 Running"},
			// The mirror pod's status is read from its namespace only.
			wantNS: []string{"", "shop"},
		},
		{
			name:      "a type the user may not list is skipped with a warning",
			args:      []string{"deploy/web"},
			forbidden: []string{"replicasets"},
			want:      []string{"Deployment/web 2/2 Available"},
			warnings:  []string{`cannot list replicasets.apps, the answer may be incomplete: Error from server (Forbidden): replicasets.apps is forbidden: User "jane" cannot list resource "replicasets"`},
			wantNS:    []string{"shop"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newRelationCase(t, "json")
			c.allNS, c.forbidden = tc.allNS, tc.forbidden
			o := &TreeOptions{RelationOptions: c.options(t)}
			var err error
			if o.object, err = o.parseObjectArg("show the tree of", tc.args); err != nil {
				t.Fatal(err)
			}
			if err := runRelation(t, o.Run); err != nil {
				t.Fatalf("Run: %v\nstderr: %s", err, c.stderr)
			}
			doc := decodeTree(t, c.stdout.String())
			if doc.Kind != v1alpha1.TreeKind {
				t.Errorf("kind = %q", doc.Kind)
			}
			var got []string
			treeLines(doc.Root, 0, &got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if !slices.Equal(doc.Warnings, append([]string{}, tc.warnings...)) {
				t.Errorf("warnings = %q, want %q", doc.Warnings, tc.warnings)
			}
			var wantErr string
			for _, w := range tc.warnings {
				wantErr += "warning: " + w + "\n"
			}
			if c.stderr.String() != wantErr {
				t.Errorf("stderr = %q, want %q", c.stderr.String(), wantErr)
			}
			if !slices.Equal(c.namespaces, tc.wantNS) {
				t.Errorf("factories for namespaces %q, want %q", c.namespaces, tc.wantNS)
			}
		})
	}
}

func TestTreeHumanOutput(t *testing.T) {
	c := newRelationCase(t, "")
	o := &TreeOptions{RelationOptions: c.options(t)}
	var err error
	if o.object, err = o.parseObjectArg("show the tree of", []string{"deployment/web"}); err != nil {
		t.Fatal(err)
	}
	if err := runRelation(t, o.Run); err != nil {
		t.Fatal(err)
	}
	want := `NAMESPACE   NAME                    READY   STATUS      AGE
shop        Deployment/web          2/2     Available   
shop        └─ReplicaSet/web-7d9c   2/2                 
shop          ├─Pod/web-7d9c-a      1/1     Running     
shop          └─Pod/web-7d9c-b      0/1     Pending     
`
	if got := c.stdout.String(); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
}

func TestRelationObjectErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "you must specify the object to show the tree of as TYPE/NAME, e.g. deployment/web"},
		{[]string{"deployment"}, `you must specify the object to show the tree of as TYPE/NAME, e.g. deployment/NAME; got "deployment"`},
		{[]string{"deployment/"}, `arguments in resource/name form must have a single resource and name, got "deployment/"`},
		{[]string{"deployment/a/b"}, `arguments in resource/name form must have a single resource and name, got "deployment/a/b"`},
		{[]string{"deployment/a", "pod/b"}, `you must specify one object to show the tree of as TYPE/NAME or TYPE NAME, got "deployment/a pod/b"`},
		{[]string{"deploy,po/x"}, `you must specify one object to show the tree of, not a list of types: "deploy,po"`},
		{[]string{"podz/x"}, `the server doesn't have a resource type "podz"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c := newRelationCase(t, "")
			o := c.options(t)
			_, err := o.parseObjectArg("show the tree of", tc.args)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestTreeNotFound(t *testing.T) {
	c := newRelationCase(t, "")
	o := &TreeOptions{RelationOptions: c.options(t)}
	var err error
	if o.object, err = o.parseObjectArg("show the tree of", []string{"deployment/x"}); err != nil {
		t.Fatal(err)
	}
	err = runRelation(t, o.Run)
	if got := FormatError(err); got != `Error from server (NotFound): deployments.apps "x" not found` {
		t.Errorf("error = %q", got)
	}
	if c.stdout.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", c.stdout)
	}
}

func TestOwnersRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"pod up to its deployment", []string{"pod/web-7d9c-a"}, []string{
			"Pod/web-7d9c-a 1/1 Running", " ReplicaSet/web-7d9c 2/2", "  Deployment/web 2/2 Available",
		}},
		{"mirror pod owned by a node", []string{"pod/probe-worker-1"}, []string{
			"Pod/probe-worker-1 1/1 Running", " Node/worker-1 True Ready",
		}},
		{"custom resource owner", []string{"rs/checkout-1"}, []string{
			"ReplicaSet/checkout-1 0/1", " Rollout/checkout False Paused",
		}},
		{"missing owner", []string{"rs/legacy-1"}, []string{
			"ReplicaSet/legacy-1 0/1", " Deployment/legacy missing",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newRelationCase(t, "json")
			o := &OwnersOptions{RelationOptions: c.options(t)}
			var err error
			if o.object, err = o.parseObjectArg("show the owners of", tc.args); err != nil {
				t.Fatal(err)
			}
			if err := runRelation(t, o.Run); err != nil {
				t.Fatalf("Run: %v", err)
			}
			doc := decodeTree(t, c.stdout.String())
			if doc.Kind != v1alpha1.OwnerTreeKind {
				t.Errorf("kind = %q", doc.Kind)
			}
			var got []string
			treeLines(doc.Root, 0, &got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("owners:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(doc.Root.Owners) > 0 && !doc.Root.Owners[0].Controller {
				t.Errorf("the direct owner is not marked as controller")
			}
		})
	}
}

func TestOrphansRun(t *testing.T) {
	for _, allNS := range []bool{false, true} {
		c := newRelationCase(t, "json")
		c.allNS = allNS
		o := &OrphansOptions{RelationOptions: c.options(t)}
		if err := runRelation(t, o.Run); err != nil {
			t.Fatalf("Run: %v", err)
		}
		var doc v1alpha1.RelationList
		if err := json.Unmarshal([]byte(c.stdout.String()), &doc); err != nil {
			t.Fatalf("%v\n%s", err, c.stdout)
		}
		var got []string
		for _, it := range doc.Items {
			line := it.Kind + "/" + it.Name
			for _, r := range it.MissingOwners {
				line += " missing:" + r.Kind + "/" + r.Name
			}
			for _, r := range it.OrphaningOwners {
				line += " orphaning:" + r.Kind + "/" + r.Name
			}
			got = append(got, line)
		}
		want := []string{"ReplicaSet/legacy-1 missing:Deployment/legacy", "ReplicaSet/old-1 orphaning:Deployment/old"}
		if !slices.Equal(got, want) {
			t.Errorf("allNamespaces=%v: orphans = %q, want %q", allNS, got, want)
		}
		if doc.Kind != v1alpha1.OrphanListKind || doc.Warnings == nil {
			t.Errorf("document kind %q warnings %v", doc.Kind, doc.Warnings)
		}
	}
}

func TestEventsRun(t *testing.T) {
	tests := []struct {
		types []string
		want  []string
	}{
		{nil, []string{"ScalingReplicaSet", "SuccessfulCreate", "FailedScheduling"}},
		{[]string{"warning"}, []string{"FailedScheduling"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.types, ","), func(t *testing.T) {
			c := newRelationCase(t, "json")
			o := &EventsOptions{RelationOptions: c.options(t), Types: tc.types}
			var err error
			if o.object, err = o.parseObjectArg("list the events of", []string{"deployment/web"}); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := runRelation(t, o.Run); err != nil {
				t.Fatalf("Run: %v", err)
			}
			var list struct {
				Items []corev1.Event `json:"items"`
			}
			if err := json.Unmarshal([]byte(c.stdout.String()), &list); err != nil {
				t.Fatalf("%v\n%s", err, c.stdout)
			}
			var got []string
			for _, e := range list.Items {
				got = append(got, e.Reason)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("events = %q, want %q (newest last)", got, tc.want)
			}
		})
	}
	o := &EventsOptions{RelationOptions: &RelationOptions{}, Types: []string{"Normal", "Bogus"}}
	if err := o.Validate(); err == nil || err.Error() != "valid --types are Normal or Warning" {
		t.Errorf("Validate = %v", err)
	}
}

// TestEventsForbiddenType: a type the user may not list costs the events of
// what lies under it and a warning, not the answer.
func TestEventsForbiddenType(t *testing.T) {
	c := newRelationCase(t, "name")
	c.forbidden = []string{"replicasets"}
	o := &EventsOptions{RelationOptions: c.options(t)}
	var err error
	if o.object, err = o.parseObjectArg("list the events of", []string{"deployment/web"}); err != nil {
		t.Fatal(err)
	}
	if err := runRelation(t, o.Run); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := c.stdout.String(), "event/e1\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	want := `warning: cannot list replicasets.apps, the answer may be incomplete: Error from server (Forbidden): replicasets.apps is forbidden: User "jane" cannot list resource "replicasets"` + "\n"
	if got := c.stderr.String(); got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
}

func TestEventsHumanOutput(t *testing.T) {
	c := newRelationCase(t, "")
	o := &EventsOptions{RelationOptions: c.options(t), Types: []string{"Warning"}}
	var err error
	if o.object, err = o.parseObjectArg("list the events of", []string{"deployment/web"}); err != nil {
		t.Fatal(err)
	}
	if err := runRelation(t, o.Run); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(c.stdout.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "LAST SEEN") ||
		!strings.Contains(lines[1], "Warning   FailedScheduling   Pod/web-7d9c-b   FailedScheduling happened") {
		t.Errorf("stdout:\n%s", c.stdout)
	}
}

// selectionObjects add selectors and references to relationObjects: Service
// web (app=web), a PDB over app=web, one over everything, a Service without
// selector; pods referring to a ConfigMap and a Secret.
func selectionObjects() []runtime.Object {
	objs := relationObjects()
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && strings.HasPrefix(p.Name, "web-") {
			p.Labels = map[string]string{"app": "web"}
			p.Spec.ServiceAccountName = "web"
			p.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}
			p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}}
		}
		if d, ok := o.(*appsv1.Deployment); ok && d.Name == "web" {
			d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
			d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}
		}
	}
	return append(objs,
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "external"}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
		&policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "all"}, Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "app-config"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"password": []byte("hunter2-secret-value")}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}},
	)
}

func listNames(t *testing.T, out string) []string {
	t.Helper()
	var list struct {
		Items []struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("stdout is not a List: %v\n%s", err, out)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Kind+"/"+it.Metadata.Name)
	}
	return names
}

func TestSelectsRun(t *testing.T) {
	tests := []struct {
		name    string
		inverse bool
		args    []string
		want    []string
		stderr  string
	}{
		{name: "service", args: []string{"svc/web"}, want: []string{"Pod/web-7d9c-a", "Pod/web-7d9c-b"}},
		{name: "deployment", args: []string{"deployment/web"}, want: []string{"Pod/web-7d9c-a", "Pod/web-7d9c-b"}},
		{name: "empty pdb selects every pod", args: []string{"pdb/all"}, want: []string{"Pod/probe-worker-1", "Pod/web-7d9c-a", "Pod/web-7d9c-b"},
			stderr: "warning: poddisruptionbudget/all selects every pod in namespace shop\n"},
		{name: "service without selector", args: []string{"svc/external"}, want: nil,
			stderr: "warning: service/external has no selector, so it selects no pods\n"},
		{name: "selected-by", inverse: true, args: []string{"pod/web-7d9c-a"}, want: []string{
			"Service/web", "Deployment/web", "PodDisruptionBudget/all", "PodDisruptionBudget/web",
		}},
		{name: "selected-by a pod without labels", inverse: true, args: []string{"pod/probe-worker-1"}, want: []string{"PodDisruptionBudget/all"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newRelationCase(t, "json")
			c.server = fakeapi.New(nil, selectionObjects()...)
			o := &SelectsOptions{RelationOptions: c.options(t), inverse: tc.inverse}
			var err error
			if o.object, err = o.parseObjectArg("select", tc.args); err != nil {
				t.Fatal(err)
			}
			if err := runRelation(t, o.Run); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := listNames(t, c.stdout.String()); !slices.Equal(got, tc.want) {
				t.Errorf("objects = %q, want %q", got, tc.want)
			}
			if c.stderr.String() != tc.stderr {
				t.Errorf("stderr = %q, want %q", c.stderr, tc.stderr)
			}
		})
	}
}

func TestSelectsRejectsKindsWithoutSelector(t *testing.T) {
	c := newRelationCase(t, "")
	o := &SelectsOptions{RelationOptions: c.options(t)}
	err := o.Complete(nil, []string{"configmap/app-config"})
	if err == nil {
		err = o.Validate()
	}
	want := "selects needs an object with a pod selector (Service, Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, ReplicationController, PodDisruptionBudget, NetworkPolicy); configmap/app-config has none"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestUsesRun(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // kind/name via... [exists]
	}{
		{"configmap users", []string{"configmap/app-config"}, []string{
			"Deployment/web volume config", "Pod/web-7d9c-a volume config", "Pod/web-7d9c-b volume config",
		}},
		{"secret users", []string{"secret/db"}, []string{"Pod/web-7d9c-a env app/PASSWORD", "Pod/web-7d9c-b env app/PASSWORD"}},
		{"what a pod uses", []string{"pod/web-7d9c-a"}, []string{
			"ConfigMap/app-config volume config true", "Secret/db env app/PASSWORD true", "ServiceAccount/web serviceAccountName true",
		}},
		{"what a template uses, missing service account", []string{"deployment/web"}, []string{
			"ConfigMap/app-config volume config true", "ServiceAccount/default serviceAccountName (default) false",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newRelationCase(t, "json")
			c.server = fakeapi.New(nil, selectionObjects()...)
			o := &UsesOptions{RelationOptions: c.options(t)}
			var err error
			if o.object, err = o.parseObjectArg("show the uses of", tc.args); err != nil {
				t.Fatal(err)
			}
			if err := runRelation(t, o.Run); err != nil {
				t.Fatalf("Run: %v", err)
			}
			if strings.Contains(c.stdout.String()+c.stderr.String(), "hunter2") {
				t.Fatalf("secret data in the output:\n%s", c.stdout)
			}
			var doc v1alpha1.RelationList
			if err := json.Unmarshal([]byte(c.stdout.String()), &doc); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range doc.Items {
				line := it.Kind + "/" + it.Name + " " + strings.Join(it.Via, ",")
				if it.Exists != nil {
					line += " " + fmt.Sprint(*it.Exists)
				}
				got = append(got, line)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestUsesErrors(t *testing.T) {
	c := newRelationCase(t, "")
	c.server = fakeapi.New(nil, selectionObjects()...)
	o := &UsesOptions{RelationOptions: c.options(t)}
	err := o.Complete(nil, []string{"svc/web"})
	if err == nil {
		err = o.Validate()
	}
	if err == nil || !strings.HasSuffix(err.Error(), "; service/web is neither") {
		t.Errorf("uses svc/web: %v", err)
	}
	if o.object, err = o.parseObjectArg("show the uses of", []string{"secret/nope"}); err != nil {
		t.Fatal(err)
	}
	if err := runRelation(t, o.Run); FormatError(err) != `Error from server (NotFound): secrets "nope" not found` {
		t.Errorf("uses secret/nope: %v", FormatError(err))
	}
}

// TestListsEvents: `kubectl idx events` without an object lists Event objects
// (the root command's type), with one it is the events subcommand.
func TestListsEvents(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"events"}, true},
		{[]string{"events", "-n", "shop", "-o", "json"}, true},
		{[]string{"-n", "shop", "events", "-A"}, true},
		{[]string{"events", "-l", "app=web", "--sort-by", ".lastTimestamp"}, true},
		{[]string{"events", "deployment/web", "-n", "shop"}, false},
		{[]string{"events", "-n", "shop", "deployment", "web"}, false},
		{[]string{"events", "--types", "Warning"}, false},
		{[]string{"events", "--help"}, false},
		{[]string{"events,pods", "-A"}, false},
		{[]string{"pods", "-A"}, false},
		{[]string{"tree", "deployment/web"}, false},
		{[]string{"__complete", "events", ""}, false},
	}
	for _, tc := range tests {
		if got := listsEvents(tc.args); got != tc.want {
			t.Errorf("listsEvents(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestSelectsSortBy(t *testing.T) {
	c := newRelationCase(t, "json")
	c.server = fakeapi.New(nil, selectionObjects()...)
	ro := c.options(t)
	*ro.PrintFlags.HumanReadableFlags.SortBy = "{.status.phase}"
	o := &SelectsOptions{RelationOptions: ro}
	o.sortable = true
	var err error
	if o.object, err = o.parseObjectArg("select", []string{"svc/web"}); err != nil {
		t.Fatal(err)
	}
	if err := runRelation(t, o.Run); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := listNames(t, c.stdout.String()), []string{"Pod/web-7d9c-b", "Pod/web-7d9c-a"}; !slices.Equal(got, want) {
		t.Errorf("sorted by phase: %q, want %q (Pending before Running)", got, want)
	}
}
