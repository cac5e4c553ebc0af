package pool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/wire"
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
//     on its way to it) goes on to step 3. A bigger store, up to raceUpTo
//     objects, is compared with an unpaged LIST of its objects and probed
//     as step 3 says at the same time: whichever shows it current first
//     does, and the other is cancelled (race). The pod store of 20,000
//     realistic pods is compared in 0.23 to 0.45 s on a server on the same
//     machine (121 MB of metadata, newKeysClient), against a bookmark 0.1 to
//     2.3 s away. A big store that differs from the LIST (a change on its
//     way to it), or applied something while compared with it, keeps the
//     LIST's keys and resourceVersions (a listing, about 60 bytes an
//     object) and catches up with it while the probe watches (converge): it
//     is shown current once it has applied the LIST's resourceVersion, or,
//     when the LIST's last write was of another type, which it never
//     applies, once it holds exactly what the LIST held, matched again each
//     time it applies something, as the comparison below shows.
//
//     Why a comparison proves it (compare). The LIST is consistent (no
//     resourceVersion), or unpaged at R or later (resourceVersionMatch
//     NotOlderThan): the server answers with its state of the objects at a
//     resourceVersion L at or past R, and so at or past every write
//     acknowledged before the question; L < R is refused here. The store's
//     applied resourceVersion A is read before the LIST is sent and again
//     once its last object was compared; the same value says the store
//     applied nothing in between (client-go sets it, under the store's lock,
//     with every change, bookmark and list the store applies), so every
//     object was compared with one state of the store: the server's state of
//     the informer's objects at A, its stream being the server's changes of
//     them in order. The store holds each object listed (by namespace and
//     name) at the resourceVersion listed, and as many objects as were
//     listed: the same objects, each at the same write (a resourceVersion
//     is the etcd revision of an object's last write, which no other write
//     shares; an object deleted and created again has another). So the
//     server's state of the objects at A is its state at L: no write up to L
//     left an object the store lacks, nor changed or deleted one it holds,
//     and the store holds every write up to R. One thing a state cannot
//     show is an object both created and deleted after A and by L: absent at
//     A and at L, its changes are still on their way to the store, which
//     holds it for the moment between applying them. Every change on its way
//     up to L is of such an object (any other would have made the store
//     differ), and every later one is at a resourceVersion past L: so until
//     the store has applied L, an object it holds at a resourceVersion in
//     (A, L] is such a phantom, and the question's view of the store hides
//     it (confirmation.hideAbove, phantomFilter), for a small store compared
//     first as for a big one raced.
//
//     The LIST is made cheap (metadataProber.compare): unpaged, so the
//     server serves it from one snapshot of its watch cache; protobuf, read
//     as it arrives, only each object's namespace, name and resourceVersion
//     (wire.ReadListKeys), compared with the store at once and, for a small
//     store, stopped at the first that differs; uncompressed from a server
//     on this machine. The store matched with a listing later is the same
//     argument with A the resourceVersion it has applied when matched.
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
// A probe with no bookmark when one was due (Pool.bookmarkDue) is followed by one
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

// defaultRaceUpTo is the size up to which a store bigger than compareUpTo
// is compared with an unpaged LIST of its objects while its probe watches
// (race). The LIST of 20,000 realistic pods' metadata, 121 MB, took 0.23 to
// 0.45 s on a loopback server with a busy 2-core machine (newKeysClient): at
// 50,000 such objects it takes about as long as a bookmark's usual wait (a
// second), and a LIST that cannot win is the server's work for nothing.
const defaultRaceUpTo = 50000

// probeWatchTimeout is the timeoutSeconds of a probe's watch: the shortest
// that earns a bookmark from the API server, which sends none to a watch that
// is due to end within 2 s.
const probeWatchTimeout = int64(3)

// defaultBookmarkDue is when a probe's watch has its bookmark if it is to
// have one: the server makes it due 1 s after the request (2 s before its
// deadline) and sends it at its next bookmark tick, 1 to 1.25 s apart.
const defaultBookmarkDue = 2300 * time.Millisecond

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
	// hideAbove and hideUpTo, when hideUpTo is set, are the store's applied
	// resourceVersion and the LIST's of a comparison that showed it current
	// (compare): any object the store comes to hold at a resourceVersion in
	// between, before it has applied hideUpTo, is one created and deleted
	// again in that stretch, on its way to the store, and is hidden from the
	// questions (phantoms).
	hideAbove, hideUpTo uint64
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
	if applied >= target {
		// The store holds the server's state at target or later: it has
		// applied target.
		return c, nil
	}
	if shown >= target {
		// It was shown current at target or later already (nothing was
		// written anywhere since): by a comparison, whose phantoms, if any,
		// are still hidden.
		w.mu.Lock()
		c.hideAbove, c.hideUpTo = w.confirmed.hideAbove, w.confirmed.hideUpTo
		w.mu.Unlock()
		return c, nil
	}
	size := len(w.inf.GetStore().ListKeys())
	if n := w.pool.compareUpTo; n > 0 && size <= n {
		// A small store is compared with a LIST of its objects, asked for
		// after the target was: when it holds them, it holds the server's
		// state at the LIST's resourceVersion, at or past the target,
		// whatever was written elsewhere since it last changed.
		var shown confirmation
		var ok bool
		err := w.retrying(ctx, func() (err error) {
			shown, ok, _, err = w.compare(ctx, target, int64(n), ts, false)
			return err
		})
		if err != nil {
			return confirmation{}, err
		}
		if ok {
			return shown, nil
		}
		return c, w.follow(ctx, target)
	}
	if n := w.pool.raceUpTo; n > 0 && size <= n {
		return w.race(ctx, target, c)
	}
	return c, w.follow(ctx, target)
}

// follow shows w's store current at target by a probe's watch (step 3) and
// waits until the store has applied the last change up to target it saw
// (step 4).
func (w *warm) follow(ctx context.Context, target uint64) error {
	last, done, err := w.bound(ctx, target)
	if err != nil || done {
		return err
	}
	// The store applies the changes its own stream delivers, in the order the
	// probe saw them: once it has applied the last one up to the target, it
	// holds them all.
	t := time.NewTicker(storePoll)
	defer t.Stop()
	for {
		applied, _, err := w.appliedRV()
		if err != nil {
			return err
		}
		if applied >= last || applied >= target {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// race shows a store too big to compare first current by whichever proves it
// first: a comparison with an unpaged LIST of its objects, or a probe's watch
// (follow). The other is cancelled, and race returns once both have ended. A
// comparison that fails or finds the store different leaves the proof to the
// watch; a watch that fails leaves it to the comparison, and its error is the
// question's when the comparison does not prove the store current either.
func (w *warm) race(ctx context.Context, target uint64, c confirmation) (confirmation, error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	type compared struct {
		c   confirmation
		ok  bool
		err error
	}
	listed := make(chan compared, 1)
	followed := make(chan error, 1)
	wg.Go(func() {
		shown, ok, l, err := w.compare(ctx, target, 0, c.at, true)
		if l != nil {
			// The store differed from the LIST, or changed while compared
			// with it: a change on its way. It is matched again as it
			// catches up, while the probe watches.
			shown, err = w.converge(ctx, l, c)
			ok = err == nil
		}
		listed <- compared{shown, ok, err}
	})
	wg.Go(func() { followed <- w.follow(ctx, target) })
	var followErr error
	for listed != nil || followed != nil {
		select {
		case o := <-listed:
			listed = nil
			if o.ok {
				return o.c, nil
			}
			if o.err != nil && ctx.Err() == nil {
				klog.FromContext(ctx).V(4).Info("Comparing a warm store with a LIST failed; its probe's watch decides", "resource", w.res.Name(), "err", o.err)
			}
		case err := <-followed:
			followed = nil
			if err == nil {
				return c, nil
			}
			followErr = err
		}
	}
	return confirmation{}, followErr
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

// compare compares w's store with a consistent LIST of its objects (its
// namespace and selectors, metadata only) of at most limit of them (0: all,
// unpaged), asked for now, read as it arrives: it reports whether the store
// holds exactly the objects listed, each at the resourceVersion listed, and
// no other, and had applied nothing while it was compared (its applied
// resourceVersion the same before and after), and the LIST is at or past
// target. Then the store is the server's state of its objects at the LIST's
// resourceVersion, which the confirmation is of, as of ts.
//
// Without keep, the reading stops at the first object that differs. With
// keep, the LIST is read whole and, when it does not show the store current
// but is whole and at or past target, returned (a listing): the store may
// catch up with it (converge).
func (w *warm) compare(ctx context.Context, target uint64, limit int64, ts time.Time, keep bool) (confirmation, bool, *listing, error) {
	// Unpaged, the LIST asks for the target or later: the server's watch
	// cache of the type has caught up with it already (step 1), and it
	// answers at once, where a consistent LIST would first ask etcd for its
	// latest revision and wait for the cache to catch up with that.
	atLeast := ""
	if limit == 0 {
		atLeast = strconv.FormatUint(target, 10)
	}
	store := w.inf.GetIndexer()
	before := store.LastStoreSyncResourceVersion()
	same := true
	var l *listing
	if keep {
		l = newListing(len(store.ListKeys()))
	}
	m := matcher{store: store}
	rvText, whole, err := w.pool.probe.compare(ctx, w, limit, atLeast, func(namespace, name, rv []byte) bool {
		if l != nil {
			l.add(namespace, name, rv)
		}
		if same && !m.holds(namespace, name, rv) {
			same = false
		}
		return same || l != nil
	})
	if err != nil {
		return confirmation{}, false, nil, err
	}
	rv, err := strconv.ParseUint(rvText, 10, 64)
	if !whole || err != nil || rv < target {
		return confirmation{}, false, nil, nil
	}
	if !same || m.listed != len(store.ListKeys()) || store.LastStoreSyncResourceVersion() != before {
		if l != nil {
			l.rv, l.rvText = rv, rvText
		}
		return confirmation{}, false, l, nil
	}
	return shownBy(rv, rvText, before, ts), true, nil, nil
}

// shownBy is the confirmation of a store that held exactly what a LIST at
// resourceVersion rv held while it had applied the resourceVersion applied:
// of rv, with what the store may come to hold in between hidden until it has
// applied rv (phantoms, step 2).
func shownBy(rv uint64, rvText, applied string, ts time.Time) confirmation {
	c := confirmation{rv: rv, rvText: rvText, at: ts}
	if a, err := strconv.ParseUint(applied, 10, 64); err == nil && a < rv {
		c.hideAbove, c.hideUpTo = a, rv
	}
	return c
}

// matcher looks a listed object up in a store.
type matcher struct {
	store  cache.Indexer
	key    []byte
	listed int
}

// holds counts one listed object and reports whether the store holds it at
// the resourceVersion listed.
func (m *matcher) holds(namespace, name, rv []byte) bool {
	m.listed++
	m.key = append(m.key[:0], namespace...)
	if len(namespace) > 0 {
		m.key = append(m.key, '/')
	}
	m.key = append(m.key, name...)
	obj, ok, err := m.store.GetByKey(string(m.key))
	if err != nil || !ok {
		return false
	}
	a, err := meta.Accessor(obj)
	return err == nil && a.GetResourceVersion() == string(rv)
}

// listing is what a LIST a store was compared with held: each object's
// namespace, name and resourceVersion, back to back in one buffer, and the
// LIST's resourceVersion.
type listing struct {
	rv     uint64
	rvText string
	buf    []byte
	// ends are, for each object, where its namespace, name and
	// resourceVersion end in buf.
	ends [][3]int
}

func newListing(n int) *listing {
	return &listing{buf: make([]byte, 0, n*64), ends: make([][3]int, 0, n)}
}

func (l *listing) add(namespace, name, rv []byte) {
	l.buf = append(l.buf, namespace...)
	a := len(l.buf)
	l.buf = append(l.buf, name...)
	b := len(l.buf)
	l.buf = append(l.buf, rv...)
	l.ends = append(l.ends, [3]int{a, b, len(l.buf)})
}

// matches reports whether store holds exactly the objects of l, each at the
// resourceVersion listed, and no other.
func (l *listing) matches(store cache.Indexer) bool {
	m := matcher{store: store}
	start := 0
	for _, e := range l.ends {
		if !m.holds(l.buf[start:e[0]], l.buf[e[0]:e[1]], l.buf[e[1]:e[2]]) {
			return false
		}
		start = e[2]
	}
	return m.listed == len(store.ListKeys())
}

// converge shows w's store current after a LIST it was compared with, at or
// past target, found it behind (a change on its way) or changing: it waits
// until the store has applied the LIST's resourceVersion, which holds every
// change up to target, or holds exactly what the LIST held while it applies
// nothing, which shows it current as compare does (with its phantoms hidden
// the same way). Each time the store applies something it is matched with
// the listing again. A store that goes past the LIST without holding it has
// applied its resourceVersion: converge never waits for a change that will
// not come, only for ctx, when the store does neither (its watch is down).
func (w *warm) converge(ctx context.Context, l *listing, c confirmation) (confirmation, error) {
	store := w.inf.GetIndexer()
	t := time.NewTicker(storePoll)
	defer t.Stop()
	checked := ""
	for {
		before := store.LastStoreSyncResourceVersion()
		applied, err := strconv.ParseUint(before, 10, 64)
		if err != nil {
			return confirmation{}, notNumbers(w, before)
		}
		if applied >= l.rv {
			return c, nil
		}
		if before != checked {
			checked = before
			if l.matches(store) && store.LastStoreSyncResourceVersion() == before {
				return shownBy(l.rv, l.rvText, before, c.at), nil
			}
		}
		select {
		case <-ctx.Done():
			return confirmation{}, ctx.Err()
		case <-t.C:
		}
	}
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
		timer := time.NewTimer(w.pool.bookmarkDue)
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
	// compare reads w's objects (its namespace and selectors), metadata
	// only, from a LIST of at most limit of them (0: all, unpaged), handing
	// item the namespace, name and resourceVersion of each as it arrives
	// (valid during the call only); item returning false stops the reading.
	// The LIST is consistent, or with atLeast at that resourceVersion or
	// later. It returns the list's resourceVersion and whether every object
	// was handed over (no continue token, not stopped).
	compare(ctx context.Context, w *warm, limit int64, atLeast string, item func(namespace, name, resourceVersion []byte) bool) (rv string, whole bool, err error)
	// watch watches w's objects (its namespace and selectors), or with whole
	// every object of its type, from rv, with bookmarks, for
	// probeWatchTimeout seconds.
	watch(ctx context.Context, w *warm, rv string, whole bool) (watch.Interface, error)
}

// metadataProber probes with metadata-only requests: the probe's LIST asks
// for one object's metadata, and its watch sees the changes of the
// informer's objects, whatever their mode, at the same resourceVersions.
type metadataProber struct {
	client metadata.Interface
	// keys, when set, asks for the LISTs a store is compared with and reads
	// their protobuf answers as they arrive, only each object's namespace,
	// name and resourceVersion (wire.ReadListKeys): without it, they are
	// decoded whole by client.
	keys rest.Interface
}

// newKeysClient returns the REST client of a metadataProber's compared LISTs,
// from the pool's restConfig: protobuf, with a progress deadline for
// --request-timeout, and from a server on this machine uncompressed, over
// HTTP/1.1. The metadata of 20,000 realistic pods is 121 MB of protobuf;
// on the loopback, the LIST read as it arrives took 0.23 s over HTTP/1.1,
// 0.33 to 0.36 s over HTTP/2 (its flow control), 0.70 to 0.75 s gzipped
// (the server's compression), and 1.1 s through the metadata client, which
// decodes it whole.
func newKeysClient(restConfig *rest.Config) (rest.Interface, error) {
	cfg := metadata.ConfigFor(restConfig)
	if timeout := cfg.Timeout; timeout > 0 {
		cfg.Timeout = 0
		cfg.Wrap(wire.ProgressDeadline(timeout))
	}
	if informer.IsLoopback(cfg.Host) {
		cfg.DisableCompression = true
		cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	cfg.GroupVersion = &schema.GroupVersion{}
	cfg.APIPath = "/unused"
	return rest.RESTClientFor(cfg)
}

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

// metadataListAccept asks for a metadata-only list, protobuf first.
const metadataListAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

func (p metadataProber) compare(ctx context.Context, w *warm, limit int64, atLeast string, item func(namespace, name, resourceVersion []byte) bool) (string, bool, error) {
	opts := metav1.ListOptions{
		Limit:         limit,
		LabelSelector: w.key.labelSelector,
		FieldSelector: w.key.fieldSelector,
	}
	if atLeast != "" {
		opts.ResourceVersion, opts.ResourceVersionMatch = atLeast, metav1.ResourceVersionMatchNotOlderThan
	}
	if p.keys == nil {
		list, err := p.resource(w).List(ctx, opts)
		if err != nil {
			return "", false, err
		}
		return eachKey(list, item)
	}
	// A consistent LIST (no resourceVersion) is served from the API
	// server's watch cache once it has caught up with etcd, one at or past
	// atLeast once it has caught up with that; unpaged, from one snapshot of
	// it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body, err := p.keys.Get().AbsPath(resourcePath(w)...).
		SetHeader("Accept", metadataListAccept).
		VersionedParams(&opts, metav1.ParameterCodec).
		Stream(ctx)
	if err != nil {
		return "", false, err
	}
	defer body.Close()
	answer := bufio.NewReaderSize(body, 64<<10)
	if first, _ := answer.Peek(1); len(first) == 1 && first[0] == '{' {
		// A server that answers in JSON only.
		var list metav1.PartialObjectMetadataList
		if err := json.NewDecoder(answer).Decode(&list); err != nil {
			return "", false, err
		}
		return eachKey(&list, item)
	}
	lm, stopped, err := wire.ReadListKeys(answer, item)
	if err != nil {
		return "", false, err
	}
	return lm.ResourceVersion, !stopped && lm.Continue == "", nil
}

// eachKey hands item each object's namespace, name and resourceVersion of a
// decoded list, as compare does, until item says stop; it returns the list's
// resourceVersion and whether it was read whole.
func eachKey(list *metav1.PartialObjectMetadataList, item func(namespace, name, resourceVersion []byte) bool) (string, bool, error) {
	for i := range list.Items {
		it := &list.Items[i]
		if !item([]byte(it.Namespace), []byte(it.Name), []byte(it.ResourceVersion)) {
			return list.ResourceVersion, false, nil
		}
	}
	return list.ResourceVersion, list.Continue == "", nil
}

// resourcePath is the URL path of w's objects: its resource, in its
// namespace if it has one.
func resourcePath(w *warm) []string {
	gvr := w.res.GVR
	path := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		path = []string{"/api", gvr.Version}
	}
	if w.key.namespace != "" {
		path = append(path, "namespaces", w.key.namespace)
	}
	return append(path, gvr.Resource)
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
