package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// The group-by tests compute every expectation from what `kubectl get -o json` says about
// the same cluster, never from the fixtures' source, so they hold whatever the fixtures
// contain; a few checks only make sure the fixtures still exercise each case.

// groupList is the GroupList document as the README documents it.
type groupList struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	GroupBy    string        `json:"groupBy"`
	Expression string        `json:"expression"`
	Groups     []outputGroup `json:"groups"`
	Warnings   []string      `json:"warnings"`
}

type outputGroup struct {
	Name string `json:"name"`
	Key  struct {
		None       bool    `json:"none"`
		APIVersion string  `json:"apiVersion"`
		Kind       string  `json:"kind"`
		Namespace  string  `json:"namespace"`
		Name       string  `json:"name"`
		UID        string  `json:"uid"`
		Dangling   bool    `json:"dangling"`
		Unknown    bool    `json:"unknown"`
		Reason     string  `json:"reason"`
		Node       string  `json:"node"`
		Value      *string `json:"value"`
	} `json:"key"`
	Summary struct {
		Members int            `json:"members"`
		Kinds   map[string]int `json:"kinds"`
		Pods    *struct {
			Total, Ready, Running, Pending, Succeeded, Failed, Unknown int
		} `json:"pods"`
		Node *nodeSummary `json:"node"`
	} `json:"summary"`
	Items []*unstructured.Unstructured `json:"items"`
}

type nodeSummary struct {
	Exists        bool      `json:"exists"`
	Status        string    `json:"status"`
	Ready         bool      `json:"ready"`
	Unschedulable bool      `json:"unschedulable"`
	Roles         []string  `json:"roles"`
	Requests      resources `json:"requests"`
	Allocatable   resources `json:"allocatable"`
	CPUPercent    int64     `json:"cpuPercent"`
	MemoryPercent int64     `json:"memoryPercent"`
}

type resources struct {
	CPU         string `json:"cpu"`
	Memory      string `json:"memory"`
	CPUMillis   int64  `json:"cpuMillis"`
	MemoryBytes int64  `json:"memoryBytes"`
}

// idxGroups runs kubectl-idx ARGS -o json as r and decodes the GroupList; stderr must be
// empty unless allowStderr.
func idxGroups(t *testing.T, r runner, allowStderr bool, args ...string) (groupList, string) {
	t.Helper()
	args = append(slices.Clone(args), "-o", "json")
	res := r.idx(t, args...)
	mustSucceed(t, "kubectl-idx "+strings.Join(args, " "), res)
	if !allowStderr && res.Stderr != "" {
		t.Errorf("kubectl-idx %s: stderr not empty:\n%s", strings.Join(args, " "), res.Stderr)
	}
	var doc groupList
	mustDecode(t, "kubectl-idx "+strings.Join(args, " "), res.Stdout, &doc)
	if doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Kind != "GroupList" {
		t.Errorf("document is %s %s, want kubectl-idx.io/v1alpha1 GroupList", doc.APIVersion, doc.Kind)
	}
	var raw map[string]any
	_ = json.Unmarshal([]byte(res.Stdout), &raw)
	if _, ok := raw["warnings"].([]any); !ok {
		t.Errorf("warnings is not an array: %v", raw["warnings"])
	}
	for _, g := range doc.Groups {
		if g.Summary.Members != len(g.Items) {
			t.Errorf("group %s: summary.members %d, %d items", g.Name, g.Summary.Members, len(g.Items))
		}
		n := 0
		for _, c := range g.Summary.Kinds {
			n += c
		}
		if n != len(g.Items) {
			t.Errorf("group %s: summary.kinds %v add up to %d, %d items", g.Name, g.Summary.Kinds, n, len(g.Items))
		}
	}
	return doc, res.Stderr
}

// kubectlItems runs `kubectl get ARGS -o json` as r and returns the items.
func kubectlItems(t *testing.T, r runner, args ...string) []*unstructured.Unstructured {
	t.Helper()
	args = append(append([]string{"get"}, args...), "-o", "json")
	res := r.kubectl(t, args...)
	mustSucceed(t, "kubectl "+strings.Join(args, " "), res)
	return listItems(t, "kubectl "+strings.Join(args, " "), res.Stdout)
}

// settledPods runs answer between two listings of every pod by kubectl and
// returns the pods once both listings agree (same pods, same resourceVersions),
// so that an answer is compared with the cluster it was given on.
func settledPods(t *testing.T, r runner, answer func()) []*corev1.Pod {
	t.Helper()
	versions := func(items []*unstructured.Unstructured) []string {
		var out []string
		for _, u := range items {
			out = append(out, nsName(u)+"@"+u.GetResourceVersion())
		}
		slices.Sort(out)
		return out
	}
	for attempt := 1; ; attempt++ {
		before := kubectlItems(t, r, "pods", "-A")
		answer()
		after := kubectlItems(t, r, "pods", "-A")
		if slices.Equal(versions(before), versions(after)) {
			return typedAll[corev1.Pod](t, before)
		}
		if attempt == 10 {
			t.Fatalf("the pods kept changing around the answer %d times", attempt)
		}
		time.Sleep(time.Second)
	}
}

func nsName(o metav1.Object) string { return o.GetNamespace() + "/" + o.GetName() }

// ownerTruth is an object's top-level controller as the test computes it.
type ownerTruth struct {
	APIVersion, Kind, Namespace, Name, UID string
	Dangling, None                         bool
}

func (o ownerTruth) groupName() string {
	if o.None {
		return "<none>"
	}
	return o.Kind + "/" + o.Name
}

// ownerIndex holds every possible owner by UID, and which kinds are cluster-scoped.
type ownerIndex struct {
	byUID         map[types.UID]*unstructured.Unstructured
	clusterScoped map[string]bool
}

// ownerKinds are the kinds the fixtures' controller references name.
var ownerKinds = "pods,replicasets,jobs,deployments,statefulsets,daemonsets,cronjobs,rollouts.example.com,nodes"

// loadOwnerIndex reads every object of ownerKinds as the admin into an ownerIndex.
func loadOwnerIndex(t *testing.T) ownerIndex {
	t.Helper()
	return workloads{items: kubectlItems(t, as(""), ownerKinds, "-A")}.owners()
}

// top walks controller references from obj, as the README describes --by-owner.
func (x ownerIndex) top(t *testing.T, obj *unstructured.Unstructured) ownerTruth {
	t.Helper()
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return ownerTruth{None: true}
	}
	ns := obj.GetNamespace()
	for range 20 {
		owner, ok := x.byUID[ref.UID]
		if !ok {
			if x.clusterScoped[ref.Kind] {
				ns = ""
			}
			return ownerTruth{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ns, Name: ref.Name, UID: string(ref.UID), Dangling: true}
		}
		next := metav1.GetControllerOfNoCopy(owner)
		if next == nil {
			return ownerTruth{APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Namespace: owner.GetNamespace(), Name: owner.GetName(), UID: string(owner.GetUID())}
		}
		ns, ref = owner.GetNamespace(), next
	}
	t.Fatalf("owner chain of %s does not end", nsName(obj))
	return ownerTruth{}
}

// ownerKeyOf reads a group's key back into an ownerTruth, checking what the README says
// about its fields.
func ownerKeyOf(t *testing.T, g outputGroup) ownerTruth {
	t.Helper()
	k := g.Key
	got := ownerTruth{APIVersion: k.APIVersion, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, UID: k.UID, Dangling: k.Dangling, None: k.None}
	if got.groupName() != g.Name {
		t.Errorf("group %q has key %+v; its name should be %q", g.Name, k, got.groupName())
	}
	if k.Dangling && k.Reason == "" {
		t.Errorf("dangling group %s has no reason", g.Name)
	}
	return got
}

// ownerGroups runs `kubectl get ARGS -o json`, then `kubectl idx ARGS --by-owner -o json`
// as r, and checks the answer against the owners of what kubectl listed (checkOwnerGroups).
func ownerGroups(t *testing.T, r runner, owners ownerIndex, args ...string) groupList {
	t.Helper()
	members := kubectlItems(t, r, args...)
	doc, _ := idxGroups(t, r, false, append(slices.Clone(args), "--by-owner")...)
	checkOwnerGroups(t, doc, members, owners)
	return doc
}

// checkOwnerGroups compares a --by-owner document with the owners computed for members.
func checkOwnerGroups(t *testing.T, doc groupList, members []*unstructured.Unstructured, owners ownerIndex) {
	t.Helper()
	if doc.GroupBy != "owner" {
		t.Errorf("groupBy %q, want owner", doc.GroupBy)
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings for an admin: %q", doc.Warnings)
	}
	want := map[string]ownerTruth{}
	for _, m := range members {
		want[m.GetKind()+" "+nsName(m)] = owners.top(t, m)
	}
	got := map[string]ownerTruth{}
	var order []ownerTruth
	for _, g := range doc.Groups {
		key := ownerKeyOf(t, g)
		if g.Key.Unknown {
			t.Errorf("group %s is unknown for an admin: %s", g.Name, g.Key.Reason)
		}
		order = append(order, key)
		// Members come kind by kind, in the order the types were asked for, each kind's
		// sorted by namespace and name.
		var names, kinds []string
		byKind := map[string][]string{}
		for _, it := range g.Items {
			id := it.GetKind() + " " + nsName(it)
			if _, dup := got[id]; dup {
				t.Errorf("%s is in two groups", id)
			}
			got[id] = key
			names = append(names, id)
			if len(kinds) == 0 || kinds[len(kinds)-1] != it.GetKind() {
				kinds = append(kinds, it.GetKind())
			}
			byKind[it.GetKind()] = append(byKind[it.GetKind()], nsName(it))
		}
		sorted := len(kinds) == len(byKind)
		for _, members := range byKind {
			sorted = sorted && slices.IsSorted(members)
		}
		if !sorted {
			t.Errorf("members of %s are not kind by kind, sorted by namespace and name: %q", g.Name, names)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("top-level owner per object differs (-kubectl +kubectl-idx):\n%s", diff)
	}
	// Groups are sorted by kind, namespace and name; <none> comes last.
	sorted := slices.IsSortedFunc(order, func(a, b ownerTruth) int {
		if a.None != b.None {
			if a.None {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Kind+"/"+a.Namespace+"/"+a.Name, b.Kind+"/"+b.Namespace+"/"+b.Name)
	})
	if !sorted {
		t.Errorf("groups are not in order: %v", order)
	}
}

func TestGroupByOwner(t *testing.T) {
	t.Parallel()
	owners := loadOwnerIndex(t)
	r := as("")

	t.Run("pods", func(t *testing.T) {
		t.Parallel()
		doc := ownerGroups(t, r, owners, "pods", "-A")
		// The fixtures must exercise every kind of owner the README names.
		seen := map[string]bool{}
		for _, g := range doc.Groups {
			switch {
			case g.Key.None:
				seen["none"] = true
			case g.Key.Dangling:
				seen["dangling"] = true
			default:
				seen[g.Key.Kind] = true
			}
		}
		for _, k := range []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Rollout", "Node", "dangling", "none"} {
			if !seen[k] {
				t.Errorf("fixture problem: no pod resolves to a %s owner", k)
			}
		}
		for _, g := range doc.Groups {
			if g.Key.Kind == "Node" && g.Key.Namespace != "" {
				t.Errorf("cluster-scoped owner %s has namespace %q", g.Name, g.Key.Namespace)
			}
			if g.Key.Dangling && (g.Key.Name != fixtures.DanglingOwner || g.Key.UID != string(fixtures.DanglingUID) || g.Key.Namespace != fixtures.Rollouts) {
				t.Errorf("dangling group key %+v, want the reference to %s/%s", g.Key, fixtures.Rollouts, fixtures.DanglingOwner)
			}
		}
	})
	t.Run("replicasets and jobs", func(t *testing.T) {
		t.Parallel()
		doc := ownerGroups(t, r, owners, "rs,jobs", "-A")
		kinds := map[string]bool{}
		for _, g := range doc.Groups {
			kinds[g.Key.Kind] = true
		}
		for _, k := range []string{"Deployment", "CronJob", "Rollout"} {
			if !kinds[k] {
				t.Errorf("fixture problem: no ReplicaSet or Job under a %s", k)
			}
		}
	})
	t.Run("a label selector narrows members", func(t *testing.T) {
		t.Parallel()
		doc := ownerGroups(t, r, owners, "pods", "-n", fixtures.Shop, "-l", "app=web")
		if len(doc.Groups) != 1 || doc.Groups[0].Name != "Deployment/web" {
			t.Errorf("groups %v, want Deployment/web alone", groupNames(doc))
		}
	})
	t.Run("names narrow members", func(t *testing.T) {
		t.Parallel()
		all := kubectlItems(t, r, "pods", "-n", fixtures.Rollouts)
		var picked []*unstructured.Unstructured
		var args []string
		seen := map[string]bool{}
		// One pod per owner: the Rollout's, the Node's, a dangling one.
		for _, p := range all {
			k := owners.top(t, p).groupName()
			if !seen[k] {
				seen[k] = true
				picked = append(picked, p)
				args = append(args, p.GetName())
			}
		}
		if len(picked) < 3 {
			t.Fatalf("fixture problem: want pods of three owners in %s, got %v", fixtures.Rollouts, args)
		}
		res := r.idx(t, append([]string{"pods", "-n", fixtures.Rollouts, "--by-owner", "-o", "name"}, args...)...)
		mustSucceed(t, "kubectl-idx --by-owner NAME...", res)
		if want := nameLines(t, picked, owners, "pod"); res.Stdout != want {
			t.Errorf("stdout:\n%s\nwant:\n%s", res.Stdout, want)
		}
		if res.Stderr != "" {
			t.Errorf("stderr: %s", res.Stderr)
		}
	})
	t.Run("names", func(t *testing.T) {
		t.Parallel()
		pods := kubectlItems(t, r, "pods", "-A")
		res := r.idx(t, "pods", "-A", "--by-owner", "-o", "name")
		mustSucceed(t, "kubectl-idx pods -A --by-owner -o name", res)
		if want := nameLines(t, pods, owners, "pod"); res.Stdout != want {
			t.Errorf("-o name differs (-want +got):\n%s", cmp.Diff(want, res.Stdout))
		}
	})
	t.Run("human", func(t *testing.T) {
		t.Parallel()
		out := checkHuman(t, r, func(g outputGroup) string {
			if !g.Key.None && g.Key.Namespace != "" {
				return g.Name + " -n " + g.Key.Namespace + "  "
			}
			return g.Name + "  "
		}, "pods", "-A", "--by-owner")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "ReplicaSet/"+fixtures.DanglingOwner+" ") && !strings.Contains(line, "dangling") {
				t.Errorf("the dangling group's header does not say so: %q", line)
			}
		}
	})
}

// nameLines is the -o name output expected for members under their owners: groups sorted
// by kind, namespace and name with <none> last, members by namespace and name.
func nameLines(t *testing.T, members []*unstructured.Unstructured, owners ownerIndex, prefix string) string {
	t.Helper()
	type line struct {
		owner ownerTruth
		m     *unstructured.Unstructured
	}
	var lines []line
	for _, m := range members {
		lines = append(lines, line{owners.top(t, m), m})
	}
	sort.SliceStable(lines, func(i, j int) bool {
		a, b := lines[i], lines[j]
		if a.owner.None != b.owner.None {
			return !a.owner.None
		}
		ka, kb := a.owner.Kind+"/"+a.owner.Namespace+"/"+a.owner.Name, b.owner.Kind+"/"+b.owner.Namespace+"/"+b.owner.Name
		if ka != kb {
			return ka < kb
		}
		if a.m.GetNamespace() != b.m.GetNamespace() {
			return a.m.GetNamespace() < b.m.GetNamespace()
		}
		return a.m.GetName() < b.m.GetName()
	})
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s %s/%s\n", l.owner.groupName(), prefix, l.m.GetName())
	}
	return b.String()
}

func groupNames(doc groupList) []string {
	var out []string
	for _, g := range doc.Groups {
		out = append(out, g.Name)
	}
	return out
}

var columnHeader = regexp.MustCompile(`^  NAMESPACE +NAME +`)

// checkHuman runs `kubectl idx ARGS` as r with -o json, then for human output, and checks
// the human output against the JSON document: one header line per group, in order, starting
// with headerPrefix(group), and beneath it the group's members, one row each, in order.
// Output is across all namespaces (NAMESPACE NAME ...). It returns the human output.
func checkHuman(t *testing.T, r runner, headerPrefix func(outputGroup) string, args ...string) string {
	t.Helper()
	doc, _ := idxGroups(t, r, false, args...)
	res := r.idx(t, args...)
	mustSucceed(t, "kubectl-idx "+strings.Join(args, " "), res)
	var want []humanGroup
	for _, g := range doc.Groups {
		h := humanGroup{header: headerPrefix(g)}
		for _, it := range g.Items {
			h.rows = append(h.rows, nsName(it))
		}
		want = append(want, h)
	}
	checkGroupedHuman(t, res.Stdout, columnHeader, want)
	return res.Stdout
}

// humanGroup is one group as grouped human output must print it: a header line starting
// with header, then rows, each given as its cells before NAMESPACE and namespace/name,
// space-separated ("ns/name", or "alpha ns/name" where CONTEXT comes first).
type humanGroup struct {
	header string
	rows   []string
}

// checkGroupedHuman checks grouped human output: first the column header, which columns
// matches, then the groups of want, in order, each a header line and its rows indented
// beneath it.
func checkGroupedHuman(t *testing.T, out string, columns *regexp.Regexp, want []humanGroup) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) == 0 || !columns.MatchString(lines[0]) {
		t.Fatalf("first line is not the column header %s:\n%s", columns, out)
	}
	lead := slices.Index(strings.Fields(lines[0]), "NAMESPACE")
	var headers []string
	rows := map[int][]string{}
	for _, line := range lines[1:] {
		if strings.HasPrefix(line, "  ") {
			f := strings.Fields(line)
			if len(headers) == 0 || len(f) < lead+2 {
				t.Fatalf("row %q outside a group:\n%s", line, out)
			}
			row := append(f[:lead:lead], f[lead]+"/"+f[lead+1])
			rows[len(headers)-1] = append(rows[len(headers)-1], strings.Join(row, " "))
			continue
		}
		headers = append(headers, line)
	}
	if len(headers) != len(want) {
		t.Fatalf("%d group header lines, %d groups in -o json:\n%s", len(headers), len(want), out)
	}
	for i, g := range want {
		if !strings.HasPrefix(headers[i], g.header) {
			t.Errorf("header line %d = %q, want it to start with %q", i, headers[i], g.header)
		}
		if !slices.Equal(rows[i], g.rows) {
			t.Errorf("rows under %q: %q, want %q", headers[i], rows[i], g.rows)
		}
	}
}

// podRequests is the scheduler's rule, computed here from kubectl's JSON: the containers'
// sum or the largest init container, whichever is larger, plus overhead.
func podRequests(t *testing.T, p *corev1.Pod) (cpu, mem int64) {
	t.Helper()
	var sumCPU, sumMem, initCPU, initMem int64
	for _, c := range p.Spec.Containers {
		sumCPU += c.Resources.Requests.Cpu().MilliValue()
		sumMem += c.Resources.Requests.Memory().Value()
	}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil {
			t.Fatalf("fixture problem: %s has a sidecar init container; extend podRequests", nsName(p))
		}
		initCPU = max(initCPU, c.Resources.Requests.Cpu().MilliValue())
		initMem = max(initMem, c.Resources.Requests.Memory().Value())
	}
	cpu, mem = max(sumCPU, initCPU), max(sumMem, initMem)
	cpu += p.Spec.Overhead.Cpu().MilliValue()
	mem += p.Spec.Overhead.Memory().Value()
	return cpu, mem
}

// nodeTruth is what --by-node must say about a node, from kubectl's JSON.
func nodeTruth(t *testing.T, n *corev1.Node, pods []*corev1.Pod, includeCompleted bool) nodeSummary {
	t.Helper()
	status, ready := "Unknown", false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			switch c.Status {
			case corev1.ConditionTrue:
				status, ready = "Ready", true
			case corev1.ConditionFalse:
				status = "NotReady"
			}
		}
	}
	if n.Spec.Unschedulable {
		status += ",SchedulingDisabled"
	}
	roles := []string{}
	for k, v := range n.Labels {
		if r, ok := strings.CutPrefix(k, "node-role.kubernetes.io/"); ok && r != "" {
			roles = append(roles, r)
		} else if k == "kubernetes.io/role" && v != "" {
			roles = append(roles, v)
		}
	}
	slices.Sort(roles)
	roles = slices.Compact(roles)
	var cpu, mem int64
	for _, p := range pods {
		if p.Spec.NodeName != n.Name {
			continue
		}
		if !includeCompleted && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
			continue
		}
		c, m := podRequests(t, p)
		cpu, mem = cpu+c, mem+m
	}
	alloc := resources{CPUMillis: n.Status.Allocatable.Cpu().MilliValue(), MemoryBytes: n.Status.Allocatable.Memory().Value()}
	s := nodeSummary{
		Exists: true, Status: status, Ready: ready, Unschedulable: n.Spec.Unschedulable, Roles: roles,
		Requests: resources{CPUMillis: cpu, MemoryBytes: mem}, Allocatable: alloc,
	}
	if alloc.CPUMillis > 0 {
		s.CPUPercent = cpu * 100 / alloc.CPUMillis
	}
	if alloc.MemoryBytes > 0 {
		s.MemoryPercent = mem * 100 / alloc.MemoryBytes
	}
	return s
}

func TestGroupByNode(t *testing.T) {
	t.Parallel()
	r := as("")
	nodes := typedAll[corev1.Node](t, kubectlItems(t, r, "nodes"))
	pods := typedAll[corev1.Pod](t, kubectlItems(t, r, "pods", "-A"))
	// Fixture checks: an empty node, a completed pod with requests, an unscheduled pod.
	var terminal, unscheduled int
	for _, p := range pods {
		if c, _ := podRequests(t, p); c > 0 && p.Status.Phase == corev1.PodSucceeded && p.Spec.NodeName != "" {
			terminal++
		}
		if p.Spec.NodeName == "" {
			unscheduled++
		}
	}
	if terminal == 0 || unscheduled == 0 {
		t.Fatalf("fixture problem: want a Succeeded pod with requests on a node (%d) and an unscheduled pod (%d)", terminal, unscheduled)
	}

	for _, includeCompleted := range []bool{false, true} {
		name := "requests of running pods"
		args := []string{"pods", "-A", "--by-node"}
		if includeCompleted {
			name = "--include-completed"
			args = append(args, "--include-completed")
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// Other tests create pods in their own namespaces meanwhile:
			// the truth is the pods as they were before and after the answer.
			var doc groupList
			pods := settledPods(t, r, func() { doc, _ = idxGroups(t, r, false, args...) })
			if doc.GroupBy != "node" {
				t.Errorf("groupBy %q", doc.GroupBy)
			}
			// Every node, sorted, then <none> for the unscheduled pods.
			var want []string
			for _, n := range nodes {
				want = append(want, n.Name)
			}
			slices.Sort(want)
			want = append(want, "<none>")
			if got := groupNames(doc); !slices.Equal(got, want) {
				t.Errorf("groups %q, want %q", got, want)
			}
			byName := map[string]outputGroup{}
			for _, g := range doc.Groups {
				byName[g.Name] = g
			}
			for _, n := range nodes {
				g := byName[n.Name]
				if g.Key.Node != n.Name || g.Key.None {
					t.Errorf("node %s: key %+v", n.Name, g.Key)
				}
				var wantMembers, gotMembers []string
				for _, p := range pods {
					if p.Spec.NodeName == n.Name {
						wantMembers = append(wantMembers, nsName(p))
					}
				}
				slices.Sort(wantMembers)
				for _, it := range g.Items {
					gotMembers = append(gotMembers, nsName(it))
				}
				if !slices.Equal(gotMembers, wantMembers) {
					t.Errorf("node %s: members %q, want %q", n.Name, gotMembers, wantMembers)
				}
				if g.Summary.Node == nil {
					t.Errorf("node %s: no node summary", n.Name)
					continue
				}
				got := *g.Summary.Node
				for what, q := range map[string]string{"requests.cpu": got.Requests.CPU, "requests.memory": got.Requests.Memory, "allocatable.cpu": got.Allocatable.CPU, "allocatable.memory": got.Allocatable.Memory} {
					if _, err := resource.ParseQuantity(q); err != nil {
						t.Errorf("node %s: %s %q is not a quantity", n.Name, what, q)
					}
				}
				if q := resource.MustParse(got.Requests.CPU); q.MilliValue() != got.Requests.CPUMillis {
					t.Errorf("node %s: requests.cpu %s is not cpuMillis %d", n.Name, got.Requests.CPU, got.Requests.CPUMillis)
				}
				if q := resource.MustParse(got.Requests.Memory); q.Value() != got.Requests.MemoryBytes {
					t.Errorf("node %s: requests.memory %s is not memoryBytes %d", n.Name, got.Requests.Memory, got.Requests.MemoryBytes)
				}
				got.Requests.CPU, got.Requests.Memory, got.Allocatable.CPU, got.Allocatable.Memory = "", "", "", ""
				if diff := cmp.Diff(nodeTruth(t, n, pods, includeCompleted), got); diff != "" {
					t.Errorf("node %s summary differs (-kubectl +kubectl-idx):\n%s", n.Name, diff)
				}
			}
			none := byName["<none>"]
			var wantNone, gotNone []string
			for _, p := range pods {
				if p.Spec.NodeName == "" {
					wantNone = append(wantNone, nsName(p))
				}
			}
			slices.Sort(wantNone)
			for _, it := range none.Items {
				gotNone = append(gotNone, nsName(it))
			}
			if !none.Key.None || !slices.Equal(gotNone, wantNone) {
				t.Errorf("<none>: key %+v, members %q, want unscheduled %q", none.Key, gotNone, wantNone)
			}
			empty := byName[fixtures.EmptyNode]
			if len(empty.Items) != 0 || empty.Items == nil {
				t.Errorf("fixture problem: %s should have no pods, has %d", fixtures.EmptyNode, len(empty.Items))
			}
		})
	}
	t.Run("human", func(t *testing.T) {
		t.Parallel()
		out := checkHuman(t, r, func(g outputGroup) string {
			if n := g.Summary.Node; n != nil {
				return g.Name + "  " + n.Status + "  "
			}
			return g.Name + "  "
		}, "pods", "-A", "--by-node")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, fixtures.EmptyNode+"  ") && !strings.HasSuffix(line, "  0 pods") {
				t.Errorf("header of the empty node %q does not end with 0 pods", line)
			}
		}
	})
	t.Run("names", func(t *testing.T) {
		t.Parallel()
		var res testenv.Result
		pods := settledPods(t, r, func() { res = r.idx(t, "pods", "-A", "--by-node", "-o", "name") })
		mustSucceed(t, "kubectl-idx pods -A --by-node -o name", res)
		type line struct{ group, ns, name string }
		var lines []line
		for _, p := range pods {
			g := p.Spec.NodeName
			if g == "" {
				g = "~" // <none> sorts last
			}
			lines = append(lines, line{g, p.Namespace, p.Name})
		}
		sort.Slice(lines, func(i, j int) bool {
			a, b := lines[i], lines[j]
			if a.group != b.group {
				return a.group < b.group
			}
			if a.ns != b.ns {
				return a.ns < b.ns
			}
			return a.name < b.name
		})
		var want strings.Builder
		for _, l := range lines {
			fmt.Fprintf(&want, "%s pod/%s\n", strings.Replace(l.group, "~", "<none>", 1), l.name)
		}
		if res.Stdout != want.String() {
			t.Errorf("-o name differs (-want +got):\n%s", cmp.Diff(want.String(), res.Stdout))
		}
	})
	t.Run("a namespace narrows requests", func(t *testing.T) {
		t.Parallel()
		doc, _ := idxGroups(t, r, false, "pods", "-n", fixtures.Shop, "--by-node")
		var shop []*corev1.Pod
		for _, p := range pods {
			if p.Namespace == fixtures.Shop {
				shop = append(shop, p)
			}
		}
		for _, n := range nodes {
			for _, g := range doc.Groups {
				if g.Name != n.Name || g.Summary.Node == nil {
					continue
				}
				want := nodeTruth(t, n, shop, false).Requests
				if got := g.Summary.Node.Requests; got.CPUMillis != want.CPUMillis || got.MemoryBytes != want.MemoryBytes {
					t.Errorf("node %s with -n %s: requests %+v, want %dm and %d bytes", n.Name, fixtures.Shop, got, want.CPUMillis, want.MemoryBytes)
				}
			}
		}
		if len(doc.Groups) < len(nodes) {
			t.Errorf("groups %q: every node must be listed, with or without pods", groupNames(doc))
		}
	})
}

// keyedTruth groups items by key (ok false: <none>) the way kubectl-idx must: groups by
// name, <none> last, members in the order of types, then namespace and name.
func keyedTruth(items []*unstructured.Unstructured, typeOrder []string, key func(*unstructured.Unstructured) (string, bool)) (names []string, members map[string][]string) {
	members = map[string][]string{}
	sorted := slices.Clone(items)
	rank := func(u *unstructured.Unstructured) int { return slices.Index(typeOrder, u.GetKind()) }
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
	hasNone := false
	for _, it := range sorted {
		k, ok := key(it)
		if !ok {
			k, hasNone = "<none>", true
		} else if _, seen := members[k]; !seen {
			names = append(names, k)
		}
		members[k] = append(members[k], it.GetKind()+" "+nsName(it))
	}
	slices.Sort(names)
	if hasNone {
		names = append(names, "<none>")
	}
	return names, members
}

func docMembers(doc groupList) map[string][]string {
	out := map[string][]string{}
	for _, g := range doc.Groups {
		out[g.Name] = []string{}
		for _, it := range g.Items {
			out[g.Name] = append(out[g.Name], it.GetKind()+" "+nsName(it))
		}
	}
	return out
}

func TestGroupByKey(t *testing.T) {
	t.Parallel()
	r := as("")
	tests := []struct {
		name string
		args []string
		// kubectlArgs are the `kubectl get` arguments listing the same objects.
		kubectlArgs []string
		typeOrder   []string
		groupBy     string
		key         func(*unstructured.Unstructured) (string, bool)
		// wantNone: the fixtures must put some objects in <none>.
		wantNone bool
	}{
		{
			name: "label", args: []string{"deploy,svc,pods", "-n", fixtures.Shop, "--by-label", "app"},
			kubectlArgs: []string{"deploy,svc,pods", "-n", fixtures.Shop}, typeOrder: []string{"Deployment", "Service", "Pod"}, groupBy: "label",
			key: func(u *unstructured.Unstructured) (string, bool) {
				v, ok := u.GetLabels()["app"]
				return "app=" + v, ok
			},
		},
		{
			name: "label across namespaces", args: []string{"pods", "-A", "--by-label", "tier"},
			kubectlArgs: []string{"pods", "-A"}, typeOrder: []string{"Pod"}, groupBy: "label", wantNone: true,
			key: func(u *unstructured.Unstructured) (string, bool) {
				v, ok := u.GetLabels()["tier"]
				return "tier=" + v, ok
			},
		},
		{
			name: "namespace", args: []string{"pods", "-A", "--by-namespace"},
			kubectlArgs: []string{"pods", "-A"}, typeOrder: []string{"Pod"}, groupBy: "namespace",
			key: func(u *unstructured.Unstructured) (string, bool) { return u.GetNamespace(), true },
		},
		{
			name: "JSONPath", args: []string{"pods", "-A", "--by", "{.spec.serviceAccountName}"},
			kubectlArgs: []string{"pods", "-A"}, typeOrder: []string{"Pod"}, groupBy: "jsonpath",
			key: func(u *unstructured.Unstructured) (string, bool) {
				v, ok, _ := unstructured.NestedString(u.Object, "spec", "serviceAccountName")
				return v, ok
			},
		},
		{
			name: "JSONPath with a label selector", args: []string{"pods", "-A", "-l", "tier", "--by", "{.spec.nodeName}"},
			kubectlArgs: []string{"pods", "-A", "-l", "tier"}, typeOrder: []string{"Pod"}, groupBy: "jsonpath", wantNone: true,
			key: func(u *unstructured.Unstructured) (string, bool) {
				v, ok, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
				return v, ok && v != ""
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			items := kubectlItems(t, r, tc.kubectlArgs...)
			wantNames, wantMembers := keyedTruth(items, tc.typeOrder, tc.key)
			if len(wantNames) < 2 || tc.wantNone && !slices.Contains(wantNames, "<none>") {
				t.Fatalf("fixture problem: groups %q", wantNames)
			}
			doc, _ := idxGroups(t, r, false, tc.args...)
			if doc.GroupBy != tc.groupBy {
				t.Errorf("groupBy %q, want %q", doc.GroupBy, tc.groupBy)
			}
			if got := groupNames(doc); !slices.Equal(got, wantNames) {
				t.Errorf("groups %q, want %q", got, wantNames)
			}
			if diff := cmp.Diff(wantMembers, docMembers(doc)); diff != "" {
				t.Errorf("members differ (-kubectl +kubectl-idx):\n%s", diff)
			}
			for _, g := range doc.Groups {
				if g.Name == "<none>" != g.Key.None {
					t.Errorf("group %s: key.none %v", g.Name, g.Key.None)
				}
			}
		})
	}

	t.Run("label, human", func(t *testing.T) {
		t.Parallel()
		args := []string{"deploy,svc,pods", "-n", fixtures.Shop, "--by-label", "app"}
		doc, _ := idxGroups(t, r, false, args...)
		res := r.idx(t, args...)
		mustSucceed(t, "kubectl-idx "+strings.Join(args, " "), res)
		var headers []string
		rows := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n") {
			switch {
			case line == "":
			case strings.HasPrefix(line, "  NAME "):
			case strings.HasPrefix(line, "  "):
				rows[headers[len(headers)-1]] = append(rows[headers[len(headers)-1]], strings.Fields(line)[0])
			default:
				headers = append(headers, line)
			}
		}
		if len(headers) != len(doc.Groups) {
			t.Fatalf("%d header lines for %d groups:\n%s", len(headers), len(doc.Groups), res.Stdout)
		}
		for i, g := range doc.Groups {
			if !strings.HasPrefix(headers[i], g.Name+"  ") {
				t.Errorf("header %q, want it to start with %q", headers[i], g.Name)
			}
			var want []string
			for _, it := range g.Items {
				kind := strings.ToLower(it.GetKind())
				if gv := it.GetAPIVersion(); strings.Contains(gv, "/") {
					kind += "." + strings.Split(gv, "/")[0]
				}
				want = append(want, kind+"/"+it.GetName())
			}
			if !slices.Equal(rows[headers[i]], want) {
				t.Errorf("rows under %q: %q, want %q", headers[i], rows[headers[i]], want)
			}
		}
	})
}

// TestGroupBadInput: each grouping error through the real binary: exit 1, nothing on
// stdout, one line on stderr.
func TestGroupBadInput(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"pods", "--by-owner", "--by-node"}, "error: --by-owner and --by-node cannot be used together: choose one grouping"},
		{[]string{"pods", "--by-label="}, "error: --by-label needs a label key, e.g. --by-label app"},
		{[]string{"pods", "--by-label"}, "error: flag needs an argument: --by-label"},
		{[]string{"pods", "--by", "{.spec.containers[}"}, `error: invalid JSONPath in --by: invalid JSONPath expression "{.spec.containers[}": unterminated array`},
		{[]string{"deploy", "--by-node"}, "error: --by-node groups objects by the node they run on; deployments.apps have no node (use it with pods)"},
		{[]string{"pods", "--include-completed"}, "error: --include-completed only applies to --by-node"},
		{[]string{"pods", "--by-owner", "--include-completed"}, "error: --include-completed only applies to --by-node"},
		{[]string{"pods", "--by-namespace", "--sort-by", "{.metadata.name}"}, "error: --sort-by cannot be used with grouping: groups and their members are sorted by key and name"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			failsWith(t, as("").idx(t, tc.args...), regexp.QuoteMeta(tc.want), cmdTimeout)
		})
	}
}

// TestGroupByOwnerNarrowUser: a user who may list pods in one namespace and nothing else
// still gets an answer, with the owners above ReplicaSets and StatefulSets marked unknown
// and a warning for each kind.
func TestGroupByOwnerNarrowUser(t *testing.T) {
	t.Parallel()
	r := as(narrowUser)
	pods := kubectlItems(t, r, "pods", "-n", fixtures.Shop)

	res := r.idx(t, "pods", "-n", fixtures.Shop, "--by-owner")
	mustSucceed(t, "kubectl-idx pods -n shop --by-owner as "+narrowUser, res)
	warnings := stderrLines(res.Stderr)
	if len(warnings) == 0 {
		t.Fatalf("no warning on stderr:\n%s", res)
	}
	for _, w := range warnings {
		if !strings.HasPrefix(w, "warning: owners above ") {
			t.Errorf("stderr line %q is not a warning about owners", w)
		}
	}
	if !slices.ContainsFunc(warnings, func(w string) bool {
		return strings.HasPrefix(w, "warning: owners above ReplicaSet.apps are unknown: ")
	}) {
		t.Errorf("no warning about ReplicaSet.apps: %q", warnings)
	}
	for _, p := range pods {
		if !strings.Contains(res.Stdout, p.GetName()) {
			t.Errorf("human output lacks pod %s:\n%s", p.GetName(), res.Stdout)
		}
	}
	if !strings.Contains(res.Stdout, "owners above unknown") {
		t.Errorf("no group header says its owner is unknown:\n%s", res.Stdout)
	}

	doc, stderr := idxGroups(t, r, true, "pods", "-n", fixtures.Shop, "--by-owner")
	if len(doc.Warnings) == 0 {
		t.Errorf("-o json: warnings is empty")
	}
	var fromStderr []string
	for _, w := range stderrLines(stderr) {
		fromStderr = append(fromStderr, strings.TrimPrefix(w, "warning: "))
	}
	if !slices.Equal(doc.Warnings, fromStderr) {
		t.Errorf("-o json warnings %q, stderr %q: want the same", doc.Warnings, fromStderr)
	}
	var got []string
	for _, g := range doc.Groups {
		if !g.Key.None && !g.Key.Unknown {
			t.Errorf("group %s is neither <none> nor unknown for a user who may not read owners: %+v", g.Name, g.Key)
		}
		if g.Key.Unknown && (g.Key.Reason == "" || g.Key.Kind == "") {
			t.Errorf("unknown group %s: key %+v", g.Name, g.Key)
		}
		for _, it := range g.Items {
			got = append(got, it.GetName())
		}
	}
	var want []string
	for _, p := range pods {
		want = append(want, p.GetName())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("pods in the answer %q, want every pod %s may list %q", got, narrowUser, want)
	}
}
