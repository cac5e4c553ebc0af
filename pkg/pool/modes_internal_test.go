package pool

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// settledProber is a server whose current resourceVersion, "1", every store
// the fake API server lists has applied: each store is current at once.
type settledProber struct{}

func (settledProber) current(context.Context, *warm) (string, error) { return "1", nil }

func (settledProber) compare(context.Context, *warm, int64, string, func(_, _, _ []byte) bool) (string, bool, error) {
	return "1", true, nil
}

func (settledProber) watch(context.Context, *warm, string, bool) (watch.Interface, error) {
	return watch.NewEmptyWatch(), nil
}

// newTypedPool returns a pool over a fake API server holding two pods of
// the shop, whole (typed) and as metadata.
func newTypedPool(t *testing.T) (*Pool, *fakeapi.Server) {
	t.Helper()
	s := fakeapi.New(nil, fixtures.Pod("shop", "web-1", "web", true), fixtures.Pod("shop", "web-2", "web", true))
	p, err := newPool(fixtures.Clients(s), settledProber{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.compareUpTo, p.raceUpTo = 0, 0
	t.Cleanup(p.Close)
	return p, s
}

// modeQuestion borrows the shop's pods in mode from p as one question
// started now and waits for them.
func modeQuestion(t *testing.T, p *Pool, mode informer.Mode) (*informer.Factory, cache.SharedIndexInformer) {
	t.Helper()
	f, inf, _, err := podsQuestion(t, p, Freshness{Start: time.Now()}, informer.Config{Namespace: "shop"}, mode)
	if err != nil {
		t.Fatalf("%s question: %v", mode, err)
	}
	return f, inf
}

// lists counts the LISTs of pods the fake server answered: typed (whole
// objects) and metadata-only.
func lists(s *fakeapi.Server) (typed, metadata int) {
	for _, r := range s.Requests() {
		if !r.Watch && !r.Table {
			typed++
		}
	}
	for _, a := range s.Metadata.Actions() {
		if a.GetVerb() == "list" {
			metadata++
		}
	}
	return typed, metadata
}

// modes returns the modes of the pool's informers.
func modes(p *Pool) []informer.Mode {
	var out []informer.Mode
	for _, w := range p.Status().Informers {
		out = append(out, w.Mode)
	}
	return out
}

func TestPoolLendsAWiderInformer(t *testing.T) {
	p, s := newTypedPool(t)
	full, fullInf := modeQuestion(t, p, informer.Full)
	defer full.Shutdown()
	for _, mode := range []informer.Mode{informer.MetadataOnly, informer.Summary} {
		f, inf := modeQuestion(t, p, mode)
		if inf.GetStore() != fullInf.GetStore() {
			t.Errorf("a %s question got a store of its own, want the Full one the pool holds", mode)
		}
		// A metadata question reads the whole pods through their metadata.
		if got := len(inf.GetStore().List()); got != 2 {
			t.Errorf("a %s question reads %d pods, want 2", mode, got)
		} else if _, ok := inf.GetStore().List()[0].(*corev1.Pod); !ok {
			t.Errorf("a %s question reads %T, want the Full informer's *v1.Pod", mode, inf.GetStore().List()[0])
		}
		f.Shutdown()
	}
	if typed, metadata := lists(s); typed != 1 || metadata != 0 {
		t.Errorf("%d typed and %d metadata lists, want the Full informer's one alone", typed, metadata)
	}
	if got := modes(p); !slices.Equal(got, []informer.Mode{informer.Full}) {
		t.Errorf("the pool holds informers in modes %v, want one Full", got)
	}
}

func TestPoolRetiresCoveredInformers(t *testing.T) {
	p, s := newTypedPool(t)
	// Each question in a wider mode lists its own copy, and once nobody
	// holds the narrower one, the pool forgets it.
	for _, step := range []struct {
		mode informer.Mode
		want []informer.Mode
	}{
		{informer.MetadataOnly, []informer.Mode{informer.MetadataOnly}},
		{informer.Summary, []informer.Mode{informer.Summary}},
		{informer.Full, []informer.Mode{informer.Full}},
	} {
		f, _ := modeQuestion(t, p, step.mode)
		f.Shutdown()
		if got := modes(p); !slices.Equal(got, step.want) {
			t.Errorf("after a %s question the pool holds modes %v, want %v", step.mode, got, step.want)
		}
	}
	if got := p.Status().Dropped; got != 2 {
		t.Errorf("%d informers dropped, want the metadata and summary ones", got)
	}
	typed, metadata := lists(s)
	// A metadata question now is lent the Full informer.
	f, _ := modeQuestion(t, p, informer.MetadataOnly)
	f.Shutdown()
	if typed2, metadata2 := lists(s); typed2 != typed || metadata2 != metadata {
		t.Errorf("a metadata question after the Full one listed again (%d typed, %d metadata lists, want %d and %d)", typed2, metadata2, typed, metadata)
	}
}

func TestPoolKeepsACoveredInformerInUse(t *testing.T) {
	p, _ := newTypedPool(t)
	meta, metaInf := modeQuestion(t, p, informer.MetadataOnly)
	full, _ := modeQuestion(t, p, informer.Full)
	full.Shutdown()
	if got := modes(p); !slices.Equal(got, []informer.Mode{informer.Full, informer.MetadataOnly}) {
		t.Errorf("the pool holds modes %v while a question holds the metadata informer, want both", got)
	}
	if got := len(metaInf.GetStore().List()); got != 2 || metaInf.IsStopped() {
		t.Errorf("the metadata informer in use holds %d pods (stopped: %v), want 2, running", got, metaInf.IsStopped())
	}
	meta.Shutdown()
	if got := modes(p); !slices.Equal(got, []informer.Mode{informer.Full}) {
		t.Errorf("the pool holds modes %v once the metadata informer is handed back, want the Full one alone", got)
	}
}

// nsQuestion borrows the pods of namespace (all of them when empty) in
// Full mode from p as one question started now and waits for them.
func nsQuestion(t *testing.T, p *Pool, namespace string) (*informer.Factory, cache.SharedIndexInformer) {
	t.Helper()
	f, inf, _, err := podsQuestion(t, p, Freshness{Start: time.Now()}, informer.Config{Namespace: namespace}, informer.Full)
	if err != nil {
		t.Fatal(err)
	}
	return f, inf
}

// TestPoolInformersShareParts: the pool's informers keep one copy of what
// their objects have in common, across informers too: the pods of the shop
// listed by a namespace's informer and by the all-namespaces one are two
// objects each, with one copy of their labels and owner references
// between them.
func TestPoolInformersShareParts(t *testing.T) {
	p, _ := newTypedPool(t)
	shop, shopInf := nsQuestion(t, p, "shop")
	defer shop.Shutdown()
	all, allInf := nsQuestion(t, p, "")
	defer all.Shutdown()
	get := func(inf cache.SharedIndexInformer, key string) *corev1.Pod {
		obj, ok, err := inf.GetStore().GetByKey(key)
		if err != nil || !ok {
			t.Fatalf("%s not in the store: %v", key, err)
		}
		return obj.(*corev1.Pod)
	}
	a, b := get(shopInf, "shop/web-1"), get(allInf, "shop/web-1")
	if a == b {
		t.Fatal("two informers hold one pod object")
	}
	if !sameMap(a.Labels, b.Labels) || !sameMap(a.Labels, get(allInf, "shop/web-2").Labels) {
		t.Error("the pods of the shop have labels of their own in each informer")
	}
}

// sameMap reports whether a and b are one map.
func sameMap(a, b map[string]string) bool {
	return a != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
