package mcp

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// EventsArgs are the events tool's arguments.
type EventsArgs struct {
	Object        string `json:"object,omitempty" jsonschema:"the root of a subtree, KIND/NAME (deployment/web): its events and those of everything it owns; empty lists the namespace's events"`
	Namespace     string `json:"namespace,omitempty" jsonschema:"the namespace; default: the context's"`
	AllNamespaces bool   `json:"allNamespaces,omitempty" jsonschema:"every namespace"`
	Since         string `json:"since,omitempty" jsonschema:"only events that last happened within this duration: 10m, 1h"`
	Type          string `json:"type,omitempty" jsonschema:"Normal or Warning"`
	Limit         int    `json:"limit,omitempty" jsonschema:"most events in this answer (default 100, at most 5000)"`
	Cursor        string `json:"cursor,omitempty" jsonschema:"nextCursor of the previous answer to the same arguments"`
	Common
}

// question is what names the question of the arguments: all but the
// cursor, the limit and the staleness bound, which page the answer or bound
// its wait.
func (in EventsArgs) question() EventsArgs {
	in.Cursor, in.Limit, in.MaxStalenessSeconds = "", 0, 0
	return in
}

// eventsOf is one context's events.
type eventsOf struct {
	events []*corev1.Event
	asOf   []v1alpha1.AsOf
}

func (s *Server) events(ctx context.Context, in EventsArgs) (*v1alpha1.EventsAnswer, error) {
	var opts query.EventsOptions
	if in.Type != "" {
		if !strings.EqualFold(in.Type, corev1.EventTypeNormal) && !strings.EqualFold(in.Type, corev1.EventTypeWarning) {
			return nil, badArgument("type must be Normal or Warning, got %q", in.Type)
		}
		opts.Types = []string{in.Type}
	}
	start := time.Now()
	if in.Since != "" {
		d, err := time.ParseDuration(in.Since)
		if err != nil || d <= 0 {
			return nil, badArgument("since must be a positive duration such as 10m or 1h, got %q", in.Since)
		}
		opts.Since = start.Add(-d)
	}
	var typ, name string
	if in.Object != "" {
		var err error
		if typ, name, err = objectArg(in.Object); err != nil {
			return nil, err
		}
	}
	c, p, err := s.open("events", in.Limit, in.Cursor, in.question(), scope{Context: in.Context, Namespace: in.Namespace, AllNamespaces: in.AllNamespaces, MaxStaleness: seconds(in.MaxStalenessSeconds)})
	if err != nil {
		return nil, err
	}
	defer c.done()
	answers := ask(ctx, c, func(ctx context.Context, sess *query.Session) (*eventsOf, error) {
		if typ == "" {
			// The namespace's Event objects, as kubectl idx events lists them
			// without an object, narrowed as an object's are.
			l, err := sess.Get(ctx, query.GetQuery{Args: []string{"events"}})
			if l == nil {
				return nil, err
			}
			defer l.Close()
			out := &eventsOf{asOf: l.AsOf}
			for _, m := range l.Members {
				for _, o := range m.Objects {
					if e, ok := o.(*corev1.Event); ok && keeps(opts, e) {
						out.events = append(out.events, e)
					}
				}
			}
			return out, err
		}
		obj, err := sess.Object(typ, name)
		if err != nil {
			return nil, err
		}
		if err := c.authorize(ctx, sess, obj); err != nil {
			return nil, err
		}
		l, err := sess.EventList(ctx, obj, opts)
		if err != nil {
			return nil, err
		}
		defer l.Close()
		out := &eventsOf{asOf: l.AsOf}
		for _, m := range l.Members {
			for _, o := range m.Objects {
				if e, ok := o.(*corev1.Event); ok {
					out.events = append(out.events, e)
				}
			}
		}
		return out, nil
	})
	warnings, err := outcome(c, answers)
	if err != nil {
		return nil, err
	}
	answer := v1alpha1.NewEventsAnswer()
	type keyed struct {
		key  string
		view v1alpha1.EventView
	}
	var items []keyed
	for _, a := range answers {
		if a.Value == nil {
			continue
		}
		for _, e := range a.Value.events {
			last := query.EventTime(e).UTC()
			ev := v1alpha1.EventView{
				Context: a.Context, Namespace: e.Namespace, Type: e.Type, Reason: cutString(e.Reason, s.cfg.MaxString),
				Object:  cutString(e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name, s.cfg.MaxString),
				Message: cutString(e.Message, s.cfg.MaxString), Count: max(e.Count, 1), LastSeen: last.Format(time.RFC3339),
				Source: cutString(cmp.Or(e.Source.Component, e.ReportingController), s.cfg.MaxString),
			}
			if e.Series != nil && e.Series.Count > ev.Count {
				ev.Count = e.Series.Count
			}
			if !e.FirstTimestamp.IsZero() {
				ev.FirstSeen = e.FirstTimestamp.UTC().Format(time.RFC3339)
			} else if !e.EventTime.IsZero() {
				ev.FirstSeen = e.EventTime.UTC().Format(time.RFC3339)
			}
			items = append(items, keyed{key: fmt.Sprintf("%s\x00%s\x00%s\x00%s", last.Format("2006-01-02T15:04:05.000000000Z"), a.Context, e.Namespace, e.Name), view: ev})
		}
	}
	// Oldest first, as kubectl idx events prints them; ties by namespace and
	// name, so that pages follow one order.
	slices.SortStableFunc(items, func(a, b keyed) int { return cmp.Compare(a.key, b.key) })
	answer.AsOf = asOf(answers, func(e *eventsOf) []v1alpha1.AsOf { return e.asOf })
	answer.Warnings = append(answer.Warnings, warnings...)
	first, end, next := p.byKey(len(items), func(i int) string { return items[i].key })
	return fitPage(s.cfg.MaxBytes, answer, first, len(items), items[first:end], func(out *v1alpha1.EventsAnswer, page []keyed) {
		out.Events = make([]v1alpha1.EventView, len(page))
		for i, it := range page {
			out.Events[i] = it.view
		}
	}, next), nil
}

// keeps reports whether e passes opts, as an object's events are narrowed.
func keeps(opts query.EventsOptions, e *corev1.Event) bool {
	if len(opts.Types) > 0 && !slices.ContainsFunc(opts.Types, func(t string) bool { return strings.EqualFold(t, e.Type) }) {
		return false
	}
	return opts.Since.IsZero() || !query.EventTime(e).Before(opts.Since)
}
