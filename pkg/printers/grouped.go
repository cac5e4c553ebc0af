package printers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// GroupedOptions are Options plus what grouped output needs.
type GroupedOptions struct {
	Options
	// Header renders a group's header line for human output.
	Header func(g *v1alpha1.Group) string
}

// hasContexts reports whether doc merges the answers of several contexts.
func hasContexts(doc *v1alpha1.GroupList) bool {
	for i := range doc.Groups {
		if len(doc.Groups[i].Contexts) > 0 {
			return true
		}
	}
	return false
}

// PrintGrouped writes a group-by result; human output prints the server's
// tables among tables. Human and custom-columns output render every member
// row of a type in one table, so columns align across all groups, and put
// each group's header line above its rows; -o name prefixes each member with
// its group; the document formats print the GroupList.
func PrintGrouped(w io.Writer, doc *v1alpha1.GroupList, tables Tables, delegate printers.ResourcePrinter, opts GroupedOptions) error {
	switch {
	case IsHuman(opts.Format), strings.HasPrefix(opts.Format, "custom-columns"):
		return printGroupedRows(w, doc, tables, delegate, opts)
	case opts.Format == "name":
		return printGroupedNames(w, doc)
	case opts.Format == "json":
		return WriteGroupListJSON(w, doc, opts.Encodings)
	}
	// An API object, printed as kubectl prints any.
	return delegate.PrintObj(doc, w)
}

// WriteGroupListJSON writes doc as cli-runtime's JSON printer prints it
// (GroupList.MarshalJSON, indented by four spaces), the objects of every
// group encoded on every core as they are written: a large answer is never
// held twice in memory.
func WriteGroupListJSON(w io.Writer, doc *v1alpha1.GroupList, enc *Encodings) error {
	bw := &jsonDoc{enc: enc}
	head, err := json.MarshalIndent(struct {
		APIVersion string             `json:"apiVersion"`
		Kind       string             `json:"kind"`
		GroupBy    v1alpha1.GroupMode `json:"groupBy"`
		Expression string             `json:"expression,omitempty"`
	}{doc.APIVersion, doc.Kind, doc.GroupBy, doc.Expression}, "", "    ")
	if err != nil {
		return err
	}
	// Reopen the header object to append groups and warnings.
	bw.Write(bytes.TrimSuffix(head, []byte("\n}")))
	bw.WriteString(",\n    \"groups\": [")
	for i := range doc.Groups {
		g := &doc.Groups[i]
		if err := bw.openElement(i, "        ", struct {
			Name    string                `json:"name"`
			Key     v1alpha1.GroupKey     `json:"key"`
			Summary v1alpha1.GroupSummary `json:"summary"`
		}{g.Name, g.Key, g.Summary}); err != nil {
			return fmt.Errorf("encoding group %s: %w", g.Name, err)
		}
		if len(g.Contexts) > 0 {
			if err := writeGroupContexts(bw, g); err != nil {
				return err
			}
			bw.WriteString("\n        }")
			continue
		}
		bw.WriteString(",\n            \"items\": [")
		if err := writeMemberItems(bw, g.Members, "                "); err != nil {
			return err
		}
		bw.WriteString("\n        }")
	}
	if len(doc.Groups) > 0 {
		bw.WriteString("\n    ")
	}
	warnings := doc.Warnings
	if warnings == nil {
		warnings = []string{}
	}
	wdata, err := json.MarshalIndent(warnings, "    ", "    ")
	if err != nil {
		return err
	}
	bw.WriteString("],\n    \"warnings\": ")
	bw.Write(wdata)
	if len(doc.AsOf) > 0 {
		adata, err := json.MarshalIndent(doc.AsOf, "    ", "    ")
		if err != nil {
			return err
		}
		bw.WriteString(",\n    \"asOf\": ")
		bw.Write(adata)
	}
	bw.WriteString("\n}\n")
	out := bufio.NewWriterSize(w, 256<<10)
	if err := bw.writeTo(out); err != nil {
		return err
	}
	return out.Flush()
}

// writeMemberItems writes the objects of members as the items of a JSON
// array, at indent, closing it on a line of its own when it has items.
func writeMemberItems(bw *jsonDoc, members []v1alpha1.Members, indent string) error {
	n := 0
	for _, m := range members {
		for _, o := range m.Objects {
			if n > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n")
			bw.WriteString(indent)
			bw.object(o, m.GVK, indent)
			n++
		}
	}
	if n > 0 {
		bw.WriteString("\n" + indent[:len(indent)-4])
	}
	bw.WriteString("]")
	return nil
}

// openElement writes v as element i of an array, at indent, as
// json.MarshalIndent writes it but for its closing brace: the fields that
// follow are written after it.
func (d *jsonDoc) openElement(i int, indent string, v any) error {
	head, err := json.MarshalIndent(v, indent, "    ")
	if err != nil {
		return err
	}
	if i > 0 {
		d.WriteString(",")
	}
	d.WriteString("\n" + indent)
	d.Write(bytes.TrimSuffix(head, []byte("\n"+indent+"}")))
	return nil
}

// writeGroupContexts writes a merged group's "contexts": each context's
// summary and members.
func writeGroupContexts(bw *jsonDoc, g *v1alpha1.Group) error {
	bw.WriteString(",\n            \"contexts\": [")
	for i, c := range g.Contexts {
		if err := bw.openElement(i, "                ", c); err != nil {
			return fmt.Errorf("encoding group %s: %w", g.Name, err)
		}
		bw.WriteString(",\n                    \"items\": [")
		var members []v1alpha1.Members
		for _, m := range g.Members {
			if m.Context == c.Context {
				members = append(members, m)
			}
		}
		if err := writeMemberItems(bw, members, "                        "); err != nil {
			return err
		}
		bw.WriteString("\n                }")
	}
	if len(g.Contexts) > 0 {
		bw.WriteString("\n            ")
	}
	bw.WriteString("]")
	return nil
}

func printGroupedNames(w io.Writer, doc *v1alpha1.GroupList) error {
	// Written piece by piece: 100,000 lines through fmt took a tenth of a
	// warm answer's time.
	bw := bufio.NewWriterSize(w, 64<<10)
	for i := range doc.Groups {
		g := &doc.Groups[i]
		for _, m := range g.Members {
			prefix := strings.ToLower(m.GVK.Kind)
			if m.GVK.Group != "" {
				prefix += "." + m.GVK.Group
			}
			if m.Context != "" {
				prefix = m.Context + "/" + prefix
			}
			lead := g.Name + " " + prefix + "/"
			for _, o := range m.Objects {
				bw.WriteString(lead)
				bw.WriteString(describeName(o))
				bw.WriteByte('\n')
			}
		}
	}
	return bw.Flush()
}

func describeName(o runtime.Object) string {
	if a, ok := o.(interface{ GetName() string }); ok {
		return a.GetName()
	}
	return describe(o)
}

// printGroupedRows renders member rows per type through one table (or the
// custom-columns printer), then interleaves group header lines.
func printGroupedRows(w io.Writer, doc *v1alpha1.GroupList, tables Tables, delegate printers.ResourcePrinter, opts GroupedOptions) error {
	type block struct {
		header string
		rows   [][]string // rows[group] = rendered member lines of this type
	}
	// Collect member objects per type, in group order.
	var typeOrder []string
	perType := map[string][]v1alpha1.Members{}
	counts := map[string][]int{}
	contexts := hasContexts(doc)
	customColumns := strings.HasPrefix(opts.Format, "custom-columns")
	keyOf := func(m v1alpha1.Members) string {
		if customColumns {
			return "all" // one custom-columns table for every type
		}
		return m.GVK.String()
	}
	for gi := range doc.Groups {
		for _, m := range doc.Groups[gi].Members {
			key := keyOf(m)
			if _, ok := perType[key]; !ok {
				typeOrder = append(typeOrder, key)
				counts[key] = make([]int, len(doc.Groups))
			}
			ts := perType[key]
			// One Members per kind and context; members of one kind from
			// one context join the previous one, to be joined to their
			// server's table at once.
			if n := len(ts); n > 0 && ts[n-1].GVK == m.GVK && ts[n-1].Context == m.Context {
				ts[n-1].Objects = append(ts[n-1].Objects, m.Objects...)
			} else {
				ts = append(ts, v1alpha1.Members{GVK: m.GVK, Namespaced: m.Namespaced, Context: m.Context, Objects: slices.Clone(m.Objects)})
			}
			perType[key] = ts
			counts[key][gi] += len(m.Objects)
		}
	}
	blocks := map[string]*block{}
	for _, key := range typeOrder {
		ts := perType[key]
		var marker []contextInfo
		if contexts {
			// Print needs only to know the rows have contexts.
			marker = []contextInfo{}
		}
		var buf bytes.Buffer
		if strings.HasPrefix(opts.Format, "custom-columns") {
			if _, err := Print(&buf, ts, tables, delegate, Options{Format: opts.Format, NoHeaders: opts.NoHeaders, oneLine: true, contexts: marker}); err != nil {
				return err
			}
		} else {
			o := opts.Options
			o.NoHeaders = false
			o.SortBy = ""
			o.ShowKind = opts.ShowKind || len(typeOrder) > 1
			// Rows are split back out by line: one object must be one line.
			o.oneLine = true
			print := printTables
			if contexts {
				print = printContextTables
			}
			if _, err := print(&buf, ts, tables, o); err != nil {
				return err
			}
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		b := &block{rows: make([][]string, len(doc.Groups))}
		// The custom-columns printer leaves its header out itself with
		// --no-headers; tables are always rendered with one.
		if !(strings.HasPrefix(opts.Format, "custom-columns") && opts.NoHeaders) && len(lines) > 0 {
			b.header, lines = lines[0], lines[1:]
		}
		for gi, n := range counts[key] {
			if n > len(lines) {
				return fmt.Errorf("table for %s has fewer rows than members", key)
			}
			b.rows[gi], lines = lines[:n], lines[n:]
		}
		blocks[key] = b
	}

	bw := bufio.NewWriterSize(w, 256<<10)
	// One type: one column header on top and groups back to back. Several: each
	// group shows its types in its own Members order, each under its header.
	single := len(typeOrder) <= 1
	if len(typeOrder) == 1 && !opts.NoHeaders && blocks[typeOrder[0]].header != "" {
		fmt.Fprintf(bw, "  %s\n", blocks[typeOrder[0]].header)
	}
	for gi := range doc.Groups {
		g := &doc.Groups[gi]
		if gi > 0 && !single {
			bw.WriteString("\n")
		}
		bw.WriteString(opts.Header(g))
		bw.WriteString("\n")
		seen := map[string]bool{}
		for _, m := range g.Members {
			key := keyOf(m)
			if seen[key] {
				continue
			}
			seen[key] = true
			b := blocks[key]
			if b == nil || len(b.rows[gi]) == 0 {
				continue
			}
			if !single && !opts.NoHeaders && b.header != "" {
				fmt.Fprintf(bw, "  %s\n", b.header)
			}
			for _, line := range b.rows[gi] {
				fmt.Fprintf(bw, "  %s\n", line)
			}
		}
	}
	return bw.Flush()
}
