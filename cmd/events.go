package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/events"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	// Value types (Resource, Reconnect) of the watch callbacks; no informer starts here.
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
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
watch expiry and API server restarts as kubectl idx watch does. The table is
kubectl events -w's; -o json prints kubectl idx watch's lines,
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

	// sinceSet and untilSet record that the flags were given, so that an
	// explicit 0 is refused rather than read as unset.
	sinceSet, untilSet bool
	// now is the clock of the time window; nil means time.Now.
	now func() time.Time
	// getMetadata reads the root's metadata under -w; nil means the
	// session's metadata client. Tests swap in the fake's.
	getMetadata func(ctx context.Context, res informer.Resource, namespace, name string) (metav1.Object, error)
	// stderr serializes warnings, which informer goroutines write under -w.
	stderr sync.Mutex
}

// NewCmdEvents returns the events command.
func NewCmdEvents(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &EventsOptions{RelationOptions: newRelationOptions(f, streams)}
	cmd := o.newRelationCmd(&cobra.Command{
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
	return cmd
}

// Complete resolves the clients and keeps the object's arguments.
func (o *EventsOptions) Complete(cmd *cobra.Command, args []string) error {
	if cmd != nil {
		o.sinceSet, o.untilSet = cmd.Flags().Changed("since"), cmd.Flags().Changed("until")
	}
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
	return nil
}

// eventsOptions turns the flags into the engine's filters; the kinds are
// resolved through discovery.
func (o *EventsOptions) eventsOptions() (query.EventsOptions, error) {
	opts := query.EventsOptions{Types: o.Types}
	now := time.Now
	if o.now != nil {
		now = o.now
	}
	t := now()
	if o.Since > 0 {
		opts.Since = t.Add(-o.Since)
	}
	if o.Until > 0 {
		opts.Until = t.Add(-o.Until)
	}
	for _, k := range o.ForKinds {
		m, err := query.MappingFor(o.mapper, k)
		if err != nil {
			return opts, err
		}
		gk := m.GroupVersionKind.GroupKind()
		if !containsKind(opts.Kinds, gk) {
			opts.Kinds = append(opts.Kinds, gk)
		}
	}
	return opts, nil
}

func containsKind(kinds []schema.GroupKind, gk schema.GroupKind) bool {
	for _, k := range kinds {
		if k == gk {
			return true
		}
	}
	return false
}

// Run finds and prints the events, oldest first, or with -w follows them.
func (o *EventsOptions) Run(ctx context.Context) error {
	if o.contexts != nil {
		return o.runContexts(ctx)
	}
	if err := o.resolveObject(); err != nil {
		return err
	}
	opts, err := o.eventsOptions()
	if err != nil {
		return err
	}
	if o.Watch {
		return o.runWatch(ctx, opts)
	}
	s := o.session()
	evs, err := s.Events(ctx, o.object, opts)
	if err != nil {
		return err
	}
	warnings := s.Warnings()
	o.printWarnings(warnings)
	if printers.IsHuman(o.format) {
		if len(evs) == 0 {
			if o.object.Resource.Namespaced && !o.AllNamespaces {
				fmt.Fprintf(o.ErrOut, "No events found in %s namespace.\n", o.objectNamespace())
			} else {
				fmt.Fprintln(o.ErrOut, "No events found.")
			}
			return nil
		}
		tw := cliprinters.GetNewTabWriter(o.Out)
		p := &events.EventPrinter{NoHeaders: *o.PrintFlags.NoHeaders, AllNamespaces: o.AllNamespaces || !o.object.Resource.Namespaced}
		list := &corev1.EventList{Items: make([]corev1.Event, len(evs))}
		for i, e := range evs {
			list.Items[i] = *e
		}
		if err := p.PrintObj(list, tw); err != nil {
			return err
		}
		return tw.Flush()
	}
	objs := make([]runtime.Object, len(evs))
	for i, e := range evs {
		objs[i] = e
	}
	groups := []printers.Group{{GVK: query.EventsGVK, Namespaced: true, Objects: objs}}
	_, err = printers.Print(o.Out, groups, o.printer, printers.Options{Format: o.format, Now: time.Now(), Warnings: warnings})
	return err
}

// runWatch asks the engine for the feed of events and prints it until ctx
// ends or stdout closes.
func (o *EventsOptions) runWatch(ctx context.Context, opts query.EventsOptions) error {
	// Stop when stdout's reader has gone, as kubectl idx watch does.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if closed := stdoutClosed(o.Out); closed != nil {
		go func() {
			select {
			case <-closed:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	out := bufio.NewWriterSize(o.Out, 64<<10)
	p := printers.NewEventsWatchPrinter(printers.EventsWatchOptions{
		Format:        o.format,
		NoHeaders:     *o.PrintFlags.NoHeaders,
		AllNamespaces: !o.object.Resource.Namespaced,
		Source:        printers.WatchSource{GVK: query.EventsGVK},
	}, o.printer)
	s := o.session()
	if o.getMetadata != nil {
		cfg := s.Config()
		cfg.GetMetadata = o.getMetadata
		s = query.NewSession(cfg)
	}
	err := s.WatchEvents(ctx, o.object, query.WatchEventsOptions{
		EventsOptions: opts,
		OnWatchLost: func(res informer.Resource, err error) {
			o.warnf("watch of %s interrupted: %s; reconnecting", res.Name(), watchCause(err))
		},
		OnWatchRestored: func(r informer.Reconnect) {
			o.warnf("watch of %s reconnected after %s", r.Resource.Name(), roundDuration(r.Down))
		},
		Warn: func(err error) { o.warnf("%s", err) },
	},
		func(ev *feed.Event) error { return p.Print(out, ev) },
		func() error {
			if err := p.Flush(out); err != nil {
				return err
			}
			return out.Flush()
		})
	return err
}

func (o *EventsOptions) warnf(format string, args ...any) {
	o.stderr.Lock()
	defer o.stderr.Unlock()
	fmt.Fprintf(o.ErrOut, "warning: "+format+"\n", args...)
}

// contextEvents is one context's events of the object.
type contextEvents struct {
	events   []*corev1.Event
	warnings []string
	// namespaced is the object's scope, as the context's server maps it.
	namespaced bool
}

// runContexts asks every context for the object's events and prints them
// together: kubectl's events table with a CONTEXT column first, or a List of
// one List per context.
func (o *EventsOptions) runContexts(ctx context.Context) error {
	if o.Watch {
		return errors.New("kubectl idx events --watch follows one cluster: name one context, or follow several with kubectl idx watch events --context a,b")
	}
	results := fanOut(ctx, o.contexts, func(ctx context.Context, name string) (*contextEvents, error) {
		c, err := o.forContext(name)
		if err != nil {
			return nil, err
		}
		if err := c.resolveObject(); err != nil {
			return nil, err
		}
		e := &EventsOptions{RelationOptions: c, Types: o.Types, Since: o.Since, Until: o.Until, ForKinds: o.ForKinds, now: o.now}
		opts, err := e.eventsOptions()
		if err != nil {
			return nil, err
		}
		s := c.session()
		evs, err := s.Events(ctx, c.object, opts)
		if err != nil {
			return nil, err
		}
		return &contextEvents{events: evs, warnings: s.Warnings(), namespaced: c.object.Resource.Namespaced}, nil
	})
	var infos []printers.ContextInfo
	var groups []printers.Group
	var warnings []string
	failed := 0
	namespaced := true
	for _, r := range results {
		info := printers.ContextInfo{Name: r.Context}
		if r.Err != nil {
			failed++
			info.Error = warningText(r.Err)
			warnings = append(warnings, contextWarnings(r.Context, r.Err)...)
		}
		if a := r.Answer; a != nil {
			namespaced = a.namespaced
			info.Warnings = a.warnings
			for _, w := range a.warnings {
				warnings = append(warnings, prefixContext(r.Context, w))
			}
			objs := make([]runtime.Object, len(a.events))
			for i, e := range a.events {
				objs[i] = e
			}
			groups = append(groups, printers.Group{GVK: query.EventsGVK, Namespaced: true, Objects: objs, Context: r.Context})
		}
		infos = append(infos, info)
	}
	o.printWarnings(warnings)
	outcome := contextsOutcome(failed, len(results))
	if failed == len(results) {
		return outcome
	}
	if !printers.IsHuman(o.format) {
		if _, err := printers.Print(o.Out, groups, o.printer, printers.Options{Format: o.format, Now: time.Now(), Warnings: warnings, Contexts: infos}); err != nil {
			return err
		}
		return outcome
	}
	// kubectl's events printer, each context's rows after its name.
	tw := cliprinters.GetNewTabWriter(o.Out)
	headed := *o.PrintFlags.NoHeaders
	for _, g := range groups {
		if len(g.Objects) == 0 {
			continue
		}
		list := &corev1.EventList{Items: make([]corev1.Event, len(g.Objects))}
		for i, e := range g.Objects {
			list.Items[i] = *e.(*corev1.Event)
		}
		var buf bytes.Buffer
		p := &events.EventPrinter{NoHeaders: headed, AllNamespaces: o.AllNamespaces || !namespaced}
		if err := p.PrintObj(list, &buf); err != nil {
			return err
		}
		for i, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			cell := g.Context
			if i == 0 && !headed {
				cell = "CONTEXT"
			}
			fmt.Fprintf(tw, "%s\t%s\n", cell, line)
		}
		headed = true
	}
	if !headed || total(groups) == 0 {
		fmt.Fprintln(o.ErrOut, "No events found.")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return outcome
}

// total counts the objects of groups.
func total(groups []printers.Group) int {
	n := 0
	for _, g := range groups {
		n += len(g.Objects)
	}
	return n
}
