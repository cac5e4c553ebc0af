package informer

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// PageSink takes the pages of an informer's list as they arrive, in place of
// its store: the list is read once, and its objects go wherever the sink
// sends them (a printer) instead of piling up in memory.
type PageSink interface {
	// Page takes one page: its objects, whether it is the first page of a
	// list (a list that failed part way starts again from the first), and
	// the resource version of the list's snapshot. An error fails the list.
	Page(ctx context.Context, items []runtime.Object, first bool, resourceVersion string) error
}

// StreamInformer returns a new informer for res in mode whose list goes to
// sink page by page; its store stays empty. It syncs, and fails, as any
// informer of the factory does, with the same retries, request timeouts and
// errors. res must not have another informer in mode.
func (f *Factory) StreamInformer(res Resource, mode Mode, sink PageSink) (cache.SharedIndexInformer, error) {
	inf, _, err := f.informer(res, mode, nil, sink, nil, nil)
	return inf, err
}

// toSink hands a list page's objects to sink and leaves the page empty, so
// that the reflector keeps nothing of it.
func toSink(ctx context.Context, sink PageSink, page runtime.Object, first bool) error {
	items, err := meta.ExtractList(page)
	if err != nil {
		return err
	}
	list, err := meta.ListAccessor(page)
	if err != nil {
		return err
	}
	if err := sink.Page(ctx, items, first, list.GetResourceVersion()); err != nil {
		return err
	}
	return meta.SetList(page, nil)
}

// Tee hands an informer's first list to a PageSink as it arrives, while the
// store keeps it (TeeInformer): the question that starts a warm informer
// prints the list the informer syncs with, and the informer stays.
type Tee struct {
	e    *entry
	sink PageSink

	mu sync.Mutex
	// err is why the sink stopped taking pages, if it did: the question's
	// answer lacks the rest of the list.
	err error
}

// Stop stops handing pages to the sink, if the list has not ended or the
// sink failed already: a question that no longer wants them (it ended, or
// it may not read them) leaves the list to the store.
func (t *Tee) Stop() { t.e.tee.CompareAndSwap(t, nil) }

// Stopped reports whether pages no longer go to the sink: the first list
// has been handed over, or the sink failed, or Stop was called.
func (t *Tee) Stopped() bool { return t.e.tee.Load() != t }

// Err returns why the sink stopped taking pages, if it did.
func (t *Tee) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// teePage hands a list page's objects to t and leaves them in the page for
// the store. The question reads them while the store takes them: the
// reflector stores shallow copies of a list's items (ExtractListWithAlloc),
// and the informer's transform sets their top-level fields only, once the
// page transform has dropped what it drops. Once the list's last page is
// handed over, t is done: a later list (the watch expired) is the store's
// alone. A sink that fails (its question went away, or the list came out of
// order) is dropped, its error kept for the question; the list goes on for
// the store.
func teePage(ctx context.Context, e *entry, t *Tee, page runtime.Object, first bool) {
	items, err := meta.ExtractList(page)
	var list metav1.ListInterface
	if err == nil {
		if list, err = meta.ListAccessor(page); err == nil {
			err = t.sink.Page(ctx, items, first, list.GetResourceVersion())
		}
	}
	if err != nil {
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
	}
	if err != nil || list.GetContinue() == "" {
		e.tee.CompareAndSwap(t, nil)
	}
}

// HasObjects reports whether res has any object in namespace, under the
// factory's selectors, in the snapshot at resourceVersion: one metadata-only
// LIST of at most one object.
func (f *Factory) HasObjects(ctx context.Context, res Resource, namespace, resourceVersion string) (bool, error) {
	if f.clients.Metadata == nil {
		return false, errors.New("no metadata client")
	}
	list, err := f.clients.Metadata.Resource(res.GVR).Namespace(namespace).List(ctx, metav1.ListOptions{
		LabelSelector:        f.cfg.LabelSelector,
		FieldSelector:        f.cfg.FieldSelector,
		Limit:                1,
		ResourceVersion:      resourceVersion,
		ResourceVersionMatch: metav1.ResourceVersionMatchExact,
	})
	if err != nil {
		return false, err
	}
	return len(list.Items) > 0, nil
}
