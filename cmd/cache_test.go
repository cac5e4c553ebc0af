package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
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

// TestCacheFlagsAndValidation: --cache and --max-staleness are on every
// command that reads and on nothing else, and their misuse is refused, in
// kubectl's words, before any request.
func TestCacheFlagsAndValidation(t *testing.T) {
	root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	reading := map[string]bool{"idx": true, "watch": true, "tree": true, "owners": true, "orphans": true, "events": true, "uses": true, "selects": true, "selected-by": true}
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
	target.RESTConfig = &rest.Config{Host: "https://cluster.invalid:6443", BearerToken: "token"}
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
	id, err := warm.NewIdentity(o.resolved[0].RESTConfig, "")
	if err != nil {
		t.Fatal(err)
	}
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
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:1")
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
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	id, err := warm.NewIdentity(cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	srv, err := warm.NewServer(warm.Options{
		Identity: id, Version: cacheVersion(),
		Handler: func(context.Context, *warm.RunRequest, io.Writer, io.Writer) int { return 0 },
		Status: func() any {
			st := v1alpha1.NewCacheStatus()
			st.Context, st.Server, st.DropAfter = "test", cfg.Host, "5m0s"
			st.Requests = &v1alpha1.CacheRequests{DroppedInformers: 2}
			st.Informers = query.CacheInformers(informer.PoolStatus{Informers: []informer.WarmStatus{{
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
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	id, err := warm.NewIdentity(cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
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

// TestServedRunBinds: a served run answers from the pool only its one
// context of the server's identity; it declines anything else.
func TestServedRunBinds(t *testing.T) {
	s := fakeapi.New(nil)
	pool, err := informer.NewPoolWithClients(informer.Clients{Typed: s.Typed, Dynamic: s.Dynamic, Metadata: s.Metadata}, informer.PoolOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	cfg := &rest.Config{Host: "https://cluster.invalid:6443", BearerToken: "token"}
	id, err := warm.NewIdentity(cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	run := &servedRun{server: &cacheServer{identity: id, pool: pool}, req: &warm.RunRequest{Args: []string{"pods"}}, start: time.Now()}
	target := query.Target{RESTConfig: cfg}
	other := query.Target{RESTConfig: &rest.Config{Host: cfg.Host, BearerToken: "another"}}
	a, b := target, target
	a.Context, b.Context = "a", "b"
	for name, targets := range map[string][]query.Target{
		"another identity": {other},
		"several contexts": {a, b},
	} {
		if _, err := run.bind(&Flags{}, targets, 0); err != errDecline {
			t.Errorf("%s: bind error %v, want a decline", name, err)
		}
	}
	bound, err := run.bind(&Flags{}, []query.Target{target}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if bound[0].Source == nil || bound[0].Source != run.source {
		t.Error("the bound target does not borrow from the pool")
	}
	if bound[0].RESTConfig == cfg {
		t.Error("the bound target's connection does not watch for 401s")
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
	defer func(old func(context.Context, warm.Spec, *warm.RunRequest) *cacheStart) { startCacheServer = old }(startCacheServer)

	// handedOver runs `pods --cache` with the server a spawned `cache serve`
	// would be, in this process, up at once, and the direct answer done
	// answerAfter later: the answer is the direct one, and the server is
	// handed the command.
	handedOver := func(t *testing.T, answerAfter time.Duration) {
		args := []string{"pods", "--cache"}
		o, cmd, out, errOut := cachedHarness(t, args)
		id, err := warm.NewIdentity(o.resolved[0].RESTConfig, "")
		if err != nil {
			t.Fatal(err)
		}
		warmed := make(chan *warm.RunRequest, 1)
		startCacheServer = func(ctx context.Context, spec warm.Spec, req *warm.RunRequest) *cacheStart {
			srv, err := warm.NewServer(warm.Options{Identity: id, Version: cacheVersion(), Handler: func(_ context.Context, r *warm.RunRequest, _, _ io.Writer) int {
				warmed <- r
				return 0
			}})
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve(context.Background())
			t.Cleanup(func() { srv.Shutdown("the test is over") })
			started := startCache(ctx, spec, req)
			if answerAfter == 0 {
				return started
			}
			slow := &cacheStart{spec: started.spec, req: req, done: make(chan struct{})}
			go func() {
				<-started.done
				time.Sleep(answerAfter)
				slow.err = started.err
				close(slow.done)
			}()
			return slow
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
		_, cmd, out, _ := cachedHarness(t, []string{"pods", "nope", "--cache"})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		startCacheServer = func(_ context.Context, _ warm.Spec, req *warm.RunRequest) *cacheStart {
			// A server that never answers: waiting for it would hang.
			return &cacheStart{req: req, done: make(chan struct{})}
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
		_, cmd, out, errOut := cachedHarness(t, []string{"pods", "--cache"})
		startCacheServer = func(_ context.Context, _ warm.Spec, req *warm.RunRequest) *cacheStart {
			s := &cacheStart{req: req, done: make(chan struct{}), err: errors.New("the cache server exited before it answered: exit status 1")}
			close(s.done)
			return s
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
