package v1alpha1_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// TestDeepCopySharesNothing fills every document type at random, every
// field set, and checks that its deep copy reaches no pointer, slice or map
// of the original, and that changing every field of the copy leaves the
// original as it was. A type added to the scheme is checked with the others;
// a field whose copy deepcopy-gen or a hand-written DeepCopyInto forgets
// fails here.
func TestDeepCopySharesNothing(t *testing.T) {
	types := map[string]reflect.Type{"WatchEvent": reflect.TypeFor[v1alpha1.WatchEvent]()}
	for gvk, typ := range v1alpha1.Scheme.AllKnownTypes() {
		if gvk.GroupVersion() == v1alpha1.SchemeGroupVersion {
			types[gvk.Kind] = typ
		}
	}
	// Two fillers from one seed fill two equal originals: one to copy and
	// change the copy of, one to compare the first with afterwards.
	newFiller := func(seed int64) *randfill.Filler {
		return randfill.NewWithSeed(seed).NilChance(0).NumElements(1, 2).MaxDepth(16).Funcs(
			// Members' objects and a feed event's object: an object with
			// pointers, slices and maps of its own.
			func(o *runtime.Object, c randfill.Continue) {
				obj := &metav1.PartialObjectMetadata{}
				c.Fill(obj)
				*o = obj
			},
			// A change's values are decoded JSON.
			func(v *any, c randfill.Continue) {
				*v = map[string]any{c.String(8): []any{c.String(8), c.Int63(), map[string]any{"n": c.Float64()}}}
			},
		)
	}
	for kind, typ := range types {
		t.Run(kind, func(t *testing.T) {
			for seed := range int64(5) {
				orig := reflect.New(typ).Interface().(runtime.Object)
				newFiller(seed).Fill(orig)
				want := reflect.New(typ).Interface().(runtime.Object)
				newFiller(seed).Fill(want)
				c := orig.DeepCopyObject()
				if diff := cmp.Diff(orig, c); diff != "" {
					t.Fatalf("seed %d: the copy differs from the original (-original +copy):\n%s", seed, diff)
				}
				held := map[uintptr]string{}
				walk(reflect.ValueOf(orig), "", func(v reflect.Value, path string) {
					if p, ok := address(v); ok {
						held[p] = path
					}
				})
				walk(reflect.ValueOf(c), "", func(v reflect.Value, path string) {
					if p, ok := address(v); ok && held[p] != "" {
						t.Errorf("seed %d: the copy's %s is the original's %s", seed, path, held[p])
					}
				})
				walk(reflect.ValueOf(c), "", change)
				if diff := cmp.Diff(want, orig); diff != "" {
					t.Errorf("seed %d: changing the copy changed the original (-before +after):\n%s", seed, diff)
				}
			}
		})
	}
}

// walk calls fn on v and on every value reachable from it, through
// pointers, interfaces, struct fields, slice and array elements and map
// values (which fn sees as copies: a map value cannot be addressed). A
// time.Time is a value with nothing to share and is not entered.
func walk(v reflect.Value, path string, fn func(reflect.Value, string)) {
	fn(v, path)
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walk(v.Elem(), path, fn)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walk(v.Field(i), path+"."+v.Type().Field(i).Name, fn)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			walk(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k), fn)
		}
	}
}

// address is the memory a pointer, map or slice refers to.
func address(v reflect.Value) (uintptr, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map:
		return v.Pointer(), !v.IsNil()
	case reflect.Slice:
		return v.Pointer(), v.Cap() > 0
	}
	return 0, false
}

// change changes v if it can be set: a string, number or bool in place, and
// a map by adding a key.
func change(v reflect.Value, _ string) {
	switch v.Kind() {
	case reflect.Map:
		if !v.IsNil() && v.Type().Key().Kind() == reflect.String {
			v.SetMapIndex(reflect.ValueOf("changed").Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
		}
		return
	}
	if !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "-changed")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(v.Int() + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(v.Float() + 1)
	}
}
