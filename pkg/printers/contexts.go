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
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// contextColumn is the first column of every table over several contexts.
var contextColumn = metav1.TableColumnDefinition{Name: "Context", Type: "string", Description: "The kubeconfig context the object was read from."}

// namespaceColumn is the NAMESPACE column a table over several contexts
// prints itself, after CONTEXT (kubectl's table printer would put it first).
var namespaceColumn = metav1.TableColumnDefinition{Name: "Namespace", Type: "string"}

// printContexts prints the members of several contexts (each Members'
// Context set): tables with a CONTEXT column first, one table per kind with
// the rows of every context; names prefixed with their context; -o json and
// -o yaml a v1 List of one v1 List per context, each with a "context" field;
// jsonpath and templates over the same document.
func printContexts(w io.Writer, members []v1alpha1.Members, tables Tables, delegate printers.ResourcePrinter, opts Options) (int, error) {
	switch {
	case IsHuman(opts.Format):
		// One table per kind, sorted as a whole.
		return printContextTables(w, members, tables, opts)
	}
	if opts.SortBy != "" {
		// Each context's List sorted as kubectl sorts one.
		sorted, err := sortContextMembers(members, opts)
		if err != nil {
			return 0, err
		}
		members, opts.SortBy = sorted, ""
	}
	switch {
	case opts.Format == "name":
		return printContextNames(w, members, delegate)
	case opts.Format == "json":
		return total(members), writeContextListJSON(w, members, opts)
	case opts.Format == "yaml":
		return total(members), writeContextListYAML(w, members, opts)
	case strings.HasPrefix(opts.Format, "custom-columns"):
		return printContextCustomColumns(w, members, tables, delegate, opts)
	}
	return total(members), delegate.PrintObj(&contextList{members: members, opts: opts}, w)
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

// kindMembers returns members gathered by kind, kinds in the order first
// seen, each kind's in the order given (the contexts' order).
func kindMembers(members []v1alpha1.Members) ([]schema.GroupVersionKind, map[schema.GroupVersionKind][]v1alpha1.Members) {
	var order []schema.GroupVersionKind
	byKind := map[schema.GroupVersionKind][]v1alpha1.Members{}
	for _, m := range members {
		if _, ok := byKind[m.GVK]; !ok {
			order = append(order, m.GVK)
		}
		byKind[m.GVK] = append(byKind[m.GVK], m)
	}
	return order, byKind
}

// printContextTables prints one table per kind with the rows of every
// context, CONTEXT first.
func printContextTables(w io.Writer, members []v1alpha1.Members, tables Tables, opts Options) (int, error) {
	order, byKind := kindMembers(members)
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
		table, err := contextTableOf(gs, tables, opts)
		if err != nil {
			return printed, err
		}
		if err := printKindTable(w, table, gvk.GroupKind(), false, nonEmpty > 1, printed > 0, opts); err != nil {
			return printed, err
		}
		printed += n
	}
	return printed, nil
}

// contextTableOf builds the table of one kind's members, one per context,
// with CONTEXT first: each context's rows from its own server's table.
func contextTableOf(gs []v1alpha1.Members, server Tables, opts Options) (*metav1.Table, error) {
	names := make([]string, 0, len(gs))
	tables := make([]*metav1.Table, 0, len(gs))
	for _, g := range gs {
		if len(g.Objects) == 0 {
			// No rows, and no server table: its columns would be NAME and AGE.
			continue
		}
		// Each context's rows sorted as its own table would be.
		t, err := kindTable(g, server, opts.owners[g.Context], opts)
		if err != nil {
			return nil, err
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
func printContextNames(w io.Writer, members []v1alpha1.Members, delegate printers.ResourcePrinter) (int, error) {
	bw := bufio.NewWriter(w)
	n := 0
	var buf bytes.Buffer
	for _, g := range members {
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
func printContextCustomColumns(w io.Writer, members []v1alpha1.Members, tables Tables, delegate printers.ResourcePrinter, opts Options) (int, error) {
	var buf bytes.Buffer
	o := opts
	o.contexts = nil
	o.oneLine = true
	o.SingleItem = false
	n, err := Print(&buf, members, tables, delegate, o)
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
	for _, g := range members {
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

// sortContextMembers sorts each context's objects by opts.SortBy, as Print
// sorts one List: every kind together, as unstructured copies. Each context
// becomes one Members whose objects carry their own kinds.
func sortContextMembers(members []v1alpha1.Members, opts Options) ([]v1alpha1.Members, error) {
	field, err := get.RelaxedJSONPathExpression(opts.SortBy)
	if err != nil {
		return nil, err
	}
	var order []string
	byContext := map[string][]runtime.Object{}
	namespaced := map[string]bool{}
	for _, g := range members {
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
	out := make([]v1alpha1.Members, 0, len(order))
	for _, c := range order {
		objs := byContext[c]
		if len(objs) > 1 {
			if err := sortObjectsBy(objs, field); err != nil {
				return nil, err
			}
		}
		out = append(out, v1alpha1.Members{Context: c, Namespaced: namespaced[c], Objects: objs})
	}
	return out, nil
}

// contextMembers returns the members of each context of opts, in its order.
func contextMembers(members []v1alpha1.Members, opts Options) [][]v1alpha1.Members {
	out := make([][]v1alpha1.Members, len(opts.contexts))
	at := map[string]int{}
	for i, c := range opts.contexts {
		at[c.name] = i
	}
	for _, g := range members {
		if i, ok := at[g.Context]; ok {
			out[i] = append(out[i], g)
		}
	}
	return out
}

// contextFields are the fields a context's List carries after kubectl's:
// the context, its error and its warnings.
func contextFields(c contextInfo) []listField {
	fields := []listField{{"context", c.name}}
	if c.err != "" {
		fields = append(fields, listField{"error", c.err})
	}
	if len(c.warnings) > 0 {
		fields = append(fields, listField{"warnings", c.warnings})
	}
	return fields
}

// writeContextListJSON writes a v1 List of one v1 List per context, each
// written as writeJSONList writes one, indented one level, with its context.
func writeContextListJSON(w io.Writer, members []v1alpha1.Members, opts Options) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString("{\n    \"apiVersion\": \"v1\",\n    \"items\": [")
	for i, gs := range contextMembers(members, opts) {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n        ")
		objs, gvks := listObjects(gs)
		iw := &indentWriter{w: bw, indent: []byte("        ")}
		if err := writeJSONListFields(iw, objs, gvks, contextFields(opts.contexts[i]), false, opts.Encodings); err != nil {
			return err
		}
	}
	if len(opts.contexts) > 0 {
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
func writeContextListYAML(w io.Writer, members []v1alpha1.Members, opts Options) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if len(opts.contexts) == 0 {
		bw.WriteString("apiVersion: v1\nitems: []\n")
	} else {
		bw.WriteString("apiVersion: v1\nitems:\n")
	}
	for i, gs := range contextMembers(members, opts) {
		var buf bytes.Buffer
		objs, gvks := listObjects(gs)
		if err := writeYAMLListFields(&buf, objs, gvks, contextFields(opts.contexts[i])); err != nil {
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

// contextList is the document of writeContextListJSON as an object, for
// cli-runtime's jsonpath and template printers, which read it as they read
// any object: through its JSON.
type contextList struct {
	members []v1alpha1.Members
	opts    Options
}

// GetObjectKind returns the v1 List's kind.
func (l *contextList) GetObjectKind() schema.ObjectKind {
	return &metav1.TypeMeta{APIVersion: "v1", Kind: "List"}
}

// DeepCopyObject returns l: the printers it is handed to only read it.
func (l *contextList) DeepCopyObject() runtime.Object { return l }

// MarshalJSON writes the document as -o json prints it.
func (l *contextList) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	err := writeContextListJSON(&buf, l.members, l.opts)
	return buf.Bytes(), err
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
