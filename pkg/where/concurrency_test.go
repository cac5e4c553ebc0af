package where

import (
	"reflect"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/openapi/openapitest"
)

// concurrentExpressions read every kind of value the adapter makes.
var concurrentExpressions = []string{
	"object.metadata.labels['app'] == 'payments-api'",
	"object.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')",
	"object.spec.containers.all(c, quantity(c.resources.requests.cpu).isLessThan(quantity('2')))",
	"now - timestamp(object.metadata.creationTimestamp) > duration('1m')",
	"object.metadata.managedFields.exists(m, 'f:metadata' in m.fieldsV1)",
	"object.spec.containers.exists(c, has(c.livenessProbe) && c.livenessProbe.httpGet.port == 'metrics')",
	"owner == null || owner.metadata.name != ''",
	"node == null || node.metadata.name != ''",
}

// TestConcurrentMatch runs one Filter from many goroutines over shared
// objects, as informer handlers and errgroup fan-outs do. Run it with -race.
func TestConcurrentMatch(t *testing.T) {
	pods := []any{realisticPod(t), partialPod(t), unstructuredOf(t, realisticPod(t), podGVK)}
	for _, schemas := range []*Schemas{embeddedSchemas(), nil} {
		c := mustParse(t, concurrentExpressions...)
		f := mustCompile(t, c, podGVK, schemas)
		partials := 0
		for g := range 8 {
			for i := range 200 {
				if (g+i)%len(pods) == 1 {
					partials++
				}
			}
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 200 {
					obj := pods[(g+i)%len(pods)]
					want := obj != pods[1] // the metadata-only pod has no status
					if got := f.Match(Input{Object: obj, Node: testNode(corev1.ConditionTrue)}); got != want {
						t.Errorf("Match(%T) = %v, want %v", obj, got, want)
						return
					}
				}
			})
		}
		wg.Wait()
		if w := c.Warnings(); len(w) != 1 || w[0].Objects != partials {
			t.Errorf("warnings = %v, want one for the metadata-only pod, counted %d times", w, partials)
		}
	}
}

func partialPod(t testing.TB) any { return partial(realisticPod(t)) }

// TestReadOnly: evaluation never writes to the objects it reads; informer
// caches hand them out shared. resource.Quantity's String caches its text in
// the receiver, so quantities built without one are the test.
func TestReadOnly(t *testing.T) {
	pod := realisticPod(t)
	for i := range pod.Spec.Containers {
		pod.Spec.Containers[i].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(250, resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(64<<20, resource.BinarySI),
		}
	}
	before := pod.DeepCopy()
	c := mustParse(t, append(concurrentExpressions,
		"object.spec.containers.all(c, c.resources.requests.memory == '64Mi')",
		"object.spec.containers.map(c, c.resources.requests).all(r, r.cpu == '250m')",
		"object == object && object.spec == object.spec",
		"size(object.spec.containers.map(c, c.resources).filter(r, r.requests.size() > 0)) == 2",
	)...)
	for _, schemas := range []*Schemas{embeddedSchemas(), nil} {
		if !mustCompile(t, c, podGVK, schemas).Match(Input{Object: pod}) {
			t.Errorf("Match = false; warnings %v", c.Warnings())
		}
	}
	if !reflect.DeepEqual(before, pod) {
		t.Errorf("evaluation modified the object")
	}
}

// TestConcurrentCompile compiles one Conditions for several kinds and
// clusters at once, as a command with several types and contexts may, with
// Schemas shared per cluster.
func TestConcurrentCompile(t *testing.T) {
	c := mustParse(t, "object.metadata.labels['app'] == 'payments-api'", "owner == null || owner.kind != ''")
	clusters := []*Schemas{NewSchemas(openapitest.NewEmbeddedFileClient()), NewSchemas(openapitest.NewEmbeddedFileClient()), nil}
	var wg sync.WaitGroup
	for _, s := range clusters {
		for _, gvk := range []schema.GroupVersionKind{podGVK, deploymentGVK, nodeGVK, widgetGVK} {
			wg.Go(func() {
				f, err := c.Compile(gvk, s)
				if err != nil {
					t.Error(err)
					return
				}
				if want := s != nil && gvk != widgetGVK; f.Typed() != want {
					t.Errorf("%v: Typed() = %v, want %v", gvk, f.Typed(), want)
				}
			})
		}
	}
	wg.Wait()
}
