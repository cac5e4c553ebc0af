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

// selectsAnswer is one context's answer to selects or selected-by.
type selectsAnswer struct {
	members  []v1alpha1.Members
	tables   map[schema.GroupKind]*metav1.Table
	warnings []string
}

// answer asks c's context; c is o's options or a copy for one context.
func (o *SelectsOptions) answer(ctx context.Context, c *RelationOptions) (*selectsAnswer, error) {
	if err := c.resolveObject(); err != nil {
		return nil, err
	}
	if err := (&SelectsOptions{RelationOptions: c, inverse: o.inverse}).checkKind(); err != nil {
		return nil, err
	}
	s := c.session()
	a := &selectsAnswer{}
	var err error
	if o.inverse {
		a.members, err = s.SelectedBy(ctx, c.object)
	} else {
		a.members, err = s.Selects(ctx, c.object)
	}
	if err != nil {
		return nil, err
	}
	if printers.IsHuman(o.format) {
		a.tables = s.Tables(ctx, a.members, nil)
	}
	a.warnings = s.Warnings()
	return a, nil
}

// printOptions are the printing flags of the selection.
func (o *SelectsOptions) printOptions(kinds int, warnings []string) printers.Options {
	return printers.Options{
		Format:       o.format,
		NoHeaders:    *o.PrintFlags.NoHeaders,
		ShowLabels:   *o.PrintFlags.HumanReadableFlags.ShowLabels,
		ShowKind:     kinds > 1,
		ColumnLabels: *o.PrintFlags.HumanReadableFlags.ColumnLabels,
		Now:          time.Now(),
		Warnings:     warnings,
		SortBy:       o.sortBy(),
	}
}

// Run answers and prints.
func (o *SelectsOptions) Run(ctx context.Context) error {
	if o.contexts != nil {
		return o.runContexts(ctx)
	}
	a, err := o.answer(ctx, o.RelationOptions)
	if err != nil {
		return err
	}
	o.printWarnings(a.warnings)
	if printers.IsGraph(o.format) {
		return printers.PrintSelectionGraph(o.Out, o.subjectItem(), a.members, o.inverse, o.format)
	}
	groups := make([]printers.Group, len(a.members))
	for i, m := range a.members {
		groups[i] = printers.Group{GVK: m.GVK, Namespaced: m.Namespaced, Objects: m.Objects, ServerTable: a.tables[m.GVK.GroupKind()]}
	}
	n, err := printers.Print(o.Out, groups, o.printer, o.printOptions(len(groups), a.warnings))
	if err != nil {
		return err
	}
	if n == 0 && printers.IsHuman(o.format) {
		fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.objectNamespace())
	}
	return nil
}

// runContexts asks every context concurrently and prints the selections
// together, each object with its context.
func (o *SelectsOptions) runContexts(ctx context.Context) error {
	results := fanOut(ctx, o.contexts, func(ctx context.Context, name string) (*selectsAnswer, error) {
		c, err := o.forContext(name)
		if err != nil {
			return nil, err
		}
		return o.answer(ctx, c)
	})
	var infos []printers.ContextInfo
	var groups []printers.Group
	var warnings []string
	failed := 0
	kinds := map[schema.GroupKind]bool{}
	for _, r := range results {
		info := printers.ContextInfo{Name: r.Context}
		if r.Err != nil {
			failed++
			info.Error = warningText(r.Err)
			warnings = append(warnings, contextWarnings(r.Context, r.Err)...)
		}
		if a := r.Answer; a != nil {
			info.Warnings = a.warnings
			for _, w := range a.warnings {
				warnings = append(warnings, prefixContext(r.Context, w))
			}
			for _, m := range a.members {
				kinds[m.GVK.GroupKind()] = true
				groups = append(groups, printers.Group{GVK: m.GVK, Namespaced: m.Namespaced, Objects: m.Objects, ServerTable: a.tables[m.GVK.GroupKind()], Context: r.Context})
			}
		}
		infos = append(infos, info)
	}
	o.printWarnings(warnings)
	outcome := contextsOutcome(failed, len(results))
	if failed == len(results) {
		return outcome
	}
	opts := o.printOptions(len(kinds), warnings)
	opts.Contexts = infos
	if _, err := printers.Print(o.Out, groups, o.printer, opts); err != nil {
		return err
	}
	return outcome
}
