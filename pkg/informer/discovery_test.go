package informer_test

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

func TestListableResources(t *testing.T) {
	lw := []string{"get", "list", "watch"}
	dc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Kind: "Pod", Namespaced: true, Verbs: lw},
			{Name: "pods/log", Kind: "Pod", Namespaced: true, Verbs: []string{"get"}},
			{Name: "nodes", Kind: "Node", Verbs: lw},
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: lw},
			{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: []string{"create"}},
			{Name: "componentstatuses", Kind: "ComponentStatus", Verbs: []string{"get", "list"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "replicasets", Kind: "ReplicaSet", Namespaced: true, Verbs: lw},
			{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: lw},
		}},
		{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "events", Kind: "Event", Namespaced: true, Verbs: lw},
		}},
	}}}
	names := func(rs []informer.Resource) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name()+"/"+r.GVK.Kind)
		}
		return out
	}
	all, errs := informer.ListableResources(dc, false)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := []string{"nodes/Node", "pods/Pod", "deployments.apps/Deployment", "replicasets.apps/ReplicaSet"}
	if got := names(all); !slices.Equal(got, want) {
		t.Errorf("all = %q, want %q", got, want)
	}
	namespaced, _ := informer.ListableResources(dc, true)
	want = []string{"pods/Pod", "deployments.apps/Deployment", "replicasets.apps/ReplicaSet"}
	if got := names(namespaced); !slices.Equal(got, want) {
		t.Errorf("namespaced = %q, want %q", got, want)
	}
	for _, r := range namespaced {
		if !r.Namespaced || r.GVR.Version == "" {
			t.Errorf("resource %+v: want namespaced with a version", r)
		}
	}
}
