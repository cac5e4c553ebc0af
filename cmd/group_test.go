package cmd

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// TestGroupFlagsAndValidation runs the group-by flags through the root command:
// each bad combination fails with kubectl-style wording before any list or
// watch, and prints nothing (Execute prints the error once).
func TestGroupFlagsAndValidation(t *testing.T) {
	runFlagCases(t, []flagCase{
		{
			name: "two groupings", args: []string{"pods", "--by-owner", "--by-node"}, discovery: true,
			wantErr: "--by-owner and --by-node cannot be used together: choose one grouping",
		},
		{
			name: "three groupings", args: []string{"pods", "--by-namespace", "--by-label", "app", "--by", "{.spec.nodeName}"}, discovery: true,
			wantErr: "--by-label and --by-namespace and --by cannot be used together: choose one grouping",
		},
		{
			name: "--by-label with an empty value", args: []string{"pods", "--by-label="}, discovery: true,
			wantErr: "--by-label needs a label key, e.g. --by-label app",
		},
		{
			name: "--by-label with a blank value", args: []string{"pods", "--by-label", " "}, discovery: true,
			wantErr: "--by-label needs a label key, e.g. --by-label app",
		},
		{
			name: "--by-label without a value", args: []string{"pods", "--by-label"},
			wantErr: "flag needs an argument: --by-label",
		},
		{
			name: "--by without a value", args: []string{"pods", "--by"},
			wantErr: "flag needs an argument: --by",
		},
		{
			name: "--by with an empty expression", args: []string{"pods", "--by="}, discovery: true,
			wantErr: "invalid JSONPath in --by: empty JSONPath expression",
		},
		{
			name: "--by with an invalid JSONPath", args: []string{"pods", "--by", "{.spec.containers[}"}, discovery: true,
			wantErr: `invalid JSONPath in --by: invalid JSONPath expression "{.spec.containers[}": unterminated array`,
		},
		{
			name: "--by-node on deployments", args: []string{"deploy", "--by-node"}, discovery: true,
			wantErr: "--by-node groups objects by the node they run on; deployments.apps have no node (use it with pods)",
		},
		{
			name: "--by-node on pods and services", args: []string{"pods,svc", "--by-node"}, discovery: true,
			wantErr: "--by-node groups objects by the node they run on; services have no node (use it with pods)",
		},
		{
			name: "--include-completed without a grouping", args: []string{"pods", "--include-completed"}, discovery: true,
			wantErr: "--include-completed only applies to --by-node",
		},
		{
			name: "--include-completed with another grouping", args: []string{"pods", "--by-owner", "--include-completed"}, discovery: true,
			wantErr: "--include-completed only applies to --by-node",
		},
		{
			name: "--sort-by with a grouping", args: []string{"pods", "--by-namespace", "--sort-by", "{.metadata.name}"}, discovery: true,
			wantErr: "--sort-by cannot be used with grouping: groups and their members are sorted by key and name",
		},
	})
}

// TestGroupExecuteExitCode: a grouping error is one line on stderr and exit 1.
func TestGroupExecuteExitCode(t *testing.T) {
	executeFails(t, []string{"pods", "--by-owner", "--by-node", "--kubeconfig", discoveryServer(t), "--cache-dir", t.TempDir()},
		"error: --by-owner and --by-node cannot be used together: choose one grouping\n")
}

// groupDoc decodes -o json output of a group-by query.
type groupDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	GroupBy    string `json:"groupBy"`
	Expression string `json:"expression"`
	Groups     []struct {
		Name    string                      `json:"name"`
		Key     v1alpha1.GroupKey           `json:"key"`
		Summary v1alpha1.GroupSummary       `json:"summary"`
		Items   []unstructured.Unstructured `json:"items"`
	} `json:"groups"`
	Warnings []string `json:"warnings"`
}

func decodeGroupDoc(t *testing.T, stdout string) groupDoc {
	t.Helper()
	var doc groupDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if doc.APIVersion != v1alpha1.SchemeGroupVersion.String() || doc.Kind != v1alpha1.GroupListKind {
		t.Errorf("document is %s %s, want %s %s", doc.APIVersion, doc.Kind, v1alpha1.SchemeGroupVersion.String(), v1alpha1.GroupListKind)
	}
	if doc.Warnings == nil {
		t.Errorf("warnings is not an array:\n%s", stdout)
	}
	return doc
}

func (d groupDoc) names() []string {
	var out []string
	for _, g := range d.Groups {
		out = append(out, g.Name)
	}
	return out
}

func TestGroupRun(t *testing.T) {
	byLabel := func(key string) GroupFlags { return GroupFlags{ByLabel: key, byLabelSet: true} }
	byPath := func(expr string) GroupFlags { return GroupFlags{ByJSONPath: expr, byJSONPathSet: true} }
	tests := []listingCase{
		// --by-label
		{name: "by label", args: []string{"pods"}, group: byLabel("app"), golden: "testdata/group_by_label.golden"},
		{
			name: "by label, several types", args: []string{"deploy,svc,pods"}, group: byLabel("app"),
			golden: "testdata/group_by_label_types.golden",
		},
		{
			name: "by label, names", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{format: "name"},
			wantOut: "app=api pod/api-0\napp=backup pod/backup-29000\napp=web pod/web-0\napp=web pod/web-1\napp=worker pod/queued\n<none> pod/stranded\n",
		},
		{
			name: "by label, an empty value is a value", args: []string{"pods"}, group: byLabel("job"), flags: runFlags{format: "name"},
			wantOut: "job= pod/backup-29000\n<none> pod/api-0\n<none> pod/queued\n<none> pod/stranded\n<none> pod/web-0\n<none> pod/web-1\n",
		},
		{
			name: "by label, selector narrows members", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{labelSelector: "app in (web,api)", format: "name"},
			wantOut: "app=api pod/api-0\napp=web pod/web-0\napp=web pod/web-1\n",
		},
		{
			name: "by label, names narrow members", args: []string{"pods", "web-1", "queued"}, group: byLabel("app"), flags: runFlags{format: "name"},
			wantOut: "app=web pod/web-1\napp=worker pod/queued\n",
		},
		{
			name: "by label, one name", args: []string{"pods/web-1"}, group: byLabel("app"), flags: runFlags{format: "name"},
			wantOut: "app=web pod/web-1\n",
		},
		{
			name: "by label, a missing name", args: []string{"pods", "web-1", "nope"}, group: byLabel("app"), flags: runFlags{format: "name"},
			wantOut: "app=web pod/web-1\n",
			wantErr: `Error from server (NotFound): pods "nope" not found`,
		},
		{
			name: "by label, nothing matches", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{labelSelector: "app=none"},
			wantErrOut: "No resources found in shop namespace.\n",
		},
		{
			name: "by label, nothing matches, json", args: []string{"pods"}, group: byLabel("app"), flags: runFlags{labelSelector: "app=none", format: "json"},
			wantOut: "{\n    \"apiVersion\": \"kubectl-idx.io/v1alpha1\",\n    \"kind\": \"GroupList\",\n    \"groupBy\": \"label\",\n    \"expression\": \"app\",\n    \"groups\": [],\n    \"warnings\": []\n}\n",
		},

		// --by-namespace
		{
			name: "by namespace", args: []string{"pods"}, group: GroupFlags{ByNamespace: true}, flags: runFlags{allNamespaces: true},
			golden: "testdata/group_by_namespace.golden",
		},

		// --by JSONPATH
		{
			name: "by JSONPath", args: []string{"pods"}, group: byPath("{.spec.serviceAccountName}"), flags: runFlags{format: "name"},
			wantOut: "default pod/api-0\ndefault pod/backup-29000\ndefault pod/queued\ndefault pod/stranded\nweb pod/web-0\nweb pod/web-1\n",
		},
		{
			name: "by JSONPath, human", args: []string{"pods"}, group: byPath("{.spec.containers[*].image}"),
			golden: "testdata/group_by_jsonpath.golden",
		},
		{
			name: "by JSONPath, objects without a value", args: []string{"pods"}, group: byPath("{.spec.nodeName}"), flags: runFlags{format: "name"},
			wantOut: "worker-1 pod/api-0\nworker-1 pod/backup-29000\nworker-1 pod/web-0\nworker-2 pod/web-1\nworker-9 pod/stranded\n<none> pod/queued\n",
		},

		// --by-node
		{name: "by node", args: []string{"pods"}, group: GroupFlags{ByNode: true}, objects: fixtures.WithoutPods(fixtures.NodeObjects(), "stranded"), golden: "testdata/group_by_node.golden"},
		{
			name: "by node, including completed pods", args: []string{"pods"}, group: GroupFlags{ByNode: true, IncludeCompleted: true},
			objects: fixtures.WithoutPods(fixtures.NodeObjects(), "stranded"), golden: "testdata/group_by_node_include_completed.golden",
		},
		{
			name: "by node, all namespaces", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{allNamespaces: true},
			objects: fixtures.WithoutPods(fixtures.NodeObjects(), "stranded"), golden: "testdata/group_by_node_all_namespaces.golden",
		},
		{
			name: "by node, names", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{format: "name"},
			wantOut: "worker-1 pod/api-0\nworker-1 pod/backup-29000\nworker-1 pod/web-0\nworker-2 pod/web-1\nworker-9 pod/stranded\n<none> pod/queued\n",
		},
		{
			// A node deleted while pods bound to it remain: its group says
			// so, and has no allocatable to speak of.
			name: "by node, a node that pods name but that does not exist", args: []string{"pods"}, group: GroupFlags{ByNode: true},
			check: func(t *testing.T, stdout string) {
				var header string
				for _, line := range strings.Split(stdout, "\n") {
					if strings.HasPrefix(line, "worker-9 ") {
						header = line
					}
				}
				if !strings.HasPrefix(header, "worker-9  NotFound  ") || !strings.HasSuffix(header, "1 pod, 1/1 ready") {
					t.Errorf("header line of the missing node = %q", header)
				}
				// Allocatable of a node that does not exist is not an empty
				// string: "cpu 100m/ (0%)" reads as a rendering bug.
				if strings.Contains(header, "/ (") || strings.Contains(header, "//") {
					t.Errorf("header line of the missing node renders an empty allocatable: %q", header)
				}
			},
		},
		{
			name: "by node, no pods still lists the nodes", args: []string{"pods"}, group: GroupFlags{ByNode: true}, flags: runFlags{namespace: "empty"},
			wantOut: "worker-1  Ready  worker  cpu 0/3920m (0%)  memory 0/14.5Gi (0%)  0 pods\n" +
				"worker-2  Ready,SchedulingDisabled  worker  cpu 0/2 (0%)  memory 0/4Gi (0%)  0 pods\n" +
				"worker-3  NotReady  <none>  cpu 0/4 (0%)  memory 0/8Gi (0%)  0 pods\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, fixtures.NodeObjects()) })
	}
}

func TestGroupRunByOwner(t *testing.T) {
	tests := []listingCase{
		{
			name: "pods", args: []string{"pods"}, golden: "testdata/group_by_owner.golden",
			wantErrOut: "warning: owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com\n",
		},
		{
			name: "pods, names", args: []string{"pods"}, flags: runFlags{format: "name"},
			wantOut: "Deployment/web pod/web-5d4-aaaaa\n" +
				"Deployment/web pod/web-5d4-bbbbb\n" +
				"Node/worker-1 pod/static-web-worker-1\n" +
				"ReplicaSet/gone-6b8 pod/orphan-ddddd\n" +
				"Rollout/canary pod/canary-7f9-ccccc\n" +
				"Widget/w pod/widget-eeeee\n" +
				"<none> pod/adopted\n" +
				"<none> pod/debug\n",
			wantErrOut: "warning: owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com\n",
		},
		{
			name: "names narrow members", args: []string{"pods", "web-5d4-bbbbb", "debug", "static-web-worker-1"}, flags: runFlags{format: "name"},
			wantOut: "Deployment/web pod/web-5d4-bbbbb\nNode/worker-1 pod/static-web-worker-1\n<none> pod/debug\n",
		},
		{
			name: "a label selector narrows members", args: []string{"pods"}, flags: runFlags{format: "name", labelSelector: "app=web"},
			wantOut: "Deployment/web pod/web-5d4-aaaaa\nDeployment/web pod/web-5d4-bbbbb\n",
		},
		{
			name: "replicasets", args: []string{"replicasets"}, flags: runFlags{format: "name"},
			wantOut: "Deployment/web replicaset.apps/web-5d4\nRollout/canary replicaset.apps/canary-7f9\n",
		},
		{
			name: "replicasets may not be listed", args: []string{"pods"}, forbid: []string{"replicasets"},
			golden:     "testdata/group_by_owner_forbidden.golden",
			wantErrOut: "warning: owners above ReplicaSet.apps are unknown: replicasets.apps is forbidden: User \"jane\" cannot list resource \"replicasets\" in API group \"apps\" in the namespace \"shop\"\n" + "warning: owners above Widget.widgets.example.com are unknown: the server doesn't have a resource type for kind Widget.widgets.example.com\n",
		},
		{
			name: "no owners at all", args: []string{"pods", "debug"}, flags: runFlags{format: "name"},
			wantOut: "<none> pod/debug\n",
		},
	}
	for _, tc := range tests {
		tc.group = GroupFlags{ByOwner: true}
		t.Run(tc.name, func(t *testing.T) { tc.run(t, fixtures.OwnerObjects()) })
	}
}

// TestGetRunShowOwner: --show-owner adds an OWNER column, the same top-level
// controller --by-owner groups under (Kind/name, through ReplicaSets; a
// dangling owner or one whose kind cannot be read ends the walk there), and
// <none> for objects no controller owns; grouped tables refuse it.
func TestGetRunShowOwner(t *testing.T) {
	s := fakeapi.New(nil, fixtures.OwnerObjects()...)
	h := newRunHarness(t, s, []string{"pods"}, runFlags{})
	h.o.ShowOwner = true
	if err := h.run(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := map[string]string{}
	for i, line := range strings.Split(strings.TrimSpace(h.out.String()), "\n") {
		f := strings.Fields(line)
		if i == 0 {
			if strings.Join(f, " ") != "NAME AGE OWNER" {
				t.Fatalf("header %q, want NAME AGE OWNER", line)
			}
			continue
		}
		got[f[0]] = f[len(f)-1]
	}
	want := map[string]string{
		"web-5d4-aaaaa": "Deployment/web", "web-5d4-bbbbb": "Deployment/web",
		"static-web-worker-1": "Node/worker-1", "orphan-ddddd": "ReplicaSet/gone-6b8",
		"canary-7f9-ccccc": "Rollout/canary", "widget-eeeee": "Widget/w",
		"adopted": "<none>", "debug": "<none>",
	}
	if !maps.Equal(got, want) {
		t.Errorf("owners %v, want %v\n%s", got, want, h.out.String())
	}

	h = newRunHarness(t, s, []string{"pods"}, runFlags{})
	h.o.ShowOwner = true
	h.o.Group = GroupFlags{ByNode: true}
	if err := h.o.Validate(); err == nil || !strings.Contains(err.Error(), "--show-owner") {
		t.Errorf("--show-owner with --by-node: %v, want an error", err)
	}
}
