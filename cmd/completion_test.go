package cmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/discovery/cached/memory"
	discoveryfake "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestCompletionOptionsValidation(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
	}{
		{args: nil, wantErr: "shell not specified; one of: bash, zsh, fish, powershell"},
		{args: []string{"tcsh"}, wantErr: `unsupported shell type "tcsh"; one of: bash, zsh, fish, powershell`},
		{args: []string{"bash", "zsh"}, wantErr: "too many arguments; expected only the shell type"},
		{args: []string{"bash"}},
		{args: []string{"powershell"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := NewCompletionOptions(genericiooptions.NewTestIOStreamsDiscard())
			err := o.Complete(tc.args)
			if err == nil {
				err = o.Validate()
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("error %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func TestCompletionRun(t *testing.T) {
	// Each script must complete the binary's own name, which is what a shell sees
	// when kubectl-idx is run directly.
	for shell, want := range map[string]string{
		"bash":       "complete -o default -F __start_kubectl-idx kubectl-idx",
		"zsh":        "#compdef kubectl-idx",
		"fish":       "complete -c kubectl-idx",
		"powershell": "Register-ArgumentCompleter -CommandName 'kubectl-idx'",
	} {
		t.Run(shell, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			o := NewCompletionOptions(streams)
			o.Shell = shell
			if err := o.Run(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), want) {
				t.Errorf("script does not contain %q", want)
			}
			if errOut.Len() != 0 {
				t.Errorf("stderr: %q", errOut.String())
			}
		})
	}
}

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
	c := &completer{getter: genericclioptions.NewTestConfigFlags().WithDiscoveryClient(memory.NewMemCacheClient(fake))}

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
			got, directive := c.typeAndName(&cobra.Command{}, tc.args, tc.toComplete)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if directive != tc.wantDirective {
				t.Errorf("directive %d, want %d", directive, tc.wantDirective)
			}
		})
	}
}
