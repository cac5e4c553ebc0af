package query

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// sinkPods returns pods named by "namespace/name" keys.
func sinkPods(keys ...string) []runtime.Object {
	objs := make([]runtime.Object, len(keys))
	for i, k := range keys {
		ns, name, _ := strings.Cut(k, "/")
		objs[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	}
	return objs
}

// sinkRecorder is an orderedSink whose batches are recorded as keys, with
// the namespaces probed.
type sinkRecorder struct {
	sink    *orderedSink
	batches [][]string
	probed  []string
}

func newSinkRecorder(has map[string]bool, probeErr error) *sinkRecorder {
	r := &sinkRecorder{}
	r.sink = &orderedSink{
		emit: func(objs []runtime.Object) error {
			var keys []string
			for _, o := range objs {
				a, _ := meta.Accessor(o)
				keys = append(keys, a.GetNamespace()+"/"+a.GetName())
			}
			r.batches = append(r.batches, keys)
			return nil
		},
		probe: func(_ context.Context, ns, rv string) (bool, error) {
			if rv != "42" {
				return false, errors.New("probed at resource version " + rv + ", want the list's 42")
			}
			r.probed = append(r.probed, ns)
			return has[ns], probeErr
		},
	}
	return r
}

func (r *sinkRecorder) page(t *testing.T, first bool, keys ...string) {
	t.Helper()
	if err := r.sink.Page(context.Background(), sinkPods(keys...), first, "42"); err != nil {
		t.Fatalf("Page(%q): %v", keys, err)
	}
}

func (r *sinkRecorder) emitted() []string { return slices.Concat(r.batches...) }

// The server's key order puts "kube-system/..." before "kube/...", List's
// order after it.
func TestOrderedSinkHoldsNamespacesAfterAShorterOne(t *testing.T) {
	r := newSinkRecorder(map[string]bool{"kube": true}, nil)
	r.page(t, true, "default/a", "kube-public/b", "kube-system/c")
	if got, want := r.emitted(), []string{"default/a"}; !slices.Equal(got, want) {
		t.Errorf("after page 1 emitted %q, want %q: kube-* waits for kube, which has objects", got, want)
	}
	r.page(t, false, "kube/d", "kube/e")
	if got, want := r.emitted(), []string{"default/a", "kube/d", "kube/e"}; !slices.Equal(got, want) {
		t.Errorf("after page 2 emitted %q, want %q", got, want)
	}
	r.page(t, false, "kubeflow/f", "shop/g")
	want := []string{"default/a", "kube/d", "kube/e", "kube-public/b", "kube-system/c", "kubeflow/f", "shop/g"}
	if got := r.emitted(); !slices.Equal(got, want) {
		t.Errorf("after page 3 (past kube/) emitted %q, want %q", got, want)
	}
	if err := r.sink.finish(); err != nil {
		t.Fatal(err)
	}
	if got := r.emitted(); !slices.Equal(got, want) {
		t.Errorf("after finish emitted %q, want %q", got, want)
	}
	if !slices.Equal(r.probed, []string{"kube"}) {
		t.Errorf("probed %q, want kube once", r.probed)
	}
}

func TestOrderedSinkStreamsWhenTheShorterNamespaceIsEmpty(t *testing.T) {
	r := newSinkRecorder(nil, nil)
	r.page(t, true, "bench-00/a", "bench-00/b")
	if got, want := r.emitted(), []string{"bench-00/a", "bench-00/b"}; !slices.Equal(got, want) {
		t.Errorf("after page 1 emitted %q, want %q: namespace bench has no objects", got, want)
	}
	r.page(t, false, "bench-01/c", "team-a-b/d")
	if got, want := r.emitted(), []string{"bench-00/a", "bench-00/b", "bench-01/c", "team-a-b/d"}; !slices.Equal(got, want) {
		t.Errorf("after page 2 emitted %q, want %q", got, want)
	}
	if want := []string{"bench", "team", "team-a"}; !slices.Equal(r.probed, want) {
		t.Errorf("probed %q, want %q (each shorter namespace once)", r.probed, want)
	}
}

func TestOrderedSinkHoldsWhatItCannotProbe(t *testing.T) {
	r := newSinkRecorder(nil, errors.New("forbidden"))
	r.page(t, true, "bench-00/a")
	if got := r.emitted(); len(got) != 0 {
		t.Errorf("emitted %q though namespace bench could not be probed", got)
	}
	r.page(t, false, "bench/b")
	r.page(t, false, "default/c")
	if got, want := r.emitted(), []string{"bench/b", "bench-00/a", "default/c"}; !slices.Equal(got, want) {
		t.Errorf("emitted %q, want %q", got, want)
	}
}

func TestOrderedSinkRelistSkipsWhatWasEmitted(t *testing.T) {
	r := newSinkRecorder(nil, nil)
	r.page(t, true, "a/1", "a/2")
	// The list fails and starts again, at a newer snapshot where a/1 is
	// gone and a/0 and a/3 are new.
	r.page(t, true, "a/0", "a/2", "a/3")
	r.page(t, false, "b/1")
	if err := r.sink.finish(); err != nil {
		t.Fatal(err)
	}
	if got, want := r.emitted(), []string{"a/1", "a/2", "a/3", "b/1"}; !slices.Equal(got, want) {
		t.Errorf("emitted %q, want %q: nothing twice, nothing out of order", got, want)
	}
}

func TestOrderedSinkUnorderedListWaitsForTheEnd(t *testing.T) {
	r := newSinkRecorder(nil, nil)
	r.page(t, true, "b/1", "a/2", "a/1")
	if got := r.emitted(); len(got) != 0 {
		t.Errorf("emitted %q from a list out of key order before its end", got)
	}
	if err := r.sink.finish(); err != nil {
		t.Fatal(err)
	}
	if got, want := r.emitted(), []string{"a/1", "a/2", "b/1"}; !slices.Equal(got, want) {
		t.Errorf("emitted %q, want %q", got, want)
	}
}

func TestOrderedSinkRefusesToReorderWhatWasEmitted(t *testing.T) {
	r := newSinkRecorder(nil, nil)
	r.page(t, true, "b/1")
	if err := r.sink.Page(context.Background(), sinkPods("c/1", "a/1"), false, "42"); err == nil {
		t.Error("a page that puts a/1 after the emitted b/1 was taken")
	}
}

func TestOrderedSinkIgnoresPagesAfterClose(t *testing.T) {
	r := newSinkRecorder(nil, nil)
	r.page(t, true, "a/1")
	r.sink.close()
	r.page(t, true, "a/1", "a/2")
	if got, want := r.emitted(), []string{"a/1"}; !slices.Equal(got, want) {
		t.Errorf("emitted %q, want %q", got, want)
	}
}

func TestOrderedSinkClusterScoped(t *testing.T) {
	r := newSinkRecorder(nil, nil)
	if err := r.sink.Page(context.Background(), []runtime.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kube-1"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kube-2"}},
	}, true, "42"); err != nil {
		t.Fatal(err)
	}
	if got, want := r.emitted(), []string{"/kube-1", "/kube-2"}; !slices.Equal(got, want) {
		t.Errorf("emitted %q, want %q at once", got, want)
	}
	if len(r.probed) != 0 {
		t.Errorf("probed %q for cluster-scoped objects", r.probed)
	}
}

func TestOrderedSinkOneNamespaceNeverProbes(t *testing.T) {
	r := newSinkRecorder(nil, errors.New("forbidden"))
	r.sink.oneNamespace = true
	r.page(t, true, "kube-system/a", "kube-system/b")
	if got, want := r.emitted(), []string{"kube-system/a", "kube-system/b"}; !slices.Equal(got, want) {
		t.Errorf("emitted %q, want %q at once: a list of one namespace is in List's order", got, want)
	}
	if len(r.probed) != 0 {
		t.Errorf("probed %q for a list of one namespace", r.probed)
	}
}
