package informer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// keepItems leaves in list, one LIST page of e's, the items keep keeps, in
// their order. Those it refuses are counted as received (the progress line
// counts what the server sent) and dropped with the page: a --where that keeps
// a tenth of 20,000 pods holds 2,000 in the store, not 20,000.
//
// A page whose items all stay is left as it is. Otherwise the kept items are
// copied into a new slice (a typed list holds them as values), which costs a
// shallow copy of each kept object, not a decoding.
func keepItems(list runtime.Object, e *entry, keep func(Resource, runtime.Object) bool) error {
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("filtering a page of %s: %w", e.res.Name(), err)
	}
	kept := make([]runtime.Object, 0, len(items))
	for _, it := range items {
		if keep(e.res, it) {
			kept = append(kept, it)
		}
	}
	if len(kept) == len(items) {
		return nil
	}
	e.received.Add(int64(len(items) - len(kept)))
	if err := meta.SetList(list, kept); err != nil {
		return fmt.Errorf("filtering a page of %s: %w", e.res.Name(), err)
	}
	return nil
}
