package printers

import (
	"bytes"
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
	switch {
	case IsHuman(opts.Format):
		return printRelationTable(w, doc, opts)
	case opts.Format == "name":
		for _, it := range doc.Items {
			if _, err := fmt.Fprintln(w, objectName(it.APIVersion, it.Kind, it.Name)); err != nil {
				return err
			}
		}
		return nil
	case strings.HasPrefix(opts.Format, "custom-columns"):
		return printItems(w, doc.APIVersion, doc.Kind, doc.Items, func(it *v1alpha1.RelationItem, _ int) string { return it.Kind + "/" + it.Name }, delegate)
	}
	// An API object, printed as kubectl prints any.
	return delegate.PrintObj(doc, w)
}

func printRelationTable(w io.Writer, doc *v1alpha1.RelationList, opts Options) error {
	table := relationTable(doc, opts)
	if len(table.Rows) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := printOwnTable(&buf, table, opts.NoHeaders, opts.Format == "wide"); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
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
