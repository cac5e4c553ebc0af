package printers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
)

// realisticPod is json.Marshal's bytes of one of the bench's realistic pods
// (about 12 KB: two containers, full status, managedFields of two writers).
func realisticPod(t testing.TB) []byte {
	t.Helper()
	cs := fake.NewClientset()
	if err := fixtures.RealisticPods(context.Background(), cs, "bench", 1); err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods("bench").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("listing the realistic pod: %v (%d pods)", err, len(pods.Items))
	}
	data, err := json.Marshal(&pods.Items[0])
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// indentSeeds are compact JSON documents with what indenting must get right:
// empty objects and arrays, nesting, escaped quotes and backslashes before
// a closing quote, structural bytes inside strings, literals of every kind.
var indentSeeds = []string{
	`{}`, `[]`, `{"a":{}}`, `[[],{}]`, `"x"`, `1`, `true`, `null`,
	`{"a":"b\"c","d":"e\\","f":"g\\\"h","i":"{[,:]}"}`,
	`{"metadata":{"name":"web-0","labels":{"app":"web"},"ownerReferences":[{"kind":"ReplicaSet","controller":true}]},"spec":{"containers":[{"name":"app","resources":{},"ports":[{"containerPort":8080,"protocol":"TCP"}]}]},"status":{"phase":"Running","conditions":[]}}`,
	`[1,-2.5e10,"\u003c\u00e9\ud83d\ude00",false,null,{"":""}]`,
}

// TestAppendIndentedIsJSONIndent: on compact JSON, appendIndented writes what
// json.Indent writes, byte for byte, with and without a prefix.
func TestAppendIndentedIsJSONIndent(t *testing.T) {
	for _, src := range append(indentSeeds, string(realisticPod(t))) {
		for _, prefix := range []string{"", "        "} {
			var want bytes.Buffer
			if err := json.Indent(&want, []byte(src), prefix, "    "); err != nil {
				t.Fatalf("%s: %v", src, err)
			}
			if got := appendIndented([]byte("head"), []byte(src), prefix, "    "); !bytes.Equal(got[4:], want.Bytes()) || string(got[:4]) != "head" {
				t.Errorf("%s with prefix %q:\n got %s\nwant %s", src, prefix, got, want.Bytes())
			}
		}
	}
}

// FuzzAppendIndented: whatever valid JSON is compacted, appendIndented
// indents it as json.Indent does.
func FuzzAppendIndented(f *testing.F) {
	for _, s := range indentSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "  ", "    "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndented(nil, compact.Bytes(), "  ", "    "); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%s:\n got %s\nwant %s", compact.Bytes(), got, want.Bytes())
		}
	})
}

// BenchmarkIndent compares appendIndented with json.Indent on a realistic
// pod as json.Marshal writes it.
func BenchmarkIndent(b *testing.B) {
	src := realisticPod(b)
	b.Run("json.Indent", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		var buf bytes.Buffer
		for b.Loop() {
			buf.Reset()
			_ = json.Indent(&buf, src, "    ", "    ")
		}
	})
	b.Run("appendIndented", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		var dst []byte
		for b.Loop() {
			dst = appendIndented(dst[:0], src, "    ", "    ")
		}
	})
}

// BenchmarkWriteGroupListJSON writes 2,000 realistic pods in 200 groups, as
// --by-owner -o json does: the groups' members are encoded as one stream,
// on every core.
func BenchmarkWriteGroupListJSON(b *testing.B) {
	var pod corev1.Pod
	if err := json.Unmarshal(realisticPod(b), &pod); err != nil {
		b.Fatal(err)
	}
	doc := v1alpha1.NewGroupList("owner")
	for i := range 200 {
		m := v1alpha1.Members{GVK: corev1.SchemeGroupVersion.WithKind("Pod"), Namespaced: true}
		for range 10 {
			m.Objects = append(m.Objects, pod.DeepCopy())
		}
		doc.Groups = append(doc.Groups, v1alpha1.Group{Name: fmt.Sprintf("ReplicaSet/web-%d", i), Members: []v1alpha1.Members{m}})
	}
	var n countingWriter
	for b.Loop() {
		if err := WriteGroupListJSON(&n, doc, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n) / int64(b.N))
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}
