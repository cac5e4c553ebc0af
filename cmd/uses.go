package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var usesLong = `Show which pods and pod templates use a ConfigMap, Secret,
PersistentVolumeClaim or ServiceAccount, and how: mounted as a volume, projected,
referenced from env or envFrom, as an image pull secret, as the service account.
Given a Pod or a workload (Deployment, StatefulSet, Job, CronJob, ...), show
what it uses instead, and whether each object exists.

Pods and workloads of the namespace are read once and indexed by what their
specs refer to. Secrets are only ever read as metadata: no secret data is
fetched or printed.`

var usesExample = `  # Who mounts or references a ConfigMap
  kubectl idx uses configmap/app-config -n shop

  # Pods that would break if a Secret went away
  kubectl idx uses secret/db-credentials -n shop -o json | jq -r '.items[] | select(.kind == "Pod") | .name'

  # Everything a Deployment's pod template needs, and what is missing
  kubectl idx uses deployment/web -n shop

  # The same as a Graphviz graph: missing objects are dashed
  kubectl idx uses deployment/web -n shop -o dot | dot -Tsvg > uses.svg`

// UsesOptions holds the flags and state of the uses command.
type UsesOptions struct {
	*RelationOptions
}

// NewCmdUses returns the uses command.
func NewCmdUses(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &UsesOptions{RelationOptions: newGraphOptions(f, streams)}
	return o.newRelationCmd(&cobra.Command{
		Use:     "uses (TYPE/NAME | TYPE NAME)",
		Short:   "Show what uses a ConfigMap, Secret, PVC or ServiceAccount, or what a pod uses",
		Long:    usesLong,
		Example: usesExample,
	}, o)
}

// Complete resolves the clients and the object.
func (o *UsesOptions) Complete(cmd *cobra.Command, args []string) error {
	return o.completeObject(cmd, "show the uses of", args)
}

// checkKind refuses an object uses cannot answer for.
func (o *UsesOptions) checkKind() error {
	gk := o.object.Resource.GVK.GroupKind()
	if !query.IsUsesSubject(gk) && !index.HasPodSpec(gk) {
		return fmt.Errorf("uses needs a ConfigMap, Secret, PersistentVolumeClaim or ServiceAccount, or an object with a pod spec (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController, PodTemplate); %s is neither", o.object)
	}
	return nil
}

// Run answers and prints.
func (o *UsesOptions) Run(ctx context.Context) error {
	if o.contexts != nil {
		return o.runDocuments(ctx, func(ctx context.Context, c *RelationOptions) (printers.ContextDocument, error) {
			if err := c.resolveObject(); err != nil {
				return printers.ContextDocument{}, err
			}
			if err := (&UsesOptions{RelationOptions: c}).checkKind(); err != nil {
				return printers.ContextDocument{}, err
			}
			doc, err := c.session().Uses(ctx, c.object)
			return printers.ContextDocument{List: doc}, err
		})
	}
	if err := o.resolveObject(); err != nil {
		return err
	}
	if err := o.checkKind(); err != nil {
		return err
	}
	doc, err := o.session().Uses(ctx, o.object)
	if err != nil {
		return err
	}
	o.printWarnings(doc.Warnings)
	if len(doc.Items) == 0 && printers.IsHuman(o.format) {
		fmt.Fprintf(o.ErrOut, "Nothing found: %s %s\n", o.object, map[string]string{"users": "is not used by any pod or pod template", "uses": "uses nothing"}[doc.Direction])
	}
	if printers.IsGraph(o.format) {
		return printers.PrintUsesGraph(o.Out, doc, o.format)
	}
	return printers.PrintRelationList(o.Out, doc, o.printer, o.treePrintOptions())
}
