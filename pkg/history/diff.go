package history

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// Change is one field that differs between two states of an object.
type Change struct {
	Path Path
	// Old and New are the values as JSON decodes them; HasOld is false for a
	// field added, HasNew for one removed.
	Old, New       any
	HasOld, HasNew bool
}

// KeyFunc returns the merge key of the list at p, a path from the root of
// the values diffed, or "" for a list whose entries have none.
type KeyFunc func(p Path) string

// Diff returns the fields that differ between a and b, decoded JSON, in path
// order. A list whose entries have a merge key (keys) is compared entry by
// entry, each named by its key, so that an entry added before others is one
// change, not a change of every entry after it, and a change inside an entry
// names it as a strategic merge patch or server-side apply does; every
// other list that differs is one change, as a whole. A field added or
// removed with everything below it is one change.
func Diff(a, b any, keys KeyFunc) []Change {
	var out []Change
	diff(nil, a, b, keys, &out)
	return out
}

func diff(p Path, a, b any, keys KeyFunc, out *[]Change) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		for _, k := range Fields(av, bv) {
			x, inA := av[k]
			y, inB := bv[k]
			if inA && inB {
				diff(p.Field(k), x, y, keys, out)
			} else {
				*out = append(*out, Change{Path: p.Field(k), Old: x, HasOld: inA, New: y, HasNew: inB})
			}
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		if key := listKey(p, av, bv, keys); key != "" {
			diffKeyed(p, key, av, bv, keys, out)
			return
		}
	}
	if !Equal(a, b) {
		*out = append(*out, Change{Path: p, Old: a, New: b, HasOld: true, HasNew: true})
	}
}

// Fields returns the names of the fields of two objects, decoded JSON, each
// once, sorted: the order a diff goes through them in.
func Fields(a, b map[string]any) []string {
	names := make([]string, 0, len(a)+len(b))
	for k := range a {
		names = append(names, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

// listKey is the merge key of the lists a and b at p when every entry of
// each is an object holding a scalar under it, each value once; "" otherwise.
func listKey(p Path, a, b []any, keys KeyFunc) string {
	if keys == nil {
		return ""
	}
	key := keys(p)
	if key == "" {
		return ""
	}
	for _, l := range [][]any{a, b} {
		for i, e := range l {
			m, ok := e.(map[string]any)
			if !ok {
				return ""
			}
			v, ok := m[key]
			if !ok || !isScalar(v) || keyed(l[:i], key, v) >= 0 {
				return ""
			}
		}
	}
	return key
}

// diffKeyed compares two keyed lists entry by entry: the entries removed, in
// a's order, then b's entries in its order.
func diffKeyed(p Path, key string, a, b []any, keys KeyFunc, out *[]Change) {
	for _, e := range a {
		v := e.(map[string]any)[key]
		if keyed(b, key, v) < 0 {
			*out = append(*out, Change{Path: p.Key(key, v), Old: e, HasOld: true})
		}
	}
	for _, e := range b {
		v := e.(map[string]any)[key]
		if i := keyed(a, key, v); i >= 0 {
			diff(p.Key(key, v), a[i], e, keys, out)
		} else {
			*out = append(*out, Change{Path: p.Key(key, v), New: e, HasNew: true})
		}
	}
}

func isScalar(v any) bool {
	switch v.(type) {
	case string, bool, int64, float64, int, int32:
		return true
	}
	return false
}

// Equal compares decoded JSON values; numbers of different Go types holding
// the same number are equal, as they are in JSON.
func Equal(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !Equal(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !Equal(av[i], bv[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// StructKeys returns the KeyFunc of objects of dataStruct's type (a pointer
// to a built-in API type, corev1.PodTemplateSpec for a pod template): each
// list's patchMergeKey, the key kubectl's strategic merge patches merge its
// entries by (containers and env by name, ports by containerPort,
// volumeMounts by mountPath). A type it cannot read has no keys.
func StructKeys(dataStruct any) KeyFunc {
	root, err := strategicpatch.NewPatchMetaFromStruct(dataStruct)
	if err != nil {
		return func(Path) string { return "" }
	}
	return func(p Path) string {
		var meta strategicpatch.LookupPatchMeta = root
		for i, s := range p {
			if !s.IsField() {
				// The entry's type was stepped into with its list.
				continue
			}
			if i == len(p)-1 {
				_, pm, err := meta.LookupPatchMetadataForSlice(s.Field)
				if err != nil {
					return ""
				}
				return pm.GetPatchMergeKey()
			}
			var err error
			if p[i+1].IsField() {
				meta, _, err = meta.LookupPatchMetadataForStruct(s.Field)
			} else {
				meta, _, err = meta.LookupPatchMetadataForSlice(s.Field)
			}
			if err != nil {
				return ""
			}
		}
		return ""
	}
}
