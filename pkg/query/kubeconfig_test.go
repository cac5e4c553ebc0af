package query_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// contextFlags are the shared flags as the root command binds them, reading
// kubeconfig, with --context value and --all-contexts all.
func contextFlags(kubeconfig, value string, all bool) *query.ContextFlags {
	c := genericclioptions.NewConfigFlags(true)
	c.KubeConfig = &kubeconfig
	c.Context = &value
	return &query.ContextFlags{ConfigFlags: c, AllContexts: all}
}

func TestContextNames(t *testing.T) {
	// No request is sent: the server is never contacted.
	abc := fixtures.ContextsKubeconfig(t, "https://"+fixtures.ClosedAddress(t), "gamma", "alpha", "beta")
	none := fixtures.ContextsKubeconfig(t, "https://"+fixtures.ClosedAddress(t))

	tests := []struct {
		name       string
		kubeconfig string
		context    string
		all        bool
		want       []string
		wantErr    string
	}{
		{name: "no --context", kubeconfig: abc},
		// One context is kubectl's behavior; one the kubeconfig lacks is
		// worded as one unknown among several.
		{name: "one context", kubeconfig: abc, context: "alpha"},
		{name: "one unknown context", kubeconfig: abc, context: "nope", wantErr: `context "nope" does not exist`},
		{name: "one context, a kubeconfig without any", kubeconfig: none, context: "alpha", wantErr: `context "alpha" does not exist`},
		{name: "two contexts in order", kubeconfig: abc, context: "beta,alpha", want: []string{"beta", "alpha"}},
		{name: "two contexts", kubeconfig: abc, context: "alpha,beta", want: []string{"alpha", "beta"}},
		{name: "three contexts", kubeconfig: abc, context: "gamma,alpha,beta", want: []string{"gamma", "alpha", "beta"}},
		{name: "empty name inside", kubeconfig: abc, context: "alpha,,beta", wantErr: `invalid --context "alpha,,beta": empty context name`},
		{name: "empty name first", kubeconfig: abc, context: ",alpha", wantErr: `invalid --context ",alpha": empty context name`},
		{name: "empty name last", kubeconfig: abc, context: "alpha,", wantErr: `invalid --context "alpha,": empty context name`},
		{name: "blank name", kubeconfig: abc, context: "alpha, ", wantErr: `invalid --context "alpha, ": empty context name`},
		{name: "only a comma", kubeconfig: abc, context: ",", wantErr: `invalid --context ",": empty context name`},
		{name: "named twice", kubeconfig: abc, context: "alpha,beta,alpha", wantErr: `invalid --context "alpha,beta,alpha": context "alpha" is named twice`},
		{name: "unknown among several", kubeconfig: abc, context: "alpha,nope", wantErr: `context "nope" does not exist`},
		{name: "first unknown named", kubeconfig: abc, context: "nope,alpha,other", wantErr: `context "nope" does not exist`},
		{name: "--all-contexts sorted", kubeconfig: abc, all: true, want: []string{"alpha", "beta", "gamma"}},
		{name: "--all-contexts with --context", kubeconfig: abc, all: true, context: "alpha", wantErr: "--all-contexts and --context cannot be used together"},
		{name: "--all-contexts with several --context", kubeconfig: abc, all: true, context: "alpha,beta", wantErr: "--all-contexts and --context cannot be used together"},
		{name: "--all-contexts without contexts", kubeconfig: none, all: true, wantErr: "--all-contexts: the kubeconfig has no contexts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := contextFlags(tc.kubeconfig, tc.context, tc.all).ContextNames()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ContextNames() = %q, %v; want error %q", got, err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("ContextNames() = %q with its error, want nil", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ContextNames(): %v", err)
			}
			if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("ContextNames() = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestContextNamesWithoutConfigFlags(t *testing.T) {
	for _, f := range []*query.ContextFlags{nil, {}} {
		got, err := f.ContextNames()
		if got != nil || err != nil {
			t.Errorf("(%#v).ContextNames() = %q, %v; want nil, nil", f, got, err)
		}
	}
}

func TestForContext(t *testing.T) {
	kubeconfig, ns, cacheDir, token := "/tmp/kc", "shop", "/tmp/cache", "secret"
	several := "a,b"
	src := genericclioptions.NewConfigFlags(true)
	src.KubeConfig, src.Namespace, src.CacheDir, src.BearerToken, src.Context = &kubeconfig, &ns, &cacheDir, &token, &several
	src.ImpersonateGroup = &[]string{"ops"}
	f := &query.ContextFlags{ConfigFlags: src, AllNamespaces: true, AllContexts: true}

	got := f.ForContext("b")
	if got == src {
		t.Fatal("ForContext shares the ConfigFlags it copies")
	}
	if *got.Context != "b" {
		t.Errorf("Context = %q, want b", *got.Context)
	}
	if *src.Context != several {
		t.Errorf("ForContext changed the original --context to %q", *src.Context)
	}
	if *got.KubeConfig != kubeconfig || *got.Namespace != ns || *got.CacheDir != cacheDir || *got.BearerToken != token || !slices.Equal(*got.ImpersonateGroup, []string{"ops"}) {
		t.Errorf("connection flags not carried: kubeconfig %q, namespace %q, cache dir %q, token %q, groups %q", *got.KubeConfig, *got.Namespace, *got.CacheDir, *got.BearerToken, *got.ImpersonateGroup)
	}
}

// TestTargets: the flags resolve to a target per context, each with its own
// namespace, without a request; a context that cannot be resolved is a
// target that answers with its error.
func TestTargets(t *testing.T) {
	server := "https://" + fixtures.ClosedAddress(t)
	kubeconfig := fixtures.ContextsKubeconfig(t, server, "alpha", "beta")
	// A context whose user's certificate cannot be read.
	data, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	data = []byte(strings.Replace(string(data), "users:\n", "users:\n- name: broken\n  user:\n    client-certificate: "+filepath.Join(t.TempDir(), "gone.crt")+"\n", 1))
	data = append(data, []byte("- name: broken\n  context:\n    cluster: test\n    user: broken\n")...)
	data = []byte(strings.Replace(string(data), "current-context: alpha\n", "", 1))
	data = append(data, []byte("current-context: alpha\n")...)
	if err := os.WriteFile(kubeconfig, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		context string
		all     bool
		want    []string // context/namespace, "!" after one that failed
	}{
		{name: "one context", want: []string{"/shop"}},
		{name: "one context named", context: "beta", want: []string{"/shop"}},
		{name: "two", context: "beta,alpha", want: []string{"beta/shop", "alpha/shop"}},
		{name: "every namespace", context: "alpha,beta", all: true, want: []string{"alpha/", "beta/"}},
		{name: "a broken one", context: "alpha,broken", want: []string{"alpha/shop", "broken/!"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := contextFlags(kubeconfig, tc.context, false)
			f.AllNamespaces = tc.all
			targets, err := f.Targets()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tg := range targets {
				switch {
				case tg.Err != nil:
					got = append(got, tg.Context+"/!")
				case tg.RESTConfig == nil || tg.RESTConfig.Host != server || tg.Mapper == nil || tg.Discovery == nil:
					t.Errorf("%s: not resolved", tg.Context)
				default:
					got = append(got, tg.Context+"/"+tg.Namespace)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("targets %q, want %q", got, tc.want)
			}
		})
	}
}
