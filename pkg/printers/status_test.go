package printers_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// statusNow is the reference time of the ObjectStatus tests.
var statusNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func statusMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: "shop", Name: name, CreationTimestamp: metav1.NewTime(statusNow.Add(-time.Hour))}
}

// statusPod is a pod with containers c0..cN-1 and the given statuses.
func statusPod(phase corev1.PodPhase, statuses ...corev1.ContainerStatus) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: statusMeta("p"), Status: corev1.PodStatus{Phase: phase, ContainerStatuses: statuses}}
	for _, s := range statuses {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: s.Name, Image: "busybox"})
	}
	return p
}

func runningStatus(name string, ready bool) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
}

func statusDeployment(replicas *int32, ready, available int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: statusMeta("web"),
		Spec:       appsv1.DeploymentSpec{Replicas: replicas},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: ready, AvailableReplicas: available, Conditions: conds},
	}
}

func availableCond(status corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
	return appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: status, Reason: reason}
}

func statusJob(completions *int32, succeeded int32, conds ...batchv1.JobCondition) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: statusMeta("job"),
		Spec:       batchv1.JobSpec{Completions: completions},
		Status:     batchv1.JobStatus{Succeeded: succeeded, Conditions: conds},
	}
}

func jobCond(t batchv1.JobConditionType, status corev1.ConditionStatus) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: status}
}

func statusNode(unschedulable bool, conds ...corev1.NodeCondition) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-1"},
		Spec:       corev1.NodeSpec{Unschedulable: unschedulable},
		Status:     corev1.NodeStatus{Conditions: conds},
	}
}

func nodeReady(status corev1.ConditionStatus) corev1.NodeCondition {
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: status}
}

// statusCR is a custom resource with the given status, or none.
func statusCR(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"namespace": "shop", "name": "canary"},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func readyCond(status, reason string) map[string]any {
	c := map[string]any{"type": "Ready", "status": status}
	if reason != "" {
		c["reason"] = reason
	}
	return c
}

func TestObjectStatus(t *testing.T) {
	crashing := statusPod(corev1.PodRunning, corev1.ContainerStatus{
		Name: "app", RestartCount: 4,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
	})
	completed := statusPod(corev1.PodSucceeded, corev1.ContainerStatus{
		Name:  "app",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}},
	})
	generationBehind := statusDeployment(ptr.To[int32](3), 3, 3, availableCond(corev1.ConditionTrue, "MinimumReplicasAvailable"))
	generationBehind.Generation, generationBehind.Status.ObservedGeneration = 2, 1

	tests := []struct {
		name          string
		obj           runtime.Object
		ready, status string
	}{
		// Pods: READY and STATUS exactly as the pod table shows them.
		{"pod running", statusPod(corev1.PodRunning, runningStatus("app", true), runningStatus("sidecar", true)), "2/2", "Running"},
		{"pod not ready", statusPod(corev1.PodRunning, runningStatus("app", true), runningStatus("sidecar", false)), "1/2", "Running"},
		{"pod crash looping", crashing, "0/1", "CrashLoopBackOff"},
		{"pod completed", completed, "0/1", "Completed"},
		{"pod pending", statusPod(corev1.PodPending), "0/0", "Pending"},

		// Deployments: ready/desired, then availability.
		{"deployment available", statusDeployment(ptr.To[int32](3), 3, 3, availableCond(corev1.ConditionTrue, "MinimumReplicasAvailable")), "3/3", "Available"},
		{"deployment progressing", statusDeployment(ptr.To[int32](3), 1, 1, availableCond(corev1.ConditionTrue, "MinimumReplicasAvailable")), "1/3", "Progressing"},
		{"deployment spec not observed yet", generationBehind, "3/3", "Progressing"},
		{"deployment unavailable", statusDeployment(ptr.To[int32](3), 0, 0, availableCond(corev1.ConditionFalse, "MinimumReplicasUnavailable")), "0/3", "MinimumReplicasUnavailable"},
		{"deployment unavailable without reason", statusDeployment(ptr.To[int32](2), 0, 0, availableCond(corev1.ConditionUnknown, "")), "0/2", "Unavailable"},
		{"deployment replicas defaulted", statusDeployment(nil, 1, 1), "1/1", "Available"},
		{"deployment scaled to zero", statusDeployment(ptr.To[int32](0), 0, 0), "0/0", "Available"},

		// Other workloads: ready/desired only.
		{
			"replicaset",
			&appsv1.ReplicaSet{ObjectMeta: statusMeta("web-5d4"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3)}, Status: appsv1.ReplicaSetStatus{ReadyReplicas: 2}},
			"2/3", "",
		},
		{
			"statefulset",
			&appsv1.StatefulSet{ObjectMeta: statusMeta("db"), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](2)}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 1}},
			"1/2", "",
		},
		{
			"daemonset",
			&appsv1.DaemonSet{ObjectMeta: statusMeta("agent"), Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 4, NumberReady: 3}},
			"3/4", "",
		},
		{
			"replicationcontroller",
			&corev1.ReplicationController{ObjectMeta: statusMeta("legacy"), Status: corev1.ReplicationControllerStatus{ReadyReplicas: 1}},
			"1/1", "",
		},

		// Jobs: succeeded/completions, then the terminal condition.
		{"job complete", statusJob(ptr.To[int32](3), 3, jobCond(batchv1.JobComplete, corev1.ConditionTrue)), "3/3", "Complete"},
		{"job failed", statusJob(nil, 0, jobCond(batchv1.JobFailed, corev1.ConditionTrue)), "0/1", "Failed"},
		{"job running", statusJob(ptr.To[int32](5), 2), "2/5", "Running"},
		{"job condition not true", statusJob(ptr.To[int32](1), 0, jobCond(batchv1.JobComplete, corev1.ConditionFalse)), "0/1", "Running"},
		{"job suspended", statusJob(ptr.To[int32](2), 0, jobCond(batchv1.JobSuspended, corev1.ConditionTrue)), "0/2", "Suspended"},

		// CronJobs have no readiness.
		{"cronjob suspended", &batchv1.CronJob{ObjectMeta: statusMeta("backup"), Spec: batchv1.CronJobSpec{Suspend: ptr.To(true)}}, "", "Suspended"},
		{
			"cronjob active",
			&batchv1.CronJob{ObjectMeta: statusMeta("backup"), Spec: batchv1.CronJobSpec{Suspend: ptr.To(false)}, Status: batchv1.CronJobStatus{Active: []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}}},
			"", "Active: 2",
		},
		{"cronjob idle", &batchv1.CronJob{ObjectMeta: statusMeta("backup")}, "", "Active: 0"},

		// Nodes: nothing to count, so no READY; STATUS as kubectl get nodes.
		{"node ready", statusNode(false, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, nodeReady(corev1.ConditionTrue)), "", "Ready"},
		{"node not ready", statusNode(false, nodeReady(corev1.ConditionFalse)), "", "NotReady"},
		{"node unreachable", statusNode(false, nodeReady(corev1.ConditionUnknown)), "", "NotReady"},
		{"node cordoned", statusNode(true, nodeReady(corev1.ConditionTrue)), "", "Ready,SchedulingDisabled"},
		{"node without conditions", statusNode(false), "", "Unknown"},
		{"node cordoned without conditions", statusNode(true), "", "Unknown,SchedulingDisabled"},

		// Volumes: the phase.
		{"pvc", &corev1.PersistentVolumeClaim{ObjectMeta: statusMeta("data"), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}, "", "Bound"},
		{"pvc pending", &corev1.PersistentVolumeClaim{ObjectMeta: statusMeta("data"), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}, "", "Pending"},
		{"pv", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-1"}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased}}, "", "Released"},

		// Custom resources: no READY; STATUS from the Ready condition,
		// "Ready" or the reason when it is not True, else status.phase.
		{"custom ready", statusCR(map[string]any{"conditions": []any{map[string]any{"type": "Synced", "status": "False"}, readyCond("True", "Healthy")}}), "", "Ready"},
		{"custom not ready", statusCR(map[string]any{"conditions": []any{readyCond("False", "ReconcileFailed")}, "phase": "Degraded"}), "", "ReconcileFailed"},
		{"custom not ready without reason", statusCR(map[string]any{"conditions": []any{readyCond("Unknown", "")}}), "", "NotReady"},
		{"custom phase only", statusCR(map[string]any{"phase": "Active"}), "", "Active"},
		{"custom other conditions only", statusCR(map[string]any{"conditions": []any{map[string]any{"type": "Synced", "status": "True"}}, "phase": "Active"}), "", "Active"},
		{"custom nothing", statusCR(nil), "", ""},
		{"custom empty status", statusCR(map[string]any{}), "", ""},
		// Malformed status is no status, not a crash.
		{"custom conditions not a list", statusCR(map[string]any{"conditions": "Ready", "phase": "Active"}), "", "Active"},
		{"custom condition not a map", statusCR(map[string]any{"conditions": []any{"Ready", readyCond("True", "")}}), "", "Ready"},
		{"custom status not a string", statusCR(map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": true}}, "phase": int64(3)}), "", ""},

		// Kinds without a notion of readiness, and metadata only.
		{"configmap", &corev1.ConfigMap{ObjectMeta: statusMeta("cfg")}, "", ""},
		{"metadata only", &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: statusMeta("p")}, "", ""},
		{"nil", nil, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before runtime.Object
			if tc.obj != nil {
				before = tc.obj.DeepCopyObject()
			}
			ready, status := printers.ObjectStatus(tc.obj, statusNow)
			if ready != tc.ready || status != tc.status {
				t.Errorf("ObjectStatus() = %q, %q; want %q, %q", ready, status, tc.ready, tc.status)
			}
			if tc.obj != nil && !apiequality.Semantic.DeepEqual(before, tc.obj) {
				t.Errorf("ObjectStatus modified its input:\nbefore %#v\nafter  %#v", before, tc.obj)
			}
		})
	}
}

// TestObjectStatusOfPods: a pod's READY and STATUS in a tree are those the
// API server's pod table prints (the end-to-end tests compare trees with
// kubectl on real servers).
func TestObjectStatusOfPods(t *testing.T) {
	for _, tc := range []struct {
		pod           *corev1.Pod
		ready, status string
	}{
		{statusPod(corev1.PodRunning, runningStatus("app", true), runningStatus("sidecar", true)), "2/2", "Running"},
		{statusPod(corev1.PodRunning, corev1.ContainerStatus{
			Name: "app", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}},
		}), "0/1", "ImagePullBackOff"},
		{statusPod(corev1.PodFailed, corev1.ContainerStatus{
			Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2}},
		}), "0/1", "ExitCode:2"},
	} {
		if ready, status := printers.ObjectStatus(tc.pod, statusNow); ready != tc.ready || status != tc.status {
			t.Errorf("ObjectStatus() = %q, %q; want %q, %q", ready, status, tc.ready, tc.status)
		}
	}
}

func TestObjectStatusOfDeployment(t *testing.T) {
	deploy := statusDeployment(ptr.To[int32](3), 3, 3)
	if ready, status := printers.ObjectStatus(deploy, statusNow); ready != "3/3" || status != "Available" {
		t.Errorf("ObjectStatus() = %q, %q; want 3/3, Available", ready, status)
	}
}
