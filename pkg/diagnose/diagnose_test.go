package diagnose_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/diagnose"
)

// now is the diagnoses' clock.
var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// ago is a time d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// world is a fake Sources over objects.
type world struct {
	events   []*corev1.Event
	nodes    []*corev1.Node
	noNodes  bool
	objects  map[string]bool // "Kind/ns/name" that exist
	claims   map[string]*corev1.PersistentVolumeClaim
	selects  []runtime.Object // Services and PDBs
	pods     []*corev1.Pod
	ranges   []*corev1.LimitRange
	requests map[string]corev1.ResourceList
}

func (w *world) Events(kind string, obj metav1.Object) []*corev1.Event {
	var out []*corev1.Event
	for _, e := range w.events {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == obj.GetName() && e.InvolvedObject.Namespace == obj.GetNamespace() {
			out = append(out, e)
		}
	}
	return out
}

func (w *world) Nodes() ([]*corev1.Node, bool) { return w.nodes, !w.noNodes }

func (w *world) Node(name string) (*corev1.Node, bool) {
	for _, n := range w.nodes {
		if n.Name == name {
			return n, true
		}
	}
	return nil, !w.noNodes
}

func (w *world) Exists(kind, namespace, name string) (bool, bool) {
	return w.objects[kind+"/"+namespace+"/"+name], true
}

func (w *world) Claim(namespace, name string) (*corev1.PersistentVolumeClaim, bool) {
	return w.claims[namespace+"/"+name], true
}

func (w *world) SelectedBy(namespace string, set labels.Set) []runtime.Object {
	var out []runtime.Object
	for _, o := range w.selects {
		var sel labels.Selector
		switch x := o.(type) {
		case *corev1.Service:
			sel = labels.SelectorFromSet(x.Spec.Selector)
		case *policyv1.PodDisruptionBudget:
			sel, _ = metav1.LabelSelectorAsSelector(x.Spec.Selector)
		}
		if a, _ := meta.Accessor(o); a.GetNamespace() == namespace && sel.Matches(set) {
			out = append(out, o)
		}
	}
	return out
}

func (w *world) SelectedPods(namespace string, sel labels.Selector) ([]*corev1.Pod, bool) {
	var out []*corev1.Pod
	for _, p := range w.pods {
		if p.Namespace == namespace && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out, true
}

func (w *world) LimitRanges(string) ([]*corev1.LimitRange, bool) { return w.ranges, true }

func (w *world) Requested(node string) (corev1.ResourceList, bool) {
	r, ok := w.requests[node]
	return r, ok
}

// obj wraps a typed object for a subtree.
func obj(o runtime.Object, children ...*diagnose.Object) *diagnose.Object {
	gvks := map[string]schema.GroupVersionKind{
		"*v1.Pod": corev1.SchemeGroupVersion.WithKind("Pod"), "*v1.Deployment": appsv1.SchemeGroupVersion.WithKind("Deployment"),
		"*v1.ReplicaSet": appsv1.SchemeGroupVersion.WithKind("ReplicaSet"), "*v1.StatefulSet": appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
		"*v1.Job": batchv1.SchemeGroupVersion.WithKind("Job"), "*v1.CronJob": batchv1.SchemeGroupVersion.WithKind("CronJob"),
		"*v1.Service": corev1.SchemeGroupVersion.WithKind("Service"), "*v1.Node": corev1.SchemeGroupVersion.WithKind("Node"),
		"*v1.PersistentVolumeClaim": corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
	}
	gvk, ok := gvks[fmt.Sprintf("%T", o)]
	if u, isU := o.(*unstructured.Unstructured); isU {
		gvk, ok = u.GroupVersionKind(), true
	}
	if !ok {
		panic(fmt.Sprintf("no kind for %T", o))
	}
	m, _ := meta.Accessor(o)
	return &diagnose.Object{GVK: gvk, Obj: o, Meta: m, Children: children}
}

func om(name string, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(uid), CreationTimestamp: ago(time.Hour)}
}

func controlledBy(m metav1.ObjectMeta, kind, name, uid string) metav1.ObjectMeta {
	m.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}}
	return m
}

var webLabels = map[string]string{"app": "web"}

// deployment is Deployment web of 2 replicas, available as given.
func deployment(available int32) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: om("web", "d1"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: webLabels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}},
		Status: appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: available}}
	d.Annotations = map[string]string{"deployment.kubernetes.io/revision": "1"}
	return d
}

func replicaSet(name, uid, rev string, want, have int32) *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{ObjectMeta: controlledBy(om(name, uid), "Deployment", "web", "d1"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(want),
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: webLabels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}},
		Status: appsv1.ReplicaSetStatus{Replicas: have, ReadyReplicas: have, AvailableReplicas: have}}
	rs.Annotations = map[string]string{"deployment.kubernetes.io/revision": rev}
	return rs
}

// pod is a pod of ReplicaSet rs, Running and ready unless changed.
func pod(name, rs string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: controlledBy(om(name, "p-"+name), "ReplicaSet", rs, "rs-"+rs),
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "app", Image: "web:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptr.To(ago(time.Hour)), Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "web:1", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
}

func withLabels(p *corev1.Pod) *corev1.Pod { p.Labels = webLabels; return p }

func node(name string, mutate ...func(*corev1.Node)) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node-" + name), Labels: map[string]string{"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}}}}
	for _, m := range mutate {
		m(n)
	}
	return n
}

func unschedulable(p *corev1.Pod, msg string) *corev1.Pod {
	p.Spec.NodeName = ""
	p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg}}}
	return p
}

func event(kind, name, reason, msg string) *corev1.Event {
	return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name + "." + reason}, Type: corev1.EventTypeWarning, Reason: reason, Message: msg,
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "shop", Name: name}, LastTimestamp: ago(time.Minute), Count: 3}
}

// line is a cause as the tests compare it: reason, culprit and severity.
func line(c v1alpha1.Cause) string {
	s := c.Reason + " " + c.Object.Kind + "/" + c.Object.Name
	if c.Object.Missing {
		s += " (missing)"
	}
	if c.Severity == v1alpha1.SeverityWarning {
		s += " warning"
	}
	return s
}

func TestDiagnose(t *testing.T) {
	healthyNodes := []*corev1.Node{node("n1"), node("n2")}
	web := func(pods ...*corev1.Pod) *diagnose.Object {
		var children []*diagnose.Object
		for _, p := range pods {
			children = append(children, obj(p))
		}
		return obj(deployment(2), obj(replicaSet("web-1", "rs-web-1", "1", 2, 2), children...))
	}
	tests := []struct {
		name     string
		root     *diagnose.Object
		world    world
		status   v1alpha1.DiagnosisStatus
		causes   []string
		message  string // a part of the first cause's message
		evidence string // a field, condition or event of the first cause's evidence
	}{
		{
			name:   "healthy",
			root:   web(pod("web-1-a", "web-1"), pod("web-1-b", "web-1")),
			world:  world{nodes: healthyNodes},
			status: v1alpha1.DiagnosisHealthy,
		},
		{
			name: "no node matches the node selector: the pods, merged",
			root: func() *diagnose.Object {
				d := deployment(0)
				a := unschedulable(pod("web-1-a", "web-1"), "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
				b := unschedulable(pod("web-1-b", "web-1"), "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
				a.Spec.NodeSelector, b.Spec.NodeSelector = map[string]string{"disktype": "nvme"}, map[string]string{"disktype": "nvme"}
				return obj(d, obj(replicaSet("web-1", "rs-web-1", "1", 2, 2), obj(a), obj(b)))
			}(),
			world:    world{nodes: healthyNodes},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"FailedScheduling Pod/web-1-a"},
			message:  "no node matches the pod's node selector disktype=nvme (none of 2 nodes) (2 pods of ReplicaSet/web-1)",
			evidence: "spec.nodeSelector",
		},
		{
			name: "no node matches the required node affinity",
			root: func() *diagnose.Object {
				p := unschedulable(pod("web-1-a", "web-1"), "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
						{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"eu-1a", "eu-1b"}},
					}}},
				}}}
				return obj(p)
			}(),
			world:    world{nodes: healthyNodes},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"FailedScheduling Pod/web-1-a"},
			message:  "no node matches the pod's required node affinity (none of 2 nodes)",
			evidence: "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
		},
		{
			name: "a taint of the one node the selector allows",
			root: func() *diagnose.Object {
				p := unschedulable(pod("web-1-a", "web-1"), "0/2 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) didn't match Pod's node affinity/selector.")
				p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "n2"}
				return obj(p)
			}(),
			world: world{nodes: []*corev1.Node{node("n1"), node("n2", func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
			})}},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"FailedScheduling Node/n2"},
			message:  "the pod does not tolerate the taint dedicated=db:NoSchedule of node n2, the one node its node selector and affinity allow",
			evidence: "spec.taints",
		},
		{
			name: "requests more cpu than any node has free",
			root: func() *diagnose.Object {
				p := unschedulable(pod("big", "web-1"), "0/2 nodes are available: 2 Insufficient cpu.")
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m")}
				return obj(p)
			}(),
			world: world{nodes: healthyNodes, requests: map[string]corev1.ResourceList{
				"n1": {corev1.ResourceCPU: resource.MustParse("1")}, "n2": {corev1.ResourceCPU: resource.MustParse("2")}}},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"FailedScheduling Pod/big"},
			message:  "the pod requests 3500m cpu, more than any node it may run on has free: at most 3 on n1 (an estimate from the requests of the pods on each node)",
			evidence: "spec.containers[*].resources.requests.cpu",
		},
		{
			name: "an unbound claim",
			root: func() *diagnose.Object {
				p := unschedulable(pod("db-0", "web-1"), "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims.")
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-db-0"}}}}
				return obj(p)
			}(),
			world: world{nodes: healthyNodes, objects: map[string]bool{"PersistentVolumeClaim/shop/data-db-0": true, "ServiceAccount/shop/default": true},
				claims: map[string]*corev1.PersistentVolumeClaim{"shop/data-db-0": {ObjectMeta: om("data-db-0", "c1"), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}},
				events: []*corev1.Event{event("PersistentVolumeClaim", "data-db-0", "ProvisioningFailed", `storageclass.storage.k8s.io "fast" not found`)}},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"FailedScheduling PersistentVolumeClaim/data-db-0"},
			message:  `the pod's claim data-db-0 is Pending: storageclass.storage.k8s.io "fast" not found`,
			evidence: "ProvisioningFailed",
		},
		{
			name: "ResourceQuota exceeded, from the ReplicaSet's condition and event",
			root: func() *diagnose.Object {
				rs := replicaSet("web-1", "rs-web-1", "1", 2, 0)
				rs.Status.Conditions = []appsv1.ReplicaSetCondition{{Type: appsv1.ReplicaSetReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
					Message: `pods "web-1-x" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`}}
				return obj(deployment(0), obj(rs))
			}(),
			world:    world{events: []*corev1.Event{event("ReplicaSet", "web-1", "FailedCreate", `Error creating: pods "web-1-x" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`)}},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"FailedCreate ResourceQuota/compute"},
			message:  "ResourceQuota compute is used up, so no pod can be created: requested: pods=1, used: pods=2, limited: pods=2",
			evidence: "ReplicaFailure",
		},
		{
			name: "a missing ServiceAccount: the creation failure and the reference are one cause",
			root: func() *diagnose.Object {
				d := deployment(0)
				d.Spec.Template.Spec.ServiceAccountName = "robot"
				return obj(d, obj(replicaSet("web-1", "rs-web-1", "1", 2, 0)))
			}(),
			world: world{events: []*corev1.Event{event("ReplicaSet", "web-1", "FailedCreate",
				`Error creating: pods "web-1-x" is forbidden: error looking up service account shop/robot: serviceaccount "robot" not found`)}},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"FailedCreate ServiceAccount/robot (missing)"},
			message:  "ServiceAccount robot does not exist, so no pod can be created",
			evidence: "spec.template.spec.serviceAccountName",
		},
		{
			name: "a LimitRange, found by the limit it quotes",
			root: obj(deployment(0), obj(replicaSet("web-1", "rs-web-1", "1", 2, 0))),
			world: world{events: []*corev1.Event{event("ReplicaSet", "web-1", "FailedCreate",
				`Error creating: pods "web-1-x" is forbidden: maximum cpu usage per Container is 500m, but limit is 1`)},
				ranges: []*corev1.LimitRange{
					{ObjectMeta: om("mem", "lr1"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}}},
					{ObjectMeta: om("cpu", "lr2"), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}},
				}},
			status:  v1alpha1.DiagnosisUnhealthy,
			causes:  []string{"FailedCreate LimitRange/cpu"},
			message: "LimitRange cpu refuses the pods: maximum cpu usage per Container is 500m, but limit is 1",
		},
		{
			name: "a ValidatingAdmissionPolicy",
			root: obj(deployment(0), obj(replicaSet("web-1", "rs-web-1", "1", 2, 0))),
			world: world{events: []*corev1.Event{event("ReplicaSet", "web-1", "FailedCreate",
				`Error creating: pods "web-1-x" is forbidden: ValidatingAdmissionPolicy 'no-latest' with binding 'no-latest' denied request: images must be pinned`)}},
			status:  v1alpha1.DiagnosisUnhealthy,
			causes:  []string{"FailedCreate ValidatingAdmissionPolicy/no-latest"},
			message: "ValidatingAdmissionPolicy no-latest denies the pods (binding no-latest): images must be pinned",
		},
		{
			name: "a FailedCreate of a ReplicaSet that has its pods is history",
			root: web(pod("web-1-a", "web-1"), pod("web-1-b", "web-1")),
			world: world{nodes: healthyNodes, events: []*corev1.Event{event("ReplicaSet", "web-1", "FailedCreate",
				`Error creating: pods "web-1-x" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`)}},
			status: v1alpha1.DiagnosisHealthy,
		},
		{
			name: "crash loop, with the last termination",
			root: func() *diagnose.Object {
				p := pod("web-1-a", "web-1")
				p.Status.Conditions[1].Status = corev1.ConditionFalse
				p.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", Image: "web:1", RestartCount: 5,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 2m40s restarting failed container"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}}
				return obj(p)
			}(),
			world:    world{nodes: healthyNodes},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"CrashLoopBackOff Pod/web-1-a"},
			message:  "container app keeps crashing: restarted 5 times, last terminated with Error (exit code 1)",
			evidence: "status.containerStatuses[app].state.waiting.reason",
		},
		{
			name: "image pull back-off",
			root: func() *diagnose.Object {
				p := pod("web-1-a", "web-1")
				p.Status.Phase = corev1.PodPending
				p.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", Image: "web:nope",
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "web:nope"`}}}
				return obj(p)
			}(),
			world:   world{nodes: healthyNodes},
			status:  v1alpha1.DiagnosisUnhealthy,
			causes:  []string{"ImagePullBackOff Pod/web-1-a"},
			message: `container app cannot pull its image web:nope: Back-off pulling image "web:nope"`,
		},
		{
			name: "not ready for long: the condition's reason",
			root: func() *diagnose.Object {
				p := pod("web-1-a", "web-1")
				p.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: ago(5 * time.Minute)}
				p.Status.ContainerStatuses[0].Ready = false
				return obj(p)
			}(),
			world:    world{nodes: healthyNodes, events: []*corev1.Event{event("Pod", "web-1-a", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503")}},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"ContainersNotReady Pod/web-1-a"},
			message:  "container app runs but has not been ready for 5m0s: Readiness probe failed: HTTP probe failed with statuscode: 503",
			evidence: "Ready",
		},
		{
			name: "not ready for a moment: too early to tell",
			root: func() *diagnose.Object {
				p := pod("web-1-a", "web-1")
				p.Status.Conditions[1] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: ago(5 * time.Second)}
				return obj(p)
			}(),
			world:  world{nodes: healthyNodes},
			status: v1alpha1.DiagnosisUnknown,
		},
		{
			name: "a node that stopped reporting, and a cordoned one",
			root: func() *diagnose.Object {
				a, b := pod("web-1-a", "web-1"), pod("web-1-b", "web-1")
				b.Spec.NodeName = "n2"
				return obj(deployment(2), obj(replicaSet("web-1", "rs-web-1", "1", 2, 2), obj(a), obj(b)))
			}(),
			world: world{nodes: []*corev1.Node{
				node("n1", func(n *corev1.Node) {
					n.Status.Conditions[0] = corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown", Message: "Kubelet stopped posting node status."}
				}),
				node("n2", func(n *corev1.Node) { n.Spec.Unschedulable = true }),
			}},
			status: v1alpha1.DiagnosisUnhealthy,
			causes: []string{"NodeStatusUnknown Node/n1", "NodeNotSchedulable Node/n2 warning"},
		},
		{
			name: "a missing ConfigMap, an optional one and a missing image pull secret",
			root: func() *diagnose.Object {
				d := deployment(2)
				d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}}
				d.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "flags"}, Optional: ptr.To(true)}}}
				d.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
				return obj(d, obj(replicaSet("web-1", "rs-web-1", "1", 2, 2), obj(pod("web-1-a", "web-1")), obj(pod("web-1-b", "web-1"))))
			}(),
			world:    world{nodes: healthyNodes, objects: map[string]bool{"ServiceAccount/shop/default": true}},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"MissingReference ConfigMap/web-config (missing)", "MissingReference Secret/registry (missing) warning"},
			message:  "ConfigMap web-config does not exist, yet the pod template of Deployment web uses it (volume config)",
			evidence: "spec.template.spec.volumes[config]",
		},
		{
			name: "a stuck rollout and its deadline, after what keeps the new pods from running",
			root: func() *diagnose.Object {
				d := deployment(2)
				d.Annotations["deployment.kubernetes.io/revision"] = "2"
				d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "web-2" has timed out progressing.`}}
				p := unschedulable(pod("web-2-a", "web-2"), "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
				p.Spec.NodeSelector = map[string]string{"disktype": "nvme"}
				rs2 := replicaSet("web-2", "rs-web-2", "2", 1, 1)
				rs2.Status.AvailableReplicas = 0
				return obj(d, obj(replicaSet("web-1", "rs-web-1", "1", 2, 2), obj(pod("web-1-a", "web-1")), obj(pod("web-1-b", "web-1"))), obj(rs2, obj(p)))
			}(),
			world:   world{nodes: healthyNodes},
			status:  v1alpha1.DiagnosisUnhealthy,
			causes:  []string{"FailedScheduling Pod/web-2-a", "RolloutStuck ReplicaSet/web-2", "ProgressDeadlineExceeded Deployment/web"},
			message: "no node matches",
		},
		{
			name: "a CronJob suspended, whose last Job failed; an older failed Job is history",
			root: func() *diagnose.Object {
				cj := &batchv1.CronJob{ObjectMeta: om("tick", "cj"), Spec: batchv1.CronJobSpec{Schedule: "* * * * *", Suspend: ptr.To(true)}}
				job := func(name string, created time.Duration, failed bool) *batchv1.Job {
					j := &batchv1.Job{ObjectMeta: controlledBy(om(name, "j-"+name), "CronJob", "tick", "cj")}
					j.CreationTimestamp = ago(created)
					if failed {
						j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}
					} else {
						j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
					}
					return j
				}
				p := &corev1.Pod{ObjectMeta: controlledBy(om("tick-3-x", "p3"), "Job", "tick-3", "j-tick-3"), Status: corev1.PodStatus{Phase: corev1.PodFailed,
					ContainerStatuses: []corev1.ContainerStatus{{Name: "tick", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}}}}}}
				return obj(cj, obj(job("tick-1", 3*time.Minute, true)), obj(job("tick-2", 2*time.Minute, false)), obj(job("tick-3", time.Minute, true), obj(p)))
			}(),
			world:    world{nodes: healthyNodes},
			status:   v1alpha1.DiagnosisUnhealthy,
			causes:   []string{"BackoffLimitExceeded Job/tick-3", "Suspended CronJob/tick warning"},
			message:  "Job tick-3 failed: Job has reached the specified backoff limit; pod tick-3-x's container tick terminated with Error (exit code 2)",
			evidence: "Failed",
		},
		{
			name: "a Service that selects no ready pod, and a budget that allows no disruption",
			root: obj(deployment(0), obj(replicaSet("web-1", "rs-web-1", "1", 2, 0))),
			world: world{nodes: healthyNodes, selects: []runtime.Object{
				&corev1.Service{ObjectMeta: om("web", "s1"), Spec: corev1.ServiceSpec{Selector: webLabels}},
				&policyv1.PodDisruptionBudget{ObjectMeta: om("web", "b1"), Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2)), Selector: &metav1.LabelSelector{MatchLabels: webLabels}},
					Status: policyv1.PodDisruptionBudgetStatus{ExpectedPods: 2, DesiredHealthy: 2, CurrentHealthy: 0,
						Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse, Reason: "InsufficientPods"}}}},
			}},
			status:  v1alpha1.DiagnosisUnhealthy,
			causes:  []string{"NoReadyPods Service/web", "InsufficientPods PodDisruptionBudget/web warning"},
			message: "Service web selects no pod (selector app=web)",
		},
		{
			name: "a Service root with pods, none ready",
			root: obj(&corev1.Service{ObjectMeta: om("web", "s1"), Spec: corev1.ServiceSpec{Selector: webLabels}}),
			world: world{pods: []*corev1.Pod{func() *corev1.Pod {
				p := withLabels(pod("web-1-a", "web-1"))
				p.Status.Conditions[1].Status = corev1.ConditionFalse
				return p
			}()}},
			status:  v1alpha1.DiagnosisUnhealthy,
			causes:  []string{"NoReadyPods Service/web"},
			message: "Service web selects 1 pod, none of them ready",
		},
		{
			name: "a custom resource whose Ready condition is False",
			root: obj(&unstructured.Unstructured{Object: map[string]any{"apiVersion": "ctrl.example.com/v1", "kind": "Widget",
				"metadata": map[string]any{"namespace": "shop", "name": "w1", "uid": "w1"},
				"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "BackendDown", "message": "the backend is down"}}}}}),
			status:  v1alpha1.DiagnosisUnhealthy,
			causes:  []string{"BackendDown Widget/w1"},
			message: "Widget w1 is not Ready: the backend is down",
		},
		{
			name:   "pods not scheduled and no nodes to read: the scheduler's words",
			root:   obj(unschedulable(pod("web-1-a", "web-1"), "0/3 nodes are available: 3 Insufficient memory.")),
			world:  world{noNodes: true},
			status: v1alpha1.DiagnosisUnhealthy,
			causes: []string{"FailedScheduling Pod/web-1-a"},
		},
		{
			name: "not available, and nothing says why",
			root: func() *diagnose.Object {
				p := pod("web-1-a", "web-1")
				p.Status = corev1.PodStatus{Phase: corev1.PodPending}
				return obj(deployment(1), obj(replicaSet("web-1", "rs-web-1", "1", 2, 2), obj(p), obj(pod("web-1-b", "web-1"))))
			}(),
			world:  world{nodes: healthyNodes},
			status: v1alpha1.DiagnosisUnknown,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.world.objects == nil {
				tc.world.objects = map[string]bool{"ServiceAccount/shop/default": true}
			}
			got := diagnose.Diagnose(tc.root, &tc.world, now)
			var lines []string
			for _, c := range got.Causes {
				lines = append(lines, line(c))
			}
			if got.Status != tc.status || !slices.Equal(lines, tc.causes) {
				t.Fatalf("got %s %q, want %s %q\n%s", got.Status, lines, tc.status, tc.causes, describe(got))
			}
			if tc.message != "" && !strings.Contains(got.Causes[0].Message, tc.message) {
				t.Errorf("message %q, want it to contain %q", got.Causes[0].Message, tc.message)
			}
			if tc.evidence != "" && !slices.ContainsFunc(got.Causes[0].Evidence, func(e v1alpha1.Evidence) bool {
				return e.Field == tc.evidence || e.Condition == tc.evidence || e.Event == tc.evidence
			}) {
				t.Errorf("evidence %+v, want %s among it", got.Causes[0].Evidence, tc.evidence)
			}
			if got.Checked[tc.root.GVK.Kind] == 0 {
				t.Errorf("checked %v, want the subject's kind counted", got.Checked)
			}
		})
	}
}

func describe(r diagnose.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "summary %q, checked %v\n", r.Summary, r.Checked)
	for _, c := range r.Causes {
		fmt.Fprintf(&b, "  %s %s %s: %s\n", c.Severity, c.Reason, c.Object, c.Message)
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, "    %+v\n", e)
		}
	}
	return b.String()
}

// TestDiagnoseIsDeterministic: the same objects in another order give the
// same causes, messages and evidence.
func TestDiagnoseIsDeterministic(t *testing.T) {
	mk := func(names ...string) *diagnose.Object {
		var pods []*diagnose.Object
		for _, n := range names {
			p := unschedulable(pod(n, "web-1"), "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.")
			p.Spec.NodeSelector = map[string]string{"disktype": "nvme"}
			pods = append(pods, obj(p))
		}
		return obj(deployment(0), obj(replicaSet("web-1", "rs-web-1", "1", 3, 3), pods...))
	}
	w := &world{nodes: []*corev1.Node{node("n1")}, objects: map[string]bool{"ServiceAccount/shop/default": true}}
	a := diagnose.Diagnose(mk("web-1-a", "web-1-b", "web-1-c"), w, now)
	b := diagnose.Diagnose(mk("web-1-c", "web-1-a", "web-1-b"), w, now)
	if describe(a) != describe(b) {
		t.Errorf("the order of the pods changed the answer:\n%s\n%s", describe(a), describe(b))
	}
}
