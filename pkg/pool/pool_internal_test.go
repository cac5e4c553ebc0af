package pool

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// fakeCluster serves one resource, pods in namespace "shop", metadata only,
// to a pool's informers and its probes, with resourceVersions that every
// write moves, as etcd's revisions do: writes of other types move them too
// (otherWrite). Its informer watches can be held (hold), as a watch that is
// down or slow delivers nothing.
type fakeCluster struct {
	t      *testing.T
	client *metadatafake.FakeMetadataClient

	mu       sync.Mutex
	rv       uint64
	objs     map[string]*metav1.PartialObjectMetadata
	history  []watch.Event
	watchers []*fakeStream
	held     bool
	lists    int
	// Probes: how many, and the delay before a probe's bookmark.
	probeLists, probeWatches, wholeWatches int
	// compareLists counts the probe LISTs of a store's objects, compareEnded
	// those that returned, compareCancelled those cancelled, compareAfter
	// their delay.
	compareLists, compareEnded, compareCancelled int
	compareAfter                                 time.Duration
	// compareAtLeast is the resourceVersion the last compared LIST asked
	// for, or "" for a consistent one.
	compareAtLeast string
	// watchStopped counts the probe watches their prober stopped,
	// watchCancelled those the server saw cancelled before their bookmark.
	watchStopped, watchCancelled int
	bookmarkAfter                time.Duration
	probeErr                     error
	// onList, when set, runs as an informer's list begins.
	onList func()
}

// fakeStream is one informer watch: the events after its resourceVersion,
// delivered unless the cluster holds them.
type fakeStream struct {
	w         *watch.RaceFreeFakeWatcher
	namespace string
	sent      uint64
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

var podsResource = informer.Resource{GVR: podsGVR, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true}

func newFakeCluster(t *testing.T) *fakeCluster {
	c := &fakeCluster{t: t, rv: 100, objs: map[string]*metav1.PartialObjectMetadata{}, bookmarkAfter: 20 * time.Millisecond}
	scheme := runtime.NewScheme()
	metav1.AddMetaToScheme(scheme)
	c.client = metadatafake.NewSimpleMetadataClient(scheme)
	c.client.PrependReactor("list", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		c.mu.Lock()
		onList := c.onList
		c.mu.Unlock()
		if onList != nil {
			onList()
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.lists++
		list := &metav1.List{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(c.rv, 10)}}
		for _, key := range slices.Sorted(maps.Keys(c.objs)) {
			if o := c.objs[key]; a.GetNamespace() == "" || o.Namespace == a.GetNamespace() {
				list.Items = append(list.Items, runtime.RawExtension{Object: o.DeepCopy()})
			}
		}
		return true, list, nil
	})
	c.client.PrependWatchReactor("pods", func(a clienttesting.Action) (bool, watch.Interface, error) {
		from, _ := strconv.ParseUint(a.(clienttesting.WatchActionImpl).ListOptions.ResourceVersion, 10, 64)
		c.mu.Lock()
		defer c.mu.Unlock()
		s := &fakeStream{w: watch.NewRaceFreeFake(), namespace: a.GetNamespace(), sent: from}
		c.watchers = append(c.watchers, s)
		c.deliverLocked()
		return true, s.w, nil
	})
	return c
}

// write creates or updates pod name.
func (c *fakeCluster) write(name string) uint64 { return c.writeIn("shop", name) }

// writeIn creates or updates pod name in namespace.
func (c *fakeCluster) writeIn(namespace, name string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rv++
	typ := watch.Modified
	if c.objs[namespace+"/"+name] == nil {
		typ = watch.Added
	}
	obj := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: strconv.FormatUint(c.rv, 10)},
	}
	c.objs[namespace+"/"+name] = obj
	c.history = append(c.history, watch.Event{Type: typ, Object: obj})
	c.deliverLocked()
	return c.rv
}

// otherWrite is a write of another type: the resourceVersion moves, no pod
// changes.
func (c *fakeCluster) otherWrite() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rv++
	return c.rv
}

// hold stops or resumes the delivery of changes to the informers.
func (c *fakeCluster) hold(held bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held = held
	c.deliverLocked()
}

func (c *fakeCluster) deliverLocked() {
	if c.held {
		return
	}
	c.deliverUpToLocked(c.rv)
}

// deliverUpTo delivers the changes held back up to resourceVersion rv, and
// holds the later ones still.
func (c *fakeCluster) deliverUpTo(rv uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deliverUpToLocked(rv)
}

func (c *fakeCluster) deliverUpToLocked(rv uint64) {
	for _, s := range c.watchers {
		for _, ev := range c.history {
			if at := rvOf(ev.Object); at > s.sent && at <= rv {
				if s.namespace == "" || ev.Object.(*metav1.PartialObjectMetadata).Namespace == s.namespace {
					s.w.Action(ev.Type, ev.Object.DeepCopyObject())
				}
				s.sent = at
			}
		}
	}
}

// deleteIn deletes pod name in namespace.
func (c *fakeCluster) deleteIn(namespace, name string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rv++
	gone := c.objs[namespace+"/"+name].DeepCopy()
	gone.ResourceVersion = strconv.FormatUint(c.rv, 10)
	delete(c.objs, namespace+"/"+name)
	c.history = append(c.history, watch.Event{Type: watch.Deleted, Object: gone})
	c.deliverLocked()
	return c.rv
}

func rvOf(obj runtime.Object) uint64 {
	n, _ := strconv.ParseUint(obj.(*metav1.PartialObjectMetadata).ResourceVersion, 10, 64)
	return n
}

func (c *fakeCluster) counts() (lists, probeLists, probeWatches int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lists, c.probeLists, c.probeWatches
}

// current and watch make the fake cluster the pool's prober, as the API
// server answers a probe: the current resourceVersion; the changes after rv,
// then a bookmark at the current one.
func (c *fakeCluster) current(context.Context, *warm) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.probeLists++
	if c.probeErr != nil {
		return "", c.probeErr
	}
	return strconv.FormatUint(c.rv, 10), nil
}

func (c *fakeCluster) compare(ctx context.Context, w *warm, limit int64, atLeast string, item func(namespace, name, rv []byte) bool) (string, bool, error) {
	c.mu.Lock()
	c.probeLists++
	c.compareLists++
	c.compareAtLeast = atLeast
	if c.probeErr != nil {
		err := c.probeErr
		c.mu.Unlock()
		return "", false, err
	}
	rv := strconv.FormatUint(c.rv, 10)
	var items []*metav1.PartialObjectMetadata
	more := false
	for _, key := range slices.Sorted(maps.Keys(c.objs)) {
		if o := c.objs[key]; w.key.namespace == "" || o.Namespace == w.key.namespace {
			if limit > 0 && int64(len(items)) == limit {
				more = true
				break
			}
			items = append(items, o.DeepCopy())
		}
	}
	delay := c.compareAfter
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.compareEnded++
		if ctx.Err() != nil {
			c.compareCancelled++
		}
		c.mu.Unlock()
	}()
	// The answer arrives after delay, as a big LIST's does.
	select {
	case <-time.After(delay):
	case <-ctx.Done():
		return "", false, ctx.Err()
	}
	for _, o := range items {
		if !item([]byte(o.Namespace), []byte(o.Name), []byte(o.ResourceVersion)) {
			return rv, false, nil
		}
	}
	return rv, !more, nil
}

func (c *fakeCluster) watch(ctx context.Context, w *warm, rv string, whole bool) (watch.Interface, error) {
	from, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return nil, err
	}
	ns := w.key.namespace
	if whole {
		ns = ""
	}
	c.mu.Lock()
	c.probeWatches++
	if whole {
		c.wholeWatches++
	}
	var replay []watch.Event
	at := from
	for _, ev := range c.history {
		if rv := rvOf(ev.Object); rv > from {
			// A watch is moved past the changes it leaves out.
			at = rv
			if ns == "" || ev.Object.(*metav1.PartialObjectMetadata).Namespace == ns {
				replay = append(replay, ev)
			}
		}
	}
	delay := c.bookmarkAfter
	c.mu.Unlock()
	fw := watch.NewRaceFreeFake()
	go func() {
		for _, ev := range replay {
			fw.Action(ev.Type, ev.Object.DeepCopyObject())
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			c.mu.Lock()
			c.watchCancelled++
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		now := c.rv
		c.mu.Unlock()
		if now > at {
			// The API server sends no bookmark at the resourceVersion a watch
			// is at.
			fw.Action(watch.Bookmark, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(now, 10)}})
		}
	}()
	return stopCounter{fw, c}, nil
}

// stopCounter counts the probe watches their prober stopped.
type stopCounter struct {
	watch.Interface
	c *fakeCluster
}

func (s stopCounter) Stop() {
	s.c.mu.Lock()
	s.c.watchStopped++
	s.c.mu.Unlock()
	s.Interface.Stop()
}

// newTestPool returns a pool over c whose informers stop when the test ends.
// Its stores are shown current by the server's resourceVersion and probe
// watches only, never by a LIST of their objects (compareUpTo, raceUpTo),
// which the tests of comparing turn on.
func newTestPool(t *testing.T, c *fakeCluster, opts Options) *Pool {
	t.Helper()
	p, err := newPool(informer.Clients{Metadata: c.client}, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	p.compareUpTo, p.raceUpTo = 0, 0
	t.Cleanup(p.Close)
	return p
}

// question borrows pods from p as one question started now, waits for them
// and returns the factory, the store and the source.
func question(t *testing.T, p *Pool, fresh Freshness, cfg informer.Config) (*informer.Factory, cache.SharedIndexInformer, *Source, error) {
	t.Helper()
	if fresh.Start.IsZero() {
		fresh.Start = time.Now()
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "shop"
	}
	return podsQuestion(t, p, fresh, cfg, informer.MetadataOnly)
}

// podsQuestion borrows pods in mode from p as one question of fresh and cfg, waits for
// them and returns the factory, the store, the source and what the wait returned.
func podsQuestion(t *testing.T, p *Pool, fresh Freshness, cfg informer.Config, mode informer.Mode) (*informer.Factory, cache.SharedIndexInformer, *Source, error) {
	t.Helper()
	src := p.Source(fresh, "", nil)
	f, err := src.NewFactory(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := f.Informer(podsResource, mode, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := startFor(f)
	defer cancel()
	return f, inf, src, f.WaitForSync(ctx)
}

// shopFactory returns a factory of p for one question of the shop started now, asked by
// asker (nil: none).
func shopFactory(t *testing.T, p *Pool, asker Asker) *informer.Factory {
	t.Helper()
	f, err := p.Source(Freshness{Start: time.Now()}, "", asker).NewFactory(nil, informer.Config{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// startFor starts f's informers for a question of at most 10 seconds, which cancel ends.
func startFor(f *informer.Factory) (ctx context.Context, cancel context.CancelFunc) {
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	f.Start(ctx)
	return ctx, cancel
}

// streamQuestion starts a question of the shop's pods from p, asked by asker (nil: none),
// whose list is streamed to sink.
func streamQuestion(t *testing.T, p *Pool, asker Asker, sink informer.PageSink) (f *informer.Factory, ctx context.Context, cancel context.CancelFunc) {
	t.Helper()
	f = shopFactory(t, p, asker)
	if _, err := f.StreamInformer(podsResource, informer.MetadataOnly, sink); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = startFor(f)
	return f, ctx, cancel
}

// ask is question for a question that must be answered: an error fails t.
func ask(t *testing.T, p *Pool, fresh Freshness, cfg informer.Config) (*informer.Factory, cache.SharedIndexInformer, *Source) {
	t.Helper()
	f, inf, src, err := question(t, p, fresh, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f, inf, src
}

// warmUp asks p one question of the shop's pods and hands its informer back: the pool holds
// it warm, synced with c.
func warmUp(t *testing.T, p *Pool) {
	t.Helper()
	f, _, _ := ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
}

// warmPool returns a fake cluster holding pods in the shop, written in that order, and a pool
// over it whose informer of the shop's pods is warm.
func warmPool(t *testing.T, pods ...string) (*fakeCluster, *Pool) {
	t.Helper()
	c := newFakeCluster(t)
	for _, name := range pods {
		c.write(name)
	}
	p := newTestPool(t, c, Options{})
	warmUp(t, p)
	return c, p
}

// locked runs set, which sets c's knobs, with c's lock held.
func (c *fakeCluster) locked(set func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	set()
}

// releaseAfter lets c's watches deliver again after d, as a write's event arrives late.
func (c *fakeCluster) releaseAfter(d time.Duration) {
	go func() {
		time.Sleep(d)
		c.hold(false)
	}()
}

func names(inf cache.SharedIndexInformer) []string {
	return slices.Sorted(slices.Values(inf.GetStore().ListKeys()))
}

func TestPoolReusesInformers(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	f1, inf1, _ := ask(t, p, Freshness{}, informer.Config{})
	f1.Shutdown()
	f2, inf2, _ := ask(t, p, Freshness{}, informer.Config{})
	defer f2.Shutdown()
	if lists, _, _ := c.counts(); lists != 1 {
		t.Errorf("%d lists of pods, want 1: the second question must borrow the first one's informer", lists)
	}
	if got := names(inf2); !slices.Equal(got, []string{"shop/web-1"}) {
		t.Errorf("store holds %v", got)
	}
	if inf1.GetStore() != inf2.GetStore() {
		t.Error("two questions got two stores")
	}
	// Another key (a selector) is another informer.
	f3, _, _ := ask(t, p, Freshness{}, informer.Config{LabelSelector: "app=web"})
	defer f3.Shutdown()
	if got := len(p.Status().Informers); got != 2 {
		t.Errorf("%d informers, want 2 (one per selector)", got)
	}
}

func TestPoolQuestionsDoNotStopInformers(t *testing.T) {
	c := newFakeCluster(t)
	p := newTestPool(t, c, Options{})
	f, inf, _ := ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
	f.Shutdown()
	p.mu.Lock()
	var w *warm
	for _, x := range p.warm {
		w = x
	}
	p.mu.Unlock()
	if w == nil || w.inf.IsStopped() {
		t.Fatal("a question's Shutdown stopped the warm informer")
	}
	c.write("web-2")
	waitUntil(t, "the warm informer to see a write after the question ended", func() bool {
		return slices.Contains(names(inf), "shop/web-2")
	})
	if s := p.Status().Informers[0]; s.InUse != 0 || s.Objects != 1 {
		t.Errorf("status after the question: in use %d, objects %d", s.InUse, s.Objects)
	}
	// A borrowed informer cannot be run, stopped or reconfigured by its question.
	if err := inf.SetTransform(nil); err == nil {
		t.Error("SetTransform on a borrowed informer succeeded")
	}
}

func TestPoolDropsIdleInformers(t *testing.T) {
	c := newFakeCluster(t)
	p := newTestPool(t, c, Options{DropAfter: 50 * time.Millisecond})
	held, _, _ := ask(t, p, Freshness{}, informer.Config{})
	idle, _, _ := ask(t, p, Freshness{}, informer.Config{Namespace: "other"})
	idle.Shutdown()
	waitUntil(t, "the unused informer to be dropped", func() bool { return p.Status().Dropped == 1 })
	st := p.Status()
	if len(st.Informers) != 1 || st.Informers[0].Namespace != "shop" {
		t.Errorf("informers after the drop: %+v; want only the one held (shop)", st.Informers)
	}
	time.Sleep(150 * time.Millisecond)
	if len(p.Status().Informers) != 1 {
		t.Error("an informer in use was dropped")
	}
	held.Shutdown()
	waitUntil(t, "the informer to be dropped once handed back", func() bool { return len(p.Status().Informers) == 0 })
}

func TestPoolReadYourWrites(t *testing.T) {
	c, p := warmPool(t)
	// The write is acknowledged; its event is on its way to the informer, late.
	c.hold(true)
	c.write("web-new")
	c.releaseAfter(100 * time.Millisecond)
	f, inf, src := ask(t, p, Freshness{}, informer.Config{})
	defer f.Shutdown()
	if !slices.Contains(names(inf), "shop/web-new") {
		t.Fatalf("the answer misses a write acknowledged before the question: %v", names(inf))
	}
	asOf := src.AsOf()
	if len(asOf) != 1 || asOf[0].Resource.Name() != "pods" || asOf[0].ResourceVersion != "101" {
		t.Errorf("AsOf = %+v, want pods as of 101", asOf)
	}
}

func TestPoolQuietTypeIsProvenByABookmark(t *testing.T) {
	c, p := warmPool(t, "web-1")
	// Other types are written: the pods' informer hears nothing of it.
	want := c.otherWrite()
	c.otherWrite()
	want = c.otherWrite()
	start := time.Now()
	f, _, src := ask(t, p, Freshness{}, informer.Config{})
	defer f.Shutdown()
	if _, _, watches := c.counts(); watches != 1 {
		t.Errorf("%d probe watches, want 1", watches)
	}
	if got := src.AsOf()[0]; got.ResourceVersion != strconv.FormatUint(want, 10) || got.Time.Before(start) {
		t.Errorf("AsOf = %+v, want resourceVersion %d as of the question's start or later", got, want)
	}
}

func TestPoolWatchDownFailsNamingTheType(t *testing.T) {
	c, p := warmPool(t)
	c.hold(true)
	c.write("web-lost")
	_, _, _, err := question(t, p, Freshness{}, informer.Config{SyncTimeout: 300 * time.Millisecond})
	if !errors.Is(err, informer.ErrSyncTimeout) || !strings.Contains(err.Error(), "pods did not catch up with the server (resourceVersion 101; its store has applied 100)") {
		t.Fatalf("err = %v; want a sync timeout naming pods and the versions", err)
	}
	// Once the watch delivers again, the next question is answered, with
	// the write.
	c.hold(false)
	f, inf, _ := ask(t, p, Freshness{}, informer.Config{SyncTimeout: 5 * time.Second})
	defer f.Shutdown()
	if !slices.Contains(names(inf), "shop/web-lost") {
		t.Errorf("store %v misses the write", names(inf))
	}
}

func TestPoolProbeFailuresAreRetriedUntilTheTimeout(t *testing.T) {
	c, p := warmPool(t)
	c.locked(func() {
		c.probeErr = &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/api/v1/namespaces/shop/pods?limit=1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	})
	_, _, _, err := question(t, p, Freshness{}, informer.Config{SyncTimeout: 500 * time.Millisecond})
	if !errors.Is(err, informer.ErrSyncTimeout) || !strings.Contains(err.Error(), "pods did not catch up with the server (asking for its resourceVersion: ") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v", err)
	}
	if _, probes, _ := c.counts(); probes < 3 {
		t.Errorf("%d probes: a refused connection must be tried again", probes)
	}
}

func TestPoolMaxStalenessSkipsTheProbe(t *testing.T) {
	c, p := warmPool(t)
	c.otherWrite()
	_, before, _ := c.counts()
	f, _, src := ask(t, p, Freshness{MaxStaleness: time.Hour}, informer.Config{})
	f.Shutdown()
	if _, after, _ := c.counts(); after != before {
		t.Errorf("%d probes with --max-staleness 1h after a confirmed question, want none", after-before)
	}
	if got := src.AsOf()[0].ResourceVersion; got != "100" {
		t.Errorf("AsOf resourceVersion %s, want the one confirmed, 100", got)
	}
	// Without it, the server is asked.
	f, _, _ = ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
	if _, after, _ := c.counts(); after != before+1 {
		t.Errorf("%d probes without --max-staleness, want 1", after-before)
	}
}

func TestPoolConcurrentQuestionsShareARound(t *testing.T) {
	c, p := warmPool(t)
	c.otherWrite()
	c.locked(func() { c.bookmarkAfter = 200 * time.Millisecond })
	start := time.Now()
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			f, _, _, err := question(t, p, Freshness{Start: start}, informer.Config{})
			if err != nil {
				t.Error(err)
				return
			}
			f.Shutdown()
		})
	}
	wg.Wait()
	if _, probes, watches := c.counts(); probes != 1 || watches != 1 {
		t.Errorf("%d probe lists and %d probe watches for five questions at once, want one of each (the first question was shown current by its list)", probes, watches)
	}
}

func TestPoolHandlersWaitForTheStoreAndLeaveWithTheQuestion(t *testing.T) {
	c, p := warmPool(t, "web-1")
	c.hold(true)
	c.write("web-2")
	c.releaseAfter(100 * time.Millisecond)

	f := shopFactory(t, p, nil)
	inf, err := f.Informer(podsResource, informer.MetadataOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, obj.(*metav1.PartialObjectMetadata).Name)
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := startFor(f)
	defer cancel()
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	if !cache.WaitForCacheSync(ctx.Done(), reg.HasSynced) {
		t.Fatal("the handler never synced")
	}
	mu.Lock()
	got := slices.Sorted(slices.Values(seen))
	mu.Unlock()
	if !slices.Equal(got, []string{"web-1", "web-2"}) {
		t.Errorf("the handler's first state is %v, want web-1 and web-2: the write before the question", got)
	}
	f.Shutdown()
	c.write("web-3")
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if slices.Contains(seen, "web-3") {
		t.Error("a handler of a question that ended still hears changes")
	}
}

func TestPoolRelistsWhenTheServerForgot(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	p.probe = expiredProber{c}
	warmUp(t, p)
	c.hold(true)
	c.write("web-2")
	f, inf, src := ask(t, p, Freshness{}, informer.Config{})
	defer f.Shutdown()
	if !slices.Contains(names(inf), "shop/web-2") {
		t.Errorf("the question's own list misses the write: %v", names(inf))
	}
	if lists, _, _ := c.counts(); lists != 2 {
		t.Errorf("%d lists, want 2: the warm one and the question's own", lists)
	}
	if got := src.AsOf()[0].ResourceVersion; got != "102" {
		t.Errorf("AsOf resourceVersion %s, want the question's own list's, 102", got)
	}
}

// expiredProber is a server whose watch history no longer has what the
// store has applied: every probe watch is 410 Gone.
type expiredProber struct{ c *fakeCluster }

func (e expiredProber) current(ctx context.Context, w *warm) (string, error) {
	return e.c.current(ctx, w)
}

func (e expiredProber) compare(ctx context.Context, w *warm, limit int64, atLeast string, item func(_, _, _ []byte) bool) (string, bool, error) {
	return e.c.compare(ctx, w, limit, atLeast, item)
}

func (e expiredProber) watch(context.Context, *warm, string, bool) (watch.Interface, error) {
	w := watch.NewRaceFreeFake()
	go w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
	return w, nil
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// warmIndexer is the store of p's warm informer (the pool holds one).
func warmIndexer(p *Pool) cache.Indexer {
	p.mu.Lock()
	defer p.mu.Unlock()
	var raw cache.Indexer
	for _, w := range p.warm {
		raw = w.inf.GetIndexer()
	}
	return raw
}

// waitStoreKey waits until raw holds key (a creation applied), or no longer
// holds it when present is false (a deletion applied).
func waitStoreKey(t *testing.T, raw cache.Indexer, key string, present bool) {
	t.Helper()
	what := "the store to apply the creation"
	if !present {
		what = "the store to apply the deletion"
	}
	waitUntil(t, what, func() bool {
		_, ok, _ := raw.GetByKey(key)
		return ok == present
	})
}

func TestPoolProbesTheWholeTypeWhenASelectiveWatchHearsNothing(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	p.bookmarkDue = 100 * time.Millisecond
	warmUp(t, p)
	// The last write anywhere is a pod of another namespace: a watch of the
	// shop's pods is moved past it and gets no bookmark.
	want := c.writeIn("other", "db-0")
	f, _, src := ask(t, p, Freshness{}, informer.Config{})
	defer f.Shutdown()
	c.mu.Lock()
	whole := c.wholeWatches
	c.mu.Unlock()
	if whole != 1 {
		t.Errorf("%d watches of the whole type, want 1 after the selective one heard nothing", whole)
	}
	if got := src.AsOf()[0].ResourceVersion; got != strconv.FormatUint(want, 10) {
		t.Errorf("AsOf resourceVersion %s, want %d", got, want)
	}
}

func TestPoolListsUncachedTypesForEachQuestion(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	events := informer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: podsResource.GVK, Namespaced: true}
	// The fake serves its pods under any name; call them what the API
	// server does not cache.
	events.GVR.Resource = "events"
	pods := c.client.ReactionChain[0]
	c.client.PrependReactor("list", "events", func(a clienttesting.Action) (bool, runtime.Object, error) {
		return pods.React(clienttesting.NewListAction(podsGVR, schema.GroupVersionKind{}, a.GetNamespace(), metav1.ListOptions{}))
	})
	c.client.PrependWatchReactor("events", func(a clienttesting.Action) (bool, watch.Interface, error) {
		return true, watch.NewRaceFreeFake(), nil
	})
	for range 2 {
		f := shopFactory(t, p, nil)
		if _, err := f.Informer(events, informer.MetadataOnly, nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := startFor(f)
		if err := f.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		f.Shutdown()
	}
	if lists, probes, _ := c.counts(); lists != 2 || probes != 0 {
		t.Errorf("%d lists and %d probes of events for two questions, want a list each and no probe", lists, probes)
	}
	if n := len(p.Status().Informers); n != 0 {
		t.Errorf("%d informers kept warm, want none: events are listed for each question", n)
	}
}

// pageRecorder is a PageSink that keeps what it is handed, and reads the
// objects again in a goroutine of its own, as a printer does while the list
// goes on.
type pageRecorder struct {
	mu      sync.Mutex
	pages   [][]string
	readers sync.WaitGroup
}

func (r *pageRecorder) Page(_ context.Context, items []runtime.Object, _ bool, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for _, it := range items {
		names = append(names, it.(*metav1.PartialObjectMetadata).Name)
	}
	r.pages = append(r.pages, names)
	r.readers.Go(func() {
		for _, it := range items {
			_ = it.(*metav1.PartialObjectMetadata).DeepCopy()
		}
	})
	return nil
}

// TestPoolStreamsTheFirstList: the question that starts a warm informer of a
// streamed listing gets its list page by page as it arrives, which the store
// keeps; a later question gets the store whole, in List's order.
func TestPoolStreamsTheFirstList(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-2")
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	for i, want := range [][][]string{{{"web-1", "web-2"}}, {{"web-1", "web-2"}}} {
		rec := &pageRecorder{}
		f, ctx, cancel := streamQuestion(t, p, nil, rec)
		if err := f.WaitForSync(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		f.Shutdown()
		rec.readers.Wait()
		if diff := cmp.Diff(want, rec.pages); diff != "" {
			t.Errorf("question %d: pages (-want +got):\n%s", i, diff)
		}
		if tee := p.warm[keyFor(informer.Config{Namespace: "shop"}, podsResource, informer.MetadataOnly)].tee; tee != nil && !tee.Stopped() {
			t.Errorf("question %d: the warm informer still hands its lists to the question's sink", i)
		}
	}
	if got := len(p.Status().Informers); got != 1 {
		t.Errorf("%d informers, want the one both questions read", got)
	}
	if lists, _, _ := c.counts(); lists != 1 {
		t.Errorf("%d lists, want 1", lists)
	}
}

// failingSink is a PageSink that refuses every page.
type failingSink struct{}

func (failingSink) Page(context.Context, []runtime.Object, bool, string) error {
	return errors.New("listed out of order")
}

// TestPoolFailsTheQuestionWhoseStreamFailed: a question whose sink refuses
// the first list of the informer it started fails, as a direct run's list
// does, instead of answering with part of the list; the informer syncs for
// the store all the same, and the next question reads it.
func TestPoolFailsTheQuestionWhoseStreamFailed(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	f, ctx, cancel := streamQuestion(t, p, nil, failingSink{})
	defer cancel()
	err := f.WaitForSync(ctx)
	f.Shutdown()
	if err == nil || !strings.Contains(err.Error(), "listed out of order") {
		t.Fatalf("WaitForSync: %v, want the sink's error", err)
	}
	f2, inf, _ := ask(t, p, Freshness{}, informer.Config{})
	defer f2.Shutdown()
	if got := inf.GetStore().ListKeys(); !slices.Equal(got, []string{"shop/web-1"}) {
		t.Errorf("the next question read %v, want [shop/web-1]", got)
	}
	if lists, _, _ := c.counts(); lists != 1 {
		t.Errorf("%d lists, want 1", lists)
	}
}

// TestPoolComparesSmallStores: a store of at most compareUpTo objects that
// holds exactly what a LIST of its objects holds is current at the LIST's
// resourceVersion, however much was written elsewhere, with no probe watch;
// one that differs (a change on its way to it, a deletion it has not heard
// of) or is bigger goes on to the probe, and its question sees the write.
func TestPoolComparesSmallStores(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	c.write("web-2")
	c.writeIn("other", "db-0")
	p := newTestPool(t, c, Options{})
	p.compareUpTo = 2
	warmUp(t, p)

	// Other types are written: the store is shown current by one LIST.
	c.otherWrite()
	want := c.otherWrite()
	f, _, src := ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
	c.mu.Lock()
	compares, watches := c.compareLists, c.probeWatches
	c.mu.Unlock()
	if compares != 1 || watches != 0 {
		t.Errorf("%d compared LISTs and %d probe watches, want 1 and 0", compares, watches)
	}
	if got := src.AsOf()[0].ResourceVersion; got != strconv.FormatUint(want, 10) {
		t.Errorf("AsOf resourceVersion %s, want %d", got, want)
	}

	// The last write anywhere is one the store has applied: no LIST.
	wrote := c.write("web-2")
	waitUntil(t, "the store to apply the write", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, w := range p.warm {
			if rv, _, err := w.appliedRV(); err == nil && rv >= wrote {
				return true
			}
		}
		return false
	})
	f, _, _ = ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
	c.mu.Lock()
	compares = c.compareLists
	c.mu.Unlock()
	if compares != 1 {
		t.Errorf("%d compared LISTs, want none more for a store that has applied the latest write", compares-1)
	}

	// A write on its way to the store: the store differs from the LIST, the
	// probe bounds the changes, and the question waits for the write.
	c.hold(true)
	c.write("web-1")
	c.otherWrite()
	c.releaseAfter(100 * time.Millisecond)
	f, inf, _ := ask(t, p, Freshness{}, informer.Config{})
	obj, _, _ := inf.GetStore().GetByKey("shop/web-1")
	if got := obj.(*metav1.PartialObjectMetadata).ResourceVersion; got != c.objs["shop/web-1"].ResourceVersion {
		t.Errorf("web-1 at resourceVersion %s, want the write's, %s", got, c.objs["shop/web-1"].ResourceVersion)
	}
	f.Shutdown()
	c.mu.Lock()
	watches = c.probeWatches
	c.mu.Unlock()
	if watches != 1 {
		t.Errorf("%d probe watches, want 1 for a store that differs from the LIST", watches)
	}

	// A deletion on its way: the store holds one object more than the LIST.
	c.hold(true)
	c.deleteIn("shop", "web-2")
	c.otherWrite()
	c.releaseAfter(100 * time.Millisecond)
	f, inf, _ = ask(t, p, Freshness{}, informer.Config{})
	if slices.Contains(names(inf), "shop/web-2") {
		t.Errorf("store %v still holds a pod deleted before the question", names(inf))
	}
	f.Shutdown()

	// A store bigger than compareUpTo is not compared first (nor, with
	// raceUpTo 0, at all).
	c.write("web-3")
	c.write("web-4")
	f, _, _ = ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
	c.mu.Lock()
	before := c.compareLists
	c.mu.Unlock()
	c.otherWrite()
	f, _, _ = ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
	c.mu.Lock()
	after := c.compareLists
	c.mu.Unlock()
	if after != before {
		t.Errorf("a store of 4 objects was compared with compareUpTo 2")
	}
}

// racingPool returns a fake cluster c and a pool over c whose stores of more than 2 objects are
// compared with a LIST of their objects while their probe watches (race),
// and c holding 4 pods in the shop, warm: a big store.
func racingPool(t *testing.T) (*fakeCluster, *Pool) {
	t.Helper()
	c := newFakeCluster(t)
	for _, name := range []string{"web-1", "web-2", "web-3", "web-4"} {
		c.write(name)
	}
	p := newTestPool(t, c, Options{})
	p.compareUpTo, p.raceUpTo = 2, 10
	warmUp(t, p)
	return c, p
}

// compareCounts returns c's compared LISTs, started, ended and cancelled,
// and its probe watches, started, stopped by their prober and cancelled.
func (c *fakeCluster) compareCounts() (lists, listsEnded, listsCancelled, watches, watchesStopped, watchesCancelled int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compareLists, c.compareEnded, c.compareCancelled, c.probeWatches, c.watchStopped, c.watchCancelled
}

// TestPoolBigStoreShownCurrentByTheListWhileTheBookmarkIsSlow: a store
// bigger than compareUpTo, quiet while other types are written, is shown
// current by the LIST of its objects at once, not by the bookmark seconds
// away; the probe watch racing it is cancelled, and both have ended when the
// question has its answer.
func TestPoolBigStoreShownCurrentByTheListWhileTheBookmarkIsSlow(t *testing.T) {
	c, p := racingPool(t)
	c.locked(func() { c.bookmarkAfter = 5 * time.Second })
	c.otherWrite()
	want := c.otherWrite()
	start := time.Now()
	f, _, src := ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the question took %v, the bookmark's wait", took)
	}
	if got := src.AsOf()[0].ResourceVersion; got != strconv.FormatUint(want, 10) {
		t.Errorf("AsOf resourceVersion %s, want the LIST's, %d", got, want)
	}
	c.mu.Lock()
	atLeast := c.compareAtLeast
	c.mu.Unlock()
	if atLeast != strconv.FormatUint(want, 10) {
		t.Errorf("the LIST asked for resourceVersion %q or later, want the server's current one, %d", atLeast, want)
	}
	lists, listsEnded, _, watches, watchesStopped, _ := c.compareCounts()
	if lists != 1 || listsEnded != 1 {
		t.Errorf("%d compared LISTs, %d ended, want 1 and 1", lists, listsEnded)
	}
	if watches != 1 || watchesStopped != 1 {
		t.Errorf("%d probe watches, %d stopped, want the one that raced the LIST, stopped", watches, watchesStopped)
	}
	waitUntil(t, "the server to see the probe watch cancelled", func() bool {
		_, _, _, _, _, cancelled := c.compareCounts()
		return cancelled == 1
	})
}

// TestPoolBigStoreThatDiffersWaitsForTheChange: a big store a write is on its
// way to differs from the LIST of its objects, so the LIST proves nothing:
// the question waits for the probe to bound the changes and the store to
// apply the write, however soon the LIST answered.
func TestPoolBigStoreThatDiffersWaitsForTheChange(t *testing.T) {
	c, p := racingPool(t)
	c.locked(func() { c.bookmarkAfter = 300 * time.Millisecond })
	c.hold(true)
	wrote := c.write("web-3")
	c.otherWrite()
	c.releaseAfter(200 * time.Millisecond)
	f, inf, _ := ask(t, p, Freshness{}, informer.Config{})
	defer f.Shutdown()
	obj, _, _ := inf.GetStore().GetByKey("shop/web-3")
	if got := obj.(*metav1.PartialObjectMetadata).ResourceVersion; got != strconv.FormatUint(wrote, 10) {
		t.Errorf("web-3 at resourceVersion %s, want the write's, %d", got, wrote)
	}
	if lists, listsEnded, _, watches, _, _ := c.compareCounts(); lists != 1 || listsEnded != 1 || watches != 1 {
		t.Errorf("%d compared LISTs (%d ended) and %d probe watches, want one of each", lists, listsEnded, watches)
	}

	// A deletion on its way: the store holds one object more than the LIST.
	c.hold(true)
	c.deleteIn("shop", "web-4")
	c.otherWrite()
	c.releaseAfter(200 * time.Millisecond)
	f2, inf, _ := ask(t, p, Freshness{}, informer.Config{})
	defer f2.Shutdown()
	if slices.Contains(names(inf), "shop/web-4") {
		t.Errorf("store %v still holds a pod deleted before the question", names(inf))
	}
}

// TestPoolBigStoreSlowListLosesToTheWatch: when the probe's watch proves the
// store current first, the LIST racing it is cancelled and has ended by the
// time the question has its answer: nothing of the race outlives it.
func TestPoolBigStoreSlowListLosesToTheWatch(t *testing.T) {
	c, p := racingPool(t)
	c.locked(func() { c.compareAfter = 5 * time.Second })
	c.otherWrite()
	start := time.Now()
	f, _, _ := ask(t, p, Freshness{}, informer.Config{})
	f.Shutdown()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the question took %v, the LIST's wait", took)
	}
	lists, listsEnded, listsCancelled, watches, _, _ := c.compareCounts()
	if lists != 1 || listsEnded != 1 || listsCancelled != 1 || watches != 1 {
		t.Errorf("%d compared LISTs, %d ended, %d cancelled, and %d probe watches, want the LIST that raced the watch, ended and cancelled, and one watch", lists, listsEnded, listsCancelled, watches)
	}
}

// TestPoolTellsTheQuestionsWaitingForAListWhatItWarnedOf: what a warm
// informer's list warns of (a watch-list the server did not end, listed in
// pages) reaches every question that waited for that list, as a direct run's
// factory tells its own; a later question, which waited for no list, is not
// told it again.
func TestPoolTellsTheQuestionsWaitingForAListWhatItWarnedOf(t *testing.T) {
	c := newFakeCluster(t)
	c.write("a")
	p := newTestPool(t, c, Options{})
	const msg = "the server did not end the watch-list of pods within 10s: listed in pages"
	c.mu.Lock()
	c.onList = func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, w := range p.warm {
			w.warn(podsResource, msg)
		}
	}
	c.mu.Unlock()
	var mu sync.Mutex
	var told []string
	cfg := informer.Config{OnWarning: func(res informer.Resource, w string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, res.Name()+": "+w)
	}}
	heard := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := told
		told = nil
		return out
	}
	f, inf, _ := ask(t, p, Freshness{}, cfg)
	if got := names(inf); !slices.Equal(got, []string{"shop/a"}) {
		t.Errorf("store %v", got)
	}
	f.Shutdown()
	if got, want := heard(), []string{"pods: " + msg}; !slices.Equal(got, want) {
		t.Errorf("the question that waited for the list was told %q, want %q", got, want)
	}
	c.locked(func() { c.onList = nil })
	f, _, _ = ask(t, p, Freshness{}, cfg)
	f.Shutdown()
	if got := heard(); len(got) != 0 {
		t.Errorf("a question lent the synced informer was told %q again", got)
	}
}

// TestPoolHidesWhatWasCreatedAndDeletedOnItsWayToAComparedStore: a pod
// created and deleted again while both changes are on their way to a store is
// absent from the store and from the LIST it is compared with, so the
// comparison shows the store current; when the store then applies the
// creation, the question, which started after the deletion, does not see the
// pod, by any way it reads the store.
func TestPoolHidesWhatWasCreatedAndDeletedOnItsWayToAComparedStore(t *testing.T) {
	c, p := racingPool(t)
	c.locked(func() { c.bookmarkAfter = 5 * time.Second })
	c.hold(true)
	created := c.write("ghost")
	c.deleteIn("shop", "ghost")
	c.otherWrite()
	f, inf, _ := ask(t, p, Freshness{}, informer.Config{})
	defer f.Shutdown()
	if lists, _, _, _, _, _ := c.compareCounts(); lists != 1 {
		t.Fatalf("%d compared LISTs, want this question's shown current by one", lists)
	}
	c.deliverUpTo(created)
	raw := warmIndexer(p)
	waitStoreKey(t, raw, "shop/ghost", true)
	want := []string{"shop/web-1", "shop/web-2", "shop/web-3", "shop/web-4"}
	if got := names(inf); !slices.Equal(got, want) {
		t.Errorf("the question's store keys %v, want %v", got, want)
	}
	if _, ok, _ := inf.GetStore().GetByKey("shop/ghost"); ok {
		t.Error("GetByKey found the pod deleted before the question")
	}
	if n := len(inf.GetIndexer().List()); n != 4 {
		t.Errorf("List has %d objects, want 4", n)
	}
	c.hold(false)
	waitStoreKey(t, raw, "shop/ghost", false)
}

// TestPoolBigStoreThatDiffersCatchesUpWithTheList: a big store a change is on
// its way to differs from the LIST it is compared with; once the store has
// applied the change it holds what the LIST held and is shown current by it,
// not by the bookmark seconds away: when the last write anywhere was of
// another type (the store never applies the LIST's resourceVersion), by
// matching it again; when the change was the last write, by applying the
// LIST's resourceVersion. Until then the question waits: a write made before
// it is never missing from what it reads, and neither is a deletion.
func TestPoolBigStoreThatDiffersCatchesUpWithTheList(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(c *fakeCluster) uint64
		other bool
		check func(t *testing.T, inf cache.SharedIndexInformer, wrote uint64)
	}{
		{name: "an update, then a write of another type", other: true, write: func(c *fakeCluster) uint64 { return c.write("web-3") }, check: atWrite("shop/web-3")},
		{name: "an update, the last write", write: func(c *fakeCluster) uint64 { return c.write("web-3") }, check: atWrite("shop/web-3")},
		{name: "a creation", other: true, write: func(c *fakeCluster) uint64 { return c.write("web-9") }, check: atWrite("shop/web-9")},
		{name: "a deletion", other: true, write: func(c *fakeCluster) uint64 { return c.deleteIn("shop", "web-4") }, check: func(t *testing.T, inf cache.SharedIndexInformer, _ uint64) {
			if slices.Contains(names(inf), "shop/web-4") {
				t.Errorf("store %v holds a pod deleted before the question", names(inf))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, p := racingPool(t)
			c.mu.Lock()
			c.bookmarkAfter = 10 * time.Second
			c.mu.Unlock()
			c.hold(true)
			wrote := tc.write(c)
			if tc.other {
				c.otherWrite()
			}
			type answer struct {
				f   *informer.Factory
				inf cache.SharedIndexInformer
				err error
			}
			done := make(chan answer, 1)
			start := time.Now()
			go func() {
				f, inf, _, err := question(t, p, Freshness{}, informer.Config{})
				done <- answer{f, inf, err}
			}()
			select {
			case a := <-done:
				t.Fatalf("the question had its answer (%v) while the store missed a write made before it: %v", a.err, names(a.inf))
			case <-time.After(300 * time.Millisecond):
			}
			if lists, _, _, _, _, _ := c.compareCounts(); lists != 1 {
				t.Fatalf("%d compared LISTs, want one, which found the store behind", lists)
			}
			c.hold(false)
			a := <-done
			if a.err != nil {
				t.Fatal(a.err)
			}
			defer a.f.Shutdown()
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("the question took %v, the bookmark's wait", took)
			}
			tc.check(t, a.inf, wrote)
			if lists, _, _, _, _, _ := c.compareCounts(); lists != 1 {
				t.Errorf("%d compared LISTs, want the one the store caught up with", lists)
			}
		})
	}
}

// atWrite checks that the store holds key at the resourceVersion written.
func atWrite(key string) func(t *testing.T, inf cache.SharedIndexInformer, wrote uint64) {
	return func(t *testing.T, inf cache.SharedIndexInformer, wrote uint64) {
		t.Helper()
		obj, ok, _ := inf.GetStore().GetByKey(key)
		if !ok {
			t.Fatalf("store %v lacks %s, written before the question", names(inf), key)
		}
		if got := obj.(*metav1.PartialObjectMetadata).ResourceVersion; got != strconv.FormatUint(wrote, 10) {
			t.Errorf("%s at resourceVersion %s, want the write's, %d", key, got, wrote)
		}
	}
}

// TestPoolBigStoreThatCaughtUpHidesWhatWasCreatedAndDeleted: a store that
// caught up with the LIST it differed from while a pod's creation and
// deletion were still on their way to it hides that pod, once it applies the
// creation, from the question, which started after the deletion.
func TestPoolBigStoreThatCaughtUpHidesWhatWasCreatedAndDeleted(t *testing.T) {
	c, p := racingPool(t)
	c.mu.Lock()
	c.bookmarkAfter = 10 * time.Second
	c.mu.Unlock()
	c.hold(true)
	wrote := c.write("web-3")
	created := c.write("ghost")
	c.deleteIn("shop", "ghost")
	c.otherWrite()
	go func() {
		time.Sleep(200 * time.Millisecond)
		c.deliverUpTo(wrote)
	}()
	f, inf, _, err := question(t, p, Freshness{}, informer.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Shutdown()
	atWrite("shop/web-3")(t, inf, wrote)
	c.deliverUpTo(created)
	raw := warmIndexer(p)
	waitStoreKey(t, raw, "shop/ghost", true)
	if want := []string{"shop/web-1", "shop/web-2", "shop/web-3", "shop/web-4"}; !slices.Equal(names(inf), want) {
		t.Errorf("the question's store keys %v, want %v", names(inf), want)
	}
	if _, ok, _ := inf.GetStore().GetByKey("shop/ghost"); ok {
		t.Error("GetByKey found the pod deleted before the question")
	}
	c.hold(false)
}

// questionAll is question over every namespace.
func questionAll(t *testing.T, p *Pool) (*informer.Factory, cache.SharedIndexInformer, error) {
	t.Helper()
	src := p.Source(Freshness{Start: time.Now()}, "", nil)
	f, err := src.NewFactory(nil, informer.Config{})
	if err != nil {
		t.Fatal(err)
	}
	inf, err := f.Informer(podsResource, informer.MetadataOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.Start(ctx)
	return f, inf, f.WaitForSync(ctx)
}

// TestPoolBigStoreOfEveryNamespaceMissesNoWrite: a big store of every
// namespace is shown current by the LIST of its objects, not by the bookmark
// seconds away; a write on its way to it, in a namespace it holds objects of
// or in one it holds nothing of, keeps the question waiting until the store
// has it.
func TestPoolBigStoreOfEveryNamespaceMissesNoWrite(t *testing.T) {
	c := newFakeCluster(t)
	for _, key := range []string{"a/web-1", "a/web-2", "a/web-3", "b/db-1", "c/job-1"} {
		ns, name, _ := strings.Cut(key, "/")
		c.writeIn(ns, name)
	}
	p := newTestPool(t, c, Options{})
	p.compareUpTo, p.raceUpTo = 2, 10
	f, _, err := questionAll(t, p)
	if err != nil {
		t.Fatal(err)
	}
	f.Shutdown()
	c.mu.Lock()
	c.bookmarkAfter = 10 * time.Second
	c.mu.Unlock()
	c.otherWrite()
	start := time.Now()
	f, _, err = questionAll(t, p)
	if err != nil {
		t.Fatal(err)
	}
	f.Shutdown()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the question took %v, the bookmark's wait", took)
	}
	if lists, _, _, _, _, _ := c.compareCounts(); lists != 1 {
		t.Errorf("%d compared LISTs, want 1", lists)
	}

	for _, key := range []string{"a/web-2", "new/web-1", "b/db-1"} {
		t.Run(key, func(t *testing.T) {
			ns, name, _ := strings.Cut(key, "/")
			c.hold(true)
			wrote := c.writeIn(ns, name)
			c.otherWrite()
			done := make(chan error, 1)
			var inf cache.SharedIndexInformer
			var f *informer.Factory
			go func() {
				var err error
				f, inf, err = questionAll(t, p)
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("the question had its answer (%v) while the store missed %s, written before it", err, key)
			case <-time.After(300 * time.Millisecond):
			}
			c.hold(false)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			defer f.Shutdown()
			atWrite(key)(t, inf, wrote)
		})
	}
}
