package query_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// at is d after the clock of fixtures.RelationObjects' events.
func at(d time.Duration) time.Time { return fixtures.RelationsTime.Add(d) }

// windowObjects are RelationObjects plus two events recorded through
// events.k8s.io/v1: no lastTimestamp, an eventTime, and for a repeated one a
// series. e5 (fixtures.PulledEvent: pod web-7d9c-a, Normal Pulled) first
// happened at +30s and last at +5m; e6 (ReplicaSet web-7d9c, Normal Scaled),
// as kube-scheduler records it, happened once, at +6m.
func windowObjects() []runtime.Object {
	return append(fixtures.RelationObjects(),
		fixtures.PulledEvent(),
		&corev1.Event{
			ObjectMeta:          metav1.ObjectMeta{Namespace: "shop", Name: "e6", UID: "ev-e6"},
			InvolvedObject:      corev1.ObjectReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-7d9c", UID: fixtures.UIDWebRS},
			Type:                corev1.EventTypeNormal,
			Reason:              "Scaled",
			EventTime:           metav1.NewMicroTime(at(6 * time.Minute)),
			ReportingController: "example.com/scaler",
			ReportingInstance:   "scaler-1",
			Action:              "Scale",
		},
	)
}

// eventsSession is a session over objs for the relation questions
// (relationConfig) that can read one object's metadata, as WatchEvents does
// for its root; and the mapper of its types.
func eventsSession(t *testing.T, objs []runtime.Object) (*query.Session, meta.RESTMapper) {
	t.Helper()
	s := fakeapi.New(nil, objs...)
	cfg, mapper := relationConfig(t)
	cfg.GetMetadata = metadataOf(s)
	session, _ := newSession(t, s, cfg)
	return session, mapper
}

func TestSessionEventsWindow(t *testing.T) {
	tests := []struct {
		name string
		opts query.EventsOptions
		want []string // reasons, oldest first
	}{
		{name: "everything", want: []string{"ScalingReplicaSet", "SuccessfulCreate", "FailedScheduling", "Pulled", "Scaled"}},
		// e5 first happened at +30s: its series says when it last did.
		{name: "since", opts: query.EventsOptions{Since: at(150 * time.Second)}, want: []string{"FailedScheduling", "Pulled", "Scaled"}},
		{name: "since, an eventTime alone", opts: query.EventsOptions{Since: at(330 * time.Second)}, want: []string{"Scaled"}},
		{name: "until", opts: query.EventsOptions{Until: at(150 * time.Second)}, want: []string{"ScalingReplicaSet", "SuccessfulCreate"}},
		{name: "bounds are inclusive", opts: query.EventsOptions{Since: at(2 * time.Minute), Until: at(3 * time.Minute)}, want: []string{"SuccessfulCreate", "FailedScheduling"}},
		{name: "kind", opts: query.EventsOptions{Kinds: []schema.GroupKind{{Kind: "Pod"}}}, want: []string{"FailedScheduling", "Pulled"}},
		{name: "kind and since", opts: query.EventsOptions{Kinds: []schema.GroupKind{{Kind: "Pod"}}, Since: at(4 * time.Minute)}, want: []string{"Pulled"}},
		{name: "type and window", opts: query.EventsOptions{Types: []string{"Warning"}, Until: at(2 * time.Minute)}, want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, mapper := relationSession(t, windowObjects(), false)
			evs, err := s.Events(testContext(t), objectRef(t, mapper, "deployment/web"), tc.opts)
			if err != nil {
				t.Fatalf("Events: %v", err)
			}
			if got := eventReasons(evs); !slices.Equal(got, tc.want) {
				t.Errorf("events = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEventTime(t *testing.T) {
	tests := []struct {
		name string
		e    corev1.Event
		want time.Time
	}{
		{name: "series", e: corev1.Event{EventTime: metav1.NewMicroTime(at(1)), Series: &corev1.EventSeries{LastObservedTime: metav1.NewMicroTime(at(3))}, LastTimestamp: metav1.NewTime(at(2))}, want: at(3)},
		{name: "lastTimestamp", e: corev1.Event{EventTime: metav1.NewMicroTime(at(1)), LastTimestamp: metav1.NewTime(at(2))}, want: at(2)},
		{name: "eventTime", e: corev1.Event{EventTime: metav1.NewMicroTime(at(1))}, want: at(1)},
		{name: "creation", e: corev1.Event{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(4))}}, want: at(4)},
	}
	for _, tc := range tests {
		if got := query.EventTime(&tc.e); !got.Equal(tc.want) {
			t.Errorf("%s: EventTime = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSessionWatchEventsInitial: the feed starts with the current events of
// the tree that pass the filters, oldest first, as ADDED; events whose
// involved object has no UID (e2) are not the feed's.
func TestSessionWatchEventsInitial(t *testing.T) {
	tests := []struct {
		name string
		opts query.EventsOptions
		want []string
	}{
		{name: "everything", want: []string{"ADDED ScalingReplicaSet", "ADDED FailedScheduling", "ADDED Pulled", "ADDED Scaled"}},
		{name: "since", opts: query.EventsOptions{Since: at(4 * time.Minute)}, want: []string{"ADDED Pulled", "ADDED Scaled"}},
		{name: "warnings", opts: query.EventsOptions{Types: []string{"warning"}}, want: []string{"ADDED FailedScheduling"}},
		{name: "replica sets", opts: query.EventsOptions{Kinds: []schema.GroupKind{{Group: "apps", Kind: "ReplicaSet"}}}, want: []string{"ADDED Scaled"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, mapper := eventsSession(t, windowObjects())
			got := initialEvents(t, s, objectRef(t, mapper, "deployment/web"), tc.opts)
			if !slices.Equal(got, tc.want) {
				t.Errorf("events = %q, want %q", got, tc.want)
			}
		})
	}
}

// initialEvents runs s's feed of the events of obj with opts until its initial state has
// been flushed, and returns each event's type and reason.
func initialEvents(t *testing.T, s *query.Session, obj query.ObjectRef, opts query.EventsOptions) []string {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	var got []string
	err := s.WatchEvents(ctx, obj, query.EventsFeedOptions{EventsOptions: opts},
		func(ev *feed.Event) error {
			got = append(got, string(ev.Type)+" "+ev.Object.(*corev1.Event).Reason)
			return nil
		},
		func() error {
			// The first flush ends the initial state.
			cancel()
			return nil
		})
	if err != nil {
		t.Fatalf("WatchEvents: %v", err)
	}
	return got
}

func TestSessionWatchEventsUntil(t *testing.T) {
	s, _ := eventsSession(t, windowObjects())
	err := s.WatchEvents(testContext(t), query.ObjectRef{}, query.EventsFeedOptions{EventsOptions: query.EventsOptions{Until: fixtures.RelationsTime}},
		func(*feed.Event) error { return nil }, func() error { return nil })
	if err == nil || err.Error() != "a watch of events cannot have an end time" {
		t.Errorf("err = %v", err)
	}
}
