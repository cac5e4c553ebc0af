package informer

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http/httptrace"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
)

// Reconnect describes an outage of a synced informer's watch that has ended.
type Reconnect struct {
	// Resource is the informer's.
	Resource Resource
	// Down is how long the informer could not see changes: from the end of its
	// last good watch (or its first error) until it was caught up again.
	Down time.Duration
	// Relisted is true when the informer had to list again, typically because the
	// server no longer had the resource version it watched from (410 Gone). Its
	// handlers then received the list as updates of every object, additions, and
	// cache.DeletedFinalStateUnknown tombstones for objects deleted meanwhile.
	Relisted bool
	// Cause is the first error of the outage, or the first that says more than
	// that the informer listed again or that its connection was lost.
	Cause error
}

// LostReportDelay is how long an outage must last before OnWatchLost hears of
// it. A watch that expired (410 Gone) is usually relisted within milliseconds and
// deserves one line when it is back, not two. An outage OnWatchLost hears of
// began that long before.
const LostReportDelay = time.Second

// settleDelay: a watch request that succeeds can still end at once with an
// ERROR event, as after an API server restart when the new server does not have
// the resource version asked for. A reopened watch counts as restored once it
// delivers a normal event or stays open this long.
const settleDelay = 500 * time.Millisecond

// errRelist is the cause recorded when an informer lists again without an error
// having been seen first.
var errRelist = errors.New("the informer listed again")

// errConnectionLost is the cause recorded when a watch stream was cut and the next
// request had to go out on a new connection.
var errConnectionLost = errors.New("the connection to the server was lost")

// cutSlack: a watch stream that ends more than this before the timeout it asked
// the server for was not ended by the server's timer.
const cutSlack = time.Second

// connTracker follows the list and watch requests of one informer and turns them
// into outages: after the first successful list, a failed watch request, an
// ERROR event or a new list starts one; a successful list, or a watch that
// delivers events or stays open, ends it.
//
// The reflector ends a watch quietly in more ways than its watch error handler
// sees (an expired resource version in the stream, a refused connection it
// retries on its own), so the requests themselves are observed instead.
//
// A connection that drops under a watch is the quietest: client-go reads the
// broken stream as a normal end, and the reflector resumes from where it was on
// a new connection, often within milliseconds. Each request therefore carries an
// HTTP trace saying which connection it went out on. Client-go talks HTTP/2 to the
// API server, one connection for every request, which is replaced only when it
// has died (or the server sent GOAWAY); so a watch stream that ended before the
// timeout it asked for, followed by a request on a new HTTP/2 connection, is an
// outage from the stream's end until the new watch has settled. Streams ended by
// the client's own --request-timeout go on over the same connection and do not
// count. HTTP/1 connections are pooled per request and tell nothing.
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
	// cut is set when the last watch stream ended early, not by the server's
	// timer nor by the reflector.
	cut bool
	// conn is the HTTP/2 connection the last request went out on; nil after
	// an HTTP/1 request or before any.
	conn net.Conn
	// multiplexed reports whether a connection speaks HTTP/2; tests substitute it.
	multiplexed func(net.Conn) bool
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
		afterFunc:   func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) },
		multiplexed: isHTTP2,
	}
}

// isHTTP2 reports whether c is a TLS connection that negotiated HTTP/2.
func isHTTP2(c net.Conn) bool {
	tc, ok := c.(*tls.Conn)
	return ok && tc.ConnectionState().NegotiatedProtocol == "h2"
}

// traced returns ctx with an HTTP trace telling t which connection a request
// goes out on.
func (t *connTracker) traced(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		ConnectStart: func(string, string) { t.dialing() },
		GotConn:      func(info httptrace.GotConnInfo) { t.gotConn(info.Conn) },
	})
}

// lostConnLocked reports whether the request at hand shows the connection under
// the last watch is gone: the stream was cut and the request needs another one.
func (t *connTracker) lostConnLocked() bool {
	return t.listed && t.cut && t.conn != nil
}

// dialing is called when a request opens a new connection: after a cut stream,
// the outage starts now, not once the new connection is up, so that a server
// that cannot be reached shows as one.
func (t *connTracker) dialing() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lostConnLocked() {
		t.goDownLocked(errConnectionLost)
	}
}

// gotConn is called when a request has its connection, new or reused.
func (t *connTracker) gotConn(c net.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c != t.conn && t.lostConnLocked() {
		// Another informer's request dialed it, or the dial was not traced.
		t.goDownLocked(errConnectionLost)
	}
	t.conn = nil
	if c != nil && t.multiplexed(c) {
		t.conn = c
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
	t.cut = false
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
		t.goDownLocked(eventError(ev))
		return
	}
	t.mu.Lock()
	if t.down && t.settling == w {
		t.restoreLocked()
		return
	}
	t.mu.Unlock()
}

// eventError returns the error an ERROR event carries. client-go turns a stream
// it cannot read on into one, as if the server had sent it ("an error on the
// server (\"unable to decode an event from the watch stream: http2: client
// connection lost\") has prevented the request from succeeding"); a lost
// connection is called that.
func eventError(ev watch.Event) error {
	err := apierrors.FromObject(ev.Object)
	if status, ok := ev.Object.(*metav1.Status); ok && status.Details != nil {
		for _, c := range status.Details.Causes {
			cause := errors.New(c.Message)
			if c.Type == clientWatchDecoding && (utilnet.IsProbableEOF(cause) || utilnet.IsHTTP2ConnectionLost(cause)) {
				return errConnectionLost
			}
		}
	}
	return err
}

// clientWatchDecoding is the cause type client-go's REST client gives the errors
// it reports from reading a watch stream.
const clientWatchDecoding = "ClientWatchDecoding"

// watchEnded is called when w's stream ends, for whatever reason: a server
// timeout is routine (the reflector watches again from where it was), so it only
// dates a possible outage that the next request reveals. stopped is set when the
// reflector stopped the watch itself.
func (t *connTracker) watchEnded(w *trackedWatch, stopped bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.streamEnded = t.now()
	t.cut = !stopped && (w.deadline.IsZero() || t.streamEnded.Before(w.deadline.Add(-cutSlack)))
	if t.settling == w {
		t.stopSettleLocked()
	}
}

// goDownLocked starts an outage unless one is under way. The causes the tracker
// infers (a relist, a lost connection) give way to the first error that says more,
// such as the refused connection of a server that went away.
func (t *connTracker) goDownLocked(cause error) {
	if t.down {
		if vague(t.cause) && !vague(cause) || t.cause == errRelist && cause == errConnectionLost {
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
		t.lost = t.afterFunc(LostReportDelay, func() {
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

// vague reports whether err is a cause the tracker inferred rather than an error
// it saw.
func vague(err error) bool { return err == errRelist || err == errConnectionLost }

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
		obj, err := list(t.traced(ctx), o)
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
		var deadline time.Time
		if o.TimeoutSeconds != nil {
			deadline = t.now().Add(time.Duration(*o.TimeoutSeconds) * time.Second)
		}
		w, err := watchFn(t.traced(ctx), o)
		if err != nil {
			t.watchStarted(nil, err)
			return nil, err
		}
		tw := newTrackedWatch(w, t)
		tw.deadline = deadline
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
	// deadline is when the server is to end the stream (timeoutSeconds); zero
	// when the request did not say.
	deadline time.Time
}

func newTrackedWatch(inner watch.Interface, t *connTracker) *trackedWatch {
	return &trackedWatch{inner: inner, tracker: t, out: make(chan watch.Event), done: make(chan struct{})}
}

func (w *trackedWatch) run() {
	defer close(w.out)
	stopped := false
	defer func() { w.tracker.watchEnded(w, stopped) }()
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
				stopped = true
				return
			}
		case <-w.done:
			stopped = true
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
