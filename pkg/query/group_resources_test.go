package query_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// quantities parses name, quantity pairs.
func quantities(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// withResources replaces the pod's containers with one container "app" of
// requests reqs and limits lims.
func withResources(reqs, lims corev1.ResourceList) fixtures.PodOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers = []corev1.Container{{Name: "app", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: reqs, Limits: lims}}}
	}
}

// trainer gives the pod a sidecar before an init container, two containers
// and overhead. As the scheduler counts it: requests cpu 2350m, memory
// 3416Mi, nvidia.com/gpu 1, ephemeral-storage 10Gi; limits cpu 2500m, memory
// 4376Mi, nvidia.com/gpu 1 (worked out in pkg/index's TestPodResources).
func trainer(p *corev1.Pod) {
	c := func(name string, reqs, lims corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: name, Image: "busybox", Resources: corev1.ResourceRequirements{Requests: reqs, Limits: lims}}
	}
	proxy := c("proxy", quantities("cpu", "100m", "memory", "64Mi"), quantities("cpu", "200m", "memory", "128Mi"))
	proxy.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	logger := c("logger", quantities("cpu", "50m", "memory", "32Mi"), quantities("cpu", "50m", "memory", "32Mi"))
	logger.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	p.Spec.InitContainers = []corev1.Container{proxy, c("fetch", quantities("cpu", "2", "memory", "1Gi"), quantities("memory", "2Gi")), logger}
	p.Spec.Containers = []corev1.Container{
		c("train", quantities("cpu", "1", "memory", "3Gi", "nvidia.com/gpu", "1", "ephemeral-storage", "10Gi"), quantities("cpu", "2", "memory", "4Gi", "nvidia.com/gpu", "1")),
		c("stats", quantities("cpu", "100m", "memory", "128Mi"), nil),
	}
	p.Spec.Overhead = quantities("cpu", "250m", "memory", "120Mi")
}

// resourceObjects is a cluster for the sums: team research runs two trainers
// on worker-1 (which has 4 GPUs), a finished report there and a pending pod
// asking for a GPU; team shop runs a cache on worker-2 with hugepages and an
// extended resource.
func resourceObjects() []runtime.Object {
	w1 := fixtures.GroupNode("worker-1", corev1.ConditionTrue, false, "8", "32Gi", "worker")
	w1.Status.Allocatable["nvidia.com/gpu"] = resource.MustParse("4")
	w1.Status.Allocatable["hugepages-2Mi"] = resource.MustParse("0")
	return []runtime.Object{
		w1,
		fixtures.GroupNode("worker-2", corev1.ConditionTrue, false, "4", "16Gi", "worker"),
		fixtures.GroupPod("shop", "train-0", "worker-1", trainer, fixtures.Labelled("team", "research")),
		fixtures.GroupPod("shop", "train-1", "worker-1", trainer, fixtures.Labelled("team", "research")),
		fixtures.GroupPod("shop", "report", "worker-1", withResources(quantities("cpu", "1", "memory", "1Gi"), nil),
			fixtures.Phase(corev1.PodSucceeded, false), fixtures.Labelled("team", "research")),
		fixtures.GroupPod("shop", "pending", "", withResources(quantities("cpu", "500m", "memory", "1Gi", "nvidia.com/gpu", "1"), quantities("nvidia.com/gpu", "1")),
			fixtures.Phase(corev1.PodPending, false), fixtures.Labelled("team", "research")),
		fixtures.GroupPod("shop", "cache", "worker-2",
			withResources(quantities("cpu", "100m", "memory", "128Mi", "hugepages-2Mi", "4Mi", "example.com/foo", "2"), quantities("memory", "256Mi", "hugepages-2Mi", "4Mi", "example.com/foo", "2")),
			fixtures.Labelled("team", "shop")),
	}
}

// The research team's sums: two trainers and the pending pod; the finished
// report holds nothing.
var researchResources = &v1alpha1.ResourceSummary{
	Pods: 3,
	Requests: v1alpha1.Resources{CPU: "5200m", Memory: "7856Mi", CPUMillis: 5200, MemoryBytes: 7856 << 20,
		Other: map[string]string{"nvidia.com/gpu": "3", "ephemeral-storage": "20Gi"}},
	Limits: v1alpha1.Resources{CPU: "5", Memory: "8752Mi", CPUMillis: 5000, MemoryBytes: 8752 << 20,
		Other: map[string]string{"nvidia.com/gpu": "3"}},
}

// The two trainers on worker-1.
var trainersResources = &v1alpha1.ResourceSummary{
	Pods: 2,
	Requests: v1alpha1.Resources{CPU: "4700m", Memory: "6832Mi", CPUMillis: 4700, MemoryBytes: 6832 << 20,
		Other: map[string]string{"nvidia.com/gpu": "2", "ephemeral-storage": "20Gi"}},
	Limits: v1alpha1.Resources{CPU: "5", Memory: "8752Mi", CPUMillis: 5000, MemoryBytes: 8752 << 20,
		Other: map[string]string{"nvidia.com/gpu": "2"}},
}

// sums reports whether a group of doc sums the resources of a pod.
func sums(doc *v1alpha1.GroupList) bool {
	for _, g := range doc.Groups {
		if g.Summary.Resources != nil && g.Summary.Resources.Pods > 0 {
			return true
		}
	}
	return false
}

// checkResources compares a group's resource summary.
func checkResources(t *testing.T, doc *v1alpha1.GroupList, name string, want *v1alpha1.ResourceSummary) {
	t.Helper()
	got := group(t, doc, name).Summary.Resources
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s resources:\n%+v\nwant\n%+v", name, got, want)
	}
}

func TestSessionGroupResources(t *testing.T) {
	byTeam := query.GroupBy{Mode: query.GroupByLabel, LabelKey: "team"}
	tests := []groupCase{
		{
			name: "by label: sidecars, init containers, overhead and extended resources add up", by: byTeam,
			wantNames: []string{"team=research", "team=shop"},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				checkResources(t, doc, "team=research", researchResources)
				checkResources(t, doc, "team=shop", &v1alpha1.ResourceSummary{
					Pods: 1,
					Requests: v1alpha1.Resources{CPU: "100m", Memory: "128Mi", CPUMillis: 100, MemoryBytes: 128 << 20,
						Other: map[string]string{"hugepages-2Mi": "4Mi", "example.com/foo": "2"}},
					Limits: v1alpha1.Resources{CPU: "0", Memory: "256Mi", MemoryBytes: 256 << 20,
						Other: map[string]string{"hugepages-2Mi": "4Mi", "example.com/foo": "2"}},
				})
				// The paths the README's recipes read.
				data, err := json.Marshal(group(t, doc, "team=research").Summary)
				if err != nil {
					t.Fatal(err)
				}
				var js struct {
					Resources struct {
						Pods     int            `json:"pods"`
						Requests map[string]any `json:"requests"`
						Limits   map[string]any `json:"limits"`
					} `json:"resources"`
				}
				if err := json.Unmarshal(data, &js); err != nil {
					t.Fatal(err)
				}
				r := js.Resources
				if r.Pods != 3 || r.Requests["nvidia.com/gpu"] != "3" || r.Requests["memoryBytes"] != float64(7856<<20) ||
					r.Requests["cpuMillis"] != float64(5200) || r.Requests["cpu"] != "5200m" || r.Limits["memory"] != "8752Mi" {
					t.Errorf("summary JSON: %s", data)
				}
			},
		},
		{
			name: "by label, metadata only: no sums", by: byTeam,
			reqs: []query.Request{{Resource: fixtures.Pods, Mode: informer.MetadataOnly}},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				for _, g := range doc.Groups {
					if g.Summary.Resources != nil {
						t.Errorf("%s: resources %+v from metadata", g.Name, g.Summary.Resources)
					}
				}
			},
		},
		{
			name: "by label, names narrow the sums", by: byTeam,
			reqs: []query.Request{{Resource: fixtures.Pods, Names: []string{"train-0", "report"}}},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				r := group(t, doc, "team=research").Summary.Resources
				if r == nil || r.Pods != 1 || r.Requests.CPUMillis != 2350 || r.Requests.MemoryBytes != 3416<<20 {
					t.Errorf("train-0 and a finished report: %+v, want one pod of 2350m and 3416Mi", r)
				}
			},
		},
		{
			name: "a group of finished pods sums nothing", by: byTeam, labelSelector: "team=research",
			reqs: []query.Request{{Resource: fixtures.Pods, Names: []string{"report"}}},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				want := &v1alpha1.ResourceSummary{Requests: v1alpha1.Resources{CPU: "0", Memory: "0"}, Limits: v1alpha1.Resources{CPU: "0", Memory: "0"}}
				checkResources(t, doc, "team=research", want)
			},
		},
		{
			name: "by namespace", by: query.GroupBy{Mode: query.GroupByNamespace},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				r := group(t, doc, "shop").Summary.Resources
				if r == nil || r.Pods != 4 || r.Requests.CPU != "5300m" || r.Requests.Other["example.com/foo"] != "2" || r.Limits.Memory != "9008Mi" {
					t.Errorf("shop resources = %+v, want 4 pods, 5300m, example.com/foo 2, memory limits 9008Mi", r)
				}
			},
		},
		{
			name: "by JSONPath", by: query.GroupBy{Mode: query.GroupByJSONPath, JSONPath: "{.spec.initContainers[*].name}"},
			wantNames: []string{"fetch", "logger", "proxy", "<none>"},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				checkResources(t, doc, "proxy", trainersResources)
			},
		},
		{
			name: "by node: node requests and limits are the summary's", by: query.GroupBy{Mode: query.GroupByNode},
			wantNames: []string{"worker-1", "worker-2", "<none>"},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				checkResources(t, doc, "worker-1", trainersResources)
				n := group(t, doc, "worker-1").Summary.Node
				if n == nil || !reflect.DeepEqual(n.Requests, trainersResources.Requests) || !reflect.DeepEqual(n.Limits, trainersResources.Limits) {
					t.Errorf("worker-1 node summary = %+v, want requests and limits %+v", n, trainersResources)
				}
				// Allocatable lists what the node has, zero hugepages left out.
				wantAlloc := v1alpha1.Resources{CPU: "8", Memory: "32Gi", CPUMillis: 8000, MemoryBytes: 32 << 30, Other: map[string]string{"nvidia.com/gpu": "4"}}
				if n != nil && (!reflect.DeepEqual(n.Allocatable, wantAlloc) || n.CPUPercent != 58 || n.MemoryPercent != 20) {
					t.Errorf("worker-1 allocatable %+v, %d%% cpu, %d%% memory; want %+v, 58%%, 20%%", n.Allocatable, n.CPUPercent, n.MemoryPercent, wantAlloc)
				}
				// Unscheduled pods have no node, but their sums say what waits.
				none := group(t, doc, "<none>").Summary
				if none.Node != nil || none.Resources == nil || none.Resources.Requests.Other["nvidia.com/gpu"] != "1" {
					t.Errorf("<none>: node %+v, resources %+v; want no node and a GPU requested", none.Node, none.Resources)
				}
			},
		},
		{
			name: "by node, including completed pods", by: query.GroupBy{Mode: query.GroupByNode, IncludeCompleted: true},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				g := group(t, doc, "worker-1").Summary
				want := v1alpha1.Resources{CPU: "5700m", Memory: "7856Mi", CPUMillis: 5700, MemoryBytes: 7856 << 20,
					Other: map[string]string{"nvidia.com/gpu": "2", "ephemeral-storage": "20Gi"}}
				if g.Resources == nil || g.Resources.Pods != 3 || !reflect.DeepEqual(g.Resources.Requests, want) || g.Node == nil || !reflect.DeepEqual(g.Node.Requests, want) {
					t.Errorf("worker-1 with the finished report: resources %+v, node %+v; want 3 pods requesting %+v", g.Resources, g.Node, want)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.objects = resourceObjects()
			tc.run(t)
		})
		// The same sums from requests and limits a cache server keeps,
		// asked twice of one cache.
		t.Run(tc.name+", kept", func(t *testing.T) {
			tc.objects = resourceObjects()
			tc.kept = index.NewPodResourcesCache(t.Context(), time.Hour)
			for range 2 {
				if doc := tc.run(t); sums(doc) && tc.kept.Len() == 0 {
					t.Error("the sums were not kept")
				}
			}
		})
	}

	// --by-owner: the Deployment's two pods, each requesting 100m and 128Mi
	// and limited to 256Mi of memory.
	t.Run("by owner", func(t *testing.T) {
		objs := fixtures.OwnerObjects()
		for _, o := range objs {
			if p, ok := o.(*corev1.Pod); ok && (p.Name == "web-5d4-aaaaa" || p.Name == "web-5d4-bbbbb") {
				withResources(quantities("cpu", "100m", "memory", "128Mi"), quantities("memory", "256Mi"))(p)
			}
		}
		groupCase{
			by: query.GroupBy{Mode: query.GroupByOwner}, objects: objs, wantWarnings: []string{unknownWidget},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				checkResources(t, doc, "Deployment/web", &v1alpha1.ResourceSummary{
					Pods:     2,
					Requests: v1alpha1.Resources{CPU: "200m", Memory: "256Mi", CPUMillis: 200, MemoryBytes: 256 << 20},
					Limits:   v1alpha1.Resources{CPU: "0", Memory: "512Mi", MemoryBytes: 512 << 20},
				})
				// Pods without requests sum to zero, and say so.
				checkResources(t, doc, "<none>", &v1alpha1.ResourceSummary{Pods: 2, Requests: v1alpha1.Resources{CPU: "0", Memory: "0"}, Limits: v1alpha1.Resources{CPU: "0", Memory: "0"}})
			},
		}.run(t)
	})
}
