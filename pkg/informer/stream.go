package informer

import (
	"context"
	"errors"

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
	return f.informer(res, mode, nil, sink, nil)
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
