package informer

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// deadlineTimeout is the request timeout of the progress deadline tests: short, and
// long enough against a loaded machine's scheduling for a gap of half of it to be
// safely shorter.
const deadlineTimeout = 400 * time.Millisecond

// trickle is what a test server sends: chunks of size bytes, every gap, count times,
// then stall for the rest of the request when stall is set.
type trickle struct {
	size, count int
	gap         time.Duration
	stall       bool
}

// deadlineServer starts a TLS server that speaks HTTP/2 when h2 is set, as the API
// server does, and answers every request with the trickle that answer returns for
// it; nil means no answer at all, not even headers, until the client gives up.
// It returns a client whose transport is client-go's for the server's config (its
// HTTP/2 transport is golang.org/x/net's), wrapped in progressDeadline(timeout).
func deadlineServer(t *testing.T, h2 bool, timeout time.Duration, answer func(*http.Request) *trickle) (*httptest.Server, *http.Client) {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
				case <-time.After(tr.gap):
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
	}))
	s.EnableHTTP2 = h2
	s.StartTLS()
	t.Cleanup(s.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	cfg := &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	cfg.Wrap(progressDeadline(timeout))
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
// with gaps of half a timeout, arrives whole, and every byte is counted.
func TestProgressDeadlineTrickle(t *testing.T) {
	protocols(t, func(t *testing.T, h2 bool) {
		const size, count = 1000, 8
		s, c := deadlineServer(t, h2, deadlineTimeout, func(*http.Request) *trickle {
			return &trickle{size: size, count: count, gap: deadlineTimeout / 2}
		})
		var received atomic.Int64
		start := time.Now()
		resp, err := deadlineGet(t, withRequest(context.Background(), &received), c, s, "/api/v1/pods", h2)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		took := time.Since(start)
		if err != nil {
			t.Fatalf("reading the body after %s: %v", took, err)
		}
		if len(body) != size*count {
			t.Errorf("read %d bytes, want %d", len(body), size*count)
		}
		if got := received.Load(); got != size*count {
			t.Errorf("counted %d bytes, want %d", got, size*count)
		}
		if min := time.Duration(count-1) * deadlineTimeout / 2; took < min {
			t.Errorf("the answer took %s, want at least %s: the test does not test a slow answer", took, min)
		}
	})
}

// TestProgressDeadlineStalledBody: an answer that stops for a whole timeout fails
// with a timeout, after the bytes that came.
func TestProgressDeadlineStalledBody(t *testing.T) {
	protocols(t, func(t *testing.T, h2 bool) {
		const size, count = 500, 3
		s, c := deadlineServer(t, h2, deadlineTimeout, func(*http.Request) *trickle {
			return &trickle{size: size, count: count, gap: deadlineTimeout / 4, stall: true}
		})
		var received atomic.Int64
		resp, err := deadlineGet(t, withRequest(context.Background(), &received), c, s, "/api/v1/pods", h2)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		start := time.Now()
		body, err := io.ReadAll(resp.Body)
		took := time.Since(start)
		checkTimeout(t, err, "context deadline exceeded (no data from the response body for 400ms)")
		if len(body) != size*count || received.Load() != size*count {
			t.Errorf("read %d bytes and counted %d, want the %d sent before the stall", len(body), received.Load(), size*count)
		}
		// The last byte came after two gaps; the deadline is one timeout later.
		if lo, hi := 2*deadlineTimeout/4+deadlineTimeout, 2*deadlineTimeout/4+deadlineTimeout+time.Second; took < lo || took > hi {
			t.Errorf("the read failed after %s, want between %s and %s", took, lo, hi)
		}
		// The error stays: a later read says the same.
		if _, again := resp.Body.Read(make([]byte, 1)); !errors.Is(again, context.DeadlineExceeded) {
			t.Errorf("read after the deadline: %v, want the deadline's error again", again)
		}
	})
}

// TestProgressDeadlineNoHeaders: a server that does not answer fails the request
// after one timeout, from RoundTrip.
func TestProgressDeadlineNoHeaders(t *testing.T) {
	protocols(t, func(t *testing.T, h2 bool) {
		s, c := deadlineServer(t, h2, deadlineTimeout, func(*http.Request) *trickle { return nil })
		start := time.Now()
		resp, err := deadlineGet(t, context.Background(), c, s, "/api/v1/pods", h2)
		took := time.Since(start)
		if err == nil {
			resp.Body.Close()
			t.Fatal("the request succeeded without an answer")
		}
		var urlErr interface{ Unwrap() error }
		if !errors.As(err, &urlErr) {
			t.Errorf("error %q (%T), want the *url.Error of http.Client", err, err)
		}
		checkTimeout(t, err, "context deadline exceeded (no response headers within 400ms)")
		if took < deadlineTimeout || took > deadlineTimeout+time.Second {
			t.Errorf("the request failed after %s, want about %s", took, deadlineTimeout)
		}
	})
}

// TestProgressDeadlineSharedByTries: the tries of one request (client-go's REST
// client retries with the same context) share the time until an answer starts: a
// try after it has run out fails at once, without reaching the server.
func TestProgressDeadlineSharedByTries(t *testing.T) {
	var requests atomic.Int32
	s, c := deadlineServer(t, true, deadlineTimeout, func(*http.Request) *trickle {
		requests.Add(1)
		return nil
	})
	ctx := withRequest(context.Background(), nil)
	if _, err := deadlineGet(t, ctx, c, s, "/api/v1/pods", true); err == nil {
		t.Fatal("the first try succeeded without an answer")
	}
	start := time.Now()
	_, err := deadlineGet(t, ctx, c, s, "/api/v1/pods", true)
	checkTimeout(t, err, "context deadline exceeded (no response headers within 400ms)")
	if took := time.Since(start); took > deadlineTimeout/2 {
		t.Errorf("the second try failed after %s, want at once", took)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the server saw %d requests, want 1", n)
	}
	// Another request has its own time.
	if _, err := deadlineGet(t, withRequest(context.Background(), nil), c, s, "/api/v1/pods", true); err == nil {
		t.Fatal("a new request succeeded without an answer")
	}
	if n := requests.Load(); n != 2 {
		t.Errorf("the server saw %d requests, want 2", n)
	}
}

// TestProgressDeadlineWatch: a watch keeps kubectl's overall deadline, however
// much it receives, and its bytes are not a list's progress.
func TestProgressDeadlineWatch(t *testing.T) {
	for _, query := range []string{"watch=true", "watch=1"} {
		t.Run(query, func(t *testing.T) {
			t.Parallel()
			s, c := deadlineServer(t, true, deadlineTimeout, func(*http.Request) *trickle {
				return &trickle{size: 10, count: 1000, gap: deadlineTimeout / 8}
			})
			var received atomic.Int64
			start := time.Now()
			resp, err := deadlineGet(t, withRequest(context.Background(), &received), c, s, "/api/v1/pods?"+query, true)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			took := time.Since(start)
			checkTimeout(t, err, "context deadline exceeded (the watch reached the request timeout of 400ms)")
			if took < deadlineTimeout || took > deadlineTimeout+time.Second {
				t.Errorf("the watch ended after %s, want about %s", took, deadlineTimeout)
			}
			if len(body) == 0 || len(body) >= 10*1000 {
				t.Errorf("read %d bytes, want some and not all", len(body))
			}
			if n := received.Load(); n != 0 {
				t.Errorf("counted %d bytes of a watch, want 0", n)
			}
		})
	}
	// watch=false is no watch.
	s, c := deadlineServer(t, true, deadlineTimeout, func(*http.Request) *trickle {
		return &trickle{size: 10, count: 8, gap: deadlineTimeout / 2}
	})
	resp, err := deadlineGet(t, context.Background(), c, s, "/api/v1/pods?watch=false", true)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, err := io.ReadAll(resp.Body); err != nil || len(body) != 80 {
		t.Errorf("watch=false: read %d bytes, %v; want 80 and no error", len(body), err)
	}
}

// TestProgressDeadlineRelease: Close stops the timer and cancels the try, more
// than once without harm; so does the end of the body, for the timer; a failed
// request leaves nothing behind.
func TestProgressDeadlineRelease(t *testing.T) {
	s, c := deadlineServer(t, true, deadlineTimeout, func(r *http.Request) *trickle {
		if strings.Contains(r.URL.RawQuery, "silent") {
			return nil
		}
		return &trickle{size: 100, count: 1, stall: strings.Contains(r.URL.RawQuery, "stall")}
	})
	// Read to the end: the timer stops at EOF, the context at Close. This first
	// request also opens the HTTP/2 connection, whose goroutines stay.
	resp, err := deadlineGet(t, context.Background(), c, s, "/api/v1/pods", true)
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
	resp, err = deadlineGet(t, context.Background(), c, s, "/api/v1/pods?stall", true)
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
	time.Sleep(deadlineTimeout + 100*time.Millisecond)
	if e := body.d.err.Load(); e != nil {
		t.Errorf("the deadline fired after Close: %v", e)
	}

	// A failed request.
	if _, err := deadlineGet(t, context.Background(), c, s, "/api/v1/pods?silent", true); err == nil {
		t.Fatal("the request succeeded without an answer")
	}

	// Nothing is left running on either side: the server's handlers of the
	// closed and the failed request have seen their streams cancelled.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines, %d before the requests", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
