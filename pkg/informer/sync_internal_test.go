package informer

import (
	"context"
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metadatafake "k8s.io/client-go/metadata/fake"
	clienttesting "k8s.io/client-go/testing"
)

// podsResource is pods, as the tests inside the package ask for them.
var podsResource = Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true}

// TestWaitForSyncSeesAFailureBetweenItsLooks: a list that fails for good just
// after WaitForSync has looked at what has not synced (a failed informer is
// not one of those) is WaitForSync's error, not a sync over an empty store.
func TestWaitForSyncSeesAFailureBetweenItsLooks(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, "", errors.New("no"))
	scheme := runtime.NewScheme()
	metav1.AddMetaToScheme(scheme)
	client := metadatafake.NewSimpleMetadataClient(scheme)
	release := make(chan struct{})
	defer close(release)
	client.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
		<-release
		return true, nil, forbidden
	})
	f := NewFactoryWithClients(Clients{Metadata: client}, Config{Namespace: "shop"})
	if _, err := f.Informer(podsResource, MetadataOnly, nil); err != nil {
		t.Fatal(err)
	}
	f.betweenSyncLooks = func() {
		f.mu.Lock()
		e := f.order[0]
		f.mu.Unlock()
		e.fail(forbidden)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.Start(ctx)
	defer f.Shutdown()
	if err := f.WaitForSync(ctx); !apierrors.IsForbidden(err) {
		t.Fatalf("WaitForSync = %v, want the list's Forbidden", err)
	}
}
