package printers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

func keptPod(name, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: image}}},
	}
}

func jsonList(t *testing.T, objs ...runtime.Object) string {
	t.Helper()
	gvks := map[runtime.Object]schema.GroupVersionKind{}
	for _, o := range objs {
		gvks[o] = podGVK
	}
	var b bytes.Buffer
	if err := WriteJSONList(&b, objs, gvks); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestKeptEncodings: with encodings kept (the cache process), -o json prints
// what it prints without, answer after answer; an object is encoded once and
// its encoding used again for the same object only: a newer object of the
// same UID (an update) is encoded afresh and replaces it, an object with no
// UID is not kept, and an encoding not used for a while is forgotten.
func TestKeptEncodings(t *testing.T) {
	a, b := keptPod("a", "nginx:1"), keptPod("b", "nginx:1")
	anon := keptPod("anon", "nginx:1")
	anon.UID = ""
	want := jsonList(t, a, b, anon)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	KeepEncodings(ctx, time.Hour)
	c := encodings.Load()
	if got := jsonList(t, a, b, anon); got != want {
		t.Fatalf("with encodings kept:\n%s\nwant\n%s", got, want)
	}
	if n, size := EncodingsKept(); n != 2 || size == 0 {
		t.Fatalf("kept %d encodings of %d bytes, want a's and b's", n, size)
	}
	// The kept bytes are what is printed: mark a's, and the next answer
	// prints the mark, not a fresh encoding.
	key := encodingKey{uid: a.UID, gvk: podGVK}
	kept := c.byUID[key]
	original := kept.compact
	kept.compact = bytes.Replace(original, []byte(`"nginx:1"`), []byte(`"marked"`), 1)
	if got := jsonList(t, a); !bytes.Contains([]byte(got), []byte(`"marked"`)) {
		t.Fatalf("the second answer encoded a again:\n%s", got)
	}
	kept.compact = original

	// An update is a new object: encoded afresh, replacing the old one.
	a2 := keptPod("a", "nginx:2")
	a2.ResourceVersion = "2"
	if got, fresh := jsonList(t, a2, b), jsonListUnkept(t, a2, b); got != fresh {
		t.Fatalf("after an update:\n%s\nwant\n%s", got, fresh)
	}
	if n, _ := EncodingsKept(); n != 2 || c.byUID[key].obj != runtime.Object(a2) {
		t.Fatalf("after an update: %d kept, a's is of %v", n, c.byUID[key].obj)
	}

	// The same object printed as another kind is another encoding.
	other := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Pod"}
	var buf bytes.Buffer
	if err := WriteJSONList(&buf, []runtime.Object{b}, map[runtime.Object]schema.GroupVersionKind{b: other}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"apiVersion": "example.com/v1"`)) {
		t.Fatalf("b as another kind:\n%s", buf.String())
	}

	// Not used since: forgotten, with their objects.
	c.forget(time.Now().Add(time.Minute))
	if n, size := EncodingsKept(); n != 0 || size != 0 {
		t.Fatalf("after forgetting: %d kept, %d bytes", n, size)
	}
	cancel()
	for deadline := time.Now().Add(5 * time.Second); encodings.Load() != nil; {
		if time.Now().After(deadline) {
			t.Fatal("encodings still kept after the context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// jsonListUnkept is jsonList with no encodings kept.
func jsonListUnkept(t *testing.T, objs ...runtime.Object) string {
	t.Helper()
	c := encodings.Swap(nil)
	defer encodings.Store(c)
	return jsonList(t, objs...)
}

// BenchmarkKeptEncodings writes 2,000 realistic pods as -o json with their
// encodings kept from the answer before, and without.
func BenchmarkKeptEncodings(b *testing.B) {
	objs := realisticPods(b, 2000)
	gvks := map[runtime.Object]schema.GroupVersionKind{}
	for _, o := range objs {
		gvks[o] = podGVK
	}
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("kept=%v", keep), func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if keep {
				KeepEncodings(ctx, time.Hour)
				defer encodings.Store(nil)
				if err := WriteJSONList(&bytes.Buffer{}, objs, gvks); err != nil {
					b.Fatal(err)
				}
			}
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if err := WriteJSONList(&out, objs, gvks); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(out.Len()))
		})
	}
}

// realisticPods are n copies of the bench's realistic pod, each with its own
// name and UID.
func realisticPods(b *testing.B, n int) []runtime.Object {
	var pod corev1.Pod
	if err := json.Unmarshal(realisticPod(b), &pod); err != nil {
		b.Fatal(err)
	}
	objs := make([]runtime.Object, n)
	for i := range objs {
		p := pod.DeepCopy()
		p.Name, p.UID = fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-%d", i))
		objs[i] = p
	}
	return objs
}
