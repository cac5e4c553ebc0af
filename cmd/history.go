package cmd

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var historyLong = `Show what changed under an object, and when, and who changed it, from what
the cluster already keeps, oldest first: the object, everything it owns (as
kubectl idx tree finds it) and, with --uses, the ConfigMaps, Secrets, claims
and ServiceAccount its pod template uses.

Each line names its source:

  revision       the revisions the controllers keep of a pod template: a
                 Deployment's ReplicaSets, a StatefulSet's or DaemonSet's
                 ControllerRevisions, each diffed against the one before, as
                 kubectl rollout history --revision=N prints them
  managedFields  who last wrote which field, and when: read for the object,
                 its revisions and what it uses, nowhere else
  event          the Events of the objects; the API server keeps an event
                 about an hour after it last happened (its --event-ttl: say
                 another with this command's --event-ttl)
  object         the objects' creation, and a deletion under way
  checkpoint     what a kubectl idx watch --checkpoint FILE recorded, given
                 --from-checkpoint FILE: when each object last changed while it
                 ran, which changed or went since; it keeps versions, not
                 content

A change is attributed to the managers that own its fields now, when no later
revision changed them again, and a rollout to the managers whose last write
came when it was made; list entries are matched by their merge keys
(containers and env by name, ports by containerPort), never by index.

Every stretch of the window no source covers is a gap line, with why each
source does not reach it; -o json lists the same in "coverage" and "gaps". The
window starts when the object was created, or --since ago. --where keeps the
entries whose object, as it is now, matches.`

var historyExample = `  # What changed under a Deployment, and who changed it
  kubectl idx history deployment/web -n shop

  # The last three hours, the ConfigMaps and Secrets it uses included
  kubectl idx history deployment/web -n shop --since 3h --uses

  # With what a feed recorded while it ran (kubectl idx watch ... --checkpoint web.cp)
  kubectl idx history deployment/web -n shop --from-checkpoint web.cp

  # Who changed the pod template, revision by revision, with jq
  kubectl idx history deployment/web -n shop -o json | jq -r '.entries[] | select(.source == "revision") | "\(.revision.number) \([.managers[].manager] | join(","))"'

  # The stretches nothing covers, on a cluster whose API server keeps events 3 hours
  kubectl idx history deployment/web -n shop --since 24h --event-ttl 3h -o json | jq -r '.gaps[] | "\(.from) \(.to)"'`

// HistoryOptions holds the flags and state of the history command.
type HistoryOptions struct {
	*RelationOptions
	// Since is --since; zero starts the window at the object's creation.
	Since time.Duration
	// Uses is --uses.
	Uses bool
	// FromCheckpoint is --from-checkpoint's path, "" for none.
	FromCheckpoint string
	// EventTTL is --event-ttl: how long the API server keeps an event.
	EventTTL time.Duration

	sinceSet, eventTTLSet bool
	// now is the clock the window ends at; nil means time.Now.
	now func() time.Time
}

// NewCmdHistory returns the history command.
func NewCmdHistory(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &HistoryOptions{RelationOptions: newRelationOptions(f, streams)}
	cmd := o.newObjectCmd(&cobra.Command{
		Use:     "history (TYPE/NAME | TYPE NAME) [--since=DURATION] [--uses] [--from-checkpoint=FILE]",
		Short:   "Show what changed under an object, when, and who changed it",
		Long:    historyLong,
		Example: historyExample,
	}, o)
	cmd.Flags().DurationVar(&o.Since, "since", 0, "Only what happened within a relative duration like 5s, 2m, or 3h; the stretches of it no source covers are gaps. Defaults to the object's whole life.")
	cmd.Flags().BoolVar(&o.Uses, "uses", false, "Also show what happened to the ConfigMaps, Secrets (their metadata only), PersistentVolumeClaims and ServiceAccount the object's pod spec uses.")
	cmd.Flags().DurationVar(&o.EventTTL, "event-ttl", query.DefaultEventTTL, "How long the API server keeps an event after it last happened (its own --event-ttl flag). The events are taken to cover this last stretch of the window only: before it, a stretch no other source covers is a gap.")
	cmd.Flags().StringVar(&o.FromCheckpoint, "from-checkpoint", "", "Fold in what the kubectl idx watch --checkpoint file at this path recorded: when each object last changed while the feed ran, and what changed or went since. Read only, never locked or written; refused if it was written for another cluster or another feed.")
	return cmd
}

// Complete resolves the clients and keeps the object's arguments.
func (o *HistoryOptions) Complete(cmd *cobra.Command, args []string) error {
	if cmd != nil {
		o.sinceSet = cmd.Flags().Changed("since")
		o.eventTTLSet = cmd.Flags().Changed("event-ttl")
	}
	return o.completeObject(cmd, "show the history of", args)
}

// Validate checks the shared flags and --since; it does no I/O.
func (o *HistoryOptions) Validate() error {
	if err := o.RelationOptions.Validate(); err != nil {
		return err
	}
	// kubectl logs' wording for --since.
	if o.Since < 0 || o.sinceSet && o.Since == 0 {
		return errors.New("--since must be greater than 0")
	}
	if o.EventTTL < 0 || o.eventTTLSet && o.EventTTL == 0 {
		return errors.New("--event-ttl must be greater than 0")
	}
	return nil
}

// historyOptions are the engine's options of the flags.
func (o *HistoryOptions) historyOptions() query.HistoryOptions {
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	opts := query.HistoryOptions{Now: now(), Uses: o.Uses, Checkpoint: o.FromCheckpoint, EventTTL: o.EventTTL}
	if o.Since > 0 {
		opts.Since = opts.Now.Add(-o.Since)
	}
	if o.FromCheckpoint != "" && !o.several() {
		// A name that cannot be read is no name, as for --checkpoint.
		opts.ContextName, _ = query.ContextName(o.ConfigFlags)
	}
	return opts
}

// Run asks every context for the object's history and reports it.
func (o *HistoryOptions) Run(ctx context.Context) error {
	opts := o.historyOptions()
	answers := askObject(ctx, o.RelationOptions, func(s *query.Session, ctx context.Context, obj query.ObjectRef) (*v1alpha1.History, error) {
		return s.History(ctx, obj, opts)
	})
	return printDocuments(o.RelationOptions, answers, "")
}
