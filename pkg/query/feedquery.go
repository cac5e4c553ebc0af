package query

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// FeedQuery is a change feed as a question, asked of every target at once:
// `kubectl idx watch TYPES` or, with Object set, `kubectl idx events
// TYPE/NAME -w`. Follow plans it per target (the types through that
// server's discovery, --owner's object and UID, the checkpoint's stream
// with the cluster it is of), opens the checkpoint, then follows every
// target's feed and merges their events into one stream.
type FeedQuery struct {
	// Args are watch's arguments: types, comma-separated, and names.
	Args []string
	// Owner is --owner, TYPE/NAME; "" follows every object of the types.
	Owner string
	// Object, when set, makes the feed the events of that object and of
	// everything it owns (events -w), filtered by Events.
	Object *ObjectArg
	Events EventsFeedQuery
	// WatchOnly leaves out the current state; Diff fills each MODIFIED
	// event's changes.
	WatchOnly, Diff bool
	// Read is how much of each object the output reads, for a request of
	// watch's; nil reads whole objects.
	Read func(Request) informer.Mode
	// ShowOwner has each target's plan look up its objects' top-level
	// controllers (FeedPlan.OwnerOf).
	ShowOwner bool
	// AllNamespaces is -A: an --owner of a namespaced kind needs one
	// namespace.
	AllNamespaces bool
	// Checkpoint is --checkpoint's path, "" for none: the feed resumes from
	// it and records in it. ContextName is what a plain run's one context is
	// called there (the kubeconfig's); Filters are the flags that narrow the
	// feed besides those the plan adds (names, --owner, --types,
	// --for-kind): a checkpoint written with other ones is refused.
	Checkpoint  string
	ContextName string
	Filters     []checkpoint.Filter
}

// ObjectArg is an object as the command line names it: TYPE and NAME.
type ObjectArg struct {
	Type, Name string
}

// EventsFeedQuery filters an events feed, or a list of events (Options).
type EventsFeedQuery struct {
	// Types keeps events of these types (Normal, Warning).
	Types []string
	// ForKinds keeps events about objects of these types, as given.
	ForKinds []string
	// Since keeps the current events whose last occurrence is newer; zero
	// keeps them all.
	Since time.Duration
	// Until keeps the events whose last occurrence is at least this old;
	// zero keeps them all. A feed has none: what it records is newer.
	Until time.Duration
	// Now is the clock Since and Until are counted from; nil is time.Now.
	Now func() time.Time
}

// FeedPlan is one target's feed as planned: what it reads, in its events'
// Source order, and the object of an events feed.
type FeedPlan struct {
	// Context is the target's (Target.Context).
	Context string
	// Kinds are the kinds its requests read (watch), or the Event kind.
	Kinds []schema.GroupVersionKind
	// Object is an events feed's root.
	Object *ObjectRef
	// OwnerOf names an object's top-level controller, Kind/name, or
	// NoOwner; set with FeedQuery.ShowOwner, for the objects of this
	// target's events, once its feed runs.
	OwnerOf func(runtime.Object) string

	reqs     []Request
	owner    *ObjectRef
	ownerUID types.UID
	cluster  *checkpoint.Cluster
	stream   checkpoint.Stream
	target   Target
	owners   *topOwnersOnce
}

// FeedOutput is where Follow hands what the feeds say.
type FeedOutput struct {
	// Start is called once, before any event, with the plans of the targets
	// whose feeds run, in the targets' order, and Sources, the kinds of
	// every plan each once, in the order first seen: an event's Source is
	// its kind's index there. A Start error ends Follow.
	Start func(plans []FeedPlan, sources []schema.GroupVersionKind) error
	// Emit and Flush are the printer's, called from one goroutine at a time;
	// Flush whenever a feed has caught up. An error of theirs ends every
	// feed and is Follow's.
	Emit  func(*feed.Event) error
	Flush func() error
	// Ended hears of each target that could not be planned, or whose feed
	// failed for good, from its own goroutine, while the others go on.
	Ended func(Answer[struct{}])
	// Notices are what target context's feed says besides its events.
	Notices func(context string) FeedNotices
	// Warn hears what reading the checkpoint found.
	Warn func(msg string)
	// Record, when set, hears what changed in target context's feed state
	// after every flush of a feed without a checkpoint (FeedOptions.Record):
	// its Positions, by the plan's own source order (FeedPlan.Kinds), say up
	// to which resourceVersion each type's events have been emitted.
	Record func(context string, d *feed.Delta) error
}

// Follow plans q for every target, opens the checkpoint, then runs every
// planned feed at once, merging their events (each naming its context) into
// out, until ctx ends, a printer's error, or every feed has ended. A target
// that cannot be planned is handed to out.Ended and left out; the checkpoint
// keeps what it holds of it. It returns nil, the printer's error, or the
// checkpoint's.
func Follow(ctx context.Context, targets []Target, cfg Config, q FeedQuery, out FeedOutput) error {
	answers := Ask(ctx, targets, cfg, func(ctx context.Context, s *Session) (*FeedPlan, error) { return q.plan(ctx, s) })
	var plans []FeedPlan
	var live []Target
	var unavailable []string
	for i, a := range answers {
		if a.Err != nil {
			out.Ended(Answer[struct{}]{Context: a.Context, Err: a.Err})
			unavailable = append(unavailable, a.Context)
			continue
		}
		p := *a.Value
		p.target = targets[i]
		plans = append(plans, p)
		live = append(live, targets[i])
	}
	if len(plans) == 0 {
		return nil
	}
	cps, err := openCheckpoint(q.Checkpoint, plans, unavailable, out.Warn)
	if err != nil {
		return err
	}
	sources, sourceOf := mergeKinds(plans)
	if err := out.Start(plans, sources); err != nil {
		return cps.close(err)
	}
	err = followFeeds(ctx, live, cfg, func(ctx context.Context, i int, s *Session, emit func(*feed.Event) error, flush func() error) error {
		p := &plans[i]
		if p.owners != nil {
			top, stop := s.TopOwners(ctx)
			defer stop()
			p.owners.set(top)
		}
		remap := func(ev *feed.Event) error {
			ev.Source = sourceOf[i][ev.Source]
			return emit(ev)
		}
		notices := FeedNotices{}
		if out.Notices != nil {
			notices = out.Notices(p.Context)
		}
		if p.Object != nil {
			opts, err := q.Events.Options(s)
			if err != nil {
				return err
			}
			return s.WatchEvents(ctx, *p.Object, EventsFeedOptions{EventsOptions: opts, RootUID: p.ownerUID, Checkpoint: cps.of(i), FeedNotices: notices}, remap, flush)
		}
		opts := FeedOptions{WatchOnly: q.WatchOnly, Diff: q.Diff, Owner: p.owner, OwnerUID: p.ownerUID,
			Checkpoint: cps.of(i), FeedNotices: notices}
		if out.Record != nil {
			opts.Record = func(d *feed.Delta) error { return out.Record(p.Context, d) }
		}
		return s.Watch(ctx, p.reqs, opts, remap, flush)
	}, out.Emit, out.Flush, out.Ended)
	return cps.close(err)
}

// plan maps the query through s's discovery: the types, --owner's object
// and UID or the events' root and its UID, and with a checkpoint the
// cluster and the stream its state is kept under.
func (q FeedQuery) plan(ctx context.Context, s *Session) (*FeedPlan, error) {
	p := &FeedPlan{Context: s.cfg.Context}
	var stream checkpoint.Stream
	if q.Object != nil {
		obj, err := s.Object(q.Object.Type, q.Object.Name)
		if err != nil {
			return nil, err
		}
		if p.ownerUID, err = s.UID(ctx, obj); err != nil {
			return nil, err
		}
		p.Object, p.Kinds = &obj, []schema.GroupVersionKind{EventsGVK}
		stream = checkpoint.Stream{Command: "events", Resources: []string{"events"}, Filters: filters(q.Filters,
			checkpoint.Filter{Flag: "object", Value: q.Object.Type + "/" + q.Object.Name + " uid " + string(p.ownerUID)},
			checkpoint.Filter{Flag: "--types", Value: strings.Join(q.Events.Types, ",")},
			checkpoint.Filter{Flag: "--for-kind", Value: strings.Join(q.Events.ForKinds, ",")})}
	} else {
		reqs, _, err := ParseResourceArgs(s.cfg.Mapper, s.cfg.Categories, q.Args)
		if err != nil {
			return nil, err
		}
		for i := range reqs {
			if q.Read != nil {
				reqs[i].Mode = q.Read(reqs[i])
			}
			p.Kinds = append(p.Kinds, reqs[i].Resource.GVK)
		}
		p.reqs = reqs
		owner := ""
		if q.Owner != "" {
			typ, name, _ := strings.Cut(q.Owner, "/")
			obj, err := s.Object(typ, name)
			if err != nil {
				return nil, err
			}
			if q.AllNamespaces && obj.Resource.Namespaced {
				return nil, fmt.Errorf("--owner %s names a namespaced object: use it with --namespace, not --all-namespaces", q.Owner)
			}
			p.owner = &obj
			if p.ownerUID, err = s.UID(ctx, obj); err != nil {
				return nil, err
			}
			owner = q.Owner + " uid " + string(p.ownerUID)
		}
		stream = checkpoint.Stream{Command: "watch", Filters: filters(q.Filters,
			checkpoint.Filter{Flag: "names", Value: requestNames(reqs)}, checkpoint.Filter{Flag: "--owner", Value: owner})}
		for _, r := range reqs {
			stream.Resources = append(stream.Resources, r.Resource.Name())
		}
	}
	if q.Checkpoint != "" {
		cluster, err := clusterOf(ctx, s)
		if err != nil {
			return nil, err
		}
		stream.Context, stream.Namespace, stream.Cluster = s.cfg.Context, s.cfg.Namespace, cluster
		if stream.Context == "" {
			stream.Context = q.ContextName
		}
		p.stream = stream
	}
	if q.ShowOwner {
		p.owners = &topOwnersOnce{}
		p.OwnerOf = p.owners.of
	}
	return p, nil
}

// filters are base and the ones of more that have a value.
func filters(base []checkpoint.Filter, more ...checkpoint.Filter) []checkpoint.Filter {
	out := append([]checkpoint.Filter(nil), base...)
	for _, f := range more {
		if f.Value != "" {
			out = append(out, f)
		}
	}
	return out
}

// requestNames are the objects named on the command line, as resource/name.
func requestNames(reqs []Request) string {
	var names []string
	for _, r := range reqs {
		for _, n := range r.Names {
			names = append(names, r.Resource.Name()+"/"+n)
		}
	}
	return strings.Join(names, ",")
}

// Options turns the filters into EventsOptions, the kinds resolved through
// s's discovery.
func (e EventsFeedQuery) Options(s *Session) (EventsOptions, error) {
	opts := EventsOptions{Types: e.Types}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	t := now()
	if e.Since > 0 {
		opts.Since = t.Add(-e.Since)
	}
	if e.Until > 0 {
		opts.Until = t.Add(-e.Until)
	}
	var err error
	opts.Kinds, err = s.Kinds(e.ForKinds)
	return opts, err
}

// mergeKinds lists the kinds of every plan each once, in the order first
// seen, and where each plan's kinds are among them.
func mergeKinds(plans []FeedPlan) ([]schema.GroupVersionKind, [][]int) {
	var kinds []schema.GroupVersionKind
	at := map[schema.GroupVersionKind]int{}
	of := make([][]int, len(plans))
	for i, p := range plans {
		for _, gvk := range p.Kinds {
			if _, ok := at[gvk]; !ok {
				at[gvk] = len(kinds)
				kinds = append(kinds, gvk)
			}
			of[i] = append(of[i], at[gvk])
		}
	}
	return kinds, of
}

// topOwnersOnce is a plan's top-owner lookup, set once its feed runs.
type topOwnersOnce struct {
	mu  sync.Mutex
	top *TopOwners
}

func (t *topOwnersOnce) set(top *TopOwners) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.top = top
}

func (t *topOwnersOnce) of(obj runtime.Object) string {
	t.mu.Lock()
	top := t.top
	t.mu.Unlock()
	if top == nil {
		return NoOwner
	}
	return top.Of(obj)
}

// checkpoints are an open checkpoint and the handles of its streams, by
// plan; a nil *checkpoints is no --checkpoint.
type checkpoints struct {
	file    *checkpoint.File
	handles map[int]*checkpoint.Feed
}

// of returns plan i's handle, nil without a checkpoint.
func (c *checkpoints) of(i int) *checkpoint.Feed {
	if c == nil {
		return nil
	}
	return c.handles[i]
}

// close closes the checkpoint once the feeds have ended with err, and
// returns err, or else the checkpoint's.
func (c *checkpoints) close(err error) error {
	if c == nil {
		return err
	}
	if cerr := c.file.Close(); err == nil {
		err = cerr
	}
	return err
}

// openCheckpoint opens path and resumes the streams of plans (the contexts
// of unavailable could not be planned: the checkpoint keeps what it holds of
// them), handing warn what reading the file found. It returns nil for no
// path.
func openCheckpoint(path string, plans []FeedPlan, unavailable []string, warn func(string)) (*checkpoints, error) {
	if path == "" {
		return nil, nil
	}
	f, err := checkpoint.Open(path)
	if err != nil {
		return nil, err
	}
	say := func(ws []string) {
		if warn != nil {
			for _, w := range ws {
				warn(w)
			}
		}
	}
	warned := f.Warnings()
	say(warned)
	list := make([]checkpoint.Stream, len(plans))
	for i, p := range plans {
		list[i] = p.stream
	}
	handles, err := f.Resume(list, unavailable)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	say(f.Warnings()[len(warned):])
	c := &checkpoints{file: f, handles: map[int]*checkpoint.Feed{}}
	for i := range plans {
		c.handles[i] = handles[i]
	}
	return c, nil
}

// kubeSystem is the namespace whose UID tells a cluster from one made anew:
// no one can delete it, and a new cluster creates it with a new UID.
var kubeSystem = ObjectRef{
	Resource: informer.Resource{
		GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		GVK: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"},
	},
	Name: metav1.NamespaceSystem,
}

// clusterOf identifies the cluster s asks, for the checkpoint's stream: the
// server and CA of its REST config and the UID of its kube-system namespace,
// read with the feed's own client. A user who may not read that namespace is
// told nothing: the server and CA identify the cluster alone.
func clusterOf(ctx context.Context, s *Session) (*checkpoint.Cluster, error) {
	var uid types.UID
	if s.cfg.RESTConfig != nil || s.cfg.GetMetadata != nil {
		var err error
		uid, err = s.UID(ctx, kubeSystem)
		if err != nil && !apierrors.IsForbidden(err) && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading namespace kube-system, which identifies the cluster for --checkpoint: %w", err)
		}
	}
	c, err := checkpoint.ClusterOf(s.cfg.RESTConfig, uid)
	if err != nil {
		return nil, err
	}
	return &c, nil
}
