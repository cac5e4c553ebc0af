package cmd

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

var ownersLong = `Show the owners of an object, and theirs, up to the top-level owner: a Pod's
ReplicaSet and Deployment, a Job's CronJob, a mirror Pod's Node.

Every ownerReference is followed, controller or not. Only the kinds the
references name are read, metadata only. An owner that no longer exists is
shown as <missing>; one whose kind cannot be read as <unknown>, with a warning.`

var ownersExample = `  # The chain above a pod
  kubectl idx owners pod/web-7d9c-x2x -n shop

  # The top-level owner only
  kubectl idx owners pod/web-7d9c-x2x -n shop -o json | jq -r '.root | until(.owners == null; .owners[0]) | .kind + "/" + .name'`

// OwnersOptions holds the flags and state of the owners command.
type OwnersOptions struct {
	*RelationOptions
	object objectRef
}

// NewCmdOwners returns the owners command.
func NewCmdOwners(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &OwnersOptions{RelationOptions: newRelationOptions(configFlags, streams)}
	cmd := &cobra.Command{
		Use:     "owners (TYPE/NAME | TYPE NAME)",
		Short:   "Show the owners of an object up to its top-level owner",
		Long:    ownersLong,
		Example: ownersExample,
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
func (o *OwnersOptions) Complete(cmd *cobra.Command, args []string) error {
	if err := o.complete(cmd); err != nil {
		return err
	}
	var err error
	o.object, err = o.parseObjectArg("show the owners of", args)
	return err
}

// Run finds and prints the owners.
func (o *OwnersOptions) Run(ctx context.Context) error {
	doc, err := o.owners(ctx)
	if err != nil {
		return err
	}
	o.printWarnings()
	return printers.PrintTree(o.Out, doc, o.printer, o.treePrintOptions())
}

func (o *OwnersOptions) owners(ctx context.Context) (*printers.TreeDocument, error) {
	rootNS, err := o.rootNamespace()
	if err != nil {
		return nil, err
	}
	// Owners of a namespaced object share its namespace or are cluster-scoped.
	ns := rootNS
	if !o.object.res.Namespaced {
		ns = metav1.NamespaceAll
	}
	w, err := o.newWorld(ctx, ns)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	if err := w.add(ctx, []informer.Resource{o.object.res}); err != nil {
		return nil, err
	}
	root, err := w.lookupRoot(o.object, rootNS)
	if err != nil {
		return nil, err
	}
	if err := w.addOwnerKinds(ctx); err != nil {
		return nil, err
	}
	g := w.graph()
	links := g.Owners(root)
	nodes := []index.Node{root}
	collectOwners(links, &nodes)
	if err := w.loadFull(ctx, nodes); err != nil {
		return nil, err
	}
	now := time.Now()
	item := w.item(root, now)
	item.Owners = ownerItems(w, links, now)
	return &printers.TreeDocument{
		APIVersion: printers.GroupListAPIVersion,
		Kind:       printers.OwnerTreeKind,
		Root:       item,
		Warnings:   o.docWarnings(),
	}, nil
}

func collectOwners(links []index.OwnerLink, nodes *[]index.Node) {
	for _, l := range links {
		if l.Owner != nil {
			*nodes = append(*nodes, *l.Owner)
			collectOwners(l.Up, nodes)
		}
	}
}

func ownerItems(w *world, links []index.OwnerLink, now time.Time) []*printers.TreeItem {
	var out []*printers.TreeItem
	for _, l := range links {
		var it *printers.TreeItem
		if l.Owner != nil {
			it = w.item(*l.Owner, now)
		} else {
			it = &printers.TreeItem{APIVersion: l.Ref.APIVersion, Kind: l.Ref.Kind, Namespace: l.Ref.Namespace, Name: l.Ref.Name, UID: string(l.Ref.UID)}
		}
		if l.Unknown {
			w.o.warn("owner %s/%s cannot be looked up: its kind cannot be listed", l.Ref.Kind, l.Ref.Name)
		}
		it.Controller = l.Controller
		it.Missing, it.Unknown, it.Cycle = l.Missing, l.Unknown, l.Cycle
		it.Owners = ownerItems(w, l.Up, now)
		out = append(out, it)
	}
	return out
}
