package printers

import (
	"fmt"
	"io"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// The -o values of relation graphs. kubectl's printer flags know neither:
// the commands that draw graphs check for them before asking PrintFlags.
const (
	// FormatDOT is a Graphviz digraph (`dot -Tsvg`).
	FormatDOT = "dot"
	// FormatMermaid is a Mermaid flowchart.
	FormatMermaid = "mermaid"
)

// GraphFormats are the -o values of relation graphs, sorted.
var GraphFormats = []string{FormatDOT, FormatMermaid}

// IsGraph reports whether format selects a relation graph.
func IsGraph(format string) bool { return format == FormatDOT || format == FormatMermaid }

// Edge labels. A uses edge is labelled "uses: " and where the pod spec refers
// to the object ("uses: volume config").
const (
	edgeOwns    = "owns"
	edgeSelects = "selects"
	edgeUses    = "uses"
)

// graphNode is one object of a relation graph. Objects shown several times by
// a document (a ConfigMap with two owners in a tree, the object a cycle leads
// back to) are one node.
type graphNode struct {
	kind, namespace, name string
	// note is a line under the name for an object that is not there:
	// "<missing>", "<unknown>", "does not exist". Such nodes are dashed.
	note string
	// subject is the object the command was asked about.
	subject bool
}

// lines are the node's label, one line each.
func (n graphNode) lines() []string {
	lines := []string{n.kind + "/" + n.name}
	if n.namespace != "" {
		lines = append(lines, "ns "+n.namespace)
	}
	if n.note != "" {
		lines = append(lines, n.note)
	}
	return lines
}

// graphEdge is a relation from one node to another; dashed marks an
// ownerReference that is not the controller reference.
type graphEdge struct {
	from, to int
	label    string
	dashed   bool
}

// graph is a relation graph with nodes in the order the document first names
// them, so the same document always prints the same text.
type graph struct {
	// name is the graph's DOT ID: the document's kind.
	name  string
	nodes []graphNode
	byKey map[string]int
	edges []graphEdge
	seen  map[graphEdge]bool
}

func newGraph(name string) *graph {
	return &graph{name: name, byKey: map[string]int{}, seen: map[graphEdge]bool{}}
}

// groupKind is the Kind with the group for kinds outside the core, apps and
// batch groups, as tree lines name them, so same-named kinds stay apart.
func groupKind(apiVersion, kind string) string {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	if gv.Group != "" && gv.Group != "apps" && gv.Group != "batch" {
		return kind + "." + gv.Group
	}
	return kind
}

// node returns the index of the object, adding it on first sight. The key
// leaves the version out: one object read at two versions is one node.
func (g *graph) node(apiVersion, kind, namespace, name, note string) int {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	// NUL cannot occur in names, so the parts cannot run into each other.
	key := strings.Join([]string{gv.Group, kind, namespace, name}, "\x00")
	if i, ok := g.byKey[key]; ok {
		if g.nodes[i].note == "" {
			g.nodes[i].note = note
		}
		return i
	}
	g.byKey[key] = len(g.nodes)
	g.nodes = append(g.nodes, graphNode{kind: groupKind(apiVersion, kind), namespace: namespace, name: name, note: note})
	return len(g.nodes) - 1
}

// edge adds an edge once: a subtree a document repeats adds nothing new.
func (g *graph) edge(from, to int, label string, dashed bool) {
	e := graphEdge{from: from, to: to, label: label, dashed: dashed}
	if g.seen[e] {
		return
	}
	g.seen[e] = true
	g.edges = append(g.edges, e)
}

// treeNote is how a tree item that is not there is marked.
func treeNote(t *v1alpha1.TreeItem) string {
	switch {
	case t.Missing:
		return "<missing>"
	case t.Unknown:
		return "<unknown>"
	}
	return ""
}

func (g *graph) treeNode(t *v1alpha1.TreeItem) int {
	return g.node(t.APIVersion, t.Kind, t.Namespace, t.Name, treeNote(t))
}

// addTree adds t and everything below it: children are owned by t (tree),
// owners own t (owners). A cycle item is an edge back to a node already
// there, and ends the branch.
func (g *graph) addTree(t *v1alpha1.TreeItem, at int, depth int) {
	// A document deeper than any owner chain is malformed; stop rather than
	// recurse without end.
	if t == nil || t.Cycle || depth > maxGraphDepth {
		return
	}
	for _, c := range t.Children {
		if c == nil {
			continue
		}
		ci := g.treeNode(c)
		g.edge(at, ci, edgeOwns, false)
		g.addTree(c, ci, depth+1)
	}
	for _, o := range t.Owners {
		if o == nil {
			continue
		}
		oi := g.treeNode(o)
		g.edge(oi, at, edgeOwns, !o.Controller)
		g.addTree(o, oi, depth+1)
	}
}

// maxGraphDepth bounds the walk of a document: owner chains are a handful of
// levels deep, and the engine ends cycles itself.
const maxGraphDepth = 1000

// PrintTreeGraph writes a Tree (tree: owner -> dependent) or OwnerTree
// (owners: each owner -> what it owns) as a graph in format (FormatDOT or
// FormatMermaid). Every edge is labelled "owns"; one from an owner that is
// not its dependent's controller is dashed, as are owners that are missing
// or cannot be read.
func PrintTreeGraph(w io.Writer, doc *v1alpha1.Tree, format string) error {
	if doc == nil {
		doc = &v1alpha1.Tree{}
	}
	g := newGraph(graphName(doc.Kind, v1alpha1.TreeKind))
	if doc.Root != nil {
		root := g.treeNode(doc.Root)
		g.nodes[root].subject = true
		g.addTree(doc.Root, root, 0)
	}
	return g.print(w, format)
}

// PrintUsesGraph writes a UsesList as a graph in format: an edge from each
// user to the object it uses, labelled with where the pod spec refers to it
// ("uses: volume config, env app/PASSWORD"). An object that does not exist
// is dashed and noted.
func PrintUsesGraph(w io.Writer, doc *v1alpha1.RelationList, format string) error {
	if doc == nil {
		doc = &v1alpha1.RelationList{}
	}
	g := newGraph(graphName(doc.Kind, v1alpha1.UsesListKind))
	subject := -1
	if s := doc.Subject; s != nil {
		subject = g.node(s.APIVersion, s.Kind, s.Namespace, s.Name, "")
		g.nodes[subject].subject = true
	}
	for _, it := range doc.Items {
		note := ""
		if it.Exists != nil && !*it.Exists {
			note = "does not exist"
		}
		i := g.node(it.APIVersion, it.Kind, it.Namespace, it.Name, note)
		if subject < 0 {
			continue
		}
		label := edgeUses
		if len(it.Via) > 0 {
			label += ": " + strings.Join(it.Via, ", ")
		}
		if it.Optional {
			label += " (optional)"
		}
		if doc.Direction == "uses" {
			g.edge(subject, i, label, false)
		} else {
			g.edge(i, subject, label, false)
		}
	}
	return g.print(w, format)
}

// PrintSelectionGraph writes the answer of selects (inverse false: subject
// -> each pod it selects) or selected-by (inverse true: each selecting
// object -> subject) as a graph in format, every edge labelled "selects".
// members are the objects the engine returned, read-only.
func PrintSelectionGraph(w io.Writer, subject v1alpha1.RelationItem, members []v1alpha1.Members, inverse bool, format string) error {
	name := "Selects"
	if inverse {
		name = "SelectedBy"
	}
	g := newGraph(name)
	s := g.node(subject.APIVersion, subject.Kind, subject.Namespace, subject.Name, "")
	g.nodes[s].subject = true
	for _, m := range members {
		for _, obj := range m.Objects {
			if obj == nil {
				continue
			}
			acc, err := meta.Accessor(obj)
			if err != nil {
				return fmt.Errorf("drawing a %s: %T has no object metadata", m.GVK.Kind, obj)
			}
			i := g.node(m.GVK.GroupVersion().String(), m.GVK.Kind, acc.GetNamespace(), acc.GetName(), "")
			if inverse {
				g.edge(i, s, edgeSelects, false)
			} else {
				g.edge(s, i, edgeSelects, false)
			}
		}
	}
	return g.print(w, format)
}

// graphName is the document's kind, or def for a document without one.
func graphName(kind, def string) string {
	if kind == "" {
		return def
	}
	return kind
}

func (g *graph) print(w io.Writer, format string) error {
	var text string
	switch format {
	case FormatDOT:
		text = g.dot()
	case FormatMermaid:
		text = g.mermaid()
	default:
		return fmt.Errorf("unknown graph format %q, allowed formats are: %s", format, strings.Join(GraphFormats, ","))
	}
	_, err := io.WriteString(w, text)
	return err
}

// dot renders the graph in Graphviz's DOT language. Node IDs are n0, n1, ...;
// every label is a quoted string (dotQuote), so no name can end a statement
// or turn into HTML.
func (g *graph) dot() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(g.name))
	b.WriteString("    node [shape=box];\n")
	for i, n := range g.nodes {
		fmt.Fprintf(&b, "    n%d [label=%s", i, dotLabel(n.lines()))
		if n.note != "" {
			b.WriteString(", style=dashed")
		}
		if n.subject {
			b.WriteString(", penwidth=2")
		}
		b.WriteString("];\n")
	}
	for _, e := range g.edges {
		fmt.Fprintf(&b, "    n%d -> n%d [label=%s", e.from, e.to, dotQuote(e.label))
		if e.dashed {
			b.WriteString(", style=dashed")
		}
		b.WriteString("];\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// dotLabel joins lines with DOT's centered line break, \n.
func dotLabel(lines []string) string {
	quoted := make([]string, len(lines))
	for i, l := range lines {
		q := dotQuote(l)
		quoted[i] = q[1 : len(q)-1]
	}
	return `"` + strings.Join(quoted, `\n`) + `"`
}

// dotQuote quotes s as a DOT string. Inside quotes DOT itself only reads \"
// but labels are escString, where a backslash starts an escape (\n, \l,
// \N for the node's name): a backslash is doubled so it prints as itself.
// Graphviz also reads HTML entities in labels (&amp; prints as &), so & is
// written &amp;. A line break becomes \n, other control characters U+FFFD,
// which Graphviz would otherwise pass into the SVG where XML forbids them.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '&':
			b.WriteString("&amp;")
		case r == '\n':
			b.WriteString(`\n`)
		case unicode.IsControl(r):
			b.WriteRune(unicode.ReplacementChar)
		default:
			// Invalid UTF-8 ranges as U+FFFD, so the output is valid UTF-8.
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mermaid renders the graph as a Mermaid flowchart. Node IDs are n0, n1,
// ... (a name such as "end" or "a-b" would be read as syntax); labels are
// quoted strings whose text is escaped by mermaidText, lines joined by <br/>.
// Dashed nodes use the class "absent", the subject the class "subject"; a
// non-controller ownerReference is a dotted edge.
func (g *graph) mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TB\n")
	var absent, subject []string
	for i, n := range g.nodes {
		lines := n.lines()
		for j, l := range lines {
			lines[j] = mermaidText(l)
		}
		fmt.Fprintf(&b, "    n%d[\"%s\"]\n", i, strings.Join(lines, "<br/>"))
		if n.note != "" {
			absent = append(absent, fmt.Sprintf("n%d", i))
		}
		if n.subject {
			subject = append(subject, fmt.Sprintf("n%d", i))
		}
	}
	for _, e := range g.edges {
		arrow := "-->"
		if e.dashed {
			arrow = "-.->"
		}
		fmt.Fprintf(&b, "    n%d %s|\"%s\"| n%d\n", e.from, arrow, mermaidText(e.label), e.to)
	}
	if len(subject) > 0 {
		b.WriteString("    classDef subject stroke-width:3px\n")
		fmt.Fprintf(&b, "    class %s subject\n", strings.Join(subject, ","))
	}
	if len(absent) > 0 {
		b.WriteString("    classDef absent stroke-dasharray:5 5\n")
		fmt.Fprintf(&b, "    class %s absent\n", strings.Join(absent, ","))
	}
	return b.String()
}

// mermaidEntities are the named entity codes mermaidText writes.
var mermaidEntities = map[rune]string{'"': "#quot;", '<': "#lt;", '>': "#gt;", '&': "#amp;"}

// mermaidText escapes s for a quoted Mermaid label. Mermaid reads #name; and
// #123; in labels as entity codes and renders labels as HTML, so everything
// but letters, digits, spaces and the punctuation of Kubernetes names and via
// texts (. - _ / : , = + and parentheses) is written as an entity code: the
// double quote, which would end the string, as #quot; (as the Mermaid docs
// write it), < > & as #lt; #gt; #amp;, anything else as a decimal code: # as
// #35;, a backtick (which would start a markdown string) as #96;.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case mermaidEntities[r] != "":
			b.WriteString(mermaidEntities[r])
		case r < unicode.MaxASCII && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" .-_/:,=+()", r)):
			b.WriteRune(r)
		case r > unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "#%d;", r)
		}
	}
	return b.String()
}
