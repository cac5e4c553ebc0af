package where

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	clientopenapi "k8s.io/client-go/openapi"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Schemas types expressions against the server's OpenAPI v3 documents. It
// resolves each kind once and keeps the answer, failures included, so several
// types listed together share one document read per group version at most
// once per kind. It is safe for concurrent use.
//
// A nil *Schemas types every expression dynamically.
type Schemas struct {
	resolver resolver.SchemaResolver

	mu    sync.Mutex
	kinds map[schemaKey]*resolved
}

// schemaKey is a kind, whole or trimmed to some of its top-level fields
// (comma-separated, sorted; "" for the whole kind).
type schemaKey struct {
	gvk    schema.GroupVersionKind
	fields string
}

type resolved struct {
	once   sync.Once
	schema *spec.Schema
	err    error
}

// NewSchemas returns Schemas that read the server's OpenAPI v3 documents
// through client: kubectl's cached discovery client's OpenAPIV3() keeps them
// on disk, so a warm cache asks the server only whether the list of documents
// changed (one request, answered 304).
//
// A kind is found as the API server's resolver
// (openapi/resolver.ClientDiscoveryResolver, which types
// ValidatingAdmissionPolicy expressions) finds it: in its group version's
// document, the schema whose x-kubernetes-group-version-kind names it, its
// references inlined by resolver.PopulateRefs. Unlike that resolver, each
// document is read once, not once per kind (Pods' and Nodes' schemas are in
// the same document, 1.6 MB of JSON), split into its schemas in one pass
// (objectMembers), and only the schemas a kind refers to are decoded: decoding all of core/v1 takes 10 to 20 ms and allocated 5.8 MB
// (3.2 MB kept), and an expression is typed by the kind's schema trimmed to
// the fields it selects (with apiVersion, kind and metadata): a phase
// predicate needs PodStatus's schemas, not PodSpec's.
func NewSchemas(client clientopenapi.Client) *Schemas {
	return NewSchemasFromResolver(&documents{client: client, docs: map[schema.GroupVersion]*document{}})
}

// NewSchemasFromResolver returns Schemas that resolve kinds with r.
func NewSchemasFromResolver(r resolver.SchemaResolver) *Schemas {
	return &Schemas{resolver: r, kinds: map[schemaKey]*resolved{}}
}

// documents resolves kinds from OpenAPI v3 documents, each read once and
// decoded schema by schema as kinds refer to them.
type documents struct {
	client clientopenapi.Client

	pathsOnce sync.Once
	paths     map[string]clientopenapi.GroupVersion
	pathsErr  error

	mu   sync.Mutex
	docs map[schema.GroupVersion]*document
}

// document is one group version's components.schemas, each kept as JSON until
// a kind refers to it, and which schema is which kind.
type document struct {
	once  sync.Once
	raw   map[string]json.RawMessage
	kinds map[schema.GroupVersionKind]string
	err   error

	mu      sync.Mutex
	decoded map[string]*spec.Schema
}

const refPrefix = "#/components/schemas/"

func (d *documents) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	return d.ResolveFields(gvk, nil)
}

// ResolveFields resolves the schema of gvk with the top-level properties
// named alone, every property when names is nil (fieldsResolver). Only the
// schemas they refer to are decoded: ObjectMeta's for metadata, not the
// kind's spec and status.
func (d *documents) ResolveFields(gvk schema.GroupVersionKind, names []string) (*spec.Schema, error) {
	doc := d.document(gvk.GroupVersion())
	if doc.err != nil {
		return nil, doc.err
	}
	name, ok := doc.kinds[gvk]
	if !ok {
		return nil, fmt.Errorf("cannot resolve group version kind %q: %w", gvk, resolver.ErrSchemaNotFound)
	}
	root, ok := doc.schema(name)
	if !ok {
		return nil, fmt.Errorf("decoding the OpenAPI document of %s: %s", gvk.GroupVersion(), name)
	}
	if names != nil {
		root = onlyFields(root, names)
	}
	return resolver.PopulateRefs(func(ref string) (*spec.Schema, bool) {
		n := strings.TrimPrefix(ref, refPrefix)
		if n == name {
			return root, true
		}
		return doc.schema(n)
	}, refPrefix+name)
}

// onlyFields returns a copy of a kind's schema whose properties are those
// named alone. A name the schema has not is left out: selecting it is the
// same unknown field as in the whole schema.
func onlyFields(s *spec.Schema, names []string) *spec.Schema {
	out := *s
	out.Properties = map[string]spec.Schema{}
	for _, p := range names {
		if v, ok := s.Properties[p]; ok {
			out.Properties[p] = v
		}
	}
	out.Required = nil
	return &out
}

// schema decodes the schema named name, once.
func (doc *document) schema(name string) (*spec.Schema, bool) {
	doc.mu.Lock()
	defer doc.mu.Unlock()
	if s, ok := doc.decoded[name]; ok {
		return s, s != nil
	}
	var s *spec.Schema
	if raw, ok := doc.raw[name]; ok {
		s = &spec.Schema{}
		if err := json.Unmarshal(raw, s); err != nil {
			klog.V(2).InfoS("decoding an OpenAPI schema for --where", "schema", name, "err", err)
			s = nil
		}
	}
	doc.decoded[name] = s
	return s, s != nil
}

func (d *documents) document(gv schema.GroupVersion) *document {
	d.mu.Lock()
	doc, ok := d.docs[gv]
	if !ok {
		doc = &document{decoded: map[string]*spec.Schema{}}
		d.docs[gv] = doc
	}
	d.mu.Unlock()
	doc.once.Do(func() { doc.raw, doc.kinds, doc.err = d.load(gv) })
	return doc
}

// gvkExtension is the extension that says which kinds a schema is.
const gvkExtension = "x-kubernetes-group-version-kind"

func (d *documents) load(gv schema.GroupVersion) (map[string]json.RawMessage, map[schema.GroupVersionKind]string, error) {
	d.pathsOnce.Do(func() { d.paths, d.pathsErr = d.client.Paths() })
	if d.pathsErr != nil {
		return nil, nil, d.pathsErr
	}
	path := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	c, ok := d.paths[path]
	if !ok {
		return nil, nil, fmt.Errorf("cannot resolve group version %q: %w", gv, resolver.ErrSchemaNotFound)
	}
	b, err := c.Schema(runtime.ContentTypeJSON)
	if err != nil {
		return nil, nil, err
	}
	schemas, err := componentSchemas(b)
	if err != nil {
		return nil, nil, fmt.Errorf("decoding the OpenAPI document of %s: %w", gv, err)
	}
	kinds := map[schema.GroupVersionKind]string{}
	for name, raw := range schemas {
		// Only the kinds' schemas carry the extension: the others are not
		// read at all here.
		if !bytes.Contains(raw, []byte(gvkExtension)) {
			continue
		}
		var ext struct {
			GVKs []schema.GroupVersionKind `json:"x-kubernetes-group-version-kind"`
		}
		if err := json.Unmarshal(raw, &ext); err != nil {
			return nil, nil, fmt.Errorf("decoding the OpenAPI document of %s: %s: %w", gv, name, err)
		}
		for _, k := range ext.GVKs {
			kinds[k] = name
		}
	}
	return schemas, kinds, nil
}

// componentSchemas returns the schemas of an OpenAPI v3 document,
// components.schemas, each as its bytes in doc (objectMembers).
func componentSchemas(doc []byte) (map[string]json.RawMessage, error) {
	members, err := objectMembers(doc)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"components", "schemas"} {
		value, ok := members[name]
		if !ok || string(value) == "null" {
			return nil, nil
		}
		if members, err = objectMembers(value); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return members, nil
}

// fieldsResolver resolves a kind trimmed to some of its top-level fields.
type fieldsResolver interface {
	ResolveFields(gvk schema.GroupVersionKind, names []string) (*spec.Schema, error)
}

// resolve returns the kind's schema with its references inlined.
func (s *Schemas) resolve(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	return s.resolveKey(schemaKey{gvk: gvk})
}

// resolveMetadata returns the kind's schema trimmed to apiVersion, kind and
// metadata, what expressions that read nothing else are typed by.
func (s *Schemas) resolveMetadata(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	return s.resolveFields(gvk, fields{})
}

// resolveFields returns the kind's schema trimmed to apiVersion, kind,
// metadata and the fields f names; the whole schema when f may be any field.
func (s *Schemas) resolveFields(gvk schema.GroupVersionKind, f fields) (*spec.Schema, error) {
	if f.all {
		return s.resolve(gvk)
	}
	names := slices.Collect(maps.Keys(metadataFields))
	for n := range f.names {
		if !metadataFields[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return s.resolveKey(schemaKey{gvk: gvk, fields: strings.Join(names, ",")})
}

func (s *Schemas) resolveKey(key schemaKey) (*spec.Schema, error) {
	s.mu.Lock()
	r, ok := s.kinds[key]
	if !ok {
		r = &resolved{}
		s.kinds[key] = r
	}
	s.mu.Unlock()
	r.once.Do(func() {
		start := time.Now()
		names := strings.Split(key.fields, ",")
		switch fr, ok := s.resolver.(fieldsResolver); {
		case key.fields == "":
			r.schema, r.err = s.resolver.ResolveSchema(key.gvk)
		case ok:
			r.schema, r.err = fr.ResolveFields(key.gvk, names)
		default:
			var full *spec.Schema
			if full, r.err = s.resolve(key.gvk); full != nil {
				r.schema = onlyFields(full, names)
			}
		}
		klog.V(4).InfoS("resolved OpenAPI schema for --where", "kind", key.gvk, "fields", key.fields, "took", time.Since(start), "err", r.err)
	})
	return r.schema, r.err
}

var nodeGVK = schema.GroupVersionKind{Version: "v1", Kind: "Node"}

// podGK is the kind whose objects have a node.
var podGK = schema.GroupKind{Kind: "Pod"}

// types returns the declared types of the variables an expression set uses
// for objects of kind gvk. A variable whose schema cannot be found is dyn: a
// custom resource without a structural schema, an aggregated API that
// publishes none, a server that does not answer /openapi/v3.
func (s *Schemas) types(gvk schema.GroupVersionKind, uses Uses, r reads) varTypes {
	var vt varTypes
	if s == nil {
		return vt
	}
	var objectSchema *spec.Schema
	if uses.Object || uses.Owner {
		// Expressions are typed by the kind trimmed to the fields they
		// select, and to metadata (which owner reads): the same types for
		// what they read, for a fraction of the schema.
		f := r.object
		if !uses.ObjectBeyondMetadata {
			f = fields{}
		}
		sch, err := s.resolveFields(gvk, f)
		if err != nil {
			logDynamic(ObjectVar, gvk, err)
		}
		objectSchema = sch
	}
	// The types are named after kinds, so that messages read
	// "Pod.spec.containers"; named after the variables they would hide them:
	// the checker takes object.spec for a type's name if one is so named.
	if uses.Object && objectSchema != nil {
		vt.object = declType(objectSchema, gvk.Kind)
	}
	if uses.Node {
		f := r.node
		if !uses.NodeBeyondMetadata {
			f = fields{}
		}
		if sch, err := s.resolveFields(nodeGVK, f); err != nil {
			logDynamic(NodeVar, nodeGVK, err)
		} else {
			vt.node = declType(sch, nodeGVK.Kind)
		}
	}
	if uses.Owner {
		name := "Owner"
		if gvk.Kind == name {
			name = "OwnerMeta"
		}
		vt.owner = s.ownerType(objectSchema, name)
	}
	return vt
}

// ownerType is an object of apiVersion, kind and ObjectMeta. ObjectMeta's
// schema is taken from the object's own schema when it has the full one (every
// built-in kind and every custom resource on a current server), else from
// Nodes'.
func (s *Schemas) ownerType(objectSchema *spec.Schema, name string) *apiservercel.DeclType {
	meta := objectMeta(objectSchema)
	if meta == nil {
		sch, err := s.resolveMetadata(nodeGVK)
		if err != nil {
			logDynamic(OwnerVar, nodeGVK, err)
			return nil
		}
		if meta = objectMeta(sch); meta == nil {
			return nil
		}
	}
	metaType := common.SchemaDeclType(&jsonSchema{Schema: openapi.Schema{Schema: meta}}, false)
	if metaType == nil || !metaType.IsObject() {
		return nil
	}
	field := func(name string, t *apiservercel.DeclType) *apiservercel.DeclField {
		return apiservercel.NewDeclField(name, t, false, nil, nil)
	}
	owner := apiservercel.NewObjectType("object", map[string]*apiservercel.DeclField{
		"apiVersion": field("apiVersion", apiservercel.StringType),
		"kind":       field("kind", apiservercel.StringType),
		"metadata":   field("metadata", metaType),
	})
	return owner.MaybeAssignTypeName(name)
}

// objectMeta returns the metadata property of a kind's schema if it is the
// whole ObjectMeta, recognized by its uid and ownerReferences.
func objectMeta(s *spec.Schema) *spec.Schema {
	if s == nil {
		return nil
	}
	meta, ok := s.Properties["metadata"]
	if !ok {
		return nil
	}
	if _, ok := meta.Properties["uid"]; !ok {
		return nil
	}
	if _, ok := meta.Properties["ownerReferences"]; !ok {
		return nil
	}
	return &meta
}

func logDynamic(variable string, gvk schema.GroupVersionKind, err error) {
	level := klog.Level(2)
	if errors.Is(err, resolver.ErrSchemaNotFound) {
		level = 4
	}
	klog.V(level).InfoS("typing --where variable dynamically: no OpenAPI schema", "variable", variable, "kind", gvk, "err", err)
}

// declType converts a kind's schema to the CEL type of a variable, or nil
// (dyn) when the schema types nothing.
func declType(s *spec.Schema, name string) *apiservercel.DeclType {
	t := common.SchemaDeclType(&jsonSchema{Schema: openapi.Schema{Schema: s}}, true)
	if t == nil || !t.IsObject() {
		return nil
	}
	return t.MaybeAssignTypeName(name)
}

// jsonSchema presents an OpenAPI schema to the API server's schema-to-CEL
// conversion (common.SchemaDeclType) as the JSON that -o json prints, which
// is what expressions read here in every mode, rather than as the typed values
// CRD validation rules read:
//
//   - date, date-time, duration and byte strings stay strings: -o json prints
//     metadata.creationTimestamp as "2024-05-01T10:00:00Z", so an expression
//     writes timestamp(object.metadata.creationTimestamp), as a
//     ValidatingAdmissionPolicy does over the same JSON;
//   - a resource.Quantity (built-in kinds publish it as oneOf string or
//     number, with no type) is the string the server prints;
//   - what the schema cannot describe is dyn rather than absent: an object
//     with x-kubernetes-preserve-unknown-fields or additionalProperties: true,
//     an object with neither properties nor additionalProperties (FieldsV1,
//     RawExtension), a property whose name is not a CEL identifier (the
//     expression indexes it: object.spec['x-y']), any other schema without a
//     type.
//
// common.SchemaDeclType makes a schema dyn when it is
// x-kubernetes-int-or-string, so that is what IsXIntOrString answers for all
// of these.
type jsonSchema struct {
	openapi.Schema
}

var _ common.Schema = (*jsonSchema)(nil)

func wrap(s *spec.Schema) *jsonSchema {
	if s == nil {
		return nil
	}
	return &jsonSchema{Schema: openapi.Schema{Schema: s}}
}

// isQuantity recognizes how built-in kinds publish resource.Quantity: no type,
// oneOf string or number.
func isQuantity(s *spec.Schema) bool {
	if len(s.Type) != 0 || len(s.OneOf) != 2 {
		return false
	}
	return s.OneOf[0].Type.Contains("string") && s.OneOf[1].Type.Contains("number")
}

func (s *jsonSchema) dynamic() bool {
	sch := s.Schema.Schema
	if s.Schema.IsXIntOrString() || s.Schema.IsXPreserveUnknownFields() {
		return true
	}
	if isQuantity(sch) {
		return false
	}
	switch s.Schema.Type() {
	case "":
		return true
	case "object":
		if ap := sch.AdditionalProperties; ap != nil {
			return ap.Schema == nil && ap.Allows
		}
		if len(sch.Properties) == 0 {
			return true
		}
		for name := range sch.Properties {
			if needsEscape(name) {
				return true
			}
		}
	}
	return false
}

// needsEscape reports whether a property name must be written escaped in a
// field selection (x-y as x__dash__y). A reserved word such as namespace is
// selected by its own name in this environment, as in the API server's.
func needsEscape(name string) bool {
	escaped, ok := apiservercel.Escape(name)
	return !ok || (escaped != name && escaped != "__"+name+"__")
}

func (s *jsonSchema) IsXIntOrString() bool { return s.dynamic() }

func (s *jsonSchema) Type() string {
	if isQuantity(s.Schema.Schema) {
		return "string"
	}
	return s.Schema.Type()
}

func (s *jsonSchema) Format() string {
	switch f := s.Schema.Format(); f {
	case "date", "date-time", "duration", "byte":
		return ""
	default:
		return f
	}
}

func (s *jsonSchema) MaxLength() *int64 {
	// A date-time keeps the bound its format gives it, for cost estimates.
	switch s.Schema.Format() {
	case "date", "date-time", "duration":
		if s.Schema.MaxLength() == nil {
			n := int64(apiservercel.MaxDatetimeSizeJSON)
			return &n
		}
	}
	return s.Schema.MaxLength()
}

func (s *jsonSchema) Items() common.Schema {
	if s.Schema.Schema.Items == nil || s.Schema.Schema.Items.Schema == nil {
		return nil
	}
	return wrap(s.Schema.Schema.Items.Schema)
}

func (s *jsonSchema) Properties() map[string]common.Schema {
	if s.Schema.Schema.Properties == nil {
		return nil
	}
	props := make(map[string]common.Schema, len(s.Schema.Schema.Properties))
	for name, prop := range s.Schema.Schema.Properties {
		props[name] = wrap(&prop)
	}
	return props
}

func (s *jsonSchema) AdditionalProperties() common.SchemaOrBool {
	if s.Schema.Schema.AdditionalProperties == nil {
		return nil
	}
	return &schemaOrBool{s.Schema.Schema.AdditionalProperties}
}

func (s *jsonSchema) WithTypeAndObjectMeta() common.Schema {
	return wrap(common.WithTypeAndObjectMeta(s.Schema.Schema))
}

type schemaOrBool struct{ sb *spec.SchemaOrBool }

func (sb *schemaOrBool) Schema() common.Schema {
	if sb.sb.Schema == nil {
		return nil
	}
	return wrap(sb.sb.Schema)
}

func (sb *schemaOrBool) Allows() bool { return sb.sb.Allows }
