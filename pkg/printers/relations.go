package printers

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// kindLabel is the item's Kind, with the group for kinds outside the core,
// apps and batch groups.
func kindLabel(it v1alpha1.RelationItem) string {
	gv, _ := schema.ParseGroupVersion(it.APIVersion)
	if gv.Group != "" && gv.Group != "apps" && gv.Group != "batch" {
		return it.Kind + "." + gv.Group
	}
	return it.Kind
}

// PrintRelationList writes doc: a table for human output, kind/name lines for
// -o name, the document otherwise.
func PrintRelationList(w io.Writer, doc *v1alpha1.RelationList, delegate printers.ResourcePrinter, opts Options) error {
	switch {
	case IsHuman(opts.Format):
		return printRelationTable(w, doc, opts)
	case opts.Format == "name":
		for _, it := range doc.Items {
			gv, _ := schema.ParseGroupVersion(it.APIVersion)
			kind := strings.ToLower(it.Kind)
			if gv.Group != "" {
				kind += "." + gv.Group
			}
			if _, err := fmt.Fprintf(w, "%s/%s\n", kind, it.Name); err != nil {
				return err
			}
		}
		return nil
	}
	if strings.HasPrefix(opts.Format, "custom-columns") {
		// custom-columns prints a row per item of a list, which it finds
		// through an Items field of objects; the document's items are no
		// objects of their own, so they are handed over as a list of
		// unstructured items.
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": doc.APIVersion, "kind": doc.Kind}}
		for i := range doc.Items {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&doc.Items[i])
			if err != nil {
				return fmt.Errorf("converting %s/%s: %w", doc.Items[i].Kind, doc.Items[i].Name, err)
			}
			list.Items = append(list.Items, unstructured.Unstructured{Object: m})
		}
		return delegate.PrintObj(list, w)
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
		cells := []any{it.Namespace, kindLabel(it), it.Name}
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
