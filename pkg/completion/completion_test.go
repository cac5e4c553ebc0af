package completion

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery/cached/memory"
	discoveryfake "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestTypeCompletion covers the argument forms that complete resource types, from
// a fake discovery. Names need a server and are covered in test/e2e.
func TestTypeCompletion(t *testing.T) {
	fake := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{}}
	fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "pods", Namespaced: true, Kind: "Pod", Verbs: []string{"get", "list", "watch"}},
			{Name: "pods/log", Namespaced: true, Kind: "Pod", Verbs: []string{"get"}},
			{Name: "podtemplates", Namespaced: true, Kind: "PodTemplate", Verbs: []string{"get", "list", "watch"}},
			{Name: "bindings", Namespaced: true, Kind: "Binding", Verbs: []string{"create"}},
			{Name: "services", Namespaced: true, Kind: "Service", Verbs: []string{"get", "list", "watch"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Namespaced: true, Kind: "Deployment", Verbs: []string{"get", "list", "watch"}},
		}},
	}
	c := &Completer{getter: genericclioptions.NewTestConfigFlags().WithDiscoveryClient(memory.NewMemCacheClient(fake))}

	tests := []struct {
		name          string
		args          []string
		toComplete    string
		want          []string
		wantDirective cobra.ShellCompDirective
	}{
		{name: "all types, no subresources, only listable and watchable", toComplete: "",
			want: []string{"deployments.apps", "pods", "podtemplates", "services"}, wantDirective: cobra.ShellCompDirectiveNoFileComp},
		{name: "by prefix", toComplete: "po",
			want: []string{"pods", "podtemplates"}, wantDirective: cobra.ShellCompDirectiveNoFileComp},
		{name: "last of a comma-separated list", toComplete: "pods,dep",
			want: []string{"pods,deployments.apps"}, wantDirective: cobra.ShellCompDirectiveNoFileComp},
		{name: "after TYPE/NAME, a type and a slash", args: []string{"pods/web-1"}, toComplete: "s",
			want: []string{"services/"}, wantDirective: cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace},
		{name: "no names for a list of types", args: []string{"pods,services"}, toComplete: "",
			want: nil, wantDirective: cobra.ShellCompDirectiveNoFileComp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, directive := c.TypeAndName(&cobra.Command{}, tc.args, tc.toComplete)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if directive != tc.wantDirective {
				t.Errorf("directive %d, want %d", directive, tc.wantDirective)
			}
		})
	}
}
