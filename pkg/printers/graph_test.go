package printers_test

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/graphviz"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// The relation graphs are checked twice for each document: the DOT text is
// rendered by the real Graphviz (dot -Tjson), whose drawn text must be the
// expected nodes and edges; the Mermaid text is read by mermaidGraph, which
// follows the grammar the Mermaid docs give for flowcharts (node IDs, quoted
// labels, entity codes) and refuses anything else. A real Mermaid parser runs
// in the end-to-end tests (test/e2e/testdata/mermaid).

// drawn is a graph as it reads once drawn: node labels, lines joined by "\n",
// in print order, and edges as "from -> to: label", with " (dashed)" for a
// dashed edge.
type drawn struct {
	nodes []string
	edges []string
}

// selectionMembers are the pods a Service selects, as the engine returns
// them.
func selectionMembers() []v1alpha1.Members {
	pod := func(name string) runtime.Object {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	}
	return []v1alpha1.Members{{
		GVK:        schema.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Namespaced: true,
		Objects:    []runtime.Object{pod("web-7d9c-a"), pod("web-7d9c-b")},
	}}
}

// selectorsMembers are the objects that select pod web-7d9c-a.
func selectorsMembers() []v1alpha1.Members {
	obj := func(name string) runtime.Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}}
	}
	return []v1alpha1.Members{
		{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Service"}, Namespaced: true, Objects: []runtime.Object{obj("web")}},
		{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespaced: true, Objects: []runtime.Object{obj("web")}},
		{GVK: schema.GroupVersionKind{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}, Namespaced: true, Objects: []runtime.Object{obj("all"), obj("web")}},
	}
}

func relSubject(apiVersion, kind, namespace, name string) v1alpha1.RelationItem {
	return v1alpha1.RelationItem{APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
}

// graphCases are the documents of every relation command with what they must
// draw.
func graphCases() []struct {
	name  string
	print func(w *bytes.Buffer, format string) error
	want  drawn
} {
	return []struct {
		name  string
		print func(w *bytes.Buffer, format string) error
		want  drawn
	}{
		{
			name:  "tree",
			print: func(w *bytes.Buffer, f string) error { return printers.PrintTreeGraph(w, treeDoc(), f) },
			want: drawn{
				nodes: []string{
					"Rollout.example.com/canary\nns shop",
					"ConfigMap/canary-cfg\nns shop",
					"ReplicaSet/canary-7f9\nns shop",
					"Pod/canary-7f9-a\nns shop",
					"CiliumEndpoint.cilium.io/canary-7f9-a\nns shop",
					"Pod/canary-7f9-b\nns shop",
					"ReplicaSet/canary-6c8\nns shop",
					"Pod/canary-6c8-a\nns shop",
					"Secret/loop\nns shop",
				},
				edges: []string{
					"Rollout.example.com/canary -> ConfigMap/canary-cfg: owns",
					"Rollout.example.com/canary -> ReplicaSet/canary-7f9: owns",
					"ReplicaSet/canary-7f9 -> ConfigMap/canary-cfg: owns",
					"ReplicaSet/canary-7f9 -> Pod/canary-7f9-a: owns",
					"Pod/canary-7f9-a -> CiliumEndpoint.cilium.io/canary-7f9-a: owns",
					"ReplicaSet/canary-7f9 -> Pod/canary-7f9-b: owns",
					"Rollout.example.com/canary -> ReplicaSet/canary-6c8: owns",
					"ReplicaSet/canary-6c8 -> Pod/canary-6c8-a: owns",
					"Pod/canary-6c8-a -> Secret/loop: owns",
					"Secret/loop -> Rollout.example.com/canary: owns",
				},
			},
		},
		{
			name:  "owners",
			print: func(w *bytes.Buffer, f string) error { return printers.PrintTreeGraph(w, ownersDoc(), f) },
			want: drawn{
				nodes: []string{
					"Pod/backup-2900-x\nns ops",
					"Job/backup-2900\nns ops",
					"CronJob/backup\nns ops",
					"Node/worker-1",
					"ConfigMap/gone\nns ops\n<missing>",
					"Widget.widgets.example.com/w\nns ops\n<unknown>",
					"ConfigMap/loop-a\nns ops",
					"ConfigMap/loop-b\nns ops",
				},
				edges: []string{
					"Job/backup-2900 -> Pod/backup-2900-x: owns",
					"CronJob/backup -> Job/backup-2900: owns",
					"Node/worker-1 -> Pod/backup-2900-x: owns (dashed)",
					"ConfigMap/gone -> Pod/backup-2900-x: owns (dashed)",
					"Widget.widgets.example.com/w -> Pod/backup-2900-x: owns (dashed)",
					"ConfigMap/loop-a -> Pod/backup-2900-x: owns (dashed)",
					"ConfigMap/loop-b -> ConfigMap/loop-a: owns (dashed)",
					"ConfigMap/loop-a -> ConfigMap/loop-b: owns (dashed)",
				},
			},
		},
		{
			name: "selects",
			print: func(w *bytes.Buffer, f string) error {
				return printers.PrintSelectionGraph(w, relSubject("v1", "Service", "shop", "web"), selectionMembers(), false, f)
			},
			want: drawn{
				nodes: []string{"Service/web\nns shop", "Pod/web-7d9c-a\nns shop", "Pod/web-7d9c-b\nns shop"},
				edges: []string{"Service/web -> Pod/web-7d9c-a: selects", "Service/web -> Pod/web-7d9c-b: selects"},
			},
		},
		{
			name: "selected-by",
			print: func(w *bytes.Buffer, f string) error {
				return printers.PrintSelectionGraph(w, relSubject("v1", "Pod", "shop", "web-7d9c-a"), selectorsMembers(), true, f)
			},
			want: drawn{
				nodes: []string{
					"Pod/web-7d9c-a\nns shop", "Service/web\nns shop", "Deployment/web\nns shop",
					"PodDisruptionBudget.policy/all\nns shop", "PodDisruptionBudget.policy/web\nns shop",
				},
				edges: []string{
					"Service/web -> Pod/web-7d9c-a: selects",
					"Deployment/web -> Pod/web-7d9c-a: selects",
					"PodDisruptionBudget.policy/all -> Pod/web-7d9c-a: selects",
					"PodDisruptionBudget.policy/web -> Pod/web-7d9c-a: selects",
				},
			},
		},
		{
			name: "selects nothing",
			print: func(w *bytes.Buffer, f string) error {
				return printers.PrintSelectionGraph(w, relSubject("v1", "Service", "shop", "external"), nil, false, f)
			},
			want: drawn{nodes: []string{"Service/external\nns shop"}},
		},
		{
			name:  "uses, users",
			print: func(w *bytes.Buffer, f string) error { return printers.PrintUsesGraph(w, usesDoc("users"), f) },
			want: drawn{
				nodes: []string{"Secret/db-creds\nns shop", "Deployment/api\nns shop", "CronJob/db-backup\nns ops", "Pod/api-0\nns shop"},
				edges: []string{
					"Deployment/api -> Secret/db-creds: uses: env app/DB_PASSWORD, volume creds",
					"CronJob/db-backup -> Secret/db-creds: uses: envFrom backup (optional)",
					"Pod/api-0 -> Secret/db-creds: uses: env app/DB_PASSWORD, volume creds",
				},
			},
		},
		{
			name:  "uses, uses",
			print: func(w *bytes.Buffer, f string) error { return printers.PrintUsesGraph(w, usesDoc("uses"), f) },
			want: drawn{
				nodes: []string{
					"Pod/api-0\nns shop", "ConfigMap/api-config\nns shop", "ConfigMap/flags\nns shop\ndoes not exist",
					"PersistentVolumeClaim/data-api-0\nns shop", "Secret/db-creds\nns shop\ndoes not exist", "ServiceAccount/api\nns shop",
				},
				edges: []string{
					"Pod/api-0 -> ConfigMap/api-config: uses: volume config",
					"Pod/api-0 -> ConfigMap/flags: uses: envFrom app (optional)",
					"Pod/api-0 -> PersistentVolumeClaim/data-api-0: uses: volume data",
					"Pod/api-0 -> Secret/db-creds: uses: env app/DB_PASSWORD, volume creds",
					"Pod/api-0 -> ServiceAccount/api: uses: serviceAccountName",
				},
			},
		},
		{
			name: "empty tree",
			print: func(w *bytes.Buffer, f string) error {
				return printers.PrintTreeGraph(w, &v1alpha1.Tree{TypeMeta: v1alpha1.TypeMeta{Kind: v1alpha1.TreeKind}}, f)
			},
			want: drawn{},
		},
	}
}

// TestPrintGraph prints every relation command's document in both formats,
// compares the text with golden files and checks what it draws: DOT through
// the real Graphviz, Mermaid through mermaidGraph.
func TestPrintGraph(t *testing.T) {
	for _, tc := range graphCases() {
		for _, format := range printers.GraphFormats {
			t.Run(tc.name+" "+format, func(t *testing.T) {
				var out bytes.Buffer
				if err := tc.print(&out, format); err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, "testdata/graph_"+strings.NewReplacer(", ", "_", " ", "_", "-", "_").Replace(tc.name)+"."+format+".golden", out.String())
				var again bytes.Buffer
				if err := tc.print(&again, format); err != nil || again.String() != out.String() {
					t.Errorf("a second print differs (err %v):\n%s", err, again.String())
				}
				got := readGraph(t, format, out.String())
				assertDrawn(t, got, tc.want)
			})
		}
	}
}

// readGraph reads what text draws, in its format.
func readGraph(t *testing.T, format, text string) drawn {
	t.Helper()
	if format == printers.FormatDOT {
		return dotGraph(t, text)
	}
	return mermaidGraph(t, text)
}

func assertDrawn(t *testing.T, got, want drawn) {
	t.Helper()
	if strings.Join(got.nodes, "|") != strings.Join(want.nodes, "|") {
		t.Errorf("nodes:\n%q\nwant:\n%q", got.nodes, want.nodes)
	}
	// Graphviz lists edges in an order of its own; the golden files hold the
	// printed order.
	got.edges, want.edges = slices.Sorted(slices.Values(got.edges)), slices.Sorted(slices.Values(want.edges))
	if strings.Join(got.edges, "|") != strings.Join(want.edges, "|") {
		t.Errorf("edges:\n%q\nwant:\n%q", got.edges, want.edges)
	}
}

// firstLine is an edge end as the expectations name it.
func firstLine(label string) string {
	first, _, _ := strings.Cut(label, "\n")
	return first
}

// dotGraph renders text with the real dot and reads the drawn text back from
// its JSON output: each node's lines, each edge's label. A missing dot fails
// the test: .ci/run installs graphviz.
func dotGraph(t *testing.T, text string) drawn {
	t.Helper()
	d, err := graphviz.Draw("", text)
	if err != nil {
		t.Fatalf("%v\ninput:\n%s", err, text)
	}
	var g drawn
	for i, o := range d.Nodes {
		if o.Name != fmt.Sprintf("n%d", i) {
			t.Errorf("node %d is named %q, want n%d", i, o.Name, i)
		}
		if absent := strings.Contains(o.Label, "\n<") || strings.HasSuffix(o.Label, "does not exist"); (o.Style == "dashed") != absent {
			t.Errorf("node %q: style %q", o.Label, o.Style)
		}
		g.nodes = append(g.nodes, o.Label)
	}
	for _, e := range d.Edges {
		s := firstLine(g.nodes[e.Tail]) + " -> " + firstLine(g.nodes[e.Head]) + ": " + e.Label
		if e.Style == "dashed" {
			s += " (dashed)"
		}
		g.edges = append(g.edges, s)
	}
	return g
}

// The lines of a Mermaid flowchart as this printer writes them, following the
// Mermaid docs: node IDs are plain identifiers, labels are double-quoted
// strings with no double quote inside, edges carry a quoted label between
// pipes, and classes are assigned by name.
var (
	mermaidNode     = regexp.MustCompile(`^    (n[0-9]+)\["([^"]*)"\]$`)
	mermaidEdge     = regexp.MustCompile(`^    (n[0-9]+) (-->|-\.->)\|"([^"]*)"\| (n[0-9]+)$`)
	mermaidClassDef = regexp.MustCompile(`^    classDef (subject|absent) [a-z-]+:[0-9a-z ]+$`)
	mermaidClass    = regexp.MustCompile(`^    class (n[0-9]+(?:,n[0-9]+)*) (subject|absent)$`)
	// mermaidEntity is an entity code: a named one or a decimal code.
	mermaidEntity = regexp.MustCompile(`#(quot|lt|gt|amp|[0-9]+);`)
)

// mermaidGraph reads a flowchart by the grammar above, refusing any other
// line, and decodes the labels' entity codes as Mermaid does before it
// renders them.
func mermaidGraph(t *testing.T, text string) drawn {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if lines[0] != "flowchart TB" {
		t.Fatalf("first line %q, want flowchart TB", lines[0])
	}
	var g drawn
	ids := map[string]int{}
	absent := map[string]bool{}
	for _, line := range lines[1:] {
		if m := mermaidNode.FindStringSubmatch(line); m != nil {
			if _, dup := ids[m[1]]; dup || m[1] != fmt.Sprintf("n%d", len(g.nodes)) {
				t.Errorf("node id %s out of order", m[1])
			}
			ids[m[1]] = len(g.nodes)
			parts := strings.Split(m[2], "<br/>")
			for i, p := range parts {
				parts[i] = mermaidDecode(t, p)
			}
			g.nodes = append(g.nodes, strings.Join(parts, "\n"))
			continue
		}
		if m := mermaidEdge.FindStringSubmatch(line); m != nil {
			from, ok1 := ids[m[1]]
			to, ok2 := ids[m[4]]
			if !ok1 || !ok2 {
				t.Fatalf("edge %q names an undeclared node", line)
			}
			s := firstLine(g.nodes[from]) + " -> " + firstLine(g.nodes[to]) + ": " + mermaidDecode(t, m[3])
			if m[2] == "-.->" {
				s += " (dashed)"
			}
			g.edges = append(g.edges, s)
			continue
		}
		if mermaidClassDef.MatchString(line) {
			continue
		}
		if m := mermaidClass.FindStringSubmatch(line); m != nil {
			for _, id := range strings.Split(m[1], ",") {
				if _, ok := ids[id]; !ok {
					t.Errorf("class of undeclared node %s", id)
				}
				if m[2] == "absent" {
					absent[id] = true
				}
			}
			continue
		}
		t.Fatalf("not a flowchart line: %q\nin:\n%s", line, text)
	}
	for id, i := range ids {
		if absent[id] != (strings.Contains(g.nodes[i], "\n<") || strings.HasSuffix(g.nodes[i], "does not exist")) {
			t.Errorf("node %q: absent class %v", g.nodes[i], absent[id])
		}
	}
	return g
}

// mermaidDecode decodes a quoted label's entity codes. Characters Mermaid or
// its HTML rendering would read as syntax must not appear raw.
func mermaidDecode(t *testing.T, s string) string {
	t.Helper()
	rest := mermaidEntity.ReplaceAllString(s, "")
	if i := strings.IndexAny(rest, "\"#<>&`|[]{}\\;%\n\r\t"); i >= 0 {
		t.Errorf("label %q has %q outside an entity code", s, rest[i])
	}
	return mermaidEntity.ReplaceAllStringFunc(s, func(e string) string {
		code := strings.TrimSuffix(strings.TrimPrefix(e, "#"), ";")
		if named, ok := map[string]string{"quot": `"`, "lt": "<", "gt": ">", "amp": "&"}[code]; ok {
			return named
		}
		n, err := strconv.Atoi(code)
		if err != nil || n > unicode.MaxRune {
			t.Errorf("bad entity code %q", e)
			return ""
		}
		return string(rune(n))
	})
}

// awkwardNames are names and kinds with everything a Kubernetes name or a CRD
// kind may hold, and for safety what neither may.
var awkwardNames = []struct {
	name, kind, apiVersion string
}{
	{name: "web.v2-canary", kind: "Deployment", apiVersion: "apps/v1"},
	{name: "0-starts-with-a-digit", kind: "Pod", apiVersion: "v1"},
	{name: strings.Repeat("a.b-c", 50) + "end", kind: "ConfigMap", apiVersion: "v1"},
	{name: "end", kind: "Widget", apiVersion: "widgets.sub.example.com/v1beta1"},
	{name: "graph", kind: "subgraph", apiVersion: "node.example.io/v1"},
	{name: `say "hi"`, kind: "Pod", apiVersion: "v1"},
	{name: `back\slash\`, kind: "Pod", apiVersion: "v1"},
	{name: `\N\n\l\G`, kind: "Pod", apiVersion: "v1"},
	{name: "[brackets](parens){braces}", kind: "Pod", apiVersion: "v1"},
	{name: "pipe|pipe", kind: "Pod", apiVersion: "v1"},
	{name: "<b>bold</b>&amp;", kind: "Pod", apiVersion: "v1"},
	{name: "#quot;#35;%%comment", kind: "Pod", apiVersion: "v1"},
	{name: "`markdown` **x**", kind: "Pod", apiVersion: "v1"},
	{name: "a;b -->c ---|x| d", kind: "Pod", apiVersion: "v1"},
	{name: "ünïcødé-名前-😀", kind: "Pod", apiVersion: "v1"},
	{name: "line\nbreak\ttab", kind: "Pod", apiVersion: "v1"},
	{name: "bad\xffutf8", kind: "Pod", apiVersion: "v1"},
	{name: "x", kind: `Ki"nd\`, apiVersion: `we"ird.gr\oup/v1`},
}

// TestGraphAwkwardNames draws a tree, a selection and a uses graph of each
// awkward name in both formats: the text must parse and draw the name as it
// is (for DOT, with line breaks as line breaks and other control characters
// and invalid UTF-8 as U+FFFD).
func TestGraphAwkwardNames(t *testing.T) {
	for _, n := range awkwardNames {
		gv, _ := schema.ParseGroupVersion(n.apiVersion)
		kind := n.kind
		if gv.Group != "" && gv.Group != "apps" {
			kind += "." + gv.Group
		}
		ns := "ns-" + n.name
		label := validUTF8(kind+"/"+n.name) + "\nns " + validUTF8(ns)
		child := &v1alpha1.TreeItem{APIVersion: n.apiVersion, Kind: n.kind, Namespace: ns, Name: n.name + "-child"}
		root := &v1alpha1.TreeItem{APIVersion: n.apiVersion, Kind: n.kind, Namespace: ns, Name: n.name, Children: []*v1alpha1.TreeItem{child}}
		childLabel := validUTF8(kind+"/"+n.name+"-child") + "\nns " + validUTF8(ns)
		uses := &v1alpha1.RelationList{
			TypeMeta: v1alpha1.TypeMeta{Kind: v1alpha1.UsesListKind}, Direction: "uses",
			Subject: &v1alpha1.RelationItem{APIVersion: n.apiVersion, Kind: n.kind, Namespace: ns, Name: n.name},
			Items:   []v1alpha1.RelationItem{{APIVersion: "v1", Kind: "Secret", Namespace: ns, Name: "s", Via: []string{"env " + n.name}}},
		}
		selection := []v1alpha1.Members{{
			GVK:     schema.FromAPIVersionAndKind(n.apiVersion, n.kind),
			Objects: []runtime.Object{&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n.name + "-child"}}},
		}}
		subject := v1alpha1.RelationItem{APIVersion: n.apiVersion, Kind: n.kind, Namespace: ns, Name: n.name}
		secret := "Secret/s\nns " + validUTF8(ns)
		cases := []struct {
			what  string
			print func(w *bytes.Buffer, format string) error
			want  drawn
		}{
			{"tree", func(w *bytes.Buffer, f string) error {
				return printers.PrintTreeGraph(w, &v1alpha1.Tree{Root: root}, f)
			},
				drawn{nodes: []string{label, childLabel}, edges: []string{firstLine(label) + " -> " + firstLine(childLabel) + ": owns"}}},
			{"selects", func(w *bytes.Buffer, f string) error {
				return printers.PrintSelectionGraph(w, subject, selection, false, f)
			}, drawn{nodes: []string{label, childLabel}, edges: []string{firstLine(label) + " -> " + firstLine(childLabel) + ": selects"}}},
			{"uses", func(w *bytes.Buffer, f string) error { return printers.PrintUsesGraph(w, uses, f) },
				drawn{nodes: []string{label, secret}, edges: []string{firstLine(label) + " -> Secret/s: uses: env " + validUTF8(n.name)}}},
		}
		for _, c := range cases {
			for _, format := range printers.GraphFormats {
				t.Run(fmt.Sprintf("%s %q %s", c.what, n.name, format), func(t *testing.T) {
					var out bytes.Buffer
					if err := c.print(&out, format); err != nil {
						t.Fatal(err)
					}
					want := c.want
					if format == printers.FormatDOT {
						want = dotDrawn(want)
					}
					assertDrawn(t, readGraph(t, format, out.String()), want)
				})
			}
		}
	}
}

// dotDrawn is what DOT draws of want: a line break in a name is a line
// break, so an edge's end is named by its first line, and other control
// characters are U+FFFD.
func dotDrawn(want drawn) drawn {
	control := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r != '\n' && unicode.IsControl(r) {
				return unicode.ReplacementChar
			}
			return r
		}, s)
	}
	var out drawn
	for _, n := range want.nodes {
		out.nodes = append(out.nodes, control(n))
	}
	for _, e := range want.edges {
		// "from -> to: label", each end the first line of its label.
		from, rest, _ := strings.Cut(e, " -> ")
		to, label, _ := strings.Cut(rest, ": ")
		out.edges = append(out.edges, firstLine(control(from))+" -> "+firstLine(control(to))+": "+control(label))
	}
	return out
}

// TestGraphBadInput: documents the engine would not produce print without a
// panic: nil documents, items and objects, objects without metadata, unknown
// formats.
func TestGraphBadInput(t *testing.T) {
	tests := []struct {
		name    string
		print   func(w *bytes.Buffer) error
		wantErr string
	}{
		{"nil tree", func(w *bytes.Buffer) error { return printers.PrintTreeGraph(w, nil, printers.FormatDOT) }, ""},
		{"nil items", func(w *bytes.Buffer) error {
			return printers.PrintTreeGraph(w, &v1alpha1.Tree{Root: &v1alpha1.TreeItem{Kind: "Pod", Name: "p", Children: []*v1alpha1.TreeItem{nil}, Owners: []*v1alpha1.TreeItem{nil}}}, printers.FormatMermaid)
		}, ""},
		{"empty item", func(w *bytes.Buffer) error {
			return printers.PrintTreeGraph(w, &v1alpha1.Tree{Root: &v1alpha1.TreeItem{}}, printers.FormatDOT)
		}, ""},
		{"nil uses", func(w *bytes.Buffer) error { return printers.PrintUsesGraph(w, nil, printers.FormatMermaid) }, ""},
		{"uses without subject", func(w *bytes.Buffer) error {
			return printers.PrintUsesGraph(w, &v1alpha1.RelationList{Items: []v1alpha1.RelationItem{{Kind: "Secret", Name: "s"}}}, printers.FormatDOT)
		}, ""},
		{"nil object", func(w *bytes.Buffer) error {
			return printers.PrintSelectionGraph(w, v1alpha1.RelationItem{}, []v1alpha1.Members{{Objects: []runtime.Object{nil}}}, false, printers.FormatDOT)
		}, ""},
		{"object without metadata", func(w *bytes.Buffer) error {
			members := []v1alpha1.Members{{GVK: schema.GroupVersionKind{Kind: "Pod"}, Objects: []runtime.Object{&metav1.Status{}}}}
			return printers.PrintSelectionGraph(w, v1alpha1.RelationItem{}, members, false, printers.FormatDOT)
		}, "drawing a Pod: *v1.Status has no object metadata"},
		{"unknown format", func(w *bytes.Buffer) error { return printers.PrintTreeGraph(w, treeDoc(), "svg") }, `unknown graph format "svg", allowed formats are: dot,mermaid`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := tc.print(&out)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Fatalf("error %q, want %q", got, tc.wantErr)
			}
			if err == nil && out.Len() > 0 {
				// Whatever was printed still parses.
				if strings.HasPrefix(out.String(), "digraph") {
					dotGraph(t, out.String())
				} else {
					mermaidGraph(t, out.String())
				}
			}
		})
	}
}

// BenchmarkPrintTreeGraph draws a tree of 1000 pods under 100 ReplicaSets.
func BenchmarkPrintTreeGraph(b *testing.B) {
	root := treeItem("apps/v1", "Deployment", "shop", "web", "", "", time.Hour)
	for i := 0; i < 100; i++ {
		rs := treeItem("apps/v1", "ReplicaSet", "shop", fmt.Sprintf("web-%d", i), "", "", time.Hour)
		for j := 0; j < 10; j++ {
			rs.Children = append(rs.Children, treeItem("v1", "Pod", "shop", fmt.Sprintf("web-%d-%d", i, j), "", "", time.Hour))
		}
		root.Children = append(root.Children, rs)
	}
	doc := &v1alpha1.Tree{TypeMeta: v1alpha1.TypeMeta{Kind: v1alpha1.TreeKind}, Root: root}
	for _, format := range printers.GraphFormats {
		b.Run(format, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var out bytes.Buffer
				if err := printers.PrintTreeGraph(&out, doc, format); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// dotLabelLine matches a node line of the DOT output; its label is a quoted
// string in which a double quote only appears escaped.
var dotLabelLine = regexp.MustCompile(`^    n0 \[label="((?:[^"\\]|\\.)*)"(?:, [a-z]+=[a-z0-9]+)*\];$`)

// FuzzGraphNames prints a tree of an object with an arbitrary kind, name
// and namespace in both formats: nothing panics, the Mermaid text follows
// the flowchart grammar and its labels decode to the text, and the DOT label
// is one quoted string that unescapes to it.
func FuzzGraphNames(f *testing.F) {
	for _, n := range awkwardNames {
		f.Add(n.kind, n.apiVersion, n.name)
	}
	f.Fuzz(func(t *testing.T, kind, apiVersion, name string) {
		doc := &v1alpha1.Tree{Root: &v1alpha1.TreeItem{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: name,
			Children: []*v1alpha1.TreeItem{{APIVersion: apiVersion, Kind: kind, Name: name + "x", Missing: true}}}}
		var dot, mmd bytes.Buffer
		if err := printers.PrintTreeGraph(&dot, doc, printers.FormatDOT); err != nil {
			t.Fatal(err)
		}
		if err := printers.PrintTreeGraph(&mmd, doc, printers.FormatMermaid); err != nil {
			t.Fatal(err)
		}
		g := mermaidGraph(t, mmd.String())
		if len(g.nodes) != 2 {
			// The child is named name+"x": always a node of its own.
			t.Fatalf("mermaid: %d nodes\n%s", len(g.nodes), mmd.String())
		}
		first, _, _ := strings.Cut(g.nodes[0], "\n")
		gv, _ := schema.ParseGroupVersion(apiVersion)
		k := kind
		if gv.Group != "" && gv.Group != "apps" && gv.Group != "batch" {
			k += "." + gv.Group
		}
		if want := validUTF8(k + "/" + name); first != want && !strings.Contains(want, "\n") {
			t.Errorf("mermaid: first line %q, want %q", first, want)
		}
		lines := strings.Split(dot.String(), "\n")
		m := dotLabelLine.FindStringSubmatch(lines[2])
		if m == nil {
			t.Fatalf("dot: node line %q", lines[2])
		}
		unescaped := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\n`, "\n", "&amp;", "&").Replace(m[1])
		label := k + "/" + name
		if name != "" {
			label += "\nns " + name
		}
		want := strings.Map(func(r rune) rune {
			if r != '\n' && unicode.IsControl(r) {
				return unicode.ReplacementChar
			}
			return r
		}, validUTF8(label))
		if unescaped != want {
			t.Errorf("dot: label %q unescapes to %q, want %q", m[1], unescaped, want)
		}
	})
}

// validUTF8 is s as the printers write it: each byte of invalid UTF-8 as
// U+FFFD, as ranging over a string reads it.
func validUTF8(s string) string {
	return strings.Map(func(r rune) rune { return r }, s)
}
