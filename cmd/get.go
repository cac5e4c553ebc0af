package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	// Value types (Resource, Mode) and the factory hook tests set; no informer starts here.
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
  kubectl idx pods -A --by '{.spec.serviceAccountName}'`

// GetOptions holds the flags and resolved state of the root listing command.
type GetOptions struct {
	*Flags
	PrintFlags *get.PrintFlags

	LabelSelector string
	FieldSelector string
	SyncTimeout   time.Duration
	Group         GroupFlags
	// ShowOwner adds the OWNER column to tables.
	ShowOwner bool

	// Resolved by Complete.
	namespace         string
	requests          []query.Request
	singleItemImplied bool
	printer           cliprinters.ResourcePrinter
	args              []string
	restConfig        *rest.Config
	mapper            meta.RESTMapper
	expander          restmapper.CategoryExpander
	progress          bool
	// newFactory builds the informer factory; tests swap in fake clients.
	newFactory func(cfg informer.Config) (*informer.Factory, error)
	// contexts are the contexts asked, when more than one: each resolves
	// its own clients when asked (see runContexts).
	contexts []string

	genericiooptions.IOStreams
}

// NewGetOptions returns GetOptions with kubectl's printing flags.
func NewGetOptions(f *Flags, streams genericiooptions.IOStreams) *GetOptions {
	return &GetOptions{
		Flags:       newFlags(f),
		PrintFlags:  get.NewGetPrintFlags(),
		SyncTimeout: 60 * time.Second,
		IOStreams:   streams,
	}
}

func newCmdGet(o *GetOptions) *cobra.Command {
	cmd := &cobra.Command{
		Short:   "Answer the questions kubectl get cannot, from client-go informer caches",
		Long:    getLong,
		Example: getExample,
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.PrintFlags.AddFlags(cmd)
	cmd.Flags().StringVarP(&o.LabelSelector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.(e.g. -l key1=value1,key2=value2,key3 in (value3)). Matching objects must satisfy all of the specified label constraints.")
	cmd.Flags().StringVar(&o.FieldSelector, "field-selector", "", "Selector (field query) to filter on, supports '=', '==', and '!='.(e.g. --field-selector key1=value1,key2=value2). The server only supports a limited number of field queries per type.")
	cmd.Flags().DurationVar(&o.SyncTimeout, "sync-timeout", o.SyncTimeout, "How long to wait for the informer caches to sync before giving up; 0 waits forever.")
	cmd.Flags().BoolVar(&o.ShowOwner, "show-owner", false, "When printing a table, show each object's top-level controller (Deployment, StatefulSet, CronJob, a custom resource, ...) as an OWNER column, Kind/name, following controller references upward; <none> for objects no controller owns.")
	cmd.Flags().BoolVar(&o.Group.ByOwner, "by-owner", false, "Group objects under their top-level controller (Deployment, StatefulSet, CronJob, a custom resource, ...), following controller references upward.")
	cmd.Flags().BoolVar(&o.Group.ByNode, "by-node", false, "Group pods by node, with each node's status, roles and CPU and memory requests against allocatable. Every node is listed.")
	cmd.Flags().StringVar(&o.Group.ByLabel, "by-label", "", "Group objects by the value of this label key; objects without it form the <none> group.")
	cmd.Flags().BoolVar(&o.Group.ByNamespace, "by-namespace", false, "Group objects by namespace.")
	cmd.Flags().StringVar(&o.Group.ByJSONPath, "by", "", "Group objects by the value of a JSONPath expression, e.g. '{.spec.serviceAccountName}'. An object with several values is in several groups.")
	cmd.Flags().BoolVar(&o.Group.IncludeCompleted, "include-completed", false, "With --by-node, count Succeeded and Failed pods toward the node's requests.")
	return cmd
}

// Complete resolves the namespace, the clients and the printer and keeps the
// arguments; it sends no request to the server.
func (o *GetOptions) Complete(cmd *cobra.Command, args []string) error {
	if cmd != nil {
		o.Group.byLabelSet = cmd.Flags().Changed("by-label")
		o.Group.byJSONPathSet = cmd.Flags().Changed("by")
	}
	if len(args) == 0 {
		return errors.New(`you must specify the type of resource to get; use "kubectl api-resources" for a complete list of supported resources`)
	}
	p, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	o.printer = p
	o.args = args
	if o.newFactory != nil {
		// Tests resolved the clients already.
		return nil
	}
	if o.contexts, err = o.Flags.contextNames(); err != nil || o.contexts != nil {
		return err
	}
	if o.namespace, o.restConfig, o.mapper, o.expander, err = resolveClients(o.ConfigFlags, o.AllNamespaces); err != nil {
		return err
	}
	if f, ok := o.ErrOut.(interface{ Fd() uintptr }); ok {
		o.progress = term.IsTerminal(int(f.Fd()))
	}
	return nil
}

// resolve maps the arguments to requests through discovery, the first step
// of Run (unless done already), and checks the grouping against their kinds.
func (o *GetOptions) resolve() error {
	if o.requests != nil {
		return nil
	}
	var err error
	if o.requests, o.singleItemImplied, err = query.ParseResourceArgs(o.mapper, o.expander, o.args); err != nil {
		return err
	}
	return o.Group.validate(o.requests)
}

// resolveClients reads what every command needs from the connection flags: the
// namespace (all of them with -A), the REST config, the REST mapper kubectl's
// discovery cache feeds, and the category expander ("all").
func resolveClients(flags *genericclioptions.ConfigFlags, allNamespaces bool) (string, *rest.Config, meta.RESTMapper, restmapper.CategoryExpander, error) {
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", nil, nil, nil, err
	}
	if allNamespaces {
		ns = metav1.NamespaceAll
	}
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return "", nil, nil, nil, err
	}
	mapper, err := flags.ToRESTMapper()
	if err != nil {
		return "", nil, nil, nil, err
	}
	var expander restmapper.CategoryExpander
	if dc, err := flags.ToDiscoveryClient(); err == nil {
		expander = restmapper.NewDiscoveryCategoryExpander(dc)
	}
	return ns, cfg, mapper, expander, nil
}

// Validate checks the flags and the shape of the arguments; it does no I/O.
func (o *GetOptions) Validate() error {
	if o.Flags != nil && o.AllNamespaces && namesObjects(o.args) {
		return errors.New("a resource cannot be retrieved by name across all namespaces")
	}
	return o.validateFlags()
}

// namesObjects reports whether args name objects, as ParseResourceArgs reads
// them: TYPE NAME... or TYPE/NAME....
func namesObjects(args []string) bool {
	return len(args) > 1 || len(args) == 1 && strings.Contains(args[0], "/")
}

// validateFlags checks the flag values.
func (o *GetOptions) validateFlags() error {
	if _, err := labels.Parse(o.LabelSelector); err != nil {
		return fmt.Errorf("invalid label selector %q: %w", o.LabelSelector, err)
	}
	if _, err := fields.ParseSelector(o.FieldSelector); err != nil {
		return fmt.Errorf("invalid field selector %q: %w", o.FieldSelector, err)
	}
	if o.SyncTimeout < 0 {
		return fmt.Errorf("--sync-timeout must not be negative, got %s", o.SyncTimeout)
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

// getAnswer is one context's answer to a listing, grouped or not.
type getAnswer struct {
	// members are a plain listing's objects; doc a grouping's.
	members []v1alpha1.Members
	doc     *v1alpha1.GroupList
	// tables are the server's tables of the members' kinds (human output).
	tables map[schema.GroupKind]*metav1.Table
	// warnings say what the answer may be missing; missing are the objects
	// named on the command line that do not exist.
	warnings []string
	missing  []error
	// owner names each object's top-level controller (--show-owner); stop
	// releases its informers.
	owner func(runtime.Object) string
	stop  func()
	// requests are the types asked for, as this context's server maps them.
	requests []query.Request
	// namespace is where the context looked: "" for all namespaces.
	namespace string
}

// outputFormat is -o, or go-template when only --template is given.
func (o *GetOptions) outputFormat() string {
	format := *o.PrintFlags.OutputFormat
	if tmpl := o.PrintFlags.TemplateFlags.TemplateArgument; format == "" && tmpl != nil && *tmpl != "" {
		format = "go-template"
	}
	return format
}

// Run asks the query engine and prints the answer.
func (o *GetOptions) Run(ctx context.Context) error {
	if o.contexts != nil {
		return o.runContexts(ctx)
	}
	format := o.outputFormat()
	if err := o.resolve(); err != nil {
		return err
	}
	if o.streams(format) {
		return o.runStream(ctx, format)
	}
	a, err := o.answer(ctx, format)
	if err != nil {
		return err
	}
	if a.stop != nil {
		defer a.stop()
	}
	for _, w := range a.warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	human := printers.IsHuman(format)
	if a.doc != nil {
		mode, _ := o.Group.mode()
		if err := o.printGrouped(a.doc, mode, format, a.tables, nil); err != nil {
			return err
		}
		if len(a.doc.Groups) == 0 && human && len(a.missing) == 0 {
			o.printNoResources()
		}
		return utilerrors.NewAggregate(a.missing)
	}
	groups := make([]printers.Group, len(a.members))
	for i, m := range a.members {
		groups[i] = printers.Group{GVK: m.GVK, Namespaced: m.Namespaced, Objects: m.Objects, ServerTable: a.tables[m.GVK.GroupKind()]}
	}
	opts := o.printOptions(format)
	opts.Warnings = a.warnings
	opts.Owner = a.owner
	n, err := printers.Print(o.Out, groups, o.printer, opts)
	if err != nil {
		return err
	}
	if n == 0 && human && len(a.missing) == 0 {
		o.printNoResources()
	}
	return utilerrors.NewAggregate(a.missing)
}

// answer asks the query engine for the listing, or the grouping, the flags
// ask of one context.
func (o *GetOptions) answer(ctx context.Context, format string) (*getAnswer, error) {
	if err := o.resolve(); err != nil {
		return nil, err
	}
	human := printers.IsHuman(format)
	mode, err := o.Group.mode()
	if err != nil {
		return nil, err
	}
	reqs := make([]query.Request, len(o.requests))
	for i, r := range o.requests {
		reqs[i] = r
		reqs[i].Mode = o.informerMode(mode, format, r.Resource.GVK.GroupKind())
	}
	a := &getAnswer{requests: o.requests, namespace: o.namespace}
	s := query.NewSession(o.sessionConfig())
	// The server's tables are read while the answer is listed.
	var fetch *query.TableFetch
	if human {
		fetch = s.FetchTables(ctx, reqs)
	}
	if mode != "" {
		doc, missing, err := s.Group(ctx, reqs, o.Group.groupBy(mode))
		if err != nil {
			return nil, err
		}
		a.doc, a.missing = doc, missing
		if human {
			var members []v1alpha1.Members
			for _, g := range doc.Groups {
				members = append(members, g.Members...)
			}
			a.tables = fetch.Wait(ctx, members)
			for _, w := range s.Warnings() {
				if !slices.Contains(doc.Warnings, w) {
					doc.Warnings = append(doc.Warnings, w)
				}
			}
		}
		a.warnings = doc.Warnings
		return a, nil
	}
	if a.members, a.missing, err = s.List(ctx, reqs); err != nil {
		return nil, err
	}
	if human {
		a.tables = fetch.Wait(ctx, a.members)
	}
	a.warnings = s.Warnings()
	if o.ShowOwner && human {
		owners, stop := s.TopOwners(ctx)
		a.owner, a.stop = owners.Of, stop
	}
	return a, nil
}

// streams reports whether the answer can be printed as it is listed
// (query.Session.Stream): a whole type, neither grouped nor sorted by a
// field, in an output that prints each object on its own. Names are fetched
// by key, not listed.
func (o *GetOptions) streams(format string) bool {
	mode, err := o.Group.mode()
	return err == nil && mode == "" && printers.Streams(format) && o.sortBy() == "" && !o.ShowOwner &&
		len(o.requests) == 1 && query.Streamable(o.requests[0])
}

// runStream prints a listing page by page as the server sends it, byte for
// byte as Run prints it whole.
func (o *GetOptions) runStream(ctx context.Context, format string) error {
	r := o.requests[0]
	r.Mode = o.informerMode("", format, r.Resource.GVK.GroupKind())
	cfg := o.sessionConfig()
	if f, ok := o.Out.(interface{ Fd() uintptr }); ok && term.IsTerminal(int(f.Fd())) {
		// The objects printed as they arrive say how far the list has got;
		// a progress line would be rewritten in their midst.
		cfg.Progress = nil
	}
	s := query.NewSession(cfg)
	out := printers.NewListStream(o.Out, format, o.printer, r.Resource.GVK)
	if err := s.Stream(ctx, r, out.Write); err != nil {
		return err
	}
	// Warnings are known once the list is; they follow the objects.
	warnings := s.Warnings()
	for _, w := range warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	_, err := out.Close(warnings)
	return err
}

// informerMode is how much of each object of gk the answer reads: metadata
// alone where the output and grouping read nothing else.
func (o *GetOptions) informerMode(groupMode, format string, gk schema.GroupKind) informer.Mode {
	human := printers.IsHuman(format)
	switch {
	case o.sortBy() != "":
		// --sort-by may name any field.
	case groupMode == query.GroupByNode || groupMode == query.GroupByJSONPath:
		// Node names, requests and arbitrary paths live beyond metadata.
	case groupMode != "" && human && gk == (schema.GroupKind{Kind: "Pod"}):
		// Group summaries count ready pods and add up their requests; the
		// server's table has every cell.
		return informer.Summary
	case format == "name":
		return informer.MetadataOnly
	case human:
		// The server's table has every cell.
		return informer.MetadataOnly
	}
	return informer.Full
}

// sessionConfig is the query engine's configuration from the flags.
func (o *GetOptions) sessionConfig() query.Config {
	return query.Config{
		RESTConfig:        o.restConfig,
		Mapper:            o.mapper,
		Namespace:         o.namespace,
		LabelSelector:     o.LabelSelector,
		FieldSelector:     o.FieldSelector,
		KeepManagedFields: o.PrintFlags.JSONYamlPrintFlags.ShowManagedFields,
		SyncTimeout:       o.SyncTimeout,
		Progress:          o.progressWriter(),
		WarningText:       warningText,
		NewFactory:        o.newFactory,
	}
}

// sortBy is the --sort-by value, "" when unset.
func (o *GetOptions) sortBy() string {
	if o.PrintFlags == nil || o.PrintFlags.HumanReadableFlags == nil || o.PrintFlags.HumanReadableFlags.SortBy == nil {
		return ""
	}
	return *o.PrintFlags.HumanReadableFlags.SortBy
}

// printOptions carries the printing flags kubectl's printers do not hold.
func (o *GetOptions) printOptions(format string) printers.Options {
	hf := o.PrintFlags.HumanReadableFlags
	return printers.Options{
		Format:        format,
		NoHeaders:     *o.PrintFlags.NoHeaders,
		ShowLabels:    *hf.ShowLabels,
		ShowKind:      *hf.ShowKind,
		ColumnLabels:  *hf.ColumnLabels,
		WithNamespace: o.AllNamespaces,
		SortBy:        o.sortBy(),
		SingleItem:    o.singleItemImplied,
		Now:           time.Now(),
	}
}

// printNoResources says on stderr that nothing matched, in kubectl's words.
func (o *GetOptions) printNoResources() {
	o.printNoResourcesIn([]contextResult[*getAnswer]{{Answer: &getAnswer{requests: o.requests, namespace: o.namespace}}})
}

// progressWriter is stderr when it is a terminal, nil otherwise: progress lines
// would only be noise in a log file or a pipe.
func (o *GetOptions) progressWriter() io.Writer {
	if !o.progress {
		return nil
	}
	return o.ErrOut
}

func anyNamespaced(reqs []query.Request) bool {
	for _, r := range reqs {
		if r.Resource.Namespaced {
			return true
		}
	}
	return false
}

// forContext returns a copy of o that asks the one context name, with its
// own clients, as Complete resolves them for one.
func (o *GetOptions) forContext(name string) (*GetOptions, error) {
	c := *o
	c.Flags = o.Flags.forContext(name)
	c.contexts, c.requests = nil, nil
	var err error
	if c.namespace, c.restConfig, c.mapper, c.expander, err = resolveClients(c.ConfigFlags, c.AllNamespaces); err != nil {
		return nil, err
	}
	return &c, nil
}

// runContexts asks every context concurrently and prints one answer, each
// object with its context: a failed context is a warning line naming it,
// and the exit code says whether the answer is partial (see contextsOutcome).
func (o *GetOptions) runContexts(ctx context.Context) error {
	format := o.outputFormat()
	results := fanOut(ctx, o.contexts, func(ctx context.Context, name string) (*getAnswer, error) {
		c, err := o.forContext(name)
		if err != nil {
			return nil, err
		}
		a, err := c.answer(ctx, format)
		if err != nil {
			return nil, err
		}
		return a, utilerrors.NewAggregate(a.missing)
	})
	var infos []printers.ContextInfo
	var warnings []string
	failed := 0
	var groups []printers.Group
	var lists []query.ContextGroupList
	tables := map[string]map[schema.GroupKind]*metav1.Table{}
	owners := map[runtime.Object]func(runtime.Object) string{}
	for _, r := range results {
		info := printers.ContextInfo{Name: r.Context}
		if r.Err != nil {
			failed++
			info.Error = warningText(r.Err)
			warnings = append(warnings, contextWarnings(r.Context, r.Err)...)
		}
		if a := r.Answer; a != nil {
			if a.stop != nil {
				defer a.stop()
			}
			info.Warnings = a.warnings
			for _, w := range a.warnings {
				warnings = append(warnings, prefixContext(r.Context, w))
			}
			tables[r.Context] = a.tables
			if a.doc != nil {
				lists = append(lists, query.ContextGroupList{Context: r.Context, Doc: a.doc})
			}
			for _, m := range a.members {
				groups = append(groups, printers.Group{GVK: m.GVK, Namespaced: m.Namespaced, Objects: m.Objects, ServerTable: a.tables[m.GVK.GroupKind()], Context: r.Context})
				if a.owner != nil {
					for _, obj := range m.Objects {
						owners[obj] = a.owner
					}
				}
			}
		}
		infos = append(infos, info)
	}
	for _, w := range warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
	human := printers.IsHuman(format)
	outcome := contextsOutcome(failed, len(results))
	if failed == len(results) {
		return outcome
	}
	if mode, _ := o.Group.mode(); mode != "" {
		doc := query.MergeGroupLists(lists)
		for _, r := range results {
			if r.Err != nil {
				doc.Warnings = append(doc.Warnings, contextWarnings(r.Context, r.Err)...)
			}
		}
		if err := o.printGrouped(doc, mode, format, nil, tables); err != nil {
			return err
		}
		if len(doc.Groups) == 0 && human && failed == 0 {
			o.printNoResourcesIn(results)
		}
		return outcome
	}
	opts := o.printOptions(format)
	opts.SingleItem = false
	opts.Contexts = infos
	opts.Warnings = warnings
	if len(owners) > 0 {
		opts.Owner = func(obj runtime.Object) string { return owners[obj](obj) }
	}
	n, err := printers.Print(o.Out, groups, o.printer, opts)
	if err != nil {
		return err
	}
	if n == 0 && human && failed == 0 {
		o.printNoResourcesIn(results)
	}
	return outcome
}

// printNoResourcesIn says that no context had anything, in kubectl's words:
// with the namespace when every context looked in the same one.
func (o *GetOptions) printNoResourcesIn(results []contextResult[*getAnswer]) {
	namespaces := map[string]bool{}
	namespaced := false
	for _, r := range results {
		if r.Answer != nil {
			namespaces[r.Answer.namespace] = true
			namespaced = namespaced || anyNamespaced(r.Answer.requests)
		}
	}
	if len(namespaces) == 1 && namespaced && !namespaces[metav1.NamespaceAll] {
		for ns := range namespaces {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", ns)
		}
		return
	}
	fmt.Fprintln(o.ErrOut, "No resources found")
}
