package query_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// tablePage is a server's lease table: rows name-holder-count, bare, as
// includeObject=None gives them.
func tablePage(cont string, names ...string) []byte {
	t := metav1.Table{
		TypeMeta:          metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
		ListMeta:          metav1.ListMeta{Continue: cont},
		ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Holder", Type: "string"}, {Name: "Count", Type: "integer"}},
	}
	for _, n := range names {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{n, "holder-" + n, 1000000}})
	}
	data, _ := json.Marshal(t)
	return data
}

// TestTablesRequest: the server's table is asked for as kubectl asks (Accept
// as=Table), bare (includeObject=None), with the session's namespace and
// selectors, narrowed to the name of a lone object, in one unpaged request
// (one round trip per kind printed); whole numbers stay integers.
func TestTablesRequest(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		names     []string
		wantPath  string
		wantField string
	}{
		{name: "a namespace", namespace: "kube-node-lease", wantPath: "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", wantField: "spec.holderIdentity!=x"},
		{name: "all namespaces", namespace: "", wantPath: "/apis/coordination.k8s.io/v1/leases", wantField: "spec.holderIdentity!=x"},
		{name: "one name", namespace: "kube-node-lease", names: []string{"node-1"}, wantPath: "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", wantField: "metadata.name=node-1,spec.holderIdentity!=x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var requests []*http.Request
			pages := map[string][]byte{"": tablePage("", "node-1", "node-2", "node-3")}
			client := fakeapi.Client(fixtures.Leases.GVR.GroupVersion(), func(req *http.Request) *http.Response {
				requests = append(requests, req)
				body, ok := pages[req.URL.Query().Get("continue")]
				if !ok {
					return &http.Response{StatusCode: http.StatusGone, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}
				}
				return fakeapi.JSON(req, body)
			})
			s := query.NewSession(query.Config{
				Target: query.Target{Namespace: tc.namespace, Hooks: query.Hooks{
					TableClient: func(gv schema.GroupVersion) (rest.Interface, error) { return client, nil },
				}},
				LabelSelector: "team=a", FieldSelector: "spec.holderIdentity!=x",
			})
			names := tc.names
			if names == nil {
				names = []string{"node-1", "node-2", "node-3"}
			}
			var objs []runtime.Object
			for _, n := range names {
				objs = append(objs, &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: tc.namespace, Name: n, UID: types.UID("uid-" + n)}})
			}
			tables := s.Tables(context.Background(), []v1alpha1.Members{{GVK: fixtures.Leases.GVK, Namespaced: true, Objects: objs}}, []query.Request{{Resource: fixtures.Leases}})
			table := tables[fixtures.Leases.GVK.GroupKind()]
			if table == nil {
				t.Fatalf("no table; warnings %q", s.Warnings())
			}
			var got []string
			for _, r := range table.Rows {
				got = append(got, strings.TrimSpace(fmt.Sprintln(r.Cells...)))
			}
			var want []string
			for _, n := range names {
				want = append(want, n+" holder-"+n+" 1000000")
			}
			if !cmp.Equal(got, want) {
				t.Errorf("rows %q, want %q", got, want)
			}
			if len(table.ColumnDefinitions) != 3 || table.Continue != "" {
				t.Errorf("columns %v, continue %q", table.ColumnDefinitions, table.Continue)
			}
			if len(requests) != 1 {
				t.Fatalf("%d requests, want 1", len(requests))
			}
			for _, r := range requests {
				q := r.URL.Query()
				if r.URL.Path != tc.wantPath || q.Get("includeObject") != "None" || q.Get("labelSelector") != "team=a" ||
					q.Get("fieldSelector") != tc.wantField || q.Has("limit") || !strings.HasPrefix(r.Header.Get("Accept"), "application/json;as=Table;v=v1;g=meta.k8s.io") {
					t.Errorf("request %s %s, Accept %q", r.URL.Path, r.URL.RawQuery, r.Header.Get("Accept"))
				}
			}
		})
	}
}

// TestTablesNotATable: a server that answers with the plain list cannot
// print the kind; the warning says so and names the resource, and the kind is
// left to NAME and AGE.
func TestTablesNotATable(t *testing.T) {
	client := fakeapi.Client(fixtures.Leases.GVR.GroupVersion(), func(req *http.Request) *http.Response {
		return fakeapi.JSON(req, []byte(`{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","items":[]}`))
	})
	s := query.NewSession(query.Config{Target: query.Target{Hooks: query.Hooks{TableClient: func(schema.GroupVersion) (rest.Interface, error) { return client, nil }}}})
	objs := []runtime.Object{&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "uid-node-1"}}}
	tables := s.Tables(context.Background(), []v1alpha1.Members{{GVK: fixtures.Leases.GVK, Namespaced: true, Objects: objs}}, []query.Request{{Resource: fixtures.Leases}})
	want := "reading the server's table of leases.coordination.k8s.io: the server answered with a LeaseList, not a Table; showing NAME and AGE only"
	if len(tables) != 0 || !slices.Equal(s.Warnings(), []string{want}) {
		t.Errorf("tables %v, warnings %q, want %q", tables, s.Warnings(), want)
	}
}

// TestTablesMatchBareRowsByName: tables are read without the rows' objects
// and matched by name: one request when every name is unique across the
// namespaces; for names that repeat in several namespaces, or an object the
// first table lacks, the rows of each such name with their metadata, or each
// namespace's own table when there are fewer namespaces than names; a table
// with each row's metadata when the kind has no name column. Every object gets
// its own row's cells.
func TestTablesMatchBareRowsByName(t *testing.T) {
	pod := func(ns, name string) runtime.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name)}}
	}
	type row struct{ ns, name string }
	pods := informer.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true}
	tests := []struct {
		name     string
		server   []row
		objs     []runtime.Object
		noName   bool
		missing  string
		wantReqs []string
	}{
		{
			name:     "unique names: one table",
			server:   []row{{"a", "web-1"}, {"b", "db-1"}},
			objs:     []runtime.Object{pod("a", "web-1"), pod("b", "db-1")},
			wantReqs: []string{"/api/v1/pods None"},
		},
		{
			name:     "a name in two namespaces: its rows",
			server:   []row{{"a", "web-1"}, {"a", "cfg"}, {"b", "cfg"}},
			objs:     []runtime.Object{pod("a", "web-1"), pod("a", "cfg"), pod("b", "cfg")},
			wantReqs: []string{"/api/v1/pods None", "/api/v1/pods Metadata metadata.name=cfg"},
		},
		{
			name: "StatefulSet pods in every namespace: the rows of each name",
			server: []row{{"a", "web-1"}, {"a", "db-0"}, {"a", "db-1"}, {"b", "db-0"}, {"b", "db-1"}, {"c", "db-0"}, {"c", "db-1"},
				{"x", "db-0"}, {"x", "db-1"}},
			objs:     []runtime.Object{pod("a", "web-1"), pod("a", "db-0"), pod("a", "db-1"), pod("b", "db-0"), pod("b", "db-1"), pod("c", "db-0"), pod("c", "db-1")},
			wantReqs: []string{"/api/v1/pods None", "/api/v1/pods Metadata metadata.name=db-0", "/api/v1/pods Metadata metadata.name=db-1"},
		},
		{
			name:     "many names in one namespace: its table",
			server:   []row{{"a", "cfg-1"}, {"a", "cfg-2"}, {"a", "cfg-3"}, {"b", "cfg-1"}, {"b", "cfg-2"}, {"b", "cfg-3"}},
			objs:     []runtime.Object{pod("a", "cfg-1"), pod("a", "cfg-2"), pod("a", "cfg-3"), pod("b", "cfg-1"), pod("b", "cfg-2"), pod("b", "cfg-3")},
			wantReqs: []string{"/api/v1/pods None", "/api/v1/namespaces/a/pods None", "/api/v1/namespaces/b/pods None"},
		},
		{
			name:     "rows in another order: by name",
			server:   []row{{"b", "db-1"}, {"a", "web-1"}},
			objs:     []runtime.Object{pod("a", "web-1"), pod("b", "db-1")},
			wantReqs: []string{"/api/v1/pods None"},
		},
		{
			name:     "another object at one position: the rest by name",
			server:   []row{{"a", "web-1"}, {"a", "web-0"}, {"b", "db-1"}, {"b", "db-2"}},
			objs:     []runtime.Object{pod("a", "web-1"), pod("a", "web-2"), pod("b", "db-1"), pod("b", "db-2")},
			missing:  "a/web-2",
			wantReqs: []string{"/api/v1/pods None", "/api/v1/namespaces/a/pods None"},
		},
		{
			name:     "no name column: rows with metadata",
			server:   []row{{"a", "web-1"}},
			objs:     []runtime.Object{pod("a", "web-1"), pod("b", "db-1")},
			noName:   true,
			wantReqs: []string{"/api/v1/pods None", "/api/v1/pods Metadata"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var reqs []string
			client := fakeapi.Client(schema.GroupVersion{Version: "v1"}, func(req *http.Request) *http.Response {
				include := req.URL.Query().Get("includeObject")
				nameIs := strings.TrimPrefix(req.URL.Query().Get("fieldSelector"), "metadata.name=")
				mu.Lock()
				reqs = append(reqs, strings.TrimSpace(req.URL.Path+" "+include+" "+req.URL.Query().Get("fieldSelector")))
				mu.Unlock()
				table := metav1.Table{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "Table"},
					ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Where", Type: "string"}}}
				if tc.noName {
					table.ColumnDefinitions[0].Format = ""
				}
				for _, r := range tc.server {
					if ns := strings.TrimPrefix(req.URL.Path, "/api/v1/namespaces/"); ns != req.URL.Path && !strings.HasPrefix(ns, r.ns+"/") {
						continue
					}
					if nameIs != "" && r.name != nameIs {
						continue
					}
					tr := metav1.TableRow{Cells: []any{r.name, r.ns + "/" + r.name}}
					if include == "Metadata" {
						tr.Object.Raw = []byte(fmt.Sprintf(`{"metadata":{"namespace":%q,"name":%q,"uid":"uid-%s-%s"}}`, r.ns, r.name, r.ns, r.name))
					}
					table.Rows = append(table.Rows, tr)
				}
				data, _ := json.Marshal(table)
				return fakeapi.JSON(req, data)
			})
			s := query.NewSession(query.Config{Target: query.Target{Hooks: query.Hooks{TableClient: func(schema.GroupVersion) (rest.Interface, error) { return client, nil }}}})
			tables := s.Tables(context.Background(), []v1alpha1.Members{{GVK: pods.GVK, Namespaced: true, Objects: tc.objs}}, []query.Request{{Resource: pods}})
			table := tables[pods.GVK.GroupKind()]
			if table == nil {
				t.Fatalf("no table; warnings %q", s.Warnings())
			}
			// The rows follow the objects, whichever read found them, so
			// that the printer takes each row as it comes.
			if !tc.noName && tc.missing == "" {
				if len(table.Rows) != len(tc.objs) {
					t.Fatalf("%d rows for %d objects", len(table.Rows), len(tc.objs))
				}
				for i := range table.Rows {
					if table.Rows[i].Object.Object != tc.objs[i] {
						t.Errorf("row %d is not the row of object %d", i, i)
					}
				}
			}
			got, err := printers.TableFromServer(table, tc.objs)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range got.Rows {
				m, _ := meta.Accessor(tc.objs[i])
				want := m.GetNamespace() + "/" + m.GetName()
				if want == tc.missing {
					want = ""
				}
				if r.Cells[1] != want && !(tc.noName && m.GetNamespace() == "b") {
					t.Errorf("%s got the cells %v", want, r.Cells)
				}
			}
			slices.Sort(reqs)
			want := slices.Clone(tc.wantReqs)
			slices.Sort(want)
			if !slices.Equal(reqs, want) {
				t.Errorf("requests %q, want %q", reqs, want)
			}
		})
	}
}
