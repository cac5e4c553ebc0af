package pool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// TestMetadataProberCompare: the prober's compared LIST asks for the
// informer's objects, metadata only, protobuf first, with its selectors, at
// the resourceVersion given or later, without compression and
// over HTTP/1.1 from a server on this machine; it hands over each object's namespace, name and
// resourceVersion from a protobuf answer and from a JSON one alike, says
// whether it handed over all of them, stops when asked, and fails with the
// server's error.
func TestMetadataProberCompare(t *testing.T) {
	list := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
	for i := range 3 {
		list.Items = append(list.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: fmt.Sprintf("web-%d", i), ResourceVersion: fmt.Sprint(10 + i),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate}},
		}})
	}
	raw, err := list.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"}, Raw: raw}
	envelope, err := u.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	protobuf := append([]byte("k8s\x00"), envelope...)
	asJSON, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	var answer atomic.Value
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		q := r.URL.Query()
		switch {
		case r.URL.Path != "/api/v1/namespaces/shop/pods":
			t.Errorf("path %s", r.URL.Path)
		case q.Get("resourceVersion") != "40" || q.Get("resourceVersionMatch") != "NotOlderThan" || q.Get("labelSelector") != "app=web" || q.Get("limit") != "":
			t.Errorf("query %s, want labelSelector=app=web, resourceVersion 40 or later and no limit", r.URL.RawQuery)
		case !strings.HasPrefix(r.Header.Get("Accept"), "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"):
			t.Errorf("Accept %q", r.Header.Get("Accept"))
		case strings.Contains(r.Header.Get("Accept-Encoding"), "gzip"):
			t.Errorf("Accept-Encoding %q from a server on this machine", r.Header.Get("Accept-Encoding"))
		case r.ProtoMajor != 1:
			t.Errorf("%s from a server on this machine, want HTTP/1.1", r.Proto)
		}
		switch a := answer.Load().(string); a {
		case "protobuf":
			rw.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
			rw.Write(protobuf)
		case "json":
			rw.Header().Set("Content-Type", "application/json")
			rw.Write(asJSON)
		default:
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusForbidden)
			json.NewEncoder(rw).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "pods is forbidden"})
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	keys, err := newKeysClient(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	p := metadataProber{keys: keys}
	w := &warm{key: poolKey{namespace: "shop", labelSelector: "app=web"}, res: informer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespaced: true}}
	for _, format := range []string{"protobuf", "json"} {
		answer.Store(format)
		var got []string
		rv, whole, err := p.compare(context.Background(), w, 0, "40", func(ns, name, rv []byte) bool {
			got = append(got, fmt.Sprintf("%s/%s@%s", ns, name, rv))
			return true
		})
		if want := "[shop/web-0@10 shop/web-1@11 shop/web-2@12]"; err != nil || rv != "42" || !whole || fmt.Sprint(got) != want {
			t.Errorf("%s: read %v at %q (whole %v, %v), want %s at 42, whole", format, got, rv, whole, err, want)
		}
		n := 0
		_, whole, err = p.compare(context.Background(), w, 0, "40", func(_, _, _ []byte) bool { n++; return false })
		if err != nil || whole || n != 1 {
			t.Errorf("%s: stopped at the first object: %d read, whole %v, %v", format, n, whole, err)
		}
	}
	answer.Store("forbidden")
	if _, _, err := p.compare(context.Background(), w, 0, "40", func(_, _, _ []byte) bool { return true }); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("a forbidden LIST: %v", err)
	}
	if requests.Load() != 5 {
		t.Errorf("%d requests, want 5", requests.Load())
	}
}
