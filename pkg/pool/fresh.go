package pool

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/klog/v2"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// How a warm store is shown current: the freshness proof.
//
// resourceVersions are etcd revisions, one sequence for every type: a write
// of a ConfigMap moves it as a write of a pod does. So the informer of a type
// nobody writes never receives an event at or past the server's current
// resourceVersion R, and "the store has seen R" cannot be waited for as
// such. What can be shown is that no change of the informer's objects lies
// between what its store has applied, A, and R:
//
//  1. R is read with one consistent LIST of at most one object of the type
//     in the informer's namespace (no resourceVersion: the server's latest;
//     every write acknowledged before the LIST was sent is at or below R).
//     The API server answers it once its watch cache of the type has caught
//     up with etcd, so that cache holds every change up to R from then on.
//  2. If A >= R, or the store was shown current at R or later before (no
//     write anywhere since), the store is current: a busy type, or a quiet
//     cluster, is done here.
//
//     Otherwise a store of at most compareUpTo objects is compared with a
//     LIST of the informer's own objects (its namespace and selectors,
//     metadata only) asked for then: when the store holds exactly those
//     objects at the same resourceVersions, it is the server's state of them
//     at the LIST's resourceVersion, at or past R, whatever was written
//     elsewhere: a small quiet type (the ReplicaSets and Deployments a
//     grouping reads) is shown current by one small LIST, not the bookmark
//     of step 3, and a busy one never lists. A store that differs (a change
//     on its way to it) goes on to step 3.
//  3. Otherwise a probe watches the informer's own objects (its namespace
//     and selectors, metadata only) from A, with bookmarks and a timeout of
//     probeWatchTimeout. The server replays the changes after A in order, then
//     live ones, and sends a bookmark at its next bookmark tick once the watch
//     is due one (2 s before its deadline): a change or a bookmark at or past
//     R bounds the replay, and E is the last change up to R received. This
//     costs about a second (0.1 to 2.3 s), the wait for the bookmark.
//  4. The question waits until the store has applied E (its informer's own
//     stream delivers the same changes, in the same order): then the store is
//     the server's state of those objects at R. With no change up to R, it
//     already is.
//
// The server moves a selective watch past the changes it leaves out, and
// sends no bookmark at the resourceVersion a watch is at: when the last write
// anywhere was a change of the type outside the informer's selection (in a
// cluster where nothing else is written), the probe of step 3 hears nothing.
// A probe with no bookmark when one was due (bookmarkDue) is followed by one
// of the whole type, every namespace and no selector, the changes of the
// selection picked out here by namespace and name (bound); where that cannot
// be done (a label selector, no right to watch every namespace) the question
// lists the type afresh. A type whose whole watch never gets a bookmark is one
// the API server does not cache (Events, by default): it is listed afresh by
// every question that reads it.
//
// The store's applied resourceVersion is client-go's
// LastStoreSyncResourceVersion: the version of the last change, bookmark or
// list the store itself has applied, not what the reflector has merely
// received. A store whose watch is down applies nothing, so it is never shown
// current: the question waits for its informer to resync, or its sync timeout
// names the type. If the probe cannot replay from A (410 Gone: A is older than
// the server's watch history) or the type's resourceVersions are not numbers
// to compare, the question lists that type afresh instead (borrower.relist).

// defaultCompareUpTo is the size up to which a store is compared with a
// LIST of its objects instead of waiting for a bookmark (step 2 above): 5,000
// objects with metadata as heavy as the bench's realistic pods (6.0 KB of
// metadata-only protobuf each, managedFields included) are about 29 MB and
// 0.2 s to list, scaled from the bench's metadata LIST of 20,000 such pods
// (115 MB, 0.78 s); a bookmark is 0.1 to 2.3 s away.
const defaultCompareUpTo = 5000

// probeWatchTimeout is the timeoutSeconds of a probe's watch: the shortest
// that earns a bookmark from the API server, which sends none to a watch that
// is due to end within 2 s.
const probeWatchTimeout = int64(3)

// bookmarkDue is when a probe's watch has its bookmark if it is to have one:
// the server makes it due 1 s after the request (2 s before its deadline) and
// sends it at its next bookmark tick, 1 to 1.25 s apart.
var bookmarkDue = 2300 * time.Millisecond

// storePoll is how often a probe looks at a store's applied resourceVersion.
// It is a lock and a read.
const storePoll = 5 * time.Millisecond

// Freshness is how current a question's borrowed stores must be.
type Freshness struct {
	// Start is when the question started: a store must hold every write the
	// API server acknowledged before it.
	Start time.Time
	// MaxStaleness, when positive, accepts a store shown current at most this
	// long before Start without asking the server again (--max-staleness).
	MaxStaleness time.Duration
}

// confirmation is what a store is known to hold: the server's state of its
// objects at resourceVersion rv (or later), which holds every write the API
// server acknowledged before at.
type confirmation struct {
	rv     uint64
	rvText string
	at     time.Time
}

// covers reports whether c shows a store current enough for want.
func (c confirmation) covers(want Freshness) bool {
	if c.at.IsZero() {
		return false
	}
	if !c.at.Before(want.Start) {
		return true
	}
	return want.MaxStaleness > 0 && !c.at.Before(want.Start.Add(-want.MaxStaleness))
}

// round is one freshness proof of a warm informer, shared by every question
// waiting for it. Its result shows the store current as of started.
type round struct {
	started time.Time
	done    chan struct{}
	cancel  context.CancelFunc
	waiters int
	// abandoned is set when every waiter gave up: the round was cancelled,
	// and a question that comes later starts another.
	abandoned bool
	err       error
}

// errAbandoned ends a round nobody waits for any more.
var errAbandoned = errors.New("the freshness check was abandoned")

// errNeedsList says a store cannot be shown current by a probe: its
// resourceVersion is older than the server's watch history, the type's
// resourceVersions are not numbers, or the server sends no bookmarks for it
// (it does not cache it). The question lists the type afresh; always says it
// will be so for every question (Pool.unprovable).
type errNeedsList struct {
	why    string
	always bool
}

func (e *errNeedsList) Error() string { return e.why }

// fresh waits until w's store is current enough for want, or ctx ends, and
// returns what it is current as of. Questions that wait at once share one
// round of the proof: a round started after a question did serves it.
func (w *warm) fresh(ctx context.Context, want Freshness) (confirmation, error) {
	for {
		w.mu.Lock()
		if w.confirmed.at.IsZero() && w.inf.HasSynced() {
			// The first list was asked for after w.started: a consistent list
			// at the server's latest version then.
			rv := w.inf.GetIndexer().LastStoreSyncResourceVersion()
			n, _ := strconv.ParseUint(rv, 10, 64)
			w.confirmed = confirmation{rv: n, rvText: rv, at: w.started}
		}
		if w.confirmed.covers(want) {
			c := w.confirmed
			w.mu.Unlock()
			return c, nil
		}
		r := w.round
		if r == nil {
			r = w.startRoundLocked()
		}
		r.waiters++
		w.mu.Unlock()

		select {
		case <-r.done:
		case <-ctx.Done():
			w.leave(r)
			return confirmation{}, ctx.Err()
		}
		w.leave(r)
		if r.err != nil && r.err != errAbandoned && !r.started.Before(want.Start) {
			return confirmation{}, r.err
		}
		// Confirmed (covers on the next pass), or a round begun before this
		// question, abandoned or failed: look again.
	}
}

// startRoundLocked starts a round of the proof; w.mu is held.
func (w *warm) startRoundLocked() *round {
	ctx, cancel := context.WithCancel(w.pool.ctx)
	r := &round{started: w.pool.now(), done: make(chan struct{}), cancel: cancel}
	w.round = r
	go func() {
		defer cancel()
		c, err := w.prove(ctx, r.started)
		w.mu.Lock()
		if err == nil && c.at.After(w.confirmed.at) {
			w.confirmed = c
		}
		if r.abandoned {
			err = errAbandoned
		}
		r.err = err
		if w.round == r {
			w.round = nil
		}
		w.mu.Unlock()
		close(r.done)
	}()
	return r
}

// leave counts a waiter out of r; the last one out of a round still running
// cancels it.
func (w *warm) leave(r *round) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r.waiters--
	if r.waiters > 0 {
		return
	}
	select {
	case <-r.done:
	default:
		r.abandoned = true
		r.cancel()
		if w.round == r {
			w.round = nil
		}
	}
}

// appliedRV returns the resourceVersion w's store has applied.
func (w *warm) appliedRV() (uint64, string, error) {
	text := w.inf.GetIndexer().LastStoreSyncResourceVersion()
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return 0, text, notNumbers(w, text)
	}
	return n, text, nil
}

func notNumbers(w *warm, rv string) error {
	return &errNeedsList{why: fmt.Sprintf("the resourceVersions of %s are not numbers (%q)", w.res.Name(), rv), always: true}
}

// prove shows w's store current as of ts, the time just before the server's
// current resourceVersion is asked for.
func (w *warm) prove(ctx context.Context, ts time.Time) (confirmation, error) {
	var text string
	err := w.retrying(ctx, func() (err error) {
		text, err = w.pool.probe.current(ctx, w)
		return err
	})
	if err != nil {
		return confirmation{}, err
	}
	target, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return confirmation{}, notNumbers(w, text)
	}
	w.mu.Lock()
	w.target = text
	shown := w.confirmed.rv
	w.mu.Unlock()
	c := confirmation{rv: target, rvText: text, at: ts}
	applied, _, err := w.appliedRV()
	if err != nil {
		return confirmation{}, err
	}
	if applied >= target || shown >= target {
		// The store holds the server's state at target or later: it has
		// applied target, or was shown current at target or later already
		// (nothing was written anywhere since).
		return c, nil
	}
	if n := w.pool.compareUpTo; n > 0 && len(w.inf.GetStore().ListKeys()) <= n {
		// A small store is compared with a LIST of its objects, asked for
		// after the target was: when it holds them, it holds the server's
		// state at the LIST's resourceVersion, at or past the target,
		// whatever was written elsewhere since it last changed.
		var listed *metav1.PartialObjectMetadataList
		err := w.retrying(ctx, func() (err error) {
			listed, err = w.pool.probe.list(ctx, w, int64(n))
			return err
		})
		if err != nil {
			return confirmation{}, err
		}
		if listed.Continue == "" && w.holds(listed.Items) {
			if rv, err := strconv.ParseUint(listed.ResourceVersion, 10, 64); err == nil && rv >= target {
				return confirmation{rv: rv, rvText: listed.ResourceVersion, at: ts}, nil
			}
		}
	}
	last, done, err := w.bound(ctx, target)
	if err != nil || done {
		return c, err
	}
	// The store applies the changes its own stream delivers, in the order the
	// probe saw them: once it has applied the last one up to the target, it
	// holds them all.
	t := time.NewTicker(storePoll)
	defer t.Stop()
	for {
		applied, _, err := w.appliedRV()
		if err != nil {
			return confirmation{}, err
		}
		if applied >= last || applied >= target {
			return c, nil
		}
		select {
		case <-ctx.Done():
			return confirmation{}, ctx.Err()
		case <-t.C:
		}
	}
}

// retrying asks the server for its current resourceVersion with ask, trying
// again after transient failures (a restarting API server) until ctx ends.
func (w *warm) retrying(ctx context.Context, ask func() error) error {
	pause := 100 * time.Millisecond
	for {
		err := ask()
		if err == nil {
			w.setProbeErr(nil)
			return nil
		}
		if ctx.Err() != nil || !informer.Retriable(err) {
			return err
		}
		w.setProbeErr(err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// holds reports whether w's store holds exactly the objects listed: the same
// keys, each with the same UID and resourceVersion, and no other.
func (w *warm) holds(listed []metav1.PartialObjectMetadata) bool {
	store := w.inf.GetIndexer()
	if len(store.ListKeys()) != len(listed) {
		return false
	}
	for i := range listed {
		it := &listed[i]
		key := it.Name
		if it.Namespace != "" {
			key = it.Namespace + "/" + it.Name
		}
		obj, ok, err := store.GetByKey(key)
		if err != nil || !ok {
			return false
		}
		a, err := meta.Accessor(obj)
		if err != nil || a.GetUID() != it.UID || a.GetResourceVersion() != it.ResourceVersion {
			return false
		}
	}
	return true
}

func (w *warm) setProbeErr(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.probeErr = err
}

// bound watches w's objects from what its store has applied until the changes
// up to target are known, and returns the resourceVersion of the last of
// them (0 for none); done says the store has applied target meanwhile.
//
// The probe watches the informer's own objects first: its namespace and
// selectors. The API server skips the changes a watch's selection leaves out
// and moves the watch past them all the same, and it sends no bookmark at the
// resourceVersion a watch is at; so when the last write anywhere was a change
// of this type outside the selection (in a cluster where nothing else
// happens), a selective watch never hears of it, nor of anything else. A
// watch that ends without a bookmark is followed by one of the whole type,
// every namespace and no selector, which the server hides nothing from, its
// changes filtered here: when the selection is a namespace and names, which
// the changes' metadata tells. When it is not (a label selector), or the user
// may not watch the whole type, the question lists the type afresh. A whole
// type's watch that ends without a bookmark twice says the server does not
// cache the type: its questions list it afresh from then on.
func (w *warm) bound(ctx context.Context, target uint64) (last uint64, done bool, err error) {
	from, _, err := w.appliedRV()
	if err != nil {
		return 0, false, err
	}
	whole, concerns := false, selectionOf(w)
	bookmarkless := 0
	pause := 100 * time.Millisecond
	for {
		wi, err := w.pool.probe.watch(ctx, w, strconv.FormatUint(from, 10), whole)
		if err != nil {
			switch {
			case expired(err):
				return 0, false, &errNeedsList{why: fmt.Sprintf("the server no longer has the changes of %s after resourceVersion %d", w.res.Name(), from)}
			case whole && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)):
				return 0, false, &errNeedsList{why: fmt.Sprintf("a watch of %s in every namespace is not allowed: %v", w.res.Name(), err)}
			case ctx.Err() != nil || !informer.Retriable(err):
				return 0, false, err
			}
			w.setProbeErr(err)
			select {
			case <-ctx.Done():
				return 0, false, ctx.Err()
			case <-time.After(pause):
			}
			pause = min(2*pause, time.Second)
			continue
		}
		r := probeRead{last: last, from: from}
		if whole {
			r.concerns = concerns
		}
		err = w.readProbe(ctx, wi, target, &r)
		wi.Stop()
		last, from = r.last, r.from
		if err != nil || r.bounded || r.done {
			return last, r.done, err
		}
		if r.bookmarked {
			bookmarkless = 0
			continue
		}
		bookmarkless++
		switch {
		case !whole && concerns == nil:
			return 0, false, &errNeedsList{why: fmt.Sprintf("a watch of the %s selected heard nothing up to resourceVersion %d", w.res.Name(), target)}
		case !whole:
			// Watch the whole type from where the selective watch started:
			// it may have been moved past changes it did not show.
			whole, bookmarkless = true, 0
			from, last = r.start, 0
		case bookmarkless >= bookmarklessProbes:
			return 0, false, &errNeedsList{why: fmt.Sprintf("the server sends no watch bookmarks for %s (it does not cache them)", w.res.Name()), always: true}
		}
	}
}

// bookmarklessProbes is how many watches of a whole type in a row that end
// without a bookmark show that the server sends none for it: one can miss its
// bookmark when the server finds the watch's buffer full.
const bookmarklessProbes = 2

// selectionOf returns what tells w's objects from the others of their type by
// their metadata (namespace, and the names of a metadata.name field
// selector), or nil when nothing does: a label selector, or a field selector
// on other fields. A label selector is left out because an object that stops
// matching it is a change of the selection too, which its new labels no
// longer show.
func selectionOf(w *warm) func(metav1.Object) bool {
	if w.key.labelSelector != "" {
		return nil
	}
	sel, err := fields.ParseSelector(w.key.fieldSelector)
	if err != nil {
		return nil
	}
	for _, r := range sel.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return nil
		}
	}
	ns := w.key.namespace
	return func(o metav1.Object) bool {
		if ns != "" && o.GetNamespace() != ns {
			return false
		}
		return sel.Matches(fields.Set{"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace()})
	}
}

// probeRead is what a probe's watch has shown so far.
type probeRead struct {
	// last is the last change of the selection up to the target, from the
	// resourceVersion the watch has reached, start where it started.
	last, from, start uint64
	// concerns, when set, says which changes are of the selection: the
	// watch is of the whole type.
	concerns func(metav1.Object) bool
	// bounded says every change up to the target has been seen, done that
	// the store has applied the target meanwhile, bookmarked that the watch
	// brought a bookmark.
	bounded, done, bookmarked bool
}

// readProbe reads a probe's watch into r until it bounds the changes up to
// target, the store applies target, the watch ends or ctx does.
func (w *warm) readProbe(ctx context.Context, wi watch.Interface, target uint64, r *probeRead) error {
	r.start = r.from
	t := time.NewTicker(storePoll)
	defer t.Stop()
	// A selective watch that brought no bookmark when one was due may have
	// been moved past a change it did not show: the whole type is watched
	// (bound).
	var due <-chan time.Time
	if r.concerns == nil {
		timer := time.NewTimer(bookmarkDue)
		defer timer.Stop()
		due = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-due:
			if !r.bookmarked {
				return nil
			}
		case <-t.C:
			if applied, _, err := w.appliedRV(); err == nil && applied >= target {
				r.done = true
				return nil
			}
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return nil
			}
			if ev.Type == watch.Error {
				err := apierrors.FromObject(ev.Object)
				if expired(err) {
					return &errNeedsList{why: fmt.Sprintf("the server no longer has the changes of %s after resourceVersion %d", w.res.Name(), r.from)}
				}
				return err
			}
			a, err := meta.Accessor(ev.Object)
			if err != nil {
				return fmt.Errorf("a probe of %s: %w", w.res.Name(), err)
			}
			rv, err := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
			if err != nil {
				return notNumbers(w, a.GetResourceVersion())
			}
			r.from = max(r.from, rv)
			if ev.Type == watch.Bookmark {
				r.bookmarked = true
			} else if rv <= target && (r.concerns == nil || r.concerns(a)) {
				r.last = rv
			}
			if rv >= target {
				// The stream has reached the target: every change up to it
				// came before, or is this one.
				r.bounded = true
				return nil
			}
		}
	}
}

// expired reports whether err says a resourceVersion is older than the
// server's history.
func expired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// prober asks the server what freshness needs.
type prober interface {
	// current returns the server's current resourceVersion: a consistent
	// LIST of at most one object of w's resource in w's namespace.
	current(ctx context.Context, w *warm) (string, error)
	// list returns w's objects (its namespace and selectors), metadata only,
	// from a consistent LIST of at most limit of them: the list's
	// resourceVersion is the server's current one, and a continue token says
	// there are more.
	list(ctx context.Context, w *warm, limit int64) (*metav1.PartialObjectMetadataList, error)
	// watch watches w's objects (its namespace and selectors), or with whole
	// every object of its type, from rv, with bookmarks, for
	// probeWatchTimeout seconds.
	watch(ctx context.Context, w *warm, rv string, whole bool) (watch.Interface, error)
}

// metadataProber probes with metadata-only requests: the probe's LIST asks
// for one object's metadata, and its watch sees the changes of the
// informer's objects, whatever their mode, at the same resourceVersions.
type metadataProber struct{ client metadata.Interface }

func (p metadataProber) resource(w *warm) metadata.ResourceInterface {
	r := p.client.Resource(w.res.GVR)
	if w.key.namespace != "" {
		return r.Namespace(w.key.namespace)
	}
	return r
}

func (p metadataProber) current(ctx context.Context, w *warm) (string, error) {
	// No selectors: the answer's resourceVersion is the same, and a selector
	// would make the server look beyond the first object for a match.
	list, err := p.resource(w).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "", err
	}
	return list.ResourceVersion, nil
}

func (p metadataProber) list(ctx context.Context, w *warm, limit int64) (*metav1.PartialObjectMetadataList, error) {
	return p.resource(w).List(ctx, metav1.ListOptions{
		Limit:         limit,
		LabelSelector: w.key.labelSelector,
		FieldSelector: w.key.fieldSelector,
	})
}

func (p metadataProber) watch(ctx context.Context, w *warm, rv string, whole bool) (watch.Interface, error) {
	timeout := probeWatchTimeout
	if whole {
		return p.client.Resource(w.res.GVR).Watch(ctx, metav1.ListOptions{
			ResourceVersion:     rv,
			AllowWatchBookmarks: true,
			TimeoutSeconds:      &timeout,
		})
	}
	return p.resource(w).Watch(ctx, metav1.ListOptions{
		ResourceVersion:     rv,
		AllowWatchBookmarks: true,
		TimeoutSeconds:      &timeout,
		LabelSelector:       w.key.labelSelector,
		FieldSelector:       w.key.fieldSelector,
	})
}

// lag words why w's store is not shown current yet, for a timeout.
func (w *warm) lag() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, applied, _ := w.appliedRV()
	msg := w.res.Name() + " did not catch up with the server"
	switch {
	case w.target != "":
		msg += fmt.Sprintf(" (resourceVersion %s; its store has applied %s)", w.target, applied)
	case w.probeErr != nil:
		msg += fmt.Sprintf(" (asking for its resourceVersion: %v)", w.probeErr)
	}
	if d := w.down; d != nil {
		msg += fmt.Sprintf(": its watch is down since %s: %v", d.since.Format(time.TimeOnly), d.cause)
	}
	return msg
}

// reflectorLogContext keeps the reflectors' log lines for -v=2 and above.
func reflectorLogContext(ctx context.Context) context.Context {
	return klog.NewContext(ctx, klog.FromContext(ctx).V(2))
}
