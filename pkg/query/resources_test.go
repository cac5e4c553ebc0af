package query_test

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/restmapper"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// testMapper is the mapper of fixtures.APIResources, as kubectl builds it.
func testMapper(tb testing.TB) (meta.RESTMapper, restmapper.CategoryExpander) {
	tb.Helper()
	return fixtures.Mapper(tb, fixtures.Discovery(fixtures.APIResources()))
}

func TestParseResourceArgs(t *testing.T) {
	pods := func(names ...string) query.Request { return query.Request{Resource: fixtures.Pods, Names: names} }
	tests := []struct {
		name       string
		args       []string
		want       []query.Request
		wantSingle bool
		wantErr    string
	}{
		// One type, every way of naming it.
		{name: "plural", args: []string{"pods"}, want: []query.Request{pods()}},
		{name: "singular", args: []string{"pod"}, want: []query.Request{pods()}},
		{name: "short name", args: []string{"po"}, want: []query.Request{pods()}},
		{name: "kind", args: []string{"Pod"}, want: []query.Request{pods()}},
		{name: "upper-case plural", args: []string{"PODS"}, want: []query.Request{pods()}},
		{name: "core version-qualified", args: []string{"pods.v1."}, want: []query.Request{pods()}},
		{name: "group-qualified", args: []string{"deployments.apps"}, want: []query.Request{{Resource: fixtures.Deployments}}},
		{name: "group-qualified short name", args: []string{"deploy.apps"}, want: []query.Request{{Resource: fixtures.Deployments}}},
		{name: "group-qualified kind", args: []string{"Deployment.apps"}, want: []query.Request{{Resource: fixtures.Deployments}}},
		{name: "version-qualified", args: []string{"deployments.v1.apps"}, want: []query.Request{{Resource: fixtures.Deployments}}},
		{name: "version-qualified kind", args: []string{"Deployment.v1.apps"}, want: []query.Request{{Resource: fixtures.Deployments}}},
		{name: "custom resource plural", args: []string{"crontabs"}, want: []query.Request{{Resource: fixtures.CronTabs}}},
		{name: "custom resource short name", args: []string{"ct"}, want: []query.Request{{Resource: fixtures.CronTabs}}},
		{name: "custom resource fully qualified", args: []string{"crontabs.v1.stable.example.com"}, want: []query.Request{{Resource: fixtures.CronTabs}}},
		{name: "custom resource kind and group", args: []string{"CronTab.stable.example.com"}, want: []query.Request{{Resource: fixtures.CronTabs}}},
		{name: "cluster-scoped", args: []string{"no"}, want: []query.Request{{Resource: fixtures.Nodes}}},

		// Several types.
		{
			name: "comma list", args: []string{"po,svc,deploy"},
			want: []query.Request{pods(), {Resource: fixtures.Services}, {Resource: fixtures.Deployments}},
		},
		{
			name: "comma list with duplicates keeps the first", args: []string{"pods,po,pod,svc,Pod,services"},
			want: []query.Request{pods(), {Resource: fixtures.Services}},
		},
		{name: "empty elements are skipped", args: []string{"pods,,"}, want: []query.Request{pods()}},
		{
			name: "category", args: []string{"all"},
			want: []query.Request{pods(), {Resource: fixtures.Services}, {Resource: fixtures.Deployments}},
		},
		{
			name: "category and a type it contains", args: []string{"svc,all,ct"},
			want: []query.Request{{Resource: fixtures.Services}, pods(), {Resource: fixtures.Deployments}, {Resource: fixtures.CronTabs}},
		},

		// TYPE NAME...
		{name: "one name", args: []string{"pods", "web-0"}, want: []query.Request{pods("web-0")}, wantSingle: true},
		{name: "two names", args: []string{"po", "web-0", "web-1"}, want: []query.Request{pods("web-0", "web-1")}},
		{
			name: "names for two types", args: []string{"pods,svc", "web"},
			want: []query.Request{pods("web"), {Resource: fixtures.Services, Names: []string{"web"}}},
		},
		{name: "empty name", args: []string{"pods", ""}, wantErr: "resource name may not be empty"},

		// TYPE/NAME...
		{name: "type/name", args: []string{"pods/web-0"}, want: []query.Request{pods("web-0")}, wantSingle: true},
		{name: "short type/name", args: []string{"deploy.apps/web"}, want: []query.Request{{Resource: fixtures.Deployments, Names: []string{"web"}}}, wantSingle: true},
		{name: "two of one type", args: []string{"po/web-0", "pod/web-1"}, want: []query.Request{pods("web-0", "web-1")}},
		{name: "same object twice", args: []string{"po/web-0", "pods/web-0"}, want: []query.Request{pods("web-0")}},
		{
			name: "two types", args: []string{"pods/web-0", "svc/web", "pods/web-1"},
			want: []query.Request{pods("web-0", "web-1"), {Resource: fixtures.Services, Names: []string{"web"}}},
		},
		{
			name: "type/name after a type", args: []string{"pods", "pods/web-0"},
			wantErr: "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl idx resource/<resource_name>' instead of 'kubectl idx resource resource/<resource_name>'",
		},
		{
			name: "name after a type/name", args: []string{"pods/web-0", "web-1"},
			wantErr: "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl idx resource/<resource_name>' instead of 'kubectl idx resource resource/<resource_name>'",
		},
		{name: "type/ without name", args: []string{"pods/"}, wantErr: `arguments in resource/name form must have a single resource and name, got "pods/"`},
		{name: "/name without type", args: []string{"/web"}, wantErr: `arguments in resource/name form must have a single resource and name, got "/web"`},
		{name: "two slashes", args: []string{"pods/web/x"}, wantErr: `arguments in resource/name form must have a single resource and name, got "pods/web/x"`},

		// Unknown types, in kubectl's words.
		{name: "unknown type", args: []string{"podz"}, wantErr: `the server doesn't have a resource type "podz"`},
		{name: "unknown type in a list", args: []string{"pods,podz"}, wantErr: `the server doesn't have a resource type "podz"`},
		{name: "unknown type with a name", args: []string{"podz/web"}, wantErr: `the server doesn't have a resource type "podz"`},
		{name: "unknown group", args: []string{"deployments.nope"}, wantErr: `the server doesn't have a resource type "deployments"`},
		{name: "no args", args: nil, wantErr: "you must specify the type of resource to get"},
		{name: "only commas", args: []string{","}, wantErr: "you must specify the type of resource to get"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mapper, categories := testMapper(t)
			got, single, err := query.ParseResourceArgs(mapper, categories, tc.args)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParseResourceArgs(%q) error = %v, want %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseResourceArgs(%q): %v", tc.args, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseResourceArgs(%q) =\n %+v\nwant\n %+v", tc.args, got, tc.want)
			}
			if single != tc.wantSingle {
				t.Errorf("ParseResourceArgs(%q) singleItem = %v, want %v", tc.args, single, tc.wantSingle)
			}
		})
	}
}

func TestParseResourceArgsWithoutCategories(t *testing.T) {
	mapper, _ := testMapper(t)
	_, _, err := query.ParseResourceArgs(mapper, nil, []string{"all"})
	if want := `the server doesn't have a resource type "all"`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}
