package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/events"

	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
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

// EventsOptions holds the flags and state of the events command.
type EventsOptions struct {
	*RelationOptions
	Types []string
}

// NewCmdEvents returns the events command.
func NewCmdEvents(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &EventsOptions{RelationOptions: newRelationOptions(f, streams)}
	cmd := o.newRelationCmd(&cobra.Command{
		Use:     "events (TYPE/NAME | TYPE NAME) [--types=Normal,Warning]",
		Short:   "List the events of an object and of everything it owns",
		Long:    eventsLong,
		Example: eventsExample,
	}, o)
	cmd.Flags().StringSliceVar(&o.Types, "types", nil, "Output only events of given types.")
	return cmd
}

// Complete resolves the clients and keeps the object's arguments.
func (o *EventsOptions) Complete(cmd *cobra.Command, args []string) error {
	return o.completeObject(cmd, "list the events of", args)
}

// Validate checks the shared flags and --types; it does no I/O.
func (o *EventsOptions) Validate() error {
	if err := o.RelationOptions.Validate(); err != nil {
		return err
	}
	for _, t := range o.Types {
		if !strings.EqualFold(t, corev1.EventTypeWarning) && !strings.EqualFold(t, corev1.EventTypeNormal) {
			return fmt.Errorf("valid --types are Normal or Warning")
		}
	}
	return nil
}

// Run finds and prints the events, oldest first.
func (o *EventsOptions) Run(ctx context.Context) error {
	if err := o.resolveObject(); err != nil {
		return err
	}
	s := o.session()
	evs, err := s.Events(ctx, o.object, query.EventsOptions{Types: o.Types})
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
