package cmd

import (
	"context"
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

// BlameOptions holds the flags and state of the blame command.
type BlameOptions struct {
	*RelationOptions
}

// NewCmdBlame returns the blame command.
func NewCmdBlame(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &BlameOptions{RelationOptions: newRelationOptions(f, streams)}
	return o.newObjectCmd(&cobra.Command{
		Use:     "blame (TYPE/NAME | TYPE NAME)",
		Short:   "Show an object's YAML with who last wrote each field, and when",
		Long:    blameLong,
		Example: blameExample,
	}, o)
}

// Complete resolves the clients and keeps the object's arguments.
func (o *BlameOptions) Complete(cmd *cobra.Command, args []string) error {
	return o.completeObject(cmd, "blame", args)
}

// Validate checks the shared flags; --where, which filters what a command
// lists, has nothing to filter in one object's fields.
func (o *BlameOptions) Validate() error {
	if len(o.Where) > 0 {
		return errors.New("--where cannot be used with kubectl idx blame: it shows one object; kubectl idx history takes it")
	}
	return o.RelationOptions.Validate()
}

// Run asks every context for the object's blame and reports it.
func (o *BlameOptions) Run(ctx context.Context) error {
	answers := askObject(ctx, o.RelationOptions, func(s *query.Session, ctx context.Context, obj query.ObjectRef) (*v1alpha1.Blame, error) {
		return s.Blame(ctx, obj)
	})
	return printDocuments(o.RelationOptions, answers, "")
}
