package printers

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// next returns the item's branches in the document's direction.
func next(t *v1alpha1.TreeItem) []*v1alpha1.TreeItem {
	if len(t.Owners) > 0 {
		return t.Owners
	}
	return t.Children
}

// label is how a tree line names the object: Kind/name (kindLabel).
func label(t *v1alpha1.TreeItem) string { return kindLabel(t.APIVersion, t.Kind) + "/" + t.Name }

// PrintTree writes a tree document: an indented table for human output, one
// name per line for -o name (each object once), a row per node for custom
// columns, the document otherwise.
func PrintTree(w io.Writer, doc *v1alpha1.Tree, delegate printers.ResourcePrinter, opts Options) error {
	switch {
	case IsHuman(opts.Format):
		return printTreeTable(w, doc, opts)
	case opts.Format == "name":
		seen := map[string]bool{}
		var err error
		walkTree(doc.Root, "", true, true, func(t *v1alpha1.TreeItem, _ string) {
			if err != nil || t.Missing || t.Unknown || seen[t.UID+label(t)] {
				return
			}
			seen[t.UID+label(t)] = true
			_, err = fmt.Fprintln(w, objectName(t.APIVersion, t.Kind, t.Name))
		})
		return err
	case strings.HasPrefix(opts.Format, "custom-columns"):
		// A row per node, in the table's order, each the node's own fields
		// (.kind, .name, .ready, ...) without its branches. Printed whole,
		// the document is one object, and one row of <none>.
		var nodes []v1alpha1.TreeItem
		walkTree(doc.Root, "", true, true, func(t *v1alpha1.TreeItem, _ string) {
			node := *t
			node.Children, node.Owners = nil, nil
			nodes = append(nodes, node)
		})
		return printItems(w, doc.APIVersion, doc.Kind, nodes, func(t *v1alpha1.TreeItem, _ int) string { return label(t) }, delegate)
	}
	// An API object, printed as kubectl prints any.
	return delegate.PrintObj(doc, w)
}

// walkTree visits t and its branches depth first, passing the tree-drawing
// prefix of each line.
func walkTree(t *v1alpha1.TreeItem, indent string, root, last bool, visit func(t *v1alpha1.TreeItem, prefix string)) {
	if t == nil {
		return
	}
	prefix := ""
	if !root {
		if last {
			prefix = indent + "└─"
		} else {
			prefix = indent + "├─"
		}
	}
	visit(t, prefix)
	childIndent := indent
	if !root {
		if last {
			childIndent += "  "
		} else {
			childIndent += "│ "
		}
	}
	branches := next(t)
	for i, c := range branches {
		walkTree(c, childIndent, false, i == len(branches)-1, visit)
	}
}

var treeColumns = []metav1.TableColumnDefinition{
	{Name: "Namespace", Type: "string"},
	{Name: "Name", Type: "string"},
	{Name: "Ready", Type: "string"},
	{Name: "Status", Type: "string"},
	{Name: "Age", Type: "string"},
	{Name: "UID", Type: "string", Priority: 1},
}

func printTreeTable(w io.Writer, doc *v1alpha1.Tree, opts Options) error {
	var buf bytes.Buffer
	if err := printOwnTable(&buf, treeTable(doc, opts), opts.NoHeaders, opts.Format == "wide"); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// treeTable is the indented table of a tree document.
func treeTable(doc *v1alpha1.Tree, opts Options) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: treeColumns}
	walkTree(doc.Root, "", true, true, func(t *v1alpha1.TreeItem, prefix string) {
		age := ""
		if t.CreationTimestamp != nil {
			age = ageSince(*t.CreationTimestamp, opts.Now)
		}
		status := t.Status
		switch {
		case t.Missing:
			status = "<missing>"
		case t.Unknown:
			status = "<unknown>"
		case t.Cycle:
			status = "<cycle>"
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{t.Namespace, prefix + label(t), t.Ready, status, age, t.UID}})
	})
	return table
}
