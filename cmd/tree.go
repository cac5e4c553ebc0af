package cmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

var treeLong = `Show everything an object owns, through ownerReferences, across every type
the server lists: a Deployment's ReplicaSets and Pods, a Service's
EndpointSlices, the objects of custom controllers.

Every listable type of the object's namespace is read, metadata only, in
parallel; kinds that appear in the tree are then read in full for the READY and
STATUS columns. A type you may not list is skipped with a warning, and the
answer says it may be incomplete. A cluster-scoped object (a Node, a custom
cluster-scoped resource) or --all-namespaces searches every namespace.`

var treeExample = `  # Everything under a Deployment
  kubectl idx tree deployment/web -n shop

  # The same, as JSON for jq: every Pod in the tree
  kubectl idx tree deployment/web -n shop -o json | jq -r '.. | objects | select(.kind? == "Pod") | .name'

  # What a Node owns, in every namespace (mirror pods, leases)
  kubectl idx tree node/worker-1`

// TreeOptions holds the flags and state of the tree command.
type TreeOptions struct {
	*RelationOptions
	object objectRef
}

// NewCmdTree returns the tree command.
func NewCmdTree(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &TreeOptions{RelationOptions: newRelationOptions(configFlags, streams)}
	cmd := &cobra.Command{
		Use:     "tree (TYPE/NAME | TYPE NAME)",
		Short:   "Show the objects an object owns, across every type, as a tree",
		Long:    treeLong,
		Example: treeExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.addFlags(cmd)
	return cmd
}

// Complete resolves the clients and the object.
func (o *TreeOptions) Complete(cmd *cobra.Command, args []string) error {
	if err := o.complete(cmd); err != nil {
		return err
	}
	var err error
	o.object, err = o.parseObjectArg("show the tree of", args)
	return err
}

// Run builds and prints the tree.
func (o *TreeOptions) Run(ctx context.Context) error {
	doc, err := o.tree(ctx)
	if err != nil {
		return err
	}
	o.printWarnings()
	return printers.PrintTree(o.Out, doc, o.printer, o.treePrintOptions())
}

func (o *RelationOptions) treePrintOptions() printers.Options {
	return printers.Options{Format: o.format, NoHeaders: *o.PrintFlags.NoHeaders, Now: time.Now()}
}

// scope returns the namespace the informers of a tree under obj cover and
// whether cluster-scoped types are needed: dependents of a namespaced object
// live in its namespace, those of a cluster-scoped object anywhere.
func (o *RelationOptions) scope(obj objectRef, rootNS string) (namespace string, clusterWide bool) {
	if !obj.res.Namespaced || o.AllNamespaces {
		return metav1.NamespaceAll, true
	}
	return rootNS, false
}

func (o *TreeOptions) tree(ctx context.Context) (*printers.TreeDocument, error) {
	w, tree, err := o.descendants(ctx, o.object)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	if err := w.loadFull(ctx, flatten(tree)); err != nil {
		return nil, err
	}
	now := time.Now()
	return &printers.TreeDocument{
		APIVersion: printers.GroupListAPIVersion,
		Kind:       printers.TreeKind,
		Root:       treeItems(w, tree, now),
		Warnings:   o.docWarnings(),
	}, nil
}

// descendants builds the world a tree under obj needs and the tree itself.
// The caller shuts the world down.
func (o *RelationOptions) descendants(ctx context.Context, obj objectRef) (*world, *index.TreeNode, error) {
	rootNS, err := o.rootNamespace()
	if err != nil {
		return nil, nil, err
	}
	ns, clusterWide := o.scope(obj, rootNS)
	w, err := o.newWorld(ctx, ns)
	if err != nil {
		return nil, nil, err
	}
	// Descendants are found through the owner index alone; the UID and
	// owner-kind indexes cost as much again on every object of the cluster.
	w.indexers = cache.Indexers{index.OwnerIndex: index.OwnerIndexFunc}
	fail := func(err error) (*world, *index.TreeNode, error) {
		w.shutdown()
		return nil, nil, err
	}
	if err := w.addListable(ctx, !clusterWide); err != nil {
		return fail(err)
	}
	root, err := w.lookupRoot(obj, rootNS)
	if err != nil {
		return fail(err)
	}
	tree, err := w.graph().Descendants(root)
	if err != nil {
		return fail(err)
	}
	return w, tree, nil
}

// flatten lists the nodes of a tree.
func flatten(t *index.TreeNode) []index.Node {
	out := []index.Node{t.Node}
	for _, c := range t.Children {
		out = append(out, flatten(c)...)
	}
	return out
}

func treeItems(w *world, t *index.TreeNode, now time.Time) *printers.TreeItem {
	it := w.item(t.Node, now)
	it.Cycle = t.Cycle
	for _, c := range t.Children {
		it.Children = append(it.Children, treeItems(w, c, now))
	}
	return it
}
