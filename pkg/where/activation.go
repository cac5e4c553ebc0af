package where

import (
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// activation binds the variables for one evaluation. Each is converted when
// an expression first reads it, and once: a variable no expression names
// costs nothing.
type activation struct {
	f                   *Filter
	in                  *Input
	object, owner, node ref.Val
}

var nodeTypeMeta = &typeMeta{apiVersion: "v1", kind: "Node"}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case ObjectVar:
		if a.object == nil {
			a.object = rootVal(a.in.Object, &a.f.typeMeta)
		}
		return a.object, true
	case OwnerVar:
		if a.owner == nil {
			a.owner = ownerVal(a.in.Owner)
		}
		return a.owner, true
	case NodeVar:
		if a.node == nil {
			a.node = rootVal(a.in.Node, nodeTypeMeta)
		}
		return a.node, true
	case NowVar:
		return a.f.conds.now, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// rootVal presents an object. A typed object is read lazily (structVal) with
// tm's apiVersion and kind; an unstructured one is its JSON map, as the
// dynamic client decoded it.
func rootVal(obj any, tm *typeMeta) ref.Val {
	switch o := obj.(type) {
	case nil:
		return types.NullValue
	case *unstructured.Unstructured:
		if o == nil {
			return types.NullValue
		}
		return adapter.NativeToValue(o.Object)
	case map[string]any:
		return adapter.NativeToValue(o)
	case ref.Val:
		return o
	}
	v := reflect.ValueOf(obj)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return types.NullValue
		}
		v = v.Elem()
	}
	c := codecFor(v.Type())
	if v.Kind() != reflect.Struct {
		return c.toVal(v)
	}
	info, _ := structs.Load(v.Type())
	return &structVal{v: v, info: info.(*structInfo), typeMeta: tm}
}

var ownerKeys = []types.String{"apiVersion", "kind", "metadata"}

// ownerVal presents an owner: its apiVersion, kind and metadata, and
// nothing else even when the whole object is at hand, so that what an
// expression may read of it does not depend on the informer that found it.
func ownerVal(o *Owner) ref.Val {
	if o == nil {
		return types.NullValue
	}
	var meta ref.Val
	switch obj := o.Object.(type) {
	case nil:
	case *unstructured.Unstructured:
		if m, ok := obj.Object["metadata"]; ok && obj != nil {
			meta = adapter.NativeToValue(m)
		}
	default:
		v := reflect.ValueOf(obj)
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Type() == objectMetaType {
			meta = codecFor(objectMetaType).toVal(v)
		} else if m, ok := rootVal(obj, nil).(*structVal); ok {
			meta, _ = m.Find(types.String("metadata"))
		}
	}
	return &fixedMap{keys: ownerKeys, vals: []ref.Val{types.String(o.APIVersion), types.String(o.Kind), meta}}
}
