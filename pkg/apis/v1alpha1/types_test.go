package v1alpha1_test

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

func TestItemFor(t *testing.T) {
	created := metav1.NewTime(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC))
	deploy := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "d-uid", CreationTimestamp: created}}
	gvk := appsv1.SchemeGroupVersion.WithKind("Deployment")

	it := v1alpha1.ItemFor(gvk, deploy)
	want := v1alpha1.TreeItem{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "d-uid", CreationTimestamp: &created}
	if !apiequality.Semantic.DeepEqual(*it, want) {
		t.Errorf("ItemFor() = %+v, want %+v", *it, want)
	}
	// The timestamp is a copy: the item is the caller's to change.
	if it.CreationTimestamp == &deploy.CreationTimestamp {
		t.Error("ItemFor points into the cached object")
	}

	// No timestamp when there is none.
	node := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", UID: "n-uid"}}
	it = v1alpha1.ItemFor(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, node)
	if want := (v1alpha1.TreeItem{APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: "n-uid"}); !apiequality.Semantic.DeepEqual(*it, want) {
		t.Errorf("ItemFor(metadata only) = %+v, want %+v", *it, want)
	}

	r := v1alpha1.RelationItemFor(gvk, deploy)
	if want := (v1alpha1.RelationItem{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "d-uid", CreationTimestamp: &created}); !apiequality.Semantic.DeepEqual(r, want) {
		t.Errorf("RelationItemFor() = %+v, want %+v", r, want)
	}
}
