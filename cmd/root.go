// Package cmd holds the cobra commands of kubectl-idx. Commands translate flags
// into plain configuration and call into pkg/, which does the work.
package cmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-idx/kubectl-idx/internal/heapfloor"
	"github.com/kubectl-idx/kubectl-idx/internal/help"
	"github.com/kubectl-idx/kubectl-idx/internal/profiling"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// Flags are the flags every command shares: kubectl's connection flags and
// -A, bound once on the root command.
type Flags struct {
	query.ContextFlags

	// resolved are targets resolved already, by tests, over fake clients:
	// resolveTargets returns them instead of reading the kubeconfig. It is
	// the one seam between the commands and their clusters.
	resolved []query.Target
	// run is the run the commands belong to: its arguments and, in the cache
	// server, the request it answers (cached.go). Nil for a tree built on
	// its own.
	run *runContext
}

// resolveTargets resolves the contexts the flags name, once, before any
// request (query.ContextFlags.Targets).
func (f *Flags) resolveTargets() ([]query.Target, error) {
	if f.resolved != nil {
		return f.resolved, nil
	}
	return f.Targets()
}

// NewCmdRoot returns the `kubectl idx` command. The root command itself lists
// resources (see get.go); other verbs are subcommands.
func NewCmdRoot(streams genericiooptions.IOStreams) *cobra.Command {
	root, _ := newCmdRoot(streams, nil)
	return root
}

// newCmdRoot is NewCmdRoot with the --profile it was given, which Execute
// writes once the command is done.
func newCmdRoot(streams genericiooptions.IOStreams, run *runContext) (*cobra.Command, *profiling.Profile) {
	configFlags := genericclioptions.NewConfigFlags(true)
	f := &Flags{ContextFlags: query.ContextFlags{ConfigFlags: configFlags}, run: run}
	o := NewGetOptions(f, streams)
	root := newCmdGet(o)
	root.Use = "idx [(-o|--output=)json|yaml|name|wide|jsonpath|go-template|custom-columns|...] (TYPE[.VERSION][.GROUP] [NAME ...] | TYPE[.VERSION][.GROUP]/NAME ...) [flags]"
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = "kubectl idx"
	root.SilenceUsage = true
	root.SilenceErrors = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return errtext.Flag(err) })
	// Global flags are listed by kubectl idx options, not under every command.
	root.SetUsageFunc(help.Usage)
	prof := &profiling.Profile{}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if run != nil && run.served != nil {
			if err := prepareServed(run.served, cmd, f); err != nil {
				return err
			}
		}
		if _, err := informer.ListTuningFromEnv(); err != nil {
			return err
		}
		// client-go logs some failures it also returns ("Unexpected error when
		// reading response body") at any verbosity; the one-line error we print
		// says it already. Keep klog for those who ask for it with -v.
		if !klog.V(1).Enabled() {
			// A logger takes every severity: with only an output set, klog
			// still copies errors to stderr (its stderrthreshold), such as
			// client-go v0.36's complaint, when a discovery request times
			// out, that its TLS transport cannot cancel requests.
			klog.SetLogger(logr.Discard())
		}
		return prof.Start()
	}
	root.CompletionOptions.HiddenDefaultCmd = true

	flags := root.PersistentFlags()
	configFlags.AddFlags(flags)
	// No compression from a server on loopback unless --disable-compression
	// is given either way (query.CompressionRule), for every client built
	// from the connection flags: a context's (ContextFlags.ForContext copies it), the
	// cache server's, the MCP server's.
	disableCompression := flags.Lookup("disable-compression")
	if disableCompression != nil {
		disableCompression.Usage = "If true, opt-out of response compression for all requests to the server. Unset, a server on a loopback address (127.0.0.0/8, ::1, localhost) is asked for none, and any other server for gzip."
	}
	configFlags.WrapConfigFn = query.CompressionRule(func() bool { return disableCompression != nil && disableCompression.Changed }, nil)
	// kubectl's --context, which here also takes a list.
	flags.Lookup("context").Usage = "The name of the kubeconfig context to use, or several, comma-separated (a,b,c), to ask each cluster at once."
	flags.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces. Namespace in current context is ignored even if specified with --namespace.")
	flags.BoolVar(&f.AllContexts, "all-contexts", false, "Ask every context of the kubeconfig, concurrently, and say which context each object came from (a CONTEXT column, a context/ prefix with -o name, a \"context\" field in JSON). --context also takes several names: --context a,b,c.")
	addKlogVerbosity(root)
	prof.AddFlags(flags)

	root.AddCommand(NewCmdVersion(configFlags, streams))
	root.AddCommand(NewCmdWatch(f, streams))
	root.AddCommand(NewCmdTree(f, streams))
	root.AddCommand(NewCmdOwners(f, streams))
	root.AddCommand(NewCmdOrphans(f, streams))
	root.AddCommand(NewCmdEvents(f, streams))
	root.AddCommand(NewCmdUses(f, streams))
	root.AddCommand(NewCmdSelects(f, streams))
	root.AddCommand(NewCmdSelectedBy(f, streams))
	root.AddCommand(NewCmdHistory(f, streams))
	root.AddCommand(NewCmdBlame(f, streams))
	root.AddCommand(NewCmdWhy(f, streams))
	root.AddCommand(NewCmdCache(f, streams))
	root.AddCommand(NewCmdMCP(f, streams))
	root.AddCommand(NewCmdOptions(streams))
	addCompletion(root, f, streams)
	return root, prof
}

// addKlogVerbosity exposes klog's -v and nothing else of klog's flag set.
func addKlogVerbosity(cmd *cobra.Command) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	// klog writes to stderr only, never into the data on stdout.
	_ = fs.Set("logtostderr", "true")
	if v := fs.Lookup("v"); v != nil {
		cmd.PersistentFlags().AddGoFlag(v)
	}
}

// Execute runs the root command with args and returns the process exit code.
// Errors are printed once, on stderr, in kubectl's wording.
func Execute(streams genericiooptions.IOStreams, args []string) int {
	// Without this a write to a closed pipe (`kubectl idx ... | head`) kills the
	// process with SIGPIPE; with it the write fails with EPIPE and we exit quietly.
	signal.Ignore(syscall.SIGPIPE)
	// client-go reports some failures it also returns (discovery, for one) through
	// utilruntime.HandleError, which would print klog lines on top of our one-line
	// error. Keep them for -v=2 and above.
	utilruntime.ErrorHandlers = []utilruntime.ErrorHandler{
		func(_ context.Context, err error, msg string, kv ...any) {
			klog.V(2).ErrorS(err, msg, kv...)
		},
	}
	// A server's Warning headers (a deprecated API version, an admission
	// webhook's warning) reach stderr as kubectl prints them, each once
	// (kubectl's cmd.go installs the same writer). This sets the process's
	// default, for every client that sets no handler of its own: a cache
	// server's stderr is the null device, and its pool's clients drop
	// warnings besides (query.NewPool).
	rest.SetDefaultWarningHandler(rest.NewWarningWriter(streams.ErrOut, rest.WarningWriterOptions{
		Deduplicate: true,
		Color:       cliprinters.AllowsColorOutput(streams.ErrOut),
	}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return execute(ctx, streams, args, &runContext{args: args, heapFloor: func() { heapfloor.Raise(heapfloor.Default) }})
}

// execute runs the root command with args in run, as Execute does for the
// process or the cache server for a command it answers.
func execute(ctx context.Context, streams genericiooptions.IOStreams, args []string, run *runContext) int {
	root, prof := newCmdRoot(streams, run)
	if listsEvents(args) {
		// `kubectl idx events` with no object is the list of Event objects,
		// as `kubectl get events` prints it (and as it was before the events
		// subcommand): the type, not the subcommand.
		for _, c := range root.Commands() {
			if c.Name() == eventsCommand {
				root.RemoveCommand(c)
			}
		}
	}
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	err := root.ExecuteContext(ctx)
	if perr := prof.Stop(); perr != nil && err == nil {
		err = perr
	}
	klog.Flush()
	kubeconfig := ""
	if f := root.Flag("kubeconfig"); f != nil {
		kubeconfig = f.Value.String()
	}
	return finish(ctx, err, streams.ErrOut, kubeconfig)
}

// finish prints err once, in kubectl's words, and returns the exit code: 0
// for none, for a closed stdout and for an interrupt; a partial answer's own
// code, after what it has said; 1 otherwise. kubeconfig is --kubeconfig.
func finish(ctx context.Context, err error, errOut io.Writer, kubeconfig string) int {
	if err == nil || errors.Is(err, syscall.EPIPE) {
		return 0
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return 0
	}
	// A partial answer over several contexts has said what it is missing.
	var exit *exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	fmt.Fprintln(errOut, errtext.Format(err))
	if errtext.NeedsDemoHint(err, kubeconfig) {
		fmt.Fprintln(errOut, errtext.DemoHint)
	}
	return 1
}

// eventsCommand is the name of the events subcommand, which is also the name
// of a resource type the root command lists.
const eventsCommand = "events"

// listsEvents reports whether args run the events subcommand without an
// object, without any of its own flags (--types, --since, --until,
// --for-kind, -w) and without asking for its help. With one of those the
// subcommand runs and asks for the object in one line: they are about an
// object's tree, which the list of Event objects has not. Flags of
// the root command (-l, --sort-by, ...) are skipped over, so they do not hide
// an object, nor count as one. The args are parsed on a command tree of
// their own: parsing binds flag values, and the real tree parses them again.
func listsEvents(args []string) bool {
	probe := NewCmdRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	cmd, rest, err := probe.Find(args)
	if err != nil || cmd.Name() != eventsCommand || cmd.Parent() != probe {
		return false
	}
	cmd.InitDefaultHelpFlag()
	cmd.FParseErrWhitelist.UnknownFlags = true
	if err := cmd.ParseFlags(rest); err != nil {
		return false
	}
	for _, name := range []string{"help", "types", "since", "until", "for-kind", "watch"} {
		if cmd.Flags().Changed(name) {
			return false
		}
	}
	return len(cmd.Flags().Args()) == 0
}
