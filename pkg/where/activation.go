package where

import (
	"reflect"
	"sync"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// activation binds the variables for one evaluation. Each is converted when
// an expression first reads it, and once: a variable no expression names
// costs nothing.
type activation struct {
	f                   *Filter
	in                  Input
	object, owner, node ref.Val
	// root is object's value when object is a typed struct, kept here so
	// that pooled activations present it with no allocation.
	root structVal
}

// activations are reused: Match allocates none in the steady state.
var activations = sync.Pool{New: func() any { return &activation{} }}

func newActivation(f *Filter, in Input) *activation {
	a := activations.Get().(*activation)
	a.f, a.in = f, in
	return a
}

// release returns a to the pool, holding nothing of the evaluation: no
// value it made outlives Match.
func (a *activation) release() {
	*a = activation{}
	activations.Put(a)
}

var nodeTypeMeta = &typeMeta{apiVersion: "v1", kind: "Node"}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case ObjectVar:
		if a.object == nil {
			a.object = rootValInto(a.in.Object, &a.f.typeMeta, &a.root)
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
	return rootValInto(obj, tm, nil)
}

// rootValInto is rootVal, writing a typed object's structVal to into when it
// is not nil.
func rootValInto(obj any, tm *typeMeta, into *structVal) ref.Val {
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
	case cache.DeletedFinalStateUnknown:
		// What a delete handler gets for an object deleted while its
		// watch was down.
		return rootValInto(o.Obj, tm, into)
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
	if into == nil {
		into = &structVal{}
	}
	*into = structVal{v: v, info: info.(*structInfo), typeMeta: tm}
	return into
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
		if obj != nil {
			if m, ok := obj.Object["metadata"]; ok {
				meta = adapter.NativeToValue(m)
			}
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
