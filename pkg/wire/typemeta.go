package wire

import (
	"reflect"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	typeMetaType = reflect.TypeOf(metav1.TypeMeta{})
	embedsCache  sync.Map // reflect.Type -> bool
)

// EmbedsTypeMeta reports whether the object type t (a pointer to a top-level API
// struct) holds, below its own TypeMeta, another struct that embeds TypeMeta.
// Protobuf has no field for TypeMeta, so such an embedded object's apiVersion and
// kind do not survive a protobuf round trip, while JSON keeps them. Deciding by
// reflection keeps the rule right for every type client-go knows, with no list to
// maintain.
func EmbedsTypeMeta(t reflect.Type) bool {
	if v, ok := embedsCache.Load(t); ok {
		return v.(bool)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	found := false
	if t.Kind() == reflect.Struct {
		seen := map[reflect.Type]bool{}
		for i := 0; i < t.NumField() && !found; i++ {
			f := t.Field(i)
			if f.Type == typeMetaType {
				continue // the object's own TypeMeta
			}
			found = nestedTypeMeta(f.Type, seen)
		}
	}
	embedsCache.Store(t, found)
	return found
}

// nestedTypeMeta walks t looking for a struct with an embedded TypeMeta.
func nestedTypeMeta(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return nestedTypeMeta(t.Elem(), seen)
	case reflect.Struct:
	default:
		return false
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type == typeMetaType {
			return true
		}
		if nestedTypeMeta(f.Type, seen) {
			return true
		}
	}
	return false
}
