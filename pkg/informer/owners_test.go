package informer_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

var (
	rsGVK     = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}
	deployGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	jobGVK    = schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}
)

// TestOwnerResolverPrefetch: Prefetch lists owner kinds before anything asks
// for them; what it could not read is reported once, and only for a kind
// then asked for.
func TestOwnerResolverPrefetch(t *testing.T) {
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	rs := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-5d8f", UID: "rs-1"},
	}
	client := metadatafake.NewSimpleMetadataClient(scheme, rs)
	var mu sync.Mutex
	var listed []string
	client.PrependReactor("list", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		listed = append(listed, a.GetResource().Resource)
		mu.Unlock()
		if a.GetResource().Resource == "deployments" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", nil)
		}
		return false, nil, nil
	})
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(rsGVK, meta.RESTScopeNamespace)
	mapper.Add(deployGVK, meta.RESTScopeNamespace)
	// Jobs are not served.
	r := informer.NewOwnerResolver(func() (*informer.Factory, error) {
		return informer.NewFactoryWithClients(informer.Clients{Metadata: client}, informer.Config{Namespace: "shop", SyncTimeout: 10 * time.Second}), nil
	}, mapper)
	var warnings []string
	r.Warn = func(err error) {
		mu.Lock()
		defer mu.Unlock()
		warnings = append(warnings, err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	r.Prefetch(ctx, []schema.GroupVersionKind{rsGVK, deployGVK, jobGVK})
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		done := slices.Contains(listed, "replicasets") && slices.Contains(listed, "deployments")
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prefetch listed %q, want replicasets and deployments before anything asks", listed)
		}
		time.Sleep(10 * time.Millisecond)
	}

	errs := r.Prepare(ctx, []schema.GroupVersionKind{rsGVK})
	if len(errs) != 0 {
		t.Errorf("Prepare(ReplicaSet) = %v", errs)
	}
	// By its name, and by its UID when the reference misnames it; the
	// object under the name is not the owner when its UID is another's (an
	// owner deleted and created again).
	for _, tc := range []struct {
		ref  index.OwnerRef
		want string
	}{
		{index.OwnerRef{Namespace: "shop", Name: "web-5d8f", UID: "rs-1"}, "web-5d8f"},
		{index.OwnerRef{Namespace: "shop", Name: "web-old", UID: "rs-1"}, "web-5d8f"},
		{index.OwnerRef{Namespace: "shop", Name: "web-5d8f", UID: "rs-0"}, ""},
		{index.OwnerRef{Namespace: "other", Name: "web-5d8f", UID: "rs-0"}, ""},
	} {
		owner, err := r.Get(rsGVK.GroupKind(), tc.ref)
		switch {
		case err != nil:
			t.Errorf("Get(ReplicaSet %+v): %v", tc.ref, err)
		case tc.want == "" && owner != nil:
			t.Errorf("Get(ReplicaSet %+v) = %s, want none", tc.ref, owner.GetName())
		case tc.want != "" && (owner == nil || owner.GetName() != tc.want):
			t.Errorf("Get(ReplicaSet %+v) = %v, want %s", tc.ref, owner, tc.want)
		}
	}
	mu.Lock()
	if len(warnings) != 0 {
		t.Errorf("warnings before the unreadable kinds were asked for: %q", warnings)
	}
	n := strings.Count(strings.Join(listed, ","), "replicasets")
	mu.Unlock()
	if n != 1 {
		t.Errorf("replicasets were listed %d times, want once: Prepare uses the prefetched informer", n)
	}

	errs = r.Prepare(ctx, []schema.GroupVersionKind{deployGVK})
	if !apierrors.IsForbidden(errs[deployGVK.GroupKind()]) {
		t.Errorf("Prepare(Deployment) = %v, want the Forbidden of the prefetch", errs)
	}
	r.Prepare(ctx, []schema.GroupVersionKind{deployGVK})
	r.Shutdown()
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "Deployment.apps") {
		t.Errorf("warnings = %q, want one about Deployment.apps (Jobs were never asked for)", warnings)
	}
}
