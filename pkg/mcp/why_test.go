package mcp_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// crashing is Deployment web in shop, its ReplicaSet and two pods that
// crash on node worker-1, Service web selecting them, and pod lone, of its
// own, Pending with nothing saying why.
func crashing() []runtime.Object {
	labels := map[string]string{"app": "web"}
	meta := func(name, uid string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(uid), Labels: labels}
	}
	owned := func(m metav1.ObjectMeta, kind, name, uid string) metav1.ObjectMeta {
		m.OwnerReferences = []metav1.OwnerReference{fixtures.ControllerRef("apps/v1", kind, name, types.UID(uid))}
		return m
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	objs := []runtime.Object{
		&appsv1.Deployment{ObjectMeta: meta("web", "d"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: tmpl},
			Status: appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2}},
		&appsv1.ReplicaSet{ObjectMeta: owned(meta("web-1", "rs"), "Deployment", "web", "d"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Template: tmpl},
			Status: appsv1.ReplicaSetStatus{Replicas: 2}},
		&corev1.Service{ObjectMeta: meta("web", "svc"), Spec: corev1.ServiceSpec{Selector: labels}},
		&corev1.ServiceAccount{ObjectMeta: meta("default", "sa")},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", UID: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "lone", UID: "lone"}, Spec: *tmpl.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodPending}},
	}
	for _, name := range []string{"web-1-a", "web-1-b"} {
		p := &corev1.Pod{ObjectMeta: owned(meta(name, name), "ReplicaSet", "web-1", "rs"), Spec: *tmpl.Spec.DeepCopy(),
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "web:1", RestartCount: 4,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}}}}}
		p.Spec.NodeName = "worker-1"
		objs = append(objs, p)
	}
	return objs
}

// TestWhy: the why tool answers kubectl idx why's diagnosis, its causes
// paged worst first as plain strings, the verdict in the text; an object of
// no KIND/NAME shape is an InvalidArgument, and object text an attacker
// wrote stays out of the text.
func TestWhy(t *testing.T) {
	cfg, _ := oneCluster(t, crashing()...)
	cs := server(t, cfg, "")
	lines := func(a v1alpha1.WhyAnswer) []string {
		out := []string{}
		for _, c := range a.Causes {
			out = append(out, fmt.Sprintf("%s %s %s", c.Reason, c.Object, c.Subject))
		}
		return out
	}

	var one v1alpha1.WhyAnswer
	res, _ := call(t, cs, "why", map[string]any{"object": "deployment/web"}, &one)
	mustSucceed(t, "why deployment/web", res)
	if got, want := lines(one), []string{"CrashLoopBackOff Pod/web-1-a ", "NoReadyPods Service/web "}; !slices.Equal(got, want) || one.Status != "Unhealthy" ||
		one.Total != 2 || one.Truncated || len(one.Causes[0].Evidence) == 0 || !strings.Contains(one.Causes[0].Evidence[0], "state.waiting.reason=CrashLoopBackOff") {
		t.Errorf("why deployment/web: %s %q, total %d, evidence %q", one.Status, got, one.Total, one.Causes[0].Evidence)
	}
	if got := text(res); got != "why: Unhealthy; causes: 2 of 2. The answer is in structuredContent." {
		t.Errorf("text %q", got)
	}

	// Every top-level owner, a cause at a time.
	var first, second v1alpha1.WhyAnswer
	res, _ = call(t, cs, "why", map[string]any{"limit": 1}, &first)
	mustSucceed(t, "why, limit 1", res)
	res, _ = call(t, cs, "why", map[string]any{"limit": 1, "cursor": first.NextCursor}, &second)
	mustSucceed(t, "why, the next page", res)
	var subjects []string
	for _, s := range first.Subjects {
		subjects = append(subjects, s.Object+" "+s.Status)
	}
	if got := append(lines(first), lines(second)...); !slices.Equal(got, []string{"CrashLoopBackOff Pod/web-1-a Deployment/web", "NoReadyPods Service/web Deployment/web"}) ||
		!first.Truncated || first.Total != 2 || second.Truncated || first.Healthy != 0 ||
		!slices.Equal(subjects, []string{"Deployment/web Unhealthy", "Pod/lone Unknown", "Service/web Unhealthy"}) {
		t.Errorf("two pages: %q, truncated %v %v, total %d, subjects %q", got, first.Truncated, second.Truncated, first.Total, subjects)
	}

	var unknown v1alpha1.WhyAnswer
	res, _ = call(t, cs, "why", map[string]any{"object": "pod/lone"}, &unknown)
	mustSucceed(t, "why pod/lone", res)
	if unknown.Status != "Unknown" || len(unknown.Causes) != 0 || unknown.Checked["Pod"] != 1 {
		t.Errorf("why pod/lone: %+v", unknown)
	}

	res, _ = call(t, cs, "why", map[string]any{"object": "deployment"}, nil)
	mustFail(t, "why deployment", res, "InvalidArgument", "object must be KIND/NAME")
	res, _ = call(t, cs, "why", map[string]any{"object": "deployment/nope"}, nil)
	mustFail(t, "why deployment/nope", res, "NotFound", `deployments.apps "nope" not found`)

	// A pod whose only Warning event is an attacker's: its reason and message
	// are quoted in the answer's fields, never in the text.
	cfg, _ = oneCluster(t, attackObjects()...)
	cs = server(t, cfg, "")
	var attack v1alpha1.WhyAnswer
	res, raw := call(t, cs, "why", map[string]any{"object": "pod/attack"}, &attack)
	mustSucceed(t, "why pod/attack", res)
	if strings.Contains(text(res), injection) || strings.Contains(text(res), injectionReason) || !strings.Contains(raw, injection) {
		t.Errorf("text %q; the answer:\n%s", text(res), raw)
	}
}
