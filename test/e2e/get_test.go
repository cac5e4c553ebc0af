package e2e

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
)

// TestJSONMatchesKubectl: `kubectl-idx ARGS -o json` prints the objects `kubectl get ARGS
// -o json` prints, in the same order, less managedFields (dropped by the informer transform).
func TestJSONMatchesKubectl(t *testing.T) {
	tests := []struct {
		name string
		user string
		args []string
		// output is "json" when empty.
		output string
		// managedFields: kubectl shows them too (--show-managed-fields), so compare them.
		managedFields bool
	}{
		{name: "pods in all namespaces", args: []string{"pods", "-A"}},
		{name: "pods in all namespaces as YAML", args: []string{"pods", "-A"}, output: "yaml"},
		{name: "with managed fields", args: []string{"deploy", "-n", "shop", "--show-managed-fields"}, managedFields: true},
		{name: "category all", args: []string{"all", "-n", "shop"}},
		{name: "deployments in all namespaces", args: []string{"deployments", "-A"}},
		{name: "CRD by full name", args: []string{"crontabs.stable.example.com", "-A"}},
		{name: "services in all namespaces", args: []string{"services", "-A"}},
		{name: "nodes (cluster-scoped)", args: []string{"nodes"}},
		{name: "comma list in one namespace", args: []string{"deploy,svc", "-n", "shop"}},
		{name: "label selector", args: []string{"pods", "-n", "shop", "-l", "app=web"}},
		{name: "set-based selector across namespaces", args: []string{"pods", "-A", "-l", "app in (api,worker),tier!=frontend"}},
		{name: "field selector", args: []string{"pods", "-A", "--field-selector", "spec.nodeName=worker-2"}},
		{name: "workload kinds", args: []string{"statefulsets,daemonsets,cronjobs,jobs,replicasets", "-A"}},
		{name: "config and secrets", args: []string{"configmaps,secrets", "-n", "shop"}},
		{name: "storage", args: []string{"pvc,pv,storageclasses", "-A"}},
		{name: "events", args: []string{"events", "-n", "shop"}},
		{name: "namespace from kubeconfig context (default)", args: []string{"services"}},
		{name: "narrow user in its namespace", user: narrowUser, args: []string{"pods", "-n", "shop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			output := tt.output
			if output == "" {
				output = "json"
			}
			args := append(slices.Clone(tt.args), "-o", output)
			idxRes, kubectlRes := bothSucceed(t, as(tt.user), args, nil)
			want := decodeDoc(t, "kubectl", kubectlRes.Stdout, output == "yaml")
			got := decodeDoc(t, "kubectl-idx", idxRes.Stdout, output == "yaml")
			items, _ := want["items"].([]any)
			if len(items) == 0 {
				t.Fatalf("fixture problem: kubectl found nothing for %v", tt.args)
			}
			if tt.managedFields {
				md, _ := items[0].(map[string]any)["metadata"].(map[string]any)
				if md["managedFields"] == nil {
					t.Fatalf("kubectl %v shows no managedFields", args)
				}
			}
			compareDocs(t, got, want, !tt.managedFields)
			if idxRes.Stderr != "" {
				t.Errorf("stderr not empty:\n%s", idxRes.Stderr)
			}
		})
	}
}

// TestResourceNames: plurals, singulars, short names, kinds and group-qualified names all
// resolve as kubectl resolves them.
func TestResourceNames(t *testing.T) {
	tests := []struct {
		alias, canonical string
	}{
		{"po", "pods"},
		{"pod", "pods"},
		{"Pod", "pods"},
		{"pods.v1.", "pods"},
		{"deploy", "deployments.apps"},
		{"Deployment", "deployments.apps"},
		{"deployments.apps", "deployments.apps"},
		{"deployments.v1.apps", "deployments.apps"},
		{"svc", "services"},
		{"no", "nodes"},
		{"ct", "crontabs.stable.example.com"},
		{"crontab", "crontabs.stable.example.com"},
		{"CronTab", "crontabs.stable.example.com"},
		{"crontabs.stable.example.com", "crontabs.stable.example.com"},
		{"cj", "cronjobs.batch"},
		{"sts,ds", "statefulsets.apps,daemonsets.apps"},
	}
	for _, tt := range tests {
		t.Run(tt.alias, func(t *testing.T) {
			t.Parallel()
			// Kind, namespace, name and UID of every object: the same objects, not look-alikes.
			// (-o name is TestOutputFormats' business.)
			const ids = `jsonpath={range .items[*]}{.kind} {.metadata.namespace}/{.metadata.name} {.metadata.uid}{"\n"}{end}`
			idxRes, kubectlRes := bothSucceed(t, as(""), []string{tt.alias, "-A", "-o", ids}, []string{tt.canonical, "-A", "-o", ids})
			if kubectlRes.Stdout == "" {
				t.Fatalf("fixture problem: kubectl found no %s", tt.canonical)
			}
			if idxRes.Stdout != kubectlRes.Stdout {
				t.Errorf("kubectl-idx %s:\n%s\nkubectl get %s:\n%s", tt.alias, idxRes.Stdout, tt.canonical, kubectlRes.Stdout)
			}
		})
	}
}

// TestNameArgs: NAME arguments narrow the result; one NAME prints the object itself, not a
// List, as kubectl does.
func TestNameArgs(t *testing.T) {
	web0, web1 := cluster.WebPods[0], cluster.WebPods[1]
	tests := []struct {
		name      string
		args      []string
		wantKind  string // of the JSON document, when -o json
		wantNames int
	}{
		{name: "two names, -o name", args: []string{"po", web0, web1, "-n", "shop", "-o", "name"}, wantNames: 2},
		{name: "two names, -o json", args: []string{"po", web0, web1, "-n", "shop", "-o", "json"}, wantKind: "List"},
		{name: "one name, -o json is the object", args: []string{"pod", web0, "-n", "shop", "-o", "json"}, wantKind: "Pod"},
		{name: "one name, -o yaml is the object", args: []string{"pod", web0, "-n", "shop", "-o", "yaml"}, wantKind: "Pod"},
		{name: "TYPE/NAME form", args: []string{"pod/" + web0, "deployment/web", "-n", "shop", "-o", "name"}, wantNames: 2},
		{name: "CRD instance by name", args: []string{"ct", "nightly-report", "-n", "shop", "-o", "json"}, wantKind: "CronTab"},
		{name: "cluster-scoped by name", args: []string{"node", cluster.CordonedNode, "-o", "json"}, wantKind: "Node"},
		{name: "table rows follow argument order, like kubectl", args: []string{"po", web1, web0, "-n", "shop", "--no-headers"}, wantNames: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			idxRes, kubectlRes := bothSucceed(t, as(""), tt.args, nil)
			switch {
			case tt.wantKind != "":
				isYAML := slices.Contains(tt.args, "yaml")
				want := decodeDoc(t, "kubectl", kubectlRes.Stdout, isYAML)
				got := decodeDoc(t, "kubectl-idx", idxRes.Stdout, isYAML)
				if got["kind"] != tt.wantKind {
					t.Errorf("kind = %v, want %s", got["kind"], tt.wantKind)
				}
				compareLists(t, got, want)
			case slices.Contains(tt.args, "--no-headers"):
				if diff := cmp.Diff(firstCol(parseHeaderless(kubectlRes.Stdout)), firstCol(parseHeaderless(idxRes.Stdout))); diff != "" {
					t.Errorf("names differ (-kubectl +kubectl-idx):\n%s", diff)
				}
			default:
				if idxRes.Stdout != kubectlRes.Stdout {
					t.Errorf("kubectl-idx:\n%s\nkubectl:\n%s", idxRes.Stdout, kubectlRes.Stdout)
				}
			}
			if tt.wantNames > 0 {
				if n := len(strings.Split(strings.TrimSpace(idxRes.Stdout), "\n")); n != tt.wantNames {
					t.Errorf("got %d lines, want %d:\n%s", n, tt.wantNames, idxRes.Stdout)
				}
			}
		})
	}
}

// TestTablesMatchKubectl: the human-readable output has kubectl's header line, and the same
// rows and cells in the same order; only AGE cells may differ (a second can pass between the
// two runs).
func TestTablesMatchKubectl(t *testing.T) {
	tests := []struct {
		name string
		user string
		args []string
	}{
		{name: "pods in a namespace", args: []string{"pods", "-n", "shop"}},
		{name: "pods in all namespaces", args: []string{"pods", "-A"}},
		{name: "pods wide", args: []string{"pods", "-A", "-o", "wide"}},
		{name: "deployments", args: []string{"deployments", "-A"}},
		{name: "deployments wide", args: []string{"deploy", "-n", "shop", "-o", "wide"}},
		{name: "services", args: []string{"services", "-A"}},
		{name: "services wide", args: []string{"svc", "-n", "shop", "-o", "wide"}},
		{name: "nodes", args: []string{"nodes"}},
		{name: "nodes wide", args: []string{"nodes", "-o", "wide"}},
		{name: "CRD printer columns", args: []string{"crontabs.stable.example.com", "-A"}},
		{name: "CRD priority-1 column in wide", args: []string{"ct", "-A", "-o", "wide"}},
		{name: "CRD in one namespace", args: []string{"ct", "-n", "ops"}},
		{name: "show labels", args: []string{"pods", "-n", "shop", "--show-labels"}},
		{name: "label columns", args: []string{"pods", "-A", "-L", "app"}},
		{name: "two label columns", args: []string{"deploy,pods", "-n", "shop", "-L", "app,tier"}},
		{name: "comma list", args: []string{"deploy,svc", "-n", "shop"}},
		{name: "comma list in all namespaces", args: []string{"sts,ds,cronjobs,jobs", "-A"}},
		{name: "selector", args: []string{"pods", "-A", "-l", "tier=backend"}},
		{name: "cluster-scoped before namespaced with -A", args: []string{"pv,pvc", "-A"}},
		{name: "configmaps and secrets", args: []string{"cm,secrets", "-n", "shop"}},
		{name: "narrow user in its namespace", user: narrowUser, args: []string{"pods", "-n", "shop"}},
		{name: "category all", args: []string{"all", "-n", "shop"}},
		{name: "show kind", args: []string{"pods", "-n", "ops", "--show-kind"}},
		{name: "sort by a field", args: []string{"pods", "-A", "--sort-by", ".metadata.name"}},
		{name: "sort by a number", args: []string{"deploy", "-n", "shop", "--sort-by", ".spec.replicas"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			idxRes, kubectlRes := bothSucceed(t, as(tt.user), tt.args, nil)
			want, got := parseTables(kubectlRes.Stdout), parseTables(idxRes.Stdout)
			if len(want) == 0 || len(want[0].rows) == 0 {
				t.Fatalf("fixture problem: kubectl printed no rows for %v", tt.args)
			}
			if len(got) != len(want) {
				t.Fatalf("kubectl-idx printed %d tables, kubectl %d\nkubectl-idx:\n%s\nkubectl:\n%s", len(got), len(want), idxRes.Stdout, kubectlRes.Stdout)
			}
			for i := range want {
				// A time column's width follows its widest cell, which may gain a digit
				// between the two reads (99s, then 100s): each table's header is checked
				// against its own cells there, and compared exactly everywhere else.
				gh, gerr := headerWithoutTimeWidths(got[i], timeColumns)
				wh, werr := headerWithoutTimeWidths(want[i], timeColumns)
				if err := errors.Join(gerr, werr); err != nil {
					t.Errorf("table %d: %v", i, err)
					continue
				}
				if gh != wh {
					t.Errorf("table %d header:\n got %q\nwant %q", i, got[i].header, want[i].header)
					continue
				}
				if diff := cmp.Diff(firstCol(want[i].rows), firstCol(got[i].rows)); diff != "" {
					t.Errorf("table %d first column (-kubectl +kubectl-idx):\n%s", i, diff)
					continue
				}
				w, g := maskColumns(t, "kubectl", want[i], timeColumns...), maskColumns(t, "kubectl-idx", got[i], timeColumns...)
				if diff := cmp.Diff(w.rows, g.rows); diff != "" {
					t.Errorf("table %d cells (-kubectl +kubectl-idx):\n%s", i, diff)
				}
				if !slices.Contains(tt.args, "--sort-by") {
					assertSorted(t, g)
				}
			}
			if t.Failed() {
				t.Logf("kubectl-idx:\n%s\nkubectl:\n%s", idxRes.Stdout, kubectlRes.Stdout)
			}
		})
	}
}

// timeColumns hold ages of things the fixtures created moments ago (or, for LAST
// SCHEDULE, hours ago, read by kubectl in whole hours that may tick between the two runs).
var timeColumns = []string{"AGE", "LAST SCHEDULE"}

// assertSorted checks rows are sorted by namespace (when shown) then name.
func assertSorted(t *testing.T, tb table) {
	t.Helper()
	nsCol, nameCol := slices.Index(tb.cols, "NAMESPACE"), slices.Index(tb.cols, "NAME")
	if nameCol < 0 {
		return
	}
	key := func(r []string) string {
		if nsCol >= 0 {
			return r[nsCol] + "\x00" + r[nameCol]
		}
		return r[nameCol]
	}
	if !slices.IsSortedFunc(tb.rows, func(a, b []string) int { return strings.Compare(key(a), key(b)) }) {
		t.Errorf("rows not sorted by namespace then name: %v", firstCol(tb.rows))
	}
}

// TestNoHeaders compares --no-headers rows with kubectl's, AGE masked by position.
func TestNoHeaders(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		ageCol int
	}{
		{name: "pods", args: []string{"pods", "-A", "--no-headers"}, ageCol: 5},
		{name: "deployments", args: []string{"deploy", "-n", "shop", "--no-headers"}, ageCol: 4},
		{name: "nodes", args: []string{"nodes", "--no-headers"}, ageCol: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			idxRes, kubectlRes := bothSucceed(t, as(""), tt.args, nil)
			mask := func(rows [][]string) [][]string {
				for _, r := range rows {
					if tt.ageCol < len(r) && ageLike.MatchString(r[tt.ageCol]) {
						r[tt.ageCol] = "<age>"
					}
				}
				return rows
			}
			want, got := mask(parseHeaderless(kubectlRes.Stdout)), mask(parseHeaderless(idxRes.Stdout))
			if len(want) == 0 {
				t.Fatalf("fixture problem: kubectl printed no rows for %v", tt.args)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rows (-kubectl +kubectl-idx):\n%s\nkubectl-idx:\n%s", diff, idxRes.Stdout)
			}
		})
	}
}

// TestOutputFormats: the printers that do not depend on time print exactly what kubectl
// prints.
func TestOutputFormats(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{name: "name", args: []string{"pods", "-A", "-o", "name"}},
		{name: "name, comma list", args: []string{"deploy,svc,ct", "-n", "shop", "-o", "name"}},
		{name: "jsonpath", args: []string{"pods", "-A", "-o", "jsonpath={.items[*].metadata.name}"}},
		{name: "jsonpath range", args: []string{"pods", "-n", "shop", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\t"}{.status.phase}{"\n"}{end}`}},
		{name: "jsonpath on one object", args: []string{"node", cluster.CordonedNode, "-o", "jsonpath={.spec.unschedulable}"}},
		{name: "go-template", args: []string{"pods", "-A", "-o", `go-template={{range .items}}{{.metadata.namespace}}/{{.metadata.name}}{{"\n"}}{{end}}`}},
		{name: "custom-columns", args: []string{"pods", "-A", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"}},
		{name: "jsonpath-as-json", args: []string{"deploy", "-n", "shop", "-o", "jsonpath-as-json={.items[*].spec.replicas}"}},
		{name: "custom-columns on a CRD", args: []string{"ct", "-A", "-o", "custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,IMAGE:.spec.image"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			idxRes, kubectlRes := bothSucceed(t, as(""), tt.args, nil)
			if kubectlRes.Stdout == "" {
				t.Fatalf("fixture problem: kubectl printed nothing for %v", tt.args)
			}
			if idxRes.Stdout != kubectlRes.Stdout {
				t.Errorf("stdout differs\nkubectl-idx:\n%s\nkubectl:\n%s", idxRes.Stdout, kubectlRes.Stdout)
			}
		})
	}
}

// TestEmptyResult: nothing found is no output and, for human-readable output, kubectl's
// notice on stderr; exit 0.
func TestEmptyResult(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantStdout string // "" or "json": an empty List
		wantStderr string
	}{
		{name: "empty namespace", args: []string{"pods", "-n", "empty-ns"}, wantStderr: "No resources found in empty-ns namespace.\n"},
		{name: "selector matching nothing, all namespaces", args: []string{"pods", "-A", "-l", "app=nope"}, wantStderr: "No resources found\n"},
		{name: "empty -o name prints nothing at all", args: []string{"deploy", "-n", "empty-ns", "-o", "name"}, wantStderr: ""},
		{name: "empty -o json is an empty List", args: []string{"pods", "-n", "empty-ns", "-o", "json"}, wantStdout: "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			idxRes, kubectlRes := bothSucceed(t, as(""), tt.args, nil)
			if kubectlRes.Stderr != tt.wantStderr {
				t.Fatalf("kubectl's stderr changed: %q (want %q): update the test", kubectlRes.Stderr, tt.wantStderr)
			}
			if idxRes.Stderr != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", idxRes.Stderr, tt.wantStderr)
			}
			if tt.wantStdout == "json" {
				compareLists(t, decodeDoc(t, "kubectl-idx", idxRes.Stdout, false), decodeDoc(t, "kubectl", kubectlRes.Stdout, false))
				return
			}
			if idxRes.Stdout != "" {
				t.Errorf("stdout = %q, want nothing", idxRes.Stdout)
			}
		})
	}
}

// TestIgnoreNotFound: --ignore-not-found as kubectl get has it, compared with
// kubectl on the same arguments: names that do not exist are no error and no
// notice, exit 0; the objects found print as without it; nothing found prints
// nothing, not even an empty List.
func TestIgnoreNotFound(t *testing.T) {
	web0 := cluster.WebPods[0]
	tests := []struct {
		name string
		args []string
		// json compares the documents rather than the bytes.
		json bool
	}{
		{name: "a missing name", args: []string{"pods", "nope", "-n", fixtures.Shop}},
		{name: "two missing names, TYPE/NAME", args: []string{"po/nope-1", "deploy/nope-2", "-n", fixtures.Shop}},
		{name: "a missing name, -o json", args: []string{"pods", "nope", "-n", fixtures.Shop, "-o", "json"}},
		{name: "a found and a missing name, -o name", args: []string{"pods", web0, "nope", "-n", fixtures.Shop, "-o", "name"}},
		{name: "a found and a missing name, -o json", args: []string{"pods", web0, "nope", "-n", fixtures.Shop, "-o", "json"}, json: true},
		{name: "a found and a missing name, a table", args: []string{"pods", web0, "nope", "-n", fixtures.Shop, "--no-headers", "-o", "custom-columns=NAME:.metadata.name"}},
		{name: "an empty namespace, no notice", args: []string{"pods", "-n", fixtures.EmptyNamespace}},
		{name: "an empty namespace, -o json", args: []string{"pods", "-n", fixtures.EmptyNamespace, "-o", "json"}},
		{name: "an empty namespace, -o yaml", args: []string{"pods", "-n", fixtures.EmptyNamespace, "-o", "yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append(slices.Clone(tt.args), "--ignore-not-found")
			idxRes, kubectlRes := bothSucceed(t, as(""), args, nil)
			if idxRes.Stderr != kubectlRes.Stderr {
				t.Errorf("stderr = %q, kubectl's %q", idxRes.Stderr, kubectlRes.Stderr)
			}
			if tt.json {
				compareLists(t, decodeDoc(t, "kubectl-idx", idxRes.Stdout, false), decodeDoc(t, "kubectl", kubectlRes.Stdout, false))
				return
			}
			if idxRes.Stdout != kubectlRes.Stdout {
				t.Errorf("stdout:\n%s\nkubectl's:\n%s", idxRes.Stdout, kubectlRes.Stdout)
			}
		})
	}
}
