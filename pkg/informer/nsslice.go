package informer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// A list too large to hold whole, of a namespaced type in every namespace,
// is read namespace by namespace (nsSlicer), each namespace's list in one
// answer where it fits: the API server answers the first page of a list from
// its watch cache whatever was written lately, where the later pages of a
// type nobody wrote for a few minutes come from etcd (Factory.firstList). A
// quiet cluster's pods then list at the cost of a busy one's.
//
// The namespaces are listed first; their list's resourceVersion is the
// sliced list's, which the informer watches from. Each namespace's list has
// a resourceVersion of its own, at or after it: the watch's events for a
// namespace up to that version are in its list already, and are dropped
// (nsSlicer.filter). A namespace created after the namespaces were listed is
// in no list: its objects arrive by the watch, which starts before them.
//
// The slices reach the reflector as the pages of one list, in the order of
// the namespaces' names, which is the server's own order for a list of every
// namespace: a continue token of the slicer's own (sliceToken) names the
// next namespace, and a page of a namespace too large for one answer. A
// PageSink is handed them in that order, as it is pages.

// slicePrefix starts the continue tokens of a sliced list: no API server's
// token (base64 of JSON) starts with it.
const slicePrefix = "kubectl-idx/namespace:"

// sliceAhead is how many namespaces' first answers are asked for ahead of the
// one the reflector reads: their lists overlap, and what a list holds is at
// most sliceAhead+1 namespaces' answers.
const sliceAhead = 2

// minPerNamespace is the fewest objects a namespace must hold on average for a
// list to be sliced: thousands of small namespaces would each cost a request
// where pages of the whole list cost one per PageSize objects.
const minPerNamespace = 200

// nsSlicer reads one informer's lists by namespace.
type nsSlicer struct {
	f *Factory
	e *entry
	// fetch asks for one page of namespace ns, decoded, transformed and
	// counted as a page of the list.
	fetch func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error)

	mu sync.Mutex
	// cur is the list under way or last done, nil when the last list was
	// not sliced.
	cur *slicedList
	// unsliceable is set once the namespaces could not be listed (not
	// permitted, most often): the informer lists as it would without.
	unsliceable bool
}

// slicedList is one sliced list.
type slicedList struct {
	namespaces []string
	// rv is the resourceVersion of the namespaces' list, the sliced list's.
	rv string
	// budget is the largest answer, in bytes, one namespace is asked for in;
	// limit the objects it is thought to hold.
	limit int64
	// o is the list's options, without limit or continue token.
	o metav1.ListOptions

	mu sync.Mutex
	// listedAt is each namespace's list's resourceVersion, once listed.
	listedAt map[string]uint64
	// ahead is the namespaces whose first answer was asked for, by index.
	ahead map[int]*nsAnswer
}

type nsAnswer struct {
	done chan struct{}
	obj  runtime.Object
	err  error
}

// reset forgets the last sliced list, as a list starts: the watch after a
// list that is not sliced drops nothing.
func (s *nsSlicer) reset() {
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
}

// start begins a sliced list of what o asks for, if it should be: total objects
// of perObject bytes each, to hold within budget bytes an answer. It returns the
// first slice's answer, or nil, nil to leave the list to the caller.
func (s *nsSlicer) start(ctx context.Context, o metav1.ListOptions, total, perObject, budget int64) (runtime.Object, error) {
	s.mu.Lock()
	unsliceable := s.unsliceable
	s.mu.Unlock()
	// A feed's cursor, and a warm pool's freshness proof, take the version a
	// store has applied for the newest of its objects; a sliced list's holds
	// objects of later versions than the list's own until its watch passes
	// them. Neither is sliced.
	if unsliceable || perObject <= 0 || s.e.cursor != nil || s.f.clients.Metadata == nil || strings.Contains(o.FieldSelector, "metadata.namespace") {
		return nil, nil
	}
	nsList, err := s.f.clients.Metadata.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		s.mu.Lock()
		s.unsliceable = true
		s.mu.Unlock()
		return nil, nil
	}
	if _, err := strconv.ParseUint(nsList.ResourceVersion, 10, 64); err != nil {
		return nil, nil
	}
	names := make([]string, 0, len(nsList.Items))
	for _, n := range nsList.Items {
		names = append(names, n.Name)
	}
	if len(names) == 0 || (total/int64(len(names)) < minPerNamespace && s.f.cfg.ByNamespace != ByNamespaceAlways) {
		return nil, nil
	}
	// In the order of the server's keys, /registry/pods/NAMESPACE/NAME: a
	// name followed by "/" ("a-b/" before "a/").
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(a+"/", b+"/") })
	o.Limit, o.Continue = 0, ""
	l := &slicedList{
		namespaces: names, rv: nsList.ResourceVersion, o: o,
		limit:    max(budget/perObject, s.f.cfg.PageSize),
		listedAt: map[string]uint64{}, ahead: map[int]*nsAnswer{},
	}
	s.mu.Lock()
	s.cur = l
	s.mu.Unlock()
	return s.page(ctx, l, 0, "")
}

// next returns the page a continue token of the slicer's names.
func (s *nsSlicer) next(ctx context.Context, token string) (runtime.Object, error) {
	s.mu.Lock()
	l := s.cur
	s.mu.Unlock()
	i, cont, err := parseSliceToken(token)
	if err != nil || l == nil || i >= len(l.namespaces) {
		return nil, fmt.Errorf("listing %s by namespace: continue token %q is not this list's", s.e.res.Name(), token)
	}
	return s.page(ctx, l, i, cont)
}

// page returns namespace i's page that cont continues ("" for its first),
// with the continue token of what follows it.
func (s *nsSlicer) page(ctx context.Context, l *slicedList, i int, cont string) (runtime.Object, error) {
	var obj runtime.Object
	var err error
	if cont == "" {
		obj, err = s.first(ctx, l, i)
		for j := i + 1; j <= i+sliceAhead && j < len(l.namespaces); j++ {
			s.askAhead(ctx, l, j)
		}
	} else {
		o := l.o
		o.Limit, o.Continue = s.f.cfg.PageSize, cont
		obj, err = s.fetch(ctx, l.namespaces[i], o)
	}
	if err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, err
	}
	if cont == "" {
		rv, err := strconv.ParseUint(lm.GetResourceVersion(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("listing %s in namespace %s: resourceVersion %q is not a number", s.e.res.Name(), l.namespaces[i], lm.GetResourceVersion())
		}
		l.mu.Lock()
		l.listedAt[l.namespaces[i]] = rv
		l.mu.Unlock()
	}
	// The reflector watches from the version of the list's first page.
	lm.SetResourceVersion(l.rv)
	switch {
	case lm.GetContinue() != "":
		lm.SetContinue(sliceToken(i, lm.GetContinue()))
	case i+1 < len(l.namespaces):
		lm.SetContinue(sliceToken(i+1, ""))
	}
	lm.SetRemainingItemCount(nil)
	return obj, nil
}

// first returns namespace i's first answer, asked for ahead or now.
func (s *nsSlicer) first(ctx context.Context, l *slicedList, i int) (runtime.Object, error) {
	l.mu.Lock()
	a := l.ahead[i]
	delete(l.ahead, i)
	l.mu.Unlock()
	if a == nil {
		return s.fetch(ctx, l.namespaces[i], s.firstOptions(l))
	}
	select {
	case <-a.done:
		return a.obj, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *nsSlicer) firstOptions(l *slicedList) metav1.ListOptions {
	o := l.o
	o.Limit = l.limit
	return o
}

// askAhead asks for namespace j's first answer unless it was.
func (s *nsSlicer) askAhead(ctx context.Context, l *slicedList, j int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.ahead[j]; ok {
		return
	}
	a := &nsAnswer{done: make(chan struct{})}
	l.ahead[j] = a
	go func() {
		defer close(a.done)
		a.obj, a.err = s.fetch(ctx, l.namespaces[j], s.firstOptions(l))
	}()
}

// filter drops the watch events a sliced list has already: those of a
// namespace at or before its list's resourceVersion.
func (s *nsSlicer) filter(w watch.Interface) watch.Interface {
	s.mu.Lock()
	l := s.cur
	s.mu.Unlock()
	if l == nil {
		return w
	}
	return watch.Filter(w, func(ev watch.Event) (watch.Event, bool) {
		if ev.Type != watch.Added && ev.Type != watch.Modified && ev.Type != watch.Deleted {
			return ev, true
		}
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			return ev, true
		}
		l.mu.Lock()
		at, listed := l.listedAt[m.GetNamespace()]
		l.mu.Unlock()
		if !listed {
			return ev, true
		}
		rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
		return ev, err != nil || rv > at
	})
}

func sliceToken(i int, cont string) string {
	return slicePrefix + strconv.Itoa(i) + ":" + cont
}

// isSliceToken reports whether a continue token is the slicer's.
func isSliceToken(token string) bool { return strings.HasPrefix(token, slicePrefix) }

func parseSliceToken(token string) (int, string, error) {
	rest, ok := strings.CutPrefix(token, slicePrefix)
	if !ok {
		return 0, "", fmt.Errorf("not a namespace token")
	}
	num, cont, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, "", fmt.Errorf("no namespace index")
	}
	i, err := strconv.Atoi(num)
	if err != nil || i < 0 {
		return 0, "", fmt.Errorf("bad namespace index %q", num)
	}
	return i, cont, nil
}
