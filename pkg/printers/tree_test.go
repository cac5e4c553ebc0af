package printers_test

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/shapes"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// treeNow is the reference time of the tree and relation tests.
var treeNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// treeItem is an object of a tree created age before treeNow, with its
// children.
func treeItem(apiVersion, kind, namespace, name, ready, status string, age time.Duration, children ...*v1alpha1.TreeItem) *v1alpha1.TreeItem {
	ts := metav1.NewTime(treeNow.Add(-age))
	return &v1alpha1.TreeItem{
		APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name,
		UID: "uid-" + strings.ToLower(kind) + "-" + name, CreationTimestamp: &ts,
		Ready: ready, Status: status, Children: children,
	}
}

// ownerItem is an owner of an owner tree: children become owners.
func ownerItem(it *v1alpha1.TreeItem, controller bool) *v1alpha1.TreeItem {
	it.Owners, it.Children = it.Children, nil
	it.Controller = controller
	return it
}

// treeDoc is what `kubectl idx tree rollout/canary` prints: four levels,
// siblings with and without children at each, a ConfigMap with two owners in
// the tree, a custom kind below a pod, and a reference cycle back to the root.
func treeDoc() *v1alpha1.Tree {
	const ns = "shop"
	cycle := treeItem("example.com/v1alpha1", "Rollout", ns, "canary", "", "", 72*time.Hour)
	cycle.Cycle = true
	return &v1alpha1.Tree{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.TreeKind},
		Root: treeItem("example.com/v1alpha1", "Rollout", ns, "canary", "", "Ready", 72*time.Hour,
			treeItem("v1", "ConfigMap", ns, "canary-cfg", "", "", 72*time.Hour),
			treeItem("apps/v1", "ReplicaSet", ns, "canary-7f9", "1/2", "", 5*time.Hour,
				treeItem("v1", "ConfigMap", ns, "canary-cfg", "", "", 72*time.Hour),
				treeItem("v1", "Pod", ns, "canary-7f9-a", "1/1", "Running", 5*time.Hour,
					treeItem("cilium.io/v2", "CiliumEndpoint", ns, "canary-7f9-a", "", "ready", 5*time.Hour),
				),
				treeItem("v1", "Pod", ns, "canary-7f9-b", "0/1", "CrashLoopBackOff", 5*time.Hour),
			),
			treeItem("apps/v1", "ReplicaSet", ns, "canary-6c8", "1/1", "", 50*time.Hour,
				treeItem("v1", "Pod", ns, "canary-6c8-a", "1/1", "Running", 50*time.Hour,
					treeItem("v1", "Secret", ns, "loop", "", "", 50*time.Hour, cycle),
				),
			),
		),
	}
}

// ownersDoc is what `kubectl idx owners pod/backup-2900-x` prints: a
// controller chain through the batch group, a cluster-scoped owner, a missing
// owner, one of a kind that cannot be read, and a cycle.
func ownersDoc() *v1alpha1.Tree {
	const ns = "ops"
	missing := &v1alpha1.TreeItem{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "gone", UID: "uid-configmap-gone", Missing: true}
	unknown := &v1alpha1.TreeItem{APIVersion: "widgets.example.com/v1", Kind: "Widget", Namespace: ns, Name: "w", UID: "uid-widget-w", Unknown: true}
	loopBack := &v1alpha1.TreeItem{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "loop-a", UID: "uid-configmap-loop-a", Cycle: true}
	root := treeItem("v1", "Pod", ns, "backup-2900-x", "0/1", "Completed", 2*time.Hour)
	root.Owners = []*v1alpha1.TreeItem{
		ownerItem(treeItem("batch/v1", "Job", ns, "backup-2900", "1/1", "Complete", 2*time.Hour,
			ownerItem(treeItem("batch/v1", "CronJob", ns, "backup", "", "Active: 0", 30*24*time.Hour), true),
		), true),
		ownerItem(treeItem("v1", "Node", "", "worker-1", "", "Ready", 90*24*time.Hour), false),
		ownerItem(missing, false),
		ownerItem(unknown, false),
		ownerItem(treeItem("v1", "ConfigMap", ns, "loop-a", "", "", time.Hour,
			ownerItem(treeItem("v1", "ConfigMap", ns, "loop-b", "", "", time.Hour, ownerItem(loopBack, false)), false),
		), false),
	}
	return &v1alpha1.Tree{
		TypeMeta:   v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.OwnerTreeKind},
		Root:       root,
		AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{"owner Widget/w cannot be looked up: its kind cannot be listed"}},
	}
}

// printTree prints doc with the delegate printer kubectl's get flags build for
// format, checking that the document is left as it was.
func printTree(t *testing.T, doc *v1alpha1.Tree, format, template string, noHeaders bool) string {
	t.Helper()
	return printDocument(t, "PrintTree", printers.PrintTree, doc, format, template, noHeaders)
}

// printDocument prints doc with print (PrintTree, PrintRelationList) and the
// delegate printer kubectl's get flags build for format, at treeNow, checking
// that the document is left as it was.
func printDocument[D any](t *testing.T, name string, print func(io.Writer, D, cliprinters.ResourcePrinter, printers.Options) error, doc D, format, template string, noHeaders bool) string {
	t.Helper()
	before, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var delegate = outPrinter(t, "", "")
	if !printers.IsHuman(format) && format != "name" {
		delegate = outPrinter(t, format, template)
	}
	var out bytes.Buffer
	opts := printers.Options{Format: format, NoHeaders: noHeaders, Now: treeNow}
	if err := print(&out, doc, delegate, opts); err != nil {
		t.Fatalf("%s -o %s: %v", name, format, err)
	}
	after, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Errorf("%s -o %s modified the document:\nbefore %s\nafter  %s", name, format, before, after)
	}
	return out.String()
}

func TestPrintTreeHuman(t *testing.T) {
	tests := []humanCase[*v1alpha1.Tree]{
		{"tree", treeDoc(), "", false, "testdata/tree.golden", nil},
		{"tree no headers", treeDoc(), "", true, "testdata/tree_no_headers.golden", nil},
		{"tree wide", treeDoc(), "wide", false, "testdata/tree_wide.golden", nil},
		{"owners", ownersDoc(), "", false, "testdata/owners.golden", nil},
		{"owners wide", ownersDoc(), "wide", false, "testdata/owners_wide.golden", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := printTree(t, tc.doc, tc.format, "", tc.noHeaders)
			golden.Assert(t, tc.golden, out)

			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			header := ""
			if !tc.noHeaders {
				header, lines = lines[0], lines[1:]
				wantHeader := []string{"NAMESPACE", "NAME", "READY", "STATUS", "AGE"}
				if tc.format == "wide" {
					wantHeader = append(wantHeader, "UID")
				}
				if got := strings.Fields(header); !reflect.DeepEqual(got, wantHeader) {
					t.Errorf("header = %q, want %q", got, wantHeader)
				}
			}
			// One line per item, warnings not among them (they go to stderr).
			if want := countItems(tc.doc.Root); len(lines) != want {
				t.Errorf("%d rows, want %d", len(lines), want)
			}
			if strings.Contains(out, "warning") {
				t.Error("warnings printed with the table")
			}
			if strings.Contains(out, "uid-") != (tc.format == "wide") {
				t.Errorf("UIDs shown = %v with -o %q", strings.Contains(out, "uid-"), tc.format)
			}
		})
	}
}

func countItems(it *v1alpha1.TreeItem) int {
	if it == nil {
		return 0
	}
	n := 1
	for _, c := range it.Children {
		n += countItems(c)
	}
	for _, o := range it.Owners {
		n += countItems(o)
	}
	return n
}

// nameColumn returns the NAME cell of each row of a table with headers, as
// drawn: tree prefixes included, trailing padding removed. Columns are
// counted in runes, as the table printer aligns them.
func nameColumn(t *testing.T, out string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// The header is ASCII: its byte offsets are rune offsets.
	start, end := strings.Index(lines[0], " NAME ")+1, strings.Index(lines[0], " READY ")+1
	if start == 0 || end == 0 {
		t.Fatalf("no NAME and READY columns in %q", lines[0])
	}
	var cells []string
	for _, line := range lines[1:] {
		r := []rune(line)
		cells = append(cells, strings.TrimRight(string(r[start:end]), " "))
	}
	return cells
}

// wantNameColumn checks the NAME column of out, a table with headers, against want.
func wantNameColumn(t *testing.T, out string, want []string) {
	t.Helper()
	if got := nameColumn(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("NAME column:\n got  %s\n want %s", strings.Join(got, "\n      "), strings.Join(want, "\n      "))
	}
}

// TestPrintTreeGlyphs checks the drawing without a golden file: ├─ for an
// item with later siblings, └─ for the last, │ continuing a branch that has
// more siblings below, spaces under a last item.
func TestPrintTreeGlyphs(t *testing.T) {
	wantNameColumn(t, printTree(t, treeDoc(), "", "", false), []string{
		"Rollout.example.com/canary",
		"├─ConfigMap/canary-cfg",
		"├─ReplicaSet/canary-7f9",
		"│ ├─ConfigMap/canary-cfg",
		"│ ├─Pod/canary-7f9-a",
		"│ │ └─CiliumEndpoint.cilium.io/canary-7f9-a",
		"│ └─Pod/canary-7f9-b",
		"└─ReplicaSet/canary-6c8",
		"  └─Pod/canary-6c8-a",
		"    └─Secret/loop",
		"      └─Rollout.example.com/canary",
	})

	// Owner trees are drawn the same way, upwards.
	wantNameColumn(t, printTree(t, ownersDoc(), "", "", false), []string{
		"Pod/backup-2900-x",
		"├─Job/backup-2900",
		"│ └─CronJob/backup",
		"├─Node/worker-1",
		"├─ConfigMap/gone",
		"├─Widget.widgets.example.com/w",
		"└─ConfigMap/loop-a",
		"  └─ConfigMap/loop-b",
		"    └─ConfigMap/loop-a",
	})
}

// TestPrintTreeMarkers checks the STATUS of items that are not plain objects.
func TestPrintTreeMarkers(t *testing.T) {
	out := printTree(t, ownersDoc(), "", "", false)
	for _, want := range []struct{ label, status string }{
		{"─ConfigMap/gone ", "<missing>"},
		{"─Widget.widgets.example.com/w ", "<unknown>"},
		{"└─ConfigMap/loop-a ", "<cycle>"},
	} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, want.label) && strings.Contains(line, want.status) {
				found = true
			}
		}
		if !found {
			t.Errorf("no line shows %s as %s:\n%s", want.label, want.status, out)
		}
	}
	// The first loop-a is a real object: no marker.
	if strings.Count(out, "<cycle>") != 1 || strings.Count(out, "<missing>") != 1 || strings.Count(out, "<unknown>") != 1 {
		t.Errorf("want one of each marker:\n%s", out)
	}
	// A marker replaces STATUS even when the item has one.
	doc := treeDoc()
	doc.Root.Children[0].Status, doc.Root.Children[0].Missing = "Bound", true
	if out := printTree(t, doc, "", "", true); strings.Contains(out, "Bound") || !strings.Contains(out, "<missing>") {
		t.Errorf("marker not shown over a status:\n%s", out)
	}
}

func TestPrintTreeNames(t *testing.T) {
	tests := []struct {
		name string
		doc  *v1alpha1.Tree
		want []string
	}{
		{
			// Each object once: the ConfigMap with two owners and the root
			// reached again through the cycle are not repeated. Kinds are
			// qualified by their group, core excepted, as kubectl's -o name.
			name: "tree",
			doc:  treeDoc(),
			want: []string{
				"rollout.example.com/canary",
				"configmap/canary-cfg",
				"replicaset.apps/canary-7f9",
				"pod/canary-7f9-a",
				"ciliumendpoint.cilium.io/canary-7f9-a",
				"pod/canary-7f9-b",
				"replicaset.apps/canary-6c8",
				"pod/canary-6c8-a",
				"secret/loop",
			},
		},
		{
			// Missing owners and owners of unknown kinds are no objects to
			// name.
			name: "owners",
			doc:  ownersDoc(),
			want: []string{
				"pod/backup-2900-x",
				"job.batch/backup-2900",
				"cronjob.batch/backup",
				"node/worker-1",
				"configmap/loop-a",
				"configmap/loop-b",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := printTree(t, tc.doc, "name", "", false)
			if want := strings.Join(tc.want, "\n") + "\n"; out != want {
				t.Errorf("-o name:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}

func decodeTree(t *testing.T, out string) (shapes.Tree, map[string]any) {
	t.Helper()
	return decodeDocument[shapes.Tree](t, out)
}

// decodeDocument decodes a document printed with -o json into D, a shape of
// internal/testing/shapes: a field the shape lacks is an error. It returns
// the plain values too.
func decodeDocument[D any](t *testing.T, out string) (D, map[string]any) {
	t.Helper()
	doc, raw, err := shapes.Decode[D](out)
	if err != nil {
		t.Fatal(err)
	}
	return doc, raw
}

func TestPrintTreeJSON(t *testing.T) {
	t.Run("tree", func(t *testing.T) {
		out := printTree(t, treeDoc(), "json", "", false)
		golden.Assert(t, "testdata/tree_json.golden", out)
		doc, raw := decodeTree(t, out)
		if doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Kind != "Tree" {
			t.Errorf("apiVersion, kind = %q, %q", doc.APIVersion, doc.Kind)
		}
		// No warnings is an empty array, never null, so .warnings[] works.
		if w, ok := raw["warnings"].([]any); !ok || len(w) != 0 {
			t.Errorf("warnings = %#v, want []", raw["warnings"])
		}
		root := doc.Root
		if root.Kind != "Rollout" || root.APIVersion != "example.com/v1alpha1" || len(root.Children) != 3 || root.Owners != nil {
			t.Fatalf("root = %+v", root)
		}
		if root.CreationTimestamp != "2025-05-29T12:00:00Z" {
			t.Errorf("creationTimestamp = %q", root.CreationTimestamp)
		}
		rs := root.Children[1]
		if rs.Name != "canary-7f9" || rs.Ready != "1/2" || len(rs.Children) != 3 || rs.Children[1].Children[0].Kind != "CiliumEndpoint" {
			t.Errorf("children of the root = %+v", rs)
		}
		last := root.Children[2].Children[0].Children[0].Children[0]
		if !last.Cycle || last.Name != "canary" || last.Children != nil {
			t.Errorf("cycle item = %+v", last)
		}
		// Flags are left out when false, children when there are none.
		leaf := raw["root"].(map[string]any)["children"].([]any)[0].(map[string]any)
		for _, k := range []string{"children", "owners", "missing", "unknown", "cycle", "controller", "ready", "status"} {
			if _, ok := leaf[k]; ok {
				t.Errorf("leaf has %q: %v", k, leaf)
			}
		}
	})

	t.Run("owners", func(t *testing.T) {
		out := printTree(t, ownersDoc(), "json", "", false)
		golden.Assert(t, "testdata/owners_json.golden", out)
		doc, _ := decodeTree(t, out)
		if doc.Kind != "OwnerTree" || len(doc.Warnings) != 1 {
			t.Errorf("kind = %q, warnings = %q", doc.Kind, doc.Warnings)
		}
		owners := doc.Root.Owners
		if doc.Root.Children != nil || len(owners) != 5 {
			t.Fatalf("root = %+v", doc.Root)
		}
		if job := owners[0]; !job.Controller || job.Kind != "Job" || len(job.Owners) != 1 || !job.Owners[0].Controller {
			t.Errorf("controller chain = %+v", job)
		}
		if node := owners[1]; node.Namespace != "" || node.Controller {
			t.Errorf("node owner = %+v", node)
		}
		if m := owners[2]; !m.Missing || m.UID == "" || m.CreationTimestamp != "" {
			t.Errorf("missing owner = %+v", m)
		}
		if u := owners[3]; !u.Unknown || u.APIVersion != "widgets.example.com/v1" {
			t.Errorf("unknown owner = %+v", u)
		}
		if c := owners[4].Owners[0].Owners[0]; !c.Cycle || c.Name != "loop-a" {
			t.Errorf("cycle owner = %+v", c)
		}
	})

	t.Run("no root", func(t *testing.T) {
		doc := &v1alpha1.Tree{TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.TreeKind}}
		out := printTree(t, doc, "json", "", false)
		want := "{\n    \"apiVersion\": \"kubectl-idx.io/v1alpha1\",\n    \"kind\": \"Tree\",\n    \"root\": null,\n    \"warnings\": []\n}\n"
		if out != want {
			t.Errorf("-o json:\n%s\nwant:\n%s", out, want)
		}
	})
}

func TestPrintTreeDelegateFormats(t *testing.T) {
	t.Run("yaml", func(t *testing.T) {
		out := printTree(t, treeDoc(), "yaml", "", false)
		golden.Assert(t, "testdata/tree_yaml.golden", out)
		assertSameDocument(t, out, printTree(t, treeDoc(), "json", "", false))
		if !strings.Contains(out, "\nwarnings: []\n") {
			t.Errorf("no empty warnings list:\n%s", out)
		}
	})

	runFormatCases(t, printTree, []formatCase[*v1alpha1.Tree]{
		{"jsonpath root", "jsonpath", "{.kind} {.root.kind}/{.root.name}", treeDoc(), "Tree Rollout/canary"},
		{"jsonpath children", "jsonpath", "{.root.children[*].name}", treeDoc(), "canary-cfg canary-7f9 canary-6c8"},
		{"jsonpath grandchildren", "jsonpath", "{.root.children[1].children[*].status}", treeDoc(), "Running CrashLoopBackOff"},
		{"jsonpath owners", "jsonpath", "{.root.owners[?(@.controller)].name}", ownersDoc(), "backup-2900"},
		{"jsonpath missing", "jsonpath", "{.root.owners[?(@.missing)].name}", ownersDoc(), "gone"},
		{"jsonpath warnings", "jsonpath", "{.warnings[0]}", ownersDoc(), "owner Widget/w cannot be looked up: its kind cannot be listed"},
		{"go-template", "go-template", "{{.kind}}:{{range .root.owners}} {{.kind}}{{end}}", ownersDoc(), "OwnerTree: Job Node ConfigMap Widget ConfigMap"},
	})
}

// humanCase is a document printed in a table, the golden file it prints
// and, where the test checks it, its header.
type humanCase[D any] struct {
	name      string
	doc       D
	format    string
	noHeaders bool
	golden    string
	header    []string
}

// formatCase is a document printed with -o format=template and what it
// prints.
type formatCase[D any] struct {
	name, format, template string
	doc                    D
	want                   string
}

// runFormatCases prints each case's document with print and compares.
func runFormatCases[D any](t *testing.T, print func(t *testing.T, doc D, format, template string, noHeaders bool) string, tests []formatCase[D]) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := print(t, tc.doc, tc.format, tc.template, false); got != tc.want {
				t.Errorf("-o %s=%s:\n got  %q\n want %q", tc.format, tc.template, got, tc.want)
			}
		})
	}
}

// assertSameDocument checks that -o yaml printed the document -o json did.
func assertSameDocument(t *testing.T, yamlOut, jsonOut string) {
	t.Helper()
	fromYAML, err := yaml.YAMLToJSON([]byte(yamlOut))
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(fromYAML, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(jsonOut), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("-o yaml and -o json differ:\n%s\n%s", yamlOut, jsonOut)
	}
}

// TestPrintTreeCustomColumns: -o custom-columns prints a row per node of a
// tree or an owner chain, in the table's order, from each node's own fields.
func TestPrintTreeCustomColumns(t *testing.T) {
	const columns = "KIND:.kind,NAME:.name,READY:.ready,STATUS:.status,MISSING:.missing,CHILDREN:.children"
	tests := []struct {
		name      string
		doc       *v1alpha1.Tree
		noHeaders bool
		want      string
	}{
		{
			name: "tree", doc: treeDoc(),
			want: `KIND             NAME           READY    STATUS             MISSING   CHILDREN
Rollout          canary         <none>   Ready              <none>    <none>
ConfigMap        canary-cfg     <none>   <none>             <none>    <none>
ReplicaSet       canary-7f9     1/2      <none>             <none>    <none>
ConfigMap        canary-cfg     <none>   <none>             <none>    <none>
Pod              canary-7f9-a   1/1      Running            <none>    <none>
CiliumEndpoint   canary-7f9-a   <none>   ready              <none>    <none>
Pod              canary-7f9-b   0/1      CrashLoopBackOff   <none>    <none>
ReplicaSet       canary-6c8     1/1      <none>             <none>    <none>
Pod              canary-6c8-a   1/1      Running            <none>    <none>
Secret           loop           <none>   <none>             <none>    <none>
Rollout          canary         <none>   <none>             <none>    <none>
`,
		},
		{
			name: "owners, no headers", doc: ownersDoc(), noHeaders: true,
			want: `Pod         backup-2900-x   0/1      Completed   <none>   <none>
Job         backup-2900     1/1      Complete    <none>   <none>
CronJob     backup          <none>   Active: 0   <none>   <none>
Node        worker-1        <none>   Ready       <none>   <none>
ConfigMap   gone            <none>   <none>      true     <none>
Widget      w               <none>   <none>      <none>   <none>
ConfigMap   loop-a          <none>   <none>      <none>   <none>
ConfigMap   loop-b          <none>   <none>      <none>   <none>
ConfigMap   loop-a          <none>   <none>      <none>   <none>
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, err := json.Marshal(tc.doc)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			opts := printers.Options{Format: "custom-columns", NoHeaders: tc.noHeaders, Now: treeNow}
			if err := printers.PrintTree(&out, tc.doc, outPrinterFlags(t, "custom-columns", columns, tc.noHeaders), opts); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), tc.want)
			}
			if after, _ := json.Marshal(tc.doc); !bytes.Equal(before, after) {
				t.Errorf("PrintTree modified the document:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}
