package index

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/cache"
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
// them (see PodResources).
func PodRequests(pod *corev1.Pod) (cpu, memory resource.Quantity) {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	return reqs[corev1.ResourceCPU], reqs[corev1.ResourceMemory]
}

// PodResources returns what a pod requests and what it is limited to, per
// resource (cpu, memory, ephemeral-storage, hugepages-*, extended resources such
// as nvidia.com/gpu), as the scheduler counts them. It calls the scheduler's own
// code, k8s.io/component-helpers/resource, whose rule is, per resource:
//
//	max( sum of the app containers + sum of the restartable init containers,
//	     max over each other init container of (its value + the restartable
//	     init containers declared before it) ) + spec.overhead
//
// Restartable init containers (sidecars, restartPolicy Always) start in order
// and keep running beside the app containers; the other init containers run
// one at a time, each beside the sidecars started before it, and are done
// before the app containers start. Pod-level resources (spec.resources), when
// set, replace the containers' cpu, memory and hugepages, as they do for the
// scheduler.
//
// Limits follow the same rule on limits, with two differences of the helper
// (and of kubectl describe node): a container without a limit for a resource
// adds nothing to that resource, so where some containers are unbounded the sum
// is only what the bounded ones allow; and overhead is added only to a resource
// that has a non-zero limit.
//
// Both are read from the spec, as kubectl describe node reads them: a pod being
// resized in place counts at its spec's values. The lists are new; the pod is
// not changed.
func PodResources(pod *corev1.Pod) (requests, limits corev1.ResourceList) {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}),
		resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
}

// ResourceTotals adds up the requests and limits of pods (PodResources). The
// zero value is ready to use.
type ResourceTotals struct {
	// Pods counts the pods added.
	Pods int
	// Requests and Limits are the sums, per resource; nil until a pod adds a
	// resource.
	Requests, Limits corev1.ResourceList
}

// Add adds a pod's requests and limits. Which pods to add (Terminal ones or
// not) is the caller's choice.
func (t *ResourceTotals) Add(pod *corev1.Pod) {
	reqs, lims := PodResources(pod)
	t.Pods++
	t.Requests = addResources(t.Requests, reqs)
	t.Limits = addResources(t.Limits, lims)
}

// AddKept is Add with the pod's requests and limits as c keeps them
// (PodResourcesCache); a nil c computes them, as Add.
func (t *ResourceTotals) AddKept(c *PodResourcesCache, pod *corev1.Pod) {
	if c == nil {
		t.Add(pod)
		return
	}
	e := c.get(pod)
	t.Pods++
	for i, nq := range e.quantities {
		sum := &t.Requests
		if i >= e.limitsAt {
			sum = &t.Limits
		}
		if *sum == nil {
			*sum = corev1.ResourceList{}
		}
		total := (*sum)[nq.name]
		total.Add(nq.q)
		(*sum)[nq.name] = total
	}
}

// addResources adds each quantity of add to sum, allocating sum when needed.
func addResources(sum, add corev1.ResourceList) corev1.ResourceList {
	if len(add) == 0 {
		return sum
	}
	if sum == nil {
		sum = corev1.ResourceList{}
	}
	for name, q := range add {
		total := sum[name]
		total.Add(q)
		sum[name] = total
	}
	return sum
}

// KeepSummaryFields is an informer transform that strips a pod to what the
// group summaries read (PodCounts, ResourceTotals): its metadata, its phase
// and conditions, and what it requests and is limited to. Those are worked
// out here, by PodResources, and kept as the resources of one container
// named "totals", which PodResources then reads back unchanged: a realistic
// pod's per-container resource lists were the largest part of what was left
// of it. The pod's containers are otherwise gone, so only summaries may read
// a pod this transform has seen. Other objects pass untouched. Transforms run
// on freshly decoded objects, so changing them is allowed.
func KeepSummaryFields(obj any) (any, error) {
	inner := obj
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		inner = d.Obj
	}
	pod, ok := inner.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	if len(pod.Spec.Containers) == 1 && pod.Spec.Containers[0].Name == totalsContainer && pod.Spec.InitContainers == nil {
		// Stripped already: page by page as the list arrived.
		return obj, nil
	}
	requests, limits := PodResources(pod)
	totals := corev1.Container{Name: totalsContainer}
	if len(requests) > 0 {
		totals.Resources.Requests = requests
	}
	if len(limits) > 0 {
		totals.Resources.Limits = limits
	}
	pod.Spec = corev1.PodSpec{Containers: []corev1.Container{totals}}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, Conditions: pod.Status.Conditions}
	return obj, nil
}

// totalsContainer names the one container KeepSummaryFields leaves a pod.
const totalsContainer = "totals"
