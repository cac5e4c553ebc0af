package v1alpha1_test

import (
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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

// TestHistoryJSON: a history's and a blame's arrays are never null, and a
// change's values are the JSON they hold, absent when unknown.
func TestHistoryJSON(t *testing.T) {
	h := v1alpha1.NewHistory(v1alpha1.HistoryObject{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"})
	h.Entries, h.Coverage, h.Gaps, h.Warnings = nil, nil, nil, nil
	h.From, h.To = metav1.NewTime(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)), metav1.NewTime(time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC))
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"apiVersion":"kubectl-idx.io/v1alpha1","kind":"History","object":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"web"},"from":"2026-03-01T10:00:00Z","to":"2026-03-01T11:00:00Z","entries":[],"coverage":[],"gaps":[],"warnings":[]}`
	if string(data) != want {
		t.Errorf("JSON\n%s\nwant\n%s", data, want)
	}
	c := v1alpha1.HistoryChange{Path: ".spec.replicas", New: &runtime.RawExtension{Raw: []byte("4")}, OldUnknown: true}
	if data, _ := json.Marshal(c); string(data) != `{"path":".spec.replicas","new":4,"oldUnknown":true}` {
		t.Errorf("change JSON %s", data)
	}
	b := v1alpha1.NewBlame(v1alpha1.HistoryObject{APIVersion: "v1", Kind: "ConfigMap", Name: "x"})
	b.Managers, b.Fields, b.Warnings = nil, nil, nil
	b.Content = runtime.RawExtension{Raw: []byte(`{"data":{"k":"v"}}`)}
	if data, _ := json.Marshal(b); string(data) != `{"apiVersion":"kubectl-idx.io/v1alpha1","kind":"Blame","object":{"apiVersion":"v1","kind":"ConfigMap","name":"x"},"managers":[],"fields":[],"content":{"data":{"k":"v"}},"warnings":[]}` {
		t.Errorf("blame JSON %s", data)
	}
}
