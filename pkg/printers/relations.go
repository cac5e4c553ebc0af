package printers

import (
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// kindLabel is how a table names a kind: Kind, with the group for kinds
// outside the core, apps and batch groups, so that same-named kinds stay
// apart.
func kindLabel(apiVersion, kind string) string {
	gv, _ := schema.ParseGroupVersion(apiVersion)
	if gv.Group != "" && gv.Group != "apps" && gv.Group != "batch" {
		return kind + "." + gv.Group
	}
	return kind
}

// PrintRelationList writes doc: a table for human output, kind/name lines for
// -o name, the document otherwise.
func PrintRelationList(w io.Writer, doc *v1alpha1.RelationList, delegate printers.ResourcePrinter, opts Options) error {
	return documentForms{
		table: func() (*metav1.Table, error) { return relationTable(doc, opts), nil },
		names: func() []string {
			names := make([]string, len(doc.Items))
			for i, it := range doc.Items {
				names[i] = objectName(it.APIVersion, it.Kind, it.Name)
			}
			return names
		},
		rows: func() error {
			return printItems(w, doc.APIVersion, doc.Kind, doc.Items, func(it *v1alpha1.RelationItem, _ int) string { return it.Kind + "/" + it.Name }, delegate)
		},
	}.print(w, doc, delegate, opts)
}

// relationTable is the table of a relation list.
func relationTable(doc *v1alpha1.RelationList, opts Options) *metav1.Table {
	table := &metav1.Table{}
	col := func(name string, priority int32) {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: name, Type: "string", Priority: priority})
	}
	col("Namespace", 0)
	col("Kind", 0)
	col("Name", 0)
	switch doc.Kind {
	case v1alpha1.OrphanListKind:
		col("Owner", 0)
		col("Reason", 0)
		col("Age", 0)
	default:
		col("Via", 0)
		if doc.Direction == "uses" {
			col("Exists", 0)
		}
	}
	for _, it := range doc.Items {
		cells := []any{it.Namespace, kindLabel(it.APIVersion, it.Kind), it.Name}
		switch doc.Kind {
		case v1alpha1.OrphanListKind:
			var owners []string
			reason := "OwnerNotFound"
			for _, r := range it.MissingOwners {
				owners = append(owners, r.Kind+"/"+r.Name)
			}
			for _, r := range it.OrphaningOwners {
				owners = append(owners, r.Kind+"/"+r.Name)
			}
			if len(it.MissingOwners) == 0 {
				reason = "OwnerOrphaning"
			}
			age := ""
			if it.CreationTimestamp != nil {
				age = ageSince(*it.CreationTimestamp, opts.Now)
			}
			cells = append(cells, strings.Join(owners, ","), reason, age)
		default:
			cells = append(cells, strings.Join(it.Via, ", "))
			if doc.Direction == "uses" {
				exists := "<unknown>"
				if it.Exists != nil {
					exists = fmt.Sprint(*it.Exists)
				}
				cells = append(cells, exists)
			}
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: cells})
	}
	return table
}

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
	return documentForms{
		table: func() (*metav1.Table, error) { return treeTable(doc, opts), nil },
		names: func() []string {
			var names []string
			seen := map[string]bool{}
			walkTree(doc.Root, "", true, true, func(t *v1alpha1.TreeItem, _ string) {
				if t.Missing || t.Unknown || seen[t.UID+label(t)] {
					return
				}
				seen[t.UID+label(t)] = true
				names = append(names, objectName(t.APIVersion, t.Kind, t.Name))
			})
			return names
		},
		rows: func() error {
			// A row per node, in the table's order, each the node's own
			// fields (.kind, .name, .ready, ...) without its branches.
			// Printed whole, the document is one object, and one row of
			// <none>.
			var nodes []v1alpha1.TreeItem
			walkTree(doc.Root, "", true, true, func(t *v1alpha1.TreeItem, _ string) {
				node := *t
				node.Children, node.Owners = nil, nil
				nodes = append(nodes, node)
			})
			return printItems(w, doc.APIVersion, doc.Kind, nodes, func(t *v1alpha1.TreeItem, _ int) string { return label(t) }, delegate)
		},
	}.print(w, doc, delegate, opts)
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
