package index

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestNodeRoles(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   []string
	}{
		{name: "no labels", want: []string{}},
		{name: "unrelated labels", labels: map[string]string{"kubernetes.io/hostname": "worker-1", "node.kubernetes.io/instance-type": "m6i"}, want: []string{}},
		{name: "role prefix with empty value", labels: map[string]string{"node-role.kubernetes.io/control-plane": ""}, want: []string{"control-plane"}},
		{name: "role prefix with a value", labels: map[string]string{"node-role.kubernetes.io/worker": "true"}, want: []string{"worker"}},
		{name: "kubernetes.io/role", labels: map[string]string{"kubernetes.io/role": "master"}, want: []string{"master"}},
		{name: "empty kubernetes.io/role is no role", labels: map[string]string{"kubernetes.io/role": ""}, want: []string{}},
		{name: "bare prefix is no role", labels: map[string]string{"node-role.kubernetes.io/": "x"}, want: []string{}},
		{
			name: "several, sorted and without duplicates",
			labels: map[string]string{
				"node-role.kubernetes.io/worker":        "",
				"node-role.kubernetes.io/control-plane": "",
				"node-role.kubernetes.io/gpu":           "",
				"kubernetes.io/role":                    "worker",
			},
			want: []string{"control-plane", "gpu", "worker"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: tc.labels}}
			before := node.DeepCopy()
			got := NodeRoles(node)
			// JSON prints "roles": [] for none, never null.
			if got == nil {
				t.Fatal("NodeRoles returned nil, want an empty slice")
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("NodeRoles = %q, want %q", got, tc.want)
			}
			assertUnchanged(t, before, node)
		})
	}
}

func TestNodeStatus(t *testing.T) {
	ready := func(s corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: corev1.NodeReady, Status: s}
	}
	pressure := corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue}
	tests := []struct {
		name       string
		conditions []corev1.NodeCondition
		cordoned   bool
		want       string
		wantReady  bool
	}{
		{name: "ready", conditions: []corev1.NodeCondition{pressure, ready(corev1.ConditionTrue)}, want: "Ready", wantReady: true},
		{name: "not ready", conditions: []corev1.NodeCondition{ready(corev1.ConditionFalse)}, want: "NotReady"},
		{name: "ready unknown", conditions: []corev1.NodeCondition{ready(corev1.ConditionUnknown)}, want: "Unknown"},
		{name: "no ready condition", conditions: []corev1.NodeCondition{pressure}, want: "Unknown"},
		{name: "no conditions", want: "Unknown"},
		{name: "ready, cordoned", conditions: []corev1.NodeCondition{ready(corev1.ConditionTrue)}, cordoned: true, want: "Ready,SchedulingDisabled", wantReady: true},
		{name: "not ready, cordoned", conditions: []corev1.NodeCondition{ready(corev1.ConditionFalse)}, cordoned: true, want: "NotReady,SchedulingDisabled"},
		{name: "unknown, cordoned", cordoned: true, want: "Unknown,SchedulingDisabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "n"},
				Spec:       corev1.NodeSpec{Unschedulable: tc.cordoned},
				Status:     corev1.NodeStatus{Conditions: tc.conditions},
			}
			got, gotReady := NodeStatus(node)
			if got != tc.want || gotReady != tc.wantReady {
				t.Errorf("NodeStatus = %q, %v; want %q, %v", got, gotReady, tc.want, tc.wantReady)
			}
		})
	}
}

// phasePod is a pod in phase, Ready or not.
func phasePod(phase corev1.PodPhase, ready bool) *corev1.Pod {
	return newPod("shop", "p", func(p *corev1.Pod) {
		p.Status.Phase = phase
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	})
}

func TestPodCounts(t *testing.T) {
	var c PodCounts
	pods := []*corev1.Pod{
		phasePod(corev1.PodRunning, true),
		phasePod(corev1.PodRunning, true),
		phasePod(corev1.PodRunning, false), // crash-looping
		phasePod(corev1.PodPending, false),
		phasePod(corev1.PodSucceeded, false),
		phasePod(corev1.PodFailed, false),
		// Finished with Ready left True, as kwok leaves a Job's pods: not ready.
		phasePod(corev1.PodSucceeded, true),
		phasePod(corev1.PodUnknown, false),
		phasePod("", false), // no status yet
		newPod("shop", "no-conditions", func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }),
	}
	for _, p := range pods {
		before := p.DeepCopy()
		c.Add(p)
		assertUnchanged(t, before, p)
	}
	want := PodCounts{Total: 10, Ready: 2, Running: 4, Pending: 1, Succeeded: 2, Failed: 1, Unknown: 2}
	if c != want {
		t.Errorf("PodCounts = %+v, want %+v", c, want)
	}
}

func TestTerminal(t *testing.T) {
	for phase, want := range map[corev1.PodPhase]bool{
		corev1.PodSucceeded: true,
		corev1.PodFailed:    true,
		corev1.PodRunning:   false,
		corev1.PodPending:   false,
		corev1.PodUnknown:   false,
		"":                  false,
	} {
		if got := Terminal(phasePod(phase, false)); got != want {
			t.Errorf("Terminal(%q) = %v, want %v", phase, got, want)
		}
	}
}

// requests is a container requesting cpu and memory ("" for none).
func requests(name, cpu, mem string) corev1.Container {
	c := corev1.Container{Name: name, Image: "busybox"}
	if cpu != "" || mem != "" {
		c.Resources.Requests = corev1.ResourceList{}
	}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return c
}

func TestPodRequests(t *testing.T) {
	sidecar := requests("sidecar", "50m", "16Mi")
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	tests := []struct {
		name              string
		containers        []corev1.Container
		init              []corev1.Container
		overhead          corev1.ResourceList
		wantCPU, wantMem  string
		wantMilli         int64
		wantMemoryInBytes int64
	}{
		{name: "no requests", containers: []corev1.Container{requests("app", "", "")}, wantCPU: "0", wantMem: "0"},
		{
			name:       "containers add up",
			containers: []corev1.Container{requests("app", "100m", "128Mi"), requests("log", "20m", "32Mi")},
			wantCPU:    "120m", wantMem: "160Mi", wantMilli: 120, wantMemoryInBytes: 160 << 20,
		},
		{
			name:       "cpu only",
			containers: []corev1.Container{requests("app", "1", "")},
			wantCPU:    "1", wantMem: "0", wantMilli: 1000,
		},
		{
			name:       "an init container larger than the containers wins, per resource",
			containers: []corev1.Container{requests("app", "100m", "128Mi"), requests("log", "20m", "32Mi")},
			init:       []corev1.Container{requests("migrate", "500m", "64Mi"), requests("wait", "10m", "256Mi")},
			wantCPU:    "500m", wantMem: "256Mi", wantMilli: 500, wantMemoryInBytes: 256 << 20,
		},
		{
			name:       "init containers smaller than the containers do not count",
			containers: []corev1.Container{requests("app", "1", "1Gi")},
			init:       []corev1.Container{requests("migrate", "500m", "512Mi")},
			wantCPU:    "1", wantMem: "1Gi", wantMilli: 1000, wantMemoryInBytes: 1 << 30,
		},
		{
			name:       "a sidecar (restartable init container) runs alongside the containers",
			containers: []corev1.Container{requests("app", "100m", "128Mi")},
			init:       []corev1.Container{sidecar},
			wantCPU:    "150m", wantMem: "144Mi", wantMilli: 150, wantMemoryInBytes: 144 << 20,
		},
		{
			name:       "overhead is added",
			containers: []corev1.Container{requests("app", "100m", "128Mi")},
			init:       []corev1.Container{requests("migrate", "500m", "64Mi")},
			overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("120Mi")},
			wantCPU:    "750m", wantMem: "248Mi", wantMilli: 750, wantMemoryInBytes: 248 << 20,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPod("shop", "p", func(p *corev1.Pod) {
				p.Spec.Containers = tc.containers
				p.Spec.InitContainers = tc.init
				p.Spec.Overhead = tc.overhead
			})
			before := pod.DeepCopy()
			cpu, mem := PodRequests(pod)
			if cpu.Cmp(resource.MustParse(tc.wantCPU)) != 0 || mem.Cmp(resource.MustParse(tc.wantMem)) != 0 {
				t.Errorf("PodRequests = cpu %s, memory %s; want %s, %s", cpu.String(), mem.String(), tc.wantCPU, tc.wantMem)
			}
			if cpu.MilliValue() != tc.wantMilli || mem.Value() != tc.wantMemoryInBytes {
				t.Errorf("PodRequests = %dm, %d bytes; want %dm, %d bytes", cpu.MilliValue(), mem.Value(), tc.wantMilli, tc.wantMemoryInBytes)
			}
			assertUnchanged(t, before, pod)
		})
	}
}
