package where

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/openapi/openapitest"
)

// benchPredicates are the predicates users reach for first.
var benchPredicates = []struct {
	name, expr string
}{
	{"label", "object.metadata.labels['app'] == 'payments-api'"},
	{"phase", "object.status.phase == 'Running'"},
	{"condition", "object.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"},
	{"quantity", "object.spec.containers.exists(c, quantity(c.resources.requests.cpu).isGreaterThan(quantity('250m')))"},
	{"age", "now - timestamp(object.metadata.creationTimestamp) > duration('1m')"},
}

// BenchmarkMatch measures one evaluation of a typical predicate over a
// realistic pod (12 KB of JSON), as each form of informer holds it: typed
// from a clientset informer, unstructured from a dynamic one. Typed with
// the schema and dynamic (no schema) are compiled differently but evaluate
// the same way.
func BenchmarkMatch(b *testing.B) {
	pod := realisticPod(b)
	forms := []struct {
		name string
		obj  any
	}{
		{"typed", pod},
		{"unstructured", unstructuredOf(b, pod, podGVK)},
	}
	for _, p := range benchPredicates {
		for _, form := range forms {
			b.Run(p.name+"/"+form.name, func(b *testing.B) {
				f := mustCompile(b, mustParse(b, p.expr), podGVK, embeddedSchemas())
				in := Input{Object: form.obj}
				if !f.Match(in) {
					b.Fatal("no match")
				}
				b.ReportAllocs()
				for b.Loop() {
					f.Match(in)
				}
			})
		}
	}
}

// BenchmarkConvert is what the lazy adapter saves: converting a realistic
// typed pod to map[string]any before evaluating, by the converter or by a
// JSON round trip, costs this much per object on top of the predicate.
func BenchmarkConvert(b *testing.B) {
	pod := realisticPod(b)
	b.Run("DefaultUnstructuredConverter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("JSON round trip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			data, err := json.Marshal(pod)
			if err != nil {
				b.Fatal(err)
			}
			var m map[string]any
			if err := utiljson.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCompile measures what a command pays before it lists: the
// predicates compiled for Pods, typed by core/v1's OpenAPI v3 document (1.6
// MB of JSON) read afresh, as each command reads it.
func BenchmarkCompile(b *testing.B) {
	for _, p := range benchPredicates {
		b.Run(p.name, func(b *testing.B) {
			for b.Loop() {
				c, err := Parse([]string{p.expr}, time.Now())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := c.Compile(podGVK, NewSchemas(openapitest.NewEmbeddedFileClient())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
