package informer

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/client-go/tools/cache"
)

// Lender lends a Factory informers that outlive it: a warm pool's, in the
// cache server (package pool). A Factory made with one
// (NewFactoryWithLender) asks it for every informer but a feed's
// (FeedInformer: a feed's positions are its own), follows a lent informer's
// sync, failure and progress as those of its own, and goes through the
// lender for what makes a lent store fit for its question: Settle before
// WaitForSync returns, Release at Shutdown. The lender also decides when
// the informers the factory runs itself may list (Authorize), so that a
// question reads nothing its asker may not, whichever informer holds it.
//
// This is the whole of what pkg/informer knows of a warm pool: the pool
// imports this package, never the other way round.
//
// A Factory calls Borrow and Authorize with its lock held: they must not
// call the factory back. It calls Settle and Release without it.
type Lender interface {
	// Borrow returns the informer of res in mode that the lender lends under
	// the factory's Config, with indexers added to it; sink, when set, is to
	// get the informer's list (StreamInformer). Asked again for the same
	// resource and mode, it returns the same loan. Nothing may be read of
	// the informer before Settle has returned.
	Borrow(res Resource, mode Mode, indexers cache.Indexers, sink PageSink) (Loan, error)
	// Authorize returns what the factory's own informer of res in namespace
	// ("" for every namespace, or a cluster-scoped type) with those
	// selectors waits for before it lists: nil to list at once, or a
	// function that returns nil once it may, and otherwise the error its
	// list fails with.
	Authorize(res Resource, namespace, labelSelector, fieldSelector string) func(context.Context) error
	// Settle makes what was lent fit to read, once every informer of the
	// factory has synced or failed: WaitForSync calls it, within its
	// timeout, and returns its error. With partial (WaitForSyncPartial), a
	// lent informer the question must not read is returned as skipped
	// instead, and reads as empty.
	Settle(ctx context.Context, partial bool) ([]Skipped, error)
	// Release hands back what was lent, running, once the factory's own
	// informers have been told to stop. It may be called more than once.
	Release()
}

// Loan is an informer a Lender lends a Factory.
type Loan struct {
	// Informer is what the question reads in place of an informer of the
	// factory's own.
	Informer cache.SharedIndexInformer
	// Runner is the factory that runs the lent informer, for the same
	// resource, in Mode, another than the borrowing one: the borrowing
	// factory waits for that informer's sync, reports its failure and counts
	// its progress as its own.
	Runner *Factory
	// Mode is the mode Runner runs the informer in: the one asked for, or
	// one that Covers it (a Full informer lent to a metadata-only
	// question), whose objects then hold more than the question reads.
	Mode Mode
}

// borrowLocked is Informer for a factory with a lender; f.mu is held.
func (f *Factory) borrowLocked(res Resource, mode Mode, indexers cache.Indexers, sink PageSink) (cache.SharedIndexInformer, error) {
	loan, err := f.lender.Borrow(res, mode, indexers, sink)
	if err != nil {
		return nil, err
	}
	var e *entry
	if loan.Runner != nil && loan.Runner != f && loan.Mode.Covers(mode) {
		e = loan.Runner.entry(res, loan.Mode)
	}
	if e == nil {
		return nil, fmt.Errorf("the %s informer in %s mode was lent by a factory that does not run it", res.Name(), mode)
	}
	// The factory's waits, failures and progress line follow the runner's
	// entry as they would one of its own; Start leaves it to its runner.
	if !slices.Contains(f.order, e) {
		f.order = append(f.order, e)
	}
	return loan.Informer, nil
}

// entry returns the entry of res in mode, or nil.
func (f *Factory) entry(res Resource, mode Mode) *entry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.informers[informerKey{gvr: res.GVR, mode: mode}]
}

// ListFailed returns why the list of the factory's informer of res in mode
// failed for good before its first sync, after which it stopped; nil while
// it has not, or when there is no such informer. A warm pool drops an
// informer whose list failed, so that the next question tries again.
func (f *Factory) ListFailed(res Resource, mode Mode) error {
	if e := f.entry(res, mode); e != nil {
		return e.failed()
	}
	return nil
}
