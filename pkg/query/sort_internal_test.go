package query

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// TestSortObjectsIsStable checks SortObjects against a stable sort of the same
// objects: few namespaces and names, so that many share both, in the order
// they came (a pod and a ConfigMap both called web).
func TestSortObjectsIsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		objs := make([]runtime.Object, 1+r.IntN(300))
		for i := range objs {
			m := metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", r.IntN(3)), Name: fmt.Sprintf("n-%d", r.IntN(20)), UID: types.UID(fmt.Sprint("u", i))}
			if r.IntN(2) == 0 {
				objs[i] = &corev1.Pod{ObjectMeta: m}
			} else {
				objs[i] = &corev1.ConfigMap{ObjectMeta: m}
			}
		}
		want := slices.Clone(objs)
		slices.SortStableFunc(want, func(a, b runtime.Object) int {
			ma, mb := metaOf(a), metaOf(b)
			if c := strings.Compare(ma.Namespace, mb.Namespace); c != 0 {
				return c
			}
			return strings.Compare(ma.Name, mb.Name)
		})
		SortObjects(objs)
		for i := range objs {
			if objs[i] != want[i] {
				t.Fatalf("round %d: item %d is %s/%s (%s), want %s/%s (%s)", round, i,
					metaOf(objs[i]).Namespace, metaOf(objs[i]).Name, metaOf(objs[i]).UID,
					metaOf(want[i]).Namespace, metaOf(want[i]).Name, metaOf(want[i]).UID)
			}
		}
	}
}

func metaOf(o runtime.Object) *metav1.ObjectMeta {
	switch o := o.(type) {
	case *corev1.Pod:
		return &o.ObjectMeta
	case *corev1.ConfigMap:
		return &o.ObjectMeta
	}
	panic(fmt.Sprintf("unexpected %T", o))
}

// TestGroupOrderIsStable checks the order finish gives groups against a
// stable sort: keyed groups by key, those with none last, ties in the order
// the groups were made.
func TestGroupOrderIsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 50 {
		b := newGroupBuilder(1, false)
		var made []string
		for i := range 1 + r.IntN(200) {
			id := fmt.Sprint(i)
			key := v1alpha1.GroupKey{None: r.IntN(5) == 0}
			b.get(id, fmt.Sprintf("g-%d", r.IntN(15)), key).Members[0].Objects = []runtime.Object{&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: id}}}
			made = append(made, id)
		}
		want := make([]*v1alpha1.Group, len(made))
		for i, id := range made {
			want[i] = b.groups[id]
		}
		slices.SortStableFunc(want, func(a, b *v1alpha1.Group) int {
			if a.Key.None != b.Key.None {
				if a.Key.None {
					return 1
				}
				return -1
			}
			return strings.Compare(a.Name, b.Name)
		})
		wantIDs := make([]string, len(want))
		for i, g := range want {
			wantIDs[i] = metaOf(g.Members[0].Objects[0]).Name
		}
		got := b.finish(func(g *v1alpha1.Group) string { return g.Name })
		gotIDs := make([]string, len(got))
		for i, g := range got {
			gotIDs[i] = metaOf(g.Members[0].Objects[0]).Name
		}
		if !slices.Equal(gotIDs, wantIDs) {
			t.Fatalf("round %d: groups in order %v, want %v", round, gotIDs, wantIDs)
		}
	}
}

// TestFinishOnSeveralCPUs checks an answer large enough to be finished on
// several CPUs is the answer finished on one: members sorted, summaries
// counted and groups ordered alike (run with -race).
func TestFinishOnSeveralCPUs(t *testing.T) {
	n := 3 * parallelFinish / 2
	build := func() *groupBuilder {
		r := rand.New(rand.NewPCG(5, 6))
		b := newGroupBuilder(2, false)
		m := &member{req: Request{Resource: informer.Resource{GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Namespaced: true}}}
		phases := []corev1.PodPhase{corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded}
		for i := range n {
			g := r.IntN(1500)
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", r.IntN(3)), Name: fmt.Sprintf("pod-%d", r.IntN(1000))},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(fmt.Sprintf("%dm", 10+i%90))},
				}}}},
				Status: corev1.PodStatus{Phase: phases[r.IntN(len(phases))]},
			}
			b.add(b.get(fmt.Sprint(g), fmt.Sprintf("g-%d", g%700), v1alpha1.GroupKey{None: g%50 == 0}), r.IntN(2), m, []any{pod})
		}
		return b
	}
	key := func(g *v1alpha1.Group) string { return g.Name }
	several := build()
	if several.objects < parallelFinish {
		t.Fatalf("%d objects: the answer is finished on one CPU", several.objects)
	}
	got := several.finish(key)
	one := build()
	one.parallelFrom = math.MaxInt
	want := one.finish(key)
	if !reflect.DeepEqual(got, want) {
		t.Fatal("the groups finished on several CPUs differ from the groups finished on one")
	}
}

// TestSortOnEveryCPU checks that sorting on several CPUs gives the order of
// one sort, ties between equal keys included (run with -race).
func TestSortOnEveryCPU(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	type item struct{ key, at int }
	compare := func(a, b item) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at)
	}
	for _, n := range []int{0, 1, 2, 3, 1000, 20011} {
		for _, workers := range []int{1, 2, 3, 8} {
			in := make([]item, n)
			for i := range in {
				in[i] = item{key: r.IntN(n/10 + 1), at: i}
			}
			want := slices.Clone(in)
			slices.SortFunc(want, compare)
			got := slices.Clone(in)
			sortOnEveryCPU(got, compare, workers)
			if !slices.Equal(got, want) {
				t.Fatalf("%d items on %d workers: not the order of one sort", n, workers)
			}
		}
	}
}

// BenchmarkSortObjects sorts 100,000 pods' metadata in 50 namespaces.
func BenchmarkSortObjects(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	objs := make([]runtime.Object, 100000)
	for i := range objs {
		objs[i] = &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Namespace: fmt.Sprintf("bench-%d", r.IntN(50)), Name: fmt.Sprintf("web-%d-5d8f7c9b4-%05x", r.IntN(2000), r.IntN(1<<20))}}
	}
	work := make([]runtime.Object, len(objs))
	for b.Loop() {
		copy(work, objs)
		SortObjects(work)
	}
}
