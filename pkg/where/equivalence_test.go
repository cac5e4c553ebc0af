package where

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// realisticPod is ../shared/bench/pod-realistic.json: a pod as a cluster
// writes it, 12 KB of JSON, managedFields from two writers. It is decoded
// as an informer holds it: no apiVersion or kind.
func realisticPod(t testing.TB) *corev1.Pod {
	t.Helper()
	b, err := os.ReadFile("testdata/pod-realistic.json")
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(b, pod); err != nil {
		t.Fatal(err)
	}
	pod.TypeMeta = metav1.TypeMeta{}
	return pod
}

// roundTrip is obj as -o json prints it, decoded as the dynamic client
// decodes it, with the apiVersion and kind of gvk.
func roundTrip(t testing.TB, obj any, gvk schema.GroupVersionKind) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["apiVersion"], m["kind"] = gvk.GroupVersion().String(), gvk.Kind
	return m
}

// evaluator evaluates expressions of any result type over one object, as a
// Filter binds it, in the dynamic environment.
type evaluator struct {
	t   testing.TB
	env *cel.Env
	f   *Filter
}

func newEvaluator(t testing.TB, gvk schema.GroupVersionKind) *evaluator {
	env, err := dynamicEnv()
	if err != nil {
		t.Fatal(err)
	}
	return &evaluator{t: t, env: env, f: &Filter{
		conds:    &Conditions{now: types.Timestamp{Time: time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)}},
		typeMeta: typeMeta{apiVersion: types.String(gvk.GroupVersion().String()), kind: types.String(gvk.Kind)},
	}}
}

func (e *evaluator) eval(expr string, in ...Input) []result {
	e.t.Helper()
	ast, iss := e.env.Compile(expr)
	if iss.Err() != nil {
		e.t.Fatalf("%s: %v", expr, iss.Err())
	}
	prg, err := e.env.Program(ast)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]result, len(in))
	for i := range in {
		out[i].val, _, out[i].err = prg.Eval(&activation{f: e.f, in: in[i]})
	}
	return out
}

type result struct {
	val ref.Val
	err error
}

// sameVal reports how a and b differ, or "" when they are the same CEL
// value of the same type.
func sameVal(a, b ref.Val) string {
	if a.Type().TypeName() != b.Type().TypeName() {
		return fmt.Sprintf("type %s != %s", a.Type().TypeName(), b.Type().TypeName())
	}
	if types.Equal(a, b) != types.True || types.Equal(b, a) != types.True {
		return fmt.Sprintf("%v != %v", a, b)
	}
	if m, ok := a.(traits.Mapper); ok {
		if ka, kb := keys(m), keys(b.(traits.Mapper)); !slices.Equal(ka, kb) {
			return fmt.Sprintf("keys %v != %v", ka, kb)
		}
	}
	return ""
}

func keys(m traits.Mapper) []string {
	var out []string
	for it := m.Iterator(); it.HasNext() == types.True; {
		out = append(out, fmt.Sprint(it.Next()))
	}
	slices.Sort(out)
	return out
}

// compare evaluates expr over both forms of an object and fails when the
// results, or the errors, differ.
func (e *evaluator) compare(expr string, typed, unstructured Input) {
	e.t.Helper()
	r := e.eval(expr, typed, unstructured)
	a, errA, b, errB := r[0].val, r[0].err, r[1].val, r[1].err
	switch {
	case errA != nil || errB != nil:
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			e.t.Errorf("%s: typed error %v, JSON error %v", expr, errA, errB)
		}
	default:
		if d := sameVal(a, b); d != "" {
			e.t.Errorf("%s: typed and JSON differ: %s", expr, d)
		}
	}
}

// paths lists a CEL selection for every value in a JSON object, index
// syntax throughout so that any key can be written.
func paths(prefix string, v any, out *[]string) {
	*out = append(*out, prefix)
	switch v := v.(type) {
	case map[string]any:
		for k, el := range v {
			paths(prefix+"["+strconv.Quote(k)+"]", el, out)
		}
	case []any:
		for i, el := range v {
			paths(fmt.Sprintf("%s[%d]", prefix, i), el, out)
		}
	}
}

// presence lists has() tests for every property the schema declares on the
// objects present in v, and whether JSON has each.
func presence(prefix string, v any, s *spec.Schema, out map[string]bool) {
	if s == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for name, prop := range s.Properties {
			if needsEscape(name) {
				continue
			}
			_, ok := v[name]
			out["has("+prefix+"."+name+")"] = ok
			if ok {
				presence(prefix+"."+name, v[name], &prop, out)
			}
		}
		if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
			for k, el := range v {
				presence(prefix+"["+strconv.Quote(k)+"]", el, ap.Schema, out)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for i, el := range v {
				presence(fmt.Sprintf("%s[%d]", prefix, i), el, s.Items.Schema, out)
			}
		}
	}
}

// TestTypedIsJSON reads every value of a realistic pod, and tests every
// property its schema declares for presence, over the typed pod and over its
// -o json form: the lazy adapter must present exactly what JSON holds.
func TestTypedIsJSON(t *testing.T) {
	pod := realisticPod(t)
	m := roundTrip(t, pod, podGVK)
	typed, unstructured := Input{Object: pod}, Input{Object: m}
	e := newEvaluator(t, podGVK)

	var ps []string
	paths("object", m, &ps)
	if len(ps) < 300 {
		t.Fatalf("only %d paths in the realistic pod", len(ps))
	}
	for _, p := range ps {
		e.compare(p, typed, unstructured)
		e.compare("type("+p+")", typed, unstructured)
		if strings.Count(p, "[") > 0 {
			e.compare("size("+p+") >= 0 || true", typed, unstructured)
		}
	}

	podSchema, err := embeddedSchemas().resolve(podGVK)
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]bool{}
	presence("object", m, podSchema, has)
	if len(has) < 300 {
		t.Fatalf("only %d presence tests", len(has))
	}
	for expr, want := range has {
		r := e.eval(expr, typed)[0]
		if got, err := r.val, r.err; err != nil || got != types.Bool(want) {
			t.Errorf("%s over the typed pod = %v, %v; JSON has it: %v", expr, got, err, want)
		}
	}

	for _, expr := range equivalenceExpressions {
		e.compare(expr, typed, unstructured)
	}
}

// TestTypedIsJSONOtherKinds reads every value of a Deployment (a pod
// template, whose zero creationTimestamp JSON leaves out), a Node
// (quantities, addresses, images) and a metadata-only pod both ways.
func TestTypedIsJSONOtherKinds(t *testing.T) {
	deploy := testDeployment()
	deploy.Spec.Template = corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "payments-api"}},
		Spec:       realisticPod(t).Spec,
	}
	deploy.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: ptrTo(intstr.FromString("25%")), MaxUnavailable: ptrTo(intstr.FromInt32(0))}
	node := testNode(corev1.ConditionTrue)
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.11"}}
	node.Status.Images = []corev1.ContainerImage{{Names: []string{"registry.example.com/payments/api:v3.26.5"}, SizeBytes: 123456789}}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("7800m"), corev1.ResourceMemory: resource.MustParse("31Gi")}
	node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "payments", Effect: corev1.TaintEffectNoSchedule}}
	partialGVK := podGVK
	for _, tc := range []struct {
		gvk schema.GroupVersionKind
		obj any
	}{
		{deploymentGVK, deploy},
		{nodeGVK, node},
		{partialGVK, partial(realisticPod(t))},
	} {
		t.Run(tc.gvk.Kind, func(t *testing.T) {
			m := roundTrip(t, tc.obj, tc.gvk)
			e := newEvaluator(t, tc.gvk)
			var ps []string
			paths("object", m, &ps)
			for _, p := range ps {
				e.compare(p, Input{Object: tc.obj}, Input{Object: m})
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// equivalenceExpressions exercise the adapter's containers the way
// expressions use them: comprehensions, equality, membership, conversions,
// library functions, errors.
var equivalenceExpressions = []string{
	`object`,
	`object.metadata`,
	`object.spec == object.spec`,
	`object.metadata.labels`,
	`object.metadata.labels.exists(k, k.startsWith('app'))`,
	`object.metadata.labels.all(k, object.metadata.labels[k] != '')`,
	`object.metadata.labels.map(k, k).sort()`,
	`object.metadata.annotations.filter(k, k.contains('/')).sort()`,
	`'app' in object.metadata.labels`,
	`'nope' in object.metadata.labels`,
	`object.metadata.labels.nope`,
	`object.metadata.nope`,
	`object.spec.containers[9]`,
	`object.spec.containers[-1]`,
	`object.spec.containers['x']`,
	`object.spec.containers.map(c, c.name)`,
	`object.spec.containers.map(c, c.name).join(',')`,
	`object.spec.containers.exists(c, c.ports.exists(p, p.containerPort == 8080))`,
	`object.spec.containers.all(c, has(c.resources.limits) && 'cpu' in c.resources.limits)`,
	`object.spec.containers.map(c, quantity(c.resources.requests.cpu)).all(q, q.isLessThan(quantity('1')))`,
	`object.spec.containers[0].resources`,
	`object.spec.containers[0].resources.requests == {'cpu': '500m', 'memory': '256Mi'}`,
	`object.spec.containers[0].ports == [{'containerPort': dyn(8080), 'name': dyn('http'), 'protocol': dyn('TCP')}, {'containerPort': dyn(9090), 'name': dyn('metrics'), 'protocol': dyn('TCP')}]`,
	`object.spec.containers[0].ports[0] == {'containerPort': dyn(8080), 'name': dyn('http'), 'protocol': dyn('TCP')}`,
	`object.spec.containers[0].ports[0] == {'containerPort': dyn(8080), 'name': dyn('http')}`,
	`object.spec.containers[0].securityContext.capabilities.drop`,
	`'ALL' in object.spec.containers[0].securityContext.capabilities.drop`,
	`object.spec.containers[0].livenessProbe.httpGet.port`,
	`type(object.spec.containers[0].livenessProbe.httpGet.port) == string`,
	`object.spec.containers + object.spec.containers`,
	`size(object.spec.containers + [1])`,
	`object.spec.containers[0].args + ['x']`,
	`object.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')`,
	`object.status.conditions.filter(c, c.status == 'True').map(c, c.type)`,
	`object.status.conditions.sortBy(c, c.type).map(c, c.type)`,
	`object.status.conditions[0].lastProbeTime`,
	`object.status.conditions[0].lastTransitionTime`,
	`timestamp(object.status.conditions[0].lastTransitionTime) < now`,
	`now - timestamp(object.metadata.creationTimestamp) > duration('1h')`,
	`object.status.containerStatuses.all(s, s.ready)`,
	`object.status.containerStatuses[0].state`,
	`object.status.containerStatuses[0].lastState`,
	`has(object.status.containerStatuses[0].lastState.terminated)`,
	`object.status.podIPs.map(p, ip(p.ip).family())`,
	`cidr('10.128.0.0/16').containsIP(object.status.podIP)`,
	`object.metadata.ownerReferences[0].controller`,
	`object.metadata.managedFields[0].fieldsV1`,
	`object.metadata.managedFields.map(m, m.manager)`,
	`'f:metadata' in object.metadata.managedFields[0].fieldsV1`,
	`object.metadata.managedFields[0].fieldsV1['f:metadata']['f:labels']['.'] == {}`,
	`object.spec.containers.map(c, c.image).exists(i, i.matches('^registry\\.example\\.com/'))`,
	`url('http://' + object.status.podIP + ':8080/x').getPort()`,
	`'%s/%s'.format([object.metadata.namespace, object.metadata.name])`,
	`object.metadata.labels['app.kubernetes.io/version'].startsWith('v') && isSemver(object.metadata.labels['app.kubernetes.io/version'].substring(1))`,
	`semver(object.metadata.labels['app.kubernetes.io/version'].substring(1)).isGreaterThan(semver('3.0.0'))`,
	`object.spec.volumes.exists(v, has(v.projected))`,
	`object.spec.volumes.map(v, v.name).sort()`,
	`dyn(object.spec.tolerations).map(t, t.key)`,
	`object.spec.tolerations.exists(t, t.?tolerationSeconds.orValue(0) > 100)`,
	`object.?spec.?nodeName.orValue('') != ''`,
	`object.spec[?'nope'].hasValue()`,
	`sets.contains(object.spec.containers.map(c, c.name), ['api'])`,
	`object.spec.containers.transformMap(i, c, c.name)`,
	`object.metadata.labels.transformMap(k, v, v.size())`,
	`object.spec.containers.all(i, c, i >= 0)`,
	`object.metadata.labels.exists(k, v, v == 'payments-api')`,
	`string(object.spec.containers[0].ports[0].containerPort)`,
	`int(object.spec.terminationGracePeriodSeconds) * 2`,
	`object.spec.containers[0].ports[0].containerPort + 1.0`,
}
