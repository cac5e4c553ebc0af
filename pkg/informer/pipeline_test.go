package informer_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/tlsserver"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// pagedServer is a TLS server speaking HTTP/2, as the API server does, serving a
// list of pods in pages: page i is asked for with continue token "p<i>" (the
// first with none). It sends the start of each page at once and holds the rest
// back until the next page has been asked for, or until wait has passed: a client
// that asks for a page only once it has the one before waits that long per page.
type pagedServer struct {
	pages, perPage int
	wait           time.Duration
	// protobuf answers in protobuf the requests that accept it; otherwise
	// every answer is JSON.
	protobuf bool

	mu sync.Mutex
	// asked is closed once page i has been asked for.
	asked []chan struct{}
	// early counts the pages asked for while the page before was still
	// being sent.
	early int
}

func newPagedServer(t *testing.T, pages, perPage int, protobuf bool) (*pagedServer, *rest.Config) {
	p := &pagedServer{pages: pages, perPage: perPage, wait: 3 * time.Second, protobuf: protobuf}
	for range pages {
		p.asked = append(p.asked, make(chan struct{}))
	}
	_, rc := tlsserver.Start(t, p.serve, true)
	return p, rc
}

func (p *pagedServer) serve(w http.ResponseWriter, r *http.Request) {
	if holdWatch(w, r) {
		return
	}
	page := 0
	if c := r.URL.Query().Get("continue"); c != "" {
		if _, err := fmt.Sscanf(c, "p%d", &page); err != nil || page >= p.pages {
			http.Error(w, "bad continue token", http.StatusBadRequest)
			return
		}
	}
	p.mu.Lock()
	select {
	case <-p.asked[page]:
	default:
		close(p.asked[page])
	}
	p.mu.Unlock()

	next := ""
	if page+1 < p.pages {
		next = fmt.Sprintf("p%d", page+1)
	}
	meta := metav1.ListMeta{ResourceVersion: "7", Continue: next}
	var pods []corev1.Pod
	for i := range p.perPage {
		pods = append(pods, corev1.Pod{ObjectMeta: podMeta(page, i)})
	}
	var body []byte
	var err error
	accept := r.Header.Get("Accept")
	switch {
	case p.protobuf && strings.HasPrefix(accept, "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList"):
		list := &metav1.PartialObjectMetadataList{ListMeta: meta}
		for _, pod := range pods {
			list.Items = append(list.Items, metav1.PartialObjectMetadata{ObjectMeta: pod.ObjectMeta})
		}
		body, err = protobufAnswer("meta.k8s.io/v1", "PartialObjectMetadataList", list)
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
	case p.protobuf && strings.HasPrefix(accept, "application/vnd.kubernetes.protobuf"):
		body, err = protobufAnswer("v1", "PodList", &corev1.PodList{ListMeta: meta, Items: pods})
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
	default:
		body, err = json.Marshal(&corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: meta, Items: pods})
		w.Header().Set("Content-Type", "application/json")
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	// The start of the page, its metadata and a little more, then the rest
	// once the next page is asked for.
	head := min(len(body), 1024)
	_, _ = w.Write(body[:head])
	w.(http.Flusher).Flush()
	if next != "" {
		select {
		case <-p.asked[page+1]:
			p.mu.Lock()
			p.early++
			p.mu.Unlock()
		case <-time.After(p.wait):
		case <-r.Context().Done():
			return
		}
	}
	_, _ = w.Write(body[head:])
}

// podMeta is the metadata of pod i of page, with managedFields of two writers.
func podMeta(page, i int) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: fmt.Sprintf("web-%d-%d", page, i), Namespace: "shop", ResourceVersion: "7",
		Labels: map[string]string{"app": "web", "pad": fmt.Sprintf("%060d", i)},
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:pad":{}}}}`)}},
			{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", Subresource: "status",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:phase":{}}}`)}},
		},
	}
}

// protobufAnswer renders list as the API server does in protobuf.
func protobufAnswer(apiVersion, kind string, list interface{ Marshal() ([]byte, error) }) ([]byte, error) {
	raw, err := list.Marshal()
	if err != nil {
		return nil, err
	}
	data, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}).Marshal()
	return append([]byte("k8s\x00"), data...), err
}

// TestFactoryAsksForTheNextPageEarly: with the clients NewFactory builds, each
// page of a list is asked for while the page before is still arriving, as soon
// as the continue token at its start has come, whether the server speaks
// protobuf (metadata-only and full objects) or JSON; every object arrives, with
// its managedFields only when they are kept (protobuf pages lose them before
// they are decoded).
func TestFactoryAsksForTheNextPageEarly(t *testing.T) {
	tests := []struct {
		name        string
		mode        informer.Mode
		protobuf    bool
		keepManaged bool
	}{
		{"metadata-only, protobuf", informer.MetadataOnly, true, false},
		// A server that answers a metadata LIST with its objects whole, in
		// JSON (an aggregated API that does not transform to metadata).
		{"metadata-only, JSON", informer.MetadataOnly, false, false},
		{"full, protobuf", informer.Full, true, false},
		{"full, protobuf, managedFields kept", informer.Full, true, true},
		{"full, JSON", informer.Full, false, false},
		{"full, JSON, managedFields kept", informer.Full, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const pages, perPage = 5, 40
			p, rc := newPagedServer(t, pages, perPage, tc.protobuf)
			f := restFactory(t, rc,
				informer.Config{SyncTimeout: 30 * time.Second, PageSize: perPage, KeepManagedFields: tc.keepManaged, UnpagedBudget: -1})
			inf := mustInformer(t, f, podsRes, tc.mode)
			err, took := syncFor(t, f)
			if err != nil {
				t.Fatalf("WaitForSync after %s: %v", took, err)
			}
			if n := len(storeKeys(inf)); n != pages*perPage {
				t.Errorf("%d pods in the store, want %d", n, pages*perPage)
			}
			for _, obj := range inf.GetStore().List() {
				m, err := meta.Accessor(obj)
				if err != nil {
					t.Fatal(err)
				}
				want := podMeta(0, 0).ManagedFields
				if !tc.keepManaged {
					want = nil
				}
				if got := m.GetManagedFields(); !equality.Semantic.DeepEqual(got, want) {
					t.Fatalf("%s has managedFields %v, want %v", m.GetName(), got, want)
				}
				if m.GetLabels()["app"] != "web" {
					t.Fatalf("%s has labels %v", m.GetName(), m.GetLabels())
				}
			}
			p.mu.Lock()
			early := p.early
			p.mu.Unlock()
			if early != pages-1 {
				t.Errorf("%d of the %d pages after the first were asked for while the page before was arriving, want all (the list took %s)", early, pages-1, took)
			}
			if took > p.wait {
				t.Errorf("the list took %s, want less than one page's wait (%s)", took, p.wait)
			}
		})
	}
}

// TestFactoryMetadataListRefused: a metadata LIST the server refuses fails the
// sync with the server's own Status, read from the answer as the metadata
// client reads it, whether the answer is read as it arrives or not.
func TestFactoryMetadataListRefused(t *testing.T) {
	refusal := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
		errors.New(`User "alice" cannot list resource "pods" in API group "" at the cluster scope`)).Status()
	refusal.APIVersion, refusal.Kind = "v1", "Status"
	_, rc := tlsserver.Start(t, func(w http.ResponseWriter, r *http.Request) {
		if holdWatch(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(&refusal)
	}, true)
	f := restFactory(t, rc, informer.Config{SyncTimeout: 30 * time.Second})
	mustInformer(t, f, podsRes, informer.MetadataOnly)
	err := startAndSync(t, f)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), refusal.Message) {
		t.Errorf("WaitForSync error = %v, want the server's Forbidden: %s", err, refusal.Message)
	}
}
