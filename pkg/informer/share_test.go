package informer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// templatePod returns the i-th pod of a ReplicaSet web-5d8f in namespace
// shop, as its controller and kubelet write it: the template's containers,
// volumes and scheduling, a name, token volume, node and status of its own.
func templatePod(i int, env string) *corev1.Pod {
	token := fmt.Sprintf("kube-api-access-%05d", i)
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: fmt.Sprintf("web-5d8f-%05d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
			GenerateName: "web-5d8f-",
			Labels:       map[string]string{"app": "web", "pod-template-hash": "5d8f"},
			Annotations:  map[string]string{"prometheus.io/scrape": "true"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-5d8f", UID: "rs-uid", Controller: new(bool),
			}},
		},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}},
				{Name: token, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				}}}},
			},
			Containers: []corev1.Container{{
				Name: "web", Image: "registry.example.com/shop/web:v1", Args: []string{"--listen=:8080"},
				Env:       []corev1.EnvVar{{Name: "DATABASE_URL", Value: env}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "config", MountPath: "/etc/web"},
					{Name: token, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
				},
				LivenessProbe: probe, ReadinessProbe: probe.DeepCopy(),
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: new(bool)},
			}},
			NodeName:    fmt.Sprintf("worker-%d", i%2),
			Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"},
			}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.0.%d", i), HostIP: "172.20.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(time.Unix(int64(1000+i), 0))}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "web", Image: "registry.example.com/shop/web:v1", Ready: true, ContainerID: fmt.Sprintf("containerd://%d", i),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(int64(1000+i), 0))}},
			}},
		},
	}
}

// decoded returns a copy of obj as a decoding makes it: nothing of it shared
// with anything else.
func decoded[T runtime.Object](t *testing.T, obj T) T {
	t.Helper()
	return obj.DeepCopyObject().(T)
}

// same reports whether two slices, maps or pointers are one.
func same(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Kind() == vb.Kind() && !va.IsZero() && va.UnsafePointer() == vb.UnsafePointer()
}

func asJSON(t *testing.T, obj any) string {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSharerSharesWhatPodsOfATemplateHaveInCommon(t *testing.T) {
	s := informer.NewSharer()
	var pods []*corev1.Pod
	for i := range 3 {
		want := templatePod(i, "postgres://db")
		p := decoded(t, want)
		s.Share(p)
		// Shared, a pod is still itself, to the byte.
		if got := asJSON(t, p); got != asJSON(t, want) {
			t.Fatalf("pod %d changed when shared:\n got %s\nwant %s", i, got, asJSON(t, want))
		}
		pods = append(pods, p)
	}
	a, b := pods[1], pods[2]
	c, d := a.Spec.Containers[0], b.Spec.Containers[0]
	for _, part := range []struct {
		name string
		a, b any
	}{
		{"labels", a.Labels, b.Labels},
		{"annotations", a.Annotations, b.Annotations},
		{"owner references", a.OwnerReferences, b.OwnerReferences},
		{"config volume", a.Spec.Volumes[0].ConfigMap, b.Spec.Volumes[0].ConfigMap},
		{"token volume", a.Spec.Volumes[1].Projected, b.Spec.Volumes[1].Projected},
		{"arguments", c.Args, d.Args},
		{"environment", c.Env, d.Env},
		{"requests", c.Resources.Requests, d.Resources.Requests},
		{"liveness probe", c.LivenessProbe, d.LivenessProbe},
		{"readiness probe, equal to the liveness one", c.LivenessProbe, d.ReadinessProbe},
		{"security context", c.SecurityContext, d.SecurityContext},
		{"tolerations", a.Spec.Tolerations, b.Spec.Tolerations},
		{"affinity", a.Spec.Affinity, b.Spec.Affinity},
	} {
		if !same(part.a, part.b) {
			t.Errorf("two pods of one template have a copy each of their %s", part.name)
		}
	}
	// What is the pod's own stays its own.
	for _, part := range []struct {
		name string
		a, b any
	}{
		{"volume mounts (the pod's token volume)", c.VolumeMounts, d.VolumeMounts},
		{"conditions", a.Status.Conditions, b.Status.Conditions},
		{"container statuses", a.Status.ContainerStatuses, b.Status.ContainerStatuses},
	} {
		if same(part.a, part.b) {
			t.Errorf("two pods share their %s", part.name)
		}
	}
	// A copy is the pod's own, whole: changing it changes no other pod.
	cp := a.DeepCopy()
	cp.Spec.Containers[0].Env[0].Value = "changed"
	cp.Labels["app"] = "changed"
	if b.Spec.Containers[0].Env[0].Value != "postgres://db" || b.Labels["app"] != "web" {
		t.Error("changing a deep copy of a shared pod changed another pod")
	}
}

func TestSharerKeepsPartsThatDiffer(t *testing.T) {
	s := informer.NewSharer()
	a, b := decoded(t, templatePod(1, "postgres://a")), decoded(t, templatePod(2, "postgres://b"))
	b.Labels["tier"] = "frontend"
	wantA, wantB := asJSON(t, a), asJSON(t, b)
	s.Share(a)
	s.Share(b)
	if same(a.Spec.Containers[0].Env, b.Spec.Containers[0].Env) || same(a.Labels, b.Labels) {
		t.Error("pods with different environments or labels share them")
	}
	if asJSON(t, a) != wantA || asJSON(t, b) != wantB {
		t.Error("sharing changed a pod")
	}
	if !same(a.Spec.Containers[0].Args, b.Spec.Containers[0].Args) {
		t.Error("pods that differ in their environment do not share their arguments")
	}
}

func TestSharerSharesMetadataOnlyObjects(t *testing.T) {
	s := informer.NewSharer()
	var objs []*metav1.PartialObjectMetadata
	for i := range 2 {
		p := templatePod(i, "")
		objs = append(objs, decoded(t, &metav1.PartialObjectMetadata{ObjectMeta: p.ObjectMeta}))
		s.Share(objs[i])
	}
	if !same(objs[0].Labels, objs[1].Labels) || !same(objs[0].OwnerReferences, objs[1].OwnerReferences) {
		t.Error("metadata of two pods of one template do not share their labels and owner references")
	}
}

func TestFactorySharesWhatItKeeps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := fakeapi.New(nil, templatePod(1, "postgres://db"), templatePod(2, "postgres://db"))
	sharer := informer.NewSharer()
	f := newFactory(t, s, informer.Config{Sharer: sharer})
	full := mustInformer(t, f, podsRes, informer.Full)
	md := mustInformer(t, f, podsRes, informer.MetadataOnly)
	f.Start(ctx)
	defer f.Shutdown()
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	pod := func(name string) *corev1.Pod {
		obj, ok, err := full.GetStore().GetByKey("shop/" + name)
		if err != nil || !ok {
			t.Fatalf("pod %s not in the store: %v", name, err)
		}
		return obj.(*corev1.Pod)
	}
	a, b := pod("web-5d8f-00001"), pod("web-5d8f-00002")
	if !same(a.Spec.Containers[0].Env, b.Spec.Containers[0].Env) {
		t.Error("the listed pods of one template do not share their environment")
	}
	// A pod a watch brings shares with those listed, and across informers.
	added := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: templatePod(3, "").ObjectMeta}
	if err := s.Metadata.Tracker().Create(podsRes.GVR, added, "shop"); err != nil {
		t.Fatal(err)
	}
	var got *metav1.PartialObjectMetadata
	for got == nil {
		if obj, ok, _ := md.GetStore().GetByKey("shop/web-5d8f-00003"); ok {
			got = obj.(*metav1.PartialObjectMetadata)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the added pod never reached the metadata informer")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if !same(got.Labels, a.Labels) || !same(got.OwnerReferences, a.OwnerReferences) {
		t.Error("a pod added by a watch does not share its labels and owner references with the pods listed before")
	}
}

func TestFactoryWithoutSharerSharesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := fakeapi.New(nil, templatePod(1, "postgres://db"), templatePod(2, "postgres://db"))
	f := newFactory(t, s, informer.Config{})
	full := mustInformer(t, f, podsRes, informer.Full)
	f.Start(ctx)
	defer f.Shutdown()
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	objs := full.GetStore().List()
	if len(objs) != 2 {
		t.Fatalf("%d pods, want 2", len(objs))
	}
	if same(objs[0].(*corev1.Pod).Spec.Containers[0].Env, objs[1].(*corev1.Pod).Spec.Containers[0].Env) {
		t.Error("a direct run's pods share parts: only a Config.Sharer shares them")
	}
}
