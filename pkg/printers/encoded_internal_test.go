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

// jsonList writes objs, pods, as -o json does, with enc's encodings (nil: none).
func jsonList(t *testing.T, enc *Encodings, objs ...runtime.Object) string {
	t.Helper()
	return jsonListOf(t, enc, podGVK, objs)
}

// jsonListOf writes objs, all of kind gvk, as -o json does with enc.
func jsonListOf(t *testing.T, enc *Encodings, gvk schema.GroupVersionKind, objs []runtime.Object) string {
	t.Helper()
	gvks := map[runtime.Object]schema.GroupVersionKind{}
	for _, o := range objs {
		gvks[o] = gvk
	}
	var b bytes.Buffer
	if err := writeJSONListFields(&b, objs, gvks, nil, true, enc); err != nil {
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
	want := jsonList(t, nil, a, b, anon)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := NewEncodings(ctx, time.Hour)
	if got := jsonList(t, c, a, b, anon); got != want {
		t.Fatalf("with encodings kept:\n%s\nwant\n%s", got, want)
	}
	if n, size := c.Kept(); n != 2 || size == 0 {
		t.Fatalf("kept %d encodings of %d bytes, want a's and b's", n, size)
	}
	// The kept bytes are what is printed: keep a marked encoding of a, and
	// the next answer prints the mark, not a fresh encoding.
	key := encodingKey{uid: a.UID, gvk: podGVK}
	fresh, err := json.Marshal(readOnlyPrintable(a, podGVK))
	if err != nil {
		t.Fatal(err)
	}
	c.put(key, a, appendIndented(nil, bytes.Replace(fresh, []byte(`"nginx:1"`), []byte(`"marked"`), 1), listItemPrefix, "    "), listItemPrefix)
	if got := jsonList(t, c, a); !bytes.Contains([]byte(got), []byte(`"marked"`)) {
		t.Fatalf("the second answer encoded a again:\n%s", got)
	}
	if got := jsonList(t, nil, a); bytes.Contains([]byte(got), []byte(`"marked"`)) {
		t.Fatalf("an answer without encodings used one kept:\n%s", got)
	}

	// An update is a new object: encoded afresh, replacing the old one.
	a2 := keptPod("a", "nginx:2")
	a2.ResourceVersion = "2"
	if got, fresh := jsonList(t, c, a2, b), jsonList(t, nil, a2, b); got != fresh {
		t.Fatalf("after an update:\n%s\nwant\n%s", got, fresh)
	}
	if n, _ := c.Kept(); n != 2 || c.byUID[key].obj != runtime.Object(a2) {
		t.Fatalf("after an update: %d kept, a's is of %v", n, c.byUID[key].obj)
	}

	// The same object printed as another kind is another encoding.
	other := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Pod"}
	var buf bytes.Buffer
	if err := writeJSONListFields(&buf, []runtime.Object{b}, map[runtime.Object]schema.GroupVersionKind{b: other}, nil, true, c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"apiVersion": "example.com/v1"`)) {
		t.Fatalf("b as another kind:\n%s", buf.String())
	}

	// Not used since: forgotten, with their objects.
	c.forget(time.Now().Add(time.Minute))
	if n, size := c.Kept(); n != 0 || size != 0 {
		t.Fatalf("after forgetting: %d kept, %d bytes", n, size)
	}
	jsonList(t, c, a, b)
	cancel()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if n, _ := c.Kept(); n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("encodings still kept after the context ended")
		}
	}
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
			var enc *Encodings
			if keep {
				enc = NewEncodings(ctx, time.Hour)
				if err := writeJSONListFields(&bytes.Buffer{}, objs, gvks, nil, true, enc); err != nil {
					b.Fatal(err)
				}
			}
			var out bytes.Buffer
			for b.Loop() {
				out.Reset()
				if err := writeJSONListFields(&out, objs, gvks, nil, true, enc); err != nil {
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
