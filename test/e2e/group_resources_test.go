package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/resourcelist"
	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
)

// The resource sums of every grouping are checked on pods the fixtures do not have:
// sidecars (restartable init containers) before and after an init container, pod overhead
// set by a RuntimeClass, GPUs requested through limits alone (the API server defaults the
// request), hugepages and an extended resource. TestGroupResources creates them in their own
// namespace and deletes them when it ends; it is not parallel, so no other test sees them
// (the parallel tests start only once every sequential test has finished), and the other
// group-by tests keep the fixtures they were written for.

// resourcesNamespace holds TestGroupResources' pods; it is left behind with nothing but its
// ServiceAccount (envtest runs no namespace controller to finish deleting it).
const resourcesNamespace = "idx-resources"

// resourcesRuntimeClass is the RuntimeClass whose overhead the trainer pods carry.
const resourcesRuntimeClass = "idx-sandboxed"

func init() {
	// The README's resource recipes have no `kubectl get` equivalent; TestJQRecipes runs
	// them on the fixtures with these references (TestGroupResources runs them again on
	// its own pods, against the scheduler's rule).
	jqRecipes = append(jqRecipes, resourceRecipes...)
}

// jqQuantities are jq functions for the references: bytes parses a memory quantity,
// binary prints a byte count as a binary quantity the way Kubernetes prints one (the
// largest power of 1024 that divides it), millis and qty do the same for CPU.
const jqQuantities = `
	def bytes: capture("^(?<n>[0-9.]+)(?<u>[A-Za-z]*)$") | (.n | tonumber) * {"": 1, "k": 1000, "M": 1000000, "G": 1000000000, "Ki": 1024, "Mi": 1048576, "Gi": 1073741824, "Ti": 1099511627776}[.u];
	def binary: . as $b | [["Ti", 40], ["Gi", 30], ["Mi", 20], ["Ki", 10]] | map(select($b >= pow(2; .[1]) and $b % pow(2; .[1]) == 0)) | if length > 0 then "\($b / pow(2; .[0][1]))\(.[0][0])" else "\($b)" end;
	def millis: if endswith("m") then .[:-1] | tonumber else tonumber * 1000 end;
	def qty: if . % 1000 == 0 then "\(. / 1000)" else "\(.)m" end;`

// resourceRecipes are the README's recipes over summary.resources. The references add
// up the containers' requests: the fixtures have no init containers, sidecars or
// overhead, which the scheduler's rule would count.
var resourceRecipes = []recipe{
	{
		name: "the Deployment that asks for the most memory",
		cmd:  `kubectl idx pods -A --by-owner -o json | jq -r '[.groups[] | select(.key.kind == "Deployment")] | max_by(.summary.resources.requests.memoryBytes) | "\(.key.namespace)/\(.key.name) \(.summary.resources.requests.memory)"'`,
		kubectl: `kubectl get pods,replicasets -A -o json | jq -r '` + jqQuantities + `
			(.items | map(select(.kind == "ReplicaSet")) | map({key: .metadata.uid, value: ([.metadata.ownerReferences[]? | select(.controller)][0])}) | from_entries) as $rs
			| [.items[] | select(.kind == "Pod" and .status.phase != "Succeeded" and .status.phase != "Failed")
				| [.metadata.ownerReferences[]? | select(.controller)][0] as $c
				| select($c != null and $c.kind == "ReplicaSet")
				| $rs[$c.uid] as $d | select($d != null and $d.kind == "Deployment")
				| {d: "\(.metadata.namespace)/\($d.name)", mem: ([.spec.containers[].resources.requests.memory // "0" | bytes] | add)}]
			| group_by(.d) | map({d: .[0].d, mem: (map(.mem) | add)}) | max_by(.mem) | "\(.d) \(.mem | binary)"'`,
		want: "shop/worker 24Gi\n",
	},
	{
		name: "what the pods of one label value request",
		cmd:  `kubectl idx pods -A --by-label tier -o json | jq -r '.groups[] | select(.key.value == "backend") | .summary.resources.requests | "cpu \(.cpu), memory \(.memory)"'`,
		kubectl: `kubectl get pods -A -o json | jq -r '` + jqQuantities + `
			[.items[] | select(.metadata.labels.tier == "backend" and .status.phase != "Succeeded" and .status.phase != "Failed") | .spec.containers[].resources.requests]
			| "cpu \([.[] | .cpu // "0" | millis] | add | qty), memory \([.[] | .memory // "0" | bytes] | add | binary)"'`,
		want: "cpu 3100m, memory 25728Mi\n",
	},
}

// rl parses name=quantity pairs.
var rl = resourcelist.Parse

// resourceContainer is a container with requests and limits.
func resourceContainer(name string, reqs, lims corev1.ResourceList) corev1.Container {
	return corev1.Container{
		Name: name, Image: "registry.example.com/" + name + ":1.0", ImagePullPolicy: corev1.PullIfNotPresent,
		Resources:              corev1.ResourceRequirements{Requests: reqs, Limits: lims},
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
}

// trainerSpec runs a sidecar (proxy), an init container (fetch), a second sidecar
// (logger), a GPU trainer and a stats exporter without limits, under a RuntimeClass with
// overhead.
func trainerSpec() corev1.PodSpec {
	proxy := resourceContainer("proxy", rl("cpu=100m", "memory=64Mi"), rl("cpu=200m", "memory=128Mi"))
	proxy.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	logger := resourceContainer("logger", rl("cpu=50m", "memory=32Mi"), rl("cpu=50m", "memory=32Mi"))
	logger.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	return corev1.PodSpec{
		InitContainers: []corev1.Container{proxy, resourceContainer("fetch", rl("cpu=2", "memory=40Gi"), rl("memory=48Gi")), logger},
		Containers: []corev1.Container{
			// The GPU is asked for by its limit; the API server sets the request.
			resourceContainer("train", rl("cpu=1", "memory=30Gi", "ephemeral-storage=10Gi"), rl("cpu=2", "memory=32Gi", "nvidia.com/gpu=1")),
			resourceContainer("stats", rl("cpu=100m", "memory=128Mi"), nil),
		},
		RuntimeClassName:   ptr.To(resourcesRuntimeClass),
		RestartPolicy:      corev1.RestartPolicyAlways,
		DNSPolicy:          corev1.DNSClusterFirst,
		ServiceAccountName: "default",
		SchedulerName:      corev1.DefaultSchedulerName,
	}
}

// resourceLabels are the labels of a TestGroupResources object.
func resourceLabels(kv ...string) map[string]string {
	m := map[string]string{fixtures.LabelKey: fixtures.LabelValue}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// forceDelete deletes at once: envtest runs no kubelet to confirm a graceful deletion of
// a pod bound to a node, nor a garbage collector to act on a propagation policy.
var forceDelete = metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}

// loadResourcePods creates the objects of TestGroupResources and returns the function that
// deletes them: Deployment trainer (two pods on worker-1 through a ReplicaSet, labelled
// team=research and tier=backend), a finished report, a pending pod asking for a GPU (both
// team=research) and a cache with hugepages and an extended resource on worker-2
// (team=storefront).
func loadResourcePods(ctx context.Context, cs kubernetes.Interface) (func(context.Context) error, error) {
	var deletes []func(context.Context) error
	cleanup := func(ctx context.Context) error {
		var errs []string
		for i := len(deletes) - 1; i >= 0; i-- {
			if err := deletes[i](ctx); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err.Error())
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("deleting the objects of TestGroupResources: %s", strings.Join(errs, "; "))
		}
		return nil
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: resourcesNamespace, Labels: resourceLabels()}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return cleanup, fmt.Errorf("creating namespace %s: %w", resourcesNamespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: resourcesNamespace, Labels: resourceLabels()}}
	if _, err := cs.CoreV1().ServiceAccounts(resourcesNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return cleanup, fmt.Errorf("creating service account %s/default: %w", resourcesNamespace, err)
	}
	overhead := rl("cpu=250m", "memory=120Mi")
	rc := &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: resourcesRuntimeClass, Labels: resourceLabels()},
		Handler:    "kata",
		Overhead:   &nodev1.Overhead{PodFixed: overhead},
	}
	if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		return cleanup, fmt.Errorf("creating RuntimeClass %s: %w", resourcesRuntimeClass, err)
	}
	deletes = append(deletes, func(ctx context.Context) error {
		return cs.NodeV1().RuntimeClasses().Delete(ctx, resourcesRuntimeClass, forceDelete)
	})

	const hash = "6f8d9c7b5"
	podLabels := resourceLabels("app", "trainer", "team", "research", "tier", "backend", "pod-template-hash", hash)
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer", Namespace: resourcesNamespace, Labels: resourceLabels("app", "trainer")},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "trainer"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: resourceLabels("app", "trainer", "team", "research", "tier", "backend")}, Spec: trainerSpec()},
		},
	}
	dep, err := cs.AppsV1().Deployments(resourcesNamespace).Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		return cleanup, fmt.Errorf("creating deployment trainer: %w", err)
	}
	deletes = append(deletes, func(ctx context.Context) error {
		return cs.AppsV1().Deployments(resourcesNamespace).Delete(ctx, dep.Name, forceDelete)
	})
	controller := func(apiVersion, kind string, obj metav1.Object) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: obj.GetName(), UID: obj.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "trainer-" + hash, Namespace: resourcesNamespace, Labels: podLabels, OwnerReferences: controller("apps/v1", "Deployment", dep)},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "trainer", "pod-template-hash": hash}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: trainerSpec()},
		},
	}
	if rs, err = cs.AppsV1().ReplicaSets(resourcesNamespace).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		return cleanup, fmt.Errorf("creating replicaset %s: %w", rs.Name, err)
	}
	deletes = append(deletes, func(ctx context.Context) error {
		return cs.AppsV1().ReplicaSets(resourcesNamespace).Delete(ctx, rs.Name, forceDelete)
	})

	create := func(pod *corev1.Pod, phase corev1.PodPhase) error {
		pod.Namespace = resourcesNamespace
		if pod.Spec.RestartPolicy == "" {
			pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
		}
		p, err := cs.CoreV1().Pods(resourcesNamespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating pod %s: %w", pod.Name, err)
		}
		deletes = append(deletes, func(ctx context.Context) error {
			return cs.CoreV1().Pods(resourcesNamespace).Delete(ctx, p.Name, forceDelete)
		})
		ready := corev1.ConditionFalse
		if phase == corev1.PodRunning {
			ready = corev1.ConditionTrue
		}
		p.Status = corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Now()}}}
		if _, err := cs.CoreV1().Pods(resourcesNamespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating status of pod %s: %w", p.Name, err)
		}
		return nil
	}
	for _, suffix := range []string{"k2x4q", "z8m7w"} {
		spec := trainerSpec()
		spec.NodeName = "worker-1"
		// The RuntimeClass admission plugin sets the same overhead; setting it here keeps
		// the pods right on a server that runs without the plugin.
		spec.Overhead = overhead
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: rs.Name + "-" + suffix, Labels: podLabels, OwnerReferences: controller("apps/v1", "ReplicaSet", rs)}, Spec: spec}
		if err := create(pod, corev1.PodRunning); err != nil {
			return cleanup, err
		}
	}
	others := []struct {
		pod   *corev1.Pod
		phase corev1.PodPhase
	}{
		{&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "report", Labels: resourceLabels("team", "research")},
			Spec: corev1.PodSpec{NodeName: "worker-1", RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{resourceContainer("report", rl("cpu=1", "memory=1Gi"), nil)}},
		}, corev1.PodSucceeded},
		{&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "gpu-pending", Labels: resourceLabels("team", "research")},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{resourceContainer("notebook", rl("cpu=500m", "memory=1Gi"), rl("nvidia.com/gpu=1"))}},
		}, corev1.PodPending},
		{&corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "cache", Labels: resourceLabels("team", "storefront")},
			Spec: corev1.PodSpec{NodeName: "worker-2", Containers: []corev1.Container{resourceContainer("cache",
				rl("cpu=100m", "memory=128Mi", "hugepages-2Mi=4Mi", "example.com/foo=2"),
				rl("memory=256Mi", "hugepages-2Mi=4Mi", "example.com/foo=2"))}},
		}, corev1.PodRunning},
	}
	for _, o := range others {
		if err := create(o.pod, o.phase); err != nil {
			return cleanup, err
		}
	}
	return cleanup, nil
}

// ruleOf is what the scheduler counts for a pod, per resource, written out here from the
// sidecar KEP rather than called: the app containers and every sidecar (restartable init
// container) run together; each other init container runs alone beside the sidecars
// declared before it; the larger wins, plus overhead. For limits, a container without a
// limit adds nothing and overhead is added only to a limited resource.
func ruleOf(t *testing.T, p *corev1.Pod, limits bool) corev1.ResourceList {
	t.Helper()
	if p.Spec.Resources != nil {
		t.Fatalf("fixture problem: %s has pod-level resources; extend ruleOf", nsName(p))
	}
	of := func(c corev1.Container) corev1.ResourceList {
		if limits {
			return c.Resources.Limits
		}
		return c.Resources.Requests
	}
	add := func(sum, l corev1.ResourceList) {
		for name, q := range l {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	raise := func(to, l corev1.ResourceList) {
		for name, q := range l {
			if v, ok := to[name]; !ok || q.Cmp(v) > 0 {
				to[name] = q.DeepCopy()
			}
		}
	}
	running, sidecars, inits := corev1.ResourceList{}, corev1.ResourceList{}, corev1.ResourceList{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(sidecars, of(c))
			add(running, of(c))
			continue
		}
		alone := corev1.ResourceList{}
		add(alone, sidecars)
		add(alone, of(c))
		raise(inits, alone)
	}
	for _, c := range p.Spec.Containers {
		add(running, of(c))
	}
	raise(running, inits)
	for name, q := range p.Spec.Overhead {
		if v := running[name]; limits && v.IsZero() {
			continue
		}
		add(running, corev1.ResourceList{name: q})
	}
	return running
}

// containersOnly adds up the app containers' requests, the rule the fixtures' references
// may use: a fixture check that the resource pods need more than that.
func containersOnly(p *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for name, q := range c.Resources.Requests {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	return sum
}

// sumOf adds up ruleOf over pods, leaving out finished pods unless includeCompleted.
func sumOf(t *testing.T, pods []*corev1.Pod, limits, includeCompleted bool) (corev1.ResourceList, int) {
	t.Helper()
	sum, n := corev1.ResourceList{}, 0
	for _, p := range pods {
		if !includeCompleted && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
			continue
		}
		n++
		for name, q := range ruleOf(t, p, limits) {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	return sum, n
}

// listText renders the non-zero quantities of l, sorted: "cpu=4700m memory=82288Mi".
var listText = resourcelist.String

// resourceGroup is a group of a GroupList with the resource fields the README documents.
type resourceGroup struct {
	Name string `json:"name"`
	Key  struct {
		None      bool   `json:"none"`
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Node      string `json:"node"`
	} `json:"key"`
	Summary struct {
		Resources *struct {
			Pods     int            `json:"pods"`
			Requests map[string]any `json:"requests"`
			Limits   map[string]any `json:"limits"`
		} `json:"resources"`
		Node *struct {
			Requests map[string]any `json:"requests"`
			Limits   map[string]any `json:"limits"`
		} `json:"node"`
	} `json:"summary"`
	Items []*unstructured.Unstructured `json:"items"`
}

// checkSums compares a requests or limits object of the document with want: every
// resource as a quantity string (zero ones may be absent, cpu and memory are always
// there), cpuMillis and memoryBytes as numbers.
func checkSums(t *testing.T, what string, got map[string]any, want corev1.ResourceList) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: missing", what)
		return
	}
	list := corev1.ResourceList{}
	for name, v := range got {
		if name == "cpuMillis" || name == "memoryBytes" {
			continue
		}
		s, ok := v.(string)
		q, err := resource.ParseQuantity(s)
		if !ok || err != nil {
			t.Errorf("%s: %s = %v is not a quantity", what, name, v)
			continue
		}
		list[corev1.ResourceName(name)] = q
	}
	if _, ok := got["cpu"]; !ok {
		t.Errorf("%s: no cpu", what)
	}
	if _, ok := got["memory"]; !ok {
		t.Errorf("%s: no memory", what)
	}
	if g, w := listText(list), listText(want); g != w {
		t.Errorf("%s = %q, want %q (from kubectl get -o json, by the scheduler's rule)", what, g, w)
	}
	if g, w := got["cpuMillis"], float64(want.Cpu().MilliValue()); g != w {
		t.Errorf("%s: cpuMillis = %v, want %v", what, g, w)
	}
	if g, w := got["memoryBytes"], float64(want.Memory().Value()); g != w {
		t.Errorf("%s: memoryBytes = %v, want %v", what, g, w)
	}
}

// TestGroupResources checks the requests and limits every grouping adds up against the
// pods kubectl reads, counted by the scheduler's rule (ruleOf), and runs the README's
// resource recipes through real jq.
func TestGroupResources(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cleanup, err := loadResourcePods(ctx, env.Clientset)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cleanup(ctx); err != nil {
			t.Error(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	r := as("")
	pods := typedAll[corev1.Pod](t, kubectlItems(t, r, "pods", "-A"))
	byName := map[string]*corev1.Pod{}
	for _, p := range pods {
		byName[nsName(p)] = p
	}
	// Fixture checks: the trainers have sidecars, an init container, overhead and a GPU
	// request the API server defaulted from the limit, and need more than their
	// containers' requests; a GPU pod waits unscheduled; a finished pod has requests.
	trainer := byName[resourcesNamespace+"/trainer-6f8d9c7b5-k2x4q"]
	switch {
	case trainer == nil:
		t.Fatalf("fixture problem: no trainer pod")
	case trainer.Spec.Overhead.Cpu().IsZero():
		t.Fatalf("fixture problem: %s has no overhead", nsName(trainer))
	case trainer.Spec.Containers[0].Resources.Requests.Name("nvidia.com/gpu", resource.DecimalSI).Value() != 1:
		t.Fatalf("fixture problem: %s: the API server did not default the GPU request from the limit: %v", nsName(trainer), trainer.Spec.Containers[0].Resources)
	}
	if rule, naive := ruleOf(t, trainer, false), containersOnly(trainer); listText(rule) == listText(naive) {
		t.Fatalf("fixture problem: %s requests %s either way; init containers and overhead must matter", nsName(trainer), listText(rule))
	}
	if p := byName[resourcesNamespace+"/report"]; p == nil || p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("fixture problem: no finished report pod")
	}

	for _, tc := range []struct {
		name             string
		args             []string
		includeCompleted bool
	}{
		{name: "by owner", args: []string{"--by-owner"}},
		{name: "by label", args: []string{"--by-label", "team"}},
		{name: "by namespace", args: []string{"--by-namespace"}},
		{name: "by JSONPath", args: []string{"--by", "{.spec.runtimeClassName}"}},
		{name: "by node", args: []string{"--by-node"}},
		{name: "by node, including completed pods", args: []string{"--by-node", "--include-completed"}, includeCompleted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{"pods", "-A"}, tc.args...), "-o", "json")
			res := r.idx(t, args...)
			mustSucceed(t, "kubectl-idx "+strings.Join(args, " "), res)
			var doc struct {
				Groups []resourceGroup `json:"groups"`
			}
			mustDecode(t, "output", res.Stdout, &doc)
			var research bool
			for _, g := range doc.Groups {
				var members []*corev1.Pod
				for _, it := range g.Items {
					p := byName[nsName(it)]
					if p == nil {
						t.Fatalf("group %s: %s is not a pod kubectl lists", g.Name, nsName(it))
					}
					members = append(members, p)
				}
				rs := g.Summary.Resources
				if len(members) == 0 {
					if rs != nil {
						t.Errorf("group %s has no pods, but resources %+v", g.Name, rs)
					}
					continue
				}
				if rs == nil {
					t.Errorf("group %s: no summary.resources", g.Name)
					continue
				}
				reqs, n := sumOf(t, members, false, tc.includeCompleted)
				lims, _ := sumOf(t, members, true, tc.includeCompleted)
				if rs.Pods != n {
					t.Errorf("group %s: resources.pods = %d, want %d", g.Name, rs.Pods, n)
				}
				checkSums(t, g.Name+" requests", rs.Requests, reqs)
				checkSums(t, g.Name+" limits", rs.Limits, lims)
				if node := g.Summary.Node; node != nil {
					checkSums(t, g.Name+" node requests", node.Requests, reqs)
					checkSums(t, g.Name+" node limits", node.Limits, lims)
				} else if !g.Key.None && slices.Contains(tc.args, "--by-node") {
					t.Errorf("node %s: no node summary", g.Name)
				}
				if slices.ContainsFunc(members, func(p *corev1.Pod) bool { return p == trainer }) {
					research = true
				}
			}
			if !research {
				t.Errorf("no group holds %s", nsName(trainer))
			}
		})
	}

	t.Run("human", func(t *testing.T) {
		t.Parallel()
		res := r.idx(t, "pods", "-n", resourcesNamespace, "--by-label", "team")
		mustSucceed(t, "kubectl-idx pods --by-label team", res)
		var members []*corev1.Pod
		for _, p := range pods {
			if p.Namespace == resourcesNamespace && p.Labels["team"] == "research" {
				members = append(members, p)
			}
		}
		reqs, _ := sumOf(t, members, false, false)
		lims, _ := sumOf(t, members, true, false)
		var header string
		for _, line := range strings.Split(res.Stdout, "\n") {
			if strings.HasPrefix(line, "team=research  ") {
				header = line
			}
		}
		gpu := reqs.Name("nvidia.com/gpu", resource.DecimalSI)
		for _, want := range []string{
			fmt.Sprintf("team=research  %d pods, 2/%d ready  requests cpu %s, memory ", len(members), len(members), reqs.Cpu()),
			fmt.Sprintf(", ephemeral-storage 20Gi, nvidia.com/gpu %s  limits cpu %s, memory ", gpu, lims.Cpu()),
		} {
			if !strings.Contains(header, want) {
				t.Errorf("header %q does not contain %q:\n%s", header, want, res.Stdout)
			}
		}
		names := r.idx(t, "pods", "-n", resourcesNamespace, "--by-label", "team", "-o", "name")
		mustSucceed(t, "kubectl-idx pods --by-label team -o name", names)
		if !strings.Contains(names.Stdout, "team=research pod/trainer-6f8d9c7b5-k2x4q\n") {
			t.Errorf("-o name:\n%s", names.Stdout)
		}
	})

	t.Run("README recipes", func(t *testing.T) {
		t.Parallel()
		// The Deployment that asks for the most memory, by the rule.
		rsOwner := map[string]metav1.OwnerReference{}
		for _, u := range kubectlItems(t, r, "replicasets", "-A") {
			if c := metav1.GetControllerOf(u); c != nil {
				rsOwner[string(u.GetUID())] = *c
			}
		}
		memory := map[string]*resource.Quantity{}
		for _, p := range pods {
			c := metav1.GetControllerOf(p)
			if c == nil || c.Kind != "ReplicaSet" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			d, ok := rsOwner[string(c.UID)]
			if !ok || d.Kind != "Deployment" {
				continue
			}
			key := p.Namespace + "/" + d.Name
			if memory[key] == nil {
				memory[key] = &resource.Quantity{}
			}
			reqs := ruleOf(t, p, false)
			memory[key].Add(*reqs.Memory())
		}
		var top string
		for k, q := range memory {
			if top == "" || q.Cmp(*memory[top]) > 0 {
				top = k
			}
		}
		checkRecipeOutput(t, resourceRecipes[0].cmd, top, map[string]resource.Quantity{"": *memory[top]})

		var backend []*corev1.Pod
		for _, p := range pods {
			if p.Labels["tier"] == "backend" {
				backend = append(backend, p)
			}
		}
		reqs, _ := sumOf(t, backend, false, false)
		checkRecipeOutput(t, resourceRecipes[1].cmd, "", map[string]resource.Quantity{"cpu": *reqs.Cpu(), "memory": *reqs.Memory()})
	})
}

// checkRecipeOutput runs a recipe with kubectl idx discovered by kubectl and checks its one
// line: "NAME QUANTITY" when name is set (want[""] the quantity), else "cpu Q, memory Q"
// against want's quantities, compared as quantities.
func checkRecipeOutput(t *testing.T, cmd, name string, want map[string]resource.Quantity) {
	t.Helper()
	res := as("").shell(t, cmd)
	mustSucceed(t, cmd, res)
	line := strings.TrimSuffix(res.Stdout, "\n")
	got := map[string]string{}
	if name != "" {
		n, q, _ := strings.Cut(line, " ")
		if n != name {
			t.Errorf("%s\nprints %q, want %s first", cmd, line, name)
		}
		got[""] = q
	} else {
		for _, part := range strings.Split(line, ", ") {
			k, v, _ := strings.Cut(part, " ")
			got[k] = v
		}
	}
	for k, w := range want {
		q, err := resource.ParseQuantity(got[k])
		if err != nil || q.Cmp(w) != 0 {
			t.Errorf("%s\nprints %q: %s should be %s", cmd, line, k, w.String())
		}
	}
}
