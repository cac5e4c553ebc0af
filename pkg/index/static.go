package index

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"k8s.io/client-go/tools/cache"
)

// errStatic is what a static indexer answers a change with.
var errStatic = errors.New("a static indexer's objects are never updated or deleted")

// Static is a cache.Indexer of objects that are added once and never updated
// or deleted: the objects a one-shot question reads and then only looks up.
// Each index value keeps its objects' keys in a slice, in the order they
// were added, where client-go's indexer keeps a set and grows it: at 20,000
// pods and the owner, kind, label and namespace indexes, adding them to a
// client-go indexer took a third of a second, mostly growing those sets.
//
// It is safe for concurrent use. Add fails for a key it holds already;
// Update, Delete, Replace and AddIndexers always fail.
type Static struct {
	keyFunc  cache.KeyFunc
	indexers cache.Indexers
	// names are the indexers' names, sorted; fns their functions and
	// indices their indexes, in that order.
	names []string
	fns   []cache.IndexFunc

	mu    sync.RWMutex
	keys  []string
	items map[string]any
	// indices holds, by index, each indexed value's keys.
	indices []map[string][]string
}

var _ cache.Indexer = (*Static)(nil)

// NewStatic returns an empty Static that keys objects with keyFunc and
// indexes them with indexers. sizeHint is the number of objects expected.
func NewStatic(keyFunc cache.KeyFunc, indexers cache.Indexers, sizeHint int) *Static {
	s := &Static{keyFunc: keyFunc, indexers: indexers, names: slices.Sorted(maps.Keys(indexers)), items: make(map[string]any, sizeHint), keys: make([]string, 0, sizeHint)}
	for _, name := range s.names {
		s.fns = append(s.fns, indexers[name])
		s.indices = append(s.indices, map[string][]string{})
	}
	return s
}

// Add adds obj, which must not be held already.
func (s *Static) Add(obj any) error {
	key, values, err := s.entryOf(obj)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.insert(key, obj, values)
}

// entryOf returns obj's key and its values of each index. It reads obj
// alone, without the lock.
func (s *Static) entryOf(obj any) (string, [][]string, error) {
	key, err := s.keyFunc(obj)
	if err != nil {
		return "", nil, cache.KeyError{Obj: obj, Err: err}
	}
	values := make([][]string, len(s.fns))
	for i, fn := range s.fns {
		vs, err := fn(obj)
		if err != nil {
			return "", nil, fmt.Errorf("unable to calculate an index entry for key %q on index %q: %w", key, s.names[i], err)
		}
		values[i] = vs
	}
	return key, values, nil
}

// insert adds obj under key with its index values; s.mu is held.
func (s *Static) insert(key string, obj any, values [][]string) error {
	if _, ok := s.items[key]; ok {
		return fmt.Errorf("%q: %w", key, errStatic)
	}
	s.items[key] = obj
	s.keys = append(s.keys, key)
	for i, vs := range values {
		index := s.indices[i]
		for j, v := range vs {
			// An object is listed once under a value, as in a set.
			if slices.Contains(vs[:j], v) {
				continue
			}
			index[v] = append(index[v], key)
		}
	}
	return nil
}

// Update fails: the objects are never updated.
func (s *Static) Update(any) error { return errStatic }

// Delete fails: the objects are never deleted.
func (s *Static) Delete(any) error { return errStatic }

// Replace fails: the objects are never replaced.
func (s *Static) Replace([]any, string) error { return errStatic }

// Resync does nothing.
func (s *Static) Resync() error { return nil }

// AddIndexers fails: the indexes are the ones given to NewStatic.
func (s *Static) AddIndexers(cache.Indexers) error { return errStatic }

// Bookmark does nothing: no resource version is kept.
func (s *Static) Bookmark(string) {}

// LastStoreSyncResourceVersion is empty: no resource version is kept.
func (s *Static) LastStoreSyncResourceVersion() string { return "" }

// List returns the objects in the order they were added.
func (s *Static) List() []any {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]any, len(s.keys))
	for i, k := range s.keys {
		out[i] = s.items[k]
	}
	return out
}

// ListKeys returns the keys in the order their objects were added.
func (s *Static) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.keys)
}

// Get returns the object held under obj's key.
func (s *Static) Get(obj any) (any, bool, error) {
	key, err := s.keyFunc(obj)
	if err != nil {
		return nil, false, cache.KeyError{Obj: obj, Err: err}
	}
	return s.GetByKey(key)
}

// GetByKey returns the object held under key.
func (s *Static) GetByKey(key string) (any, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	item, ok := s.items[key]
	return item, ok, nil
}

// GetIndexers returns the indexers given to NewStatic.
func (s *Static) GetIndexers() cache.Indexers { return s.indexers }

// index returns the index named name, or an error as client-go's indexer
// gives one.
func (s *Static) index(name string) (map[string][]string, error) {
	i, ok := slices.BinarySearch(s.names, name)
	if !ok {
		return nil, fmt.Errorf("Index with name %s does not exist", name)
	}
	return s.indices[i], nil
}

// Index returns the objects that share an indexed value with obj.
func (s *Static) Index(name string, obj any) ([]any, error) {
	fn, ok := s.indexers[name]
	if !ok {
		return nil, fmt.Errorf("Index with name %s does not exist", name)
	}
	values, err := fn(obj)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	index, err := s.index(name)
	if err != nil {
		return nil, err
	}
	var out []any
	seen := map[string]bool{}
	for _, v := range values {
		for _, k := range index[v] {
			if len(values) > 1 {
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			out = append(out, s.items[k])
		}
	}
	return out, nil
}

// IndexKeys returns the keys of the objects indexed under value.
func (s *Static) IndexKeys(name, value string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	index, err := s.index(name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(index[value]), nil
}

// ListIndexFuncValues returns the values of the index named name.
func (s *Static) ListIndexFuncValues(name string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	index, _ := s.index(name)
	return slices.Collect(maps.Keys(index))
}

// ByIndex returns the objects indexed under value.
func (s *Static) ByIndex(name, value string) ([]any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	index, err := s.index(name)
	if err != nil {
		return nil, err
	}
	keys := index[value]
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = s.items[k]
	}
	return out, nil
}
