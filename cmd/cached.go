package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/kubectl-idx/kubectl-idx/internal/pipe"
	"github.com/kubectl-idx/kubectl-idx/internal/version"
	"github.com/kubectl-idx/kubectl-idx/pkg/served"
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

// runContext is what a command knows of the run it belongs to: the arguments
// it was started with, which a cache server is handed, and, in the cache
// server, the request it answers.
type runContext struct {
	args   []string
	served *served.Run
	// heapFloor raises the process's heap floor (heapfloor.Raise) for a
	// command that keeps what it reads until it answers: set on the
	// process's own run (Execute), which ends with its answer; nil in a
	// cache server, which lives on.
	heapFloor func()
	// start starts a cache server beside a direct run; nil is
	// served.StartServer. Tests give a server of their own.
	start func(context.Context, warm.Spec, *warm.RunRequest) *served.Starting
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
	case errors.Is(err, served.ErrDirect):
		// The API server could not be reached: the direct run says so.
		return false, nil
	case errors.Is(err, served.ErrNoCache) && !explicit && errors.Is(err, warm.ErrNoSelfReview):
		// KUBECTL_IDX_CACHE=auto on a server that cannot say who asks: every
		// command answers directly, without a warning each time.
		return false, nil
	case errors.Is(err, served.ErrStarting):
		// Answered directly, as the first question through the cache is:
		// warmCache hands the server the command once it has.
		return false, nil
	case err == nil && code == 0:
		return true, nil
	case err == nil:
		// The server printed the error, as the command would have.
		return true, &exitError{code: code, msg: fmt.Sprintf("exit code %d", code)}
	case !errors.Is(err, warm.ErrUnavailable) && !errors.Is(err, served.ErrNoCache):
		return true, err
	}
	if ctx.Err() != nil {
		return true, ctx.Err()
	}
	o.warnf("%s; answering directly", served.Problem(err))
	return false, nil
}

// askCache runs the command on the cache server of its identity
// (served.Client.Ask) and returns its exit code; a server being started for
// it is kept for warmCache.
func (o *QueryOptions) askCache(ctx context.Context, cmd *cobra.Command, run *runContext) (int, error) {
	if t := o.targets[0]; t.Err != nil {
		return -1, fmt.Errorf("%w: %w", served.ErrNoCache, t.Err)
	}
	args, err := served.ServeArgs()
	if err != nil {
		return -1, err
	}
	req, err := warm.NewRunRequest(run.args, o.Out, o.ErrOut)
	if err != nil {
		return -1, err
	}
	c := served.Client{Config: o.targets[0].RESTConfig, Version: cacheVersion(), Args: args, Start: run.start,
		Payload: func(id warm.Identity) ([]byte, error) {
			p, err := served.NewPayload(cmd.Flags(), id, o.targets[0].RESTConfig)
			if err != nil {
				return nil, err
			}
			return json.Marshal(p)
		}}
	code, starting, err := c.Ask(ctx, req, o.follows, o.Out, o.ErrOut, pipe.ReaderGone(o.Out))
	o.warming = starting
	return code, err
}

// warmCache ends a direct run that started the cache server: once the
// command has answered, it hands the server the command to warm its
// informers (served.Starting.Warm). A command that failed hands nothing:
// the server idles and exits. A server that could not be started costs one
// warning line.
func (o *QueryOptions) warmCache(ctx context.Context, runErr error) {
	s := o.warming
	if s == nil {
		return
	}
	o.warming = nil
	// A verdict (why's exit status) is an answer in full, not a failure.
	var exit *exitError
	if runErr != nil && !(errors.As(runErr, &exit) && exit.verdict) {
		return
	}
	if err := s.Warm(ctx); err != nil && ctx.Err() == nil {
		o.warnf("%s; answered directly", served.Problem(err))
	}
}

// errDecline ends a served run the server will not answer, before it has
// written anything: the client runs the command itself.
var errDecline = &exitError{code: warm.Decline, msg: served.ErrDecline.Error()}

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
func prepareServed(run *served.Run, cmd *cobra.Command, f *Flags) error {
	for _, name := range []string{"profile", "v"} {
		if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed {
			return errDecline
		}
	}
	req := run.Request()
	if req.Credential == nil {
		return errDecline
	}
	if err := served.ResolvePaths(cmd.Flags(), req.Dir); err != nil {
		return err
	}
	if fl := cmd.Flags().Lookup("cache-dir"); fl != nil && !fl.Changed && f.CacheDir != nil {
		if dir := run.CacheDir(); dir != "" {
			*f.CacheDir = dir
		}
	}
	// The asker's kubeconfig files, read by a loader of this run's own: the
	// process's environment is the server's, and nobody changes it.
	kubeconfig, err := run.Kubeconfig()
	if err != nil {
		return err
	}
	if kubeconfig != nil {
		f.Kubeconfig = kubeconfig
	}
	if err := f.UseKubeconfig(f.ConfigFlags); err != nil {
		return err
	}

	// The client's credential, then the compression rule the root set.
	f.WrapConfigFn = run.WrapConfig(f.WrapConfigFn)
	if names, err := f.ContextNames(); err != nil || names != nil {
		// Several contexts are answered directly (viaCache); an error is
		// the direct run's to report.
		return errDecline
	}
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return errDecline
	}
	if err := run.Verify(cmd.Context(), cfg); err != nil {
		if errors.Is(err, served.ErrDecline) {
			return errDecline
		}
		return err
	}
	return nil
}
