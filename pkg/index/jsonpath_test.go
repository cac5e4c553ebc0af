package index

import (
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func TestJSONPathIndexFuncErrors(t *testing.T) {
	for _, tc := range []struct {
		expr    string
		wantErr string
	}{
		{"", "empty JSONPath expression"},
		{"  ", "empty JSONPath expression"},
		{"{.a}{.b}", `invalid JSONPath expression "{.a}{.b}": unexpected path string`},
		{"{.spec.containers[}", `invalid JSONPath expression "{.spec.containers[}": unterminated array`},
		{".spec.x[?(@.a==", `invalid JSONPath expression ".spec.x[?(@.a=="`},
		{".a,.b", `invalid JSONPath expression ".a,.b": unrecognized character in action`},
		{".spec nodeName", `invalid JSONPath expression ".spec nodeName": unexpected "nodeName", expected a single path`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			fn, err := JSONPathIndexFunc(tc.expr)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if fn != nil {
				t.Error("returned a function alongside an error")
			}
		})
	}
}

// TestJSONPathIndexFuncTypedAndUnstructured checks that a typed pod, the same
// pod decoded from JSON as the dynamic client does, and tombstones of both
// get the same keys, and that those are what kubectl's jsonpath shows.
func TestJSONPathIndexFuncTypedAndUnstructured(t *testing.T) {
	pod := richPod()
	u := toUnstructured(t, pod, "v1", "Pod")
	pending := newPod("default", "pending", func(p *corev1.Pod) { p.Spec.Priority = ptr.To[int32](5) })
	uPending := toUnstructured(t, pending, "v1", "Pod")

	for _, tc := range []struct {
		expr        string
		want        []string
		wantPending []string
		any         bool // only compare typed and unstructured
	}{
		{expr: ".spec.nodeName", want: []string{"node-1"}},
		{expr: "spec.nodeName", want: []string{"node-1"}},
		{expr: "{.spec.nodeName}", want: []string{"node-1"}},
		{expr: ".metadata.labels.app", want: []string{"web"}},
		{expr: ".metadata.labels.empty", want: []string{""}},
		{expr: ".metadata.labels.missing"},
		{expr: ".metadata.labels", want: []string{`{"app":"web","empty":""}`}},
		{expr: ".metadata.annotations.note", want: []string{"<b>&"}},
		{expr: ".metadata.creationTimestamp", want: []string{"2024-01-02T03:04:05Z"}},
		{expr: ".metadata.ownerReferences[*].uid", want: []string{"cm-uid", "rs-uid"}},
		{expr: ".metadata.ownerReferences[?(@.controller==true)].name", want: []string{"web"}},
		{expr: ".spec.containers[*].image", want: []string{"nginx:1", "sidecar:2"}, wantPending: []string{"nginx:1"}},
		{expr: ".spec.containers[0].name", want: []string{"app"}, wantPending: []string{"app"}},
		{expr: ".spec.containers[5].name"},
		{expr: ".spec.containers[?(@.name==\"sidecar\")].image", want: []string{"sidecar:2"}},
		{expr: ".spec.containers[0].resources.requests.cpu", want: []string{"100m"}},
		{expr: ".spec.containers[0].resources.requests", want: []string{`{"cpu":"100m","memory":"64Mi"}`}},
		{expr: ".spec.containers[0].ports", want: []string{`[{"containerPort":8080,"name":"http","protocol":"TCP"}]`}},
		{expr: ".spec.containers[0].ports[0].containerPort", want: []string{"8080"}},
		{expr: ".spec.containers[0].readinessProbe.httpGet.port", want: []string{"http"}},
		{expr: ".spec.containers[0].livenessProbe.tcpSocket.port", want: []string{"8080"}},
		{expr: ".spec['nodeName','restartPolicy']", want: []string{"Always", "node-1"}},
		// Zero values: JSON keeps some (ready, restartCount) and omits others
		// (nodeName, volumes, priority when nil); typed evaluation must agree.
		{expr: ".status.containerStatuses[0].ready", want: []string{"false"}},
		{expr: ".status.containerStatuses[0].restartCount", want: []string{"0"}},
		{expr: ".status.phase", want: []string{"Running"}},
		{expr: ".spec.volumes"},
		{expr: ".spec.priority", wantPending: []string{"5"}},
		{expr: ".spec.securityContext", want: []string{"{}"}},
		{expr: ".spec.securityContext.runAsUser"},
		{expr: "..image", want: []string{"nginx:1", "sidecar:2"}, wantPending: []string{"nginx:1"}},
		{expr: ".spec.*", any: true},
		{expr: ".status..name", want: []string{"app"}},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			fn, err := JSONPathIndexFunc(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			for _, obj := range []struct {
				name string
				obj  any
				want []string
			}{
				{"typed", pod, tc.want},
				{"unstructured", u, tc.want},
				{"typed tombstone", tombstone(pod), tc.want},
				{"unstructured tombstone", tombstone(u), tc.want},
				{"typed pending", pending, tc.wantPending},
				{"unstructured pending", uPending, tc.wantPending},
			} {
				before := snapshot(obj.obj)
				got, err := fn(obj.obj)
				if err != nil {
					t.Fatalf("%s: %v", obj.name, err)
				}
				assertUnchanged(t, before, obj.obj)
				if tc.any {
					continue
				}
				if obj.want == nil && got != nil || !slices.Equal(got, obj.want) {
					t.Errorf("%s: keys = %#v, want %#v", obj.name, got, obj.want)
				}
			}
			if tc.any {
				typed, _ := fn(pod)
				unstr, _ := fn(u)
				if !slices.Equal(typed, unstr) || len(typed) == 0 {
					t.Errorf("typed keys %q differ from unstructured keys %q", typed, unstr)
				}
			}
		})
	}
}

func TestJSONPathIndexFuncOtherObjects(t *testing.T) {
	labels, err := JSONPathIndexFunc(".metadata.labels.app")
	if err != nil {
		t.Fatal(err)
	}
	node, err := JSONPathIndexFunc(".spec.nodeName")
	if err != nil {
		t.Fatal(err)
	}
	pm := partial(newPod("default", "p", onNode("n"), withLabels("app", "web")), "v1", "Pod")
	runIndexCases(t, labels, []indexCase{
		{name: "partial metadata", obj: pm, want: []string{"web"}},
		{name: "nil unstructured content", obj: &unstructured.Unstructured{}, want: nil},
		{name: "cluster-scoped", obj: &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"app": "x"}}}, want: []string{"x"}},
	})
	runIndexCases(t, node, append([]indexCase{
		{name: "partial metadata has no spec", obj: pm, want: nil},
		{name: "unstructured custom resource", obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Thing", "spec": map[string]any{"nodeName": "n2"},
		}}, want: []string{"n2"}},
		{name: "unstructured with a list where a map is expected", obj: &unstructured.Unstructured{Object: map[string]any{
			"spec": []any{"nodeName"},
		}}, want: nil},
	}, wrongTypes(JSONPathIndexName(".spec.nodeName"))...))
}

// TestJSONPathIndexFuncConcurrent shares one function between goroutines as
// the stores of several informers would; run with -race to make it bite.
func TestJSONPathIndexFuncConcurrent(t *testing.T) {
	fn, err := JSONPathIndexFunc(".spec.containers[?(@.name==\"app\")].image")
	if err != nil {
		t.Fatal(err)
	}
	pod := richPod()
	u := toUnstructured(t, pod, "v1", "Pod")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func(obj any) {
			defer wg.Done()
			for range 200 {
				got, err := fn(obj)
				if err != nil || !slices.Equal(got, []string{"nginx:1"}) {
					t.Errorf("keys = %q, %v", got, err)
					return
				}
			}
		}([]any{pod, u}[i%2])
	}
	wg.Wait()
}

// TestJSONPathTypedFastPath pins down when typed objects skip the conversion
// to unstructured, the point of evaluating them by reflection.
func TestJSONPathTypedFastPath(t *testing.T) {
	pod := richPod()
	for _, tc := range []struct {
		expr     string
		jsonOnly bool
		trusted  bool
	}{
		{".spec.nodeName", false, true},
		{".metadata.labels.app", false, true},
		{".spec.containers[*].image", false, true},
		{".metadata.creationTimestamp", false, true},
		{".spec.containers[0].ports", false, true},
		{".metadata.labels.empty", false, false},
		{".status.containerStatuses[0].ready", false, false},
		{".spec.volumes", false, false},
		{".spec.containers[5].name", false, false},
		{".metadata.ownerReferences[?(@.controller==true)].name", true, false},
		{".spec.*", true, false},
		{"..image", true, false},
	} {
		x, err := newJSONPathIndex(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		if x.jsonOnly != tc.jsonOnly {
			t.Errorf("%s: jsonOnly = %v, want %v", tc.expr, x.jsonOnly, tc.jsonOnly)
		}
		if x.jsonOnly {
			continue
		}
		if _, trusted := x.eval(pod, true); trusted != tc.trusted {
			t.Errorf("%s: typed result trusted = %v, want %v", tc.expr, trusted, tc.trusted)
		}
	}
}
