package index

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/resourcelist"
)

// rl parses "name=quantity" pairs into a resource list.
var rl = resourcelist.Parse

// ctr is a container with requests and limits.
func ctr(name string, reqs, lims corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Image: "busybox", Resources: corev1.ResourceRequirements{Requests: reqs, Limits: lims}}
}

// sidecarOf makes c a restartable init container.
func sidecarOf(c corev1.Container) corev1.Container {
	c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	return c
}

// listString renders the non-zero entries of l, sorted, for messages and
// comparison: "cpu=2350m memory=3416Mi".
var listString = resourcelist.String

// sameList reports whether a and b hold equal quantities for every resource,
// a zero quantity counting as absent.
func sameList(a, b corev1.ResourceList) bool {
	for name, q := range a {
		if other := b[name]; q.Cmp(other) != 0 {
			return false
		}
	}
	for name, q := range b {
		if other := a[name]; q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// resourcePods are the pods of the PodResources tests, with what the
// scheduler's rule makes of them, worked out by hand in the comments.
var resourcePods = []struct {
	name               string
	spec               corev1.PodSpec
	wantReqs, wantLims corev1.ResourceList
}{
	{
		name: "no requests or limits",
		spec: corev1.PodSpec{Containers: []corev1.Container{ctr("app", nil, nil)}},
	},
	{
		// Requests: max(containers 100m/128Mi, migrate 500m/64Mi) per resource.
		// Limits: only migrate limits cpu; nothing limits memory.
		name: "an init container wins on cpu, the containers on memory",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{ctr("migrate", rl("cpu=500m", "memory=64Mi"), rl("cpu=1"))},
			Containers:     []corev1.Container{ctr("app", rl("cpu=100m", "memory=128Mi"), nil)},
		},
		wantReqs: rl("cpu=500m", "memory=128Mi"),
		wantLims: rl("cpu=1"),
	},
	{
		// Init containers, in order: proxy (sidecar), fetch, logger (sidecar).
		// Requests:
		//   running:  train 1/3Gi + stats 100m/128Mi + proxy 100m/64Mi + logger 50m/32Mi
		//             = 1250m, 3296Mi (+ gpu 1, ephemeral-storage 10Gi)
		//   fetch:    2/1Gi + proxy (started before it) 100m/64Mi = 2100m, 1088Mi
		//   max:      2100m, 3296Mi; + overhead 250m/120Mi = 2350m, 3416Mi
		// Limits (stats and fetch's cpu have none, adding nothing):
		//   running:  train 2/4Gi + proxy 200m/128Mi + logger 50m/32Mi = 2250m, 4256Mi (+ gpu 1)
		//   fetch:    memory 2Gi + proxy 200m/128Mi = 200m, 2176Mi
		//   max:      2250m, 4256Mi; + overhead on cpu and memory (both limited) = 2500m, 4376Mi
		name: "sidecars, an init container and overhead",
		spec: corev1.PodSpec{
			InitContainers: []corev1.Container{
				sidecarOf(ctr("proxy", rl("cpu=100m", "memory=64Mi"), rl("cpu=200m", "memory=128Mi"))),
				ctr("fetch", rl("cpu=2", "memory=1Gi"), rl("memory=2Gi")),
				sidecarOf(ctr("logger", rl("cpu=50m", "memory=32Mi"), rl("cpu=50m", "memory=32Mi"))),
			},
			Containers: []corev1.Container{
				ctr("train", rl("cpu=1", "memory=3Gi", "nvidia.com/gpu=1", "ephemeral-storage=10Gi"), rl("cpu=2", "memory=4Gi", "nvidia.com/gpu=1")),
				ctr("stats", rl("cpu=100m", "memory=128Mi"), nil),
			},
			Overhead: rl("cpu=250m", "memory=120Mi"),
		},
		wantReqs: rl("cpu=2350m", "memory=3416Mi", "nvidia.com/gpu=1", "ephemeral-storage=10Gi"),
		wantLims: rl("cpu=2500m", "memory=4376Mi", "nvidia.com/gpu=1"),
	},
	{
		// Overhead is added to limits only where something is limited: memory
		// here, not cpu.
		name: "overhead and a pod without cpu limits",
		spec: corev1.PodSpec{
			Containers: []corev1.Container{ctr("app", rl("cpu=100m", "memory=128Mi"), rl("memory=256Mi"))},
			Overhead:   rl("cpu=250m", "memory=120Mi"),
		},
		wantReqs: rl("cpu=350m", "memory=248Mi"),
		wantLims: rl("memory=376Mi"),
	},
	{
		// Hugepages and extended resources add up like any other.
		name: "hugepages and extended resources",
		spec: corev1.PodSpec{Containers: []corev1.Container{
			ctr("a", rl("cpu=500m", "memory=1Gi", "hugepages-2Mi=4Mi", "example.com/foo=3"), rl("hugepages-2Mi=4Mi", "example.com/foo=3")),
			ctr("b", rl("example.com/foo=2"), rl("example.com/foo=2")),
		}},
		wantReqs: rl("cpu=500m", "memory=1Gi", "hugepages-2Mi=4Mi", "example.com/foo=5"),
		wantLims: rl("hugepages-2Mi=4Mi", "example.com/foo=5"),
	},
	{
		// Pod-level resources replace the containers' cpu and memory; the
		// GPU still comes from the container.
		name: "pod-level resources",
		spec: corev1.PodSpec{
			Containers: []corev1.Container{ctr("app", rl("cpu=500m", "memory=512Mi", "nvidia.com/gpu=1"), rl("nvidia.com/gpu=1"))},
			Resources:  &corev1.ResourceRequirements{Requests: rl("cpu=2", "memory=2Gi"), Limits: rl("cpu=4")},
		},
		wantReqs: rl("cpu=2", "memory=2Gi", "nvidia.com/gpu=1"),
		wantLims: rl("cpu=4", "nvidia.com/gpu=1"),
	},
}

// TestPodResources checks PodResources against the scheduler's own rule
// (component-helpers, as kube-scheduler calls it) and against expectations
// worked out by hand.
func TestPodResources(t *testing.T) {
	for _, tc := range resourcePods {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod("shop", "p", func(p *corev1.Pod) { p.Spec = *tc.spec.DeepCopy() })
			before := pod.DeepCopy()
			reqs, lims := PodResources(pod)

			schedReqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
			schedLims := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
			if !sameList(reqs, schedReqs) || !sameList(lims, schedLims) {
				t.Errorf("PodResources = requests %q, limits %q; the scheduler's rule says %q, %q",
					listString(reqs), listString(lims), listString(schedReqs), listString(schedLims))
			}
			if !sameList(reqs, tc.wantReqs) {
				t.Errorf("requests = %q, want %q", listString(reqs), listString(tc.wantReqs))
			}
			if !sameList(lims, tc.wantLims) {
				t.Errorf("limits = %q, want %q", listString(lims), listString(tc.wantLims))
			}
			cpu, mem := PodRequests(pod)
			if cpu.Cmp(reqs[corev1.ResourceCPU]) != 0 || mem.Cmp(reqs[corev1.ResourceMemory]) != 0 {
				t.Errorf("PodRequests = %s, %s; PodResources says %s", cpu.String(), mem.String(), listString(reqs))
			}
			assertUnchanged(t, before, pod)
		})
	}
}

func TestResourceTotals(t *testing.T) {
	var zero ResourceTotals
	if zero.Pods != 0 || zero.Requests != nil || zero.Limits != nil {
		t.Errorf("zero totals = %+v", zero)
	}

	var tot ResourceTotals
	var pods []*corev1.Pod
	for _, tc := range resourcePods {
		pod := newPod("shop", strings.ReplaceAll(tc.name, " ", "-"), func(p *corev1.Pod) { p.Spec = *tc.spec.DeepCopy() })
		pods = append(pods, pod)
		tot.Add(pod)
	}
	// The sum of each pod's hand-worked expectation.
	want := ResourceTotals{Pods: len(resourcePods)}
	for _, tc := range resourcePods {
		want.Requests = addResources(want.Requests, tc.wantReqs)
		want.Limits = addResources(want.Limits, tc.wantLims)
	}
	if tot.Pods != want.Pods || !sameList(tot.Requests, want.Requests) || !sameList(tot.Limits, want.Limits) {
		t.Errorf("totals = %d pods, requests %q, limits %q; want %d, %q, %q",
			tot.Pods, listString(tot.Requests), listString(tot.Limits), want.Pods, listString(want.Requests), listString(want.Limits))
	}
	// Spelled out, so a mistake in the expectations above shows.
	if got, w := listString(tot.Requests), "cpu=5700m ephemeral-storage=10Gi example.com/foo=5 hugepages-2Mi=4Mi memory=6864Mi nvidia.com/gpu=2"; got != w {
		t.Errorf("requests = %q, want %q", got, w)
	}
	if got, w := listString(tot.Limits), "cpu=7500m example.com/foo=5 hugepages-2Mi=4Mi memory=4752Mi nvidia.com/gpu=2"; got != w {
		t.Errorf("limits = %q, want %q", got, w)
	}
	// Adding never changes the pods' own quantities (sums are new values).
	for i, tc := range resourcePods {
		if !sameList(pods[i].Spec.Containers[0].Resources.Requests, tc.spec.Containers[0].Resources.Requests) {
			t.Errorf("pod %s: container requests changed to %q", tc.name, listString(pods[i].Spec.Containers[0].Resources.Requests))
		}
	}
}
