package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/query"
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
	return o.newObjectCmd(&cobra.Command{
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

// Run asks every context for the owner chain and reports it.
func (o *OwnersOptions) Run(ctx context.Context) error {
	return printDocuments(o.RelationOptions, askObject(ctx, o.RelationOptions, (*query.Session).Owners), "")
}
