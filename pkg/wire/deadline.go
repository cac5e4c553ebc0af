package wire

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// kubectl reads --request-timeout as an overall deadline per request: client-go
// sets it as http.Client.Timeout, as a context deadline around the request and its
// retries, and as a timeout= parameter the API server enforces too. A LIST answer
// that takes longer than that to arrive is cut off while bytes are still flowing,
// and the reflector lists again from the start: on a slow link, or with 100,000
// pods, it never gets through.
//
// NewFactory builds the informers' clients without that deadline and wraps their
// transport in ProgressDeadline instead, which bounds every request by the timeout
// the way a user means it: an answer must start within the timeout, and then never
// stop for a whole timeout. Watches keep kubectl's overall deadline: their streams
// are quiet for minutes by nature, and the reflector watches again when one ends.

// ProgressDeadline returns a transport wrapper (for rest.Config.Wrap) that fails a
// request whose response headers have not arrived within timeout, or whose body
// then delivers no byte for a whole timeout. Every read that returns data restarts
// the timer. Watch requests (watch=true) end after timeout, whatever they receive,
// but for watch-lists, which are timed as lists (isWatch).
//
// A request that runs out of time fails with an error that errors.Is
// context.DeadlineExceeded and is a net.Error whose Timeout is true, like the one
// of an overall deadline, from RoundTrip or from a read of the body. Each request
// costs a timer and a context, released by the body's Close or by the error; there
// is no goroutine per request.
func ProgressDeadline(timeout time.Duration) func(http.RoundTripper) http.RoundTripper {
	return progressDeadlineOn(realClock{}, timeout)
}

// progressDeadlineOn is ProgressDeadline on clock c: tests drive a fake clock,
// so that what they assert about time holds however busy the machine is.
func progressDeadlineOn(c clock, timeout time.Duration) func(http.RoundTripper) http.RoundTripper {
	return func(rt http.RoundTripper) http.RoundTripper {
		return &deadlineTransport{next: rt, timeout: timeout, clock: c}
	}
}

// deadlineTransport is the RoundTripper ProgressDeadline installs.
type deadlineTransport struct {
	next    http.RoundTripper
	timeout time.Duration
	clock   clock
}

// WrappedRoundTripper lets client-go find the transport underneath, for instance
// to close its idle connections.
func (t *deadlineTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// RoundTrip implements http.RoundTripper.
func (t *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	d := &deadline{timeout: t.timeout, watch: isWatch(req.URL), clock: t.clock}
	wait := t.timeout
	if !d.watch {
		if r := requestFrom(req.Context()); r != nil {
			d.received = r.received
			// client-go's REST client tries a GET again, a second later or
			// when the server says, when its connection was reset before an
			// answer or the server asked it to retry, with the same context.
			// The tries share the time until an answer starts, as they shared
			// kubectl's overall deadline, instead of each having its own.
			if wait = r.left(t.clock.now(), t.timeout); wait <= 0 {
				return nil, d.timeoutError()
			}
		}
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	d.cancel = cancel
	d.mu.Lock()
	d.timer = t.clock.afterFunc(wait, d.expire)
	d.mu.Unlock()
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		d.release()
		return nil, d.explain(err)
	}
	// The answer has started: its body has a whole timeout for its first byte.
	d.last.Store(t.clock.now())
	d.headers.Store(true)
	resp.Body = &deadlineBody{ReadCloser: resp.Body, d: d}
	return resp, nil
}

// isWatch reports whether u asks for a watch, as client-go's clients do with
// watch=true (the API server takes 1 too), other than a watch-list: a watch
// that starts with the objects of a list (sendInitialEvents=true) is a list
// while it delivers them, bounded by its progress like one, and the informer
// that asks for it stops it once they have come.
func isWatch(u *url.URL) bool {
	q := u.Query()
	w := q.Get("watch")
	return (w == "true" || w == "1") && q.Get("sendInitialEvents") != "true"
}

// deadline is the timer of one try of a request.
type deadline struct {
	timeout time.Duration
	// watch makes the deadline overall: timeout after the try started.
	watch bool
	// received, when not nil, counts the bytes of body received.
	received *atomic.Int64
	clock    clock
	cancel   context.CancelCauseFunc
	// headers is set once the response headers have arrived, and last is when
	// the answer last made progress (its headers or a byte of its body), on
	// the clock's scale.
	headers atomic.Bool
	last    atomic.Int64
	// err is set when the deadline has passed, before the try is cancelled.
	err atomic.Pointer[deadlineError]

	mu      sync.Mutex
	timer   timer
	stopped bool
}

// expire runs when the timer fires: it cancels the try unless its answer made
// progress meanwhile, in which case it waits for the rest of the new deadline.
// Reading the time of the last byte here rather than resetting the timer on
// every read keeps reads cheap.
func (d *deadline) expire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	if !d.watch && d.headers.Load() {
		if left := d.timeout - time.Duration(d.clock.now()-d.last.Load()); left > 0 {
			d.timer.Reset(left)
			return
		}
	}
	err := d.timeoutError()
	d.err.Store(err)
	d.cancel(err)
}

// timeoutError describes the deadline that passed, at the stage the try is at.
func (d *deadline) timeoutError() *deadlineError {
	switch {
	case d.watch:
		return &deadlineError{timeout: d.timeout, what: "the watch reached the request timeout of %s"}
	case d.headers.Load():
		return &deadlineError{timeout: d.timeout, what: "no data from the response body for %s"}
	}
	return &deadlineError{timeout: d.timeout, what: "no response headers within %s"}
}

// explain returns err, or the deadline's error when the deadline caused it: the
// transports return what the cancelled context says (x/net/http2 its Err,
// context.Canceled; net/http its cause), which would not read as a timeout.
func (d *deadline) explain(err error) error {
	if e := d.err.Load(); e != nil {
		return e
	}
	return err
}

// stop stops the timer for good; the try goes on without a deadline.
func (d *deadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
}

// release stops the timer and cancels the try's context. It may be called more
// than once.
func (d *deadline) release() {
	d.stop()
	d.cancel(nil)
}

// deadlineBody counts the body's progress and releases the deadline on Close.
type deadlineBody struct {
	io.ReadCloser
	d *deadline
}

// Read reads from the body; data restarts the timer.
func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.d.watch {
		b.d.last.Store(b.d.clock.now())
		if b.d.received != nil {
			b.d.received.Add(int64(n))
		}
	}
	switch {
	case err == io.EOF:
		// The answer ended. Once the timer is stopped it cannot fire any more,
		// so the deadline's error is final: when it fired before, the end came
		// from the cancelled try (an HTTP/1.1 connection closed under a
		// chunked body can read as a clean end) and the answer is not whole.
		b.d.stop()
		err = b.d.explain(err)
	case err != nil:
		err = b.d.explain(err)
	}
	return n, err
}

// Close closes the body and releases the deadline.
func (b *deadlineBody) Close() error {
	err := b.ReadCloser.Close()
	b.d.release()
	return err
}

// deadlineError is the error of a request whose deadline passed. It reads as
// a timeout to errors.Is(err, context.DeadlineExceeded) and to net.Error, as
// kubectl's overall deadline does.
type deadlineError struct {
	timeout time.Duration
	// what says what did not happen in time, with a %s for the timeout.
	what string
}

func (e *deadlineError) Error() string {
	return "context deadline exceeded (" + fmt.Sprintf(e.what, e.timeout) + ")"
}

// Timeout implements net.Error.
func (e *deadlineError) Timeout() bool { return true }

// Temporary implements net.Error, as context.DeadlineExceeded does.
func (e *deadlineError) Temporary() bool { return true }

// Is makes errors.Is(err, context.DeadlineExceeded) true.
func (e *deadlineError) Is(target error) bool { return target == context.DeadlineExceeded }

// clock is the time of the progress deadline.
type clock interface {
	// now returns nanoseconds on a monotonic scale, at least 1 so that zero
	// can mean "not yet".
	now() int64
	// afterFunc calls f in its own goroutine once d has passed.
	afterFunc(d time.Duration, f func()) timer
}

// timer is a pending call of clock.afterFunc.
type timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// clockBase anchors realClock's scale.
var clockBase = time.Now()

// realClock is the machine's monotonic clock.
type realClock struct{}

func (realClock) now() int64 { return max(1, int64(time.Since(clockBase))) }

func (realClock) afterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

// request is what the tries of one request share, carried in its context
// (WithRequest).
type request struct {
	// start is when the first try started, on the clock's scale; zero
	// before it.
	start atomic.Int64
	// received, when not nil, counts the bytes of body received.
	received *atomic.Int64
}

// left starts the request's clock at its first try, now, and returns how much
// of timeout is left for a try to get an answer started.
func (r *request) left(now int64, timeout time.Duration) time.Duration {
	r.start.CompareAndSwap(0, now)
	return timeout - time.Duration(now-r.start.Load())
}

type requestKey struct{}

// CountReceived returns a transport wrapper (for rest.Config.Wrap) that adds
// the bytes of each answer's body to the counter WithRequest put in its
// request's context, as ProgressDeadline does, for a client without a
// deadline: a list's progress, and the size of its first page (by which an
// informer chooses to list unpaged).
func CountReceived(rt http.RoundTripper) http.RoundTripper { return &countTransport{next: rt} }

// countTransport is the RoundTripper CountReceived installs.
type countTransport struct{ next http.RoundTripper }

// WrappedRoundTripper lets client-go find the transport underneath.
func (t *countTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// RoundTrip implements http.RoundTripper.
func (t *countTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if r := requestFrom(req.Context()); r != nil && r.received != nil {
		resp.Body = &countBody{ReadCloser: resp.Body, received: r.received}
	}
	return resp, nil
}

// countBody adds the bytes read from its body to received.
type countBody struct {
	io.ReadCloser
	received *atomic.Int64
}

func (b *countBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.received.Add(int64(n))
	return n, err
}

// WithRequest returns ctx for one request of a client whose transport
// ProgressDeadline or CountReceived wraps: its tries share the time until an answer starts,
// and add the bytes of body they receive to received unless it is nil (a
// list's progress, which a retry window looks at).
func WithRequest(ctx context.Context, received *atomic.Int64) context.Context {
	return context.WithValue(ctx, requestKey{}, &request{received: received})
}

// requestFrom returns the request WithRequest put in ctx, or nil.
func requestFrom(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}
