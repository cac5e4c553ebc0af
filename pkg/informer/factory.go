package informer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/wire"
)

// Mode says how much of each object an informer fetches and keeps.
type Mode int

const (
	// Full keeps whole objects: typed structs decoded from protobuf for types
	// client-go knows, *unstructured.Unstructured for the rest (custom resources,
	// aggregated APIs).
	Full Mode = iota
	// MetadataOnly keeps *metav1.PartialObjectMetadata, the cheapest form: the
	// server sends only metadata, as protobuf.
	MetadataOnly
	// Rows keeps a *Row per object: the API server's table row of it, with its
	// metadata (includeObject=Metadata). Human output of a change feed reads
	// the server's cells from it.
	Rows
	// FullRows keeps a *Row per object with the whole object
	// (includeObject=Object), for a feed that also reports changes field by
	// field.
	FullRows
	// Summary keeps objects as Full does, pods stripped to what group
	// summaries read (index.KeepSummaryFields): grouped tables, whose cells
	// are the server's, need nothing else of them.
	Summary
)

// Covers reports whether an informer in mode m keeps everything a question
// in mode n reads of each object, so that its store can answer that question
// too: a Full store holds the metadata and the summary fields of every
// object, a Summary store the metadata of every object. A warm pool lends a
// held Full or Summary informer to a question that asks for less of the same
// objects, instead of keeping a second copy of every object in another mode.
// Rows and FullRows hold the server's cells, which no other mode has, and
// cover only themselves.
func (m Mode) Covers(n Mode) bool {
	switch {
	case m == n:
		return true
	case m == Full:
		return n == Summary || n == MetadataOnly
	case m == Summary:
		return n == MetadataOnly
	}
	return false
}

// String names the mode in messages ("the pods informer in metadata mode").
func (m Mode) String() string {
	switch m {
	case MetadataOnly:
		return "metadata"
	case Rows:
		return "rows"
	case FullRows:
		return "full rows"
	case Summary:
		return "summary"
	}
	return "full"
}

// Resource identifies one API resource to inform on. It is usually built from a
// meta.RESTMapping.
type Resource struct {
	// GVR is what requests name; GVK what the objects say they are.
	GVR schema.GroupVersionResource
	GVK schema.GroupVersionKind
	// Namespaced says the resource lives in namespaces: only then does
	// Config.Namespace narrow it.
	Namespaced bool
}

// FromMapping converts a REST mapping to a Resource.
func FromMapping(m *meta.RESTMapping) Resource {
	return Resource{GVR: m.Resource, GVK: m.GroupVersionKind, Namespaced: m.Scope.Name() == meta.RESTScopeNameNamespace}
}

// Name is the resource as kubectl names it in messages: "pods", "deployments.apps".
func (r Resource) Name() string {
	return r.GVR.GroupResource().String()
}

// Config is everything a Factory needs besides a REST config. The command layer
// builds it from flags.
type Config struct {
	// Namespace restricts namespaced resources; empty means all namespaces.
	Namespace string
	// LabelSelector and FieldSelector are sent to the server on every list and watch.
	LabelSelector string
	FieldSelector string
	// KeepManagedFields disables the transform that drops metadata.managedFields.
	KeepManagedFields bool
	// SyncTimeout bounds WaitForSync; zero means no bound beyond the context.
	SyncTimeout time.Duration
	// Progress, when non-nil, receives a one-line sync progress report that is
	// rewritten in place. Only set it for terminals.
	Progress io.Writer
	// ProgressDelay is how long a sync must take before progress is shown.
	ProgressDelay time.Duration
	// PageSize is the number of objects asked for per LIST page; zero means
	// DefaultPageSize.
	PageSize int64
	// UnpagedBudget is the largest list, in bytes of the API server's answer
	// as the REST client holds it (without its items' managedFields unless
	// KeepManagedFields), asked for in one unpaged LIST rather than in pages
	// (Factory.firstList); zero means UnpagedLimitEnv's or
	// DefaultUnpagedBudget, a negative one never.
	UnpagedBudget int64
	// WatchListStall is how long a watch-list may deliver nothing before its
	// initial events end, after which the type is listed in pages
	// (watchList); zero means DefaultWatchListStall (or never, when
	// WatchListEnv says off), a negative one never lists by watch-list.
	WatchListStall time.Duration
	// ByNamespace says when a list of every namespace too large for one
	// answer is read namespace by namespace (nsslice.go); "" means
	// ByNamespaceEnv's, or auto.
	ByNamespace ByNamespace
	// OnWarning, when non-nil, is told what an answer's user should know of
	// how a type was read (a watch-list given up on), worded for a warning
	// line.
	OnWarning func(res Resource, warning string)
	// MaxConcurrentLists bounds the LIST requests in flight across the
	// factory's informers; zero means no bound. Queries that start an informer
	// for every type on the server set it so dozens of types do not all hit the
	// server, or the client's rate limiter, at the same instant.
	MaxConcurrentLists int
	// ListLimit, when set, bounds the LIST requests in flight together with
	// every factory given the same one, in place of MaxConcurrentLists: a
	// warm pool runs each informer in a factory of its own, and bounds its
	// first lists across all of them.
	ListLimit *ListLimit
	// OnWatchLost, when non-nil, is called once per outage of a synced
	// informer's watch that lasts more than a second, with its first error.
	// OnWatchRestored, when non-nil, is called when such an informer is caught
	// up again after an outage of any length. Setting either observes every list
	// and watch request (one extra goroutine per watch); long-running commands
	// use them to say that a feed was interrupted. They are called from informer
	// goroutines and timers, so they must be safe for concurrent use.
	OnWatchLost     func(res Resource, err error)
	OnWatchRestored func(Reconnect)
	// Keep, when non-nil, is asked of every object a LIST page brings, once
	// the page is transformed: an object it refuses never reaches the store,
	// or the PageSink, so it costs no memory past its page (see keepItems).
	// Objects that watches deliver later are not asked; a question that reads
	// a store after its sync judges them itself. It is called from the
	// goroutines that fetch pages and must be safe for concurrent use.
	Keep func(res Resource, obj runtime.Object) bool
	// Sharer, when non-nil, makes the objects the factory's informers keep
	// share their equal parts with each other's and with those of every
	// factory given the same Sharer (see Sharer): a warm cache's informers
	// keep their objects for hours. Each object is shared once transformed
	// and before the reflector has it (a list's page, a watch-list's or a
	// watch's event); the stores' objects are read-only as ever, and a
	// direct run, which keeps its objects for one answer, leaves it nil.
	Sharer *Sharer
}

// Clients are the API clients a Factory lists and watches with. NewFactory builds
// them from a REST config; tests pass fakes to NewFactoryWithClients.
type Clients struct {
	// Typed returns a client for one built-in group version. It should speak
	// protobuf: for built-in types it decodes several times faster than JSON and
	// typed structs take a fraction of the memory of unstructured maps.
	Typed func(gv schema.GroupVersion) (rest.Interface, error)
	// TypedJSON returns a JSON-speaking client for one built-in group version. It
	// serves the few kinds whose protobuf form drops the apiVersion and kind of an
	// embedded object (a StatefulSet's volumeClaimTemplates), which -o json must
	// show as kubectl does. Nil means Typed serves those kinds too.
	TypedJSON func(gv schema.GroupVersion) (rest.Interface, error)
	// Dynamic serves full objects of types client-go does not know.
	Dynamic dynamic.Interface
	// Metadata serves *metav1.PartialObjectMetadata.
	Metadata metadata.Interface
	// MetadataLists, when set, is a REST client of Metadata's configuration
	// (metadata.ConfigFor) whose metadata LISTs are read as they arrive
	// (readMetadataList); nil leaves them to Metadata, which reads each
	// answer whole before it decodes it.
	MetadataLists rest.Interface
	// ServerMinor returns the server's minor version, asked only for kinds
	// whose client types have always-encoded fields some servers lack (see
	// newerFields); nil means the server is as new as the types.
	ServerMinor func() (int, error)
	// RequestTimeout is --request-timeout, which NewFactory's clients apply
	// as a progress deadline (wire.ProgressDeadline), for the words of a
	// list that kept failing (ListError); zero when there is none or the
	// clients are not NewFactory's. Factories that share the clients share
	// it.
	RequestTimeout time.Duration
}

// ListLimit bounds the LIST requests in flight across the factories that
// share it (Config.ListLimit).
type ListLimit struct{ slots chan struct{} }

// NewListLimit returns a ListLimit of n LIST requests at once; n must be
// positive.
func NewListLimit(n int) *ListLimit { return &ListLimit{slots: make(chan struct{}, n)} }

// DefaultPageSize is the LIST page size. client-go's reflector and kubectl ask
// for 500, but every page is a round trip the server answers with a fresh
// snapshot: on 10,000 realistic pods, 5,000 per page took a metadata-only
// owner query from 2.3 s to 0.9 s against 500 (most of it client-go's rate
// limiter, since lifted, see query.NewSession). A page is decoded whole, and
// the next one is decoded while it is taken (see wire.PageAhead), so its size is
// also the memory a list needs besides what it keeps: on 20,000 pods, pages of
// 2,000 took the table from 300 MB to 216 MB and --by-owner -o name from
// 315 MB to 212 MB against 5,000, in the same time. With pages asked for
// ahead, on 20,000 realistic pods (12 KB each) and a server writing a pod
// every 5 s, --by-owner -o name took 0.78 s with pages of 2,000, 0.84 s with
// 1,000 and 0.77 s with 5,000; one unpaged LIST took 1.21 s (decoding one
// 120 MB answer after it has all arrived) and client-go's streaming
// watch-list 1.21 s, against 0.62 s for the server's own unpaged
// metadata-only LIST. On a quiet server the later pages come from etcd and
// the order turns (see Factory.firstList): pages are what is left when the
// list is too large to hold whole and the server has no watch-list.
const DefaultPageSize = 2000

// Factory builds and owns the informers of one invocation.
type Factory struct {
	cfg     Config
	clients Clients

	// noWatchList holds the schema.GroupResources whose server refused or
	// stalled a watch-list: listed in pages since.
	noWatchList sync.Map
	mu          sync.Mutex
	informers   map[informerKey]*entry
	order       []*entry
	started     bool
	ctx         context.Context
	cancel      context.CancelFunc
	wg          sync.WaitGroup

	// listSlots bounds concurrent LISTs when Config.MaxConcurrentLists or
	// Config.ListLimit is set.
	listSlots chan struct{}
	// failed is signalled (without blocking) whenever an informer that has not
	// synced records its failure; WaitForSync then looks at every entry.
	failed chan struct{}
	// lender, when set, lends the factory informers in place of informers
	// of its own, and authorizes those it runs itself (Lender).
	lender Lender
	// betweenSyncLooks, when set, runs between waitForSync's looks at what
	// has not synced and at what failed: tests fail a list there.
	betweenSyncLooks func()
}

type informerKey struct {
	gvr  schema.GroupVersionResource
	mode Mode
}

type entry struct {
	res      Resource
	mode     Mode
	informer cache.SharedIndexInformer
	// received counts objects delivered by LIST pages, for progress reports.
	received atomic.Int64
	// bodyBytes counts the bytes of LIST answers as they arrive, pages not yet
	// complete included; only NewFactory's clients count them.
	bodyBytes atomic.Int64
	// listFailures counts consecutive failed lists before the first sync.
	listFailures atomic.Int32
	// conn follows outages when Config asks for OnWatchLost or OnWatchRestored.
	conn *connTracker
	// cancel stops this informer alone, once its list has failed for good.
	cancel context.CancelFunc
	// failure holds the error that made the list fail for good before the
	// first sync; the first one recorded wins.
	failure atomic.Pointer[error]
	// sink, when set, takes the list's pages in place of the store
	// (StreamInformer).
	sink PageSink
	// cursor, when set, follows the informer's position (FeedInformer).
	cursor *Cursor
	// tee, when set, is also handed the list's pages, which the store keeps
	// (TeeInformer): the first question of a warm informer prints them as
	// they arrive.
	tee atomic.Pointer[Tee]
	// authorized, when set, is what the informer waits for before it lists
	// (Lender.Authorize): it fails as its list would have when that fails.
	authorized func(context.Context) error
	// json is set when the objects are typed ones read as JSON
	// (Clients.TypedJSON), which a Sharer leaves as they are.
	json bool
}

// fail records err as e's failure unless one is recorded already.
func (e *entry) fail(err error) bool {
	return e.failure.CompareAndSwap(nil, &err)
}

// failed returns the recorded failure, or nil.
func (e *entry) failed() error {
	if p := e.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// NewFactory returns a Factory talking to the server described by restConfig.
//
// restConfig.Timeout (--request-timeout) bounds each request by its progress
// rather than overall, see wire.ProgressDeadline: the clients are built without an
// overall deadline, so no timeout= parameter goes to the server either (which
// then applies its own default to a LIST, 60s unless configured otherwise), and
// a LIST answer may take as long as it keeps arriving.
func NewFactory(restConfig *rest.Config, cfg Config) (*Factory, error) {
	restConfig = rest.CopyConfig(restConfig)
	timeout := restConfig.Timeout
	if timeout > 0 {
		restConfig.Timeout = 0
		restConfig.Wrap(wire.ProgressDeadline(timeout))
	} else {
		restConfig.Wrap(wire.CountReceived)
	}
	// Each LIST page's continue token is read from the first bytes of the
	// answer, so that the next page is asked for while this one arrives, and
	// managedFields are taken out of protobuf pages before they are decoded.
	restConfig.Wrap(wire.ListTransport)
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("creating dynamic client: %w", err)
	}
	md, err := metadata.NewForConfig(restConfig)
	if err != nil {
		return nil, fmt.Errorf("creating metadata client: %w", err)
	}
	mdCfg := metadata.ConfigFor(restConfig)
	// As metadata.NewForConfig's: requests name their paths whole.
	mdCfg.GroupVersion = &schema.GroupVersion{}
	mdCfg.APIPath = "/unused"
	mdLists, err := rest.RESTClientFor(mdCfg)
	if err != nil {
		return nil, fmt.Errorf("creating metadata client: %w", err)
	}
	return NewFactoryWithClients(Clients{
		Typed:          CachedClients(restConfig, runtime.ContentTypeProtobuf),
		TypedJSON:      CachedClients(restConfig, runtime.ContentTypeJSON),
		Dynamic:        dyn,
		Metadata:       md,
		MetadataLists:  mdLists,
		ServerMinor:    serverMinor(restConfig),
		RequestTimeout: timeout,
	}, cfg), nil
}

// serverJSON reports whether full objects of gk are read as the server's JSON
// instead of typed, because the server is older than a field the types always
// encode (newerFields). A server whose version cannot be read counts as older:
// its JSON is exact, only slower to decode.
func (f *Factory) serverJSON(gk schema.GroupKind) bool {
	if _, ok := newerFields[gk]; !ok || f.clients.ServerMinor == nil {
		return false
	}
	minor, err := f.clients.ServerMinor()
	if err != nil {
		minor = 0
	}
	return readsServerJSON(gk, minor)
}

// Clients returns the clients the factory lists and watches with.
func (f *Factory) Clients() Clients { return f.clients }

// CachedClients returns a constructor of typed REST clients for contentType that
// builds one client per group version.
func CachedClients(restConfig *rest.Config, contentType string) func(schema.GroupVersion) (rest.Interface, error) {
	var mu sync.Mutex
	clients := map[schema.GroupVersion]rest.Interface{}
	return func(gv schema.GroupVersion) (rest.Interface, error) {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := clients[gv]; ok {
			return c, nil
		}
		c, err := TypedClient(restConfig, gv, contentType)
		if err != nil {
			return nil, err
		}
		clients[gv] = c
		return c, nil
	}
}

// NewFactoryWithClients returns a Factory using the given clients.
func NewFactoryWithClients(clients Clients, cfg Config) *Factory {
	if cfg.PageSize <= 0 {
		cfg.PageSize = DefaultPageSize
	}
	// Commands have checked the environment as they started.
	tuning, _ := ListTuningFromEnv()
	if cfg.UnpagedBudget == 0 {
		cfg.UnpagedBudget = cmp.Or(tuning.Budget, DefaultUnpagedBudget)
	}
	if cfg.WatchListStall == 0 {
		cfg.WatchListStall = cmp.Or(tuning.Stall, DefaultWatchListStall)
	}
	if cfg.ByNamespace == "" {
		cfg.ByNamespace = tuning.ByNamespace
	}
	f := &Factory{
		cfg:       cfg,
		clients:   clients,
		informers: map[informerKey]*entry{},
		failed:    make(chan struct{}, 1),
	}
	switch {
	case cfg.ListLimit != nil:
		f.listSlots = cfg.ListLimit.slots
	case cfg.MaxConcurrentLists > 0:
		f.listSlots = make(chan struct{}, cfg.MaxConcurrentLists)
	}
	return f
}

// NewFactoryWithLender returns a Factory using the given clients whose
// informers lender lends, but a feed's (FeedInformer): see Lender.
func NewFactoryWithLender(clients Clients, cfg Config, lender Lender) *Factory {
	f := NewFactoryWithClients(clients, cfg)
	f.lender = lender
	return f
}

// Informer returns the shared informer for res in mode, creating it on first use.
// indexers are added to it; adding an index name twice with a different function
// is an error. An informer requested after Start starts at once.
func (f *Factory) Informer(res Resource, mode Mode, indexers cache.Indexers) (cache.SharedIndexInformer, error) {
	inf, _, err := f.informer(res, mode, indexers, nil, nil, nil)
	return inf, err
}

// TeeInformer returns a new informer for res in mode whose first list is
// also handed to sink page by page, as it arrives, while the store keeps it:
// a warm pool's first question prints the list its informer syncs with. The
// returned Tee stops the pages going to sink and tells why sink stopped
// taking them. res must not have another informer in mode.
func (f *Factory) TeeInformer(res Resource, mode Mode, indexers cache.Indexers, sink PageSink) (cache.SharedIndexInformer, *Tee, error) {
	return f.informer(res, mode, indexers, nil, sink, nil)
}

// informer is Informer, with the list going to sink when it is set, its
// first list also to tee when it is set, and followed by cursor when it is
// set: the informer is then never shared. The Tee is returned when tee is
// set.
func (f *Factory) informer(res Resource, mode Mode, indexers cache.Indexers, sink, tee PageSink, cursor *Cursor) (cache.SharedIndexInformer, *Tee, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lender != nil && cursor == nil {
		if tee != nil {
			return nil, nil, fmt.Errorf("the %s informer in %s mode is lent: its lender tees its list", res.Name(), mode)
		}
		inf, err := f.borrowLocked(res, mode, indexers, sink)
		return inf, nil, err
	}
	// A feed's informer (cursor) is its own even in a factory whose lender
	// is a warm pool: its positions and gaps are the feed's, which it may
	// resume from.
	key := informerKey{gvr: res.GVR, mode: mode}
	if e, ok := f.informers[key]; ok {
		if sink != nil || e.sink != nil || tee != nil || cursor != nil || e.cursor != nil {
			return nil, nil, fmt.Errorf("the %s informer in %s mode streams its list and cannot be shared", res.Name(), mode)
		}
		if err := AddMissingIndexers(e.informer, indexers); err != nil {
			return nil, nil, fmt.Errorf("adding indexers to the %s informer: %w", res.Name(), err)
		}
		return e.informer, nil, nil
	}
	e := &entry{res: res, mode: mode, sink: sink, cursor: cursor}
	var t *Tee
	if tee != nil {
		t = &Tee{e: e, sink: tee}
		e.tee.Store(t)
	}
	ns := ""
	if res.Namespaced {
		ns = f.cfg.Namespace
	}
	if f.lender != nil {
		// Nothing of a type the lender's asker may not read is listed for
		// them, by an informer of the factory's own either.
		e.authorized = f.lender.Authorize(res, ns, f.cfg.LabelSelector, f.cfg.FieldSelector)
	}
	if f.cfg.OnWatchLost != nil || f.cfg.OnWatchRestored != nil {
		e.conn = newConnTracker(res, f.cfg.OnWatchLost, f.cfg.OnWatchRestored)
	}
	lw, example, err := f.listWatch(e)
	if err != nil {
		return nil, nil, err
	}
	transform := f.transform(mode)
	if cursor != nil {
		lw, transform = cursor.listWatch(lw), cursor.transform(transform)
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, example, cache.SharedIndexInformerOptions{
		Indexers:          indexers,
		ObjectDescription: res.Name(),
	})
	if transform != nil {
		if err := inf.SetTransform(transform); err != nil {
			return nil, nil, fmt.Errorf("setting transform on the %s informer: %w", res.Name(), err)
		}
	}
	if err := inf.SetWatchErrorHandlerWithContext(f.watchErrorHandler(e)); err != nil {
		return nil, nil, fmt.Errorf("setting error handler on the %s informer: %w", res.Name(), err)
	}
	e.informer = inf
	if cursor != nil {
		cursor.setStore(inf.GetStore())
	}
	f.informers[key] = e
	f.order = append(f.order, e)
	if f.started {
		// Queries that discover what to watch as they go (owner kinds found in
		// ownerReferences) add informers after Start; run them at once and let
		// the next WaitForSync wait for them.
		f.run(f.ctx, e)
	}
	return inf, t, nil
}

// AddMissingIndexers adds to inf those of indexers it lacks; an index name
// it has with a different function is an error. Informers shared by several
// questions (a Factory's, a warm pool's) get the indexers each question asks
// for this way.
func AddMissingIndexers(inf cache.SharedIndexInformer, indexers cache.Indexers) error {
	existing := inf.GetIndexer().GetIndexers()
	missing := cache.Indexers{}
	for name, fn := range indexers {
		old, ok := existing[name]
		if !ok {
			missing[name] = fn
			continue
		}
		// Closures built by the same constructor share code; a different
		// function under a taken name would silently answer the wrong query.
		if reflect.ValueOf(old).Pointer() != reflect.ValueOf(fn).Pointer() {
			return fmt.Errorf("index %q is already registered with a different function", name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return inf.AddIndexers(missing)
}

// transform is what an informer in mode drops of each object before it is
// kept, nil for nothing. managedFields is often a third of an object's
// metadata (nine tenths of a realistic pod's) and no output needs it unless
// --show-managed-fields; dropping it before the object enters the store is the
// single biggest memory saving we have. The LIST pages NewFactory's clients
// read in protobuf lose it before they are decoded (wire.ListTransport); the
// transform covers JSON pages, watch events and other clients.
func (f *Factory) transform(mode Mode) cache.TransformFunc {
	switch {
	case mode == Summary:
		return func(obj any) (any, error) {
			if !f.cfg.KeepManagedFields {
				obj, _ = DropManagedFields(obj)
			}
			return index.KeepSummaryFields(obj)
		}
	case !f.cfg.KeepManagedFields:
		return DropManagedFields
	}
	return nil
}

// sharer is the Sharer of e's objects: Config.Sharer, but for the
// server's rows, which share nothing, a list that goes to a sink in place
// of the store, and objects decoded from JSON (Clients.TypedJSON's), whose
// empty and missing lists the protobuf encodings Sharer compares do not tell
// apart.
func (f *Factory) sharer(e *entry) *Sharer {
	if e.mode == Rows || e.mode == FullRows || e.sink != nil || e.json {
		return nil
	}
	return f.cfg.Sharer
}

// DropManagedFields is the informer transform that clears metadata.managedFields.
// Transforms run on freshly decoded objects before they reach the store, so
// mutating them here is allowed.
func DropManagedFields(obj any) (any, error) {
	inner := obj
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		inner = d.Obj
	}
	if a, err := meta.Accessor(inner); err == nil {
		a.SetManagedFields(nil)
	}
	return obj, nil
}

// listWatch returns a ListerWatcher for e and an example object of the type it yields.
func (f *Factory) listWatch(e *entry) (cache.ListerWatcher, runtime.Object, error) {
	ns := ""
	if e.res.Namespaced {
		ns = f.cfg.Namespace
	}
	var list func(context.Context, metav1.ListOptions) (runtime.Object, error)
	// listIn lists one namespace of a namespaced type the factory lists in
	// every namespace: a list sliced by namespace (slices.go); nil for tables.
	var listIn func(context.Context, string, metav1.ListOptions) (runtime.Object, error)
	var watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)
	var example runtime.Object

	switch {
	case e.mode == Rows || e.mode == FullRows:
		client, err := f.clients.Typed(e.res.GVK.GroupVersion())
		if err != nil {
			return nil, nil, err
		}
		rows := &rowsListWatch{full: e.mode == FullRows}
		res := e.res
		rows.list = func(ctx context.Context, o metav1.ListOptions) ([]byte, error) {
			return TableRequest(client, res, ns, o, rows.includeObject()).DoRaw(ctx)
		}
		rows.watch = func(ctx context.Context, o metav1.ListOptions) (io.ReadCloser, error) {
			return TableRequest(client, res, ns, o, rows.includeObject()).Stream(ctx)
		}
		list, watchFn, example = rows.List, rows.Watch, &Row{}
	case e.mode == MetadataOnly:
		r := f.clients.Metadata.Resource(e.res.GVR)
		ri := namespaceable(r, ns)
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) }
		listIn = func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return r.Namespace(ns).List(ctx, o)
		}
		if lists := f.clients.MetadataLists; lists != nil {
			gvr := e.res.GVR
			list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return readMetadataList(ctx, lists, gvr, ns, o)
			}
			listIn = func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
				return readMetadataList(ctx, lists, gvr, ns, o)
			}
		}
		watchFn = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return ri.Watch(ctx, o) }
		example = &metav1.PartialObjectMetadata{}
	case clientgoscheme.Scheme.Recognizes(e.res.GVK) && !f.serverJSON(e.res.GVK.GroupKind()):
		obj, err := clientgoscheme.Scheme.New(e.res.GVK)
		if err != nil {
			return nil, nil, fmt.Errorf("creating %s: %w", e.res.GVK, err)
		}
		newClient := f.clients.Typed
		if f.clients.TypedJSON != nil && wire.EmbedsTypeMeta(reflect.TypeOf(obj)) {
			newClient, e.json = f.clients.TypedJSON, true
		}
		client, err := newClient(e.res.GVK.GroupVersion())
		if err != nil {
			return nil, nil, err
		}
		example = obj
		resource, namespaced := e.res.GVR.Resource, e.res.Namespaced && ns != ""
		listGVK := e.res.GVK.GroupVersion().WithKind(e.res.GVK.Kind + "List")
		asJSON := e.json
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			req := client.Get().NamespaceIfScoped(ns, namespaced).Resource(resource).
				VersionedParams(&o, clientgoscheme.ParameterCodec)
			if asJSON {
				return req.Do(ctx).Get()
			}
			return readList(ctx, req, listGVK)
		}
		listIn = func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return client.Get().Namespace(ns).Resource(resource).
				VersionedParams(&o, clientgoscheme.ParameterCodec).Do(ctx).Get()
		}
		watchFn = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.Watch = true
			return client.Get().NamespaceIfScoped(ns, namespaced).Resource(resource).
				VersionedParams(&o, clientgoscheme.ParameterCodec).Watch(ctx)
		}
	default:
		r := f.clients.Dynamic.Resource(e.res.GVR)
		ri := namespaceableDynamic(r, ns)
		list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) }
		listIn = func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
			return r.Namespace(ns).List(ctx, o)
		}
		watchFn = func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return ri.Watch(ctx, o) }
		example = &unstructured.Unstructured{}
	}

	tweak := func(o *metav1.ListOptions) {
		o.LabelSelector = f.cfg.LabelSelector
		o.FieldSelector = f.cfg.FieldSelector
	}
	// A watch-list (Factory.watchList) is a list, which the outage tracker
	// follows as one.
	rawWatch := watchFn
	streamList := func(ctx context.Context, o metav1.ListOptions, page runtime.Object) (runtime.Object, error) {
		l := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return f.watchList(ctx, e, o, rawWatch, page)
		}
		if e.conn != nil {
			l = e.conn.list(l)
		}
		return l(ctx, o)
	}
	if e.conn != nil {
		list, watchFn = e.conn.list(list), e.conn.watch(watchFn)
	}
	if listIn != nil && (!e.res.Namespaced || ns != "" || f.cfg.ByNamespace == ByNamespaceNever) {
		listIn = nil
	}
	// One page of a list by list, decoded and transformed, its bytes counted as
	// they arrive (the list's progress, which WaitForSync watches).
	fetchWith := func(ctx context.Context, list func(context.Context, metav1.ListOptions) (runtime.Object, error), o metav1.ListOptions) (runtime.Object, error) {
		if f.listSlots != nil {
			select {
			case f.listSlots <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			defer func() { <-f.listSlots }()
		}
		// One page is one request, however many times the REST client
		// tries it; its bytes count as the list's progress.
		obj, err := list(wire.WithRequest(ctx, &e.bodyBytes), o)
		if err != nil {
			return nil, err
		}
		if transform := f.transform(e.mode); transform != nil {
			// The reflector transforms a list's objects only once every
			// page has arrived. Transforming page by page keeps what is
			// dropped (managedFields: half of a pod's metadata) from piling
			// up meanwhile; the informer's own transform then finds
			// nothing left to drop.
			if err := meta.EachListItem(obj, func(item runtime.Object) error {
				_, err := transform(item)
				return err
			}); err != nil {
				return nil, err
			}
		}
		if f.cfg.Keep != nil {
			if err := keepItems(obj, e, f.cfg.Keep); err != nil {
				return nil, err
			}
		}
		if sharer := f.sharer(e); sharer != nil {
			// What is kept of the page, before anyone (the reflector, a
			// PageSink, a tee) reads it.
			if err := meta.EachListItem(obj, func(item runtime.Object) error {
				sharer.Share(item)
				return nil
			}); err != nil {
				return nil, err
			}
		}
		return obj, nil
	}
	fetchPage := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		return fetchWith(ctx, list, o)
	}
	var slicer *nsSlicer
	if listIn != nil {
		inNS := func(ns string) func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			l := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return listIn(ctx, ns, o) }
			if e.conn != nil {
				l = e.conn.list(l)
			}
			return l
		}
		slicer = &nsSlicer{f: f, e: e, fetch: func(ctx context.Context, ns string, o metav1.ListOptions) (runtime.Object, error) {
			obj, err := fetchWith(ctx, inNS(ns), o)
			if err == nil {
				e.received.Add(int64(meta.LenList(obj)))
			}
			return obj, err
		}}
	}
	// One page as pages reads it, in a goroutine of its own while the page
	// before it may still be with the caller: its objects counted too.
	fetch := func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		obj, err := fetchPage(ctx, o)
		if err == nil {
			e.received.Add(int64(meta.LenList(obj)))
		}
		return obj, err
	}
	pages := &wire.PageAhead{Fetch: fetch, DropManagedFields: !f.cfg.KeepManagedFields}
	return pagedListWatch{&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			tweak(&o)
			if o.ResourceVersion == "0" {
				// The reflector's first list asks for "any" version, which the
				// server answers from its cache in one unpaginated response. Ask for
				// the latest instead, like kubectl get: the answer is consistent
				// and arrives in pages we can count for progress.
				o.ResourceVersion = ""
				o.ResourceVersionMatch = ""
			}
			var obj runtime.Object
			var err error
			if slicer != nil && isSliceToken(o.Continue) {
				obj, err = slicer.next(ctx, o.Continue)
			} else {
				if slicer != nil && o.Continue == "" {
					slicer.reset()
				}
				if o.Limit > 0 {
					o.Limit = f.cfg.PageSize
					if o.Continue == "" && f.cfg.UnpagedBudget > 0 {
						obj, err = f.firstList(ctx, o, fetchPage, streamList, pages, e, slicer)
					}
				}
				if obj == nil && err == nil {
					obj, err = pages.Get(ctx, o)
				}
			}
			if err != nil {
				return nil, err
			}
			if e.sink != nil {
				if err := toSink(ctx, e.sink, obj, o.Continue == ""); err != nil {
					return nil, err
				}
			}
			if t := e.tee.Load(); t != nil {
				teePage(ctx, e, t, obj, o.Continue == "")
			}
			return obj, nil
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			tweak(&o)
			w, err := watchFn(ctx, o)
			if slicer != nil && err == nil {
				w = slicer.filter(w)
			}
			if sharer := f.sharer(e); err == nil && sharer != nil {
				w = sharedWatch(w, f.transform(e.mode), sharer)
			}
			return w, err
		},
	}}, example, nil
}

// readList asks req, a LIST of the typed list kind listGVK, for its answer
// and decodes it as it arrives (wire.ReadList): on 20,000 realistic pods
// asked for unpaged, the decoding of the first pods overlaps the server's
// encoding of the last ones.
func readList(ctx context.Context, req *rest.Request, listGVK schema.GroupVersionKind) (runtime.Object, error) {
	into, err := clientgoscheme.Scheme.New(listGVK)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", listGVK, err)
	}
	ctx = wire.Streamed(ctx)
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	decode := func(data []byte) error {
		return runtime.DecodeInto(clientgoscheme.Codecs.UniversalDeserializer(), data, into)
	}
	if err := wire.ReadList(ctx, body, into, decode); err != nil {
		return nil, fmt.Errorf("reading %s: %w", listGVK.Kind, err)
	}
	return into, nil
}

// metadataListAccept is the metadata client's Accept header for a LIST: its
// objects' metadata, as protobuf where the server encodes it so.
const metadataListAccept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

// readMetadataList asks client, of metadata.ConfigFor's configuration, for
// the metadata LIST of gvr in namespace (every namespace when "") and decodes
// it as it arrives (wire.ReadList), as readList does typed lists: the
// metadata client reads the whole answer first (on 20,000 realistic pods,
// about 100 MB allocated for 51 MB held once managedFields are cut) and
// decodes it only then. An answer in JSON (a server that does not encode
// the list as protobuf) is decoded whole, as the metadata client does.
func readMetadataList(ctx context.Context, client rest.Interface, gvr schema.GroupVersionResource, namespace string, o metav1.ListOptions) (runtime.Object, error) {
	path := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		path = []string{"/api", gvr.Version}
	}
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	path = append(path, gvr.Resource)
	ctx = wire.Streamed(ctx)
	body, err := client.Get().AbsPath(path...).
		SpecificallyVersionedParams(&o, clientgoscheme.ParameterCodec, schema.GroupVersion{Version: "v1"}).
		SetHeader("Accept", metadataListAccept).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	into := &metav1.PartialObjectMetadataList{}
	decode := func(data []byte) error { return json.Unmarshal(data, into) }
	if err := wire.ReadList(ctx, body, into, decode); err != nil {
		return nil, err
	}
	return into, nil
}

// DefaultUnpagedBudget is the largest list, in bytes of the API server's
// answer as the REST client holds it while it decodes it (without its items'
// managedFields, wire.ListTransport), that informers ask for in one unpaged
// LIST rather than in pages (Config.UnpagedBudget, Factory.firstList): 128
// MiB, about 37,000 realistic pods (3.6 KB of protobuf each once stripped,
// 8.9 KB as sent) or 190,000 of their metadata (0.7 KB, 6.0 KB as sent).
const DefaultUnpagedBudget = 128 << 20

// probePage is the size of the first page of a list that may be asked for
// unpaged (Factory.firstList): small enough to cost little more than a round
// trip, large enough that most lists of a cluster's quieter types end in it.
const probePage = 100

// firstList returns the first answer to a list that starts with o, when it
// chooses it; nil, nil leaves it to pages, in pages of o.Limit.
//
// The API server answers an unpaged LIST at its latest resourceVersion from
// its watch cache, whatever was written lately. The later pages of a paged
// LIST it answers from the watch cache's snapshots, which it keeps only of
// the resourceVersions at which the type changed, and drops at etcd's
// compaction (every five minutes): a type nobody wrote for that long (a
// quiet cluster's pods, most clusters' ConfigMaps and ReplicaSets) has every
// page after the first read from etcd, and decoded there. On 20,000
// realistic pods left quiet for twelve minutes, pods -A --by-owner -o name
// took 1.7-2.4 s in pages of 2,000 against 1.1 s unpaged.
//
// So the first page is a small one (probePage): the whole list when it is
// that short, which most types are. Otherwise its bytes per object, as the
// REST client is handed them (without managedFields, taken out as the answer
// arrives), times the objects the server says are left, tell the size of the
// whole answer: within Config.UnpagedBudget the list is asked for again,
// unpaged (the small page is dropped); past it, an answer too large to hold
// whole, namespace by namespace when it is of every namespace (nsSlicer),
// each namespace in one answer within the budget; otherwise by a watch-list
// (Factory.watchList), which the server also answers from its cache, object
// by object; and in pages of o.Limit from the small one where the server
// refuses or stalls a watch-list, or for tables.
//
// A list of whole objects that goes to a sink or a tee (a streamed -o json)
// is read namespace by namespace too, each within an eighth of the budget, or
// stays in pages: each is printed, and dropped, while the next arrives, where
// one answer or a watch-list would be held whole until its end (on 20,000
// realistic pods, -o json took 623 MB that way against 214 MB in pages). One
// of metadata only (a streamed -o name) is asked for unpaged when it fits the
// budget, counted in its bytes as sent (managedFields included): its objects
// are small once managedFields are dropped, and on a quiet cluster its later
// pages would be read from etcd (pods -A -o name at 20,000 realistic pods:
// 3.32 s in pages against 0.67 s while pods were written). Past the budget it
// stays in pages, never a watch-list, which would hold every object until its
// end: the budget bounds what a streamed listing holds.
//
// Either way the list reaches the sink in the server's order, the order of
// its pages.
func (f *Factory) firstList(ctx context.Context, o metav1.ListOptions,
	fetch func(context.Context, metav1.ListOptions) (runtime.Object, error),
	streamList func(context.Context, metav1.ListOptions, runtime.Object) (runtime.Object, error),
	pages *wire.PageAhead, e *entry, slicer *nsSlicer) (runtime.Object, error) {
	probe := o
	probe.Limit = min(o.Limit, probePage)
	// The size that counts is what the REST client holds: the answer
	// without its items' managedFields, which are taken out as it arrives
	// (wire.ListTransport, wire.ReadList). A listing streamed to a sink
	// or a tee keeps the bytes as sent (no page of this list is under way
	// meanwhile): unpaged, it decodes its whole answer at once where pages
	// hold one at a time, and the budget bounds that.
	var held atomic.Int64
	before := e.bodyBytes.Load()
	obj, err := fetch(wire.WithHeld(ctx, !f.cfg.KeepManagedFields, &held), probe)
	size := held.Load()
	if e.sink != nil || e.tee.Load() != nil {
		size = e.bodyBytes.Load() - before
	}
	if err != nil {
		return nil, err
	}
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return nil, err
	}
	n := int64(meta.LenList(obj))
	if lm.GetContinue() == "" {
		e.received.Add(n)
		return obj, nil
	}
	left := lm.GetRemainingItemCount()
	sinking := e.sink != nil || e.tee.Load() != nil
	streamed := sinking && e.mode != MetadataOnly
	if !streamed && left != nil && n > 0 && (n+*left)*(size/n) <= f.cfg.UnpagedBudget {
		all := o
		all.Limit = 0
		return pages.Get(ctx, all)
	}
	if slicer != nil && left != nil && n > 0 {
		// Too large for one answer, or streamed: by namespace, each held
		// whole while it is decoded (one a sink takes, within an eighth of
		// the budget: it is printed and dropped as the next ones arrive).
		budget := f.cfg.UnpagedBudget
		if sinking {
			budget /= 8
		}
		list, err := slicer.start(ctx, o, n+*left, size/n, budget)
		if list != nil || err != nil {
			return list, err
		}
	}
	if streamed {
		e.received.Add(n)
		pages.Ahead(ctx, wire.NextPage(o, lm.GetContinue()))
		return obj, nil
	}
	if f.watchListAllowed(e) && e.sink == nil && e.tee.Load() == nil {
		list, err := streamList(ctx, o, obj)
		switch {
		case err == nil:
			return list, nil
		case !watchListUnsupported(err):
			return nil, err
		}
		f.watchListRefused(e.res.GVR.GroupResource())
		if errors.Is(err, errWatchListStalled) && f.cfg.OnWarning != nil {
			f.cfg.OnWarning(e.res, fmt.Sprintf("the server did not end the watch-list of %s within %s: listed in pages", e.res.Name(), f.cfg.WatchListStall))
		}
		// The small page's continue token may have expired meanwhile:
		// the list starts again, in pages.
		first := o
		return pages.Get(ctx, first)
	}
	// Too large to hold whole, or of a size the server does not tell:
	// pages from here on, asked for ahead.
	e.received.Add(n)
	pages.Ahead(ctx, wire.NextPage(o, lm.GetContinue()))
	return obj, nil
}

// pagedListWatch is a ListWatch whose initial list the reflector reads
// through its ListWithContextFunc, never client-go's own watch-list
// (WatchListClient, on by default since v0.35): the factory chooses the way
// itself (Factory.firstList: one unpaged LIST, its own watch-list, or pages),
// so that the progress line counts it, the factory's concurrent-LIST bound
// holds it back and wire.PageAhead overlaps its pages. On 20,000 realistic
// pods with a pod written every 5 s, client-go's watch-list took --by-owner
// -o name 1.21 s and 1.04 s of CPU, against 0.78 s and 0.76 s in pages of
// 2,000 asked for ahead.
type pagedListWatch struct{ *cache.ListWatch }

// IsWatchListSemanticsUnSupported tells the reflector to list in pages.
func (pagedListWatch) IsWatchListSemanticsUnSupported() bool { return true }

func namespaceable(r metadata.Getter, ns string) metadata.ResourceInterface {
	if ns != "" {
		return r.Namespace(ns)
	}
	return r
}

func namespaceableDynamic(r dynamic.NamespaceableResourceInterface, ns string) dynamic.ResourceInterface {
	if ns != "" {
		return r.Namespace(ns)
	}
	return r
}

// TypedClient returns a REST client for the built-in group version gv that asks
// for contentType (protobuf or JSON) and decodes into client-go's typed structs.
func TypedClient(restConfig *rest.Config, gv schema.GroupVersion, contentType string) (rest.Interface, error) {
	cfg := rest.CopyConfig(restConfig)
	cfg.GroupVersion = &gv
	cfg.APIPath = "/apis"
	if gv.Group == "" {
		cfg.APIPath = "/api"
	}
	cfg.ContentType = contentType
	cfg.AcceptContentTypes = contentType
	if contentType == runtime.ContentTypeProtobuf {
		cfg.AcceptContentTypes += "," + runtime.ContentTypeJSON
	}
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	c, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating client for %s: %w", gv, err)
	}
	return c, nil
}

// Start runs every informer requested so far. Call it once.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started {
		return
	}
	f.started = true
	f.ctx, f.cancel = context.WithCancel(ctx)
	for _, e := range f.order {
		if f.lender != nil && f.informers[informerKey{gvr: e.res.GVR, mode: e.mode}] != e {
			// The lender runs the informers it lends.
			continue
		}
		f.run(f.ctx, e)
	}
}

func (f *Factory) run(ctx context.Context, e *entry) {
	ctx, e.cancel = context.WithCancel(ctx)
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if e.authorized != nil {
			if err := e.authorized(ctx); err != nil {
				if ctx.Err() == nil {
					f.giveUp(e, err)
				}
				return
			}
		}
		e.informer.RunWithContext(ctx)
	}()
}

// Shutdown stops every informer of the factory's own and waits for their
// goroutines to end; those a Lender lent are handed back, running.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	cancel := f.cancel
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if f.lender != nil {
		// After the factory's own informers are told to stop: one waiting
		// for its authorization then takes the end of the lender's checks
		// for the end of the factory, not for a refusal.
		f.lender.Release()
	}
	f.wg.Wait()
}

// Resources lists the resources with informers, in the order they were requested.
func (f *Factory) Resources() []Resource {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Resource, 0, len(f.order))
	for _, e := range f.order {
		out = append(out, e.res)
	}
	return out
}

// unsynced names the resources whose informers have not synced, sorted.
func (f *Factory) unsynced() []string {
	f.mu.Lock()
	entries := append([]*entry(nil), f.order...)
	f.mu.Unlock()
	var names []string
	for _, e := range entries {
		if e.failed() == nil && !e.informer.HasSynced() {
			names = append(names, e.res.Name())
		}
	}
	sort.Strings(names)
	return names
}

// ErrSyncTimeout is wrapped by the error WaitForSync returns when --sync-timeout expires.
var ErrSyncTimeout = errors.New("timed out waiting for caches to sync")

// joinNames renders resource names for messages.
func joinNames(names []string) string { return strings.Join(names, ", ") }
