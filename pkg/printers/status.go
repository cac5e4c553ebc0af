package printers

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// ObjectStatus returns a short readiness and status for an object in a tree:
// READY as kubectl's own column puts it for workloads ("2/3") and pods, the
// Ready condition ("True", "False") for everything else that has one, and
// STATUS as the pod STATUS column, a workload's state or the reason of a
// failing condition. Empty strings mean the object has no such notion, or only
// its metadata is known.
func ObjectStatus(obj runtime.Object, now time.Time) (ready, status string) {
	switch o := obj.(type) {
	case *corev1.Pod:
		cells := podCells(o, now)
		return cells[1].(string), cells[2].(string)
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
				return string(c.Status), status
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
// kubectl-tree and most operators follow) and falls back to status.phase.
func conditionStatus(obj map[string]any) (ready, status string) {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		ready, _ = m["status"].(string)
		if ready != "True" {
			status, _ = m["reason"].(string)
		}
		return ready, status
	}
	phase, _, _ := unstructured.NestedString(obj, "status", "phase")
	return "", phase
}
