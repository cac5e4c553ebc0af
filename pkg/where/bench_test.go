package where

import (
	"testing"
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
