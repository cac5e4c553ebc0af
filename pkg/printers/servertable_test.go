package printers_test

import (
	"bytes"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// TestTableFromServer: rows follow the objects' order, matched by UID; an
// object the server's list lacked keeps its name; the rows carry the
// objects for NAMESPACE and labels; human output prints the server's columns.
func TestTableFromServer(t *testing.T) {
	// Rows carry what the engine matched them to: an object, here another
	// copy of the same metadata.
	row := func(name, holder string) metav1.TableRow {
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease", UID: types.UID("uid-" + name)}}
		return metav1.TableRow{Cells: []any{name, holder, "5m"}, Object: runtime.RawExtension{Object: m}}
	}
	server := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{{Name: "Name", Type: "string"}, {Name: "Holder", Type: "string"}, {Name: "Age", Type: "string"}},
		Rows:              []metav1.TableRow{row("node-1", "kwok-1"), row("node-2", "kwok-2")},
	}
	obj := func(name string) runtime.Object {
		return &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "coordination.k8s.io/v1", Kind: "Lease"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-node-lease", UID: types.UID("uid-" + name), Labels: map[string]string{"node": name}},
		}
	}
	objs := []runtime.Object{obj("node-2"), obj("node-3"), obj("node-1")}
	table, err := printers.TableFromServer(server, objs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, r := range table.Rows {
		got = append(got, fmt.Sprint(r.Cells))
		if r.Object.Object != objs[i] {
			t.Errorf("row %d carries %v, want the object itself", i, r.Object.Object)
		}
	}
	if want := fmt.Sprint([]string{"[node-2 kwok-2 5m]", "[node-3  ]", "[node-1 kwok-1 5m]"}); fmt.Sprint(got) != want {
		t.Errorf("rows %v, want %v", got, want)
	}

	var out bytes.Buffer
	g := group{GVK: schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, Namespaced: true, Objects: objs[:1], ServerTable: server}
	if _, err := printGroups(&out, []group{g}, nil, printers.Options{WithNamespace: true, ShowLabels: true}); err != nil {
		t.Fatal(err)
	}
	want := "NAMESPACE         NAME     HOLDER   AGE   LABELS\nkube-node-lease   node-2   kwok-2   5m    node=node-2\n"
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}

	// Rows that carry the objects themselves, as the session matches them:
	// in the objects' order, or in another, each object gets its own row.
	carried := &metav1.Table{ColumnDefinitions: server.ColumnDefinitions, Rows: []metav1.TableRow{
		{Cells: []any{"node-2", "kwok-2", "1m"}, Object: runtime.RawExtension{Object: objs[0]}},
		{Cells: []any{"node-3", "kwok-3", "2m"}, Object: runtime.RawExtension{Object: objs[1]}},
		{Cells: []any{"node-1", "kwok-1", "3m"}, Object: runtime.RawExtension{Object: objs[2]}},
	}}
	for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}} {
		in := []runtime.Object{objs[order[0]], objs[order[1]], objs[order[2]]}
		table, err := printers.TableFromServer(carried, in)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range table.Rows {
			if r.Object.Object != in[i] || r.Cells[2] != carried.Rows[order[i]].Cells[2] {
				t.Errorf("order %v: row %d is %v for %v, want %v", order, i, r.Cells, r.Object.Object, carried.Rows[order[i]].Cells)
			}
		}
	}

	bad := &metav1.Table{ColumnDefinitions: server.ColumnDefinitions, Rows: []metav1.TableRow{{Cells: []any{"x", "", ""}}}}
	if _, err := printers.TableFromServer(bad, objs); err == nil {
		t.Error("a row without its object was accepted")
	}
}
