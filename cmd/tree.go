package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
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

// treeCommand describes the tree command.
var treeCommand = &objectCommand[*v1alpha1.Tree]{
	use:     "tree (TYPE/NAME | TYPE NAME)",
	short:   "Show the objects an object owns, across every type, as a tree",
	long:    treeLong,
	example: treeExample,
	verb:    "show the tree of",
	graphs:  true,
	ask:     (*query.Session).Tree,
}

// NewCmdTree returns the tree command.
func NewCmdTree(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	return treeCommand.newCmd(f, streams)
}
