package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/pool"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/served"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

var cacheLong = `Show or stop the warm cache of the current context.

With --cache on a command that reads (or KUBECTL_IDX_CACHE=auto for every one),
kubectl idx answers from a background process that keeps the informers of the
types asked about warm across commands: the first command starts it and answers
as a direct run would, later ones are answered from memory. There is one
process per API server and user, as the API server names the user (a
SelfSubjectReview made with your credentials), and every answer is authorized by
the API server for your own credentials during that command, --max-staleness or
not. It listens on a unix socket in a directory only you can enter, answers only
processes of your user, writes nothing it reads from the cluster to disk, and
exits after 10 idle minutes (KUBECTL_IDX_CACHE_IDLE_TIMEOUT) or once its
credentials are rejected. status and stop ask the API server who you are.`

var cacheExample = `  # What the cache of the current context holds, and as of which resourceVersion
  kubectl idx cache status

  # The same as JSON
  kubectl idx cache status -o json

  # Stop it: the next command with --cache starts afresh
  kubectl idx cache stop`

// NewCmdCache returns the cache command and its status, stop and (hidden)
// serve subcommands.
func NewCmdCache(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "cache",
		Short:   "Show or stop the warm cache of the current context",
		Long:    cacheLong,
		Example: cacheExample,
		// Without a subcommand, the help; with an unknown one, kubectl's error
		// for an unknown command, not the help and exit code 0.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newCmdCacheStatus(f, streams), newCmdCacheStop(f, streams), newCmdCacheServe(streams))
	return cmd
}

// CacheOptions are the flags and resolved state of cache status and cache
// stop.
type CacheOptions struct {
	*Flags
	Output string

	cfg     *rest.Config
	spec    warm.Spec
	context string
	genericiooptions.IOStreams
}

func newCmdCacheStatus(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CacheOptions{Flags: f, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what the warm cache of the current context holds",
		Long:  "Show the warm cache server of the current context: its process, memory and, per informer it keeps, the objects, since when, and the resourceVersion it has applied and was last shown current at. Nothing is started.",
		Args:  cobra.NoArgs,
		RunE:  runE(cacheStatus{o}),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format. One of: json, yaml. A summary and a table of informers when empty.")
	return cmd
}

func newCmdCacheStop(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &CacheOptions{Flags: f, IOStreams: streams}
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the warm cache of the current context",
		Long:  "Stop the warm cache server of the current context and wait until its process has exited. The next command with --cache starts a new one, with the credentials and environment it has then.",
		Args:  cobra.NoArgs,
		RunE:  runE(cacheStop{o}),
	}
}

// complete resolves the connection of the current context; it sends no
// request.
func (o *CacheOptions) complete() error {
	var err error
	if o.cfg, err = o.ConfigFlags.ToRESTConfig(); err != nil {
		return err
	}
	o.context, err = query.ContextName(o.ConfigFlags)
	return err
}

// identify resolves the identity of the current context's cache server: the
// user the API server says the context's credentials belong to, which it
// asks.
func (o *CacheOptions) identify(ctx context.Context) error {
	id, _, err := warm.IdentityOf(ctx, o.cfg)
	if err != nil {
		return err
	}
	o.spec = warm.Spec{Identity: id, Version: cacheVersion()}
	return nil
}

// cacheStatus is `kubectl idx cache status`.
type cacheStatus struct{ *CacheOptions }

func (o cacheStatus) Complete(*cobra.Command, []string) error { return o.complete() }

func (o cacheStatus) Validate() error {
	switch o.Output {
	case "", "json", "yaml":
		return nil
	}
	return fmt.Errorf("--output must be 'json', 'yaml' or empty, got %q", o.Output)
}

func (o cacheStatus) Run(ctx context.Context) error {
	if err := o.identify(ctx); err != nil {
		return err
	}
	st, err := served.Status(ctx, o.spec)
	switch {
	case errors.Is(err, warm.ErrNotRunning):
		if o.Output == "" {
			fmt.Fprintf(o.ErrOut, "No cache server is running for context %q.\n", o.context)
			return nil
		}
	case err != nil:
		return err
	}
	switch o.Output {
	case "json":
		return (&cliprinters.JSONPrinter{}).PrintObj(st, o.Out)
	case "yaml":
		return (&cliprinters.YAMLPrinter{}).PrintObj(st, o.Out)
	}
	return printers.PrintCacheStatus(o.Out, st, time.Now())
}

// cacheStop is `kubectl idx cache stop`.
type cacheStop struct{ *CacheOptions }

func (o cacheStop) Complete(*cobra.Command, []string) error { return o.complete() }

func (o cacheStop) Validate() error { return nil }

func (o cacheStop) Run(ctx context.Context) error {
	if err := o.identify(ctx); err != nil {
		return err
	}
	err := warm.Stop(ctx, o.spec)
	if errors.Is(err, warm.ErrNotRunning) {
		fmt.Fprintf(o.ErrOut, "No cache server is running for context %q.\n", o.context)
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "cache server of context %q stopped\n", o.context)
	return nil
}

// newCmdCacheServe returns `kubectl idx cache serve`, the cache server that
// warm.Connect starts; nobody runs it by hand.
func newCmdCacheServe(streams genericiooptions.IOStreams) *cobra.Command {
	idle, dropAfter := warm.DefaultIdleTimeout, pool.DefaultDropAfter
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "Serve the warm cache of the connection read from stdin",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if idle <= 0 || dropAfter <= 0 {
				return errors.New("--idle-timeout and --drop-after must be positive")
			}
			return runCacheServer(cmd.Context(), streams.In, idle, dropAfter)
		},
	}
	cmd.Flags().DurationVar(&idle, "idle-timeout", idle, "How long the server waits with no command to answer before it exits.")
	cmd.Flags().DurationVar(&dropAfter, "drop-after", dropAfter, "How long the server keeps an informer no command uses.")
	return cmd
}
