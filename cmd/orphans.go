package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
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
func NewCmdOrphans(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &OrphansOptions{RelationOptions: newRelationOptions(configFlags, streams)}
	cmd := &cobra.Command{
		Use:     "orphans",
		Short:   "List objects whose owners no longer exist",
		Long:    orphansLong,
		Example: orphansExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(cmd); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.addFlags(cmd)
	return cmd
}

// Run finds and prints the orphans.
func (o *OrphansOptions) Run(ctx context.Context) error {
	doc, err := o.orphans(ctx)
	if err != nil {
		return err
	}
	o.printWarnings()
	if len(doc.Items) == 0 && printers.IsHuman(o.format) {
		if o.namespace == metav1.NamespaceAll {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.namespace)
		}
	}
	return printers.PrintRelationList(o.Out, doc, o.printer, o.treePrintOptions())
}

func (o *OrphansOptions) orphans(ctx context.Context) (*printers.RelationList, error) {
	w, err := o.newWorld(ctx, o.namespace)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	if err := w.addListable(ctx, o.namespace != metav1.NamespaceAll); err != nil {
		return nil, err
	}
	// Under -n, owners may still be cluster-scoped (a Node owns its mirror pods).
	if err := w.addOwnerKinds(ctx); err != nil {
		return nil, err
	}
	g := w.graph()
	orphans, unknown, err := g.Orphans()
	if err != nil {
		return nil, err
	}
	for _, gk := range unknown {
		o.warn("references to owners of kind %s were not checked: the kind cannot be listed", kindName(gk))
	}
	doc := &printers.RelationList{APIVersion: printers.GroupListAPIVersion, Kind: printers.OrphanListKind, Items: []printers.RelationItem{}}
	for _, orphan := range orphans {
		if o.namespace != metav1.NamespaceAll && orphan.Namespaced && orphan.Object.GetNamespace() != o.namespace {
			continue
		}
		if o.namespace != metav1.NamespaceAll && !orphan.Namespaced {
			// Owner kinds read for -n may be cluster-scoped; their own
			// orphans are not in the namespace asked about.
			continue
		}
		it := printers.RelationItemFor(orphan.GVK, orphan.Object)
		it.MissingOwners, it.OrphaningOwners = orphan.Missing, orphan.Orphaning
		doc.Items = append(doc.Items, it)
	}
	doc.Warnings = o.docWarnings()
	return doc, nil
}
