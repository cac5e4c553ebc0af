package diagnose

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// health reports whether root is as its spec asks, and says in a few words
// what that rests on. A kind without a notion of its own (a custom
// resource) is healthy when its Ready condition is not False and every
// workload and pod under it is.
func (d *diagnosis) health(root *Object) (bool, string) {
	ok, summary, _ := d.healthOf(root)
	return ok, summary
}

// healthOf is health, known false for a kind with no notion of health of
// its own and nothing under it that has one.
func (d *diagnosis) healthOf(o *Object) (ok bool, summary string, known bool) {
	switch x := o.Obj.(type) {
	case *appsv1.Deployment:
		want, st := replicas(x.Spec.Replicas), x.Status
		ok := st.ObservedGeneration >= x.Generation && st.UpdatedReplicas == want && st.AvailableReplicas == want && st.Replicas == want
		s := fmt.Sprintf("%d/%d available, %d updated", st.AvailableReplicas, want, st.UpdatedReplicas)
		if st.Replicas > want {
			s += fmt.Sprintf(", %d in all", st.Replicas)
		}
		return ok, s, true
	case *appsv1.ReplicaSet:
		want := replicas(x.Spec.Replicas)
		return x.Status.ReadyReplicas == want && x.Status.Replicas == want, fmt.Sprintf("%d/%d ready", x.Status.ReadyReplicas, want), true
	case *corev1.ReplicationController:
		want := replicas(x.Spec.Replicas)
		return x.Status.ReadyReplicas == want && x.Status.Replicas == want, fmt.Sprintf("%d/%d ready", x.Status.ReadyReplicas, want), true
	case *appsv1.StatefulSet:
		want, st := replicas(x.Spec.Replicas), x.Status
		ok := st.ObservedGeneration >= x.Generation && st.ReadyReplicas == want && st.Replicas == want && (st.UpdatedReplicas == want || st.UpdateRevision == st.CurrentRevision)
		return ok, fmt.Sprintf("%d/%d ready", st.ReadyReplicas, want), true
	case *appsv1.DaemonSet:
		st := x.Status
		ok := st.ObservedGeneration >= x.Generation && st.NumberReady == st.DesiredNumberScheduled && st.UpdatedNumberScheduled == st.DesiredNumberScheduled && st.NumberUnavailable == 0
		return ok, fmt.Sprintf("%d/%d ready", st.NumberReady, st.DesiredNumberScheduled), true
	case *batchv1.Job:
		switch {
		case jobCondition(x, batchv1.JobFailed) != nil:
			return false, "failed", true
		case jobCondition(x, batchv1.JobComplete) != nil:
			return true, fmt.Sprintf("complete, %d succeeded", x.Status.Succeeded), true
		case x.Spec.Suspend != nil && *x.Spec.Suspend:
			return false, "suspended", true
		}
		return true, fmt.Sprintf("running, %d active", x.Status.Active), true
	case *batchv1.CronJob:
		if x.Spec.Suspend != nil && *x.Spec.Suspend {
			return false, "suspended", true
		}
		last := lastJob(o)
		if last == nil {
			return true, "no Job yet", true
		}
		ok, s, _ := d.healthOf(last)
		return ok, fmt.Sprintf("last Job %s %s", last.Meta.GetName(), s), true
	case *corev1.Pod:
		ready, total := 0, len(x.Spec.Containers)
		for _, st := range x.Status.ContainerStatuses {
			if st.Ready {
				ready++
			}
		}
		s := fmt.Sprintf("%s, %d/%d ready", x.Status.Phase, ready, total)
		return x.Status.Phase == corev1.PodSucceeded || x.Status.Phase == corev1.PodRunning && podReady(x), s, true
	case *corev1.Service:
		if len(x.Spec.Selector) == 0 {
			return true, "no selector", true
		}
		pods, known := d.src.SelectedPods(x.Namespace, labels.SelectorFromSet(x.Spec.Selector))
		if !known {
			return false, "its pods could not be read", true
		}
		ready := 0
		for _, p := range pods {
			if p.DeletionTimestamp == nil && !terminal(p) && podReady(p) {
				ready++
			}
		}
		return ready > 0, fmt.Sprintf("%d of %s ready", ready, plural(len(pods), "pod", "pods")), true
	case *corev1.PersistentVolumeClaim:
		return x.Status.Phase == corev1.ClaimBound, string(x.Status.Phase), true
	case *corev1.Node:
		c := nodeReady(x)
		ready := c != nil && c.Status == corev1.ConditionTrue
		s := "NotReady"
		if ready {
			s = "Ready"
		}
		if x.Spec.Unschedulable {
			s += ",SchedulingDisabled"
		}
		return ready && !x.Spec.Unschedulable, s, true
	}
	// Another kind: its Ready condition, then what is under it.
	ok, known = true, false
	summary = ""
	if c, found := readyCondition(o); found {
		known = true
		ok = c.status != string(corev1.ConditionFalse)
		summary = c.typ + " " + c.status
	}
	unhealthy, total := 0, 0
	for _, c := range o.Children {
		cok, _, cknown := d.healthOf(c)
		if !cknown {
			continue
		}
		known = true
		total++
		if !cok {
			unhealthy++
		}
	}
	if total > 0 {
		if summary != "" {
			summary += ", "
		}
		summary += fmt.Sprintf("%d of %d owned objects healthy", total-unhealthy, total)
	}
	return ok && unhealthy == 0, summary, known
}
