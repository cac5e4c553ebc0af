package informer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/wire"
)

// TableAccept asks the API server for its table of a list or watch, as
// kubectl does for human output.
const TableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io"

// Row is an object as the API server's table printed it: the object (its
// metadata, or all of it when the informer was asked for full rows) and the
// row's cells under the table's columns. A TableRows informer stores Rows.
//
// A reflector refuses Table objects (client-go v0.36), so the ListerWatcher
// of a TableRows informer unwraps each table into its rows before the
// reflector sees them: the informer indexes Rows like any object, and each
// row travels with the object it describes through the feed to the printer.
type Row struct {
	// Object is a *metav1.PartialObjectMetadata, or an
	// *unstructured.Unstructured for full rows.
	Object runtime.Object
	// Columns are the table's column definitions, shared by every row of a
	// resource and never modified.
	Columns []metav1.TableColumnDefinition
	// Cells are the row's cells, one per column.
	Cells []any
}

// GetObjectKind returns the object's kind.
func (r *Row) GetObjectKind() schema.ObjectKind { return r.Object.GetObjectKind() }

// GetObjectMeta returns the object's metadata, so meta.Accessor reads a Row
// as the object it describes.
func (r *Row) GetObjectMeta() metav1.Object {
	m, err := meta.Accessor(r.Object)
	if err != nil {
		return &metav1.ObjectMeta{}
	}
	return m
}

// TableRow returns the table's columns and the row's cells.
func (r *Row) TableRow() ([]metav1.TableColumnDefinition, []any) { return r.Columns, r.Cells }

// Unwrap returns the object the row describes.
func (r *Row) Unwrap() runtime.Object { return r.Object }

// DeepCopyObject copies the object and the cells; the column definitions are
// shared.
func (r *Row) DeepCopyObject() runtime.Object {
	if r == nil {
		return nil
	}
	out := &Row{Columns: r.Columns}
	if r.Object != nil {
		out.Object = r.Object.DeepCopyObject()
	}
	if r.Cells != nil {
		out.Cells = runtime.DeepCopyJSONValue(r.Cells).([]any)
	}
	return out
}

// rowsListWatch lists and watches one resource as the API server's table,
// unwrapping rows. list and watch send the request prepared by the factory
// (namespace, selectors) with the table Accept header and return the body.
type rowsListWatch struct {
	list  func(ctx context.Context, o metav1.ListOptions) ([]byte, error)
	watch func(ctx context.Context, o metav1.ListOptions) (io.ReadCloser, error)
	// full asks for whole objects in the rows (includeObject=Object).
	full bool
	// columns are the last column definitions the server sent; a stopped
	// watch's decoder may still write them while the next list does.
	mu      sync.Mutex
	columns []metav1.TableColumnDefinition
}

// setColumns keeps the column definitions of a table that has them and
// returns the ones its rows are under.
func (lw *rowsListWatch) setColumns(cols []metav1.TableColumnDefinition) []metav1.TableColumnDefinition {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(cols) > 0 {
		lw.columns = cols
	}
	return lw.columns
}

// includeObject is the includeObject parameter of the rows' requests.
func (lw *rowsListWatch) includeObject() metav1.IncludeObjectPolicy {
	if lw.full {
		return metav1.IncludeObject
	}
	return metav1.IncludeMetadata
}

// List reads one page of the table and returns its rows as a list of Rows.
func (lw *rowsListWatch) List(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
	data, err := lw.list(ctx, o)
	if err != nil {
		return nil, err
	}
	table, err := wire.DecodeTable(data)
	if err != nil {
		return nil, err
	}
	columns := lw.setColumns(table.ColumnDefinitions)
	list := &metav1.List{ListMeta: table.ListMeta, Items: make([]runtime.RawExtension, len(table.Rows))}
	for i := range table.Rows {
		row, err := lw.row(&table.Rows[i], columns)
		if err != nil {
			return nil, err
		}
		list.Items[i].Object = row
	}
	return list, nil
}

// Watch streams the table's changes, one row per event. Bookmarks are not
// asked for: the server sends them as objects of the resource, not rows.
func (lw *rowsListWatch) Watch(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
	o.Watch = true
	o.AllowWatchBookmarks = false
	body, err := lw.watch(ctx, o)
	if err != nil {
		return nil, err
	}
	return watch.NewStreamWatcher(&rowDecoder{lw: lw, body: body, dec: json.NewDecoder(body)}, watchErrorReporter{}), nil
}

// row unwraps one table row, under columns.
func (lw *rowsListWatch) row(tr *metav1.TableRow, columns []metav1.TableColumnDefinition) (*Row, error) {
	if len(tr.Object.Raw) == 0 {
		return nil, errors.New("the server's table row carries no object")
	}
	var obj runtime.Object
	if lw.full {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(tr.Object.Raw); err != nil {
			return nil, fmt.Errorf("reading a table row's object: %w", err)
		}
		obj = u
	} else {
		m := &metav1.PartialObjectMetadata{}
		if err := json.Unmarshal(tr.Object.Raw, m); err != nil {
			return nil, fmt.Errorf("reading a table row's object: %w", err)
		}
		obj = m
	}
	return &Row{Object: obj, Columns: columns, Cells: tr.Cells}, nil
}

// rowDecoder decodes a JSON watch stream of tables into Row events.
type rowDecoder struct {
	lw   *rowsListWatch
	body io.ReadCloser
	dec  *json.Decoder
}

func (d *rowDecoder) Decode() (watch.EventType, runtime.Object, error) {
	var ev struct {
		Type   watch.EventType `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	if err := d.dec.Decode(&ev); err != nil {
		return "", nil, err
	}
	if ev.Type == watch.Error {
		status := &metav1.Status{}
		if err := json.Unmarshal(ev.Object, status); err != nil {
			return "", nil, fmt.Errorf("reading a watch error: %w", err)
		}
		return ev.Type, status, nil
	}
	table, err := wire.DecodeTable(ev.Object)
	if err != nil {
		return "", nil, err
	}
	columns := d.lw.setColumns(table.ColumnDefinitions)
	if len(table.Rows) != 1 {
		return "", nil, fmt.Errorf("a %s watch event carried %d table rows, want 1", ev.Type, len(table.Rows))
	}
	row, err := d.lw.row(&table.Rows[0], columns)
	if err != nil {
		return "", nil, err
	}
	return ev.Type, row, nil
}

func (d *rowDecoder) Close() { _ = d.body.Close() }

// watchErrorReporter turns a broken stream into the error event a reflector
// restarts its watch on.
type watchErrorReporter struct{}

func (watchErrorReporter) AsObject(err error) runtime.Object {
	return &metav1.Status{Status: metav1.StatusFailure, Message: err.Error(), Reason: metav1.StatusReasonUnknown}
}

// TableRequest prepares a list or watch of res's table in ns (all namespaces
// when empty), with include as the rows' objects.
func TableRequest(client rest.Interface, res Resource, ns string, o metav1.ListOptions, include metav1.IncludeObjectPolicy) *rest.Request {
	return client.Get().NamespaceIfScoped(ns, res.Namespaced && ns != "").Resource(res.GVR.Resource).
		SetHeader("Accept", TableAccept).
		Param("includeObject", string(include)).
		VersionedParams(&o, metav1.ParameterCodec)
}

// RowMeta reads the UID, namespace and name of the object a table row
// describes (includeObject=Metadata or Object) into a PartialObjectMetadata
// holding only those, and keeps it as the row's Object so that it is read
// once. Only the keys are decoded: a row's whole metadata (labels,
// annotations, managedFields) costs more to decode than the rest of its table.
func RowMeta(row *metav1.TableRow) (*metav1.PartialObjectMetadata, error) {
	if m, ok := row.Object.Object.(*metav1.PartialObjectMetadata); ok {
		return m, nil
	}
	if row.Object.Object != nil {
		a, err := meta.Accessor(row.Object.Object)
		if err != nil {
			return nil, err
		}
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: a.GetUID(), Namespace: a.GetNamespace(), Name: a.GetName()}}, nil
	}
	if len(row.Object.Raw) == 0 {
		return nil, errors.New("the row carries no object metadata")
	}
	var partial struct {
		Metadata struct {
			UID       types.UID `json:"uid"`
			Namespace string    `json:"namespace"`
			Name      string    `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(row.Object.Raw, &partial); err != nil {
		return nil, err
	}
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{UID: partial.Metadata.UID, Namespace: partial.Metadata.Namespace, Name: partial.Metadata.Name}}
	row.Object = runtime.RawExtension{Object: m}
	return m, nil
}
