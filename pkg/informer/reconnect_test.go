package informer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/tlsserver"
)

// fakeTimers runs the tracker's timers by hand.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool { t.stopped = true; return true }

func (ft *fakeTimers) afterFunc(d time.Duration, f func()) stopper {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{d: d, f: f}
	ft.timers = append(ft.timers, t)
	return t
}

// fire runs the pending timers of duration d.
func (ft *fakeTimers) fire(d time.Duration) {
	ft.mu.Lock()
	var due []*fakeTimer
	rest := ft.timers[:0]
	for _, t := range ft.timers {
		if t.d == d && !t.stopped {
			due = append(due, t)
		} else if !t.stopped {
			rest = append(rest, t)
		}
	}
	ft.timers = rest
	ft.mu.Unlock()
	for _, t := range due {
		t.f()
	}
}

// trackerHarness is a connTracker with a hand-driven clock and timers recording what it
// reports as lines.
type trackerHarness struct {
	t      *connTracker
	now    time.Time
	timers *fakeTimers
	mu     sync.Mutex
	got    []string
}

func newTrackerHarness() *trackerHarness {
	h := &trackerHarness{now: time.Date(2025, 5, 14, 12, 0, 0, 0, time.UTC), timers: &fakeTimers{}}
	res := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}
	h.t = newConnTracker(res,
		func(r Resource, err error) { h.record(fmt.Sprintf("lost %s: %v", r.Name(), err)) },
		func(r Reconnect) {
			h.record(fmt.Sprintf("restored %s after %s relisted=%v cause=%v", r.Resource.Name(), r.Down, r.Relisted, r.Cause))
		})
	h.t.now = func() time.Time { return h.now }
	h.t.afterFunc = h.timers.afterFunc
	h.t.multiplexed = multiplexedFakes
	return h
}

func (h *trackerHarness) record(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got = append(h.got, s)
}

func (h *trackerHarness) advance(d time.Duration) { h.now = h.now.Add(d) }

// synced takes the tracker through its first list and an open watch.
func (h *trackerHarness) synced() *trackedWatch {
	h.t.listStarted()
	h.t.listDone(true, nil)
	w := &trackedWatch{}
	h.t.watchStarted(w, nil)
	return w
}

// fakeConn stands for a client connection; h2 says whether it speaks HTTP/2.
type fakeConn struct {
	net.Conn
	h2 bool
}

var (
	h2A, h2B         = &fakeConn{h2: true}, &fakeConn{h2: true}
	http1A, http1B   = &fakeConn{}, &fakeConn{}
	multiplexedFakes = func(c net.Conn) bool { fc, ok := c.(*fakeConn); return ok && fc.h2 }
)

// watchFor returns a watch whose server-side timeout is d from now.
func (h *trackerHarness) watchFor(d time.Duration) *trackedWatch {
	return &trackedWatch{deadline: h.now.Add(d)}
}

// syncedOn takes the tracker through its first list and an open watch with a
// minute's timeout, both on conn.
func (h *trackerHarness) syncedOn(conn net.Conn) *trackedWatch {
	h.t.listStarted()
	h.t.gotConn(conn)
	h.t.listDone(true, nil)
	w := h.watchFor(time.Minute)
	h.t.gotConn(conn)
	h.t.watchStarted(w, nil)
	return w
}

// rewatchedOn is the informer's next watch, on conn, running for a minute, then the settle
// delay passing.
func (h *trackerHarness) rewatchedOn(conn net.Conn) {
	h.t.gotConn(conn)
	h.t.watchStarted(h.watchFor(time.Minute), nil)
	h.timers.fire(settleDelay)
}

var (
	errRefused = errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	errExpired = apierrors.NewResourceExpired("too old resource version: 10 (20)")
)

func expiredEvent() watch.Event {
	return watch.Event{Type: watch.Error, Object: &errExpired.ErrStatus}
}

func TestConnTracker(t *testing.T) {
	tests := []struct {
		name string
		run  func(h *trackerHarness)
		want []string
	}{
		{
			name: "the first list is no relist, and a quiet watch is no outage",
			run: func(h *trackerHarness) {
				h.t.listStarted()
				h.t.listDone(false, nil)
				h.t.listDone(true, nil)
				w := &trackedWatch{}
				h.t.watchStarted(w, nil)
				h.t.watchEvent(w, watch.Event{Type: watch.Added, Object: &corev1.Pod{}})
				// The server ends the watch at its timeout; the reflector watches again.
				h.t.watchEnded(w, false)
				h.t.watchStarted(&trackedWatch{}, nil)
				h.timers.fire(settleDelay)
			},
		},
		{
			name: "410 Gone in the stream, then a relist: one line, with the relist's duration",
			run: func(h *trackerHarness) {
				w := h.synced()
				h.t.watchEvent(w, expiredEvent())
				h.t.watchEnded(w, false)
				h.advance(800 * time.Millisecond)
				h.t.listStarted()
				h.advance(50 * time.Millisecond)
				h.t.listDone(true, nil)
				// The lost report was due after a second, but the outage is over.
				h.timers.fire(LostReportDelay)
			},
			want: []string{"restored pods after 850ms relisted=true cause=too old resource version: 10 (20)"},
		},
		{
			name: "the server goes away: dated from the end of the stream, reported after a second",
			run: func(h *trackerHarness) {
				w := h.synced()
				h.t.watchEnded(w, false)
				h.advance(100 * time.Millisecond)
				h.t.watchStarted(nil, errRefused)
				h.advance(time.Second)
				h.timers.fire(LostReportDelay)
				h.t.watchStarted(nil, errRefused)
				h.advance(2 * time.Second)
				// Back, with the resource version still known: no error, events flow.
				w2 := &trackedWatch{}
				h.t.watchStarted(w2, nil)
				h.t.watchEvent(w2, watch.Event{Type: watch.Modified, Object: &corev1.Pod{}})
			},
			want: []string{
				"lost pods: " + errRefused.Error(),
				"restored pods after 3.1s relisted=false cause=" + errRefused.Error(),
			},
		},
		{
			name: "a reopened watch that stays quiet is restored after settling",
			run: func(h *trackerHarness) {
				w := h.synced()
				h.t.watchEnded(w, false)
				h.t.watchStarted(nil, errRefused)
				h.advance(2 * time.Second)
				h.t.watchStarted(&trackedWatch{}, nil)
				h.timers.fire(settleDelay)
			},
			want: []string{"restored pods after 2s relisted=false cause=" + errRefused.Error()},
		},
		{
			name: "a reopened watch that fails at once is not a reconnect; the relist is",
			run: func(h *trackerHarness) {
				w := h.synced()
				h.t.watchEnded(w, false)
				h.t.watchStarted(nil, errRefused)
				h.advance(time.Second)
				w2 := &trackedWatch{}
				h.t.watchStarted(w2, nil)
				h.t.watchEvent(w2, expiredEvent())
				h.t.watchEnded(w2, false)
				h.timers.fire(settleDelay)
				h.t.listStarted()
				h.t.listDone(true, nil)
			},
			want: []string{"restored pods after 1s relisted=true cause=" + errRefused.Error()},
		},
		{
			name: "a failing relist keeps the outage going",
			run: func(h *trackerHarness) {
				w := h.synced()
				h.t.watchEvent(w, expiredEvent())
				h.t.listStarted()
				h.t.listDone(true, errRefused)
				h.advance(3 * time.Second)
				h.t.listStarted()
				h.t.listDone(false, nil)
				h.t.listDone(true, nil)
			},
			want: []string{"restored pods after 3s relisted=true cause=too old resource version: 10 (20)"},
		},
		{
			name: "a relist without an error seen first",
			run: func(h *trackerHarness) {
				h.synced()
				h.t.listStarted()
				h.t.listDone(true, nil)
			},
			want: []string{"restored pods after 0s relisted=true cause=the informer listed again"},
		},
		{
			name: "a connection dropped under a watch: resumed on a new one, reported once settled",
			run: func(h *trackerHarness) {
				w := h.syncedOn(h2A)
				h.advance(2 * time.Second)
				h.t.watchEnded(w, false)
				h.advance(10 * time.Millisecond)
				h.t.dialing()
				h.t.gotConn(h2B)
				h.t.watchStarted(h.watchFor(time.Minute), nil)
				h.advance(settleDelay)
				h.timers.fire(settleDelay)
			},
			want: []string{"restored pods after 510ms relisted=false cause=the connection to the server was lost"},
		},
		{
			name: "a dropped connection and a server out of reach: reported after a second",
			run: func(h *trackerHarness) {
				w := h.syncedOn(h2A)
				h.t.watchEnded(w, false)
				h.t.dialing()
				h.advance(time.Second)
				h.timers.fire(LostReportDelay)
				h.t.watchStarted(nil, errRefused)
				h.advance(time.Second)
				h.t.dialing()
				h.t.gotConn(h2B)
				w2 := h.watchFor(time.Minute)
				h.t.watchStarted(w2, nil)
				h.t.watchEvent(w2, watch.Event{Type: watch.Modified, Object: &corev1.Pod{}})
			},
			want: []string{
				"lost pods: the connection to the server was lost",
				"restored pods after 2s relisted=false cause=" + errRefused.Error(),
			},
		},
		{
			name: "a dropped connection and a server that refuses: the refusal is the cause",
			run: func(h *trackerHarness) {
				w := h.syncedOn(h2A)
				h.t.watchEnded(w, false)
				h.t.dialing()
				h.t.watchStarted(nil, errRefused)
				h.advance(time.Second)
				h.timers.fire(LostReportDelay)
				h.t.listStarted()
				h.t.gotConn(h2B)
				h.t.listDone(true, nil)
			},
			want: []string{
				"lost pods: " + errRefused.Error(),
				"restored pods after 1s relisted=true cause=" + errRefused.Error(),
			},
		},
		{
			name: "another informer dialed the new connection",
			run: func(h *trackerHarness) {
				w := h.syncedOn(h2A)
				h.t.watchEnded(w, false)
				h.rewatchedOn(h2B)
			},
			want: []string{"restored pods after 0s relisted=false cause=the connection to the server was lost"},
		},
		{
			name: "a stream the server ended at its timeout, then a new connection: routine",
			run: func(h *trackerHarness) {
				w := h.syncedOn(h2A)
				h.advance(time.Minute)
				h.t.watchEnded(w, false)
				h.t.dialing()
				h.rewatchedOn(h2B)
			},
		},
		{
			name: "a stream the client's request timeout ended goes on over the same connection: routine",
			run: func(h *trackerHarness) {
				w := h.syncedOn(h2A)
				h.advance(3 * time.Second)
				h.t.watchEnded(w, false)
				h.rewatchedOn(h2A)
			},
		},
		{
			name: "a watch the reflector stopped was not cut",
			run: func(h *trackerHarness) {
				w := h.syncedOn(h2A)
				h.t.watchEnded(w, true)
				h.rewatchedOn(h2B)
			},
		},
		{
			name: "HTTP/1 connections are pooled per request and tell nothing",
			run: func(h *trackerHarness) {
				w := h.syncedOn(http1A)
				h.t.watchEnded(w, false)
				h.t.dialing()
				h.rewatchedOn(http1B)
			},
		},
		{
			name: "a stream client-go could not read on because the connection went is a lost connection",
			run: func(h *trackerHarness) {
				w := h.synced()
				lost := errors.New("unable to decode an event from the watch stream: http2: client connection lost")
				h.t.watchEvent(w, watch.Event{
					Type:   watch.Error,
					Object: apierrors.NewClientErrorReporter(500, "GET", clientWatchDecoding).AsObject(lost),
				})
				h.t.watchEnded(w, false)
				h.advance(time.Second)
				h.t.listStarted()
				h.t.listDone(true, nil)
			},
			want: []string{"restored pods after 1s relisted=true cause=the connection to the server was lost"},
		},
		{
			name: "errors before the first list are the sync's business",
			run: func(h *trackerHarness) {
				h.t.listStarted()
				h.t.listDone(true, errRefused)
				h.t.watchStarted(nil, errRefused)
				h.t.listStarted()
				h.t.listDone(true, nil)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newTrackerHarness()
			tc.run(h)
			if diff := cmp.Diff(tc.want, h.got); diff != "" {
				t.Errorf("reports (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConnTrackerWrappers: the wrapped list and watch functions report pages, errors and
// events, and the wrapped watch passes every event on and stops its source.
func TestConnTrackerWrappers(t *testing.T) {
	h := newTrackerHarness()
	pages := []*corev1.PodList{
		{ListMeta: metav1.ListMeta{Continue: "next"}},
		{},
	}
	var listed []string
	list := h.t.list(func(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
		listed = append(listed, o.Continue)
		if o.Continue == "" {
			return pages[0], nil
		}
		return pages[1], nil
	})
	fw := watch.NewFake()
	watchFn := h.t.watch(func(context.Context, metav1.ListOptions) (watch.Interface, error) { return fw, nil })

	if _, err := list(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if h.t.listed {
		t.Fatal("a first page with more to come counted as a complete list")
	}
	if _, err := list(context.Background(), metav1.ListOptions{Continue: "next"}); err != nil {
		t.Fatal(err)
	}
	if !h.t.listed {
		t.Fatal("the last page did not complete the list")
	}
	w, err := watchFn(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go fw.Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	if ev := <-w.ResultChan(); ev.Type != watch.Added {
		t.Errorf("first event %v, want ADDED", ev.Type)
	}
	go fw.Error(&errExpired.ErrStatus)
	if ev := <-w.ResultChan(); ev.Type != watch.Error {
		t.Errorf("second event %v, want ERROR", ev.Type)
	}
	h.t.mu.Lock()
	down := h.t.down
	h.t.mu.Unlock()
	if !down {
		t.Error("an ERROR event did not start an outage")
	}
	w.Stop()
	if _, ok := <-w.ResultChan(); ok {
		t.Error("the result channel stays open after Stop")
	}
	if !fw.IsStopped() {
		t.Error("Stop did not stop the source watch")
	}
	// The relist ends the outage.
	if _, err := list(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := list(context.Background(), metav1.ListOptions{Continue: "next"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"restored pods after 0s relisted=true cause=too old resource version: 10 (20)"}
	if diff := cmp.Diff(want, h.got); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "next", "", "next"}, listed); diff != "" {
		t.Errorf("list calls (-want +got):\n%s", diff)
	}
}

// TestReconnectAfterDroppedConnection: with a real client talking HTTP/2 to a TLS
// server, closing the connection under a watch is reported as a reconnect. client-go
// reads the broken stream as a normal end and resumes the watch on a new
// connection without an error anyone sees; only the trace of the connections shows it.
func TestReconnectAfterDroppedConnection(t *testing.T) {
	var watches atomic.Int32
	s, rc := tlsserver.Start(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`)
			return
		}
		watches.Add(1)
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}, true)

	restored := make(chan Reconnect, 10)
	f, err := NewFactory(rc, Config{
		OnWatchRestored: func(r Reconnect) { restored <- r },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	pods := Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true}
	if _, err := f.Informer(pods, Full, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	// A watch that ends within a second of its start makes the reflector list
	// again, which is reported anyway; this test is about the quiet case.
	time.Sleep(1500 * time.Millisecond)
	if n := watches.Load(); n != 1 {
		t.Fatalf("%d watches before the drop, want 1", n)
	}
	select {
	case r := <-restored:
		t.Fatalf("reconnect reported before the drop: %+v", r)
	default:
	}
	s.CloseClientConnections()
	select {
	case r := <-restored:
		if r.Relisted || !errors.Is(r.Cause, errConnectionLost) {
			t.Errorf("reconnect %+v, want one without a relist, caused by the lost connection", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no reconnect reported after the connection dropped (%d watches)", watches.Load())
	}
	if n := watches.Load(); n != 2 {
		t.Errorf("%d watches, want 2: the reflector resumes without listing", n)
	}
}
