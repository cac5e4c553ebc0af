package query_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// The engine's tests ask a Session over client-go fakes (fakeapi) with real
// informers, and assert on the documents and objects it returns. What the
// commands print of the same answers is cmd's to test, on the same fixtures.

func TestMain(m *testing.M) { fixtures.Main(m) }

// factories records the configuration of every factory a session builds.
type factories struct {
	mu      sync.Mutex
	configs []informer.Config
}

// namespaces are the namespaces of the factories built, in order.
func (f *factories) namespaces() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{}
	for _, c := range f.configs {
		out = append(out, c.Namespace)
	}
	return out
}

// newSession returns a session of cfg whose factories read s and are
// recorded. cfg names the namespace ("" for all) and the mapper; the sync
// timeout defaults to 20 seconds.
func newSession(t *testing.T, s *fakeapi.Server, cfg query.Config) (*query.Session, *factories) {
	t.Helper()
	rec := &factories{}
	newFactory := fixtures.NewFactory(t, s)
	cfg.NewFactory = func(c informer.Config) (*informer.Factory, error) {
		rec.mu.Lock()
		rec.configs = append(rec.configs, c)
		rec.mu.Unlock()
		return newFactory(c)
	}
	if cfg.SyncTimeout == 0 {
		cfg.SyncTimeout = 20 * time.Second
	}
	return query.NewSession(cfg), rec
}

// shopTarget is a target in shop over the types of lists: its mapper and its
// listable types are those lists', as discovery serves them.
func shopTarget(t *testing.T, lists []*metav1.APIResourceList) query.Target {
	t.Helper()
	dc := fixtures.Discovery(lists)
	mapper, _ := fixtures.Mapper(t, dc)
	return query.Target{Mapper: mapper, Namespace: "shop", Hooks: query.Hooks{
		Listable: func(namespacedOnly bool) ([]informer.Resource, []error) {
			return informer.ListableResources(dc, namespacedOnly)
		},
	}}
}

// metadataOf is the GetMetadata hook of a target served by s: one object's
// metadata, as WatchEvents reads its root.
func metadataOf(s *fakeapi.Server) func(ctx context.Context, res informer.Resource, namespace, name string) (metav1.Object, error) {
	return func(ctx context.Context, res informer.Resource, namespace, name string) (metav1.Object, error) {
		return s.Metadata.Resource(res.GVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}
}

// testContext bounds a question: a hang fails the test instead of the run.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// objectRef resolves TYPE/NAME through mapper, as the commands do.
func objectRef(t *testing.T, mapper meta.RESTMapper, arg string) query.ObjectRef {
	t.Helper()
	typ, name, _ := strings.Cut(arg, "/")
	m, err := query.MappingFor(mapper, typ)
	if err != nil {
		t.Fatalf("MappingFor(%q): %v", typ, err)
	}
	return query.ObjectRef{Resource: informer.FromMapping(m), Name: name}
}
