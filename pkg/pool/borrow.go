package pool

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// settleParallelism bounds the freshness proofs a question runs at once. A
// question over every type borrows dozens of informers, and a proof mostly
// waits: for a bookmark, about a second.
const settleParallelism = 64

// Source is a Pool as the informer.Source of one question (one served run):
// its factories borrow the pool's informers, and their WaitForSync waits
// until the stores are as current as Freshness asks and the asker may read
// them. It records what each type of the answer is current as of (AsOf).
type Source struct {
	pool      *Pool
	fresh     Freshness
	signature string
	// asker authorizes what the question reads for whoever asks it; nil
	// checks nothing (tests of the pool's own workings).
	asker Asker

	mu       sync.Mutex
	asOf     map[asOfKey]AsOf
	borrowed map[poolKey]bool
}

// Source returns the pool as the informer.Source of a question that wants
// fresh.
// signature names the question (its arguments, say): the informers the
// last question of that name borrowed are shown current for this one at
// once, in the background, so that a question that finds its types in
// stages (a tree: the types, then their owners, then their status) waits
// for one freshness proof, not one per stage. Done records this question's.
// asker authorizes every informer the question reads for the one who asks
// it (Asker), before anything of it is read.
func (p *Pool) Source(fresh Freshness, signature string, asker Asker) *Source {
	s := &Source{pool: p, fresh: fresh, signature: signature, asker: asker, asOf: map[asOfKey]AsOf{}, borrowed: map[poolKey]bool{}}
	if signature != "" {
		p.prefetch(signature, fresh)
	}
	return s
}

// Done says the question has its answer: the informers it borrowed are those
// its signature's next question will want.
func (s *Source) Done() {
	if s.signature == "" {
		return
	}
	s.mu.Lock()
	keys := slices.Collect(maps.Keys(s.borrowed))
	s.mu.Unlock()
	s.pool.remember(s.signature, keys)
}

// NewFactory returns a factory whose informers are borrowed from the pool:
// its informer.Lender is the pool's side of it (borrower). restConfig is
// ignored: the pool's clients are the connection's.
func (s *Source) NewFactory(_ *rest.Config, cfg informer.Config) (*informer.Factory, error) {
	b := &borrower{src: s, cfg: cfg, byKey: map[poolKey]*loan{}, checks: map[checkKey]*check{}}
	if cfg.OnWatchLost != nil || cfg.OnWatchRestored != nil {
		b.listener = &outageListener{lost: cfg.OnWatchLost, restored: cfg.OnWatchRestored}
	}
	return informer.NewFactoryWithLender(s.pool.clients, cfg, b), nil
}

// AsOf is what the objects of one type in an answer from the warm cache are
// current as of: the server's state of them at ResourceVersion, which holds
// every write the API server acknowledged before Time.
type AsOf struct {
	// Resource is the type.
	Resource informer.Resource
	// Namespace is the informer's namespace, "" for every namespace or a
	// cluster-scoped type.
	Namespace string
	// ResourceVersion and Time are what its objects are current as of.
	ResourceVersion string
	Time            time.Time
}

type asOfKey struct {
	resource  string
	namespace string
}

// AsOf returns what the types read so far are current as of, by resource
// name then namespace; of several informers of one type and namespace, the
// least current.
func (s *Source) AsOf() []AsOf {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Collect(maps.Values(s.asOf))
	slices.SortFunc(out, func(a, b AsOf) int {
		if c := strings.Compare(a.Resource.Name(), b.Resource.Name()); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace, b.Namespace)
	})
	return out
}

func (s *Source) record(w *warm, c confirmation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := asOfKey{w.res.Name(), w.key.namespace}
	if old, ok := s.asOf[k]; ok && !c.at.Before(old.Time) {
		return
	}
	s.asOf[k] = AsOf{Resource: w.res, Namespace: w.key.namespace, ResourceVersion: c.rvText, Time: c.at}
}

// borrower is the pool's side of one borrowing informer.Factory: its
// informer.Lender. It lends the factory the pool's warm informers, settles
// them for the question (the freshness proof, and the asker's check) and
// hands them back. It is also where the question's asker is asked (Asker):
// every informer the factory reads, lent or its own, waits for the check of
// what it holds.
type borrower struct {
	src *Source
	// cfg is the factory's: what its question narrows by, and its sync
	// timeout.
	cfg      informer.Config
	listener *outageListener

	mu       sync.Mutex
	loans    []*loan
	byKey    map[poolKey]*loan
	released bool
	// checks are the asker's checks, by what they check, run under
	// checkCtx, which Release cancels.
	checks      map[checkKey]*check
	checkCtx    context.Context
	checkCancel context.CancelFunc
}

var _ informer.Lender = (*borrower)(nil)

// loan is one informer a question borrows.
type loan struct {
	w    *warm
	key  poolKey
	inf  *borrowedInformer
	sink informer.PageSink
	// indexers are those the question asked for, for a private list.
	indexers cache.Indexers
	// teed, when set, says the informer was started for this question, its
	// first list handed to sink as it arrived through teed.
	teed *informer.Tee
	// private is a list of the question's own, when the warm store could
	// not be shown current (errNeedsList).
	private *informer.Factory
	// settled is set once the store is shown current; asOf is as of what.
	settled bool
	asOf    confirmation
	regs    []*borrowedRegistration
	// check is the asker's authorization of what the loan holds (Asker);
	// denied is its failure, once settle has found it: the question reads
	// an empty informer in place of the warm one.
	check  *check
	denied error
	// warnedUpTo is how many of its warm informer's warnings the question
	// has been told, or was not to be: those of lists before it borrowed.
	warnedUpTo int
}

// Borrow lends the factory the pool's informer of res in mode under its
// Config, starting it if the pool has none, and starts the asker's check of
// what it holds (Lender.Borrow).
func (b *borrower) Borrow(res informer.Resource, mode informer.Mode, indexers cache.Indexers, sink informer.PageSink) (informer.Loan, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.released {
		return informer.Loan{}, errors.New("informer asked of a factory that was shut down")
	}
	key := keyFor(b.cfg, res, mode)
	if l, ok := b.byKey[key]; ok {
		if sink != nil || l.sink != nil {
			return informer.Loan{}, fmt.Errorf("the %s informer in %s mode streams its list and cannot be shared", res.Name(), mode)
		}
		l.w.indexMu.Lock()
		err := informer.AddMissingIndexers(l.inf, indexers)
		l.w.indexMu.Unlock()
		if err != nil {
			return informer.Loan{}, fmt.Errorf("adding indexers to the %s informer: %w", res.Name(), err)
		}
		maps.Copy(l.indexers, indexers)
		return informer.Loan{Informer: l.inf, Runner: l.w.factory, Mode: l.w.key.mode}, nil
	}
	c := b.startCheckLocked(res, key.namespace, key.labelSelector, key.fieldSelector)
	if c != nil && sink != nil {
		// A warm informer started for this question prints its first list
		// as it arrives, before WaitForSync: not before the check.
		sink = &checkedSink{check: c, sink: sink}
	}
	w, teed, err := b.src.pool.acquire(key, res, sink)
	if err != nil {
		return informer.Loan{}, err
	}
	w.indexMu.Lock()
	err = informer.AddMissingIndexers(w.inf, indexers)
	w.indexMu.Unlock()
	if err != nil {
		b.src.pool.release(w)
		return informer.Loan{}, fmt.Errorf("adding indexers to the %s informer: %w", res.Name(), err)
	}
	b.src.mu.Lock()
	// What the next question of the signature is to prefetch: the informer
	// lent, which may cover the mode asked for.
	b.src.borrowed[w.key] = true
	b.src.mu.Unlock()
	l := &loan{w: w, key: key, sink: sink, teed: teed, check: c, indexers: maps.Clone(indexers), warnedUpTo: w.warningsBefore()}
	if l.indexers == nil {
		l.indexers = cache.Indexers{}
	}
	l.inf = &borrowedInformer{SharedIndexInformer: w.inf, b: b, l: l}
	if b.listener != nil {
		w.listen(b.listener)
	}
	b.loans = append(b.loans, l)
	b.byKey[key] = l
	// The factory's waits, failures and progress line follow the warm
	// informer, which its own factory runs.
	return informer.Loan{Informer: l.inf, Runner: w.factory, Mode: w.key.mode}, nil
}

// Authorize starts the asker's check of what an informer the factory runs
// itself (a feed's) holds, and returns its wait (Lender.Authorize).
func (b *borrower) Authorize(res informer.Resource, namespace, labelSelector, fieldSelector string) func(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c := b.startCheckLocked(res, namespace, labelSelector, fieldSelector); c != nil {
		return c.wait
	}
	return nil
}

// Settle shows every borrowed store that synced current as of the question's
// freshness, then hands streamed lists their objects and registers the event
// handlers the question added meanwhile (Lender.Settle). WaitForSync calls it
// once every informer has synced or failed, within its timeout.
//
// Before any of that reaches the question, the asker's check of each loan
// (Asker) must have passed; it runs beside the freshness proof. A loan the
// asker may not read fails the question with the API server's answer, as a
// direct run's LIST would, or with partial (WaitForSyncPartial) is returned
// among the skipped and reads as an empty informer. --max-staleness skips the
// proof, never the check.
func (b *borrower) Settle(ctx context.Context, partial bool) ([]informer.Skipped, error) {
	b.mu.Lock()
	var todo []*loan
	for _, l := range b.loans {
		if !l.settled && l.denied == nil && l.w.failed() == nil {
			todo = append(todo, l)
		}
	}
	b.mu.Unlock()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(settleParallelism)
	var mu sync.Mutex
	var denied []*loan
	for _, l := range todo {
		g.Go(func() error {
			pctx, cancel := context.WithCancel(gctx)
			defer cancel()
			type proof struct {
				c   confirmation
				err error
			}
			proved := make(chan proof, 1)
			go func() {
				c, err := b.prove(pctx, l)
				proved <- proof{c, err}
			}()
			if l.check != nil {
				if err := l.check.wait(gctx); err != nil {
					cancel()
					<-proved
					if gctx.Err() != nil {
						// The question ended, or another loan failed it.
						if ctx.Err() != nil {
							return b.stale(ctx, l, ctx.Err())
						}
						return gctx.Err()
					}
					mu.Lock()
					denied = append(denied, l)
					mu.Unlock()
					b.mu.Lock()
					l.denied = err
					b.mu.Unlock()
					if partial {
						return nil
					}
					return err
				}
			}
			p := <-proved
			if p.err != nil {
				return p.err
			}
			b.mu.Lock()
			l.asOf = p.c
			b.mu.Unlock()
			b.src.record(l.w, p.c)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var skipped []informer.Skipped
	for _, l := range b.loans {
		if l.denied == nil || !slices.Contains(denied, l) {
			continue
		}
		if l.teed != nil {
			l.teed.Stop()
		}
		b.mu.Lock()
		// Nothing of it is read: the question sees an informer that holds
		// nothing, and its event handlers are never registered.
		l.inf.SharedIndexInformer = deniedInformer(l.w.res, l.indexers)
		l.settled = true
		b.mu.Unlock()
		skipped = append(skipped, informer.Skipped{Resource: l.w.res, Mode: l.key.mode, Err: l.denied})
	}
	for _, l := range todo {
		if l.denied != nil {
			continue
		}
		switch {
		case l.teed != nil:
			// The sink has had the first list, which the store holds: later
			// lists are the store's alone. A sink that stopped part way
			// fails the question, as it fails a direct run's list.
			l.teed.Stop()
			if err := l.teed.Err(); err != nil {
				return nil, fmt.Errorf("listing %s: %w", l.w.res.Name(), err)
			}
		case l.sink != nil:
			if err := toSinkWhole(ctx, l); err != nil {
				return nil, err
			}
		}
		b.tellWarnings(l)
		b.mu.Lock()
		l.settled = true
		regs := slices.Clone(l.regs)
		b.mu.Unlock()
		for _, r := range regs {
			if err := r.register(l.inf.SharedIndexInformer); err != nil {
				return nil, fmt.Errorf("watching %s: %w", l.w.res.Name(), err)
			}
		}
	}
	return skipped, nil
}

// prove shows l's store current as of the question's freshness, or lists
// its objects afresh for the question when it cannot be (errNeedsList).
func (b *borrower) prove(ctx context.Context, l *loan) (confirmation, error) {
	c, err := l.w.fresh(ctx, b.src.fresh)
	var needsList *errNeedsList
	if errors.As(err, &needsList) {
		if needsList.always {
			// Whatever the mode, its objects' stores cannot be shown
			// current.
			b.src.pool.markUnprovable([]poolKey{l.key, l.w.key}, needsList.why)
		}
		c, err = b.relist(ctx, l)
	}
	if err != nil {
		return confirmation{}, b.stale(ctx, l, err)
	}
	return c, nil
}

// stale words why l's store could not be shown current.
func (b *borrower) stale(ctx context.Context, l *loan, err error) error {
	if ctx.Err() == nil {
		return fmt.Errorf("checking that the cache of %s is current: %w", l.w.res.Name(), err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && b.cfg.SyncTimeout > 0 {
		return fmt.Errorf("%w after %s: %s (raise --sync-timeout to wait longer)", informer.ErrSyncTimeout, b.cfg.SyncTimeout, l.w.lag())
	}
	return fmt.Errorf("waiting for %s: %w", l.w.lag(), ctx.Err())
}

// relist lists l's objects afresh for this question alone, when the warm
// store cannot be shown current (errNeedsList): a list asked for now holds
// every write acknowledged before. The question reads it in place of the
// warm store from then on; Shutdown stops it.
func (b *borrower) relist(ctx context.Context, l *loan) (confirmation, error) {
	p := b.src.pool
	at := p.now()
	pf := informer.NewFactoryWithClients(p.clients, informer.Config{
		Namespace: l.key.namespace, LabelSelector: l.key.labelSelector, FieldSelector: l.key.fieldSelector,
		KeepManagedFields: l.key.keepManagedFields, SyncTimeout: b.cfg.SyncTimeout, OnWarning: b.cfg.OnWarning,
	})
	b.mu.Lock()
	indexers := maps.Clone(l.indexers)
	b.mu.Unlock()
	inf, err := pf.Informer(l.w.res, l.key.mode, indexers)
	if err != nil {
		return confirmation{}, err
	}
	pf.Start(reflectorLogContext(p.ctx))
	if err := pf.WaitForSync(ctx); err != nil {
		pf.Shutdown()
		return confirmation{}, err
	}
	rv := inf.GetIndexer().LastStoreSyncResourceVersion()
	n, _ := strconv.ParseUint(rv, 10, 64)
	b.mu.Lock()
	l.private = pf
	// Nothing reads the informer before WaitForSync returns.
	l.inf.SharedIndexInformer = inf
	b.mu.Unlock()
	return confirmation{rv: n, rvText: rv, at: at}, nil
}

// tellWarnings tells the question what its warm informer warned of while
// the question waited for it (a watch-list the server did not end, listed in
// pages instead), as a direct run's factory tells it of its own lists.
func (b *borrower) tellWarnings(l *loan) {
	ws := l.w.warningsSince(l.warnedUpTo)
	l.warnedUpTo += len(ws)
	if b.cfg.OnWarning == nil {
		return
	}
	for _, msg := range ws {
		b.cfg.OnWarning(l.w.res, msg)
	}
}

// toSinkWhole hands a streamed list's sink the whole store, in List's order,
// as one page: a warm store has no pages to stream.
func toSinkWhole(ctx context.Context, l *loan) error {
	items := l.inf.GetStore().List()
	objs := make([]runtime.Object, 0, len(items))
	for _, it := range items {
		if o, ok := it.(runtime.Object); ok {
			objs = append(objs, o)
		}
	}
	keys := make(map[runtime.Object][2]string, len(objs))
	for _, o := range objs {
		if a, err := meta.Accessor(o); err == nil {
			keys[o] = [2]string{a.GetNamespace(), a.GetName()}
		}
	}
	slices.SortFunc(objs, func(a, b runtime.Object) int {
		ka, kb := keys[a], keys[b]
		if c := strings.Compare(ka[0], kb[0]); c != 0 {
			return c
		}
		return strings.Compare(ka[1], kb[1])
	})
	return l.sink.Page(ctx, objs, true, l.asOf.rvText)
}

// Release hands every borrowed informer back, running, after removing the
// question's event handlers and stopping its private lists, then ends the
// asker's checks (Lender.Release).
func (b *borrower) Release() {
	b.mu.Lock()
	if b.released {
		b.mu.Unlock()
		return
	}
	b.released = true
	loans, checkCancel := b.loans, b.checkCancel
	b.mu.Unlock()
	for _, l := range loans {
		if l.teed != nil {
			// A question that ended before its first list did.
			l.teed.Stop()
		}
		for _, r := range l.regs {
			r.remove()
		}
		if b.listener != nil {
			l.w.unlisten(b.listener)
		}
		if l.private != nil {
			l.private.Shutdown()
		}
		b.src.pool.release(l.w)
	}
	if checkCancel != nil {
		checkCancel()
	}
}

// borrowedInformer is a warm informer as a question sees it: its event
// handlers are registered once its store is shown current, so that a feed's
// first state is the server's at the question's start, and removed when the
// question hands it back. A question cannot run, stop or reconfigure it.
type borrowedInformer struct {
	cache.SharedIndexInformer
	b *borrower
	l *loan
}

// GetStore is GetIndexer: the question's view of the store.
func (i *borrowedInformer) GetStore() cache.Store { return i.GetIndexer() }

// GetIndexer is the store as the question may read it: with the objects a
// comparison showed to be phantoms hidden until the store has applied the
// comparison's resourceVersion (confirmation.hideAbove).
func (i *borrowedInformer) GetIndexer() cache.Indexer {
	idx := i.SharedIndexInformer.GetIndexer()
	i.b.mu.Lock()
	c := i.l.asOf
	i.b.mu.Unlock()
	if c.hideUpTo == 0 {
		return idx
	}
	if applied, err := strconv.ParseUint(idx.LastStoreSyncResourceVersion(), 10, 64); err == nil && applied >= c.hideUpTo {
		return idx
	}
	return phantomFilter{Indexer: idx, above: c.hideAbove, upTo: c.hideUpTo}
}

// phantomFilter is a store without the objects it holds at a resourceVersion
// in (above, upTo]: after a comparison showed the store the server's state
// at upTo while it had applied above, those can only be objects created and
// deleted again in that stretch, whose changes are still on their way to it
// (fresh.go, step 2).
type phantomFilter struct {
	cache.Indexer
	above, upTo uint64
}

func (f phantomFilter) phantom(obj any) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	return err == nil && rv > f.above && rv <= f.upTo
}

func (f phantomFilter) keep(objs []any) []any {
	out := objs[:0:0]
	for _, o := range objs {
		if !f.phantom(o) {
			out = append(out, o)
		}
	}
	return out
}

func (f phantomFilter) List() []any { return f.keep(f.Indexer.List()) }

func (f phantomFilter) ListKeys() []string {
	var keys []string
	for _, o := range f.List() {
		if k, err := cache.MetaNamespaceKeyFunc(o); err == nil {
			keys = append(keys, k)
		}
	}
	return keys
}

func (f phantomFilter) Get(obj any) (any, bool, error) {
	o, ok, err := f.Indexer.Get(obj)
	if err != nil || !ok || f.phantom(o) {
		return nil, false, err
	}
	return o, true, nil
}

func (f phantomFilter) GetByKey(key string) (any, bool, error) {
	o, ok, err := f.Indexer.GetByKey(key)
	if err != nil || !ok || f.phantom(o) {
		return nil, false, err
	}
	return o, true, nil
}

func (f phantomFilter) Index(indexName string, obj any) ([]any, error) {
	objs, err := f.Indexer.Index(indexName, obj)
	return f.keep(objs), err
}

func (f phantomFilter) ByIndex(indexName, indexedValue string) ([]any, error) {
	objs, err := f.Indexer.ByIndex(indexName, indexedValue)
	return f.keep(objs), err
}

func (f phantomFilter) IndexKeys(indexName, indexedValue string) ([]string, error) {
	keys, err := f.Indexer.IndexKeys(indexName, indexedValue)
	if err != nil {
		return nil, err
	}
	out := keys[:0:0]
	for _, k := range keys {
		if _, ok, _ := f.GetByKey(k); ok {
			out = append(out, k)
		}
	}
	return out, nil
}

func (i *borrowedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.add(h, cache.HandlerOptions{})
}

func (i *borrowedInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, resync time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.add(h, cache.HandlerOptions{ResyncPeriod: &resync})
}

func (i *borrowedInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.add(h, opts)
}

func (i *borrowedInformer) add(h cache.ResourceEventHandler, opts cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	r := &borrowedRegistration{handler: h, opts: opts, synced: make(chan struct{}), gone: make(chan struct{})}
	i.b.mu.Lock()
	settled := i.l.settled
	i.l.regs = append(i.l.regs, r)
	i.b.mu.Unlock()
	if settled {
		if err := r.register(i.SharedIndexInformer); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (i *borrowedInformer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	if r, ok := handle.(*borrowedRegistration); ok {
		r.remove()
		return nil
	}
	return i.SharedIndexInformer.RemoveEventHandler(handle)
}

// errWarm refuses what a question may not do to a warm informer.
var errWarm = errors.New("a warm informer of the cache is shared: it cannot be reconfigured")

func (i *borrowedInformer) Run(<-chan struct{})                                {}
func (i *borrowedInformer) RunWithContext(context.Context)                     {}
func (i *borrowedInformer) SetTransform(cache.TransformFunc) error             { return errWarm }
func (i *borrowedInformer) SetWatchErrorHandler(cache.WatchErrorHandler) error { return errWarm }
func (i *borrowedInformer) SetWatchErrorHandlerWithContext(cache.WatchErrorHandlerWithContext) error {
	return errWarm
}

// borrowedRegistration is an event handler on a borrowed informer, registered
// on the warm informer once its store is current.
type borrowedRegistration struct {
	handler cache.ResourceEventHandler
	opts    cache.HandlerOptions

	mu      sync.Mutex
	inf     cache.SharedIndexInformer
	real    cache.ResourceEventHandlerRegistration
	removed bool
	synced  chan struct{}
	gone    chan struct{}
}

// register adds the handler to inf; once registered it stays so.
func (r *borrowedRegistration) register(inf cache.SharedIndexInformer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.real != nil || r.removed {
		return nil
	}
	real, err := inf.AddEventHandlerWithOptions(r.handler, r.opts)
	if err != nil {
		return err
	}
	r.inf, r.real = inf, real
	go func() {
		select {
		case <-real.HasSyncedChecker().Done():
			close(r.synced)
		case <-r.gone:
		}
	}()
	return nil
}

// remove takes the handler off its informer, if it was registered.
func (r *borrowedRegistration) remove() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.removed {
		return
	}
	r.removed = true
	close(r.gone)
	if r.real != nil {
		_ = r.inf.RemoveEventHandler(r.real)
	}
}

// HasSynced reports whether the handler has been handed the store's objects.
func (r *borrowedRegistration) HasSynced() bool {
	r.mu.Lock()
	real := r.real
	r.mu.Unlock()
	return real != nil && real.HasSynced()
}

// HasSyncedChecker is HasSynced as a channel.
func (r *borrowedRegistration) HasSyncedChecker() cache.DoneChecker { return registrationChecker{r} }

type registrationChecker struct{ r *borrowedRegistration }

func (c registrationChecker) Name() string          { return "event handler of a warm informer" }
func (c registrationChecker) Done() <-chan struct{} { return c.r.synced }
