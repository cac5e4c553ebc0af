package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/util/jsonpath"
)

// The server-side printers (k8s.io/kubernetes/pkg/printers/internalversion) always run with
// Wide: true and leave it to kubectl's TablePrinter to hide Priority 1 columns, so every table
// built here carries the wide cells too and TableFor needs no wide switch.

// TableFor builds the table `kubectl get` would show for objects of one GroupKind.
//
// objs holds objects of that kind: typed k8s.io/api structs for built-in kinds,
// *unstructured.Unstructured (converted to the typed struct for built-in kinds), or
// *metav1.PartialObjectMetadata, in which case only NAME and AGE can be filled. crdColumns are the
// CustomResourceDefinition's additionalPrinterColumns when gk is a custom resource, nil otherwise.
// now is the reference time for AGE-like cells.
//
// Rows keep the order of objs and each row's Object is the input object itself, which the
// TablePrinter reads for the NAMESPACE column, --show-labels and -L. TableFor never modifies objs.
func TableFor(gk schema.GroupKind, objs []runtime.Object, crdColumns []apiextensionsv1.CustomResourceColumnDefinition, now time.Time) (*metav1.Table, error) {
	for i, obj := range objs {
		// A nil interface or typed nil pointer would panic in an accessor further down.
		if isNilObject(obj) {
			return nil, fmt.Errorf("building %s table: object %d is nil (%T)", gk, i, obj)
		}
	}
	if len(crdColumns) > 0 {
		return customResourceTable(gk, objs, crdColumns, now)
	}
	if h, ok := builtinHandlers[gk]; ok && !anyMetadataOnly(objs) {
		return builtinTable(gk, h, objs, now)
	}
	if createdAtKinds.Has(gk) {
		return createdAtTable(gk, objs)
	}
	if _, ok := builtinHandlers[gk]; ok {
		// A built-in kind read through a metadata informer: the server would print more
		// columns, but NAME and AGE are all the metadata can fill.
		return ageTable(gk, objs, builtinAgeColumns, now)
	}
	// Most likely a custom resource without additionalPrinterColumns, for which the API
	// server serves a single "Age" column of type date.
	return ageTable(gk, objs, customResourceAgeColumns, now)
}

// NeedsFullObjects reports whether TableFor needs full objects for gk: true for the built-in kinds
// that have dedicated columns and for custom resources whose crdColumns read beyond metadata.
// False means metadata-only objects (*metav1.PartialObjectMetadata) give the same table, so the
// caller can watch them through a cheaper metadata informer.
func NeedsFullObjects(gk schema.GroupKind, crdColumns []apiextensionsv1.CustomResourceColumnDefinition) bool {
	if len(crdColumns) > 0 {
		for _, col := range crdColumns {
			if !isMetadataPath(col.JSONPath) {
				return true
			}
		}
		return false
	}
	_, ok := builtinHandlers[gk]
	return ok
}

// kindHandler prints the rows of one built-in kind.
type kindHandler struct {
	columns []metav1.TableColumnDefinition
	// newObject returns an empty typed object, the target of unstructured conversion.
	newObject func() runtime.Object
	// cells returns one row's cells; it fails on an object of the wrong Go type.
	cells func(obj runtime.Object, now time.Time) ([]any, error)
	// conditions returns the row conditions the server sets (only pods have them).
	conditions func(obj runtime.Object) []metav1.TableRowCondition
}

// handlerFor builds a kindHandler for the typed object *T from a cell function that cannot
// fail, so each kind's printer stays free of type assertions.
func handlerFor[T any, PT interface {
	*T
	runtime.Object
}](columns []metav1.TableColumnDefinition, cells func(PT, time.Time) []any) kindHandler {
	return kindHandler{
		columns:   columns,
		newObject: func() runtime.Object { return PT(new(T)) },
		cells: func(obj runtime.Object, now time.Time) ([]any, error) {
			typed, ok := obj.(PT)
			if !ok {
				return nil, fmt.Errorf("expected %T or *unstructured.Unstructured, got %T", PT(nil), obj)
			}
			return cells(typed, now), nil
		},
	}
}

// builtinTable prints full objects of a built-in kind with its dedicated columns.
func builtinTable(gk schema.GroupKind, h kindHandler, objs []runtime.Object, now time.Time) (*metav1.Table, error) {
	table := &metav1.Table{
		// Cloned so that a caller decorating the table cannot change the shared definitions.
		ColumnDefinitions: slices.Clone(h.columns),
		Rows:              make([]metav1.TableRow, 0, len(objs)),
	}
	for _, obj := range objs {
		typed := obj
		if u, ok := obj.(*unstructured.Unstructured); ok {
			if kind := u.GroupVersionKind().GroupKind(); kind.Kind != "" && kind != gk {
				return nil, fmt.Errorf("building %s table: got unstructured object %q of kind %s", gk, u.GetName(), kind)
			}
			// Convert into a fresh object: the converter must not touch the cached map.
			typed = h.newObject()
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), typed); err != nil {
				return nil, fmt.Errorf("building %s table: converting %q: %w", gk, u.GetName(), err)
			}
		}
		cells, err := h.cells(typed, now)
		if err != nil {
			return nil, fmt.Errorf("building %s table: %w", gk, err)
		}
		row := metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}}
		if h.conditions != nil {
			row.Conditions = h.conditions(typed)
		}
		table.Rows = append(table.Rows, row)
	}
	return table, nil
}

// ageTable prints NAME and AGE from metadata alone, which every object has.
func ageTable(gk schema.GroupKind, objs []runtime.Object, columns []metav1.TableColumnDefinition, now time.Time) (*metav1.Table, error) {
	table := &metav1.Table{
		ColumnDefinitions: slices.Clone(columns),
		Rows:              make([]metav1.TableRow, 0, len(objs)),
	}
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("building %s table: %T has no object metadata: %w", gk, obj, err)
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []any{m.GetName(), ageSince(m.GetCreationTimestamp(), now)},
			Object: runtime.RawExtension{Object: obj},
		})
	}
	return table, nil
}

// createdAtTable mirrors the API server's default table convertor, used by the few built-in
// kinds that have no printer (roles, limit ranges, CRDs...): an absolute UTC timestamp instead
// of an age, so it does not depend on now.
func createdAtTable(gk schema.GroupKind, objs []runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{
			nameColumn,
			{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
		},
		Rows: make([]metav1.TableRow, 0, len(objs)),
	}
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("building %s table: %T has no object metadata: %w", gk, obj, err)
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)},
			Object: runtime.RawExtension{Object: obj},
		})
	}
	return table, nil
}

// crdColumn is one parsed additionalPrinterColumn.
type crdColumn struct {
	def  apiextensionsv1.CustomResourceColumnDefinition
	path *jsonpath.JSONPath
}

// customResourceTable evaluates a CRD's additionalPrinterColumns the way the apiextensions
// API server does: NAME first, then one cell per column, nil where the path finds nothing.
func customResourceTable(gk schema.GroupKind, objs []runtime.Object, crdColumns []apiextensionsv1.CustomResourceColumnDefinition, now time.Time) (*metav1.Table, error) {
	table := &metav1.Table{
		ColumnDefinitions: make([]metav1.TableColumnDefinition, 0, 1+len(crdColumns)),
		Rows:              make([]metav1.TableRow, 0, len(objs)),
	}
	table.ColumnDefinitions = append(table.ColumnDefinitions, nameColumn)
	columns := make([]crdColumn, 0, len(crdColumns))
	for _, def := range crdColumns {
		path := jsonpath.New(def.Name)
		if err := path.Parse("{" + def.JSONPath + "}"); err != nil {
			return nil, fmt.Errorf("building %s table: column %q has an invalid JSONPath %q: %w", gk, def.Name, def.JSONPath, err)
		}
		// Optional fields are routinely absent; the server prints an empty cell, not an error.
		path.AllowMissingKeys(true)
		columns = append(columns, crdColumn{def: def, path: path})
		desc := def.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + def.JSONPath
		}
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{
			Name: def.Name, Type: def.Type, Format: def.Format, Description: desc, Priority: def.Priority,
		})
	}

	var buf bytes.Buffer
	for _, obj := range objs {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("building %s table: %T has no object metadata: %w", gk, obj, err)
		}
		content, err := unstructuredContent(obj)
		if err != nil {
			return nil, fmt.Errorf("building %s table: %w", gk, err)
		}
		cells := make([]any, 1, 1+len(columns))
		cells[0] = m.GetName()
		for _, col := range columns {
			cells = append(cells, crdCell(col, content, now, &buf))
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}})
	}
	return table, nil
}

// unstructuredContent returns obj as the map JSONPath walks. An Unstructured's own map is used
// as is (JSONPath only reads it); anything else is converted to a new map.
func unstructuredContent(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent(), nil
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T to unstructured: %w", obj, err)
	}
	return content, nil
}

// crdCell evaluates one column on one object. Like the server, a failed lookup is an empty
// cell rather than an error, since one odd object should not hide the whole list.
func crdCell(col crdColumn, content map[string]any, now time.Time, buf *bytes.Buffer) any {
	results, err := col.path.FindResults(content)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	// additionalPrinterColumns are simple paths, so only the first value counts.
	value := results[0][0].Interface()
	if col.def.Type == "string" {
		// PrintResults renders maps and lists as JSON, as kubectl shows them.
		buf.Reset()
		if err := col.path.PrintResults(buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
			return nil
		}
		return buf.String()
	}
	return crdTypedCell(col.def.Type, value, now)
}

// crdTypedCell converts a JSON value to the cell type the column declares; a value of another
// type yields an empty cell, as on the server.
func crdTypedCell(columnType string, value any, now time.Time) any {
	switch columnType {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		case json.Number:
			if i, err := v.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		case json.Number:
			if f, err := v.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
	case "date":
		if s, ok := value.(string); ok {
			var t metav1.Time
			if err := t.UnmarshalQueryParameter(s); err != nil {
				return "<invalid>"
			}
			return ageSince(t, now)
		}
	}
	return nil
}

// isMetadataPath reports whether a CRD column's JSONPath reads only .metadata, which
// PartialObjectMetadata carries too. Unparsable paths count as reading more, so the caller
// fetches full objects and TableFor reports the parse error.
func isMetadataPath(path string) bool {
	parser, err := jsonpath.Parse("column", "{"+path+"}")
	if err != nil || len(parser.Root.Nodes) != 1 {
		return false
	}
	list, ok := parser.Root.Nodes[0].(*jsonpath.ListNode)
	if !ok || len(list.Nodes) == 0 {
		return false
	}
	field, ok := list.Nodes[0].(*jsonpath.FieldNode)
	return ok && field.Value == "metadata"
}

// anyMetadataOnly reports whether some object carries metadata only; one table has one set of
// columns, so then every row falls back to NAME and AGE.
func anyMetadataOnly(objs []runtime.Object) bool {
	for _, obj := range objs {
		if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
			return true
		}
	}
	return false
}

// isNilObject reports whether obj is nil or a typed nil pointer.
func isNilObject(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// ageSince renders the time elapsed from t to now the way kubectl's AGE columns do.
func ageSince(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// microAgeSince is ageSince for the MicroTime fields of events.
func microAgeSince(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// groupKindSet is a small set of GroupKinds.
type groupKindSet map[schema.GroupKind]struct{}

// Has reports whether gk is in the set.
func (s groupKindSet) Has(gk schema.GroupKind) bool {
	_, ok := s[gk]
	return ok
}

// createdAtKinds are the built-in kinds whose REST storage uses the API server's default table
// convertor (NAME, CREATED AT) instead of a printer.
var createdAtKinds = groupKindSet{
	{Group: "", Kind: "LimitRange"}:                                   {},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                {},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:         {},
	{Group: "storage.k8s.io", Kind: "CSIStorageCapacity"}:             {},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: {},
}
