package query_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// target is the target of context name over a server holding objs, in shop.
func target(t *testing.T, name string, objs ...runtime.Object) query.Target {
	t.Helper()
	return faketarget.New(t, name, fakeapi.New(nil, objs...), "shop", fixtures.APIResources())
}

// TestAsk: every target is asked, its answer in the targets' order with its
// context; a target that cannot be resolved, one whose server refuses and
// one that answers in part each say so beside the others' answers.
func TestAsk(t *testing.T) {
	forbidden := fakeapi.New(nil, fixtures.ListObjects()...)
	fixtures.ForbidPodLists(forbidden, "shop")
	unresolved := errors.New(`context "beta": cluster "gone" not found`)
	targets := []query.Target{
		target(t, "alpha", fixtures.ListObjects()...),
		{Context: "beta", Err: unresolved},
		faketarget.New(t, "gamma", forbidden, "shop", fixtures.APIResources()),
		target(t, "delta", fixtures.Pod("shop", "web-0", "web", true)),
	}
	answers := query.Ask(testContext(t), targets, query.Config{SyncTimeout: 20 * time.Second}, func(ctx context.Context, s *query.Session) (*query.Listing, error) {
		return s.Get(ctx, query.GetQuery{Args: []string{"pods", "web-0", "web-1"}})
	})

	var contexts []string
	for _, a := range answers {
		contexts = append(contexts, a.Context)
	}
	if want := []string{"alpha", "beta", "gamma", "delta"}; !slices.Equal(contexts, want) {
		t.Fatalf("answers of %q, want %q", contexts, want)
	}
	if a := answers[0]; a.Err != nil || a.Value == nil || objects(a.Value) != 2 || a.Value.Scope != "shop" {
		t.Errorf("alpha: %+v, want both pods of shop", a)
	}
	if a := answers[1]; !errors.Is(a.Err, unresolved) || a.Value != nil {
		t.Errorf("beta: value %v, error %v; want no value and the resolution's error", a.Value, a.Err)
	}
	if a := answers[2]; a.Value != nil || a.Err == nil || !strings.Contains(a.Err.Error(), "forbidden") {
		t.Errorf("gamma: value %v, error %v; want the server's refusal", a.Value, a.Err)
	}
	// An answer in part: the pod found, and kubectl's error for the other.
	if a := answers[3]; a.Value == nil || objects(a.Value) != 1 || a.Err == nil || a.Err.Error() != `pods "web-1" not found` {
		t.Errorf("delta: value %+v, error %v; want web-0 and pods \"web-1\" not found", a.Value, a.Err)
	}
}

// objects counts a listing's objects.
func objects(l *query.Listing) int {
	n := 0
	for _, m := range l.Members {
		n += len(m.Objects)
	}
	return n
}

// TestAskWarnings: each answer carries its own session's warnings, and none
// of another target's.
func TestAskWarnings(t *testing.T) {
	targets := []query.Target{target(t, "a"), target(t, "b")}
	unknown := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	answers := query.Ask(testContext(t), targets, query.Config{}, func(ctx context.Context, s *query.Session) (int, error) {
		if s.Config().Context == "b" {
			// A kind the mapper lacks: its table cannot be read.
			obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "w"}}
			s.Tables(ctx, []v1alpha1.Members{{GVK: unknown, Objects: []runtime.Object{obj}}}, nil)
		}
		return 1, nil
	})
	if len(answers[0].Warnings) != 0 || answers[0].Warnings == nil {
		t.Errorf("a's warnings %#v, want an empty list", answers[0].Warnings)
	}
	if len(answers[1].Warnings) != 1 || answers[1].Value != 1 || answers[1].Err != nil {
		t.Errorf("b: %+v, want its value and one warning", answers[1])
	}
}

// TestAskBounded: at most MaxConcurrentTargets clusters are asked at once,
// and more than one.
func TestAskBounded(t *testing.T) {
	targets := make([]query.Target, 3*query.MaxConcurrentTargets)
	for i := range targets {
		targets[i].Context = string(rune('a' + i))
	}
	var active, most atomic.Int32
	answers := query.Ask(testContext(t), targets, query.Config{}, func(ctx context.Context, s *query.Session) (string, error) {
		n := active.Add(1)
		defer active.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		return s.Config().Context, nil
	})
	if m := most.Load(); m > query.MaxConcurrentTargets || m < 2 {
		t.Errorf("%d asked at once, want 2 to %d", m, query.MaxConcurrentTargets)
	}
	for i, a := range answers {
		if a.Value != targets[i].Context || a.Context != targets[i].Context {
			t.Errorf("answer %d is %q of context %q, want %q's own", i, a.Value, a.Context, targets[i].Context)
		}
	}
}

// TestAskProgress: the progress line is drawn for the one context of a plain
// run only.
func TestAskProgress(t *testing.T) {
	progress := func(targets ...query.Target) []bool {
		cfg := query.Config{Progress: io.Discard}
		var out []bool
		for _, a := range query.Ask(testContext(t), targets, cfg, func(_ context.Context, s *query.Session) (bool, error) {
			return s.Config().Progress != nil, nil
		}) {
			out = append(out, a.Value)
		}
		return out
	}
	if got := progress(query.Target{}); !slices.Equal(got, []bool{true}) {
		t.Errorf("one context: progress %v, want it", got)
	}
	if got := progress(query.Target{Context: "a"}, query.Target{Context: "b"}); !slices.Equal(got, []bool{false, false}) {
		t.Errorf("two contexts: progress %v, want none", got)
	}
}

// feedRecorder collects a merged feed's events and the targets that ended.
type feedRecorder struct {
	mu     sync.Mutex
	events []*feed.Event
	ended  []query.Answer[struct{}]
}

func (r *feedRecorder) emit(ev *feed.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	return nil
}

func (r *feedRecorder) end(a query.Answer[struct{}]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, a)
}

// endedSoFar returns the feeds ended so far.
func (r *feedRecorder) endedSoFar() []query.Answer[struct{}] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ended)
}

// names are the context/name of the events so far.
func (r *feedRecorder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, ev := range r.events {
		m, _ := ev.Object.(metav1.Object)
		out = append(out, ev.Context+"/"+m.GetName())
	}
	return out
}

// followPods follows the pods of targets (narrowed to what owner owns when
// it is set) into r with emit, until ctx ends.
func followPods(ctx context.Context, targets []query.Target, owner string, r *feedRecorder, emit func(*feed.Event) error) error {
	return query.Follow(ctx, targets, query.Config{SyncTimeout: 20 * time.Second}, query.FeedQuery{Args: []string{"pods"}, Owner: owner}, query.FeedOutput{
		Start: func([]query.FeedPlan, []schema.GroupVersionKind) error { return nil },
		Emit:  emit,
		Flush: func() error { return nil },
		Ended: r.end,
	})
}

// TestFollow: the feeds of several targets come as one, every event with its
// context; a target that cannot start is reported as it ends while the
// others go on, and Follow ends with ctx.
func TestFollow(t *testing.T) {
	targets := []query.Target{
		target(t, "alpha", fixtures.Pod("shop", "a-0", "web", true)),
		{Context: "down", Err: errors.New("connection refused")},
		target(t, "beta", fixtures.Pod("shop", "b-0", "web", true), fixtures.Pod("shop", "b-1", "web", true)),
	}
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	r := &feedRecorder{}
	done := make(chan error, 1)
	go func() { done <- followPods(ctx, targets, "", r, r.emit) }()
	for deadline := time.Now().Add(20 * time.Second); len(r.names()) < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("events %q, want the three pods", r.names())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow = %v, want nil once ctx ends", err)
	}
	got := r.names()
	slices.Sort(got)
	if want := []string{"alpha/a-0", "beta/b-0", "beta/b-1"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	if len(r.ended) != 1 || r.ended[0].Context != "down" || r.ended[0].Err == nil {
		t.Errorf("ended %+v, want down's failure alone", r.ended)
	}
}

// TestFollowFeedFails: a feed that cannot be planned (its --owner does not
// exist there) is reported with its error; the other's events keep coming.
func TestFollowFeedFails(t *testing.T) {
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "gone", UID: "web-uid"}}
	ok := target(t, "ok", fixtures.Pod("shop", "a-0", "web", true), web)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	r := &feedRecorder{}
	done := make(chan error, 1)
	go func() { done <- followPods(ctx, []query.Target{target(t, "owned"), ok}, "deployment/gone", r, r.emit) }()
	for deadline := time.Now().Add(20 * time.Second); len(r.endedSoFar()) < 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("owned never ended; events %q", r.names())
		}
	}
	cancel()
	<-done
	if len(r.ended) != 1 || r.ended[0].Context != "owned" || r.ended[0].Err.Error() != `deployments.apps "gone" not found` {
		t.Errorf("ended %+v, want owned's deployment not found", r.ended)
	}
}

// TestFollowPrintError: an error of the printer ends every feed and is what
// Follow returns; no target is reported as failed for it.
func TestFollowPrintError(t *testing.T) {
	targets := []query.Target{target(t, "a", fixtures.Pod("shop", "a-0", "web", true)), target(t, "b", fixtures.Pod("shop", "b-0", "web", true))}
	closed := errors.New("write |1: broken pipe")
	r := &feedRecorder{}
	err := followPods(testContext(t), targets, "", r, func(*feed.Event) error { return closed })
	if !errors.Is(err, closed) {
		t.Errorf("Follow = %v, want the printer's %v", err, closed)
	}
	if len(r.ended) != 0 {
		t.Errorf("ended %+v, want none", r.ended)
	}
}
