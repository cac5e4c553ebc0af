package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	cmdfixtures "github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// completeScript is the kubectl_complete-idx shipped in the release archives,
// relative to this package.
const completeScript = "../../plugins/kubectl_complete-idx"

// TestCompletion asks the binary for completions through cobra's __complete, the
// protocol the generated shell scripts and kubectl's plugin completion both use,
// and checks them against what the test server holds.
func TestCompletion(t *testing.T) {
	shopPods := names(t, as("").kubectl(t, "get", "pods", "-n", fixtures.Shop, "-o", "name"))
	allPods := names(t, as("").kubectl(t, "get", "pods", "-A", "-o", "name"))
	if len(shopPods) == 0 || !slices.Contains(allPods, cluster.BarePod) {
		t.Fatalf("fixtures: want pods in %s and %s among all pods, got %v and %v", fixtures.Shop, cluster.BarePod, shopPods, allPods)
	}
	webPods := slices.Clone(cluster.WebPods)
	var deploysW []string
	for _, d := range names(t, as("").kubectl(t, "get", "deployments", "-n", fixtures.Shop, "-o", "name")) {
		if strings.HasPrefix(d, "w") {
			deploysW = append(deploysW, "deploy/"+d)
		}
	}
	if len(deploysW) == 0 {
		t.Fatalf("fixtures: want deployments starting with w in %s", fixtures.Shop)
	}

	tests := []struct {
		name string
		user string
		args []string
		// want must all be offered; wantExactly, when set, is the whole list.
		want        []string
		wantExactly []string
		// absent must not be offered.
		absent    []string
		directive string
	}{
		{
			name:      "resource types, subcommands included",
			args:      []string{""},
			want:      []string{"pods", "deployments.apps", "namespaces", "crontabs.stable.example.com", "version", "completion"},
			absent:    []string{"pods/log", "bindings", "tokenreviews.authentication.k8s.io"},
			directive: ":4",
		},
		{
			name:        "resource types by prefix",
			args:        []string{"deploy"},
			wantExactly: []string{"deployments.apps"},
			directive:   ":4",
		},
		{
			name:        "the last of a comma-separated list of types",
			args:        []string{"services,deploy"},
			wantExactly: []string{"services,deployments.apps"},
			directive:   ":4",
		},
		{
			name:        "pod names after a short name, in the namespace given",
			args:        []string{"-n", fixtures.Shop, "po", ""},
			wantExactly: shopPods,
			directive:   ":4",
		},
		{
			name:        "pod names by prefix",
			args:        []string{"-n", fixtures.Shop, "pods", "web-"},
			wantExactly: webPods,
			directive:   ":4",
		},
		{
			name:        "names already given are not offered again",
			args:        []string{"-n", fixtures.Shop, "pods", webPods[0], "web-"},
			wantExactly: webPods[1:],
			directive:   ":4",
		},
		{
			name:      "pod names in all namespaces with -A",
			args:      []string{"-A", "pods", ""},
			want:      []string{cluster.BarePod, webPods[0]},
			directive: ":4",
		},
		{
			name:        "TYPE/NAME form",
			args:        []string{"-n", fixtures.Shop, "deploy/w"},
			wantExactly: deploysW,
			directive:   ":4",
		},
		{
			name:      "after TYPE/NAME, types end with a slash and no space",
			args:      []string{"-n", fixtures.Shop, "deploy/web", "po"},
			want:      []string{"pods/", "podtemplates/"},
			directive: ":6",
		},
		{
			name:        "a custom resource's names, by its short name",
			args:        []string{"-n", fixtures.Ops, "ct", ""},
			wantExactly: crontabsIn(fixtures.Ops),
			directive:   ":4",
		},
		{
			name:      "--namespace values from the server",
			args:      []string{"-n", ""},
			want:      []string{fixtures.Shop, fixtures.Ops, fixtures.EmptyNamespace, "default", "kube-system"},
			directive: ":4",
		},
		{
			name:      "--output formats",
			args:      []string{"-o", ""},
			want:      []string{"json", "yaml", "name", "wide", "jsonpath", "custom-columns"},
			directive: ":4",
		},
		{
			name:        "completion shells",
			args:        []string{"completion", ""},
			wantExactly: []string{"bash", "zsh", "fish", "powershell"},
			directive:   ":4",
		},
		{
			name:        "tree: types end with a slash and no space",
			args:        []string{"tree", "deploy"},
			wantExactly: []string{"deployments.apps/"},
			directive:   ":6",
		},
		{
			name:        "tree: names after TYPE/",
			args:        []string{"tree", "-n", fixtures.Shop, "deploy/w"},
			wantExactly: deploysW,
			directive:   ":4",
		},
		{
			name:        "tree: names after TYPE and a space",
			args:        []string{"tree", "-n", fixtures.Shop, "pods", "web-"},
			wantExactly: webPods,
			directive:   ":4",
		},
		{
			name:        "tree: nothing after the object",
			args:        []string{"tree", "-n", fixtures.Shop, "deploy/web", ""},
			wantExactly: []string{},
			directive:   ":4",
		},
		{
			name:        "owners: pod names",
			args:        []string{"owners", "-n", fixtures.Shop, "pods/web-"},
			wantExactly: prefixed("pods/", webPods),
			directive:   ":4",
		},
		{
			name:        "uses: names by a short name",
			args:        []string{"uses", "-n", fixtures.Shop, "sts/"},
			wantExactly: []string{"sts/postgres"},
			directive:   ":4",
		},
		{
			name:        "selects: names",
			args:        []string{"selects", "-n", fixtures.Shop, "deploy/w"},
			wantExactly: deploysW,
			directive:   ":4",
		},
		{
			name:        "selected-by: pod names",
			args:        []string{"selected-by", "-n", fixtures.Shop, "po/web-"},
			wantExactly: prefixed("po/", webPods),
			directive:   ":4",
		},
		{
			name:        "events: types, then names",
			args:        []string{"events", "statefulset"},
			wantExactly: []string{"statefulsets.apps/"},
			directive:   ":6",
		},
		{
			name:        "events: names",
			args:        []string{"events", "-n", fixtures.Shop, "deploy/w"},
			wantExactly: deploysW,
			directive:   ":4",
		},
		{
			name:        "an unknown type completes nothing, quietly",
			args:        []string{"podz", ""},
			wantExactly: []string{},
			directive:   ":4",
		},
		{
			name:        "a user who may only read pods in shop gets its pods",
			user:        narrowUser,
			args:        []string{"-n", fixtures.Shop, "pods", ""},
			wantExactly: shopPods,
			directive:   ":4",
		},
		{
			name:        "a user who may not list namespaces gets none, not an error",
			user:        narrowUser,
			args:        []string{"-n", ""},
			wantExactly: []string{},
			directive:   ":4",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := as(tc.user).idx(t, append([]string{"__complete"}, tc.args...)...)
			mustSucceed(t, "kubectl-idx __complete "+strings.Join(tc.args, " "), res)
			comps, directive := parseCompletions(t, res)
			checkCompletions(t, comps, tc.want, tc.wantExactly, tc.absent)
			if directive != tc.directive {
				t.Errorf("directive %s, want %s\n%s", directive, tc.directive, res)
			}
		})
	}
}

// TestKubectlPluginCompletion completes `kubectl idx ...` the way kubectl 1.26+
// does it for a plugin: through kubectl_complete-idx on PATH.
func TestKubectlPluginCompletion(t *testing.T) {
	want := names(t, as("").kubectl(t, "get", "pods", "-n", fixtures.Shop, "-o", "name"))
	script, err := filepath.Abs(completeScript)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(script); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("%s must exist and be executable: %v", script, err)
	}
	dir := t.TempDir()
	if err := os.Symlink(script, filepath.Join(dir, "kubectl_complete-idx")); err != nil {
		t.Fatal(err)
	}
	res := as("").shell(t, "PATH="+dir+":$PATH "+testenv.KubectlPath()+" __complete idx -n "+fixtures.Shop+" pods ''")
	mustSucceed(t, "kubectl __complete idx", res)
	comps, _ := parseCompletions(t, res)
	checkCompletions(t, comps, nil, want, nil)
}

// TestCompletionContextList completes --context, a comma-separated list of
// contexts, from a kubeconfig holding three contexts for the test server: from
// the binary, then through kubectl's plugin completion, which hands the flag to
// kubectl_complete-idx unparsed.
func TestCompletionContextList(t *testing.T) {
	cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	current, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		t.Fatalf("%s: no current context", env.Kubeconfig)
	}
	cfg.Contexts = map[string]*clientcmdapi.Context{}
	for _, name := range []string{"gamma", "alpha", "beta"} {
		cfg.Contexts[name] = current.DeepCopy()
	}
	cfg.CurrentContext = "alpha"
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	r := runner{kubeconfig: kubeconfig}

	tests := []struct {
		name        string
		args        []string
		wantExactly []string
		directive   string
	}{
		{
			name:        "every context",
			args:        []string{"--context", ""},
			wantExactly: []string{"alpha", "beta", "gamma"},
			directive:   ":4",
		},
		{
			name:        "after a name and a comma, the others, with no space",
			args:        []string{"--context", "alpha,"},
			wantExactly: []string{"alpha,beta", "alpha,gamma"},
			directive:   ":6",
		},
		{
			name:        "a partial second name",
			args:        []string{"-n", fixtures.Shop, "pods", "--context", "alpha,be"},
			wantExactly: []string{"alpha,beta"},
			directive:   ":6",
		},
		{
			name:        "names already listed are not offered again; the last ends the list",
			args:        []string{"--context", "beta,alpha,"},
			wantExactly: []string{"beta,alpha,gamma"},
			directive:   ":4",
		},
		{
			// A list is no context a server knows: names come from the first.
			name:        "object names after a list of contexts",
			args:        []string{"--context", "alpha,beta", "-n", fixtures.Shop, "statefulsets", ""},
			wantExactly: []string{"postgres"},
			directive:   ":4",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := r.idx(t, append([]string{"__complete"}, tc.args...)...)
			mustSucceed(t, "kubectl-idx __complete "+strings.Join(tc.args, " "), res)
			comps, directive := parseCompletions(t, res)
			checkCompletions(t, comps, nil, tc.wantExactly, nil)
			if directive != tc.directive {
				t.Errorf("directive %s, want %s\n%s", directive, tc.directive, res)
			}
		})
	}

	t.Run("through kubectl plugin completion", func(t *testing.T) {
		script, err := filepath.Abs(completeScript)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := os.Symlink(script, filepath.Join(dir, "kubectl_complete-idx")); err != nil {
			t.Fatal(err)
		}
		res := r.shell(t, "PATH="+dir+":$PATH "+testenv.KubectlPath()+" __complete idx --context alpha,")
		mustSucceed(t, "kubectl __complete idx --context alpha,", res)
		comps, directive := parseCompletions(t, res)
		checkCompletions(t, comps, nil, []string{"alpha,beta", "alpha,gamma"}, nil)
		if directive != ":6" {
			t.Errorf("directive %s, want :6\n%s", directive, res)
		}
	})
}

// TestCompletionScripts checks each generated script is for the kubectl-idx
// binary, which is the name a shell sees.
func TestCompletionScripts(t *testing.T) {
	for shell, want := range cmdfixtures.CompletionScriptLines() {
		t.Run(shell, func(t *testing.T) {
			res := as("").shell(t, "kubectl idx completion "+shell)
			mustSucceed(t, "kubectl idx completion "+shell, res)
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("script does not contain %q:\n%s", want, res.Stdout)
			}
		})
	}
}

// parseCompletions splits __complete output into the completions (descriptions
// dropped) and the final ":N" directive line.
func parseCompletions(t *testing.T, res testenv.Result) ([]string, string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(res.Stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, ":") {
		t.Fatalf("no directive line at the end of the output\n%s", res)
	}
	comps := []string{}
	for _, l := range lines[:len(lines)-1] {
		comp, _, _ := strings.Cut(l, "\t")
		comps = append(comps, comp)
	}
	return comps, last
}

func checkCompletions(t *testing.T, comps, want, wantExactly, absent []string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(comps, w) {
			t.Errorf("%q not offered; got %q", w, comps)
		}
	}
	if wantExactly != nil {
		got, exp := slices.Sorted(slices.Values(comps)), slices.Sorted(slices.Values(wantExactly))
		if !slices.Equal(got, exp) {
			t.Errorf("got %q, want exactly %q", got, exp)
		}
	}
	for _, a := range absent {
		if slices.Contains(comps, a) {
			t.Errorf("%q offered, but should not be; got %q", a, comps)
		}
	}
}

// names returns the names from `kubectl get -o name` output ("pod/web-1").
func names(t *testing.T, res testenv.Result) []string {
	t.Helper()
	mustSucceed(t, "kubectl get -o name", res)
	var out []string
	for _, l := range strings.Fields(res.Stdout) {
		_, name, _ := strings.Cut(l, "/")
		out = append(out, name)
	}
	return out
}

// prefixed returns names each after prefix ("pods/").
func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// crontabsIn returns the names of the fixtures' CronTabs in namespace ns.
func crontabsIn(ns string) []string {
	var out []string
	for _, key := range cluster.CronTabs {
		if n, name, _ := strings.Cut(key, "/"); n == ns {
			out = append(out, name)
		}
	}
	return out
}
