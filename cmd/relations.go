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

// newGraphOptions returns the options of a command that also draws its
// answer with -o dot and -o mermaid.
func newGraphOptions(f *Flags, streams genericiooptions.IOStreams) *RelationOptions {
	o := newRelationOptions(f, streams)
	o.graphs = true
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
	if o.verb != "" {
		var err error
		if o.typ, o.name, err = query.ParseObjectArg(o.verb, o.args); err != nil {
			return err
		}
	}
	return nil
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

// printDocuments reports the documents of tree, owners, orphans and uses;
// nothing is the notice of an empty answer, "" for none.
func printDocuments[D printers.Document](o *RelationOptions, answers []query.Answer[D], nothing string) error {
	return report(o.QueryOptions, answers, nothing, func(answers []query.Answer[D], warnings []string) (int, error) {
		opts := o.printOptions(warnings)
		return printers.PrintDocuments(o.Out, answers, o.printer, opts)
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
