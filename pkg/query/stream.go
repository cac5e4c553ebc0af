package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// Streamable reports whether Stream can answer r: a whole type (no names)
// that the API server itself serves from storage, whose lists come in key
// order. Types of aggregated API servers may list in any order.
func Streamable(r Request) bool {
	return len(r.Names) == 0 && clientgoscheme.Scheme.Recognizes(r.Resource.GVK)
}

// StreamPageSize is the LIST page size of Stream. A page is held while it is
// printed and the next one read, so memory follows the page size: on 20,000
// realistic pods -o json peaked at 110 MB with pages of 500, 175 MB with
// 1,000 and 600 MB with 5,000 (informer.DefaultPageSize), in about the same
// time, since the pages are printed while the next ones arrive.
const StreamPageSize = 1000

// Stream answers a listing of one type as List does, in the same order
// (namespace, then name), handing the objects to emit a page at a time as
// the pages arrive: the whole list is never held, so memory stays that of a
// few pages however many objects there are, and the first objects can be
// printed while the server still sends the rest. r must be Streamable.
//
// The API server lists in the order of its storage keys, "namespace/name",
// which is List's order but for one case: a namespace whose name is another's
// followed by "-" sorts before it as a key ("kube-system/..." before
// "kube/...") and after it as a namespace. Objects of such a namespace are
// held until the shorter namespace is known to have no objects in the list's
// snapshot (one LIST of at most one object, at the list's resource version)
// or until its objects have been passed; see orderedSink.
//
// When a list at the cluster scope is forbidden, the answer is read namespace
// by namespace as List reads it, and emitted at once. emit is called from
// Stream's goroutine; an error it returns ends the list and is returned.
//
// With --where, the pages are filtered as they arrive (informer.Config's
// Keep) when the expressions read the object alone; expressions that name
// owner or node are judged before emit, once the owners and nodes are known.
func (s *Session) Stream(ctx context.Context, r Request, emit func([]runtime.Object) error) error {
	reqs := []Request{r}
	cfg := s.listConfig(s.cfg.Namespace, s.cfg.Progress, reqs)
	if cfg.Keep == nil {
		m, err := s.whereMatcher(ctx, requestKinds(reqs), false)
		if err != nil {
			return err
		}
		defer m.close()
		if m != nil {
			all := emit
			emit = func(objs []runtime.Object) error {
				if err := m.ready(ctx); err != nil {
					return err
				}
				return all(m.filter(r.Resource.GVK, objs))
			}
		}
	}
	cfg.PageSize = StreamPageSize
	factory, err := s.newFactory(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []runtime.Object, 1)
	send := func(objs []runtime.Object) error {
		select {
		case batches <- objs:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	sink := &orderedSink{
		emit: send,
		// Objects of one namespace arrive in List's order.
		oneNamespace: s.cfg.Namespace != "" || !r.Resource.Namespaced,
		probe: func(ctx context.Context, namespace, resourceVersion string) (bool, error) {
			return factory.HasObjects(ctx, r.Resource, namespace, resourceVersion)
		},
	}
	if _, err := factory.StreamInformer(r.Resource, r.Mode, sink); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		defer close(batches)
		factory.Start(ctx)
		err := factory.WaitForSync(ctx)
		if err == nil {
			err = sink.finish()
		}
		sink.close()
		factory.Shutdown()
		if err != nil && !sink.emitted() && s.canFallBack(err, reqs) {
			var idxs []cache.Indexer
			if idxs, err = s.perNamespace(ctx, err, reqs, nil); err == nil {
				objs, _ := collect(idxs[0], r, s.cfg.Namespace)
				err = send(keepObjects(cfg.Keep, r.Resource, objs))
			}
		}
		done <- err
	}()
	for objs := range batches {
		if err := emit(objs); err != nil {
			cancel()
			for range batches {
			}
			<-done
			return err
		}
	}
	return <-done
}

// keepObjects returns the objects of objs, of resource r, that keep keeps:
// those of a store, which the pages' filter did not see if a watch brought
// them. A nil keep keeps everything.
func keepObjects(keep func(informer.Resource, runtime.Object) bool, r informer.Resource, objs []runtime.Object) []runtime.Object {
	if keep == nil {
		return objs
	}
	out := objs[:0:0]
	for _, o := range objs {
		if keep(r, o) {
			out = append(out, o)
		}
	}
	return out
}

// orderedSink takes a list's pages in the server's order, storage key order,
// and emits their objects in List's order, namespace then name; see Stream.
// A list that starts again (the reflector retries a list that failed part
// way) skips the objects already emitted. A list out of key order is held
// whole and emitted sorted at its end.
type orderedSink struct {
	emit func([]runtime.Object) error
	// probe reports whether namespace has objects in the list's snapshot at
	// resourceVersion.
	probe func(ctx context.Context, namespace, resourceVersion string) (bool, error)

	// oneNamespace says every object is of one namespace, or of none: the
	// server's order is then List's.
	oneNamespace bool

	mu sync.Mutex
	// closed is set once the answer is complete: pages of later relists are
	// not part of it.
	closed bool
	// Of the current list: its resource version, the key of the last object
	// received, and the namespaces known to have no objects in it.
	resourceVersion string
	lastKey         string
	absent          map[string]bool
	// held are the objects received and not yet emitted, in List's order.
	held []keyed
	// last is the last object emitted, if any: a list that starts again
	// skips up to it.
	last      *keyed
	restarted bool
	received  bool
	// unordered is set once the server lists out of its keys' order.
	unordered bool
}

// keyed is an object with its namespace and name.
type keyed struct {
	namespace, name string
	obj             runtime.Object
}

// before reports whether a sorts before b in List's order.
func (a keyed) before(b keyed) bool { return compareKeyed(a, b) < 0 }

func compareKeyed(a, b keyed) int {
	if c := strings.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// storageKey is the object's place in the server's order.
func (k keyed) storageKey() string {
	if k.namespace == "" {
		return k.name
	}
	return k.namespace + "/" + k.name
}

// Page takes one page of the list; first says it starts a list.
func (s *orderedSink) Page(ctx context.Context, items []runtime.Object, first bool, resourceVersion string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if first {
		s.restarted = s.received
		s.resourceVersion, s.lastKey, s.absent, s.held = resourceVersion, "", map[string]bool{}, nil
	}
	s.received = true
	for _, item := range items {
		a, err := meta.Accessor(item)
		if err != nil {
			return err
		}
		k := keyed{namespace: a.GetNamespace(), name: a.GetName(), obj: item}
		key := k.storageKey()
		if key < s.lastKey {
			// Not the order of the server's keys (a test's fake client): the
			// objects wait for the end of the list.
			s.unordered = true
		}
		s.lastKey = max(s.lastKey, key)
		if s.last != nil && !s.last.before(k) {
			if s.restarted {
				// Emitted before the list started again.
				continue
			}
			return fmt.Errorf("the server listed %q after %q was printed", key, s.last.storageKey())
		}
		i, _ := slices.BinarySearchFunc(s.held, k, compareKeyed)
		s.held = slices.Insert(s.held, i, k)
	}
	n := 0
	for !s.unordered && n < len(s.held) && s.releasable(ctx, s.held[n].namespace) {
		// The objects of one namespace are held side by side: asked once.
		for ns := s.held[n].namespace; n < len(s.held) && s.held[n].namespace == ns; n++ {
		}
	}
	return s.release(n)
}

// releasable reports whether objects of namespace can be emitted: no object
// of a namespace that sorts before it can still arrive. Only a namespace
// whose name namespace continues with "-" can (see Stream); each is either
// passed already, or probed once.
func (s *orderedSink) releasable(ctx context.Context, namespace string) bool {
	if s.oneNamespace {
		return true
	}
	for i := strings.IndexByte(namespace, '-'); i > 0; i = nextDash(namespace, i) {
		shorter := namespace[:i]
		prefix := shorter + "/"
		if s.absent[shorter] || (s.lastKey > prefix && !strings.HasPrefix(s.lastKey, prefix)) {
			continue
		}
		if _, probed := s.absent[shorter]; probed {
			return false
		}
		has, err := s.probe(ctx, shorter, s.resourceVersion)
		// Not knowing is having: the objects wait for the list to pass it.
		s.absent[shorter] = err == nil && !has
		if !s.absent[shorter] {
			return false
		}
	}
	return true
}

// nextDash returns the index of the next "-" in s after i, or -1.
func nextDash(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '-')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// release emits the first n held objects.
func (s *orderedSink) release(n int) error {
	if n == 0 {
		return nil
	}
	objs := make([]runtime.Object, n)
	for i, k := range s.held[:n] {
		objs[i] = k.obj
	}
	last := s.held[n-1]
	s.last = &last
	s.held = slices.Delete(s.held, 0, n)
	return s.emit(objs)
}

// finish emits what is held: the list is complete.
func (s *orderedSink) finish() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.release(len(s.held))
}

// close makes later pages part of nothing.
func (s *orderedSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

// emitted reports whether any object was emitted.
func (s *orderedSink) emitted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last != nil
}
