package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// kubectl idx why end to end, on the controller-driven control plane: one fixture per class of
// cause the issue names, each produced by the real controllers, scheduler, admission and kwok
// (the kubelet behaviours of testenv.KubeletStages), each checked for its reason and its
// culprit against what `kubectl get -o json` says at the same moment; a healthy workload
// diagnosed healthy; something wrong that no evidence names said to be Unknown; every
// top-level owner of a namespace and of every namespace; the same answers through the warm
// cache and over two contexts; a user who may not read some of the types.

// The nodes of the fixtures, beside kwok's three: each tainted so that no DaemonSet of
// another test runs on it (DaemonSets tolerate cordons, not taints of ours), so only the pods
// that tolerate whyTaint go there.
const (
	// whyTainted is a Ready kwok node the taint fixture's pods select, and cannot tolerate.
	whyTainted = "why-tainted"
	// whyCordoned is a Ready kwok node the drain fixture's pods run on, then cordoned.
	whyCordoned = "why-cordoned"
	// whyLost is a node no kwok manages: it never reports, and the node lifecycle
	// controller marks it Ready Unknown.
	whyLost = "why-lost"
	// whyTaint keeps every pod that does not tolerate it off the fixtures' nodes.
	whyTaint = "kubectl-idx.io/why"
)

// behaviour labels a pod template with a kubelet behaviour of testenv.KubeletStages.
func behaviour(name string) string {
	return fmt.Sprintf("%s: %s", testenv.KubeletBehaviourLabel, name)
}

// whyDeployment is a Deployment named name, its pods labelled app=name and with extra
// labels (YAML pairs), with spec lines (indented under the pod spec) and its container's
// extra lines (indented under the container).
func whyDeployment(name string, replicas int, labels, spec, container string) string {
	if labels != "" {
		labels = ", " + labels
	}
	return fmt.Sprintf(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: %[1]s, labels: {app: %[1]s}}
spec:
  replicas: %[2]d
  selector:
    matchLabels: {app: %[1]s}
  strategy:
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    metadata:
      labels: {app: %[1]s%[3]s}
    spec:%[4]s
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10%[5]s
`, name, replicas, labels, spec, container)
}

// tolerateWhy is the pod spec lines that tolerate whyTaint and pick node.
func tolerateWhy(node string) string {
	return fmt.Sprintf(`
      nodeSelector: {kubernetes.io/hostname: %s}
      tolerations:
      - {key: %s, operator: Exists, effect: NoSchedule}`, node, whyTaint)
}

// The fixtures, by namespace.
var (
	whySchedManifest = whyDeployment("selector", 1, "", "\n      nodeSelector: {disktype: nvme}", "") + "---" +
		whyDeployment("taint", 1, "", "\n      nodeSelector: {kubernetes.io/hostname: "+whyTainted+"}", "") + "---" +
		whyDeployment("big", 1, "", "", "\n        resources:\n          requests: {cpu: \"8\"}") + `---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  storageClassName: why-missing
  accessModes: [ReadWriteOnce]
  resources:
    requests: {storage: 1Gi}
---` + whyDeployment("claim", 1, "", "\n      volumes:\n      - name: data\n        persistentVolumeClaim: {claimName: data}", "\n        volumeMounts:\n        - {name: data, mountPath: /data}")

	whyQuotaManifest = `
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec:
  hard: {pods: "1"}
---` + whyDeployment("quota", 2, "", "", "")

	whyCreateManifest = whyDeployment("robot", 1, "", "\n      serviceAccountName: robot", "")

	whyLimitsManifest = `
apiVersion: v1
kind: LimitRange
metadata: {name: cpu-max}
spec:
  limits:
  - type: Container
    max: {cpu: 500m}
---` + whyDeployment("greedy", 1, "", "", "\n        resources:\n          requests: {cpu: 100m}\n          limits: {cpu: \"1\"}")

	whyPolicy = `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: why-no-latest, labels: {kubectl-idx.io/e2e: controllers}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
  validations:
  - expression: "object.spec.containers.all(c, !c.image.endsWith(':latest'))"
    message: "images must be pinned, not :latest"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: why-no-latest, labels: {kubectl-idx.io/e2e: controllers}}
spec:
  policyName: why-no-latest
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: why-policy}
`
	whyPolicyManifest = strings.Replace(whyDeployment("latest", 1, "", "", ""), "pause:3.10", "pause:latest", 1)

	whyRunManifest = whyDeployment("pull", 1, behaviour("image-pull-backoff"), "", "") + "---" +
		whyDeployment("crash", 1, behaviour("crash-loop"), "", "") + "---" +
		whyDeployment("unready", 1, behaviour("never-ready"), "", "\n        readinessProbe:\n          httpGet: {path: /healthz, port: 8080}") + "---" +
		strings.Replace(whyDeployment("deadline", 1, behaviour("never-ready"), "", "\n        readinessProbe:\n          httpGet: {path: /healthz, port: 8080}"),
			"  replicas: 1\n", "  replicas: 1\n  progressDeadlineSeconds: 10\n", 1) + "---" +
		whyDeployment("rollout", 2, "", "", "")

	whyRefsManifest = whyDeployment("refs", 1, "", "\n      volumes:\n      - name: config\n        configMap: {name: nope-config}",
		"\n        volumeMounts:\n        - {name: config, mountPath: /etc/app}\n        env:\n        - name: TOKEN\n          valueFrom:\n            secretKeyRef: {name: nope-secret, key: token}") + "---" +
		whyDeployment("claimref", 1, "", "\n      volumes:\n      - name: data\n        persistentVolumeClaim: {claimName: nope-claim}", "\n        volumeMounts:\n        - {name: data, mountPath: /data}")

	whyServeManifest = `
apiVersion: v1
kind: Service
metadata: {name: lonely}
spec:
  selector: {app: nobody}
  ports:
  - {port: 80}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: strict}
spec:
  minAvailable: 2
  selector:
    matchLabels: {app: guarded}
---` + whyDeployment("guarded", 2, "", "", "")

	whyNodesManifest = whyDeployment("drain", 1, "", tolerateWhy(whyCordoned), "") + `---
apiVersion: v1
kind: Pod
metadata:
  name: stranded
  labels: {app: stranded}
spec:
  nodeName: ` + whyLost + `
  tolerations:
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
`

	whyJobsManifest = `
apiVersion: batch/v1
kind: CronJob
metadata: {name: flaky}
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        metadata:
          labels: {app: flaky, ` + behaviour("fail") + `}
        spec:
          restartPolicy: Never
          containers:
          - name: run
            image: registry.k8s.io/busybox:1.36
            command: ["false"]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: paused}
spec:
  schedule: "* * * * *"
  suspend: true
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
          - name: run
            image: registry.k8s.io/busybox:1.36
            command: ["true"]
`

	// Nine pods that run ready and one of its own that crash-loops: why -n
	// takes the nine as the server's table says and reads the tenth whole.
	whyTriageManifest = whyDeployment("many", 9, "", "", "") + `---
apiVersion: v1
kind: Pod
metadata: {name: loner, labels: {app: loner, ` + behaviour("crash-loop") + `}}
spec:
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
`
	whyHealthyManifest = whyDeployment("fine", 2, "", "", "") + `---
apiVersion: v1
kind: Service
metadata: {name: fine}
spec:
  selector: {app: fine}
  ports:
  - {port: 80}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: fine}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: fine}
`

	whyUnknownManifest = whyDeployment("held", 1, behaviour("hold"), "", "")

	// The other kinds why walks down: a StatefulSet whose pod crash-loops, a DaemonSet on
	// the tainted node whose pod cannot pull its image.
	whyKindsManifest = `
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: crashset, labels: {app: crashset}}
spec:
  serviceName: crashset
  replicas: 1
  selector:
    matchLabels: {app: crashset}
  template:
    metadata:
      labels: {app: crashset, ` + behaviour("crash-loop") + `}
    spec:
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: pullset, labels: {app: pullset}}
spec:
  selector:
    matchLabels: {app: pullset}
  template:
    metadata:
      labels: {app: pullset, ` + behaviour("image-pull-backoff") + `}
    spec:` + tolerateWhy(whyTainted) + `
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
`
)

// whyAppCRD is a custom resource kind of why's fixtures: a WhyApp owns a Deployment, as an
// operator's object owns what it makes.
var whyAppCRD = suiteCRD("why.kubectl-idx.io", "{kind: WhyApp, listKind: WhyAppList, plural: whyapps, singular: whyapp}", "whyapps", "")

// whyNode is a node as a kubelet registers it, tainted with whyTaint; kwok runs it when
// managed.
func whyNode(name string, managed bool) *corev1.Node {
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubectl-idx.io/e2e": "controllers"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: whyTaint, Value: "fixture", Effect: corev1.TaintEffectNoSchedule}}},
		Status:     corev1.NodeStatus{Capacity: capacity, Allocatable: capacity.DeepCopy()},
	}
	if managed {
		n.Annotations = map[string]string{testenv.KwokNodeAnnotation: "fake"}
	}
	return n
}

// whyWorld is the fixtures applied: the namespaces by fixture.
type whyWorld struct {
	c  *ctrlCluster
	ns map[string]string
}

// setupWhy creates the fixtures' nodes and namespaces and applies every fixture, the
// ValidatingAdmissionPolicy first (its fixture's pods must meet it), and deletes them all
// when t ends.
func setupWhy(t *testing.T, c *ctrlCluster) *whyWorld {
	t.Helper()
	ctx := context.Background()
	for _, n := range []*corev1.Node{whyNode(whyTainted, true), whyNode(whyCordoned, true), whyNode(whyLost, false)} {
		if _, err := c.env.Clientset.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating node %s: %v", n.Name, err)
		}
		name := n.Name
		t.Cleanup(func() { c.kubectl(t, "", "delete", "node", name, "--wait=false") })
	}
	c.mustKubectl(t, whyPolicy, "apply", "-f", "-")
	t.Cleanup(func() {
		c.kubectl(t, "", "delete", "validatingadmissionpolicybindings,validatingadmissionpolicies", "why-no-latest", "--wait=false")
	})
	w := &whyWorld{c: c, ns: map[string]string{}}
	for name, manifest := range map[string]string{
		"sched": whySchedManifest, "quota": whyQuotaManifest, "create": whyCreateManifest, "limits": whyLimitsManifest, "policy": "",
		"run": whyRunManifest, "refs": whyRefsManifest, "serve": whyServeManifest, "nodes": whyNodesManifest, "jobs": whyJobsManifest,
		"healthy": whyHealthyManifest, "unknown": whyUnknownManifest, "kinds": whyKindsManifest, "custom": "", "triage": whyTriageManifest,
	} {
		ns := "why-" + name
		c.createNamespace(t, ns)
		w.ns[name] = ns
		if manifest != "" {
			c.mustKubectl(t, manifest, "apply", "-n", ns, "-f", "-")
		}
	}
	// The policy takes effect once the API server has compiled it: a pod it denies is
	// refused by a dry run first, then the Deployment whose pods it denies is applied.
	eventually(t, time.Minute, "ValidatingAdmissionPolicy why-no-latest to deny pods in why-policy", func() string {
		res := c.kubectl(t, "", "run", "probe", "--image=registry.k8s.io/pause:latest", "--dry-run=server", "-n", w.ns["policy"])
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "why-no-latest") {
			return "a pod with an image :latest is admitted: " + strings.TrimSpace(res.Stdout+res.Stderr)
		}
		return ""
	})
	c.mustKubectl(t, whyPolicyManifest, "apply", "-n", w.ns["policy"], "-f", "-")
	// A custom resource owning a Deployment whose pods crash-loop. The CRD stays until the
	// control plane stops: other tests read every type of the server at once, and a type
	// removed under them would be a warning they do not expect.
	c.mustKubectl(t, whyAppCRD, "apply", "-f", "-")
	c.mustKubectl(t, "", "wait", "--for=condition=Established", "--timeout=60s", "crd/whyapps.why.kubectl-idx.io")
	eventually(t, time.Minute, "discovery to serve whyapps", func() string {
		if !slices.Contains(strings.Fields(c.mustKubectl(t, "", "api-resources", "--api-group=why.kubectl-idx.io", "-o", "name").Stdout), "whyapps.why.kubectl-idx.io") {
			return "kubectl api-resources lists no whyapps"
		}
		return ""
	})
	c.mustKubectl(t, "apiVersion: why.kubectl-idx.io/v1\nkind: WhyApp\nmetadata: {name: shop}\nspec: {}\n", "apply", "-n", w.ns["custom"], "-f", "-")
	uid := strings.TrimSpace(c.mustKubectl(t, "", "get", "whyapp", "shop", "-n", w.ns["custom"], "-o", "jsonpath={.metadata.uid}").Stdout)
	owned := strings.Replace(whyDeployment("shop-web", 1, behaviour("crash-loop"), "", ""),
		"metadata: {name: shop-web, labels: {app: shop-web}}",
		"metadata: {name: shop-web, labels: {app: shop-web}, ownerReferences: [{apiVersion: why.kubectl-idx.io/v1, kind: WhyApp, name: shop, uid: "+uid+", controller: true}]}", 1)
	c.mustKubectl(t, owned, "apply", "-n", w.ns["custom"], "-f", "-")
	c.mustKubectl(t, "", "create", "job", "flaky-manual", "--from=cronjob/flaky", "-n", w.ns["jobs"])
	return w
}

// whyClass is one class of cause: the object asked about, the cause it must name and the
// state of the world in which it must.
type whyClass struct {
	name   string
	ns     string // a key of whyWorld.ns
	object string
	// objectOf, when set, names the object asked about (KIND/NAME) from the truth once the
	// fixture is in its state, for an object whose name the controllers choose.
	objectOf func(t *testing.T, w *whyWorld) string
	reason   string
	// severity is the cause's; Error when empty.
	severity v1alpha1.Severity
	// culprit reads the truth and returns the culprit it names (Kind/name), or why the
	// world is not in the fixture's state yet.
	culprit func(t *testing.T, w *whyWorld) (culprit, notYet string)
	// message is a part of the cause's message.
	message string
	// first is set when the cause must be the first line.
	first bool
	// within bounds the wait for the fixture's state; 2 minutes when zero.
	within time.Duration
}

// podOf returns the first pod (by name) of Deployment app in namespace ns that is not being
// deleted, read from the truth, with its state checked by state ("" when it is as wanted).
func (w *whyWorld) podOf(t *testing.T, ns, app string, state func(*corev1.Pod) string) (string, string) {
	t.Helper()
	pods := w.c.read(t, "pods", "-n", w.ns[ns], "-l", "app="+app).ofKind("Pod")
	var names []string
	for _, u := range pods {
		if u.GetDeletionTimestamp() == nil {
			names = append(names, u.GetName())
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return "", "no pod of " + app
	}
	for _, u := range pods {
		if u.GetName() != names[0] {
			continue
		}
		if why := state(typed[corev1.Pod](t, u)); why != "" {
			return "", "pod " + u.GetName() + ": " + why
		}
	}
	return "Pod/" + names[0], ""
}

// waitingReason is a pod state check: its first container waits with reason.
func waitingReason(reason string) func(*corev1.Pod) string {
	return func(p *corev1.Pod) string {
		for _, st := range p.Status.ContainerStatuses {
			if st.State.Waiting != nil && st.State.Waiting.Reason == reason {
				return ""
			}
		}
		return fmt.Sprintf("no container waiting with %s: %+v", reason, p.Status.ContainerStatuses)
	}
}

// notReadyFor is a pod state check: Running, not ready for longer than the grace of why.
func notReadyFor(grace time.Duration) func(*corev1.Pod) string {
	return func(p *corev1.Pod) string {
		if p.Status.Phase != corev1.PodRunning {
			return "phase " + string(p.Status.Phase)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse {
				if since := time.Since(c.LastTransitionTime.Time); since < grace {
					return fmt.Sprintf("not ready for %s only", since.Round(time.Second))
				}
				return ""
			}
		}
		return "no Ready condition False"
	}
}

// replicaFailure returns why the ReplicaSet of Deployment app in ns is not refusing pods
// with a ReplicaFailure condition whose message holds text, or "".
func (w *whyWorld) replicaFailure(t *testing.T, ns, app, text string) string {
	t.Helper()
	for _, u := range w.c.read(t, "replicasets", "-n", w.ns[ns], "-l", "app="+app).ofKind("ReplicaSet") {
		for _, c := range typed[appsv1.ReplicaSet](t, u).Status.Conditions {
			if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, text) {
				return ""
			}
		}
	}
	return "no ReplicaSet of " + app + " with a ReplicaFailure condition saying " + text
}

// nodeReadyReason returns the reason of node's Ready condition when it is not True, or why
// not yet.
func (w *whyWorld) nodeReadyReason(t *testing.T, node string) (string, string) {
	t.Helper()
	u := w.c.read(t, "nodes", "--field-selector", "metadata.name="+node).get("Node", node)
	if u == nil {
		return "", "no node " + node
	}
	for _, c := range typed[corev1.Node](t, u).Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			return c.Reason, ""
		}
	}
	return "", "node " + node + " is Ready or has no Ready condition yet"
}

// jobFailed returns Job name of namespace ns as the culprit once it has failed, or why not yet.
func (w *whyWorld) jobFailed(t *testing.T, ns, name string) (string, string) {
	t.Helper()
	u := w.c.read(t, "jobs", "-n", w.ns[ns]).get("Job", name)
	if u == nil {
		return "", "no Job " + name
	}
	for _, c := range typed[batchv1.Job](t, u).Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return "Job/" + name, ""
		}
	}
	return "", "Job " + name + " has not failed yet"
}

// whyClasses are the classes of causes the issue names, one fixture each.
func whyClasses() []whyClass {
	// podIn is a culprit check for a cause the pod itself is: the pod of app in ns, once
	// state finds it as wanted.
	podIn := func(ns, app string, state func(*corev1.Pod) string) func(t *testing.T, w *whyWorld) (string, string) {
		return func(t *testing.T, w *whyWorld) (string, string) {
			return w.podOf(t, ns, app, state)
		}
	}
	// blamedOnceUnschedulable is a culprit check for a pod the scheduler refuses because of
	// another object: culprit (Kind/name), once the pod of app in ns is unschedulable.
	blamedOnceUnschedulable := func(ns, app, culprit string) func(t *testing.T, w *whyWorld) (string, string) {
		return func(t *testing.T, w *whyWorld) (string, string) {
			if _, notYet := w.podOf(t, ns, app, unschedulable); notYet != "" {
				return "", notYet
			}
			return culprit, ""
		}
	}
	// blamedForRefusedPods is a culprit check for a ReplicaSet refused its pods: culprit
	// (Kind/name), once the ReplicaSet of app in ns has a ReplicaFailure holding text.
	blamedForRefusedPods := func(ns, app, text, culprit string) func(t *testing.T, w *whyWorld) (string, string) {
		return func(t *testing.T, w *whyWorld) (string, string) {
			return culprit, w.replicaFailure(t, ns, app, text)
		}
	}
	return []whyClass{
		// Scheduling.
		{name: "a node selector no node matches", ns: "sched", object: "deployment/selector", reason: "FailedScheduling", first: true,
			culprit: podIn("sched", "selector", unschedulable), message: "no node matches the pod's node selector disktype=nvme"},
		{name: "a taint not tolerated", ns: "sched", object: "deployment/taint", reason: "FailedScheduling", first: true,
			culprit: blamedOnceUnschedulable("sched", "taint", "Node/"+whyTainted), message: "the pod does not tolerate the taint " + whyTaint + "=fixture:NoSchedule of node " + whyTainted},
		{name: "requests larger than any node has free", ns: "sched", object: "deployment/big", reason: "FailedScheduling", first: true,
			culprit: podIn("sched", "big", unschedulable), message: "the pod requests 8 cpu, more than any node it may run on has free"},
		{name: "an unbound claim", ns: "sched", object: "deployment/claim", reason: "FailedScheduling", first: true,
			culprit: blamedOnceUnschedulable("sched", "claim", "PersistentVolumeClaim/data"), message: "the pod's claim data is Pending"},
		// Creation.
		{name: "a ResourceQuota exceeded", ns: "quota", object: "deployment/quota", reason: "FailedCreate", first: true,
			culprit: blamedForRefusedPods("quota", "quota", "exceeded quota: compute", "ResourceQuota/compute"), message: "ResourceQuota compute is used up"},
		{name: "a ServiceAccount that does not exist", ns: "create", object: "deployment/robot", reason: "FailedCreate", first: true,
			culprit: blamedForRefusedPods("create", "robot", `serviceaccount "robot" not found`, "ServiceAccount/robot"), message: "ServiceAccount robot does not exist"},
		{name: "a LimitRange violated", ns: "limits", object: "deployment/greedy", reason: "FailedCreate", first: true,
			culprit: blamedForRefusedPods("limits", "greedy", "maximum cpu usage per Container is 500m", "LimitRange/cpu-max"), message: "LimitRange cpu-max refuses the pods"},
		{name: "a ValidatingAdmissionPolicy that denies the pods", ns: "policy", object: "deployment/latest", reason: "FailedCreate", first: true,
			culprit: blamedForRefusedPods("policy", "latest", "why-no-latest", "ValidatingAdmissionPolicy/why-no-latest"), message: "ValidatingAdmissionPolicy why-no-latest denies the pods (binding why-no-latest): images must be pinned"},
		// Running, through kwok's kubelet behaviours.
		{name: "an image that cannot be pulled", ns: "run", object: "deployment/pull", reason: "ImagePullBackOff", first: true,
			culprit: podIn("run", "pull", waitingReason("ImagePullBackOff")), message: "container app cannot pull its image registry.k8s.io/pause:3.10"},
		{name: "a crash loop", ns: "run", object: "deployment/crash", reason: "CrashLoopBackOff", first: true,
			culprit: podIn("run", "crash", waitingReason("CrashLoopBackOff")), message: "container app keeps crashing: restarted 5 times, last terminated with Error (exit code 1)"},
		{name: "a readiness that never comes", ns: "run", object: "deployment/unready", reason: "ContainersNotReady", first: true,
			culprit: podIn("run", "unready", notReadyFor(35*time.Second)), message: "Readiness probe failed: HTTP probe failed with statuscode: 503"},
		{name: "a Deployment past its progress deadline", ns: "run", object: "deployment/deadline", reason: "ProgressDeadlineExceeded",
			culprit: func(t *testing.T, w *whyWorld) (string, string) {
				u := w.c.read(t, "deployments", "-n", w.ns["run"]).get("Deployment", "deadline")
				if u == nil {
					return "", "no Deployment deadline"
				}
				for _, c := range typed[appsv1.Deployment](t, u).Status.Conditions {
					if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
						return "Deployment/deadline", ""
					}
				}
				return "", "Deployment deadline is within its deadline"
			}, message: "the Deployment made no progress within its deadline of 10s"},
		{name: "a rollout stuck with old and new ReplicaSets alive", ns: "run", object: "deployment/rollout", reason: "RolloutStuck",
			culprit: func(t *testing.T, w *whyWorld) (string, string) {
				wl := w.c.read(t, "deployments,replicasets,pods", "-n", w.ns["run"], "-l", "app=rollout")
				d := wl.get("Deployment", "rollout")
				if d == nil {
					return "", "no Deployment rollout"
				}
				rev := d.GetAnnotations()["deployment.kubernetes.io/revision"]
				if rev != "2" {
					return "", "Deployment rollout is at revision " + rev
				}
				var stuck, old string
				for _, rs := range wl.controlledBy("ReplicaSet", d) {
					r := typed[appsv1.ReplicaSet](t, rs)
					switch {
					case r.Annotations["deployment.kubernetes.io/revision"] == rev && r.Status.AvailableReplicas == 0:
						stuck = r.Name
					case r.Annotations["deployment.kubernetes.io/revision"] != rev && r.Status.Replicas == 2:
						old = r.Name
					}
				}
				if stuck == "" || old == "" {
					return "", "the new ReplicaSet is not stuck beside the old one yet"
				}
				for _, p := range wl.ofKind("Pod") {
					if metav1.GetControllerOfNoCopy(p).Name == stuck {
						if why := unschedulable(typed[corev1.Pod](t, p)); why != "" {
							return "", why
						}
					}
				}
				return "ReplicaSet/" + stuck, ""
			}, message: "still runs 2 pods"},
		// References.
		{name: "a ConfigMap the template names that does not exist", ns: "refs", object: "deployment/refs", reason: "MissingReference",
			culprit: func(t *testing.T, w *whyWorld) (string, string) { return "ConfigMap/nope-config", "" },
			message: "ConfigMap nope-config does not exist, yet the pod template of Deployment refs uses it (volume config)"},
		{name: "a Secret the template names that does not exist", ns: "refs", object: "deployment/refs", reason: "MissingReference",
			culprit: func(t *testing.T, w *whyWorld) (string, string) { return "Secret/nope-secret", "" },
			message: "Secret nope-secret does not exist, yet the pod template of Deployment refs uses it (env app/TOKEN)"},
		{name: "a claim the template names that does not exist", ns: "refs", object: "deployment/claimref", reason: "FailedScheduling", first: true,
			culprit: blamedOnceUnschedulable("refs", "claimref", "PersistentVolumeClaim/nope-claim"), message: "the pod's claim nope-claim does not exist"},
		// Serving.
		{name: "a Service whose selector matches no ready pod", ns: "serve", object: "service/lonely", reason: "NoReadyPods", first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) { return "Service/lonely", "" },
			message: "Service lonely selects no pod (selector app=nobody)"},
		{name: "a PodDisruptionBudget that allows no disruption", ns: "serve", object: "deployment/guarded", reason: "InsufficientPods", severity: v1alpha1.SeverityWarning, first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) {
				u := w.c.read(t, "poddisruptionbudgets", "-n", w.ns["serve"]).get("PodDisruptionBudget", "strict")
				if u == nil {
					return "", "no PodDisruptionBudget strict"
				}
				st := typed[policyv1.PodDisruptionBudget](t, u).Status
				if st.ExpectedPods != 2 || st.CurrentHealthy != 2 || st.DisruptionsAllowed != 0 {
					return "", fmt.Sprintf("PodDisruptionBudget strict: %+v", st)
				}
				return "PodDisruptionBudget/strict", ""
			}, message: "PodDisruptionBudget strict allows no disruption (minAvailable 2): 2 of 2 pods healthy, 2 must stay"},
		// Nodes.
		{name: "pods on a cordoned node", ns: "nodes", object: "deployment/drain", reason: "NodeNotSchedulable", severity: v1alpha1.SeverityWarning, first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) {
				if _, notYet := w.podOf(t, "nodes", "drain", func(p *corev1.Pod) string { return w.c.podRunningOn(p, whyCordoned) }); notYet != "" {
					return "", notYet
				}
				u := w.c.read(t, "nodes", "--field-selector", "metadata.name="+whyCordoned).get("Node", whyCordoned)
				if u == nil || !typed[corev1.Node](t, u).Spec.Unschedulable {
					return "", "node " + whyCordoned + " is not cordoned yet"
				}
				return "Node/" + whyCordoned, ""
			}, message: "node " + whyCordoned + ", which the pod runs on, is cordoned"},
		{name: "pods on a node that is not Ready", ns: "nodes", object: "pod/stranded", within: 3 * time.Minute, first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) {
				if _, notYet := w.nodeReadyReason(t, whyLost); notYet != "" {
					return "", notYet
				}
				return "Node/" + whyLost, ""
			}, message: "node " + whyLost + ", which the pod runs on, is not Ready"},
		// Jobs.
		{name: "a CronJob whose last Job failed", ns: "jobs", object: "cronjob/flaky", reason: "BackoffLimitExceeded", first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) { return w.jobFailed(t, "jobs", "flaky-manual") },
			message: "pod flaky-manual-"},
		{name: "a suspended CronJob", ns: "jobs", object: "cronjob/paused", reason: "Suspended", severity: v1alpha1.SeverityWarning, first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) { return "CronJob/paused", "" },
			message: `CronJob paused is suspended: it starts no Job on its schedule "* * * * *"`},
		// The other kinds asked about: each walked down to its own cause.
		{name: "a StatefulSet whose pod crash-loops", ns: "kinds", object: "statefulset/crashset", reason: "CrashLoopBackOff", first: true,
			culprit: podIn("kinds", "crashset", waitingReason("CrashLoopBackOff")), message: "container app keeps crashing"},
		{name: "a DaemonSet whose pod cannot pull its image", ns: "kinds", object: "daemonset/pullset", reason: "ImagePullBackOff", first: true,
			culprit: podIn("kinds", "pullset", waitingReason("ImagePullBackOff")), message: "container app cannot pull its image registry.k8s.io/pause:3.10"},
		{name: "a ReplicaSet a ResourceQuota refuses", ns: "quota", reason: "FailedCreate", first: true,
			objectOf: func(t *testing.T, w *whyWorld) string {
				rs := w.c.read(t, "replicasets", "-n", w.ns["quota"], "-l", "app=quota").ofKind("ReplicaSet")
				if len(rs) != 1 {
					t.Fatalf("%d ReplicaSets of Deployment quota, want 1", len(rs))
				}
				return "replicaset/" + rs[0].GetName()
			},
			culprit: blamedForRefusedPods("quota", "quota", "exceeded quota: compute", "ResourceQuota/compute"), message: "ResourceQuota compute is used up"},
		{name: "a Job that failed", ns: "jobs", object: "job/flaky-manual", reason: "BackoffLimitExceeded", first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) { return w.jobFailed(t, "jobs", "flaky-manual") },
			message: "Job flaky-manual failed"},
		{name: "a claim that cannot be provisioned", ns: "sched", object: "persistentvolumeclaim/data", reason: "ProvisioningFailed", first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) {
				u := w.c.read(t, "persistentvolumeclaims", "-n", w.ns["sched"]).get("PersistentVolumeClaim", "data")
				if u == nil {
					return "", "no claim data"
				}
				if phase := typed[corev1.PersistentVolumeClaim](t, u).Status.Phase; phase != corev1.ClaimPending {
					return "", "claim data is " + string(phase)
				}
				for _, e := range w.c.read(t, "events", "-n", w.ns["sched"], "--field-selector", "type=Warning,involvedObject.kind=PersistentVolumeClaim,involvedObject.name=data").ofKind("Event") {
					if typed[corev1.Event](t, e).Reason == "ProvisioningFailed" {
						return "PersistentVolumeClaim/data", ""
					}
				}
				return "", "no ProvisioningFailed event of claim data yet"
			}, message: `claim data is Pending: storageclass.storage.k8s.io "why-missing" not found`},
		{name: "a custom resource, through the Deployment it owns", ns: "custom", object: "whyapp/shop", reason: "CrashLoopBackOff", first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) {
				return w.podOf(t, "custom", "shop-web", waitingReason("CrashLoopBackOff"))
			}, message: "container app keeps crashing"},
		{name: "a node that is not Ready", ns: "nodes", object: "node/" + whyLost, within: 3 * time.Minute, first: true,
			culprit: func(t *testing.T, w *whyWorld) (string, string) {
				if _, notYet := w.nodeReadyReason(t, whyLost); notYet != "" {
					return "", notYet
				}
				return "Node/" + whyLost, ""
			}, message: "the node is not Ready (Unknown)"},
	}
}

// podRunningOn returns why pod p is not Running and Ready on node, or "".
func (c *ctrlCluster) podRunningOn(p *corev1.Pod, node string) string {
	if p.Spec.NodeName != node {
		return fmt.Sprintf("on node %q, not %s", p.Spec.NodeName, node)
	}
	if p.Status.Phase != corev1.PodRunning {
		return "phase " + string(p.Status.Phase)
	}
	return ""
}

// whyAnswer runs `kubectl idx why ARGS -o json` between two reads of the culprit's truth
// until both name the same culprit, and returns the diagnosis, the culprit and the result.
// kubectl idx must exit with code.
func (w *whyWorld) whyAnswer(t *testing.T, cl whyClass, code int, args ...string) (*v1alpha1.Diagnosis, string, testenv.Result) {
	t.Helper()
	args = append(append([]string{"why"}, args...), "-o", "json")
	for attempt := 1; attempt <= steadyAttempts; attempt++ {
		before, notYet := cl.culprit(t, w)
		if notYet != "" {
			t.Fatalf("the fixture left its state: %s", notYet)
		}
		res := w.c.idx(t, args...)
		after, _ := cl.culprit(t, w)
		if before != after {
			t.Logf("the truth changed while kubectl idx %s ran (attempt %d); again", strings.Join(args, " "), attempt)
			continue
		}
		noPanic(t, "kubectl idx "+strings.Join(args, " "), res)
		if res.ExitCode != code {
			t.Fatalf("kubectl idx %s: exit code %d, want %d\n%s", strings.Join(args, " "), res.ExitCode, code, res)
		}
		var doc v1alpha1.Diagnosis
		mustDecode(t, "kubectl idx "+strings.Join(args, " "), res.Stdout, &doc)
		return &doc, after, res
	}
	t.Fatalf("the truth kept changing around kubectl idx %s", strings.Join(args, " "))
	return nil, "", testenv.Result{}
}

// findCause returns the cause of doc with reason whose culprit is culprit (Kind/name), or
// nil.
func findCause(doc *v1alpha1.Diagnosis, reason, culprit string) *v1alpha1.Cause {
	for i, c := range doc.Causes {
		if (reason == "" || c.Reason == reason) && c.Object.Kind+"/"+c.Object.Name == culprit {
			return &doc.Causes[i]
		}
	}
	return nil
}

// describeCauses words doc's causes for a failure message.
func describeCauses(doc *v1alpha1.Diagnosis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %s, subjects %+v\n", doc.Status, doc.Subjects)
	for _, c := range doc.Causes {
		fmt.Fprintf(&b, "  %s %s %s: %s\n", c.Severity, c.Reason, c.Object, c.Message)
	}
	return b.String()
}

// checkWorstFirst checks that doc's errors come before its warnings.
func checkWorstFirst(t *testing.T, doc *v1alpha1.Diagnosis) {
	t.Helper()
	warned := false
	for _, c := range doc.Causes {
		if c.Severity == v1alpha1.SeverityWarning {
			warned = true
		} else if warned {
			t.Errorf("an error after a warning:\n%s", describeCauses(doc))
			return
		}
	}
}

// TestWhy: every class of cause on the controller-driven control plane, then a healthy
// workload, an Unknown, every top-level owner, the warm cache, two contexts and a user who
// may not read everything.
func TestWhy(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := controllerCluster(t)
	w := setupWhy(t, c)
	// The rollout starts once its first revision runs: the new one selects a disk no node
	// has, and maxUnavailable 0 keeps the old pods.
	eventually(t, 2*time.Minute, "Deployment rollout to roll out", func() string {
		return c.deploymentRolledOut(t, c.read(t, "deployments,replicasets,pods", "-n", w.ns["run"]), "rollout", 2)
	})
	c.mustKubectl(t, "", "patch", "deployment", "rollout", "-n", w.ns["run"], "-p", `{"spec":{"template":{"spec":{"nodeSelector":{"disktype":"nvme"}}}}}`)
	// The drain fixture's pod runs on its node, which is then cordoned.
	eventually(t, 2*time.Minute, "Deployment drain to run on "+whyCordoned, func() string {
		_, notYet := w.podOf(t, "nodes", "drain", func(p *corev1.Pod) string { return c.podRunningOn(p, whyCordoned) })
		return notYet
	})
	c.mustKubectl(t, "", "cordon", whyCordoned)

	t.Run("classes", func(t *testing.T) {
		for _, cl := range whyClasses() {
			t.Run(cl.name, func(t *testing.T) {
				t.Parallel()
				within := cl.within
				if within == 0 {
					within = 2 * time.Minute
				}
				what := cl.object
				if cl.objectOf != nil {
					what = cl.name
				}
				took := eventually(t, within, "the fixture of "+what, func() string {
					_, notYet := cl.culprit(t, w)
					return notYet
				})
				if cl.objectOf != nil {
					cl.object = cl.objectOf(t, w)
				}
				doc, culprit, _ := w.whyAnswer(t, cl, 3, cl.object, "-n", w.ns[cl.ns])
				reason := cl.reason
				if reason == "" {
					// A node's Ready condition names its own reason.
					reason, _ = w.nodeReadyReason(t, whyLost)
				}
				cause := findCause(doc, reason, culprit)
				if cause == nil {
					t.Fatalf("no cause %s of %s (the truth's culprit):\n%s", reason, culprit, describeCauses(doc))
				}
				severity := cl.severity
				if severity == "" {
					severity = v1alpha1.SeverityError
				}
				if cause.Severity != severity || !strings.Contains(cause.Message, cl.message) || len(cause.Evidence) == 0 {
					t.Errorf("cause %s %s %s: %q with %d evidence; want %s and a message with %q", cause.Severity, cause.Reason, cause.Object, cause.Message, len(cause.Evidence), severity, cl.message)
				}
				if cl.first && &doc.Causes[0] != cause {
					t.Errorf("the cause is not the first:\n%s", describeCauses(doc))
				}
				if doc.Status != v1alpha1.DiagnosisUnhealthy || doc.Subject == nil || len(doc.Warnings) != 0 {
					t.Errorf("status %s, subject %v, warnings %q", doc.Status, doc.Subject, doc.Warnings)
				}
				checkWorstFirst(t, doc)
				// The default output: one line per cause, this one among them.
				// Kinds outside the core, apps and batch groups are named with their group
				// there, as tree names them: PodDisruptionBudget.policy/strict.
				res := c.idx(t, "why", cl.object, "-n", w.ns[cl.ns])
				if res.ExitCode != 3 || !strings.Contains(res.Stdout, reason) || !strings.Contains(res.Stdout, cause.Object.String()) {
					t.Errorf("the table of kubectl idx why %s: exit code %d\n%s", cl.object, res.ExitCode, res)
				}
				t.Logf("%s %s after %s: %s", cause.Reason, culprit, took.Round(time.Second), cause.Message)
			})
		}
	})

	t.Run("healthy", func(t *testing.T) {
		eventually(t, 2*time.Minute, "Deployment fine to roll out", func() string {
			return c.deploymentRolledOut(t, c.read(t, "deployments,replicasets,pods", "-n", w.ns["healthy"]), "fine", 2)
		})
		res := c.idx(t, "why", "deployment/fine", "-n", w.ns["healthy"])
		if res.ExitCode != 0 || !strings.HasPrefix(strings.Split(res.Stdout, "\n")[1], "Healthy   Deployment/fine   2/2 available, 2 updated: nothing found wrong") || res.Stderr != "" {
			t.Errorf("kubectl idx why deployment/fine:\n%s", res)
		}
		res = c.idx(t, "why", "-n", w.ns["healthy"], "-o", "json")
		var doc v1alpha1.Diagnosis
		if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil || res.ExitCode != 0 || doc.Status != v1alpha1.DiagnosisHealthy || len(doc.Subjects) != 2 || len(doc.Causes) != 0 {
			t.Errorf("kubectl idx why -n %s: %v\n%s", w.ns["healthy"], err, res)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		eventually(t, 2*time.Minute, "Deployment held's pod to be scheduled and held", func() string {
			_, notYet := w.podOf(t, "unknown", "held", func(p *corev1.Pod) string {
				if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodPending {
					return fmt.Sprintf("on %q, %s", p.Spec.NodeName, p.Status.Phase)
				}
				return ""
			})
			return notYet
		})
		res := c.idx(t, "why", "deployment/held", "-n", w.ns["unknown"])
		// What was looked at: the subtree, the node the pod is on, the ServiceAccount and
		// the ConfigMap of its token volume.
		if res.ExitCode != 4 || !strings.Contains(res.Stdout, "Unknown   Deployment/held   0/1 available, 1 updated, and no evidence read names a cause   looked at 1 ConfigMap, 1 Deployment, 1 Node, 1 Pod, 1 ReplicaSet, 1 ServiceAccount\n") {
			t.Errorf("kubectl idx why deployment/held:\n%s", res)
		}
	})

	t.Run("every top-level owner", func(t *testing.T) {
		res := c.idx(t, "why", "-n", w.ns["run"], "-o", "json")
		var doc v1alpha1.Diagnosis
		if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil || res.ExitCode != 3 {
			t.Fatalf("kubectl idx why -n %s: %v\n%s", w.ns["run"], err, res)
		}
		var subjects []string
		for _, s := range doc.Subjects {
			subjects = append(subjects, s.Object.String())
		}
		want := []string{"Deployment/crash", "Deployment/deadline", "Deployment/pull", "Deployment/rollout", "Deployment/unready"}
		if !slices.Equal(subjects, want) {
			t.Errorf("subjects %q, want %q", subjects, want)
		}
		for _, c := range doc.Causes {
			if c.Subject == nil {
				t.Errorf("cause %s %s names no subject", c.Reason, c.Object)
			}
		}
		for _, reason := range []string{"ImagePullBackOff", "CrashLoopBackOff", "ProgressDeadlineExceeded", "RolloutStuck"} {
			if !slices.ContainsFunc(doc.Causes, func(c v1alpha1.Cause) bool { return c.Reason == reason }) {
				t.Errorf("no %s:\n%s", reason, describeCauses(&doc))
			}
		}
		checkWorstFirst(t, &doc)
		// --where keeps the subjects it matches, and only their causes.
		res = c.idx(t, "why", "-n", w.ns["run"], "-o", "json", "--where", `object.metadata.name == "crash"`)
		var kept v1alpha1.Diagnosis
		if err := json.Unmarshal([]byte(res.Stdout), &kept); err != nil || res.ExitCode != 3 || len(kept.Subjects) != 1 || kept.Subjects[0].Object.String() != "Deployment/crash" {
			t.Fatalf("kubectl idx why -n %s --where: %v\n%s", w.ns["run"], err, res)
		}
		for _, c := range kept.Causes {
			if c.Subject == nil || c.Subject.Name != "crash" {
				t.Errorf("--where kept a cause of another subject: %s %s under %v", c.Reason, c.Object, c.Subject)
			}
		}
		if !slices.ContainsFunc(kept.Causes, func(c v1alpha1.Cause) bool { return c.Reason == "CrashLoopBackOff" }) {
			t.Errorf("--where lost the crash loop:\n%s", describeCauses(&kept))
		}
		// Every namespace: the quota's and the policy's causes among the others', each
		// naming its namespace.
		res = c.idx(t, "why", "-A")
		if res.ExitCode != 3 {
			t.Fatalf("kubectl idx why -A:\n%s", res)
		}
		var lines []string
		for _, l := range strings.Split(res.Stdout, "\n") {
			if f := strings.Fields(l); len(f) >= 3 {
				lines = append(lines, strings.Join(f[:3], " "))
			}
		}
		for _, want := range []string{w.ns["quota"] + " FailedCreate ResourceQuota/compute", w.ns["policy"] + " FailedCreate ValidatingAdmissionPolicy.admissionregistration.k8s.io/why-no-latest"} {
			if !slices.Contains(lines, want) {
				t.Errorf("kubectl idx why -A has no line %q:\n%s", want, res.Stdout)
			}
		}
	})

	t.Run("through the warm cache", func(t *testing.T) {
		u := newCacheUser(t, c.env, c.env.Kubeconfig)
		for _, args := range [][]string{
			{"why", "deployment/crash", "-n", w.ns["run"], "-o", "json"},
			{"why", "deployment/quota", "-n", w.ns["quota"], "-o", "json"},
			{"why", "service/lonely", "-n", w.ns["serve"], "-o", "json"},
			{"why", "-n", w.ns["run"], "-o", "json"},
			{"why", "deployment/fine", "-n", w.ns["healthy"], "-o", "json"},
		} {
			direct := u.idx(t, args...)
			first := u.idx(t, append(args, "--cache")...)
			warm := u.idx(t, append(args, "--cache")...)
			for what, got := range map[string]testenv.Result{"the first through the cache": first, "warm": warm} {
				if got.ExitCode != direct.ExitCode || diagnosisKey(t, got.Stdout) != diagnosisKey(t, direct.Stdout) {
					t.Errorf("kubectl idx %s, %s: exit code %d, %s\ndirectly: exit code %d, %s", strings.Join(args, " "), what, got.ExitCode, diagnosisKey(t, got.Stdout), direct.ExitCode, diagnosisKey(t, direct.Stdout))
				}
			}
			if !strings.Contains(warm.Stdout, `"asOf"`) {
				t.Errorf("kubectl idx %s through the warm cache does not say what it is current as of:\n%s", strings.Join(args, " "), warm.Stdout)
			}
		}
		if st := u.status(t); st.PID == 0 {
			t.Errorf("no cache process answered: %+v", st)
		}
	})

	t.Run("triage answers as every pod read whole", func(t *testing.T) {
		// Without an object, why reads as metadata the pods the server's table
		// says run ready, and the others whole; KUBECTL_IDX_WHY_PODS=whole reads
		// every pod whole. The two diagnoses are the same, taken a moment apart
		// on a cluster whose controllers keep writing (retried until they agree).
		// What each namespace's pods are read as, once they are in their state.
		triage := map[string]string{
			w.ns["healthy"]: `"why triaged the pods" pods=2 asRowsSay=2 readEarly=0 toRead=0`,
			// loner's row says it crashes: it is read while the
			// metadata list runs.
			w.ns["triage"]: `"why triaged the pods" pods=10 asRowsSay=9 readEarly=1 toRead=0`,
			w.ns["run"]:    `"why reads every pod whole"`,
		}
		for _, scope := range [][]string{{"-A"}, {"-n", w.ns["healthy"]}, {"-n", w.ns["triage"]}, {"-n", w.ns["run"]}} {
			args := append(append([]string{"idx", "why"}, scope...), "-o", "json", "-v=6")
			env := c.env.Environ(c.env.Kubeconfig, c.pluginPath)
			eventually(t, 90*time.Second, "why "+strings.Join(scope, " ")+" triaged and whole to agree", func() string {
				triaged := run(t, testenv.Cmd{Path: testenv.KubectlPath(), Args: args, Env: env, Timeout: cmdTimeout})
				whole := run(t, testenv.Cmd{Path: testenv.KubectlPath(), Args: args, Env: testenv.MergeEnv(env, "KUBECTL_IDX_WHY_PODS=whole"), Timeout: cmdTimeout})
				if triaged.ExitCode != 0 && triaged.ExitCode != 3 {
					t.Fatalf("kubectl idx why %s:\n%s", strings.Join(scope, " "), triaged)
				}
				if !strings.Contains(triaged.Stderr, "includeObject=None") || strings.Contains(whole.Stderr, "includeObject=None") {
					t.Fatalf("kubectl idx why %s: the triaged run read no pod table, or the whole one did:\ntriaged:\n%s\nwhole:\n%s", strings.Join(scope, " "), triaged.Stderr, whole.Stderr)
				}
				if len(scope) == 2 && !strings.Contains(triaged.Stderr, triage[scope[1]]) {
					return "no " + triage[scope[1]] + " (yet):\n" + triaged.Stderr
				}
				if len(scope) == 2 && scope[1] == w.ns["triage"] && !strings.Contains(triaged.Stderr, "/namespaces/"+w.ns["triage"]+"/pods/loner?resourceVersion=0") {
					return "pod loner not read by GET:\n" + triaged.Stderr
				}
				for _, l := range strings.Split(triaged.Stderr, "\n") {
					if strings.Contains(l, `"why triaged the pods"`) || strings.Contains(l, `"why reads every pod whole"`) {
						t.Logf("why %s: %s", strings.Join(scope, " "), l)
					}
				}
				if a, b := diagnosisKey(t, triaged.Stdout), diagnosisKey(t, whole.Stdout); triaged.ExitCode != whole.ExitCode || a != b {
					return fmt.Sprintf("exit codes %d and %d\ntriaged: %s\nwhole:   %s", triaged.ExitCode, whole.ExitCode, a, b)
				}
				return ""
			})
		}
		res := run(t, testenv.Cmd{Path: testenv.KubectlPath(), Args: []string{"idx", "why", "-A"},
			Env: testenv.MergeEnv(c.env.Environ(c.env.Kubeconfig, c.pluginPath), "KUBECTL_IDX_WHY_PODS=some"), Timeout: cmdTimeout})
		if res.ExitCode != 1 || strings.TrimSpace(res.Stderr) != "error: KUBECTL_IDX_WHY_PODS=some: want auto or whole" {
			t.Errorf("a bad KUBECTL_IDX_WHY_PODS:\n%s", res)
		}
	})

	t.Run("two contexts", func(t *testing.T) {
		kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
		if err := testenv.WriteKubeconfig(kubeconfig, testenv.KubeconfigContext{Name: "east", From: c.env.Kubeconfig}, testenv.KubeconfigContext{Name: "west", From: c.env.Kubeconfig}); err != nil {
			t.Fatal(err)
		}
		one := c.idx(t, "why", "deployment/crash", "-n", w.ns["run"], "-o", "json")
		res := c.idx(t, "--kubeconfig", kubeconfig, "why", "deployment/crash", "-n", w.ns["run"], "--context", "east,west", "-o", "json")
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal([]byte(res.Stdout), &list); err != nil || res.ExitCode != 3 || list.Kind != "List" || len(list.Items) != 2 {
			t.Fatalf("kubectl idx why over two contexts: %v\n%s", err, res)
		}
		for i, name := range []string{"east", "west"} {
			var doc v1alpha1.Diagnosis
			if err := json.Unmarshal(list.Items[i], &doc); err != nil || doc.Context != name {
				t.Errorf("item %d: context %q, %v", i, doc.Context, err)
			}
			if got, want := diagnosisKey(t, string(list.Items[i])), diagnosisKey(t, one.Stdout); got != want {
				t.Errorf("context %s: %s\none context: %s", name, got, want)
			}
		}
		table := c.idx(t, "--kubeconfig", kubeconfig, "why", "deployment/crash", "-n", w.ns["run"], "--context", "east,west")
		var contexts []string
		for _, l := range strings.Split(strings.TrimSpace(table.Stdout), "\n")[1:] {
			if f := strings.Fields(l); len(f) > 1 && f[1] == "CrashLoopBackOff" {
				contexts = append(contexts, f[0])
			}
		}
		if table.ExitCode != 3 || !strings.HasPrefix(table.Stdout, "CONTEXT   REASON") || !slices.Equal(contexts, []string{"east", "west"}) {
			t.Errorf("the table over two contexts:\n%s", table)
		}
	})

	t.Run("a user who may not read secrets or nodes", func(t *testing.T) {
		ns := w.ns["run"]
		user, err := c.env.AddRoleUser(context.Background(), "why-reader", ns, []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "events", "services", "configmaps", "serviceaccounts", "persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list", "watch"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, res testenv.Result) {
			t.Helper()
			var doc v1alpha1.Diagnosis
			if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil || res.ExitCode != 3 {
				t.Fatalf("%s: %v\n%s", what, err, res)
			}
			if !slices.ContainsFunc(doc.Causes, func(c v1alpha1.Cause) bool { return c.Reason == "CrashLoopBackOff" }) ||
				!slices.Contains(doc.Unseen, "nodes") || !slices.Contains(doc.Unseen, "secrets") {
				t.Errorf("%s: unseen %q\n%s", what, doc.Unseen, describeCauses(&doc))
			}
			for _, typ := range []string{"nodes", "secrets"} {
				if !strings.Contains(res.Stderr, "warning: cannot list "+typ+", the answer may be incomplete: ") {
					t.Errorf("%s: no warning naming %s:\n%s", what, typ, res.Stderr)
				}
			}
		}
		args := []string{"why", "deployment/crash", "-n", ns, "-o", "json"}
		check("directly", run(t, testenv.Cmd{Path: testenv.KubectlPath(), Args: append([]string{"idx"}, args...),
			Env: c.env.Environ(user.Kubeconfig, c.pluginPath), Timeout: cmdTimeout}))
		// Through the cache, the question is authorized as the user's own.
		u := newCacheUser(t, c.env, user.Kubeconfig)
		u.idx(t, append(args, "--cache")...)
		check("through the warm cache", u.idx(t, append(args, "--cache")...))
	})
	t.Run("through kubectl idx mcp", func(t *testing.T) {
		s := startMCP(t, c.env, c.env.Kubeconfig)
		for _, tc := range []struct {
			args []string
			tool map[string]any
		}{
			{[]string{"why", "deployment/crash", "-n", w.ns["run"]}, map[string]any{"object": "deployment/crash", "namespace": w.ns["run"]}},
			{[]string{"why", "deployment/quota", "-n", w.ns["quota"]}, map[string]any{"object": "deployment/quota", "namespace": w.ns["quota"]}},
			{[]string{"why", "-n", w.ns["sched"]}, map[string]any{"namespace": w.ns["sched"]}},
		} {
			res := c.idx(t, append(tc.args, "-o", "json")...)
			var doc v1alpha1.Diagnosis
			mustDecode(t, "kubectl idx "+strings.Join(tc.args, " "), res.Stdout, &doc)
			var answer v1alpha1.WhyAnswer
			s.must(t, "why", tc.tool, &answer)
			var cli, tool []string
			for _, c := range doc.Causes {
				cli = append(cli, fmt.Sprintf("%s %s %s %d", c.Reason, c.Severity, c.Object, len(c.Evidence)))
			}
			for _, c := range answer.Causes {
				tool = append(tool, fmt.Sprintf("%s %s %s %d", c.Reason, c.Severity, c.Object, len(c.Evidence)))
			}
			if !slices.Equal(cli, tool) || answer.Status != string(doc.Status) {
				t.Errorf("the why tool %v: %s %q\nkubectl idx %s: %s %q", tc.tool, answer.Status, tool, strings.Join(tc.args, " "), doc.Status, cli)
			}
		}
	})
	t.Run("docs recipes", func(t *testing.T) { w.checkWhyRecipes(t) })
	t.Logf("TestWhy done %s after it started", time.Since(start).Round(time.Second))
}

// whyRecipes are the jq recipes of docs/why.md over why, each with what it must print: the same
// fields, read in Go from the Diagnosis document of the same command.
var whyRecipes = map[string]func(doc *v1alpha1.Diagnosis) []string{
	`kubectl idx why deployment/web -n shop -o json | jq -r '.causes[] | "\(.reason) \(.object.kind)/\(.object.name)"'`: func(doc *v1alpha1.Diagnosis) []string {
		var out []string
		for _, c := range doc.Causes {
			out = append(out, c.Reason+" "+c.Object.Kind+"/"+c.Object.Name)
		}
		return out
	},
	`kubectl idx why -n shop -o json | jq -r '.subjects[] | select(.status != "Healthy") | "\(.object.kind)/\(.object.name) \(.status): \(.summary)"'`: func(doc *v1alpha1.Diagnosis) []string {
		var out []string
		for _, s := range doc.Subjects {
			if s.Status != v1alpha1.DiagnosisHealthy {
				out = append(out, fmt.Sprintf("%s/%s %s: %s", s.Object.Kind, s.Object.Name, s.Status, s.Summary))
			}
		}
		return out
	},
	`kubectl idx why -A -o json | jq -r '.causes[] | select(.severity == "Error") | "\(.subject.namespace)/\(.subject.name) \(.reason) \(.object.kind)/\(.object.name)"'`: func(doc *v1alpha1.Diagnosis) []string {
		var out []string
		for _, c := range doc.Causes {
			if c.Severity == v1alpha1.SeverityError {
				out = append(out, fmt.Sprintf("%s/%s %s %s/%s", c.Subject.Namespace, c.Subject.Name, c.Reason, c.Object.Kind, c.Object.Name))
			}
		}
		return out
	},
}

// checkWhyRecipes runs every docs/why.md recipe over why through bash and real jq, on the
// fixtures (namespace shop is why-run, deployment/web its Deployment crash), against the
// document of the same command read between two runs that agree: every recipe there must
// be one of whyRecipes, and each of whyRecipes there.
func (w *whyWorld) checkWhyRecipes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "why.md"))
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		m := readmeRecipe.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(strings.TrimSpace(m[1]), "kubectl idx why ") {
			continue
		}
		recipe := strings.TrimSpace(m[1])
		want, ok := whyRecipes[recipe]
		if !ok {
			t.Errorf("docs/why.md recipe %s has no check in whyRecipes", recipe)
			continue
		}
		found[recipe] = true
		script := strings.NewReplacer("deployment/web -n shop", "deployment/crash -n "+w.ns["run"], "-n shop", "-n "+w.ns["run"]).Replace(recipe)
		command, _, _ := strings.Cut(script, " | jq")
		args := strings.Fields(strings.TrimPrefix(command, "kubectl idx "))
		t.Run(recipe, func(t *testing.T) {
			for attempt := 1; attempt <= steadyAttempts; attempt++ {
				before := w.c.idx(t, args...)
				res, err := testenv.Shell(context.Background(), w.c.env.Environ(w.c.env.Kubeconfig, w.c.pluginPath), script)
				if err != nil {
					t.Fatalf("%s: %v\n%s", script, err, res)
				}
				after := w.c.idx(t, args...)
				if diagnosisKey(t, before.Stdout) != diagnosisKey(t, after.Stdout) {
					t.Logf("the answer changed while %s ran (attempt %d); again", script, attempt)
					continue
				}
				var doc v1alpha1.Diagnosis
				mustDecode(t, "output", after.Stdout, &doc)
				lines := want(&doc)
				if len(lines) == 0 {
					t.Fatalf("fixture problem: %s would print nothing", script)
				}
				if got := strings.TrimSuffix(res.Stdout, "\n"); got != strings.Join(lines, "\n") {
					t.Errorf("%s prints:\n%s\nwant:\n%s", script, res.Stdout, strings.Join(lines, "\n"))
				}
				return
			}
			t.Fatalf("the answer of %s kept changing", script)
		})
	}
	for recipe := range whyRecipes {
		if !found[recipe] {
			t.Errorf("whyRecipes has %s, which docs/why.md does not", recipe)
		}
	}
}

// diagnosisKey is what of a diagnosis must be the same however it is asked: its status, its
// subjects and theirs, and each cause's reason, severity, culprit and what its evidence
// read (not the values, which move with the clock: an event's count, how long a pod has not
// been ready).
func diagnosisKey(t *testing.T, out string) string {
	t.Helper()
	var doc v1alpha1.Diagnosis
	mustDecode(t, "the diagnosis", out, &doc)
	var b strings.Builder
	fmt.Fprintf(&b, "%s", doc.Status)
	for _, s := range doc.Subjects {
		fmt.Fprintf(&b, " [%s %s]", s.Object, s.Status)
	}
	for _, c := range doc.Causes {
		fmt.Fprintf(&b, "; %s %s %s", c.Reason, c.Severity, c.Object)
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, " <%s %s%s%s>", e.Object, e.Event, e.Condition, e.Field)
		}
	}
	return b.String()
}
