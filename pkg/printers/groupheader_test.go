package printers_test

import (
	"testing"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// TestGroupHeader pins the header lines of human output.
func TestGroupHeader(t *testing.T) {
	val := func(s string) *string { return &s }
	tests := []struct {
		mode string
		g    v1alpha1.Group
		want string
	}{
		{
			mode: "owner",
			g: v1alpha1.Group{Name: "Deployment/web", Key: v1alpha1.GroupKey{Kind: "Deployment", Namespace: "shop", Name: "web"},
				Summary: v1alpha1.GroupSummary{Members: 3, Kinds: map[string]int{"Pod": 3}, Pods: &v1alpha1.PodSummary{Total: 3, Ready: 3}}},
			want: "Deployment/web -n shop  3 pods, 3/3 ready",
		},
		{
			mode: "owner",
			g:    v1alpha1.Group{Name: "Node/worker-1", Key: v1alpha1.GroupKey{Kind: "Node", Name: "worker-1"}, Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1}}},
			want: "Node/worker-1  1 pod, 0/1 ready",
		},
		{
			mode: "owner",
			g: v1alpha1.Group{Name: "ReplicaSet/gone", Key: v1alpha1.GroupKey{Kind: "ReplicaSet", Namespace: "shop", Name: "gone", Dangling: true, Reason: "owner not found"},
				Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1, Ready: 1}}},
			want: "ReplicaSet/gone -n shop  (dangling: owner not found)  1 pod, 1/1 ready",
		},
		{
			mode: "owner",
			g: v1alpha1.Group{Name: "ReplicaSet/web", Key: v1alpha1.GroupKey{Kind: "ReplicaSet", Namespace: "shop", Name: "web", Unknown: true, Reason: "forbidden"},
				Summary: v1alpha1.GroupSummary{Members: 2, Kinds: map[string]int{"ReplicaSet": 2}}},
			want: "ReplicaSet/web -n shop  (owners above unknown)  2 replicasets",
		},
		{
			mode: "owner",
			g:    v1alpha1.Group{Name: "<none>", Key: v1alpha1.GroupKey{None: true}, Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1, Ready: 1}}},
			want: "<none>  1 pod, 1/1 ready",
		},
		{
			mode: "label",
			g: v1alpha1.Group{Name: "app=web", Key: v1alpha1.GroupKey{Value: val("web")},
				Summary: v1alpha1.GroupSummary{Members: 4, Kinds: map[string]int{"Pod": 2, "Service": 1, "Deployment": 1}, Pods: &v1alpha1.PodSummary{Total: 2, Ready: 1}}},
			want: "app=web  1 deployment, 2 pods, 1 service, 1/2 ready",
		},
		{
			mode: "node",
			g: v1alpha1.Group{Name: "worker-1", Key: v1alpha1.GroupKey{Node: "worker-1"},
				Summary: v1alpha1.GroupSummary{Members: 3, Kinds: map[string]int{"Pod": 3}, Pods: &v1alpha1.PodSummary{Total: 3, Ready: 3}, Node: &v1alpha1.NodeSummary{
					Exists: true, Status: "Ready", Ready: true, Roles: []string{"worker"},
					Requests:    v1alpha1.Resources{CPU: "1040m", Memory: "1664Mi", CPUMillis: 1040, MemoryBytes: 1744830464},
					Allocatable: v1alpha1.Resources{CPU: "3920m", Memory: "15184716Ki", CPUMillis: 3920, MemoryBytes: 15549149184},
					CPUPercent:  26, MemoryPercent: 11,
				}}},
			// The README's example header line.
			want: "worker-1  Ready  worker  cpu 1040m/3920m (26%)  memory 1.6Gi/14.5Gi (11%)  3 pods, 3/3 ready",
		},
		{
			mode: "node",
			g: v1alpha1.Group{Name: "worker-3", Key: v1alpha1.GroupKey{Node: "worker-3"},
				Summary: v1alpha1.GroupSummary{Kinds: map[string]int{}, Node: &v1alpha1.NodeSummary{
					Exists: true, Status: "NotReady,SchedulingDisabled", Roles: []string{},
					Requests:    v1alpha1.Resources{CPU: "0", Memory: "0"},
					Allocatable: v1alpha1.Resources{CPU: "4", Memory: "8Gi", CPUMillis: 4000, MemoryBytes: 8 << 30},
				}}},
			want: "worker-3  NotReady,SchedulingDisabled  <none>  cpu 0/4 (0%)  memory 0/8Gi (0%)  0 pods",
		},
		{
			// Sums of requests and limits follow the counts, each list with
			// only the resources present; bytes rounded as for nodes.
			mode: "label",
			g: v1alpha1.Group{Name: "team=research", Key: v1alpha1.GroupKey{Value: val("research")},
				Summary: v1alpha1.GroupSummary{Members: 3, Kinds: map[string]int{"Pod": 3}, Pods: &v1alpha1.PodSummary{Total: 3, Ready: 2},
					Resources: &v1alpha1.ResourceSummary{
						Pods: 3,
						Requests: v1alpha1.Resources{CPU: "5200m", Memory: "7856Mi", CPUMillis: 5200, MemoryBytes: 7856 << 20,
							Other: map[string]string{"nvidia.com/gpu": "3", "ephemeral-storage": "20Gi", "hugepages-2Mi": "4Mi"}},
						Limits: v1alpha1.Resources{CPU: "0", Memory: "8752Mi", MemoryBytes: 8752 << 20, Other: map[string]string{"nvidia.com/gpu": "3"}},
					}}},
			want: "team=research  3 pods, 2/3 ready  requests cpu 5200m, memory 7.7Gi, ephemeral-storage 20Gi, hugepages-2Mi 4Mi, nvidia.com/gpu 3  limits memory 8.5Gi, nvidia.com/gpu 3",
		},
		{
			mode: "owner",
			g: v1alpha1.Group{Name: "Deployment/web", Key: v1alpha1.GroupKey{Kind: "Deployment", Namespace: "shop", Name: "web"},
				Summary: v1alpha1.GroupSummary{Members: 2, Kinds: map[string]int{"Pod": 2}, Pods: &v1alpha1.PodSummary{Total: 2, Ready: 2},
					Resources: &v1alpha1.ResourceSummary{Pods: 2,
						Requests: v1alpha1.Resources{CPU: "1", CPUMillis: 1000, Memory: "0"},
						Limits:   v1alpha1.Resources{CPU: "2", CPUMillis: 2000, Memory: "0"},
					}}},
			want: "Deployment/web -n shop  2 pods, 2/2 ready  requests cpu 1  limits cpu 2",
		},
		{
			// Nothing requested, nothing limited: no sums to show.
			mode: "namespace",
			g: v1alpha1.Group{Name: "ops", Key: v1alpha1.GroupKey{Namespace: "ops"},
				Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1, Ready: 1},
					Resources: &v1alpha1.ResourceSummary{Pods: 1, Requests: v1alpha1.Resources{CPU: "0", Memory: "0"}, Limits: v1alpha1.Resources{CPU: "0", Memory: "0"}}}},
			want: "ops  1 pod, 1/1 ready",
		},
		{
			// A node's header keeps its requests against allocatable; the
			// sums are in its JSON.
			mode: "node",
			g: v1alpha1.Group{Name: "worker-2", Key: v1alpha1.GroupKey{Node: "worker-2"},
				Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1, Ready: 1},
					Resources: &v1alpha1.ResourceSummary{Pods: 1, Requests: v1alpha1.Resources{CPU: "1", CPUMillis: 1000, Memory: "0"}, Limits: v1alpha1.Resources{CPU: "0", Memory: "0"}},
					Node: &v1alpha1.NodeSummary{
						Exists: true, Status: "Ready", Ready: true, Roles: []string{"worker"},
						Requests:    v1alpha1.Resources{CPU: "1", CPUMillis: 1000, Memory: "0"},
						Allocatable: v1alpha1.Resources{CPU: "4", Memory: "8Gi", CPUMillis: 4000, MemoryBytes: 8 << 30},
						CPUPercent:  25,
					}}},
			want: "worker-2  Ready  worker  cpu 1/4 (25%)  memory 0/8Gi (0%)  1 pod, 1/1 ready",
		},
		{
			mode: "node",
			g: v1alpha1.Group{Name: "<none>", Key: v1alpha1.GroupKey{None: true},
				Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1},
					Resources: &v1alpha1.ResourceSummary{Pods: 1, Requests: v1alpha1.Resources{CPU: "2", CPUMillis: 2000, Memory: "0"}, Limits: v1alpha1.Resources{CPU: "0", Memory: "0"}}}},
			want: "<none>  1 pod, 0/1 ready",
		},
	}
	for _, tc := range tests {
		if got := printers.GroupHeader(v1alpha1.GroupMode(tc.mode))(&tc.g); got != tc.want {
			t.Errorf("header of %s:\n%q\nwant\n%q", tc.g.Name, got, tc.want)
		}
	}
}
