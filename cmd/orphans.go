package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
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

// Run finds and prints the orphans.
func (o *OrphansOptions) Run(ctx context.Context) error {
	if o.contexts != nil {
		return o.runDocuments(ctx, func(ctx context.Context, c *RelationOptions) (printers.ContextDocument, error) {
			doc, err := c.session().Orphans(ctx)
			return printers.ContextDocument{List: doc}, err
		})
	}
	doc, err := o.session().Orphans(ctx)
	if err != nil {
		return err
	}
	o.printWarnings(doc.Warnings)
	if len(doc.Items) == 0 && printers.IsHuman(o.format) {
		if o.namespace == metav1.NamespaceAll {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.namespace)
		}
	}
	return printers.PrintRelationList(o.Out, doc, o.printer, o.treePrintOptions())
}
