package printers

import (
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// ObjectStatus returns a short readiness and status for an object in a tree.
// READY has one shape for every kind, a count of ready parts as kubectl's own
// columns put it: containers of a pod ("1/2"), replicas or completions of a
// workload ("2/3"). An object with nothing to count has none, and says whether
// it is ready in STATUS: a Node "Ready" or "NotReady" as kubectl get nodes
// does, an object with a Ready condition (most operators' custom resources)
// "Ready" or the condition's reason. STATUS is otherwise the pod STATUS
// column, a workload's state, or a phase. Empty strings mean the object has no
// such notion, or only its metadata is known.
func ObjectStatus(obj runtime.Object, _ time.Time) (ready, status string) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return podReadyStatus(o)
	case *appsv1.Deployment:
		ready = fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, replicas(o.Spec.Replicas))
		for _, c := range o.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status != corev1.ConditionTrue {
				return ready, firstNonEmpty(c.Reason, "Unavailable")
			}
		}
		if o.Status.AvailableReplicas >= replicas(o.Spec.Replicas) && o.Status.ObservedGeneration >= o.Generation {
			return ready, "Available"
		}
		return ready, "Progressing"
	case *appsv1.ReplicaSet:
		return fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, replicas(o.Spec.Replicas)), ""
	case *appsv1.StatefulSet:
		return fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, replicas(o.Spec.Replicas)), ""
	case *appsv1.DaemonSet:
		return fmt.Sprintf("%d/%d", o.Status.NumberReady, o.Status.DesiredNumberScheduled), ""
	case *corev1.ReplicationController:
		return fmt.Sprintf("%d/%d", o.Status.ReadyReplicas, replicas(o.Spec.Replicas)), ""
	case *batchv1.Job:
		completions := "1"
		if o.Spec.Completions != nil {
			completions = fmt.Sprint(*o.Spec.Completions)
		}
		ready = fmt.Sprintf("%d/%s", o.Status.Succeeded, completions)
		switch {
		case jobConditionTrue(o.Status.Conditions, batchv1.JobFailed):
			return ready, "Failed"
		case jobConditionTrue(o.Status.Conditions, batchv1.JobComplete):
			return ready, "Complete"
		case jobConditionTrue(o.Status.Conditions, batchv1.JobSuspended):
			return ready, "Suspended"
		}
		return ready, "Running"
	case *batchv1.CronJob:
		if o.Spec.Suspend != nil && *o.Spec.Suspend {
			return "", "Suspended"
		}
		return "", fmt.Sprintf("Active: %d", len(o.Status.Active))
	case *corev1.Node:
		for _, c := range o.Status.Conditions {
			if c.Type == corev1.NodeReady {
				status = "NotReady"
				if c.Status == corev1.ConditionTrue {
					status = "Ready"
				}
				if o.Spec.Unschedulable {
					status += ",SchedulingDisabled"
				}
				return "", status
			}
		}
		// As kubectl get nodes: cordoning shows even when readiness is unknown.
		if o.Spec.Unschedulable {
			return "", "Unknown,SchedulingDisabled"
		}
		return "", "Unknown"
	case *corev1.PersistentVolumeClaim:
		return "", string(o.Status.Phase)
	case *corev1.PersistentVolume:
		return "", string(o.Status.Phase)
	case *unstructured.Unstructured:
		return conditionStatus(o.Object)
	}
	return "", ""
}

// conditionStatus reads status.conditions[type=Ready] (the convention
// kubectl-tree and most operators follow) into STATUS: "Ready", or the
// reason it is not, "NotReady" without one; it falls back to status.phase.
// READY stays empty: a condition counts nothing.
func conditionStatus(obj map[string]any) (ready, status string) {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		switch st, _ := m["status"].(string); st {
		case "":
			// Malformed: no status rather than a guess.
			return "", ""
		case string(corev1.ConditionTrue):
			return "", "Ready"
		}
		reason, _ := m["reason"].(string)
		return "", firstNonEmpty(reason, "NotReady")
	}
	phase, _, _ := unstructured.NestedString(obj, "status", "phase")
	return "", phase
}

// nodeUnreachablePodReason is the reason the node lifecycle controller gives pods on a lost node
// (k8s.io/kubernetes/pkg/util/node.NodeUnreachablePodReason).
const nodeUnreachablePodReason = "NodeLost"

// podReadyStatus computes a pod's READY and STATUS as the API server's pod
// table does, for the status columns of trees and the ready counts of group
// summaries (tables print the server's own cells). STATUS starts from the
// phase and is overridden, in this order, by: the pod's reason, a scheduling
// gate, the first init container that has not finished, then the last regular
// container with a waiting or terminated reason, and finally deletion.
func podReadyStatus(pod *corev1.Pod) (ready, status string) {
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, condition := range pod.Status.Conditions {
		if condition.Type == corev1.PodScheduled && condition.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	// Sidecars (restartable init containers) run for the pod's lifetime, so they count as
	// containers in READY.
	initContainers := make(map[string]*corev1.Container, len(pod.Spec.InitContainers))
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		initContainers[c.Name] = c
		if isSidecar(c) {
			totalContainers++
		}
	}

	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		status := &pod.Status.InitContainerStatuses[i]
		sidecar := isSidecar(initContainers[status.Name])
		switch {
		case status.State.Terminated != nil && status.State.Terminated.ExitCode == 0:
			continue
		case sidecar && status.Started != nil && *status.Started:
			if status.Ready {
				readyContainers++
			}
			continue
		case status.State.Terminated != nil:
			switch {
			case status.State.Terminated.Reason != "":
				reason = "Init:" + status.State.Terminated.Reason
			case status.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", status.State.Terminated.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", status.State.Terminated.ExitCode)
			}
		case status.State.Waiting != nil && status.State.Waiting.Reason != "" && status.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + status.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podConditionTrue(pod.Status.Conditions, corev1.PodInitialized) {
		hasRunning := false
		// Backwards, so that the first container's reason wins, as in kubectl.
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			status := &pod.Status.ContainerStatuses[i]
			switch {
			case status.State.Waiting != nil && status.State.Waiting.Reason != "":
				reason = status.State.Waiting.Reason
			case status.State.Terminated != nil && status.State.Terminated.Reason != "":
				reason = status.State.Terminated.Reason
			case status.State.Terminated != nil && status.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", status.State.Terminated.Signal)
			case status.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", status.State.Terminated.ExitCode)
			case status.Ready && status.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		// One finished container does not make a pod whose others still run "Completed".
		if reason == "Completed" && hasRunning {
			if podConditionTrue(pod.Status.Conditions, corev1.PodReady) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason:
		reason = "Unknown"
	case pod.DeletionTimestamp != nil && !terminal:
		reason = "Terminating"
	}
	return fmt.Sprintf("%d/%d", readyContainers, totalContainers), reason
}

// isSidecar reports whether c is a restartable init container (a sidecar).
func isSidecar(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// podConditionTrue reports whether the first condition of type t is True.
func podConditionTrue(conditions []corev1.PodCondition, t corev1.PodConditionType) bool {
	for _, condition := range conditions {
		if condition.Type == t {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}

// jobConditionTrue reports whether the first condition of type t is True.
func jobConditionTrue(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, condition := range conditions {
		if condition.Type == t {
			return condition.Status == corev1.ConditionTrue
		}
	}
	return false
}

// replicas is a replica count whose nil means 1, as the API defaults it.
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// firstNonEmpty returns the first of ss that is not empty.
func firstNonEmpty(ss ...string) string {
	if i := slices.IndexFunc(ss, func(s string) bool { return s != "" }); i >= 0 {
		return ss[i]
	}
	return ""
}
