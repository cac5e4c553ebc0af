package cmd

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// testAPIResources is the discovery document of the tests' API server: core pods,
// services and nodes, apps deployments and a stable.example.com CronTab CRD.
func testAPIResources() []*metav1.APIResourceList {
	verbs := metav1.Verbs{"get", "list", "watch"}
	return []*metav1.APIResourceList{
		{
			GroupVersion: "v1",
			APIResources: []metav1.APIResource{
				{Name: "pods", SingularName: "pod", Namespaced: true, Kind: "Pod", Verbs: verbs, ShortNames: []string{"po"}, Categories: []string{"all"}},
				{Name: "pods/log", Namespaced: true, Kind: "Pod", Verbs: metav1.Verbs{"get"}},
				{Name: "services", SingularName: "service", Namespaced: true, Kind: "Service", Verbs: verbs, ShortNames: []string{"svc"}, Categories: []string{"all"}},
				{Name: "nodes", SingularName: "node", Kind: "Node", Verbs: verbs, ShortNames: []string{"no"}},
			},
		},
		{
			GroupVersion: "apps/v1",
			APIResources: []metav1.APIResource{
				{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: verbs, ShortNames: []string{"deploy"}, Categories: []string{"all"}},
			},
		},
		{
			GroupVersion: "stable.example.com/v1",
			APIResources: []metav1.APIResource{
				{Name: "crontabs", SingularName: "crontab", Namespaced: true, Kind: "CronTab", Verbs: verbs, ShortNames: []string{"ct"}, Categories: []string{"cron"}},
			},
		},
	}
}

// testMapper returns the RESTMapper and category expander kubectl would build from
// testAPIResources.
func testMapper(t *testing.T) (meta.RESTMapper, restmapper.CategoryExpander) {
	t.Helper()
	dc := &discoveryfake.FakeDiscovery{Fake: &clienttesting.Fake{Resources: testAPIResources()}}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewShortcutExpander(restmapper.NewDiscoveryRESTMapper(groups), dc, func(string) {})
	return mapper, restmapper.NewDiscoveryCategoryExpander(dc)
}

var (
	podsResource = informer.Resource{
		GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true,
	}
	servicesResource = informer.Resource{
		GVR: schema.GroupVersionResource{Version: "v1", Resource: "services"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, Namespaced: true,
	}
	nodesResource = informer.Resource{
		GVR: schema.GroupVersionResource{Version: "v1", Resource: "nodes"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Node"},
	}
	deploymentsResource = informer.Resource{
		GVR:        schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		GVK:        schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Namespaced: true,
	}
	crontabsResource = informer.Resource{
		GVR:        schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"},
		GVK:        schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"},
		Namespaced: true,
	}
)

func TestParseResourceArgs(t *testing.T) {
	pods := func(names ...string) Request { return Request{Resource: podsResource, Names: names} }
	tests := []struct {
		name       string
		args       []string
		want       []Request
		wantSingle bool
		wantErr    string
	}{
		// One type, every way of naming it.
		{name: "plural", args: []string{"pods"}, want: []Request{pods()}},
		{name: "singular", args: []string{"pod"}, want: []Request{pods()}},
		{name: "short name", args: []string{"po"}, want: []Request{pods()}},
		{name: "kind", args: []string{"Pod"}, want: []Request{pods()}},
		{name: "upper-case plural", args: []string{"PODS"}, want: []Request{pods()}},
		{name: "core version-qualified", args: []string{"pods.v1."}, want: []Request{pods()}},
		{name: "group-qualified", args: []string{"deployments.apps"}, want: []Request{{Resource: deploymentsResource}}},
		{name: "group-qualified short name", args: []string{"deploy.apps"}, want: []Request{{Resource: deploymentsResource}}},
		{name: "group-qualified kind", args: []string{"Deployment.apps"}, want: []Request{{Resource: deploymentsResource}}},
		{name: "version-qualified", args: []string{"deployments.v1.apps"}, want: []Request{{Resource: deploymentsResource}}},
		{name: "version-qualified kind", args: []string{"Deployment.v1.apps"}, want: []Request{{Resource: deploymentsResource}}},
		{name: "custom resource plural", args: []string{"crontabs"}, want: []Request{{Resource: crontabsResource}}},
		{name: "custom resource short name", args: []string{"ct"}, want: []Request{{Resource: crontabsResource}}},
		{name: "custom resource fully qualified", args: []string{"crontabs.v1.stable.example.com"}, want: []Request{{Resource: crontabsResource}}},
		{name: "custom resource kind and group", args: []string{"CronTab.stable.example.com"}, want: []Request{{Resource: crontabsResource}}},
		{name: "cluster-scoped", args: []string{"no"}, want: []Request{{Resource: nodesResource}}},

		// Several types.
		{
			name: "comma list", args: []string{"po,svc,deploy"},
			want: []Request{pods(), {Resource: servicesResource}, {Resource: deploymentsResource}},
		},
		{
			name: "comma list with duplicates keeps the first", args: []string{"pods,po,pod,svc,Pod,services"},
			want: []Request{pods(), {Resource: servicesResource}},
		},
		{name: "empty elements are skipped", args: []string{"pods,,"}, want: []Request{pods()}},
		{
			name: "category", args: []string{"all"},
			want: []Request{pods(), {Resource: servicesResource}, {Resource: deploymentsResource}},
		},
		{
			name: "category and a type it contains", args: []string{"svc,all,ct"},
			want: []Request{{Resource: servicesResource}, pods(), {Resource: deploymentsResource}, {Resource: crontabsResource}},
		},

		// TYPE NAME...
		{name: "one name", args: []string{"pods", "web-0"}, want: []Request{pods("web-0")}, wantSingle: true},
		{name: "two names", args: []string{"po", "web-0", "web-1"}, want: []Request{pods("web-0", "web-1")}},
		{
			name: "names for two types", args: []string{"pods,svc", "web"},
			want: []Request{pods("web"), {Resource: servicesResource, Names: []string{"web"}}},
		},
		{name: "empty name", args: []string{"pods", ""}, wantErr: "resource name may not be empty"},

		// TYPE/NAME...
		{name: "type/name", args: []string{"pods/web-0"}, want: []Request{pods("web-0")}, wantSingle: true},
		{name: "short type/name", args: []string{"deploy.apps/web"}, want: []Request{{Resource: deploymentsResource, Names: []string{"web"}}}, wantSingle: true},
		{name: "two of one type", args: []string{"po/web-0", "pod/web-1"}, want: []Request{pods("web-0", "web-1")}},
		{name: "same object twice", args: []string{"po/web-0", "pods/web-0"}, want: []Request{pods("web-0")}},
		{
			name: "two types", args: []string{"pods/web-0", "svc/web", "pods/web-1"},
			want: []Request{pods("web-0", "web-1"), {Resource: servicesResource, Names: []string{"web"}}},
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
			got, single, err := ParseResourceArgs(mapper, categories, tc.args)
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
	_, _, err := ParseResourceArgs(mapper, nil, []string{"all"})
	if want := `the server doesn't have a resource type "all"`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}
