package query_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// whyNow is the clock of the diagnoses.
var whyNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func whyMeta(ns, name, uid string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid), CreationTimestamp: metav1.NewTime(whyNow.Add(-time.Hour))}
}

func ownedBy(m metav1.ObjectMeta, apiVersion, kind, name, uid string) metav1.ObjectMeta {
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}}
	return m
}

// whyWorld is Deployment web (2 replicas) in shop, its ReplicaSet and pods on
// node n1, the default ServiceAccount, Service web and, in namespace other,
// a Deployment of the same name: ready unless crashing, whose pods crash.
func whyWorld(crashing bool) []runtime.Object {
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	available := int32(2)
	if crashing {
		available = 0
	}
	var objs []runtime.Object
	for _, ns := range []string{"shop", "other"} {
		d := &appsv1.Deployment{ObjectMeta: whyMeta(ns, "web", ns+"-d"), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Template: tmpl},
			Status: appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 2, AvailableReplicas: available}}
		rs := &appsv1.ReplicaSet{ObjectMeta: ownedBy(whyMeta(ns, "web-1", ns+"-rs"), "apps/v1", "Deployment", "web", ns+"-d"),
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Template: tmpl}, Status: appsv1.ReplicaSetStatus{Replicas: 2, ReadyReplicas: available}}
		objs = append(objs, d, rs,
			&corev1.ServiceAccount{ObjectMeta: whyMeta(ns, "default", ns+"-sa")},
			&corev1.Service{ObjectMeta: whyMeta(ns, "web", ns+"-svc"), Spec: corev1.ServiceSpec{Selector: labels}})
		for _, name := range []string{"web-1-a", "web-1-b"} {
			p := &corev1.Pod{ObjectMeta: ownedBy(whyMeta(ns, name, ns+"-"+name), "apps/v1", "ReplicaSet", "web-1", ns+"-rs"), Spec: *tmpl.Spec.DeepCopy(),
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
					ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}}
			p.Labels = labels
			p.Spec.NodeName = "n1"
			if crashing {
				p.Status.Conditions[0].Status = corev1.ConditionFalse
				p.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "app", RestartCount: 4,
					State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}}
			}
			objs = append(objs, p)
		}
	}
	objs = append(objs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", UID: "n1"}, Status: corev1.NodeStatus{
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}})
	return objs
}

// causeLines are a diagnosis's causes as Reason Kind/name.
func causeLines(doc *v1alpha1.Diagnosis) []string {
	var out []string
	for _, c := range doc.Causes {
		out = append(out, c.Reason+" "+c.Object.Kind+"/"+c.Object.Name)
	}
	return out
}

func TestSessionWhy(t *testing.T) {
	quota := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1.quota"}, Type: corev1.EventTypeWarning, Reason: "FailedCreate",
		Message:        `Error creating: pods "web-1-x" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2`,
		InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Namespace: "shop", Name: "web-1", UID: "shop-rs"}, LastTimestamp: metav1.NewTime(whyNow)}
	normal := quota.DeepCopy()
	normal.Name, normal.Type, normal.Reason = "web-1.normal", corev1.EventTypeNormal, "SuccessfulCreate"
	short := func(objs []runtime.Object) []runtime.Object {
		// ReplicaSet web-1 of shop has no pods: the quota refused them.
		var out []runtime.Object
		for _, o := range objs {
			switch x := o.(type) {
			case *corev1.Pod:
				if x.Namespace == "shop" {
					continue
				}
			case *appsv1.ReplicaSet:
				if x.Namespace == "shop" {
					x.Status = appsv1.ReplicaSetStatus{}
				}
			case *appsv1.Deployment:
				if x.Namespace == "shop" {
					x.Status = appsv1.DeploymentStatus{}
				}
			}
			out = append(out, o)
		}
		return out
	}
	tests := []struct {
		name      string
		object    string
		objs      []runtime.Object
		forbidden []string
		forbidPod bool
		status    v1alpha1.DiagnosisStatus
		causes    []string
		subjects  []string
		unseen    []string
		warnings  []string
		wantErr   string
	}{
		{
			name: "healthy", object: "deployment/web", objs: whyWorld(false),
			status: v1alpha1.DiagnosisHealthy, subjects: []string{"Deployment/web Healthy 2/2 available, 2 updated"},
		},
		{
			name: "a quota refuses the pods: the ReplicaSet's Warning event, not its Normal one", object: "deployment/web",
			objs:   append(short(whyWorld(false)), quota, normal),
			status: v1alpha1.DiagnosisUnhealthy, causes: []string{"FailedCreate ResourceQuota/compute", "NoReadyPods Service/web"},
			subjects: []string{"Deployment/web Unhealthy 0/2 available, 0 updated"},
		},
		{
			name: "crash loops, and the Service they leave without a ready pod", object: "deployment/web", objs: whyWorld(true),
			status: v1alpha1.DiagnosisUnhealthy, causes: []string{"CrashLoopBackOff Pod/web-1-a", "NoReadyPods Service/web"},
			subjects: []string{"Deployment/web Unhealthy 0/2 available, 2 updated"},
		},
		{
			name: "a Service: itself and the owners of its pods", object: "service/web", objs: whyWorld(true),
			status: v1alpha1.DiagnosisUnhealthy, causes: []string{"CrashLoopBackOff Pod/web-1-a", "NoReadyPods Service/web"},
			subjects: []string{"Service/web Unhealthy 0 of 2 pods ready", "Deployment/web Unhealthy 0/2 available, 2 updated"},
		},
		{
			name: "a pod", object: "pod/web-1-b", objs: whyWorld(true),
			status: v1alpha1.DiagnosisUnhealthy, causes: []string{"CrashLoopBackOff Pod/web-1-b", "NoReadyPods Service/web"},
			subjects: []string{"Pod/web-1-b Unhealthy Running, 0/1 ready"},
		},
		{
			name: "secrets and service accounts may not be listed: warnings, unseen, the same causes", object: "deployment/web", objs: whyWorld(true),
			forbidden: []string{"secrets", "serviceaccounts"},
			status:    v1alpha1.DiagnosisUnhealthy, causes: []string{"CrashLoopBackOff Pod/web-1-a", "NoReadyPods Service/web"},
			subjects: []string{"Deployment/web Unhealthy 0/2 available, 2 updated"},
			unseen:   []string{"secrets", "serviceaccounts"},
			warnings: []string{"cannot list secrets, the answer may be incomplete: " + fixtures.Forbidden(schema.GroupResource{Resource: "secrets"}, "shop").Error(),
				"cannot list serviceaccounts, the answer may be incomplete: " + fixtures.Forbidden(schema.GroupResource{Resource: "serviceaccounts"}, "shop").Error()},
		},
		{
			name: "pods may not be listed: what is wrong is not seen, and said", object: "deployment/web", objs: whyWorld(true), forbidPod: true,
			status: v1alpha1.DiagnosisUnknown, subjects: []string{"Deployment/web Unknown 0/2 available, 2 updated"},
			unseen:   []string{"pods"},
			warnings: []string{"cannot list pods, the answer may be incomplete: " + fixtures.Forbidden(schema.GroupResource{Resource: "pods"}, "shop").Error()},
		},
		{
			name: "a node", object: "node/n1", objs: func() []runtime.Object {
				objs := whyWorld(false)
				n := objs[len(objs)-1].(*corev1.Node)
				n.Spec.Unschedulable = true
				return objs
			}(),
			status: v1alpha1.DiagnosisUnhealthy, causes: []string{"NodeNotSchedulable Node/n1"},
			subjects: []string{"Node/n1 Unhealthy Ready,SchedulingDisabled"},
		},
		{
			name: "a custom resource, through what it owns", object: "rollout/canary", objs: func() []runtime.Object {
				objs := whyWorld(true)
				for _, o := range objs {
					if rs, ok := o.(*appsv1.ReplicaSet); ok && rs.Namespace == "shop" {
						rs.OwnerReferences[0] = metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Rollout", Name: "canary", UID: "ro", Controller: ptr.To(true)}
					}
				}
				return append(objs, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Rollout",
					"metadata": map[string]any{"namespace": "shop", "name": "canary", "uid": "ro"}}})
			}(),
			status: v1alpha1.DiagnosisUnhealthy, causes: []string{"CrashLoopBackOff Pod/web-1-a", "NoReadyPods Service/web"},
			subjects: []string{"Rollout/canary Unhealthy 0 of 1 owned objects healthy"},
		},
		{name: "not found", object: "deployment/nope", objs: whyWorld(false), wantErr: `deployments.apps "nope" not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, mapper := relationSession(t, tc.objs, false, tc.forbidden...)
			if tc.forbidPod {
				s = forbidTypedPods(t, tc.objs)
			}
			doc, err := s.Why(testContext(t), objectRef(t, mapper, tc.object), query.WhyOptions{Now: whyNow})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var subjects []string
			for _, sub := range doc.Subjects {
				subjects = append(subjects, sub.Object.Kind+"/"+sub.Object.Name+" "+string(sub.Status)+" "+sub.Summary)
			}
			if doc.Status != tc.status || !slices.Equal(causeLines(doc), tc.causes) || !slices.Equal(subjects, tc.subjects) {
				t.Errorf("got %s %q %q, want %s %q %q", doc.Status, causeLines(doc), subjects, tc.status, tc.causes, tc.subjects)
			}
			if !slices.Equal(doc.Unseen, tc.unseen) || !slices.Equal(doc.Warnings, tc.warnings) && len(doc.Warnings)+len(tc.warnings) > 0 {
				t.Errorf("unseen %q, warnings %q; want %q, %q", doc.Unseen, doc.Warnings, tc.unseen, tc.warnings)
			}
			if doc.Subject == nil || doc.Subject.Namespace != "shop" && doc.Subject.Kind != "Node" {
				t.Errorf("subject %+v, want the object asked about in shop", doc.Subject)
			}
			if len(doc.Checked) == 0 {
				t.Error("nothing checked")
			}
		})
	}
}

// forbidTypedPods is a session over objs whose typed pod lists are
// forbidden in shop, as RBAC forbids them.
func forbidTypedPods(t *testing.T, objs []runtime.Object) *query.Session {
	t.Helper()
	srv := fakeapi.New(nil, objs...)
	srv.BeforeList = func(req *http.Request) *metav1.Status {
		if strings.HasSuffix(req.URL.Path, "/namespaces/shop/pods") {
			return &fixtures.Forbidden(schema.GroupResource{Resource: "pods"}, "shop").ErrStatus
		}
		return nil
	}
	cfg, _ := relationConfig(t)
	s, _ := newSession(t, srv, cfg)
	return s
}

// TestSessionWhyReadsTheNamespaceOnly: one Deployment's diagnosis lists
// whole objects of the kinds its subtree is made of and what it looks up,
// in its namespace only (nodes aside), never a kind it does not need.
func TestSessionWhyReadsTheNamespaceOnly(t *testing.T) {
	srv := fakeapi.New(nil, whyWorld(true)...)
	cfg, mapper := relationConfig(t)
	s, _ := newSession(t, srv, cfg)
	if _, err := s.Why(testContext(t), objectRef(t, mapper, "deployment/web"), query.WhyOptions{Now: whyNow}); err != nil {
		t.Fatal(err)
	}
	var lists []string
	for _, r := range srv.Requests() {
		if !r.Watch && r.Method == http.MethodGet {
			lists = append(lists, r.Path)
		}
	}
	slices.Sort(lists)
	lists = slices.Compact(lists)
	want := []string{"/api/v1/namespaces/shop/events", "/api/v1/namespaces/shop/persistentvolumeclaims", "/api/v1/namespaces/shop/pods",
		"/api/v1/namespaces/shop/services", "/api/v1/nodes", "/apis/apps/v1/namespaces/shop/deployments", "/apis/apps/v1/namespaces/shop/replicasets",
		"/apis/policy/v1/namespaces/shop/poddisruptionbudgets"}
	if !slices.Equal(lists, want) {
		t.Errorf("typed lists %q, want %q", lists, want)
	}
	for _, r := range srv.Requests() {
		if strings.HasSuffix(r.Path, "/events") && r.Query.Get("fieldSelector") != "type=Warning" {
			t.Errorf("events listed with field selector %q, want type=Warning", r.Query.Get("fieldSelector"))
		}
	}
}

// TestSessionWhyAll: every top-level owner of a namespace, and its
// Services, each cause naming the subject it was found under.
func TestSessionWhyAll(t *testing.T) {
	objs := append(whyWorld(true), &corev1.Pod{ObjectMeta: whyMeta("shop", "debug", "debug"),
		Spec:   corev1.PodSpec{NodeName: "gone", Containers: []corev1.Container{{Name: "debug", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}})
	for _, all := range []bool{false, true} {
		s, _, _ := relationSession(t, objs, all)
		doc, err := s.WhyAll(testContext(t), query.WhyOptions{Now: whyNow})
		if err != nil {
			t.Fatal(err)
		}
		var subjects, causes []string
		for _, sub := range doc.Subjects {
			subjects = append(subjects, sub.Object.Kind+"/"+sub.Object.Namespace+"/"+sub.Object.Name+" "+string(sub.Status))
		}
		for _, c := range doc.Causes {
			causes = append(causes, c.Reason+" "+c.Object.Kind+"/"+c.Object.Namespace+"/"+c.Object.Name+" under "+c.Subject.Kind+"/"+c.Subject.Name)
		}
		wantSubjects := []string{"Deployment/shop/web Unhealthy", "Pod/shop/debug Unhealthy", "Service/shop/web Unhealthy"}
		wantCauses := []string{"CrashLoopBackOff Pod/shop/web-1-a under Deployment/web", "NodeNotFound Node//gone under Pod/debug", "NoReadyPods Service/shop/web under Deployment/web"}
		wantNS := "shop"
		if all {
			wantSubjects = []string{"Deployment/other/web Unhealthy", "Deployment/shop/web Unhealthy", "Pod/shop/debug Unhealthy", "Service/other/web Unhealthy", "Service/shop/web Unhealthy"}
			wantCauses = []string{"CrashLoopBackOff Pod/other/web-1-a under Deployment/web", "CrashLoopBackOff Pod/shop/web-1-a under Deployment/web",
				"NodeNotFound Node//gone under Pod/debug", "NoReadyPods Service/other/web under Deployment/web", "NoReadyPods Service/shop/web under Deployment/web"}
			wantNS = ""
		}
		if doc.Status != v1alpha1.DiagnosisUnhealthy || doc.Subject != nil || doc.Namespace != wantNS || !slices.Equal(subjects, wantSubjects) || !slices.Equal(causes, wantCauses) {
			t.Errorf("-A %v: got %s subject %v namespace %q\n%q\n%q\nwant\n%q\n%q", all, doc.Status, doc.Subject, doc.Namespace, subjects, causes, wantSubjects, wantCauses)
		}
	}
}

// TestSessionWhyNotFoundIsKubectls: the object's absence is kubectl's
// NotFound.
func TestSessionWhyNotFoundIsKubectls(t *testing.T) {
	s, _, mapper := relationSession(t, whyWorld(false), false)
	_, err := s.Why(testContext(t), objectRef(t, mapper, "service/nope"), query.WhyOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("error %v, want NotFound", err)
	}
}

// TestSessionWhyWhere: --where keeps, with an object, the objects of its
// subtree it matches (the object itself always) and, without one, the
// subjects it matches.
func TestSessionWhyWhere(t *testing.T) {
	srv := fakeapi.New(nil, whyWorld(true)...)
	cfg, mapper := relationConfig(t)
	cfg.Where = mustWhere(t, `object.metadata.name != "web-1-a"`)
	s, _ := newSession(t, srv, cfg)
	doc, err := s.Why(testContext(t), objectRef(t, mapper, "deployment/web"), query.WhyOptions{Now: whyNow})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := causeLines(doc), []string{"CrashLoopBackOff Pod/web-1-b", "NoReadyPods Service/web"}; !slices.Equal(got, want) {
		t.Errorf("with an object: causes %q, want %q", got, want)
	}

	cfg.Where = mustWhere(t, `object.kind == "Service"`)
	s, _ = newSession(t, fakeapi.New(nil, whyWorld(true)...), cfg)
	doc, err = s.WhyAll(testContext(t), query.WhyOptions{Now: whyNow})
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, sub := range doc.Subjects {
		subjects = append(subjects, sub.Object.Kind+"/"+sub.Object.Name)
	}
	if want := []string{"Service/web"}; !slices.Equal(subjects, want) {
		t.Errorf("without one: subjects %q, want %q", subjects, want)
	}
}
