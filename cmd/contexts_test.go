package cmd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// writeContextsKubeconfig writes a kubeconfig whose contexts, named names,
// all point at server, and returns its path. The current context is the
// first name; with no names the kubeconfig has no contexts.
func writeContextsKubeconfig(t *testing.T, server string, names ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: " + server + "\n")
	b.WriteString("users:\n- name: test\n  user:\n    token: not-a-real-token\n")
	if len(names) == 0 {
		b.WriteString("contexts: []\n")
	} else {
		b.WriteString("contexts:\n")
		for _, n := range names {
			b.WriteString("- name: " + n + "\n  context:\n    cluster: test\n    user: test\n    namespace: shop\n")
		}
		b.WriteString("current-context: " + names[0] + "\n")
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// closedAddress is an address nothing listens on: a port that was open a
// moment ago, so a connection to it is refused at once.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// contextFlags are the shared flags as the root command binds them, reading
// kubeconfig, with --context value and --all-contexts all.
func contextFlags(kubeconfig, value string, all bool) *Flags {
	c := genericclioptions.NewConfigFlags(true)
	c.KubeConfig = &kubeconfig
	c.Context = &value
	return &Flags{ConfigFlags: c, AllContexts: all}
}

func TestContextNames(t *testing.T) {
	// No request is sent: the server is never contacted.
	abc := writeContextsKubeconfig(t, "https://"+closedAddress(t), "gamma", "alpha", "beta")
	none := writeContextsKubeconfig(t, "https://"+closedAddress(t))

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
			got, err := contextFlags(tc.kubeconfig, tc.context, tc.all).contextNames()
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("contextNames() = %q, %v; want error %q", got, err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("contextNames() = %q with its error, want nil", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("contextNames(): %v", err)
			}
			if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("contextNames() = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestContextNamesWithoutConfigFlags(t *testing.T) {
	for _, f := range []*Flags{nil, {}} {
		got, err := f.contextNames()
		if got != nil || err != nil {
			t.Errorf("(%#v).contextNames() = %q, %v; want nil, nil", f, got, err)
		}
	}
}

func TestForContext(t *testing.T) {
	kubeconfig, ns, cacheDir, token := "/tmp/kc", "shop", "/tmp/cache", "secret"
	several := "a,b"
	src := genericclioptions.NewConfigFlags(true)
	src.KubeConfig, src.Namespace, src.CacheDir, src.BearerToken, src.Context = &kubeconfig, &ns, &cacheDir, &token, &several
	src.ImpersonateGroup = &[]string{"ops"}
	f := &Flags{ConfigFlags: src, AllNamespaces: true, AllContexts: true}

	got := f.forContext("b")
	if got == src {
		t.Fatal("forContext shares the ConfigFlags it copies")
	}
	if *got.Context != "b" {
		t.Errorf("Context = %q, want b", *got.Context)
	}
	if *src.Context != several {
		t.Errorf("forContext changed the original --context to %q", *src.Context)
	}
	if *got.KubeConfig != kubeconfig || *got.Namespace != ns || *got.CacheDir != cacheDir || *got.BearerToken != token || !slices.Equal(*got.ImpersonateGroup, []string{"ops"}) {
		t.Errorf("connection flags not carried: kubeconfig %q, namespace %q, cache dir %q, token %q, groups %q", *got.KubeConfig, *got.Namespace, *got.CacheDir, *got.BearerToken, *got.ImpersonateGroup)
	}
}

// TestTargets: the flags resolve to a target per context, each with its own
// namespace, without a request; a context that cannot be resolved is a
// target that answers with its error.
func TestTargets(t *testing.T) {
	server := "https://" + closedAddress(t)
	kubeconfig := writeContextsKubeconfig(t, server, "alpha", "beta")
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
			targets, err := f.resolveTargets()
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

func TestContextWarnings(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{name: "no error", err: nil, want: nil},
		{name: "one error", err: errors.New("forbidden"), want: []string{`context "a": forbidden`}},
		{name: "error: prefix dropped", err: errors.New("error: boom"), want: []string{`context "a": boom`}},
		{
			name: "aggregate, a line each",
			err:  utilerrors.NewAggregate([]error{errors.New(`pods "web" not found`), errors.New(`pods "db" not found`)}),
			want: []string{`context "a": pods "web" not found`, `context "a": pods "db" not found`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := contextWarnings("a", tc.err)
			if !slices.Equal(got, tc.want) {
				t.Errorf("contextWarnings() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestContextsOutcome(t *testing.T) {
	tests := []struct {
		name          string
		failed, total int
		wantCode      int // 0: nil
		wantMsg       string
	}{
		{name: "none failed", failed: 0, total: 3},
		{name: "one context, fine", failed: 0, total: 1},
		{name: "some failed", failed: 1, total: 3, wantCode: ExitPartial, wantMsg: "1 of 3 contexts failed"},
		{name: "all but one failed", failed: 2, total: 3, wantCode: ExitPartial, wantMsg: "2 of 3 contexts failed"},
		{name: "all failed", failed: 3, total: 3, wantCode: ExitError, wantMsg: "no context could answer: all 3 failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := contextsOutcome(tc.failed, tc.total)
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("contextsOutcome(%d, %d) = %v, want nil", tc.failed, tc.total, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("contextsOutcome(%d, %d) = nil, want an error", tc.failed, tc.total)
			}
			if err.Error() != tc.wantMsg {
				t.Errorf("message %q, want %q", err.Error(), tc.wantMsg)
			}
			var exit *exitError
			isExit := errors.As(err, &exit)
			switch {
			case tc.wantCode == ExitPartial && (!isExit || exit.code != ExitPartial):
				t.Errorf("contextsOutcome(%d, %d) = %#v, want an *exitError with code %d", tc.failed, tc.total, err, ExitPartial)
			case tc.wantCode == ExitError && isExit:
				// Every context failed: an error Execute prints, exit 1.
				t.Errorf("contextsOutcome(%d, %d) = *exitError code %d, want a plain error", tc.failed, tc.total, exit.code)
			}
		})
	}
}

// TestExecuteContexts runs the command line through Execute against
// contexts whose server refuses connections.
func TestExecuteContexts(t *testing.T) {
	addr := closedAddress(t)
	kubeconfig := writeContextsKubeconfig(t, "http://"+addr, "a", "b", "c")

	t.Run("every context fails", func(t *testing.T) {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		code := Execute(streams, []string{"pods", "--context", "a,b", "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "--request-timeout", "10s"})
		if code != ExitError {
			t.Errorf("exit code %d, want %d", code, ExitError)
		}
		if out.Len() != 0 {
			t.Errorf("stdout = %q, want nothing", out)
		}
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("stderr has %d lines, want a warning per context and the error:\n%s", len(lines), errOut)
		}
		for i, name := range []string{"a", "b"} {
			prefix := fmt.Sprintf("warning: context %q: ", name)
			if !strings.HasPrefix(lines[i], prefix) || len(lines[i]) == len(prefix) {
				t.Errorf("stderr line %d = %q, want %q and why", i+1, lines[i], prefix)
			}
			if !strings.Contains(lines[i], addr) {
				t.Errorf("stderr line %d = %q does not name the server %s", i+1, lines[i], addr)
			}
		}
		if want := "error: no context could answer: all 2 failed"; lines[2] != want {
			t.Errorf("last stderr line = %q, want %q", lines[2], want)
		}
	})

	bad := []struct {
		name string
		args []string
		want string
	}{
		{name: "empty name", args: []string{"pods", "--context", "a,,b"}, want: `error: invalid --context "a,,b": empty context name`},
		{name: "named twice", args: []string{"pods", "--context", "a,b,a"}, want: `error: invalid --context "a,b,a": context "a" is named twice`},
		{name: "unknown", args: []string{"pods", "--context", "a,nope"}, want: `error: context "nope" does not exist`},
		{name: "one unknown", args: []string{"pods", "--context", "nope"}, want: `error: context "nope" does not exist`},
		{name: "one unknown, with -n", args: []string{"pods", "--context", "nope", "-n", "shop"}, want: `error: context "nope" does not exist`},
		{name: "tree: one unknown", args: []string{"tree", "deploy/web", "--context", "nope"}, want: `error: context "nope" does not exist`},
		{name: "with --all-contexts", args: []string{"pods", "--context", "a", "--all-contexts"}, want: "error: --all-contexts and --context cannot be used together"},
		{name: "tree: empty name", args: []string{"tree", "deploy/web", "--context", ",a"}, want: `error: invalid --context ",a": empty context name`},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			code := Execute(streams, append(tc.args, "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()))
			if code != ExitError {
				t.Errorf("exit code %d, want %d", code, ExitError)
			}
			if got := errOut.String(); got != tc.want+"\n" {
				t.Errorf("stderr = %q, want %q", got, tc.want+"\n")
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
}
