package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
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
			err := o.Complete(nil, tc.args)
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
	for shell, want := range fixtures.CompletionScriptLines() {
		t.Run(shell, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			o := NewCompletionOptions(streams)
			o.Shell = shell
			if err := o.Run(context.Background()); err != nil {
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

// TestContextCompletion completes --context, a comma-separated list of contexts,
// through the hidden __complete command as a shell does, from a kubeconfig with
// three contexts. Only the kubeconfig is read: the server must not be contacted.
func TestContextCompletion(t *testing.T) {
	kubeconfig := fixtures.ContextsKubeconfig(t, untouchedServer(t), "gamma", "alpha", "beta")

	const (
		space   = cobra.ShellCompDirectiveNoFileComp
		noSpace = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	)
	tests := []struct {
		name          string
		toComplete    string
		want          []string
		wantDirective cobra.ShellCompDirective
	}{
		{name: "every context, sorted", toComplete: "",
			want: []string{"alpha", "beta", "gamma"}, wantDirective: space},
		{name: "one context by prefix", toComplete: "ga",
			want: []string{"gamma"}, wantDirective: space},
		{name: "after a name and a comma, the others, no space", toComplete: "alpha,",
			want: []string{"alpha,beta", "alpha,gamma"}, wantDirective: noSpace},
		{name: "a partial second name", toComplete: "alpha,be",
			want: []string{"alpha,beta"}, wantDirective: noSpace},
		{name: "a name already listed is not offered again; the last one left ends the list with a space", toComplete: "beta,alpha,",
			want: []string{"beta,alpha,gamma"}, wantDirective: space},
		{name: "a name already listed matches nothing", toComplete: "alpha,beta,a",
			want: nil, wantDirective: space},
		{name: "an unknown prefix", toComplete: "alpha,x",
			want: nil, wantDirective: noSpace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertCompletion(t, []string{"__complete", "--kubeconfig", kubeconfig, "--context", tc.toComplete}, tc.want, tc.wantDirective)
		})
	}
}

// TestObjectCompletion completes the object argument of every command that
// takes one, (TYPE/NAME | TYPE NAME), through the hidden __complete command as
// a shell does, against a server that serves discovery and the names of pods
// and deployments in shop (the kubeconfig's namespace) and ops, and of nodes.
func TestObjectCompletion(t *testing.T) {
	kubeconfig := namesServer(t, map[string][]string{
		"/api/v1/namespaces/shop/pods":              {"web-1", "web-2", "api-1"},
		"/api/v1/namespaces/ops/pods":               {"backup-1"},
		"/apis/apps/v1/namespaces/shop/deployments": {"web", "worker", "api"},
		"/api/v1/nodes":                             {"worker-1", "worker-2"},
	})
	const (
		names = cobra.ShellCompDirectiveNoFileComp
		types = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	)
	allTypes := []string{"crontabs.stable.example.com/", "deployments.apps/", "nodes/", "pods/", "services/"}
	tests := []struct {
		name          string
		args          []string
		want          []string
		wantDirective cobra.ShellCompDirective
	}{
		{name: "tree: every type, with a slash and no space", args: []string{"tree", ""}, want: allTypes, wantDirective: types},
		{name: "tree: a type by prefix", args: []string{"tree", "po"}, want: []string{"pods/"}, wantDirective: types},
		{name: "tree: names of TYPE/", args: []string{"tree", "pods/"}, want: []string{"pods/api-1", "pods/web-1", "pods/web-2"}, wantDirective: names},
		{name: "tree: names by prefix, after a short name", args: []string{"tree", "deploy/w"}, want: []string{"deploy/web", "deploy/worker"}, wantDirective: names},
		{name: "tree: names of a cluster-scoped type", args: []string{"tree", "nodes/"}, want: []string{"nodes/worker-1", "nodes/worker-2"}, wantDirective: names},
		{name: "tree: names in the namespace given", args: []string{"tree", "-n", "ops", "po/"}, want: []string{"po/backup-1"}, wantDirective: names},
		{name: "tree: TYPE NAME, typed with a space", args: []string{"tree", "pods", "web"}, want: []string{"web-1", "web-2"}, wantDirective: names},
		{name: "tree: nothing after the object", args: []string{"tree", "pods/web-1", ""}, want: nil, wantDirective: names},
		{name: "tree: nothing after TYPE NAME", args: []string{"tree", "pods", "web-1", ""}, want: nil, wantDirective: names},
		{name: "tree: an unknown type completes nothing, quietly", args: []string{"tree", "podz/"}, want: nil, wantDirective: names},
		{name: "owners", args: []string{"owners", "pods/w"}, want: []string{"pods/web-1", "pods/web-2"}, wantDirective: names},
		{name: "owners: types", args: []string{"owners", "d"}, want: []string{"deployments.apps/"}, wantDirective: types},
		{name: "uses", args: []string{"uses", "deployments.apps/a"}, want: []string{"deployments.apps/api"}, wantDirective: names},
		{name: "uses: types", args: []string{"uses", ""}, want: allTypes, wantDirective: types},
		{name: "selects", args: []string{"selects", "deploy/"}, want: []string{"deploy/api", "deploy/web", "deploy/worker"}, wantDirective: names},
		{name: "selects: types", args: []string{"selects", "s"}, want: []string{"services/"}, wantDirective: types},
		{name: "selected-by", args: []string{"selected-by", "pod/a"}, want: []string{"pod/api-1"}, wantDirective: names},
		{name: "selected-by: types", args: []string{"selected-by", "n"}, want: []string{"nodes/"}, wantDirective: types},
		{name: "events", args: []string{"events", "deploy/wor"}, want: []string{"deploy/worker"}, wantDirective: names},
		{name: "events: types", args: []string{"events", "c"}, want: []string{"crontabs.stable.example.com/"}, wantDirective: types},
		{name: "events with its flags", args: []string{"events", "--types", "Warning", "pods/web-"}, want: []string{"pods/web-1", "pods/web-2"}, wantDirective: names},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assertCompletion(t, append([]string{"__complete", "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, tc.args...), tc.want, tc.wantDirective)
		})
	}
}

// assertCompletion runs the hidden __complete command with args, as a shell
// does, and checks the candidates and the directive it prints.
func assertCompletion(t *testing.T, args []string, want []string, wantDirective cobra.ShellCompDirective) {
	t.Helper()
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	root := NewCmdRoot(streams)
	root.SetArgs(args)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	got, directive := lines[:len(lines)-1], lines[len(lines)-1]
	if len(got) == 0 {
		got = nil
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if want := fmt.Sprintf(":%d", wantDirective); directive != want {
		t.Errorf("directive %s, want %s", directive, want)
	}
}
