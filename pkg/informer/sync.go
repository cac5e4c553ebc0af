package informer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// maxListFailures is how many failed lists a retriable error (timeouts, 5xx, 429,
// refused or reset connections) gets before a one-shot query gives up. The
// reflector backs off between attempts (0.8 s, then 1.6 s, each plus up to as much
// jitter), so three tries cost a couple of seconds, not minutes.
const maxListFailures = 3

// syncPollInterval is how often WaitForSync checks HasSynced. HasSynced is a cheap
// lock-and-read, so a short interval costs nothing and keeps latency low.
const syncPollInterval = 10 * time.Millisecond

// ListError is a list that kept failing with transient transport errors (no
// answer, a refused or reset connection) until a query gave up on it. Errors the
// server answered with are returned as they are instead: they name the resource
// in kubectl's words already.
type ListError struct {
	// Resource is the resource listed.
	Resource Resource
	// Tries is how many tries failed when the query gave up.
	Tries int
	// Retried is the retry window that closed with the list still not through:
	// the list was retried for that long after its first failure. Zero when Tries
	// ended the retries.
	Retried time.Duration
	// Server is the API server's host:port, when known.
	Server string
	// RequestTimeout is the clients' per-request timeout (--request-timeout);
	// zero when there is none.
	RequestTimeout time.Duration
	// Err is the last failure, as the transport gave it (usually a *url.Error).
	Err error
}

// Error names the resource, the server and what went wrong, without the request
// URL: "listing pods: the server 127.0.0.1:6443 did not answer within
// --request-timeout=2s (retried for 2s)".
func (e *ListError) Error() string {
	var urlErr *url.Error
	errors.As(e.Err, &urlErr)
	host := e.Server
	if host == "" && urlErr != nil {
		if u, err := url.Parse(urlErr.URL); err == nil {
			host = u.Host
		}
	}
	server := "the server"
	if host != "" {
		server += " " + host
	}
	// client-go's REST client retries a GET whose connection was reset or closed
	// until its own timeout, and then reports the timeout with the earlier error
	// in words only ("... - error from a previous attempt: ... connection reset by
	// peer"): the words are what is left to go by.
	msg := e.Err.Error()
	var what string
	var netErr net.Error
	switch {
	case utilnet.IsConnectionRefused(e.Err) || strings.Contains(msg, "connection refused"):
		what = "the connection to " + server + " was refused"
	case utilnet.IsConnectionReset(e.Err) || strings.Contains(msg, "connection reset by peer"):
		what = "the connection to " + server + " was reset"
	case connectionLost(e.Err):
		what = "the connection to " + server + " was closed"
	case errors.Is(e.Err, context.DeadlineExceeded), errors.As(e.Err, &netErr) && netErr.Timeout():
		if e.RequestTimeout > 0 {
			what = fmt.Sprintf("%s did not answer within --request-timeout=%s", server, e.RequestTimeout)
		} else {
			what = server + " did not answer in time"
		}
	case urlErr != nil:
		what = urlErr.Err.Error() + " talking to " + server
	default:
		what = msg
	}
	switch {
	case e.Retried > 0:
		return fmt.Sprintf("listing %s: %s (retried for %s)", e.Resource.Name(), what, e.Retried.Round(100*time.Millisecond))
	case e.Tries > 1:
		return fmt.Sprintf("listing %s: %s (tried %d times)", e.Resource.Name(), what, e.Tries)
	}
	return fmt.Sprintf("listing %s: %s", e.Resource.Name(), what)
}

// Unwrap returns the transport's error.
func (e *ListError) Unwrap() error { return e.Err }

// watchErrorHandler reports list failures that happen before an informer's first
// sync to WaitForSync. The reflector would otherwise retry forever and a query would
// hang until --sync-timeout with no explanation.
//
// A retriable failure is retried, by the reflector and with its backoff, until
// maxListFailures tries have failed or, when the clients have a request timeout,
// until one request timeout has passed since the first failure, whichever comes
// first: a --request-timeout of 2s against a server that does not answer costs
// about 4s, not three times 2s plus backoff. A try still running when the window
// closes is abandoned, unless its answer is still arriving: pages completed or
// bytes of a page received since the window opened keep it open for another
// timeout, as a request's progress deadline keeps a slow page going.
func (f *Factory) watchErrorHandler(e *entry) cache.WatchErrorHandlerWithContext {
	var (
		mu       sync.Mutex
		lastErr  error
		window   *time.Timer
		received int64
	)
	return func(ctx context.Context, r *cache.Reflector, err error) {
		klog.V(2).InfoS("list/watch failed", "resource", e.res.Name(), "err", err)
		// A list that went through (its watch failing before the store caught
		// up) is not a failed list: the informer syncs without help.
		if e.informer.HasSynced() || r.LastSyncResourceVersion() != "" {
			return
		}
		if !Retriable(err) {
			f.giveUp(e, err)
			return
		}
		n := e.listFailures.Add(1)
		server, timeout := f.clientSettings()
		if n >= maxListFailures {
			f.giveUp(e, transportError(e, err, int(n), 0, server, timeout))
			return
		}
		if timeout <= 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		lastErr = err
		received = e.progress()
		if window != nil {
			return
		}
		closeWindow := func() {
			if ctx.Err() != nil || e.informer.HasSynced() || r.LastSyncResourceVersion() != "" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if got := e.progress(); got > received {
				// A slow list that is getting somewhere is not cut off.
				received = got
				window.Reset(timeout)
				return
			}
			f.giveUp(e, transportError(e, lastErr, int(e.listFailures.Load()), timeout, server, timeout))
		}
		window = time.AfterFunc(timeout, closeWindow)
		context.AfterFunc(ctx, func() { window.Stop() })
	}
}

// progress is a number that grows whenever e's list gets somewhere: objects of
// completed pages plus bytes of answers.
func (e *entry) progress() int64 { return e.received.Load() + e.bodyBytes.Load() }

// giveUp records err as e's failure and wakes WaitForSync.
func (f *Factory) giveUp(e *entry, err error) {
	if e.fail(err) {
		select {
		case f.failed <- struct{}{}:
		default:
		}
	}
}

// transportError wraps a retriable error that is not the server's answer in a
// *ListError; an API status (429, 5xx) is kept as it is, in the server's words.
func transportError(e *entry, err error, tries int, retried time.Duration, server string, timeout time.Duration) error {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	// The reflector's "failed to list pods: " wrapping adds nothing the resource
	// name does not say. The REST client's note of an earlier try's error around
	// the last one's does: a try that found the request's time used up by the
	// tries before it, whose connections were reset, is reported as a reset.
	var urlErr *url.Error
	if errors.As(err, &urlErr) && !strings.Contains(err.Error(), previousAttempt) {
		err = urlErr
	} else if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "failed to list ") {
		err = inner
	}
	return &ListError{Resource: e.res, Tries: tries, Retried: retried, Server: server, RequestTimeout: timeout, Err: err}
}

// previousAttempt is how client-go's REST client joins the error of an earlier
// try to the last one's.
const previousAttempt = " - error from a previous attempt: "

// clientSettings returns the API server's host:port and the clients' per-request
// timeout (--request-timeout, zero if none). NewFactory builds every client from
// one REST config, so the typed core client has the server all of them talk to;
// clients that are not REST clients (fakes) have none. The timeout is the one
// NewFactory took from the config: the clients apply it in their transport, and
// their own overall timeout is zero.
func (f *Factory) clientSettings() (server string, timeout time.Duration) {
	timeout = f.clients.RequestTimeout
	if f.clients.Typed == nil {
		return "", timeout
	}
	c, err := f.clients.Typed(schema.GroupVersion{Version: "v1"})
	if err != nil {
		return "", timeout
	}
	if rc, ok := c.(*rest.RESTClient); ok {
		if u := rc.Get().URL(); u != nil {
			server = u.Host
		}
	}
	return server, timeout
}

// CredentialsFailed reports whether err is client-go's failure to get
// credentials from an exec plugin ("getting credentials: exec: ..."), which
// carries the plugin's own message: a login to do, not an outage to wait
// out. kubectl words it "Unable to connect to the server: getting
// credentials: ...", after running the plugin once.
func CredentialsFailed(err error) bool {
	return err != nil && strings.Contains(err.Error(), "getting credentials: ")
}

// Retriable reports whether err may go away by itself: a timeout, a 5xx or
// 429, an expired resourceVersion, a connection refused, reset or lost. A
// failure to get credentials from an exec plugin is not: it carries a login
// to do (CredentialsFailed).
func Retriable(err error) bool {
	if CredentialsFailed(err) {
		return false
	}
	switch {
	case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err), apierrors.IsResourceExpired(err),
		apierrors.IsGone(err):
		return true
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return false
	}
	var urlErr *url.Error
	var netErr net.Error
	return errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded) ||
		connectionLost(err)
}

// connectionLost reports whether err says the connection went away, which in the
// middle of an answer reaches us without a URL, wrapped as "unexpected error when
// reading response body".
func connectionLost(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		utilnet.IsProbableEOF(err) || utilnet.IsHTTP2ConnectionLost(err)
}

// WaitForSync blocks until every informer has synced, a list fails for good, the
// sync timeout expires or ctx ends. A list the server refused is returned as the
// server's APIStatus error, unwrapped, so the command layer can word it as kubectl
// does; one the transport kept failing as a *ListError naming the resource, the
// server and the cause; a timeout names the resources still syncing.
func (f *Factory) WaitForSync(ctx context.Context) error {
	_, err := f.waitForSync(ctx, false)
	return err
}

// Skipped is a resource whose informer could not sync and was stopped.
type Skipped struct {
	// Resource and Mode are the informer's.
	Resource Resource
	Mode     Mode
	// Err is the error as WaitForSync would return it.
	Err error
}

// WaitForSyncPartial waits like WaitForSync, except that a list failing for
// good (Forbidden, NotFound, or a transient error after a few tries) does not
// end the wait: that informer is stopped and reported in skipped, in request
// order, and the others go on. Queries over many types use it so one type the
// user may not list costs a warning, not the whole answer. err is only for the
// sync timeout and ctx.
func (f *Factory) WaitForSyncPartial(ctx context.Context) (skipped []Skipped, err error) {
	return f.waitForSync(ctx, true)
}

func (f *Factory) waitForSync(ctx context.Context, partial bool) ([]Skipped, error) {
	if f.cfg.SyncTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.cfg.SyncTimeout)
		defer cancel()
	}
	if f.cfg.Progress != nil {
		stop := f.startProgress(f.cfg.Progress, f.cfg.ProgressDelay)
		defer stop()
	}
	ticker := time.NewTicker(syncPollInterval)
	defer ticker.Stop()
	for {
		// The failures are read after unsynced: an informer that fails in
		// between leaves unsynced's list and must be in this one. Failures
		// are never undone, so nothing is missed this way. (Read before, a
		// list failing in between was neither: WaitForSync returned nil over
		// an empty store, and an owner of a kind the user may not list was
		// reported as not found.)
		unsynced := f.unsynced()
		if f.betweenSyncLooks != nil {
			f.betweenSyncLooks()
		}
		failed := f.failedEntries()
		if !partial && len(failed) > 0 {
			return nil, listError(failed[0], failed[0].failed())
		}
		if len(unsynced) == 0 {
			skipped := make([]Skipped, 0, len(failed))
			for _, e := range failed {
				// A stopped informer no longer retries in the background.
				e.cancel()
				skipped = append(skipped, Skipped{Resource: e.res, Mode: e.mode, Err: listError(e, e.failed())})
			}
			if f.lender != nil {
				// Lent stores are read once the lender has made them fit
				// for the question: a warm pool's, once they have caught up
				// with the server and the asker may read them.
				denied, err := f.lender.Settle(ctx, partial)
				if err != nil {
					return nil, err
				}
				skipped = append(skipped, denied...)
			}
			return skipped, nil
		}
		select {
		case <-f.failed:
		case <-ctx.Done():
			names := f.unsynced()
			if len(names) == 0 {
				continue
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && f.cfg.SyncTimeout > 0 {
				return nil, fmt.Errorf("%w after %s: %s did not sync (raise --sync-timeout to wait longer)",
					ErrSyncTimeout, f.cfg.SyncTimeout, joinNames(names))
			}
			return nil, fmt.Errorf("waiting for %s to sync: %w", joinNames(names), ctx.Err())
		case <-ticker.C:
		}
	}
}

// failedEntries returns the entries whose list failed for good, in request order.
func (f *Factory) failedEntries() []*entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*entry
	for _, e := range f.order {
		if e.failed() != nil {
			out = append(out, e)
		}
	}
	return out
}

// listError unwraps the reflector's "failed to list" wrapping down to the error a
// user can act on: a *ListError, the server's status, or the error with the
// resource named.
func listError(e *entry, err error) error {
	var listErr *ListError
	if errors.As(err, &listErr) {
		return listErr
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		if err, ok := status.(error); ok {
			return err
		}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return urlErr
	}
	return fmt.Errorf("listing %s: %w", e.res.Name(), err)
}
