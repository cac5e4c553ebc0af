package informer

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
)

// Mark says where a notification stands in its resource's history.
type Mark struct {
	// Position is the resourceVersion the informer's resource has been
	// delivered up to once this notification is handled: every change up to it
	// has been notified, none after it. Empty when the notification does not
	// move it (a relist's objects but the last, a tombstone).
	Position string
	// Gap is set on the notifications of a relist: they compare a list with
	// what the informer held, so several changes of one object are folded into
	// one notification and a deletion is a tombstone.
	Gap *Gap
}

// Gap is the stretch of a resource's history a relist skipped.
type Gap struct {
	// From is the resourceVersion the informer had been delivered up to; To is
	// the list's.
	From, To string
	// Reason is GapExpired or GapInterrupted.
	Reason string
}

const (
	// GapExpired: the server no longer had the resourceVersion to resume
	// from: 410 Gone ("too old resource version"), or a watch that ended at
	// once without an event (see staleWatchWindow).
	GapExpired = "expired"
	// GapInterrupted: the watch ended with another error and the informer
	// listed again, from a resourceVersion the server may still have had.
	GapInterrupted = "interrupted"
)

// MarkedHandler hears an informer's notifications with their Marks, in the
// order the informer delivers them.
type MarkedHandler interface {
	OnAdd(obj any, isInInitialList bool, m Mark)
	OnUpdate(oldObj, newObj any, m Mark)
	OnDelete(obj any, m Mark)
	// OnPosition hears a position reached without a notification: the end of
	// a list that had nothing to notify, or a bookmark.
	OnPosition(m Mark)
}

// ResumePoint is where the watch of a feed informer resumes, as a checkpoint
// recorded it.
type ResumePoint struct {
	// ResourceVersion is the position to watch from.
	ResourceVersion string
	// Known stand for the objects the feed knew at ResourceVersion. The first
	// list is the server's current one, so that the informer holds whole
	// objects; those of Known whose namespace and name it lacks (deleted since)
	// are added to it, so that a relist finds them gone. Its resourceVersion is
	// then given as ResourceVersion: the informer watches from there, and is
	// told every change since, each in turn, or lists again if the server no
	// longer has that point.
	Known []runtime.Object
	// Relist, when set, is a relist the feed was printing when it stopped:
	// the informer lists again at once rather than watch from
	// ResourceVersion, whose changes that relist had printed folded. Its
	// Reason is the new gap's.
	Relist *Gap
}

// staleWatchWindow: a watch from a resourceVersion that ends this soon
// without delivering anything, bookmarks included, is taken to have expired.
// An API server serving a watch from etcd (Events, which have no watch cache,
// or any type with --watch-cache=false) answers a resourceVersion compacted
// away with 200 and an empty body, not 410 Gone
// (kubernetes/kubernetes#137089). client-go's reflector lists again after
// such a "very short watch" (under a second, nothing received) from where it
// was; the cursor marks that list's notifications expired, as for a 410.
const staleWatchWindow = time.Second

// Cursor follows one feed informer's place in its resource's history: it
// marks each notification with the position reached once it is handled and,
// for a relist, with the gap the list fills. A checkpoint records the
// positions; the marks tell a feed's reader which lines fold several changes.
//
// It relies on the order client-go delivers notifications in: the order the
// reflector queued what they are about (InOrderInformers, locked on since
// client-go v0.36), a relist as its tombstones then its objects in list order
// (AtomicFIFO). The cursor logs, in that queue order, what the reflector
// queues: every object the informer's transform sees (a list's items, a
// watch event's object), the start of each relist, the end of each list and
// each bookmark. The handler (Handler) finds each notification's object in the
// log; positions logged after it are handed on once it has been, so none is
// reported before the notifications it follows. A relist's tombstones are not
// queued objects (they are made when the relist is processed) and come before
// its objects: they take the gap of the relist whose start heads the log.
//
// Positions are conservative, never ahead of what was notified: a relist that
// lists nothing moves the position only once a later object or bookmark has
// been notified, since its tombstones, if any, cannot be counted in advance.
type Cursor struct {
	res    Resource
	resume *ResumePoint
	// onGap hears of each relist when it is queued; nil hears nothing.
	onGap func(Resource, Gap)
	// atomic is client-go's AtomicFIFO: a relist's tombstones come before its
	// objects, not after.
	atomic bool

	mu      sync.Mutex
	handler MarkedHandler
	// store is the informer's: a relist of an informer that holds nothing has
	// no tombstones.
	store cache.Store
	log   []logEntry
	head  int
	// queued is the position in queue order: what the log's last entry
	// reaches.
	queued string
	// lists counts the lists queued; items is the number of objects of the
	// last one still to come through the transform, and listRV its
	// resourceVersion.
	lists  int
	items  int
	listRV string
	gap    *Gap
	// after is set when a relist's tombstones follow its objects: its end
	// waits for the next object.
	after bool
	// expired records that the last watch ended because its resourceVersion
	// was gone; the next relist's gap says so.
	expired bool
	// pending counts a list's items over its pages; resumed is set once the
	// first list carried the resume point; relisted once the resume point's
	// Relist was done.
	pending  int
	resumed  bool
	relisted bool
	// reason, when set, is the next relist's gap reason.
	reason string
}

type logKind uint8

const (
	logObject logKind = iota
	// logRelist starts a relist: its tombstones take its gap.
	logRelist
	logPosition
)

type logEntry struct {
	kind logKind
	// obj is the object as the transform returned it, which the informer
	// hands its handlers.
	obj any
	// rv is a watch object's resourceVersion, or a position's.
	rv string
	// gap is a relist's, on its start and its objects.
	gap *Gap
}

// NewCursor returns the cursor of a feed informer of res; from, when set,
// resumes its watch (ResumePoint). onGap, when set, hears of each relist as it
// is queued, before its notifications.
func NewCursor(res Resource, from *ResumePoint, onGap func(Resource, Gap)) *Cursor {
	return &Cursor{res: res, resume: from, onGap: onGap, atomic: clientgofeatures.FeatureGates().Enabled(clientgofeatures.AtomicFIFO)}
}

// FeedInformer returns an informer of res in mode for a change feed, never
// shared, followed by c: register c.Handler with it.
func (f *Factory) FeedInformer(res Resource, mode Mode, c *Cursor) (cache.SharedIndexInformer, error) {
	inf, _, err := f.informer(res, mode, nil, nil, nil, c)
	return inf, err
}

func (c *Cursor) setStore(s cache.Store) {
	c.mu.Lock()
	c.store = s
	c.mu.Unlock()
}

// Handler returns the event handler to register with the cursor's informer:
// it hands h each notification with its Mark. A cursor serves one handler.
func (c *Cursor) Handler(h MarkedHandler) cache.ResourceEventHandler {
	c.mu.Lock()
	c.handler = h
	c.releaseLocked()
	c.mu.Unlock()
	return cursorHandler{c: c}
}

type cursorHandler struct{ c *Cursor }

func (h cursorHandler) OnAdd(obj any, isInInitialList bool) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	h.c.handler.OnAdd(obj, isInInitialList, h.c.takeLocked(obj))
	h.c.releaseLocked()
}

func (h cursorHandler) OnUpdate(oldObj, newObj any) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	h.c.handler.OnUpdate(oldObj, newObj, h.c.takeLocked(newObj))
	h.c.releaseLocked()
}

func (h cursorHandler) OnDelete(obj any) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	if _, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		h.c.handler.OnDelete(obj, h.c.tombstoneLocked())
		return
	}
	h.c.handler.OnDelete(obj, h.c.takeLocked(obj))
	h.c.releaseLocked()
}

// takeLocked finds obj in the log and returns its mark, dropping what was
// logged before it. An object the log does not hold gets no mark and leaves
// the log as it is.
func (c *Cursor) takeLocked(obj any) Mark {
	at := -1
	for i := c.head; i < len(c.log); i++ {
		if c.log[i].kind == logObject && sameObject(c.log[i].obj, obj) {
			at = i
			break
		}
	}
	if at < 0 {
		return Mark{}
	}
	// Positions logged before it should have been handed on already; an
	// object skipped is one whose notification never came.
	for ; c.head < at; c.head++ {
		if e := c.log[c.head]; e.kind == logPosition {
			c.handler.OnPosition(Mark{Position: e.rv})
		}
	}
	e := c.log[at]
	c.dropLocked(at + 1)
	return Mark{Position: e.rv, Gap: e.gap}
}

// sameObject reports whether a and b are the same object: informers hand
// handlers the pointers their transform returned.
func sameObject(a, b any) bool {
	ra, ok := a.(runtime.Object)
	if !ok {
		return false
	}
	rb, ok := b.(runtime.Object)
	return ok && ra == rb
}

// tombstoneLocked returns the mark of a relist's tombstone: the gap of the
// relist started at the head of the log, or of the first one queued after.
func (c *Cursor) tombstoneLocked() Mark {
	c.releaseLocked()
	for i := c.head; i < len(c.log); i++ {
		if c.log[i].kind == logRelist {
			return Mark{Gap: c.log[i].gap}
		}
	}
	return Mark{Gap: c.gap}
}

// releaseLocked hands on the positions at the head of the log.
func (c *Cursor) releaseLocked() {
	if c.handler == nil {
		return
	}
	for c.head < len(c.log) && c.log[c.head].kind == logPosition {
		rv := c.log[c.head].rv
		c.dropLocked(c.head + 1)
		c.handler.OnPosition(Mark{Position: rv})
	}
}

// dropLocked drops the log up to (not including) i.
func (c *Cursor) dropLocked(i int) {
	c.head = i
	if c.head == len(c.log) {
		clear(c.log)
		c.log, c.head = c.log[:0], 0
	} else if c.head > 1024 && c.head > len(c.log)/2 {
		n := copy(c.log, c.log[c.head:])
		clear(c.log[n:])
		c.log, c.head = c.log[:n], 0
	}
}

// appendLocked logs e and moves the queue's position.
func (c *Cursor) appendLocked(e logEntry) {
	c.log = append(c.log, e)
	if e.kind == logPosition || e.kind == logObject && e.rv != "" {
		c.queued = e.rv
	}
	c.releaseLocked()
}

// transform returns the informer's transform with the cursor's logging after
// inner (nil: none).
func (c *Cursor) transform(inner cache.TransformFunc) cache.TransformFunc {
	return func(obj any) (any, error) {
		if inner != nil {
			var err error
			if obj, err = inner(obj); err != nil {
				return nil, err
			}
		}
		c.queuedObject(obj)
		return obj, nil
	}
}

// queuedObject logs an object the reflector queued: the next of a list's
// items, or a watch event's.
func (c *Cursor) queuedObject(obj any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.items > 0 {
		c.items--
		c.appendLocked(logEntry{kind: logObject, obj: obj, gap: c.gap})
		if c.items == 0 {
			if c.after {
				// Its tombstones come next: the end is handed on once a
				// later object is.
				c.appendLocked(logEntry{kind: logRelist, gap: c.gap})
			}
			c.appendLocked(logEntry{kind: logPosition, rv: c.listRV})
		}
		return
	}
	rv := ""
	if m, err := meta.Accessor(obj); err == nil {
		rv = m.GetResourceVersion()
	}
	c.appendLocked(logEntry{kind: logObject, obj: obj, rv: rv})
}

// queuedList logs a list of n objects at rv that the reflector is about to
// hand its queue: a relist's start, then, as the transform sees them, its
// objects, then its position.
func (c *Cursor) queuedList(rv string, n int) {
	c.mu.Lock()
	var gap *Gap
	tombstones := false
	if c.lists > 0 {
		reason := GapInterrupted
		if c.expired {
			reason = GapExpired
		}
		if c.reason != "" {
			reason, c.reason = c.reason, ""
		}
		gap = &Gap{From: c.queued, To: rv, Reason: reason}
		// An informer that holds nothing, with every notification handed on,
		// has nothing to find deleted.
		tombstones = c.head < len(c.log) || c.store == nil || len(c.store.ListKeys()) > 0
		if tombstones && (c.atomic || n == 0) {
			c.appendLocked(logEntry{kind: logRelist, gap: gap})
		}
	}
	c.lists++
	c.expired = false
	c.items, c.listRV, c.gap, c.after = n, rv, gap, tombstones && !c.atomic
	if n == 0 {
		c.appendLocked(logEntry{kind: logPosition, rv: rv})
	}
	onGap := c.onGap
	c.mu.Unlock()
	if gap != nil && onGap != nil {
		onGap(c.res, *gap)
	}
}

// watchEnded records why a watch ended: expired says its resourceVersion was
// gone.
func (c *Cursor) watchEnded(expired bool) {
	c.mu.Lock()
	c.expired = c.expired || expired
	c.mu.Unlock()
}

// queuedBookmark logs a bookmark the reflector has taken: everything queued
// before it was delivered up to rv.
func (c *Cursor) queuedBookmark(rv string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rv != "" {
		c.appendLocked(logEntry{kind: logPosition, rv: rv})
	}
}

// listWatch wraps lw: the first list carries the resume point, every
// complete list is logged, and watches are followed for bookmarks and for how
// they end.
func (c *Cursor) listWatch(lw cache.ListerWatcher) cache.ListerWatcher {
	return &cursorListWatch{c: c, lw: cache.ToListerWatcherWithContext(lw)}
}

type cursorListWatch struct {
	c  *Cursor
	lw cache.ListerWatcherWithContext
	// keys are the namespace/name of the objects of the resume list's pages so
	// far.
	keys map[string]bool
}

// IsWatchListSemanticsUnSupported keeps the reflector listing in pages, as
// the factory's own ListerWatcher does (pagedListWatch).
func (*cursorListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// List implements cache.Lister; the reflector calls ListWithContext.
func (l *cursorListWatch) List(o metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), o)
}

// Watch implements cache.Watcher; the reflector calls WatchWithContext.
func (l *cursorListWatch) Watch(o metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), o)
}

func (l *cursorListWatch) ListWithContext(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	c := l.c
	if o.Continue == "" {
		c.mu.Lock()
		c.pending = 0
		c.mu.Unlock()
		l.keys = nil
	}
	obj, err := l.lw.ListWithContext(ctx, o)
	if err != nil {
		return nil, err
	}
	list, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, err
	}
	n := meta.LenList(obj)
	c.mu.Lock()
	resuming := c.resume != nil && !c.resumed && c.lists == 0
	c.mu.Unlock()
	if resuming {
		if obj, err = l.resumePage(obj, list.GetContinue() == ""); err != nil {
			return nil, err
		}
		n = meta.LenList(obj)
		list, _ = meta.ListAccessor(obj)
	}
	c.mu.Lock()
	c.pending += n
	total := c.pending
	if resuming && list.GetContinue() == "" {
		c.resumed = true
	}
	c.mu.Unlock()
	if list.GetContinue() == "" {
		c.queuedList(list.GetResourceVersion(), total)
	}
	return obj, nil
}

// resumePage gives a page of the resume list the resume point's
// resourceVersion and, on the last page, the known objects the list lacks.
func (l *cursorListWatch) resumePage(obj runtime.Object, last bool) (runtime.Object, error) {
	if l.keys == nil {
		l.keys = map[string]bool{}
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		if key, err := cache.MetaNamespaceKeyFunc(item); err == nil {
			l.keys[key] = true
		}
	}
	from := l.c.resume
	if last {
		for _, k := range from.Known {
			if key, err := cache.MetaNamespaceKeyFunc(k); err == nil && !l.keys[key] {
				items = append(items, k)
			}
		}
		l.keys = nil
	}
	// A page of a typed list holds its own kind only: the page goes on as a
	// list of any objects.
	out := &metav1.List{Items: make([]runtime.RawExtension, len(items))}
	for i, item := range items {
		out.Items[i].Object = item
	}
	if list, err := meta.ListAccessor(obj); err == nil {
		out.Continue = list.GetContinue()
		out.RemainingItemCount = list.GetRemainingItemCount()
	}
	out.ResourceVersion = from.ResourceVersion
	return out, nil
}

func (l *cursorListWatch) WatchWithContext(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	c := l.c
	c.mu.Lock()
	relist := c.resumed && !c.relisted && c.resume.Relist != nil
	if relist {
		c.relisted, c.reason = true, c.resume.Relist.Reason
	}
	c.mu.Unlock()
	if relist {
		// The reflector lists again after a failed watch.
		return nil, apierrors.NewResourceExpired("the feed was listing again when it stopped")
	}
	w, err := l.lw.WatchWithContext(ctx, o)
	if err != nil {
		l.c.watchEnded(apierrors.IsResourceExpired(err) || apierrors.IsGone(err))
		return nil, err
	}
	cw := &cursorWatch{c: l.c, inner: w, out: make(chan watch.Event), done: make(chan struct{}), from: o.ResourceVersion, start: time.Now()}
	go cw.run()
	return cw, nil
}

// cursorWatch passes a watch's events on, logging bookmarks once the
// reflector has taken them and how the watch ended.
type cursorWatch struct {
	c     *Cursor
	inner watch.Interface
	out   chan watch.Event
	done  chan struct{}
	once  sync.Once
	from  string
	start time.Time
}

func (w *cursorWatch) run() {
	defer close(w.out)
	in := w.inner.ResultChan()
	events := 0
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-in:
		case <-w.done:
			return
		}
		if !ok {
			// Closed by the server: at once and empty is an expired
			// resourceVersion that was not said so.
			stale := events == 0 && w.from != "" && w.from != "0" && time.Since(w.start) < staleWatchWindow
			w.c.watchEnded(stale)
			return
		}
		events++
		if ev.Type == watch.Error {
			w.c.watchEnded(expiredStatus(ev.Object))
		}
		select {
		case w.out <- ev:
		case <-w.done:
			return
		}
		// The reflector has taken the bookmark: what it queued before is in
		// the log.
		if ev.Type == watch.Bookmark {
			if m, err := meta.Accessor(ev.Object); err == nil {
				w.c.queuedBookmark(m.GetResourceVersion())
			}
		}
	}
}

// expiredStatus reports whether a watch's ERROR event says its
// resourceVersion is gone.
func expiredStatus(obj runtime.Object) bool {
	err := apierrors.FromObject(obj)
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// ResultChan implements watch.Interface.
func (w *cursorWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface.
func (w *cursorWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.inner.Stop()
	})
}
