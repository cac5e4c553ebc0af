package printers

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSortBy covers the values kubectl's sorter orders, and those on which it
// ends the process (klog.Exitf) or panics, which are errors here.
func TestSortBy(t *testing.T) {
	cr := func(name string, spec map[string]any) runtime.Object {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "spec": spec}}
		u.SetName(name)
		return u
	}
	pod := func(name string, created time.Time, labels map[string]string, cpu string) runtime.Object {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created), Labels: labels}}
		if cpu != "" {
			p.Spec.Containers = []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)},
			}}}
		}
		return p
	}
	day := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		objs    []runtime.Object
		field   string
		want    []string
		wantErr string
	}{
		{
			name:  "integers and floats, as unstructured numbers are",
			objs:  []runtime.Object{cr("a", map[string]any{"n": 2.5}), cr("b", map[string]any{"n": int64(2)}), cr("c", map[string]any{"n": int64(10)})},
			field: "{.spec.n}", want: []string{"b", "a", "c"},
		},
		{
			name:  "strings in maps as quantities",
			objs:  []runtime.Object{cr("a", map[string]any{"q": "10Gi"}), cr("b", map[string]any{"q": "500m"}), cr("c", map[string]any{"q": "2"})},
			field: "{.spec.q}", want: []string{"b", "c", "a"},
		},
		{
			name:  "missing and null first, stable",
			objs:  []runtime.Object{cr("a", map[string]any{"s": "x"}), cr("b", map[string]any{}), cr("c", map[string]any{"s": nil}), cr("d", map[string]any{})},
			field: "{.spec.s}", want: []string{"b", "c", "d", "a"},
		},
		{
			name:  "booleans",
			objs:  []runtime.Object{cr("a", map[string]any{"b": true}), cr("b", map[string]any{"b": false})},
			field: "{.spec.b}", want: []string{"b", "a"},
		},
		{
			name:  "lists element by element",
			objs:  []runtime.Object{cr("a", map[string]any{"l": []any{"x", "b"}}), cr("b", map[string]any{"l": []any{"x", "a"}}), cr("c", map[string]any{"l": []any{"x"}})},
			field: "{.spec.l}", want: []string{"c", "b", "a"},
		},
		{
			name:  "typed timestamps",
			objs:  []runtime.Object{pod("a", day.Add(time.Hour), nil, ""), pod("b", day, nil, "")},
			field: "{.metadata.creationTimestamp}", want: []string{"b", "a"},
		},
		{
			name:  "typed quantities",
			objs:  []runtime.Object{pod("a", day, nil, "1"), pod("b", day, nil, "100m")},
			field: "{.spec.containers[0].resources.requests.cpu}", want: []string{"b", "a"},
		},
		{
			name: "typed structs field by field",
			objs: []runtime.Object{
				&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "b"}}}},
				&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "a"}}}},
			},
			field: "{.spec.containers[0]}", want: []string{"b", "a"},
		},
		{
			name:  "typed maps",
			objs:  []runtime.Object{pod("a", day, map[string]string{"app": "x"}, ""), pod("b", day, map[string]string{"app": "y"}, "")},
			field: "{.metadata.labels}", wantErr: "cannot sort by {.metadata.labels}: cannot order map values",
		},
		{
			name:  "unstructured maps",
			objs:  []runtime.Object{cr("a", map[string]any{"m": map[string]any{}}), cr("b", map[string]any{"m": map[string]any{"x": int64(1)}})},
			field: "{.spec.m}", wantErr: "cannot sort by {.spec.m}: cannot order map values",
		},
		{
			name:  "a string and a number",
			objs:  []runtime.Object{cr("a", map[string]any{"v": "x"}), cr("b", map[string]any{"v": int64(1)})},
			field: "{.spec.v}", wantErr: "cannot sort by {.spec.v}: cannot compare int64 with string",
		},
		{
			name:  "no object has the field",
			objs:  []runtime.Object{cr("a", map[string]any{}), cr("b", map[string]any{})},
			field: "{.spec.nope}", wantErr: `couldn't find any field with path "{.spec.nope}" in the list of objects`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := slices.Clone(tc.objs)
			err := sortObjectsBy(objs, tc.field)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.(metav1.Object).GetName())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("order %q, want %q", got, tc.want)
			}
		})
	}
}
