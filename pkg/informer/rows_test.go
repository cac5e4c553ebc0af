package informer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

var rowColumns = []metav1.TableColumnDefinition{{Name: "Name", Type: "string"}, {Name: "Holder", Type: "string"}, {Name: "Replicas", Type: "integer"}}

// rowTable is a lease table with one row per name at resourceVersion rv;
// full rows carry the whole object, others its metadata.
func rowTable(t *testing.T, rv string, full, headers bool, names ...string) metav1.Table {
	t.Helper()
	table := metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"}, ListMeta: metav1.ListMeta{ResourceVersion: rv}}
	if headers {
		table.ColumnDefinitions = rowColumns
	}
	for _, n := range names {
		obj := fmt.Sprintf(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":%q,"namespace":"ns","uid":"uid-%s","resourceVersion":%q,"managedFields":[{"manager":"m"}]}}`, n, n, rv)
		if full {
			obj = fmt.Sprintf(`{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":%q,"namespace":"ns","uid":"uid-%s","resourceVersion":%q},"spec":{"holderIdentity":"holder-%s"}}`, n, n, rv, n)
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{n, "holder-" + n + "@" + rv, 1000000}, Object: runtime.RawExtension{Raw: []byte(obj)}})
	}
	return table
}

// rowServer answers a lease table list and then a watch stream of events,
// recording the requests.
type rowServer struct {
	t        *testing.T
	full     bool
	mu       sync.Mutex
	requests []*http.Request
}

func (s *rowServer) client(schema.GroupVersion) (rest.Interface, error) {
	return fakeapi.Client(fixtures.Leases.GVR.GroupVersion(), func(req *http.Request) *http.Response {
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		if req.URL.Query().Get("watch") != "true" {
			data, _ := json.Marshal(rowTable(s.t, "10", s.full, true, "a", "b"))
			return fakeapi.JSON(req, data)
		}
		var stream bytes.Buffer
		for _, ev := range []struct {
			typ  string
			name string
		}{{"MODIFIED", "a"}, {"DELETED", "b"}} {
			// Later watch events carry no column definitions, as kubectl's
			// watches of tables show.
			data, _ := json.Marshal(map[string]any{"type": ev.typ, "object": rowTable(s.t, "11", s.full, false, ev.name)})
			stream.Write(data)
			stream.WriteString("\n")
		}
		return &http.Response{
			StatusCode: http.StatusOK, Header: http.Header{"Content-Type": []string{"application/json"}},
			Body: io.NopCloser(io.MultiReader(&stream, blockUntil(req.Context()))),
		}
	}), nil
}

// blockUntil is a reader that blocks until ctx ends, as an open watch does.
type blockingReader struct{ ctx context.Context }

func blockUntil(ctx context.Context) io.Reader { return blockingReader{ctx} }

func (b blockingReader) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, io.EOF
}

// TestRowsInformer: an informer of the server's table rows lists and watches
// as kubectl's human output does (Accept as=Table, includeObject), keeps one
// informer.Row per object that reads as the object (name, namespace, managed
// fields dropped), carries the row's cells under the list's columns (whole
// numbers as integers), follows MODIFIED and DELETED rows, and never asks for
// bookmarks, which a table watch cannot carry.
func TestRowsInformer(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run(fmt.Sprintf("full=%v", full), func(t *testing.T) {
			srv := &rowServer{t: t, full: full}
			f := informer.NewFactoryWithClients(informer.Clients{Typed: srv.client}, informer.Config{Namespace: "ns", LabelSelector: "team=a"})
			mode := informer.Rows
			if full {
				mode = informer.FullRows
			}
			inf, err := f.Informer(fixtures.Leases, mode, nil)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var seen []string
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				UpdateFunc: func(_, obj any) {
					r := obj.(*informer.Row)
					_, cells := r.TableRow()
					mu.Lock()
					seen = append(seen, "MODIFIED "+strings.TrimSpace(fmt.Sprintln(cells...)))
					mu.Unlock()
				},
				DeleteFunc: func(obj any) {
					r := obj.(*informer.Row)
					mu.Lock()
					seen = append(seen, "DELETED "+r.GetObjectMeta().GetName())
					mu.Unlock()
				},
			}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f.Start(ctx)
			defer f.Shutdown()
			if err := f.WaitForSync(ctx); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				mu.Lock()
				n := len(seen)
				mu.Unlock()
				if n == 2 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			got := strings.Join(seen, "; ")
			mu.Unlock()
			if want := "MODIFIED a holder-a@11 1000000; DELETED b"; got != want {
				t.Errorf("events %q, want %q", got, want)
			}
			items := inf.GetStore().List()
			if len(items) != 1 {
				t.Fatalf("store holds %d objects, want a", len(items))
			}
			r := items[0].(*informer.Row)
			m, err := meta.Accessor(r)
			if err != nil || m.GetName() != "a" || m.GetNamespace() != "ns" || m.GetResourceVersion() != "11" || len(m.GetManagedFields()) != 0 {
				t.Errorf("the row reads as %v (err %v)", m, err)
			}
			columns, cells := r.TableRow()
			if len(columns) != 3 || columns[1].Name != "Holder" {
				t.Errorf("columns %v, want the list's", columns)
			}
			if n, ok := cells[2].(int64); !ok || n != 1000000 {
				t.Errorf("cell %#v, want int64 1000000", cells[2])
			}
			_, isFull := r.Unwrap().(*unstructured.Unstructured)
			if isFull != full {
				t.Errorf("row object %T, full rows %v", r.Unwrap(), full)
			}
			if c := r.DeepCopyObject().(*informer.Row); fmt.Sprint(c.Cells) != fmt.Sprint(r.Cells) || &c.Cells[0] == &r.Cells[0] {
				t.Error("DeepCopyObject does not copy the cells")
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			include := "Metadata"
			if full {
				include = "Object"
			}
			for _, req := range srv.requests {
				q := req.URL.Query()
				if req.URL.Path != "/apis/coordination.k8s.io/v1/namespaces/ns/leases" || q.Get("includeObject") != include ||
					q.Get("labelSelector") != "team=a" || !strings.HasPrefix(req.Header.Get("Accept"), informer.TableAccept) ||
					q.Get("allowWatchBookmarks") == "true" {
					t.Errorf("request %s?%s Accept %q", req.URL.Path, req.URL.RawQuery, req.Header.Get("Accept"))
				}
			}
		})
	}
}
