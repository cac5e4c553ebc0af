package printers

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
)

// TableFor builds a NAME and AGE table of objects of one GroupKind from their
// metadata alone. Human output prints the API server's own table of every kind
// (TableFromServer); this is what it prints when that table cannot be read
// (the server refused it, or it failed), with a warning saying so. Rows keep
// the order of objs and each row's Object is the input object itself, which
// the TablePrinter reads for the NAMESPACE column, --show-labels and -L.
func TableFor(gk schema.GroupKind, objs []runtime.Object, now time.Time) (*metav1.Table, error) {
	for i, obj := range objs {
		// A nil interface or typed nil pointer would panic in an accessor further down.
		if isNilObject(obj) {
			return nil, fmt.Errorf("building %s table: object %d is nil (%T)", gk, i, obj)
		}
	}
	table := &metav1.Table{
		ColumnDefinitions: slices.Clone(ageColumns),
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

// ageColumns are the columns of TableFor, as the API server names them.
var ageColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "Name must be unique within a namespace."},
	{Name: "Age", Type: "date", Description: "CreationTimestamp is a timestamp representing the server time when this object was created."},
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
