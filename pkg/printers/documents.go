package printers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// Document is a document a question about one object answers with: the Tree
// of tree and owners, the RelationList of orphans and uses, the Diagnosis of
// why, the History of history and the Blame of blame.
type Document interface {
	*v1alpha1.Tree | *v1alpha1.RelationList | *v1alpha1.Diagnosis | *v1alpha1.History | *v1alpha1.Blame
	runtime.Object
}

// PrintDocuments prints the documents of one context or several (query.Ask's
// answers); answers without one (failed contexts) are passed over. One
// context of a plain run (Context "") prints its document as PrintTree or
// PrintRelationList does, or draws it (-o dot, -o mermaid). Several print one
// table with a CONTEXT column first, names after their context and a slash,
// custom columns after a CONTEXT column, and otherwise a v1 List of the
// documents, each with its "context", and opts.Warnings as the List's
// "warnings". It returns the number of objects listed (a RelationList's
// items; a tree counts as one).
func PrintDocuments[D Document](w io.Writer, answers []query.Answer[D], delegate printers.ResourcePrinter, opts Options) (int, error) {
	var docs []runtime.Object
	n := 0
	for _, a := range answers {
		var none D
		if a.Value == none {
			continue
		}
		switch d := any(a.Value).(type) {
		case *v1alpha1.Tree:
			d.Context = a.Context
			n++
		case *v1alpha1.RelationList:
			d.Context = a.Context
			n += len(d.Items)
		case *v1alpha1.Diagnosis:
			d.Context = a.Context
			n += len(d.Causes)
		case *v1alpha1.History:
			d.Context = a.Context
			n++
		case *v1alpha1.Blame:
			d.Context = a.Context
			n++
		}
		docs = append(docs, a.Value)
	}
	if len(docs) == 0 {
		return 0, nil
	}
	if len(answers) > 0 && answers[0].Context == "" {
		return n, printDocument(w, docs[0], delegate, opts)
	}
	return n, printContextDocuments(w, docs, delegate, opts)
}

// printDocument prints one context's document.
func printDocument(w io.Writer, doc runtime.Object, delegate printers.ResourcePrinter, opts Options) error {
	switch d := doc.(type) {
	case *v1alpha1.Tree:
		if IsGraph(opts.Format) {
			return PrintTreeGraph(w, d, opts.Format)
		}
		return PrintTree(w, d, delegate, opts)
	case *v1alpha1.RelationList:
		if IsGraph(opts.Format) {
			return PrintUsesGraph(w, d, opts.Format)
		}
		return PrintRelationList(w, d, delegate, opts)
	case *v1alpha1.Diagnosis:
		if IsGraph(opts.Format) {
			return fmt.Errorf("-o %s draws relation graphs: use it with kubectl idx tree, owners, selects, selected-by or uses", opts.Format)
		}
		return PrintDiagnosis(w, d, delegate, opts)
	case *v1alpha1.History:
		return PrintHistory(w, d, delegate, opts)
	case *v1alpha1.Blame:
		return PrintBlame(w, d, delegate, opts)
	}
	return fmt.Errorf("printing %T: not a document", doc)
}

// documentTable is a document's table for human output.
func documentTable(doc runtime.Object, opts Options) *metav1.Table {
	switch d := doc.(type) {
	case *v1alpha1.Tree:
		return treeTable(d, opts)
	case *v1alpha1.RelationList:
		return relationTable(d, opts)
	case *v1alpha1.Diagnosis:
		return diagnosisTable(d, opts)
	case *v1alpha1.History:
		return historyTable(d)
	case *v1alpha1.Blame:
		if t, err := blameTable(d); err == nil {
			return t
		}
	}
	return &metav1.Table{}
}

// contextOf is a document's context.
func contextOf(doc runtime.Object) string {
	switch d := doc.(type) {
	case *v1alpha1.Tree:
		return d.Context
	case *v1alpha1.RelationList:
		return d.Context
	case *v1alpha1.History:
		return d.Context
	case *v1alpha1.Blame:
		return d.Context
	case *v1alpha1.Diagnosis:
		return d.Context
	}
	return ""
}

// documentForms are how a document prints besides as itself, which is how
// every other format prints it, as kubectl prints any object.
type documentForms struct {
	// table is the document's human output.
	table func() (*metav1.Table, error)
	// names are its -o name lines.
	names func() []string
	// rows prints its custom columns; nil prints the document itself.
	rows func() error
}

// print writes doc in the form opts.Format asks for.
func (f documentForms) print(w io.Writer, doc runtime.Object, delegate printers.ResourcePrinter, opts Options) error {
	switch {
	case IsHuman(opts.Format):
		table, err := f.table()
		if err != nil {
			return err
		}
		return printOwnTable(w, table, opts.NoHeaders, opts.Format == "wide")
	case opts.Format == "name":
		for _, name := range f.names() {
			if _, err := fmt.Fprintln(w, name); err != nil {
				return err
			}
		}
		return nil
	case f.rows != nil && strings.HasPrefix(opts.Format, "custom-columns"):
		return f.rows()
	}
	return delegate.PrintObj(doc, w)
}

// objectNames returns the kind/name of the object of each of items, as
// object gives its apiVersion, kind and name, each once, in order.
func objectNames[T any](items []T, object func(*T) (apiVersion, kind, name string)) []string {
	names := make([]string, len(items))
	for i := range items {
		names[i] = objectName(object(&items[i]))
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(names, func(name string) bool {
		if seen[name] {
			return true
		}
		seen[name] = true
		return false
	})
}

// objectName is an object as -o name prints it: kind.group/name.
func objectName(apiVersion, kind, name string) string {
	kind = strings.ToLower(kind)
	if gv, _ := schema.ParseGroupVersion(apiVersion); gv.Group != "" {
		kind += "." + gv.Group
	}
	return kind + "/" + name
}

// printItems prints a document's items with custom columns, which print a
// row per item of a list and find them through an Items field of objects:
// the items are no objects of their own, so they are handed over as a list
// of unstructured items. what names an item in an error.
func printItems[T any](w io.Writer, apiVersion, kind string, items []T, what func(it *T, i int) string, delegate printers.ResourcePrinter) error {
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	for i := range items {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&items[i])
		if err != nil {
			return fmt.Errorf("converting %s: %w", what(&items[i], i), err)
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: m})
	}
	return delegate.PrintObj(list, w)
}

// printContextDocuments prints the documents of several contexts. Graphs
// draw one cluster: they are an error here.
func printContextDocuments(w io.Writer, docs []runtime.Object, delegate printers.ResourcePrinter, opts Options) error {
	switch {
	case IsGraph(opts.Format):
		return fmt.Errorf("-o %s draws the graph of one cluster: name one context with --context", opts.Format)
	case IsHuman(opts.Format):
		names := make([]string, len(docs))
		tables := make([]*metav1.Table, len(docs))
		for i, d := range docs {
			names[i], tables[i] = contextOf(d), documentTable(d, opts)
		}
		table := ContextTable(names, tables, false)
		if len(table.Rows) == 0 {
			return nil
		}
		return printOwnTable(w, table, opts.NoHeaders, opts.Format == "wide")
	case opts.Format == "name", strings.HasPrefix(opts.Format, "custom-columns"):
		return printContextLines(w, docs, delegate, opts)
	}
	// A v1 List of the documents, as kubectl prints a List of objects of
	// several kinds: unstructured, its fields in name order.
	list := unstructuredList(opts.Warnings)
	for _, d := range docs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
		if err != nil {
			return fmt.Errorf("converting the %s document: %w", contextOf(d), err)
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: u})
	}
	return delegate.PrintObj(list, w)
}

// printContextLines prints each document's lines (-o name, custom columns)
// after its context: "ctx/kind/name", or a CONTEXT column.
func printContextLines(w io.Writer, docs []runtime.Object, delegate printers.ResourcePrinter, opts Options) error {
	name := opts.Format == "name"
	width := len("CONTEXT")
	for _, d := range docs {
		width = max(width, len(contextOf(d)))
	}
	header := false
	bw := bufio.NewWriter(w)
	for _, d := range docs {
		var buf bytes.Buffer
		if err := printDocument(&buf, d, delegate, opts); err != nil {
			return err
		}
		if buf.Len() == 0 {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if !name && !opts.NoHeaders {
			// Each document's columns come with a header: keep the first.
			if !header {
				fmt.Fprintf(bw, "%-*s   %s\n", width, "CONTEXT", lines[0])
				header = true
			}
			lines = lines[1:]
		}
		for _, line := range lines {
			if name {
				fmt.Fprintf(bw, "%s/%s\n", contextOf(d), line)
			} else {
				fmt.Fprintf(bw, "%-*s   %s\n", width, contextOf(d), line)
			}
		}
	}
	return bw.Flush()
}
