package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/query"
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
	return o.newObjectCmd(&cobra.Command{
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

// Run asks every context for the tree and reports it.
func (o *TreeOptions) Run(ctx context.Context) error {
	return printDocuments(o.RelationOptions, askObject(ctx, o.RelationOptions, (*query.Session).Tree), "")
}
