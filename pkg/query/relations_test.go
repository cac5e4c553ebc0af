package query_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// relationSession is a session over objs for the relation questions, in shop
// or, with allNamespaces, everywhere with shop as the context's namespace.
// The listable types are fixtures.RelationAPIResources' and the resources
// named in forbidden may not be listed. Trees get their READY and STATUS from
// the commands' printers.ObjectStatus, so they show which objects were read
// in full.
func relationSession(t *testing.T, objs []runtime.Object, allNamespaces bool, forbidden ...string) (*query.Session, *factories, meta.RESTMapper) {
	t.Helper()
	s := fakeapi.New(nil, objs...)
	fixtures.ForbidMetadataList(s, forbidden...)
	cfg, mapper := relationConfig(t)
	if allNamespaces {
		cfg.Namespace, cfg.DefaultNamespace = "", "shop"
	}
	session, rec := newSession(t, s, cfg)
	return session, rec, mapper
}

// relationConfig is the configuration of a question over every type of
// fixtures.RelationAPIResources in shop, and the mapper of those types.
func relationConfig(t *testing.T) (query.Config, meta.RESTMapper) {
	t.Helper()
	tg := shopTarget(t, fixtures.RelationAPIResources())
	return query.Config{Target: tg, ObjectStatus: printers.ObjectStatus}, tg.Mapper
}

// eventReasons are the reasons of evs, in order.
func eventReasons(evs []*corev1.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Reason)
	}
	return out
}

// forbiddenReplicaSets is the error listing replicasets in shop gets.
var forbiddenReplicaSets = fixtures.Forbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "shop").Error()

// treeLines flattens a tree into "depth:Kind/name ready status" lines, with
// "missing" for an owner that does not exist.
func treeLines(it *v1alpha1.TreeItem, depth int, out *[]string) {
	if it == nil {
		return
	}
	fields := []string{it.Kind + "/" + it.Name}
	for _, f := range []string{it.Ready, it.Status} {
		if f != "" {
			fields = append(fields, f)
		}
	}
	if it.Missing {
		fields = append(fields, "missing")
	}
	*out = append(*out, strings.Repeat(" ", depth)+strings.Join(fields, " "))
	for _, c := range it.Children {
		treeLines(c, depth+1, out)
	}
	for _, c := range it.Owners {
		treeLines(c, depth+1, out)
	}
}

// checkTree checks a tree document's header and returns its lines.
func checkTree(t *testing.T, doc *v1alpha1.Tree, kind string) []string {
	t.Helper()
	if doc.APIVersion != v1alpha1.SchemeGroupVersion.String() || doc.Kind != kind || doc.Warnings == nil {
		t.Errorf("document %s %s, warnings %v; want %s %s and a warnings array", doc.APIVersion, doc.Kind, doc.Warnings, v1alpha1.SchemeGroupVersion.String(), kind)
	}
	var lines []string
	treeLines(doc.Root, 0, &lines)
	return lines
}

func TestSessionTree(t *testing.T) {
	tests := []struct {
		name          string
		object        string
		allNamespaces bool
		forbidden     []string
		want          []string
		warnings      []string
		wantNS        []string // the namespaces of the factories, in order
		wantErr       string
	}{
		{
			name:   "deployment to pods, with status",
			object: "deployment/web",
			want: []string{
				"Deployment/web 2/2 Available",
				" ReplicaSet/web-7d9c 2/2",
				"  Pod/web-7d9c-a 1/1 Running",
				"  Pod/web-7d9c-b 0/1 Pending",
			},
			wantNS: []string{"shop"},
		},
		{
			name:   "custom resource at the top",
			object: "rollout/checkout",
			want: []string{
				"Rollout/checkout Paused",
				" ReplicaSet/checkout-1 0/1",
			},
			wantNS: []string{"shop"},
		},
		{
			name:   "cluster-scoped root searches every namespace",
			object: "node/worker-1",
			want:   []string{"Node/worker-1 Ready", " Pod/probe-worker-1 1/1 Running"},
			// The mirror pod's status is read from its namespace only.
			wantNS: []string{"", "shop"},
		},
		{
			name:          "all namespaces: the root in the context's namespace, status from the namespaces the tree touches",
			object:        "deployment/web",
			allNamespaces: true,
			want: []string{
				"Deployment/web 2/2 Available",
				" ReplicaSet/web-7d9c 2/2",
				"  Pod/web-7d9c-a 1/1 Running",
				"  Pod/web-7d9c-b 0/1 Pending",
			},
			wantNS: []string{"", "shop"},
		},
		{
			name:      "a type the user may not list is skipped with a warning",
			object:    "deploy/web",
			forbidden: []string{"replicasets"},
			want:      []string{"Deployment/web 2/2 Available"},
			warnings:  []string{"cannot list replicasets.apps, the answer may be incomplete: " + forbiddenReplicaSets},
			wantNS:    []string{"shop"},
		},
		{
			name:    "not found",
			object:  "deployment/x",
			wantErr: `deployments.apps "x" not found`,
			wantNS:  []string{"shop"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, rec, mapper := relationSession(t, fixtures.RelationObjects(), tc.allNamespaces, tc.forbidden...)
			doc, err := s.Tree(testContext(t), objectRef(t, mapper, tc.object))
			if tc.wantErr != "" {
				if !apierrors.IsNotFound(err) || err.Error() != tc.wantErr {
					t.Errorf("Tree error = %v, want NotFound %q", err, tc.wantErr)
				}
				if doc != nil {
					t.Errorf("Tree returned a document with its error: %+v", doc)
				}
			} else {
				if err != nil {
					t.Fatalf("Tree: %v", err)
				}
				if got := checkTree(t, doc, v1alpha1.TreeKind); !slices.Equal(got, tc.want) {
					t.Errorf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
				}
				if !slices.Equal(doc.Warnings, append([]string{}, tc.warnings...)) {
					t.Errorf("warnings = %q, want %q", doc.Warnings, tc.warnings)
				}
			}
			if got := rec.namespaces(); !slices.Equal(got, tc.wantNS) {
				t.Errorf("factories for namespaces %q, want %q", got, tc.wantNS)
			}
		})
	}
}

func TestSessionOwners(t *testing.T) {
	tests := []struct {
		name   string
		object string
		want   []string
	}{
		{"pod up to its deployment", "pod/web-7d9c-a", []string{
			"Pod/web-7d9c-a 1/1 Running", " ReplicaSet/web-7d9c 2/2", "  Deployment/web 2/2 Available",
		}},
		{"mirror pod owned by a node", "pod/probe-worker-1", []string{
			"Pod/probe-worker-1 1/1 Running", " Node/worker-1 Ready",
		}},
		{"custom resource owner", "rs/checkout-1", []string{
			"ReplicaSet/checkout-1 0/1", " Rollout/checkout Paused",
		}},
		{"missing owner", "rs/legacy-1", []string{
			"ReplicaSet/legacy-1 0/1", " Deployment/legacy missing",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, mapper := relationSession(t, fixtures.RelationObjects(), false)
			doc, err := s.Owners(testContext(t), objectRef(t, mapper, tc.object))
			if err != nil {
				t.Fatalf("Owners: %v", err)
			}
			if got := checkTree(t, doc, v1alpha1.OwnerTreeKind); !slices.Equal(got, tc.want) {
				t.Errorf("owners:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(doc.Root.Owners) == 0 || !doc.Root.Owners[0].Controller {
				t.Errorf("the direct owner is not marked as controller")
			}
		})
	}
}

func TestSessionOrphans(t *testing.T) {
	for _, allNamespaces := range []bool{false, true} {
		t.Run(fmt.Sprintf("allNamespaces=%v", allNamespaces), func(t *testing.T) {
			s, _, _ := relationSession(t, fixtures.RelationObjects(), allNamespaces)
			doc, err := s.Orphans(testContext(t))
			if err != nil {
				t.Fatalf("Orphans: %v", err)
			}
			var got []string
			for _, it := range doc.Items {
				line := it.Kind + "/" + it.Name
				for _, r := range it.MissingOwners {
					line += " missing:" + r.Kind + "/" + r.Name
				}
				for _, r := range it.OrphaningOwners {
					line += " orphaning:" + r.Kind + "/" + r.Name
				}
				got = append(got, line)
			}
			want := []string{"ReplicaSet/legacy-1 missing:Deployment/legacy", "ReplicaSet/old-1 orphaning:Deployment/old"}
			if !slices.Equal(got, want) {
				t.Errorf("orphans = %q, want %q", got, want)
			}
			if doc.APIVersion != v1alpha1.SchemeGroupVersion.String() || doc.Kind != v1alpha1.OrphanListKind || doc.Warnings == nil {
				t.Errorf("document %s %s, warnings %v", doc.APIVersion, doc.Kind, doc.Warnings)
			}
		})
	}
}

func TestSessionEvents(t *testing.T) {
	tests := []struct {
		name      string
		types     []string
		forbidden []string
		want      []string // reasons, oldest first
		warnings  []string
	}{
		{name: "every type", want: []string{"ScalingReplicaSet", "SuccessfulCreate", "FailedScheduling"}},
		{name: "warnings, any case", types: []string{"warning"}, want: []string{"FailedScheduling"}},
		{
			// A type the user may not list costs the events of what lies
			// under it and a warning, not the answer.
			name: "a type the user may not list", forbidden: []string{"replicasets"},
			want:     []string{"ScalingReplicaSet"},
			warnings: []string{"cannot list replicasets.apps, the answer may be incomplete: " + forbiddenReplicaSets},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, mapper := relationSession(t, fixtures.RelationObjects(), false, tc.forbidden...)
			evs, err := s.Events(testContext(t), objectRef(t, mapper, "deployment/web"), query.EventsOptions{Types: tc.types})
			if err != nil {
				t.Fatalf("Events: %v", err)
			}
			if got := eventReasons(evs); !slices.Equal(got, tc.want) {
				t.Errorf("events = %q, want %q (newest last)", got, tc.want)
			}
			if w := s.Warnings(); !slices.Equal(w, append([]string{}, tc.warnings...)) {
				t.Errorf("warnings = %q, want %q", w, tc.warnings)
			}
		})
	}
}

// memberNames lists members as Kind/name, in order.
func memberNames(members []v1alpha1.Members) []string {
	var names []string
	for _, m := range members {
		for _, o := range m.Objects {
			a, err := meta.Accessor(o)
			if err != nil {
				names = append(names, fmt.Sprintf("%s/<%T>", m.GVK.Kind, o))
				continue
			}
			names = append(names, m.GVK.Kind+"/"+a.GetName())
		}
	}
	return names
}

func TestSessionSelects(t *testing.T) {
	tests := []struct {
		name     string
		inverse  bool // SelectedBy
		object   string
		want     []string
		warnings []string
	}{
		{name: "service", object: "svc/web", want: []string{"Pod/web-7d9c-a", "Pod/web-7d9c-b"}},
		{name: "deployment", object: "deployment/web", want: []string{"Pod/web-7d9c-a", "Pod/web-7d9c-b"}},
		{
			name: "empty pdb selects every pod", object: "pdb/all", want: []string{"Pod/probe-worker-1", "Pod/web-7d9c-a", "Pod/web-7d9c-b"},
			warnings: []string{"poddisruptionbudget/all selects every pod in namespace shop"},
		},
		{
			name: "service without selector", object: "svc/external", want: nil,
			warnings: []string{"service/external has no selector, so it selects no pods"},
		},
		{name: "selected-by", inverse: true, object: "pod/web-7d9c-a", want: []string{
			"Service/web", "Deployment/web", "PodDisruptionBudget/all", "PodDisruptionBudget/web",
		}},
		{name: "selected-by a pod without labels", inverse: true, object: "pod/probe-worker-1", want: []string{"PodDisruptionBudget/all"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, mapper := relationSession(t, fixtures.SelectionObjects(), false)
			ask := s.Selects
			if tc.inverse {
				ask = s.SelectedBy
			}
			members, err := ask(testContext(t), objectRef(t, mapper, tc.object))
			if err != nil {
				t.Fatalf("answer: %v", err)
			}
			if got := memberNames(members); !slices.Equal(got, tc.want) {
				t.Errorf("objects = %q, want %q", got, tc.want)
			}
			if w := s.Warnings(); !slices.Equal(w, append([]string{}, tc.warnings...)) {
				t.Errorf("warnings = %q, want %q", w, tc.warnings)
			}
		})
	}
}

func TestSessionUses(t *testing.T) {
	tests := []struct {
		name          string
		object        string
		wantDirection string
		want          []string // kind/name via... [exists]
		wantErr       string
	}{
		{name: "configmap users", object: "configmap/app-config", wantDirection: "users", want: []string{
			"Deployment/web volume config", "Pod/web-7d9c-a volume config", "Pod/web-7d9c-b volume config",
		}},
		{name: "secret users", object: "secret/db", wantDirection: "users", want: []string{"Pod/web-7d9c-a env app/PASSWORD", "Pod/web-7d9c-b env app/PASSWORD"}},
		{name: "what a pod uses", object: "pod/web-7d9c-a", wantDirection: "uses", want: []string{
			"ConfigMap/app-config volume config true", "Secret/db env app/PASSWORD true", "ServiceAccount/web serviceAccountName true",
		}},
		{name: "what a template uses, missing service account", object: "deployment/web", wantDirection: "uses", want: []string{
			"ConfigMap/app-config volume config true", "ServiceAccount/default serviceAccountName (default) false",
		}},
		{name: "a secret nothing uses that does not exist", object: "secret/nope", wantErr: `secrets "nope" not found`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _, mapper := relationSession(t, fixtures.SelectionObjects(), false)
			doc, err := s.Uses(testContext(t), objectRef(t, mapper, tc.object))
			if tc.wantErr != "" {
				if !apierrors.IsNotFound(err) || err.Error() != tc.wantErr {
					t.Errorf("Uses error = %v, want NotFound %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Uses: %v", err)
			}
			// Secrets are read as metadata only: their data is in no answer.
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), fixtures.SecretValue) {
				t.Fatalf("secret data in the answer:\n%s", data)
			}
			if doc.APIVersion != v1alpha1.SchemeGroupVersion.String() || doc.Kind != v1alpha1.UsesListKind || doc.Direction != tc.wantDirection || doc.Warnings == nil {
				t.Errorf("document %s %s, direction %q, warnings %v; want direction %q", doc.APIVersion, doc.Kind, doc.Direction, doc.Warnings, tc.wantDirection)
			}
			var got []string
			for _, it := range doc.Items {
				line := it.Kind + "/" + it.Name + " " + strings.Join(it.Via, ",")
				if it.Exists != nil {
					line += " " + fmt.Sprint(*it.Exists)
				}
				got = append(got, line)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
