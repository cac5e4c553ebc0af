package index

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// keptPods are the pods of resourcePods (every rule of PodResources: init
// containers, sidecars, overhead, pod-level resources, extended resources,
// none at all), and one without a UID.
func keptPods() []*corev1.Pod {
	var pods []*corev1.Pod
	for _, tc := range resourcePods {
		pods = append(pods, newPod("shop", strings.ReplaceAll(tc.name, " ", "-"), func(p *corev1.Pod) { p.Spec = *tc.spec.DeepCopy() }))
	}
	return append(pods, newPod("shop", "no-uid", func(p *corev1.Pod) {
		p.UID = ""
		p.Spec.Containers = []corev1.Container{ctr("app", rl("cpu=1", "memory=1Gi"), nil)}
	}))
}

// TestPodResourcesCache: the sums from kept requests and limits are those
// PodResources gives, every time; an object's entry is used again for that
// object only, and a new version of the pod is computed afresh and replaces
// it; a pod without a UID is not kept; entries nobody used are forgotten.
func TestPodResourcesCache(t *testing.T) {
	pods := keptPods()
	var want ResourceTotals
	for _, p := range pods {
		want.Add(p)
	}
	if want.Requests == nil || want.Limits == nil || len(want.Requests) < 3 {
		t.Fatalf("the pods sum to %+v: the test tests nothing", want)
	}
	c := &PodResourcesCache{byUID: map[types.UID]*podResources{}}
	for round := range 3 {
		var got ResourceTotals
		for _, p := range pods {
			got.AddKept(c, p)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: kept sums %+v, want %+v", round, got, want)
		}
	}
	if n := c.Len(); n != len(pods)-1 {
		t.Errorf("%d pods kept, want %d: every pod with a UID", n, len(pods)-1)
	}
	// Kept entries are used again, not computed again.
	first := c.byUID[pods[0].UID]
	var again ResourceTotals
	again.AddKept(c, pods[0])
	if c.byUID[pods[0].UID] != first {
		t.Error("the same object's resources were computed again")
	}

	// A new version of the pod (a new object, as an informer's update is)
	// with other requests: its own sums, and its entry replaces the old one.
	newer := pods[0].DeepCopy()
	newer.Spec.Containers[0].Resources.Requests = rl("cpu=3")
	var wantNewer, gotNewer ResourceTotals
	wantNewer.Add(newer)
	gotNewer.AddKept(c, newer)
	if !reflect.DeepEqual(gotNewer, wantNewer) || gotNewer.Requests.Cpu().Cmp(resource.MustParse("3")) != 0 {
		t.Errorf("the pod's new version sums to %+v, want %+v (3 cpus)", gotNewer, wantNewer)
	}
	if e := c.byUID[pods[0].UID]; e == first || e.pod.Value() != newer {
		t.Error("the new version did not replace the old one's entry")
	}
	// The old object, asked for again (an answer that read it before the
	// update), still sums as itself.
	var gotOld ResourceTotals
	gotOld.AddKept(c, pods[0])
	var wantOld ResourceTotals
	wantOld.Add(pods[0])
	if !reflect.DeepEqual(gotOld, wantOld) {
		t.Errorf("the old version sums to %+v, want %+v", gotOld, wantOld)
	}

	// Forgetting: what was used since stays, the rest goes.
	c.forget(time.Now().Add(-time.Hour))
	if n := c.Len(); n != len(pods)-1 {
		t.Errorf("after forgetting what was unused for an hour, %d kept, want %d", n, len(pods)-1)
	}
	c.forget(time.Now().Add(time.Second))
	if n := c.Len(); n != 0 {
		t.Errorf("after forgetting everything, %d kept", n)
	}

	// A nil cache computes.
	var fromNil ResourceTotals
	for _, p := range pods {
		fromNil.AddKept(nil, p)
	}
	if !reflect.DeepEqual(fromNil, want) {
		t.Errorf("without a cache: %+v, want %+v", fromNil, want)
	}
}

// TestPodResourcesCacheForgetsWhenDone: the cache's entries go once its
// context ends.
func TestPodResourcesCacheForgetsWhenDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := NewPodResourcesCache(ctx, time.Hour)
	var sum ResourceTotals
	for _, p := range keptPods() {
		sum.AddKept(c, p)
	}
	if c.Len() == 0 {
		t.Fatal("nothing kept")
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for c.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d entries kept after the context ended", c.Len())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPodResourcesCacheConcurrent: answers adding up the same pods at once,
// old and new versions among them, each get their own sums (run with -race).
func TestPodResourcesCacheConcurrent(t *testing.T) {
	pods := keptPods()
	newer := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		newer[i] = p.DeepCopy()
		newer[i].Spec.Containers[0].Resources.Requests = rl("memory=1Mi")
	}
	var want, wantNewer ResourceTotals
	for i := range pods {
		want.Add(pods[i])
		wantNewer.Add(newer[i])
	}
	c := NewPodResourcesCache(t.Context(), time.Hour)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for range 50 {
				set, exp := pods, want
				if w%2 == 1 {
					set, exp = newer, wantNewer
				}
				var got ResourceTotals
				for _, p := range set {
					got.AddKept(c, p)
				}
				if !reflect.DeepEqual(got, exp) {
					t.Errorf("worker %d: %+v, want %+v", w, got, exp)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestPodResourcesCacheHoldsNoPod: an entry does not keep its pod in memory
// (a store listed again must not be held by what was computed from the one
// before), and the entry of a pod gone is forgotten at the next sweep,
// however recently it was used.
func TestPodResourcesCacheHoldsNoPod(t *testing.T) {
	c := &PodResourcesCache{byUID: map[types.UID]*podResources{}}
	uid := func() types.UID {
		pod := newPod("shop", "gone", func(p *corev1.Pod) {
			p.Spec.Containers = []corev1.Container{ctr("app", rl("cpu=1", "memory=1Gi"), nil)}
		})
		var sum ResourceTotals
		sum.AddKept(c, pod)
		return pod.UID
	}()
	for i := 0; i < 20 && c.byUID[uid].pod.Value() != nil; i++ {
		runtime.GC()
	}
	if c.byUID[uid].pod.Value() != nil {
		t.Fatal("the kept entry keeps its pod in memory")
	}
	c.forget(time.Now().Add(-time.Hour))
	if n := c.Len(); n != 0 {
		t.Errorf("%d entries kept of pods gone", n)
	}
}
