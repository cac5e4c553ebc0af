package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
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
	o := &SelectsOptions{RelationOptions: newGraphOptions(f, streams), inverse: inverse}
	o.sortable = true
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
	return o.newRelationCmd(cmd, o)
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
func (o *SelectsOptions) checkKind() error {
	if !o.inverse && !index.HasSelector(o.object.Resource.GVK.GroupKind()) {
		var kinds []string
		for _, gk := range index.SelectorKinds() {
			kinds = append(kinds, gk.Kind)
		}
		return fmt.Errorf("selects needs an object with a pod selector (%s); %s has none", strings.Join(kinds, ", "), o.object)
	}
	return nil
}

// Run answers and prints.
func (o *SelectsOptions) Run(ctx context.Context) error {
	if err := o.resolveObject(); err != nil {
		return err
	}
	if err := o.checkKind(); err != nil {
		return err
	}
	s := o.session()
	var members []v1alpha1.Members
	var err error
	if o.inverse {
		members, err = s.SelectedBy(ctx, o.object)
	} else {
		members, err = s.Selects(ctx, o.object)
	}
	if err != nil {
		return err
	}
	warnings := s.Warnings()
	if printers.IsGraph(o.format) {
		o.printWarnings(warnings)
		return printers.PrintSelectionGraph(o.Out, o.subjectItem(), members, o.inverse, o.format)
	}
	var tables map[schema.GroupKind]*metav1.Table
	if printers.IsHuman(o.format) {
		tables = s.Tables(ctx, members, nil)
		warnings = s.Warnings()
	}
	o.printWarnings(warnings)
	groups := make([]printers.Group, len(members))
	for i, m := range members {
		groups[i] = printers.Group{GVK: m.GVK, Namespaced: m.Namespaced, Objects: m.Objects, ServerTable: tables[m.GVK.GroupKind()]}
	}
	n, err := printers.Print(o.Out, groups, o.printer, printers.Options{
		Format:       o.format,
		NoHeaders:    *o.PrintFlags.NoHeaders,
		ShowLabels:   *o.PrintFlags.HumanReadableFlags.ShowLabels,
		ShowKind:     len(groups) > 1,
		ColumnLabels: *o.PrintFlags.HumanReadableFlags.ColumnLabels,
		Now:          time.Now(),
		Warnings:     warnings,
		SortBy:       o.sortBy(),
	})
	if err != nil {
		return err
	}
	if n == 0 && printers.IsHuman(o.format) {
		fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.objectNamespace())
	}
	return nil
}
