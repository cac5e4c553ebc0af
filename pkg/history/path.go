package history

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Step is one step of a Path: a field of an object, a list entry named by its
// merge key (containers by name, ports by containerPort), or a list entry by
// its index, for lists without one.
type Step struct {
	// Field is set for a field step.
	Field string
	// Key and Value name a list entry: the entry whose field Key holds Value
	// (a string, an int64 or a float64, as decoded JSON holds it).
	Key   string
	Value any
	// Index is a list entry's index, for a step that is neither a field nor
	// a keyed entry.
	Index int
}

// FieldStep is the step to field name.
func FieldStep(name string) Step { return Step{Field: name, Index: -1} }

// KeyStep is the step to the list entry whose key field holds value.
func KeyStep(key string, value any) Step { return Step{Key: key, Value: value, Index: -1} }

// IndexStep is the step to the list entry at index i.
func IndexStep(i int) Step { return Step{Index: i} }

// IsField reports whether s steps into a field.
func (s Step) IsField() bool { return s.Field != "" }

// IsKey reports whether s names a list entry by its merge key.
func (s Step) IsKey() bool { return s.Key != "" }

// Path is where a field is in an object, from its root.
type Path []Step

// Field returns p with field name appended, never sharing p's array.
func (p Path) Field(name string) Path { return p.with(FieldStep(name)) }

// Key returns p with the list entry whose key holds value appended.
func (p Path) Key(key string, value any) Path { return p.with(KeyStep(key, value)) }

// Index returns p with the list entry at i appended.
func (p Path) Index(i int) Path { return p.with(IndexStep(i)) }

func (p Path) with(s Step) Path {
	out := make(Path, len(p), len(p)+1)
	copy(out, p)
	return append(out, s)
}

// HasPrefix reports whether q is p or an ancestor of it.
func (p Path) HasPrefix(q Path) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if !p[i].equal(q[i]) {
			return false
		}
	}
	return true
}

// Overlaps reports whether p and q are the same field or one holds the other.
func (p Path) Overlaps(q Path) bool { return p.HasPrefix(q) || q.HasPrefix(p) }

func (s Step) equal(t Step) bool {
	if s.Field != t.Field || s.Key != t.Key || s.Index != t.Index {
		return false
	}
	return s.Key == "" || scalarEqual(s.Value, t.Value)
}

// identifier is a field name a JSONPath may name after a dot.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// String is p as a kubectl JSONPath (without the braces):
// .spec.template.spec.containers[?(@.name=="web")].image. The dots of a
// field's name are escaped, .metadata.labels.app\.kubernetes\.io/name, as
// kubectl's JSONPath reads them; a keyed entry is a filter on its key; an
// entry without a key is its index. kubectl get -o jsonpath='{PATH}' prints
// the field.
func (p Path) String() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.IsField():
			b.WriteString("." + strings.ReplaceAll(s.Field, ".", `\.`))
		case s.IsKey():
			fmt.Fprintf(&b, "[?(@.%s==%s)]", s.Key, literal(s.Value))
		default:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		}
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

// Short is p as a reader scans it in a table: keyed entries as
// [name=web], fields that are no identifier quoted.
// .spec.template.spec.containers[name=web].env[name=LOG_LEVEL].value.
func (p Path) Short() string {
	var b strings.Builder
	for _, s := range p {
		switch {
		case s.IsField() && identifier.MatchString(s.Field):
			b.WriteString("." + s.Field)
		case s.IsField():
			q, _ := json.Marshal(s.Field)
			b.WriteString("[" + string(q) + "]")
		case s.IsKey():
			v := fmt.Sprint(s.Value)
			if f, ok := s.Value.(float64); ok {
				v = strconv.FormatFloat(f, 'f', -1, 64)
			}
			fmt.Fprintf(&b, "[%s=%s]", s.Key, v)
		default:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		}
	}
	if b.Len() == 0 {
		return "."
	}
	return b.String()
}

// literal is a key's value in a JSONPath filter: strings quoted, numbers bare.
func literal(v any) string {
	switch t := v.(type) {
	case string:
		q, _ := json.Marshal(t)
		return string(q)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// scalarEqual compares two key values as JSON compares them: int64 and
// float64 holding the same number are equal.
func scalarEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	return a == b
}

// number returns v as a float64 when it is a number of decoded JSON.
func number(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case int32:
		return float64(t), true
	case float64:
		return t, true
	}
	return 0, false
}

// Lookup returns the value at p in v, decoded JSON, and whether it is there.
func Lookup(v any, p Path) (any, bool) {
	for _, s := range p {
		switch {
		case s.IsField():
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s.Field]; !ok {
				return nil, false
			}
		case s.IsKey():
			l, ok := v.([]any)
			if !ok {
				return nil, false
			}
			i := keyed(l, s.Key, s.Value)
			if i < 0 {
				return nil, false
			}
			v = l[i]
		default:
			l, ok := v.([]any)
			if !ok || s.Index < 0 || s.Index >= len(l) {
				return nil, false
			}
			v = l[s.Index]
		}
	}
	return v, true
}

// keyed returns the index of the first entry of l whose field key holds
// value, or -1.
func keyed(l []any, key string, value any) int {
	for i, e := range l {
		if m, ok := e.(map[string]any); ok {
			if v, ok := m[key]; ok && scalarEqual(v, value) {
				return i
			}
		}
	}
	return -1
}
