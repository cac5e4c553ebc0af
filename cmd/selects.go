package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var selectsLong = `List the pods an object's selector matches, with their readiness: a
Service's endpoints-to-be, a Deployment's or StatefulSet's pods, the pods a
PodDisruptionBudget protects or a NetworkPolicy applies to.

Pods are indexed by label pair, so a selector is answered from the smallest
bucket its requirements name, never by testing every pod.`

var selectsExample = `  # Pods behind a Service
  kubectl idx selects service/web -n shop

  # Names of the ready pods a Service selects
  kubectl idx selects service/web -n shop -o json | jq -r '.items[] | select(any(.status.conditions[]?; .type == "Ready" and .status == "True")) | .metadata.name'

  # The Service and its pods as a Mermaid flowchart
  kubectl idx selects service/web -n shop -o mermaid`

var selectedByLong = `List the objects whose pod selectors match an object's labels: the
Services, PodDisruptionBudgets and NetworkPolicies that select a pod, and the
workloads (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs,
ReplicationControllers) whose selectors claim it.

Selectors are indexed by the label pairs a matching pod must carry, so a pod's
labels find their selectors without testing every selector. A type you may not
list is skipped with a warning.`

var selectedByExample = `  # What selects a pod
  kubectl idx selected-by pod/web-7d9c-x2x -n shop

  # Only the PodDisruptionBudgets, by name
  kubectl idx selected-by pod/web-7d9c-x2x -n shop -o name | grep poddisruptionbudget

  # What selects a pod, drawn by Graphviz
  kubectl idx selected-by pod/web-7d9c-x2x -n shop -o dot | dot -Tsvg > selected-by.svg`

// SelectsOptions holds the flags and state of selects and selected-by.
type SelectsOptions struct {
	*RelationOptions
	inverse bool
}

// NewCmdSelects returns the selects command.
func NewCmdSelects(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdSelects(f, streams, false)
}

// NewCmdSelectedBy returns the selected-by command.
func NewCmdSelectedBy(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdSelects(f, streams, true)
}

func newCmdSelects(f *Flags, streams genericiooptions.IOStreams, inverse bool) *cobra.Command {
	o := &SelectsOptions{RelationOptions: newRelationOptions(f, streams), inverse: inverse}
	o.sortable, o.graphs = true, true
	cmd := &cobra.Command{
		Use:     "selects (TYPE/NAME | TYPE NAME)",
		Short:   "List the pods an object's selector matches",
		Long:    selectsLong,
		Example: selectsExample,
	}
	if inverse {
		cmd.Use = "selected-by (TYPE/NAME | TYPE NAME)"
		cmd.Short = "List the Services, PDBs, NetworkPolicies and workloads whose selectors match an object"
		cmd.Long, cmd.Example = selectedByLong, selectedByExample
	}
	return o.newObjectCmd(cmd, o)
}

// Complete resolves the clients and the object.
func (o *SelectsOptions) Complete(cmd *cobra.Command, args []string) error {
	verb := "list the pods selected by"
	if o.inverse {
		verb = "list what selects"
	}
	return o.completeObject(cmd, verb, args)
}

// checkKind refuses, for selects, an object without a pod selector.
func (o *SelectsOptions) checkKind(obj query.ObjectRef) error {
	if !o.inverse && !index.HasSelector(obj.Resource.GVK.GroupKind()) {
		var kinds []string
		for _, gk := range index.SelectorKinds() {
			kinds = append(kinds, gk.Kind)
		}
		return fmt.Errorf("selects needs an object with a pod selector (%s); %s has none", strings.Join(kinds, ", "), obj)
	}
	return nil
}

// Run asks every context for the selection and reports it.
func (o *SelectsOptions) Run(ctx context.Context) error {
	answers := askObject(ctx, o.RelationOptions, func(s *query.Session, ctx context.Context, obj query.ObjectRef) (*query.Listing, error) {
		if err := o.checkKind(obj); err != nil {
			return nil, err
		}
		return s.Selection(ctx, obj, o.inverse, o.human())
	})
	return report(o.QueryOptions, answers, printers.NoResources(answers), func(answers []query.Answer[*query.Listing], warnings []string) (int, error) {
		if l := answers[0].Value; printers.IsGraph(o.format) {
			return 0, printers.PrintSelectionGraph(o.Out, *l.Subject, l.Members, o.inverse, o.format)
		}
		opts := o.printOptions(warnings)
		// The kinds are named when there are several: selected-by finds
		// Services, budgets and workloads alike.
		kinds := map[schema.GroupKind]bool{}
		for _, a := range answers {
			if a.Value != nil {
				for _, m := range a.Value.Members {
					kinds[m.GVK.GroupKind()] = true
				}
			}
		}
		opts.ShowKind, opts.WithNamespace = len(kinds) > 1, false
		return printers.PrintListing(o.Out, answers, o.printer, opts, nil)
	})
}
