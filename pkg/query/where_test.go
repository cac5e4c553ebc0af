package query_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/openapi/openapitest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// The --where tests ask sessions over fakes, as the other engine tests do,
// with Config.Where parsed as the command layer parses it. Their targets have
// no OpenAPI schemas (the expressions are typed dynamically) unless a case
// asks for client-go's copy of a real server's (typed).

// embeddedSchemas are client-go's copy of a real server's OpenAPI v3
// documents, shared by every test as a command shares them.
var embeddedSchemas = sync.OnceValue(func() *where.Schemas {
	return where.NewSchemas(openapitest.NewEmbeddedFileClient())
})

// mustWhere parses exprs as the command layer does.
func mustWhere(t *testing.T, exprs ...string) *where.Conditions {
	t.Helper()
	c, err := where.Parse(exprs, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// whereCase is one `kubectl idx TYPE` question with --where.
type whereCase struct {
	name    string
	args    []string
	where   []string
	objects []runtime.Object
	// mode is the mode the output needs; by is a grouping; stream streams.
	mode   informer.Mode
	by     *query.GroupBy
	stream bool
	typed  bool
	all    bool

	// want are the objects answered, namespace/name; wantType their Go type
	// ("" for any); wantWarnings the session's warnings; wantErr the error.
	want         []string
	wantType     string
	wantWarnings []string
	wantErr      string
	// wantKeep says whether the LIST pages were filtered.
	wantKeep bool
	check    func(t *testing.T, l *query.Listing)
}

// run asks c's question of a session over c's objects and returns the
// listing, the names of the objects answered (streamed ones included), the
// session and the fake server.
func (c whereCase) run(t *testing.T) (*query.Listing, []string, *query.Session, *fakeapi.Server, *factories, error) {
	t.Helper()
	s := fakeapi.New(nil, c.objects...)
	ns := "shop"
	if c.all {
		ns = ""
	}
	tg := faketarget.New(t, "", s, ns, fixtures.APIResources())
	// The owner kinds the listing discovery lacks.
	owners := meta.NewDefaultRESTMapper(nil)
	owners.Add(fixtures.ReplicaSets.GVK, meta.RESTScopeNamespace)
	owners.Add(fixtures.RolloutGVK, meta.RESTScopeNamespace)
	tg.Mapper = meta.MultiRESTMapper{tg.Mapper, owners}
	if c.typed {
		tg.Schemas = embeddedSchemas()
	}
	session, rec := newSession(t, s, query.Config{Target: tg, Where: mustWhere(t, c.where...)})
	q := query.GetQuery{Args: c.args, GroupBy: c.by, Mode: func(query.Request) informer.Mode { return c.mode }}
	var mu sync.Mutex
	var streamed []runtime.Object
	if c.stream {
		q.Stream = func(query.Request) func([]runtime.Object) error {
			return func(objs []runtime.Object) error {
				mu.Lock()
				defer mu.Unlock()
				streamed = append(streamed, objs...)
				return nil
			}
		}
	}
	l, err := session.Get(testContext(t), q)
	if err != nil {
		return nil, nil, session, s, rec, err
	}
	t.Cleanup(l.Close)
	var objs []runtime.Object
	objs = append(objs, streamed...)
	for _, m := range l.Members {
		objs = append(objs, m.Objects...)
	}
	if l.Groups != nil {
		for _, g := range l.Groups.Groups {
			for _, m := range g.Members {
				objs = append(objs, m.Objects...)
			}
		}
	}
	names := []string{}
	for _, o := range objs {
		if c.wantType != "" {
			if got := fmt.Sprintf("%T", o); got != c.wantType {
				t.Errorf("%s is a %s, want %s", o.GetObjectKind().GroupVersionKind().Kind, got, c.wantType)
			}
		}
		a, err := meta.Accessor(o)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, a.GetNamespace()+"/"+a.GetName())
	}
	return l, names, session, s, rec, nil
}

// TestWhereGet: `kubectl idx TYPE --where` answers the objects that match,
// reading each in the mode what the expressions read needs, for every output
// and grouping; owner and node are bound; run-time errors are warnings.
func TestWhereGet(t *testing.T) {
	nodes, owners, list := fixtures.NodeObjects(), fixtures.OwnerObjects(), fixtures.ListObjects()
	tests := []whereCase{
		{
			name: "labels keep metadata-only informers, filtered page by page", args: []string{"pods"}, objects: nodes,
			where: []string{`object.metadata.labels["app"] == "web"`}, mode: informer.MetadataOnly,
			want: []string{"shop/web-0", "shop/web-1"}, wantType: "*v1.PartialObjectMetadata", wantKeep: true,
			wantWarnings: []string{`--where "object.metadata.labels[\"app\"] == \"web\"": no such key: labels (on 1 object)`},
		},
		{
			name: "status reads whole objects", args: []string{"pods"}, objects: nodes,
			where: []string{`object.status.phase != "Running"`}, mode: informer.MetadataOnly,
			want: []string{"shop/backup-29000", "shop/queued"}, wantType: "*v1.Pod", wantKeep: true,
		},
		{
			name: "streamed", args: []string{"pods"}, objects: nodes, stream: true, all: true,
			where: []string{`object.status.phase == "Running"`, `object.metadata.namespace == "other"`},
			want:  []string{"other/db-0"}, wantType: "*v1.Pod", wantKeep: true,
		},
		{
			name: "streamed, with owners bound once the list is in", args: []string{"pods"}, objects: owners, stream: true,
			where: []string{`owner != null && owner.kind == "Deployment"`}, mode: informer.MetadataOnly,
			want: []string{"shop/web-5d4-aaaaa", "shop/web-5d4-bbbbb"}, wantType: "*v1.PartialObjectMetadata",
		},
		{
			name: "owner is the top-level controller, or the last reference followed", args: []string{"pods"}, objects: owners,
			where: []string{`owner != null && owner.kind in ["ReplicaSet", "Widget", "Node", "Rollout"]`},
			want:  []string{"shop/canary-7f9-ccccc", "shop/orphan-ddddd", "shop/static-web-worker-1", "shop/widget-eeeee"},
		},
		{
			name: "owner's metadata", args: []string{"pods"}, objects: owners,
			where: []string{`owner.metadata.name == "canary" && owner.apiVersion == "example.com/v1alpha1"`},
			want:  []string{"shop/canary-7f9-ccccc"},
			// Objects without an owner read null's fields.
			wantWarnings: []string{`--where "owner.metadata.name == \"canary\" && owner.apiVersion == \"example.com/v1alpha1\"": no such key: metadata (on 2 objects)`},
		},
		{
			name: "no controller is null", args: []string{"pods"}, objects: owners,
			where: []string{`owner == null`}, mode: informer.MetadataOnly,
			want: []string{"shop/adopted", "shop/debug"}, wantType: "*v1.PartialObjectMetadata",
		},
		{
			name: "node is the pod's Node, null when unscheduled or gone", args: []string{"pods"}, objects: nodes,
			where: []string{`node == null`}, mode: informer.MetadataOnly,
			want: []string{"shop/queued", "shop/stranded"}, wantType: "*v1.Pod",
		},
		{
			name: "node's status", args: []string{"pods"}, objects: nodes, all: true,
			where: []string{`node != null && node.spec.unschedulable == true || node != null && node.status.conditions.exists(c, c.type == "Ready" && c.status != "True")`},
			want:  []string{"shop/web-1"},
			// worker-1's spec has no unschedulable.
			wantWarnings: []string{`--where "node != null && node.spec.unschedulable == true || node != null && node.status.conditions.exists(c, c.type == \"Ready\" && c.status != \"True\")": no such key: unschedulable (on 4 objects)`},
		},
		{
			name: "several types: a kind the expressions fit, one they are dynamic for", args: []string{"deploy,pods"}, objects: nodes, typed: true,
			where: []string{`object.spec.replicas == 2`},
			want:  []string{"shop/web"}, wantKeep: true,
			wantWarnings: []string{`--where "object.spec.replicas == 2": no such key: replicas (on 6 objects)`},
		},
		{
			name: "has() guards what a kind lacks", args: []string{"deploy,pods"}, objects: nodes,
			where: []string{`has(object.spec.replicas) && object.spec.replicas == 2`},
			want:  []string{"shop/web"}, wantKeep: true,
		},
		{
			name: "a named object that does not match is not missing", args: []string{"pods", "web-0", "web-1"}, objects: list,
			where: []string{`object.metadata.name == "web-1"`}, mode: informer.MetadataOnly,
			want: []string{"shop/web-1"},
		},
		{
			name: "custom resources, typed dynamically", args: []string{"ct"}, objects: list,
			where: []string{`object.spec.cronSpec.startsWith("0 ")`},
			want:  []string{"shop/nightly"}, wantType: "*unstructured.Unstructured", wantKeep: true,
		},
		{
			name: "a typo is an error before anything is listed", args: []string{"pods"}, objects: list, typed: true,
			where:   []string{`object.spec.replica > 1`},
			wantErr: `--where "object.spec.replica > 1": unknown field at column 13: "replica"` + "\n  object.spec.replica > 1\n              ^",
		},
		{
			name: "node on a kind without one", args: []string{"deploy"}, objects: nodes,
			where: []string{`node == null`}, wantErr: `--where "node == null": node is set only for pods, not for Deployment`,
		},
		{
			name: "--by-owner counts only members", args: []string{"pods"}, objects: owners, mode: informer.Summary,
			by: &query.GroupBy{Mode: query.GroupByOwner}, where: []string{`object.status.phase == "Running" && object.metadata.name != "web-5d4-aaaaa"`},
			want:         []string{"shop/web-5d4-bbbbb", "shop/static-web-worker-1", "shop/orphan-ddddd", "shop/canary-7f9-ccccc", "shop/widget-eeeee", "shop/adopted", "shop/debug"},
			wantKeep:     true,
			wantWarnings: []string{"owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com"},
			check: func(t *testing.T, l *query.Listing) {
				for _, g := range l.Groups.Groups {
					if g.Name == "Deployment/web" && (g.Summary.Members != 1 || g.Summary.Pods == nil || g.Summary.Pods.Total != 1) {
						t.Errorf("Deployment/web: %d members, pods %+v; want the one that matches", g.Summary.Members, g.Summary.Pods)
					}
				}
			},
		},
		{
			name: "--by-node: every node, the requests of the pods that match", args: []string{"pods"}, objects: nodes,
			by: &query.GroupBy{Mode: query.GroupByNode}, where: []string{`object.metadata.name.startsWith("web-")`},
			want: []string{"shop/web-0", "shop/web-1"}, wantKeep: true,
			check: func(t *testing.T, l *query.Listing) {
				var got []string
				for _, g := range l.Groups.Groups {
					cpu := "-"
					if g.Summary.Node != nil {
						cpu = g.Summary.Node.Requests.CPU
					}
					got = append(got, fmt.Sprintf("%s %d %s", g.Name, g.Summary.Members, cpu))
				}
				if want := []string{"worker-1 1 520m", "worker-2 1 520m", "worker-3 0 0"}; !slices.Equal(got, want) {
					t.Errorf("groups %q, want %q", got, want)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, got, session, s, rec, err := tc.run(t)
			if tc.wantErr != "" {
				s.CheckRefused(t, err, error.Error, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("answered %q, want %q", got, tc.want)
			}
			if w := session.Warnings(); !slices.Equal(w, append([]string{}, tc.wantWarnings...)) {
				t.Errorf("warnings %q, want %q", w, tc.wantWarnings)
			}
			// The factories of a grouping (the members', the owners') are
			// made concurrently: whether any filters its pages.
			rec.mu.Lock()
			keep := slices.ContainsFunc(rec.configs, func(c informer.Config) bool { return c.Keep != nil })
			rec.mu.Unlock()
			if keep != tc.wantKeep {
				t.Errorf("pages filtered: %v, want %v", keep, tc.wantKeep)
			}
			if tc.check != nil {
				tc.check(t, l)
			}
		})
	}
}

// TestWhereGroupWarnings: a grouping's document carries --where's warnings.
func TestWhereGroupWarnings(t *testing.T) {
	c := whereCase{
		args: []string{"pods"}, objects: fixtures.NodeObjects(), by: &query.GroupBy{Mode: query.GroupByNamespace},
		where: []string{`object.metadata.labels.app != "db"`},
	}
	l, got, _, _, _, err := c.run(t)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"shop/api-0", "shop/backup-29000", "shop/queued", "shop/web-0", "shop/web-1"}; !slices.Equal(got, want) {
		t.Errorf("members %q, want %q", got, want)
	}
	want := []string{`--where "object.metadata.labels.app != \"db\"": no such key: labels (on 1 object)`}
	if !slices.Equal(l.Groups.Warnings, want) {
		t.Errorf("document warnings %q, want %q", l.Groups.Warnings, want)
	}
}

// TestWhereSessionsCountApart: sessions of one Conditions, one per cluster,
// each count their own errors.
func TestWhereSessionsCountApart(t *testing.T) {
	conds := mustWhere(t, `object.metadata.labels.app == "web"`)
	cfg := query.Config{Where: conds, SyncTimeout: 20 * time.Second}
	targets := []query.Target{
		target(t, "a", fixtures.NodeObjects()...),
		target(t, "b", fixtures.ListObjects()...),
	}
	answers := query.Ask(testContext(t), targets, cfg, func(ctx context.Context, s *query.Session) (*query.Listing, error) {
		return s.Get(ctx, query.GetQuery{Args: []string{"pods"}})
	})
	want := map[string][]string{
		// stranded has no labels.
		"a": {`--where "object.metadata.labels.app == \"web\"": no such key: labels (on 1 object)`},
		"b": {},
	}
	for _, a := range answers {
		if a.Err != nil {
			t.Fatalf("%s: %v", a.Context, a.Err)
		}
		if !slices.Equal(a.Warnings, want[a.Context]) {
			t.Errorf("%s warned %q, want %q", a.Context, a.Warnings, want[a.Context])
		}
	}
	if w := conds.Warnings(); len(w) != 0 {
		t.Errorf("the command's Conditions counted %v: each session counts its own", w)
	}
}

// TestWhereRelations: tree and owners keep what matches connected to their
// object; orphans, selects, selected-by, uses and events answer what
// matches.
func TestWhereRelations(t *testing.T) {
	objs := fixtures.SelectionObjects()
	tests := []struct {
		name  string
		ask   func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error)
		where string
		want  []string
	}{
		{
			name: "tree: what matches and the owners above it",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Tree(testContext(t), ref("deployment/web"))
			},
			where: `object.kind == "Pod" && object.status.phase == "Pending"`,
			want:  []string{"Deployment/web 2/2 Available", " ReplicaSet/web-7d9c 2/2", "  Pod/web-7d9c-b 0/1 Pending"},
		},
		{
			name: "tree: nothing below matches; the root stays",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Tree(testContext(t), ref("deployment/web"))
			},
			where: `object.metadata.name == "nothing"`,
			want:  []string{"Deployment/web 2/2 Available"},
		},
		{
			name: "owners: the chain up to what matches",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Owners(testContext(t), ref("pod/web-7d9c-a"))
			},
			where: `object.kind == "Deployment"`,
			want:  []string{"Pod/web-7d9c-a 1/1 Running", " ReplicaSet/web-7d9c 2/2", "  Deployment/web 2/2 Available"},
		},
		{
			name: "owners: nothing above matches",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Owners(testContext(t), ref("pod/web-7d9c-a"))
			},
			where: `object.kind == "Node"`,
			want:  []string{"Pod/web-7d9c-a 1/1 Running"},
		},
		{
			name: "orphans",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Orphans(testContext(t))
			},
			where: `object.metadata.name.startsWith("old")`,
			want:  []string{"ReplicaSet/old-1"},
		},
		{
			name: "selects",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Selection(testContext(t), ref("service/web"), false, false)
			},
			where: `object.status.phase == "Running"`,
			want:  []string{"Pod/web-7d9c-a"},
		},
		{
			name: "selected-by",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Selection(testContext(t), ref("pod/web-7d9c-a"), true, false)
			},
			where: `object.kind != "Service"`,
			want:  []string{"Deployment/web", "PodDisruptionBudget/all", "PodDisruptionBudget/web"},
		},
		{
			name: "uses: the users that match",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Uses(testContext(t), ref("configmap/app-config"))
			},
			where: `object.kind == "Pod"`,
			want:  []string{"Pod/web-7d9c-a", "Pod/web-7d9c-b"},
		},
		{
			name: "uses: what a pod uses that exists and matches",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.Uses(testContext(t), ref("pod/web-7d9c-a"))
			},
			where: `object.kind == "Secret"`,
			want:  []string{"Secret/db"},
		},
		{
			name: "events: the Event objects that match",
			ask: func(t *testing.T, s *query.Session, ref func(string) query.ObjectRef) (any, error) {
				return s.EventList(testContext(t), ref("deployment/web"), query.EventsOptions{})
			},
			where: `object.type == "Warning"`,
			want:  []string{"Event/e3"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(nil, objs...)
			cfg, mapper := relationConfig(t)
			cfg.Where = mustWhere(t, tc.where)
			session, _ := newSession(t, s, cfg)
			doc, err := tc.ask(t, session, func(arg string) query.ObjectRef { return objectRef(t, mapper, arg) })
			if err != nil {
				t.Fatal(err)
			}
			if got := answerLines(t, doc); !slices.Equal(got, tc.want) {
				t.Errorf("answer:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// answerLines describes a relation question's answer: a tree's lines, a
// list's Kind/name lines.
func answerLines(t *testing.T, doc any) []string {
	t.Helper()
	var out []string
	switch d := doc.(type) {
	case *v1alpha1.Tree:
		treeLines(d.Root, 0, &out)
	case *v1alpha1.RelationList:
		for _, it := range d.Items {
			out = append(out, it.Kind+"/"+it.Name)
		}
	case *query.Listing:
		for _, m := range d.Members {
			for _, o := range m.Objects {
				a, err := meta.Accessor(o)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, m.GVK.Kind+"/"+a.GetName())
			}
		}
	default:
		t.Fatalf("no lines for %T", doc)
	}
	return out
}

// TestWhereUsesMetadataOnly: what a pod uses is read as metadata, Secrets
// above all: an expression that reads more is an error.
func TestWhereUsesMetadataOnly(t *testing.T) {
	s := fakeapi.New(nil, fixtures.SelectionObjects()...)
	dc := fixtures.Discovery(fixtures.RelationAPIResources())
	mapper, _ := fixtures.Mapper(t, dc)
	session, _ := newSession(t, s, query.Config{Target: query.Target{Mapper: mapper, Namespace: "shop"}, Where: mustWhere(t, `has(object.data)`)})
	_, err := session.Uses(testContext(t), objectRef(t, mapper, "pod/web-7d9c-a"))
	if err == nil || !strings.HasPrefix(err.Error(), "--where reads beyond metadata, and kubectl idx uses reads the objects a pod spec refers to as metadata only") {
		t.Errorf("error %v, want the metadata-only one", err)
	}
}

// TestWhereWatchEvents: the events feed holds the Event objects that match.
func TestWhereWatchEvents(t *testing.T) {
	s := fakeapi.New(nil, windowObjects()...)
	dc := fixtures.Discovery(fixtures.RelationAPIResources())
	mapper, _ := fixtures.Mapper(t, dc)
	session, _ := newSession(t, s, query.Config{
		Target: query.Target{Mapper: mapper, Namespace: "shop", Hooks: query.Hooks{GetMetadata: metadataOf(s)}},
		Where:  mustWhere(t, `object.reason.startsWith("S")`),
	})
	got := initialEvents(t, session, objectRef(t, mapper, "deployment/web"), query.EventsOptions{})
	if want := []string{"ADDED ScalingReplicaSet", "ADDED Scaled"}; !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}
