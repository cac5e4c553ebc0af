package query

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// FeedOptions are what a change feed asks for besides its types.
type FeedOptions struct {
	// Owner, when set, narrows the feed to that object and what it owns,
	// through any chain of ownerReferences (--owner).
	Owner *ObjectRef
	// WatchOnly records the current state without emitting it.
	WatchOnly bool
	// Diff fills each MODIFIED event's changes.
	Diff bool
	// OwnerUID, when set, is the UID of Owner, already read.
	OwnerUID types.UID
	// Checkpoint, when set, records the feed, and resumes it from what it
	// holds.
	Checkpoint *checkpoint.Feed
	// Record, when set and Checkpoint is not, hears what changed in the
	// feed's state after every flush (feed.Config.Record): its Positions say
	// up to which resourceVersion each type's events have been handed to
	// emit, which a long-lived reader of the feed waits on.
	Record func(*feed.Delta) error
	FeedNotices
}

// FeedNotices hear what a feed has to say besides its events. All are
// called from informer goroutines; nil hears nothing.
type FeedNotices struct {
	// OnWatchLost and OnWatchRestored hear when a watch is down for more than
	// a second and when it is caught up again; see informer.Config.
	OnWatchLost     func(res informer.Resource, err error)
	OnWatchRestored func(informer.Reconnect)
	// OnGap hears of each relist before its events: they fold what changed
	// in the gap.
	OnGap func(informer.Resource, informer.Gap)
	// Warn hears of owner kinds that cannot be followed.
	Warn func(error)
}

// Watch runs the change feed of `kubectl idx watch` over reqs: the current
// state (unless WatchOnly), then every change, until ctx ends or emit or
// flush fail. emit and flush are called from one goroutine; flush is called
// whenever the feed has caught up. It returns nil when ctx ended.
func (s *Session) Watch(ctx context.Context, reqs []Request, opts FeedOptions, emit func(*feed.Event) error, flush func() error) error {
	reqs = slices.Clone(reqs)
	for i, r := range reqs {
		reqs[i].Mode = s.readMode(r.Resource.GVK.GroupKind(), r.Mode)
	}
	m, err := s.whereMatcher(ctx, requestKinds(reqs), true)
	if err != nil {
		return err
	}
	defer m.close()
	defer s.warnWhere(opts.Warn)
	scope, stopScope, err := s.watchScope(ctx, reqs, opts, m)
	if err != nil {
		return err
	}
	defer stopScope()

	cfg := s.listConfig(s.cfg.Namespace, nil, reqs)
	cfg.OnWatchLost, cfg.OnWatchRestored = opts.OnWatchLost, opts.OnWatchRestored
	// The feed judges --where itself: an object that stops matching leaves
	// its scope, which a store that never held it could not say.
	cfg.Keep = nil
	factory, err := s.newFactory(cfg)
	if err != nil {
		return err
	}
	defer factory.Shutdown()

	fcfg := feedConfig(feed.Config{WatchOnly: opts.WatchOnly, Diff: opts.Diff, Scope: scope}, reqs, opts.Checkpoint)
	if fcfg.Record == nil {
		fcfg.Record = opts.Record
	}
	f := feed.New(fcfg)
	regs, err := feedInformers(factory, f, reqs, opts.Checkpoint, opts.FeedNotices)
	if err != nil {
		return err
	}
	// The reflectors log every watch that ends badly ("Warning: watch ended
	// with error") at the default verbosity; OnWatchLost says it once, in
	// words.
	factory.Start(reflectorContext(ctx))
	if err := factory.WaitForSync(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// The informers have synced; their handlers have the initial state once
	// every notification has been delivered, which is what the feed orders
	// first.
	if !cache.WaitForCacheSync(ctx.Done(), registrationsSynced(regs)) {
		return nil
	}
	if err := m.ready(ctx); err != nil {
		return err
	}
	return f.Run(ctx, emit, flush)
}

func registrationsSynced(regs []cache.ResourceEventHandlerRegistration) cache.InformerSynced {
	return func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return true
	}
}

// watchScope narrows the feed to the names asked for, to the objects that
// match --where (m) and to what the owner owns; it returns a function
// stopping the owner lookups.
func (s *Session) watchScope(ctx context.Context, reqs []Request, opts FeedOptions, m *matcher) (feed.Scope, func(), error) {
	names := feed.NameScope{}
	for i, r := range reqs {
		if len(r.Names) > 0 {
			names[i] = r.Names
		}
	}
	var namesScope feed.Scope
	if len(names) > 0 {
		namesScope = names
	}
	matching := m.scope(requestKinds(reqs))
	if opts.Owner == nil {
		return feed.AllOf(namesScope, matching), func() {}, nil
	}
	ns := s.cfg.Namespace
	if !opts.Owner.Resource.Namespaced {
		ns = metav1.NamespaceAll
	}
	uid := opts.OwnerUID
	if uid == "" {
		var err error
		if uid, err = s.uidOf(ctx, *opts.Owner, ns); err != nil {
			return nil, nil, err
		}
	}
	// Owners need not match the feed's selectors; they live in the feed's
	// namespace or are cluster-scoped.
	owners := s.OwnerResolver()
	owners.Warn = opts.Warn
	return feed.AllOf(namesScope, matching, feed.NewOwnerScope(uid, owners)), owners.Shutdown, nil
}

// UID reads the UID of the object ref names, in the session's namespace
// (the context's under -A) when it is namespaced.
func (s *Session) UID(ctx context.Context, ref ObjectRef) (types.UID, error) {
	ns := metav1.NamespaceAll
	if ref.Resource.Namespaced {
		ns = s.rootNamespace()
	}
	return s.uidOf(ctx, ref, ns)
}

// uidOf reads an object's UID with one metadata GET.
func (s *Session) uidOf(ctx context.Context, ref ObjectRef, namespace string) (types.UID, error) {
	get := s.cfg.GetMetadata
	if get == nil {
		client, err := metadata.NewForConfig(s.cfg.RESTConfig)
		if err != nil {
			return "", err
		}
		get = func(ctx context.Context, res informer.Resource, namespace, name string) (metav1.Object, error) {
			var ri metadata.ResourceInterface = client.Resource(res.GVR)
			if res.Namespaced {
				ri = client.Resource(res.GVR).Namespace(namespace)
			}
			return ri.Get(ctx, name, metav1.GetOptions{})
		}
	}
	obj, err := get(ctx, ref.Resource, namespace, ref.Name)
	if err != nil {
		return "", err
	}
	return obj.GetUID(), nil
}

// WarnNotices returns FeedNotices that word what a feed has to say as
// warning lines, handed to warn: "watch of pods interrupted: ...;
// reconnecting", "watch of pods reconnected after 2.3s".
func WarnNotices(warn func(msg string)) FeedNotices {
	return FeedNotices{
		OnWatchLost: func(res informer.Resource, err error) {
			warn(fmt.Sprintf("watch of %s interrupted: %s; reconnecting", res.Name(), watchCause(err)))
		},
		OnWatchRestored: func(r informer.Reconnect) {
			warn(fmt.Sprintf("watch of %s reconnected after %s", r.Resource.Name(), roundDuration(r.Down)))
		},
		OnGap: func(res informer.Resource, g informer.Gap) {
			if g.Reason == informer.GapExpired {
				warn(fmt.Sprintf("watch of %s could not resume from resourceVersion %s, which the server no longer has: listed again at %s; what changed in between is printed folded, one event per object, marked \"gap\" in JSON", res.Name(), g.From, g.To))
				return
			}
			warn(fmt.Sprintf("watch of %s listed again after an error, from resourceVersion %s to %s: what changed in between is printed folded, one event per object, marked \"gap\" in JSON", res.Name(), g.From, g.To))
		},
		Warn: func(err error) { warn(err.Error()) },
	}
}

// watchCause words why a watch is down in a few words: the server's message, or
// the transport's error without the request URL. kubectl's wording of a refused
// connection ("did you specify the right host or port?") suits a command that
// never connected, not a feed that was connected a moment ago.
func watchCause(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Message != "" {
		return status.Status().Message
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr.Err.Error()
	}
	return err.Error()
}

// roundDuration keeps two or three significant digits: 15ms, 2.3s, 1m5s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond)
	case d < time.Minute:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
