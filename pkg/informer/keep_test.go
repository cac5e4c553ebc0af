package informer_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// collectSink keeps the names of every object of every page.
type collectSink struct {
	mu    sync.Mutex
	names []string
}

func (c *collectSink) Page(_ context.Context, items []runtime.Object, _ bool, _ string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, it := range items {
		a, err := meta.Accessor(it)
		if err != nil {
			return err
		}
		c.names = append(c.names, a.GetName())
	}
	return nil
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
		sink := &collectSink{}
		f := newFactory(t, fakeapi.New(crontabListKinds, objects...), informer.Config{Namespace: "shop", Keep: keep(t)})
		if _, err := f.StreamInformer(podsRes, informer.MetadataOnly, sink); err != nil {
			t.Fatal(err)
		}
		if err := startAndSync(t, f); err != nil {
			t.Fatalf("WaitForSync: %v", err)
		}
		if want := []string{"web-0", "web-2"}; !slices.Equal(sink.names, want) {
			t.Errorf("the sink got %q, want %q", sink.names, want)
		}
	})
}
