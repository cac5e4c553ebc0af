package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
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

// usesCommand describes the uses command.
var usesCommand = &objectCommand[*v1alpha1.RelationList]{
	use:     "uses (TYPE/NAME | TYPE NAME)",
	short:   "Show what uses a ConfigMap, Secret, PVC or ServiceAccount, or what a pod uses",
	long:    usesLong,
	example: usesExample,
	verb:    "show the uses of",
	graphs:  true,
	ask:     askUses,
	nothing: usesNothing,
}

// NewCmdUses returns the uses command.
func NewCmdUses(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	return usesCommand.newCmd(f, streams)
}

// askUses asks what uses the object, or what it uses; it refuses an object
// uses cannot answer for.
func askUses(s *query.Session, ctx context.Context, obj query.ObjectRef) (*v1alpha1.RelationList, error) {
	gk := obj.Resource.GVK.GroupKind()
	if !query.IsUsesSubject(gk) && !index.HasPodSpec(gk) {
		return nil, fmt.Errorf("uses needs a ConfigMap, Secret, PersistentVolumeClaim or ServiceAccount, or an object with a pod spec (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController, PodTemplate); %s is neither", obj)
	}
	return s.Uses(ctx, obj)
}

// usesNothing is the notice of an answer that found nothing: what the
// object is not used by, or that it uses nothing.
func usesNothing(answers []query.Answer[*v1alpha1.RelationList]) string {
	nothing := ""
	for _, a := range answers {
		if l := a.Value; l != nil && l.Subject != nil {
			subject := strings.ToLower(l.Subject.Kind) + "/" + l.Subject.Name
			nothing = "Nothing found: " + subject + map[string]string{"users": " is not used by any pod or pod template", "uses": " uses nothing"}[l.Direction]
		}
	}
	return nothing
}
