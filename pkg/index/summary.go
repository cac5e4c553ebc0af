package index

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/kubectl/pkg/util/podutils"
)

// nodeRolePrefix and nodeRoleLabel are the two label forms kubectl reads roles from.
const (
	nodeRolePrefix = "node-role.kubernetes.io/"
	nodeRoleLabel  = "kubernetes.io/role"
)

// NodeRoles returns a node's roles, sorted, as kubectl get nodes shows them.
func NodeRoles(node *corev1.Node) []string {
	roles := map[string]bool{}
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, nodeRolePrefix):
			if role := strings.TrimPrefix(k, nodeRolePrefix); role != "" {
				roles[role] = true
			}
		case k == nodeRoleLabel && v != "":
			roles[v] = true
		}
	}
	out := make([]string, 0, len(roles))
	for r := range roles {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// NodeStatus returns kubectl's STATUS for a node ("Ready", "NotReady",
// "Unknown", with ",SchedulingDisabled" when cordoned) and whether it is Ready.
func NodeStatus(node *corev1.Node) (string, bool) {
	status, ready := "Unknown", false
	for _, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		switch c.Status {
		case corev1.ConditionTrue:
			status, ready = "Ready", true
		case corev1.ConditionFalse:
			status = "NotReady"
		}
	}
	if node.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	return status, ready
}

// PodCounts holds readiness and phase counts over pods.
type PodCounts struct {
	Total, Ready, Running, Pending, Succeeded, Failed, Unknown int
}

// Add counts one pod.
func (c *PodCounts) Add(pod *corev1.Pod) {
	c.Total++
	// A finished pod serves nothing, whatever its last Ready condition says:
	// the kubelet sets it False with reason PodCompleted, but not every node
	// agent does (kwok leaves it True), and the table shows 0/1 either way.
	if podutils.IsPodReady(pod) && !Terminal(pod) {
		c.Ready++
	}
	switch pod.Status.Phase {
	case corev1.PodRunning:
		c.Running++
	case corev1.PodPending:
		c.Pending++
	case corev1.PodSucceeded:
		c.Succeeded++
	case corev1.PodFailed:
		c.Failed++
	default:
		c.Unknown++
	}
}

// Terminal reports whether a pod has finished: its requests no longer hold
// capacity on the node, which is why capacity sums skip it by default (counting
// them is a known way to overstate a node's use).
func Terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// PodRequests returns the CPU and memory a pod requests, as the scheduler counts
// them: the larger of the containers' sum and any init container, plus overhead.
func PodRequests(pod *corev1.Pod) (cpu, memory resource.Quantity) {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return reqs[corev1.ResourceCPU], reqs[corev1.ResourceMemory]
}
