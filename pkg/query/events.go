package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// EventsOptions narrow Events and WatchEvents. An event's time is EventTime:
// when it last happened, whichever API wrote it.
type EventsOptions struct {
	// Types keeps only events of these types (Normal, Warning; any case).
	// Empty keeps every type.
	Types []string
	// Kinds keeps only events about objects of these kinds (the group of the
	// involvedObject's apiVersion and its kind). Empty keeps every kind.
	Kinds []schema.GroupKind
	// Since, when not zero, keeps the events whose time is Since or later.
	Since time.Time
	// Until, when not zero, keeps the events whose time is Until or earlier.
	// WatchEvents refuses it: every event recorded later is newer.
	Until time.Time
}

// keeps reports whether e passes opts' filters.
func (opts EventsOptions) keeps(e *corev1.Event) bool {
	if !wantType(opts.Types, e.Type) {
		return false
	}
	if len(opts.Kinds) > 0 {
		ref := e.InvolvedObject
		gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
		// An emitter that left out the apiVersion still named the kind.
		if !slices.ContainsFunc(opts.Kinds, func(k schema.GroupKind) bool {
			return k == gk || ref.APIVersion == "" && k.Kind == ref.Kind
		}) {
			return false
		}
	}
	if opts.Since.IsZero() && opts.Until.IsZero() {
		return true
	}
	t := EventTime(e)
	return (opts.Since.IsZero() || !t.Before(opts.Since)) && (opts.Until.IsZero() || !t.After(opts.Until))
}

// eventsResource is the core Event type. Events written through
// events.k8s.io/v1 are the same objects (one storage), read here with their
// eventTime and series.
var eventsResource = informer.Resource{
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "events"},
	GVK:        schema.GroupVersionKind{Version: "v1", Kind: "Event"},
	Namespaced: true,
}

// EventsGVK is the kind Events returns.
var EventsGVK = eventsResource.GVK

// Events answers `kubectl idx events TYPE/NAME`: the events of obj and of
// everything it owns, oldest first. The tree is found as Tree finds it; the
// scope's events are read once and matched to the tree's objects through an
// index on the object each event is about.
func (s *Session) Events(ctx context.Context, obj ObjectRef, opts EventsOptions) ([]*corev1.Event, error) {
	w, tree, err := s.descendants(ctx, obj)
	if err != nil {
		return nil, err
	}
	defer w.shutdown()
	inf, err := w.factory.Informer(eventsResource, informer.Full, cache.Indexers{index.InvolvedObjectIndex: index.InvolvedObjectIndexFunc})
	if err != nil {
		return nil, err
	}
	skipped, err := w.factory.WaitForSyncPartial(ctx)
	if err != nil {
		return nil, err
	}
	for _, sk := range skipped {
		// Without events there is no answer: the error itself names the verb,
		// resource and scope.
		if sk.Resource.GVR == eventsResource.GVR && sk.Mode == informer.Full {
			return nil, sk.Err
		}
	}
	store := inf.GetIndexer()
	seen := map[types.UID]bool{}
	var out []*corev1.Event
	for _, n := range flatten(tree) {
		// Events name their object by UID, or (some emitters) by kind and name.
		keys := []string{string(n.Object.GetUID()), index.InvolvedObjectKey(n.GVK.Kind, n.Object.GetNamespace(), n.Object.GetName())}
		for _, key := range keys {
			objs, err := store.ByIndex(index.InvolvedObjectIndex, key)
			if err != nil {
				return nil, err
			}
			for _, obj := range objs {
				e := obj.(*corev1.Event)
				if seen[e.UID] || !opts.keeps(e) {
					continue
				}
				seen[e.UID] = true
				out = append(out, e)
			}
		}
	}
	slices.SortStableFunc(out, compareEvents)
	return out, nil
}

// compareEvents orders events by EventTime.
func compareEvents(a, b *corev1.Event) int { return EventTime(a).Compare(EventTime(b)) }

func wantType(types []string, t string) bool {
	if len(types) == 0 {
		return true
	}
	for _, want := range types {
		if strings.EqualFold(want, t) {
			return true
		}
	}
	return false
}

// EventTime is when an event last happened: its series' last observation, its
// lastTimestamp, its eventTime or, failing all, its creation. Events recorded
// through events.k8s.io/v1 (kube-scheduler's, the kubelet's in recent
// releases) carry eventTime and, once repeated, series, and no lastTimestamp;
// those recorded through core v1 (kube-controller-manager's) carry
// lastTimestamp and count.
func EventTime(e *corev1.Event) time.Time {
	if e.Series != nil && !e.Series.LastObservedTime.IsZero() {
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

// EventsFeedOptions are what WatchEvents asks for besides its object.
type EventsFeedOptions struct {
	EventsOptions
	// RootUID, when set, is the object's UID, already read.
	RootUID types.UID
	// Checkpoint, when set, records the feed, and resumes it from what it
	// holds.
	Checkpoint *checkpoint.Feed
	FeedNotices
}

// WatchEvents answers `kubectl idx events -w TYPE/NAME`: the events of obj
// and of everything it owns, as a change feed. The current events that pass
// opts come first, oldest first, as ADDED; then every event recorded, repeated
// (a count or series update, one MODIFIED each) or expired (DELETED), until
// ctx ends or emit or flush fail. Objects that join obj's tree after the start
// (the ReplicaSet of a new rollout and its pods) bring their events along.
//
// It is Watch's feed over one informer of core Events, scoped by
// feed.NewInvolvedObjectScope: membership is decided from each event's
// involvedObject through the OwnerResolver, not from a tree read once, and it
// survives watch expiry and API server restarts as Watch does. emit and flush
// are called from one goroutine. It returns nil when ctx ended.
func (s *Session) WatchEvents(ctx context.Context, obj ObjectRef, opts EventsFeedOptions, emit func(*feed.Event) error, flush func() error) error {
	if !opts.Until.IsZero() {
		return fmt.Errorf("a watch of events cannot have an end time")
	}
	// Dependents of a namespaced object, and the events about them, live in
	// its namespace; those of a cluster-scoped object anywhere.
	ns, rootNS := metav1.NamespaceAll, metav1.NamespaceAll
	if obj.Resource.Namespaced {
		ns = s.rootNamespace()
		rootNS = ns
	}
	uid := opts.RootUID
	if uid == "" {
		var err error
		if uid, err = s.uidOf(ctx, obj, rootNS); err != nil {
			return err
		}
	}
	m, err := s.whereMatcher(ctx, []schema.GroupVersionKind{EventsGVK}, true)
	if err != nil {
		return err
	}
	defer m.close()
	defer s.warnWhere(opts.Warn)
	owners := s.newOwnerResolver(ns)
	owners.Warn = opts.Warn
	defer owners.Shutdown()
	filter := eventFilter{opts: opts.EventsOptions, namespaced: obj.Resource.Namespaced, namespace: rootNS}
	scope := feed.AllOf(filter, m.scope([]schema.GroupVersionKind{EventsGVK}), feed.NewInvolvedObjectScope(uid, owners))

	factory, err := s.newFactory(informer.Config{
		Namespace:       ns,
		SyncTimeout:     s.cfg.SyncTimeout,
		OnWatchLost:     opts.OnWatchLost,
		OnWatchRestored: opts.OnWatchRestored,
	})
	if err != nil {
		return err
	}
	defer factory.Shutdown()
	reqs := []Request{{Resource: eventsResource, Mode: informer.Full}}
	f := feed.New(feedConfig(feed.Config{Scope: scope, Order: func(a, b runtime.Object) int {
		ea, aok := a.(*corev1.Event)
		eb, bok := b.(*corev1.Event)
		if !aok || !bok {
			return 0
		}
		return compareEvents(ea, eb)
	}}, reqs, opts.Checkpoint))
	regs, err := feedInformers(factory, f, reqs, opts.Checkpoint, opts.FeedNotices)
	if err != nil {
		return err
	}
	reg := regs[0]
	factory.Start(reflectorContext(ctx))
	if err := factory.WaitForSync(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		return nil
	}
	if err := m.ready(ctx); err != nil {
		return err
	}
	return f.Run(ctx, emit, flush)
}

// eventFilter is the Scope of the events that pass EventsOptions and are
// about objects where obj's dependents can be. It comes before the
// involvedObject scope, so that an event it refuses costs no owner lookup:
// an event about a node in a namespace's events starts no node informer.
type eventFilter struct {
	opts EventsOptions
	// namespaced and namespace are the root's: the dependents of a namespaced
	// object are in its namespace.
	namespaced bool
	namespace  string
}

// Contains implements feed.Scope.
func (f eventFilter) Contains(_ context.Context, _ int, obj runtime.Object) bool {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return false
	}
	if f.namespaced && e.InvolvedObject.Namespace != f.namespace {
		return false
	}
	return f.opts.keeps(e)
}
