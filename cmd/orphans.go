package cmd

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var orphansLong = `List objects whose ownerReferences point to owners that no longer exist, and
objects whose owner is being deleted with --cascade=orphan (the garbage
collector will leave them without an owner).

Every listable type is read, metadata only, in parallel; owner kinds the
objects name are read as well, cluster-scoped ones included. A reference to a
kind you may not list cannot be judged: it is left out with a warning that the
answer may be incomplete.`

var orphansExample = `  # Orphans in the current namespace
  kubectl idx orphans

  # Orphans everywhere, as kind/name lines
  kubectl idx orphans -A -o name

  # Orphaned ReplicaSets whose Deployment is gone
  kubectl idx orphans -A -o json | jq -r '.items[] | select(.kind == "ReplicaSet") | .namespace + "/" + .name'`

// OrphansOptions holds the flags and state of the orphans command.
type OrphansOptions struct {
	*RelationOptions
}

// NewCmdOrphans returns the orphans command.
func NewCmdOrphans(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &OrphansOptions{RelationOptions: newRelationOptions(f, streams)}
	return o.newRelationCmd(&cobra.Command{
		Use:     "orphans",
		Short:   "List objects whose owners no longer exist",
		Long:    orphansLong,
		Example: orphansExample,
		Args:    cobra.NoArgs,
	}, o)
}

// Complete resolves the clients.
func (o *OrphansOptions) Complete(cmd *cobra.Command, _ []string) error {
	return o.complete(cmd)
}

// Run asks every context for its orphans and reports them.
func (o *OrphansOptions) Run(ctx context.Context) error {
	answers := query.Ask(ctx, o.targets, o.config(), func(ctx context.Context, s *query.Session) (*v1alpha1.RelationList, error) {
		return s.Orphans(ctx)
	})
	var scopes []string
	for i, a := range answers {
		if a.Value != nil {
			scopes = append(scopes, o.targets[i].Namespace)
		}
	}
	return printDocuments(o.RelationOptions, answers, printers.Notice(scopes, "No resources found", "No resources found in %s namespace."))
}
