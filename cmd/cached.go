package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-idx/kubectl-idx/internal/version"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// How a command uses the warm cache. The client side: a command that reads,
// once its flags are complete and valid, hands its arguments to the cache
// server of its identity (starting one if none answers) and prints what the
// server streams back; when no server can be reached, started or trusted, it
// says so in one warning line and runs itself. The server side (serve.go):
// the server runs the same command code on the same arguments, its targets'
// informers borrowed from a warm pool.

// cacheEnv names the variable that turns the cache on for every command that
// reads: auto, or off.
const cacheEnv = "KUBECTL_IDX_CACHE"

// The variables a cache server's start reads: how long it waits with nothing
// to answer, and how long it keeps an informer nobody uses.
const (
	cacheIdleTimeoutEnv = "KUBECTL_IDX_CACHE_IDLE_TIMEOUT"
	cacheDropAfterEnv   = "KUBECTL_IDX_CACHE_DROP_AFTER"
)

// runContext is what a command knows of the run it belongs to: the arguments
// it was started with, which a cache server is handed, and, in the cache
// server, the request it answers.
type runContext struct {
	args   []string
	served *servedRun
	// start starts a cache server beside a direct run; nil is startCache.
	// Tests give a server of their own.
	start func(context.Context, warm.Spec, *warm.RunRequest) *cacheStart
}

// startServer starts a cache server beside a direct run (startCache).
func (r *runContext) startServer(ctx context.Context, spec warm.Spec, req *warm.RunRequest) *cacheStart {
	if r.start != nil {
		return r.start(ctx, spec, req)
	}
	return startCache(ctx, spec, req)
}

// cacheVersion is what a cache server must be to answer this binary: the
// same build. A server of another replies to status and stop only, and is
// replaced.
func cacheVersion() string {
	return version.Version + " " + version.Commit + " " + version.Date
}

// addCacheFlags adds --cache and --max-staleness.
func (o *QueryOptions) addCacheFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.Cache, "cache", false, "Answer from a background process that keeps the informers warm across commands, for this user and these credentials only, starting it if none runs (KUBECTL_IDX_CACHE=auto does it for every command). The answer holds every write the server acknowledged before the command started; -o json and -o yaml say what it is current as of.")
	cmd.Flags().DurationVar(&o.MaxStaleness, "max-staleness", 0, "With --cache, answer without asking the server for its latest resourceVersion when every type read was shown current at most this long before the command started; the answer may miss the changes of that last stretch. 0 always asks.")
}

// cacheWanted reports whether the command is to be answered through the
// warm cache, and whether the user asked for it by name (--cache) rather
// than through KUBECTL_IDX_CACHE.
func (o *QueryOptions) cacheWanted(cmd *cobra.Command) (use, explicit bool, err error) {
	if f := cmd.Flags().Lookup("cache"); f != nil && f.Changed {
		return o.Cache, o.Cache, nil
	}
	switch v := os.Getenv(cacheEnv); v {
	case "", "off":
		return false, false, nil
	case "auto":
		return true, false, nil
	default:
		return false, false, fmt.Errorf("%s=%s: want auto or off", cacheEnv, v)
	}
}

// viaCache answers the command through the warm cache when it is asked for.
// done is false when the command is to run itself: no cache was asked for,
// or none is available, which a warning line has said.
func (o *QueryOptions) viaCache(ctx context.Context, cmd *cobra.Command) (done bool, err error) {
	run := o.Flags.run
	if run != nil && run.served != nil {
		// The cache server itself: a server never connects to a server.
		return false, nil
	}
	use, explicit, err := o.cacheWanted(cmd)
	if err != nil {
		return true, err
	}
	if o.MaxStaleness > 0 && !use {
		return true, errors.New("--max-staleness needs --cache (or KUBECTL_IDX_CACHE=auto): a direct run's answer is always current")
	}
	if !use || run == nil {
		// No cache asked for, or a command built without a run (tests).
		return false, nil
	}
	for _, name := range []string{"profile", "v"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			// Profiles and logs are of this process.
			return false, nil
		}
	}
	if o.several() {
		if explicit {
			o.warnf("--cache answers one context at a time; answering directly")
		}
		return false, nil
	}
	code, err := o.askCache(ctx, cmd, run)
	switch {
	case errors.Is(err, errDirect):
		return false, nil
	case errors.Is(err, errNoCache) && !explicit && errors.Is(err, warm.ErrNoSelfReview):
		// KUBECTL_IDX_CACHE=auto on a server that cannot say who asks: every
		// command answers directly, without a warning each time.
		return false, nil
	case errors.Is(err, errStarting):
		// Answered directly, as the first question through the cache is:
		// warmCache hands the server the command once it has.
		return false, nil
	case err == nil && code == 0:
		return true, nil
	case err == nil:
		// The server printed the error, as the command would have.
		return true, &exitError{code: code, msg: fmt.Sprintf("exit code %d", code)}
	case !errors.Is(err, warm.ErrUnavailable) && !errors.Is(err, errNoCache):
		return true, err
	}
	if ctx.Err() != nil {
		return true, ctx.Err()
	}
	o.warnf("%s; answering directly", cacheProblem(err))
	return false, nil
}

// errNoCache wraps what keeps a command from reaching a cache server before
// it tries: its identity cannot be computed, or the system has no cache.
var errNoCache = errors.New("no warm cache")

// errDirect says the command is to be answered directly, without a warning:
// what kept it from the cache (a server that cannot be reached) is what the
// direct run will report, in its own words.
var errDirect = errors.New("answered directly")

// errStarting says that no cache server ran: one is being started, and the
// command answers directly meanwhile.
var errStarting = errors.New("the cache server is starting")

// askCache runs the command on the cache server of its identity and returns
// its exit code. When none runs, it starts one in the background and
// returns errStarting: the command answers directly, as fast as without the
// cache, and hands the server its arguments afterwards (warmCache), so that
// the next question finds its informers warm. A feed (watch, events -w) is
// different: it runs on the server from the start, which starts for it,
// since a feed's informers are its own there anyway and it may never end.
func (o *QueryOptions) askCache(ctx context.Context, cmd *cobra.Command, run *runContext) (int, error) {
	spec, asker, err := o.cacheSpec(ctx, cmd)
	if err != nil {
		return -1, err
	}
	req, err := warm.NewRunRequest(run.args, o.Out, o.ErrOut)
	if err != nil {
		return -1, err
	}
	req.Credential = asker.Credential
	var conn *warm.Conn
	if o.follows {
		conn, err = warm.Connect(ctx, spec)
	} else {
		conn, err = warm.Dial(ctx, spec)
		if errors.Is(err, warm.ErrNotRunning) {
			o.warming = run.startServer(ctx, spec, req)
			return -1, errStarting
		}
	}
	if err != nil {
		return -1, err
	}
	return o.runServed(ctx, conn, req)
}

// cacheStart is a cache server started beside a direct run.
type cacheStart struct {
	spec warm.Spec
	req  *warm.RunRequest
	done chan struct{}
	// err is Connect's, once done is closed.
	err error
}

// startCache starts the cache server of spec in the background (Connect:
// of two commands starting at once, one starts it). The connection Connect
// makes is closed at once: the server waits 5 s for a request, less than a
// direct run may take (16 s for -o json of 100,000 pods); warmCache dials
// again once the command has answered.
func startCache(ctx context.Context, spec warm.Spec, req *warm.RunRequest) *cacheStart {
	s := &cacheStart{spec: spec, req: req, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		conn, err := warm.Connect(ctx, spec)
		if err == nil {
			conn.Close()
		}
		s.err = err
	}()
	return s
}

// warmCache ends a direct run that started the cache server: once the
// command has answered, it waits for the server to answer and hands it the
// command, which the server runs with its output discarded so that its
// informers are warm for the next question; it does not wait for that. A
// command that failed hands nothing: the server idles and exits. A server
// that could not be started costs one warning line.
func (o *QueryOptions) warmCache(ctx context.Context, runErr error) {
	s := o.warming
	if s == nil {
		return
	}
	o.warming = nil
	if runErr != nil {
		return
	}
	<-s.done
	if s.err == nil {
		var conn *warm.Conn
		if conn, s.err = warm.Dial(ctx, s.spec); s.err == nil {
			s.err = conn.Warm(ctx, s.req)
		}
	}
	if s.err != nil && ctx.Err() == nil {
		o.warnf("%s; answered directly", cacheProblem(s.err))
	}
}

// runServed runs req on conn, printing what the server sends; a stdout whose
// reader went away (`| head`) ends the run as it ends a direct one.
func (o *QueryOptions) runServed(ctx context.Context, conn *warm.Conn, req *warm.RunRequest) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var gone sync.Once
	closedOut := false
	if closed := stdoutClosed(o.Out); closed != nil {
		go func() {
			select {
			case <-closed:
				gone.Do(func() { closedOut = true })
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	code, err := conn.Run(ctx, req, o.Out, o.ErrOut)
	gone.Do(func() {})
	if closedOut {
		return 0, nil
	}
	return code, err
}

// cacheProblem words why the cache could not answer, for the warning line.
func cacheProblem(err error) string {
	if errors.Is(err, warm.ErrUnsupported) {
		return warm.ErrUnsupported.Error()
	}
	return strings.TrimPrefix(err.Error(), errNoCache.Error()+": ")
}

// cacheSpec says which cache server answers this command and how to start
// one: its identity, this binary, and the connection flags for its stdin.
// The identity is the user the API server says the command's credentials
// belong to (warm.Whoami), asked with them, now: its failure is the
// command's, in a direct run's words (Unauthorized, an unreachable server
// within --request-timeout, an exec plugin's own error), unless the server
// cannot say (no SelfSubjectReview), which costs a warning and a direct run.
func (o *QueryOptions) cacheSpec(ctx context.Context, cmd *cobra.Command) (warm.Spec, *warm.Asker, error) {
	t := o.targets[0]
	if t.Err != nil {
		return warm.Spec{}, nil, fmt.Errorf("%w: %w", errNoCache, t.Err)
	}
	if t.RESTConfig == nil {
		return warm.Spec{}, nil, fmt.Errorf("%w: no client configuration to identify", errNoCache)
	}
	id, asker, err := warm.IdentityOf(ctx, t.RESTConfig)
	var status apierrors.APIStatus
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return warm.Spec{}, nil, ctx.Err()
	case errors.Is(err, warm.ErrNoSelfReview):
		return warm.Spec{}, nil, fmt.Errorf("%w: %w", errNoCache, warm.ErrNoSelfReview)
	case apierrors.IsForbidden(err):
		return warm.Spec{}, nil, fmt.Errorf("%w: the API server does not let this user ask who they are (SelfSubjectReview): %w", errNoCache, err)
	case errors.As(err, &status), informer.CredentialsFailed(err):
		// Unauthorized and the like, or an exec plugin that failed: a direct
		// run fails with the same error, in the same words (and would run a
		// failing plugin again).
		return warm.Spec{}, nil, err
	default:
		// The server could not be reached: the direct run meets it too, and
		// says so in its own words, within its own --request-timeout.
		return warm.Spec{}, nil, fmt.Errorf("%w: %w", errDirect, err)
	}
	payload, err := newServePayload(cmd, id, t.RESTConfig)
	if err != nil {
		return warm.Spec{}, nil, fmt.Errorf("%w: %w", errNoCache, err)
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return warm.Spec{}, nil, fmt.Errorf("%w: %w", errNoCache, err)
	}
	args := []string{"cache", "serve"}
	for env, flag := range map[string]string{cacheIdleTimeoutEnv: "idle-timeout", cacheDropAfterEnv: "drop-after"} {
		if v := os.Getenv(env); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return warm.Spec{}, nil, fmt.Errorf("%s=%s: want a positive duration such as 30m", env, v)
			}
			args = append(args, "--"+flag+"="+d.String())
		}
	}
	return warm.Spec{Identity: id, Version: cacheVersion(), Args: args, Payload: data}, asker, nil
}

// contextName is the kubeconfig context the flags select: --context, or the
// kubeconfig's current context.
func contextName(flags *genericclioptions.ConfigFlags) (string, error) {
	if flags == nil {
		// A tree built on its own (tests): no kubeconfig.
		return "", nil
	}
	if flags.Context != nil && *flags.Context != "" {
		return *flags.Context, nil
	}
	raw, err := flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return "", err
	}
	return raw.CurrentContext, nil
}

// servePayload is what a cache server is started with, on its stdin: how to
// reach the cluster as the command that starts it does. It may hold --token.
type servePayload struct {
	// Identity is the identity the starter computed: the server refuses to
	// serve another.
	Identity warm.Identity `json:"identity"`
	// Kubeconfig is the starter's KUBECONFIG, its files absolute; nil when it
	// is not set.
	Kubeconfig *string `json:"kubeconfig,omitempty"`
	// Flags are the connection flags the starter was given, each value as
	// given (paths absolute).
	Flags map[string][]string `json:"flags,omitempty"`
	// ExecEnv is the starter's environment when its credentials come from
	// an exec plugin, and nothing otherwise: the server hands it to the plugin
	// when it renews them, as the starter's own run would have, and keeps it
	// out of its own environment.
	ExecEnv []string `json:"execEnv,omitempty"`
}

// pathFlags are the flags that name files, of every command: a relative
// path is the asker's, resolved against their working directory in a served
// run (the server runs in "/"), and against the starter's in the start
// payload. -o *-file=PATH, and --template with such an -o, are resolved
// too (resolvePaths). TestPathFlagsAreResolved keeps the list whole.
var pathFlags = map[string]bool{
	"kubeconfig": true, "cache-dir": true, "certificate-authority": true, "client-certificate": true, "client-key": true,
	"checkpoint": true, "profile-output": true,
}

// connectionFlags names kubectl's connection flags.
func connectionFlags() []string {
	fs := pflag.NewFlagSet("connection", pflag.ContinueOnError)
	genericclioptions.NewConfigFlags(true).AddFlags(fs)
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
	return names
}

func newServePayload(cmd *cobra.Command, id warm.Identity, cfg *rest.Config) (*servePayload, error) {
	p := &servePayload{Identity: id, Flags: map[string][]string{}}
	if cfg.ExecProvider != nil {
		p.ExecEnv = os.Environ()
	}
	if v, ok := os.LookupEnv(clientcmd.RecommendedConfigPathEnvVar); ok {
		abs, err := absList(v, "")
		if err != nil {
			return nil, err
		}
		p.Kubeconfig = &abs
	}
	for _, name := range connectionFlags() {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		values := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		if pathFlags[name] {
			for i, v := range values {
				abs, err := absPath(v, "")
				if err != nil {
					return nil, err
				}
				values[i] = abs
			}
		}
		p.Flags[name] = values
	}
	return p, nil
}

// absPath makes path absolute against dir, or the working directory when
// dir is empty; "" stays "".
func absPath(path, dir string) (string, error) {
	if path == "" || filepath.IsAbs(path) {
		return path, nil
	}
	if dir == "" {
		return filepath.Abs(path)
	}
	return filepath.Join(dir, path), nil
}

// absList makes each path of a KUBECONFIG-style list absolute.
func absList(list, dir string) (string, error) {
	parts := filepath.SplitList(list)
	for i, p := range parts {
		abs, err := absPath(p, dir)
		if err != nil {
			return "", err
		}
		parts[i] = abs
	}
	return strings.Join(parts, string(os.PathListSeparator)), nil
}

// errDecline ends a served run the server will not answer, before it has
// written anything: the client runs the command itself.
var errDecline = &exitError{code: warm.Decline, msg: "declined by the cache server"}

// servedRun is one command a cache server answers: the request, and the
// server whose pool lends its informers.
type servedRun struct {
	server *cacheServer
	req    *warm.RunRequest
	// start is when the request arrived: the answer holds every write
	// acknowledged before.
	start time.Time
	// source lends the run's informers, once its targets are bound, as
	// fresh as maxStaleness (--max-staleness) lets them be.
	source       *informer.PoolSource
	maxStaleness time.Duration
}

// prepare makes the flags of a served run read what a direct run of the
// client would: relative paths against the client's working directory,
// KUBECONFIG, HOME and KUBECACHEDIR of the client's environment, and the
// client's own credential (warm.Credential) in place of whatever the
// kubeconfig says, for every request the run makes itself (discovery, the
// server's tables, the asker's checks). It declines what a served run cannot
// do for the client: a profile or klog's -v, which belong to a process; a
// request without a credential; one whose credential the API server says is
// another user's than the server's, whose informers it would read. A
// credential the API server refuses, or a server that cannot be reached, is
// the run's error, in a direct run's words.
func (s *servedRun) prepare(cmd *cobra.Command, f *Flags) error {
	for _, name := range []string{"profile", "v"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return errDecline
		}
	}
	if s.req.Credential == nil {
		return errDecline
	}
	if err := resolvePaths(cmd, s.req.Dir); err != nil {
		return err
	}
	env := s.req.Env
	home := env["HOME"]
	if fl := cmd.Flags().Lookup("cache-dir"); fl != nil && !fl.Changed && f.CacheDir != nil {
		switch {
		case env["KUBECACHEDIR"] != "":
			*f.CacheDir = env["KUBECACHEDIR"]
		case home != "":
			*f.CacheDir = filepath.Join(home, ".kube", "cache")
		}
	}
	// The asker's kubeconfig files, read by a loader of this run's own: the
	// process's environment is the server's, and nobody changes it.
	if kubeconfig, ok := env[clientcmd.RecommendedConfigPathEnvVar]; ok {
		list, err := absList(kubeconfig, s.req.Dir)
		if err != nil {
			return err
		}
		f.kubeconfig = filepath.SplitList(list)
	} else if home != "" {
		f.kubeconfig = []string{filepath.Join(home, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)}
	}
	if err := f.useKubeconfig(f.ConfigFlags); err != nil {
		return err
	}

	cred := s.req.Credential
	f.WrapConfigFn = cred.Apply
	if names, err := f.contextNames(); err != nil || names != nil {
		// Several contexts are answered directly (viaCache); an error is
		// the direct run's to report.
		return errDecline
	}
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return errDecline
	}
	id, err := s.server.verify(cmd.Context(), cfg, cred)
	if err != nil {
		return err
	}
	if id != s.server.identity {
		return errDecline
	}
	return nil
}

// resolvePaths makes the relative paths of cmd's flags that name files
// (pathFlags, -o *-file=PATH, --template with such an -o) absolute against
// dir, the asker's working directory.
func resolvePaths(cmd *cobra.Command, dir string) error {
	set := func(fl *pflag.Flag, value string) error {
		abs, err := absPath(value, dir)
		if err != nil || abs == value {
			return err
		}
		return fl.Value.Set(abs)
	}
	var err error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if err == nil && pathFlags[fl.Name] {
			err = set(fl, fl.Value.String())
		}
	})
	if err != nil {
		return err
	}
	out := cmd.Flags().Lookup("output")
	if out == nil || !out.Changed {
		return nil
	}
	format, path, hasPath := strings.Cut(out.Value.String(), "=")
	if !strings.HasSuffix(format, "-file") {
		return nil
	}
	if hasPath {
		abs, err := absPath(path, dir)
		if err != nil {
			return err
		}
		if err := out.Value.Set(format + "=" + abs); err != nil {
			return err
		}
	}
	if tmpl := cmd.Flags().Lookup("template"); tmpl != nil && tmpl.Changed {
		return set(tmpl, tmpl.Value.String())
	}
	return nil
}

// bind gives the run's targets the server's warm informers: one context,
// whose asker prepare has verified, each informer the run reads authorized
// for the asker by the API server (informer.Asker) with the asker's
// credential. Anything else is declined, and the client answers it itself.
func (s *servedRun) bind(targets []query.Target, maxStaleness time.Duration) ([]query.Target, error) {
	if len(targets) != 1 || targets[0].Context != "" || targets[0].Err != nil {
		return nil, errDecline
	}
	t := targets[0]
	asker, err := informer.NewAsker(t.RESTConfig)
	if err != nil {
		return nil, err
	}
	s.maxStaleness = maxStaleness
	s.source = s.server.pool.Source(informer.Freshness{Start: s.start, MaxStaleness: maxStaleness}, strings.Join(s.req.Args, "\x00"), asker)
	t.Source = s.source
	return []query.Target{t}, nil
}

// terminalWriter is a served run's stdout or stderr: what the server writes
// goes to the client, whose terminal it may be.
type terminalWriter struct {
	io.Writer
	terminal bool
}

// IsTerminal says whether the client's stream is a terminal (isTerminal).
func (w terminalWriter) IsTerminal() bool { return w.terminal }
