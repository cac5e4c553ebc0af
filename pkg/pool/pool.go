package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// DefaultDropAfter is how long a Pool keeps an informer no question has used:
// long enough for an investigation's next question, short enough that a type
// asked about once does not stay in memory, and watched, for the rest of the
// cache server's life.
const DefaultDropAfter = 5 * time.Minute

// defaultPoolLists bounds the first LISTs of a pool's informers in flight, as
// a question over every type bounds its own (query's relationMaxLists).
const defaultPoolLists = 16

// Options configure a Pool.
type Options struct {
	// DropAfter is how long an informer no question uses stays warm;
	// DefaultDropAfter when zero.
	DropAfter time.Duration
	// MaxConcurrentLists bounds the first LISTs of the pool's informers in
	// flight; 16 when zero.
	MaxConcurrentLists int
}

// Pool keeps informers warm across questions, for the cache server: the
// second informer.Source, beside informer.OneShot. An informer is keyed by
// what decides what it holds: the resource, the informer.Mode, the namespace
// (none for a cluster-scoped type), the label and field selectors, and
// whether managedFields are kept (the transform). A question borrows the
// informers it asks for through an informer.Factory from Source: the first
// question to ask for a key starts its informer, later ones share it, and a
// question's Shutdown hands it back without stopping it. An informer no
// question has held for DropAfter is stopped and forgotten, and so is one
// whose list failed for good, so that the next question tries again.
//
// The pool holds one copy of a type's objects between modes: a question is
// lent a synced informer of its key in a mode that covers the one it asks
// for (informer.Mode.Covers: a Full one for a metadata-only question), and
// an informer nobody holds that such a one covers is stopped and forgotten.
//
// Before a question reads a borrowed store, its factory's WaitForSync makes
// sure the store holds every write the API server acknowledged before the
// question started (see fresh.go): one LIST of at most one object for the
// server's current resourceVersion R (then, for a small store that has not
// applied R, a LIST of its objects, which may show it current at once), then
// proof, from the informer's own resourceVersion and a short watch of the
// same objects, that the store has applied every change up to R. A store
// whose watch is down cannot show it, and the question waits for the
// informer to resync or fails when its sync timeout expires, naming the
// type. Meanwhile the question's asker is asked whether they may read it
// (Asker).
//
// A Pool is safe for concurrent use: questions borrow, wait for and read the
// same informers at once.
type Pool struct {
	clients informer.Clients
	probe   prober
	// compareUpTo is the size up to which a store is shown current by
	// comparing it with a LIST of its objects (fresh.go); 0 never does.
	compareUpTo int
	// raceUpTo is the size up to which a bigger store is compared with a
	// LIST of its objects at the same time as its probe watches, the first
	// to prove it current winning (fresh.go); 0 never does.
	raceUpTo int
	// bookmarkDue is how long a probe's watch waits for its bookmark
	// (defaultBookmarkDue).
	bookmarkDue time.Duration
	dropAfter   time.Duration
	// lists bounds the first LISTs of the pool's informers, each in a
	// factory of its own.
	lists *informer.ListLimit
	// sharer makes the objects of every informer of the pool share their
	// equal parts (informer.Sharer): those of the pods of one template,
	// of one namespace, across types and modes.
	sharer *informer.Sharer
	now    func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	warm    map[poolKey]*warm
	closed  bool
	dropped int
	// unprovable are the keys whose stores cannot be shown current by a
	// probe (errNeedsList.always), and why: their questions get informers
	// of their own, started for them.
	unprovable map[poolKey]string
	// recent are the keys the last question of each signature borrowed
	// (Source.Done), at most maxSignatures of them.
	recent map[string][]poolKey
}

// maxSignatures bounds the questions whose informers a pool remembers.
const maxSignatures = 64

// prefetchTimeout bounds a freshness proof started ahead of a question.
const prefetchTimeout = time.Minute

// poolKey identifies a warm informer: everything that decides which objects
// it holds and what is kept of each.
type poolKey struct {
	gvr                          schema.GroupVersionResource
	mode                         informer.Mode
	namespace                    string
	labelSelector, fieldSelector string
	keepManagedFields            bool
}

// errAtomicFIFO explains why a pool cannot start without client-go's
// AtomicFIFO: its stores do not say which resourceVersion they have applied,
// which is what tells a warm store current from a stale one.
var errAtomicFIFO = errors.New("the warm cache needs client-go's AtomicFIFO feature, which KUBE_FEATURE_AtomicFIFO turns off: its stores say which resourceVersion they have applied")

// New returns a Pool whose informers list and watch with the clients
// informer.NewFactory builds from restConfig, shared by every informer.
// Close stops it.
func New(restConfig *rest.Config, opts Options) (*Pool, error) {
	f, err := informer.NewFactory(restConfig, informer.Config{})
	if err != nil {
		return nil, err
	}
	keys, err := newKeysClient(restConfig)
	if err != nil {
		return nil, err
	}
	return newPool(f.Clients(), metadataProber{client: f.Clients().Metadata, keys: keys}, opts)
}

// NewWithClients returns a Pool over the given clients, which need a
// Metadata client for its freshness probes; tests pass fakes.
func NewWithClients(clients informer.Clients, opts Options) (*Pool, error) {
	return newPool(clients, nil, opts)
}

func newPool(clients informer.Clients, probe prober, opts Options) (*Pool, error) {
	if !clientgofeatures.FeatureGates().Enabled(clientgofeatures.AtomicFIFO) {
		return nil, errAtomicFIFO
	}
	if probe == nil {
		if clients.Metadata == nil {
			return nil, errors.New("a pool needs a metadata client for its freshness probes")
		}
		probe = metadataProber{client: clients.Metadata}
	}
	if opts.DropAfter <= 0 {
		opts.DropAfter = DefaultDropAfter
	}
	if opts.MaxConcurrentLists <= 0 {
		opts.MaxConcurrentLists = defaultPoolLists
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Pool{
		clients:     clients,
		probe:       probe,
		compareUpTo: defaultCompareUpTo,
		raceUpTo:    defaultRaceUpTo,
		bookmarkDue: defaultBookmarkDue,
		dropAfter:   opts.DropAfter,
		lists:       informer.NewListLimit(opts.MaxConcurrentLists),
		sharer:      informer.NewSharer(),
		now:         time.Now,
		ctx:         ctx,
		cancel:      cancel,
		warm:        map[poolKey]*warm{},
		unprovable:  map[poolKey]string{},
		recent:      map[string][]poolKey{},
	}
	p.wg.Add(1)
	go p.janitor()
	return p, nil
}

// Close stops every informer of the pool and waits for them. Questions still
// holding stores can read them; they no longer change.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	all := make([]*warm, 0, len(p.warm))
	for _, w := range p.warm {
		all = append(all, w)
	}
	p.warm = map[poolKey]*warm{}
	p.mu.Unlock()
	p.cancel()
	for _, w := range all {
		w.factory.Shutdown()
	}
	p.wg.Wait()
}

// warm is one informer of the pool.
type warm struct {
	pool *Pool
	key  poolKey
	res  informer.Resource
	// factory runs inf, and nothing else.
	factory *informer.Factory
	inf     cache.SharedIndexInformer
	// tee, when set, hands its first list to the question that started it.
	tee *informer.Tee
	// started is when its informer started: its first list was asked for
	// after, so the store it synced holds every write acknowledged before.
	started time.Time
	// cold marks an informer started for one question, not kept warm.
	cold bool

	// indexMu serializes the questions adding indexers to it, which look
	// for the ones it has first.
	indexMu sync.Mutex

	// refs counts the questions holding it and lastUsed is when the last
	// one let go or took it; both under pool.mu.
	refs     int
	lastUsed time.Time

	mu sync.Mutex
	// confirmed is the latest freshness proof (fresh.go).
	confirmed confirmation
	// round is the proof under way, if any.
	round *round
	// down is the outage of its watch, if it is down for more than a
	// second (OnWatchLost).
	down *outage
	// listeners are the questions that hear of its outages.
	listeners map[*outageListener]bool
	// target is the resourceVersion the latest round waits for, and
	// probeErr the last transient failure of a probe: what a timeout says.
	target   string
	probeErr error
	// warnings are what its lists warned of (informer.Config.OnWarning),
	// the last maxWarnings of them, and warned counts them all: a question
	// that waited for a list is told what it warned of.
	warnings []string
	warned   int
}

// maxWarnings bounds the warnings a warm informer keeps for the questions
// that wait for it.
const maxWarnings = 8

// warn keeps a warning of w's lists for the questions waiting for them.
func (w *warm) warn(_ informer.Resource, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.warned++
	w.warnings = append(w.warnings, msg)
	if len(w.warnings) > maxWarnings {
		w.warnings = slices.Delete(w.warnings, 0, len(w.warnings)-maxWarnings)
	}
}

// warningsBefore is where a question that borrows w now starts hearing its
// warnings: from the first when its first list is still under way (the
// question waits for it), from the next otherwise.
func (w *warm) warningsBefore() int {
	if w.inf != nil && w.inf.HasSynced() {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.warned
	}
	return 0
}

// warningsSince returns the warnings of w after the first n, of those kept.
func (w *warm) warningsSince(n int) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.warned - len(w.warnings)
	return slices.Clone(w.warnings[max(n, kept)-kept:])
}

// outage is a watch that is down.
type outage struct {
	since time.Time
	cause error
}

// outageListener is a question's OnWatchLost and OnWatchRestored, for the
// informers it borrows.
type outageListener struct {
	lost     func(informer.Resource, error)
	restored func(informer.Reconnect)
}

// keyFor returns the key of res in mode under cfg.
func keyFor(cfg informer.Config, res informer.Resource, mode informer.Mode) poolKey {
	k := poolKey{gvr: res.GVR, mode: mode, labelSelector: cfg.LabelSelector, fieldSelector: cfg.FieldSelector, keepManagedFields: cfg.KeepManagedFields}
	if res.Namespaced {
		k.namespace = cfg.Namespace
	}
	return k
}

// errPoolClosed is what a question borrowing from a closed pool gets.
var errPoolClosed = errors.New("the warm cache is shutting down")

// acquire returns the warm informer of key, starting it if there is none or
// if the one there failed, and counts the caller among its holders. An
// informer started for the caller hands its first list to sink, when set, as
// it arrives: teed is then the tee it goes through.
func (p *Pool) acquire(key poolKey, res informer.Resource, sink informer.PageSink) (w *warm, teed *informer.Tee, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, errPoolClosed
	}
	if _, ok := p.unprovable[key]; ok || uncached(res) {
		// Started now, for this question alone: its first list is current.
		w, err := p.startLocked(key, res, sink)
		if err != nil {
			return nil, nil, err
		}
		w.cold = true
		w.refs = 1
		return w, w.tee, nil
	}
	if w := p.coveringLocked(key); w != nil {
		w.refs++
		w.lastUsed = p.now()
		return w, nil, nil
	}
	w = p.warm[key]
	if w != nil && w.failed() != nil {
		// Its list failed for good and it stopped: a new question tries
		// again, as a direct run would.
		delete(p.warm, key)
		w = nil
	}
	if w == nil {
		if w, err = p.startLocked(key, res, sink); err != nil {
			return nil, nil, err
		}
		p.warm[key] = w
		teed = w.tee
	}
	w.refs++
	w.lastUsed = p.now()
	return w, teed, nil
}

// wider are the modes whose informers may be lent for a question in a mode
// they cover (informer.Mode.Covers), widest first.
var wider = []informer.Mode{informer.Full, informer.Summary}

// coveringLocked returns the warm informer of key's objects in a wider mode
// that covers key's, synced, widest first; nil when there is none. A
// question lent it reads the one copy of those objects the pool already
// holds (a realistic pod without managedFields, decoded, is about 16 KB in
// Full mode, 6 KB in Summary mode and 2 KB as metadata). One still listing
// is not waited for: the question's own mode lists faster.
func (p *Pool) coveringLocked(key poolKey) *warm {
	for _, m := range wider {
		if m == key.mode || !m.Covers(key.mode) {
			continue
		}
		k := key
		k.mode = m
		if w := p.warm[k]; w != nil && w.failed() == nil && w.inf.HasSynced() {
			return w
		}
	}
	return nil
}

// retireCoveredLocked forgets the informers nobody holds whose objects a
// synced informer of the same key in a wider mode holds too, and returns
// them for the caller to stop once p.mu is released: coveringLocked lends
// the wider one in their place from now on, so they would only be dropped
// for being unused DropAfter later, their copy held meanwhile.
func (p *Pool) retireCoveredLocked() []*warm {
	var retired []*warm
	for k, w := range p.warm {
		if w.refs == 0 && p.coveringLocked(k) != nil {
			delete(p.warm, k)
			p.dropped++
			retired = append(retired, w)
		}
	}
	return retired
}

// startLocked starts the informer of key in a factory of its own, in the
// pool's context, sharing the pool's clients and its bound on LISTs; its first
// list goes to sink too, when set.
func (p *Pool) startLocked(key poolKey, res informer.Resource, sink informer.PageSink) (*warm, error) {
	w := &warm{pool: p, key: key, res: res, listeners: map[*outageListener]bool{}}
	f := informer.NewFactoryWithClients(p.clients, informer.Config{
		Namespace:         key.namespace,
		LabelSelector:     key.labelSelector,
		FieldSelector:     key.fieldSelector,
		KeepManagedFields: key.keepManagedFields,
		OnWatchLost:       w.lost,
		OnWatchRestored:   w.restored,
		OnWarning:         w.warn,
		ListLimit:         p.lists,
		Sharer:            p.sharer,
		// The freshness proof takes the version a store has applied as at
		// or past each of its objects' (phantomFilter), which a list read
		// namespace by namespace is not until its watch passes them.
		ByNamespace: informer.ByNamespaceNever,
	})
	// A store made without indexers cannot take any later (client-go's
	// storeIndex keeps a nil map): questions add theirs as they come.
	var err error
	if sink != nil {
		w.inf, w.tee, err = f.TeeInformer(res, key.mode, cache.Indexers{}, sink)
	} else {
		w.inf, err = f.Informer(res, key.mode, cache.Indexers{})
	}
	if err != nil {
		return nil, err
	}
	w.factory = f
	w.started = p.now()
	// The reflectors' own log lines are for -v=2, as a direct run's are: a
	// cache server writes no log anyway.
	f.Start(reflectorLogContext(p.ctx))
	return w, nil
}

// release counts a holder out. The last holder of an informer the pool no
// longer keeps (a cold one, or one dropped meanwhile) stops it.
func (p *Pool) release(w *warm) {
	p.mu.Lock()
	w.refs--
	w.lastUsed = p.now()
	stop := w.refs == 0 && p.warm[w.key] != w
	// The question may have synced a wider informer that covers others.
	retired := p.retireCoveredLocked()
	p.mu.Unlock()
	if stop {
		w.factory.Shutdown()
	}
	for _, r := range retired {
		r.factory.Shutdown()
	}
}

// remember records the keys a question of signature borrowed.
func (p *Pool) remember(signature string, keys []poolKey) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.recent[signature]; !ok && len(p.recent) >= maxSignatures {
		for k := range p.recent {
			delete(p.recent, k)
			break
		}
	}
	p.recent[signature] = keys
}

// prefetch starts showing current, for a question that wants fresh, the
// warm informers the last question of signature borrowed. The question
// joins those proofs when it gets to the informers.
func (p *Pool) prefetch(signature string, fresh Freshness) {
	p.mu.Lock()
	var ws []*warm
	for _, k := range p.recent[signature] {
		if w := p.warm[k]; w != nil && w.failed() == nil {
			w.refs++
			ws = append(ws, w)
		}
	}
	p.mu.Unlock()
	for _, w := range ws {
		go func() {
			defer p.release(w)
			ctx, cancel := context.WithTimeout(p.ctx, prefetchTimeout)
			defer cancel()
			if w.inf.HasSynced() {
				_, _ = w.fresh(ctx, fresh)
			}
		}()
	}
}

// markUnprovable records that the stores of keys cannot be shown current by
// a probe, and stops keeping their informers warm.
func (p *Pool) markUnprovable(keys []poolKey, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, key := range keys {
		p.unprovable[key] = why
		if w := p.warm[key]; w != nil {
			delete(p.warm, key)
			if w.refs == 0 {
				go w.factory.Shutdown()
			}
		}
	}
}

// uncached reports whether the API server does not cache res by default, so
// that a watch of it gets no bookmarks: Events (kube-apiserver's
// --watch-cache-sizes gives them none). Others are found out by their probes.
func uncached(res informer.Resource) bool {
	return res.GVR.Resource == "events" && (res.GVR.Group == "" || res.GVR.Group == "events.k8s.io")
}

// janitor drops the informers nobody has held for dropAfter, checking
// several times per period.
func (p *Pool) janitor() {
	defer p.wg.Done()
	t := time.NewTicker(max(p.dropAfter/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		p.dropIdle()
	}
}

// dropIdle stops and forgets the informers nobody has held for dropAfter,
// and those nobody holds that a wider one covers (retireCoveredLocked).
func (p *Pool) dropIdle() {
	now := p.now()
	p.mu.Lock()
	idle := p.retireCoveredLocked()
	for k, w := range p.warm {
		if w.refs == 0 && now.Sub(w.lastUsed) >= p.dropAfter {
			idle = append(idle, w)
			delete(p.warm, k)
			p.dropped++
		}
	}
	p.mu.Unlock()
	for _, w := range idle {
		w.factory.Shutdown()
	}
}

// lost and restored hear of the watch outages of w's informer (its factory's
// OnWatchLost and OnWatchRestored), keep them for status and freshness
// errors, and tell the questions that borrow it.
func (w *warm) lost(res informer.Resource, err error) {
	w.mu.Lock()
	w.down = &outage{since: w.pool.now().Add(-informer.LostReportDelay), cause: err}
	var tell []*outageListener
	for l := range w.listeners {
		w.listeners[l] = true
		tell = append(tell, l)
	}
	w.mu.Unlock()
	for _, l := range tell {
		if l.lost != nil {
			l.lost(res, err)
		}
	}
}

func (w *warm) restored(r informer.Reconnect) {
	w.mu.Lock()
	w.down = nil
	var tell []*outageListener
	for l, heard := range w.listeners {
		// A question hears that a watch is back only if it heard that it was
		// down: an outage from before it started is not its news.
		if heard {
			w.listeners[l] = false
			tell = append(tell, l)
		}
	}
	w.mu.Unlock()
	for _, l := range tell {
		if l.restored != nil {
			l.restored(r)
		}
	}
}

// failed returns why w's list failed for good, after which its informer
// stopped; nil while it has not.
func (w *warm) failed() error { return w.factory.ListFailed(w.res, w.key.mode) }

func (w *warm) listen(l *outageListener) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.listeners[l] = false
}

func (w *warm) unlisten(l *outageListener) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.listeners, l)
}

// WarmStatus is one informer of a Pool, as status reports it: counts, times
// and resourceVersions, never an object.
type WarmStatus struct {
	// Resource, Mode, Namespace, LabelSelector, FieldSelector and
	// KeepManagedFields are its key: what decides what it holds.
	Resource          informer.Resource
	Mode              informer.Mode
	Namespace         string
	LabelSelector     string
	FieldSelector     string
	KeepManagedFields bool
	// Objects is how many objects its store holds.
	Objects int
	// Since is when it started; LastUsed when a question last took or
	// handed it back; InUse how many questions hold it now.
	Since    time.Time
	LastUsed time.Time
	InUse    int
	// Synced says its first list is in.
	Synced bool
	// ResourceVersion is the resourceVersion its store has applied.
	ResourceVersion string
	// Confirmed is the latest resourceVersion it was shown current at, and
	// ConfirmedAt when that was the server's latest.
	Confirmed   string
	ConfirmedAt time.Time
	// WatchDownSince and WatchDown say since when, and why, its watch is
	// down, when it is.
	WatchDownSince time.Time
	WatchDown      string
	// Failed is why its list failed for good, when it did.
	Failed string
}

// Status is what a Pool holds.
type Status struct {
	// Informers are the pool's informers, sorted by resource, namespace
	// and mode.
	Informers []WarmStatus
	// Dropped counts the informers dropped for being unused, or for being
	// covered by an informer of the same objects in a wider mode.
	Dropped int
	// DropAfter is how long an unused informer is kept.
	DropAfter time.Duration
}

// Status reports the pool's informers, sorted by resource, namespace and
// mode.
func (p *Pool) Status() Status {
	p.mu.Lock()
	out := Status{Dropped: p.dropped, DropAfter: p.dropAfter}
	type held struct {
		w        *warm
		refs     int
		lastUsed time.Time
	}
	all := make([]held, 0, len(p.warm))
	for _, w := range p.warm {
		all = append(all, held{w, w.refs, w.lastUsed})
	}
	p.mu.Unlock()
	for _, h := range all {
		w := h.w
		s := WarmStatus{
			Resource: w.res, Mode: w.key.mode, Namespace: w.key.namespace,
			LabelSelector: w.key.labelSelector, FieldSelector: w.key.fieldSelector, KeepManagedFields: w.key.keepManagedFields,
			Objects: len(w.inf.GetStore().ListKeys()), Since: w.started, LastUsed: h.lastUsed, InUse: h.refs,
			Synced: w.inf.HasSynced(), ResourceVersion: w.inf.GetIndexer().LastStoreSyncResourceVersion(),
		}
		if err := w.failed(); err != nil {
			s.Failed = err.Error()
		}
		w.mu.Lock()
		if c := w.confirmed; !c.at.IsZero() {
			s.Confirmed, s.ConfirmedAt = c.rvText, c.at
		}
		if d := w.down; d != nil {
			s.WatchDownSince, s.WatchDown = d.since, d.cause.Error()
		}
		w.mu.Unlock()
		out.Informers = append(out.Informers, s)
	}
	sort.Slice(out.Informers, func(i, j int) bool {
		a, b := out.Informers[i], out.Informers[j]
		if a.Resource.Name() != b.Resource.Name() {
			return a.Resource.Name() < b.Resource.Name()
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Mode != b.Mode {
			return a.Mode < b.Mode
		}
		return fmt.Sprint(a.LabelSelector, a.FieldSelector) < fmt.Sprint(b.LabelSelector, b.FieldSelector)
	})
	return out
}
