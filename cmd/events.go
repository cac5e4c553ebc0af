package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var eventsLong = `List the events of an object and of everything it owns, directly or through
other objects: a Deployment's events with those of its ReplicaSets and Pods.
Newest last, as kubectl events prints them.

The tree is found as kubectl idx tree finds it; the namespace's events are read
once and matched to the tree's objects through an index on the object each
event is about.

An event's time is when it last happened: its series.lastObservedTime, else its
lastTimestamp, else its eventTime (events recorded through events.k8s.io/v1,
such as kube-scheduler's, carry eventTime and series, not lastTimestamp).
--since keeps the events whose time is within the duration, --until those whose
time is at least that long ago; durations are read as kubectl logs --since
reads them (5s, 2m, 3h).

With -w, the events come as a feed: the current ones (after --since), then
every event recorded or repeated, also about objects that join the tree later
(the ReplicaSet of a new rollout and its pods). Each repetition of an event (a
count or series update) is one MODIFIED, never a duplicate. The feed survives
watch expiry and API server restarts as kubectl idx watch does, and resumes
across its own restarts with --checkpoint FILE as kubectl idx watch does. The
table is kubectl events -w's; -o json prints kubectl idx watch's lines,
{"type", "time", "object": <Event>}, expired events as DELETED.

Without an object, kubectl idx events lists the Event objects themselves, as
kubectl get events does; --since, --until, -w, --for-kind and --types need an
object.`

var eventsExample = `  # Everything that happened under a Deployment
  kubectl idx events deployment/web -n shop

  # Only warnings
  kubectl idx events deployment/web -n shop --types Warning

  # What happened in the last ten minutes, but not in the last two
  kubectl idx events deployment/web -n shop --since 10m --until 2m

  # Pod events of the last hour, then new ones as they happen, rollouts included
  kubectl idx events deployment/web -n shop --for-kind pods --since 1h -w

  # Warning reasons and counts, with jq
  kubectl idx events deployment/web -n shop -o json | jq -r '.items[] | select(.type == "Warning") | .reason' | sort | uniq -c`

// EventsOptions holds the flags and state of the events command.
type EventsOptions struct {
	*RelationOptions
	Types []string
	// Since and Until are --since and --until; zero is unset.
	Since, Until time.Duration
	// ForKinds are the types of --for-kind, as given.
	ForKinds []string
	// Watch is -w.
	Watch bool
	checkpointFlag

	// sinceSet and untilSet record that the flags were given, so that an
	// explicit 0 is refused rather than read as unset.
	sinceSet, untilSet bool
	// now is the clock of the time window; nil means time.Now.
	now func() time.Time
}

// NewCmdEvents returns the events command.
func NewCmdEvents(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &EventsOptions{RelationOptions: newRelationOptions(f, streams)}
	cmd := o.newObjectCmd(&cobra.Command{
		Use:     "events (TYPE/NAME | TYPE NAME) [--types=Normal,Warning] [--since=DURATION] [--until=DURATION] [--for-kind=TYPE,...] [-w]",
		Short:   "List the events of an object and of everything it owns",
		Long:    eventsLong,
		Example: eventsExample,
	}, o)
	cmd.Flags().StringSliceVar(&o.Types, "types", nil, "Output only events of given types.")
	cmd.Flags().DurationVar(&o.Since, "since", 0, "Only events whose last occurrence is newer than a relative duration like 5s, 2m, or 3h. Defaults to all events.")
	cmd.Flags().DurationVar(&o.Until, "until", 0, "Only events whose last occurrence is at least a relative duration like 5s, 2m, or 3h ago. Defaults to all events. Cannot be used with --watch.")
	cmd.Flags().StringSliceVar(&o.ForKinds, "for-kind", nil, "Only events about objects of these types (e.g. pods,replicasets), anywhere in the tree. Unlike kubectl events --for, which names one object, this names types.")
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "After listing the events, watch for more, also about objects that join the tree later.")
	o.checkpointFlag.addFlag(cmd)
	return cmd
}

// Complete resolves the clients and keeps the object's arguments.
func (o *EventsOptions) Complete(cmd *cobra.Command, args []string) error {
	if cmd != nil {
		o.sinceSet, o.untilSet = cmd.Flags().Changed("since"), cmd.Flags().Changed("until")
	}
	o.follows = o.Watch
	return o.completeObject(cmd, "list the events of", args)
}

// Validate checks the shared flags, --types, the time window, --for-kind and
// -w; it does no I/O.
func (o *EventsOptions) Validate() error {
	if err := o.RelationOptions.Validate(); err != nil {
		return err
	}
	for _, t := range o.Types {
		if !strings.EqualFold(t, corev1.EventTypeWarning) && !strings.EqualFold(t, corev1.EventTypeNormal) {
			return fmt.Errorf("valid --types are Normal or Warning")
		}
	}
	// kubectl logs' wording for --since.
	if o.Since < 0 || o.sinceSet && o.Since == 0 {
		return errors.New("--since must be greater than 0")
	}
	if o.Until < 0 || o.untilSet && o.Until == 0 {
		return errors.New("--until must be greater than 0")
	}
	if o.Watch && (o.Until != 0 || o.untilSet) {
		return errors.New("--until cannot be used with --watch: events recorded while watching are newer than any end")
	}
	if o.Since != 0 && o.Until >= o.Since {
		return fmt.Errorf("--until must be less than --since: no event is at least %s old and at most %s old", o.Until, o.Since)
	}
	for _, k := range o.ForKinds {
		if k == "" || strings.Contains(k, "/") {
			return fmt.Errorf("--for-kind takes types such as pods or replicasets.apps, got %q; name the object as the argument", k)
		}
	}
	if o.Watch && strings.HasPrefix(o.format, "custom-columns") {
		return fmt.Errorf("--watch cannot be used with -o %s: use the default table, json, yaml, name, jsonpath or a template", o.format)
	}
	if o.Checkpoint != "" && !o.Watch {
		return errors.New("--checkpoint can only be used with --watch: it records where a feed stands")
	}
	return nil
}

// eventsQuery is the engine's filters of the flags.
func (o *EventsOptions) eventsQuery() query.EventsFeedQuery {
	return query.EventsFeedQuery{Types: o.Types, ForKinds: o.ForKinds, Since: o.Since, Until: o.Until, Now: o.now}
}

// Run asks every context for the object's events, oldest first, and reports
// them; with -w it follows them.
func (o *EventsOptions) Run(ctx context.Context) error {
	if o.Watch {
		return o.runWatch(ctx)
	}
	answers := askObject(ctx, o.RelationOptions, func(s *query.Session, ctx context.Context, obj query.ObjectRef) (*query.Listing, error) {
		opts, err := o.eventsQuery().Options(s)
		if err != nil {
			return nil, err
		}
		return s.EventList(ctx, obj, opts)
	})
	nothing := printers.Notice(printers.ListingScopes(answers), "No events found.", "No events found in %s namespace.")
	return report(o.QueryOptions, answers, nothing, func(answers []query.Answer[*query.Listing], warnings []string) (int, error) {
		if o.human() {
			return printers.PrintEventTable(o.Out, answers, *o.PrintFlags.NoHeaders)
		}
		return printers.PrintListing(o.Out, answers, o.printer, o.printOptions(warnings), nil)
	})
}

// runWatch follows the feed of the object's events, of every context,
// until ctx ends or stdout closes.
func (o *EventsOptions) runWatch(ctx context.Context) error {
	q := query.FeedQuery{
		Object:     &query.ObjectArg{Type: o.typ, Name: o.name},
		Events:     o.eventsQuery(),
		Checkpoint: o.Checkpoint,
	}
	return o.follow(ctx, q, func(plans []query.FeedPlan, _ []schema.GroupVersionKind) (query.EventPrinter, error) {
		return printers.NewEventsWatchPrinter(printers.EventsWatchOptions{
			Format:    o.format,
			NoHeaders: *o.PrintFlags.NoHeaders,
			// kubectl events -A's NAMESPACE column, for an object whose
			// dependents are anywhere.
			AllNamespaces: !plans[0].Object.Resource.Namespaced,
			Contexts:      o.several(),
			Source:        printers.WatchSource{GVK: query.EventsGVK},
		}, o.printer), nil
	})
}
