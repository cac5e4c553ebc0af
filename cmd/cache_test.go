package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/pool"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/served"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// runtimeDir points the cache's sockets at a directory of the test's own,
// which nothing else uses.
func runtimeDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "idx-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("XDG_RUNTIME_DIR", dir)
	t.Setenv(cacheEnv, "")
	return filepath.Join(dir, "kubectl-idx")
}

// reviewAPI is an API server that answers SelfSubjectReview and nothing
// else: the user a bearer token belongs to is users[token]; any other token
// is Unauthorized.
type reviewAPI struct {
	*httptest.Server
	users map[string]string
	// reviews counts the SelfSubjectReviews answered.
	reviews atomic.Int32
}

func newReviewAPI(t *testing.T, users map[string]string) *reviewAPI {
	t.Helper()
	a := &reviewAPI{users: users}
	a.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/apis/authentication.k8s.io/v1/selfsubjectreviews" {
			http.NotFound(w, r)
			return
		}
		a.reviews.Add(1)
		name, ok := a.users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: http.StatusUnauthorized, Reason: metav1.StatusReasonUnauthorized, Message: "Unauthorized"})
			return
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(authenticationv1.SelfSubjectReview{
			TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectReview", APIVersion: "authentication.k8s.io/v1"},
			Status:   authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: name, Groups: []string{"system:authenticated"}}},
		})
	}))
	t.Cleanup(a.Close)
	return a
}

// kubeconfig writes a kubeconfig for the API with token as the user's
// credential (clientcmd sends credentials over TLS only).
func (a *reviewAPI) kubeconfig(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: "` + a.URL + `", insecure-skip-tls-verify: true}
contexts:
- name: test
  context: {cluster: test, user: test, namespace: shop}
current-context: test
users:
- name: test
  user: {token: ` + token + `}
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// config is a connection to the API with token.
func (a *reviewAPI) config(token string) *rest.Config {
	return &rest.Config{Host: a.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
}

// identityOf is the identity of user on the server of cfg.
func identityOf(t *testing.T, cfg *rest.Config, user string) warm.Identity {
	t.Helper()
	id, err := warm.NewIdentity(cfg, warm.UserInfo{Username: user, Groups: []string{"system:authenticated"}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// kubeconfigIdentity returns the client configuration of the current context of kubeconfig
// (a path) and the cache identity of user there.
func kubeconfigIdentity(t *testing.T, kubeconfig, user string) (*rest.Config, warm.Identity) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg, identityOf(t, cfg, user)
}

// TestCacheFlagsAndValidation: --cache and --max-staleness are on every
// command that reads and on nothing else, and their misuse is refused, in
// kubectl's words, before any request.
func TestCacheFlagsAndValidation(t *testing.T) {
	root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	reading := map[string]bool{"idx": true, "watch": true, "tree": true, "owners": true, "orphans": true, "events": true, "uses": true, "selects": true, "selected-by": true, "why": true, "history": true, "blame": true}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, name := range []string{"cache", "max-staleness"} {
			if got := c.Flags().Lookup(name) != nil; got != reading[c.Name()] {
				t.Errorf("%s has --%s: %v, want %v", c.CommandPath(), name, got, reading[c.Name()])
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	tests := []struct {
		name    string
		args    []string
		env     string
		wantErr string
	}{
		{name: "negative staleness", args: []string{"pods", "--cache", "--max-staleness=-1s"}, wantErr: "--max-staleness must not be negative, got -1s"},
		{name: "unknown KUBECTL_IDX_CACHE", args: []string{"pods"}, env: "always", wantErr: "KUBECTL_IDX_CACHE=always: want auto or off"},
		{name: "status output", args: []string{"cache", "status", "-o", "wide"}, wantErr: `--output must be 'json', 'yaml' or empty, got "wide"`},
		{name: "staleness without the cache", args: []string{"pods", "--max-staleness=1m"}, wantErr: "--max-staleness needs --cache (or KUBECTL_IDX_CACHE=auto): a direct run's answer is always current"},
		{name: "staleness with the cache off", args: []string{"pods", "--max-staleness=1m"}, env: "off", wantErr: "--max-staleness needs --cache (or KUBECTL_IDX_CACHE=auto): a direct run's answer is always current"},
		{name: "staleness with --cache=false", args: []string{"pods", "--cache=false", "--max-staleness=1m"}, env: "auto", wantErr: "--max-staleness needs --cache (or KUBECTL_IDX_CACHE=auto): a direct run's answer is always current"},
		{name: "unknown cache subcommand", args: []string{"cache", "bogus"}, wantErr: `unknown command "bogus" for "kubectl idx cache"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runtimeDir(t)
			t.Setenv(cacheEnv, tc.env)
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			args := append(tc.args, "--kubeconfig", discoveryServer(t), "--cache-dir", t.TempDir())
			root, _ := newCmdRoot(streams, &runContext{args: args})
			root.SetArgs(args)
			err := root.ExecuteContext(context.Background())
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("error = %v\nwant    %s", err, tc.wantErr)
			}
			if out.Len() != 0 || errOut.Len() != 0 {
				t.Errorf("stdout %q, stderr %q: want nothing", out, errOut)
			}
		})
	}
}

// cachedHarness is the root listing over fakes, in a run that asks for the
// cache: its target has a connection, so an identity, but reads the fakes.
func cachedHarness(t *testing.T, args []string) (*GetOptions, *cobra.Command, *strings.Builder, *strings.Builder) {
	t.Helper()
	s := fakeapi.New(nil, fixtures.Pod("shop", "web-1", "web", true))
	out, errOut := &strings.Builder{}, &strings.Builder{}
	o := NewGetOptions(&Flags{run: &runContext{args: args}}, genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	target := fakeTarget(t, "", s, "shop")
	target.RESTConfig = newReviewAPI(t, map[string]string{"token": "alice"}).config("token")
	o.resolved = []query.Target{target}
	o.SyncTimeout = 20 * time.Second
	*o.PrintFlags.OutputFormat = "name"
	cmd := newCmdGet(o)
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(errOut)
	return o, cmd, out, errOut
}

// TestCacheHungServerFallsBackWithOneWarning: a cache server that accepts
// and never answers is hung; the command says so in one line and answers
// directly.
func TestCacheHungServerFallsBackWithOneWarning(t *testing.T) {
	dir := runtimeDir(t)
	args := []string{"pods", "--cache"}
	o, cmd, out, errOut := cachedHarness(t, args)
	id := identityOf(t, o.resolved[0].RESTConfig, "alice")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, id.String()[:32]+".sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "warning: the cache server at " + sock + " did not answer within 2s; answering directly\n"
	if errOut.String() != want {
		t.Errorf("stderr:\n%s\nwant\n%s", errOut, want)
	}
	if out.String() != "pod/web-1\n" {
		t.Errorf("stdout %q, want the direct answer", out)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s: a hung cache must cost its dial timeout, 2s", took)
	}
}

// TestCacheWithoutIdentityAnswersDirectly: a command whose connection cannot
// be identified cannot reach a cache; it says why and answers.
func TestCacheWithoutIdentityAnswersDirectly(t *testing.T) {
	runtimeDir(t)
	o, cmd, out, errOut := cachedHarness(t, []string{"pods", "--cache"})
	o.resolved[0].RESTConfig = nil
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "warning: no client configuration to identify; answering directly\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	if out.String() != "pod/web-1\n" {
		t.Errorf("stdout %q", out)
	}
}

// TestCacheOffAndSeveralContexts: without --cache nothing is tried, and
// several contexts are answered directly, --cache saying so.
func TestCacheOffAndSeveralContexts(t *testing.T) {
	runtimeDir(t)
	for _, tc := range []struct {
		name, env  string
		args       []string
		several    bool
		wantErrOut string
	}{
		{name: "off", args: []string{"pods"}},
		{name: "off by flag under auto", env: "auto", args: []string{"pods", "--cache=false"}},
		{name: "several contexts under auto", env: "auto", args: []string{"pods"}, several: true},
		{name: "several contexts with --cache", args: []string{"pods", "--cache"}, several: true, wantErrOut: "warning: --cache answers one context at a time; answering directly\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(cacheEnv, tc.env)
			o, cmd, _, errOut := cachedHarness(t, tc.args)
			if tc.several {
				a, b := o.resolved[0], o.resolved[0]
				a.Context, b.Context = "a", "b"
				o.resolved = []query.Target{a, b}
			}
			if err := cmd.ExecuteContext(context.Background()); err != nil {
				t.Fatal(err)
			}
			if errOut.String() != tc.wantErrOut {
				t.Errorf("stderr %q, want %q", errOut, tc.wantErrOut)
			}
		})
	}
}

// TestCacheStatusAndStop: status and stop address the current context's
// server, start nothing, and say when none runs.
func TestCacheStatusAndStop(t *testing.T) {
	runtimeDir(t)
	kubeconfig := newReviewAPI(t, map[string]string{"alice-token": "alice"}).kubeconfig(t, "alice-token")
	run := func(args ...string) (int, string, string) {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		code := Execute(streams, append(args, "--kubeconfig", kubeconfig))
		return code, out.String(), errOut.String()
	}
	notRunning := "No cache server is running for context \"test\".\n"
	if code, out, errOut := run("cache", "status"); code != 0 || out != "" || errOut != notRunning {
		t.Errorf("status with none: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ := run("cache", "status", "-o", "json")
	if code != 0 {
		t.Fatalf("status -o json exit %d", code)
	}
	var st v1alpha1.CacheStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Running || st.Kind != "CacheStatus" || st.APIVersion != "kubectl-idx.io/v1alpha1" {
		t.Errorf("status -o json with none: %v\n%s", err, out)
	}
	if code, out, errOut := run("cache", "stop"); code != 0 || out != "" || errOut != notRunning {
		t.Errorf("stop with none: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A server of the context's identity, in this process.
	cfg, id := kubeconfigIdentity(t, kubeconfig, "alice")
	since := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	srv, err := warm.NewServer(warm.Options{
		Identity: id, Version: cacheVersion(),
		Handler: func(context.Context, *warm.RunRequest, io.Writer, io.Writer) int { return 0 },
		Status: func() any {
			st := v1alpha1.NewCacheStatus()
			st.Context, st.Server, st.DropAfter = "test", cfg.Host, "5m0s"
			st.Requests = &v1alpha1.CacheRequests{DroppedInformers: 2}
			st.Informers = query.CacheInformers(pool.Status{Informers: []pool.WarmStatus{{
				Resource: fixtures.Pods, Mode: informer.MetadataOnly, Objects: 3, Since: since, LastUsed: since,
				Synced: true, ResourceVersion: "42", Confirmed: "41", ConfirmedAt: since,
			}}})
			return st
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	t.Cleanup(func() { srv.Shutdown("test over") })

	code, out, _ = run("cache", "status", "-o", "json")
	st = v1alpha1.CacheStatus{}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
		t.Fatalf("status -o json: exit %d, %v\n%s", code, err, out)
	}
	if !st.Running || st.PID != os.Getpid() || st.Context != "test" || st.Requests.DroppedInformers != 2 || st.IdleTimeout != "10m0s" {
		t.Errorf("status: %+v", st)
	}
	want := []v1alpha1.CachedInformer{{
		Resource: "pods", Mode: "metadata", Objects: 3, Synced: true, ResourceVersion: "42",
		Confirmed: &v1alpha1.CacheConfirmation{ResourceVersion: "41"},
	}}
	st.Informers[0].Since, st.Informers[0].LastUsed, st.Informers[0].Confirmed.Time = want[0].Since, want[0].LastUsed, want[0].Confirmed.Time
	if diff := cmp.Diff(want, st.Informers); diff != "" {
		t.Errorf("informers (-want +got):\n%s", diff)
	}
	code, out, _ = run("cache", "status")
	for _, line := range []string{"Context:      test\n", "RESOURCE   NAMESPACE   MODE       SELECTOR   OBJECTS", "pods       <all>       metadata   <none>     3"} {
		if !strings.Contains(out, line) {
			t.Errorf("status: no %q in\n%s", line, out)
		}
	}

	srv.Shutdown("test over")
	<-served

	// cache stop waits for the server's process to exit: one of its own.
	child := exec.Command(os.Args[0], "-test.run=^TestCacheServerProcess$")
	child.Env = append(os.Environ(), "IDX_TEST_CACHE_SERVER="+kubeconfig)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	t.Cleanup(func() { _ = child.Process.Kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, _, errOut := run("cache", "status"); errOut == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server process never answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, out, errOut := run("cache", "stop"); code != 0 || out != "cache server of context \"test\" stopped\n" || errOut != "" {
		t.Errorf("stop: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the server process still runs after cache stop")
	}
	if code, _, errOut := run("cache", "status"); code != 0 || errOut != notRunning {
		t.Errorf("status after stop: exit %d, stderr %q", code, errOut)
	}
}

// TestCacheServerProcess is TestCacheStatusAndStop's server process, when
// that test runs it; otherwise it has nothing to do.
func TestCacheServerProcess(t *testing.T) {
	kubeconfig := os.Getenv("IDX_TEST_CACHE_SERVER")
	if kubeconfig == "" {
		return
	}
	_, id := kubeconfigIdentity(t, kubeconfig, "alice")
	srv, err := warm.NewServer(warm.Options{
		Identity: id, Version: cacheVersion(),
		Handler: func(context.Context, *warm.RunRequest, io.Writer, io.Writer) int { return 0 },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestServedRunVerifiesTheAsker: a served run answers only an asker whose
// credential the API server says is the server's user, asking once per
// credential; another user is declined (answered directly, by their own
// process), a credential the API server refuses is the run's error in
// kubectl's words, and a request without a credential is declined.
func TestServedRunVerifiesTheAsker(t *testing.T) {
	api := newReviewAPI(t, map[string]string{"alice-1": "alice", "alice-2": "alice", "bob": "bob"})
	kubeconfig := api.kubeconfig(t, "bob")
	cfg := api.config("")
	server := served.New(served.Options{Identity: identityOf(t, cfg, "alice")})
	prepare := func(cred *warm.Credential) error {
		t.Helper()
		streams := genericiooptions.NewTestIOStreamsDiscard()
		run := &runContext{args: []string{"pods"}, served: server.Run(&warm.RunRequest{
			Args: []string{"pods"}, Dir: t.TempDir(), Env: map[string]string{"KUBECONFIG": kubeconfig}, Credential: cred,
		})}
		root, _ := newCmdRoot(streams, run)
		cmd, _, err := root.Find([]string{"pods"})
		if err != nil {
			t.Fatal(err)
		}
		cmd.SetContext(context.Background())
		return prepareServed(run.served, cmd, &Flags{ContextFlags: query.ContextFlags{ConfigFlags: genericclioptions.NewConfigFlags(true)}})
	}
	for _, token := range []string{"alice-1", "alice-2", "alice-1"} {
		if err := prepare(&warm.Credential{Authorization: "Bearer " + token}); err != nil {
			t.Errorf("alice's %s: %v", token, err)
		}
	}
	if n := api.reviews.Load(); n != 2 {
		t.Errorf("%d credentials verified, want alice's two, each once", n)
	}
	if err := prepare(&warm.Credential{Authorization: "Bearer bob"}); err != errDecline {
		t.Errorf("bob's credential: %v, want a decline", err)
	}
	if err := prepare(&warm.Credential{Authorization: "Bearer revoked"}); !apierrors.IsUnauthorized(err) {
		t.Errorf("a revoked credential: %v, want Unauthorized", err)
	}
	if err := prepare(nil); err != errDecline {
		t.Errorf("no credential: %v, want a decline", err)
	}
}

// TestCacheFirstQuestionAnswersDirectly: with no cache server running, the
// first question through the cache answers directly, as fast as without
// it, while a server starts; once it has answered, the server is handed the
// command, to warm its informers. A command that failed hands it nothing
// and does not wait for it; a server that could not start costs one warning
// line after the answer.
func TestCacheFirstQuestionAnswersDirectly(t *testing.T) {
	runtimeDir(t)

	// handedOver runs `pods --cache` with the server a spawned `cache serve`
	// would be, in this process, up at once, and the direct answer done
	// answerAfter later: the answer is the direct one, and the server is
	// handed the command.
	handedOver := func(t *testing.T, answerAfter time.Duration) {
		args := []string{"pods", "--cache"}
		o, cmd, out, errOut := cachedHarness(t, args)
		id := identityOf(t, o.resolved[0].RESTConfig, "alice")
		warmed := make(chan *warm.RunRequest, 1)
		o.run.start = func(ctx context.Context, spec warm.Spec, req *warm.RunRequest) *served.Starting {
			srv, err := warm.NewServer(warm.Options{Identity: id, Version: cacheVersion(), Handler: func(_ context.Context, r *warm.RunRequest, _, _ io.Writer) int {
				warmed <- r
				return 0
			}})
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(context.Background())
			t.Cleanup(func() { srv.Shutdown("the test is over") })
			if answerAfter == 0 {
				return served.StartServer(ctx, spec, req)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				conn, err := warm.Connect(ctx, spec)
				if err != nil {
					t.Error(err)
					return
				}
				conn.Close()
				time.Sleep(answerAfter)
			}()
			return served.NewStarting(spec, req, done, nil)
		}
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		if out.String() != "pod/web-1\n" || errOut.String() != "" {
			t.Errorf("stdout %q, stderr %q: want the direct answer alone", out, errOut)
		}
		select {
		case r := <-warmed:
			if !slices.Equal(r.Args, args) {
				t.Errorf("the server was handed %q, want %q", r.Args, args)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the server was not handed the command")
		}
	}
	t.Run("the server is handed the command", func(t *testing.T) { handedOver(t, 0) })
	t.Run("a direct run longer than the server waits for a request", func(t *testing.T) {
		// The server closes a connection with no request after 5 s.
		handedOver(t, 5500*time.Millisecond)
	})

	t.Run("a failed command hands nothing", func(t *testing.T) {
		o, cmd, out, _ := cachedHarness(t, []string{"pods", "nope", "--cache"})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		o.run.start = func(_ context.Context, spec warm.Spec, req *warm.RunRequest) *served.Starting {
			// A server that never answers: waiting for it would hang.
			return served.NewStarting(spec, req, make(chan struct{}), nil)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.ExecuteContext(context.Background()) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), `"nope" not found`) {
				t.Errorf("error %v, want pods \"nope\" not found", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a failed command waited for the cache server")
		}
		if out.String() != "" {
			t.Errorf("stdout %q", out)
		}
	})

	t.Run("a server that could not start", func(t *testing.T) {
		o, cmd, out, errOut := cachedHarness(t, []string{"pods", "--cache"})
		o.run.start = func(_ context.Context, spec warm.Spec, req *warm.RunRequest) *served.Starting {
			done := make(chan struct{})
			close(done)
			return served.NewStarting(spec, req, done, errors.New("the cache server exited before it answered: exit status 1"))
		}
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := "warning: the cache server exited before it answered: exit status 1; answered directly\n"
		if out.String() != "pod/web-1\n" || errOut.String() != want {
			t.Errorf("stdout %q, stderr %q; want the answer and %q", out, errOut, want)
		}
	})
}

// TestPathFlagsAreResolved: every flag of every command that names a file is
// resolved against the asker's directory in a served run, and resolvePaths
// makes each of them absolute there, leaving absolute paths and other flags
// alone.
func TestPathFlagsAreResolved(t *testing.T) {
	// Flags whose help names a file without their value being one.
	notPaths := map[string]bool{"output": true, "template": true, "show-managed-fields": true, "allow-missing-template-keys": true}
	looksLikePath := regexp.MustCompile(`(?i)\b(file|path|directory)\b`)
	root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if looksLikePath.MatchString(f.Usage) && !served.PathFlags[f.Name] && !notPaths[f.Name] {
				t.Errorf("%s --%s names a file (%q) but is not among pathFlags", c.CommandPath(), f.Name, f.Usage)
			}
		}
		c.Flags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)

	dir := "/home/asker/work"
	for _, tc := range []struct {
		args []string
		want map[string]string
	}{
		{[]string{"watch", "pods", "--checkpoint", "pods.cp", "--kubeconfig", "../kc"}, map[string]string{"checkpoint": dir + "/pods.cp", "kubeconfig": "/home/asker/kc"}},
		{[]string{"watch", "pods", "--checkpoint", "/var/lib/pods.cp"}, map[string]string{"checkpoint": "/var/lib/pods.cp"}},
		{[]string{"pods", "-o", "jsonpath-file=q.jsonpath"}, map[string]string{"output": "jsonpath-file=" + dir + "/q.jsonpath"}},
		{[]string{"pods", "-o", "go-template-file", "--template", "t.tmpl"}, map[string]string{"output": "go-template-file", "template": dir + "/t.tmpl"}},
		{[]string{"pods", "-o", "go-template", "--template", "{{.kind}}"}, map[string]string{"template": "{{.kind}}"}},
		{[]string{"pods", "--profile", "cpu", "--profile-output", "p.pprof"}, map[string]string{"profile-output": dir + "/p.pprof"}},
	} {
		root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
		cmd, rest, err := root.Find(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatal(err)
		}
		if err := served.ResolvePaths(cmd.Flags(), dir); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for name, want := range tc.want {
			if got := cmd.Flags().Lookup(name).Value.String(); got != want {
				t.Errorf("%v: --%s = %q, want %q", tc.args, name, got, want)
			}
		}
	}
}
