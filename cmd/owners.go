package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

var ownersLong = `Show the owners of an object, and theirs, up to the top-level owner: a Pod's
ReplicaSet and Deployment, a Job's CronJob, a mirror Pod's Node.

Every ownerReference is followed, controller or not. Only the kinds the
references name are read, metadata only. An owner that no longer exists is
shown as <missing>; one whose kind cannot be read as <unknown>, with a warning.`

var ownersExample = `  # The chain above a pod
  kubectl idx owners pod/web-7d9c-x2x -n shop

  # The top-level owner only
  kubectl idx owners pod/web-7d9c-x2x -n shop -o json | jq -r '.root | until(.owners == null; .owners[0]) | .kind + "/" + .name'

  # The chain as a Graphviz graph; references that are not the controller are dashed
  kubectl idx owners pod/web-7d9c-x2x -n shop -o dot | dot -Tsvg > owners.svg`

// OwnersOptions holds the flags and state of the owners command.
type OwnersOptions struct {
	*RelationOptions
}

// NewCmdOwners returns the owners command.
func NewCmdOwners(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &OwnersOptions{RelationOptions: newGraphOptions(f, streams)}
	return o.newRelationCmd(&cobra.Command{
		Use:     "owners (TYPE/NAME | TYPE NAME)",
		Short:   "Show the owners of an object up to its top-level owner",
		Long:    ownersLong,
		Example: ownersExample,
	}, o)
}

// Complete resolves the clients and the object.
func (o *OwnersOptions) Complete(cmd *cobra.Command, args []string) error {
	return o.completeObject(cmd, "show the owners of", args)
}

// Run finds and prints the owner chain.
func (o *OwnersOptions) Run(ctx context.Context) error {
	if o.contexts != nil {
		return o.runDocuments(ctx, func(ctx context.Context, c *RelationOptions) (printers.ContextDocument, error) {
			if err := c.resolveObject(); err != nil {
				return printers.ContextDocument{}, err
			}
			doc, err := c.session().Owners(ctx, c.object)
			return printers.ContextDocument{Tree: doc}, err
		})
	}
	if err := o.resolveObject(); err != nil {
		return err
	}
	doc, err := o.session().Owners(ctx, o.object)
	if err != nil {
		return err
	}
	o.printWarnings(doc.Warnings)
	if printers.IsGraph(o.format) {
		return printers.PrintTreeGraph(o.Out, doc, o.format)
	}
	return printers.PrintTree(o.Out, doc, o.printer, o.treePrintOptions())
}
