package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// controllersManifest is applied with kubectl as a user would: a Deployment whose
// ReplicaSet and pods the controllers create, schedule and run on kwok's nodes, and a Job
// whose pods kwok completes.
const controllersManifest = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, kubectl-idx.io/e2e: controllers}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, kubectl-idx.io/e2e: controllers}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 100m, memory: 64Mi}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: report
  labels: {app: report, kubectl-idx.io/e2e: controllers}
spec:
  completions: 2
  parallelism: 2
  backoffLimit: 0
  template:
    metadata:
      labels: {app: report, kubectl-idx.io/e2e: controllers}
    spec:
      restartPolicy: Never
      containers:
      - name: report
        image: registry.k8s.io/busybox:1.36
        command: ["true"]
`

// TestControllers proves the controller-driven control plane: the deployment, replicaset
// and job controllers, the scheduler, kwok's kubelet stages and the garbage collector each
// do their part, and kubectl idx --by-owner agrees with the ownerReferences they wrote.
func TestControllers(t *testing.T) {
	t.Parallel()
	c := controllerCluster(t)
	const ns = "ctrl-basics"
	c.createNamespace(t, ns)
	c.mustKubectl(t, controllersManifest, "apply", "-n", ns, "-f", "-")

	// The Deployment: a ReplicaSet it controls, three pods that ReplicaSet controls, each
	// bound by the scheduler to a kwok node and Running and Ready there.
	took := eventually(t, 2*time.Minute, "Deployment web to roll out on kwok nodes", func() string {
		w := c.readWorkloads(t, ns)
		return c.deploymentRolledOut(t, w, "web", 3)
	})
	t.Logf("Deployment web available with 3 Running pods after %s", took.Round(time.Millisecond))

	// The Job: two pods it controls, run and completed by kwok, counted by the job controller.
	took = eventually(t, 2*time.Minute, "Job report to succeed", func() string {
		return jobSucceeded(t, c.readWorkloads(t, ns), "report", 2)
	})
	t.Logf("Job report complete after %s", took.Round(time.Millisecond))

	t.Run("by-owner matches ownerReferences", func(t *testing.T) {
		w, doc := c.steadyByOwner(t, ns)
		pods := w.ofKind("Pod")
		checkOwnerGroups(t, doc, pods, w.owners())
		// Beyond the walk, each group's pod counts, against the pods' status in the truth.
		owners := w.owners()
		want := map[string]string{}
		for _, u := range pods {
			top := owners.top(t, u)
			want[top.groupName()] = ""
		}
		for name := range want {
			var members []*corev1.Pod
			for _, u := range pods {
				if owners.top(t, u).groupName() == name {
					members = append(members, typed[corev1.Pod](t, u))
				}
			}
			want[name] = podCounts(members)
		}
		got := map[string]string{}
		for _, g := range doc.Groups {
			got[g.Name] = summaryCounts(g)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pod summaries per group (-kubectl +kubectl idx):\n%s", diff)
		}
		if len(want) != 2 || want["Deployment/web"] == "" || want["Job/report"] == "" {
			t.Errorf("want the groups Deployment/web and Job/report, the truth has %v", want)
		}
	})

	// Background cascading deletion, kubectl's default: the Deployment goes at once, then the
	// garbage collector deletes its ReplicaSet, and the ReplicaSet's pods, which kwok's
	// pod-delete stage lets go.
	before := c.readWorkloads(t, ns)
	deploy := before.get("Deployment", "web")
	rss := before.controlledBy("ReplicaSet", deploy)
	var pods []*unstructured.Unstructured
	for _, rs := range rss {
		pods = append(pods, before.controlledBy("Pod", rs)...)
	}
	c.mustKubectl(t, "", "delete", "deployment", "web", "-n", ns)
	sawTerminating := false
	took = eventually(t, 2*time.Minute, "the garbage collector to remove Deployment web's ReplicaSet and pods", func() string {
		w := c.readWorkloads(t, ns)
		var left []string
		for _, o := range slices.Concat([]*unstructured.Unstructured{deploy}, rss, pods) {
			for _, cur := range w.items {
				if cur.GetUID() != o.GetUID() {
					continue
				}
				state := ""
				if cur.GetDeletionTimestamp() != nil {
					state = " (terminating)"
					sawTerminating = true
				}
				left = append(left, cur.GetKind()+"/"+cur.GetName()+state)
			}
		}
		if len(left) > 0 {
			return "still there: " + strings.Join(left, ", ")
		}
		return ""
	})
	t.Logf("ReplicaSet and pods gone %s after kubectl delete (pods seen terminating: %v)", took.Round(time.Millisecond), sawTerminating)

	// The Job and its pods are untouched.
	if why := jobSucceeded(t, c.readWorkloads(t, ns), "report", 2); why != "" {
		t.Errorf("after deleting the Deployment: %s", why)
	}
}

// podCounts renders what a group's pod summary should say about pods: phases, and Ready as
// the pod's Ready condition says for a pod that has not finished (a Succeeded or Failed pod
// serves nothing, even where kwok leaves its Ready condition True).
func podCounts(pods []*corev1.Pod) string {
	n := map[corev1.PodPhase]int{}
	ready := 0
	for _, p := range pods {
		n[p.Status.Phase]++
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return fmt.Sprintf("total %d, ready %d, running %d, pending %d, succeeded %d, failed %d, unknown %d",
		len(pods), ready, n[corev1.PodRunning], n[corev1.PodPending], n[corev1.PodSucceeded], n[corev1.PodFailed], n[corev1.PodUnknown])
}

// summaryCounts renders a group's pod summary as podCounts renders pods.
func summaryCounts(g outputGroup) string {
	p := g.Summary.Pods
	if p == nil {
		return "no pod summary"
	}
	return fmt.Sprintf("total %d, ready %d, running %d, pending %d, succeeded %d, failed %d, unknown %d",
		p.Total, p.Ready, p.Running, p.Pending, p.Succeeded, p.Failed, p.Unknown)
}

// checkPodSummaries compares the pod summary of each group of doc that has pods with
// podCounts of those pods as w, the truth of the same moment, has them.
func checkPodSummaries(t *testing.T, doc groupList, w workloads) {
	t.Helper()
	idx := w.owners()
	for _, g := range doc.Groups {
		var pods []*corev1.Pod
		for _, it := range g.Items {
			if u := idx.byUID[it.GetUID()]; u != nil && u.GetKind() == "Pod" {
				pods = append(pods, typed[corev1.Pod](t, u))
			}
		}
		if len(pods) == 0 {
			continue
		}
		if want, got := podCounts(pods), summaryCounts(g); got != want {
			t.Errorf("group %s: pods %s, want %s", g.Name, got, want)
		}
	}
}

// deploymentRolledOut returns what Deployment name in w still lacks to be fully rolled out
// with replicas pods Running and Ready on the control plane's nodes, or "": one ReplicaSet
// with pods, those of earlier rollouts scaled to 0 with theirs gone.
func (c *ctrlCluster) deploymentRolledOut(t *testing.T, w workloads, name string, replicas int32) string {
	t.Helper()
	u, d, missing := typedIn[appsv1.Deployment](t, w, name)
	if missing != "" {
		return missing
	}
	st := d.Status
	if st.ObservedGeneration != d.Generation || st.UpdatedReplicas != replicas || st.AvailableReplicas != replicas || st.Replicas != replicas {
		return fmt.Sprintf("status: observedGeneration %d of %d, replicas %d, updated %d, available %d", st.ObservedGeneration, d.Generation, st.Replicas, st.UpdatedReplicas, st.AvailableReplicas)
	}
	var live []*unstructured.Unstructured
	for _, rs := range w.controlledBy("ReplicaSet", u) {
		if *typed[appsv1.ReplicaSet](t, rs).Spec.Replicas > 0 || len(w.controlledBy("Pod", rs)) > 0 {
			live = append(live, rs)
		}
	}
	if len(live) != 1 {
		return fmt.Sprintf("%d ReplicaSets controlled by the Deployment have replicas or pods", len(live))
	}
	pods := w.controlledBy("Pod", live[0])
	if len(pods) != int(replicas) {
		return fmt.Sprintf("%d pods controlled by ReplicaSet %s", len(pods), live[0].GetName())
	}
	for _, u := range pods {
		p := typed[corev1.Pod](t, u)
		if why := c.podRunning(p); why != "" {
			return "pod " + p.Name + ": " + why
		}
	}
	return ""
}

// podRunning returns why p is not Running and Ready on one of the control plane's nodes, or "".
func (c *ctrlCluster) podRunning(p *corev1.Pod) string {
	if !slices.Contains(c.env.Nodes, p.Spec.NodeName) {
		return fmt.Sprintf("on node %q, not a kwok node %v", p.Spec.NodeName, c.env.Nodes)
	}
	if p.Status.Phase != corev1.PodRunning {
		return "phase " + string(p.Status.Phase)
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
			return ""
		}
	}
	return "not Ready"
}

// jobSucceeded returns what Job name in w still lacks to be Complete with completions
// Succeeded pods it controls, or "".
func jobSucceeded(t *testing.T, w workloads, name string, completions int32) string {
	t.Helper()
	u, j, missing := typedIn[batchv1.Job](t, w, name)
	if missing != "" {
		return missing
	}
	complete := false
	for _, cond := range j.Status.Conditions {
		if cond.Type == batchv1.JobComplete && cond.Status == corev1.ConditionTrue {
			complete = true
		}
	}
	if !complete || j.Status.Succeeded != completions {
		return fmt.Sprintf("status: succeeded %d, active %d, failed %d, conditions %v", j.Status.Succeeded, j.Status.Active, j.Status.Failed, j.Status.Conditions)
	}
	pods := w.controlledBy("Pod", u)
	if len(pods) != int(completions) {
		return fmt.Sprintf("%d pods controlled by the Job", len(pods))
	}
	for _, u := range pods {
		p := typed[corev1.Pod](t, u)
		if p.Status.Phase != corev1.PodSucceeded {
			return "pod " + p.Name + ": phase " + string(p.Status.Phase)
		}
	}
	return ""
}

// steadyByOwner runs `kubectl idx pods -n ns --by-owner -o json` between two reads of the
// namespace's workloads (steady) and returns the answer with the truth of the same moment.
func (c *ctrlCluster) steadyByOwner(t *testing.T, ns string) (workloads, groupList) {
	t.Helper()
	var doc groupList
	w := c.answer(t, &doc, func() workloads { return c.readWorkloads(t, ns) }, nil, "pods", "-n", ns, "--by-owner", "-o", "json")
	return w, doc
}
