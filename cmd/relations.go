package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	// Value types (Resource, Mode) and the factory hook tests set; no informer starts here.
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// RelationOptions are the flags and resolved state shared by the commands that
// follow relations between objects: tree, owners, orphans, events, selects,
// selected-by and uses.
type RelationOptions struct {
	*Flags
	PrintFlags *get.PrintFlags

	SyncTimeout time.Duration

	// Resolved by complete.
	namespace  string
	restConfig *rest.Config
	mapper     meta.RESTMapper
	printer    cliprinters.ResourcePrinter
	format     string
	progress   bool
	// newFactory builds informer factories; tests swap in fake clients.
	newFactory func(cfg informer.Config) (*informer.Factory, error)
	// listable lists the types the server serves; tests swap in a fixed list.
	listable func(namespacedOnly bool) ([]informer.Resource, []error)
	// defaultNamespace is the context's namespace, where an object named
	// under -A is looked for; discovery lists the server's types.
	defaultNamespace string
	discovery        discovery.CachedDiscoveryInterface
	// verb words what the command does to its object ("show the tree of");
	// args are the arguments naming it; object is what they resolved to.
	verb   string
	args   []string
	object query.ObjectRef
	// name is the command's name, for messages.
	name string
	// sortable is true for commands that print a List --sort-by can order.
	sortable bool
	// graphs is true for the commands that draw their answer as a relation
	// graph with -o dot and -o mermaid.
	graphs bool
	// contexts are the contexts asked, when more than one: each resolves
	// its own clients when asked (forContext).
	contexts []string

	genericiooptions.IOStreams
}

// graphCommands names the commands that draw relation graphs, for messages.
const graphCommands = "kubectl idx tree, owners, selects, selected-by or uses"

func newRelationOptions(f *Flags, streams genericiooptions.IOStreams) *RelationOptions {
	return &RelationOptions{
		Flags:       newFlags(f),
		PrintFlags:  get.NewGetPrintFlags(),
		SyncTimeout: 60 * time.Second,
		IOStreams:   streams,
	}
}

// relationCommand is the Options of one relation command, in kubectl's shape.
type relationCommand interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// newRelationCmd finishes cmd for o: RunE completes, validates and runs, and
// the shared flags are added.
func (o *RelationOptions) newRelationCmd(cmd *cobra.Command, c relationCommand) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := c.Complete(cmd, args); err != nil {
			return err
		}
		if err := c.Validate(); err != nil {
			return err
		}
		return c.Run(cmd.Context())
	}
	o.addFlags(cmd)
	return cmd
}

// completeObject resolves the shared state and keeps the arguments naming the
// one object the command is about, as verb needs it ("show the tree of").
func (o *RelationOptions) completeObject(cmd *cobra.Command, verb string, args []string) error {
	o.verb, o.args = verb, args
	return o.complete(cmd)
}

// Validate checks the shared flags and the shape of the object argument; it
// does no I/O. Commands with flags of their own extend it.
func (o *RelationOptions) Validate() error {
	if o.SyncTimeout < 0 {
		return fmt.Errorf("--sync-timeout must not be negative, got %s", o.SyncTimeout)
	}
	if sortBy := o.sortBy(); sortBy != "" && !o.sortable {
		// Trees, chains and newest-last event lists have an order of their own.
		name := "this command"
		if o.name != "" {
			name = "kubectl idx " + o.name
		}
		return fmt.Errorf("--sort-by is not supported by %s", name)
	}
	if o.verb != "" {
		if _, _, err := splitObjectArg(o.verb, o.args); err != nil {
			return err
		}
	}
	return nil
}

// resolveObject maps the object argument's type through discovery: the first
// step of Run, the first request to the server.
func (o *RelationOptions) resolveObject() error {
	var err error
	o.object, err = o.parseObjectArg(o.verb, o.args)
	return err
}

// addFlags adds kubectl's printing flags and --sync-timeout. Commands that
// draw graphs offer dot and mermaid beside kubectl's formats in -o's help and
// completion.
func (o *RelationOptions) addFlags(cmd *cobra.Command) {
	if o.graphs {
		o.addGraphPrintFlags(cmd)
	} else {
		o.PrintFlags.AddFlags(cmd)
	}
	cmd.Flags().DurationVar(&o.SyncTimeout, "sync-timeout", o.SyncTimeout, "How long to wait for the informer caches to sync before giving up; 0 waits forever.")
}

// addGraphPrintFlags adds kubectl's printing flags with an -o of its own:
// PrintFlags registers its completion for -o, which cobra lets no one
// replace, so PrintFlags adds everything but -o.
func (o *RelationOptions) addGraphPrintFlags(cmd *cobra.Command) {
	output := o.PrintFlags.OutputFormat
	o.PrintFlags.OutputFormat = nil
	o.PrintFlags.AddFlags(cmd)
	o.PrintFlags.OutputFormat = output
	formats := append(o.PrintFlags.AllowedFormats(), printers.GraphFormats...)
	// kubectl's help text, with the graph formats added.
	cmd.Flags().StringVarP(output, "output", "o", *output, fmt.Sprintf(`Output format. One of: (%s). See custom columns [https://kubernetes.io/docs/reference/kubectl/#custom-columns], golang template [http://golang.org/pkg/text/template/#pkg-overview] and jsonpath template [https://kubernetes.io/docs/reference/kubectl/jsonpath/]. dot is a Graphviz digraph (kubectl idx tree deployment/web -o dot | dot -Tsvg > web.svg), mermaid a Mermaid flowchart.`, strings.Join(formats, ", ")))
	// Registration fails only for a flag registered twice: a programming
	// error the completion tests catch.
	_ = cmd.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var comps []string
		for _, f := range formats {
			if strings.HasPrefix(f, toComplete) {
				comps = append(comps, f)
			}
		}
		return comps, cobra.ShellCompDirectiveNoFileComp
	})
}

// errNoGraph is the error of -o dot or -o mermaid on a command without
// graphs.
func errNoGraph(format string) error {
	return fmt.Errorf("-o %s draws relation graphs: use it with %s", format, graphCommands)
}

// graphFormatError words the printer error of a command without graphs (get,
// watch) asked for -o dot or -o mermaid as errNoGraph does; other errors
// pass as they are.
func graphFormatError(err error) error {
	var e genericclioptions.NoCompatiblePrinterError
	if errors.As(err, &e) && e.OutputFormat != nil && printers.IsGraph(*e.OutputFormat) {
		return errNoGraph(*e.OutputFormat)
	}
	return err
}

// complete resolves the printer, namespace and clients; it sends no request
// to the server (the REST mapper and discovery client are lazy). -o dot and
// -o mermaid, which kubectl's PrintFlags do not know, are taken before them.
func (o *RelationOptions) complete(cmd *cobra.Command) error {
	if err := o.completePrinter(); err != nil {
		return err
	}
	if cmd != nil {
		o.name = cmd.Name()
	}
	var err error
	if o.newFactory != nil {
		// Tests resolved everything else already.
		return nil
	}
	if o.contexts, err = o.Flags.contextNames(); err != nil {
		return err
	}
	if o.contexts != nil {
		if printers.IsGraph(o.format) {
			return fmt.Errorf("-o %s draws the graph of one cluster: name one context with --context", o.format)
		}
		return nil
	}
	return o.resolveClients()
}

// resolveClients resolves the namespace, the clients and discovery of the
// one context the flags name.
func (o *RelationOptions) resolveClients() error {
	var err error
	if o.namespace, o.restConfig, o.mapper, _, err = resolveClients(o.ConfigFlags, o.AllNamespaces); err != nil {
		return err
	}
	if o.defaultNamespace, _, err = o.ConfigFlags.ToRawKubeConfigLoader().Namespace(); err != nil {
		return err
	}
	if o.discovery, err = o.ConfigFlags.ToDiscoveryClient(); err != nil {
		return err
	}
	if f, ok := o.ErrOut.(interface{ Fd() uintptr }); ok {
		o.progress = term.IsTerminal(int(f.Fd()))
	}
	return nil
}

// completePrinter resolves -o: a graph format for the commands that draw
// graphs (no delegate printer), kubectl's printer otherwise. An unknown
// format is kubectl's error, whose allowed formats include dot and mermaid
// where they are allowed.
func (o *RelationOptions) completePrinter() error {
	if format := *o.PrintFlags.OutputFormat; printers.IsGraph(format) {
		if !o.graphs {
			return errNoGraph(format)
		}
		o.format, o.printer = format, nil
		return nil
	}
	p, err := o.PrintFlags.ToPrinter()
	if o.graphs && genericclioptions.IsNoCompatiblePrinterError(err) {
		format := *o.PrintFlags.OutputFormat
		return genericclioptions.NoCompatiblePrinterError{OutputFormat: &format, AllowedFormats: append(o.PrintFlags.AllowedFormats(), printers.GraphFormats...)}
	}
	if err != nil {
		return err
	}
	o.printer = p
	o.format = *o.PrintFlags.OutputFormat
	if tmpl := o.PrintFlags.TemplateFlags.TemplateArgument; o.format == "" && tmpl != nil && *tmpl != "" {
		o.format = "go-template"
	}
	return nil
}

// subjectItem names the object the command is about, in the namespace it is
// looked for in, for a graph.
func (o *RelationOptions) subjectItem() v1alpha1.RelationItem {
	it := v1alpha1.RelationItem{
		APIVersion: o.object.Resource.GVK.GroupVersion().String(),
		Kind:       o.object.Resource.GVK.Kind,
		Name:       o.object.Name,
	}
	if o.object.Resource.Namespaced {
		it.Namespace = o.objectNamespace()
	}
	return it
}

// session returns the query engine for the resolved flags.
func (o *RelationOptions) session() *query.Session {
	cfg := query.Config{
		RESTConfig:       o.restConfig,
		Mapper:           o.mapper,
		Namespace:        o.namespace,
		DefaultNamespace: o.defaultNamespace,
		SyncTimeout:      o.SyncTimeout,
		WarningText:      warningText,
		ObjectStatus:     printers.ObjectStatus,
		NewFactory:       o.newFactory,
		Listable:         o.listable,
	}
	if o.discovery != nil {
		cfg.Discovery = o.discovery
	}
	if o.progress {
		cfg.Progress = o.ErrOut
	}
	return query.NewSession(cfg)
}

// sortBy is the --sort-by value, "" when unset.
func (o *RelationOptions) sortBy() string {
	if o.PrintFlags == nil || o.PrintFlags.HumanReadableFlags == nil || o.PrintFlags.HumanReadableFlags.SortBy == nil {
		return ""
	}
	return *o.PrintFlags.HumanReadableFlags.SortBy
}

// printWarnings writes the warnings to stderr, one line each.
func (o *RelationOptions) printWarnings(warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(o.ErrOut, "warning: %s\n", w)
	}
}

// parseObjectArg reads TYPE/NAME, or TYPE NAME, as the relation commands
// take one object, and maps the type through discovery.
func (o *RelationOptions) parseObjectArg(verb string, args []string) (query.ObjectRef, error) {
	typ, name, err := splitObjectArg(verb, args)
	if err != nil {
		return query.ObjectRef{}, err
	}
	m, err := query.MappingFor(o.mapper, typ)
	if err != nil {
		return query.ObjectRef{}, err
	}
	return query.ObjectRef{Resource: informer.FromMapping(m), Name: name}, nil
}

// splitObjectArg checks the shape of the one object argument and splits it
// into type and name; it needs no server.
func splitObjectArg(verb string, args []string) (typ, name string, err error) {
	switch {
	case len(args) == 1 && strings.Contains(args[0], "/"):
		typ, name, _ = strings.Cut(args[0], "/")
		if typ == "" || name == "" || strings.Contains(name, "/") {
			return "", "", fmt.Errorf("arguments in resource/name form must have a single resource and name, got %q", args[0])
		}
	case len(args) == 2 && !strings.Contains(args[0], "/") && !strings.Contains(args[1], "/"):
		typ, name = args[0], args[1]
	case len(args) == 0:
		return "", "", fmt.Errorf("you must specify the object to %s as TYPE/NAME, e.g. deployment/web", verb)
	case len(args) == 1:
		return "", "", fmt.Errorf("you must specify the object to %s as TYPE/NAME, e.g. %s/NAME; got %q", verb, args[0], args[0])
	default:
		return "", "", fmt.Errorf("you must specify one object to %s as TYPE/NAME or TYPE NAME, got %q", verb, strings.Join(args, " "))
	}
	if strings.Contains(typ, ",") {
		return "", "", fmt.Errorf("you must specify one object to %s, not a list of types: %q", verb, typ)
	}
	return typ, name, nil
}

// objectNamespace is the namespace the object named on the command line is
// looked for in: the one asked for, or under -A the context's.
func (o *RelationOptions) objectNamespace() string {
	if o.namespace != metav1.NamespaceAll {
		return o.namespace
	}
	if o.defaultNamespace != "" {
		return o.defaultNamespace
	}
	return metav1.NamespaceDefault
}

// forContext returns a copy of o that asks the one context name, with its
// own clients.
func (o *RelationOptions) forContext(name string) (*RelationOptions, error) {
	c := *o
	c.Flags = o.Flags.forContext(name)
	c.contexts = nil
	c.progress = false
	if err := c.resolveClients(); err != nil {
		return nil, err
	}
	return &c, nil
}

// runDocuments asks every context concurrently for its document, answer
// running on a copy of o resolved for that context, and prints them
// together (printers.PrintContextDocuments). A failed context is a warning
// line naming it; the exit code says whether the answer is partial.
func (o *RelationOptions) runDocuments(ctx context.Context, answer func(ctx context.Context, c *RelationOptions) (printers.ContextDocument, error)) error {
	results := fanOut(ctx, o.contexts, func(ctx context.Context, name string) (printers.ContextDocument, error) {
		c, err := o.forContext(name)
		if err != nil {
			return printers.ContextDocument{}, err
		}
		d, err := answer(ctx, c)
		if err != nil {
			return d, err
		}
		if d.Tree != nil {
			d.Tree.Context = name
		} else {
			d.List.Context = name
		}
		return d, nil
	})
	var docs []printers.ContextDocument
	var warnings []string
	failed := 0
	for _, r := range results {
		if r.Err != nil {
			failed++
			warnings = append(warnings, contextWarnings(r.Context, r.Err)...)
			continue
		}
		docs = append(docs, r.Answer)
		var docWarnings []string
		if r.Answer.Tree != nil {
			docWarnings = r.Answer.Tree.Warnings
		} else {
			docWarnings = r.Answer.List.Warnings
		}
		for _, w := range docWarnings {
			warnings = append(warnings, prefixContext(r.Context, w))
		}
	}
	o.printWarnings(warnings)
	outcome := contextsOutcome(failed, len(results))
	if failed == len(results) {
		return outcome
	}
	opts := o.treePrintOptions()
	opts.Warnings = warnings
	if err := printers.PrintContextDocuments(o.Out, docs, o.printer, opts); err != nil {
		return err
	}
	return outcome
}
