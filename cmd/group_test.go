package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// TestGroupFlagsAndValidation runs the group-by flags through the root command:
// each bad combination fails with kubectl-style wording before any list or
// watch, and prints nothing (Execute prints the error once).
func TestGroupFlagsAndValidation(t *testing.T) {
	const (
		never     = "never"     // the server must not be contacted
		discovery = "discovery" // only discovery may be asked
	)
	tests := []struct {
		name    string
		args    []string
		server  string
		wantErr string
	}{
		{
			name: "two groupings", args: []string{"pods", "--by-owner", "--by-node"}, server: discovery,
			wantErr: "--by-owner and --by-node cannot be used together: choose one grouping",
		},
		{
			name: "three groupings", args: []string{"pods", "--by-namespace", "--by-label", "app", "--by", "{.spec.nodeName}"}, server: discovery,
			wantErr: "--by-label and --by-namespace and --by cannot be used together: choose one grouping",
		},
		{
			name: "--by-label with an empty value", args: []string{"pods", "--by-label="}, server: discovery,
			wantErr: "--by-label needs a label key, e.g. --by-label app",
		},
		{
			name: "--by-label with a blank value", args: []string{"pods", "--by-label", " "}, server: discovery,
			wantErr: "--by-label needs a label key, e.g. --by-label app",
		},
		{
			name: "--by-label without a value", args: []string{"pods", "--by-label"}, server: never,
			wantErr: "flag needs an argument: --by-label",
		},
		{
			name: "--by without a value", args: []string{"pods", "--by"}, server: never,
			wantErr: "flag needs an argument: --by",
		},
		{
			name: "--by with an empty expression", args: []string{"pods", "--by="}, server: discovery,
			wantErr: "invalid JSONPath in --by: empty JSONPath expression",
		},
		{
			name: "--by with an invalid JSONPath", args: []string{"pods", "--by", "{.spec.containers[}"}, server: discovery,
			wantErr: `invalid JSONPath in --by: invalid JSONPath expression "{.spec.containers[}": unterminated array`,
		},
		{
			name: "--by-node on deployments", args: []string{"deploy", "--by-node"}, server: discovery,
			wantErr: "--by-node groups objects by the node they run on; deployments.apps have no node (use it with pods)",
		},
		{
			name: "--by-node on pods and services", args: []string{"pods,svc", "--by-node"}, server: discovery,
			wantErr: "--by-node groups objects by the node they run on; services have no node (use it with pods)",
		},
		{
			name: "--include-completed without a grouping", args: []string{"pods", "--include-completed"}, server: discovery,
			wantErr: "--include-completed only applies to --by-node",
		},
		{
			name: "--include-completed with another grouping", args: []string{"pods", "--by-owner", "--include-completed"}, server: discovery,
			wantErr: "--include-completed only applies to --by-node",
		},
		{
			name: "--sort-by with a grouping", args: []string{"pods", "--by-namespace", "--sort-by", "{.metadata.name}"}, server: discovery,
			wantErr: "--sort-by cannot be used with grouping: groups and their members are sorted by key and name",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := unreachableKubeconfig(t)
			if tc.server == discovery {
				kubeconfig = discoveryServer(t)
			}
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			root := NewCmdRoot(streams)
			// The connection flags go first: a flag missing its value must be
			// the last argument, or pflag takes the next one as the value.
			root.SetArgs(append([]string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, tc.args...))
			root.SetOut(streams.Out)
			root.SetErr(streams.ErrOut)
			err := root.ExecuteContext(context.Background())
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("error = %v\nwant    %s", err, tc.wantErr)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr = %q, want nothing (errors are printed once, by Execute)", errOut)
			}
		})
	}
}

// TestGroupExecuteExitCode: a grouping error is one line on stderr and exit 1.
func TestGroupExecuteExitCode(t *testing.T) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	code := Execute(streams, []string{"pods", "--by-owner", "--by-node", "--kubeconfig", discoveryServer(t), "--cache-dir", t.TempDir()})
	if code != 1 {
		t.Errorf("exit code = %d, want 1", code)
	}
	if got, want := errOut.String(), "error: --by-owner and --by-node cannot be used together: choose one grouping\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	if out.Len() != 0 {
		t.Errorf("stdout = %q, want nothing", out)
	}
}

// Fixtures of the group Run tests.

type podOpt func(*corev1.Pod)

// groupPod is a pod created 49 hours ago, Running and ready unless an option
// says otherwise, with one container "app" (nginx:1.27, no requests).
func groupPod(namespace, name, node string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, UID: types.UID("uid-pod-" + namespace + "-" + name),
			CreationTimestamp: metav1.NewTime(time.Now().Add(-49 * time.Hour)),
		},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "default", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	phase(corev1.PodRunning, true)(p)
	for _, o := range opts {
		o(p)
	}
	return p
}

// phase sets the pod's phase and a matching status for each container.
func phase(ph corev1.PodPhase, ready bool) podOpt {
	return func(p *corev1.Pod) {
		readyCond := corev1.ConditionFalse
		if ready {
			readyCond = corev1.ConditionTrue
		}
		p.Status = corev1.PodStatus{Phase: ph, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: readyCond}}}
		for _, c := range p.Spec.Containers {
			cs := corev1.ContainerStatus{Name: c.Name, Ready: ready}
			switch ph {
			case corev1.PodRunning:
				cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now().Add(-48 * time.Hour))}
			case corev1.PodSucceeded:
				cs.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed"}
			default:
				cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
			}
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
		}
	}
}

func labelled(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

// containers replaces the containers: name=image:cpu:memory, cpu and memory
// optional. Call it before phase.
func containers(specs ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers = nil
		for _, s := range specs {
			name, rest, _ := strings.Cut(s, "=")
			parts := strings.Split(rest, ":")
			c := corev1.Container{Name: name, Image: parts[0] + ":" + parts[1]}
			if len(parts) == 4 {
				c.Resources.Requests = corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse(parts[2]),
					corev1.ResourceMemory: resource.MustParse(parts[3]),
				}
			}
			p.Spec.Containers = append(p.Spec.Containers, c)
		}
	}
}

func serviceAccount(sa string) podOpt {
	return func(p *corev1.Pod) { p.Spec.ServiceAccountName = sa }
}

func controlledBy(apiVersion, kind, name string, uid types.UID) podOpt {
	return func(p *corev1.Pod) {
		p.OwnerReferences = append(p.OwnerReferences, controllerRef(apiVersion, kind, name, uid))
	}
}

func controllerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}
}

func groupNode(name string, ready corev1.ConditionStatus, cordoned bool, cpu, mem string, roles ...string) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-node-" + name), Labels: map[string]string{"kubernetes.io/hostname": name}, CreationTimestamp: metav1.NewTime(time.Now().Add(-100 * time.Hour))},
		Spec:       corev1.NodeSpec{Unschedulable: cordoned},
		Status: corev1.NodeStatus{
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)},
		},
	}
	for _, r := range roles {
		n.Labels["node-role.kubernetes.io/"+r] = ""
	}
	return n
}

// nodeObjects is the cluster of the --by-node, --by-label, --by-namespace and
// --by cases: three nodes (one cordoned, one NotReady without pods) and pods
// in shop and other, one of them bound to a node that no longer exists.
func nodeObjects() []runtime.Object {
	web := containers("nginx=nginx:1.27:500m:512Mi", "log-shipper=fluent/fluent-bit:3.2:20m:32Mi")
	return []runtime.Object{
		groupNode("worker-1", corev1.ConditionTrue, false, "3920m", "15184716Ki", "worker"),
		groupNode("worker-2", corev1.ConditionTrue, true, "2", "4Gi", "worker"),
		groupNode("worker-3", corev1.ConditionFalse, false, "4", "8Gi"),
		groupPod("shop", "web-0", "worker-1", web, phase(corev1.PodRunning, true), labelled("app", "web"), serviceAccount("web")),
		groupPod("shop", "web-1", "worker-2", web, phase(corev1.PodRunning, true), labelled("app", "web"), serviceAccount("web")),
		groupPod("shop", "api-0", "worker-1", containers("api=ghcr.io/acme/api:v2:250m:256Mi"), phase(corev1.PodRunning, false), labelled("app", "api")),
		groupPod("shop", "backup-29000", "worker-1", containers("backup=postgres:16:1:1Gi"), phase(corev1.PodSucceeded, false), labelled("app", "backup", "job", "")),
		groupPod("shop", "queued", "", containers("worker=ghcr.io/acme/worker:v2:2:24Gi"), phase(corev1.PodPending, false), labelled("app", "worker")),
		groupPod("shop", "stranded", "worker-9", containers("app=nginx:1.27:100m:64Mi"), phase(corev1.PodRunning, true)),
		groupPod("other", "db-0", "worker-1", containers("db=postgres:16:1:1Gi"), phase(corev1.PodRunning, true), labelled("app", "db")),
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{"app": "web"}, CreationTimestamp: metav1.NewTime(time.Now().Add(-49 * time.Hour))},
			Spec:       appsv1.DeploymentSpec{Replicas: ptrInt32(2)},
			Status:     appsv1.DeploymentStatus{Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2},
		},
		runService("shop", "web"),
	}
}

func ptrInt32(v int32) *int32 { return &v }

// withoutPods returns objs less the pods named.
func withoutPods(objs []runtime.Object, names ...string) []runtime.Object {
	var out []runtime.Object
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok && slices.Contains(names, p.Name) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// UIDs of the owner cluster.
const (
	uidDeployWeb  = types.UID("uid-deploy-web")
	uidRSWeb      = types.UID("uid-rs-web")
	uidRollout    = types.UID("uid-rollout-canary")
	uidRSCanary   = types.UID("uid-rs-canary")
	uidNodeWorker = types.UID("uid-node-worker-1")
	uidRSGone     = types.UID("uid-rs-gone")
	uidWidget     = types.UID("uid-widget")
)

var rolloutGVK = schema.GroupVersionKind{Group: "example.com", Version: "v1alpha1", Kind: "Rollout"}

// ownerObjects is the cluster of the --by-owner cases, all in shop: a
// Deployment's ReplicaSet and pods, a custom Rollout's ReplicaSet and pod, a
// pod owned by its Node (a mirror pod), a pod whose ReplicaSet is gone, a pod
// owned by a kind the server does not serve, a bare pod and a pod with only a
// plain (non-controller) owner reference.
func ownerObjects() []runtime.Object {
	created := metav1.NewTime(time.Now().Add(-49 * time.Hour))
	rollout := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"replicas": int64(1)}}}
	rollout.SetGroupVersionKind(rolloutGVK)
	rollout.SetNamespace("shop")
	rollout.SetName("canary")
	rollout.SetUID(uidRollout)
	rollout.SetCreationTimestamp(created)
	rs := func(name string, uid types.UID, owner metav1.OwnerReference) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: name, UID: uid, CreationTimestamp: created,
			OwnerReferences: []metav1.OwnerReference{owner},
		}}
	}
	node := groupNode("worker-1", corev1.ConditionTrue, false, "4", "16Gi", "worker")
	node.UID = uidNodeWorker
	plain := controllerRef("apps/v1", "ReplicaSet", "web-5d4", uidRSWeb)
	plain.Controller = nil
	return []runtime.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: uidDeployWeb, CreationTimestamp: created}},
		rs("web-5d4", uidRSWeb, controllerRef("apps/v1", "Deployment", "web", uidDeployWeb)),
		groupPod("shop", "web-5d4-aaaaa", "worker-1", controlledBy("apps/v1", "ReplicaSet", "web-5d4", uidRSWeb), labelled("app", "web")),
		groupPod("shop", "web-5d4-bbbbb", "worker-1", controlledBy("apps/v1", "ReplicaSet", "web-5d4", uidRSWeb), labelled("app", "web"), phase(corev1.PodRunning, false)),
		rollout,
		rs("canary-7f9", uidRSCanary, controllerRef("example.com/v1alpha1", "Rollout", "canary", uidRollout)),
		groupPod("shop", "canary-7f9-ccccc", "worker-1", controlledBy("apps/v1", "ReplicaSet", "canary-7f9", uidRSCanary)),
		node,
		groupPod("shop", "static-web-worker-1", "worker-1", controlledBy("v1", "Node", "worker-1", uidNodeWorker)),
		groupPod("shop", "orphan-ddddd", "worker-1", controlledBy("apps/v1", "ReplicaSet", "gone-6b8", uidRSGone)),
		groupPod("shop", "widget-eeeee", "worker-1", controlledBy("widgets.example.com/v1", "Widget", "w", uidWidget)),
		groupPod("shop", "debug", "worker-1"),
		groupPod("shop", "adopted", "worker-1", func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{plain} }),
	}
}

// ownerMapper is the REST mapper of the owner cluster: what discovery would
// say about the kinds owner references name. Widget is not served.
func ownerMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, meta.RESTScopeRoot)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m.Add(rolloutGVK, meta.RESTScopeNamespace)
	return m
}

// forbidReplicaSets makes listing replicasets fail as RBAC would.
func forbidReplicaSets(s *fakeapi.Server) {
	s.Metadata.PrependReactor("list", "replicasets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "",
			errors.New(`User "jane" cannot list resource "replicasets" in API group "apps" in the namespace "shop"`))
	})
}

const forbiddenWarning = `owners above ReplicaSet.apps are unknown: replicasets.apps is forbidden: User "jane" cannot list resource "replicasets" in API group "apps" in the namespace "shop"`

// groupDoc decodes -o json output of a group-by query.
type groupDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	GroupBy    string `json:"groupBy"`
	Expression string `json:"expression"`
	Groups     []struct {
		Name    string                      `json:"name"`
		Key     v1alpha1.GroupKey           `json:"key"`
		Summary v1alpha1.GroupSummary       `json:"summary"`
		Items   []unstructured.Unstructured `json:"items"`
	} `json:"groups"`
	Warnings []string `json:"warnings"`
}

func decodeGroupDoc(t *testing.T, stdout string) groupDoc {
	t.Helper()
	var doc groupDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if doc.APIVersion != v1alpha1.GroupVersion || doc.Kind != v1alpha1.GroupListKind {
		t.Errorf("document is %s %s, want %s %s", doc.APIVersion, doc.Kind, v1alpha1.GroupVersion, v1alpha1.GroupListKind)
	}
	if doc.Warnings == nil {
		t.Errorf("warnings is not an array:\n%s", stdout)
	}
	return doc
}

// members returns each group's member names (kind/name with several kinds),
// by group name, in order.
func (d groupDoc) members() map[string][]string {
	out := map[string][]string{}
	for _, g := range d.Groups {
		out[g.Name] = []string{}
		for _, it := range g.Items {
			out[g.Name] = append(out[g.Name], it.GetName())
		}
	}
	return out
}

func (d groupDoc) names() []string {
	var out []string
	for _, g := range d.Groups {
		out = append(out, g.Name)
	}
	return out
}

func (d groupDoc) group(t *testing.T, name string) int {
	t.Helper()
	for i, g := range d.Groups {
		if g.Name == name {
			return i
		}
	}
	t.Fatalf("no group %q in %q", name, d.names())
	return -1
}

func TestGroupRun(t *testing.T) {
	byLabel := func(key string) GroupFlags { return GroupFlags{ByLabel: key, byLabelSet: true} }
	byPath := func(expr string) GroupFlags { return GroupFlags{ByJSONPath: expr, byJSONPathSet: true} }
	tests := []struct {
		name    string
		args    []string
		flags   runFlags
		group   GroupFlags
		objects []runtime.Object // default nodeObjects()
		setup   func(s *fakeapi.Server)

		wantOut    string // exact stdout, unless golden or check is set
		golden     string // stdout golden file under testdata/
		check      func(t *testing.T, stdout string)
		wantErrOut string
		wantErr    string // FormatError of Run's error
	}{
		// --by-label
		{name: "by label", args: []string{"pods"}, group: byLabel("app"), golden: "testdata/group_by_label.golden"},
		{
			name: "by label, several types", args: []string{"deploy,svc,pods"}, group: byLabel("app"),
			golden: "testdata/group_by_label_types.golden",
			check: func(t *testing.T, stdout string) {
				// Within a group, types come in the order they were asked
				// for, as kubectl get deploy,svc,pods prints them.
				var kinds []string
				for _, line := range strings.Split(stdout, "\n") {
					if line == "" {
						continue
					}
					if !strings.HasPrefix(line, "  ") {
						kinds = append(kinds, "|") // a group header
						continue
					}
					if f := strings.Fields(line); len(f) > 0 && f[0] != "NAME" {
						kind, _, _ := strings.Cut(f[0], "/")
						if kinds[len(kinds)-1] != kind {
							kinds = append(kinds, kind)
						}
					}
				}
				got := strings.Join(kinds, " ")
				want := "| pod | pod | deployment.apps pod | pod | service pod"
				if got != want {
					t.Errorf("order of types per group: %s\nwant:                        %s", got, want)
				}
			},
		},
		{
			name: "by label, names", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{format: "name"},
			wantOut: "app=api pod/api-0\napp=backup pod/backup-29000\napp=web pod/web-0\napp=web pod/web-1\napp=worker pod/queued\n<none> pod/stranded\n",
		},
		{
			name: "by label, an empty value is a value", args: []string{"pods"}, group: byLabel("job"), flags: runFlags{format: "name"},
			wantOut: "job= pod/backup-29000\n<none> pod/api-0\n<none> pod/queued\n<none> pod/stranded\n<none> pod/web-0\n<none> pod/web-1\n",
		},
		{
			name: "by label, json", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{format: "json"},
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				if doc.GroupBy != "label" || doc.Expression != "app" {
					t.Errorf("groupBy %q expression %q, want label app", doc.GroupBy, doc.Expression)
				}
				want := map[string][]string{
					"app=api": {"api-0"}, "app=backup": {"backup-29000"}, "app=web": {"web-0", "web-1"},
					"app=worker": {"queued"}, "<none>": {"stranded"},
				}
				if got := doc.members(); !reflect.DeepEqual(got, want) {
					t.Errorf("members = %v, want %v", got, want)
				}
				web := doc.Groups[doc.group(t, "app=web")]
				if web.Key.Value == nil || *web.Key.Value != "web" || web.Key.None {
					t.Errorf("app=web key = %+v", web.Key)
				}
				if !doc.Groups[len(doc.Groups)-1].Key.None {
					t.Errorf("the <none> group is not last: %q", doc.names())
				}
				wantSummary := v1alpha1.GroupSummary{Members: 2, Kinds: map[string]int{"Pod": 2}, Pods: &v1alpha1.PodSummary{Total: 2, Ready: 2, Running: 2}}
				if !reflect.DeepEqual(web.Summary, wantSummary) {
					t.Errorf("app=web summary = %+v, want %+v", web.Summary, wantSummary)
				}
				for _, it := range web.Items {
					if it.GetKind() != "Pod" || it.GetAPIVersion() != "v1" {
						t.Errorf("item %s is %s %s, want v1 Pod", it.GetName(), it.GetAPIVersion(), it.GetKind())
					}
				}
			},
		},
		{
			name: "by label, selector narrows members", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{labelSelector: "app in (web,api)", format: "name"},
			wantOut: "app=api pod/api-0\napp=web pod/web-0\napp=web pod/web-1\n",
		},
		{
			name: "by label, names narrow members", args: []string{"pods", "web-1", "queued"}, group: byLabel("app"), flags: runFlags{format: "name"},
			wantOut: "app=web pod/web-1\napp=worker pod/queued\n",
		},
		{
			name: "by label, one name", args: []string{"pods/web-1"}, group: byLabel("app"), flags: runFlags{format: "name"},
			wantOut: "app=web pod/web-1\n",
		},
		{
			name: "by label, a missing name", args: []string{"pods", "web-1", "nope"}, group: byLabel("app"), flags: runFlags{format: "name"},
			wantOut: "app=web pod/web-1\n",
			wantErr: `Error from server (NotFound): pods "nope" not found`,
		},
		{
			name: "by label, nothing matches", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{labelSelector: "app=none"},
			wantErrOut: "No resources found in shop namespace.\n",
		},
		{
			name: "by label, nothing matches, json", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{labelSelector: "app=none", format: "json"},
			wantOut: "{\n    \"apiVersion\": \"kubectl-idx.io/v1alpha1\",\n    \"kind\": \"GroupList\",\n    \"groupBy\": \"label\",\n    \"expression\": \"app\",\n    \"groups\": [],\n    \"warnings\": []\n}\n",
		},

		// --by-namespace
		{
			name: "by namespace", args: []string{"pods"}, group: GroupFlags{ByNamespace: true}, flags: runFlags{allNamespaces: true},
			golden: "testdata/group_by_namespace.golden",
		},
		{
			name: "by namespace, json", args: []string{"pods"}, group: GroupFlags{ByNamespace: true}, flags: runFlags{allNamespaces: true, format: "json"},
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				want := map[string][]string{"other": {"db-0"}, "shop": {"api-0", "backup-29000", "queued", "stranded", "web-0", "web-1"}}
				if got := doc.members(); !reflect.DeepEqual(got, want) {
					t.Errorf("members = %v, want %v", got, want)
				}
				if doc.GroupBy != "namespace" || doc.Expression != "" {
					t.Errorf("groupBy %q expression %q", doc.GroupBy, doc.Expression)
				}
				if k := doc.Groups[0].Key; k.Namespace != "other" || k.Value != nil || k.None {
					t.Errorf("namespace key = %+v, want namespace other", k)
				}
			},
		},

		// --by JSONPATH
		{
			name: "by JSONPath", args: []string{"pods"}, group: byPath("{.spec.serviceAccountName}"), flags: runFlags{format: "name"},
			wantOut: "default pod/api-0\ndefault pod/backup-29000\ndefault pod/queued\ndefault pod/stranded\nweb pod/web-0\nweb pod/web-1\n",
		},
		{
			name: "by JSONPath, an object with two values is in two groups", args: []string{"pods"}, group: byPath("{.spec.containers[*].image}"), flags: runFlags{format: "json"},
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				want := map[string][]string{
					"fluent/fluent-bit:3.2": {"web-0", "web-1"},
					"ghcr.io/acme/api:v2":   {"api-0"}, "ghcr.io/acme/worker:v2": {"queued"},
					"nginx:1.27": {"stranded", "web-0", "web-1"}, "postgres:16": {"backup-29000"},
				}
				if got := doc.members(); !reflect.DeepEqual(got, want) {
					t.Errorf("members = %v, want %v", got, want)
				}
				if doc.GroupBy != "jsonpath" || doc.Expression != "{.spec.containers[*].image}" {
					t.Errorf("groupBy %q expression %q", doc.GroupBy, doc.Expression)
				}
				g := doc.Groups[doc.group(t, "nginx:1.27")]
				if g.Key.Value == nil || *g.Key.Value != "nginx:1.27" || g.Summary.Members != 3 {
					t.Errorf("nginx:1.27 group: key %+v, %d members", g.Key, g.Summary.Members)
				}
			},
		},
		{
			name: "by JSONPath, human", args: []string{"pods"}, group: byPath("{.spec.containers[*].image}"),
			golden: "testdata/group_by_jsonpath.golden",
		},
		{
			name: "by JSONPath, objects without a value", args: []string{"pods"}, group: byPath("{.spec.nodeName}"), flags: runFlags{format: "name"},
			wantOut: "worker-1 pod/api-0\nworker-1 pod/backup-29000\nworker-1 pod/web-0\nworker-2 pod/web-1\nworker-9 pod/stranded\n<none> pod/queued\n",
		},

		// --by-node
		{name: "by node", args: []string{"pods"}, group: GroupFlags{ByNode: true}, objects: withoutPods(nodeObjects(), "stranded"), golden: "testdata/group_by_node.golden"},
		{
			name: "by node, including completed pods", args: []string{"pods"}, group: GroupFlags{ByNode: true, IncludeCompleted: true},
			objects: withoutPods(nodeObjects(), "stranded"), golden: "testdata/group_by_node_include_completed.golden",
		},
		{
			name: "by node, all namespaces", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{allNamespaces: true},
			objects: withoutPods(nodeObjects(), "stranded"), golden: "testdata/group_by_node_all_namespaces.golden",
		},
		{
			name: "by node, json", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{format: "json"},
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				if doc.GroupBy != "node" {
					t.Errorf("groupBy = %q", doc.GroupBy)
				}
				if want := []string{"worker-1", "worker-2", "worker-3", "worker-9", "<none>"}; !slices.Equal(doc.names(), want) {
					t.Errorf("groups %q, want %q (every node, nodes pods name, then <none>)", doc.names(), want)
				}
				want := map[string][]string{
					"worker-1": {"api-0", "backup-29000", "web-0"}, "worker-2": {"web-1"}, "worker-3": {},
					"worker-9": {"stranded"}, "<none>": {"queued"},
				}
				if got := doc.members(); !reflect.DeepEqual(got, want) {
					t.Errorf("members = %v, want %v", got, want)
				}
				w1 := doc.Groups[0]
				// web-0 (520m, 544Mi) and api-0 (250m, 256Mi); the Succeeded
				// backup pod is listed but does not count.
				wantNode := &v1alpha1.NodeSummary{
					Exists: true, Status: "Ready", Ready: true, Roles: []string{"worker"},
					Requests:    v1alpha1.Resources{CPU: "770m", Memory: "800Mi", CPUMillis: 770, MemoryBytes: 800 << 20},
					Allocatable: v1alpha1.Resources{CPU: "3920m", Memory: "15184716Ki", CPUMillis: 3920, MemoryBytes: 15184716 << 10},
					CPUPercent:  19, MemoryPercent: 5,
				}
				if !reflect.DeepEqual(w1.Summary.Node, wantNode) {
					t.Errorf("worker-1 node summary:\n%+v\nwant\n%+v", w1.Summary.Node, wantNode)
				}
				if p := w1.Summary.Pods; p == nil || *p != (v1alpha1.PodSummary{Total: 3, Ready: 1, Running: 2, Succeeded: 1}) {
					t.Errorf("worker-1 pod counts = %+v", p)
				}
				w2 := doc.Groups[1].Summary.Node
				if w2 == nil || w2.Status != "Ready,SchedulingDisabled" || !w2.Unschedulable || w2.Requests.CPUMillis != 520 || w2.CPUPercent != 26 {
					t.Errorf("worker-2 (cordoned) node summary = %+v", w2)
				}
				w3 := doc.Groups[2]
				wantEmpty := &v1alpha1.NodeSummary{
					Exists: true, Status: "NotReady", Roles: []string{},
					Requests:    v1alpha1.Resources{CPU: "0", Memory: "0"},
					Allocatable: v1alpha1.Resources{CPU: "4", Memory: "8Gi", CPUMillis: 4000, MemoryBytes: 8 << 30},
				}
				if !reflect.DeepEqual(w3.Summary.Node, wantEmpty) || w3.Summary.Members != 0 || len(w3.Summary.Kinds) != 0 || w3.Summary.Pods != nil {
					t.Errorf("worker-3 (no pods) summary = %+v, node %+v", w3.Summary, w3.Summary.Node)
				}
				if k := w3.Key; k.Node != "worker-3" || k.None {
					t.Errorf("worker-3 key = %+v", k)
				}
				w9 := doc.Groups[3].Summary.Node
				if w9 == nil || w9.Exists || w9.Status != "NotFound" || w9.Requests.CPUMillis != 100 {
					t.Errorf("worker-9 (missing node) summary = %+v", w9)
				}
				none := doc.Groups[4]
				if !none.Key.None || none.Summary.Node != nil {
					t.Errorf("<none> group: key %+v, node summary %+v (unscheduled pods have no node)", none.Key, none.Summary.Node)
				}
			},
		},
		{
			name: "by node, including completed pods, json", args: []string{"pods"}, group: GroupFlags{ByNode: true, IncludeCompleted: true}, flags: runFlags{format: "json"},
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				n := doc.Groups[0].Summary.Node
				want := v1alpha1.Resources{CPU: "1770m", Memory: "1824Mi", CPUMillis: 1770, MemoryBytes: 1824 << 20}
				if n == nil || n.Requests != want || n.CPUPercent != 45 || n.MemoryPercent != 12 {
					t.Errorf("worker-1 with --include-completed: %+v, want requests %+v, 45%% cpu, 12%% memory", n, want)
				}
			},
		},
		{
			name: "by node, a label selector narrows requests", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{format: "json", labelSelector: "app=web"},
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				if want := []string{"worker-1", "worker-2", "worker-3"}; !slices.Equal(doc.names(), want) {
					t.Errorf("groups %q, want every node %q", doc.names(), want)
				}
				if n := doc.Groups[0].Summary.Node; n == nil || n.Requests.CPU != "520m" || n.Requests.Memory != "544Mi" {
					t.Errorf("worker-1 requests with -l app=web: %+v, want 520m and 544Mi", n)
				}
			},
		},
		{
			name: "by node, names", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{format: "name"},
			wantOut: "worker-1 pod/api-0\nworker-1 pod/backup-29000\nworker-1 pod/web-0\nworker-2 pod/web-1\nworker-9 pod/stranded\n<none> pod/queued\n",
		},
		{
			// A node deleted while pods bound to it remain: its group says
			// so, and has no allocatable to speak of.
			name: "by node, a node that pods name but that does not exist", args: []string{"pods"}, group: GroupFlags{ByNode: true},
			check: func(t *testing.T, stdout string) {
				var header string
				for _, line := range strings.Split(stdout, "\n") {
					if strings.HasPrefix(line, "worker-9 ") {
						header = line
					}
				}
				if !strings.HasPrefix(header, "worker-9  NotFound  ") || !strings.HasSuffix(header, "1 pod, 1/1 ready") {
					t.Errorf("header line of the missing node = %q", header)
				}
				// Allocatable of a node that does not exist is not an empty
				// string: "cpu 100m/ (0%)" reads as a rendering bug.
				if strings.Contains(header, "/ (") || strings.Contains(header, "//") {
					t.Errorf("header line of the missing node renders an empty allocatable: %q", header)
				}
			},
		},
		{
			name: "by node, a node that does not exist, json", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{format: "json"},
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				for _, g := range doc.Groups {
					n := g.Summary.Node
					if n == nil {
						continue
					}
					// Every quantity in the document is a quantity, as the
					// README shows them; jq users feed them on.
					for what, q := range map[string]string{"requests.cpu": n.Requests.CPU, "requests.memory": n.Requests.Memory, "allocatable.cpu": n.Allocatable.CPU, "allocatable.memory": n.Allocatable.Memory} {
						if _, err := resource.ParseQuantity(q); err != nil {
							t.Errorf("node %s: %s = %q is not a quantity: %v", g.Name, what, q, err)
						}
					}
				}
			},
		},
		{
			name: "by node, no pods still lists the nodes", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{namespace: "empty"},
			wantOut: "worker-1  Ready  worker  cpu 0/3920m (0%)  memory 0/14.5Gi (0%)  0 pods\n" +
				"worker-2  Ready,SchedulingDisabled  worker  cpu 0/2 (0%)  memory 0/4Gi (0%)  0 pods\n" +
				"worker-3  NotReady  <none>  cpu 0/4 (0%)  memory 0/8Gi (0%)  0 pods\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objects := tc.objects
			if objects == nil {
				objects = nodeObjects()
			}
			s := fakeapi.New(nil, objects...)
			if tc.setup != nil {
				tc.setup(s)
			}
			h := newRunHarness(t, s, tc.args, tc.flags)
			h.o.Group = tc.group
			h.o.mapper = ownerMapper()
			if err := h.o.Group.validate(h.o.requests, tc.flags.sortBy); err != nil {
				t.Fatalf("the case does not pass validation: %v", err)
			}
			err := h.run(t)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Run: %s", FormatError(err))
			case tc.wantErr != "" && err == nil:
				t.Errorf("Run: no error, want %q", tc.wantErr)
			case tc.wantErr != "":
				if got := FormatError(err); got != tc.wantErr {
					t.Errorf("Run error, formatted:\n%s\nwant:\n%s", got, tc.wantErr)
				}
			}
			stdout := h.out.String()
			if tc.check != nil {
				tc.check(t, stdout)
			}
			switch {
			case tc.golden != "":
				golden.Assert(t, tc.golden, stdout)
			case tc.check == nil:
				if stdout != tc.wantOut {
					t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.wantOut)
				}
			}
			if got := h.err.String(); got != tc.wantErrOut {
				t.Errorf("stderr = %q, want %q", got, tc.wantErrOut)
			}
		})
	}
}

func TestGroupRunByOwner(t *testing.T) {
	owner := GroupFlags{ByOwner: true}
	tests := []struct {
		name  string
		args  []string
		flags runFlags
		setup func(s *fakeapi.Server)

		wantOut    string
		golden     string
		check      func(t *testing.T, stdout string)
		wantErrOut string
		wantErr    string
	}{
		{
			name: "pods", args: []string{"pods"}, golden: "testdata/group_by_owner.golden",
			wantErrOut: "warning: owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com\n",
		},
		{
			name: "pods, names", args: []string{"pods"}, flags: runFlags{format: "name"},
			wantOut: "Deployment/web pod/web-5d4-aaaaa\n" +
				"Deployment/web pod/web-5d4-bbbbb\n" +
				"Node/worker-1 pod/static-web-worker-1\n" +
				"ReplicaSet/gone-6b8 pod/orphan-ddddd\n" +
				"Rollout/canary pod/canary-7f9-ccccc\n" +
				"Widget/w pod/widget-eeeee\n" +
				"<none> pod/adopted\n" +
				"<none> pod/debug\n",
			wantErrOut: "warning: owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com\n",
		},
		{
			name: "pods, json", args: []string{"pods"}, flags: runFlags{format: "json"},
			wantErrOut: "warning: owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com\n",
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				if doc.GroupBy != "owner" {
					t.Errorf("groupBy = %q", doc.GroupBy)
				}
				want := map[string]v1alpha1.GroupKey{
					"Deployment/web":      {APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: string(uidDeployWeb)},
					"Node/worker-1":       {APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: string(uidNodeWorker)},
					"ReplicaSet/gone-6b8": {APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "gone-6b8", UID: string(uidRSGone), Dangling: true, Reason: "owner not found"},
					"Rollout/canary":      {APIVersion: "example.com/v1alpha1", Kind: "Rollout", Namespace: "shop", Name: "canary", UID: string(uidRollout)},
					"Widget/w": {
						APIVersion: "widgets.example.com/v1", Kind: "Widget", Namespace: "shop", Name: "w", UID: string(uidWidget), Unknown: true,
						Reason: "the server doesn't have a resource type for kind Widget.widgets.example.com",
					},
					"<none>": {None: true},
				}
				got := map[string]v1alpha1.GroupKey{}
				for _, g := range doc.Groups {
					got[g.Name] = g.Key
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("keys:\n%+v\nwant:\n%+v", got, want)
				}
				wantMembers := map[string][]string{
					"Deployment/web": {"web-5d4-aaaaa", "web-5d4-bbbbb"}, "Node/worker-1": {"static-web-worker-1"},
					"ReplicaSet/gone-6b8": {"orphan-ddddd"}, "Rollout/canary": {"canary-7f9-ccccc"}, "Widget/w": {"widget-eeeee"},
					"<none>": {"adopted", "debug"},
				}
				if got := doc.members(); !reflect.DeepEqual(got, wantMembers) {
					t.Errorf("members = %v, want %v", got, wantMembers)
				}
				if want := []string{"owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com"}; !slices.Equal(doc.Warnings, want) {
					t.Errorf("warnings = %q, want %q", doc.Warnings, want)
				}
				d := doc.Groups[doc.group(t, "Deployment/web")].Summary
				if d.Members != 2 || d.Pods == nil || d.Pods.Total != 2 || d.Pods.Ready != 1 {
					t.Errorf("Deployment/web summary = %+v (pods %+v)", d, d.Pods)
				}
			},
		},
		{
			name: "names narrow members", args: []string{"pods", "web-5d4-bbbbb", "debug", "static-web-worker-1"}, flags: runFlags{format: "name"},
			wantOut: "Deployment/web pod/web-5d4-bbbbb\nNode/worker-1 pod/static-web-worker-1\n<none> pod/debug\n",
		},
		{
			name: "a label selector narrows members", args: []string{"pods"}, flags: runFlags{format: "name", labelSelector: "app=web"},
			wantOut: "Deployment/web pod/web-5d4-aaaaa\nDeployment/web pod/web-5d4-bbbbb\n",
		},
		{
			name: "replicasets", args: []string{"replicasets"}, flags: runFlags{format: "name"},
			wantOut: "Deployment/web replicaset.apps/web-5d4\nRollout/canary replicaset.apps/canary-7f9\n",
		},
		{
			name: "replicasets may not be listed", args: []string{"pods"}, setup: forbidReplicaSets,
			golden:     "testdata/group_by_owner_forbidden.golden",
			wantErrOut: "warning: owners above ReplicaSet.apps are unknown: replicasets.apps is forbidden: User \"jane\" cannot list resource \"replicasets\" in API group \"apps\" in the namespace \"shop\"\n" + "warning: owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com\n",
		},
		{
			name: "replicasets may not be listed, json", args: []string{"pods"}, setup: forbidReplicaSets, flags: runFlags{format: "json", labelSelector: "app=web"},
			wantErrOut: "warning: " + forbiddenWarning + "\n",
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				if !slices.Equal(doc.Warnings, []string{forbiddenWarning}) {
					t.Errorf("warnings = %q, want [%q]", doc.Warnings, forbiddenWarning)
				}
				if len(doc.Groups) != 1 {
					t.Fatalf("groups %q, want the one ReplicaSet", doc.names())
				}
				g := doc.Groups[0]
				want := v1alpha1.GroupKey{
					APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d4", UID: string(uidRSWeb),
					Unknown: true, Reason: strings.TrimPrefix(forbiddenWarning, "owners above ReplicaSet.apps are unknown: "),
				}
				if g.Name != "ReplicaSet/web-5d4" || !reflect.DeepEqual(g.Key, want) {
					t.Errorf("group %s key:\n%+v\nwant:\n%+v", g.Name, g.Key, want)
				}
				if g.Summary.Members != 2 {
					t.Errorf("%d members, want the 2 pods", g.Summary.Members)
				}
			},
		},
		{
			name: "no owners at all", args: []string{"pods", "debug"}, flags: runFlags{format: "name"},
			wantOut: "<none> pod/debug\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(nil, ownerObjects()...)
			if tc.setup != nil {
				tc.setup(s)
			}
			args := tc.args
			if args[0] == "replicasets" {
				// testMapper's discovery has no replicasets; parse pods and
				// swap the resource.
				args = []string{"pods"}
			}
			h := newRunHarness(t, s, args, tc.flags)
			if tc.args[0] == "replicasets" {
				h.o.requests[0].Resource.GVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
				h.o.requests[0].Resource.GVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
			}
			h.o.Group = owner
			h.o.mapper = ownerMapper()
			err := h.run(t)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Run: %s", FormatError(err))
			case tc.wantErr != "" && (err == nil || FormatError(err) != tc.wantErr):
				t.Errorf("Run error = %v, want %q", err, tc.wantErr)
			}
			stdout := h.out.String()
			switch {
			case tc.golden != "":
				golden.Assert(t, tc.golden, stdout)
			case tc.check != nil:
				tc.check(t, stdout)
			default:
				if stdout != tc.wantOut {
					t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.wantOut)
				}
			}
			if got := h.err.String(); got != tc.wantErrOut {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, tc.wantErrOut)
			}
		})
	}
}

// TestGroupRunByOwnerLookups: owner informers start only for the kinds that
// controller references name, metadata only; members stay full objects.
func TestGroupRunByOwnerLookups(t *testing.T) {
	s := fakeapi.New(nil, ownerObjects()...)
	h := newRunHarness(t, s, []string{"pods"}, runFlags{format: "json"})
	h.o.Group = GroupFlags{ByOwner: true}
	h.o.mapper = ownerMapper()
	if err := h.run(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var listed []string
	for _, a := range s.Metadata.Actions() {
		if a.GetVerb() == "list" {
			listed = append(listed, a.GetResource().GroupResource().String())
		}
	}
	sort.Strings(listed)
	listed = slices.Compact(listed)
	if want := []string{"deployments.apps", "nodes", "replicasets.apps", "rollouts.example.com"}; !slices.Equal(listed, want) {
		t.Errorf("owner kinds listed (metadata only): %q, want %q", listed, want)
	}
	var typed []string
	for _, r := range s.Requests() {
		if !r.Watch {
			typed = append(typed, r.Path)
		}
	}
	if want := []string{"/api/v1/namespaces/shop/pods"}; !slices.Equal(typed, want) {
		t.Errorf("typed lists: %q, want only the member pods %q", typed, want)
	}
	if hasList(s.Dynamic.Actions()) {
		t.Error("the custom owner kind was listed as full objects; owners need metadata only")
	}
}

// TestGroupHeader pins the header lines of human output.
func TestGroupHeader(t *testing.T) {
	val := func(s string) *string { return &s }
	tests := []struct {
		mode string
		g    v1alpha1.Group
		want string
	}{
		{
			mode: query.GroupByOwner,
			g: v1alpha1.Group{Name: "Deployment/web", Key: v1alpha1.GroupKey{Kind: "Deployment", Namespace: "shop", Name: "web"},
				Summary: v1alpha1.GroupSummary{Members: 3, Kinds: map[string]int{"Pod": 3}, Pods: &v1alpha1.PodSummary{Total: 3, Ready: 3}}},
			want: "Deployment/web -n shop  3 pods, 3/3 ready",
		},
		{
			mode: query.GroupByOwner,
			g:    v1alpha1.Group{Name: "Node/worker-1", Key: v1alpha1.GroupKey{Kind: "Node", Name: "worker-1"}, Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1}}},
			want: "Node/worker-1  1 pod, 0/1 ready",
		},
		{
			mode: query.GroupByOwner,
			g: v1alpha1.Group{Name: "ReplicaSet/gone", Key: v1alpha1.GroupKey{Kind: "ReplicaSet", Namespace: "shop", Name: "gone", Dangling: true, Reason: "owner not found"},
				Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1, Ready: 1}}},
			want: "ReplicaSet/gone -n shop  (dangling: owner not found)  1 pod, 1/1 ready",
		},
		{
			mode: query.GroupByOwner,
			g: v1alpha1.Group{Name: "ReplicaSet/web", Key: v1alpha1.GroupKey{Kind: "ReplicaSet", Namespace: "shop", Name: "web", Unknown: true, Reason: "forbidden"},
				Summary: v1alpha1.GroupSummary{Members: 2, Kinds: map[string]int{"ReplicaSet": 2}}},
			want: "ReplicaSet/web -n shop  (owners above unknown)  2 replicasets",
		},
		{
			mode: query.GroupByOwner,
			g:    v1alpha1.Group{Name: "<none>", Key: v1alpha1.GroupKey{None: true}, Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1, Ready: 1}}},
			want: "<none>  1 pod, 1/1 ready",
		},
		{
			mode: query.GroupByLabel,
			g: v1alpha1.Group{Name: "app=web", Key: v1alpha1.GroupKey{Value: val("web")},
				Summary: v1alpha1.GroupSummary{Members: 4, Kinds: map[string]int{"Pod": 2, "Service": 1, "Deployment": 1}, Pods: &v1alpha1.PodSummary{Total: 2, Ready: 1}}},
			want: "app=web  1 deployment, 2 pods, 1 service, 1/2 ready",
		},
		{
			mode: query.GroupByNode,
			g: v1alpha1.Group{Name: "worker-1", Key: v1alpha1.GroupKey{Node: "worker-1"},
				Summary: v1alpha1.GroupSummary{Members: 3, Kinds: map[string]int{"Pod": 3}, Pods: &v1alpha1.PodSummary{Total: 3, Ready: 3}, Node: &v1alpha1.NodeSummary{
					Exists: true, Status: "Ready", Ready: true, Roles: []string{"worker"},
					Requests:    v1alpha1.Resources{CPU: "1040m", Memory: "1664Mi", CPUMillis: 1040, MemoryBytes: 1744830464},
					Allocatable: v1alpha1.Resources{CPU: "3920m", Memory: "15184716Ki", CPUMillis: 3920, MemoryBytes: 15549149184},
					CPUPercent:  26, MemoryPercent: 11,
				}}},
			// The README's example header line.
			want: "worker-1  Ready  worker  cpu 1040m/3920m (26%)  memory 1.6Gi/14.5Gi (11%)  3 pods, 3/3 ready",
		},
		{
			mode: query.GroupByNode,
			g: v1alpha1.Group{Name: "worker-3", Key: v1alpha1.GroupKey{Node: "worker-3"},
				Summary: v1alpha1.GroupSummary{Kinds: map[string]int{}, Node: &v1alpha1.NodeSummary{
					Exists: true, Status: "NotReady,SchedulingDisabled", Roles: []string{},
					Requests:    v1alpha1.Resources{CPU: "0", Memory: "0"},
					Allocatable: v1alpha1.Resources{CPU: "4", Memory: "8Gi", CPUMillis: 4000, MemoryBytes: 8 << 30},
				}}},
			want: "worker-3  NotReady,SchedulingDisabled  <none>  cpu 0/4 (0%)  memory 0/8Gi (0%)  0 pods",
		},
	}
	for _, tc := range tests {
		if got := groupHeader(tc.mode)(&tc.g); got != tc.want {
			t.Errorf("header of %s:\n%q\nwant\n%q", tc.g.Name, got, tc.want)
		}
	}
}

// TestOwnerLookup exercises the engine's OwnerResolver alone: kinds map through the REST mapper
// to metadata-only informers, a kind the mapper does not know or the user may
// not list is an error for that kind only, and Get finds owners by UID. The
// kinds come in an order where a failing informer's goroutine and an unknown
// kind after it both record their error (run with -race).
func TestOwnerLookup(t *testing.T) {
	s := fakeapi.New(nil, ownerObjects()...)
	forbidReplicaSets(s)
	h := newRunHarness(t, s, []string{"pods"}, runFlags{})
	h.o.mapper = ownerMapper()
	l := query.NewSession(h.o.sessionConfig()).OwnerResolver()
	defer l.Shutdown()

	rs := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	widget := schema.GroupVersionKind{Group: "widgets.example.com", Version: "v1", Kind: "Widget"}
	node := schema.GroupVersionKind{Version: "v1", Kind: "Node"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := l.Prepare(ctx, []schema.GroupVersionKind{rs, deploy, widget, node, rolloutGVK})

	got := map[string]string{}
	for gk, err := range errs {
		got[gk.String()] = err.Error()
	}
	want := map[string]string{
		"ReplicaSet.apps":            strings.TrimPrefix(forbiddenWarning, "owners above ReplicaSet.apps are unknown: "),
		"Widget.widgets.example.com": "the server doesn't have a resource type for kind Widget.widgets.example.com",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Prepare errors:\n%v\nwant:\n%v", got, want)
	}

	for _, tc := range []struct {
		gk       schema.GroupKind
		uid      types.UID
		wantName string
	}{
		{deploy.GroupKind(), uidDeployWeb, "web"},
		{node.GroupKind(), uidNodeWorker, "worker-1"},
		{rolloutGVK.GroupKind(), uidRollout, "canary"},
		{deploy.GroupKind(), "no-such-uid", ""},
	} {
		obj, err := l.Get(tc.gk, tc.uid)
		if err != nil {
			t.Errorf("Get(%s, %s): %v", tc.gk, tc.uid, err)
			continue
		}
		switch {
		case tc.wantName == "" && obj != nil:
			t.Errorf("Get(%s, %s) = %s, want nothing", tc.gk, tc.uid, obj.GetName())
		case tc.wantName != "" && (obj == nil || obj.GetName() != tc.wantName):
			t.Errorf("Get(%s, %s) = %v, want %s", tc.gk, tc.uid, obj, tc.wantName)
		}
	}
	if _, err := l.Get(rs.GroupKind(), uidRSWeb); err == nil {
		t.Error("Get of a kind that failed to prepare returned no error")
	}
	for gk, want := range map[schema.GroupKind]bool{node.GroupKind(): false, deploy.GroupKind(): true, rolloutGVK.GroupKind(): true, widget.GroupKind(): true} {
		if got := l.Namespaced(gk); got != want {
			t.Errorf("Namespaced(%s) = %v, want %v", gk, got, want)
		}
	}
}
