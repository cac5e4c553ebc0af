package index

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// podOpt changes a pod fixture.
type podOpt func(*corev1.Pod)

// newPod returns a typed pod as an informer store holds it: no TypeMeta.
func newPod(ns, name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns,
			Name:      name,
			UID:       types.UID("uid-" + ns + "-" + name),
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1"}}},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func onNode(node string) podOpt { return func(p *corev1.Pod) { p.Spec.NodeName = node } }

func withLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		p.Labels = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func ownedBy(refs ...metav1.OwnerReference) podOpt {
	return func(p *corev1.Pod) { p.OwnerReferences = refs }
}

// ref is an ownerReference; controller says whether it is the controller.
func ref(kind, name, uid string, controller bool) metav1.OwnerReference {
	r := metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid)}
	if controller {
		r.Controller = ptr.To(true)
	}
	return r
}

// richPod exercises every value shape JSONPath keys have to render alike for
// typed and unstructured objects: timestamps, quantities, int-or-strings,
// zero values JSON omits or keeps, nested structs and maps.
func richPod() *corev1.Pod {
	return newPod("default", "web-1",
		onNode("node-1"),
		withLabels("app", "web", "empty", ""),
		ownedBy(ref("ReplicaSet", "web", "rs-uid", true), ref("ConfigMap", "cfg", "cm-uid", false)),
		func(p *corev1.Pod) {
			p.CreationTimestamp = metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
			p.Annotations = map[string]string{"note": "<b>&"}
			p.Spec.RestartPolicy = corev1.RestartPolicyAlways
			p.Spec.SecurityContext = &corev1.PodSecurityContext{}
			p.Spec.Containers = []corev1.Container{{
				Name:  "app",
				Image: "nginx:1",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("100m"),
					corev1.ResourceMemory: resource.MustParse("64Mi"),
				}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")},
				}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)},
				}},
			}, {
				Name:  "sidecar",
				Image: "sidecar:2",
			}, {
				Name:  "sidecar-2",
				Image: "sidecar:2",
			}}
			p.Status = corev1.PodStatus{
				Phase: corev1.PodRunning,
				ContainerStatuses: []corev1.ContainerStatus{
					{Name: "app", Image: "nginx:1", Ready: false, RestartCount: 0},
				},
			}
		})
}

// toUnstructured converts a typed object the way the dynamic client would
// produce it: through its JSON, with apiVersion and kind set.
func toUnstructured(t testing.TB, obj runtime.Object, apiVersion, kind string) *unstructured.Unstructured {
	t.Helper()
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(apiVersion, kind))
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	return u
}

// partial is obj as a metadata-only informer holds it.
func partial(obj metav1.Object, apiVersion, kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.APIVersion, m.Kind = apiVersion, kind
	obj.(interface{ GetObjectMeta() metav1.Object }).GetObjectMeta().(*metav1.ObjectMeta).DeepCopyInto(&m.ObjectMeta)
	return m
}

// indexCase is one row of an index function table.
type indexCase struct {
	name    string
	obj     any
	want    []string
	wantErr string
}

// runIndexCases runs fn over cases, checking keys exactly (nil is not an
// empty slice), that errors name the type, and that the object is unchanged.
func runIndexCases(t *testing.T, fn cache.IndexFunc, cases []indexCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(tc.obj)
			got, err := fn(tc.obj)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				if got != nil {
					t.Errorf("keys = %q alongside an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			got = slices.Clone(got)
			slices.Sort(got)
			if tc.want == nil && got != nil || !slices.Equal(got, tc.want) {
				t.Errorf("keys = %#v, want %#v", got, tc.want)
			}
			assertUnchanged(t, before, tc.obj)
		})
	}
}

// snapshot deep-copies obj so that assertUnchanged can prove the read-only
// contract without relying on an informer's mutation detector.
func snapshot(obj any) any {
	switch o := obj.(type) {
	case runtime.Object:
		if reflect.ValueOf(o).IsNil() {
			return o
		}
		return o.DeepCopyObject()
	case cache.DeletedFinalStateUnknown:
		return cache.DeletedFinalStateUnknown{Key: o.Key, Obj: snapshot(o.Obj)}
	}
	return obj
}

// addAll adds objs to s and returns the check, for the end of the test, that
// the store and its index functions left every one as it was.
func addAll(t *testing.T, s cache.Store, objs []any) (unchanged func()) {
	t.Helper()
	snapshots := make([]any, len(objs))
	for i, o := range objs {
		snapshots[i] = snapshot(o)
		if err := s.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		t.Helper()
		for i, o := range objs {
			assertUnchanged(t, snapshots[i], o)
		}
	}
}

func assertUnchanged(t testing.TB, before, after any) {
	t.Helper()
	if !reflect.DeepEqual(before, after) {
		t.Errorf("object was modified:\nbefore %#v\nafter  %#v", before, after)
	}
}
