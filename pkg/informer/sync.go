package informer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// maxListFailures is how many failed lists a retriable error (timeouts, 5xx, 429,
// refused connections) gets before a one-shot query gives up. The reflector backs
// off between attempts, so three tries cost a couple of seconds, not minutes.
const maxListFailures = 3

// syncPollInterval is how often WaitForSync checks HasSynced. HasSynced is a cheap
// lock-and-read, so a short interval costs nothing and keeps latency low.
const syncPollInterval = 10 * time.Millisecond

// watchErrorHandler reports list failures that happen before an informer's first
// sync to WaitForSync. The reflector would otherwise retry forever and a query would
// hang until --sync-timeout with no explanation.
func (f *Factory) watchErrorHandler(e *entry) cache.WatchErrorHandlerWithContext {
	return func(ctx context.Context, r *cache.Reflector, err error) {
		klog.V(2).InfoS("list/watch failed", "resource", e.res.Name(), "err", err)
		if e.informer.HasSynced() {
			return
		}
		if retriable(err) && e.listFailures.Add(1) < maxListFailures {
			return
		}
		if e.fail(err) {
			select {
			case f.failed <- struct{}{}:
			default:
			}
		}
	}
}

// retriable reports whether err may go away by itself.
func retriable(err error) bool {
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
	return errors.As(err, &urlErr) || errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}

// WaitForSync blocks until every informer has synced, a list fails for good, the
// sync timeout expires or ctx ends. A failing list is returned as the error the
// server or transport gave (an APIStatus or *url.Error, unwrapped, so the command
// layer can word it as kubectl does); a timeout names the resources still syncing.
func (f *Factory) WaitForSync(ctx context.Context) error {
	_, err := f.waitForSync(ctx, false)
	return err
}

// Skipped is a resource whose informer could not sync and was stopped.
type Skipped struct {
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
		failed := f.failedEntries()
		if len(failed) > 0 && !partial {
			return nil, listError(failed[0], failed[0].failed())
		}
		if len(f.unsynced()) == 0 {
			skipped := make([]Skipped, 0, len(failed))
			for _, e := range failed {
				// A stopped informer no longer retries in the background.
				e.cancel()
				skipped = append(skipped, Skipped{Resource: e.res, Mode: e.mode, Err: listError(e, e.failed())})
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
// user can act on.
func listError(e *entry, err error) error {
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
