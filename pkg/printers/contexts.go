package printers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// ContextInfo is one context of an answer over several: its name, in the
// order asked, what its answer may be missing and, when it failed, why.
type ContextInfo struct {
	Name     string
	Warnings []string
	Error    string
}

// contextColumn is the first column of every table over several contexts.
var contextColumn = metav1.TableColumnDefinition{Name: "Context", Type: "string", Description: "The kubeconfig context the object was read from."}

// namespaceColumn is the NAMESPACE column a table over several contexts
// prints itself, after CONTEXT (kubectl's table printer would put it first).
var namespaceColumn = metav1.TableColumnDefinition{Name: "Namespace", Type: "string"}

// printContexts prints groups of several contexts (each Group's Context set):
// tables with a CONTEXT column first, one table per kind with the rows of
// every context; names prefixed with their context; -o json and -o yaml a v1
// List of one v1 List per context, each with a "context" field; jsonpath and
// templates over the same document.
func printContexts(w io.Writer, groups []Group, delegate printers.ResourcePrinter, opts Options) (int, error) {
	switch {
	case IsHuman(opts.Format):
		// One table per kind, sorted as a whole.
		return printContextTables(w, groups, opts)
	}
	if opts.SortBy != "" {
		// Each context's List sorted as kubectl sorts one.
		sorted, err := sortContextGroups(groups, opts)
		if err != nil {
			return 0, err
		}
		groups, opts.SortBy = sorted, ""
	}
	switch {
	case opts.Format == "name":
		return printContextNames(w, groups, delegate)
	case opts.Format == "json":
		return total(groups), writeContextListJSON(w, groups, opts)
	case opts.Format == "yaml":
		return total(groups), writeContextListYAML(w, groups, opts)
	case strings.HasPrefix(opts.Format, "custom-columns"):
		return printContextCustomColumns(w, groups, delegate, opts)
	}
	doc, err := contextListObject(groups, opts)
	if err != nil {
		return 0, err
	}
	return total(groups), delegate.PrintObj(doc, w)
}

// ContextTable merges the tables of one kind read from several contexts into
// one: CONTEXT first, NAMESPACE next when withNamespace, then the union of
// their columns in the order first seen (a cell a context's server has no
// column for is empty). tables[i] holds the rows of contexts[i].
func ContextTable(contexts []string, tables []*metav1.Table, withNamespace bool) *metav1.Table {
	out := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{contextColumn}}
	if withNamespace {
		out.ColumnDefinitions = append(out.ColumnDefinitions, namespaceColumn)
	}
	index := map[string]int{}
	for _, t := range tables {
		for _, c := range t.ColumnDefinitions {
			if _, ok := index[c.Name]; !ok {
				index[c.Name] = len(out.ColumnDefinitions)
				out.ColumnDefinitions = append(out.ColumnDefinitions, c)
			}
		}
	}
	for i, t := range tables {
		for _, row := range t.Rows {
			cells := make([]any, len(out.ColumnDefinitions))
			for j := range cells {
				cells[j] = ""
			}
			cells[0] = contexts[i]
			if withNamespace {
				if m, err := meta.Accessor(row.Object.Object); err == nil {
					cells[1] = m.GetNamespace()
				}
			}
			for j, c := range t.ColumnDefinitions {
				if j < len(row.Cells) {
					cells[index[c.Name]] = row.Cells[j]
				}
			}
			out.Rows = append(out.Rows, metav1.TableRow{Cells: cells, Object: row.Object})
		}
	}
	return out
}

// kindGroups returns groups gathered by kind, kinds in the order first seen,
// each kind's groups in the order given (the contexts' order).
func kindGroups(groups []Group) ([]schema.GroupVersionKind, map[schema.GroupVersionKind][]Group) {
	var order []schema.GroupVersionKind
	byKind := map[schema.GroupVersionKind][]Group{}
	for _, g := range groups {
		if _, ok := byKind[g.GVK]; !ok {
			order = append(order, g.GVK)
		}
		byKind[g.GVK] = append(byKind[g.GVK], g)
	}
	return order, byKind
}

// printContextTables prints one table per kind with the rows of every
// context, CONTEXT first.
func printContextTables(w io.Writer, groups []Group, opts Options) (int, error) {
	order, byKind := kindGroups(groups)
	nonEmpty := 0
	for _, gvk := range order {
		if total(byKind[gvk]) > 0 {
			nonEmpty++
		}
	}
	printed := 0
	for _, gvk := range order {
		gs := byKind[gvk]
		n := total(gs)
		if n == 0 {
			continue
		}
		table, err := contextTableOf(gs, opts)
		if err != nil {
			return printed, err
		}
		p := printers.NewTablePrinter(printers.PrintOptions{
			Kind:         gvk.GroupKind(),
			WithKind:     opts.ShowKind || nonEmpty > 1,
			NoHeaders:    opts.NoHeaders,
			Wide:         opts.Format == "wide",
			ColumnLabels: opts.ColumnLabels,
			ShowLabels:   opts.ShowLabels,
		})
		if printed > 0 && !opts.NoHeaders {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return printed, err
			}
		}
		if err := p.PrintObj(table, w); err != nil {
			return printed, err
		}
		printed += n
	}
	return printed, nil
}

// contextTableOf builds the table of one kind's groups, one per context, with
// CONTEXT first: each context's rows from its own server's table.
func contextTableOf(gs []Group, opts Options) (*metav1.Table, error) {
	names := make([]string, 0, len(gs))
	tables := make([]*metav1.Table, 0, len(gs))
	for _, g := range gs {
		if len(g.Objects) == 0 {
			// No rows, and no server table: its columns would be NAME and AGE.
			continue
		}
		t, err := tableOf(g, opts.Now)
		if err != nil {
			return nil, err
		}
		if opts.Owner != nil {
			addOwnerColumn(t, opts.Owner)
		}
		if opts.SortBy != "" {
			// Each context's rows sorted as its own table would be.
			field, err := get.RelaxedJSONPathExpression(opts.SortBy)
			if err != nil {
				return nil, err
			}
			if err := sortTableBy(t, field); err != nil {
				return nil, err
			}
		}
		names = append(names, g.Context)
		tables = append(tables, t)
	}
	table := ContextTable(names, tables, opts.WithNamespace && len(gs) > 0 && gs[0].Namespaced)
	if opts.oneLine {
		escapeLineBreaks(table)
	}
	return table, nil
}

// printContextNames prints kind/name as kubectl does, after the context and a
// slash: ctx-a/pod/web-1. A context name may hold slashes; the last two
// fields are always the kind and the name.
func printContextNames(w io.Writer, groups []Group, delegate printers.ResourcePrinter) (int, error) {
	bw := bufio.NewWriter(w)
	n := 0
	var buf bytes.Buffer
	for _, g := range groups {
		for _, o := range g.Objects {
			buf.Reset()
			if err := delegate.PrintObj(Printable(o, g.GVK), &buf); err != nil {
				return n, err
			}
			bw.WriteString(g.Context + "/")
			bw.Write(buf.Bytes())
			n++
		}
	}
	return n, bw.Flush()
}

// printContextCustomColumns prints the custom columns of every object in one
// table, as kubectl's printer aligns them, with a CONTEXT column before them.
func printContextCustomColumns(w io.Writer, groups []Group, delegate printers.ResourcePrinter, opts Options) (int, error) {
	var buf bytes.Buffer
	o := opts
	o.Contexts = nil
	o.oneLine = true
	o.SingleItem = false
	n, err := Print(&buf, groups, delegate, o)
	if err != nil {
		return n, err
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if buf.Len() == 0 {
		lines = nil
	}
	var ctxs []string
	if !opts.NoHeaders && len(lines) > 0 {
		ctxs = append(ctxs, "CONTEXT")
	}
	for _, g := range groups {
		for range g.Objects {
			ctxs = append(ctxs, g.Context)
		}
	}
	if len(ctxs) != len(lines) {
		return n, fmt.Errorf("custom columns printed %d lines for %d rows", len(lines), len(ctxs))
	}
	width := 0
	for _, c := range ctxs {
		width = max(width, len(c))
	}
	bw := bufio.NewWriter(w)
	for i, line := range lines {
		// kubectl's custom columns are three spaces apart.
		fmt.Fprintf(bw, "%-*s   %s\n", width, ctxs[i], line)
	}
	return n, bw.Flush()
}

// sortContextGroups sorts each context's objects by opts.SortBy, as Print
// sorts one List: every kind together, as unstructured copies. Each context
// becomes one Group whose objects carry their own kinds.
func sortContextGroups(groups []Group, opts Options) ([]Group, error) {
	field, err := get.RelaxedJSONPathExpression(opts.SortBy)
	if err != nil {
		return nil, err
	}
	var order []string
	byContext := map[string][]runtime.Object{}
	namespaced := map[string]bool{}
	for _, g := range groups {
		if _, ok := byContext[g.Context]; !ok {
			order = append(order, g.Context)
		}
		for _, o := range g.Objects {
			u, err := ToUnstructured(o, g.GVK)
			if err != nil {
				return nil, err
			}
			byContext[g.Context] = append(byContext[g.Context], u)
		}
		namespaced[g.Context] = namespaced[g.Context] || g.Namespaced
	}
	out := make([]Group, 0, len(order))
	for _, c := range order {
		objs := byContext[c]
		if len(objs) > 1 {
			if err := sortObjectsBy(objs, field); err != nil {
				return nil, err
			}
		}
		out = append(out, Group{Context: c, Namespaced: namespaced[c], Objects: objs})
	}
	return out, nil
}

// contextGroups returns the groups of each context of opts, in its order.
func contextGroups(groups []Group, opts Options) [][]Group {
	out := make([][]Group, len(opts.Contexts))
	at := map[string]int{}
	for i, c := range opts.Contexts {
		at[c.Name] = i
	}
	for _, g := range groups {
		if i, ok := at[g.Context]; ok {
			out[i] = append(out[i], g)
		}
	}
	return out
}

// listObjects flattens groups into objects and their kinds.
func listObjects(groups []Group) ([]runtime.Object, map[runtime.Object]schema.GroupVersionKind) {
	objs := make([]runtime.Object, 0, total(groups))
	for _, g := range groups {
		objs = append(objs, g.Objects...)
	}
	return objs, gvkIndex(groups)
}

// contextFields are the fields a context's List carries after kubectl's:
// the context, its error and its warnings.
func contextFields(c ContextInfo) []listField {
	fields := []listField{{"context", c.Name}}
	if c.Error != "" {
		fields = append(fields, listField{"error", c.Error})
	}
	if len(c.Warnings) > 0 {
		fields = append(fields, listField{"warnings", c.Warnings})
	}
	return fields
}

// writeContextListJSON writes a v1 List of one v1 List per context, each
// written as writeJSONList writes one, indented one level, with its context.
func writeContextListJSON(w io.Writer, groups []Group, opts Options) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
	for i, gs := range contextGroups(groups, opts) {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n        ")
		objs, gvks := listObjects(gs)
		iw := &indentWriter{w: bw, indent: []byte("        ")}
		if err := writeJSONListFields(iw, objs, gvks, contextFields(opts.Contexts[i]), false); err != nil {
			return err
		}
	}
	if len(opts.Contexts) > 0 {
		bw.WriteString("\n    ")
	}
	bw.WriteString("],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }")
	if len(opts.Warnings) > 0 {
		data, err := json.MarshalIndent(opts.Warnings, "    ", "    ")
		if err != nil {
			return err
		}
		bw.WriteString(",\n    \"warnings\": " + string(data))
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}

// writeContextListYAML is writeContextListJSON in kubectl's YAML layout.
func writeContextListYAML(w io.Writer, groups []Group, opts Options) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if len(opts.Contexts) == 0 {
		bw.WriteString("apiVersion: v1\nitems: []\n")
	} else {
		bw.WriteString("apiVersion: v1\nitems:\n")
	}
	for i, gs := range contextGroups(groups, opts) {
		var buf bytes.Buffer
		objs, gvks := listObjects(gs)
		if err := writeYAMLListFields(&buf, objs, gvks, contextFields(opts.Contexts[i])); err != nil {
			return err
		}
		if err := writeYAMLListEntry(bw, buf.String()); err != nil {
			return err
		}
	}
	bw.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	if len(opts.Warnings) > 0 {
		data, err := yaml.Marshal(map[string][]string{"warnings": opts.Warnings})
		if err != nil {
			return err
		}
		bw.Write(data)
	}
	return bw.Flush()
}

// contextListObject is the document of writeContextListJSON as unstructured
// data, for jsonpath and templates.
func contextListObject(groups []Group, opts Options) (*unstructured.Unstructured, error) {
	var buf bytes.Buffer
	if err := writeContextListJSON(&buf, groups, opts); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(buf.Bytes(), &u.Object); err != nil {
		return nil, fmt.Errorf("decoding the context list: %w", err)
	}
	return u, nil
}

// indentWriter writes through to w, indenting every line after the first.
type indentWriter struct {
	w      io.Writer
	indent []byte
}

func (iw *indentWriter) Write(p []byte) (int, error) {
	written := 0
	for {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			m, err := iw.w.Write(p)
			return written + m, err
		}
		m, err := iw.w.Write(p[:i+1])
		written += m
		if err != nil {
			return written, err
		}
		if _, err := iw.w.Write(iw.indent); err != nil {
			return written, err
		}
		p = p[i+1:]
	}
}

// ContextDocument is one context's answer to a relation question: a Tree or
// a RelationList, whose Context names the context.
type ContextDocument struct {
	Tree *v1alpha1.Tree
	List *v1alpha1.RelationList
}

// context is the document's context.
func (d ContextDocument) context() string {
	if d.Tree != nil {
		return d.Tree.Context
	}
	return d.List.Context
}

// print prints the document alone, as one context's answer prints.
func (d ContextDocument) print(w io.Writer, delegate printers.ResourcePrinter, opts Options) error {
	if d.Tree != nil {
		return PrintTree(w, d.Tree, delegate, opts)
	}
	return PrintRelationList(w, d.List, delegate, opts)
}

// table is the document's table for human output.
func (d ContextDocument) table(opts Options) *metav1.Table {
	if d.Tree != nil {
		return treeTable(d.Tree, opts)
	}
	return relationTable(d.List, opts)
}

// PrintContextDocuments prints the documents of several contexts: one table
// with a CONTEXT column first, names after their context and a slash,
// custom columns after a CONTEXT column, and otherwise a v1 List of the
// documents (each with its "context"), with opts.Warnings as the List's
// "warnings". Graphs draw one cluster: they are an error here.
func PrintContextDocuments(w io.Writer, docs []ContextDocument, delegate printers.ResourcePrinter, opts Options) error {
	switch {
	case IsGraph(opts.Format):
		return fmt.Errorf("-o %s draws the graph of one cluster: name one context with --context", opts.Format)
	case IsHuman(opts.Format):
		names := make([]string, len(docs))
		tables := make([]*metav1.Table, len(docs))
		for i, d := range docs {
			names[i], tables[i] = d.context(), d.table(opts)
		}
		table := ContextTable(names, tables, false)
		if len(table.Rows) == 0 {
			return nil
		}
		return printOwnTable(w, table, opts.NoHeaders, opts.Format == "wide")
	case opts.Format == "name", strings.HasPrefix(opts.Format, "custom-columns"):
		return printContextLines(w, docs, delegate, opts)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"kind": "List", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": ""},
	}}
	if len(opts.Warnings) > 0 {
		ws := make([]any, len(opts.Warnings))
		for i, w := range opts.Warnings {
			ws[i] = w
		}
		list.Object["warnings"] = ws
	}
	for _, d := range docs {
		var buf bytes.Buffer
		if err := d.print(&buf, nil, Options{Format: "json"}); err != nil {
			return err
		}
		u := unstructured.Unstructured{}
		if err := json.Unmarshal(buf.Bytes(), &u.Object); err != nil {
			return fmt.Errorf("decoding the %s document: %w", d.context(), err)
		}
		list.Items = append(list.Items, u)
	}
	return delegate.PrintObj(list, w)
}

// printContextLines prints each document's lines (-o name, custom columns)
// after its context: "ctx/kind/name", or a CONTEXT column.
func printContextLines(w io.Writer, docs []ContextDocument, delegate printers.ResourcePrinter, opts Options) error {
	name := opts.Format == "name"
	width := len("CONTEXT")
	for _, d := range docs {
		width = max(width, len(d.context()))
	}
	header := false
	bw := bufio.NewWriter(w)
	for _, d := range docs {
		var buf bytes.Buffer
		if err := d.print(&buf, delegate, opts); err != nil {
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
				fmt.Fprintf(bw, "%s/%s\n", d.context(), line)
			} else {
				fmt.Fprintf(bw, "%-*s   %s\n", width, d.context(), line)
			}
		}
	}
	return bw.Flush()
}
