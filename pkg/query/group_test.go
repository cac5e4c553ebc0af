package query_test

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// groupMembers returns each group's member names, by group name, in order.
func groupMembers(doc *v1alpha1.GroupList) map[string][]string {
	out := map[string][]string{}
	for _, g := range doc.Groups {
		out[g.Name] = []string{}
		for _, m := range g.Members {
			for _, o := range m.Objects {
				a, err := meta.Accessor(o)
				if err != nil {
					out[g.Name] = append(out[g.Name], "<no metadata>")
					continue
				}
				out[g.Name] = append(out[g.Name], a.GetName())
			}
		}
	}
	return out
}

// groupNames returns the groups' names in order.
func groupNames(doc *v1alpha1.GroupList) []string {
	var out []string
	for _, g := range doc.Groups {
		out = append(out, g.Name)
	}
	return out
}

// group returns the group named name.
func group(t *testing.T, doc *v1alpha1.GroupList, name string) v1alpha1.Group {
	t.Helper()
	for _, g := range doc.Groups {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %q in %q", name, groupNames(doc))
	return v1alpha1.Group{}
}

// groupCase is one group-by question and what its answer holds.
type groupCase struct {
	name          string
	reqs          []query.Request // default: every pod, in full
	by            query.GroupBy
	allNamespaces bool
	namespace     string // default shop
	labelSelector string
	objects       []runtime.Object
	forbid        []string // resources whose metadata lists are forbidden
	mapper        meta.RESTMapper
	kept          *index.PodResourcesCache // the target's, as a cache server's

	// wantNames are the groups in order; wantMembers the member names by
	// group; wantMissing the NotFound errors; wantWarnings the document's.
	wantNames    []string
	wantMembers  map[string][]string
	wantMissing  []string
	wantWarnings []string
	check        func(t *testing.T, doc *v1alpha1.GroupList)
}

// run asks the case's question of a session over its objects.
func (tc groupCase) run(t *testing.T) *v1alpha1.GroupList {
	t.Helper()
	s := fakeapi.New(nil, tc.objects...)
	fixtures.ForbidMetadataList(s, tc.forbid...)
	reqs := tc.reqs
	if reqs == nil {
		reqs = []query.Request{{Resource: fixtures.Pods}}
	}
	cfg := query.Config{Target: query.Target{Mapper: tc.mapper, Namespace: tc.namespace, PodResources: tc.kept}, LabelSelector: tc.labelSelector}
	if cfg.Namespace == "" {
		cfg.Namespace = "shop"
	}
	if tc.allNamespaces {
		cfg.Namespace = ""
	}
	if cfg.Mapper == nil {
		cfg.Mapper = fixtures.OwnerMapper()
	}
	session, _ := newSession(t, s, cfg)
	doc, missing, err := session.Group(testContext(t), reqs, tc.by)
	if err != nil {
		t.Fatalf("Group: %v", err)
	}
	if doc.APIVersion != v1alpha1.SchemeGroupVersion.String() || doc.Kind != v1alpha1.GroupListKind || doc.GroupBy != tc.by.Mode || doc.Warnings == nil {
		t.Errorf("document %s %s, groupBy %q, warnings %v; want %s %s, groupBy %q and a warnings array",
			doc.APIVersion, doc.Kind, doc.GroupBy, doc.Warnings, v1alpha1.SchemeGroupVersion, v1alpha1.GroupListKind, tc.by.Mode)
	}
	var gotMissing []string
	for _, err := range missing {
		gotMissing = append(gotMissing, err.Error())
	}
	if !slices.Equal(gotMissing, tc.wantMissing) {
		t.Errorf("missing = %q, want %q", gotMissing, tc.wantMissing)
	}
	if tc.wantNames != nil && !slices.Equal(groupNames(doc), tc.wantNames) {
		t.Errorf("groups %q, want %q", groupNames(doc), tc.wantNames)
	}
	if tc.wantMembers != nil && !reflect.DeepEqual(groupMembers(doc), tc.wantMembers) {
		t.Errorf("members = %v, want %v", groupMembers(doc), tc.wantMembers)
	}
	if !slices.Equal(doc.Warnings, append([]string{}, tc.wantWarnings...)) {
		t.Errorf("warnings = %q, want %q", doc.Warnings, tc.wantWarnings)
	}
	if tc.check != nil {
		tc.check(t, doc)
	}
	return doc
}

func TestSessionGroup(t *testing.T) {
	byLabel := func(key string) query.GroupBy { return query.GroupBy{Mode: query.GroupByLabel, LabelKey: key} }
	byPath := func(expr string) query.GroupBy { return query.GroupBy{Mode: query.GroupByJSONPath, JSONPath: expr} }
	byNode := query.GroupBy{Mode: query.GroupByNode}
	byApp := map[string][]string{
		"app=api": {"api-0"}, "app=backup": {"backup-29000"}, "app=web": {"web-0", "web-1"},
		"app=worker": {"queued"}, "<none>": {"stranded"},
	}
	pods := func(names ...string) []query.Request { return []query.Request{{Resource: fixtures.Pods, Names: names}} }
	tests := []groupCase{
		// --by-label
		{
			name: "by label", by: byLabel("app"),
			wantNames:   []string{"app=api", "app=backup", "app=web", "app=worker", "<none>"},
			wantMembers: byApp,
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				if doc.Expression != "app" {
					t.Errorf("expression %q, want app", doc.Expression)
				}
				web := group(t, doc, "app=web")
				if web.Key.Value == nil || *web.Key.Value != "web" || web.Key.None {
					t.Errorf("app=web key = %+v", web.Key)
				}
				if !doc.Groups[len(doc.Groups)-1].Key.None {
					t.Errorf("the <none> group is not last: %q", groupNames(doc))
				}
				// Two pods of nginx (500m, 512Mi) and log-shipper (20m, 32Mi), no limits.
				wantSummary := v1alpha1.GroupSummary{Members: 2, Kinds: map[string]int{"Pod": 2}, Pods: &v1alpha1.PodSummary{Total: 2, Ready: 2, Running: 2},
					Resources: &v1alpha1.ResourceSummary{
						Pods:     2,
						Requests: v1alpha1.Resources{CPU: "1040m", Memory: "1088Mi", CPUMillis: 1040, MemoryBytes: 1088 << 20},
						Limits:   v1alpha1.Resources{CPU: "0", Memory: "0"},
					}}
				if !reflect.DeepEqual(web.Summary, wantSummary) {
					t.Errorf("app=web summary = %+v, want %+v", web.Summary, wantSummary)
				}
				if len(web.Members) != 1 || web.Members[0].GVK != fixtures.Pods.GVK || !web.Members[0].Namespaced {
					t.Errorf("app=web members are not one namespaced v1 Pod list: %+v", web.Members)
				}
			},
		},
		{
			// Within a group, types come in the order they were asked for, as
			// kubectl get deploy,svc,pods prints them.
			name: "by label, several types", by: byLabel("app"),
			objects: fixtures.NodeObjects(),
			reqs:    []query.Request{{Resource: fixtures.Deployments}, {Resource: fixtures.Services}, {Resource: fixtures.Pods}},
			wantMembers: map[string][]string{
				"app=api": {"api-0"}, "app=backup": {"backup-29000"}, "app=web": {"web", "web-0", "web-1"},
				"app=worker": {"queued"}, "<none>": {"web", "stranded"},
			},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				var got []string
				for _, g := range doc.Groups {
					kinds := []string{g.Name + ":"}
					for _, m := range g.Members {
						kinds = append(kinds, m.GVK.Kind)
					}
					got = append(got, strings.Join(kinds, " "))
				}
				want := []string{"app=api: Pod", "app=backup: Pod", "app=web: Deployment Pod", "app=worker: Pod", "<none>: Service Pod"}
				if !slices.Equal(got, want) {
					t.Errorf("kinds per group: %q, want %q", got, want)
				}
				wantKinds := map[string]int{"Deployment": 1, "Pod": 2}
				if s := group(t, doc, "app=web").Summary; s.Members != 3 || !reflect.DeepEqual(s.Kinds, wantKinds) || s.Pods == nil || *s.Pods != (v1alpha1.PodSummary{Total: 2, Ready: 2, Running: 2}) {
					t.Errorf("app=web summary = %+v (pods %+v), want 3 members %v, 2/2 pods ready", s, s.Pods, wantKinds)
				}
			},
		},
		{
			name: "by label, metadata only", by: byLabel("app"),
			reqs:        []query.Request{{Resource: fixtures.Pods, Mode: informer.MetadataOnly}},
			wantMembers: byApp,
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				// Metadata carries no pod status to count.
				if s := group(t, doc, "app=web").Summary; s.Members != 2 || s.Pods != nil {
					t.Errorf("app=web summary of metadata = %+v, want 2 members and no pod counts", s)
				}
			},
		},
		{
			name: "by label, an empty value is a value", by: byLabel("job"),
			wantNames:   []string{"job=", "<none>"},
			wantMembers: map[string][]string{"job=": {"backup-29000"}, "<none>": {"api-0", "queued", "stranded", "web-0", "web-1"}},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				if k := doc.Groups[0].Key; k.Value == nil || *k.Value != "" || k.None {
					t.Errorf("job= key = %+v, want the empty value", k)
				}
			},
		},
		{
			name: "by label, selector narrows members", by: byLabel("app"), labelSelector: "app in (web,api)",
			wantMembers: map[string][]string{"app=api": {"api-0"}, "app=web": {"web-0", "web-1"}},
		},
		{
			name: "by label, names narrow members", by: byLabel("app"), reqs: pods("web-1", "queued"),
			wantMembers: map[string][]string{"app=web": {"web-1"}, "app=worker": {"queued"}},
		},
		{
			name: "by label, one name", by: byLabel("app"), reqs: pods("web-1"),
			wantMembers: map[string][]string{"app=web": {"web-1"}},
		},
		{
			name: "by label, a missing name", by: byLabel("app"), reqs: pods("web-1", "nope"),
			wantMembers: map[string][]string{"app=web": {"web-1"}},
			wantMissing: []string{`pods "nope" not found`},
		},
		{
			name: "by label, nothing matches", by: byLabel("app"), labelSelector: "app=none",
			wantMembers: map[string][]string{},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				if doc.Groups == nil || doc.Expression != "app" {
					t.Errorf("groups %v, expression %q; want an empty array and app", doc.Groups, doc.Expression)
				}
			},
		},

		// --by-namespace
		{
			name: "by namespace", by: query.GroupBy{Mode: query.GroupByNamespace}, allNamespaces: true,
			wantNames:   []string{"other", "shop"},
			wantMembers: map[string][]string{"other": {"db-0"}, "shop": {"api-0", "backup-29000", "queued", "stranded", "web-0", "web-1"}},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				if doc.Expression != "" {
					t.Errorf("expression %q, want none", doc.Expression)
				}
				if k := doc.Groups[0].Key; k.Namespace != "other" || k.Value != nil || k.None {
					t.Errorf("namespace key = %+v, want namespace other", k)
				}
			},
		},

		// --by JSONPATH
		{
			name: "by JSONPath", by: byPath("{.spec.serviceAccountName}"),
			wantNames:   []string{"default", "web"},
			wantMembers: map[string][]string{"default": {"api-0", "backup-29000", "queued", "stranded"}, "web": {"web-0", "web-1"}},
		},
		{
			name: "by JSONPath, an object with two values is in two groups", by: byPath("{.spec.containers[*].image}"),
			wantNames: []string{"fluent/fluent-bit:3.2", "ghcr.io/acme/api:v2", "ghcr.io/acme/worker:v2", "nginx:1.27", "postgres:16"},
			wantMembers: map[string][]string{
				"fluent/fluent-bit:3.2": {"web-0", "web-1"},
				"ghcr.io/acme/api:v2":   {"api-0"}, "ghcr.io/acme/worker:v2": {"queued"},
				"nginx:1.27": {"stranded", "web-0", "web-1"}, "postgres:16": {"backup-29000"},
			},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				if doc.Expression != "{.spec.containers[*].image}" {
					t.Errorf("expression %q", doc.Expression)
				}
				g := group(t, doc, "nginx:1.27")
				if g.Key.Value == nil || *g.Key.Value != "nginx:1.27" || g.Summary.Members != 3 {
					t.Errorf("nginx:1.27 group: key %+v, %d members", g.Key, g.Summary.Members)
				}
			},
		},
		{
			name: "by JSONPath, objects without a value", by: byPath("{.spec.nodeName}"),
			wantNames:   []string{"worker-1", "worker-2", "worker-9", "<none>"},
			wantMembers: map[string][]string{"worker-1": {"api-0", "backup-29000", "web-0"}, "worker-2": {"web-1"}, "worker-9": {"stranded"}, "<none>": {"queued"}},
		},

		// --by-node
		{
			name: "by node", by: byNode, objects: fixtures.WithoutPods(fixtures.NodeObjects(), "stranded"),
			wantNames:   []string{"worker-1", "worker-2", "worker-3", "<none>"},
			wantMembers: map[string][]string{"worker-1": {"api-0", "backup-29000", "web-0"}, "worker-2": {"web-1"}, "worker-3": {}, "<none>": {"queued"}},
		},
		{
			name: "by node, all namespaces", by: byNode, allNamespaces: true, objects: fixtures.WithoutPods(fixtures.NodeObjects(), "stranded"),
			wantNames:   []string{"worker-1", "worker-2", "worker-3", "<none>"},
			wantMembers: map[string][]string{"worker-1": {"db-0", "api-0", "backup-29000", "web-0"}, "worker-2": {"web-1"}, "worker-3": {}, "<none>": {"queued"}},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				// db-0 (1 cpu, 1Gi) counts toward worker-1 too.
				n := doc.Groups[0].Summary.Node
				want := v1alpha1.Resources{CPU: "1770m", Memory: "1824Mi", CPUMillis: 1770, MemoryBytes: 1824 << 20}
				if n == nil || !reflect.DeepEqual(n.Requests, want) || n.CPUPercent != 45 || n.MemoryPercent != 12 {
					t.Errorf("worker-1 across namespaces: %+v, want requests %+v, 45%% cpu, 12%% memory", n, want)
				}
				if p := doc.Groups[0].Summary.Pods; p == nil || p.Total != 4 || p.Ready != 2 {
					t.Errorf("worker-1 pod counts = %+v, want 2/4 ready", p)
				}
			},
		},
		{
			name: "by node, with every summary", by: byNode,
			wantNames: []string{"worker-1", "worker-2", "worker-3", "worker-9", "<none>"},
			wantMembers: map[string][]string{
				"worker-1": {"api-0", "backup-29000", "web-0"}, "worker-2": {"web-1"}, "worker-3": {},
				"worker-9": {"stranded"}, "<none>": {"queued"},
			},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				w1 := doc.Groups[0]
				// web-0 (520m, 544Mi) and api-0 (250m, 256Mi); the Succeeded
				// backup pod is listed but does not count.
				wantNode := &v1alpha1.NodeSummary{
					Exists: true, Status: "Ready", Ready: true, Roles: []string{"worker"},
					Requests:    v1alpha1.Resources{CPU: "770m", Memory: "800Mi", CPUMillis: 770, MemoryBytes: 800 << 20},
					Limits:      v1alpha1.Resources{CPU: "0", Memory: "0"},
					Allocatable: v1alpha1.Resources{CPU: "3920m", Memory: "15184716Ki", CPUMillis: 3920, MemoryBytes: 15184716 << 10},
					CPUPercent:  19, MemoryPercent: 5,
				}
				if !reflect.DeepEqual(w1.Summary.Node, wantNode) {
					t.Errorf("worker-1 node summary:\n%+v\nwant\n%+v", w1.Summary.Node, wantNode)
				}
				if p := w1.Summary.Pods; p == nil || *p != (v1alpha1.PodSummary{Total: 3, Ready: 1, Running: 2, Succeeded: 1}) {
					t.Errorf("worker-1 pod counts = %+v", p)
				}
				if k := w1.Key; k.Node != "worker-1" || k.None {
					t.Errorf("worker-1 key = %+v", k)
				}
				w2 := doc.Groups[1].Summary.Node
				if w2 == nil || w2.Status != "Ready,SchedulingDisabled" || !w2.Unschedulable || w2.Requests.CPUMillis != 520 || w2.CPUPercent != 26 {
					t.Errorf("worker-2 (cordoned) node summary = %+v", w2)
				}
				w3 := doc.Groups[2]
				wantEmpty := &v1alpha1.NodeSummary{
					Exists: true, Status: "NotReady", Roles: []string{},
					Requests:    v1alpha1.Resources{CPU: "0", Memory: "0"},
					Limits:      v1alpha1.Resources{CPU: "0", Memory: "0"},
					Allocatable: v1alpha1.Resources{CPU: "4", Memory: "8Gi", CPUMillis: 4000, MemoryBytes: 8 << 30},
				}
				if !reflect.DeepEqual(w3.Summary.Node, wantEmpty) || w3.Summary.Members != 0 || len(w3.Summary.Kinds) != 0 || w3.Summary.Pods != nil {
					t.Errorf("worker-3 (no pods) summary = %+v, node %+v", w3.Summary, w3.Summary.Node)
				}
				if k := w3.Key; k.Node != "worker-3" || k.None {
					t.Errorf("worker-3 key = %+v", k)
				}
				// A node deleted while pods bound to it remain: its group says
				// so, and has no allocatable to speak of.
				w9 := doc.Groups[3].Summary
				if n := w9.Node; n == nil || n.Exists || n.Status != "NotFound" || n.Requests.CPUMillis != 100 {
					t.Errorf("worker-9 (missing node) summary = %+v", n)
				}
				if p := w9.Pods; p == nil || p.Total != 1 || p.Ready != 1 {
					t.Errorf("worker-9 pod counts = %+v, want 1/1 ready", p)
				}
				none := doc.Groups[4]
				if !none.Key.None || none.Summary.Node != nil {
					t.Errorf("<none> group: key %+v, node summary %+v (unscheduled pods have no node)", none.Key, none.Summary.Node)
				}
				// Every quantity in the document is a quantity, as the README
				// shows them; jq users feed them on. An allocatable of a node
				// that does not exist is "0", not "".
				for _, g := range doc.Groups {
					n := g.Summary.Node
					if n == nil {
						continue
					}
					for what, q := range map[string]string{"requests.cpu": n.Requests.CPU, "requests.memory": n.Requests.Memory, "allocatable.cpu": n.Allocatable.CPU, "allocatable.memory": n.Allocatable.Memory} {
						if _, err := resource.ParseQuantity(q); err != nil {
							t.Errorf("node %s: %s = %q is not a quantity: %v", g.Name, what, q, err)
						}
					}
				}
			},
		},
		{
			name: "by node, including completed pods", by: query.GroupBy{Mode: query.GroupByNode, IncludeCompleted: true},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				n := doc.Groups[0].Summary.Node
				want := v1alpha1.Resources{CPU: "1770m", Memory: "1824Mi", CPUMillis: 1770, MemoryBytes: 1824 << 20}
				if n == nil || !reflect.DeepEqual(n.Requests, want) || n.CPUPercent != 45 || n.MemoryPercent != 12 {
					t.Errorf("worker-1 with IncludeCompleted: %+v, want requests %+v, 45%% cpu, 12%% memory", n, want)
				}
			},
		},
		{
			name: "by node, a label selector narrows requests", by: byNode, labelSelector: "app=web",
			wantNames: []string{"worker-1", "worker-2", "worker-3"},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				if n := doc.Groups[0].Summary.Node; n == nil || n.Requests.CPU != "520m" || n.Requests.Memory != "544Mi" {
					t.Errorf("worker-1 requests with app=web: %+v, want 520m and 544Mi", n)
				}
			},
		},
		{
			name: "by node, no pods still lists the nodes", by: byNode, namespace: "empty",
			wantNames:   []string{"worker-1", "worker-2", "worker-3"},
			wantMembers: map[string][]string{"worker-1": {}, "worker-2": {}, "worker-3": {}},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				var got []string
				for _, g := range doc.Groups {
					n := g.Summary.Node
					got = append(got, strings.Join([]string{g.Name, n.Status, strings.Join(n.Roles, ","), n.Requests.CPU + "/" + n.Allocatable.CPU, n.Requests.Memory + "/" + n.Allocatable.Memory}, " "))
				}
				want := []string{"worker-1 Ready worker 0/3920m 0/15184716Ki", "worker-2 Ready,SchedulingDisabled worker 0/2 0/4Gi", "worker-3 NotReady  0/4 0/8Gi"}
				if !slices.Equal(got, want) {
					t.Errorf("nodes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.objects == nil {
				tc.objects = fixtures.NodeObjects()
			}
			tc.run(t)
		})
	}
}

// unknownWidget is the warning of a group whose owners are of a kind the
// server does not serve.
const unknownWidget = "owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com"

func TestSessionGroupByOwner(t *testing.T) {
	byOwner := query.GroupBy{Mode: query.GroupByOwner}
	pods := func(names ...string) []query.Request { return []query.Request{{Resource: fixtures.Pods, Names: names}} }
	forbidden := fixtures.Forbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "shop").Error()
	tests := []groupCase{
		{
			name:      "pods",
			wantNames: []string{"Deployment/web", "Node/worker-1", "ReplicaSet/gone-6b8", "Rollout/canary", "Widget/w", "<none>"},
			wantMembers: map[string][]string{
				"Deployment/web": {"web-5d4-aaaaa", "web-5d4-bbbbb"}, "Node/worker-1": {"static-web-worker-1"},
				"ReplicaSet/gone-6b8": {"orphan-ddddd"}, "Rollout/canary": {"canary-7f9-ccccc"}, "Widget/w": {"widget-eeeee"},
				"<none>": {"adopted", "debug"},
			},
			wantWarnings: []string{unknownWidget},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				want := map[string]v1alpha1.GroupKey{
					"Deployment/web":      {APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: string(fixtures.UIDDeployWeb)},
					"Node/worker-1":       {APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: string(fixtures.UIDNodeWorker)},
					"ReplicaSet/gone-6b8": {APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "gone-6b8", UID: string(fixtures.UIDRSGone), Dangling: true, Reason: "owner not found"},
					"Rollout/canary":      {APIVersion: "example.com/v1alpha1", Kind: "Rollout", Namespace: "shop", Name: "canary", UID: string(fixtures.UIDRollout)},
					"Widget/w": {
						APIVersion: "widgets.example.com/v1", Kind: "Widget", Namespace: "shop", Name: "w", UID: string(fixtures.UIDWidget), Unknown: true,
						Reason: "the server doesn't have a resource type for kind Widget.widgets.example.com",
					},
					"<none>": {None: true},
				}
				got := map[string]v1alpha1.GroupKey{}
				for _, g := range doc.Groups {
					got[g.Name] = g.Key
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("keys:\n%+v\nwant:\n%+v", got, want)
				}
				d := group(t, doc, "Deployment/web").Summary
				if d.Members != 2 || d.Pods == nil || d.Pods.Total != 2 || d.Pods.Ready != 1 {
					t.Errorf("Deployment/web summary = %+v (pods %+v)", d, d.Pods)
				}
			},
		},
		{
			name: "names narrow members", reqs: pods("web-5d4-bbbbb", "debug", "static-web-worker-1"),
			wantNames:   []string{"Deployment/web", "Node/worker-1", "<none>"},
			wantMembers: map[string][]string{"Deployment/web": {"web-5d4-bbbbb"}, "Node/worker-1": {"static-web-worker-1"}, "<none>": {"debug"}},
		},
		{
			name: "a label selector narrows members", labelSelector: "app=web",
			wantMembers: map[string][]string{"Deployment/web": {"web-5d4-aaaaa", "web-5d4-bbbbb"}},
		},
		{
			name: "replicasets", reqs: []query.Request{{Resource: fixtures.ReplicaSets}},
			wantNames:   []string{"Deployment/web", "Rollout/canary"},
			wantMembers: map[string][]string{"Deployment/web": {"web-5d4"}, "Rollout/canary": {"canary-7f9"}},
		},
		{
			name: "replicasets may not be listed", forbid: []string{"replicasets"},
			wantNames: []string{"Node/worker-1", "ReplicaSet/canary-7f9", "ReplicaSet/gone-6b8", "ReplicaSet/web-5d4", "Widget/w", "<none>"},
			wantMembers: map[string][]string{
				"Node/worker-1": {"static-web-worker-1"}, "ReplicaSet/canary-7f9": {"canary-7f9-ccccc"}, "ReplicaSet/gone-6b8": {"orphan-ddddd"},
				"ReplicaSet/web-5d4": {"web-5d4-aaaaa", "web-5d4-bbbbb"}, "Widget/w": {"widget-eeeee"}, "<none>": {"adopted", "debug"},
			},
			wantWarnings: []string{"owners above ReplicaSet.apps are unknown: " + forbidden, unknownWidget},
		},
		{
			name: "replicasets may not be listed, one group", forbid: []string{"replicasets"}, labelSelector: "app=web",
			wantNames:    []string{"ReplicaSet/web-5d4"},
			wantWarnings: []string{"owners above ReplicaSet.apps are unknown: " + forbidden},
			check: func(t *testing.T, doc *v1alpha1.GroupList) {
				g := doc.Groups[0]
				want := v1alpha1.GroupKey{
					APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d4", UID: string(fixtures.UIDRSWeb),
					Unknown: true, Reason: forbidden,
				}
				if !reflect.DeepEqual(g.Key, want) {
					t.Errorf("group %s key:\n%+v\nwant:\n%+v", g.Name, g.Key, want)
				}
				if g.Summary.Members != 2 {
					t.Errorf("%d members, want the 2 pods", g.Summary.Members)
				}
			},
		},
		{
			name: "no owners at all", reqs: pods("debug"),
			wantNames:   []string{"<none>"},
			wantMembers: map[string][]string{"<none>": {"debug"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.by, tc.objects = byOwner, fixtures.OwnerObjects()
			tc.run(t)
		})
	}
}

// TestSessionGroupByOwnerLookups: owner informers start only for the kinds
// that controller references name, metadata only; members stay full objects.
func TestSessionGroupByOwnerLookups(t *testing.T) {
	s := fakeapi.New(nil, fixtures.OwnerObjects()...)
	session, _ := newSession(t, s, query.Config{Target: query.Target{Mapper: fixtures.OwnerMapper(), Namespace: "shop"}})
	if _, _, err := session.Group(testContext(t), []query.Request{{Resource: fixtures.Pods}}, query.GroupBy{Mode: query.GroupByOwner}); err != nil {
		t.Fatalf("Group: %v", err)
	}
	var listed []string
	for _, a := range s.Metadata.Actions() {
		if a.GetVerb() == "list" {
			listed = append(listed, a.GetResource().GroupResource().String())
		}
	}
	sort.Strings(listed)
	listed = slices.Compact(listed)
	if want := []string{"deployments.apps", "nodes", "replicasets.apps", "rollouts.example.com"}; !slices.Equal(listed, want) {
		t.Errorf("owner kinds listed (metadata only): %q, want %q", listed, want)
	}
	var typed []string
	for _, r := range s.Requests() {
		if !r.Watch {
			typed = append(typed, r.Path)
		}
	}
	if want := []string{"/api/v1/namespaces/shop/pods"}; !slices.Equal(typed, want) {
		t.Errorf("typed lists: %q, want only the member pods %q", typed, want)
	}
	if slices.ContainsFunc(s.Dynamic.Actions(), func(a clienttesting.Action) bool { return a.GetVerb() == "list" }) {
		t.Error("the custom owner kind was listed as full objects; owners need metadata only")
	}
}

// TestOwnerResolver exercises the session's owner lookup alone: kinds map
// through the REST mapper to metadata-only informers, a kind the mapper does
// not know or the user may not list is an error for that kind only, and Get
// finds owners by UID. The kinds come in an order where a failing informer's
// goroutine and an unknown kind after it both record their error (run with
// -race).
func TestOwnerResolver(t *testing.T) {
	s := fakeapi.New(nil, fixtures.OwnerObjects()...)
	fixtures.ForbidMetadataList(s, "replicasets")
	session, _ := newSession(t, s, query.Config{Target: query.Target{Mapper: fixtures.OwnerMapper(), Namespace: "shop"}})
	l := session.OwnerResolver()
	defer l.Shutdown()

	rs := fixtures.ReplicaSets.GVK
	deploy := fixtures.Deployments.GVK
	widget := schema.GroupVersionKind{Group: "widgets.example.com", Version: "v1", Kind: "Widget"}
	node := fixtures.Nodes.GVK
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := l.Prepare(ctx, []schema.GroupVersionKind{rs, deploy, widget, node, fixtures.RolloutGVK})

	got := map[string]string{}
	for gk, err := range errs {
		got[gk.String()] = err.Error()
	}
	want := map[string]string{
		"ReplicaSet.apps":            fixtures.Forbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "shop").Error(),
		"Widget.widgets.example.com": "the server doesn't have a resource type for kind Widget.widgets.example.com",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Prepare errors:\n%v\nwant:\n%v", got, want)
	}

	for _, tc := range []struct {
		gk       schema.GroupKind
		uid      types.UID
		wantName string
	}{
		{deploy.GroupKind(), fixtures.UIDDeployWeb, "web"},
		{node.GroupKind(), fixtures.UIDNodeWorker, "worker-1"},
		{fixtures.RolloutGVK.GroupKind(), fixtures.UIDRollout, "canary"},
		{deploy.GroupKind(), "no-such-uid", ""},
	} {
		obj, err := l.Get(tc.gk, index.OwnerRef{Namespace: "shop", Name: tc.wantName, UID: tc.uid})
		if err != nil {
			t.Errorf("Get(%s, %s): %v", tc.gk, tc.uid, err)
			continue
		}
		switch {
		case tc.wantName == "" && obj != nil:
			t.Errorf("Get(%s, %s) = %s, want nothing", tc.gk, tc.uid, obj.GetName())
		case tc.wantName != "" && (obj == nil || obj.GetName() != tc.wantName):
			t.Errorf("Get(%s, %s) = %v, want %s", tc.gk, tc.uid, obj, tc.wantName)
		}
	}
	if _, err := l.Get(rs.GroupKind(), index.OwnerRef{Namespace: "shop", UID: fixtures.UIDRSWeb}); err == nil {
		t.Error("Get of a kind that failed to prepare returned no error")
	}
	for gk, want := range map[schema.GroupKind]bool{node.GroupKind(): false, deploy.GroupKind(): true, fixtures.RolloutGVK.GroupKind(): true, widget.GroupKind(): true} {
		if got := l.Namespaced(gk); got != want {
			t.Errorf("Namespaced(%s) = %v, want %v", gk, got, want)
		}
	}
}
