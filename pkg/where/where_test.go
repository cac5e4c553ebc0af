package where

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

var (
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	widgetGVK     = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	// started is the now of every test: the realistic pod was created a
	// little over five days before.
	started = time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
)

// embeddedSchemas reads client-go's copy of a real server's OpenAPI v3
// documents (core/v1, apps/v1, batch/v1, ...), once for all tests, as a
// command reads them once for all its types.
var embeddedSchemas = sync.OnceValue(func() *Schemas {
	return NewSchemas(openapitest.NewEmbeddedFileClient())
})

// failingResolver is a server that does not answer /openapi/v3.
type failingResolver struct{}

func (failingResolver) ResolveSchema(schema.GroupVersionKind) (*spec.Schema, error) {
	return nil, errors.New("the server is currently unable to handle the request")
}

func mustParse(t testing.TB, exprs ...string) *Conditions {
	t.Helper()
	c, err := Parse(exprs, started)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustCompile(t testing.TB, c *Conditions, gvk schema.GroupVersionKind, s *Schemas) *Filter {
	t.Helper()
	f, err := c.Compile(gvk, s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name  string
		exprs []string
		want  string
	}{
		{
			name:  "syntax error",
			exprs: []string{"object.spec..replicas"},
			want: "--where \"object.spec..replicas\": syntax error at column 13: no viable alternative at input '..'\n" +
				"  object.spec..replicas\n" +
				"              ^",
		},
		{
			name:  "unclosed string",
			exprs: []string{"object.metadata.name == 'web"},
			want: "--where \"object.metadata.name == 'web\": syntax error at column 25: token recognition error at: ''web'\n" +
				"  object.metadata.name == 'web\n" +
				"                          ^",
		},
		{
			name:  "the second expression is named",
			exprs: []string{"object.metadata.name == 'web'", "object.status.phase = 'Running'"},
			want: "--where \"object.status.phase = 'Running'\": syntax error at column 21: token recognition error at: '= '\n" +
				"  object.status.phase = 'Running'\n" +
				"                      ^",
		},
		{
			name:  "a line of several",
			exprs: []string{"object.metadata.name == 'web' &&\n  object.status.phase ==== 'Running'"},
			want: "--where \"object.metadata.name == 'web' &&\\n  object.status.phase ==== 'Running'\": syntax error at line 2, column 25: extraneous input '==' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n" +
				"    object.status.phase ==== 'Running'\n" +
				"                          ^",
		},
		{
			name:  "a string cut by a line break",
			exprs: []string{"object.metadata.name == \"web\n"},
			want: "--where \"object.metadata.name == \\\"web\\n\": syntax error at line 1, column 25: token recognition error at: '\"web\\n'\n" +
				"  object.metadata.name == \"web\n" +
				"                          ^",
		},
		{
			name:  "unknown variable",
			exprs: []string{"objct.metadata.name == 'web'"},
			want: "--where \"objct.metadata.name == 'web'\": unknown variable at column 1: \"objct\" (the variables are object, owner, node, now)\n" +
				"  objct.metadata.name == 'web'\n" +
				"  ^",
		},
		{
			name:  "unknown function",
			exprs: []string{"object.metadata.name.startswith('web')"},
			want: "--where \"object.metadata.name.startswith('web')\": unknown function at column 32: \"startswith\"\n" +
				"  object.metadata.name.startswith('web')\n" +
				"                                 ^",
		},
		{
			name:  "not a bool whatever the schema",
			exprs: []string{"size(object.metadata.labels)"},
			want:  "--where \"size(object.metadata.labels)\": must evaluate to bool but got int",
		},
		{
			name:  "a type error among literals",
			exprs: []string{"object.metadata.name == 'web' && 1 == 'one'"},
			want: "--where \"object.metadata.name == 'web' && 1 == 'one'\": type error at column 36: found no matching overload for '_==_' applied to '(int, string)'\n" +
				"  object.metadata.name == 'web' && 1 == 'one'\n" +
				"                                     ^",
		},
		{
			name:  "a bad regular expression literal",
			exprs: []string{"object.metadata.name.matches('web-[')"},
			want: "--where \"object.metadata.name.matches('web-[')\": type error at column 30: invalid matches argument\n" +
				"  object.metadata.name.matches('web-[')\n" +
				"                               ^",
		},
		{
			name:  "a bad duration literal",
			exprs: []string{"now - timestamp(object.metadata.creationTimestamp) > duration('1 hour')"},
			want: "--where \"now - timestamp(object.metadata.creationTimestamp) > duration('1 hour')\": type error at column 63: invalid duration argument\n" +
				"  now - timestamp(object.metadata.creationTimestamp) > duration('1 hour')\n" +
				"                                                                ^",
		},
		{
			name:  "empty",
			exprs: []string{" "},
			want:  "--where \" \": empty expression",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.exprs, started)
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tc.exprs, c)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			var werr *Error
			if !errors.As(err, &werr) {
				t.Errorf("error is %T, not *Error", err)
			}
		})
	}
}

func TestParseNoExpressions(t *testing.T) {
	c, err := Parse(nil, started)
	if c != nil || err != nil {
		t.Fatalf("Parse(nil) = %v, %v; want nil, nil", c, err)
	}
	if c.Uses() != (Uses{}) || c.Warnings() != nil || c.Expressions() != nil {
		t.Errorf("nil Conditions use or report something")
	}
	f, err := c.Compile(podGVK, nil)
	if f != nil || err != nil {
		t.Fatalf("Compile on nil Conditions = %v, %v", f, err)
	}
	if !f.Match(Input{Object: realisticPod(t)}) || f.Typed() {
		t.Errorf("a nil Filter must match everything, untyped")
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name    string
		exprs   []string
		gvk     schema.GroupVersionKind
		schemas *Schemas
		want    string
	}{
		{
			name:  "unknown field",
			exprs: []string{"object.spec.replica > 1"},
			gvk:   deploymentGVK,
			want: "--where \"object.spec.replica > 1\": unknown field at column 13: \"replica\"\n" +
				"  object.spec.replica > 1\n" +
				"              ^",
		},
		{
			name:  "unknown field in a comprehension",
			exprs: []string{"object.status.conditions.exists(c, c.typ == 'Ready')"},
			gvk:   podGVK,
			want: "--where \"object.status.conditions.exists(c, c.typ == 'Ready')\": unknown field at column 38: \"typ\"\n" +
				"  object.status.conditions.exists(c, c.typ == 'Ready')\n" +
				"                                       ^",
		},
		{
			name:  "unknown field of the owner",
			exprs: []string{"owner.spec.replicas > 1"},
			gvk:   podGVK,
			want: "--where \"owner.spec.replicas > 1\": unknown field at column 7: \"spec\"\n" +
				"  owner.spec.replicas > 1\n" +
				"        ^",
		},
		{
			name:  "unknown field of the node",
			exprs: []string{"node.status.ready"},
			gvk:   podGVK,
			want: "--where \"node.status.ready\": unknown field at column 13: \"ready\"\n" +
				"  node.status.ready\n" +
				"              ^",
		},
		{
			name:  "unknown field in an optional selection",
			exprs: []string{"object.spec.?replica.orValue(1) > 1"},
			gvk:   deploymentGVK,
			want: "--where \"object.spec.?replica.orValue(1) > 1\": unknown field at column 14: \"replica\"\n" +
				"  object.spec.?replica.orValue(1) > 1\n" +
				"               ^",
		},
		{
			name:  "a typed field of the wrong type",
			exprs: []string{"object.spec.replicas == '3'"},
			gvk:   deploymentGVK,
			want: "--where \"object.spec.replicas == '3'\": type error at column 22: found no matching overload for '_==_' applied to '(int, string)'\n" +
				"  object.spec.replicas == '3'\n" +
				"                       ^",
		},
		{
			name:  "a timestamp is a string, as -o json prints it",
			exprs: []string{"object.metadata.creationTimestamp < now"},
			gvk:   podGVK,
			want: "--where \"object.metadata.creationTimestamp < now\": type error at column 35: found no matching overload for '_<_' applied to '(string, timestamp)'\n" +
				"  object.metadata.creationTimestamp < now\n" +
				"                                    ^",
		},
		{
			name:  "not a bool, from the schema",
			exprs: []string{"object.metadata.name"},
			gvk:   podGVK,
			want:  "--where \"object.metadata.name\": must evaluate to bool but got string",
		},
		{
			name:  "the second expression is named",
			exprs: []string{"object.metadata.name != ''", "object.spec.nodeName"},
			gvk:   podGVK,
			want:  "--where \"object.spec.nodeName\": must evaluate to bool but got string",
		},
		{
			name:  "too expensive",
			exprs: []string{"object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))"},
			gvk:   podGVK,
			want:  "--where \"object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))\": estimated cost exceeds the limit by a factor of 1037.6: in the worst case it grows faster than the square of the object's size (nest fewer comprehensions over its lists)",
		},
		{
			name:    "too expensive without a schema",
			exprs:   []string{"object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))"},
			gvk:     widgetGVK,
			schemas: NewSchemasFromResolver(failingResolver{}),
			want:    "--where \"object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))\": estimated cost exceeds the limit by a factor of 1844.7: in the worst case it grows faster than the square of the object's size (nest fewer comprehensions over its lists)",
		},
		{
			name:  "node of a kind that has none",
			exprs: []string{"object.spec.replicas > 1", "node.metadata.labels['zone'] == 'a'"},
			gvk:   deploymentGVK,
			want:  "--where \"node.metadata.labels['zone'] == 'a'\": node is set only for pods, not for Deployment",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, tc.exprs...)
			schemas := tc.schemas
			if schemas == nil {
				schemas = embeddedSchemas()
			}
			f, err := c.Compile(tc.gvk, schemas)
			if err == nil {
				t.Fatalf("Compile = %v, want an error", f)
			}
			if diff := cmp.Diff(tc.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTyping: the schema catches typos before anything is listed; without a
// schema the same expression compiles and fails per object.
func TestTyping(t *testing.T) {
	const typo = "object.spec.replica > 1"
	cases := []struct {
		name      string
		gvk       schema.GroupVersionKind
		schemas   *Schemas
		wantTyped bool
		wantErr   bool
	}{
		{name: "built-in kind", gvk: deploymentGVK, schemas: embeddedSchemas(), wantTyped: true, wantErr: true},
		{name: "no schemas", gvk: deploymentGVK, schemas: nil},
		{name: "a kind the server publishes no schema of", gvk: widgetGVK, schemas: embeddedSchemas()},
		{name: "a server that does not answer", gvk: deploymentGVK, schemas: NewSchemasFromResolver(failingResolver{})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := mustParse(t, typo).Compile(tc.gvk, tc.schemas)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Compile error = %v, want error: %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if f.Typed() != tc.wantTyped {
				t.Errorf("Typed() = %v, want %v", f.Typed(), tc.wantTyped)
			}
			ok, err := mustParse(t, "object.metadata.name == 'web'").Compile(tc.gvk, tc.schemas)
			if err != nil || ok.Typed() != tc.wantTyped {
				t.Errorf("a valid expression: Typed() = %v, %v", ok.Typed(), err)
			}
		})
	}
}

func TestUses(t *testing.T) {
	cases := []struct {
		expr string
		want Uses
	}{
		{"object.metadata.name == 'web'", Uses{Object: true}},
		{"has(object.metadata.labels)", Uses{Object: true}},
		{"object.metadata.labels['app'] == 'web'", Uses{Object: true}},
		{"object.metadata.labels.exists(k, k.startsWith('app'))", Uses{Object: true}},
		{"object.metadata.ownerReferences.exists(r, r.kind == 'ReplicaSet')", Uses{Object: true}},
		{"object.kind == 'Pod' && object.apiVersion == 'v1'", Uses{Object: true}},
		{"object['metadata'].name == 'web'", Uses{Object: true}},
		{"object.?metadata.?name.orValue('') == 'web'", Uses{Object: true}},
		{"object[?'kind'].hasValue()", Uses{Object: true}},
		{"size(object.metadata) > 3", Uses{Object: true}},
		{"now - timestamp(object.metadata.creationTimestamp) > duration('1h')", Uses{Object: true, Now: true}},
		{"object.spec.nodeName == 'n1'", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"object.status.phase == 'Running' && object.metadata.name == 'web'", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"has(object.spec)", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"object != null", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"size(object) > 3", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"object['spec'] != null", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"object[object.metadata.name] != null", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"object.exists(k, k == 'spec')", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"[object].exists(o, o.metadata.name == 'web')", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"dyn(object).metadata.name == 'web'", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"object.?spec.hasValue()", Uses{Object: true, ObjectBeyondMetadata: true}},
		// A comprehension variable named object hides the variable.
		{"[1, 2].exists(object, object > 1)", Uses{}},
		{"[1, 2].exists(object, object > 1) && object.spec.nodeName == 'n1'", Uses{Object: true, ObjectBeyondMetadata: true}},
		{"{'a': 1}.exists(object, v, v > 0)", Uses{}},
		{"owner.kind == 'StatefulSet'", Uses{Owner: true}},
		{"owner == null", Uses{Owner: true}},
		{"node.metadata.labels['zone'] == 'a'", Uses{Node: true}},
		{"node != null && node.status.conditions.exists(c, c.type == 'Ready' && c.status != 'True')", Uses{Node: true, NodeBeyondMetadata: true}},
		{"has(node.metadata.labels) && node.kind == 'Node'", Uses{Node: true}},
		{"node.?status.hasValue()", Uses{Node: true, NodeBeyondMetadata: true}},
		{"owner.metadata.name == node.metadata.name", Uses{Owner: true, Node: true}},
		{"true", Uses{}},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			c := mustParse(t, tc.expr)
			if diff := cmp.Diff(tc.want, c.Uses()); diff != "" {
				t.Errorf("Uses (-want +got):\n%s", diff)
			}
			if got, want := c.Uses().MetadataOnly(), !tc.want.ObjectBeyondMetadata; got != want {
				t.Errorf("MetadataOnly() = %v, want %v", got, want)
			}
			if got, want := c.Uses().NodeMetadataOnly(), !tc.want.NodeBeyondMetadata; got != want {
				t.Errorf("NodeMetadataOnly() = %v, want %v", got, want)
			}
		})
	}

	all := mustParse(t, "object.metadata.name == 'web'", "owner.kind == 'ReplicaSet'", "node.metadata.name != ''", "object.status.phase == 'Running'", "now > timestamp('2024-01-01T00:00:00Z')").Uses()
	if want := (Uses{Object: true, ObjectBeyondMetadata: true, Owner: true, Node: true, Now: true}); all != want {
		t.Errorf("Uses of several = %+v, want their union %+v", all, want)
	}
}

// TestReads: the fields expressions select of object and node, which their
// schemas are trimmed to; a use that may read any field reads them all.
func TestReads(t *testing.T) {
	cases := []struct {
		exprs  []string
		object string // sorted, comma-separated; "*" for every field
		node   string
	}{
		{[]string{"object.status.phase == 'Running'"}, "status", ""},
		{[]string{"object.spec.nodeName == 'a'", "object['status'].phase == 'x'", "object.?metadata.name.orValue('') == ''"}, "metadata,spec,status", ""},
		{[]string{"object.spec.containers.exists(c, c.image == 'x')"}, "spec", ""},
		{[]string{"size(object) > 1"}, "*", ""},
		{[]string{"object[object.metadata.name] == 1"}, "*", ""},
		{[]string{"[1].exists(object, object > 0) && node.status.conditions.size() > 0"}, "", "status"},
		{[]string{"node.metadata.name == 'a'", "dyn(node) != null"}, "", "*"},
	}
	describe := func(f fields) string {
		if f.all {
			return "*"
		}
		return strings.Join(slices.Sorted(maps.Keys(f.names)), ",")
	}
	for _, tc := range cases {
		c := mustParse(t, tc.exprs...)
		if got := describe(c.reads.object); got != tc.object {
			t.Errorf("%q: object fields %q, want %q", tc.exprs, got, tc.object)
		}
		if got := describe(c.reads.node); got != tc.node {
			t.Errorf("%q: node fields %q, want %q", tc.exprs, got, tc.node)
		}
	}
}

// TestTrimmedTyping: typed by the kind trimmed to the fields they select,
// expressions find the same errors as with the whole kind, in the fields
// they select and in those they do not have.
func TestTrimmedTyping(t *testing.T) {
	for _, expr := range []string{
		"object.status.phase == 'Running'",
		"object.status.phse == 'Running'",
		"object.sttus.phase == 'Running'",
		"object.status.phase == 1",
		"object.status == 1",
		"object.spec.containers.exists(c, c.image.startsWith('x') && c.ports.exists(p, p.containerPort == 80))",
		"object.spec.containers.exists(c, c.imag == 'x')",
		"object.metadata.labels.app == 'web' && object.status.startTime != ''",
	} {
		c := mustParse(t, expr)
		_, trimmed := c.Compile(podGVK, embeddedSchemas())
		whole := *c
		whole.reads = reads{object: fields{all: true}}
		_, full := whole.Compile(podGVK, embeddedSchemas())
		if fmt.Sprint(trimmed) != fmt.Sprint(full) {
			t.Errorf("%s: typed by the fields it selects: %v; by the whole Pod: %v", expr, trimmed, full)
		}
	}
}

// TestLibraries runs functions of each Kubernetes CEL library, as a policy
// would call them, over the realistic pod with its schema.
func TestLibraries(t *testing.T) {
	cases := []struct {
		library string
		expr    string
		want    bool
	}{
		{"quantity", "quantity(object.spec.containers[0].resources.requests.cpu).isGreaterThan(quantity('100m'))", true},
		{"quantity", "object.spec.containers.all(c, quantity(c.resources.limits.memory).compareTo(quantity('1Gi')) < 0)", true},
		{"quantity", "quantity(object.spec.containers[0].resources.limits.memory).asInteger() == 536870912", true},
		{"quantity", "isQuantity(object.spec.containers[1].resources.requests.cpu)", true},
		{"quantity", "quantity(object.spec.containers[0].resources.requests.cpu).add(quantity(object.spec.containers[1].resources.requests.cpu)).isLessThan(quantity('500m'))", false},
		{"quantity", "object.spec.containers.map(c, quantity(c.resources.requests.memory)).all(q, q.isInteger() && q.asInteger() > 0)", true},
		{"regex", "object.metadata.name.matches('^payments-api-[a-z0-9]+-[a-z0-9]+$')", true},
		{"regex", "object.spec.containers[0].image.find('v[0-9.]+') == 'v3.26.5'", true},
		{"regex", "object.spec.containers.map(c, c.image.findAll('[a-z]+\\\\.[a-z]+')).exists(l, size(l) > 0)", true},
		{"lists", "object.spec.containers.map(c, c.name).isSorted()", true},
		{"lists", "object.status.containerStatuses.map(s, s.restartCount).sum() == 0", true},
		{"lists", "object.spec.containers.map(c, c.name).indexOf('log-shipper') == 1", true},
		{"lists", "object.spec.volumes.map(v, v.name).slice(0, 2).size() == 2", true},
		{"lists", "object.spec.containers.filter(c, has(c.ports)).map(c, c.ports).flatten().size() == 2", true},
		{"url", "url(object.spec.containers[0].env.filter(e, e.name == 'OTEL_EXPORTER_OTLP_ENDPOINT')[0].value).getPort() == '4317'", true},
		{"url", "isURL(object.metadata.annotations['prometheus.io/port'])", false},
		{"ip", "ip(object.status.podIP).family() == 4", true},
		{"ip", "ip(object.status.hostIP).isLoopback()", false},
		{"cidr", "cidr('10.128.0.0/9').containsIP(object.status.podIP)", true},
		{"cidr", "object.status.podIPs.all(p, cidr('10.0.0.0/8').containsIP(ip(p.ip)))", true},
		{"format", "'%s/%s'.format([object.metadata.namespace, object.metadata.name]).startsWith('payments-prod/')", true},
		{"format", "'%d restarts'.format([object.status.containerStatuses[0].restartCount]) == '0 restarts'", true},
		{"semver", "semver(object.metadata.labels['app.kubernetes.io/version'].substring(1)).isGreaterThan(semver('3.9.0'))", true},
		{"semver", "isSemver(object.metadata.labels['app.kubernetes.io/version'], true)", true},
		{"semver", "semver('v3.26.5', true).major() == 3", true},
		{"strings", "object.spec.containers[0].image.split(':')[1].lowerAscii() == 'v3.26.5'", true},
		{"strings", "object.metadata.labels['app'].replace('-', '_') == 'payments_api'", true},
		{"sets", "sets.intersects(object.spec.containers.map(c, c.name), ['api', 'web'])", true},
		{"optional", "object.spec.?priorityClassName.orValue('') == ''", true},
		{"two-variable comprehension", "object.metadata.labels.exists(k, v, k.startsWith('topology.') && v.startsWith('us-east-1'))", true},
		{"timestamp", "now - timestamp(object.metadata.creationTimestamp) > duration('1m')", true},
		{"timestamp", "now - timestamp(object.metadata.creationTimestamp) > duration('1h')", false},
		{"timestamp", "timestamp(object.status.startTime).getDayOfWeek() == 5", true},
	}
	pod := realisticPod(t)
	for _, tc := range cases {
		t.Run(tc.library+": "+tc.expr, func(t *testing.T) {
			c := mustParse(t, tc.expr)
			f := mustCompile(t, c, podGVK, embeddedSchemas())
			if got := f.Match(Input{Object: pod}); got != tc.want {
				t.Errorf("Match = %v, want %v (warnings %v)", got, tc.want, c.Warnings())
			}
			if w := c.Warnings(); w != nil {
				t.Errorf("warnings: %v", w)
			}
		})
	}
}

// partial is obj as a metadata-only informer holds it.
func partial(obj metav1.Object) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"},
		ObjectMeta: *obj.(interface{ GetObjectMeta() metav1.Object }).GetObjectMeta().(*metav1.ObjectMeta),
	}
}

func unstructuredOf(t testing.TB, obj any, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: roundTrip(t, obj, gvk)}
}

func testNode(ready corev1.ConditionStatus) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: map[string]string{"topology.kubernetes.io/zone": "us-east-1b"}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}},
			Capacity:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
		},
	}
}

func testDeployment() *appsv1.Deployment {
	replicas := int32(3)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "payments-api", Namespace: "payments-prod", Labels: map[string]string{"tier": "frontend"}},
		Spec:       appsv1.DeploymentSpec{Replicas: &replicas},
	}
}

// TestVariables binds owner, node and now, present and null, in each form an
// informer hands them over.
func TestVariables(t *testing.T) {
	pod := realisticPod(t)
	deploy := testDeployment()
	ownerOf := func(obj any) *Owner { return &Owner{APIVersion: "apps/v1", Kind: "Deployment", Object: obj} }
	ready, notReady := testNode(corev1.ConditionTrue), testNode(corev1.ConditionFalse)
	cases := []struct {
		name string
		expr string
		in   Input
		want bool
	}{
		{"owner is null without one", "owner == null", Input{Object: pod}, true},
		{"owner typed", "owner.kind == 'Deployment' && owner.apiVersion == 'apps/v1' && owner.metadata.labels.tier == 'frontend'", Input{Object: pod, Owner: ownerOf(deploy)}, true},
		{"owner from a metadata informer", "owner.metadata.name == 'payments-api'", Input{Object: pod, Owner: ownerOf(partial(deploy))}, true},
		{"owner unstructured", "owner.metadata.namespace == 'payments-prod'", Input{Object: pod, Owner: ownerOf(unstructuredOf(t, deploy, deploymentGVK))}, true},
		{"owner as ObjectMeta", "owner.metadata.name == 'payments-api'", Input{Object: pod, Owner: ownerOf(&deploy.ObjectMeta)}, true},
		{"owner is only metadata", "!has(dyn(owner).spec)", Input{Object: pod, Owner: ownerOf(deploy)}, true},
		{"owner present is not null", "owner != null", Input{Object: pod, Owner: ownerOf(deploy)}, true},
		{"node is null when unscheduled", "node == null", Input{Object: pod}, true},
		{"node ready", "node.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')", Input{Object: pod, Node: ready}, true},
		{"node not ready", "node.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')", Input{Object: pod, Node: notReady}, false},
		{"node kind", "node.kind == 'Node' && node.apiVersion == 'v1'", Input{Object: pod, Node: ready}, true},
		{"node capacity", "quantity(node.status.capacity.cpu).isGreaterThan(quantity('4'))", Input{Object: pod, Node: ready}, true},
		{"node unstructured", "node.metadata.labels['topology.kubernetes.io/zone'] == object.metadata.labels['topology.kubernetes.io/zone']", Input{Object: pod, Node: unstructuredOf(t, ready, nodeGVK)}, true},
		{"node from a metadata informer", "node.metadata.name == object.spec.nodeName.substring(0, 0) + 'node-1'", Input{Object: pod, Node: partial(ready)}, true},
		{"now", "now == timestamp('2026-11-25T18:00:00Z')", Input{Object: pod}, true},
		{"age", "now - timestamp(object.metadata.creationTimestamp) < duration('1m')", Input{Object: pod}, false},
		{"object from a metadata informer", "object.kind == 'Pod' && object.apiVersion == 'v1' && object.metadata.name.startsWith('payments-api')", Input{Object: partial(pod)}, true},
		{"object unstructured", "object.status.phase == 'Running'", Input{Object: unstructuredOf(t, pod, podGVK)}, true},
		{"object unstructured metadata", "object.kind == 'Pod' && object.metadata.labels.app == 'payments-api'", Input{Object: unstructuredOf(t, pod, podGVK)}, true},
		{"object deleted while the watch was down", "object.metadata.labels.app == 'payments-api'", Input{Object: cache.DeletedFinalStateUnknown{Key: "payments-prod/x", Obj: pod}}, true},
		{"no object", "object == null", Input{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, schemas := range []*Schemas{embeddedSchemas(), nil} {
				c := mustParse(t, tc.expr)
				f := mustCompile(t, c, podGVK, schemas)
				if got := f.Match(tc.in); got != tc.want {
					t.Errorf("typed %v: Match = %v, want %v (warnings %v)", schemas != nil, got, tc.want, c.Warnings())
				}
			}
		})
	}
}

// TestConjunction: every expression must hold; one that fails is false and
// counted against the right expression.
func TestConjunction(t *testing.T) {
	pod := realisticPod(t)
	cases := []struct {
		name  string
		exprs []string
		want  bool
	}{
		{"both true", []string{"object.status.phase == 'Running'", "object.metadata.labels.tier == 'frontend'"}, true},
		{"first false", []string{"object.status.phase == 'Pending'", "object.metadata.labels.tier == 'frontend'"}, false},
		{"second false", []string{"object.status.phase == 'Running'", "object.metadata.labels.tier == 'backend'"}, false},
		{"second fails", []string{"object.status.phase == 'Running'", "object.metadata.labels.missing == 'x'"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, tc.exprs...)
			if got := mustCompile(t, c, podGVK, embeddedSchemas()).Match(Input{Object: pod}); got != tc.want {
				t.Errorf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWarnings: run-time errors are one warning per distinct error of each
// expression, with a count, summed over every Filter of the Conditions.
func TestWarnings(t *testing.T) {
	pod := realisticPod(t)
	unlabelled := pod.DeepCopy()
	unlabelled.Labels = nil
	labelled := pod.DeepCopy()
	labelled.Labels = map[string]string{"tier": "frontend"}
	unscheduled := labelled.DeepCopy()
	unscheduled.Spec.NodeName = ""

	c := mustParse(t,
		"object.metadata.labels.tier == 'frontend'",
		"object.spec.nodeName.startsWith('node-')",
		"object.metadata.name.startsWith(object.metadata.annotations['x'])",
	)
	typed := mustCompile(t, c, podGVK, embeddedSchemas())
	dyn := mustCompile(t, c, podGVK, nil)
	for range 3 {
		typed.Match(Input{Object: unlabelled})
		dyn.Match(Input{Object: unlabelled})
	}
	typed.Match(Input{Object: labelled})
	dyn.Match(Input{Object: unscheduled})

	want := []string{
		`--where "object.metadata.labels.tier == 'frontend'": no such key: labels (on 6 objects)`,
		`--where "object.spec.nodeName.startsWith('node-')": no such key: nodeName (on 1 object)`,
		`--where "object.metadata.name.startsWith(object.metadata.annotations['x'])": no such key: x (on 1 object)`,
	}
	var got []string
	for _, w := range c.Warnings() {
		got = append(got, w.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestFork: Filters of a fork count their errors apart from the Conditions
// forked, which keep counting their own.
func TestFork(t *testing.T) {
	c := mustParse(t, "object.spec.nodeName == 'a'")
	fork := c.Fork()
	if got := fork.Expressions(); !slices.Equal(got, c.Expressions()) || fork.Uses() != c.Uses() {
		t.Errorf("fork reads %q (%+v), want %q (%+v)", got, fork.Uses(), c.Expressions(), c.Uses())
	}
	unscheduled := Input{Object: &corev1.Pod{}}
	mustCompile(t, c, podGVK, nil).Match(unscheduled)
	f := mustCompile(t, fork, podGVK, nil)
	f.Match(unscheduled)
	f.Match(unscheduled)
	count := func(c *Conditions) int {
		n := 0
		for _, w := range c.Warnings() {
			n += w.Objects
		}
		return n
	}
	if a, b := count(c), count(fork); a != 1 || b != 2 {
		t.Errorf("errors counted: %d by the Conditions, %d by the fork; want 1 and 2", a, b)
	}
	if (*Conditions)(nil).Fork() != nil {
		t.Error("a nil Conditions forks to something")
	}
}

// TestWarningsDistinct: errors that quote object data are kept apart up to
// maxDistinct per expression, then counted together.
func TestWarningsDistinct(t *testing.T) {
	c := mustParse(t, "object.metadata.labels[object.metadata.name] == 'x'", "object.metadata.labels[object.metadata.namespace] == 'x'")
	f := mustCompile(t, c, podGVK, nil)
	for i := range 8 {
		name := string(rune('a' + i))
		f.Match(Input{Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"ns": "y"}}}})
	}
	var got []string
	for _, w := range c.Warnings() {
		got = append(got, w.String())
	}
	want := []string{
		`--where "object.metadata.labels[object.metadata.name] == 'x'": no such key: a (on 1 object)`,
		`--where "object.metadata.labels[object.metadata.name] == 'x'": no such key: b (on 1 object)`,
		`--where "object.metadata.labels[object.metadata.name] == 'x'": no such key: c (on 1 object)`,
		`--where "object.metadata.labels[object.metadata.name] == 'x'": no such key: d (on 1 object)`,
		`--where "object.metadata.labels[object.metadata.name] == 'x'": no such key: e (on 1 object)`,
		`--where "object.metadata.labels[object.metadata.name] == 'x'": other errors (on 3 objects)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestDynamicErrors: without a schema a field of the wrong type, or a result
// that is not a bool, is found per object.
func TestDynamicErrors(t *testing.T) {
	pod := realisticPod(t)
	cases := []struct {
		expr string
		want string
	}{
		{"object.spec.nodeName > 3", `--where "object.spec.nodeName > 3": no such overload (on 1 object)`},
		{"object.spec.nodeName", `--where "object.spec.nodeName": must evaluate to bool but got string (on 1 object)`},
		{"object.spec.replica == 1", `--where "object.spec.replica == 1": no such key: replica (on 1 object)`},
		{"object.spec.containers[5].name == 'x'", `--where "object.spec.containers[5].name == 'x'": index out of bounds: 5 (on 1 object)`},
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			c := mustParse(t, tc.expr)
			if mustCompile(t, c, podGVK, nil).Match(Input{Object: pod}) {
				t.Fatal("Match = true, want false")
			}
			var got []string
			for _, w := range c.Warnings() {
				got = append(got, w.String())
			}
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRuntimeCostLimit: an evaluation that spends more than the API
// server's per-call limit stops, and is an error on that object.
func TestRuntimeCostLimit(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "big"}, Data: map[string]string{}}
	for i := range 2000 {
		cm.Data[strings.Repeat("k", 5)+string(rune('a'+i%26))+strings.Repeat("x", i/26)] = "v"
	}
	c := mustParse(t, "object.data.exists(k, object.data.exists(l, k + l == 'nope'))")
	f := mustCompile(t, c, schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, embeddedSchemas())
	if f.Match(Input{Object: cm}) {
		t.Fatal("Match = true, want false")
	}
	w := c.Warnings()
	if len(w) != 1 || !strings.Contains(w[0].Message, "actual cost limit exceeded") {
		t.Errorf("warnings = %v, want the cost limit", w)
	}
}

// TestWarningOneLine: a warning quoting object data stays on one line.
func TestWarningOneLine(t *testing.T) {
	c := mustParse(t, "object.metadata.labels[object.metadata.annotations.k] == 'x'")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"k": "a\nb"}}}
	mustCompile(t, c, podGVK, embeddedSchemas()).Match(Input{Object: pod})
	want := []Warning{{Expression: "object.metadata.labels[object.metadata.annotations.k] == 'x'", Message: `no such key: a\nb`, Objects: 1}}
	if diff := cmp.Diff(want, c.Warnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
