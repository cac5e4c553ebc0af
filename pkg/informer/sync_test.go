package informer_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/tlsserver"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// realFactory returns a factory with real clients talking to host with the given
// per-request timeout (--request-timeout), as NewFactory builds them for commands,
// listing in pages: the servers of these tests page, and do not stream lists.
func realFactory(t *testing.T, host string, timeout time.Duration) *informer.Factory {
	t.Helper()
	f := restFactory(t, &rest.Config{Host: host, Timeout: timeout}, informer.Config{SyncTimeout: 30 * time.Second, WatchListStall: -1})
	mustInformer(t, f, podsRes, informer.Full)
	return f
}

// syncFor starts f and returns WaitForSync's error and how long it took.
func syncFor(t *testing.T, f *informer.Factory) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	err := startAndSync(t, f)
	return err, time.Since(start)
}

// holdWatch answers r, when it is a WATCH, with a stream that stays open and silent until
// the request ends, and reports whether it was one.
func holdWatch(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.Query().Get("watch") != "true" {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	<-r.Context().Done()
	return true
}

// stallingServer accepts connections and never answers a request.
func stallingServer(t *testing.T) string {
	t.Helper()
	return serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}).Host
}

// resettingServer resets every connection as soon as a request arrives on it.
func resettingServer(t *testing.T) string {
	t.Helper()
	return serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_ = conn.(*net.TCPConn).SetLinger(0)
		_ = conn.Close()
	}).Host
}

// cuttingServer starts every answer and closes the connection in the middle of it.
func cuttingServer(t *testing.T) string {
	t.Helper()
	return serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","items":[`)
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_ = conn.Close()
	}).Host
}

func TestWaitForSyncTransportFailures(t *testing.T) {
	tests := []struct {
		name    string
		host    func(t *testing.T) string
		timeout time.Duration
		// want matches the whole error; HOST stands for the server's host:port.
		want string
		// maxWait bounds WaitForSync: the retry bound plus room for a loaded machine.
		maxWait time.Duration
	}{
		{
			// One try reaches the timeout at 1s; the retry window closes 1s later
			// with the second try under way.
			name: "no answer", host: stallingServer, timeout: time.Second,
			want:    `listing pods: the server HOST did not answer within --request-timeout=1s \(retried for 1s\)`,
			maxWait: 3500 * time.Millisecond,
		},
		{
			name: "refused", host: func(t *testing.T) string { return "http://" + fixtures.ClosedAddress(t) }, timeout: time.Second,
			want:    `listing pods: the connection to the server HOST was refused \(retried for 1s\)`,
			maxWait: 2500 * time.Millisecond,
		},
		{
			name: "reset", host: resettingServer, timeout: time.Second,
			want:    `listing pods: the connection to the server HOST was reset \(retried for 1s\)`,
			maxWait: 2500 * time.Millisecond,
		},
		{
			// client-go reports "unexpected error when reading response body. Please
			// retry. Original error: unexpected EOF", without the URL.
			name: "closed mid-answer", host: cuttingServer, timeout: time.Second,
			want:    `listing pods: the connection to the server HOST was closed \(retried for 1s\)`,
			maxWait: 2500 * time.Millisecond,
		},
		{
			// Without --request-timeout, the number of tries bounds the wait:
			// backoffs of 0.8-1.6s and 1.6-3.2s.
			name: "refused without a request timeout", host: func(t *testing.T) string { return "http://" + fixtures.ClosedAddress(t) },
			want:    `listing pods: the connection to the server HOST was refused \(tried 3 times\)`,
			maxWait: 7 * time.Second,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			host := tc.host(t)
			f := realFactory(t, host, tc.timeout)
			err, took := syncFor(t, f)
			var listErr *informer.ListError
			if !errors.As(err, &listErr) {
				t.Fatalf("WaitForSync error = %v (%T), want a *informer.ListError", err, err)
			}
			if listErr.Resource != podsRes {
				t.Errorf("ListError.Resource = %s, want pods", listErr.Resource.Name())
			}
			want := strings.ReplaceAll(tc.want, "HOST", regexp.QuoteMeta(strings.TrimPrefix(host, "http://")))
			if !regexp.MustCompile("^" + want + "$").MatchString(err.Error()) {
				t.Errorf("error =\n%s\nwant it to match\n%s", err, want)
			}
			if took > tc.maxWait {
				t.Errorf("WaitForSync took %s, want at most %s", took, tc.maxWait)
			}
		})
	}
}

// podList renders a one-pod list page in JSON, continuing to next when it is not empty.
func podList(name, next string) string {
	return fmt.Sprintf(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":%q},`+
		`"items":[{"metadata":{"name":%q,"namespace":"shop","resourceVersion":"7"}}]}`, next, name)
}

// TestWaitForSyncSlowListAfterFailure: a list that failed once is retried, and a
// retry still receiving pages when the retry window closes is not cut off.
func TestWaitForSyncSlowListAfterFailure(t *testing.T) {
	const timeout = 2 * time.Second
	var lists atomic.Int32
	var failedAt atomic.Int64
	srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		if holdWatch(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("continue") == "" {
			if lists.Add(1) == 1 {
				// The first try fails with an error the reflector retries (and the
				// REST client does not, without Retry-After).
				failedAt.Store(time.Now().UnixNano())
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`)
				return
			}
			fmt.Fprint(w, podList("web-0", "page-2"))
			return
		}
		// The second page comes after the retry window has closed (one timeout
		// after the failure), yet within its own request's timeout: the retry
		// starts at least 0.8s after the failure.
		time.Sleep(time.Until(time.Unix(0, failedAt.Load()).Add(timeout + 300*time.Millisecond)))
		fmt.Fprint(w, podList("web-1", ""))
	})
	f := realFactory(t, srv.Host, timeout)
	inf := mustInformer(t, f, podsRes, informer.Full)
	if err, took := syncFor(t, f); err != nil {
		t.Fatalf("WaitForSync after %s: %v", took, err)
	}
	if got := storeKeys(inf); len(got) != 2 {
		t.Errorf("store keys = %q, want both pages", got)
	}
	if n := lists.Load(); n != 2 {
		t.Errorf("%d lists, want 2", n)
	}
}

// TestWaitForSyncRecoversWithinWindow: a list that gets no answer once and then
// does syncs, with no error.
func TestWaitForSyncRecoversWithinWindow(t *testing.T) {
	var lists atomic.Int32
	srv := serveTest(t, func(w http.ResponseWriter, r *http.Request) {
		if holdWatch(w, r) {
			return
		}
		if lists.Add(1) == 1 {
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, podList("web-0", ""))
	})
	f := realFactory(t, srv.Host, 2*time.Second)
	inf := mustInformer(t, f, podsRes, informer.Full)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f.Start(ctx)
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatalf("WaitForSync: %v", err)
	}
	if got := storeKeys(inf); len(got) != 1 {
		t.Errorf("store keys = %q, want [shop/web-0]", got)
	}
}

// trickledServer starts a TLS server speaking HTTP/2, as the API server does, and a
// factory with real clients and a --request-timeout of timeout talking to it. list
// answers every LIST: with the status and the body it returns, the body of a 200
// sent in chunks pieces, gap apart, or with nothing at all when the status is 0. Watches
// get headers and then nothing. The server records the URL of every request.
func trickledServer(t *testing.T, timeout time.Duration, chunks int, gap time.Duration, list func(r *http.Request) (int, []byte)) (*informer.Factory, *httptest.Server, func() []*url.URL) {
	t.Helper()
	var mu sync.Mutex
	var urls []*url.URL
	s, rc := tlsserver.Start(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		urls = append(urls, r.URL)
		mu.Unlock()
		if holdWatch(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		status, body := list(r)
		if status == 0 {
			<-r.Context().Done()
			return
		}
		w.WriteHeader(status)
		if status != http.StatusOK {
			_, _ = w.Write(body)
			return
		}
		size := (len(body) + chunks - 1) / chunks
		for i := 0; len(body) > 0; i++ {
			if i > 0 {
				select {
				case <-time.After(gap):
				case <-r.Context().Done():
					return
				}
			}
			n := min(size, len(body))
			if _, err := w.Write(body[:n]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			body = body[n:]
		}
	}, true)
	rc.Timeout = timeout
	f := restFactory(t, rc, informer.Config{SyncTimeout: 30 * time.Second})
	return f, s, func() []*url.URL {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(urls)
	}
}

// podListOf renders a list page of n pods in JSON, padded with labels to some
// size, continuing to next when it is not empty.
func podListOf(n int, next string) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"metadata":{"name":"web-%d","namespace":"shop","resourceVersion":"7","labels":{"pad":%q}}}`, i, strings.Repeat("x", 60))
	}
	return fmt.Appendf(nil, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7","continue":%q},"items":[%s]}`,
		next, strings.Join(items, ","))
}

// TestFactoryListSlowerThanRequestTimeout: a LIST answer that takes three times
// --request-timeout to arrive, with gaps shorter than it, is received whole, in one
// request; no timeout= parameter goes to the server.
func TestFactoryListSlowerThanRequestTimeout(t *testing.T) {
	const timeout = 500 * time.Millisecond
	f, _, urls := trickledServer(t, timeout, 16, timeout/5, func(*http.Request) (int, []byte) { return http.StatusOK, podListOf(50, "") })
	inf := mustInformer(t, f, podsRes, informer.Full)
	err, took := syncFor(t, f)
	if err != nil {
		t.Fatalf("WaitForSync after %s: %v", took, err)
	}
	if took < 3*timeout {
		t.Errorf("the list took %s, want at least %s: the test does not test a slow answer", took, 3*timeout)
	}
	if n := len(storeKeys(inf)); n != 50 {
		t.Errorf("%d pods in the store, want 50", n)
	}
	var lists int
	for _, u := range urls() {
		if u.Query().Has("timeout") {
			t.Errorf("request %s sends a timeout: the server would end the answer itself", u)
		}
		if u.Query().Get("watch") != "true" {
			lists++
		}
	}
	if lists != 1 {
		t.Errorf("%d LIST requests, want 1", lists)
	}
}

// TestFactoryListStalledMidAnswer: a LIST answer that stops for a whole
// --request-timeout fails as a timeout, in the words of one that never started.
func TestFactoryListStalledMidAnswer(t *testing.T) {
	const timeout = 500 * time.Millisecond
	var lists atomic.Int32
	f, s, _ := trickledServer(t, timeout, 2, time.Hour, func(*http.Request) (int, []byte) {
		lists.Add(1)
		return http.StatusOK, podListOf(50, "")
	})
	mustInformer(t, f, podsRes, informer.Full)
	err, took := syncFor(t, f)
	want := `listing pods: the server ` + regexp.QuoteMeta(strings.TrimPrefix(s.URL, "https://")) +
		` did not answer within --request-timeout=500ms \((retried for 500ms|tried [23] times)\)`
	if err == nil || !regexp.MustCompile("^"+want+"$").MatchString(err.Error()) {
		t.Errorf("WaitForSync after %s: %v\nwant an error matching %s", took, err, want)
	}
	if took > 3*time.Second {
		t.Errorf("WaitForSync took %s, want about two timeouts", took)
	}
}

// TestWaitForSyncSlowPageAfterFailure: a list that failed once is retried, and a
// retry whose one page is still arriving when the retry window closes is not cut
// off: its bytes count as progress, not only the pages it completed.
func TestWaitForSyncSlowPageAfterFailure(t *testing.T) {
	const timeout = 2 * time.Second
	var lists atomic.Int32
	// The retry starts 0.8-1.6s after the failure and takes about 3s: the window
	// closes at 2s and again at 4s with the page under way.
	f, _, _ := trickledServer(t, timeout, 11, 300*time.Millisecond, func(r *http.Request) (int, []byte) {
		if lists.Add(1) == 1 {
			// An error the reflector retries, and the REST client does not
			// without Retry-After.
			return http.StatusServiceUnavailable, []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"ServiceUnavailable","code":503}`)
		}
		return http.StatusOK, podListOf(50, "")
	})
	inf := mustInformer(t, f, podsRes, informer.Full)
	if err, took := syncFor(t, f); err != nil {
		t.Fatalf("WaitForSync after %s: %v", took, err)
	}
	if n := len(storeKeys(inf)); n != 50 {
		t.Errorf("%d pods in the store, want 50", n)
	}
	if n := lists.Load(); n != 2 {
		t.Errorf("%d lists, want 2", n)
	}
}
