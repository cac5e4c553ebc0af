package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// --where end to end. Every recipe of the README's Filters section runs through `kubectl
// idx` (plugin discovery) on the controller-driven control plane, in a namespace shop of
// its own and a node that is not Ready, and is compared with the same filter written in jq
// over `kubectl get -o json` read at the same moment: the recipe's answer must be its
// answer without --where (the same command, -o json) less the objects jq's filter refuses.
// Then the errors, the watch entering and leaving the scope, and several contexts.

// whereNamespace is the namespace the README's recipes name.
const whereNamespace = "shop"

// lostNode is a node no kwok manages: it never reports, so the node lifecycle controller
// marks it Ready Unknown and taints it unreachable. It is cordoned, tainted so that no
// DaemonSet runs on it, and in zone-b.
const lostNode = "lost-node"

// whereManifest is what the recipes are about: Deployment web (4 replicas, labelled
// tier=frontend though its pods are not, rolled out twice below), Service web, Deployment
// api (requests 250m of CPU), Deployment stuck (its pod cannot be scheduled), StatefulSet
// db (limits on its containers) on kwok's nodes, StatefulSet cache bound to the lost node
// (its pods stay Pending there), Job migrate, and pod debug on the lost node, whose status
// the test writes as a kubelet would: CrashLoopBackOff, 7 restarts, an image from outside
// registry.k8s.io.
const whereManifest = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {tier: frontend}
spec:
  replicas: 4
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 50m, memory: 32Mi}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
  - {port: 80}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  labels: {tier: backend}
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api, tier: backend}
    spec:
      containers:
      - name: api
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 250m, memory: 64Mi}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck}
spec:
  replicas: 1
  selector:
    matchLabels: {app: stuck}
  template:
    metadata:
      labels: {app: stuck}
    spec:
      nodeSelector: {disktype: nvme}
      containers:
      - name: stuck
        image: registry.k8s.io/pause:3.10
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {cpu: 200m, memory: 128Mi}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache}
spec:
  serviceName: cache
  replicas: 2
  podManagementPolicy: Parallel
  selector:
    matchLabels: {app: cache}
  template:
    metadata:
      labels: {app: cache}
    spec:
      nodeName: ` + lostNode + `
      tolerations:
      - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}
      - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}
      containers:
      - name: cache
        image: registry.k8s.io/pause:3.10
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 0
  template:
    metadata:
      labels: {app: migrate}
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: registry.k8s.io/busybox:1.36
        command: ["true"]
---
apiVersion: v1
kind: Pod
metadata:
  name: debug
  labels: {app: debug}
spec:
  nodeName: ` + lostNode + `
  tolerations:
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute}
  - {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute}
  containers:
  - name: debug
    image: busybox:1.36
`

// crashStatus is what the kubelet would write of pod debug: running, its container
// waiting to be restarted for the eighth time.
const crashStatus = `{"status": {"phase": "Running",
  "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
  "containerStatuses": [{"name": "debug", "image": "busybox:1.36", "imageID": "", "ready": false, "started": false,
    "restartCount": 7, "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}},
    "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}`

// whereWorld sets up namespace shop and the lost node on c and waits for the controllers
// to have done their part: web rolled out twice, api and db running, the Job done, stuck's
// pod unschedulable, cache's pods bound to the lost node, which is Unknown and tainted.
func whereWorld(t *testing.T, c *ctrlCluster) {
	t.Helper()
	ctx := context.Background()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: lostNode, Labels: map[string]string{
			"kubernetes.io/hostname": lostNode, "kubernetes.io/os": "linux", "topology.kubernetes.io/zone": "zone-b", "kubectl-idx.io/e2e": "controllers",
		}},
		Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: "kubectl-idx.io/lost", Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
		},
	}
	if _, err := c.env.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating node %s: %v", lostNode, err)
	}
	c.createNamespace(t, whereNamespace)
	// After the namespace's cleanup: LIFO. The pod garbage collector then deletes the
	// pods bound to the node, which no kubelet will ever confirm gone.
	t.Cleanup(func() { c.kubectl(t, "", "delete", "node", lostNode, "--wait=false") })
	c.mustKubectl(t, whereManifest, "apply", "-n", whereNamespace, "-f", "-")
	c.mustKubectl(t, "", "patch", "pod", "debug", "-n", whereNamespace, "--subresource=status", "--type=merge", "-p", crashStatus)

	read := func() workloads {
		return c.read(t, "deployments,replicasets,statefulsets,jobs,pods", "-n", whereNamespace)
	}
	web := func(replicas int32) string { return c.deploymentRolledOut(t, read(), "web", replicas) }
	eventually(t, 3*time.Minute, "the workloads of "+whereNamespace+" to run", func() string {
		w := read()
		return firstProblem(c.deploymentRolledOut(t, w, "web", 4), c.deploymentRolledOut(t, w, "api", 2), c.whereStatefulSets(t, w), jobSucceeded(t, w, "migrate", 1))
	})
	for _, image := range []string{"registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.8"} {
		c.mustKubectl(t, "", "set", "image", "deployment/web", "web="+image, "-n", whereNamespace)
		eventually(t, 2*time.Minute, "web to roll out "+image, func() string { return web(4) })
	}
	eventually(t, 3*time.Minute, "the node lifecycle controller to mark "+lostNode+" Unknown and taint it", func() string {
		n, err := c.env.Clientset.CoreV1().Nodes().Get(ctx, lostNode, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		ready := false
		for _, cond := range n.Status.Conditions {
			ready = ready || cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionUnknown
		}
		if !ready {
			return "no Ready condition Unknown"
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == corev1.TaintNodeUnreachable && taint.Effect == corev1.TaintEffectNoExecute {
				return ""
			}
		}
		return "no unreachable NoExecute taint"
	})
}

// whereStatefulSets returns what StatefulSets db and cache lack: db's two pods running
// on kwok's nodes, cache's two bound to the lost node, and stuck's pod unschedulable; or "".
func (c *ctrlCluster) whereStatefulSets(t *testing.T, w workloads) string {
	t.Helper()
	for _, name := range []string{"db-0", "db-1"} {
		p := w.get("Pod", name)
		if p == nil {
			return "no pod " + name
		}
		if why := c.podRunning(typed[corev1.Pod](t, p)); why != "" {
			return "pod " + name + ": " + why
		}
	}
	for _, name := range []string{"cache-0", "cache-1"} {
		p := w.get("Pod", name)
		if p == nil || typed[corev1.Pod](t, p).Spec.NodeName != lostNode {
			return "pod " + name + " is not bound to " + lostNode
		}
	}
	for _, p := range w.ofKind("Pod") {
		if strings.HasPrefix(p.GetName(), "stuck-") {
			return unschedulable(typed[corev1.Pod](t, p))
		}
	}
	return "no pod of Deployment stuck"
}

// whereRecipe is how a README recipe is checked: the kinds of `kubectl get` whose objects
// jq reads (every kind an owner may be, and nodes, for recipes naming owner or node), the
// kind filtered ("" for every kind of the answer) and the filter in jq, over one object,
// with owner and node defined as --where binds them (whereJQPrelude).
type whereRecipe struct {
	read, kind, jq string
}

// whereOwnerKinds are the kinds a pod's controllers are, read for owner.
const whereOwnerKinds = "pods,replicasets,deployments,statefulsets,daemonsets,jobs,cronjobs,nodes"

// notReadyJQ is the recipes' "not ready" in jq.
const notReadyJQ = `(.status.conditions == null) or (any(.status.conditions[]; .type == "Ready" and .status == "True") | not)`

// whereRecipes are the README's recipes and their jq twins.
var whereRecipes = map[string]whereRecipe{
	`kubectl idx pods -A --where 'object.status.phase != "Running"'`: {
		read: "pods", kind: "Pod", jq: `.status.phase != "Running"`,
	},
	`kubectl idx pods -A --where '!has(object.status.conditions) || !object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")'`: {
		read: "pods", kind: "Pod", jq: notReadyJQ,
	},
	`kubectl idx pods -A --where 'now - timestamp(object.metadata.creationTimestamp) > duration("24h")' --where 'has(object.status.containerStatuses) && object.status.containerStatuses.exists(c, has(c.state.waiting) && c.state.waiting.reason == "CrashLoopBackOff")'`: {
		read: "pods", kind: "Pod", jq: `(now - (.metadata.creationTimestamp | fromdate)) > 86400 and any(.status.containerStatuses[]?; .state.waiting.reason? == "CrashLoopBackOff")`,
	},
	`kubectl idx pods -A --where 'has(object.status.containerStatuses) && object.status.containerStatuses.exists(c, c.restartCount > 5)'`: {
		read: "pods", kind: "Pod", jq: `any(.status.containerStatuses[]?; .restartCount > 5)`,
	},
	`kubectl idx deployments -A --where 'object.spec.replicas > 3'`: {
		read: "deployments", kind: "Deployment", jq: `.spec.replicas > 3`,
	},
	`kubectl idx deployments -A --where '!has(object.status.availableReplicas) || object.status.availableReplicas < object.spec.replicas'`: {
		read: "deployments", kind: "Deployment", jq: `(.status.availableReplicas == null) or (.status.availableReplicas < .spec.replicas)`,
	},
	`kubectl idx pods -A --where 'owner != null && owner.kind == "StatefulSet"' --where 'node != null && !node.status.conditions.exists(c, c.type == "Ready" && c.status == "True")'`: {
		read: whereOwnerKinds, kind: "Pod", jq: `(owner | . != null and .kind == "StatefulSet") and (node | . != null and (any(.status.conditions[]; .type == "Ready" and .status == "True") | not))`,
	},
	`kubectl idx pods -A --where 'owner != null && owner.kind == "Deployment" && int(owner.metadata.annotations["deployment.kubernetes.io/revision"]) > 1'`: {
		read: whereOwnerKinds, kind: "Pod", jq: `owner | . != null and .kind == "Deployment" and ((.metadata.annotations["deployment.kubernetes.io/revision"] // "0") | tonumber) > 1`,
	},
	`kubectl idx pods -A --where 'owner != null && owner.metadata.?labels.?tier.orValue("") == "frontend"'`: {
		read: whereOwnerKinds, kind: "Pod", jq: `owner | . != null and (.metadata.labels.tier // "") == "frontend"`,
	},
	`kubectl idx pods -A --where 'owner == null'`: {
		read: whereOwnerKinds, kind: "Pod", jq: `owner == null`,
	},
	`kubectl idx pods -A --where 'node != null && has(node.spec.unschedulable) && node.spec.unschedulable'`: {
		read: whereOwnerKinds, kind: "Pod", jq: `node | . != null and .spec.unschedulable == true`,
	},
	`kubectl idx pods -A --where 'node != null && node.metadata.?labels["kubernetes.io/arch"].orValue("") == "amd64"'`: {
		read: whereOwnerKinds, kind: "Pod", jq: `node | . != null and (.metadata.labels["kubernetes.io/arch"] // "") == "amd64"`,
	},
	`kubectl idx pods -A --where 'node == null'`: {
		read: whereOwnerKinds, kind: "Pod", jq: `node == null`,
	},
	`kubectl idx pods -A --where 'object.spec.containers.exists(c, !has(c.resources.limits))'`: {
		read: "pods", kind: "Pod", jq: `any(.spec.containers[]; .resources.limits == null)`,
	},
	`kubectl idx pods -A --where 'object.spec.containers.exists(c, has(c.resources.requests) && "cpu" in c.resources.requests && quantity(c.resources.requests.cpu).isGreaterThan(quantity("100m")))'`: {
		read: "pods", kind: "Pod", jq: `any(.spec.containers[]; (.resources.requests.cpu // null) as $q | $q != null and ($q | millicores) > 100)`,
	},
	`kubectl idx pods -A --where 'object.spec.containers.exists(c, !c.image.startsWith("registry.k8s.io/"))'`: {
		read: "pods", kind: "Pod", jq: `any(.spec.containers[]; .image | startswith("registry.k8s.io/") | not)`,
	},
	`kubectl idx pods -A --where 'object.metadata.name.matches("^(web|api)-")'`: {
		read: "pods", kind: "Pod", jq: `.metadata.name | test("^(web|api)-")`,
	},
	`kubectl idx pods -A --by-owner --where '!has(object.status.conditions) || !object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")'`: {
		read: "pods", kind: "Pod", jq: notReadyJQ,
	},
	`kubectl idx pods -A --by-node --where 'owner != null && owner.kind == "StatefulSet"'`: {
		read: whereOwnerKinds, kind: "Pod", jq: `owner | . != null and .kind == "StatefulSet"`,
	},
	`kubectl idx tree deployment/web -n shop --where 'object.kind == "ReplicaSet" && object.spec.replicas == 0'`: {
		read: "deployments,replicasets,pods", jq: `.kind == "ReplicaSet" and .spec.replicas == 0`,
	},
	`kubectl idx selects service/web -n shop --where 'has(object.status.conditions) && object.status.conditions.exists(c, c.type == "Ready" && c.status == "True")'`: {
		read: "pods", kind: "Pod", jq: `.status.conditions != null and any(.status.conditions[]; .type == "Ready" and .status == "True")`,
	},
	`kubectl idx events deployment/web -n shop --where 'object.reason == "ScalingReplicaSet"'`: {
		read: "events", kind: "Event", jq: `.reason == "ScalingReplicaSet"`,
	},
}

// whereJQPrelude defines, over the List kubectl printed, owner (the top-level controller:
// the last controller reference that can be followed, its apiVersion, kind and metadata;
// the reference alone when its object is not there) and node (the pod's Node), as --where
// binds them, and millicores (a CPU quantity).
const whereJQPrelude = `
def ctl: (.metadata.ownerReferences // []) | map(select(.controller == true)) | first;
def millicores: if endswith("m") then (.[:-1] | tonumber) else (tonumber * 1000) end;
INDEX(.items[]; .metadata.uid) as $byUID
| INDEX(.items[] | select(.kind == "Node"); .metadata.name) as $nodes
| def owner: ctl as $c
    | if $c == null then null
      else $byUID[$c.uid] as $o
      | if $o == null then {apiVersion: $c.apiVersion, kind: $c.kind, metadata: {name: $c.name, uid: $c.uid}}
        elif ($o | ctl) == null then ($o | {apiVersion, kind, metadata})
        else ($o | owner) end
      end;
  def node: if (.spec.nodeName // "") == "" then null else $nodes[.spec.nodeName] end;
`

// readmeWhereRecipes returns the command lines of docs/where.md's recipes.
func readmeWhereRecipes(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "where.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## Recipes")
	if start < 0 {
		t.Fatal("docs/where.md has no Recipes section")
	}
	block := text[start:]
	open := strings.Index(block, "```sh\n")
	end := strings.Index(block[open+6:], "```")
	if open < 0 || end < 0 {
		t.Fatal("the Recipes have no sh block")
	}
	var out []string
	for _, line := range strings.Split(block[open+6:open+6+end], "\n") {
		if strings.HasPrefix(line, "kubectl idx ") {
			out = append(out, line)
		}
	}
	return out
}

// splitRecipe splits a recipe's command line into words, as a shell does for the quoting
// the recipes use (single quotes).
func splitRecipe(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quotes in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// withoutWhere returns args without their --where flags.
func withoutWhere(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--where" {
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

// TestWhere: the README's --where recipes, the errors, and a watch whose objects enter and
// leave its scope, on the controller-driven control plane. Not parallel: the recipes read
// every namespace, which the parallel tests fill and empty.
func TestWhere(t *testing.T) {
	c := controllerCluster(t)
	whereWorld(t, c)
	t.Run("README recipes", func(t *testing.T) {
		recipes := readmeWhereRecipes(t)
		if len(recipes) < 15 {
			t.Errorf("the README has %d --where recipes, want at least 15", len(recipes))
		}
		for _, line := range recipes {
			if _, ok := whereRecipes[line]; !ok {
				t.Errorf("README recipe without a jq twin in whereRecipes: %s", line)
			}
		}
		for line := range whereRecipes {
			if !slices.Contains(recipes, line) {
				t.Errorf("whereRecipes has a recipe the README does not: %s", line)
			}
		}
		for _, line := range recipes {
			rc, ok := whereRecipes[line]
			if !ok {
				continue
			}
			t.Run(line, func(t *testing.T) {
				n := c.checkWhereRecipe(t, line, rc)
				if n == 0 && strings.Contains(line, `duration("24h")`) {
					// Nothing here is a day old: the same recipe over the last 10 seconds.
					rc.jq = strings.Replace(rc.jq, "86400", "10", 1)
					n = c.checkWhereRecipe(t, strings.Replace(line, `duration("24h")`, `duration("10s")`, 1), rc)
				}
				if n == 0 {
					t.Errorf("scenario problem: the recipe keeps nothing")
				}
			})
		}
	})
	t.Run("errors", func(t *testing.T) { c.checkWhereErrors(t) })
	t.Run("watch", func(t *testing.T) { c.checkWhereWatch(t) })
}

// checkWhereRecipe runs a recipe with -o json, and without its --where, between two reads
// of the truth, and checks that the first is the second less what jq's filter refuses. It
// returns how many objects the recipe kept.
func (c *ctrlCluster) checkWhereRecipe(t *testing.T, line string, rc whereRecipe) int {
	t.Helper()
	args := append(splitRecipe(t, line)[2:], "-o", "json")
	all := withoutWhere(args)
	for attempt := 1; attempt <= steadyAttempts; attempt++ {
		before := c.mustKubectl(t, "", "get", rc.read, "-A", "-o", "json").Stdout
		got := c.idx(t, args...)
		mustSucceed(t, line, got)
		universe := c.idx(t, all...)
		mustSucceed(t, "kubectl idx "+strings.Join(all, " "), universe)
		after := c.mustKubectl(t, "", "get", rc.read, "-A", "-o", "json").Stdout
		if !maps.Equal(listVersions(t, before), listVersions(t, after)) {
			t.Logf("the truth changed while the recipe ran (attempt %d); again", attempt)
			time.Sleep(pollInterval)
			continue
		}
		if got.Stderr != "" {
			t.Errorf("%s: stderr not empty:\n%s", line, got.Stderr)
		}
		keep := c.jqUIDs(t, after, rc)
		want, kept := answerWithout(t, universe.Stdout, keep)
		_, of := answerWithout(t, universe.Stdout, nil)
		t.Logf("kept %d of %d objects", kept, of)
		if have, _ := answerWithout(t, got.Stdout, nil); !slices.Equal(have, want) {
			t.Errorf("%s\nanswered:\n%s\nwant (its answer without --where, less what jq refuses):\n%s", line, strings.Join(have, "\n"), strings.Join(want, "\n"))
		}
		return kept
	}
	t.Fatalf("the truth kept changing around %s", line)
	return 0
}

// listVersions are the resourceVersions of a List's items, by UID.
func listVersions(t *testing.T, list string) map[string]string {
	t.Helper()
	var l struct {
		Items []metav1.PartialObjectMetadata `json:"items"`
	}
	mustDecode(t, "output", list, &l)
	out := map[string]string{}
	for _, it := range l.Items {
		out[string(it.UID)] = it.ResourceVersion
	}
	return out
}

// jqUIDs runs the recipe's jq filter over list and returns the UIDs it keeps.
func (c *ctrlCluster) jqUIDs(t *testing.T, list string, rc whereRecipe) map[string]bool {
	t.Helper()
	sel := "true"
	if rc.kind != "" {
		sel = fmt.Sprintf(".kind == %q", rc.kind)
	}
	prog := whereJQPrelude + fmt.Sprintf(".items[] | select(%s) | select(%s) | .metadata.uid", sel, rc.jq)
	res := run(t, testenv.Cmd{Path: "jq", Args: []string{"-r", prog}, Stdin: strings.NewReader(list), Timeout: cmdTimeout})
	mustSucceed(t, "jq "+rc.jq, res)
	out := map[string]bool{}
	for _, uid := range strings.Fields(res.Stdout) {
		out[uid] = true
	}
	return out
}

// answerWithout describes a -o json answer (a List, a GroupList or a Tree) as lines, less
// the objects keep (when not nil) has not: a List's objects, each group's with its summary's
// count (a group left empty is left out, but a node's), a tree pruned to what is kept and
// what is above it. It returns the lines and how many objects they hold.
func answerWithout(t *testing.T, answer string, keep map[string]bool) ([]string, int) {
	t.Helper()
	var doc map[string]any
	mustDecode(t, "output", answer, &doc)
	kept := func(o map[string]any) bool {
		if keep == nil {
			return true
		}
		uid, _ := o["uid"].(string)
		if m, ok := o["metadata"].(map[string]any); ok {
			uid, _ = m["uid"].(string)
		}
		return keep[uid]
	}
	name := func(o map[string]any) string {
		m, _ := o["metadata"].(map[string]any)
		return fmt.Sprintf("%v %v/%v", o["kind"], m["namespace"], m["name"])
	}
	var lines []string
	n := 0
	switch doc["kind"] {
	case "List":
		for _, it := range doc["items"].([]any) {
			if o := it.(map[string]any); kept(o) {
				lines = append(lines, name(o))
				n++
			}
		}
		sort.Strings(lines)
	case "GroupList":
		for _, g := range doc["groups"].([]any) {
			group := g.(map[string]any)
			var members []string
			for _, it := range group["items"].([]any) {
				if o := it.(map[string]any); kept(o) {
					members = append(members, name(o))
				}
			}
			key, _ := group["key"].(map[string]any)
			if len(members) == 0 && (key == nil || key["node"] == nil) {
				continue
			}
			if keep == nil {
				summary := group["summary"].(map[string]any)
				if got := int(summary["members"].(float64)); got != len(members) {
					t.Errorf("group %v: summary counts %d members, it has %d", group["name"], got, len(members))
				}
			}
			n += len(members)
			lines = append(lines, fmt.Sprintf("%v: %s", group["name"], strings.Join(members, ", ")))
		}
	case "Tree":
		var walk func(it map[string]any, depth int) []string
		walk = func(it map[string]any, depth int) []string {
			var below []string
			children, _ := it["children"].([]any)
			for _, ch := range children {
				below = append(below, walk(ch.(map[string]any), depth+1)...)
			}
			if depth > 0 && len(below) == 0 && !kept(it) {
				return nil
			}
			if depth > 0 && kept(it) {
				n++
			}
			return append([]string{fmt.Sprintf("%s%v/%v", strings.Repeat(" ", depth), it["kind"], it["name"])}, below...)
		}
		lines = walk(doc["root"].(map[string]any), 0)
	default:
		t.Fatalf("no lines for a %v", doc["kind"])
	}
	return lines, n
}

// checkWhereErrors: bad expressions are one line and a caret, exit 1, before any request
// (-v=6 shows none) or, for what needs the kind's schema, before anything is listed (the
// requests are discovery's and OpenAPI's).
func (c *ctrlCluster) checkWhereErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want []string
		// schema is set when the error needs the server's OpenAPI, read first; kind
		// when it needs the kind, from discovery; prefix when only the start of the
		// error is known.
		schema, kind, prefix bool
	}{
		{
			name: "syntax", args: []string{"pods", "-A", "--where", "object.spec..replicas"},
			want: []string{`error: --where "object.spec..replicas": syntax error at column 13: no viable alternative at input '..'`, "  object.spec..replicas", "              ^"},
		},
		{
			name: "unknown variable", args: []string{"pods", "-A", "--where", `objct.metadata.name == "web"`},
			want: []string{`error: --where "objct.metadata.name == \"web\"": unknown variable at column 1: "objct" (the variables are object, owner, node, now)`, `  objct.metadata.name == "web"`, "  ^"},
		},
		{
			name: "not a bool, whatever the schema", args: []string{"pods", "-A", "--where", "size(object.metadata.labels)"},
			want: []string{`error: --where "size(object.metadata.labels)": must evaluate to bool but got int`},
		},
		{
			name: "unknown field, from the schema", args: []string{"deployments", "-n", whereNamespace, "--where", "object.spec.replica > 3"}, schema: true,
			want: []string{`error: --where "object.spec.replica > 3": unknown field at column 13: "replica"`, "  object.spec.replica > 3", "              ^"},
		},
		{
			name: "not a bool, from the schema", args: []string{"pods", "-A", "--where", "object.metadata.name"}, schema: true,
			want: []string{`error: --where "object.metadata.name": must evaluate to bool but got string`},
		},
		{
			name: "node of a Deployment", args: []string{"deployments", "-A", "--where", `node == null`}, kind: true,
			want: []string{`error: --where "node == null": node is set only for pods, not for Deployment`},
		},
		{
			name: "cost limit", args: []string{"pods", "-A", "--where", "object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))"}, schema: true, prefix: true,
			want: []string{`error: --where "object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))": estimated cost exceeds the limit by a factor of `},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := c.idx(t, append(tc.args, "-v=6")...)
			noPanic(t, tc.name, res)
			if res.ExitCode != 1 || res.Stdout != "" {
				t.Errorf("exit %d, stdout %q; want 1 and nothing", res.ExitCode, res.Stdout)
			}
			var logs, errs []string
			for _, l := range strings.Split(strings.TrimSuffix(res.Stderr, "\n"), "\n") {
				if len(l) > 5 && l[0] == 'I' && l[1] >= '0' && l[1] <= '9' {
					logs = append(logs, l)
				} else {
					errs = append(errs, l)
				}
			}
			if tc.prefix {
				t.Logf("%s", strings.Join(errs, "\n"))
				if len(errs) != 1 || !strings.HasPrefix(errs[0], tc.want[0]) {
					t.Errorf("stderr %q, want one line starting %q", errs, tc.want[0])
				}
			} else if !slices.Equal(errs, tc.want) {
				t.Errorf("stderr:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(tc.want, "\n"))
			}
			read := false
			for _, l := range logs {
				if !strings.Contains(l, "round_trippers") {
					continue
				}
				switch read = read || strings.Contains(l, "/openapi/v3"); {
				case !tc.schema && !tc.kind:
					t.Errorf("a request before the error: %s", l)
				case !tc.schema && strings.Contains(l, "/openapi/v3"):
					t.Errorf("the server's OpenAPI read for an error that does not need it: %s", l)
				}
				if strings.Contains(l, "/pods") || strings.Contains(l, "/deployments") {
					t.Errorf("a list before the error: %s", l)
				}
			}
			if tc.schema && !read {
				t.Errorf("no request for the server's OpenAPI:\n%s", strings.Join(logs, "\n"))
			}
		})
	}
}

// checkWhereWatch: a watch of Deployments over 3 replicas gets api when it is scaled to 5
// (ADDED) and loses web when it is scaled to 2 (DELETED, leftScope), which is still there;
// and with --owner, both scopes hold.
func (c *ctrlCluster) checkWhereWatch(t *testing.T) {
	feed := startFeed(t, c.env, c.env.Kubeconfig, "watch", "deployments", "-n", whereNamespace, "--where", "object.spec.replicas > 3", "-o", "json")
	has := func(want string) func([]string, string) bool {
		return func(lines []string, _ string) bool {
			for _, l := range lines {
				var ev watchEvent
				if json.Unmarshal([]byte(l), &ev) == nil && whereEvent(ev) == want {
					return true
				}
			}
			return false
		}
	}
	feed.waitFor(t, "web, in scope at the start", has("ADDED web"))
	c.mustKubectl(t, "", "scale", "deployment/api", "--replicas=5", "-n", whereNamespace)
	feed.waitFor(t, "api to enter the scope", has("ADDED api"))
	c.mustKubectl(t, "", "scale", "deployment/web", "--replicas=2", "-n", whereNamespace)
	feed.waitFor(t, "web to leave the scope", has("DELETED web (left)"))
	res := feed.interrupt(t)
	if res.Stderr != "" {
		t.Errorf("stderr: %s", res.Stderr)
	}
	var seen []string
	for _, ev := range feed.events(t) {
		if e := whereEvent(ev); ev.Type != "MODIFIED" && !slices.Contains(seen, e) {
			seen = append(seen, e)
		}
		if ev.Object.Metadata.Name != "web" && ev.Object.Metadata.Name != "api" {
			t.Errorf("%s: not in the scope", ev)
		}
	}
	if want := []string{"ADDED web", "ADDED api", "DELETED web (left)"}; !slices.Equal(seen, want) {
		t.Errorf("events %q, want %q", seen, want)
	}
	for _, d := range []string{"api=2", "web=4"} {
		name, n, _ := strings.Cut(d, "=")
		c.mustKubectl(t, "", "scale", "deployment/"+name, "--replicas="+n, "-n", whereNamespace)
	}

	t.Run("--owner and --where", func(t *testing.T) {
		feed := startFeed(t, c.env, c.env.Kubeconfig, "watch", "pods", "-n", whereNamespace, "--owner", "statefulset/db", "--where", `object.metadata.name.endsWith("-1")`, "-o", "name")
		feed.waitFor(t, "db-1", func(lines []string, _ string) bool { return len(lines) > 0 })
		time.Sleep(2 * time.Second)
		feed.interrupt(t)
		if got := feed.snapshot(); !slices.Equal(got, []string{"pod/db-1"}) {
			t.Errorf("printed %q, want pod/db-1 alone: db-0 is owned but does not match, cache-1 matches but is not owned", got)
		}
	})
}

// whereEvent is an event as "TYPE name", with " (left)" when it left the scope.
func whereEvent(ev watchEvent) string {
	s := ev.Type + " " + ev.Object.Metadata.Name
	if ev.LeftScope {
		s += " (left)"
	}
	return s
}

// TestWhereContexts: --where over several contexts: each context's objects that match,
// and each context's warnings, with its own counts, naming it.
func TestWhereContexts(t *testing.T) {
	w := contextsWorldFor(t)
	expr := `object.metadata.labels.tier == "frontend"`
	names := []string{"alpha", "beta"}
	args := []string{"pods", "-A", "--context", strings.Join(names, ","), "--where", expr, "-o", "json"}
	for attempt := 1; ; attempt++ {
		before := map[string][]*unstructured.Unstructured{}
		for _, n := range names {
			before[n] = w.items(t, n, "pods", "-A")
		}
		res := w.r.idx(t, args...)
		mustSucceed(t, "kubectl idx "+strings.Join(args, " "), res)
		same := true
		for _, n := range names {
			same = same && slices.EqualFunc(before[n], w.items(t, n, "pods", "-A"), func(a, b *unstructured.Unstructured) bool {
				return a.GetUID() == b.GetUID() && a.GetResourceVersion() == b.GetResourceVersion()
			})
		}
		if !same && attempt < steadyAttempts {
			continue
		}
		var doc struct {
			Items []struct {
				Context string                      `json:"context"`
				Items   []unstructured.Unstructured `json:"items"`
			} `json:"items"`
			Warnings []string `json:"warnings"`
		}
		mustDecode(t, "output", res.Stdout, &doc)
		var wantWarnings []string
		for i, n := range names {
			var want, got []string
			noLabels, noTier := 0, 0
			for _, p := range before[n] {
				l := p.GetLabels()
				if l == nil {
					noLabels++
					continue
				}
				if tier, ok := l["tier"]; !ok {
					noTier++
				} else if tier == "frontend" {
					want = append(want, nsName(p))
				}
			}
			for _, p := range doc.Items[i].Items {
				got = append(got, nsName(&p))
			}
			if doc.Items[i].Context != n || !slices.Equal(got, want) {
				t.Errorf("context %s (%q): %q, want %q", n, doc.Items[i].Context, got, want)
			}
			if len(want) == 0 || noTier == 0 {
				t.Errorf("fixture problem: context %s has %d frontend pods and %d without the label", n, len(want), noTier)
			}
			for _, c := range []struct {
				key string
				n   int
			}{{"labels", noLabels}, {"tier", noTier}} {
				if c.n > 0 {
					unit := "objects"
					if c.n == 1 {
						unit = "object"
					}
					wantWarnings = append(wantWarnings, fmt.Sprintf("context %q: --where %q: no such key: %s (on %d %s)", n, expr, c.key, c.n, unit))
				}
			}
		}
		sort.Strings(wantWarnings)
		gotWarnings := slices.Sorted(slices.Values(doc.Warnings))
		if !slices.Equal(gotWarnings, wantWarnings) {
			t.Errorf("warnings %q, want %q", gotWarnings, wantWarnings)
		}
		var stderr []string
		for _, l := range stderrLines(res.Stderr) {
			stderr = append(stderr, strings.TrimPrefix(l, "warning: "))
		}
		if sort.Strings(stderr); !slices.Equal(stderr, wantWarnings) {
			t.Errorf("stderr %q, want the warnings %q", stderr, wantWarnings)
		}
		return
	}
}
