package cmd

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

func TestMain(m *testing.M) { fixtures.Main(m) }

// writeKubeconfig writes a kubeconfig for server with "shop" as the context's
// namespace and returns its path.
func writeKubeconfig(t *testing.T, server string) string {
	t.Helper()
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: ` + server + `
contexts:
- name: test
  context:
    cluster: test
    user: test
    namespace: shop
current-context: test
users:
- name: test
  user:
    token: not-a-real-token
`
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// unreachableKubeconfig is a kubeconfig for a server the test must never contact:
// any request to it fails the test.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	return writeKubeconfig(t, untouchedServer(t))
}

// untouchedServer is the URL of a server the test must never contact: any
// request to it fails the test.
func untouchedServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		t.Errorf("the server was contacted: %s %s", r.Method, r.URL)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// discoveryServer serves the discovery documents of testAPIResources and nothing
// else: Complete may resolve types, but a list or watch fails the test, because
// every case it serves must fail before Run.
func discoveryServer(t *testing.T) string {
	t.Helper()
	return namesServer(t, nil)
}

// namesServer serves the discovery documents of testAPIResources and, for
// each path of names (/api/v1/namespaces/shop/pods), a LIST of objects of
// those names as the metadata client asks for it: what completion reads.
// Any other request fails the test.
func namesServer(t *testing.T, names map[string][]string) string {
	t.Helper()
	docs := map[string]any{
		"/api": &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}},
	}
	groups := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
	for _, rl := range fixtures.APIResources() {
		rl.TypeMeta = metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}
		if rl.GroupVersion == "v1" {
			docs["/api/v1"] = rl
			continue
		}
		docs["/apis/"+rl.GroupVersion] = rl
		group, version, _ := strings.Cut(rl.GroupVersion, "/")
		gv := metav1.GroupVersionForDiscovery{GroupVersion: rl.GroupVersion, Version: version}
		groups.Groups = append(groups.Groups, metav1.APIGroup{Name: group, Versions: []metav1.GroupVersionForDiscovery{gv}, PreferredVersion: gv})
	}
	docs["/apis"] = groups
	for path, ns := range names {
		list := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{Kind: "PartialObjectMetadataList", APIVersion: "meta.k8s.io/v1"}}
		for _, n := range ns {
			list.Items = append(list.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
		docs[path] = list
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			t.Errorf("unexpected request: %s %s", r.Method, r.URL)
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(doc); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)
	return writeKubeconfig(t, srv.URL)
}

func TestGetFlagsAndValidation(t *testing.T) {
	runFlagCases(t, []flagCase{
		{
			name:    "no arguments",
			wantErr: `you must specify the type of resource to get; use "kubectl api-resources" for a complete list of supported resources`,
		},
		{
			name: "unknown output format", args: []string{"pods", "-o", "table"},
			wantErr: `unable to match a printer suitable for the output format "table", allowed formats are: custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,wide,yaml`,
		},
		{name: "jsonpath without template", args: []string{"pods", "-o", "jsonpath"}, wantErr: "template format specified but no template given"},
		{name: "custom-columns without spec", args: []string{"pods", "-o", "custom-columns"}, wantErr: "custom-columns format specified but no custom columns given"},
		{name: "unknown flag", args: []string{"pods", "--bogus"}, wantErr: "unknown flag: --bogus"},
		{
			name: "malformed duration", args: []string{"pods", "--sync-timeout", "soon"},
			wantErr: `invalid argument "soon" for "--sync-timeout" flag: must be a duration such as 30s, 5m or 1h`,
		},
		{
			name: "name across all namespaces", args: []string{"-A", "pods", "web-0"}, discovery: true,
			wantErr: "a resource cannot be retrieved by name across all namespaces",
		},
		{
			name: "type/name across all namespaces", args: []string{"pods/web-0", "--all-namespaces"}, discovery: true,
			wantErr: "a resource cannot be retrieved by name across all namespaces",
		},
		{
			name: "malformed label selector", args: []string{"pods", "-l", "app in (web"}, discovery: true,
			wantErr: `invalid label selector "app in (web": unable to parse requirement: found '', expected: ',' or ')'`,
		},
		{
			name: "malformed field selector", args: []string{"pods", "--field-selector", "spec.nodeName"}, discovery: true,
			wantErr: `invalid field selector "spec.nodeName": invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'`,
		},
		{
			name: "negative sync timeout", args: []string{"pods", "--sync-timeout=-1s"}, discovery: true,
			wantErr: "--sync-timeout must not be negative, got -1s",
		},
		{name: "unknown type", args: []string{"podz"}, discovery: true, wantErr: `the server doesn't have a resource type "podz"`},
		{
			name: "type and type/name", args: []string{"pods", "pods/web-0"}, discovery: true,
			wantErr: "there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl idx resource/<resource_name>' instead of 'kubectl idx resource resource/<resource_name>'",
		},
	})
}

// TestGetValidate checks Validate alone, with the arguments Complete keeps:
// it needs no server, so names are told from types by the arguments' shape.
func TestGetValidate(t *testing.T) {
	unnamed := []string{"pods"}
	tests := []struct {
		name       string
		args       []string
		all        bool
		timeout    time.Duration
		label, fld string
		wantErr    string
	}{
		{name: "defaults", args: unnamed, timeout: time.Minute},
		{name: "all namespaces without names", args: unnamed, all: true},
		{name: "names in one namespace", args: []string{"pods", "web-0"}},
		{name: "TYPE/NAME in one namespace", args: []string{"pods/web-0"}},
		{name: "selectors", args: unnamed, label: "app in (web,api),!canary", fld: "spec.nodeName=worker-1,status.phase!=Running"},
		{name: "no sync timeout", args: unnamed, timeout: 0},
		{name: "names across all namespaces", args: []string{"pods", "web-0"}, all: true, wantErr: "a resource cannot be retrieved by name across all namespaces"},
		{name: "TYPE/NAME across all namespaces", args: []string{"pods/web-0"}, all: true, wantErr: "a resource cannot be retrieved by name across all namespaces"},
		{name: "negative sync timeout", args: unnamed, timeout: -time.Second, wantErr: "--sync-timeout must not be negative, got -1s"},
		{name: "bad label selector", args: unnamed, label: "a b", wantErr: `invalid label selector "a b": unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewGetOptions(&Flags{ContextFlags: query.ContextFlags{AllNamespaces: tc.all}}, genericiooptions.NewTestIOStreamsDiscard())
			o.args, o.SyncTimeout, o.LabelSelector, o.FieldSelector = tc.args, tc.timeout, tc.label, tc.fld
			if got := errorText(o.Validate()); got != tc.wantErr {
				t.Errorf("Validate error = %q, want %q", got, tc.wantErr)
			}
		})
	}
}

func TestExecutePrintsErrorOnce(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantErrOut string
	}{
		{"no arguments", nil, `error: you must specify the type of resource to get; use "kubectl api-resources" for a complete list of supported resources` + "\n"},
		{"unknown type", []string{"podz"}, `error: the server doesn't have a resource type "podz"` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			executeFails(t, append(tc.args, "--kubeconfig", discoveryServer(t), "--cache-dir", t.TempDir()), tc.wantErrOut)
		})
	}
}

// TestListingWatchFlag runs kubectl get's -w and --watch-only on a listing:
// the error names kubectl idx watch with the user's own arguments, -w taken
// out, before any request.
func TestListingWatchFlag(t *testing.T) {
	t.Setenv("KUBECONFIG", unreachableKubeconfig(t))
	const prefix = "error: kubectl idx lists once; to follow changes use: kubectl idx watch "
	tests := []struct {
		args []string
		want string
	}{
		{args: []string{"pods", "-w"}, want: "pods"},
		{args: []string{"pods", "-n", "shop", "--watch"}, want: "pods -n shop"},
		{args: []string{"-Aw", "pods"}, want: "-A pods"},
		{args: []string{"-wA", "deploy,svc", "-o", "wide"}, want: "-A deploy,svc -o wide"},
		{args: []string{"po", "web-1", "web-2", "-w", "-l", "app in (web)"}, want: "po web-1 web-2 -l 'app in (web)'"},
		{args: []string{"pods", "-lw", "-w"}, want: "pods -lw"},
		{args: []string{"pods", "-w=true", "--sync-timeout", "5s"}, want: "pods --sync-timeout 5s"},
		{args: []string{"pods", "--watch-only"}, want: "pods --watch-only"},
		{args: []string{"pods", "-w", "--watch-only"}, want: "pods --watch-only"},
		{args: []string{"pods/web-1", "--context", "it's", "-w"}, want: `pods/web-1 --context 'it'\''s'`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			executeFails(t, tc.args, prefix+tc.want+"\n")
		})
	}
}

var crontabColumns = []apiextensionsv1.CustomResourceColumnDefinition{
	{Name: "Spec", Type: "string", JSONPath: ".spec.cronSpec"},
	{Name: "Image", Type: "string", JSONPath: ".spec.image", Priority: 1},
	{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
}

// runFlags are the flags of one Run case; the zero value is `kubectl idx <args>`
// in namespace shop.
type runFlags struct {
	format, template, sortBy string
	allNamespaces            bool
	labelSelector            string
	showManagedFields        bool
	namespace                string // default "shop"
	ignoreNotFound           bool
}

// runHarness is a GetOptions wired to fakes, with what Run did recorded.
type runHarness struct {
	o        *GetOptions
	server   *fakeapi.Server
	out, err *strings.Builder

	mu         sync.Mutex
	factoryCfg informer.Config
}

// fakeTarget is the target of context name over s: the listing tests'
// discovery, whose mapper also knows the owner kinds of the group-by
// fixtures it lacks (ReplicaSets, Rollouts), namespaced types read in
// namespace.
func fakeTarget(t *testing.T, name string, s *fakeapi.Server, namespace string) query.Target {
	t.Helper()
	tg := faketarget.New(t, name, s, namespace, fixtures.APIResources())
	owners := meta.NewDefaultRESTMapper(nil)
	owners.Add(fixtures.ReplicaSets.GVK, meta.RESTScopeNamespace)
	owners.Add(fixtures.RolloutGVK, meta.RESTScopeNamespace)
	tg.Mapper = meta.MultiRESTMapper{tg.Mapper, owners}
	return tg
}

func newRunHarness(t *testing.T, s *fakeapi.Server, args []string, f runFlags) *runHarness {
	t.Helper()
	namespace := f.namespace
	if namespace == "" {
		namespace = "shop"
	}
	if f.allNamespaces {
		namespace = metav1.NamespaceAll
	}
	out, errOut := &strings.Builder{}, &strings.Builder{}
	h := &runHarness{server: s, out: out, err: errOut}
	o := NewGetOptions(nil, genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut})
	pf := o.PrintFlags
	*pf.OutputFormat = f.format
	if f.template != "" {
		*pf.TemplateFlags.TemplateArgument = f.template
	}
	*pf.HumanReadableFlags.SortBy = f.sortBy
	pf.JSONYamlPrintFlags.ShowManagedFields = f.showManagedFields
	o.AllNamespaces = f.allNamespaces
	o.LabelSelector = f.labelSelector
	o.IgnoreNotFound = f.ignoreNotFound
	o.SyncTimeout = 20 * time.Second
	o.args = args
	target := fakeTarget(t, "", s, namespace)
	newFactory := target.NewFactory
	target.NewFactory = func(cfg informer.Config) (*informer.Factory, error) {
		h.mu.Lock()
		h.factoryCfg = cfg
		h.mu.Unlock()
		return newFactory(cfg)
	}
	o.resolved = []query.Target{target}
	h.o = o
	return h
}

// run completes the options, as RunE does before it validates them, and
// runs them.
func (h *runHarness) run(t *testing.T) error {
	t.Helper()
	if err := h.o.Complete(nil, h.o.args); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h.o.Run(ctx)
}

// listingCase is a listing run as its RunE does against the fakes, and
// what it must print.
type listingCase struct {
	name    string
	args    []string
	flags   runFlags
	group   GroupFlags
	objects []runtime.Object // default: the test's
	forbid  []string         // resources whose metadata lists are forbidden

	wantOut    string // exact stdout, unless golden or check is set
	golden     string // stdout golden file under testdata/
	check      func(t *testing.T, stdout string)
	wantErrOut string
	wantErr    string // errtext.Format of Run's error
}

// run runs tc over its objects, else objects, and compares what it printed;
// a case that does not pass validation fails the test.
func (tc listingCase) run(t *testing.T, objects []runtime.Object) {
	t.Helper()
	if tc.objects != nil {
		objects = tc.objects
	}
	s := fakeapi.New(nil, objects...)
	fixtures.ForbidMetadataList(s, tc.forbid...)
	h := newRunHarness(t, s, tc.args, tc.flags)
	h.o.Group = tc.group
	if err := h.o.Validate(); err != nil {
		t.Fatalf("the case does not pass validation: %v", err)
	}
	err := h.run(t)
	assertRun(t, err, h.out.String(), h.err.String(), tc.golden, tc.check, tc.wantOut, tc.wantErrOut, tc.wantErr)
}

func TestGetRun(t *testing.T) {
	tests := []listingCase{
		{name: "pods", args: []string{"pods"}, golden: "testdata/get_pods.golden"},
		{name: "pods wide", args: []string{"po"}, flags: runFlags{format: "wide"}, golden: "testdata/get_pods_wide.golden"},
		{name: "pods in all namespaces", args: []string{"pods"}, flags: runFlags{allNamespaces: true}, golden: "testdata/get_pods_all_namespaces.golden"},
		{name: "pods and services", args: []string{"pods,svc"}, golden: "testdata/get_pods_services.golden"},
		{name: "custom resources with printer columns", args: []string{"ct"}, golden: "testdata/get_crontabs.golden"},
		{name: "label selector", args: []string{"pods"}, flags: runFlags{labelSelector: "app=web", format: "jsonpath", template: "{.items[*].metadata.name}"}, wantOut: "web-0"},
		{name: "name output", args: []string{"pods"}, flags: runFlags{format: "name"}, wantOut: "pod/web-0\npod/web-1\n"},
		{name: "name output, one named object", args: []string{"pods/web-1"}, flags: runFlags{format: "name"}, wantOut: "pod/web-1\n"},
		{
			name: "json output", args: []string{"pods"}, flags: runFlags{format: "json"},
			check: func(t *testing.T, stdout string) {
				kind, names := jsonItems(t, stdout)
				if kind != "List" || !slices.Equal(names, []string{"web-0", "web-1"}) {
					t.Errorf("json output is %s of %q, want List of [web-0 web-1]", kind, names)
				}
			},
		},
		{
			name: "json output, one named object", args: []string{"pods", "web-1"}, flags: runFlags{format: "json"},
			check: func(t *testing.T, stdout string) {
				kind, names := jsonItems(t, stdout)
				if kind != "Pod" || !slices.Equal(names, []string{"web-1"}) {
					t.Errorf("json output is %s %q, want Pod web-1", kind, names)
				}
			},
		},
		{
			name: "yaml output drops managedFields", args: []string{"pods"}, flags: runFlags{format: "yaml"},
			check: func(t *testing.T, stdout string) {
				if strings.Contains(stdout, "managedFields") {
					t.Errorf("output has managedFields without --show-managed-fields:\n%s", stdout)
				}
			},
		},
		{
			name: "yaml output with --show-managed-fields", args: []string{"pods"}, flags: runFlags{format: "yaml", showManagedFields: true},
			check: func(t *testing.T, stdout string) {
				var list struct {
					Items []corev1.Pod `json:"items"`
				}
				if err := yaml.Unmarshal([]byte(stdout), &list); err != nil {
					t.Fatal(err)
				}
				for _, p := range list.Items {
					if len(p.ManagedFields) != 1 {
						t.Errorf("%s has %d managedFields, want 1 with --show-managed-fields", p.Name, len(p.ManagedFields))
					}
				}
			},
		},
		{
			name: "jsonpath", args: []string{"pods"}, flags: runFlags{format: "jsonpath", template: "{range .items[*]}{.metadata.name} {.status.phase}{\"\\n\"}{end}"},
			wantOut: "web-0 Running\nweb-1 Pending\n",
		},
		{
			name: "sorted by a field", args: []string{"pods"}, flags: runFlags{sortBy: "{.status.phase}", format: "custom-columns", template: "NAME:.metadata.name,PHASE:.status.phase"},
			wantOut: "NAME    PHASE\nweb-1   Pending\nweb-0   Running\n",
		},
		{
			name: "a found and a missing name", args: []string{"pods", "web-0", "nope"},
			check: func(t *testing.T, stdout string) {
				if !strings.HasPrefix(stdout, "NAME    AGE") || !strings.Contains(stdout, "\nweb-0 ") || strings.Count(stdout, "\n") != 2 {
					t.Errorf("stdout should be the table of web-0 alone:\n%s", stdout)
				}
			},
			wantErr: `Error from server (NotFound): pods "nope" not found`,
		},
		{
			name: "a missing name", args: []string{"pods", "nope"},
			wantErr: `Error from server (NotFound): pods "nope" not found`,
		},
		{
			name: "two missing names", args: []string{"po/nope-1", "po/nope-2"},
			wantErr: "Error from server (NotFound): pods \"nope-1\" not found\nError from server (NotFound): pods \"nope-2\" not found",
		},
		{
			name: "a name in another namespace", args: []string{"pods", "db-0"},
			wantErr: `Error from server (NotFound): pods "db-0" not found`,
		},
		{
			name: "nothing in the namespace", args: []string{"pods"}, objects: []runtime.Object{fixtures.Pod("other", "db-0", "db", true)},
			wantErrOut: "No resources found in shop namespace.\n",
		},
		{
			name: "nothing in any namespace", args: []string{"pods"}, flags: runFlags{allNamespaces: true}, objects: []runtime.Object{},
			wantErrOut: "No resources found\n",
		},
		{
			name: "nothing of a cluster-scoped type", args: []string{"nodes"},
			wantErrOut: "No resources found\n",
		},
		{
			name: "nothing matches the selector", args: []string{"pods"}, flags: runFlags{labelSelector: "app=none"},
			wantErrOut: "No resources found in shop namespace.\n",
		},
		{
			name: "nothing, as json", args: []string{"pods"}, flags: runFlags{format: "json", namespace: "empty"},
			wantOut: "{\n    \"apiVersion\": \"v1\",\n    \"items\": [],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
		},
		{
			name: "nothing, as names", args: []string{"pods"}, flags: runFlags{format: "name", namespace: "empty"},
		},
		// --ignore-not-found as kubectl get has it: no NotFound error, no
		// notice of an empty answer, and no empty List.
		{name: "--ignore-not-found: a missing name", args: []string{"pods", "nope"}, flags: runFlags{ignoreNotFound: true}},
		{name: "--ignore-not-found: two missing names", args: []string{"po/nope-1", "po/nope-2"}, flags: runFlags{ignoreNotFound: true}},
		{name: "--ignore-not-found: a missing name, as json", args: []string{"pods", "nope"}, flags: runFlags{ignoreNotFound: true, format: "json"}},
		{name: "--ignore-not-found: a missing name, as names", args: []string{"pods/nope"}, flags: runFlags{ignoreNotFound: true, format: "name"}},
		{
			name: "--ignore-not-found: a found and a missing name", args: []string{"pods", "web-0", "nope"}, flags: runFlags{ignoreNotFound: true},
			check: func(t *testing.T, stdout string) {
				if !strings.HasPrefix(stdout, "NAME    AGE") || !strings.Contains(stdout, "\nweb-0 ") || strings.Count(stdout, "\n") != 2 {
					t.Errorf("stdout should be the table of web-0 alone:\n%s", stdout)
				}
			},
		},
		{
			name: "--ignore-not-found: a found and a missing name, as json", args: []string{"pods", "web-0", "nope"}, flags: runFlags{ignoreNotFound: true, format: "json"},
			check: func(t *testing.T, stdout string) {
				kind, names := jsonItems(t, stdout)
				if kind != "List" || !slices.Equal(names, []string{"web-0"}) {
					t.Errorf("json output is %s of %q, want List of [web-0]", kind, names)
				}
			},
		},
		{
			name: "--ignore-not-found: nothing in the namespace", args: []string{"pods"}, flags: runFlags{ignoreNotFound: true},
			objects: []runtime.Object{fixtures.Pod("other", "db-0", "db", true)},
		},
		{name: "--ignore-not-found: nothing, as json", args: []string{"pods"}, flags: runFlags{ignoreNotFound: true, format: "json", namespace: "empty"}},
		{name: "--ignore-not-found: nothing, as yaml", args: []string{"pods"}, flags: runFlags{ignoreNotFound: true, format: "yaml", namespace: "empty"}},
		{
			name: "--ignore-not-found: pods, as names", args: []string{"pods"}, flags: runFlags{ignoreNotFound: true, format: "name"},
			wantOut: "pod/web-0\npod/web-1\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, fixtures.ListObjects()) })
	}
}

// assertRun compares what a Run case printed and returned: stdout with the
// golden file, the check or the exact string, the first one given; stderr
// exactly; the error as Execute prints it ("" for none).
func assertRun(t *testing.T, err error, stdout, stderr, goldenPath string, check func(*testing.T, string), wantOut, wantErrOut, wantErr string) {
	t.Helper()
	if got := errorString(err); got != wantErr {
		t.Errorf("Run error, formatted:\n%s\nwant:\n%s", got, wantErr)
	}
	switch {
	case goldenPath != "":
		golden.Assert(t, goldenPath, stdout)
	case check != nil:
		check(t, stdout)
	default:
		if stdout != wantOut {
			t.Errorf("stdout:\n%s\nwant:\n%s", stdout, wantOut)
		}
	}
	if stderr != wantErrOut {
		t.Errorf("stderr = %q, want %q", stderr, wantErrOut)
	}
}

// errorString is err as Execute prints it, without the line break; "" for
// none.
func errorString(err error) string {
	if err == nil {
		return ""
	}
	return errtext.Format(err)
}

// jsonItems returns the kind of a JSON document and the names of its items, or its
// own name when it is not a list.
func jsonItems(t *testing.T, doc string) (kind string, names []string) {
	t.Helper()
	var v struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, doc)
	}
	if v.Kind != "List" {
		return v.Kind, []string{v.Metadata.Name}
	}
	for _, it := range v.Items {
		names = append(names, it.Metadata.Name)
	}
	return v.Kind, names
}

// TestGetRunFactoryConfig checks what Run asks of the informer layer: the
// server-side filters and, per output, which client lists the objects (metadata
// only when the output needs nothing else).
func TestGetRunFactoryConfig(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		flags        runFlags
		wantFieldSel string
		wantClient   string // typed, dynamic or metadata
		// wantTable is the field selector of the server's table read for
		// human output, "-" for none.
		wantTable string
	}{
		{name: "a table lists metadata and reads the server's table", args: []string{"pods"}, wantClient: "metadata", wantTable: ""},
		{name: "one name is a field selector", args: []string{"pods", "web-0"}, wantFieldSel: "metadata.name=web-0", wantClient: "metadata", wantTable: "metadata.name=web-0"},
		{name: "two names list the namespace", args: []string{"pods", "web-0", "web-1"}, wantClient: "metadata", wantTable: ""},
		{name: "names only need metadata", args: []string{"pods"}, flags: runFlags{format: "name"}, wantClient: "metadata", wantTable: "-"},
		{name: "json needs full pods", args: []string{"pods"}, flags: runFlags{format: "json"}, wantClient: "typed", wantTable: "-"},
		{name: "crontab columns come from the server too", args: []string{"crontabs"}, wantClient: "metadata", wantTable: ""},
		{name: "crontab yaml", args: []string{"crontabs"}, flags: runFlags{format: "yaml"}, wantClient: "dynamic", wantTable: "-"},
		{name: "--sort-by may read any field in a table", args: []string{"pods"}, flags: runFlags{sortBy: "{.status.phase}"}, wantClient: "typed", wantTable: ""},
		{name: "--sort-by may read any field with names", args: []string{"pods"}, flags: runFlags{format: "name", sortBy: "{.status.phase}"}, wantClient: "typed", wantTable: "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(nil, fixtures.ListObjects()...)
			h := newRunHarness(t, s, tc.args, tc.flags)
			_ = h.run(t) // a missing name is not the point here
			if h.factoryCfg.FieldSelector != tc.wantFieldSel {
				t.Errorf("field selector = %q, want %q", h.factoryCfg.FieldSelector, tc.wantFieldSel)
			}
			if h.factoryCfg.Namespace != "shop" {
				t.Errorf("namespace = %q, want shop", h.factoryCfg.Namespace)
			}
			if h.factoryCfg.Progress != nil {
				t.Error("progress writer set although stderr is not a terminal")
			}
			var used []string
			table := "-"
			for _, r := range s.Requests() {
				if r.Table {
					if table != "-" {
						t.Errorf("a second table request %s?%s", r.Path, r.Query.Encode())
					}
					table = r.Query.Get("fieldSelector")
					if !strings.Contains(r.Path, "/namespaces/shop/") {
						t.Errorf("table request %s is not in namespace shop", r.Path)
					}
				} else if !slices.Contains(used, "typed") {
					used = append(used, "typed")
				}
			}
			if hasList(s.Dynamic.Actions()) {
				used = append(used, "dynamic")
			}
			if hasList(s.Metadata.Actions()) {
				used = append(used, "metadata")
			}
			if !slices.Equal(used, []string{tc.wantClient}) {
				t.Errorf("clients that listed = %q, want [%s]", used, tc.wantClient)
			}
			if table != tc.wantTable {
				t.Errorf("table read with field selector %q, want %q", table, tc.wantTable)
			}
		})
	}
}

func hasList(actions []clienttesting.Action) bool {
	return slices.ContainsFunc(actions, func(a clienttesting.Action) bool { return a.GetVerb() == "list" })
}

// TestGetRunProgress checks that sync progress reaches stderr only when stderr is
// a terminal (Complete sets progress from that).
func TestGetRunProgress(t *testing.T) {
	for _, terminal := range []bool{false, true} {
		name := "not a terminal"
		if terminal {
			name = "terminal"
		}
		t.Run(name, func(t *testing.T) {
			s := fakeapi.New(nil, fixtures.ListObjects()...)
			// Slower than Run's one-second progress delay (JSON lists full pods
			// through the typed client, where the delay is).
			s.BeforeList = func(*http.Request) *metav1.Status { time.Sleep(1500 * time.Millisecond); return nil }
			h := newRunHarness(t, s, []string{"pods"}, runFlags{format: "json"})
			if err := h.o.Complete(nil, h.o.args); err != nil {
				t.Fatal(err)
			}
			h.o.progress = terminal
			if err := h.o.Run(context.Background()); err != nil {
				t.Fatalf("Run: %v", err)
			}
			stderr := h.err.String()
			if !terminal && stderr != "" {
				t.Errorf("stderr = %q, want nothing when it is not a terminal", stderr)
			}
			if terminal && !strings.Contains(stderr, "syncing: pods") {
				t.Errorf("stderr = %q, want a progress line for pods", stderr)
			}
			if strings.Contains(h.out.String(), "syncing") {
				t.Errorf("progress leaked to stdout: %q", h.out.String())
			}
		})
	}
}
