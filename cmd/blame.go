package cmd

import (
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var blameLong = `Show an object's YAML with, beside each line, the manager that last wrote its
field, how (Update or Apply, and through which subresource) and when, from the
object's managedFields.

List entries are attributed by their merge keys, as the API server records
them: a container by its name, an env variable by its name, a port by its
containerPort and protocol, never by its index, so an entry inserted before
another does not move the other's writer. A line no manager owns (a map some
managers own parts of, fields the server sets) has nothing beside it. A
Secret is read as metadata only: its data is never fetched.

managedFields keep each manager's last write only: kubectl idx history says
what changed before, where the cluster keeps it.`

var blameExample = `  # Who last wrote each field of a Deployment
  kubectl idx blame deployment/web -n shop

  # The fields a manager owns, with jq
  kubectl idx blame deployment/web -n shop -o json | jq -r '.managers as $m | .fields[] | select(any(.managers[]; $m[.].manager == "kubectl-set")) | .path'`

// blameCommand describes the blame command.
var blameCommand = &objectCommand[*v1alpha1.Blame]{
	use:        "blame (TYPE/NAME | TYPE NAME)",
	short:      "Show an object's YAML with who last wrote each field, and when",
	long:       blameLong,
	example:    blameExample,
	verb:       "blame",
	checkFlags: checkBlameFlags,
	ask:        (*query.Session).Blame,
}

// NewCmdBlame returns the blame command.
func NewCmdBlame(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	return blameCommand.newCmd(f, streams)
}

// checkBlameFlags refuses --where, which filters what a command lists: it
// has nothing to filter in one object's fields.
func checkBlameFlags(o *RelationOptions) error {
	if len(o.Where) > 0 {
		return errors.New("--where cannot be used with kubectl idx blame: it shows one object; kubectl idx history takes it")
	}
	return nil
}
