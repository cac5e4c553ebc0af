package printers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// Options carry the printing flags that are not inside the delegate printer.
type Options struct {
	// Format is the -o value: "" and "wide" are human tables.
	Format string
	// Encodings, when set, keeps the objects' JSON encodings for the next
	// answer that prints them: the cache process's.
	Encodings *Encodings
	// Groups is a grouping over several contexts, their answers' groupings
	// merged by the engine (query.MergeGroupLists), for PrintListing.
	Groups *v1alpha1.GroupList
	// Human table options, as kubectl's HumanPrintFlags name them.
	NoHeaders     bool
	ShowLabels    bool
	ShowKind      bool
	ColumnLabels  []string
	WithNamespace bool
	// Owner, when set, adds an OWNER column after the kind's own columns:
	// each object's top-level controller (--show-owner).
	Owner func(runtime.Object) string
	// ErrorText words a context's failure in its List of an answer over
	// several contexts (an "error" field), as the warning line on stderr
	// words it; nil means Error().
	ErrorText func(error) string
	// SortBy is --sort-by: a JSONPath over the objects.
	SortBy string
	// SingleItem prints a lone object by itself instead of inside a List, as
	// kubectl does when exactly one TYPE/NAME was asked for.
	SingleItem bool
	// Now is the reference time for ages.
	Now time.Time
	// Warnings say what a partial answer is missing. -o json and -o yaml add
	// them to the List as a top-level "warnings" array, and jsonpath and
	// templates see the same field; a complete answer has no such field, so
	// its List is exactly kubectl's.
	Warnings []string
	// AsOf says what an answer from the warm cache is current as of, per
	// type: -o json and -o yaml add it to the List as a top-level "asOf"
	// array after the warnings, and jsonpath and templates see it too. A
	// direct run's has none, so its List is exactly kubectl's.
	AsOf []v1alpha1.AsOf

	// oneLine escapes line breaks in table cells, for grouped output.
	oneLine bool
	// contexts are the contexts of an answer over several, in order; each
	// Members' Context names its own. Tables get a CONTEXT column first, -o
	// name a context/ prefix, and -o json|yaml a List of one List per
	// context with a "context" field (see printContexts).
	contexts []contextInfo
	// owners are the Owner of each context, in an answer over several.
	owners map[string]func(runtime.Object) string
}

// IsHuman reports whether format selects kubectl's human-readable tables.
func IsHuman(format string) bool { return format == "" || format == "wide" }

// Print writes the objects of members, one context's, to w; human output
// prints the server's tables among tables. delegate is the printer
// cli-runtime's flags chose; it is used for every format except human tables
// and lists in json/yaml, which are produced here. It returns the number of
// objects printed.
//
// The output is buffered and written in large pieces: a table's tabwriter
// writes cell by cell, which is a system call per cell on a terminal, a pipe
// or the warm cache's socket.
func Print(w io.Writer, members []v1alpha1.Members, tables Tables, delegate printers.ResourcePrinter, opts Options) (int, error) {
	return buffered(w, func(w io.Writer) (int, error) { return printMembers(w, members, tables, delegate, opts) })
}

// buffered runs write over a buffer of w and flushes it, also after a
// failure: what was written before it is printed.
func buffered(w io.Writer, write func(io.Writer) (int, error)) (int, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	n, err := write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return n, err
}

func printMembers(w io.Writer, members []v1alpha1.Members, tables Tables, delegate printers.ResourcePrinter, opts Options) (int, error) {
	if opts.contexts != nil {
		return printContexts(w, members, tables, delegate, opts)
	}
	if IsHuman(opts.Format) {
		return printTables(w, members, tables, opts)
	}
	objs, gvks := listObjects(members)
	if opts.SortBy != "" && len(objs) > 1 {
		// kubectl sorts unstructured objects, and a typed struct cannot be
		// compared with a map, so mixed lists (pods,crontabs) are converted first.
		sorted := make([]runtime.Object, len(objs))
		for i, o := range objs {
			u, err := ToUnstructured(o, gvks[o])
			if err != nil {
				return 0, err
			}
			sorted[i] = u
		}
		field, err := get.RelaxedJSONPathExpression(opts.SortBy)
		if err != nil {
			return 0, err
		}
		if err := sortObjectsBy(sorted, field); err != nil {
			return 0, err
		}
		objs = sorted
	}
	if opts.SingleItem && len(objs) == 1 {
		return 1, delegate.PrintObj(Printable(objs[0], gvks[objs[0]]), w)
	}
	switch opts.Format {
	case "json":
		return len(objs), writeJSONListFields(w, objs, gvks, listFields(opts.Warnings, opts.AsOf), true, opts.Encodings)
	case "yaml":
		return len(objs), writeYAMLListFields(w, objs, gvks, listFields(opts.Warnings, opts.AsOf))
	}
	if opts.Format == "name" {
		// cli-runtime's name printer refuses typed lists; it prints one object
		// at a time anyway.
		for _, o := range objs {
			if err := delegate.PrintObj(readOnlyPrintable(o, gvks[o]), w); err != nil {
				return 0, err
			}
		}
		return len(objs), nil
	}
	// kubectl hands its generic printers an unstructured List. Doing the same
	// keeps their output identical: custom-columns, for one, prints "<none>" for
	// a field absent from a map but "" for the zero value of a typed struct field.
	list := unstructuredList(opts.Warnings)
	if err := addAsOf(list, opts.AsOf); err != nil {
		return 0, err
	}
	list.Items = make([]unstructured.Unstructured, len(objs))
	for i, o := range objs {
		u, err := ToUnstructured(o, gvks[o])
		if err != nil {
			return 0, err
		}
		if opts.oneLine {
			u.Object = escapeStrings(u.Object).(map[string]any)
		}
		list.Items[i] = *u
	}
	return len(objs), delegate.PrintObj(list, w)
}

// unstructuredList is an empty v1 List as kubectl hands its generic printers
// one, with warnings, what the answer may be missing, when there are any.
func unstructuredList(warnings []string) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"kind": "List", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": ""},
	}}
	if len(warnings) > 0 {
		ws := make([]any, len(warnings))
		for i, w := range warnings {
			ws[i] = w
		}
		list.Object["warnings"] = ws
	}
	return list
}

// addAsOf adds an answer's asOf to an unstructured List, when it has one.
func addAsOf(list *unstructured.UnstructuredList, asOf []v1alpha1.AsOf) error {
	if len(asOf) == 0 {
		return nil
	}
	data, err := json.Marshal(asOf)
	if err != nil {
		return err
	}
	var v []any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	list.Object["asOf"] = v
	return nil
}

// listFields are the top-level fields a List carries after kubectl's own:
// warnings, then asOf, each when there is one.
func listFields(warnings []string, asOf []v1alpha1.AsOf) []listField {
	var fields []listField
	if len(warnings) > 0 {
		fields = append(fields, listField{"warnings", warnings})
	}
	if len(asOf) > 0 {
		fields = append(fields, listField{"asOf", asOf})
	}
	return fields
}

// ToUnstructured converts a cache object to a new unstructured object with
// apiVersion and kind set. The cache object is left untouched.
func ToUnstructured(obj runtime.Object, gvk schema.GroupVersionKind) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	if in, ok := obj.(*unstructured.Unstructured); ok {
		u = in.DeepCopy()
	} else {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("converting %s: %w", describe(obj), err)
		}
		u = &unstructured.Unstructured{Object: m}
	}
	if !gvk.Empty() {
		u.SetGroupVersionKind(gvk)
	}
	return u, nil
}

func total(members []v1alpha1.Members) int {
	n := 0
	for _, m := range members {
		n += len(m.Objects)
	}
	return n
}

// listObjects flattens members into their objects and each object's kind.
// Typed and metadata-only objects from informers carry no TypeMeta, so the
// kind comes from the mapping.
func listObjects(members []v1alpha1.Members) ([]runtime.Object, map[runtime.Object]schema.GroupVersionKind) {
	objs := make([]runtime.Object, 0, total(members))
	gvks := make(map[runtime.Object]schema.GroupVersionKind, total(members))
	for _, m := range members {
		for _, o := range m.Objects {
			objs = append(objs, o)
			gvks[o] = m.GVK
		}
	}
	return objs, gvks
}

// Printable returns a deep copy of obj with apiVersion and kind set, which the
// name, JSON and YAML printers need. The cache object is left untouched.
func Printable(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	c := obj.DeepCopyObject()
	if !gvk.Empty() {
		c.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return c
}

// readOnlyPrintable is Printable for encoders that only read the object
// (json.Marshal, yaml.Marshal, the name printer): v1alpha1.WithKind, which
// copies the object's top level only, as a document's items are encoded.
func readOnlyPrintable(obj runtime.Object, gvk schema.GroupVersionKind) runtime.Object {
	return v1alpha1.WithKind(obj, gvk)
}

// WriteJSONList writes objs as a v1 List, byte for byte in the layout of kubectl's
// JSON printer (four-space indent), one item at a time: the whole document is
// never held in memory, which matters at tens of thousands of objects.
func WriteJSONList(w io.Writer, objs []runtime.Object, gvks map[runtime.Object]schema.GroupVersionKind) error {
	return writeJSONListFields(w, objs, gvks, nil, true, nil)
}

// listField is a top-level field a List carries after kubectl's own:
// warnings, and a context's name and error.
type listField struct {
	name  string
	value any
}

// writeJSONListFields writes a v1 List with fields after kubectl's, ending
// with a newline when newline is set.
func writeJSONListFields(w io.Writer, objs []runtime.Object, gvks map[runtime.Object]schema.GroupVersionKind, fields []listField, newline bool, enc *Encodings) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := bw.WriteString(jsonListHead); err != nil {
		return err
	}
	err := writeJSONItems(bw, len(objs), 0, "        ", enc, func(i int) (runtime.Object, schema.GroupVersionKind) {
		return objs[i], gvks[objs[i]]
	})
	if err != nil {
		return err
	}
	if err := writeJSONListTail(bw, len(objs) > 0, fields, newline); err != nil {
		return err
	}
	return bw.Flush()
}

// jsonListHead opens a v1 List in kubectl's JSON layout, up to its items.
const jsonListHead = "{\n    \"apiVersion\": \"v1\",\n    \"items\": ["

// writeJSONListTail closes a v1 List opened by jsonListHead and its items.
func writeJSONListTail(bw *bufio.Writer, items bool, fields []listField, newline bool) error {
	if items {
		if _, err := bw.WriteString("\n    "); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString("],\n    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }"); err != nil {
		return err
	}
	for _, f := range fields {
		data, err := json.MarshalIndent(f.value, "    ", "    ")
		if err != nil {
			return err
		}
		if _, err := bw.WriteString(",\n    \"" + f.name + "\": " + string(data)); err != nil {
			return err
		}
	}
	end := "\n}"
	if newline {
		end += "\n"
	}
	_, err := bw.WriteString(end)
	return err
}

// writeJSONItems writes n array items, each on a new line at indent prefix and
// indented by four spaces as kubectl's JSON printer does, after the array's
// opening bracket and the first items already written of it. Items are
// encoded on every core and written in order.
func writeJSONItems(w io.Writer, n, written int, prefix string, enc *Encodings, item func(i int) (runtime.Object, schema.GroupVersionKind)) error {
	return encodeOrdered(n, func(i int, buf *bytes.Buffer) error {
		if written+i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
		buf.WriteString(prefix)
		obj, gvk := item(i)
		return appendJSON(buf, obj, gvk, prefix, enc)
	}, func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
}

// WriteYAMLList writes objs as a v1 List in the layout of kubectl's YAML printer,
// one item at a time.
func WriteYAMLList(w io.Writer, objs []runtime.Object, gvks map[runtime.Object]schema.GroupVersionKind) error {
	return writeYAMLListFields(w, objs, gvks, nil)
}

// writeYAMLListFields writes a v1 List with fields after kubectl's.
func writeYAMLListFields(w io.Writer, objs []runtime.Object, gvks map[runtime.Object]schema.GroupVersionKind, fields []listField) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if _, err := bw.WriteString(yamlListHead(len(objs) > 0)); err != nil {
		return err
	}
	for _, o := range objs {
		if err := writeYAMLItem(bw, o, gvks[o]); err != nil {
			return err
		}
	}
	if err := writeYAMLListTail(bw, fields); err != nil {
		return err
	}
	return bw.Flush()
}

// yamlListHead opens a v1 List in kubectl's YAML layout, up to its items.
func yamlListHead(items bool) string {
	if items {
		return "apiVersion: v1\nitems:\n"
	}
	return "apiVersion: v1\nitems: []\n"
}

// writeYAMLItem writes one item of a List opened by yamlListHead.
func writeYAMLItem(bw *bufio.Writer, o runtime.Object, gvk schema.GroupVersionKind) error {
	data, err := yaml.Marshal(readOnlyPrintable(o, gvk))
	if err != nil {
		return fmt.Errorf("encoding %s: %w", describe(o), err)
	}
	return writeYAMLListEntry(bw, string(data))
}

// writeYAMLListEntry writes the YAML mapping doc as an item of a list: indented
// by two, its first line opened with "- ". Empty lines stay empty so block
// scalars keep their content.
func writeYAMLListEntry(bw *bufio.Writer, doc string) error {
	for i, line := range strings.Split(strings.TrimSuffix(doc, "\n"), "\n") {
		prefix := "  "
		switch {
		case i == 0:
			prefix = "- "
		case line == "":
			prefix = ""
		}
		if _, err := bw.WriteString(prefix + line + "\n"); err != nil {
			return err
		}
	}
	return nil
}

// writeYAMLListTail closes a v1 List opened by yamlListHead and its items.
func writeYAMLListTail(bw *bufio.Writer, fields []listField) error {
	if _, err := bw.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n"); err != nil {
		return err
	}
	for _, f := range fields {
		data, err := yaml.Marshal(map[string]any{f.name: f.value})
		if err != nil {
			return err
		}
		if _, err := bw.Write(data); err != nil {
			return err
		}
	}
	return nil
}

func describe(o runtime.Object) string {
	if a, ok := o.(metav1.Object); ok {
		if a.GetNamespace() != "" {
			return a.GetNamespace() + "/" + a.GetName()
		}
		return a.GetName()
	}
	return fmt.Sprintf("%T", o)
}

// printTables prints one table per Members, separated by a blank line as
// kubectl separates the tables of several types.
func printTables(w io.Writer, members []v1alpha1.Members, tables Tables, opts Options) (int, error) {
	nonEmpty := 0
	for _, m := range members {
		if len(m.Objects) > 0 {
			nonEmpty++
		}
	}
	printed := 0
	for _, g := range members {
		if len(g.Objects) == 0 {
			continue
		}
		table, err := kindTable(g, tables, opts.Owner, opts)
		if err != nil {
			return printed, err
		}
		if opts.oneLine {
			escapeLineBreaks(table)
		}
		if err := printKindTable(w, table, g.GVK.GroupKind(), opts.WithNamespace && g.Namespaced, nonEmpty > 1, printed > 0, opts); err != nil {
			return printed, err
		}
		printed += len(g.Objects)
	}
	return printed, nil
}

// kindTable is the table of one kind's members (Tables.join), with the OWNER
// column of owner (none when nil), its rows sorted by --sort-by.
func kindTable(m v1alpha1.Members, tables Tables, owner func(runtime.Object) string, opts Options) (*metav1.Table, error) {
	table, err := tables.join(m, opts.Now)
	if err != nil {
		return nil, err
	}
	if owner != nil {
		addOwnerColumn(table, owner)
	}
	if opts.SortBy != "" {
		field, err := get.RelaxedJSONPathExpression(opts.SortBy)
		if err != nil {
			return nil, err
		}
		if err := sortTableBy(table, field); err != nil {
			return nil, err
		}
	}
	return table, nil
}

// printKindTable prints the table of one kind of an answer with kubectl's
// table printer and the table flags of opts, after a blank line when a table
// of another kind came before (after), as kubectl get prints several kinds;
// KIND prefixes the names when several kinds are printed (kinds) or
// --show-kind asks.
func printKindTable(w io.Writer, table *metav1.Table, kind schema.GroupKind, withNamespace, kinds, after bool, opts Options) error {
	p := printers.NewTablePrinter(printers.PrintOptions{
		Kind:          kind,
		WithKind:      opts.ShowKind || kinds,
		NoHeaders:     opts.NoHeaders,
		Wide:          opts.Format == "wide",
		WithNamespace: withNamespace,
		ColumnLabels:  opts.ColumnLabels,
		ShowLabels:    opts.ShowLabels,
	})
	if after && !opts.NoHeaders {
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return p.PrintObj(table, w)
}

// addOwnerColumn appends the OWNER column to table, read from each row's
// object.
func addOwnerColumn(table *metav1.Table, owner func(runtime.Object) string) {
	table.ColumnDefinitions = append(slices.Clip(table.ColumnDefinitions), ownerColumn)
	for i := range table.Rows {
		row := &table.Rows[i]
		row.Cells = append(slices.Clip(row.Cells), owner(row.Object.Object))
	}
}

// ownerColumn is the column of --show-owner.
var ownerColumn = metav1.TableColumnDefinition{Name: "Owner", Type: "string", Description: "The top-level controller of the object, through controller references."}

// escapeStrings replaces line breaks in every string of an unstructured value
// (a fresh copy, never a cache object), for printers whose cells cannot be
// post-processed, like custom-columns.
func escapeStrings(v any) any {
	return replaceLeaves(v, func(leaf any) any {
		if t, ok := leaf.(string); ok && strings.ContainsAny(t, "\r\n") {
			return lineBreaks.Replace(t)
		}
		return leaf
	})
}

// replaceLeaves replaces, in place, every value of decoded JSON v that is
// neither an object nor an array with what replace returns for it.
func replaceLeaves(v any, replace func(leaf any) any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = replaceLeaves(e, replace)
		}
	case []any:
		for i, e := range t {
			t[i] = replaceLeaves(e, replace)
		}
	default:
		return replace(v)
	}
	return v
}

var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)

// escapeLineBreaks replaces line breaks in string cells (an event message, a
// custom column) with their escapes, so every row prints as one line.
func escapeLineBreaks(t *metav1.Table) {
	for i := range t.Rows {
		for j, c := range t.Rows[i].Cells {
			if s, ok := c.(string); ok && strings.ContainsAny(s, "\r\n") {
				t.Rows[i].Cells[j] = lineBreaks.Replace(s)
			}
		}
	}
}
