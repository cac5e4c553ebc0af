package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
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
  kubectl idx selects service/web -n shop -o json | jq -r '.items[] | select(any(.status.conditions[]?; .type == "Ready" and .status == "True")) | .metadata.name'`

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
  kubectl idx selected-by pod/web-7d9c-x2x -n shop -o name | grep poddisruptionbudget`

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// SelectsOptions holds the flags and state of the selects and selected-by
// commands.
type SelectsOptions struct {
	*RelationOptions
	// inverse is true for selected-by.
	inverse bool
	object  objectRef
}

// NewCmdSelects returns the selects command.
func NewCmdSelects(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdSelects(configFlags, streams, false)
}

// NewCmdSelectedBy returns the selected-by command.
func NewCmdSelectedBy(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdSelects(configFlags, streams, true)
}

func newCmdSelects(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, inverse bool) *cobra.Command {
	o := &SelectsOptions{RelationOptions: newRelationOptions(configFlags, streams), inverse: inverse}
	o.sortable = true
	cmd := &cobra.Command{
		Use:     "selects (TYPE/NAME | TYPE NAME)",
		Short:   "List the pods an object's selector matches",
		Long:    selectsLong,
		Example: selectsExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	if inverse {
		cmd.Use = "selected-by (TYPE/NAME | TYPE NAME)"
		cmd.Short = "List the Services, PDBs, NetworkPolicies and workloads whose selectors match an object"
		cmd.Long, cmd.Example = selectedByLong, selectedByExample
	}
	o.addFlags(cmd)
	return cmd
}

// Complete resolves the clients and the object; selects refuses kinds without
// a pod selector before asking the server anything.
func (o *SelectsOptions) Complete(cmd *cobra.Command, args []string) error {
	if err := o.complete(cmd); err != nil {
		return err
	}
	verb := "list the pods selected by"
	if o.inverse {
		verb = "list what selects"
	}
	var err error
	if o.object, err = o.parseObjectArg(verb, args); err != nil {
		return err
	}
	if !o.inverse && !index.HasSelector(o.object.res.GVK.GroupKind()) {
		var kinds []string
		for _, gk := range index.SelectorKinds() {
			kinds = append(kinds, gk.Kind)
		}
		return fmt.Errorf("selects needs an object with a pod selector (%s); %s/%s has none",
			strings.Join(kinds, ", "), strings.ToLower(o.object.res.GVK.Kind), o.object.name)
	}
	return nil
}

// Run answers and prints.
func (o *SelectsOptions) Run(ctx context.Context) error {
	var groups []printers.Group
	var err error
	if o.inverse {
		groups, err = o.selectedBy(ctx)
	} else {
		groups, err = o.selects(ctx)
	}
	if err != nil {
		return err
	}
	o.printWarnings()
	n, err := printers.Print(o.Out, groups, o.printer, printers.Options{
		Format:       o.format,
		NoHeaders:    *o.PrintFlags.NoHeaders,
		ShowLabels:   *o.PrintFlags.HumanReadableFlags.ShowLabels,
		ShowKind:     len(groups) > 1,
		ColumnLabels: *o.PrintFlags.HumanReadableFlags.ColumnLabels,
		Now:          time.Now(),
		Warnings:     o.warnings,
		SortBy:       o.sortBy(),
	})
	if err != nil {
		return err
	}
	if n == 0 && printers.IsHuman(o.format) {
		ns, _ := o.rootNamespace()
		fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", ns)
	}
	return nil
}

// selects lists the pods the object's selector matches.
func (o *SelectsOptions) selects(ctx context.Context) ([]printers.Group, error) {
	ns, err := o.rootNamespace()
	if err != nil {
		return nil, err
	}
	obj, err := o.namedFull(ctx, o.object, ns)
	if err != nil {
		return nil, err
	}
	sel, _, err := index.SelectorOf(obj)
	if err != nil {
		return nil, err
	}
	if sel.Empty() {
		// labels.Everything: a PodDisruptionBudget or NetworkPolicy with {}.
		o.warn("%s/%s selects every pod in namespace %s", strings.ToLower(o.object.res.GVK.Kind), o.object.name, ns)
	} else if _, selectable := sel.Requirements(); !selectable {
		o.warn("%s/%s has no selector, so it selects no pods", strings.ToLower(o.object.res.GVK.Kind), o.object.name)
	}
	m, err := o.mapper.RESTMapping(podGVK.GroupKind(), podGVK.Version)
	if err != nil {
		return nil, err
	}
	pods := informer.FromMapping(m)
	f, err := o.newFactory(informerConfig(o.RelationOptions, ns))
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	inf, err := f.Informer(pods, informer.Full, cache.Indexers{index.LabelPairIndex: index.LabelPairIndexFunc, index.NamespaceIndex: index.NamespaceIndexFunc})
	if err != nil {
		return nil, err
	}
	f.Start(reflectorContext(ctx))
	if err := f.WaitForSync(ctx); err != nil {
		return nil, err
	}
	matched, err := index.Selected(inf.GetIndexer(), ns, sel)
	if err != nil {
		return nil, err
	}
	return []printers.Group{{GVK: pods.GVK, Namespaced: true, Objects: runtimeObjects(matched)}}, nil
}

// selectedBy lists the objects whose selectors match the object's labels.
func (o *SelectsOptions) selectedBy(ctx context.Context) ([]printers.Group, error) {
	ns, err := o.rootNamespace()
	if err != nil {
		return nil, err
	}
	obj, err := o.namedMetadata(ctx, o.object, ns)
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, o.object.notFound()
	}
	set := labels.Set(obj.GetLabels())
	f, err := o.newFactory(informerConfig(o.RelationOptions, ns))
	if err != nil {
		return nil, err
	}
	defer f.Shutdown()
	type kindInformer struct {
		res informer.Resource
		inf cache.SharedIndexInformer
	}
	var infs []kindInformer
	for _, gk := range index.SelectorKinds() {
		m, err := o.mapper.RESTMapping(gk)
		if err != nil {
			continue // not served, e.g. a trimmed-down API server
		}
		res := informer.FromMapping(m)
		inf, err := f.Informer(res, informer.Full, cache.Indexers{index.SelectorIndex: index.SelectorIndexFunc, index.NamespaceIndex: index.NamespaceIndexFunc})
		if err != nil {
			return nil, err
		}
		infs = append(infs, kindInformer{res: res, inf: inf})
	}
	f.Start(reflectorContext(ctx))
	skipped, err := f.WaitForSyncPartial(ctx)
	if err != nil {
		return nil, err
	}
	failed := map[schema.GroupVersionResource]bool{}
	for _, s := range skipped {
		failed[s.Resource.GVR] = true
		o.warn("cannot list %s, the answer may be incomplete: %s", s.Resource.Name(), warningText(s.Err))
	}
	var groups []printers.Group
	for _, k := range infs {
		if failed[k.res.GVR] {
			continue
		}
		matched, err := index.SelectedBy(k.inf.GetIndexer(), ns, set)
		if err != nil {
			return nil, err
		}
		if len(matched) > 0 {
			groups = append(groups, printers.Group{GVK: k.res.GVK, Namespaced: true, Objects: runtimeObjects(matched)})
		}
	}
	return groups, nil
}

func runtimeObjects(objs []any) []runtime.Object {
	out := make([]runtime.Object, 0, len(objs))
	for _, obj := range objs {
		if ro, ok := obj.(runtime.Object); ok {
			if _, err := meta.Accessor(ro); err == nil {
				out = append(out, ro)
			}
		}
	}
	return out
}
