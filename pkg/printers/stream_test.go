package printers_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// TestListStreamMatchesPrint checks that a listing printed a batch at a
// time is byte for byte the listing Print prints whole, for every batching,
// with and without warnings, and empty.
func TestListStreamMatchesPrint(t *testing.T) {
	var pods []runtime.Object
	for i := range 7 {
		pods = append(pods, outPod(fmt.Sprintf("web-%d", i), "worker-1"))
	}
	pods = append(pods, outTrickyPod())
	for _, format := range []string{"json", "yaml", "name"} {
		if !printers.Streams(format) {
			t.Errorf("Streams(%q) = false", format)
		}
		for _, warnings := range [][]string{nil, {"cannot list pods in ops: forbidden"}} {
			for _, n := range []int{0, 1, len(pods)} {
				objs := pods[:n]
				var whole bytes.Buffer
				g := group{GVK: outPodGVK, Namespaced: true, Objects: objs}
				if _, err := printGroups(&whole, []group{g}, outPrinter(t, format, ""), printers.Options{Format: format, Warnings: warnings}); err != nil {
					t.Fatal(err)
				}
				for _, batch := range []int{1, 3, 100} {
					var streamed bytes.Buffer
					s := printers.NewListStream(&streamed, format, outPrinter(t, format, ""), outPodGVK)
					for i := 0; i < len(objs); i += batch {
						if err := s.Write(objs[i:min(i+batch, len(objs))]); err != nil {
							t.Fatal(err)
						}
					}
					if err := s.Write(nil); err != nil {
						t.Fatal(err)
					}
					got, err := s.Close(warnings, nil)
					if err != nil {
						t.Fatal(err)
					}
					if got != n {
						t.Errorf("%s, %d objects in batches of %d: Close = %d", format, n, batch, got)
					}
					if streamed.String() != whole.String() {
						t.Errorf("%s, %d objects in batches of %d, warnings %q: streamed differs from Print:\n%s", format, n, batch, warnings, lineDiff(streamed.String(), whole.String()))
					}
				}
			}
		}
	}
	for _, format := range []string{"", "wide", "jsonpath", "go-template", "custom-columns"} {
		if printers.Streams(format) {
			t.Errorf("Streams(%q) = true, want false: it prints the whole listing at once", format)
		}
	}
}

// TestListStreamWritesEachBatch checks that each batch reaches the writer
// before Write returns: the output flows while the list is read.
func TestListStreamWritesEachBatch(t *testing.T) {
	var out bytes.Buffer
	s := printers.NewListStream(&out, "name", outPrinter(t, "name", ""), outPodGVK)
	if err := s.Write([]runtime.Object{outPod("web-0", "worker-1")}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "pod/web-0\n"; got != want {
		t.Errorf("after the first batch the writer has %q, want %q", got, want)
	}
}

// TestListAsOf: an answer from the warm cache says what it is current as of
// after its warnings, streamed or whole, in JSON and YAML alike; a direct
// run's List has no such field.
func TestListAsOf(t *testing.T) {
	asOf := []v1alpha1.AsOf{{Resource: "pods", Namespace: "shop", ResourceVersion: "4711", Time: metav1.NewMicroTime(time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC))}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}}
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	for _, format := range []string{"json", "yaml"} {
		var whole, streamed bytes.Buffer
		members := []v1alpha1.Members{{GVK: gvk, Namespaced: true, Objects: []runtime.Object{pod}}}
		if _, err := printers.Print(&whole, members, nil, nil, printers.Options{Format: format, Warnings: []string{"w"}, AsOf: asOf}); err != nil {
			t.Fatal(err)
		}
		s := printers.NewListStream(&streamed, format, nil, gvk)
		if err := s.Write([]runtime.Object{pod}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Close([]string{"w"}, asOf); err != nil {
			t.Fatal(err)
		}
		if whole.String() != streamed.String() {
			t.Errorf("-o %s: streamed\n%s\nwhole\n%s", format, streamed.String(), whole.String())
		}
		want := "\"asOf\": [\n        {\n            \"resource\": \"pods\",\n            \"namespace\": \"shop\",\n            \"resourceVersion\": \"4711\",\n            \"time\": \"2026-05-01T12:00:00.123456Z\"\n        }\n    ]\n}\n"
		if format == "yaml" {
			want = "warnings:\n- w\nasOf:\n- namespace: shop\n  resource: pods\n  resourceVersion: \"4711\"\n  time: \"2026-05-01T12:00:00.123456Z\"\n"
		}
		if !strings.HasSuffix(whole.String(), want) {
			t.Errorf("-o %s ends\n%s\nwant it to end\n%s", format, whole.String(), want)
		}
	}
}
