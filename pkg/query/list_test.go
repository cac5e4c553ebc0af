package query_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// objectNames lists the objects of members as namespace/name (name alone
// when cluster-scoped), one slice per Members, with the Go type when it is
// not wantType.
func objectNames(t *testing.T, members []v1alpha1.Members, wantType string) [][]string {
	t.Helper()
	out := [][]string{}
	for _, m := range members {
		names := []string{}
		for _, o := range m.Objects {
			if got := fmt.Sprintf("%T", o); wantType != "" && got != wantType {
				t.Errorf("%s is a %s, want %s", m.GVK.Kind, got, wantType)
			}
			a, err := meta.Accessor(o)
			if err != nil {
				t.Fatal(err)
			}
			name := a.GetName()
			if a.GetNamespace() != "" {
				name = a.GetNamespace() + "/" + name
			}
			names = append(names, name)
		}
		out = append(out, names)
	}
	return out
}

func TestSessionList(t *testing.T) {
	pods := func(names ...string) query.Request { return query.Request{Resource: fixtures.Pods, Names: names} }
	tests := []struct {
		name              string
		reqs              []query.Request
		allNamespaces     bool
		labelSelector     string
		keepManagedFields bool
		objects           []runtime.Object // default fixtures.ListObjects()

		want         [][]string // per request, namespace/name in order
		wantType     string     // Go type of every object; default *v1.Pod
		wantMissing  []string
		wantFieldSel string // of the one factory
		wantManaged  int    // managedFields entries per object
	}{
		{name: "pods, sorted by name", reqs: []query.Request{pods()}, want: [][]string{{"shop/web-0", "shop/web-1"}}},
		{name: "pods in all namespaces, by namespace then name", reqs: []query.Request{pods()}, allNamespaces: true, want: [][]string{{"other/db-0", "shop/web-0", "shop/web-1"}}},
		{
			name: "pods and services, in the order asked", reqs: []query.Request{{Resource: fixtures.Services}, pods()},
			want: [][]string{{"shop/web"}, {"shop/web-0", "shop/web-1"}}, wantType: "-",
		},
		{
			name: "custom resources", reqs: []query.Request{{Resource: fixtures.CronTabs}},
			want: [][]string{{"shop/every-5m", "shop/nightly"}}, wantType: "*unstructured.Unstructured",
		},
		{
			name: "metadata only", reqs: []query.Request{{Resource: fixtures.Pods, Mode: informer.MetadataOnly}},
			want: [][]string{{"shop/web-0", "shop/web-1"}}, wantType: "*v1.PartialObjectMetadata",
		},
		{name: "label selector", reqs: []query.Request{pods()}, labelSelector: "app=web", want: [][]string{{"shop/web-0"}}},
		{name: "managedFields dropped", reqs: []query.Request{pods()}, want: [][]string{{"shop/web-0", "shop/web-1"}}},
		{name: "managedFields kept", reqs: []query.Request{pods()}, keepManagedFields: true, want: [][]string{{"shop/web-0", "shop/web-1"}}, wantManaged: 1},
		{name: "one name is a field selector", reqs: []query.Request{pods("web-1")}, want: [][]string{{"shop/web-1"}}, wantFieldSel: "metadata.name=web-1"},
		{name: "two names list the namespace, in the order named", reqs: []query.Request{pods("web-1", "web-0")}, want: [][]string{{"shop/web-1", "shop/web-0"}}},
		{
			name: "a found and a missing name", reqs: []query.Request{pods("web-0", "nope")},
			want: [][]string{{"shop/web-0"}}, wantMissing: []string{`pods "nope" not found`},
		},
		{name: "a missing name", reqs: []query.Request{pods("nope")}, want: [][]string{{}}, wantMissing: []string{`pods "nope" not found`}, wantFieldSel: "metadata.name=nope"},
		{
			name: "two missing names", reqs: []query.Request{pods("nope-1", "nope-2")},
			want: [][]string{{}}, wantMissing: []string{`pods "nope-1" not found`, `pods "nope-2" not found`},
		},
		{
			name: "a name in another namespace", reqs: []query.Request{pods("db-0")},
			want: [][]string{{}}, wantMissing: []string{`pods "db-0" not found`}, wantFieldSel: "metadata.name=db-0",
		},
		{name: "nothing in the namespace", reqs: []query.Request{pods()}, objects: []runtime.Object{fixtures.Pod("other", "db-0", "db", true)}, want: [][]string{{}}},
		{name: "nothing of a cluster-scoped type", reqs: []query.Request{{Resource: fixtures.Nodes}}, want: [][]string{{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objects := tc.objects
			if objects == nil {
				objects = fixtures.ListObjects()
			}
			mapper, _ := testMapper(t)
			cfg := query.Config{Target: query.Target{Mapper: mapper, Namespace: "shop"}, LabelSelector: tc.labelSelector, KeepManagedFields: tc.keepManagedFields}
			if tc.allNamespaces {
				cfg.Namespace = ""
			}
			s, rec := newSession(t, fakeapi.New(nil, objects...), cfg)
			members, missing, err := s.List(testContext(t), tc.reqs)
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			wantType := tc.wantType
			switch wantType {
			case "":
				wantType = "*v1.Pod"
			case "-":
				wantType = ""
			}
			if got := objectNames(t, members, wantType); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("objects = %q, want %q", got, tc.want)
			}
			for i, m := range members {
				if r := tc.reqs[i].Resource; m.GVK != r.GVK || m.Namespaced != r.Namespaced {
					t.Errorf("members %d are %v (namespaced %v), want %v (namespaced %v)", i, m.GVK, m.Namespaced, r.GVK, r.Namespaced)
				}
				for _, o := range m.Objects {
					if a, _ := meta.Accessor(o); len(a.GetManagedFields()) != tc.wantManaged {
						t.Errorf("%s has %d managedFields, want %d", a.GetName(), len(a.GetManagedFields()), tc.wantManaged)
					}
				}
			}
			var gotMissing []string
			for _, err := range missing {
				if !apierrors.IsNotFound(err) {
					t.Errorf("missing name error %v is not NotFound", err)
				}
				gotMissing = append(gotMissing, err.Error())
			}
			if !slices.Equal(gotMissing, tc.wantMissing) {
				t.Errorf("missing = %q, want %q", gotMissing, tc.wantMissing)
			}
			if len(rec.configs) != 1 || rec.configs[0].FieldSelector != tc.wantFieldSel || rec.configs[0].Namespace != cfg.Namespace {
				t.Errorf("factories %+v, want one in namespace %q with field selector %q", rec.configs, cfg.Namespace, tc.wantFieldSel)
			}
			if w := s.Warnings(); len(w) != 0 {
				t.Errorf("warnings = %q, want none", w)
			}
		})
	}
}

// fallbackWarning is the warning of an -A list of pods answered namespace by
// namespace, with namespace other forbidden.
const fallbackWarning = `cannot list pods at the cluster scope; listed them in each of the 3 namespaces instead, skipping 1 where that is forbidden too: other`

// TestSessionPerNamespaceFallback: a user who may list pods in some
// namespaces but not at the cluster scope gets the pods of those namespaces
// under -A, and a warning naming the namespaces skipped, in lists and in
// groups. A user who may not list namespaces either gets the server's
// Forbidden error.
func TestSessionPerNamespaceFallback(t *testing.T) {
	tests := []struct {
		name          string
		namespaces    bool // namespaces may be listed
		group         bool // ask Group by namespace, not List
		want          []string
		wantGroups    []string
		wantWarnings  []string
		wantForbidden string
	}{
		{name: "namespaces listable", namespaces: true, want: []string{"shop/web-0", "shop/web-1"}, wantWarnings: []string{fallbackWarning}},
		{name: "grouped", namespaces: true, group: true, wantGroups: []string{"shop"}, want: []string{"shop/web-0", "shop/web-1"}, wantWarnings: []string{fallbackWarning}},
		{
			name:          "namespaces not listable",
			wantForbidden: `pods is forbidden: User "jane" cannot list resource "pods" in API group "" at the cluster scope`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mapper, _ := testMapper(t)
			s, _ := newSession(t, fixtures.FallbackServer(tc.namespaces), query.Config{Target: query.Target{Mapper: mapper}})
			reqs := []query.Request{{Resource: fixtures.Pods}}
			var members []v1alpha1.Members
			var warnings []string
			var err error
			if tc.group {
				var doc *v1alpha1.GroupList
				if doc, _, err = s.Group(testContext(t), reqs, query.GroupBy{Mode: query.GroupByNamespace}); err == nil {
					if !slices.Equal(groupNames(doc), tc.wantGroups) {
						t.Errorf("groups %q, want %q", groupNames(doc), tc.wantGroups)
					}
					for _, g := range doc.Groups {
						members = append(members, g.Members...)
					}
					warnings = doc.Warnings
				}
			} else {
				members, _, err = s.List(testContext(t), reqs)
				warnings = s.Warnings()
			}
			if tc.wantForbidden != "" {
				var status apierrors.APIStatus
				if !apierrors.IsForbidden(err) || !errors.As(err, &status) || status.(error).Error() != tc.wantForbidden {
					t.Errorf("error = %v, want the server's Forbidden %q", err, tc.wantForbidden)
				}
				return
			}
			if err != nil {
				t.Fatalf("answer: %v", err)
			}
			var got []string
			for _, names := range objectNames(t, members, "*v1.Pod") {
				got = append(got, names...)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("pods = %q, want %q", got, tc.want)
			}
			if !slices.Equal(warnings, tc.wantWarnings) {
				t.Errorf("warnings = %q, want %q", warnings, tc.wantWarnings)
			}
		})
	}
}
