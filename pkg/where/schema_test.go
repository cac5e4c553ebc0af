package where

import (
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"k8s.io/apimachinery/pkg/runtime/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// openAPIOnly is a discovery client that only serves OpenAPI v3, all the
// API server's resolver calls.
type openAPIOnly struct {
	discovery.DiscoveryInterface
	client openapi.Client
}

func (d openAPIOnly) OpenAPIV3() openapi.Client { return d.client }

// TestDocumentsResolveAsTheAPIServer: NewSchemas finds the same schema as
// the API server's ClientDiscoveryResolver, decoding each document once.
func TestDocumentsResolveAsTheAPIServer(t *testing.T) {
	client := openapitest.NewEmbeddedFileClient()
	theirs := &resolver.ClientDiscoveryResolver{Discovery: openAPIOnly{client: client}}
	ours := &documents{client: client, docs: map[schema.GroupVersion]*document{}}
	for _, gvk := range []schema.GroupVersionKind{
		podGVK, nodeGVK, deploymentGVK,
		{Version: "v1", Kind: "Service"},
		{Group: "batch", Version: "v1", Kind: "CronJob"},
		{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"},
	} {
		want, err := theirs.ResolveSchema(gvk)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ours.ResolveSchema(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%v: the schemas differ", gvk)
		}
	}
	if n := len(ours.docs); n != 4 {
		t.Errorf("decoded %d documents, want 4", n)
	}
	for _, gvk := range []schema.GroupVersionKind{widgetGVK, {Version: "v1", Kind: "Widget"}} {
		_, errTheirs := theirs.ResolveSchema(gvk)
		_, errOurs := ours.ResolveSchema(gvk)
		if errOurs == nil || errTheirs == nil || errOurs.Error() != errTheirs.Error() {
			t.Errorf("%v: error %v, the API server's %v", gvk, errOurs, errTheirs)
		}
	}
}

// TestDeclTypes: how a schema types a variable, the JSON way.
func TestDeclTypes(t *testing.T) {
	pod, err := embeddedSchemas().resolve(podGVK)
	if err != nil {
		t.Fatal(err)
	}
	podType := declType(pod, "Pod")
	field := func(t *apiservercel.DeclType, path ...string) *apiservercel.DeclType {
		for _, name := range path {
			switch {
			case name == "@items" || name == "@values":
				t = t.ElemType
			default:
				f, ok := t.Fields[name]
				if !ok {
					return nil
				}
				t = f.Type
			}
			if t == nil {
				return nil
			}
		}
		return t
	}
	cases := []struct {
		path []string
		want string
	}{
		{[]string{"metadata", "name"}, "string"},
		{[]string{"metadata", "creationTimestamp"}, "string"},
		{[]string{"metadata", "labels"}, "map(string, string)"},
		{[]string{"metadata", "managedFields", "@items", "fieldsV1"}, "dyn"},
		{[]string{"metadata", "managedFields", "@items", "time"}, "string"},
		{[]string{"spec", "containers", "@items", "resources", "requests", "@values"}, "string"},
		{[]string{"spec", "containers", "@items", "livenessProbe", "httpGet", "port"}, "dyn"},
		{[]string{"spec", "priority"}, "int"},
		{[]string{"status", "conditions", "@items", "lastTransitionTime"}, "string"},
		{[]string{"kind"}, "string"},
		{[]string{"apiVersion"}, "string"},
	}
	for _, tc := range cases {
		got := field(podType, tc.path...)
		if got == nil {
			t.Errorf("%v: no such field", tc.path)
			continue
		}
		if s := got.CelType().String(); s != tc.want {
			t.Errorf("%v: %s, want %s", tc.path, s, tc.want)
		}
	}

	str := *spec.StringProperty()
	crd := &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"spec": {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
			"size":  {SchemaProps: spec.SchemaProps{Type: []string{"number"}}},
			"data":  {SchemaProps: spec.SchemaProps{Type: []string{"string"}, Format: "byte"}},
			"every": {SchemaProps: spec.SchemaProps{Type: []string{"string"}, Format: "duration"}},
			"free":  {SchemaProps: spec.SchemaProps{Type: []string{"object"}}, VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}}},
			"open":  {SchemaProps: spec.SchemaProps{Type: []string{"object"}, AdditionalProperties: &spec.SchemaOrBool{Allows: true}}},
			"odd":   {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{"x-y": str}}},
			"if":    str,
		}}},
	}}}
	crdType := declType(crd, "Widget")
	crdCases := []struct {
		field, want string
	}{
		{"size", "double"},
		{"data", "string"},
		{"every", "string"},
		{"free", "dyn"},
		{"open", "dyn"},
		{"odd", "dyn"},
		{"__if__", "string"},
	}
	for _, tc := range crdCases {
		got := field(crdType, "spec", tc.field)
		if got == nil {
			t.Errorf("spec.%s: no such field", tc.field)
			continue
		}
		if s := got.CelType().String(); s != tc.want {
			t.Errorf("spec.%s: %s, want %s", tc.field, s, tc.want)
		}
	}
	if diff := cmp.Diff([]string{"apiVersion", "kind", "metadata", "spec"}, sortedKeys(crdType.Fields)); diff != "" {
		t.Errorf("a resource's root always has apiVersion, kind and metadata (-want +got):\n%s", diff)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
