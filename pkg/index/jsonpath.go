package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kubectl/pkg/cmd/get"
)

// jsonPathIndexPrefix starts the names of JSONPath indexes.
const jsonPathIndexPrefix = "jsonpath:"

// JSONPathIndexName returns the name of the index built by
// JSONPathIndexFunc(expr): "jsonpath:" followed by the expression in the
// braced form kubectl normalises it to, so that "spec.x", ".spec.x" and
// "{.spec.x}" name one index and a second request for it reuses the first.
func JSONPathIndexName(expr string) string {
	if relaxed, err := get.RelaxedJSONPathExpression(expr); err == nil {
		return jsonPathIndexPrefix + relaxed
	}
	return jsonPathIndexPrefix + expr
}

// JSONPathIndexFunc returns an IndexFunc keying objects by the values of the
// JSONPath expression expr, written as for kubectl's custom-columns: "spec.x",
// ".spec.x" or "{.spec.x}". expr is parsed once, here; an invalid one is an
// error quoting it.
//
// Every value found is a key: strings as they are, numbers and booleans as
// kubectl's jsonpath output prints them, values with a JSON string form
// (timestamps, quantities) as that string, and maps and lists as compact JSON
// with sorted keys. Missing fields and nulls give no key. So do evaluation
// errors such as an index out of range, because a store panics when an index
// function fails: the object lands in the <none> group instead.
//
// Keys are those of the object's JSON form, what kubectl get -o jsonpath
// shows, except that JSON keys leave < > & unescaped. Typed objects are walked
// by reflection on their json tags, about 5µs a pod against 20-60µs for
// converting it to unstructured; only when that walk cannot be trusted to agree with JSON (a zero value, which JSON may omit;
// filters, wildcards and recursive descent, which see fields JSON omits) is
// the object converted to unstructured first. Two differences remain: typed
// objects in informer stores carry no apiVersion or kind, and reflection also
// matches Go field names (.spec.NodeName).
//
// The returned function is safe for concurrent use by several stores.
func JSONPathIndexFunc(expr string) (cache.IndexFunc, error) {
	x, err := newJSONPathIndex(expr)
	if err != nil {
		return nil, err
	}
	return x.keys, nil
}

// jsonPathIndex is a parsed JSONPath index expression.
type jsonPathIndex struct {
	name string
	// mu serializes FindResults: a JSONPath keeps evaluation state in itself
	// and client-go does not promise it is safe for concurrent use, while one
	// IndexFunc may serve the stores of several informers at once.
	mu sync.Mutex
	jp *jsonpath.JSONPath
	// jsonOnly says typed objects must be converted before evaluation.
	jsonOnly bool
}

func newJSONPathIndex(expr string) (*jsonPathIndex, error) {
	if strings.TrimSpace(expr) == "" {
		// RelaxedJSONPathExpression passes "" through, and an empty template
		// would silently put every object in <none>.
		return nil, errors.New("empty JSONPath expression")
	}
	relaxed, err := get.RelaxedJSONPathExpression(expr)
	if err != nil {
		return nil, fmt.Errorf("invalid JSONPath expression %q: %w", expr, err)
	}
	jp := jsonpath.New(expr).AllowMissingKeys(true)
	if err := jp.Parse(relaxed); err != nil {
		return nil, fmt.Errorf("invalid JSONPath expression %q: %w", expr, err)
	}
	// JSONPath keeps its parse tree private; parsing again is the only way to
	// inspect it, and costs nothing next to evaluating it per object.
	p, err := jsonpath.Parse(expr, relaxed)
	if err != nil {
		return nil, fmt.Errorf("invalid JSONPath expression %q: %w", expr, err)
	}
	jsonOnly, err := inspect(p.Root)
	if err != nil {
		return nil, fmt.Errorf("invalid JSONPath expression %q: %w", expr, err)
	}
	return &jsonPathIndex{name: JSONPathIndexName(expr), jp: jp, jsonOnly: jsonOnly}, nil
}

// inspect reports whether the tree under n needs the JSON form of typed
// objects, and rejects identifiers: range and end need a multi-part template
// that RelaxedJSONPathExpression never produces, and any other identifier
// fails on every object.
func inspect(n jsonpath.Node) (jsonOnly bool, err error) {
	switch n := n.(type) {
	case *jsonpath.ListNode:
		return inspectAll(n.Nodes)
	case *jsonpath.UnionNode:
		var nodes []jsonpath.Node
		for _, c := range n.Nodes {
			nodes = append(nodes, c)
		}
		return inspectAll(nodes)
	case *jsonpath.FilterNode:
		// A filter compares fields JSON may omit (@.x=="" matches a typed
		// zero), so its verdict on a struct can differ from kubectl's.
		if _, err := inspect(n.Left); err != nil {
			return false, err
		}
		if _, err := inspect(n.Right); err != nil {
			return false, err
		}
		return true, nil
	case *jsonpath.WildcardNode, *jsonpath.RecursiveNode:
		// On a struct these visit every Go field, unexported and omitted ones
		// included.
		return true, nil
	case *jsonpath.FieldNode:
		// A bare "." is a field with no name, which on a struct matches an
		// inline field (TypeMeta) by its empty json tag; JSON has no such key.
		return n.Value == "", nil
	case *jsonpath.IdentifierNode:
		return false, fmt.Errorf("unexpected %q, expected a single path", n.Name)
	}
	return false, nil
}

// inspectAll inspects each of nodes: JSON-only when one is.
func inspectAll(nodes []jsonpath.Node) (jsonOnly bool, err error) {
	for _, c := range nodes {
		j, err := inspect(c)
		if err != nil {
			return false, err
		}
		jsonOnly = jsonOnly || j
	}
	return jsonOnly, nil
}

// keys is the IndexFunc.
func (x *jsonPathIndex) keys(obj any) ([]string, error) {
	obj = unwrap(obj)
	if _, err := objectMeta(x.name, obj); err != nil {
		return nil, err
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		// u.Object, not UnstructuredContent, which fills in a nil map and
		// so would mutate the cached object.
		keys, _ := x.eval(u.Object, false)
		return keys, nil
	}
	if !x.jsonOnly {
		if keys, trusted := x.eval(obj, true); trusted {
			return keys, nil
		}
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		// Not a JSON-shaped struct: there is nothing kubectl could show.
		return nil, nil
	}
	keys, _ := x.eval(content, false)
	return keys, nil
}

// eval returns the keys of data. With typed set, data is a Go struct and
// trusted says whether the keys are certainly those of its JSON form; when it
// is false the caller must evaluate the JSON form instead.
func (x *jsonPathIndex) eval(data any, typed bool) (keys []string, trusted bool) {
	results, err := x.find(data)
	if err != nil {
		return nil, false
	}
	for _, values := range results {
		for _, v := range values {
			v, ok := deref(v)
			if typed && (!ok || !v.CanInterface() || isEmpty(v)) {
				return nil, false
			}
			if !ok {
				continue
			}
			k, ok := render(v, typed)
			if !ok {
				if typed {
					return nil, false
				}
				continue
			}
			keys = append(keys, k)
		}
	}
	if len(keys) > 1 {
		// Two containers with one image are one key; the store would cope
		// with duplicates but Group callers should not see them.
		slices.Sort(keys)
		keys = slices.Compact(keys)
	}
	return keys, true
}

// find runs the expression on data.
func (x *jsonPathIndex) find(data any) (results [][]reflect.Value, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	// jsonpath reflects over arbitrary values (a nil embedded pointer makes
	// FieldByName panic); a panic here would happen under the store's lock
	// and end the command, where a missing key only moves one object.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("evaluating %s: %v", x.name, r)
		}
	}()
	return x.jp.FindResults(data)
}

// deref follows pointers and interfaces; ok is false at a nil.
func deref(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, v.IsValid()
}

// isEmpty reports values that encoding/json may leave out of a typed object's
// JSON form (omitempty, omitzero), so reflection alone cannot tell whether
// kubectl would see them.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice, reflect.Array, reflect.String:
		return v.Len() == 0
	}
	return v.IsZero()
}

// render returns the key for one result value. canonical re-encodes maps and
// lists so that a struct's fields come out sorted, as an unstructured map's do.
func render(v reflect.Value, canonical bool) (string, bool) {
	// Kinds first: named types such as corev1.PodPhase would otherwise go
	// through their String methods, and these need no allocation beyond the
	// result.
	switch v.Kind() {
	case reflect.String:
		return v.String(), true
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10), true
	case reflect.Float32:
		return strconv.FormatFloat(v.Float(), 'g', -1, 32), true
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), true
	}
	if !v.CanInterface() {
		return "", false
	}
	b, err := marshal(v.Interface())
	if err != nil {
		return "", false
	}
	switch {
	case len(b) == 0 || string(b) == "null":
		return "", false
	case b[0] == '"':
		// metav1.Time, resource.Quantity, []byte: their JSON form is a string
		// and an unstructured object holds that string.
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", false
		}
		return s, true
	case canonical && (b[0] == '{' || b[0] == '['):
		var generic any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&generic); err != nil {
			return "", false
		}
		if b, err = marshal(generic); err != nil {
			return "", false
		}
	}
	return string(b), true
}

// marshal is compact json.Marshal without HTML escaping: keys are shown in
// terminals, where \u003c would only obscure a '<'.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
