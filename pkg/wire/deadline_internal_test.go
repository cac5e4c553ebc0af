package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/tlsserver"
)

// The progress deadline tests run on a fake clock that moves only when a test
// moves it: a deadline fires exactly when its time has passed and never
// because the machine was busy. The servers are real (TLS, HTTP/2 and
// HTTP/1.1, client-go's transports); each sends its next chunk only when the
// test says so, after moving the clock by the gap it means.

// deadlineTimeout is the request timeout of the progress deadline tests, on
// the fake clock.
const deadlineTimeout = 400 * time.Millisecond

// waitBound bounds the real time a test waits for the other side to get to a
// step (a chunk received, a request sent): a bound for a broken test, not a
// timing assertion.
const waitBound = 30 * time.Second

// fakeClock is a clock whose time moves only by advance.
type fakeClock struct {
	mu     sync.Mutex
	t      int64
	timers []*fakeClockTimer
}

// fakeClockTimer is a pending call on a fakeClock.
type fakeClockTimer struct {
	c      *fakeClock
	at     int64
	f      func()
	active bool
}

func newFakeClock() *fakeClock { return &fakeClock{t: 1} }

func (c *fakeClock) now() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) afterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeClockTimer{c: c, at: c.t + int64(d), f: f, active: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeClockTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeClockTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active, t.at = true, t.c.t+int64(d)
	return was
}

// advance moves the clock by d and runs, in this goroutine and in the order
// they are due, the timers due by then. A timer a due one sets again for later
// waits for a later advance.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t += int64(d)
	var due []*fakeClockTimer
	for _, t := range c.timers {
		if t.active && t.at <= c.t {
			t.active = false
			due = append(due, t)
		}
	}
	c.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// waitFor waits until cond holds, failing the test after waitBound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", waitBound, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// trickle is what a test server sends: chunks of size bytes, count times, each
// after the first when the test sends on step; then it stalls for the rest of
// the request when stall is set.
type trickle struct {
	size, count int
	stall       bool
	step        chan struct{}
}

func newTrickle(size, count int, stall bool) *trickle {
	return &trickle{size: size, count: count, stall: stall, step: make(chan struct{})}
}

// deadlineServer starts a TLS server that speaks HTTP/2 when h2 is set, as the API
// server does, and answers every request with the trickle that answer returns for
// it; nil means no answer at all, not even headers, until the client gives up.
// It returns a client whose transport is client-go's for the server's config (its
// HTTP/2 transport is golang.org/x/net's), wrapped in progressDeadlineOn(clock,
// timeout).
func deadlineServer(t *testing.T, h2 bool, c clock, timeout time.Duration, answer func(*http.Request) *trickle) (*httptest.Server, *http.Client) {
	t.Helper()
	s, cfg := tlsserver.Start(t, func(w http.ResponseWriter, r *http.Request) {
		tr := answer(r)
		if tr == nil {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		chunk := bytes.Repeat([]byte("x"), tr.size)
		for i := range tr.count {
			if i > 0 {
				select {
				case <-tr.step:
				case <-r.Context().Done():
					return
				}
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		if tr.stall {
			<-r.Context().Done()
		}
	}, h2)
	cfg.Wrap(progressDeadlineOn(c, timeout))
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, &http.Client{Transport: rt}
}

// deadlineGet sends a GET for path with ctx and returns the response, checking that it
// went over the protocol asked for.
func deadlineGet(t *testing.T, ctx context.Context, c *http.Client, s *httptest.Server, path string, h2 bool) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil && (resp.ProtoMajor == 2) != h2 {
		t.Fatalf("the request went over %s, want HTTP/2 %v", resp.Proto, h2)
	}
	return resp, err
}

// getTrickle serves tr with a progress deadline of deadlineTimeout on c, and
// sends deadlineGet of path through it with a count of the bytes received. The
// answer's body is closed when the test ends.
func getTrickle(t *testing.T, h2 bool, c clock, tr *trickle, path string) (*http.Response, *atomic.Int64) {
	t.Helper()
	s, client := deadlineServer(t, h2, c, deadlineTimeout, func(*http.Request) *trickle { return tr })
	received := &atomic.Int64{}
	resp, err := deadlineGet(t, WithRequest(context.Background(), received), client, s, path, h2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp, received
}

// asyncGet sends deadlineGet in its own goroutine, for a test that moves the
// clock while the request waits for its answer.
func asyncGet(t *testing.T, ctx context.Context, c *http.Client, s *httptest.Server, path string, h2 bool) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
		if err != nil {
			done <- err
			return
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			err = errors.New("the request succeeded without an answer")
		}
		done <- err
	}()
	return done
}

// bodyRead is a body read to its end or first error in the background.
type bodyRead struct {
	n    atomic.Int64
	done chan struct{}
	body []byte
	err  error
}

// readBody reads r in its own goroutine, counting the bytes as they come.
func readBody(r io.Reader) *bodyRead {
	b := &bodyRead{done: make(chan struct{})}
	go func() {
		defer close(b.done)
		buf := make([]byte, 512)
		for {
			n, err := r.Read(buf)
			b.body = append(b.body, buf[:n]...)
			b.n.Add(int64(n))
			if err != nil {
				if err != io.EOF {
					b.err = err
				}
				return
			}
		}
	}()
	return b
}

// finished reports whether the read has ended.
func (b *bodyRead) finished() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// wait waits for the read to end.
func (b *bodyRead) wait(t *testing.T) {
	t.Helper()
	waitFor(t, "the body read to end", b.finished)
}

// feed sends tr's chunks after the first: before each it waits until the client
// has read the ones before and moves the clock by gap. It returns once the last
// chunk is read.
func feed(t *testing.T, c *fakeClock, b *bodyRead, tr *trickle, gap time.Duration) {
	t.Helper()
	for i := 1; i < tr.count; i++ {
		waitFor(t, "a chunk to arrive", func() bool { return b.n.Load() == int64(i*tr.size) })
		c.advance(gap)
		tr.step <- struct{}{}
	}
	waitFor(t, "the last chunk to arrive", func() bool { return b.n.Load() == int64(tr.count*tr.size) })
}

// checkTimeout checks that err reads as a timeout to the code that words
// ListError and to client-go's watch decoder, with the text want.
func checkTimeout(t *testing.T, err error, want string) {
	t.Helper()
	var netErr net.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Errorf("error %q (%T) is not a timeout: errors.Is(err, context.DeadlineExceeded) and net.Error.Timeout() must be true", err, err)
	}
	var de *deadlineError
	if !errors.As(err, &de) {
		t.Fatalf("error %q (%T) is not the deadline's", err, err)
	}
	if got := de.Error(); got != want {
		t.Errorf("deadline error = %q, want %q", got, want)
	}
}

// protocols runs f over HTTP/2, which client-go speaks to the API server, and over
// HTTP/1.1, whose transport reports a cancelled request differently.
func protocols(t *testing.T, f func(t *testing.T, h2 bool)) {
	for _, h2 := range []bool{true, false} {
		name := "HTTP/1.1"
		if h2 {
			name = "HTTP/2"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, h2)
		})
	}
}

// TestProgressDeadlineTrickle: an answer that takes several timeouts to arrive,
// each chunk a moment before the deadline, arrives whole, and every byte is
// counted.
func TestProgressDeadlineTrickle(t *testing.T) {
	protocols(t, func(t *testing.T, h2 bool) {
		const size, count = 1000, 8
		c := newFakeClock()
		tr := newTrickle(size, count, false)
		start := c.now()
		resp, received := getTrickle(t, h2, c, tr, "/api/v1/pods")
		b := readBody(resp.Body)
		// Each gap is a nanosecond short of the timeout: the deadline, set
		// at the start, passes during the second gap and finds progress.
		feed(t, c, b, tr, deadlineTimeout-time.Nanosecond)
		b.wait(t)
		took := time.Duration(c.now() - start)
		if b.err != nil {
			t.Fatalf("reading the body after %s on the clock: %v", took, b.err)
		}
		if len(b.body) != size*count {
			t.Errorf("read %d bytes, want %d", len(b.body), size*count)
		}
		if got := received.Load(); got != size*count {
			t.Errorf("counted %d bytes, want %d", got, size*count)
		}
		if min := time.Duration(count-1) * (deadlineTimeout - time.Nanosecond); took < min {
			t.Errorf("the answer took %s, want at least %s: the test does not test a slow answer", took, min)
		}
	})
}

// TestProgressDeadlineStalledBody: an answer that stops for a whole timeout fails
// exactly one timeout after its last byte, with what arrived before kept.
func TestProgressDeadlineStalledBody(t *testing.T) {
	protocols(t, func(t *testing.T, h2 bool) {
		const size, count = 500, 3
		c := newFakeClock()
		tr := newTrickle(size, count, true)
		resp, received := getTrickle(t, h2, c, tr, "/api/v1/pods")
		d := resp.Body.(*deadlineBody).d
		b := readBody(resp.Body)
		feed(t, c, b, tr, deadlineTimeout/4)
		// A nanosecond short of a timeout after the last byte, the answer
		// is still under way.
		c.advance(deadlineTimeout - time.Nanosecond)
		if e := d.err.Load(); e != nil || b.finished() {
			t.Fatalf("the deadline fired before a whole timeout without data: %v (read ended: %v)", e, b.finished())
		}
		c.advance(time.Nanosecond)
		b.wait(t)
		checkTimeout(t, b.err, "context deadline exceeded (no data from the response body for 400ms)")
		if len(b.body) != size*count || received.Load() != size*count {
			t.Errorf("read %d bytes and counted %d, want the %d sent before the stall", len(b.body), received.Load(), size*count)
		}
		// The error stays: a later read says the same.
		if _, again := resp.Body.Read(make([]byte, 1)); !errors.Is(again, context.DeadlineExceeded) {
			t.Errorf("read after the deadline: %v, want the deadline's error again", again)
		}
	})
}

// TestProgressDeadlineEndAfterDeadline: a body whose end is read after the
// deadline fired reports the deadline, never a complete answer, whatever the
// transport makes of the cancelled try (HTTP/1.1 can read the end of a chunked
// body on a connection closed under it as a clean end).
func TestProgressDeadlineEndAfterDeadline(t *testing.T) {
	c := newFakeClock()
	d := &deadline{timeout: deadlineTimeout, clock: c, cancel: func(error) {}}
	d.timer = c.afterFunc(deadlineTimeout, d.expire)
	d.headers.Store(true)
	d.last.Store(c.now())
	body := &deadlineBody{ReadCloser: io.NopCloser(strings.NewReader("")), d: d}
	c.advance(deadlineTimeout)
	_, err := body.Read(make([]byte, 1))
	checkTimeout(t, err, "context deadline exceeded (no data from the response body for 400ms)")

	// An end before the deadline is an end, and stops the timer for good.
	c = newFakeClock()
	d = &deadline{timeout: deadlineTimeout, clock: c, cancel: func(error) {}}
	d.timer = c.afterFunc(deadlineTimeout, d.expire)
	d.headers.Store(true)
	d.last.Store(c.now())
	body = &deadlineBody{ReadCloser: io.NopCloser(strings.NewReader("")), d: d}
	if _, err := body.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read at the end: %v, want io.EOF", err)
	}
	c.advance(2 * deadlineTimeout)
	if e := d.err.Load(); e != nil {
		t.Errorf("the deadline fired after the end of the body: %v", e)
	}
}

// TestProgressDeadlineNoHeaders: a server that does not answer fails the request
// exactly one timeout after it was sent, from RoundTrip.
func TestProgressDeadlineNoHeaders(t *testing.T) {
	protocols(t, func(t *testing.T, h2 bool) {
		c := newFakeClock()
		var arrived atomic.Int32
		s, client := deadlineServer(t, h2, c, deadlineTimeout, func(*http.Request) *trickle {
			arrived.Add(1)
			return nil
		})
		done := asyncGet(t, context.Background(), client, s, "/api/v1/pods", h2)
		waitFor(t, "the request to reach the server", func() bool { return arrived.Load() == 1 })
		c.advance(deadlineTimeout - time.Nanosecond)
		select {
		case err := <-done:
			t.Fatalf("the request failed before its timeout: %v", err)
		default:
		}
		c.advance(time.Nanosecond)
		var err error
		select {
		case err = <-done:
		case <-time.After(waitBound):
			t.Fatalf("the request did not fail within %s of its deadline", waitBound)
		}
		var urlErr interface{ Unwrap() error }
		if !errors.As(err, &urlErr) {
			t.Errorf("error %q (%T), want the *url.Error of http.Client", err, err)
		}
		checkTimeout(t, err, "context deadline exceeded (no response headers within 400ms)")
	})
}

// TestProgressDeadlineSharedByTries: the tries of one request (client-go's REST
// client retries with the same context) share the time until an answer starts: a
// try after it has run out fails at once, without reaching the server.
func TestProgressDeadlineSharedByTries(t *testing.T) {
	var requests atomic.Int32
	c := newFakeClock()
	s, client := deadlineServer(t, true, c, deadlineTimeout, func(*http.Request) *trickle {
		requests.Add(1)
		return nil
	})
	ctx := WithRequest(context.Background(), nil)
	done := asyncGet(t, ctx, client, s, "/api/v1/pods", true)
	waitFor(t, "the first try to reach the server", func() bool { return requests.Load() == 1 })
	c.advance(deadlineTimeout)
	if err := <-done; err == nil {
		t.Fatal("the first try succeeded without an answer")
	}
	_, err := deadlineGet(t, ctx, client, s, "/api/v1/pods", true)
	checkTimeout(t, err, "context deadline exceeded (no response headers within 400ms)")
	if n := requests.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1", n)
	}
	// Another request has its own time.
	done = asyncGet(t, WithRequest(context.Background(), nil), client, s, "/api/v1/pods", true)
	waitFor(t, "a new request to reach the server", func() bool { return requests.Load() == 2 })
	c.advance(deadlineTimeout)
	if err := <-done; err == nil {
		t.Fatal("a new request succeeded without an answer")
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("the server saw %d requests, want 2", n)
	}
}

// TestProgressDeadlineWatchList: a watch-list (sendInitialEvents=true) is timed
// as the list it is: it may take twice the timeout while its data keeps
// coming, and its bytes are the list's progress.
func TestProgressDeadlineWatchList(t *testing.T) {
	const size, count = 10, 16
	c := newFakeClock()
	tr := newTrickle(size, count, false)
	resp, received := getTrickle(t, true, c, tr, "/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
	b := readBody(resp.Body)
	feed(t, c, b, tr, deadlineTimeout/8)
	b.wait(t)
	if b.err != nil {
		t.Fatalf("watch-list failed after %d bytes: %v", len(b.body), b.err)
	}
	if n := received.Load(); n != size*count {
		t.Errorf("counted %d bytes, want %d", n, size*count)
	}
}

// TestProgressDeadlineWatch: a watch keeps kubectl's overall deadline, however
// much it receives, and its bytes are not a list's progress.
func TestProgressDeadlineWatch(t *testing.T) {
	for _, query := range []string{"watch=true", "watch=1"} {
		t.Run(query, func(t *testing.T) {
			t.Parallel()
			const size = 10
			c := newFakeClock()
			tr := newTrickle(size, 1000, false)
			resp, received := getTrickle(t, true, c, tr, "/api/v1/pods?"+query)
			b := readBody(resp.Body)
			// A chunk every eighth of the timeout: the eighth step reaches
			// the watch's deadline after the eighth chunk.
			for i := 1; i <= 8; i++ {
				waitFor(t, "a chunk to arrive", func() bool { return b.n.Load() == int64(i*size) })
				c.advance(deadlineTimeout / 8)
				if i < 8 {
					tr.step <- struct{}{}
				}
			}
			b.wait(t)
			checkTimeout(t, b.err, "context deadline exceeded (the watch reached the request timeout of 400ms)")
			if len(b.body) != 8*size {
				t.Errorf("read %d bytes, want the %d sent before the watch's deadline", len(b.body), 8*size)
			}
			if n := received.Load(); n != 0 {
				t.Errorf("counted %d bytes of a watch, want 0", n)
			}
		})
	}
	// watch=false is no watch.
	c := newFakeClock()
	tr := newTrickle(10, 8, false)
	s, client := deadlineServer(t, true, c, deadlineTimeout, func(*http.Request) *trickle { return tr })
	resp, err := deadlineGet(t, context.Background(), client, s, "/api/v1/pods?watch=false", true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b := readBody(resp.Body)
	feed(t, c, b, tr, deadlineTimeout/2)
	b.wait(t)
	if b.err != nil || len(b.body) != 80 {
		t.Errorf("watch=false: read %d bytes, %v; want 80 and no error", len(b.body), b.err)
	}
}

// TestProgressDeadlineRelease: Close stops the timer and cancels the try, more
// than once without harm; so does the end of the body, for the timer; a failed
// request leaves nothing behind.
func TestProgressDeadlineRelease(t *testing.T) {
	c := newFakeClock()
	var silent atomic.Int32
	s, client := deadlineServer(t, true, c, deadlineTimeout, func(r *http.Request) *trickle {
		if strings.Contains(r.URL.RawQuery, "silent") {
			silent.Add(1)
			return nil
		}
		return newTrickle(100, 1, strings.Contains(r.URL.RawQuery, "stall"))
	})
	// Read to the end: the timer stops at EOF, the context at Close. This first
	// request also opens the HTTP/2 connection, whose goroutines stay.
	resp, err := deadlineGet(t, context.Background(), client, s, "/api/v1/pods", true)
	if err != nil {
		t.Fatal(err)
	}
	body := resp.Body.(*deadlineBody)
	if b, err := io.ReadAll(body); err != nil || len(b) != 100 {
		t.Fatalf("read %d bytes, %v; want 100", len(b), err)
	}
	body.d.mu.Lock()
	stopped := body.d.stopped
	body.d.mu.Unlock()
	if !stopped {
		t.Error("the timer still runs after the end of the body")
	}
	_ = resp.Body.Close()
	checkReleased(t, body.d)
	before := settledGoroutines()

	// Closed in the middle of the answer.
	resp, err = deadlineGet(t, context.Background(), client, s, "/api/v1/pods?stall", true)
	if err != nil {
		t.Fatal(err)
	}
	body = resp.Body.(*deadlineBody)
	if _, err := body.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := resp.Body.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	checkReleased(t, body.d)
	c.advance(2 * deadlineTimeout)
	if e := body.d.err.Load(); e != nil {
		t.Errorf("the deadline fired after Close: %v", e)
	}

	// A failed request.
	done := asyncGet(t, context.Background(), client, s, "/api/v1/pods?silent", true)
	waitFor(t, "the request to reach the server", func() bool { return silent.Load() == 1 })
	c.advance(deadlineTimeout)
	if err := <-done; err == nil {
		t.Fatal("the request succeeded without an answer")
	}

	// Nothing is left running on either side: the server's handlers of the
	// closed and the failed request have seen their streams cancelled.
	waitFor(t, "the requests' goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
}

// settledGoroutines waits a moment for goroutines that are ending to end, and
// counts the rest.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(10 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m == n {
			return n
		}
		n = m
	}
	return n
}

// checkReleased checks that d's timer is stopped and its context cancelled.
func checkReleased(t *testing.T, d *deadline) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped {
		t.Error("the timer was not stopped")
	}
	if d.timer.Stop() {
		t.Error("the timer was still pending")
	}
}

// TestCountReceived: without a deadline, the bytes of an answer's body still
// count toward the request's counter, and a request without one is left alone.
func TestCountReceived(t *testing.T) {
	const body = "0123456789abcdef"
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, body) }))
	t.Cleanup(s.Close)
	client := &http.Client{Transport: CountReceived(http.DefaultTransport)}
	var received atomic.Int64
	for _, ctx := range []context.Context{WithRequest(context.Background(), &received), context.Background()} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != body {
			t.Fatalf("body %q, %v", b, err)
		}
		resp.Body.Close()
	}
	if got := received.Load(); got != int64(len(body)) {
		t.Errorf("counted %d bytes, want %d", got, len(body))
	}
}
