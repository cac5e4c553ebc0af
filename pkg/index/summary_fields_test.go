package index

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// summaryPod is a realistic pod: sidecar and plain init containers, pod-level
// resources, overhead, probes, env, volumes and container statuses.
func summaryPod(phase corev1.PodPhase, ready corev1.ConditionStatus) *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-5d8f", UID: "rs1", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			NodeName:       "worker-1",
			Overhead:       rl("cpu=10m", "memory=20Mi"),
			InitContainers: []corev1.Container{ctr("init", rl("cpu=2", "memory=1Gi"), nil), {Name: "proxy", Image: "envoy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: rl("cpu=100m", "memory=64Mi")}}},
			Containers: []corev1.Container{
				{Name: "app", Image: "shop/web:1.2", Env: []corev1.EnvVar{{Name: "A", Value: "1"}}, Resources: corev1.ResourceRequirements{Requests: rl("cpu=250m", "memory=256Mi"), Limits: rl("cpu=1", "memory=512Mi", "nvidia.com/gpu=1")},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}}},
				ctr("log", rl("cpu=50m"), rl("memory=128Mi")),
			},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
		Status: corev1.PodStatus{
			Phase:             phase,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: ready}},
			HostIP:            "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: ready == corev1.ConditionTrue, RestartCount: 3}},
		},
	}
}

// TestKeepSummaryFieldsKeepsTheSummary: a pod stripped by KeepSummaryFields
// counts and adds up exactly as the whole pod does, keeps its metadata, and
// loses what summaries never read.
func TestKeepSummaryFieldsKeepsTheSummary(t *testing.T) {
	for _, tc := range []struct {
		phase    corev1.PodPhase
		ready    corev1.ConditionStatus
		podLevel bool
	}{{corev1.PodRunning, corev1.ConditionTrue, false}, {corev1.PodRunning, corev1.ConditionFalse, false}, {corev1.PodPending, corev1.ConditionFalse, false}, {corev1.PodSucceeded, corev1.ConditionTrue, false}, {corev1.PodFailed, corev1.ConditionFalse, false}, {corev1.PodRunning, corev1.ConditionTrue, true}} {
		whole := summaryPod(tc.phase, tc.ready)
		if tc.podLevel {
			// Pod-level resources replace the containers' cpu and memory.
			whole.Spec.Resources = &corev1.ResourceRequirements{Requests: rl("cpu=4", "memory=8Gi"), Limits: rl("cpu=8")}
		}
		stripped := whole.DeepCopy()
		if _, err := KeepSummaryFields(stripped); err != nil {
			t.Fatal(err)
		}
		var cw, cs PodCounts
		cw.Add(whole)
		cs.Add(stripped)
		if cw != cs {
			t.Errorf("%s/%s: counts %+v stripped, %+v whole", tc.phase, tc.ready, cs, cw)
		}
		var tw, ts ResourceTotals
		tw.Add(whole)
		ts.Add(stripped)
		if !apiequality.Semantic.DeepEqual(tw, ts) {
			t.Errorf("%s/%s: totals %+v stripped, %+v whole", tc.phase, tc.ready, ts, tw)
		}
		if !apiequality.Semantic.DeepEqual(whole.ObjectMeta, stripped.ObjectMeta) {
			t.Errorf("metadata changed: %+v", stripped.ObjectMeta)
		}
		if stripped.Spec.NodeName != "" || stripped.Spec.Volumes != nil || len(stripped.Spec.Containers) != 1 || stripped.Spec.InitContainers != nil ||
			stripped.Spec.Containers[0].Image != "" || stripped.Status.ContainerStatuses != nil || stripped.Status.HostIP != "" {
			t.Errorf("fields no summary reads are kept: %+v", stripped)
		}
		// Stripping again changes nothing: the informer strips each page,
		// then the store's transform sees the same pods.
		again := stripped.DeepCopy()
		if _, err := KeepSummaryFields(again); err != nil {
			t.Fatal(err)
		}
		if !apiequality.Semantic.DeepEqual(again, stripped) {
			t.Errorf("a second strip changed the pod: %+v", again)
		}
	}
	// A deleted pod whose final state is unknown is stripped too; other
	// objects pass untouched.
	d := cache.DeletedFinalStateUnknown{Key: "shop/web-1", Obj: summaryPod(corev1.PodRunning, corev1.ConditionTrue)}
	if _, err := KeepSummaryFields(d); err != nil {
		t.Fatal(err)
	}
	if d.Obj.(*corev1.Pod).Spec.Volumes != nil {
		t.Error("the pod of a DeletedFinalStateUnknown kept its volumes")
	}
	node := &corev1.Node{Spec: corev1.NodeSpec{PodCIDR: "10.1.0.0/24"}}
	if _, err := KeepSummaryFields(node); err != nil || node.Spec.PodCIDR == "" {
		t.Errorf("a node was changed: %+v, %v", node, err)
	}
}
