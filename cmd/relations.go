package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-idx/kubectl-idx/pkg/completion"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// RelationOptions are the flags and resolved state shared by the commands that
// follow relations between objects: tree, owners, orphans, events, selects,
// selected-by and uses.
type RelationOptions struct {
	*QueryOptions

	// verb words what the command does to its object ("show the tree of");
	// args are the arguments naming it, typ and name what they say.
	verb      string
	args      []string
	typ, name string
	// command is the command's name, for messages.
	command string
	// sortable is true for commands that print a List --sort-by can order.
	sortable bool
	// graphs is true for the commands that draw their answer as a relation
	// graph with -o dot and -o mermaid.
	graphs bool
}

func newRelationOptions(f *Flags, streams genericiooptions.IOStreams) *RelationOptions {
	o := &RelationOptions{QueryOptions: newQueryOptions(f, streams)}
	o.toPrinter = func(pf *get.PrintFlags) (cliprinters.ResourcePrinter, error) {
		return printers.GraphPrinter(pf, o.graphs)
	}
	return o
}

// newRelationCmd finishes cmd for c, o's command: RunE completes,
// validates and runs, and the shared flags are added.
func (o *RelationOptions) newRelationCmd(cmd *cobra.Command, c command) *cobra.Command {
	cmd.RunE = runE(c)
	if o.graphs {
		o.addGraphPrintFlags(cmd)
	} else {
		o.PrintFlags.AddFlags(cmd)
	}
	o.addFlags(cmd)
	return cmd
}

// newObjectCmd is newRelationCmd for a command about one object: its
// argument completes TYPE/ from discovery, then names from the cluster.
func (o *RelationOptions) newObjectCmd(cmd *cobra.Command, c command) *cobra.Command {
	cmd.ValidArgsFunction = completion.New(&o.Flags.ContextFlags).Object
	return o.newRelationCmd(cmd, c)
}

// completeObject resolves the shared state and keeps the arguments naming the
// one object the command is about, as verb needs it ("show the tree of").
func (o *RelationOptions) completeObject(cmd *cobra.Command, verb string, args []string) error {
	o.verb, o.args = verb, args
	return o.complete(cmd)
}

// complete resolves the printer and the contexts; it sends no request to the
// server. A graph draws one cluster.
func (o *RelationOptions) complete(cmd *cobra.Command) error {
	if cmd != nil {
		o.command = cmd.Name()
	}
	if err := o.QueryOptions.complete(); err != nil {
		return err
	}
	if o.several() && printers.IsGraph(o.format) {
		return fmt.Errorf("-o %s draws the graph of one cluster: name one context with --context", o.format)
	}
	return nil
}

// Validate checks the shared flags and the shape of the object argument; it
// does no I/O. Commands with flags of their own extend it.
func (o *RelationOptions) Validate() error {
	if err := o.validate(); err != nil {
		return err
	}
	if sortBy := o.sortBy(); sortBy != "" && !o.sortable {
		// Trees, chains and newest-last event lists have an order of their own.
		name := "this command"
		if o.command != "" {
			name = "kubectl idx " + o.command
		}
		return fmt.Errorf("--sort-by is not supported by %s", name)
	}
	if o.verb == "" {
		return nil
	}
	var err error
	o.typ, o.name, err = query.ParseObjectArg(o.verb, o.args)
	return err
}

// askObject asks every context question about the object argument, which
// Validate split, as each context's discovery resolves it: the first
// request of a question to its server.
func askObject[T any](ctx context.Context, o *RelationOptions, question func(*query.Session, context.Context, query.ObjectRef) (T, error)) []query.Answer[T] {
	return query.Ask(ctx, o.targets, o.config(), func(ctx context.Context, s *query.Session) (T, error) {
		obj, err := s.Object(o.typ, o.name)
		if err != nil {
			var none T
			return none, err
		}
		return question(s, ctx, obj)
	})
}

// objectCommand is a command about one object answered by one document a
// context (tree, owners, uses, blame), as its file describes it.
type objectCommand[D printers.Document] struct {
	use, short, long, example string
	// verb and graphs are RelationOptions'.
	verb   string
	graphs bool
	// checkFlags refuses flags the command has no use for; nil for none.
	checkFlags func(*RelationOptions) error
	ask        func(*query.Session, context.Context, query.ObjectRef) (D, error)
	// nothing is the notice of an empty answer; nil for none.
	nothing func([]query.Answer[D]) string
}

// ObjectOptions holds the flags and state of an objectCommand.
type ObjectOptions[D printers.Document] struct {
	*RelationOptions
	*objectCommand[D]
}

// newCmd returns c's command.
func (c *objectCommand[D]) newCmd(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := c.newOptions(newRelationOptions(f, streams))
	return o.newObjectCmd(&cobra.Command{Use: c.use, Short: c.short, Long: c.long, Example: c.example}, o)
}

// newOptions returns c's Options over the shared ones.
func (c *objectCommand[D]) newOptions(ro *RelationOptions) *ObjectOptions[D] {
	ro.graphs = c.graphs
	return &ObjectOptions[D]{RelationOptions: ro, objectCommand: c}
}

// Complete resolves the clients and keeps the object's arguments.
func (o *ObjectOptions[D]) Complete(cmd *cobra.Command, args []string) error {
	return o.completeObject(cmd, o.objectCommand.verb, args)
}

// Validate checks the command's own refusals, then the shared flags.
func (o *ObjectOptions[D]) Validate() error {
	if o.checkFlags != nil {
		if err := o.checkFlags(o.RelationOptions); err != nil {
			return err
		}
	}
	return o.RelationOptions.Validate()
}

// Run asks every context the command's question and reports the answers.
func (o *ObjectOptions[D]) Run(ctx context.Context) error {
	answers := askObject(ctx, o.RelationOptions, o.ask)
	nothing := ""
	if o.nothing != nil {
		nothing = o.nothing(answers)
	}
	return printDocuments(o.RelationOptions, answers, nothing)
}

// printDocuments reports the documents of tree, owners, orphans and uses;
// nothing is the notice of an empty answer, "" for none.
func printDocuments[D printers.Document](o *RelationOptions, answers []query.Answer[D], nothing string) error {
	return report(o.QueryOptions, answers, nothing, func(answers []query.Answer[D], warnings []string) (int, error) {
		return printers.PrintDocuments(o.Out, answers, o.printer, o.printOptions(warnings))
	})
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
