package feed_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

func deployment(replicas int32, image string, mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", ResourceVersion: "1", Generation: 1, Labels: map[string]string{"app": "web"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: image}}}},
		},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas},
	}
	for _, m := range mutate {
		m(d)
	}
	return d
}

func TestDiff(t *testing.T) {
	changed := func(path string, old, new any) feed.Change {
		return feed.Change{Path: path, Old: old, New: new, HasOld: true, HasNew: true}
	}
	tests := []struct {
		name     string
		old, new runtime.Object
		want     []feed.Change
	}{
		{
			name: "scalars, in path order",
			old:  deployment(3, "nginx:1.26"),
			new:  deployment(5, "nginx:1.27"),
			want: []feed.Change{
				changed(".spec.replicas", int64(3), int64(5)),
				changed(".spec.template.spec.containers[0].image", "nginx:1.26", "nginx:1.27"),
				changed(".status.replicas", int64(3), int64(5)),
			},
		},
		{
			name: "bookkeeping is left out",
			old:  deployment(3, "nginx"),
			new: deployment(3, "nginx", func(d *appsv1.Deployment) {
				d.ResourceVersion, d.Generation, d.Status.ObservedGeneration = "9", 4, 4
				d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
			}),
			want: nil,
		},
		{
			name: "added and removed keys; keys that are not identifiers are quoted",
			old: deployment(3, "nginx", func(d *appsv1.Deployment) {
				d.Labels["app.kubernetes.io/name"] = "web"
			}),
			new: deployment(3, "nginx", func(d *appsv1.Deployment) {
				d.Labels = map[string]string{"app": "web", "tier": "front", "my-label": "x"}
			}),
			want: []feed.Change{
				{Path: `.metadata.labels["app.kubernetes.io/name"]`, Old: "web", HasOld: true},
				{Path: `.metadata.labels["my-label"]`, New: "x", HasNew: true},
				{Path: ".metadata.labels.tier", New: "front", HasNew: true},
			},
		},
		{
			name: "a list grows: the new element is one change",
			old:  deployment(1, "nginx"),
			new: deployment(1, "nginx", func(d *appsv1.Deployment) {
				d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "envoy"})
			}),
			want: []feed.Change{
				{Path: ".spec.template.spec.containers[1]", New: map[string]any{"name": "sidecar", "image": "envoy", "resources": map[string]any{}}, HasNew: true},
			},
		},
		{
			name: "a subtree appears whole",
			old:  deployment(1, "nginx"),
			new: deployment(1, "nginx", func(d *appsv1.Deployment) {
				d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}
			}),
			want: []feed.Change{
				{Path: ".status.conditions", New: []any{map[string]any{"type": "Available", "status": "True", "lastUpdateTime": nil, "lastTransitionTime": nil}}, HasNew: true},
			},
		},
		{
			name: "unstructured, numbers compared as JSON numbers",
			old:  &unstructured.Unstructured{Object: map[string]any{"kind": "CronTab", "spec": map[string]any{"n": int64(2), "x": 1.5, "s": nil}}},
			new:  &unstructured.Unstructured{Object: map[string]any{"kind": "CronTab", "spec": map[string]any{"n": 2.0, "x": 2.5, "s": "v"}}},
			want: []feed.Change{
				changed(".spec.s", nil, "v"),
				changed(".spec.x", 1.5, 2.5),
			},
		},
		{
			name: "a value changes type",
			old:  &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"a": map[string]any{"b": "c"}}}},
			new:  &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"a": []any{"b"}}}},
			want: []feed.Change{changed(".spec.a", map[string]any{"b": "c"}, []any{"b"})},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oldCopy, newCopy := tc.old.DeepCopyObject(), tc.new.DeepCopyObject()
			got, err := feed.Diff(tc.old, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
			// Cache objects are read-only.
			if !cmp.Equal(oldCopy, tc.old) || !cmp.Equal(newCopy, tc.new) {
				t.Error("Diff modified its input")
			}
		})
	}
}

func TestChangeJSON(t *testing.T) {
	tests := []struct {
		c    feed.Change
		want string
	}{
		{feed.Change{Path: ".spec.replicas", Old: int64(3), New: int64(5), HasOld: true, HasNew: true}, `{"path":".spec.replicas","old":3,"new":5}`},
		{feed.Change{Path: ".metadata.labels.tier", New: "web", HasNew: true}, `{"path":".metadata.labels.tier","new":"web"}`},
		{feed.Change{Path: ".spec.x", Old: "gone", HasOld: true}, `{"path":".spec.x","old":"gone"}`},
		{feed.Change{Path: ".spec.s", Old: nil, New: "v", HasOld: true, HasNew: true}, `{"path":".spec.s","old":null,"new":"v"}`},
	}
	for _, tc := range tests {
		got, err := json.Marshal(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("json.Marshal(%+v) = %s, want %s", tc.c, got, tc.want)
		}
	}
}
