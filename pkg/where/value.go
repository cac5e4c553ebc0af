package where

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// This file presents a typed Go object (a *corev1.Pod from a clientset
// informer, a *metav1.PartialObjectMetadata from a metadata informer) to CEL
// as the JSON that encoding/json, and so -o json, writes for it, without
// writing it: a field is looked up by its JSON name, by reflection, only when
// an expression selects it, and only that field is converted. Converting the
// whole object to map[string]any first (runtime.DefaultUnstructuredConverter,
// or a JSON round trip) costs 0.3-0.4 ms and about 1,400 allocations per
// realistic pod (BenchmarkConvert), 6 to 8 s of CPU over 20,000 pods; a whole
// label predicate costs under 1 µs here (BenchmarkMatch).
//
// What JSON would omit is absent (has() is false, selecting it is a "no such
// key" error): omitempty fields that are empty, omitzero fields that are zero,
// nil embedded pointers. What JSON writes as null is null. Types with their
// own JSON form read as that form: metav1.Time and MicroTime as RFC 3339
// strings, metav1.Duration as a Go duration string, resource.Quantity as its
// canonical string, intstr.IntOrString as an int or a string, []byte as
// base64, FieldsV1 and RawExtension (any json.Marshaler) as the JSON they
// marshal to, an encoding.TextMarshaler as its text.
//
// Nothing is written to the object, so cached informer objects stay
// read-only (resource.Quantity's String caches its text in the receiver: it
// is called on a copy).

var adapter = types.DefaultTypeAdapter

// codec converts values of one Go type.
type codec struct {
	// toVal converts a value of the type. v may be unaddressable (a map
	// value, an interface's content).
	toVal func(v reflect.Value) ref.Val
}

// structInfo is a struct type's JSON fields.
type structInfo struct {
	fields []*fieldInfo
	byName map[string]*fieldInfo
}

type fieldInfo struct {
	name      string
	key       types.String
	index     []int
	codec     *codec
	omitEmpty bool
	omitZero  bool
	isZero    func(reflect.Value) bool
	quoted    bool
}

var (
	timeType        = reflect.TypeFor[metav1.Time]()
	microTimeType   = reflect.TypeFor[metav1.MicroTime]()
	durationType    = reflect.TypeFor[metav1.Duration]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	objectMetaType  = reflect.TypeFor[metav1.ObjectMeta]()
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	textType        = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType    = reflect.TypeFor[interface{ IsZero() bool }]()
	stringMapType   = reflect.TypeFor[map[string]string]()
)

// codecs holds finished codecs by type. Building takes buildMu, so that a
// codec is published only once it and everything it refers to are complete.
var (
	codecs  sync.Map // reflect.Type -> *codec
	structs sync.Map // reflect.Type -> *structInfo
	buildMu sync.Mutex
)

// codecFor returns the codec of type t.
func codecFor(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	b := builder{codecs: map[reflect.Type]*codec{}, structs: map[reflect.Type]*structInfo{}}
	c := b.codec(t)
	for t, s := range b.structs {
		structs.Store(t, s)
	}
	for t, c := range b.codecs {
		codecs.Store(t, c)
	}
	return c
}

// builder builds the codecs of a type and of the types it refers to; a type
// that refers to itself finds its own codec, not yet filled in, here.
type builder struct {
	codecs  map[reflect.Type]*codec
	structs map[reflect.Type]*structInfo
}

func (b *builder) codec(t reflect.Type) *codec {
	if c, ok := codecs.Load(t); ok {
		return c.(*codec)
	}
	if c, ok := b.codecs[t]; ok {
		return c
	}
	c := &codec{}
	b.codecs[t] = c
	c.toVal = b.toVal(t, true)
	return c
}

// toVal returns the conversion for type t, as encoding/json's newTypeEncoder
// chooses an encoder. allowAddr is false for the fallback of a type whose
// pointer, but not itself, marshals: encoding/json uses the pointer's method
// only when the value is addressable.
func (b *builder) toVal(t reflect.Type, allowAddr bool) func(reflect.Value) ref.Val {
	switch t {
	case timeType:
		return timeVal
	case microTimeType:
		return microTimeVal
	case durationType:
		return func(v reflect.Value) ref.Val {
			return types.String(time.Duration(v.Field(0).Int()).String())
		}
	case quantityType:
		return quantityVal
	case intOrStringType:
		return intOrStringVal
	}
	if f := b.methodVal(t, allowAddr, marshalerType, marshalerVal); f != nil {
		return f
	}
	if f := b.methodVal(t, allowAddr, textType, textVal); f != nil {
		return f
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(v reflect.Value) ref.Val { return types.Bool(v.Bool()) }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value) ref.Val { return types.Int(v.Int()) }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(v reflect.Value) ref.Val {
			// Decoded from JSON as unstructured, a number that fits is an
			// int64 and one that does not a float64.
			if u := v.Uint(); u <= math.MaxInt64 {
				return types.Int(int64(u))
			}
			return types.Double(float64(v.Uint()))
		}
	case reflect.Float32:
		return func(v reflect.Value) ref.Val { return floatVal(v.Float(), 32) }
	case reflect.Float64:
		return func(v reflect.Value) ref.Val { return floatVal(v.Float(), 64) }
	case reflect.String:
		return func(v reflect.Value) ref.Val { return types.String(v.String()) }
	case reflect.Interface:
		return func(v reflect.Value) ref.Val {
			if v.IsNil() {
				return types.NullValue
			}
			e := v.Elem()
			return codecFor(e.Type()).toVal(e)
		}
	case reflect.Pointer:
		elem := b.codec(t.Elem())
		return func(v reflect.Value) ref.Val {
			if v.IsNil() {
				return types.NullValue
			}
			return elem.toVal(v.Elem())
		}
	case reflect.Struct:
		info := b.structInfo(t)
		return func(v reflect.Value) ref.Val { return &structVal{v: v, info: info} }
	case reflect.Map:
		elem := b.codec(t.Elem())
		if t == stringMapType {
			// Labels and annotations: looked up without reflection.
			return func(v reflect.Value) ref.Val {
				if v.IsNil() {
					return types.NullValue
				}
				return &mapVal{v: v, elem: elem, key: stringKey, strings: v.Interface().(map[string]string)}
			}
		}
		key := mapKeyKind(t.Key())
		if key == badKey {
			return unsupported(t)
		}
		return func(v reflect.Value) ref.Val {
			if v.IsNil() {
				return types.NullValue
			}
			return &mapVal{v: v, elem: elem, key: key}
		}
	case reflect.Slice:
		if isBytes(t) {
			return func(v reflect.Value) ref.Val {
				if v.IsNil() {
					return types.NullValue
				}
				return types.String(base64.StdEncoding.EncodeToString(v.Bytes()))
			}
		}
		elem := b.codec(t.Elem())
		return func(v reflect.Value) ref.Val {
			if v.IsNil() {
				return types.NullValue
			}
			return &listVal{v: v, elem: elem}
		}
	case reflect.Array:
		elem := b.codec(t.Elem())
		return func(v reflect.Value) ref.Val { return &listVal{v: v, elem: elem} }
	}
	return unsupported(t)
}

// methodVal returns the conversion of a t that writes its JSON with the method
// of iface: val when t implements it; when only *t does, val of the value's
// address where it has one and t's conversion without the method where it
// has none, as encoding/json's condAddrEncoder chooses; nil when neither does.
func (b *builder) methodVal(t reflect.Type, allowAddr bool, iface reflect.Type, val func(reflect.Value) ref.Val) func(reflect.Value) ref.Val {
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(iface) {
		fallback := b.toVal(t, false)
		return func(v reflect.Value) ref.Val {
			if v.CanAddr() {
				return val(v.Addr())
			}
			return fallback(v)
		}
	}
	if t.Implements(iface) {
		return val
	}
	return nil
}

// floatVal reads a float as JSON writes it and the dynamic client decodes
// it: encoding/json writes 3.0 as 3, which decodes as an int64, so a whole
// number is an int, as in an unstructured object, and comparisons with
// doubles work across the two (the environment has cross-type numeric
// comparisons).
func floatVal(f float64, bits int) ref.Val {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return types.NewErr("json: unsupported value: %v", f)
	}
	// encoding/json's choice of format (floatEncoder).
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	text := strconv.FormatFloat(f, format, -1, bits)
	// util/json's choice of type (convertNumber).
	if i, err := strconv.ParseInt(text, 10, 64); err == nil {
		return types.Int(i)
	}
	d, _ := strconv.ParseFloat(text, 64)
	return types.Double(d)
}

func unsupported(t reflect.Type) func(reflect.Value) ref.Val {
	return func(reflect.Value) ref.Val { return types.NewErr("json: unsupported type: %v", t) }
}

// isBytes reports whether encoding/json writes slices of t as base64: a
// []byte whose element type does not marshal itself.
func isBytes(t reflect.Type) bool {
	e := t.Elem()
	if e.Kind() != reflect.Uint8 {
		return false
	}
	p := reflect.PointerTo(e)
	return !p.Implements(marshalerType) && !p.Implements(textType)
}

func (b *builder) structInfo(t reflect.Type) *structInfo {
	if s, ok := structs.Load(t); ok {
		return s.(*structInfo)
	}
	if s, ok := b.structs[t]; ok {
		return s
	}
	info := &structInfo{byName: map[string]*fieldInfo{}}
	b.structs[t] = info
	for _, f := range jsonFields(t) {
		fi := &fieldInfo{
			name:      f.name,
			key:       types.String(f.name),
			index:     f.index,
			codec:     b.codec(f.typ),
			omitEmpty: f.omitEmpty,
			omitZero:  f.omitZero,
			quoted:    f.quoted,
		}
		if f.omitZero {
			fi.isZero = isZeroFunc(f.typ)
		}
		info.fields = append(info.fields, fi)
		info.byName[f.name] = fi
		// A field named by a CEL reserved word may also be selected by its
		// escaped name, as the API server's values allow.
		if escaped, ok := apiservercel.Escape(f.name); ok && escaped == "__"+f.name+"__" {
			info.byName[escaped] = fi
		}
	}
	return info
}

// isZeroFunc is encoding/json's omitzero test for a field of type t.
func isZeroFunc(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) ||
				v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(interface{ IsZero() bool }).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(interface{ IsZero() bool }).IsZero()
		}
	}
	return reflect.Value.IsZero
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// get returns the field's value in struct v, and false when JSON leaves the
// field out: a nil embedded pointer on its path, or omitempty or omitzero.
func (f *fieldInfo) get(v reflect.Value) (reflect.Value, bool) {
	for i, x := range f.index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	if f.omitEmpty && isEmpty(v) {
		return v, false
	}
	if f.omitZero && f.isZero(v) {
		return v, false
	}
	return v, true
}

func (f *fieldInfo) val(v reflect.Value) ref.Val {
	if f.quoted {
		return quotedVal(f.codec.toVal(v))
	}
	return f.codec.toVal(v)
}

// quotedVal is a ",string" field: JSON writes the number or bool as a string.
func quotedVal(v ref.Val) ref.Val {
	switch v := v.(type) {
	case types.String:
		b, _ := json.Marshal(string(v))
		return types.String(b)
	case types.Int, types.Double, types.Bool:
		return types.String(fmt.Sprint(v.Value()))
	}
	return v
}

// fieldOf returns a pointer to v's value of type T, without copying it when
// v is addressable (a field of an object in the cache, read in place).
func fieldOf[T any](v reflect.Value) *T {
	if v.CanAddr() {
		return v.Addr().Interface().(*T)
	}
	c := v.Interface().(T)
	return &c
}

func timeVal(v reflect.Value) ref.Val {
	t := fieldOf[metav1.Time](v).Time
	if t.IsZero() {
		return types.NullValue
	}
	return types.String(t.UTC().Format(time.RFC3339))
}

func microTimeVal(v reflect.Value) ref.Val {
	t := fieldOf[metav1.MicroTime](v).Time
	if t.IsZero() {
		return types.NullValue
	}
	return types.String(t.UTC().Format(metav1.RFC3339Micro))
}

func quantityVal(v reflect.Value) ref.Val {
	return types.String(fieldOf[resource.Quantity](v).String())
}

func intOrStringVal(v reflect.Value) ref.Val {
	is := fieldOf[intstr.IntOrString](v)
	switch is.Type {
	case intstr.Int:
		return types.Int(is.IntVal)
	case intstr.String:
		return types.String(is.StrVal)
	}
	return types.NewErr("impossible IntOrString.Type")
}

// marshalerVal reads a json.Marshaler as the JSON it writes, decoded as an
// unstructured object is (integers as int64).
func marshalerVal(v reflect.Value) ref.Val {
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return types.NullValue
	}
	b, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil {
		return types.NewErr("json: %v", err)
	}
	var out any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return types.NewErr("json: %v", err)
	}
	return adapter.NativeToValue(out)
}

// textVal reads an encoding.TextMarshaler as the JSON string encoding/json
// writes for it.
func textVal(v reflect.Value) ref.Val {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return types.NullValue
	}
	b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return types.NewErr("json: %v", err)
	}
	return types.String(b)
}

// structVal is a struct read as a JSON object.
type structVal struct {
	v    reflect.Value
	info *structInfo
	// typeMeta, when set, answers apiVersion and kind: a typed object from an
	// informer has none, and a PartialObjectMetadata's are its own.
	typeMeta *typeMeta
}

type typeMeta struct {
	apiVersion, kind types.String
}

var (
	_ traits.Mapper = (*structVal)(nil)
	_ traits.Lister = (*listVal)(nil)
	_ traits.Mapper = (*mapVal)(nil)
)

// Find is how CEL selects a field (object.spec) and tests one (has()): a field
// JSON leaves out is not found, so selecting it is "no such key" and has() is
// false, as over the object's JSON map.
func (s *structVal) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	if s.typeMeta != nil {
		switch k {
		case "apiVersion":
			return s.typeMeta.apiVersion, true
		case "kind":
			return s.typeMeta.kind, true
		}
	}
	f := s.info.byName[string(k)]
	if f == nil {
		return nil, false
	}
	fv, ok := f.get(s.v)
	if !ok {
		return nil, false
	}
	return f.val(fv), true
}

// present reports whether JSON writes field f, without converting it.
func (s *structVal) present(f *fieldInfo) bool {
	if s.typeMeta != nil && (f.name == "apiVersion" || f.name == "kind") {
		return true
	}
	_, ok := f.get(s.v)
	return ok
}

func (s *structVal) Get(key ref.Val) ref.Val      { return get(s, key) }
func (s *structVal) Contains(key ref.Val) ref.Val { return contains(s, key) }

// get is a lazy map's Get: the value Find finds, or cel-go's error for a
// missing key, word for word, so that a typed object and its JSON map fail
// alike and count as one warning.
func get(m traits.Mapper, key ref.Val) ref.Val {
	if v, ok := m.Find(key); ok {
		return v
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

// contains is a lazy map's in operator: whether Find finds the key.
func contains(m traits.Mapper, key ref.Val) ref.Val {
	_, ok := m.Find(key)
	return types.Bool(ok)
}

// keys are the names of the fields JSON writes, in the order it writes them.
func (s *structVal) keys() []ref.Val {
	keys := make([]ref.Val, 0, len(s.info.fields))
	for _, f := range s.info.fields {
		if s.present(f) {
			keys = append(keys, f.key)
		}
	}
	return keys
}

func (s *structVal) Iterator() traits.Iterator { return &keyIter{keys: s.keys()} }

func (s *structVal) Size() ref.Val {
	n := 0
	for _, f := range s.info.fields {
		if s.present(f) {
			n++
		}
	}
	return types.Int(n)
}

// ConvertToNative hands the Go value itself to a function that asks for its
// type, and otherwise converts the JSON form as cel-go converts its maps.
func (s *structVal) ConvertToNative(t reflect.Type) (any, error) {
	if s.v.Type().AssignableTo(t) {
		return s.v.Interface(), nil
	}
	if s.v.CanAddr() && s.v.Addr().Type().AssignableTo(t) {
		return s.v.Addr().Interface(), nil
	}
	return mapOf(s).ConvertToNative(t)
}

func (s *structVal) ConvertToType(t ref.Type) ref.Val { return convertToType(s, types.MapType, t) }

func (s *structVal) Equal(other ref.Val) ref.Val { return mapEqual(s, other) }
func (s *structVal) Type() ref.Type              { return types.MapType }
func (s *structVal) Value() any                  { return s.v.Interface() }

// convertToType is a value's conversion to its own CEL type and to type, as
// cel-go's maps and lists convert; any other is cel-go's error, word for word.
func convertToType(v ref.Val, own *types.Type, t ref.Type) ref.Val {
	switch t {
	case own:
		return v
	case types.TypeType:
		return own
	}
	return types.NewErr("type conversion error from '%s' to '%s'", own, t)
}

// mapEqual is CEL's map equality, as cel-go's maps implement it.
func mapEqual(m traits.Mapper, other ref.Val) ref.Val {
	o, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if m.Size() != o.Size() {
		return types.False
	}
	for it := m.Iterator(); it.HasNext() == types.True; {
		key := it.Next()
		v, _ := m.Find(key)
		ov, found := o.Find(key)
		if !found {
			return types.False
		}
		if types.Equal(v, ov) == types.False {
			return types.False
		}
	}
	return types.True
}

// mapOf copies a lazy map into one of cel-go's, for the conversions cel-go
// already implements.
func mapOf(m traits.Mapper) traits.Mapper {
	entries := map[ref.Val]ref.Val{}
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		v, _ := m.Find(k)
		entries[k] = v
	}
	return types.NewRefValMap(adapter, entries)
}

// listVal is a slice or array read as a JSON array.
type listVal struct {
	v    reflect.Value
	elem *codec
}

func (l *listVal) Get(idx ref.Val) ref.Val {
	// cel-go's lists' errors, word for word.
	i, err := types.IndexOrError(idx)
	if err != nil {
		return types.ValOrErr(idx, "%v", err)
	}
	if i < 0 || i >= l.v.Len() {
		return types.NewErr("index '%d' out of range in list size '%d'", i, l.v.Len())
	}
	return l.elem.toVal(l.v.Index(i))
}

func (l *listVal) Size() ref.Val { return types.Int(l.v.Len()) }

// Contains is the in operator, as cel-go's lists implement it.
func (l *listVal) Contains(val ref.Val) ref.Val {
	if types.IsUnknownOrError(val) {
		return val
	}
	for i := range l.v.Len() {
		if b, ok := val.Equal(l.elem.toVal(l.v.Index(i))).(types.Bool); ok && b == types.True {
			return types.True
		}
	}
	return types.False
}

func (l *listVal) Iterator() traits.Iterator { return &listIter{l: l} }

// elements converts every element, for the operations that need them all at
// once (concatenation, conversions); selections and comprehensions do not.
func (l *listVal) elements() []ref.Val {
	els := make([]ref.Val, l.v.Len())
	for i := range els {
		els[i] = l.elem.toVal(l.v.Index(i))
	}
	return els
}

func (l *listVal) Add(other ref.Val) ref.Val {
	return types.NewRefValList(adapter, l.elements()).(traits.Adder).Add(other)
}

func (l *listVal) ConvertToNative(t reflect.Type) (any, error) {
	return types.NewRefValList(adapter, l.elements()).ConvertToNative(t)
}

func (l *listVal) ConvertToType(t ref.Type) ref.Val { return convertToType(l, types.ListType, t) }

// Equal is CEL's list equality: the same size, elements equal in order.
func (l *listVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(traits.Lister)
	if !ok {
		return types.False
	}
	n := l.v.Len()
	if types.Int(n) != o.Size() {
		return types.False
	}
	for i := range n {
		if types.Equal(l.elem.toVal(l.v.Index(i)), o.Get(types.Int(i))) == types.False {
			return types.False
		}
	}
	return types.True
}

func (l *listVal) Type() ref.Type { return types.ListType }
func (l *listVal) Value() any     { return l.v.Interface() }

// mapKind says how a Go map key reads as a JSON object key.
type mapKind int

const (
	badKey mapKind = iota
	stringKey
	intKey
	uintKey
)

func mapKeyKind(t reflect.Type) mapKind {
	switch t.Kind() {
	case reflect.String:
		if !t.Implements(textType) {
			return stringKey
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !t.Implements(textType) {
			return intKey
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if !t.Implements(textType) {
			return uintKey
		}
	}
	return badKey
}

// mapVal is a Go map read as a JSON object: its keys are strings.
type mapVal struct {
	v    reflect.Value
	elem *codec
	key  mapKind
	// strings is v's map when it is a map[string]string.
	strings map[string]string
}

// goKey converts a CEL key to the map's key type, as encoding/json reads a
// JSON object's key back; a key of another type is not in the map.
func (m *mapVal) goKey(key ref.Val) (reflect.Value, bool) {
	k, ok := key.(types.String)
	if !ok {
		return reflect.Value{}, false
	}
	kt := m.v.Type().Key()
	switch m.key {
	case stringKey:
		return reflect.ValueOf(string(k)).Convert(kt), true
	case intKey:
		n, err := strconv.ParseInt(string(k), 10, 64)
		if err != nil || reflect.Zero(kt).OverflowInt(n) {
			return reflect.Value{}, false
		}
		return reflect.ValueOf(n).Convert(kt), true
	case uintKey:
		n, err := strconv.ParseUint(string(k), 10, 64)
		if err != nil || reflect.Zero(kt).OverflowUint(n) {
			return reflect.Value{}, false
		}
		return reflect.ValueOf(n).Convert(kt), true
	}
	return reflect.Value{}, false
}

func (m *mapVal) Find(key ref.Val) (ref.Val, bool) {
	if m.strings != nil {
		k, ok := key.(types.String)
		if !ok {
			return nil, false
		}
		v, ok := m.strings[string(k)]
		if !ok {
			return nil, false
		}
		return types.String(v), true
	}
	k, ok := m.goKey(key)
	if !ok {
		return nil, false
	}
	v := m.v.MapIndex(k)
	if !v.IsValid() {
		return nil, false
	}
	return m.elem.toVal(v), true
}

func (m *mapVal) Get(key ref.Val) ref.Val      { return get(m, key) }
func (m *mapVal) Contains(key ref.Val) ref.Val { return contains(m, key) }

func (m *mapVal) Iterator() traits.Iterator {
	keys := make([]ref.Val, 0, m.v.Len())
	for it := m.v.MapRange(); it.Next(); {
		k := it.Key()
		switch m.key {
		case stringKey:
			keys = append(keys, types.String(k.String()))
		case intKey:
			keys = append(keys, types.String(strconv.FormatInt(k.Int(), 10)))
		case uintKey:
			keys = append(keys, types.String(strconv.FormatUint(k.Uint(), 10)))
		}
	}
	// JSON writes keys sorted; iterate in the same order.
	slices.SortFunc(keys, func(a, b ref.Val) int {
		return compareStrings(string(a.(types.String)), string(b.(types.String)))
	})
	return &keyIter{keys: keys}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (m *mapVal) Size() ref.Val { return types.Int(m.v.Len()) }

func (m *mapVal) ConvertToNative(t reflect.Type) (any, error) {
	if m.v.Type().AssignableTo(t) {
		return m.v.Interface(), nil
	}
	return mapOf(m).ConvertToNative(t)
}

func (m *mapVal) ConvertToType(t ref.Type) ref.Val { return convertToType(m, types.MapType, t) }

func (m *mapVal) Equal(other ref.Val) ref.Val { return mapEqual(m, other) }
func (m *mapVal) Type() ref.Type              { return types.MapType }
func (m *mapVal) Value() any                  { return m.v.Interface() }

// iterator gives the iterators the ref.Val methods CEL requires of them;
// they are never compared or converted.
type iterator struct{}

func (iterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion on iterators not supported")
}
func (iterator) ConvertToType(ref.Type) ref.Val { return types.NewErr("no such overload") }
func (iterator) Equal(ref.Val) ref.Val          { return types.NewErr("no such overload") }
func (iterator) Type() ref.Type                 { return types.IteratorType }
func (iterator) Value() any                     { return nil }

type keyIter struct {
	iterator
	keys []ref.Val
	i    int
}

func (it *keyIter) HasNext() ref.Val { return types.Bool(it.i < len(it.keys)) }

func (it *keyIter) Next() ref.Val {
	if it.i >= len(it.keys) {
		return nil
	}
	k := it.keys[it.i]
	it.i++
	return k
}

type listIter struct {
	iterator
	l *listVal
	i int
}

func (it *listIter) HasNext() ref.Val { return types.Bool(it.i < it.l.v.Len()) }

func (it *listIter) Next() ref.Val {
	if it.i >= it.l.v.Len() {
		return nil
	}
	v := it.l.elem.toVal(it.l.v.Index(it.i))
	it.i++
	return v
}

// fixedMap is a JSON object of a few known keys; a nil value is absent.
type fixedMap struct {
	keys []types.String
	vals []ref.Val
}

var _ traits.Mapper = (*fixedMap)(nil)

func (m *fixedMap) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	for i, name := range m.keys {
		if name == k && m.vals[i] != nil {
			return m.vals[i], true
		}
	}
	return nil, false
}

func (m *fixedMap) Get(key ref.Val) ref.Val      { return get(m, key) }
func (m *fixedMap) Contains(key ref.Val) ref.Val { return contains(m, key) }

func (m *fixedMap) Iterator() traits.Iterator {
	keys := make([]ref.Val, 0, len(m.keys))
	for i, k := range m.keys {
		if m.vals[i] != nil {
			keys = append(keys, k)
		}
	}
	return &keyIter{keys: keys}
}

func (m *fixedMap) Size() ref.Val {
	n := 0
	for _, v := range m.vals {
		if v != nil {
			n++
		}
	}
	return types.Int(n)
}

func (m *fixedMap) ConvertToNative(t reflect.Type) (any, error) { return mapOf(m).ConvertToNative(t) }

func (m *fixedMap) ConvertToType(t ref.Type) ref.Val { return convertToType(m, types.MapType, t) }

func (m *fixedMap) Equal(other ref.Val) ref.Val { return mapEqual(m, other) }
func (m *fixedMap) Type() ref.Type              { return types.MapType }
func (m *fixedMap) Value() any                  { return mapOf(m).Value() }
