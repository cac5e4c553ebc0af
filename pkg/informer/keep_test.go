package informer_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// pageSink is a PageSink that keeps every page it takes, each as the
// namespace/name keys of its objects in the order given.
type pageSink struct {
	mu    sync.Mutex
	pages [][]string
}

func (s *pageSink) Page(_ context.Context, items []runtime.Object, _ bool, _ string) error {
	page := make([]string, 0, len(items))
	for _, it := range items {
		key, err := cache.MetaNamespaceKeyFunc(it)
		if err != nil {
			return err
		}
		page = append(page, key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages = append(s.pages, page)
	return nil
}

// keys are the keys of every object taken, in order.
func (s *pageSink) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Concat(s.pages...)
}

// names are the names of every object taken, in order.
func (s *pageSink) names() []string {
	var out []string
	for _, key := range s.keys() {
		_, name, _ := cache.SplitMetaNamespaceKey(key)
		out = append(out, name)
	}
	return out
}

// sizes are the numbers of objects of each page taken, in order.
func (s *pageSink) sizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, page := range s.pages {
		out = append(out, len(page))
	}
	return out
}

// streamPods streams the pods f lists in mode to a pageSink, and returns the
// sink once f has synced.
func streamPods(t *testing.T, f *informer.Factory, mode informer.Mode) *pageSink {
	t.Helper()
	sink := &pageSink{}
	if _, err := f.StreamInformer(podsRes, mode, sink); err != nil {
		t.Fatal(err)
	}
	if err := startAndSync(t, f); err != nil {
		t.Fatalf("WaitForSync: %v", err)
	}
	return sink
}

// TestFactoryKeep: objects Keep refuses never reach a store or a PageSink, in
// every mode and through every client; Keep sees them transformed (no
// managedFields).
func TestFactoryKeep(t *testing.T) {
	objects := []runtime.Object{
		testPod("shop", "web-0", map[string]string{"app": "web"}),
		testPod("shop", "web-1", map[string]string{"app": "api"}),
		testPod("shop", "web-2", map[string]string{"app": "web"}),
		testCronTab("shop", "nightly"),
		testCronTab("shop", "hourly"),
	}
	keep := func(t *testing.T) func(informer.Resource, runtime.Object) bool {
		return func(r informer.Resource, obj runtime.Object) bool {
			a, err := meta.Accessor(obj)
			if err != nil {
				t.Errorf("Keep got %T: %v", obj, err)
				return false
			}
			if a.GetManagedFields() != nil {
				t.Errorf("Keep saw %s with its managedFields", a.GetName())
			}
			return a.GetLabels()["app"] == "web" || r.GVK.Kind == "CronTab" && a.GetName() == "nightly"
		}
	}
	for _, tc := range []struct {
		name string
		res  informer.Resource
		mode informer.Mode
		want []string
	}{
		{"full pods", podsRes, informer.Full, []string{"shop/web-0", "shop/web-2"}},
		{"metadata-only pods", podsRes, informer.MetadataOnly, []string{"shop/web-0", "shop/web-2"}},
		{"summary pods", podsRes, informer.Summary, []string{"shop/web-0", "shop/web-2"}},
		{"custom resources", crontabsRes, informer.Full, []string{"shop/nightly"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Pages of one object: a page left empty is one too.
			f := newFactory(t, fakeapi.New(crontabListKinds, objects...), informer.Config{Namespace: "shop", PageSize: 1, Keep: keep(t)})
			inf := mustInformer(t, f, tc.res, tc.mode)
			if err := startAndSync(t, f); err != nil {
				t.Fatalf("WaitForSync: %v", err)
			}
			if got := storeKeys(inf); !slices.Equal(got, tc.want) {
				t.Errorf("store keys = %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("stream", func(t *testing.T) {
		f := newFactory(t, fakeapi.New(crontabListKinds, objects...), informer.Config{Namespace: "shop", Keep: keep(t)})
		sink := streamPods(t, f, informer.MetadataOnly)
		if got, want := sink.names(), []string{"web-0", "web-2"}; !slices.Equal(got, want) {
			t.Errorf("the sink got %q, want %q", got, want)
		}
	})
}
