package pool

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// fakeAsker is an Asker whose API server allows the namespaces in allowed
// (Forbidden elsewhere) and answers each check once release is closed, when
// it is set.
type fakeAsker struct {
	mu      sync.Mutex
	allowed map[string]bool
	checks  []string
	release chan struct{}
}

func newFakeAsker(allowed ...string) *fakeAsker {
	a := &fakeAsker{allowed: map[string]bool{}}
	for _, ns := range allowed {
		a.allowed[ns] = true
	}
	return a
}

func (a *fakeAsker) Check(ctx context.Context, res informer.Resource, namespace, labelSelector, fieldSelector string) error {
	a.mu.Lock()
	a.checks = append(a.checks, res.Name()+" in "+namespace)
	release, ok := a.release, a.allowed[namespace]
	a.mu.Unlock()
	if release != nil {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if !ok {
		return apierrors.NewForbidden(schema.GroupResource{Resource: res.GVR.Resource}, "", errors.New(`User "jane" cannot list resource "pods" in API group "" in the namespace "`+namespace+`"`))
	}
	return nil
}

func (a *fakeAsker) revoke(namespace string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.allowed, namespace)
}

func (a *fakeAsker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.checks)
}

// askedQuestion is question with an asker.
func askedQuestion(t *testing.T, p *Pool, fresh Freshness, asker Asker, partial bool) (*informer.Factory, []informer.Skipped, error) {
	t.Helper()
	if fresh.Start.IsZero() {
		fresh.Start = time.Now()
	}
	f, err := p.Source(fresh, "", asker).NewFactory(nil, informer.Config{Namespace: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Informer(podsResource, informer.MetadataOnly, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := startFor(f)
	defer cancel()
	if partial {
		skipped, err := f.WaitForSyncPartial(ctx)
		return f, skipped, err
	}
	return f, nil, f.WaitForSync(ctx)
}

// TestPoolAsksTheAskerEveryQuestion: a warm informer is read by a question
// only once the API server has said, for that question, that its asker may
// list what it holds; access revoked since the informer was listed fails the
// next question with the API server's Forbidden, and --max-staleness skips
// the freshness proof, never the check.
func TestPoolAsksTheAskerEveryQuestion(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	asker := newFakeAsker("shop")
	for i := range 2 {
		f, _, err := askedQuestion(t, p, Freshness{}, asker, false)
		if err != nil {
			t.Fatalf("question %d: %v", i, err)
		}
		f.Shutdown()
		if got := asker.count(); got != i+1 {
			t.Fatalf("after question %d: %d checks, want one per question", i, got)
		}
	}
	asker.revoke("shop")
	for name, fresh := range map[string]Freshness{"fresh": {}, "stale an hour": {MaxStaleness: time.Hour}} {
		f, _, err := askedQuestion(t, p, fresh, asker, false)
		f.Shutdown()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s, access revoked: %v, want Forbidden", name, err)
		}
	}
	if lists, _, _ := c.counts(); lists != 1 {
		t.Errorf("%d lists: the warm informer was listed again", lists)
	}
}

// TestPoolDeniedTypeReadsEmpty: over many types (WaitForSyncPartial), a type
// the asker may not read is skipped with the API server's error and reads
// as an empty informer, though the warm one holds objects.
func TestPoolDeniedTypeReadsEmpty(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	f, _, err := askedQuestion(t, p, Freshness{}, newFakeAsker("shop"), false)
	if err != nil {
		t.Fatal(err)
	}
	f.Shutdown()

	f = shopFactory(t, p, newFakeAsker())
	defer f.Shutdown()
	inf, err := f.Informer(podsResource, informer.MetadataOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := startFor(f)
	defer cancel()
	skipped, err := f.WaitForSyncPartial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0].Resource.Name() != "pods" || !apierrors.IsForbidden(skipped[0].Err) {
		t.Fatalf("skipped %+v, want pods, Forbidden", skipped)
	}
	if keys := inf.GetStore().ListKeys(); len(keys) != 0 {
		t.Errorf("a denied question reads %v", keys)
	}
	if got := names(p.warm[keyFor(informer.Config{Namespace: "shop"}, podsResource, informer.MetadataOnly)].inf); !slices.Equal(got, []string{"shop/web-1"}) {
		t.Errorf("the warm informer holds %v after a denied question, want it untouched", got)
	}
}

// TestPoolStreamWaitsForTheAsker: the question that starts a warm informer
// of a streamed listing is handed its first list as it arrives, but not
// before its asker is allowed to read it; denied, it gets nothing and fails
// with the API server's error.
func TestPoolStreamWaitsForTheAsker(t *testing.T) {
	for _, allowed := range []bool{true, false} {
		c := newFakeCluster(t)
		c.write("web-1")
		p := newTestPool(t, c, Options{})
		asker := newFakeAsker()
		if allowed {
			asker.allowed["shop"] = true
		}
		asker.release = make(chan struct{})
		rec := &pageRecorder{}
		f, ctx, cancel := streamQuestion(t, p, asker, rec)
		waited := make(chan error, 1)
		go func() { waited <- f.WaitForSync(ctx) }()
		// The warm informer lists meanwhile: its first page waits.
		deadline := time.Now().Add(5 * time.Second)
		for lists, _, _ := c.counts(); lists == 0 && time.Now().Before(deadline); lists, _, _ = c.counts() {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		rec.mu.Lock()
		early := len(rec.pages)
		rec.mu.Unlock()
		if early != 0 {
			t.Errorf("allowed %v: the sink had %d pages before the check answered", allowed, early)
		}
		close(asker.release)
		err := <-waited
		cancel()
		f.Shutdown()
		rec.readers.Wait()
		switch {
		case allowed && err != nil:
			t.Errorf("allowed: %v", err)
		case allowed && len(rec.pages) != 1:
			t.Errorf("allowed: %d pages, want the list", len(rec.pages))
		case !allowed && !apierrors.IsForbidden(err):
			t.Errorf("denied: %v, want Forbidden", err)
		case !allowed && len(rec.pages) != 0:
			t.Errorf("denied: the sink had %d pages", len(rec.pages))
		}
	}
}

// TestFactoryOwnInformerWaitsForTheAsker: an informer a factory of the cache
// server runs for a question alone (a feed's, which the pool does not lend)
// does not list before its asker is allowed to, and fails as its list would
// when denied.
func TestFactoryOwnInformerWaitsForTheAsker(t *testing.T) {
	c := newFakeCluster(t)
	c.write("web-1")
	p := newTestPool(t, c, Options{})
	f := shopFactory(t, p, newFakeAsker())
	if _, err := f.FeedInformer(podsResource, informer.MetadataOnly, informer.NewCursor(podsResource, nil, nil)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := startFor(f)
	defer cancel()
	defer f.Shutdown()
	if err := f.WaitForSync(ctx); !apierrors.IsForbidden(err) {
		t.Errorf("WaitForSync: %v, want Forbidden", err)
	}
	if lists, _, _ := c.counts(); lists != 0 {
		t.Errorf("%d lists for an asker who may not list", lists)
	}
}

// TestAskerRate: the asker's checks go at a question's rate, 50 a second in
// bursts of 300, unless the asker's connection sets one: client-go's default
// (5 a second, bursts of 10) made a warm tree or history, thirty and more
// checks, wait four seconds.
func TestAskerRate(t *testing.T) {
	got := metadataConfig(&rest.Config{Host: "https://x"})
	if got.QPS != 50 || got.Burst != 300 {
		t.Errorf("QPS %v, burst %d, want 50 and 300", got.QPS, got.Burst)
	}
	got = metadataConfig(&rest.Config{Host: "https://x", QPS: 7, Burst: 9})
	if got.QPS != 7 || got.Burst != 9 {
		t.Errorf("QPS %v, burst %d, want the connection's 7 and 9", got.QPS, got.Burst)
	}
	set := &rest.Config{Host: "https://x"}
	metadataConfig(set)
	if set.QPS != 0 {
		t.Errorf("the connection's config was changed: QPS %v", set.QPS)
	}
}
