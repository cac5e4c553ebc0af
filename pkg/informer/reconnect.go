package informer

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// Reconnect describes an outage of a synced informer's watch that has ended.
type Reconnect struct {
	Resource Resource
	// Down is how long the informer could not see changes: from the end of its
	// last good watch (or its first error) until it was caught up again.
	Down time.Duration
	// Relisted is true when the informer had to list again, typically because the
	// server no longer had the resource version it watched from (410 Gone). Its
	// handlers then received the list as updates of every object, additions, and
	// cache.DeletedFinalStateUnknown tombstones for objects deleted meanwhile.
	Relisted bool
	// Cause is the first error of the outage.
	Cause error
}

// lostReportDelay is how long an outage must last before OnWatchLost hears of
// it. A watch that expired (410 Gone) is usually relisted within milliseconds and
// deserves one line when it is back, not two.
const lostReportDelay = time.Second

// settleDelay: a watch request that succeeds can still end at once with an
// ERROR event, as after an API server restart when the new server does not have
// the resource version asked for. A reopened watch counts as restored once it
// delivers a normal event or stays open this long.
const settleDelay = 500 * time.Millisecond

// errRelist is the cause recorded when an informer lists again without an error
// having been seen first.
var errRelist = errors.New("the informer listed again")

// connTracker follows the list and watch requests of one informer and turns them
// into outages: after the first successful list, a failed watch request, an
// ERROR event or a new list starts one; a successful list, or a watch that
// delivers events or stays open, ends it.
//
// The reflector ends a watch quietly in more ways than its watch error handler
// sees (an expired resource version in the stream, a refused connection it
// retries on its own), so the requests themselves are observed instead.
type connTracker struct {
	res        Resource
	onLost     func(Resource, error)
	onRestored func(Reconnect)
	now        func() time.Time
	afterFunc  func(time.Duration, func()) stopper

	mu sync.Mutex
	// listed is set by the first successful list: later lists are relists.
	listed bool
	// streamEnded is when the last watch stream ended; zero while one is open.
	streamEnded time.Time
	// The current outage, if down.
	down     bool
	outage   int
	since    time.Time
	cause    error
	relisted bool
	lost     stopper
	// settling is the reopened watch that may end the outage.
	settling *trackedWatch
	settle   stopper
}

// stopper is the part of *time.Timer the tracker uses; tests substitute it.
type stopper interface{ Stop() bool }

func newConnTracker(res Resource, onLost func(Resource, error), onRestored func(Reconnect)) *connTracker {
	return &connTracker{
		res: res, onLost: onLost, onRestored: onRestored, now: time.Now,
		afterFunc: func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) },
	}
}

// listStarted is called before the first page of every list.
func (t *connTracker) listStarted() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.listed {
		return
	}
	t.goDownLocked(errRelist)
	t.relisted = true
}

// listDone is called after each list request; complete is false for pages
// followed by more.
func (t *connTracker) listDone(complete bool, err error) {
	t.mu.Lock()
	if err != nil {
		if t.listed {
			t.goDownLocked(err)
		}
		t.mu.Unlock()
		return
	}
	if !complete {
		t.mu.Unlock()
		return
	}
	if !t.listed {
		t.listed = true
		t.mu.Unlock()
		return
	}
	t.restoreLocked()
}

// watchStarted is called after every watch request; w is nil when it failed.
func (t *connTracker) watchStarted(w *trackedWatch, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		if t.listed {
			t.goDownLocked(err)
		}
		return
	}
	t.streamEnded = time.Time{}
	if !t.down {
		return
	}
	t.settling = w
	outage := t.outage
	t.stopSettleLocked()
	t.settle = t.afterFunc(settleDelay, func() {
		t.mu.Lock()
		if t.down && t.outage == outage && t.settling == w {
			t.restoreLocked()
			return
		}
		t.mu.Unlock()
	})
}

// watchEvent is called for every event of w before the reflector sees it.
func (t *connTracker) watchEvent(w *trackedWatch, ev watch.Event) {
	if ev.Type == watch.Error {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopSettleLocked()
		t.goDownLocked(apierrors.FromObject(ev.Object))
		return
	}
	t.mu.Lock()
	if t.down && t.settling == w {
		t.restoreLocked()
		return
	}
	t.mu.Unlock()
}

// watchEnded is called when w's stream ends, for whatever reason: a server
// timeout is routine (the reflector watches again from where it was), so it only
// dates a possible outage that the next request reveals.
func (t *connTracker) watchEnded(w *trackedWatch) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.streamEnded = t.now()
	if t.settling == w {
		t.stopSettleLocked()
	}
}

// goDownLocked starts an outage unless one is under way.
func (t *connTracker) goDownLocked(cause error) {
	if t.down {
		if t.cause == errRelist && cause != errRelist {
			t.cause = cause
		}
		return
	}
	t.down = true
	t.outage++
	t.since = t.now()
	if !t.streamEnded.IsZero() && t.streamEnded.Before(t.since) {
		// The stream ended before the request that failed: the outage began then.
		t.since = t.streamEnded
	}
	t.cause = cause
	t.relisted = false
	if t.onLost != nil {
		outage := t.outage
		t.lost = t.afterFunc(lostReportDelay, func() {
			t.mu.Lock()
			report := t.down && t.outage == outage
			cause := t.cause
			t.mu.Unlock()
			if report {
				t.onLost(t.res, cause)
			}
		})
	}
}

// restoreLocked ends the outage, unlocks t and reports.
func (t *connTracker) restoreLocked() {
	r := Reconnect{Resource: t.res, Down: t.now().Sub(t.since), Relisted: t.relisted, Cause: t.cause}
	t.down = false
	t.relisted = false
	t.settling = nil
	t.stopSettleLocked()
	if t.lost != nil {
		t.lost.Stop()
		t.lost = nil
	}
	t.mu.Unlock()
	if t.onRestored != nil {
		t.onRestored(r)
	}
}

func (t *connTracker) stopSettleLocked() {
	if t.settle != nil {
		t.settle.Stop()
		t.settle = nil
	}
}

// list wraps a list function.
func (t *connTracker) list(list func(context.Context, metav1.ListOptions) (runtime.Object, error)) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		if o.Continue == "" {
			t.listStarted()
		}
		obj, err := list(ctx, o)
		complete := true
		if err == nil {
			if la, aerr := meta.ListAccessor(obj); aerr == nil && la.GetContinue() != "" {
				complete = false
			}
		}
		t.listDone(complete, err)
		return obj, err
	}
}

// watch wraps a watch function.
func (t *connTracker) watch(watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) func(context.Context, metav1.ListOptions) (watch.Interface, error) {
	return func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		w, err := watchFn(ctx, o)
		if err != nil {
			t.watchStarted(nil, err)
			return nil, err
		}
		tw := newTrackedWatch(w, t)
		t.watchStarted(tw, nil)
		go tw.run()
		return tw, nil
	}
}

// trackedWatch passes a watch's events on to the reflector, telling the tracker
// about each first. It costs one goroutine per watch and one channel hop per
// event, and exists only when a caller asked for OnWatchLost or OnWatchRestored.
type trackedWatch struct {
	inner   watch.Interface
	tracker *connTracker
	out     chan watch.Event
	done    chan struct{}
	once    sync.Once
}

func newTrackedWatch(inner watch.Interface, t *connTracker) *trackedWatch {
	return &trackedWatch{inner: inner, tracker: t, out: make(chan watch.Event), done: make(chan struct{})}
}

func (w *trackedWatch) run() {
	defer close(w.out)
	defer w.tracker.watchEnded(w)
	in := w.inner.ResultChan()
	for {
		select {
		case ev, ok := <-in:
			if !ok {
				return
			}
			w.tracker.watchEvent(w, ev)
			select {
			case w.out <- ev:
			case <-w.done:
				return
			}
		case <-w.done:
			return
		}
	}
}

// ResultChan implements watch.Interface.
func (w *trackedWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface.
func (w *trackedWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.inner.Stop()
	})
}
