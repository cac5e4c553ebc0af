package served

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/pool"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// TestRunBinds: a served run answers from the pool only its one
// context; it declines several, and lends the pool's informers with the
// asker's checks.
func TestRunBinds(t *testing.T) {
	s := fakeapi.New(nil)
	warmPool, err := pool.NewWithClients(informer.Clients{Typed: s.Typed, Dynamic: s.Dynamic, Metadata: s.Metadata}, pool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer warmPool.Close()
	cfg := &rest.Config{Host: "https://cluster.invalid:6443", BearerToken: "token"}
	srv := New(Options{})
	srv.pool = warmPool
	srv.podResources = index.NewPodResourcesCache(t.Context(), time.Minute)
	run := srv.Run(&warm.RunRequest{Args: []string{"pods"}})
	target := query.Target{RESTConfig: cfg}
	a, b := target, target
	a.Context, b.Context = "a", "b"
	broken := query.Target{Err: errors.New("no cluster")}
	for name, targets := range map[string][]query.Target{
		"several contexts": {a, b},
		"a broken context": {broken},
	} {
		if _, err := run.Bind(targets, 0); err != ErrDecline {
			t.Errorf("%s: bind error %v, want a decline", name, err)
		}
	}
	bound, err := run.Bind([]query.Target{target}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if bound[0].Source == nil || bound[0].Source != run.source || run.maxStaleness != time.Minute {
		t.Error("the bound target does not borrow from the pool")
	}
	if bound[0].PodResources == nil || bound[0].PodResources != srv.podResources {
		t.Error("the bound target does not add up pods' resources as the process keeps them")
	}
}

// TestUnauthorizedPolicy: a token, certificate or password rejected once
// ends the process; credentials client-go renews (an exec plugin's) are
// borne until rejectedInARow 401s come with no other answer between.
func TestUnauthorizedPolicy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		renewed  bool
		statuses []int
		want     bool
	}{
		{name: "token, one 401", statuses: []int{401}, want: true},
		{name: "token, answers", statuses: []int{200, 200}},
		{name: "exec, two 401s", renewed: true, statuses: []int{401, 401}},
		{name: "exec, 401s with an answer between", renewed: true, statuses: []int{401, 401, 200, 401, 401}},
		{name: "exec, three 401s in a row", renewed: true, statuses: []int{401, 401, 401}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := int32(1)
			if tc.renewed {
				limit = rejectedInARow
			}
			rejected := false
			u := &unauthorized{limit: limit, rejected: func() { rejected = true }}
			i := 0
			rt := &unauthorizedRoundTripper{u: u, next: roundTripFunc(func(*http.Request) (*http.Response, error) {
				code := tc.statuses[i]
				i++
				return &http.Response{StatusCode: code, Body: http.NoBody}, nil
			})}
			for range tc.statuses {
				if _, err := rt.RoundTrip(&http.Request{}); err != nil {
					t.Fatal(err)
				}
			}
			if rejected != tc.want {
				t.Errorf("rejected %v, want %v", rejected, tc.want)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWarnStale: an answer whose types were shown current before the command
// started says how long before, naming each such type once; a fresh one says
// nothing.
func TestWarnStale(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	pods := informer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}
	rs := informer.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}}
	var b strings.Builder
	warnStale(&b, []pool.AsOf{
		{Resource: pods, Namespace: "a", Time: start.Add(-3 * time.Second)},
		{Resource: pods, Namespace: "b", Time: start.Add(-12500 * time.Millisecond)},
		{Resource: rs, Time: start.Add(time.Second)},
	}, start, time.Minute)
	if want := "warning: answered from the warm cache as it was 12.5s before this command (--max-staleness=1m0s): pods\n"; b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	warnStale(&b, []pool.AsOf{{Resource: rs, Time: start}}, start, time.Minute)
	if b.String() != "" {
		t.Errorf("a fresh answer warned %q", b.String())
	}
}
