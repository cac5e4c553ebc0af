package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-idx/kubectl-idx/pkg/completion"
	// Mode, how much of each object a feed reads; no informer starts here.
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var watchLong = `Print every change to objects of the given types as it happens: a change feed
from client-go shared informers that does not stop and loses nothing.

The current state comes first, as ADDED events (unless --watch-only), then every
creation, change and deletion. When the server ends a watch, the connection drops
or the API server restarts, the informers reconnect; if they had to list again, the
feed prints exactly what changed meanwhile: objects deleted in the gap as DELETED
(marked "detectedOnRelist" in JSON), each changed object as one MODIFIED, new ones
as ADDED, and nothing it printed already. stderr says when a watch was interrupted
and when it reconnected. --request-timeout bounds each request, watches included:
a watch that reaches it is renewed, not ended.

The table shows TIME, EVENT, KIND, NAMESPACE and NAME, then the kind's usual
columns. -o json prints one JSON document per line (NDJSON):
{"type": "ADDED|MODIFIED|DELETED", "time": RFC 3339, "object": {...}}, plus
"detectedOnRelist": true, "leftScope": true (DELETED of an object that left the
--owner or --where scope and still exists) and, with --diff, "diff": [{"path", "old", "new"}].
-o yaml prints one YAML document per event; -o name one name per event; jsonpath
and go-template apply to each event document, one line per event.

Output is written as events arrive, so it works in pipes exactly as on a terminal.
Ctrl-C or SIGTERM ends the feed with exit code 0 after printing what was received;
so does a closed stdout, as after | head.

With --checkpoint FILE, the feed records after every write to stdout where each
type's history stands (a resourceVersion) and the UID and resourceVersion of every
object it holds. Started again with the same file, it prints nothing of the current
state and resumes every watch from where it was: what happened meanwhile comes
change by change. Where the server no longer has that point, the feed lists and
prints the difference, each line marked "gap": {"from", "to", "reason"} in JSON
(stderr says so). After Ctrl-C or SIGTERM nothing is printed twice; after kill -9
the events of the last batch written before it may be printed again.`

var watchExample = `  # Deployments in the current namespace: the current state, then every change
  kubectl idx watch deployments

  # Pods, ReplicaSets and Deployments of one app, with the fields each change touched
  kubectl idx watch pods,rs,deploy -n shop -l app=web --diff

  # Everything a Deployment owns, following the ReplicaSets of new rollouts
  kubectl idx watch pods,rs --owner deployment/web

  # Deletions across all namespaces, as JSON lines for jq
  kubectl idx watch pods -A -o json | jq -c 'select(.type=="DELETED")'

  # Changes only, one line each: event type and name
  kubectl idx watch configmaps --watch-only -o jsonpath='{.type} {.object.metadata.name}'

  # Deployments as they grow past 3 replicas (ADDED) and shrink back (DELETED, leftScope)
  kubectl idx watch deployments -A --where 'object.spec.replicas > 3'

  # A feed that resumes where it stopped, for an audit log
  kubectl idx watch pods,deploy -A -o json --checkpoint pods.checkpoint >> pods.log`

// addFeedPrintFlags registers the output flags of a feed on cmd, with
// kubectl's help texts: kubectl's flag groups for the formats a feed can
// print one event at a time, bound to pf as kubectl get binds them.
func addFeedPrintFlags(cmd *cobra.Command, pf *get.PrintFlags) {
	pf.JSONYamlPrintFlags.AddFlags(cmd)
	pf.NamePrintFlags.AddFlags(cmd)
	pf.TemplateFlags.AddFlags(cmd)
	cmd.Flags().StringVarP(pf.OutputFormat, "output", "o", *pf.OutputFormat, "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file, wide). JSON prints one event per line.")
	cmd.Flags().BoolVar(pf.NoHeaders, "no-headers", *pf.NoHeaders, "When using the default output format, don't print headers (default print headers).")
	hf := pf.HumanReadableFlags
	cmd.Flags().BoolVar(hf.ShowLabels, "show-labels", *hf.ShowLabels, "When printing, show all labels as the last column (default hide labels column).")
	cmd.Flags().StringSliceVarP(hf.ColumnLabels, "label-columns", "L", *hf.ColumnLabels, "Accepts a comma separated list of labels that are going to be presented as columns. Names are case-sensitive. You can also use multiple flag options like -L label1 -L label2...")
}

// WatchOptions holds the flags and resolved state of `kubectl idx watch`.
type WatchOptions struct {
	*QueryOptions
	Owner     string
	WatchOnly bool
	Diff      bool
	// ShowOwner adds the OWNER column to the table.
	ShowOwner bool
	checkpointFlag

	args []string
}

// NewWatchOptions returns WatchOptions with kubectl's printing flags.
func NewWatchOptions(f *Flags, streams genericiooptions.IOStreams) *WatchOptions {
	o := &WatchOptions{QueryOptions: newQueryOptions(f, streams)}
	o.toPrinter = printers.FeedPrinter
	return o
}

// NewCmdWatch returns the watch command.
func NewCmdWatch(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewWatchOptions(f, streams)
	cmd := &cobra.Command{
		Use:     "watch (TYPE[.VERSION][.GROUP][,TYPE...] [NAME ...] | TYPE/NAME ...) [flags]",
		Short:   "Print every change to objects of the given types, as a feed that survives reconnects",
		Long:    watchLong,
		Example: watchExample,
		Args:    cobra.ArbitraryArgs,
		RunE:    runE(o),
	}
	// Types and names complete as for `kubectl idx`.
	cmd.ValidArgsFunction = completion.New(&f.ContextFlags).TypeAndName
	addFeedPrintFlags(cmd, o.PrintFlags)
	o.addSelectorFlags(cmd)
	cmd.Flags().StringVar(&o.Owner, "owner", "", "Only objects owned by this object, given as TYPE/NAME (e.g. deployment/web), directly or through owners in between such as ReplicaSets, including the object itself when its type is watched.")
	cmd.Flags().BoolVar(&o.ShowOwner, "show-owner", false, "In the table, show each object's top-level controller (Deployment, StatefulSet, CronJob, a custom resource, ...) as an OWNER column, Kind/name, as it was when the event was printed; <none> for objects no controller owns.")
	cmd.Flags().BoolVar(&o.WatchOnly, "watch-only", false, "Print changes only, not the current state first.")
	cmd.Flags().BoolVar(&o.Diff, "diff", false, "For MODIFIED events, print the fields that changed with their old and new values (resourceVersion, managedFields and generation counters left out).")
	o.checkpointFlag.addFlag(cmd)
	o.addFlags(cmd)
	return cmd
}

// Complete resolves the contexts and the printer and keeps the arguments;
// it sends no request to the server.
func (o *WatchOptions) Complete(_ *cobra.Command, args []string) error {
	if len(args) == 0 {
		return errors.New(`you must specify the type of resource to watch; use "kubectl api-resources" for a complete list of supported resources`)
	}
	o.args = args
	o.follows = true
	return o.complete()
}

// Validate checks the flags and the shape of the arguments; it does no I/O.
func (o *WatchOptions) Validate() error {
	if o.AllNamespaces && namesObjects(o.args) {
		return errors.New("a resource cannot be retrieved by name across all namespaces")
	}
	if o.Owner != "" {
		typ, name, ok := strings.Cut(o.Owner, "/")
		if !ok || typ == "" || name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("--owner must be TYPE/NAME, e.g. deployment/web, got %q", o.Owner)
		}
	}
	if err := o.validate(); err != nil {
		return err
	}
	if o.Diff && o.format == "name" {
		return errors.New("--diff cannot be used with -o name: names carry no fields; use -o json or the default table")
	}
	return nil
}

// Run follows the feeds of every context in one stream until ctx ends or
// stdout closes: every event names its context when several are asked, and
// each context reconnects on its own.
func (o *WatchOptions) Run(ctx context.Context) error {
	q := query.FeedQuery{
		Args: o.args, Owner: o.Owner, WatchOnly: o.WatchOnly, Diff: o.Diff, AllNamespaces: o.AllNamespaces,
		Read: o.readMode, ShowOwner: o.ShowOwner && o.human(), Checkpoint: o.Checkpoint,
	}
	return o.follow(ctx, q, func(plans []query.FeedPlan, kinds []schema.GroupVersionKind) (query.EventPrinter, error) {
		popts := printers.EventPrinterOptions{
			Format:       o.format,
			NoHeaders:    *o.PrintFlags.NoHeaders,
			ShowLabels:   *o.PrintFlags.HumanReadableFlags.ShowLabels,
			ColumnLabels: *o.PrintFlags.HumanReadableFlags.ColumnLabels,
			Diff:         o.Diff,
			Contexts:     o.several(),
			Scope:        o.scopeFlags(),
		}
		for _, gvk := range kinds {
			popts.Sources = append(popts.Sources, printers.WatchSource{GVK: gvk})
		}
		if q.ShowOwner {
			owners := map[string]func(runtime.Object) string{}
			for _, p := range plans {
				owners[p.Context] = p.OwnerOf
			}
			popts.Owner = func(context string) func(runtime.Object) string { return owners[context] }
		}
		return printers.NewEventPrinter(popts, o.printer), nil
	})
}

// scopeFlags names the flags that narrow the feed, for the note under an
// object that left it.
func (o *WatchOptions) scopeFlags() string {
	switch {
	case o.Owner != "" && len(o.Where) > 0:
		return "--owner or --where"
	case len(o.Where) > 0:
		return "--where"
	}
	return "--owner"
}

// readMode is how much of each object of r the output reads.
func (o *WatchOptions) readMode(query.Request) informer.Mode {
	switch {
	case o.human() && o.Diff:
		// The server's rows, with whole objects to report changes field by field.
		return informer.FullRows
	case o.human():
		// The server's rows: every kind printed with its own columns.
		return informer.Rows
	case o.Diff:
		// Changes are reported field by field.
	case o.format == "name":
		return informer.MetadataOnly
	}
	return informer.Full
}
