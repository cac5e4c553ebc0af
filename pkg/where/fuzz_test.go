package where

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// diffVals walks two CEL values the way expressions read them (Find,
// Contains, Size, Get, iteration, equality) and lists where they differ.
// probe names keys to look up in every object besides the ones present:
// fields JSON leaves out must be absent from both.
func diffVals(path string, a, b ref.Val, s *spec.Schema, out *[]string) {
	if len(*out) > 20 {
		return
	}
	if a.Type().TypeName() != b.Type().TypeName() {
		*out = append(*out, fmt.Sprintf("%s: type %s != %s (%v, %v)", path, a.Type().TypeName(), b.Type().TypeName(), a, b))
		return
	}
	if types.Equal(a, b) != types.True || types.Equal(b, a) != types.True {
		*out = append(*out, fmt.Sprintf("%s: %v != %v", path, a, b))
	}
	switch av := a.(type) {
	case traits.Mapper:
		bv := b.(traits.Mapper)
		if av.Size() != bv.Size() {
			*out = append(*out, fmt.Sprintf("%s: size %v != %v", path, av.Size(), bv.Size()))
		}
		ka, kb := keys(av), keys(bv)
		if !slices.Equal(ka, kb) {
			*out = append(*out, fmt.Sprintf("%s: keys %v != %v", path, ka, kb))
			return
		}
		for _, k := range ka {
			va, _ := av.Find(types.String(k))
			vb, _ := bv.Find(types.String(k))
			var sub *spec.Schema
			if s != nil {
				if p, ok := s.Properties[k]; ok {
					sub = &p
				} else if s.AdditionalProperties != nil {
					sub = s.AdditionalProperties.Schema
				}
			}
			diffVals(path+"."+k, va, vb, sub, out)
		}
		if s != nil {
			for name := range s.Properties {
				_, fa := av.Find(types.String(name))
				_, fb := bv.Find(types.String(name))
				if fa != fb || av.Contains(types.String(name)) != bv.Contains(types.String(name)) {
					*out = append(*out, fmt.Sprintf("%s.%s: present %v != %v", path, name, fa, fb))
				}
			}
		}
	case traits.Lister:
		bv := b.(traits.Lister)
		if av.Size() != bv.Size() {
			*out = append(*out, fmt.Sprintf("%s: size %v != %v", path, av.Size(), bv.Size()))
			return
		}
		var items *spec.Schema
		if s != nil && s.Items != nil {
			items = s.Items.Schema
		}
		n := int(av.Size().(types.Int))
		for i := range n {
			diffVals(fmt.Sprintf("%s[%d]", path, i), av.Get(types.Int(i)), bv.Get(types.Int(i)), items, out)
		}
		if g := av.Get(types.Int(n)); !types.IsError(g) {
			*out = append(*out, fmt.Sprintf("%s[%d]: got %v past the end", path, n, g))
		}
	}
}

// fuzzKinds are the typed objects the fuzzer decodes into: between them they
// hold every special JSON form (Time, MicroTime, Duration, Quantity,
// IntOrString, []byte, FieldsV1, RawExtension, floats, custom marshalers).
var fuzzKinds = []struct {
	gvk schema.GroupVersionKind
	new func() any
}{
	{podGVK, func() any { return &corev1.Pod{} }},
	{schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, func() any { return &corev1.Secret{} }},
	{schema.GroupVersionKind{Version: "v1", Kind: "Service"}, func() any { return &corev1.Service{} }},
	{deploymentGVK, func() any { return &appsv1.Deployment{} }},
	{schema.GroupVersionKind{Group: "events.k8s.io", Version: "v1", Kind: "Event"}, func() any { return &eventsv1.Event{} }},
	{schema.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"}, func() any { return &coordinationv1.Lease{} }},
	{schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, func() any { return &apiextensionsv1.CustomResourceDefinition{} }},
}

// FuzzTypedIsJSON decodes JSON into a typed object and checks that the
// lazy adapter presents exactly what the object's -o json form holds, value
// for value, with every schema property absent from both or present in
// both.
func FuzzTypedIsJSON(f *testing.F) {
	realistic, err := os.ReadFile("testdata/pod-realistic.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint8(0), realistic)
	for _, seed := range []string{
		`{"metadata":{"name":"","labels":{"":""},"creationTimestamp":"2024-02-29T23:59:59.999+05:30"},"spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"1.5","memory":"1e3","x":"0.1Gi"}},"ports":[{"containerPort":0}]}],"nodeName":"","priority":0,"overhead":{"cpu":"-1m"}},"status":{"conditions":[{"type":"Ready","lastProbeTime":null}]}}`,
		`{"spec":{"containers":[{"name":"a","livenessProbe":{"httpGet":{"port":8080}},"readinessProbe":{"httpGet":{"port":"http"}}}],"securityContext":{"sysctls":[]},"tolerations":[{"tolerationSeconds":-5}]}}`,
		`{"metadata":{"deletionTimestamp":"1970-01-01T00:00:00Z","managedFields":[{"fieldsV1":{"f:a":{".":{}}},"time":null}],"ownerReferences":[{"controller":false}]}}`,
	} {
		f.Add(uint8(0), []byte(seed))
	}
	f.Add(uint8(1), []byte(`{"data":{"a":"AAEC","b":"","c":null},"stringData":{"x":"y"},"immutable":false,"type":""}`))
	f.Add(uint8(2), []byte(`{"spec":{"ports":[{"port":80,"targetPort":"http"},{"port":0,"targetPort":0}],"clusterIPs":[],"sessionAffinityConfig":{"clientIP":{"timeoutSeconds":3}}}}`))
	f.Add(uint8(3), []byte(`{"spec":{"replicas":0,"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}},"template":{"metadata":{},"spec":{"containers":[]}}},"status":{"conditions":[{"lastUpdateTime":"2024-01-01T00:00:00Z"}]}}`))
	f.Add(uint8(4), []byte(`{"eventTime":"2024-01-01T00:00:00.123456Z","series":{"count":2,"lastObservedTime":"2024-01-01T00:00:01.000001Z"},"deprecatedFirstTimestamp":null}`))
	f.Add(uint8(5), []byte(`{"spec":{"acquireTime":"2024-01-01T00:00:00.5Z","leaseDurationSeconds":15,"holderIdentity":""}}`))
	f.Add(uint8(6), []byte(`{"spec":{"versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object","minimum":1.0,"maximum":2.5,"default":{"a":[1,2.5,"x",null]},"items":[{"type":"string"}],"additionalProperties":false,"x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"integer","multipleOf":0.5,"enum":[1,"a"]}}}}}]}}`))

	schemas := embeddedSchemas()
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		k := fuzzKinds[int(kind)%len(fuzzKinds)]
		obj := k.new()
		if err := json.Unmarshal(data, obj); err != nil {
			return
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return
		}
		m := map[string]any{}
		if err := utiljson.Unmarshal(b, &m); err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		m["apiVersion"], m["kind"] = k.gvk.GroupVersion().String(), k.gvk.Kind
		tm := &typeMeta{apiVersion: types.String(k.gvk.GroupVersion().String()), kind: types.String(k.gvk.Kind)}
		s, _ := schemas.resolve(k.gvk)

		before := obj.(runtime.Object).DeepCopyObject()
		var diffs []string
		diffVals("object", rootVal(obj, tm), rootVal(m, tm), s, &diffs)
		for _, d := range diffs {
			t.Errorf("%s", d)
		}
		if len(diffs) > 0 {
			t.Logf("JSON: %s", b)
		}
		if !reflect.DeepEqual(before, obj) {
			t.Errorf("reading the object modified it")
		}
	})
}

// FuzzParse: any text is parsed, analysed and, when it parses, compiled and
// evaluated without a panic; an error is one line naming the flag, or three
// with the expression's line and a caret within it.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"object.spec..replicas",
		"objct.metadata.name == 'web'",
		"object.metadata.labels['app'] == 'ü' &&\n\tobject.spec.x",
		"[1].exists(object, object > 0) && node == null",
		"object.?spec.?containers[?0].orValue(null) == null",
		"owner.metadata.name == 'é'.upperAscii()",
		"'\\u00e9' == ",
		"now - timestamp(object.metadata.creationTimestamp) > duration('1h')",
	} {
		f.Add(seed)
	}
	pod := realisticPod(f)
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := Parse([]string{expr}, started)
		if err != nil {
			checkError(t, expr, err)
			return
		}
		filter, err := c.Compile(podGVK, nil)
		if err != nil {
			checkError(t, expr, err)
			return
		}
		filter.Match(Input{Object: pod})
		for _, w := range c.Warnings() {
			if strings.Contains(w.String(), "\n") && !strings.Contains(expr, "\n") {
				t.Errorf("warning of several lines: %q", w)
			}
		}
	})
}

func checkError(t *testing.T, expr string, err error) {
	var werr *Error
	if !errors.As(err, &werr) {
		t.Fatalf("%q: error %T, not *Error: %v", expr, err, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if !strings.HasPrefix(lines[0], "--where "+strconv.Quote(expr)+": ") {
		t.Errorf("first line %q does not name the expression", lines[0])
	}
	switch len(lines) {
	case 1:
		if werr.Column != 0 {
			t.Errorf("%q: a place and no caret: %q", expr, err)
		}
	case 3:
		if !strings.HasSuffix(lines[2], "^") || strings.TrimSpace(lines[2]) != "^" {
			t.Errorf("%q: third line %q is not a caret", expr, lines[2])
		}
		if utf8.RuneCountInString(lines[2]) > utf8.RuneCountInString(lines[1])+1 {
			t.Errorf("%q: caret past the end of the line:\n%s", expr, err)
		}
	default:
		t.Errorf("%q: error of %d lines:\n%s", expr, len(lines), err)
	}
}
