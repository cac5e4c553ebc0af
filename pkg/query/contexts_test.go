package query

// An internal test: addResources and addNode are the arithmetic
// MergeGroupLists relies on, and their edge cases are easier to reach
// directly than through whole documents.

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

var (
	ctxPodGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	ctxCMGVK  = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

func ctxObj(kind, ns, name string) runtime.Object {
	meta := metav1.ObjectMeta{Namespace: ns, Name: name}
	if kind == "ConfigMap" {
		return &corev1.ConfigMap{ObjectMeta: meta}
	}
	return &corev1.Pod{ObjectMeta: meta}
}

// ctxGroup is a group named name with key, holding pods named pods and
// configmaps named cms, its summary counting them.
func ctxGroup(name string, key v1alpha1.GroupKey, pods, cms []string) v1alpha1.Group {
	g := v1alpha1.Group{Name: name, Key: key, Summary: v1alpha1.GroupSummary{Kinds: map[string]int{}}}
	for _, kind := range []struct {
		gvk   schema.GroupVersionKind
		names []string
	}{{ctxPodGVK, pods}, {ctxCMGVK, cms}} {
		if len(kind.names) == 0 {
			continue
		}
		m := v1alpha1.Members{GVK: kind.gvk, Namespaced: true}
		for _, n := range kind.names {
			m.Objects = append(m.Objects, ctxObj(kind.gvk.Kind, "shop", n))
		}
		g.Members = append(g.Members, m)
		g.Summary.Kinds[kind.gvk.Kind] = len(kind.names)
	}
	if len(pods) > 0 {
		g.Summary.Pods = &v1alpha1.PodSummary{Total: len(pods), Ready: len(pods), Running: len(pods)}
	}
	g.Summary.Members = len(pods) + len(cms)
	return g
}

func ownerKey(kind, ns, name string) v1alpha1.GroupKey {
	return v1alpha1.GroupKey{APIVersion: "apps/v1", Kind: kind, Namespace: ns, Name: name, UID: "uid-" + name}
}

func strp(s string) *string { return &s }

// memberNames lists a group's members as context/kind/name.
func memberNames(g v1alpha1.Group) []string {
	var out []string
	for _, m := range g.Members {
		for _, o := range m.Objects {
			var name string
			switch v := o.(type) {
			case *corev1.Pod:
				name = v.Name
			case *corev1.ConfigMap:
				name = v.Name
			}
			out = append(out, m.Context+"/"+m.GVK.Kind+"/"+name)
		}
	}
	return out
}

// groupLine is a merged group as the tests compare it.
type groupLine struct {
	Name     string
	Context  string // key.context
	None     bool
	Members  []string
	Contexts []string
	Count    int
	Kinds    map[string]int
}

func linesOf(doc *v1alpha1.GroupList) []groupLine {
	var out []groupLine
	for _, g := range doc.Groups {
		l := groupLine{Name: g.Name, Context: g.Key.Context, None: g.Key.None, Members: memberNames(g), Count: g.Summary.Members, Kinds: g.Summary.Kinds}
		for _, c := range g.Contexts {
			l.Contexts = append(l.Contexts, c.Context)
		}
		out = append(out, l)
	}
	return out
}

func TestMergeGroupListsOwner(t *testing.T) {
	none := v1alpha1.GroupKey{None: true}
	prod := &v1alpha1.GroupList{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: GroupByOwner,
		Groups: []v1alpha1.Group{
			ctxGroup("Deployment/web", ownerKey("Deployment", "shop", "web"), []string{"web-a"}, nil),
			ctxGroup("StatefulSet/db", ownerKey("StatefulSet", "shop", "db"), []string{"db-0"}, nil),
			ctxGroup("<none>", none, []string{"lonely-prod"}, []string{"cfg"}),
		},
		AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{"owners above Widget.example.com are unknown: forbidden"}},
	}
	staging := &v1alpha1.GroupList{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: GroupByOwner,
		Groups: []v1alpha1.Group{
			ctxGroup("Deployment/api", ownerKey("Deployment", "shop", "api"), []string{"api-a"}, nil),
			ctxGroup("Deployment/web", ownerKey("Deployment", "shop", "web"), []string{"web-b", "web-c"}, nil),
			ctxGroup("<none>", none, []string{"lonely-staging"}, nil),
		},
		AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{}},
	}
	prodCopy, stagingCopy := deepCopyGroupList(prod), deepCopyGroupList(staging)

	got := MergeGroupLists(groupings("prod", prod, "staging", staging))

	if got.APIVersion != v1alpha1.SchemeGroupVersion.String() || got.Kind != v1alpha1.GroupListKind || got.GroupBy != GroupByOwner {
		t.Errorf("document %s %s groupBy %q, want %s %s owner", got.APIVersion, got.Kind, got.GroupBy, v1alpha1.SchemeGroupVersion, v1alpha1.GroupListKind)
	}
	want := []groupLine{
		// Two clusters' Deployment/web are two controllers: two groups, by
		// kind, namespace and name, then in the contexts' order.
		{Name: "Deployment/api", Context: "staging", Members: []string{"staging/Pod/api-a"}, Contexts: []string{"staging"}, Count: 1, Kinds: map[string]int{"Pod": 1}},
		{Name: "Deployment/web", Context: "prod", Members: []string{"prod/Pod/web-a"}, Contexts: []string{"prod"}, Count: 1, Kinds: map[string]int{"Pod": 1}},
		{Name: "Deployment/web", Context: "staging", Members: []string{"staging/Pod/web-b", "staging/Pod/web-c"}, Contexts: []string{"staging"}, Count: 2, Kinds: map[string]int{"Pod": 2}},
		{Name: "StatefulSet/db", Context: "prod", Members: []string{"prod/Pod/db-0"}, Contexts: []string{"prod"}, Count: 1, Kinds: map[string]int{"Pod": 1}},
		// Objects without an owner are one group, last, whatever cluster.
		{
			Name: "<none>", None: true,
			Members:  []string{"prod/Pod/lonely-prod", "prod/ConfigMap/cfg", "staging/Pod/lonely-staging"},
			Contexts: []string{"prod", "staging"}, Count: 3, Kinds: map[string]int{"Pod": 2, "ConfigMap": 1},
		},
	}
	if gotLines := linesOf(got); !reflect.DeepEqual(gotLines, want) {
		t.Errorf("groups:\n%+v\nwant:\n%+v", gotLines, want)
	}
	if len(got.Warnings) != 0 {
		t.Errorf("warnings %q: each context's are the report's to word", got.Warnings)
	}
	// The owner's own key is kept beside its context.
	if len(got.Groups) > 1 {
		k := got.Groups[1].Key
		if k.APIVersion != "apps/v1" || k.Kind != "Deployment" || k.Namespace != "shop" || k.Name != "web" || k.UID != "uid-web" {
			t.Errorf("Deployment/web key %+v lost the owner's fields", k)
		}
	}
	if last := got.Groups[len(got.Groups)-1]; last.Key.Context != "" {
		t.Errorf("the <none> group has key.context %q, want none: it gathers every context", last.Key.Context)
	}
	if !apiequality.Semantic.DeepEqual(prod, prodCopy) || !apiequality.Semantic.DeepEqual(staging, stagingCopy) {
		t.Error("MergeGroupLists changed the contexts' documents")
	}
}

// groupings are the answers of contexts named and their groupings, given
// in pairs: a context without one (nil) failed.
func groupings(pairs ...any) []Answer[*Listing] {
	var out []Answer[*Listing]
	for i := 0; i < len(pairs); i += 2 {
		a := Answer[*Listing]{Context: pairs[i].(string)}
		if doc, _ := pairs[i+1].(*v1alpha1.GroupList); doc != nil {
			a.Value = &Listing{Groups: doc}
		}
		out = append(out, a)
	}
	return out
}

// deepCopyGroupList copies what MergeGroupLists could change in doc: keys,
// summaries and members (objects are shared read-only cache objects).
func deepCopyGroupList(doc *v1alpha1.GroupList) *v1alpha1.GroupList {
	c := *doc
	c.Warnings = append([]string(nil), doc.Warnings...)
	c.Groups = nil
	for _, g := range doc.Groups {
		gc := g
		if g.Key.Value != nil {
			gc.Key.Value = strp(*g.Key.Value)
		}
		gc.Members = append([]v1alpha1.Members(nil), g.Members...)
		gc.Summary = copySummary(g.Summary)
		c.Groups = append(c.Groups, gc)
	}
	return &c
}

func copySummary(s v1alpha1.GroupSummary) v1alpha1.GroupSummary {
	c := s
	if s.Kinds != nil {
		c.Kinds = map[string]int{}
		for k, v := range s.Kinds {
			c.Kinds[k] = v
		}
	}
	if s.Pods != nil {
		p := *s.Pods
		c.Pods = &p
	}
	if s.Node != nil {
		n := *s.Node
		n.Roles = append([]string(nil), s.Node.Roles...)
		c.Node = &n
	}
	if s.Resources != nil {
		r := *s.Resources
		c.Resources = &r
	}
	return c
}

func TestMergeGroupListsLabel(t *testing.T) {
	app := func(v string) v1alpha1.GroupKey { return v1alpha1.GroupKey{Value: strp(v)} }
	none := v1alpha1.GroupKey{None: true}
	prod := &v1alpha1.GroupList{
		GroupBy: GroupByLabel, Expression: "app",
		Groups: []v1alpha1.Group{
			ctxGroup("web", app("web"), []string{"web-a", "web-b"}, []string{"web-cfg"}),
			ctxGroup("<none>", none, []string{"x"}, nil),
		},
	}
	staging := &v1alpha1.GroupList{
		GroupBy: GroupByLabel, Expression: "app",
		Groups: []v1alpha1.Group{
			ctxGroup("api", app("api"), []string{"api-a"}, nil),
			ctxGroup("web", app("web"), []string{"web-c"}, nil),
		},
		AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{"configmaps: forbidden"}},
	}
	got := MergeGroupLists(groupings("prod", prod, "staging", staging))

	if got.GroupBy != GroupByLabel || got.Expression != "app" {
		t.Errorf("groupBy %q expression %q, want label app", got.GroupBy, got.Expression)
	}
	want := []groupLine{
		{Name: "api", Members: []string{"staging/Pod/api-a"}, Contexts: []string{"staging"}, Count: 1, Kinds: map[string]int{"Pod": 1}},
		{
			Name:     "web",
			Members:  []string{"prod/Pod/web-a", "prod/Pod/web-b", "prod/ConfigMap/web-cfg", "staging/Pod/web-c"},
			Contexts: []string{"prod", "staging"}, Count: 4, Kinds: map[string]int{"Pod": 3, "ConfigMap": 1},
		},
		{Name: "<none>", None: true, Members: []string{"prod/Pod/x"}, Contexts: []string{"prod"}, Count: 1, Kinds: map[string]int{"Pod": 1}},
	}
	if gotLines := linesOf(got); !reflect.DeepEqual(gotLines, want) {
		t.Errorf("groups:\n%+v\nwant:\n%+v", gotLines, want)
	}
	if len(got.Groups) != 3 {
		t.FailNow()
	}
	web := got.Groups[1]
	if web.Key.Value == nil || *web.Key.Value != "web" || web.Key.Context != "" {
		t.Errorf("web key %+v, want value web and no context", web.Key)
	}
	// The group's summary adds up the contexts'; each context keeps its own.
	if p := web.Summary.Pods; p == nil || *p != (v1alpha1.PodSummary{Total: 3, Ready: 3, Running: 3}) {
		t.Errorf("web pods %+v, want 3 total, ready, running", p)
	}
	if len(web.Contexts) == 2 {
		if s := web.Contexts[0].Summary; s.Members != 3 || s.Pods == nil || s.Pods.Total != 2 {
			t.Errorf("prod's part of web: %+v, want 3 members, 2 pods", s)
		}
		if s := web.Contexts[1].Summary; s.Members != 1 || s.Pods == nil || s.Pods.Total != 1 {
			t.Errorf("staging's part of web: %+v, want 1 member, 1 pod", s)
		}
	}
}

// TestMergeGroupListsValueVersusNone: a label's empty value is a group of its
// own, not the <none> group of objects without the label.
func TestMergeGroupListsValueVersusNone(t *testing.T) {
	a := &v1alpha1.GroupList{GroupBy: GroupByLabel, Groups: []v1alpha1.Group{ctxGroup("", v1alpha1.GroupKey{Value: strp("")}, []string{"a"}, nil)}}
	b := &v1alpha1.GroupList{GroupBy: GroupByLabel, Groups: []v1alpha1.Group{ctxGroup("<none>", v1alpha1.GroupKey{None: true}, []string{"b"}, nil)}}
	got := MergeGroupLists(groupings("a", a, "b", b))
	if len(got.Groups) != 2 || got.Groups[0].Key.None || !got.Groups[1].Key.None {
		t.Errorf("groups %+v, want the empty value then <none>", linesOf(got))
	}
}

func TestMergeGroupListsEmpty(t *testing.T) {
	got := MergeGroupLists(groupings("down", nil, "empty", &v1alpha1.GroupList{GroupBy: GroupByNamespace}))
	if got.GroupBy != GroupByNamespace {
		t.Errorf("groupBy %q, want namespace", got.GroupBy)
	}
	if got.Groups == nil || len(got.Groups) != 0 {
		t.Errorf("groups %#v, want an empty list (JSON [])", got.Groups)
	}
}

// nodeGroup is a --by-node group of node with pods and the node's summary.
func nodeGroup(node string, pods []string, ns *v1alpha1.NodeSummary, res *v1alpha1.ResourceSummary) v1alpha1.Group {
	g := ctxGroup(node, v1alpha1.GroupKey{Node: node}, pods, nil)
	g.Summary.Node, g.Summary.Resources = ns, res
	return g
}

func res(cpuMillis, memBytes int64, other map[string]string) v1alpha1.Resources {
	return addResources(v1alpha1.Resources{CPUMillis: cpuMillis, MemoryBytes: memBytes, Other: other}, v1alpha1.Resources{})
}

const gi = int64(1) << 30

func TestMergeGroupListsNode(t *testing.T) {
	prodNode := &v1alpha1.NodeSummary{
		Exists: true, Status: "Ready", Ready: true, Roles: []string{"worker"},
		Requests: res(500, 1*gi, nil), Limits: res(1000, 2*gi, nil),
		Allocatable:   res(2000, 4*gi, map[string]string{"pods": "110", "nvidia.com/gpu": "1"}),
		CPUPercent:    25,
		MemoryPercent: 25,
	}
	stagingNode := &v1alpha1.NodeSummary{
		Exists: true, Status: "NotReady", Ready: false, Roles: []string{"control-plane"},
		Requests: res(1000, 2*gi, nil), Limits: res(0, 0, nil),
		Allocatable:   res(2000, 4*gi, map[string]string{"pods": "110", "nvidia.com/gpu": "2"}),
		CPUPercent:    50,
		MemoryPercent: 50,
	}
	prodRes := &v1alpha1.ResourceSummary{Pods: 2, Requests: res(500, 1*gi, nil), Limits: res(1000, 2*gi, nil)}
	stagingRes := &v1alpha1.ResourceSummary{Pods: 1, Requests: res(1000, 2*gi, map[string]string{"nvidia.com/gpu": "1"}), Limits: res(0, 0, nil)}
	other := &v1alpha1.NodeSummary{Exists: true, Status: "Ready", Ready: true, Roles: []string{}, Allocatable: res(1000, gi, nil)}
	prod := &v1alpha1.GroupList{GroupBy: GroupByNode, Groups: []v1alpha1.Group{
		nodeGroup("node-1", []string{"a", "b"}, prodNode, prodRes),
		ctxGroup("<none>", v1alpha1.GroupKey{None: true}, []string{"pending"}, nil),
	}}
	staging := &v1alpha1.GroupList{GroupBy: GroupByNode, Groups: []v1alpha1.Group{
		nodeGroup("node-0", nil, other, nil),
		nodeGroup("node-1", []string{"c"}, stagingNode, stagingRes),
	}}
	prodNodeCopy := *prodNode

	got := MergeGroupLists(groupings("prod", prod, "staging", staging))

	var names []string
	for _, g := range got.Groups {
		names = append(names, g.Name)
	}
	if want := []string{"node-0", "node-1", "<none>"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("groups %q, want %q", names, want)
	}
	n1 := got.Groups[1]
	if n1.Key.Node != "node-1" || n1.Key.Context != "" {
		t.Errorf("node-1 key %+v, want node node-1 and no context", n1.Key)
	}
	if n1.Summary.Members != 3 || n1.Summary.Pods == nil || n1.Summary.Pods.Total != 3 {
		t.Errorf("node-1 summary %+v, want 3 members, 3 pods", n1.Summary)
	}
	node := n1.Summary.Node
	if node == nil {
		t.Fatal("node-1 has no node summary")
	}
	wantNode := v1alpha1.NodeSummary{
		Exists: true, Status: "Ready,NotReady", Ready: false, Roles: []string{"control-plane", "worker"},
		Requests: v1alpha1.Resources{CPU: "1500m", Memory: "3Gi", CPUMillis: 1500, MemoryBytes: 3 * gi},
		Limits:   v1alpha1.Resources{CPU: "1", Memory: "2Gi", CPUMillis: 1000, MemoryBytes: 2 * gi},
		Allocatable: v1alpha1.Resources{CPU: "4", Memory: "8Gi", CPUMillis: 4000, MemoryBytes: 8 * gi,
			Other: map[string]string{"pods": "220", "nvidia.com/gpu": "3"}},
		// Requests over allocatable of both: 1500m of 4 CPUs, 3Gi of 8Gi.
		CPUPercent: 37, MemoryPercent: 37,
	}
	if !reflect.DeepEqual(*node, wantNode) {
		t.Errorf("node-1 node summary:\n%+v\nwant:\n%+v", *node, wantNode)
	}
	wantRes := v1alpha1.ResourceSummary{
		Pods:     3,
		Requests: v1alpha1.Resources{CPU: "1500m", Memory: "3Gi", CPUMillis: 1500, MemoryBytes: 3 * gi, Other: map[string]string{"nvidia.com/gpu": "1"}},
		Limits:   v1alpha1.Resources{CPU: "1", Memory: "2Gi", CPUMillis: 1000, MemoryBytes: 2 * gi},
	}
	if r := n1.Summary.Resources; r == nil || !reflect.DeepEqual(*r, wantRes) {
		t.Errorf("node-1 resources %+v, want %+v", r, wantRes)
	}
	// Each context keeps its own node summary.
	if len(n1.Contexts) != 2 || n1.Contexts[0].Summary.Node.Status != "Ready" || n1.Contexts[1].Summary.Node.Status != "NotReady" {
		t.Errorf("node-1 contexts %+v, want prod's Ready node then staging's NotReady one", n1.Contexts)
	}
	if !reflect.DeepEqual(*prodNode, prodNodeCopy) {
		t.Errorf("MergeGroupLists changed prod's node summary to %+v", *prodNode)
	}
	// A node of one context is that context's node.
	if n0 := got.Groups[0].Summary.Node; n0 == nil || n0.Status != "Ready" || !n0.Ready || n0.Allocatable.CPU != "1" {
		t.Errorf("node-0 node summary %+v, want staging's", n0)
	}
}

func TestAddNode(t *testing.T) {
	node := func(status string, ready, unschedulable bool, roles ...string) *v1alpha1.NodeSummary {
		return &v1alpha1.NodeSummary{Exists: true, Status: status, Ready: ready, Unschedulable: unschedulable, Roles: roles,
			Requests: res(1000, gi, nil), Allocatable: res(4000, 4*gi, nil)}
	}
	tests := []struct {
		name          string
		a, b          *v1alpha1.NodeSummary
		status        string
		ready         bool
		unschedulable bool
		roles         []string
		bug           string
	}{
		{name: "both ready", a: node("Ready", true, false), b: node("Ready", true, false), status: "Ready", ready: true, roles: nil},
		{name: "one not ready", a: node("Ready", true, false), b: node("NotReady", false, false), status: "Ready,NotReady"},
		{name: "first not ready", a: node("NotReady", false, false), b: node("Ready", true, false), status: "NotReady,Ready"},
		{name: "roles joined and sorted", a: node("Ready", true, false, "worker"), b: node("Ready", true, false, "control-plane", "worker"), status: "Ready", ready: true, roles: []string{"control-plane", "worker"}},
		{name: "one cordoned", a: node("Ready", true, false), b: node("Ready,SchedulingDisabled", true, true), status: "Ready,SchedulingDisabled", ready: true, unschedulable: true,
			bug: `BUG in addNode: src.Status "Ready,SchedulingDisabled" is compared whole against dst's comma-separated parts, so "Ready" is repeated`},
		{name: "both cordoned", a: node("Ready,SchedulingDisabled", true, true), b: node("Ready,SchedulingDisabled", true, true), status: "Ready,SchedulingDisabled", ready: true, unschedulable: true,
			bug: `BUG in addNode: a cordoned node's status "Ready,SchedulingDisabled" is one string compared with dst's comma-separated parts, so merging two cordoned nodes doubles it`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := addNode(addNode(nil, tc.a), tc.b)
			if got.Status != tc.status {
				t.Errorf("status %q, want %q %s", got.Status, tc.status, tc.bug)
			}
			if got.Ready != tc.ready || got.Unschedulable != tc.unschedulable {
				t.Errorf("ready %v unschedulable %v, want %v %v", got.Ready, got.Unschedulable, tc.ready, tc.unschedulable)
			}
			if len(got.Roles) != 0 || len(tc.roles) != 0 {
				if !reflect.DeepEqual(got.Roles, tc.roles) {
					t.Errorf("roles %q, want %q", got.Roles, tc.roles)
				}
			}
			if got.CPUPercent != 25 || got.MemoryPercent != 25 {
				t.Errorf("percent cpu %d memory %d, want 25 25", got.CPUPercent, got.MemoryPercent)
			}
		})
	}
}

// TestAddNodeCopies: the first context's summary is copied, not adopted: adding
// the second must not change it.
func TestAddNodeCopies(t *testing.T) {
	first := &v1alpha1.NodeSummary{Exists: true, Status: "Ready", Ready: true, Roles: []string{"worker"}, Requests: res(1000, gi, nil), Allocatable: res(2000, 2*gi, nil)}
	second := &v1alpha1.NodeSummary{Exists: true, Status: "NotReady", Roles: []string{"edge"}, Requests: res(1000, gi, nil), Allocatable: res(2000, 2*gi, nil)}
	merged := addNode(nil, first)
	if merged == first {
		t.Fatal("addNode(nil, src) returned src itself")
	}
	addNode(merged, second)
	if first.Status != "Ready" || !first.Ready || !reflect.DeepEqual(first.Roles, []string{"worker"}) || first.Requests.CPUMillis != 1000 {
		t.Errorf("the first context's summary changed: %+v", first)
	}
}

// TestAddNodeNoAllocatable: a node pods name but no cluster has (NotFound)
// has no allocatable: no percent, no division by zero.
func TestAddNodeNoAllocatable(t *testing.T) {
	a := &v1alpha1.NodeSummary{Status: "NotFound", Roles: []string{}, Requests: res(500, gi, nil), Allocatable: res(0, 0, nil)}
	b := &v1alpha1.NodeSummary{Status: "NotFound", Roles: []string{}, Requests: res(500, gi, nil), Allocatable: res(0, 0, nil)}
	got := addNode(addNode(nil, a), b)
	if got.CPUPercent != 0 || got.MemoryPercent != 0 || got.Status != "NotFound" || got.Exists {
		t.Errorf("merged missing node %+v, want NotFound, not existing, 0%%", got)
	}
	if got.Requests.CPU != "1" || got.Requests.Memory != "2Gi" {
		t.Errorf("requests %s %s, want 1 2Gi", got.Requests.CPU, got.Requests.Memory)
	}
}

func TestAddResources(t *testing.T) {
	tests := []struct {
		name string
		a, b v1alpha1.Resources
		want v1alpha1.Resources
	}{
		{
			name: "nothing",
			want: v1alpha1.Resources{CPU: "0", Memory: "0"},
		},
		{
			name: "cpu and memory",
			a:    v1alpha1.Resources{CPUMillis: 250, MemoryBytes: 512 << 20},
			b:    v1alpha1.Resources{CPUMillis: 1250, MemoryBytes: 512 << 20},
			want: v1alpha1.Resources{CPU: "1500m", Memory: "1Gi", CPUMillis: 1500, MemoryBytes: gi},
		},
		{
			name: "other resources added by name",
			a:    v1alpha1.Resources{Other: map[string]string{"nvidia.com/gpu": "1", "ephemeral-storage": "10Gi"}},
			b:    v1alpha1.Resources{Other: map[string]string{"nvidia.com/gpu": "2", "hugepages-2Mi": "4Mi"}},
			want: v1alpha1.Resources{CPU: "0", Memory: "0", Other: map[string]string{"nvidia.com/gpu": "3", "ephemeral-storage": "10Gi", "hugepages-2Mi": "4Mi"}},
		},
		{
			name: "other resources of the second only",
			b:    v1alpha1.Resources{Other: map[string]string{"nvidia.com/gpu": "2"}},
			want: v1alpha1.Resources{CPU: "0", Memory: "0", Other: map[string]string{"nvidia.com/gpu": "2"}},
		},
		{
			name: "quantities of different suffixes",
			a:    v1alpha1.Resources{Other: map[string]string{"ephemeral-storage": "512Mi"}},
			b:    v1alpha1.Resources{Other: map[string]string{"ephemeral-storage": "1536Mi"}},
			want: v1alpha1.Resources{CPU: "0", Memory: "0", Other: map[string]string{"ephemeral-storage": "2Gi"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			aOther, bOther := copyMap(tc.a.Other), copyMap(tc.b.Other)
			got := addResources(tc.a, tc.b)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("addResources() = %+v, want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(tc.a.Other, aOther) || !reflect.DeepEqual(tc.b.Other, bOther) {
				t.Errorf("addResources changed its inputs: %v %v", tc.a.Other, tc.b.Other)
			}
			// Adding is the same either way round.
			if back := addResources(tc.b, tc.a); !reflect.DeepEqual(back, got) {
				t.Errorf("addResources(b, a) = %+v, addResources(a, b) = %+v", back, got)
			}
		})
	}
}

// TestAddResourcesMatchesResourcesOf: a sum renders as one context's
// resourcesOf renders the same quantities.
func TestAddResourcesMatchesResourcesOf(t *testing.T) {
	one := resourcesOf(corev1.ResourceList{"cpu": mustQuantity("750m"), "memory": mustQuantity("1536Mi"), "nvidia.com/gpu": mustQuantity("1")})
	two := resourcesOf(corev1.ResourceList{"cpu": mustQuantity("1500m"), "memory": mustQuantity("3Gi"), "nvidia.com/gpu": mustQuantity("2")})
	if got := addResources(one, one); !reflect.DeepEqual(got, two) {
		t.Errorf("one + one = %+v, want %+v", got, two)
	}
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := map[string]string{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

func mustQuantity(s string) resource.Quantity { return resource.MustParse(s) }
