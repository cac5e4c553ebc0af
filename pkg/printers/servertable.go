package printers

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// NeedsServerTable reports whether human output of gk needs the API server's
// own table (as=Table): true for every kind this package has no client-side
// printer for (aggregated APIs, HorizontalPodAutoscalers, Leases, ...) and no
// CRD printer columns. The server prints each kind for its own version, so
// those columns are exactly `kubectl get`'s.
func NeedsServerTable(gk schema.GroupKind, crdColumns []apiextensionsv1.CustomResourceColumnDefinition) bool {
	if len(crdColumns) > 0 || createdAtKinds.Has(gk) {
		return false
	}
	_, ok := builtinHandlers[gk]
	return !ok
}

// TableFromServer builds the table of objs from the server's table of their
// kind: the server's columns, and for each object, in the order of objs, the
// cells of the server's row with the same UID. Each row's Object is the
// object itself, which the TablePrinter reads for NAMESPACE, --show-labels and
// -L. An object the server's list did not have (created or deleted in
// between) gets its name and the other cells empty. server's rows must carry
// their metadata (includeObject=Metadata or Object).
func TableFromServer(server *metav1.Table, objs []runtime.Object) (*metav1.Table, error) {
	byUID := make(map[types.UID][]any, len(server.Rows))
	for i := range server.Rows {
		uid, err := rowUID(&server.Rows[i])
		if err != nil {
			return nil, fmt.Errorf("reading row %d of the server's table: %w", i, err)
		}
		byUID[uid] = server.Rows[i].Cells
	}
	table := &metav1.Table{ColumnDefinitions: server.ColumnDefinitions, Rows: make([]metav1.TableRow, 0, len(objs))}
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("%T has no object metadata: %w", obj, err)
		}
		cells, ok := byUID[m.GetUID()]
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

// rowUID reads the UID of the object a server table row describes.
func rowUID(row *metav1.TableRow) (types.UID, error) {
	if row.Object.Object != nil {
		m, err := meta.Accessor(row.Object.Object)
		if err != nil {
			return "", err
		}
		return m.GetUID(), nil
	}
	if len(row.Object.Raw) == 0 {
		return "", fmt.Errorf("the row carries no object metadata")
	}
	var partial struct {
		Metadata struct {
			UID types.UID `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(row.Object.Raw, &partial); err != nil {
		return "", err
	}
	return partial.Metadata.UID, nil
}
