package printers_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// ctxPod is a pod of namespace ns created age before outNow, as an informer
// delivers it: typed, without TypeMeta.
func ctxPod(ns, name string, age time.Duration) *corev1.Pod {
	p := outPod(name, "worker-1")
	p.Namespace, p.UID = ns, types.UID("uid-"+ns+"-"+name)
	p.CreationTimestamp = metav1.NewTime(outNow.Add(-age))
	return p
}

// cellsOf returns the table's column names and its rows' cells.
func cellsOf(t *metav1.Table) ([]string, [][]any) {
	var cols []string
	for _, c := range t.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	var rows [][]any
	for _, r := range t.Rows {
		rows = append(rows, r.Cells)
	}
	return cols, rows
}

// TestContextTable merges two servers' tables of one kind whose columns
// differ: the second server has a column the first lacks and lacks one the
// first has.
func TestContextTable(t *testing.T) {
	name := metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"}
	ready := metav1.TableColumnDefinition{Name: "Ready", Type: "string"}
	status := metav1.TableColumnDefinition{Name: "Status", Type: "string"}
	restarts := metav1.TableColumnDefinition{Name: "Restarts", Type: "integer"}
	age := metav1.TableColumnDefinition{Name: "Age", Type: "string"}
	podA1, podA2, podB := ctxPod("shop", "web-1", time.Hour), ctxPod("shop", "web-2", time.Hour), ctxPod("ops", "db-0", time.Hour)
	first := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{name, ready, status, age},
		Rows: []metav1.TableRow{
			{Cells: []any{"web-1", "1/1", "Running", "1h"}, Object: runtime.RawExtension{Object: podA1}},
			{Cells: []any{"web-2", "0/1", "Pending", "1h"}, Object: runtime.RawExtension{Object: podA2}},
		},
	}
	second := &metav1.Table{
		ColumnDefinitions: []metav1.TableColumnDefinition{name, restarts, ready, age},
		Rows: []metav1.TableRow{
			{Cells: []any{"db-0", int64(3), "1/1", "5m"}, Object: runtime.RawExtension{Object: podB}},
		},
	}
	firstCopy, secondCopy := first.DeepCopy(), second.DeepCopy()

	tests := []struct {
		name          string
		withNamespace bool
		wantCols      []string
		wantRows      [][]any
	}{
		{
			name:     "without namespace",
			wantCols: []string{"Context", "Name", "Ready", "Status", "Age", "Restarts"},
			wantRows: [][]any{
				{"prod", "web-1", "1/1", "Running", "1h", ""},
				{"prod", "web-2", "0/1", "Pending", "1h", ""},
				{"staging", "db-0", "1/1", "", "5m", int64(3)},
			},
		},
		{
			name:          "with namespace",
			withNamespace: true,
			wantCols:      []string{"Context", "Namespace", "Name", "Ready", "Status", "Age", "Restarts"},
			wantRows: [][]any{
				{"prod", "shop", "web-1", "1/1", "Running", "1h", ""},
				{"prod", "shop", "web-2", "0/1", "Pending", "1h", ""},
				{"staging", "ops", "db-0", "1/1", "", "5m", int64(3)},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := printers.ContextTable([]string{"prod", "staging"}, []*metav1.Table{first, second}, tc.withNamespace)
			cols, rows := cellsOf(got)
			if !reflect.DeepEqual(cols, tc.wantCols) {
				t.Errorf("columns %q, want %q", cols, tc.wantCols)
			}
			if !reflect.DeepEqual(rows, tc.wantRows) {
				t.Errorf("rows:\n%#v\nwant:\n%#v", rows, tc.wantRows)
			}
			// The kind's name column keeps its format: the table printer
			// prefixes kind/ to it, not to the context.
			for _, c := range got.ColumnDefinitions {
				if c.Name == "Name" && c.Format != "name" {
					t.Errorf("the Name column lost its format: %+v", c)
				}
			}
			for i, want := range []runtime.Object{podA1, podA2, podB} {
				if i < len(got.Rows) && got.Rows[i].Object.Object != want {
					t.Errorf("row %d does not carry its object", i)
				}
			}
			if !apiequality.Semantic.DeepEqual(first, firstCopy) || !apiequality.Semantic.DeepEqual(second, secondCopy) {
				t.Error("ContextTable changed the servers' tables")
			}
		})
	}
}

// TestContextTableEmpty: no tables is a table of CONTEXT alone, no rows.
func TestContextTableEmpty(t *testing.T) {
	got := printers.ContextTable(nil, nil, true)
	cols, rows := cellsOf(got)
	if !reflect.DeepEqual(cols, []string{"Context", "Namespace"}) || len(rows) != 0 {
		t.Errorf("ContextTable(nil) = %q, %v; want CONTEXT and NAMESPACE, no rows", cols, rows)
	}
}

// contextGroups are pods of two contexts that answered, prod and staging,
// with the stand-in server's tables; a third, down, failed.
func contextGroups() ([]group, []ctxInfo, []string) {
	groups := tabled([]group{
		{GVK: outPodGVK, Namespaced: true, Context: "prod", Objects: []runtime.Object{ctxPod("shop", "web-1", 48*time.Hour), ctxPod("shop", "web-0", 5*time.Hour)}},
		{GVK: outPodGVK, Namespaced: true, Context: "staging", Objects: []runtime.Object{ctxPod("ops", "db-0", 5*time.Minute)}},
	})
	infos := []ctxInfo{
		{name: "prod"},
		{name: "staging", warnings: []string{"pods of namespace ops may be missing: forbidden"}},
		{name: "down", err: "The connection to the server 10.1.0.1:6443 was refused - did you specify the right host or port?"},
	}
	warnings := []string{
		`context "staging": pods of namespace ops may be missing: forbidden`,
		`context "down": The connection to the server 10.1.0.1:6443 was refused - did you specify the right host or port?`,
	}
	return groups, infos, warnings
}

// printContexts prints contextGroups with format (and the delegate that
// format's flags build) and opts.
func printContexts(t *testing.T, format, template string, opts printers.Options) string {
	t.Helper()
	groups, infos, warnings := contextGroups()
	opts.Format, opts.Now, opts.Warnings = format, outNow, warnings
	var out bytes.Buffer
	n, err := printers.PrintListing(&out, answersOf(groups, infos), outPrinterFlags(t, format, template, opts.NoHeaders), opts, nil)
	if err != nil {
		t.Fatalf("Print(-o %s): %v", format, err)
	}
	if n != 3 {
		t.Errorf("Print(-o %s) printed %d objects, want 3", format, n)
	}
	return out.String()
}

func TestPrintContextsHuman(t *testing.T) {
	tests := []struct {
		name   string
		format string
		opts   printers.Options
		want   string
	}{
		{
			name: "table",
			want: `CONTEXT   NAME    READY   STATUS    AGE
prod      web-1   1/1     Running   2d
prod      web-0   1/1     Running   5h
staging   db-0    1/1     Running   5m
`,
		},
		{
			name: "all namespaces",
			opts: printers.Options{WithNamespace: true},
			want: `CONTEXT   NAMESPACE   NAME    READY   STATUS    AGE
prod      shop        web-1   1/1     Running   2d
prod      shop        web-0   1/1     Running   5h
staging   ops         db-0    1/1     Running   5m
`,
		},
		{
			name:   "wide",
			format: "wide",
			want: `CONTEXT   NAME    READY   STATUS    AGE   NODE
prod      web-1   1/1     Running   2d    worker-1
prod      web-0   1/1     Running   5h    worker-1
staging   db-0    1/1     Running   5m    worker-1
`,
		},
		{
			name: "no headers",
			opts: printers.Options{NoHeaders: true},
			want: `prod      web-1   1/1   Running   2d
prod      web-0   1/1   Running   5h
staging   db-0    1/1   Running   5m
`,
		},
		{
			name: "show kind",
			opts: printers.Options{ShowKind: true},
			want: `CONTEXT   NAME        READY   STATUS    AGE
prod      pod/web-1   1/1     Running   2d
prod      pod/web-0   1/1     Running   5h
staging   pod/db-0    1/1     Running   5m
`,
		},
		{
			// Each context's rows sorted as its own table, contexts in order.
			name: "sorted context by context",
			opts: printers.Options{SortBy: "{.metadata.name}"},
			want: `CONTEXT   NAME    READY   STATUS    AGE
prod      web-0   1/1     Running   5h
prod      web-1   1/1     Running   2d
staging   db-0    1/1     Running   5m
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := printContexts(t, tc.format, "", tc.opts); got != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestPrintContextsEmptyContextFirst: a context with no objects of the kind
// has no server table (the engine reads tables only for kinds with objects);
// its empty group must not decide the table's columns.
func TestPrintContextsEmptyContextFirst(t *testing.T) {
	groups := []group{
		{GVK: outPodGVK, Namespaced: true, Context: "prod"},
		{GVK: outPodGVK, Namespaced: true, Context: "staging", Objects: []runtime.Object{ctxPod("ops", "db-0", 5*time.Minute)}},
	}
	groups[1].ServerTable = testServerTable(groups[1].Objects)
	var out bytes.Buffer
	n, err := printers.PrintListing(&out, answersOf(groups, []ctxInfo{{name: "prod"}, {name: "staging"}}), nil, printers.Options{Now: outNow}, nil)
	if err != nil || n != 1 {
		t.Fatalf("Print() = %d, %v; want 1 object", n, err)
	}
	want := "CONTEXT   NAME   READY   STATUS    AGE\nstaging   db-0   1/1     Running   5m\n"
	if got := out.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s%s", got, want,
			"BUG in contextTableOf: the empty group of the first context gets the NAME/AGE fallback table (TableFor), "+
				"whose columns come first in ContextTable's union, so AGE moves before the server's READY and STATUS")
	}
}

func TestPrintContextsName(t *testing.T) {
	want := "prod/pod/web-1\nprod/pod/web-0\nstaging/pod/db-0\n"
	if got := printContexts(t, "name", "", printers.Options{}); got != want {
		t.Errorf("-o name:\n%s\nwant:\n%s", got, want)
	}
}

func TestPrintContextsCustomColumns(t *testing.T) {
	tests := []struct {
		name string
		opts printers.Options
		want string
		bug  string
	}{
		{
			name: "in context order",
			want: "CONTEXT   NAME    NAMESPACE\nprod      web-1   shop\nprod      web-0   shop\nstaging   db-0    ops\n",
		},
		{
			name: "no headers",
			opts: printers.Options{NoHeaders: true},
			want: "prod      web-1   shop\nprod      web-0   shop\nstaging   db-0    ops\n",
		},
		{
			// Each line keeps its own context; each context sorted on its
			// own, contexts in order, as tables are.
			name: "sorted",
			opts: printers.Options{SortBy: "{.metadata.name}"},
			want: "CONTEXT   NAME    NAMESPACE\nprod      web-0   shop\nprod      web-1   shop\nstaging   db-0    ops\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := printContexts(t, "custom-columns", "NAME:.metadata.name,NAMESPACE:.metadata.namespace", tc.opts)
			if got != tc.want {
				t.Errorf("-o custom-columns:\n%s\nwant:\n%s%s", got, tc.want, tc.bug)
			}
		})
	}
}

// TestPrintContextsSortBy: --sort-by orders the objects of every output over
// several contexts, as it does the table's rows and one context's output:
// each context's List (and its -o name lines) in the order sorted.
func TestPrintContextsSortBy(t *testing.T) {
	const bug = "\nBUG in printContexts: --sort-by (Options.SortBy) is ignored for -o name, json, yaml, jsonpath " +
		"and go-template over several contexts (printContextNames, writeContextListJSON/YAML and " +
		"contextListObject never read it), while tables and one context's output honor it"
	sortBy := printers.Options{SortBy: "{.metadata.name}"}
	t.Run("jsonpath", func(t *testing.T) {
		got := printContexts(t, "jsonpath", "{.items[*].items[*].metadata.name}", sortBy)
		if want := "web-0 web-1 db-0"; got != want {
			t.Errorf("-o jsonpath --sort-by: %q, want %q%s", got, want, bug)
		}
	})
	t.Run("json", func(t *testing.T) {
		var doc contextList
		if err := json.Unmarshal([]byte(printContexts(t, "json", "", sortBy)), &doc); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, obj := range doc.Items[0].Items {
			got = append(got, obj["metadata"].(map[string]any)["name"].(string))
		}
		if want := []string{"web-0", "web-1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("-o json --sort-by: prod's items %q, want %q%s", got, want, bug)
		}
	})
	t.Run("name", func(t *testing.T) {
		// Sorted across contexts, as the table is, or within each: either
		// way web-0 comes before web-1.
		got := printContexts(t, "name", "", sortBy)
		if i, j := strings.Index(got, "prod/pod/web-0\n"), strings.Index(got, "prod/pod/web-1\n"); i < 0 || j < 0 || i > j {
			t.Errorf("-o name --sort-by:\n%s\nwant prod/pod/web-0 before prod/pod/web-1%s", got, bug)
		}
	})
}

// contextList is the JSON document of a listing over several contexts.
type contextList struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Context    string           `json:"context"`
		Error      string           `json:"error"`
		Warnings   []string         `json:"warnings"`
		Items      []map[string]any `json:"items"`
	} `json:"items"`
	Warnings []string `json:"warnings"`
}

// checkContextList checks a listing's document over prod, staging and down.
func checkContextList(t *testing.T, doc contextList) {
	t.Helper()
	_, infos, warnings := contextGroups()
	if doc.APIVersion != "v1" || doc.Kind != "List" {
		t.Errorf("outer document is %s %s, want v1 List", doc.APIVersion, doc.Kind)
	}
	if !reflect.DeepEqual(doc.Warnings, warnings) {
		t.Errorf("warnings %q, want %q", doc.Warnings, warnings)
	}
	if len(doc.Items) != len(infos) {
		t.Fatalf("%d items, want a List per context (%d)", len(doc.Items), len(infos))
	}
	wantNames := [][]string{{"shop/web-1", "shop/web-0"}, {"ops/db-0"}, nil}
	for i, item := range doc.Items {
		c := infos[i]
		if item.APIVersion != "v1" || item.Kind != "List" {
			t.Errorf("item %d is %s %s, want v1 List", i, item.APIVersion, item.Kind)
		}
		if item.Context != c.name {
			t.Errorf("item %d has context %q, want %q", i, item.Context, c.name)
		}
		if item.Error != c.err {
			t.Errorf("%s: error %q, want %q", c.name, item.Error, c.err)
		}
		if !reflect.DeepEqual(item.Warnings, c.warnings) {
			t.Errorf("%s: warnings %q, want %q", c.name, item.Warnings, c.warnings)
		}
		var names []string
		for _, obj := range item.Items {
			if obj["kind"] != "Pod" || obj["apiVersion"] != "v1" {
				t.Errorf("%s: an item is %v %v, want v1 Pod", c.name, obj["apiVersion"], obj["kind"])
			}
			md, _ := obj["metadata"].(map[string]any)
			names = append(names, md["namespace"].(string)+"/"+md["name"].(string))
		}
		if !reflect.DeepEqual(names, wantNames[i]) {
			t.Errorf("%s: items %q, want %q", c.name, names, wantNames[i])
		}
	}
}

func TestPrintContextsJSON(t *testing.T) {
	out := printContexts(t, "json", "", printers.Options{})
	var doc contextList
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	checkContextList(t, doc)

	// A failed context's List has an empty items array, not null: jq's
	// .items | length works on every context.
	var raw struct {
		Items []map[string]json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if got := string(raw.Items[2]["items"]); got != "[]" {
		t.Errorf("the failed context's items = %s, want []", got)
	}
	if _, ok := raw.Items[0]["error"]; ok {
		t.Error("a context that answered has an error field")
	}
}

func TestPrintContextsYAMLMatchesJSON(t *testing.T) {
	var fromJSON, fromYAML any
	if err := json.Unmarshal([]byte(printContexts(t, "json", "", printers.Options{})), &fromJSON); err != nil {
		t.Fatal(err)
	}
	out := printContexts(t, "yaml", "", printers.Options{})
	if err := yaml.Unmarshal([]byte(out), &fromYAML); err != nil {
		t.Fatalf("-o yaml does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(fromYAML, fromJSON) {
		y, _ := json.MarshalIndent(fromYAML, "", "  ")
		j, _ := json.MarshalIndent(fromJSON, "", "  ")
		t.Errorf("-o yaml and -o json differ: %s", lineDiff(string(y), string(j)))
	}
	var doc contextList
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	checkContextList(t, doc)
}

// TestPrintContextsYAMLBlockScalars: objects whose strings YAML writes as
// block scalars (empty lines, kept trailing line breaks) still parse to the
// JSON document once indented inside their context's List.
func TestPrintContextsYAMLBlockScalars(t *testing.T) {
	groups := []group{
		{GVK: outPodGVK, Namespaced: true, Context: "prod", Objects: []runtime.Object{outTrickyPod()}},
		{GVK: outPodGVK, Namespaced: true, Context: "staging", Objects: []runtime.Object{outPod("web-0", "worker-1")}},
	}
	infos := []ctxInfo{{name: "prod"}, {name: "staging"}}
	docs := map[string]any{}
	for _, format := range []string{"json", "yaml"} {
		var out bytes.Buffer
		if _, err := printers.PrintListing(&out, answersOf(groups, infos), outPrinter(t, format, ""), printers.Options{Format: format}, nil); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := yaml.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("-o %s does not parse: %v\n%s", format, err, out.String())
		}
		docs[format] = v
	}
	if !reflect.DeepEqual(docs["yaml"], docs["json"]) {
		y, _ := json.MarshalIndent(docs["yaml"], "", "  ")
		j, _ := json.MarshalIndent(docs["json"], "", "  ")
		t.Errorf("-o yaml and -o json differ: %s", lineDiff(string(y), string(j)))
	}
}

func TestPrintContextsTemplates(t *testing.T) {
	tests := []struct {
		format, template, want string
	}{
		{format: "jsonpath", template: "{.items[*].context}", want: "prod staging down"},
		{format: "jsonpath", template: "{.items[*].items[*].metadata.name}", want: "web-1 web-0 db-0"},
		{format: "jsonpath", template: `{range .items[?(@.error)]}{.context}{"\n"}{end}`, want: "down\n"},
		{format: "go-template", template: `{{range .items}}{{.context}}={{len .items}} {{end}}`, want: "prod=2 staging=1 down=0 "},
	}
	for _, tc := range tests {
		t.Run(tc.format+" "+tc.template, func(t *testing.T) {
			if got := printContexts(t, tc.format, tc.template, printers.Options{}); got != tc.want {
				t.Errorf("-o %s=%s: %q, want %q", tc.format, tc.template, got, tc.want)
			}
		})
	}
}

// TestPrintContextsDoesNotMutateCacheObjects: every format leaves the
// objects as the informers hold them.
func TestPrintContextsDoesNotMutateCacheObjects(t *testing.T) {
	for _, format := range []string{"", "wide", "name", "json", "yaml", "jsonpath", "custom-columns"} {
		t.Run(format, func(t *testing.T) {
			groups, infos, _ := contextGroups()
			var before []runtime.Object
			for _, g := range groups {
				for _, o := range g.Objects {
					before = append(before, o.DeepCopyObject())
				}
			}
			template := ""
			switch format {
			case "jsonpath":
				template = "{.items[*].items[*].metadata.name}"
			case "custom-columns":
				template = "NAME:.metadata.name"
			}
			var out bytes.Buffer
			if _, err := printers.PrintListing(&out, answersOf(groups, infos), outPrinter(t, format, template), printers.Options{Format: format, Now: outNow, WithNamespace: true}, nil); err != nil {
				t.Fatal(err)
			}
			i := 0
			for _, g := range groups {
				for _, o := range g.Objects {
					if !apiequality.Semantic.DeepEqual(o, before[i]) {
						t.Errorf("-o %q changed %T %d", format, o, i)
					}
					i++
				}
			}
		})
	}
}

// contextTree is a Deployment's tree read from context name.
func contextTree(name, ns string) *v1alpha1.Tree {
	return &v1alpha1.Tree{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.TreeKind}, Context: name,
		Root: treeItem("apps/v1", "Deployment", ns, "web", "1/1", "Available", 3*time.Hour,
			treeItem("apps/v1", "ReplicaSet", ns, "web-7f9", "1/1", "", 3*time.Hour,
				treeItem("v1", "Pod", ns, "web-7f9-a", "1/1", "Running", 3*time.Hour),
			),
		),
		AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{}},
	}
}

// contextDocs are the trees of prod and staging, as their answers.
func contextDocs() []query.Answer[*v1alpha1.Tree] {
	return []query.Answer[*v1alpha1.Tree]{{Context: "prod", Value: contextTree("prod", "shop")}, {Context: "staging", Value: contextTree("staging", "ops")}}
}

func TestPrintDocumentsOfContextsTable(t *testing.T) {
	want := `CONTEXT   NAMESPACE   NAME                   READY   STATUS      AGE
prod      shop        Deployment/web         1/1     Available   3h
prod      shop        └─ReplicaSet/web-7f9   1/1                 3h
prod      shop          └─Pod/web-7f9-a      1/1     Running     3h
staging   ops         Deployment/web         1/1     Available   3h
staging   ops         └─ReplicaSet/web-7f9   1/1                 3h
staging   ops           └─Pod/web-7f9-a      1/1     Running     3h
`
	var out bytes.Buffer
	if _, err := printers.PrintDocuments(&out, contextDocs(), nil, printers.Options{Now: treeNow}); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestPrintDocumentsOfContextsName(t *testing.T) {
	want := `prod/deployment.apps/web
prod/replicaset.apps/web-7f9
prod/pod/web-7f9-a
staging/deployment.apps/web
staging/replicaset.apps/web-7f9
staging/pod/web-7f9-a
`
	var out bytes.Buffer
	if _, err := printers.PrintDocuments(&out, contextDocs(), outPrinter(t, "name", ""), printers.Options{Format: "name", Now: treeNow}); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("-o name:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestPrintDocumentsOfContextsJSON(t *testing.T) {
	warnings := []string{`context "down": connection refused`}
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			if _, err := printers.PrintDocuments(&out, contextDocs(), outPrinter(t, format, ""), printers.Options{Format: format, Now: treeNow, Warnings: warnings}); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				APIVersion string          `json:"apiVersion"`
				Kind       string          `json:"kind"`
				Items      []v1alpha1.Tree `json:"items"`
				Warnings   []string        `json:"warnings"`
			}
			if err := yaml.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("-o %s does not parse: %v\n%s", format, err, out.String())
			}
			if doc.APIVersion != "v1" || doc.Kind != "List" {
				t.Errorf("document is %s %s, want v1 List", doc.APIVersion, doc.Kind)
			}
			if !reflect.DeepEqual(doc.Warnings, warnings) {
				t.Errorf("warnings %q, want %q", doc.Warnings, warnings)
			}
			if len(doc.Items) != 2 {
				t.Fatalf("%d items, want 2", len(doc.Items))
			}
			for i, want := range contextDocs() {
				got := doc.Items[i]
				if got.Context != want.Value.Context || got.Kind != v1alpha1.TreeKind || got.APIVersion != v1alpha1.SchemeGroupVersion.String() {
					t.Errorf("item %d: %s %s context %q, want %s %s context %q", i, got.APIVersion, got.Kind, got.Context, v1alpha1.SchemeGroupVersion, v1alpha1.TreeKind, want.Value.Context)
				}
				if got.Root == nil || got.Root.Namespace != want.Value.Root.Namespace || len(got.Root.Children) != 1 {
					t.Errorf("item %d: root %+v, want the context's tree", i, got.Root)
				}
			}
		})
	}
}

func TestPrintDocumentsOfContextsGraph(t *testing.T) {
	for _, format := range []string{"dot", "mermaid"} {
		var out bytes.Buffer
		_, err := printers.PrintDocuments(&out, contextDocs(), nil, printers.Options{Format: format})
		want := "-o " + format + " draws the graph of one cluster: name one context with --context"
		if err == nil || err.Error() != want {
			t.Errorf("-o %s: error %v, want %q", format, err, want)
		}
		if out.Len() != 0 {
			t.Errorf("-o %s wrote %q", format, out.String())
		}
	}
}
