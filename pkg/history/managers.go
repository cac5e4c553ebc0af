package history

import (
	"bytes"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// fieldValue is one field of a server's list entry key.
type fieldValue = value.Field

// Managers are an object's managedFields entries with their field sets
// parsed, in the object's order: who last wrote which field, and when.
type Managers struct {
	Entries []metav1.ManagedFieldsEntry
	sets    []*fieldpath.Set
}

// ParseManagers parses the FieldsV1 of entries. An entry whose fields do not
// parse is an error naming its manager: a server never writes one.
func ParseManagers(entries []metav1.ManagedFieldsEntry) (*Managers, error) {
	m := &Managers{Entries: entries, sets: make([]*fieldpath.Set, len(entries))}
	for i, e := range entries {
		s := &fieldpath.Set{}
		if e.FieldsV1 != nil && len(e.FieldsV1.Raw) > 0 {
			if err := s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
				return nil, fmt.Errorf("reading the fields of manager %s (%s): %w", e.Manager, e.Operation, err)
			}
		}
		m.sets[i] = s
	}
	return m, nil
}

// Owners returns the indices of the entries that own the field at p of obj
// (decoded JSON) or anything below it, in the entries' order: the managers
// that last wrote some of it. Merge keys name list entries as the server
// does (containers and env by name, ports by containerPort and protocol):
// an entry of p, by key or by index, is matched with the entry of obj it
// names, whatever its index, so that an entry inserted before another does
// not move the other's owner.
func (m *Managers) Owners(obj any, p Path) []int {
	return m.find(obj, p, true)
}

// Exact returns the indices of the entries that own the field at p of obj
// itself: as a value they set, an entry of a list, or inside an atomic
// value they set whole. A map or list that managers only own parts of has
// no exact owner.
func (m *Managers) Exact(obj any, p Path) []int {
	return m.find(obj, p, false)
}

func (m *Managers) find(obj any, p Path, below bool) []int {
	var out []int
	for i, s := range m.sets {
		if owns(s, obj, p, below) {
			out = append(out, i)
		}
	}
	return out
}

// owns reports whether set s owns the field at p of v: it is a member, or
// inside an atomic member, or (below) has members under it.
func owns(s *fieldpath.Set, v any, p Path, below bool) bool {
	if len(p) == 0 {
		return below && !s.Empty()
	}
	step, rest := p[0], p[1:]
	next, found := child(v, step)
	for _, pe := range elements(s, step, next, found) {
		member := s.Members.Has(pe)
		sub, hasSub := s.Children.Get(pe)
		if len(rest) == 0 {
			if member || below && hasSub && !sub.Empty() {
				return true
			}
			continue
		}
		if member && !hasSub && pe.FieldName != nil {
			// An atomic value, set whole: everything in it is the owner's.
			return true
		}
		if member && pe.Key != nil && len(rest) == 1 && rest[0].IsField() && keyField(*pe.Key, rest[0].Field) {
			// An entry's key fields come with the entry.
			return true
		}
		if hasSub && owns(sub, next, rest, below) {
			return true
		}
	}
	return false
}

// child returns the value at step of v and whether it is there.
func child(v any, step Step) (any, bool) {
	return Lookup(v, Path{step})
}

// elements returns the path elements of s, at one level, that step names:
// a field by its name; a list entry as the server names it, by its key
// fields, its value (a set) or its index (an atomic list's), matched against
// entry, the value step names when found. An entry no longer there (a keyed
// step) matches the keys that hold its key.
func elements(s *fieldpath.Set, step Step, entry any, found bool) []fieldpath.PathElement {
	if step.IsField() {
		return []fieldpath.PathElement{fieldpath.FieldNameElement(step.Field)}
	}
	var out []fieldpath.PathElement
	match := func(pe fieldpath.PathElement) {
		ok := false
		switch {
		case pe.Key != nil && found:
			ok = keyMatches(*pe.Key, entry)
		case pe.Key != nil && step.IsKey():
			f, has := keyValue(*pe.Key, step.Key)
			ok = has && scalarEqual(f, step.Value)
		case pe.Value != nil && found:
			ok = Equal((*pe.Value).Unstructured(), entry)
		case pe.Index != nil && !step.IsKey():
			ok = *pe.Index == step.Index
		}
		if ok && !slices.ContainsFunc(out, pe.Equals) {
			out = append(out, pe)
		}
	}
	for pe := range s.Members.All() {
		match(pe)
	}
	for pe := range s.Children.All() {
		match(pe)
	}
	return out
}

// keyMatches reports whether every key field of a server's list entry key
// holds the same value in entry.
func keyMatches(key []fieldValue, entry any) bool {
	m, ok := entry.(map[string]any)
	if !ok {
		return false
	}
	for _, f := range key {
		v, ok := m[f.Name]
		if !ok || !scalarEqual(v, f.Value.Unstructured()) {
			return false
		}
	}
	return len(key) > 0
}

// keyValue returns the value of key field name, if the key has it.
func keyValue(key []fieldValue, name string) (any, bool) {
	for _, f := range key {
		if f.Name == name {
			return f.Value.Unstructured(), true
		}
	}
	return nil, false
}

// keyField reports whether name is one of the key's fields.
func keyField(key []fieldValue, name string) bool {
	_, ok := keyValue(key, name)
	return ok
}

// Fields returns the fields entry i owns in obj, decoded JSON, as paths in
// the order of its set: the leaves of the set (a value, a value set whole, a
// list entry owned without its fields), list entries named through keys
// when the key is one of the server's key fields for the entry, else by
// "name" when it is one, else by the first of them; entries of sets and
// atomic lists by their index in obj. Fields of entries obj no longer holds
// are left out.
func (m *Managers) Fields(i int, obj any, keys KeyFunc) []Path {
	var out []Path
	walkSet(m.sets[i], nil, obj, keys, &out)
	return out
}

func walkSet(s *fieldpath.Set, p Path, v any, keys KeyFunc, out *[]Path) {
	visit := func(pe fieldpath.PathElement, member bool) {
		step, ok := stepOf(pe, p, v, keys)
		if !ok {
			return
		}
		sub, hasSub := s.Children.Get(pe)
		if hasSub && !sub.Empty() {
			next, found := child(v, step)
			if !found {
				return
			}
			walkSet(sub, p.with(step), next, keys, out)
			return
		}
		if member {
			if _, found := child(v, step); found {
				*out = append(*out, p.with(step))
			}
		}
	}
	for pe := range s.Members.All() {
		if sub, ok := s.Children.Get(pe); !ok || sub.Empty() {
			visit(pe, true)
		}
	}
	for pe := range s.Children.All() {
		visit(pe, false)
	}
}

// stepOf is the step of path element pe under p, in v (the value at p):
// a list entry as YAMLLines names it, by keys where its list is keyed, else
// by its index, so that a field of Fields is a line's field.
func stepOf(pe fieldpath.PathElement, p Path, v any, keys KeyFunc) (Step, bool) {
	if pe.FieldName != nil {
		return FieldStep(*pe.FieldName), true
	}
	if pe.Index != nil {
		return IndexStep(*pe.Index), true
	}
	l, _ := v.([]any)
	at := -1
	for i, e := range l {
		if pe.Key != nil && keyMatches(*pe.Key, e) || pe.Value != nil && Equal((*pe.Value).Unstructured(), e) {
			at = i
			break
		}
	}
	if at < 0 {
		return Step{}, false
	}
	if key := listKey(p, l, nil, keys); key != "" {
		return KeyStep(key, l[at].(map[string]any)[key]), true
	}
	return IndexStep(at), true
}
