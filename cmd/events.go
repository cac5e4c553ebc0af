package cmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/cmd/events"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

var eventsLong = `List the events of an object and of everything it owns, directly or through
other objects: a Deployment's events with those of its ReplicaSets and Pods.
Newest last, as kubectl events prints them.

The tree is found as kubectl idx tree finds it; the namespace's events are read
once and matched to the tree's objects through an index on the object each
event is about.

Without an object, kubectl idx events lists the Event objects themselves, as
kubectl get events does.`

var eventsExample = `  # Everything that happened under a Deployment
  kubectl idx events deployment/web -n shop

  # Only warnings
  kubectl idx events deployment/web -n shop --types Warning

  # Warning reasons and counts, with jq
  kubectl idx events deployment/web -n shop -o json | jq -r '.items[] | select(.type == "Warning") | .reason' | sort | uniq -c`

var eventsResource = informer.Resource{
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "events"},
	GVK:        schema.GroupVersionKind{Version: "v1", Kind: "Event"},
	Namespaced: true,
}

// EventsOptions holds the flags and state of the events command.
type EventsOptions struct {
	*RelationOptions
	Types  []string
	object objectRef
}

// NewCmdEvents returns the events command.
func NewCmdEvents(configFlags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &EventsOptions{RelationOptions: newRelationOptions(configFlags, streams)}
	cmd := &cobra.Command{
		Use:     "events (TYPE/NAME | TYPE NAME) [--types=Normal,Warning]",
		Short:   "List the events of an object and of everything it owns",
		Long:    eventsLong,
		Example: eventsExample,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(cmd, args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringSliceVar(&o.Types, "types", nil, "Output only events of given types.")
	return cmd
}

// Complete resolves the clients and the object.
func (o *EventsOptions) Complete(cmd *cobra.Command, args []string) error {
	if err := o.complete(cmd); err != nil {
		return err
	}
	// A wrong --types needs no server: say so before discovery does.
	if err := o.Validate(); err != nil {
		return err
	}
	var err error
	o.object, err = o.parseObjectArg("list the events of", args)
	return err
}

// Validate checks --types as kubectl events does.
func (o *EventsOptions) Validate() error {
	for _, t := range o.Types {
		if !strings.EqualFold(t, corev1.EventTypeWarning) && !strings.EqualFold(t, corev1.EventTypeNormal) {
			return fmt.Errorf("valid --types are Normal or Warning")
		}
	}
	return nil
}

// Run collects and prints the events.
func (o *EventsOptions) Run(ctx context.Context) error {
	evs, err := o.events(ctx)
	if err != nil {
		return err
	}
	o.printWarnings()
	if printers.IsHuman(o.format) {
		if len(evs) == 0 {
			ns := o.object.res.Namespaced && !o.AllNamespaces
			if rootNS, _ := o.rootNamespace(); ns {
				fmt.Fprintf(o.ErrOut, "No events found in %s namespace.\n", rootNS)
			} else {
				fmt.Fprintln(o.ErrOut, "No events found.")
			}
			return nil
		}
		tw := cliprinters.GetNewTabWriter(o.Out)
		p := &events.EventPrinter{NoHeaders: *o.PrintFlags.NoHeaders, AllNamespaces: o.AllNamespaces || !o.object.res.Namespaced}
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
	groups := []printers.Group{{GVK: eventsResource.GVK, Namespaced: true, Objects: objs}}
	_, err = printers.Print(o.Out, groups, o.printer, printers.Options{Format: o.format, Now: time.Now(), Warnings: o.warnings})
	return err
}

// events returns the events of the tree under the object, oldest first.
func (o *EventsOptions) events(ctx context.Context) ([]*corev1.Event, error) {
	w, tree, err := o.descendants(ctx, o.object)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	inf, err := w.factory.Informer(eventsResource, informer.Full, cache.Indexers{index.InvolvedObjectIndex: index.InvolvedObjectIndexFunc})
	if err != nil {
		return nil, err
	}
	// Without events there is no answer: a failure is the error itself. The
	// types that failed while the tree was built are in the same factory and
	// fail again here; they were warned about already.
	skipped, err := w.factory.WaitForSyncPartial(ctx)
	if err != nil {
		return nil, err
	}
	for _, s := range skipped {
		if s.Resource.GVR == eventsResource.GVR && s.Mode == informer.Full {
			return nil, s.Err
		}
	}
	store := inf.GetIndexer()
	seen := map[types.UID]bool{}
	var out []*corev1.Event
	for _, n := range flatten(tree) {
		keys := []string{string(n.Object.GetUID()), index.InvolvedObjectKey(n.GVK.Kind, n.Object.GetNamespace(), n.Object.GetName())}
		for _, key := range keys {
			objs, err := store.ByIndex(index.InvolvedObjectIndex, key)
			if err != nil {
				return nil, err
			}
			for _, obj := range objs {
				e := obj.(*corev1.Event)
				if seen[e.UID] || !o.wantType(e.Type) {
					continue
				}
				seen[e.UID] = true
				out = append(out, e)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b *corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	return out, nil
}

func (o *EventsOptions) wantType(t string) bool {
	if len(o.Types) == 0 {
		return true
	}
	for _, want := range o.Types {
		if strings.EqualFold(want, t) {
			return true
		}
	}
	return false
}

// eventTime is the time kubectl events sorts by: the series' last
// observation, else the last timestamp, else the event time.
func eventTime(e *corev1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}
