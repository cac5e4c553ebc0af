package cmd

import (
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
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

// ownersCommand describes the owners command.
var ownersCommand = &objectCommand[*v1alpha1.Tree]{
	use:     "owners (TYPE/NAME | TYPE NAME)",
	short:   "Show the owners of an object up to its top-level owner",
	long:    ownersLong,
	example: ownersExample,
	verb:    "show the owners of",
	graphs:  true,
	ask:     (*query.Session).Owners,
}

// NewCmdOwners returns the owners command.
func NewCmdOwners(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	return ownersCommand.newCmd(f, streams)
}
