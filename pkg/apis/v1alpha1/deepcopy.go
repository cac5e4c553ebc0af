package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
)

// The deep copies below are written as deepcopy-gen writes them: one
// DeepCopyInto and DeepCopy per type, DeepCopyObject for the documents.
// Members' objects and a feed event's object are copied through their own
// DeepCopyObject, cached objects included: a copy is the caller's to change.

// DeepCopyInto copies l into out.
func (l *GroupList) DeepCopyInto(out *GroupList) {
	*out = *l
	if l.Groups != nil {
		out.Groups = make([]Group, len(l.Groups))
		for i := range l.Groups {
			l.Groups[i].DeepCopyInto(&out.Groups[i])
		}
	}
	out.Warnings = copyStrings(l.Warnings)
	out.AsOf = copyAsOf(l.AsOf)
}

// DeepCopy returns a deep copy of l.
func (l *GroupList) DeepCopy() *GroupList {
	if l == nil {
		return nil
	}
	out := new(GroupList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy of l.
func (l *GroupList) DeepCopyObject() runtime.Object {
	if c := l.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies g into out.
func (g *Group) DeepCopyInto(out *Group) {
	*out = *g
	g.Key.DeepCopyInto(&out.Key)
	g.Summary.DeepCopyInto(&out.Summary)
	if g.Members != nil {
		out.Members = make([]Members, len(g.Members))
		for i := range g.Members {
			g.Members[i].DeepCopyInto(&out.Members[i])
		}
	}
	if g.Contexts != nil {
		out.Contexts = make([]GroupContext, len(g.Contexts))
		for i := range g.Contexts {
			g.Contexts[i].DeepCopyInto(&out.Contexts[i])
		}
	}
}

// DeepCopy returns a deep copy of g.
func (g *Group) DeepCopy() *Group {
	if g == nil {
		return nil
	}
	out := new(Group)
	g.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies c into out.
func (c *GroupContext) DeepCopyInto(out *GroupContext) {
	*out = *c
	c.Summary.DeepCopyInto(&out.Summary)
}

// DeepCopyInto copies m into out, each object through its DeepCopyObject.
func (m *Members) DeepCopyInto(out *Members) {
	*out = *m
	if m.Objects != nil {
		out.Objects = make([]runtime.Object, len(m.Objects))
		for i, o := range m.Objects {
			if o != nil {
				out.Objects[i] = o.DeepCopyObject()
			}
		}
	}
}

// DeepCopyInto copies k into out.
func (k *GroupKey) DeepCopyInto(out *GroupKey) {
	*out = *k
	if k.Value != nil {
		v := *k.Value
		out.Value = &v
	}
}

// DeepCopyInto copies s into out.
func (s *GroupSummary) DeepCopyInto(out *GroupSummary) {
	*out = *s
	if s.Kinds != nil {
		out.Kinds = make(map[string]int, len(s.Kinds))
		for k, v := range s.Kinds {
			out.Kinds[k] = v
		}
	}
	if s.Pods != nil {
		p := *s.Pods
		out.Pods = &p
	}
	if s.Node != nil {
		out.Node = new(NodeSummary)
		s.Node.DeepCopyInto(out.Node)
	}
	if s.Resources != nil {
		out.Resources = new(ResourceSummary)
		s.Resources.DeepCopyInto(out.Resources)
	}
}

// DeepCopyInto copies s into out.
func (s *ResourceSummary) DeepCopyInto(out *ResourceSummary) {
	*out = *s
	s.Requests.DeepCopyInto(&out.Requests)
	s.Limits.DeepCopyInto(&out.Limits)
}

// DeepCopyInto copies n into out.
func (n *NodeSummary) DeepCopyInto(out *NodeSummary) {
	*out = *n
	out.Roles = copyStrings(n.Roles)
	n.Requests.DeepCopyInto(&out.Requests)
	n.Limits.DeepCopyInto(&out.Limits)
	n.Allocatable.DeepCopyInto(&out.Allocatable)
}

// DeepCopyInto copies r into out.
func (r *Resources) DeepCopyInto(out *Resources) {
	*out = *r
	if r.Other != nil {
		out.Other = make(map[string]string, len(r.Other))
		for k, v := range r.Other {
			out.Other[k] = v
		}
	}
}

// DeepCopyInto copies t into out.
func (t *Tree) DeepCopyInto(out *Tree) {
	*out = *t
	out.Root = t.Root.DeepCopy()
	out.Warnings = copyStrings(t.Warnings)
	out.AsOf = copyAsOf(t.AsOf)
}

// DeepCopy returns a deep copy of t.
func (t *Tree) DeepCopy() *Tree {
	if t == nil {
		return nil
	}
	out := new(Tree)
	t.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy of t.
func (t *Tree) DeepCopyObject() runtime.Object {
	if c := t.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies t and its branches into out.
func (t *TreeItem) DeepCopyInto(out *TreeItem) {
	*out = *t
	if t.CreationTimestamp != nil {
		out.CreationTimestamp = t.CreationTimestamp.DeepCopy()
	}
	out.Children = copyItems(t.Children)
	out.Owners = copyItems(t.Owners)
}

// DeepCopy returns a deep copy of t.
func (t *TreeItem) DeepCopy() *TreeItem {
	if t == nil {
		return nil
	}
	out := new(TreeItem)
	t.DeepCopyInto(out)
	return out
}

func copyItems(items []*TreeItem) []*TreeItem {
	if items == nil {
		return nil
	}
	out := make([]*TreeItem, len(items))
	for i, it := range items {
		out[i] = it.DeepCopy()
	}
	return out
}

// DeepCopyInto copies l into out.
func (l *RelationList) DeepCopyInto(out *RelationList) {
	*out = *l
	if l.Subject != nil {
		out.Subject = new(RelationItem)
		l.Subject.DeepCopyInto(out.Subject)
	}
	if l.Items != nil {
		out.Items = make([]RelationItem, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	out.Warnings = copyStrings(l.Warnings)
	out.AsOf = copyAsOf(l.AsOf)
}

// DeepCopy returns a deep copy of l.
func (l *RelationList) DeepCopy() *RelationList {
	if l == nil {
		return nil
	}
	out := new(RelationList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy of l.
func (l *RelationList) DeepCopyObject() runtime.Object {
	if c := l.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies it into out.
func (it *RelationItem) DeepCopyInto(out *RelationItem) {
	*out = *it
	if it.CreationTimestamp != nil {
		out.CreationTimestamp = it.CreationTimestamp.DeepCopy()
	}
	if it.MissingOwners != nil {
		out.MissingOwners = append([]OwnerReference(nil), it.MissingOwners...)
	}
	if it.OrphaningOwners != nil {
		out.OrphaningOwners = append([]OwnerReference(nil), it.OrphaningOwners...)
	}
	out.Via = copyStrings(it.Via)
	if it.Exists != nil {
		e := *it.Exists
		out.Exists = &e
	}
}

// DeepCopyInto copies e into out, its object through its DeepCopyObject.
func (e *WatchEvent) DeepCopyInto(out *WatchEvent) {
	*out = *e
	if e.Gap != nil {
		g := *e.Gap
		out.Gap = &g
	}
	if e.Diff != nil {
		changes := make([]Change, len(*e.Diff))
		for i := range *e.Diff {
			(*e.Diff)[i].DeepCopyInto(&changes[i])
		}
		out.Diff = &changes
	}
	if e.Object != nil {
		out.Object = e.Object.DeepCopyObject()
	}
}

// DeepCopy returns a deep copy of e.
func (e *WatchEvent) DeepCopy() *WatchEvent {
	if e == nil {
		return nil
	}
	out := new(WatchEvent)
	e.DeepCopyInto(out)
	return out
}

// DeepCopyObject returns a deep copy of e.
func (e *WatchEvent) DeepCopyObject() runtime.Object {
	if c := e.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies c into out.
func (c *Change) DeepCopyInto(out *Change) {
	*out = *c
	out.Old = copyJSONValue(c.Old)
	out.New = copyJSONValue(c.New)
}

// copyJSONValue copies the maps and slices of a decoded JSON value. Unlike
// runtime.DeepCopyJSONValue it does not panic on a number that is no int64
// or float64 (an unstructured object built in code may hold an int): every
// value that is no map or slice is immutable and is shared.
func copyJSONValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		if t == nil {
			return t
		}
		c := make(map[string]any, len(t))
		for k, e := range t {
			c[k] = copyJSONValue(e)
		}
		return c
	case []any:
		if t == nil {
			return t
		}
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = copyJSONValue(e)
		}
		return c
	}
	return v
}

func copyStrings(s []string) []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s...)
}
