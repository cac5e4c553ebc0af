package where

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestCostLimit: the static limit admits what users write, comprehensions
// nested along the object and over two independent lists included, and
// rejects three nested over independent lists, typed or not.
func TestCostLimit(t *testing.T) {
	cases := []struct {
		expr string
		ok   bool
	}{
		{"object.metadata.labels['app'] == 'payments-api'", true},
		{"object.metadata.name.matches('^payments-.*$')", true},
		{"object.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')", true},
		{"object.spec.containers.exists(c, c.image.contains('nginx'))", true},
		{"object.spec.containers.exists(c, c.ports.exists(p, p.containerPort == 8080))", true},
		{"object.spec.containers.exists(c, c.env.exists(e, e.value.contains('password')))", true},
		{"object.spec.containers.all(c, c.env.all(e, e.name.matches('^[A-Z_]+$')))", true},
		{"object.spec.containers.exists(c, c.env.exists(e, c.env.exists(f, e.name == f.name && e != f)))", true},
		{"object.spec.containers.all(c, quantity(c.resources.requests['cpu']).isLessThan(quantity('1')))", true},
		{"object.spec.containers.map(c, c.name).join(',').contains('x')", true},
		{"object.metadata.labels.exists(k, object.metadata.labels[k].matches('^[a-z]+$'))", true},
		{"object.metadata.annotations.exists(k, object.metadata.labels.exists(l, k == l))", true},
		{"object.spec.containers.exists(c, object.spec.volumes.exists(v, v.name.contains(c.name)))", true},
		{"object.spec.containers.exists(c, c.volumeMounts.exists(m, object.spec.volumes.exists(v, v.name == m.name && has(v.hostPath))))", true},
		{"object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))", false},
		{"object.spec.containers.exists(c, object.spec.volumes.exists(v, object.metadata.annotations.exists(k, k.contains(v.name))))", false},
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	for _, tc := range cases {
		for _, schemas := range []*Schemas{embeddedSchemas(), nil} {
			_, err := mustParse(t, tc.expr).Compile(gvk, schemas)
			if (err == nil) != tc.ok {
				t.Errorf("%s (typed %v): error %v, want ok: %v", tc.expr, schemas != nil, err, tc.ok)
			}
		}
	}
}
