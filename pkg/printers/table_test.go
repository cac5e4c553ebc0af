package printers_test

import (
	"bytes"
	"flag"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// The golden files of this package are rewritten with `go test ./pkg/printers/ -update`. The flag
// is registered only if another test file of the package has not done so already.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata/")
	}
}

// tableNow is the fixed reference time of every table test.
var tableNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// tableAgo returns the time d before tableNow.
func tableAgo(d time.Duration) metav1.Time { return metav1.NewTime(tableNow.Add(-d)) }

// tableAgoPtr is tableAgo for optional fields.
func tableAgoPtr(d time.Duration) *metav1.Time { t := tableAgo(d); return &t }

// tableMeta is the metadata of a namespaced test object created two days before tableNow.
func tableMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name, CreationTimestamp: tableAgo(48 * time.Hour)}
}

var (
	podGK         = schema.GroupKind{Kind: "Pod"}
	serviceGK     = schema.GroupKind{Kind: "Service"}
	nodeGK        = schema.GroupKind{Kind: "Node"}
	namespaceGK   = schema.GroupKind{Kind: "Namespace"}
	configMapGK   = schema.GroupKind{Kind: "ConfigMap"}
	secretGK      = schema.GroupKind{Kind: "Secret"}
	eventGK       = schema.GroupKind{Kind: "Event"}
	eventsV1GK    = schema.GroupKind{Group: "events.k8s.io", Kind: "Event"}
	deploymentGK  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	replicaSetGK  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	statefulSetGK = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	daemonSetGK   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	jobGK         = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobGK     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	widgetGK      = schema.GroupKind{Group: "example.com", Kind: "Widget"}
)

// Expected headers, as the TablePrinter upper-cases them: the normal columns, then the
// Priority 1 columns that only -o wide shows.
var (
	podHeaders      = []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}
	podWideHeaders  = []string{"IP", "NODE", "NOMINATED NODE", "READINESS GATES"}
	workloadWide    = []string{"CONTAINERS", "IMAGES", "SELECTOR"}
	eventHeaders    = []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}
	eventWide       = []string{"SUBOBJECT", "SOURCE", "FIRST SEEN", "COUNT", "NAME"}
	nameAgeHeaders  = []string{"NAME", "AGE"}
	nodeHeaders     = []string{"NAME", "STATUS", "ROLES", "AGE", "VERSION"}
	nodeWideHeaders = []string{"INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"}
)

// runningContainer is a ready, running container status that restarted restarts times, the last
// termination finishing lastExit before tableNow.
func runningContainer(name string, restarts int32, lastExit time.Duration) corev1.ContainerStatus {
	s := corev1.ContainerStatus{
		Name: name, Ready: true, RestartCount: restarts, Started: ptr.To(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: tableAgo(lastExit)}},
	}
	if restarts > 0 {
		s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", FinishedAt: tableAgo(lastExit)}
	}
	return s
}

// testPod is a scheduled pod with the given containers and status.
func testPod(name string, containers int, status corev1.PodStatus) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: tableMeta("default", name)}
	pod.Spec.NodeName = "worker-1"
	for i := range containers {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "c" + string(rune('0'+i)), Image: "busybox"})
	}
	if status.PodIP != "" {
		status.PodIPs = []corev1.PodIP{{IP: status.PodIP}}
	}
	pod.Status = status
	return pod
}

func podCases() []tableCase {
	running := testPod("web-0", 2, corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "10.244.1.5",
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{
			runningContainer("c0", 3, 5*time.Minute),
			runningContainer("c1", 1, 3*time.Hour),
		},
	})

	crashing := testPod("crash", 1, corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "10.244.1.6",
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "c0", RestartCount: 7,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", FinishedAt: tableAgo(90 * time.Second)}},
		}},
	})

	initializing := testPod("init", 1, corev1.PodStatus{
		Phase: corev1.PodPending, PodIP: "10.244.1.7",
		InitContainerStatuses: []corev1.ContainerStatus{
			{Name: "migrate", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
			{Name: "wait-db", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
		},
		ContainerStatuses: []corev1.ContainerStatus{
			{Name: "c0", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
		},
	})
	initializing.Spec.InitContainers = []corev1.Container{{Name: "migrate"}, {Name: "wait-db"}}

	initCrash := testPod("init-crash", 1, corev1.PodStatus{
		Phase: corev1.PodPending,
		InitContainerStatuses: []corev1.ContainerStatus{{
			Name: "migrate", RestartCount: 4,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, FinishedAt: tableAgo(30 * time.Second)}},
		}},
	})
	initCrash.Spec.InitContainers = []corev1.Container{{Name: "migrate"}}

	terminating := testPod("old", 1, corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "10.244.1.8",
		ContainerStatuses: []corev1.ContainerStatus{runningContainer("c0", 0, 0)},
	})
	terminating.DeletionTimestamp = tableAgoPtr(10 * time.Second)

	completed := testPod("batch-x7k2p", 1, corev1.PodStatus{
		Phase: corev1.PodSucceeded, PodIP: "10.244.1.9",
		ContainerStatuses: []corev1.ContainerStatus{{
			Name:  "c0",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}},
		}},
	})

	nodeLost := testPod("lost", 1, corev1.PodStatus{Phase: corev1.PodRunning, Reason: "NodeLost"})
	nodeLost.DeletionTimestamp = tableAgoPtr(time.Minute)

	gated := testPod("gated", 1, corev1.PodStatus{
		Phase:      corev1.PodPending,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}},
	})
	gated.Spec.NodeName = ""

	// A sidecar counts as a container and keeps its restarts in RESTARTS.
	sidecar := testPod("with-sidecar", 1, corev1.PodStatus{
		Phase: corev1.PodRunning, PodIP: "10.244.1.10", NominatedNodeName: "worker-2",
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
			{Type: "example.com/gate-a", Status: corev1.ConditionTrue},
			{Type: "example.com/gate-b", Status: corev1.ConditionFalse},
		},
		InitContainerStatuses: []corev1.ContainerStatus{runningContainer("proxy", 2, 20*time.Minute)},
		ContainerStatuses:     []corev1.ContainerStatus{runningContainer("c0", 0, 0)},
	})
	sidecar.Status.PodIPs = nil // podIP alone, as older kubelets report it
	sidecar.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
	sidecar.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate-a"}, {ConditionType: "example.com/gate-b"}}

	// One container completed while the other still runs: not "Completed".
	partlyDone := testPod("partly-done", 2, corev1.PodStatus{
		Phase: corev1.PodRunning,
		ContainerStatuses: []corev1.ContainerStatus{
			runningContainer("c0", 0, 0),
			{Name: "c1", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
		},
	})

	signalled := testPod("signalled", 1, corev1.PodStatus{
		Phase: corev1.PodFailed,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "c0", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Signal: 9}},
		}},
	})

	asUnstructured := tableToUnstructured(running)
	asUnstructured.SetAPIVersion("v1")
	asUnstructured.SetKind("Pod")

	return []tableCase{
		{
			name: "pods", gk: podGK,
			objs:    []runtime.Object{running, crashing, initializing, initCrash, terminating, completed, nodeLost, gated, sidecar, partlyDone, signalled},
			headers: podHeaders, wide: podWideHeaders,
			rows: [][]any{
				{"web-0", "2/2", "Running", "4 (5m ago)", "2d", "10.244.1.5", "worker-1", "<none>", "<none>"},
				{"crash", "0/1", "CrashLoopBackOff", "7 (90s ago)", "2d", "10.244.1.6", "worker-1", "<none>", "<none>"},
				{"init", "0/1", "Init:1/2", "0", "2d", "10.244.1.7", "worker-1", "<none>", "<none>"},
				{"init-crash", "0/1", "Init:CrashLoopBackOff", "4 (30s ago)", "2d", "<none>", "worker-1", "<none>", "<none>"},
				{"old", "1/1", "Terminating", "0", "2d", "10.244.1.8", "worker-1", "<none>", "<none>"},
				{"batch-x7k2p", "0/1", "Completed", "0", "2d", "10.244.1.9", "worker-1", "<none>", "<none>"},
				{"lost", "0/1", "Unknown", "0", "2d", "<none>", "worker-1", "<none>", "<none>"},
				{"gated", "0/1", "SchedulingGated", "0", "2d", "<none>", "<none>", "<none>", "<none>"},
				{"with-sidecar", "2/2", "Running", "2 (20m ago)", "2d", "10.244.1.10", "worker-1", "worker-2", "1/2"},
				{"partly-done", "1/2", "NotReady", "0", "2d", "<none>", "worker-1", "<none>", "<none>"},
				{"signalled", "0/1", "Signal:9", "0", "2d", "<none>", "worker-1", "<none>", "<none>"},
			},
		},
		{
			name: "pod as unstructured", gk: podGK,
			objs:    []runtime.Object{asUnstructured},
			headers: podHeaders, wide: podWideHeaders,
			rows: [][]any{{"web-0", "2/2", "Running", "4 (5m ago)", "2d", "10.244.1.5", "worker-1", "<none>", "<none>"}},
		},
		{
			name: "pods as metadata only", gk: podGK,
			objs:    []runtime.Object{tableMetadataOnly(running, "v1", "Pod"), tableMetadataOnly(crashing, "v1", "Pod")},
			headers: nameAgeHeaders,
			rows:    [][]any{{"web-0", "2d"}, {"crash", "2d"}},
		},
	}
}

// tableCase is one TableFor call and the table it must give.
type tableCase struct {
	name       string
	gk         schema.GroupKind
	objs       []runtime.Object
	crdColumns []apiextensionsv1.CustomResourceColumnDefinition
	// headers and wide are the upper-cased names of the normal and the Priority 1 columns.
	headers, wide []string
	rows          [][]any
}

func workloadCases() []tableCase {
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Image: "nginx:1.27"}, {Name: "sidecar", Image: "envoy:v1.30"},
	}}}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}

	deployment := &appsv1.Deployment{
		ObjectMeta: tableMeta("default", "web"),
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: selector, Template: template},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 2, UpdatedReplicas: 3, AvailableReplicas: 2},
	}
	badSelector := &appsv1.Deployment{
		ObjectMeta: tableMeta("default", "bad"),
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: "Bogus"},
		}}},
	}
	replicaSet := &appsv1.ReplicaSet{
		ObjectMeta: tableMeta("default", "web-7d4b9c"),
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Selector: selector, Template: template},
		Status:     appsv1.ReplicaSetStatus{Replicas: 3, ReadyReplicas: 2},
	}
	statefulSet := &appsv1.StatefulSet{
		ObjectMeta: tableMeta("default", "db"),
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), Selector: selector, Template: template},
		Status:     appsv1.StatefulSetStatus{ReadyReplicas: 1},
	}
	dsTemplate := *template.DeepCopy()
	dsTemplate.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
	daemonSet := &appsv1.DaemonSet{
		ObjectMeta: tableMeta("kube-system", "kube-proxy"),
		Spec:       appsv1.DaemonSetSpec{Selector: selector, Template: dsTemplate},
		Status: appsv1.DaemonSetStatus{
			DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, NumberReady: 2, UpdatedNumberScheduled: 3, NumberAvailable: 2,
		},
	}
	noNodeSelector := &appsv1.DaemonSet{ObjectMeta: tableMeta("kube-system", "plain"), Spec: appsv1.DaemonSetSpec{Template: template}}

	return []tableCase{
		{
			name: "deployments", gk: deploymentGK,
			objs:    []runtime.Object{deployment, badSelector},
			headers: []string{"NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"}, wide: workloadWide,
			rows: [][]any{
				{"web", "2/3", int64(3), int64(2), "2d", "app,sidecar", "nginx:1.27,envoy:v1.30", "app=web"},
				{"bad", "0/1", int64(0), int64(0), "2d", "", "", "<invalid>"},
			},
		},
		{
			name: "replicasets", gk: replicaSetGK,
			objs:    []runtime.Object{replicaSet},
			headers: []string{"NAME", "DESIRED", "CURRENT", "READY", "AGE"}, wide: workloadWide,
			rows: [][]any{{"web-7d4b9c", int64(3), int64(3), int64(2), "2d", "app,sidecar", "nginx:1.27,envoy:v1.30", "app=web"}},
		},
		{
			name: "statefulsets", gk: statefulSetGK,
			objs:    []runtime.Object{statefulSet},
			headers: []string{"NAME", "READY", "AGE"}, wide: []string{"CONTAINERS", "IMAGES"},
			rows: [][]any{{"db", "1/3", "2d", "app,sidecar", "nginx:1.27,envoy:v1.30"}},
		},
		{
			name: "daemonsets", gk: daemonSetGK,
			objs:    []runtime.Object{daemonSet, noNodeSelector},
			headers: []string{"NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"}, wide: workloadWide,
			rows: [][]any{
				{"kube-proxy", int64(3), int64(3), int64(2), int64(3), int64(2), "kubernetes.io/os=linux", "2d", "app,sidecar", "nginx:1.27,envoy:v1.30", "app=web"},
				{"plain", int64(0), int64(0), int64(0), int64(0), int64(0), "<none>", "2d", "app,sidecar", "nginx:1.27,envoy:v1.30", "<none>"},
			},
		},
	}
}

func batchCases() []tableCase {
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "pi", Image: "perl:5.34"}}}}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "1a2b"}}

	complete := &batchv1.Job{
		ObjectMeta: tableMeta("default", "pi"),
		Spec:       batchv1.JobSpec{Completions: ptr.To[int32](1), Parallelism: ptr.To[int32](1), Selector: selector, Template: template},
		Status: batchv1.JobStatus{
			Succeeded: 1, StartTime: tableAgoPtr(47 * time.Hour), CompletionTime: tableAgoPtr(47*time.Hour - 42*time.Second),
			Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}},
		},
	}
	workQueue := &batchv1.Job{
		ObjectMeta: tableMeta("default", "queue"),
		Spec:       batchv1.JobSpec{Parallelism: ptr.To[int32](4), Selector: selector, Template: template},
		Status:     batchv1.JobStatus{StartTime: tableAgoPtr(30 * time.Minute)},
	}
	failed := &batchv1.Job{
		ObjectMeta: tableMeta("default", "broken"),
		Spec:       batchv1.JobSpec{Completions: ptr.To[int32](3), Template: template},
		Status: batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue},
		}},
	}
	suspended := &batchv1.Job{
		ObjectMeta: tableMeta("default", "paused"),
		Spec:       batchv1.JobSpec{Completions: ptr.To[int32](1), Template: template},
		Status:     batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}},
	}
	deleting := suspended.DeepCopy()
	deleting.Name = "deleting"
	deleting.DeletionTimestamp = tableAgoPtr(time.Second)

	cronJob := &batchv1.CronJob{
		ObjectMeta: tableMeta("default", "nightly"),
		Spec: batchv1.CronJobSpec{
			Schedule: "0 3 * * *", TimeZone: ptr.To("Europe/Paris"), Suspend: ptr.To(false),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}},
		},
		Status: batchv1.CronJobStatus{
			Active:           []corev1.ObjectReference{{Name: "nightly-1"}},
			LastScheduleTime: tableAgoPtr(9 * time.Hour),
		},
	}
	neverRun := &batchv1.CronJob{
		ObjectMeta: tableMeta("default", "hourly"),
		Spec: batchv1.CronJobSpec{
			Schedule: "@hourly", Suspend: ptr.To(true),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Selector: selector, Template: template}},
		},
	}

	return []tableCase{
		{
			name: "jobs", gk: jobGK,
			objs:    []runtime.Object{complete, workQueue, failed, suspended, deleting},
			headers: []string{"NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"}, wide: workloadWide,
			rows: [][]any{
				{"pi", "Complete", "1/1", "42s", "2d", "pi", "perl:5.34", "batch.kubernetes.io/controller-uid=1a2b"},
				{"queue", "Running", "0/1 of 4", "30m", "2d", "pi", "perl:5.34", "batch.kubernetes.io/controller-uid=1a2b"},
				{"broken", "Failed", "1/3", "", "2d", "pi", "perl:5.34", "<none>"},
				{"paused", "Suspended", "0/1", "", "2d", "pi", "perl:5.34", "<none>"},
				{"deleting", "Terminating", "0/1", "", "2d", "pi", "perl:5.34", "<none>"},
			},
		},
		{
			name: "cronjobs", gk: cronJobGK,
			objs:    []runtime.Object{cronJob, neverRun},
			headers: []string{"NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"}, wide: workloadWide,
			rows: [][]any{
				{"nightly", "0 3 * * *", "Europe/Paris", "False", int64(1), "9h", "2d", "pi", "perl:5.34", "<none>"},
				{"hourly", "@hourly", "<none>", "True", int64(0), "<none>", "2d", "pi", "perl:5.34", "batch.kubernetes.io/controller-uid=1a2b"},
			},
		},
	}
}

func coreCases() []tableCase {
	loadBalancer := &corev1.Service{
		ObjectMeta: tableMeta("default", "frontend"),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.12.34", ClusterIPs: []string{"10.96.12.34"},
			Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP},
				{Name: "https", Port: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP},
			},
			Selector: map[string]string{"app": "web", "tier": "frontend"},
		},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{
			{Hostname: "a1b2c3d4e5f6-1234567890.eu-west-1.elb.amazonaws.com"}, {IP: "203.0.113.10"},
		}}},
	}
	pending := &corev1.Service{
		ObjectMeta: tableMeta("default", "pending"),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeLoadBalancer, ClusterIPs: []string{"10.96.0.20"},
			Ports: []corev1.ServicePort{{Port: 53, NodePort: 31053, Protocol: corev1.ProtocolUDP}},
		},
	}
	headless := &corev1.Service{
		ObjectMeta: tableMeta("default", "db"),
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "None", ClusterIPs: []string{"None"}, Selector: map[string]string{"app": "db"}},
	}
	external := &corev1.Service{
		ObjectMeta: tableMeta("default", "mail"),
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "mail.example.com"},
	}
	withExternalIPs := &corev1.Service{
		ObjectMeta: tableMeta("default", "edge"),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIP: "10.96.0.30", ExternalIPs: []string{"198.51.100.1", "198.51.100.2"},
			Ports: []corev1.ServicePort{{Port: 8080, NodePort: 30808, Protocol: corev1.ProtocolTCP}},
		},
	}

	controlPlane := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "cp-1", CreationTimestamp: tableAgo(400 * 24 * time.Hour), Labels: map[string]string{
			"node-role.kubernetes.io/control-plane": "",
			"node-role.kubernetes.io/etcd":          "",
			"kubernetes.io/hostname":                "cp-1",
		}},
		Spec: corev1.NodeSpec{Unschedulable: true},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue},
			},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeHostName, Address: "cp-1"},
				{Type: corev1.NodeInternalIP, Address: "192.168.10.11"},
				{Type: corev1.NodeExternalIP, Address: "203.0.113.11"},
			},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion: "v1.34.4", OSImage: "Ubuntu 24.04.2 LTS", KernelVersion: "6.8.0-60-generic",
				ContainerRuntimeVersion: "containerd://2.0.5",
			},
		},
	}
	worker := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "worker-1", CreationTimestamp: tableAgo(3 * time.Hour), Labels: map[string]string{
			"kubernetes.io/role": "worker",
		}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}},
	}
	newNode := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "new", CreationTimestamp: tableAgo(time.Minute)}}

	namespace := &corev1.Namespace{ObjectMeta: tableMeta("", "team-a"), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	deletingNS := &corev1.Namespace{ObjectMeta: tableMeta("", "old"), Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}

	configMap := &corev1.ConfigMap{
		ObjectMeta: tableMeta("default", "settings"),
		Data:       map[string]string{"a": "1", "b": "2"},
		BinaryData: map[string][]byte{"c": {0}},
	}
	secret := &corev1.Secret{
		ObjectMeta: tableMeta("default", "tls"),
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": nil, "tls.key": nil},
	}
	opaque := &corev1.Secret{ObjectMeta: tableMeta("default", "empty"), Type: corev1.SecretTypeOpaque}

	return []tableCase{
		{
			name: "services", gk: serviceGK,
			objs:    []runtime.Object{loadBalancer, pending, headless, external, withExternalIPs},
			headers: []string{"NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"}, wide: []string{"SELECTOR"},
			rows: [][]any{
				{"frontend", "LoadBalancer", "10.96.12.34", "203.0.113.10,a1b2c3d4e5f6-1234567890.eu-west-1.elb.amazonaws.com", "80:30080/TCP,443:30443/TCP", "2d", "app=web,tier=frontend"},
				{"pending", "LoadBalancer", "10.96.0.20", "<pending>", "53:31053/UDP", "2d", "<none>"},
				{"db", "ClusterIP", "None", "<none>", "<none>", "2d", "app=db"},
				{"mail", "ExternalName", "<none>", "mail.example.com", "<none>", "2d", "<none>"},
				{"edge", "NodePort", "10.96.0.30", "198.51.100.1,198.51.100.2", "8080:30808/TCP", "2d", "<none>"},
			},
		},
		{
			name: "nodes", gk: nodeGK,
			objs:    []runtime.Object{controlPlane, worker, newNode},
			headers: nodeHeaders, wide: nodeWideHeaders,
			rows: [][]any{
				{"cp-1", "Ready,SchedulingDisabled", "control-plane,etcd", "400d", "v1.34.4", "192.168.10.11", "203.0.113.11", "Ubuntu 24.04.2 LTS", "6.8.0-60-generic", "containerd://2.0.5"},
				{"worker-1", "NotReady", "worker", "3h", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
				{"new", "Unknown", "<none>", "60s", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"},
			},
		},
		{
			name: "namespaces", gk: namespaceGK,
			objs:    []runtime.Object{namespace, deletingNS},
			headers: []string{"NAME", "STATUS", "AGE"},
			rows:    [][]any{{"team-a", "Active", "2d"}, {"old", "Terminating", "2d"}},
		},
		{
			name: "configmaps", gk: configMapGK,
			objs:    []runtime.Object{configMap},
			headers: []string{"NAME", "DATA", "AGE"},
			rows:    [][]any{{"settings", int64(3), "2d"}},
		},
		{
			name: "secrets", gk: secretGK,
			objs:    []runtime.Object{secret, opaque},
			headers: []string{"NAME", "TYPE", "DATA", "AGE"},
			rows:    [][]any{{"tls", "kubernetes.io/tls", int64(2), "2d"}, {"empty", "Opaque", int64(0), "2d"}},
		},
	}
}

func eventCases() []tableCase {
	backOff := &corev1.Event{
		ObjectMeta:     tableMeta("default", "crash.17a8b9c0d1e2f3a4"),
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "crash", FieldPath: "spec.containers{c0}"},
		Reason:         "BackOff", Type: corev1.EventTypeWarning,
		Message:        "Back-off restarting failed container c0 in pod crash_default(1234)\n",
		Source:         corev1.EventSource{Component: "kubelet", Host: "worker-1"},
		FirstTimestamp: tableAgo(time.Hour), LastTimestamp: tableAgo(90 * time.Second), Count: 12,
	}
	// New-style event: eventTime and series instead of the deprecated timestamps and count.
	series := &corev1.Event{
		ObjectMeta:     tableMeta("default", "web.1"),
		InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Name: "web"},
		Reason:         "ScalingReplicaSet", Type: corev1.EventTypeNormal, Message: "Scaled up",
		EventTime:           metav1.NewMicroTime(tableNow.Add(-10 * time.Minute)),
		Series:              &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(tableNow.Add(-2 * time.Minute))},
		ReportingController: "deployment-controller",
	}
	singleton := &corev1.Event{
		ObjectMeta:     tableMeta("", "node.1"),
		InvolvedObject: corev1.ObjectReference{Kind: "Node"},
		Reason:         "Starting", Type: corev1.EventTypeNormal,
		EventTime:           metav1.NewMicroTime(tableNow.Add(-5 * time.Second)),
		ReportingController: "kube-proxy", ReportingInstance: "kube-proxy-worker-1",
	}
	v1Event := &eventsv1.Event{
		ObjectMeta: tableMeta("default", "crash.2"),
		Regarding:  corev1.ObjectReference{Kind: "Pod", Name: "crash"},
		Reason:     "Pulled", Type: corev1.EventTypeNormal, Note: "Container image pulled",
		EventTime:           metav1.NewMicroTime(tableNow.Add(-3 * time.Minute)),
		ReportingController: "kubelet", ReportingInstance: "worker-1",
	}
	return []tableCase{
		{
			name: "events", gk: eventGK,
			objs:    []runtime.Object{backOff, series, singleton},
			headers: eventHeaders, wide: eventWide,
			rows: [][]any{
				{"90s", "Warning", "BackOff", "pod/crash", "spec.containers{c0}", "kubelet, worker-1", "Back-off restarting failed container c0 in pod crash_default(1234)", "60m", int64(12), "crash.17a8b9c0d1e2f3a4"},
				{"2m", "Normal", "ScalingReplicaSet", "deployment/web", "", "deployment-controller", "Scaled up", "10m", int64(3), "web.1"},
				{"5s", "Normal", "Starting", "node", "", "kube-proxy, kube-proxy-worker-1", "", "5s", int64(1), "node.1"},
			},
		},
		{
			name: "events.k8s.io events", gk: eventsV1GK,
			objs:    []runtime.Object{v1Event},
			headers: eventHeaders, wide: eventWide,
			rows: [][]any{
				{"3m", "Normal", "Pulled", "pod/crash", "", "kubelet, worker-1", "Container image pulled", "3m", int64(1), "crash.2"},
			},
		},
	}
}

// moreCases cover the common kinds added beyond the first list.
func moreCases() []tableCase {
	serviceAccount := &corev1.ServiceAccount{ObjectMeta: tableMeta("default", "builder"), Secrets: []corev1.ObjectReference{{Name: "builder-token"}}}
	rc := &corev1.ReplicationController{
		ObjectMeta: tableMeta("default", "legacy"),
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To[int32](2), Selector: map[string]string{"app": "legacy"},
			Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "legacy:1"}}}},
		},
		Status: corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1},
	}
	noTemplate := &corev1.ReplicationController{ObjectMeta: tableMeta("default", "empty")}

	bound := &corev1.PersistentVolumeClaim{
		ObjectMeta: tableMeta("default", "data"),
		Spec: corev1.PersistentVolumeClaimSpec{
			VolumeName: "pvc-0a1b", StorageClassName: ptr.To("standard"), VolumeMode: ptr.To(corev1.PersistentVolumeFilesystem),
		},
		Status: corev1.PersistentVolumeClaimStatus{
			Phase:       corev1.ClaimBound,
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany, corev1.ReadWriteOnce, corev1.ReadWriteMany},
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
		},
	}
	pendingClaim := &corev1.PersistentVolumeClaim{
		ObjectMeta: tableMeta("default", "scratch"),
		Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("standard"), VolumeAttributesClassName: ptr.To("gold")},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
	pendingClaim.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "slow"}
	pendingClaim.DeletionTimestamp = tableAgoPtr(time.Second)

	volume := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-0a1b", CreationTimestamp: tableAgo(48 * time.Hour)},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			ClaimRef:                      &corev1.ObjectReference{Namespace: "default", Name: "data"},
			StorageClassName:              "standard",
			VolumeMode:                    ptr.To(corev1.PersistentVolumeBlock),
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	released := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "old", CreationTimestamp: tableAgo(48 * time.Hour)},
		Status:     corev1.PersistentVolumeStatus{Phase: corev1.VolumeFailed, Reason: "RecyclerFailed"},
	}

	defaultClass := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: "standard", CreationTimestamp: tableAgo(48 * time.Hour), Annotations: map[string]string{
			"storageclass.kubernetes.io/is-default-class": "true",
		}},
		Provisioner: "rancher.io/local-path", VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		AllowVolumeExpansion: ptr.To(true),
	}
	plainClass := &storagev1.StorageClass{
		ObjectMeta:    metav1.ObjectMeta{Name: "fast", CreationTimestamp: tableAgo(48 * time.Hour)},
		Provisioner:   "ebs.csi.aws.com",
		ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimRetain),
	}

	// The fifth rule is past the three hosts shown; the host-less rule still counts in "more".
	ingress := &networkingv1.Ingress{
		ObjectMeta: tableMeta("default", "site"),
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To("nginx"),
			Rules:            []networkingv1.IngressRule{{Host: "a.example.com"}, {}, {Host: "b.example.com"}, {Host: "c.example.com"}, {Host: "d.example.com"}},
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
		},
		Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{
			{IP: "203.0.113.20"}, {Hostname: "lb.example.com"},
		}}},
	}
	catchAll := &networkingv1.Ingress{ObjectMeta: tableMeta("default", "catch-all"), Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{}}}}

	ingressClass := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", CreationTimestamp: tableAgo(48 * time.Hour)},
		Spec: networkingv1.IngressClassSpec{
			Controller: "k8s.io/ingress-nginx",
			Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr.To("k8s.example.com"), Kind: "IngressParameters", Name: "external-lb"},
		},
	}

	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: tableMeta("default", "web"),
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(2))},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1},
	}
	percentPDB := &policyv1.PodDisruptionBudget{
		ObjectMeta: tableMeta("default", "db"),
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("25%"))},
	}

	frontend := &networkingv1.NetworkPolicy{
		ObjectMeta: tableMeta("default", "frontend"),
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{
			MatchLabels:      map[string]string{"app": "web"},
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "track", Operator: metav1.LabelSelectorOpDoesNotExist}},
		}},
	}
	denyAll := &networkingv1.NetworkPolicy{ObjectMeta: tableMeta("default", "default-deny")}

	roleBinding := &rbacv1.RoleBinding{
		ObjectMeta: tableMeta("ci", "deployers"),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{
			{Kind: rbacv1.UserKind, Name: "alice"}, {Kind: rbacv1.UserKind, Name: "bob"},
			{Kind: rbacv1.GroupKind, Name: "devs"},
			{Kind: rbacv1.ServiceAccountKind, Namespace: "ci", Name: "builder"},
		},
	}
	clusterRoleBinding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nobody", CreationTimestamp: tableAgo(48 * time.Hour)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
	}
	bindingHeaders := []string{"NAME", "ROLE", "AGE"}
	bindingWide := []string{"USERS", "GROUPS", "SERVICEACCOUNTS"}

	return []tableCase{
		{
			name: "serviceaccounts", gk: schema.GroupKind{Kind: "ServiceAccount"},
			objs:    []runtime.Object{serviceAccount},
			headers: []string{"NAME", "SECRETS", "AGE"},
			rows:    [][]any{{"builder", int64(1), "2d"}},
		},
		{
			name: "replicationcontrollers", gk: schema.GroupKind{Kind: "ReplicationController"},
			objs:    []runtime.Object{rc, noTemplate},
			headers: []string{"NAME", "DESIRED", "CURRENT", "READY", "AGE"}, wide: workloadWide,
			rows: [][]any{
				{"legacy", int64(2), int64(2), int64(1), "2d", "app", "legacy:1", "app=legacy"},
				{"empty", int64(1), int64(0), int64(0), "2d", "", "", "<none>"},
			},
		},
		{
			name: "persistentvolumeclaims", gk: schema.GroupKind{Kind: "PersistentVolumeClaim"},
			objs:    []runtime.Object{bound, pendingClaim},
			headers: []string{"NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"}, wide: []string{"VOLUMEMODE"},
			rows: [][]any{
				{"data", "Bound", "pvc-0a1b", "10Gi", "RWO,RWX", "standard", "<unset>", "2d", "Filesystem"},
				{"scratch", "Terminating", "", "", "", "slow", "gold", "2d", "<unset>"},
			},
		},
		{
			name: "persistentvolumes", gk: schema.GroupKind{Kind: "PersistentVolume"},
			objs:    []runtime.Object{volume, released},
			headers: []string{"NAME", "CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"},
			wide:    []string{"VOLUMEMODE"},
			rows: [][]any{
				{"pvc-0a1b", "10Gi", "RWOP", "Retain", "Bound", "default/data", "standard", "<unset>", "", "2d", "Block"},
				{"old", "0", "", "", "Failed", "", "", "<unset>", "RecyclerFailed", "2d", "<unset>"},
			},
		},
		{
			name: "storageclasses", gk: schema.GroupKind{Group: "storage.k8s.io", Kind: "StorageClass"},
			objs:    []runtime.Object{defaultClass, plainClass},
			headers: []string{"NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"},
			rows: [][]any{
				{"standard (default)", "rancher.io/local-path", "Delete", "WaitForFirstConsumer", true, "2d"},
				{"fast", "ebs.csi.aws.com", "Retain", "Immediate", false, "2d"},
			},
		},
		{
			name: "ingresses", gk: schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"},
			objs:    []runtime.Object{ingress, catchAll},
			headers: []string{"NAME", "CLASS", "HOSTS", "ADDRESS", "PORTS", "AGE"},
			rows: [][]any{
				{"site", "nginx", "a.example.com,b.example.com,c.example.com + 2 more...", "203.0.113.20,lb.example.com", "80, 443", "2d"},
				{"catch-all", "<none>", "*", "", "80", "2d"},
			},
		},
		{
			name: "ingressclasses", gk: schema.GroupKind{Group: "networking.k8s.io", Kind: "IngressClass"},
			objs:    []runtime.Object{ingressClass},
			headers: []string{"NAME", "CONTROLLER", "PARAMETERS", "AGE"},
			rows:    [][]any{{"nginx", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/external-lb", "2d"}},
		},
		{
			name: "poddisruptionbudgets", gk: schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"},
			objs:    []runtime.Object{pdb, percentPDB},
			headers: []string{"NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"},
			rows:    [][]any{{"web", "2", "N/A", int64(1), "2d"}, {"db", "N/A", "25%", int64(0), "2d"}},
		},
		{
			name: "networkpolicies", gk: schema.GroupKind{Group: "networking.k8s.io", Kind: "NetworkPolicy"},
			objs:    []runtime.Object{frontend, denyAll},
			headers: []string{"NAME", "POD-SELECTOR", "AGE"},
			rows:    [][]any{{"frontend", "app=web,!track", "2d"}, {"default-deny", "<none>", "2d"}},
		},
		{
			name: "rolebindings", gk: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"},
			objs:    []runtime.Object{roleBinding},
			headers: bindingHeaders, wide: bindingWide,
			rows: [][]any{{"deployers", "ClusterRole/edit", "2d", "alice, bob", "devs", "ci/builder"}},
		},
		{
			name: "clusterrolebindings", gk: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"},
			objs:    []runtime.Object{clusterRoleBinding},
			headers: bindingHeaders, wide: bindingWide,
			rows: [][]any{{"nobody", "ClusterRole/view", "2d", "", "", ""}},
		},
	}
}

// widget is a custom resource as a dynamic informer holds it.
func widget(name string, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	if status != nil {
		u.Object["status"] = status
	}
	u.SetAPIVersion("example.com/v1")
	u.SetKind("Widget")
	u.SetNamespace("default")
	u.SetName(name)
	u.SetCreationTimestamp(tableAgo(48 * time.Hour))
	return u
}

var widgetColumns = []apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
	{Name: "Replicas", Type: "integer", JSONPath: ".spec.replicas"},
	{Name: "Paused", Type: "boolean", JSONPath: ".spec.paused"},
	{Name: "Ratio", Type: "number", JSONPath: ".status.ratio"},
	{Name: "Last Sync", Type: "date", JSONPath: ".status.lastSyncTime"},
	{Name: "Endpoint", Type: "string", JSONPath: ".status.endpoint", Priority: 1},
	{Name: "Selector", Type: "string", JSONPath: ".spec.selector", Priority: 1},
}

func customResourceCases() []tableCase {
	full := widget("alpha", map[string]any{
		"replicas": int64(3), "paused": false, "selector": map[string]any{"app": "alpha"},
	}, map[string]any{
		"conditions":   []any{map[string]any{"type": "Synced", "status": "False"}, map[string]any{"type": "Ready", "status": "True"}},
		"ratio":        0.75,
		"lastSyncTime": tableAgo(5 * time.Minute).UTC().Format(time.RFC3339),
		"endpoint":     "https://alpha.example.com",
	})
	// Fields missing or of the wrong type leave the cell empty; a bad date says so.
	sparse := widget("beta", map[string]any{"replicas": "three"}, map[string]any{"lastSyncTime": "yesterday"})
	labelled := widget("gamma", nil, nil)
	labelled.SetLabels(map[string]string{"tier": "gold"})

	metadataColumns := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Tier", Type: "string", JSONPath: ".metadata.labels.tier"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}

	return []tableCase{
		{
			name: "custom resources with printer columns", gk: widgetGK, crdColumns: widgetColumns,
			objs:    []runtime.Object{full, sparse},
			headers: []string{"NAME", "READY", "REPLICAS", "PAUSED", "RATIO", "LAST SYNC"}, wide: []string{"ENDPOINT", "SELECTOR"},
			rows: [][]any{
				{"alpha", "True", int64(3), false, 0.75, "5m", "https://alpha.example.com", `{"app":"alpha"}`},
				{"beta", nil, nil, nil, nil, "<invalid>", nil, nil},
			},
		},
		{
			name: "custom resources without printer columns", gk: widgetGK,
			objs:    []runtime.Object{full},
			headers: nameAgeHeaders,
			rows:    [][]any{{"alpha", "2d"}},
		},
		{
			name: "custom resources as metadata only with metadata columns", gk: widgetGK, crdColumns: metadataColumns,
			objs:    []runtime.Object{tableMetadataOnly(labelled, "example.com/v1", "Widget")},
			headers: []string{"NAME", "TIER", "AGE"},
			rows:    [][]any{{"gamma", "gold", "2d"}},
		},
		{
			name: "custom resources as metadata only with spec columns", gk: widgetGK, crdColumns: widgetColumns,
			objs:    []runtime.Object{tableMetadataOnly(full, "example.com/v1", "Widget")},
			headers: []string{"NAME", "READY", "REPLICAS", "PAUSED", "RATIO", "LAST SYNC"}, wide: []string{"ENDPOINT", "SELECTOR"},
			rows: [][]any{{"alpha", nil, nil, nil, nil, nil, nil, nil}},
		},
	}
}

func otherCases() []tableCase {
	clusterRole := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view", CreationTimestamp: metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600)))}}
	limitRange := &corev1.LimitRange{ObjectMeta: tableMeta("default", "limits")}
	podTemplate := &corev1.PodTemplate{ObjectMeta: tableMeta("default", "template")}
	noTimestamp := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "fresh"}}
	return []tableCase{
		{
			name: "kinds served by the default table convertor", gk: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"},
			objs:    []runtime.Object{clusterRole},
			headers: []string{"NAME", "CREATED AT"},
			rows:    [][]any{{"view", "2024-01-02T02:04:05Z"}},
		},
		{
			name: "limit ranges, also served by the default convertor", gk: schema.GroupKind{Kind: "LimitRange"},
			objs:    []runtime.Object{limitRange},
			headers: []string{"NAME", "CREATED AT"},
			rows:    [][]any{{"limits", "2025-05-30T12:00:00Z"}},
		},
		{
			name: "kinds without dedicated columns", gk: schema.GroupKind{Kind: "PodTemplate"},
			objs:    []runtime.Object{podTemplate, noTimestamp},
			headers: nameAgeHeaders,
			rows:    [][]any{{"template", "2d"}, {"fresh", "<unknown>"}},
		},
		{
			name: "no objects", gk: podGK,
			headers: podHeaders, wide: podWideHeaders,
		},
	}
}

// allTableCases gathers every case, for the column test and the no-mutation test.
func allTableCases() []tableCase {
	var all []tableCase
	for _, cases := range [][]tableCase{podCases(), workloadCases(), batchCases(), coreCases(), eventCases(), moreCases(), customResourceCases(), otherCases()} {
		all = append(all, cases...)
	}
	return all
}

func TestTableFor(t *testing.T) {
	for _, tc := range allTableCases() {
		t.Run(tc.name, func(t *testing.T) {
			table, err := printers.TableFor(tc.gk, tc.objs, tc.crdColumns, tableNow)
			if err != nil {
				t.Fatalf("TableFor: %v", err)
			}
			headers, wide := tableHeaders(table)
			if !reflect.DeepEqual(headers, tc.headers) {
				t.Errorf("headers = %q, want %q", headers, tc.headers)
			}
			if !reflect.DeepEqual(wide, tc.wide) {
				t.Errorf("wide headers = %q, want %q", wide, tc.wide)
			}
			if len(table.Rows) != len(tc.objs) {
				t.Fatalf("got %d rows, want %d", len(table.Rows), len(tc.objs))
			}
			for i, row := range table.Rows {
				if len(row.Cells) != len(table.ColumnDefinitions) {
					t.Errorf("row %d has %d cells for %d columns", i, len(row.Cells), len(table.ColumnDefinitions))
				}
				if i < len(tc.rows) && !reflect.DeepEqual(row.Cells, tc.rows[i]) {
					t.Errorf("row %d:\n got %#v\nwant %#v", i, row.Cells, tc.rows[i])
				}
				// The TablePrinter reads namespace and labels from the very object given.
				if row.Object.Object != tc.objs[i] {
					t.Errorf("row %d: Object is %p (%T), want the input object %p", i, row.Object.Object, row.Object.Object, tc.objs[i])
				}
			}
		})
	}
}

func TestTableForColumnDefinitions(t *testing.T) {
	table, err := printers.TableFor(podGK, nil, nil, tableNow)
	if err != nil {
		t.Fatalf("TableFor: %v", err)
	}
	name := table.ColumnDefinitions[0]
	if name.Format != "name" || name.Type != "string" || name.Description == "" {
		t.Errorf("NAME column = %+v, want type string, format name and a description", name)
	}
	for _, col := range table.ColumnDefinitions {
		if col.Type == "" || col.Description == "" {
			t.Errorf("column %q has no type or description: %+v", col.Name, col)
		}
	}

	// CRD columns keep their type, format and priority; the description has a fallback.
	crd := []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "Size", Type: "integer", Format: "int32", Description: "How big.", Priority: 0, JSONPath: ".spec.size"},
		{Name: "Owner", Type: "string", Priority: 1, JSONPath: ".spec.owner"},
	}
	table, err = printers.TableFor(widgetGK, nil, crd, tableNow)
	if err != nil {
		t.Fatalf("TableFor: %v", err)
	}
	want := []metav1.TableColumnDefinition{
		name,
		{Name: "Size", Type: "integer", Format: "int32", Description: "How big."},
		{Name: "Owner", Type: "string", Priority: 1, Description: "Custom resource definition column (in JSONPath format): .spec.owner"},
	}
	if !reflect.DeepEqual(table.ColumnDefinitions, want) {
		t.Errorf("CRD columns =\n%+v\nwant\n%+v", table.ColumnDefinitions, want)
	}
}

func TestTableForRowConditions(t *testing.T) {
	pods := podCases()[0].objs
	table, err := printers.TableFor(podGK, pods, nil, tableNow)
	if err != nil {
		t.Fatalf("TableFor: %v", err)
	}
	for i, row := range table.Rows {
		pod := pods[i].(*corev1.Pod)
		finished := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		if got := len(row.Conditions) == 1 && row.Conditions[0].Type == metav1.RowCompleted; got != finished {
			t.Errorf("pod %s (%s): row conditions %+v, want Completed: %v", pod.Name, pod.Status.Phase, row.Conditions, finished)
		}
	}
}

func TestTableForDoesNotMutateInputs(t *testing.T) {
	for _, tc := range allTableCases() {
		t.Run(tc.name, func(t *testing.T) {
			before := make([]runtime.Object, len(tc.objs))
			for i, obj := range tc.objs {
				before[i] = obj.DeepCopyObject()
			}
			columnsBefore := make([]apiextensionsv1.CustomResourceColumnDefinition, len(tc.crdColumns))
			copy(columnsBefore, tc.crdColumns)

			table, err := printers.TableFor(tc.gk, tc.objs, tc.crdColumns, tableNow)
			if err != nil {
				t.Fatalf("TableFor: %v", err)
			}
			// Decorating the table, as the TablePrinter does, must not reach the inputs either.
			var out bytes.Buffer
			if err := cliprinters.NewTablePrinter(cliprinters.PrintOptions{WithNamespace: true, Wide: true, ShowLabels: true}).PrintObj(table, &out); err != nil {
				t.Fatalf("PrintObj: %v", err)
			}

			for i := range tc.objs {
				if !apiequality.Semantic.DeepEqual(before[i], tc.objs[i]) {
					t.Errorf("object %d changed:\nbefore %#v\n after %#v", i, before[i], tc.objs[i])
				}
			}
			if !apiequality.Semantic.DeepEqual(columnsBefore, tc.crdColumns) {
				t.Errorf("crdColumns changed: before %+v, after %+v", columnsBefore, tc.crdColumns)
			}
		})
	}
}

func TestTableForErrors(t *testing.T) {
	service := &corev1.Service{ObjectMeta: tableMeta("default", "frontend")}
	unstructuredService := tableToUnstructured(service)
	unstructuredService.SetAPIVersion("v1")
	unstructuredService.SetKind("Service")

	tests := []struct {
		name       string
		gk         schema.GroupKind
		objs       []runtime.Object
		crdColumns []apiextensionsv1.CustomResourceColumnDefinition
		want       string
	}{
		{
			name: "typed object of another kind", gk: podGK,
			objs: []runtime.Object{service},
			want: "building Pod table: expected *v1.Pod or *unstructured.Unstructured, got *v1.Service",
		},
		{
			name: "unstructured object of another kind", gk: podGK,
			objs: []runtime.Object{unstructuredService},
			want: `building Pod table: got unstructured object "frontend" of kind Service`,
		},
		{
			name: "nil object", gk: podGK,
			objs: []runtime.Object{nil},
			want: "building Pod table: object 0 is nil (<nil>)",
		},
		{
			name: "typed nil pointer", gk: deploymentGK,
			objs: []runtime.Object{(*appsv1.Deployment)(nil)},
			want: "building Deployment.apps table: object 0 is nil (*v1.Deployment)",
		},
		{
			name: "object without metadata", gk: schema.GroupKind{Kind: "Status"},
			objs: []runtime.Object{&metav1.Status{}},
			want: "building Status table: *v1.Status has no object metadata",
		},
		{
			name: "invalid JSONPath", gk: widgetGK,
			crdColumns: []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Broken", Type: "string", JSONPath: ".status.conditions[?(@.type=="}},
			want:       `building Widget.example.com table: column "Broken" has an invalid JSONPath ".status.conditions[?(@.type=="`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table, err := printers.TableFor(tc.gk, tc.objs, tc.crdColumns, tableNow)
			if err == nil {
				t.Fatalf("TableFor returned no error and %d rows, want %q", len(table.Rows), tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error = %q, want it to start with %q", err, tc.want)
			}
		})
	}
}

func TestNeedsFullObjects(t *testing.T) {
	tests := []struct {
		name       string
		gk         schema.GroupKind
		crdColumns []apiextensionsv1.CustomResourceColumnDefinition
		want       bool
	}{
		{name: "pods", gk: podGK, want: true},
		{name: "events.k8s.io events", gk: eventsV1GK, want: true},
		{name: "cronjobs", gk: cronJobGK, want: true},
		{name: "service accounts", gk: schema.GroupKind{Kind: "ServiceAccount"}, want: true},
		{name: "pod templates", gk: schema.GroupKind{Kind: "PodTemplate"}},
		{name: "cluster roles", gk: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}},
		{name: "custom resource without columns", gk: widgetGK},
		{name: "custom resource reading spec", gk: widgetGK, crdColumns: widgetColumns, want: true},
		{
			name: "custom resource reading metadata", gk: widgetGK, crdColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
				{Name: "Tier", Type: "string", JSONPath: ".metadata.labels.tier"},
				{Name: "Owner", Type: "string", JSONPath: `.metadata.annotations['example\.com/owner']`},
			},
		},
		{
			name: "custom resource searching everything", gk: widgetGK, crdColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Names", Type: "string", JSONPath: "..name"},
			},
			want: true,
		},
		{
			name: "custom resource with an invalid path", gk: widgetGK, crdColumns: []apiextensionsv1.CustomResourceColumnDefinition{
				{Name: "Broken", Type: "string", JSONPath: ".metadata[?("},
			},
			want: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := printers.NeedsFullObjects(tc.gk, tc.crdColumns); got != tc.want {
				t.Errorf("NeedsFullObjects(%s) = %v, want %v", tc.gk, got, tc.want)
			}
		})
	}
}

// TestTableForTablePrinter prints through cli-runtime's TablePrinter, as `kubectl idx` does, to
// check that the NAMESPACE column and labels come from each row's Object.
func TestTableForTablePrinter(t *testing.T) {
	pods := podCases()[0].objs[:3]
	other := pods[1].(*corev1.Pod).DeepCopy()
	other.Namespace = "kube-system"
	other.Labels = map[string]string{"app": "crash"}
	objs := []runtime.Object{pods[0], other, pods[2]}

	tests := []struct {
		name    string
		options cliprinters.PrintOptions
	}{
		{name: "pods_wide", options: cliprinters.PrintOptions{WithNamespace: true, Wide: true}},
		{name: "pods", options: cliprinters.PrintOptions{WithNamespace: true, ShowLabels: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			table, err := printers.TableFor(podGK, objs, nil, tableNow)
			if err != nil {
				t.Fatalf("TableFor: %v", err)
			}
			var out bytes.Buffer
			if err := cliprinters.NewTablePrinter(tc.options).PrintObj(table, &out); err != nil {
				t.Fatalf("PrintObj: %v", err)
			}
			golden.Assert(t, "testdata/table_"+tc.name+".golden", out.String())
		})
	}
}

// tableHeaders returns the upper-cased names of the normal and of the Priority 1 columns.
func tableHeaders(table *metav1.Table) (normal, wide []string) {
	for _, col := range table.ColumnDefinitions {
		if col.Priority == 0 {
			normal = append(normal, strings.ToUpper(col.Name))
		} else {
			wide = append(wide, strings.ToUpper(col.Name))
		}
	}
	return normal, wide
}

// tableToUnstructured converts a typed object as a dynamic informer would hold it.
func tableToUnstructured(obj runtime.Object) *unstructured.Unstructured {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		panic(err)
	}
	return &unstructured.Unstructured{Object: content}
}

// tableMetadataOnly is obj as a metadata informer would hold it.
func tableMetadataOnly(obj runtime.Object, apiVersion, kind string) *metav1.PartialObjectMetadata {
	var m metav1.ObjectMeta
	switch o := obj.(type) {
	case *corev1.Pod:
		m = *o.ObjectMeta.DeepCopy()
	case *unstructured.Unstructured:
		m = metav1.ObjectMeta{
			Namespace: o.GetNamespace(), Name: o.GetName(), Labels: o.GetLabels(), CreationTimestamp: o.GetCreationTimestamp(),
		}
	default:
		panic("tableMetadataOnly: unexpected type")
	}
	return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}, ObjectMeta: m}
}

// tableRepeat returns n objects cycling through objs, a list the size of a busy cluster's.
func tableRepeat(objs []runtime.Object, n int) []runtime.Object {
	out := make([]runtime.Object, n)
	for i := range out {
		out[i] = objs[i%len(objs)]
	}
	return out
}

func BenchmarkTableForPods(b *testing.B) {
	objs := tableRepeat(podCases()[0].objs, 5000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := printers.TableFor(podGK, objs, nil, tableNow); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTableForUnstructuredPods measures the conversion to typed objects that a dynamic
// informer's objects go through.
func BenchmarkTableForUnstructuredPods(b *testing.B) {
	var pods []runtime.Object
	for _, obj := range podCases()[0].objs {
		pods = append(pods, tableToUnstructured(obj))
	}
	objs := tableRepeat(pods, 5000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := printers.TableFor(podGK, objs, nil, tableNow); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTableForCustomResources(b *testing.B) {
	objs := tableRepeat(customResourceCases()[0].objs, 5000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := printers.TableFor(widgetGK, objs, widgetColumns, tableNow); err != nil {
			b.Fatal(err)
		}
	}
}
