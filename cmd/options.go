package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-idx/kubectl-idx/internal/help"
	"github.com/kubectl-idx/kubectl-idx/internal/pipe"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/served"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// QueryOptions are the flags and resolved state of every command that asks
// clusters, which the commands' Options embed as kubectl's commands compose
// PrintFlags: the contexts asked, the printer, --sync-timeout, --where, the
// selectors, and the engine's configuration built from them.
type QueryOptions struct {
	*Flags
	PrintFlags *get.PrintFlags

	// LabelSelector and FieldSelector are -l and --field-selector, of the
	// commands that take them (addSelectorFlags).
	LabelSelector string
	FieldSelector string
	SyncTimeout   time.Duration
	// Where are the --where expressions, parsed by complete into where.
	Where []string
	// Cache is --cache and MaxStaleness --max-staleness (cached.go).
	Cache        bool
	MaxStaleness time.Duration
	// follows is set by the commands that stream changes until stopped
	// (watch, events -w): through the cache, they run there from the start.
	follows bool
	// warming is the cache server a direct run started, to be handed the
	// command once it has answered (cached.go).
	warming *served.Starting

	// targets are the contexts asked, one for a plain run, resolved by
	// complete.
	targets []query.Target
	// printer and format are -o's, resolved by complete through toPrinter:
	// nil is PrintFlags.ToPrinter, kubectl get's printers.
	printer   cliprinters.ResourcePrinter
	format    string
	toPrinter func(*get.PrintFlags) (cliprinters.ResourcePrinter, error)
	// progress is set when stderr is a terminal: progress lines would only
	// be noise in a log file or a pipe.
	progress bool
	// stderr serializes the warnings that informer goroutines write.
	stderr sync.Mutex
	// where is --where parsed; nil without it.
	where *where.Conditions

	genericiooptions.IOStreams
}

// command is the Options of one command, in kubectl's shape.
type command interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runE is the RunE of c's command: Complete, Validate, then Run.
func runE(c command) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := c.Complete(cmd, args); err != nil {
			return err
		}
		if err := c.Validate(); err != nil {
			return err
		}
		q, cached := c.(interface {
			viaCache(context.Context, *cobra.Command) (bool, error)
			warmCache(context.Context, error)
		})
		if cached {
			if done, err := q.viaCache(cmd.Context(), cmd); done {
				return err
			}
		}
		err := c.Run(cmd.Context())
		if cached {
			q.warmCache(cmd.Context(), err)
		}
		return err
	}
}

// newQueryOptions returns QueryOptions with kubectl's printing flags.
func newQueryOptions(f *Flags, streams genericiooptions.IOStreams) *QueryOptions {
	if f == nil {
		// A command built on its own (tests).
		f = &Flags{}
	}
	return &QueryOptions{Flags: f, PrintFlags: get.NewGetPrintFlags(), SyncTimeout: 60 * time.Second, IOStreams: streams}
}

// addFlags adds --sync-timeout, --where, --cache and --max-staleness, and
// shows -A and --all-contexts in cmd's help.
func (o *QueryOptions) addFlags(cmd *cobra.Command) {
	help.ExposeGlobalFlags(cmd)
	cmd.Flags().DurationVar(&o.SyncTimeout, "sync-timeout", o.SyncTimeout, "How long to wait for the informer caches to sync before giving up; 0 waits forever.")
	cmd.Flags().StringArrayVar(&o.Where, "where", nil, "Only objects for which this CEL expression is true, e.g. 'object.status.phase != \"Running\"'. It may name object (the object as -o json prints it), owner (its top-level controller: apiVersion, kind and metadata; null when it has none), node (a pod's Node; null when unscheduled) and now (when the command started). Repeat it for several conditions that must all hold.")
	o.addCacheFlags(cmd)
}

// addSelectorFlags adds -l and --field-selector.
func (o *QueryOptions) addSelectorFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
}

// complete resolves the printer and the contexts asked; it sends no request
// to the server (the REST mappers and discovery clients are lazy).
func (o *QueryOptions) complete() error {
	toPrinter := o.toPrinter
	if toPrinter == nil {
		toPrinter = (*get.PrintFlags).ToPrinter
	}
	p, err := toPrinter(o.PrintFlags)
	if err != nil {
		return err
	}
	o.printer = p
	// Bad expressions are found here, before any request: CEL needs no server
	// to read them, only to type them (query's compileWhere).
	if o.where, err = where.Parse(o.Where, time.Now()); err != nil {
		return err
	}
	o.format = printers.OutputFormat(o.PrintFlags)
	if o.targets, err = o.Flags.resolveTargets(); err != nil {
		return err
	}
	if o.run != nil && o.run.served != nil {
		if o.targets, err = o.run.served.Bind(o.targets, o.MaxStaleness); err != nil {
			if errors.Is(err, served.ErrDecline) {
				return errDecline
			}
			return err
		}
	}
	o.progress = isTerminal(o.ErrOut)
	return nil
}

// isTerminal reports whether w is a terminal: in the cache server, whether
// the client's is.
func isTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// validate checks the shared flags; it does no I/O.
func (o *QueryOptions) validate() error {
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return fmt.Errorf("invalid label selector %q: %w", o.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
		return fmt.Errorf("invalid field selector %q: %w", o.FieldSelector, err)
	}
	if o.SyncTimeout < 0 {
		return fmt.Errorf("--sync-timeout must not be negative, got %s", o.SyncTimeout)
	}
	if o.MaxStaleness < 0 {
		return fmt.Errorf("--max-staleness must not be negative, got %s", o.MaxStaleness)
	}
	return nil
}

// several reports whether the answer is over several contexts (--context
// a,b or --all-contexts), each object and warning naming its own.
func (o *QueryOptions) several() bool {
	return len(o.targets) > 0 && o.targets[0].Context != ""
}

// human reports whether -o asks for kubectl's tables.
func (o *QueryOptions) human() bool { return printers.IsHuman(o.format) }

// sortBy is the --sort-by value, "" when unset.
func (o *QueryOptions) sortBy() string {
	if hf := o.PrintFlags.HumanReadableFlags; hf != nil && hf.SortBy != nil {
		return *hf.SortBy
	}
	return ""
}

// config is the engine's configuration from the flags.
func (o *QueryOptions) config() query.Config {
	cfg := query.Config{
		LabelSelector:     o.LabelSelector,
		FieldSelector:     o.FieldSelector,
		KeepManagedFields: o.PrintFlags.JSONYamlPrintFlags.ShowManagedFields,
		SyncTimeout:       o.SyncTimeout,
		WarningText:       errtext.Warning,
		ObjectStatus:      printers.ObjectStatus,
		Where:             o.where,
	}
	if o.progress {
		cfg.Progress = o.ErrOut
	}
	return cfg
}

// printOptions carries the printing flags kubectl's printers do not hold,
// and warnings, what the answer may be missing.
func (o *QueryOptions) printOptions(warnings []string) printers.Options {
	hf := o.PrintFlags.HumanReadableFlags
	return printers.Options{
		Encodings:     o.encodings(),
		Format:        o.format,
		NoHeaders:     *o.PrintFlags.NoHeaders,
		ShowLabels:    *hf.ShowLabels,
		ShowKind:      *hf.ShowKind,
		ColumnLabels:  *hf.ColumnLabels,
		WithNamespace: o.AllNamespaces,
		SortBy:        o.sortBy(),
		Now:           time.Now(),
		Warnings:      warnings,
		ErrorText:     errtext.Warning,
	}
}

// encodings are the cache process's kept JSON encodings in a run it serves,
// nil in a direct run.
func (o *QueryOptions) encodings() *printers.Encodings {
	if o.Flags == nil || o.run == nil || o.run.served == nil {
		return nil
	}
	return o.run.served.Encodings()
}

// warnf writes a warning line to stderr; warnings of informer goroutines
// never interleave.
func (o *QueryOptions) warnf(format string, args ...any) {
	o.stderr.Lock()
	defer o.stderr.Unlock()
	fmt.Fprintf(o.ErrOut, "warning: "+format+"\n", args...)
}

// feedNotices are what the feed of context says besides its events, as
// warnings naming the context when several are asked.
func (o *QueryOptions) feedNotices(context string) query.FeedNotices {
	return query.WarnNotices(func(msg string) {
		if context != "" {
			msg = errtext.PrefixContext(context, msg)
		}
		o.warnf("%s", msg)
	})
}

// follow asks q of every context (query.Follow) and prints the merged feeds
// with the printer newPrinter makes once they are planned, until ctx ends or
// stdout's reader goes away: the one feed loop of watch and events -w. Over
// several contexts a context that cannot be planned, or whose feed fails,
// is a warning naming it while the others go on, and the exit code counts
// them (failed of total); one context's failure is its error.
func (o *QueryOptions) follow(ctx context.Context, q query.FeedQuery, newPrinter func(plans []query.FeedPlan, sources []schema.GroupVersionKind) (query.EventPrinter, error)) error {
	// With nothing to print, a feed would otherwise learn that `| head` is
	// done only at its next write.
	ctx, cancel := pipe.WithReaderGone(ctx, o.Out)
	defer cancel()
	if q.Checkpoint != "" {
		q.Filters = o.streamFilters()
		if !o.several() {
			// A name that cannot be read is no name, as when there is none.
			q.ContextName, _ = query.ContextName(o.ConfigFlags)
		}
	}
	var ended atomic.Int32
	var single error
	err := query.Follow(ctx, o.targets, o.config(), q, query.FeedOutput{
		Ended: func(a query.Answer[struct{}]) {
			if !o.several() {
				single = a.Err
				return
			}
			ended.Add(1)
			for _, w := range errtext.ContextWarnings(a.Context, a.Err) {
				o.warnf("%s", w)
			}
		},
		Notices: o.feedNotices,
		Warn:    func(msg string) { o.warnf("%s", msg) },
	}.PrintTo(o.Out, newPrinter))
	if err != nil {
		return err
	}
	if single != nil {
		return single
	}
	return contextsOutcome(int(ended.Load()), len(o.targets))
}
