package printers

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// TableFromServer builds the table of objs from the server's table of their
// kind: the server's columns, and for each object, in the order of objs, the
// cells of the server's row with the same UID. Each row's Object is the
// object itself, which the TablePrinter reads for NAMESPACE, --show-labels and
// -L. An object the server's list did not have (created or deleted in
// between) gets its name and the other cells empty. server's rows must carry
// their objects, as the engine's tables do (query.TableFetch matches each
// row to its object): the printer only puts them in the order it prints.
func TableFromServer(server *metav1.Table, objs []runtime.Object) (*metav1.Table, error) {
	if sameObjects(server, objs) {
		table := &metav1.Table{ColumnDefinitions: server.ColumnDefinitions, Rows: make([]metav1.TableRow, len(objs))}
		for i, obj := range objs {
			table.Rows[i] = metav1.TableRow{Cells: server.Rows[i].Cells, Object: runtime.RawExtension{Object: obj}}
		}
		return table, nil
	}
	byKey := make(map[rowKey][]any, len(server.Rows))
	for i := range server.Rows {
		key, err := keyOfRow(&server.Rows[i])
		if err != nil {
			return nil, fmt.Errorf("reading row %d of the server's table: %w", i, err)
		}
		byKey[key] = server.Rows[i].Cells
	}
	table := &metav1.Table{ColumnDefinitions: server.ColumnDefinitions, Rows: make([]metav1.TableRow, 0, len(objs))}
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("%T has no object metadata: %w", obj, err)
		}
		cells, ok := byKey[keyOf(m)]
		if !ok {
			cells = make([]any, len(server.ColumnDefinitions))
			for i, col := range server.ColumnDefinitions {
				cells[i] = ""
				if col.Name == "Name" {
					cells[i] = m.GetName()
				}
			}
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}})
	}
	return table, nil
}

// sameObjects reports whether server's rows carry objs themselves, in order,
// as the rows of a listing's table matched by the session do: then no row
// needs to be looked up (100,000 pods: one map of 100,000 keys less).
func sameObjects(server *metav1.Table, objs []runtime.Object) bool {
	if len(server.Rows) != len(objs) {
		return false
	}
	for i := range objs {
		if server.Rows[i].Object.Object != objs[i] {
			return false
		}
	}
	return true
}

// rowKey matches a server row to an object: by UID, or by namespace and name
// for objects without one (which only tests make).
type rowKey struct {
	uid             types.UID
	namespace, name string
}

func keyOf(m metav1.Object) rowKey {
	if m.GetUID() != "" {
		return rowKey{uid: m.GetUID()}
	}
	return rowKey{namespace: m.GetNamespace(), name: m.GetName()}
}

// keyOfRow reads the key of the object a server table row carries.
func keyOfRow(row *metav1.TableRow) (rowKey, error) {
	if row.Object.Object == nil {
		return rowKey{}, errors.New("the row carries no object")
	}
	m, err := meta.Accessor(row.Object.Object)
	if err != nil {
		return rowKey{}, err
	}
	return keyOf(m), nil
}
