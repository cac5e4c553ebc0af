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
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kubectl/pkg/cmd/get"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"

	// Mode, how much of each object a listing reads; no informer starts here.
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var getLong = `List any resource type, built-in or custom, from informer caches.

kubectl idx starts short-lived client-go informers for the requested types, waits
for their caches to sync and prints the objects with kubectl's printers and flags.
Namespace, label and field selectors are applied by the server. Objects are sorted
by namespace, then name.

With --by-owner, --by-node, --by-label, --by-namespace or --by, objects are grouped
through informer indexes: under their top-level controller, by node (with the
node's state and requests against allocatable), by a label's value, by namespace
or by any JSONPath.`

var getExample = `  # List pods in the current namespace
  kubectl idx pods

  # List deployments and services in the shop namespace, wide
  kubectl idx deploy,svc -n shop -o wide

  # Two pods by name
  kubectl idx po web-1 web-2

  # A custom resource across all namespaces, piped into jq
  kubectl idx crontabs.stable.example.com -A -o json | jq '.items[].metadata.name'

  # Pods with a label, only their names
  kubectl idx pods -l app=web -o name

  # Every pod under its top-level controller (Deployment, StatefulSet, CronJob, ...)
  kubectl idx pods -A --by-owner

  # Pods per node, with node state and CPU/memory requests against allocatable
  kubectl idx pods -A --by-node

  # Deployments, services and pods grouped by their app label
  kubectl idx deploy,svc,pods --by-label app

  # Pods grouped by service account
  kubectl idx pods -A --by '{.spec.serviceAccountName}'

  # Pods that are not ready, by a CEL expression
  kubectl idx pods -A --where '!has(object.status.conditions) || !object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")'

  # Pods whose top-level owner is a StatefulSet, on nodes that are not Ready
  kubectl idx pods -A --where 'owner != null && owner.kind == "StatefulSet"' --where 'node != null && !node.status.conditions.exists(c, c.type == "Ready" && c.status == "True")'`

// GetOptions holds the flags and resolved state of the root listing command.
type GetOptions struct {
	*QueryOptions
	Group GroupFlags
	// ShowOwner adds the OWNER column to tables.
	ShowOwner bool
	// IgnoreNotFound is kubectl get's --ignore-not-found.
	IgnoreNotFound bool
	// Watch and WatchOnly are kubectl get's -w and --watch-only, taken to
	// say that a listing prints once and which command follows changes.
	Watch, WatchOnly bool

	args []string
}

// NewGetOptions returns GetOptions with kubectl's printing flags.
func NewGetOptions(f *Flags, streams genericiooptions.IOStreams) *GetOptions {
	return &GetOptions{QueryOptions: newQueryOptions(f, streams)}
}

func newCmdGet(o *GetOptions) *cobra.Command {
	cmd := &cobra.Command{
		Short:   "Answer the questions kubectl get cannot, from client-go informer caches",
		Long:    getLong,
		Example: getExample,
		Args:    cobra.ArbitraryArgs,
		RunE:    runE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	o.addSelectorFlags(cmd)
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&o.ShowOwner, "show-owner", false, "When printing a table, show each object's top-level controller (Deployment, StatefulSet, CronJob, a custom resource, ...) as an OWNER column, Kind/name, following controller references upward; <none> for objects no controller owns.")
	o.Group.addFlags(cmd)
	// kubectl get's help text.
	cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "If set to true, suppresses NotFound error for specific objects that do not exist. Using this flag with commands that query for collections of resources has no effect when no resources are found.")
	// Hidden: they only say where kubectl get's habit is served.
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "Refused: a listing prints once; kubectl idx watch follows changes.")
	cmd.Flags().BoolVar(&o.WatchOnly, "watch-only", false, "Refused: a listing prints once; kubectl idx watch --watch-only follows changes.")
	for _, name := range []string{"watch", "watch-only"} {
		cmdutil.CheckErr(cmd.Flags().MarkHidden(name))
	}
	return cmd
}

// Complete resolves the contexts and the printer and keeps the arguments;
// it sends no request to the server.
func (o *GetOptions) Complete(cmd *cobra.Command, args []string) error {
	if cmd != nil {
		o.Group.byLabelSet = cmd.Flags().Changed("by-label")
		o.Group.byJSONPathSet = cmd.Flags().Changed("by")
	}
	if len(args) == 0 {
		return errors.New(`you must specify the type of resource to get; use "kubectl api-resources" for a complete list of supported resources`)
	}
	o.args = args
	if o.Watch || o.WatchOnly {
		return o.watchError(cmd, args)
	}
	return o.complete()
}

// watchError is the answer to kubectl get's -w and --watch-only
// (errtext.WatchInstead): the listing prints once. It is not run in their
// place: its output (TIME and EVENT columns, a JSON document per line) is
// not what kubectl get -w prints, and the listing's groupings and --sort-by
// have no feed.
func (o *GetOptions) watchError(cmd *cobra.Command, args []string) error {
	if o.run != nil && cmd != nil {
		return errtext.WatchInstead(o.run.args, cmd.Flags())
	}
	return errtext.WatchInstead(args, nil)
}

// Validate checks the flags and the shape of the arguments; it does no I/O.
func (o *GetOptions) Validate() error {
	if o.AllNamespaces && namesObjects(o.args) {
		return errors.New("a resource cannot be retrieved by name across all namespaces")
	}
	if err := o.validate(); err != nil {
		return err
	}
	if o.ShowOwner {
		if mode, err := o.Group.mode(); err == nil && mode != "" {
			return errors.New("--show-owner adds a column to flat tables; grouped tables already say where objects belong (--by-owner groups by the same owner)")
		}
	}
	if sortBy := o.sortBy(); sortBy != "" {
		// kubectl's sorter parses it only once the objects are listed.
		field, err := get.RelaxedJSONPathExpression(sortBy)
		if err == nil {
			err = jsonpath.New("sort-by").Parse(field)
		}
		if err != nil {
			return fmt.Errorf("invalid JSONPath in --sort-by: invalid JSONPath expression %q: %w", sortBy, err)
		}
	}
	return o.Group.validateFlags(o.sortBy())
}

// namesObjects reports whether args name objects, as ParseResourceArgs reads
// them: TYPE NAME... or TYPE/NAME....
func namesObjects(args []string) bool {
	return len(args) > 1 || len(args) == 1 && strings.Contains(args[0], "/")
}

// Run asks every context the listing the flags ask for (query.Session.Get)
// and reports the answers.
func (o *GetOptions) Run(ctx context.Context) error {
	mode, err := o.Group.mode()
	if err != nil {
		return err
	}
	q := query.GetQuery{
		Args:   o.args,
		Tables: o.human(),
		Owners: o.ShowOwner && o.human(),
		Mode:   func(r query.Request) informer.Mode { return o.informerMode(mode, r.Resource.GVK.GroupKind()) },
	}
	var header func(*v1alpha1.Group) string
	if mode != "" {
		by := o.Group.groupBy(mode)
		q.GroupBy, header = &by, printers.GroupHeader(mode)
	}
	// One whole type in an output that prints each object on its own is
	// printed as the server sends it, byte for byte as it would print whole.
	var stream *printers.ListStream
	if !o.several() && mode == "" && printers.Streams(o.format) && o.sortBy() == "" && !o.ShowOwner {
		q.Stream = func(r query.Request) func([]runtime.Object) error {
			stream = printers.NewListStream(o.Out, o.format, o.printer, r.Resource.GVK)
			stream.Encodings = o.encodings()
			return stream.Write
		}
		// The objects printed as they arrive say how far the list has got; a
		// progress line would be rewritten in their midst.
		q.Quiet = isTerminal(o.Out)
	}
	answers := query.Ask(ctx, o.targets, o.config(), func(ctx context.Context, s *query.Session) (*query.Listing, error) {
		return s.Get(ctx, q)
	})
	defer query.CloseListings(answers)
	nothing := printers.NoResources(answers)
	if o.IgnoreNotFound {
		query.IgnoreNotFound(answers)
		nothing = ""
	}
	return report(o.QueryOptions, answers, nothing, func(answers []query.Answer[*query.Listing], warnings []string) (int, error) {
		if stream != nil {
			// Warnings are known once the list is; they end it.
			var asOf []v1alpha1.AsOf
			if l := answers[0].Value; l != nil {
				asOf = l.AsOf
			}
			if o.IgnoreNotFound {
				stream.OmitEmpty()
			}
			return stream.Close(warnings, asOf)
		}
		if o.IgnoreNotFound && !o.human() && !query.Found(answers) {
			// kubectl get --ignore-not-found prints no empty List either.
			return 0, nil
		}
		opts := o.printOptions(warnings)
		if header != nil && o.several() {
			// The engine merges the contexts' groupings; the printer prints.
			opts.Groups = query.MergeGroupLists(answers)
		}
		return printers.PrintListing(o.Out, answers, o.printer, opts, header)
	})
}

// informerMode is how much of each object of gk the answer reads: metadata
// alone where the output and grouping read nothing else.
func (o *GetOptions) informerMode(groupMode v1alpha1.GroupMode, gk schema.GroupKind) informer.Mode {
	switch {
	case o.sortBy() != "":
		// --sort-by may name any field.
	case groupMode == query.GroupByNode || groupMode == query.GroupByJSONPath:
		// Node names, requests and arbitrary paths live beyond metadata.
	case groupMode != "" && o.human() && gk == (schema.GroupKind{Kind: "Pod"}):
		// Group summaries count ready pods and add up their requests; the
		// server's table has every cell.
		return informer.Summary
	case o.format == "name", o.human():
		// The server's table has every cell.
		return informer.MetadataOnly
	}
	return informer.Full
}
