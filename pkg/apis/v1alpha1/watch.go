package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// WatchEvent is one line of `kubectl idx watch -o json` (and of `kubectl idx
// events -w -o json`): a change to one object. Replaying the feed (ADDED and
// MODIFIED put the object by UID, DELETED removes it) gives the objects the
// server holds in the feed's scope.
type WatchEvent struct {
	// Context is the kubeconfig context the event came from, in a feed over
	// several contexts (--context a,b or --all-contexts).
	Context string `json:"context,omitempty"`
	// Type is ADDED, MODIFIED or DELETED.
	Type string `json:"type"`
	// Time is when the change reached the feed, RFC 3339 with nanoseconds.
	Time string `json:"time"`
	// DetectedOnRelist marks a DELETED that happened while the watch was down
	// and was found on reconnecting; Object is its last state known.
	DetectedOnRelist bool `json:"detectedOnRelist,omitempty"`
	// LeftScope marks a DELETED of an object that still exists but left the
	// --owner scope (its ownerReferences no longer lead to the root).
	LeftScope bool `json:"leftScope,omitempty"`
	// Gap marks an event of a relist: the informer listed again instead of
	// resuming its watch, so the changes between Gap.From and Gap.To are
	// folded, one event per object.
	Gap *WatchGap `json:"gap,omitempty"`
	// OldUnknown marks a MODIFIED whose state before is not known, which
	// therefore has no Diff: the first change printed, after a resume from a
	// checkpoint, of an object that changed since (a checkpoint keeps
	// versions, not objects).
	OldUnknown bool `json:"oldUnknown,omitempty"`
	// Diff is, for MODIFIED with --diff, the fields that changed (an empty
	// list when only bookkeeping changed).
	Diff *[]Change `json:"diff,omitempty"`
	// Object is the object as kubectl prints it: the new state, or for
	// DELETED the last state known.
	Object runtime.Object `json:"object"`
}

// WatchGap is the stretch of a resource's history a feed did not see change
// by change.
type WatchGap struct {
	// From is the resourceVersion the feed had seen everything up to, To the
	// one it listed at.
	From string `json:"from"`
	To   string `json:"to"`
	// Reason is "expired" when the server no longer had From (410 Gone, or a
	// watch of Events ended at once), "interrupted" when the watch ended
	// with another error and the informer listed again.
	Reason string `json:"reason"`
}

// Change is one field that differs between two states of an object.
type Change struct {
	// Path is the field as a jq path: .spec.replicas, .spec.containers[0].image,
	// .metadata.labels["app.kubernetes.io/name"]. Keys that are not plain
	// identifiers are quoted, so every path can be pasted into jq.
	Path string
	// Old and New are the values as JSON decodes them (string, int64, float64,
	// bool, nil, map[string]any, []any).
	Old, New any
	// HasOld is false when the field did not exist before, HasNew when it does
	// not exist after; a field that exists with the value null has it true.
	HasOld, HasNew bool
}

// MarshalJSON writes {"path":..., "old":..., "new":...}, leaving out "old" for
// a field that was added and "new" for one that was removed.
func (c Change) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"path":`)
	p, err := json.Marshal(c.Path)
	if err != nil {
		return nil, err
	}
	b.Write(p)
	for _, f := range []struct {
		name string
		has  bool
		v    any
	}{{"old", c.HasOld, c.Old}, {"new", c.HasNew, c.New}} {
		if !f.has {
			continue
		}
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("encoding %s value of %s: %w", f.name, c.Path, err)
		}
		b.WriteString(`,"` + f.name + `":`)
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// DeepCopyInto copies c into out. It is written by hand, and deepcopy-gen
// leaves it alone: the generator copies no field of type any, and Old and
// New are decoded JSON, whose maps and slices copyJSONValue copies.
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
