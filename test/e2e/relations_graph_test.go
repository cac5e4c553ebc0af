package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/graphviz"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// The relation graphs (-o dot, -o mermaid) of the fixture cluster: each graph
// command's DOT output is rendered by the real Graphviz (dot -Tsvg must
// succeed; dot -Tjson says what it drew) and its Mermaid output read by
// Mermaid's own parser (testdata/mermaid, run headless under jsdom by node);
// both must draw exactly the objects and relations of the command's JSON
// document read the moment before. The tools are required, as jq is: a
// missing one fails the test (.ci/run installs graphviz and runs npm ci in
// testdata/mermaid).

// graphDrawn is what a graph draws: node labels (lines joined by "\n") and
// edges as "from -> to: label", each end named by its label's first line,
// with " (dashed)" for a dashed or dotted edge. Both are sorted: the order
// is the printer's, which its golden files check.
type graphDrawn struct {
	nodes []string
	edges []string
}

func (g graphDrawn) sorted() graphDrawn {
	return graphDrawn{nodes: slices.Sorted(slices.Values(g.nodes)), edges: slices.Sorted(slices.Values(g.edges))}
}

// graphBuilder builds the graph a JSON document should draw, each object
// once.
type graphBuilder struct {
	labels map[string]bool
	g      graphDrawn
	seen   map[string]bool
}

func newGraphBuilder() *graphBuilder {
	return &graphBuilder{labels: map[string]bool{}, seen: map[string]bool{}}
}

// label is how a graph names an object: Kind/name with the group outside
// the core, apps and batch groups, the namespace, and a note for an object
// that is not there.
func graphLabel(apiVersion, kind, namespace, name, note string) string {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	if gv.Group != "" && gv.Group != "apps" && gv.Group != "batch" {
		kind += "." + gv.Group
	}
	lines := []string{kind + "/" + name}
	if namespace != "" {
		lines = append(lines, "ns "+namespace)
	}
	if note != "" {
		lines = append(lines, note)
	}
	return strings.Join(lines, "\n")
}

func (b *graphBuilder) node(label string) string {
	if !b.labels[label] {
		b.labels[label] = true
		b.g.nodes = append(b.g.nodes, label)
	}
	first, _, _ := strings.Cut(label, "\n")
	return first
}

func (b *graphBuilder) edge(from, to, label string, dashed bool) {
	e := from + " -> " + to + ": " + label
	if dashed {
		e += " (dashed)"
	}
	if !b.seen[e] {
		b.seen[e] = true
		b.g.edges = append(b.g.edges, e)
	}
}

func treeNote(it *treeItem) string {
	switch {
	case it.Missing:
		return "<missing>"
	case it.Unknown:
		return "<unknown>"
	}
	return ""
}

// treeGraph is what a Tree or OwnerTree document draws: owner -> dependent,
// dashed unless the owner is the dependent's controller (owners only: a tree
// does not say).
func treeGraph(doc *treeDoc) graphDrawn {
	b := newGraphBuilder()
	var walk func(it *treeItem, name string)
	walk = func(it *treeItem, name string) {
		if it.Cycle {
			return
		}
		for _, c := range it.Children {
			cn := b.node(graphLabel(c.APIVersion, c.Kind, c.Namespace, c.Name, treeNote(c)))
			b.edge(name, cn, "owns", false)
			walk(c, cn)
		}
		for _, o := range it.Owners {
			on := b.node(graphLabel(o.APIVersion, o.Kind, o.Namespace, o.Name, treeNote(o)))
			b.edge(on, name, "owns", !o.Controller)
			walk(o, on)
		}
	}
	if doc.Root != nil {
		walk(doc.Root, b.node(graphLabel(doc.Root.APIVersion, doc.Root.Kind, doc.Root.Namespace, doc.Root.Name, treeNote(doc.Root))))
	}
	return b.g
}

// usesGraph is what a UsesList draws: user -> used, labelled with the via.
func usesGraph(doc *relationList) graphDrawn {
	b := newGraphBuilder()
	s := doc.Subject
	subject := b.node(graphLabel(s.APIVersion, s.Kind, s.Namespace, s.Name, ""))
	for _, it := range doc.Items {
		note := ""
		if it.Exists != nil && !*it.Exists {
			note = "does not exist"
		}
		n := b.node(graphLabel(it.APIVersion, it.Kind, it.Namespace, it.Name, note))
		label := "uses"
		if len(it.Via) > 0 {
			label += ": " + strings.Join(it.Via, ", ")
		}
		if it.Optional {
			label += " (optional)"
		}
		if doc.Direction == "uses" {
			b.edge(subject, n, label, false)
		} else {
			b.edge(n, subject, label, false)
		}
	}
	return b.g
}

// selectionList is the v1 List selects and selected-by print as JSON.
type selectionList struct {
	Items []struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
	} `json:"items"`
}

// selectionGraph is what selects (subject -> pod) or selected-by (selector
// -> subject) draws.
func selectionGraph(subjectLabel string, list *selectionList, inverse bool) graphDrawn {
	b := newGraphBuilder()
	subject := b.node(subjectLabel)
	for _, it := range list.Items {
		n := b.node(graphLabel(it.APIVersion, it.Kind, it.Metadata.Namespace, it.Metadata.Name, ""))
		if inverse {
			b.edge(n, subject, "selects", false)
		} else {
			b.edge(subject, n, "selects", false)
		}
	}
	return b.g
}

// graphTools are the programs that read the graphs.
type graphTools struct {
	dot, node, mermaidCheck string
}

// needGraphTools finds dot, node and the installed Mermaid parser, failing
// t when one is missing.
func needGraphTools(t *testing.T) graphTools {
	t.Helper()
	var tools graphTools
	var err error
	if tools.dot, err = exec.LookPath("dot"); err != nil {
		t.Fatalf("dot (Graphviz) is required to check -o dot: %v (apt-get install graphviz)", err)
	}
	if tools.node, err = exec.LookPath("node"); err != nil {
		t.Fatalf("node is required to run Mermaid's parser on -o mermaid: %v", err)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "mermaid"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mermaid", "package.json")); err != nil {
		t.Fatalf("Mermaid's parser is not installed (npm ci --prefix test/e2e/testdata/mermaid; .ci/run does it): %v", err)
	}
	tools.mermaidCheck = filepath.Join(dir, "check.mjs")
	return tools
}

// runTool runs a graph tool with stdin and returns stdout, failing t on a
// non-zero exit or anything on stderr.
func runTool(t *testing.T, path string, stdin string, args ...string) string {
	t.Helper()
	res, err := testenv.Run(context.Background(), testenv.Cmd{Path: path, Args: args, Stdin: strings.NewReader(stdin), Timeout: cmdTimeout})
	if err != nil || res.ExitCode != 0 || res.Stderr != "" {
		t.Fatalf("%s %s: %v\n%s\ninput:\n%s", path, strings.Join(args, " "), err, res, stdin)
	}
	return res.Stdout
}

// dotDrawn renders a DOT graph as SVG, which must succeed, and reads what
// Graphviz drew from its JSON output: the text lines of each node and edge
// label, and which are dashed.
func dotDrawn(t *testing.T, tools graphTools, text string) graphDrawn {
	t.Helper()
	if svg := runTool(t, tools.dot, text, "-Tsvg"); !strings.Contains(svg, "<svg") || !strings.Contains(svg, "</svg>") {
		t.Fatalf("dot -Tsvg wrote no SVG:\n%s", svg)
	}
	d, err := graphviz.Draw(tools.dot, text)
	if err != nil {
		t.Fatalf("%v\ninput:\n%s", err, text)
	}
	var g graphDrawn
	for _, o := range d.Nodes {
		if absent := strings.Contains(o.Label, "\n<") || strings.HasSuffix(o.Label, "does not exist"); absent != (o.Style == "dashed") {
			t.Errorf("dot: node %q has style %q", o.Label, o.Style)
		}
		g.nodes = append(g.nodes, o.Label)
	}
	for _, e := range d.Edges {
		from, _, _ := strings.Cut(g.nodes[e.Tail], "\n")
		to, _, _ := strings.Cut(g.nodes[e.Head], "\n")
		s := from + " -> " + to + ": " + e.Label
		if e.Style == "dashed" {
			s += " (dashed)"
		}
		g.edges = append(g.edges, s)
	}
	return g
}

// mermaidResult is one diagram as testdata/mermaid/check.mjs reads it.
type mermaidResult struct {
	Type  string `json:"type"`
	Nodes []struct {
		ID      string   `json:"id"`
		Label   string   `json:"label"`
		Classes []string `json:"classes"`
	} `json:"nodes"`
	Edges []struct {
		From   string `json:"from"`
		To     string `json:"to"`
		Label  string `json:"label"`
		Stroke string `json:"stroke"`
	} `json:"edges"`
}

// mermaidDrawn reads flowcharts with Mermaid's parser, all in one run.
func mermaidDrawn(t *testing.T, tools graphTools, texts ...string) []graphDrawn {
	t.Helper()
	in, err := json.Marshal(texts)
	if err != nil {
		t.Fatal(err)
	}
	var results []mermaidResult
	mustDecode(t, "the Mermaid parser's answer", runTool(t, tools.node, string(in), tools.mermaidCheck), &results)
	var out []graphDrawn
	for _, r := range results {
		if r.Type != "flowchart-v2" {
			t.Errorf("mermaid: diagram type %q, want flowchart-v2", r.Type)
		}
		var g graphDrawn
		labels := map[string]string{}
		for _, n := range r.Nodes {
			labels[n.ID] = n.Label
			if absent := strings.Contains(n.Label, "\n<") || strings.HasSuffix(n.Label, "does not exist"); absent != slices.Contains(n.Classes, "absent") {
				t.Errorf("mermaid: node %q has classes %q", n.Label, n.Classes)
			}
			g.nodes = append(g.nodes, n.Label)
		}
		for _, e := range r.Edges {
			from, _, _ := strings.Cut(labels[e.From], "\n")
			to, _, _ := strings.Cut(labels[e.To], "\n")
			s := from + " -> " + to + ": " + e.Label
			if e.Stroke == "dotted" {
				s += " (dashed)"
			}
			g.edges = append(g.edges, s)
		}
		out = append(out, g)
	}
	if len(out) != len(texts) {
		t.Fatalf("mermaid: %d answers for %d diagrams", len(out), len(texts))
	}
	return out
}

func assertGraph(t *testing.T, what string, got, want graphDrawn) {
	t.Helper()
	got, want = got.sorted(), want.sorted()
	if !slices.Equal(got.nodes, want.nodes) {
		t.Errorf("%s: nodes\n%q\nwant (from the JSON document)\n%q", what, got.nodes, want.nodes)
	}
	if !slices.Equal(got.edges, want.edges) {
		t.Errorf("%s: edges\n%q\nwant (from the JSON document)\n%q", what, got.edges, want.edges)
	}
}

// TestRelationsGraph draws every graph command's answer on the fixture
// cluster in both formats and checks each against the command's JSON
// document: the same objects, the same relations.
func TestRelationsGraph(t *testing.T) {
	tools := needGraphTools(t)
	r := as("")
	shop := fixtures.Shop

	// A pod of Deployment web, found through its tree.
	var web treeDoc
	idxDoc(t, r, &web, "tree", "deployment/web", "-n", shop)
	webPod := ""
	var findPod func(it *treeItem)
	findPod = func(it *treeItem) {
		if it.Kind == "Pod" && webPod == "" {
			webPod = it.Name
		}
		for _, c := range it.Children {
			findPod(c)
		}
	}
	findPod(web.Root)
	if webPod == "" {
		t.Fatalf("deployment/web has no pod in its tree: %s", strings.Join(treeLines(web.Root), "\n"))
	}

	tests := []struct {
		name string
		args []string
		// want reads the command's JSON output into the graph it should draw.
		want func(t *testing.T, jsonOut string) graphDrawn
	}{
		{name: "tree of a Deployment", args: []string{"tree", "deployment/web", "-n", shop}},
		{name: "tree of a StatefulSet", args: []string{"tree", "statefulset/postgres", "-n", shop}},
		{name: "tree of a CronJob", args: []string{"tree", "cronjob/db-backup", "-n", fixtures.Ops}},
		{name: "tree of a Node, every namespace", args: []string{"tree", "node/worker-1"}},
		{name: "owners of a Deployment's pod", args: []string{"owners", "pod/" + webPod, "-n", shop}},
		{name: "owners of a StatefulSet's pod", args: []string{"owners", "pod/postgres-0", "-n", shop}},
		{name: "selects of a Service", args: []string{"selects", "service/web", "-n", shop}, want: selectionWant("Service/web\nns "+shop, false)},
		{name: "selects of a StatefulSet", args: []string{"selects", "statefulset/postgres", "-n", shop}, want: selectionWant("StatefulSet/postgres\nns "+shop, false)},
		{name: "selected-by of a pod", args: []string{"selected-by", "pod/" + webPod, "-n", shop}, want: selectionWant("Pod/"+webPod+"\nns "+shop, true)},
		{name: "selected-by of a StatefulSet's pod", args: []string{"selected-by", "pod/postgres-0", "-n", shop}, want: selectionWant("Pod/postgres-0\nns "+shop, true)},
		{name: "uses of a ConfigMap", args: []string{"uses", "configmap/web-config", "-n", shop}},
		{name: "what a Deployment uses", args: []string{"uses", "deployment/web", "-n", shop}},
		{name: "what a StatefulSet's pod uses", args: []string{"uses", "pod/postgres-0", "-n", shop}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			jsonRes := r.idx(t, append(slices.Clone(tc.args), "-o", "json")...)
			mustSucceed(t, "kubectl-idx "+strings.Join(tc.args, " ")+" -o json", jsonRes)
			var want graphDrawn
			switch {
			case tc.want != nil:
				want = tc.want(t, jsonRes.Stdout)
			case tc.args[0] == "uses":
				var doc relationList
				decodeStrict(t, jsonRes.Stdout, &doc)
				want = usesGraph(&doc)
			default:
				var doc treeDoc
				decodeStrict(t, jsonRes.Stdout, &doc)
				want = treeGraph(&doc)
			}
			if len(want.nodes) < 2 {
				t.Fatalf("the JSON document names %d objects; the fixture should give more:\n%s", len(want.nodes), jsonRes.Stdout)
			}
			var texts []string
			for _, format := range printers.GraphFormats {
				args := append(slices.Clone(tc.args), "-o", format)
				res := r.idx(t, args...)
				mustSucceed(t, "kubectl-idx "+strings.Join(args, " "), res)
				if res.Stderr != jsonRes.Stderr {
					t.Errorf("kubectl-idx %s: stderr\n%s\nwant, as with -o json:\n%s", strings.Join(args, " "), res.Stderr, jsonRes.Stderr)
				}
				texts = append(texts, res.Stdout)
			}
			assertGraph(t, "-o dot", dotDrawn(t, tools, texts[0]), want)
			assertGraph(t, "-o mermaid", mermaidDrawn(t, tools, texts[1])[0], want)
		})
	}

	t.Run("through kubectl and a pipe, as the README shows", func(t *testing.T) {
		t.Parallel()
		res := r.shell(t, "kubectl idx tree deployment/web -n "+shop+" -o dot | dot -Tsvg")
		mustSucceed(t, "kubectl idx tree -o dot | dot -Tsvg", res)
		if !strings.HasPrefix(strings.TrimSpace(res.Stdout), "<?xml") || !strings.Contains(res.Stdout, "Deployment/web") {
			t.Errorf("not an SVG of the tree:\n%s", res.Stdout)
		}
	})
}

// readmeGraphLine matches a line of the documents that draws a graph with kubectl idx.
var readmeGraphLine = regexp.MustCompile(`^kubectl idx \S+ .*-o (dot|mermaid)\b.*$`)

// TestRelationsGraphREADME runs every line of README.md and docs/*.md that draws a graph,
// as written, on make demo's cluster, in a directory of its own: each must succeed and leave
// an SVG, a PNG or a flowchart.
func TestRelationsGraphREADME(t *testing.T) {
	needGraphTools(t)
	var lines []string
	for _, line := range docLines(t) {
		if readmeGraphLine.MatchString(line) {
			lines = append(lines, line)
		}
	}
	if len(lines) < 3 {
		t.Fatalf("the documents have %d lines drawing graphs, want at least 3: %q", len(lines), lines)
	}
	c := demoCluster(t)
	for _, line := range lines {
		t.Run(line, func(t *testing.T) {
			dir := t.TempDir()
			res := c.shell(t, dir, line)
			mustSucceed(t, line, res)
			out := res.Stdout
			if _, file, ok := strings.Cut(line, "> "); ok {
				b, err := os.ReadFile(filepath.Join(dir, strings.TrimSpace(file)))
				if err != nil {
					t.Fatal(err)
				}
				out = string(b)
			}
			switch {
			case strings.HasPrefix(out, "<?xml") && strings.Contains(out, "<svg"):
			case strings.HasPrefix(out, "\x89PNG"):
			case strings.HasPrefix(out, "flowchart TB\n") && strings.Count(out, "\n") > 2:
			default:
				t.Errorf("%s: neither an SVG, a PNG nor a flowchart:\n%.300s", line, out)
			}
		})
	}
}

// selectionWant reads the v1 List of selects or selected-by into the graph
// it should draw around the subject.
func selectionWant(subject string, inverse bool) func(t *testing.T, jsonOut string) graphDrawn {
	return func(t *testing.T, jsonOut string) graphDrawn {
		var list selectionList
		mustDecode(t, "the List", jsonOut, &list)
		return selectionGraph(subject, &list, inverse)
	}
}

// decodeStrict decodes a document refusing fields the README does not
// document.
func decodeStrict(t *testing.T, out string, doc any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(doc); err != nil {
		t.Fatalf("decoding: %v\n%s", err, out)
	}
}

// TestRelationsGraphMermaidNames gives Mermaid's own parser the flowcharts
// of names with every character a Kubernetes name or CRD kind may hold, and
// for safety what neither may (the API server refuses such objects, so the
// printer is called directly): each must parse, and draw the name as it is.
func TestRelationsGraphMermaidNames(t *testing.T) {
	tools := needGraphTools(t)
	names := []struct{ apiVersion, kind, name string }{
		{"apps/v1", "Deployment", "web.v2-canary"},
		{"v1", "Pod", "0-starts-with-a-digit"},
		{"v1", "ConfigMap", strings.Repeat("a.b-c", 50) + "z"},
		{"widgets.sub.example.com/v1beta1", "Widget", "end"},
		{"node.example.io/v1", "subgraph", "graph"},
		{"v1", "Pod", `say "hi"`},
		{"v1", "Pod", `back\slash\`},
		{"v1", "Pod", "[brackets](parens){braces}"},
		{"v1", "Pod", "pipe|pipe"},
		{"v1", "Pod", "<b>bold</b>&amp;<script>x</script>"},
		{"v1", "Pod", "#quot;#35;%%comment"},
		{"v1", "Pod", "`markdown` **x**"},
		{"v1", "Pod", "a;b -->c ---|x| d:::absent"},
		{"v1", "Pod", "ünïcødé-名前-😀"},
		{"v1", "Pod", "line\nbreak"},
		{`we"ird.gr\oup/v1`, `Ki"nd\`, "x"},
	}
	var texts []string
	var want []graphDrawn
	for _, n := range names {
		ns := "ns-" + n.name
		doc := &v1alpha1.Tree{TypeMeta: v1alpha1.TypeMeta{Kind: v1alpha1.TreeKind}, Root: &v1alpha1.TreeItem{
			APIVersion: n.apiVersion, Kind: n.kind, Namespace: ns, Name: n.name,
			Children: []*v1alpha1.TreeItem{{APIVersion: n.apiVersion, Kind: n.kind, Namespace: ns, Name: n.name + "-child", Missing: true}},
		}}
		var out bytes.Buffer
		if err := printers.PrintTreeGraph(&out, doc, printers.FormatMermaid); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, out.String())
		b := newGraphBuilder()
		root := b.node(graphLabel(n.apiVersion, n.kind, ns, n.name, ""))
		b.edge(root, b.node(graphLabel(n.apiVersion, n.kind, ns, n.name+"-child", "<missing>")), "owns", false)
		want = append(want, b.g)
	}
	got := mermaidDrawn(t, tools, texts...)
	for i, n := range names {
		assertGraph(t, fmt.Sprintf("%q", n.name), got[i], want[i])
	}
}
