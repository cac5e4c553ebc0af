package mcp

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/jsonpath"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// LastAppliedAnnotation is kubectl apply's copy of the object it applied,
// Secret data and environment values included: never emitted.
const LastAppliedAnnotation = corev1.LastAppliedConfigAnnotation

// field is one JSONPath projection of the query tool's fields.
type field struct {
	expr string
	path *jsonpath.JSONPath
}

// parseFields parses the fields argument, each expression as kubectl's
// custom-columns reads one: {.spec.nodeName} or .spec.nodeName.
func parseFields(exprs []string) ([]field, error) {
	out := make([]field, 0, len(exprs))
	for _, e := range exprs {
		relaxed, err := get.RelaxedJSONPathExpression(e)
		if err != nil {
			return nil, badArgument("fields: invalid JSONPath %q: %v", e, err)
		}
		jp := jsonpath.New(e).AllowMissingKeys(true)
		if err := jp.Parse(relaxed); err != nil {
			return nil, badArgument("fields: invalid JSONPath %q: %v", e, err)
		}
		out = append(out, field{expr: e, path: jp})
	}
	return out, nil
}

// viewer projects objects for answers: the default projection, the fields
// asked for, redacted and cut.
type viewer struct {
	maxString int
	status    func(obj runtime.Object, now time.Time) (ready, status string)
	fields    []field
	now       time.Time
}

// view projects obj, of kind gvk, read from context ("" for the one
// context of the server); owner is its top-level controller, "" when not
// read.
func (v *viewer) view(context string, gvk schema.GroupVersionKind, obj runtime.Object, owner string) v1alpha1.ObjectView {
	out := v1alpha1.ObjectView{Context: context, APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Owner: owner}
	if a, err := meta.Accessor(obj); err == nil {
		out.Namespace, out.Name = a.GetNamespace(), a.GetName()
	}
	if v.status != nil {
		ready, status := v.status(obj, v.now)
		out.Ready, out.Status = v.cut(ready), v.cut(status)
	}
	out.Node = v.cut(nodeOf(obj))
	if len(v.fields) > 0 {
		out.Fields = v.project(gvk, obj)
	}
	return out
}

// nodeOf returns a pod's node, "" for anything else.
func nodeOf(obj runtime.Object) string {
	switch o := obj.(type) {
	case *corev1.Pod:
		return o.Spec.NodeName
	case *unstructured.Unstructured:
		if o.GetKind() == "Pod" {
			n, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName")
			return n
		}
	}
	return ""
}

// project evaluates the fields on a redacted copy of obj.
func (v *viewer) project(gvk schema.GroupVersionKind, obj runtime.Object) map[string]any {
	m, err := Redacted(gvk, obj)
	out := map[string]any{}
	if err != nil {
		for _, f := range v.fields {
			out[f.expr] = fmt.Sprintf("(not read: %v)", err)
		}
		return out
	}
	for _, f := range v.fields {
		results, err := f.path.FindResults(m)
		if err != nil {
			out[f.expr] = fmt.Sprintf("(not read: %v)", err)
			continue
		}
		var values []any
		for _, set := range results {
			for _, r := range set {
				if r.IsValid() && r.CanInterface() {
					values = append(values, v.cutValue(runtime.DeepCopyJSONValue(jsonValue(r.Interface()))))
				}
			}
		}
		switch len(values) {
		case 0:
			out[f.expr] = nil
		case 1:
			out[f.expr] = values[0]
		default:
			out[f.expr] = values
		}
	}
	return out
}

// jsonValue makes a JSONPath result a JSON value (unstructured's int64 and
// float64 are; an int is not).
func jsonValue(x any) any {
	switch n := x.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case float32:
		return float64(n)
	}
	return x
}

// Redacted returns obj, of kind gvk, as unstructured JSON values with what an
// MCP answer never carries replaced by a note of its size: a Secret's data
// and stringData values, every environment variable's value (containers,
// init and ephemeral containers, in pods and in every pod template, of any
// kind), the kubectl.kubernetes.io/last-applied-configuration annotation
// (of the object and of its templates), and managedFields. obj, a cache
// object, is not changed.
func Redacted(gvk schema.GroupVersionKind, obj runtime.Object) (map[string]any, error) {
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = runtime.DeepCopyJSON(u.Object)
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
			return nil, err
		}
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	if gvk.Group == "" && gvk.Kind == "Secret" {
		for _, key := range []string{"data", "stringData"} {
			data, ok := m[key].(map[string]any)
			if !ok {
				continue
			}
			for k, val := range data {
				s, _ := val.(string)
				n := len(s)
				if key == "data" {
					n = base64.StdEncoding.DecodedLen(len(s)) - strings.Count(s, "=")
				}
				data[k] = fmt.Sprintf("(redacted: %d bytes)", n)
			}
		}
	}
	redactWalk(m)
	return m, nil
}

// redactWalk replaces environment values and last-applied annotations
// wherever they are in v.
func redactWalk(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch k {
			case "env":
				if list, ok := val.([]any); ok {
					for _, e := range list {
						if em, ok := e.(map[string]any); ok {
							if s, ok := em["value"].(string); ok {
								em["value"] = fmt.Sprintf("(redacted: %d characters)", utf8.RuneCountInString(s))
							}
						}
					}
				}
			case "annotations":
				if ann, ok := val.(map[string]any); ok {
					if s, ok := ann[LastAppliedAnnotation].(string); ok {
						ann[LastAppliedAnnotation] = fmt.Sprintf("(redacted: %d characters)", utf8.RuneCountInString(s))
					}
				}
			}
			redactWalk(val)
		}
	case []any:
		for _, e := range x {
			redactWalk(e)
		}
	}
}

// cut shortens s to maxString characters, saying how long it was.
func (v *viewer) cut(s string) string { return cutString(s, v.maxString) }

func cutString(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == max {
			break
		}
		count++
	}
	return s[:i] + fmt.Sprintf("… (cut: %d characters)", n)
}

// cutValue cuts every string inside a JSON value.
func (v *viewer) cutValue(x any) any {
	switch t := x.(type) {
	case string:
		return v.cut(t)
	case map[string]any:
		for k, e := range t {
			t[k] = v.cutValue(e)
		}
	case []any:
		for i, e := range t {
			t[i] = v.cutValue(e)
		}
	}
	return x
}
