package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var whyLong = `Say why an object is not serving: walk down what it owns (a Deployment's
ReplicaSets and Pods, a CronJob's last Job) to the causes, each as one line,
worst first: the reason, the object to fix, one sentence and the evidence read
(an event, a condition or a field). Nothing wrong: it says so.

The reason is the Kubernetes one where the evidence carries one
(FailedScheduling, FailedCreate, ImagePullBackOff, CrashLoopBackOff,
ProgressDeadlineExceeded, BackoffLimitExceeded, ...), else kubectl-idx's own
(MissingReference, RolloutStuck, NoReadyPods, NodeNotSchedulable, Suspended).
When something is wrong and no evidence names a cause, the line says Unknown
and what was looked at.

Objects: Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs,
Pods, Services (with the owners of the pods they select), PersistentVolumeClaims,
Nodes, and custom resources through what they own. Without an object, every
top-level owner of the namespace (every namespace with -A), and every Service,
is diagnosed.

Only the object's namespace is read, and of it only the kinds its subtree is
made of, with the Services, PodDisruptionBudgets, claims, Warning events and
nodes a diagnosis looks up; references are checked by name, a Secret's data is
never read. A type you may not list is a warning naming it, and -o json lists
it under unseen.

Exit status: 0 healthy; 3 causes found; 4 something is wrong and no evidence
names a cause (Unknown); 1 an error; 2 some contexts could not answer and the
others found nothing wrong. 3 and 4 win over 2.`

var whyExample = `  # Why is this Deployment not serving?
  kubectl idx why deployment/web -n shop

  # Every top-level owner of a namespace, and of every namespace
  kubectl idx why -n shop
  kubectl idx why -A

  # The Diagnosis document, for scripts: the culprits of the causes
  kubectl idx why deployment/web -n shop -o json | jq -r '.causes[] | "\(.reason) \(.object.kind)/\(.object.name)"'

  # In a script: act on the verdict
  kubectl idx why deployment/web -n shop -o name >/dev/null; echo $?`

// Exit codes of why, beside ExitError and ExitPartial: the verdict of an
// answer in full.
const (
	// ExitUnhealthy: causes were found.
	ExitUnhealthy = 3
	// ExitUnknown: a subject is not as its spec asks and no evidence names a
	// cause.
	ExitUnknown = 4
)

// WhyOptions holds the flags and state of the why command.
type WhyOptions struct {
	*RelationOptions
	// all is set when no object is named: every top-level owner.
	all bool
	// wholePods is query.WhyPodsEnv's whole.
	wholePods bool
}

// NewCmdWhy returns the why command.
func NewCmdWhy(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &WhyOptions{RelationOptions: newRelationOptions(f, streams)}
	return o.newObjectCmd(&cobra.Command{
		Use:     "why [(TYPE/NAME | TYPE NAME)]",
		Short:   "Say why an object is not serving, walked down what it owns to the causes",
		Long:    whyLong,
		Example: whyExample,
	}, o)
}

// Complete resolves the clients and keeps the object's arguments, if any.
func (o *WhyOptions) Complete(cmd *cobra.Command, args []string) error {
	var err error
	if o.wholePods, err = query.WholePodsFromEnv(); err != nil {
		return err
	}
	if len(args) == 0 {
		o.all = true
		return o.complete(cmd)
	}
	return o.completeObject(cmd, "diagnose", args)
}

// Run asks every context for its diagnosis, prints it and exits with its
// verdict.
func (o *WhyOptions) Run(ctx context.Context) error {
	if o.run != nil && o.run.heapFloor != nil {
		// It keeps every type it reads until all are diagnosed.
		o.run.heapFloor()
	}
	var answers []query.Answer[*v1alpha1.Diagnosis]
	if o.all {
		answers = query.Ask(ctx, o.targets, o.config(), func(ctx context.Context, s *query.Session) (*v1alpha1.Diagnosis, error) {
			return s.WhyAll(ctx, query.WhyOptions{WholePods: o.wholePods})
		})
	} else {
		answers = askObject(ctx, o.RelationOptions, func(s *query.Session, ctx context.Context, obj query.ObjectRef) (*v1alpha1.Diagnosis, error) {
			return s.Why(ctx, obj, query.WhyOptions{})
		})
	}
	err := printDocuments(o.RelationOptions, answers, "")
	return whyOutcome(answers, err)
}

// whyOutcome is why's exit: the verdict of the answers (Unhealthy before
// Unknown) over a partial answer's ExitPartial; report's error when no
// context answered.
func whyOutcome(answers []query.Answer[*v1alpha1.Diagnosis], err error) error {
	var exit *exitError
	if err != nil && !errors.As(err, &exit) {
		return err
	}
	code := 0
	for _, a := range answers {
		if a.Value == nil {
			continue
		}
		switch a.Value.Status {
		case v1alpha1.DiagnosisUnhealthy:
			code = ExitUnhealthy
		case v1alpha1.DiagnosisUnknown:
			if code == 0 {
				code = ExitUnknown
			}
		}
	}
	if code == 0 {
		return err
	}
	return &exitError{code: code, msg: fmt.Sprintf("exit code %d", code), verdict: true}
}
