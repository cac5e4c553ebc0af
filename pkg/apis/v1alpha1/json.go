package v1alpha1

import (
	"encoding/json"
	"maps"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scripts iterate .groups[], .items[] and .warnings[]: the documents write
// them as arrays, never null, whatever a document built in code holds.

// orEmpty returns s, or an empty slice when s is nil: JSON writes it as []
// rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// MarshalJSON writes the list with its groups and warnings as arrays.
func (l GroupList) MarshalJSON() ([]byte, error) {
	type fields GroupList
	f := fields(l)
	f.Groups, f.Warnings = orEmpty(f.Groups), orEmpty(f.Warnings)
	return json.Marshal(f)
}

// groupContextJSON is one context's part of a group in JSON: its summary and
// its members as items.
type groupContextJSON struct {
	Context string           `json:"context"`
	Summary GroupSummary     `json:"summary"`
	Items   []runtime.Object `json:"items"`
}

// MarshalJSON writes the group's name, key and summary, then its members as
// "items", each object as kubectl prints it, or in an answer over several
// contexts "contexts": each context's summary and its members as "items".
func (g Group) MarshalJSON() ([]byte, error) {
	out := struct {
		Name     string              `json:"name"`
		Key      GroupKey            `json:"key"`
		Summary  GroupSummary        `json:"summary"`
		Items    *[]runtime.Object   `json:"items,omitempty"`
		Contexts *[]groupContextJSON `json:"contexts,omitempty"`
	}{Name: g.Name, Key: g.Key, Summary: g.Summary}
	if len(g.Contexts) == 0 {
		items := itemsOf(g.Members)
		out.Items = &items
		return json.Marshal(out)
	}
	contexts := make([]groupContextJSON, len(g.Contexts))
	for i, c := range g.Contexts {
		var members []Members
		for _, m := range g.Members {
			if m.Context == c.Context {
				members = append(members, m)
			}
		}
		contexts[i] = groupContextJSON{Context: c.Context, Summary: c.Summary, Items: itemsOf(members)}
	}
	out.Contexts = &contexts
	return json.Marshal(out)
}

// itemsOf is the objects of members as kubectl prints them, never nil.
func itemsOf(members []Members) []runtime.Object {
	items := []runtime.Object{}
	for _, m := range members {
		for _, o := range m.Objects {
			items = append(items, WithKind(o, m.GVK))
		}
	}
	return items
}

// MarshalJSON writes the tree with its warnings as an array.
func (t Tree) MarshalJSON() ([]byte, error) {
	type fields Tree
	f := fields(t)
	f.Warnings = orEmpty(f.Warnings)
	return json.Marshal(f)
}

// MarshalJSON writes the list with its items and warnings as arrays.
func (l RelationList) MarshalJSON() ([]byte, error) {
	type fields RelationList
	f := fields(l)
	f.Items, f.Warnings = orEmpty(f.Items), orEmpty(f.Warnings)
	return json.Marshal(f)
}

// WithKind returns obj as kubectl prints it, with the apiVersion and kind of
// gvk, which objects read from informers lack. obj is a read-only cache
// object and is left untouched: the result is a copy of its top level,
// sharing everything below it with obj, which suffices for encoders that only
// read (json.Marshal, the name printer). A deep copy of every object was a
// third of what -o json allocated.
func WithKind(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		c := &unstructured.Unstructured{Object: maps.Clone(u.Object)}
		if !gvk.Empty() {
			c.SetGroupVersionKind(gvk)
		}
		return c
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return deepWithKind(obj, gvk)
	}
	c := reflect.New(v.Elem().Type())
	c.Elem().Set(v.Elem())
	out, ok := c.Interface().(runtime.Object)
	if !ok {
		return deepWithKind(obj, gvk)
	}
	if !gvk.Empty() {
		out.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return out
}

// deepWithKind is WithKind through a deep copy, for objects that are no
// pointer to a struct.
func deepWithKind(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	c := obj.DeepCopyObject()
	if !gvk.Empty() {
		c.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return c
}

// MarshalJSON writes the history with its entries, coverage, gaps and
// warnings as arrays.
func (h History) MarshalJSON() ([]byte, error) {
	type fields History
	f := fields(h)
	f.Entries, f.Coverage, f.Gaps, f.Warnings = orEmpty(f.Entries), orEmpty(f.Coverage), orEmpty(f.Gaps), orEmpty(f.Warnings)
	return json.Marshal(f)
}

// MarshalJSON writes the blame with its managers, fields and warnings as
// arrays.
func (b Blame) MarshalJSON() ([]byte, error) {
	type fields Blame
	f := fields(b)
	f.Managers, f.Fields, f.Warnings = orEmpty(f.Managers), orEmpty(f.Fields), orEmpty(f.Warnings)
	return json.Marshal(f)
}
