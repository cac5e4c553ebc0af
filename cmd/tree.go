package cmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

var treeLong = `Show everything an object owns, through ownerReferences, across every type
the server lists: a Deployment's ReplicaSets and Pods, a Service's
EndpointSlices, the objects of custom controllers.

Every listable type of the object's namespace is read, metadata only, in
parallel; kinds that appear in the tree are then read in full for the READY and
STATUS columns. A type you may not list is skipped with a warning, and the
answer says it may be incomplete. A cluster-scoped object (a Node, a custom
cluster-scoped resource) or --all-namespaces searches every namespace.`

var treeExample = `  # Everything under a Deployment
  kubectl idx tree deployment/web -n shop

  # The same, as JSON for jq: every Pod in the tree
  kubectl idx tree deployment/web -n shop -o json | jq -r '.. | objects | select(.kind? == "Pod") | .name'

  # What a Node owns, in every namespace (mirror pods, leases)
  kubectl idx tree node/worker-1

  # The tree as a picture: a Graphviz graph drawn as SVG, or a Mermaid flowchart
  kubectl idx tree deployment/web -n shop -o dot | dot -Tsvg > web.svg
  kubectl idx tree deployment/web -n shop -o mermaid`

// TreeOptions holds the flags and state of the tree command.
type TreeOptions struct {
	*RelationOptions
}

// NewCmdTree returns the tree command.
func NewCmdTree(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &TreeOptions{RelationOptions: newGraphOptions(f, streams)}
	return o.newRelationCmd(&cobra.Command{
		Use:     "tree (TYPE/NAME | TYPE NAME)",
		Short:   "Show the objects an object owns, across every type, as a tree",
		Long:    treeLong,
		Example: treeExample,
	}, o)
}

// Complete resolves the clients and the object.
func (o *TreeOptions) Complete(cmd *cobra.Command, args []string) error {
	return o.completeObject(cmd, "show the tree of", args)
}

// Run builds and prints the tree.
func (o *TreeOptions) Run(ctx context.Context) error {
	if o.contexts != nil {
		return o.runDocuments(ctx, func(ctx context.Context, c *RelationOptions) (printers.ContextDocument, error) {
			if err := c.resolveObject(); err != nil {
				return printers.ContextDocument{}, err
			}
			doc, err := c.session().Tree(ctx, c.object)
			return printers.ContextDocument{Tree: doc}, err
		})
	}
	if err := o.resolveObject(); err != nil {
		return err
	}
	doc, err := o.session().Tree(ctx, o.object)
	if err != nil {
		return err
	}
	o.printWarnings(doc.Warnings)
	if printers.IsGraph(o.format) {
		return printers.PrintTreeGraph(o.Out, doc, o.format)
	}
	return printers.PrintTree(o.Out, doc, o.printer, o.treePrintOptions())
}

// newGraphOptions returns the options of a command that also draws its
// answer with -o dot and -o mermaid.
func newGraphOptions(f *Flags, streams genericiooptions.IOStreams) *RelationOptions {
	o := newRelationOptions(f, streams)
	o.graphs = true
	return o
}

func (o *RelationOptions) treePrintOptions() printers.Options {
	return printers.Options{Format: o.format, NoHeaders: *o.PrintFlags.NoHeaders, Now: time.Now()}
}
