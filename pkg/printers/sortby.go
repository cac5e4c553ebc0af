package printers

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/jsonpath"
)

// sortObjectsBy orders objs in place, stably, by the first value the JSONPath
// field (in kubectl's braced form) finds in each: --sort-by as kubectl get
// does it, objects without the field first. kubectl's sorter ends the process
// through klog.Exitf when two values cannot be ordered (maps, a string and a
// number) and panics on some; here that is an error naming the field.
func sortObjectsBy(objs []runtime.Object, field string) error {
	keys, err := sortKeys(len(objs), func(i int) runtime.Object { return objs[i] }, field)
	if err != nil {
		return err
	}
	order, err := sortOrder(keys, field)
	if err != nil {
		return err
	}
	sorted := make([]runtime.Object, len(objs))
	for i, k := range order {
		sorted[i] = objs[k]
	}
	copy(objs, sorted)
	return nil
}

// sortTableBy orders the rows of table as sortObjectsBy orders their objects.
func sortTableBy(table *metav1.Table, field string) error {
	keys, err := sortKeys(len(table.Rows), func(i int) runtime.Object { return table.Rows[i].Object.Object }, field)
	if err != nil {
		return err
	}
	order, err := sortOrder(keys, field)
	if err != nil {
		return err
	}
	rows := make([]metav1.TableRow, len(table.Rows))
	for i, k := range order {
		rows[i] = table.Rows[k]
	}
	table.Rows = rows
	return nil
}

// sortKeys evaluates field on each of n objects as kubectl's sorter does: on
// an unstructured object's map, on a typed object's struct. An invalid Value
// is an object without the field. It fails, in kubectl's words, when no object
// has the field.
func sortKeys(n int, obj func(i int) runtime.Object, field string) ([]reflect.Value, error) {
	parser := jsonpath.New("sorting").AllowMissingKeys(true)
	if err := parser.Parse(field); err != nil {
		return nil, fmt.Errorf("sorting error: %w", err)
	}
	keys := make([]reflect.Value, n)
	found := false
	for i := range keys {
		results, err := findResults(parser, obj(i))
		if err != nil {
			return nil, fmt.Errorf("cannot sort by %s: %w", field, err)
		}
		if len(results) > 0 && len(results[0]) > 0 {
			keys[i], found = results[0][0], true
		}
	}
	if n > 0 && !found {
		return nil, fmt.Errorf("couldn't find any field with path %q in the list of objects", field)
	}
	return keys, nil
}

// findResults runs parser on obj. jsonpath reflects over arbitrary values and
// can panic on some (a nil embedded pointer); that is an error here.
func findResults(parser *jsonpath.JSONPath, obj runtime.Object) (results [][]reflect.Value, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return parser.FindResults(u.Object)
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil, nil
	}
	return parser.FindResults(v.Elem().Interface())
}

// sortOrder returns the indexes of keys in stable sorted order, or the first
// pair of values that cannot be ordered as an error.
func sortOrder(keys []reflect.Value, field string) ([]int, error) {
	order := make([]int, len(keys))
	for i := range order {
		order[i] = i
	}
	var sortErr error
	slices.SortStableFunc(order, func(a, b int) int {
		c, err := compareValues(keys[a], keys[b], false)
		if err != nil && sortErr == nil {
			sortErr = err
		}
		return c
	})
	if sortErr != nil {
		return nil, fmt.Errorf("cannot sort by %s: %w", field, sortErr)
	}
	return order, nil
}

// compareValues orders two sort keys as kubectl's sorter does where it can:
// missing and nil first, numbers by value, strings held in maps as quantities
// when both parse as one (so 500m < 2 < 10Gi) and otherwise as strings,
// timestamps and quantities by value, structs and lists field by field and
// element by element. Unlike kubectl it also orders booleans and mixes of
// integers and floats, which unstructured numbers are; anything else (maps, a
// string against a number) is an error. inInterface says the values came out
// of an interface, as every value of an unstructured object does.
func compareValues(a, b reflect.Value, inInterface bool) (int, error) {
	for a.IsValid() && (a.Kind() == reflect.Interface || a.Kind() == reflect.Pointer) && !a.IsNil() {
		inInterface = inInterface || a.Kind() == reflect.Interface
		a = a.Elem()
	}
	for b.IsValid() && (b.Kind() == reflect.Interface || b.Kind() == reflect.Pointer) && !b.IsNil() {
		inInterface = inInterface || b.Kind() == reflect.Interface
		b = b.Elem()
	}
	aNone, bNone := isNone(a), isNone(b)
	switch {
	case aNone && bNone:
		return 0, nil
	case aNone:
		return -1, nil
	case bNone:
		return 1, nil
	}
	ka, kb := kindClass(a.Kind()), kindClass(b.Kind())
	// Of two different types only numbers mix.
	switch {
	case ka == "" && valueKind(a) == valueKind(b):
		return 0, fmt.Errorf("cannot order %s values", valueKind(a))
	case ka == "" || ka != kb || ka == "struct" && a.Type() != b.Type():
		// Sorted, so that the message does not depend on the sort's order.
		kinds := []string{valueKind(a), valueKind(b)}
		slices.Sort(kinds)
		return 0, fmt.Errorf("cannot compare %s with %s", kinds[0], kinds[1])
	}
	switch ka {
	case "number":
		return compareNumbers(a, b), nil
	case "bool":
		return cmp.Compare(boolInt(a.Bool()), boolInt(b.Bool())), nil
	case "string":
		if inInterface {
			if qa, err := resource.ParseQuantity(a.String()); err == nil {
				if qb, err := resource.ParseQuantity(b.String()); err == nil {
					return qa.Cmp(qb), nil
				}
			}
		}
		return cmp.Compare(a.String(), b.String()), nil
	case "list":
		for i := 0; i < min(a.Len(), b.Len()); i++ {
			if c, err := compareValues(a.Index(i), b.Index(i), inInterface); c != 0 || err != nil {
				return c, err
			}
		}
		return cmp.Compare(a.Len(), b.Len()), nil
	}
	// Structs of one type.
	if !a.CanInterface() || !b.CanInterface() {
		return 0, fmt.Errorf("cannot compare unexported %s values", a.Type())
	}
	switch x := a.Interface().(type) {
	case metav1.Time:
		y := b.Interface().(metav1.Time)
		return x.Compare(y.Time), nil
	case resource.Quantity:
		return x.Cmp(b.Interface().(resource.Quantity)), nil
	}
	for i := 0; i < a.NumField(); i++ {
		if !a.Type().Field(i).IsExported() {
			continue
		}
		if c, err := compareValues(a.Field(i), b.Field(i), inInterface); c != 0 || err != nil {
			return c, err
		}
	}
	return 0, nil
}

// isNone reports a missing key, a nil pointer or a nil interface.
func isNone(v reflect.Value) bool {
	if !v.IsValid() {
		return true
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// kindClass groups the kinds compareValues orders; "" for the others.
func kindClass(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "bool"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Struct:
		return "struct"
	}
	return ""
}

// compareNumbers orders two numbers of any kinds, exactly when both are
// integers of one signedness.
func compareNumbers(a, b reflect.Value) int {
	switch {
	case a.CanInt() && b.CanInt():
		return cmp.Compare(a.Int(), b.Int())
	case a.CanUint() && b.CanUint():
		return cmp.Compare(a.Uint(), b.Uint())
	}
	return cmp.Compare(asFloat(a), asFloat(b))
}

func asFloat(v reflect.Value) float64 {
	switch {
	case v.CanInt():
		return float64(v.Int())
	case v.CanUint():
		return float64(v.Uint())
	}
	return v.Float()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// valueKind names a value's kind for an error: "map", "string", "int64".
func valueKind(v reflect.Value) string {
	if v.Kind() == reflect.Map {
		return "map"
	}
	return v.Type().String()
}
