package feed

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/history"
)

// Change is one field that differs between two states of an object; the
// watch event document (v1alpha1.WatchEvent) carries it.
type Change = v1alpha1.Change

// ignoredPaths change on writes that say nothing about what changed: the
// resourceVersion on every write, managedFields on every write by a new manager
// or operation, and the generation counters that follow spec changes already
// shown field by field.
var ignoredPaths = map[string]bool{
	".metadata.resourceVersion":  true,
	".metadata.managedFields":    true,
	".metadata.generation":       true,
	".status.observedGeneration": true,
}

// Diff returns the fields that differ between old and new, in path order, less
// the bookkeeping in ignoredPaths. Objects are compared in their JSON form;
// a field added or removed with everything below it is one change. Neither
// object is modified.
func Diff(old, new runtime.Object) ([]Change, error) {
	a, err := content(old)
	if err != nil {
		return nil, err
	}
	b, err := content(new)
	if err != nil {
		return nil, err
	}
	var out []Change
	walk("", a, b, &out)
	return out, nil
}

// content returns obj's JSON form as a map, without copying unstructured objects
// (walk only reads).
func content(obj runtime.Object) (map[string]any, error) {
	if w, ok := obj.(interface{ Unwrap() runtime.Object }); ok {
		// A table row (informer.Row) diffs as the object it describes.
		obj = w.Unwrap()
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("diff: converting %T: %w", obj, err)
	}
	return m, nil
}

func walk(path string, a, b any, out *[]Change) {
	if ignoredPaths[path] {
		return
	}
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			for _, k := range history.Fields(av, bv) {
				p := path + segment(k)
				if ignoredPaths[p] {
					continue
				}
				x, inA := av[k]
				y, inB := bv[k]
				if inA && inB {
					walk(p, x, y, out)
				} else {
					*out = append(*out, Change{Path: p, Old: x, HasOld: inA, New: y, HasNew: inB})
				}
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := 0; i < max(len(av), len(bv)); i++ {
				p := path + "[" + strconv.Itoa(i) + "]"
				switch {
				case i < len(av) && i < len(bv):
					walk(p, av[i], bv[i], out)
				case i < len(av):
					*out = append(*out, Change{Path: p, Old: av[i], HasOld: true})
				default:
					*out = append(*out, Change{Path: p, New: bv[i], HasNew: true})
				}
			}
			return
		}
	}
	if !equal(a, b) {
		*out = append(*out, Change{Path: path, Old: a, New: b, HasOld: true, HasNew: true})
	}
}

// equal compares JSON values; int64 and float64 holding the same number are
// equal, as they are in JSON.
func equal(a, b any) bool {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(float64); ok {
			return float64(x) == y
		}
	case float64:
		if y, ok := b.(int64); ok {
			return x == float64(y)
		}
	}
	return reflect.DeepEqual(a, b)
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// segment renders one map key of a jq path.
func segment(key string) string {
	if identifier.MatchString(key) {
		return "." + key
	}
	q, _ := json.Marshal(key)
	return "[" + string(q) + "]"
}
