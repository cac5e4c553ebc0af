package printers

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/history"
)

// PrintHistory writes a history document: the timeline as a table for human
// output, one row per change and one per gap; the objects that changed, each
// once, for -o name; a row per entry for custom columns; the document
// otherwise.
func PrintHistory(w io.Writer, doc *v1alpha1.History, delegate printers.ResourcePrinter, opts Options) error {
	return documentForms{
		table: func() (*metav1.Table, error) { return historyTable(doc), nil },
		names: func() []string {
			return objectNames(doc.Entries, func(e *v1alpha1.HistoryEntry) (string, string, string) {
				return e.Object.APIVersion, e.Object.Kind, e.Object.Name
			})
		},
		rows: func() error {
			return printItems(w, doc.APIVersion, doc.Kind, doc.Entries, func(_ *v1alpha1.HistoryEntry, i int) string { return fmt.Sprintf("entry %d", i) }, delegate)
		},
	}.print(w, doc, delegate, opts)
}

// objectLabel names an object in a table cell: deployment/web.
func objectLabel(o v1alpha1.HistoryObject) string {
	if o.Name == "" {
		return ""
	}
	return strings.ToLower(o.Kind) + "/" + o.Name
}

// stamp is a time as the tables print it, in UTC to the second.
func stamp(t metav1.Time) string { return t.UTC().Format(time.RFC3339) }

// historyTable is the timeline: a row per change (an entry without changes
// is one row), the entry's time, object, source and managers on its first
// row, and a row per gap at its start.
func historyTable(doc *v1alpha1.History) *metav1.Table {
	table := &metav1.Table{}
	for _, name := range []string{"Time", "Object", "Source", "Who", "Change"} {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: name, Type: "string"})
	}
	type item struct {
		at   time.Time
		rows [][]any
	}
	// Entries and gaps in one order of time, a gap at its start: the
	// entries are in order already, the gaps are added among them.
	var items []item
	for _, e := range doc.Entries {
		items = append(items, item{at: e.Time.Time, rows: entryRows(e)})
	}
	for _, g := range doc.Gaps {
		items = append(items, item{at: g.From.Time, rows: [][]any{{stamp(g.From), "", "gap", "", "nothing known until " + stamp(g.To) + ": " + g.Reason}}})
	}
	slices.SortStableFunc(items, func(a, b item) int { return a.at.Compare(b.at) })
	for _, it := range items {
		for _, r := range it.rows {
			table.Rows = append(table.Rows, metav1.TableRow{Cells: r})
		}
	}
	return table
}

// entryRows are an entry's rows.
func entryRows(e v1alpha1.HistoryEntry) [][]any {
	source := e.Source
	if e.Revision != nil {
		source = fmt.Sprintf("revision %d", e.Revision.Number)
	}
	who := managersText(e.Managers)
	if e.Event != nil {
		who = e.Event.Reporter
	}
	var texts, whos []string
	switch {
	case e.Event != nil:
		text := e.Event.Reason + ": " + e.Event.Message
		if e.Event.Type != "" && e.Event.Type != "Normal" {
			text = e.Event.Type + " " + text
		}
		if e.Event.Count > 1 {
			text += fmt.Sprintf(" (x%d)", e.Event.Count)
		}
		texts = append(texts, text)
	case len(e.Changes) > 0:
		// Each change beside its own writers; the entry's are those of its
		// changes, or (a manager's last write) the one manager.
		for i, c := range e.Changes {
			texts = append(texts, changeText(c))
			w := managersText(c.Managers)
			if e.Source == v1alpha1.SourceManagedFields {
				w = ""
				if i == 0 {
					w = who
				}
			}
			whos = append(whos, w)
		}
	default:
		texts = append(texts, actionText(e))
	}
	// A time the source does not keep is a stretch: the row's time is its
	// start, and the text says its end.
	if e.Until != nil {
		texts[0] = "between then and " + stamp(*e.Until) + ": " + texts[0]
	}
	if e.Note != "" && len(e.Changes) > 0 {
		texts = append(texts, "("+e.Note+")")
	}
	rows := make([][]any, len(texts))
	for i, t := range texts {
		w := ""
		switch {
		case i < len(whos):
			w = whos[i]
		case i == 0:
			w = who
		}
		if i == 0 {
			rows[i] = []any{stamp(e.Time), objectLabel(e.Object), source, w, t}
		} else {
			rows[i] = []any{"", "", "", w, t}
		}
	}
	return rows
}

// actionText words an entry without changes.
func actionText(e v1alpha1.HistoryEntry) string {
	text := strings.ToLower(e.Action)
	if e.ResourceVersion != "" {
		text += " (version " + e.ResourceVersion + ")"
	}
	if e.Note != "" {
		text += ": " + e.Note
	}
	return text
}

// managersText names managers: kubectl-set (Update), kubectl (Update scale).
func managersText(ms []v1alpha1.FieldManager) string {
	var out []string
	for _, m := range ms {
		op := m.Operation
		if m.Subresource != "" {
			op += " " + m.Subresource
		}
		out = append(out, m.Manager+" ("+op+")")
	}
	return strings.Join(out, ", ")
}

// filter and escapedDot turn a JSONPath into the short form a table prints:
// containers[?(@.name=="web")] as containers[name=web], labels.app\.kubernetes\.io/name
// as labels.app.kubernetes.io/name.
var filter = regexp.MustCompile(`\[\?\(@\.([A-Za-z0-9_]+)==("?)(.*?)("?)\)\]`)

func shortPath(p string) string {
	p = filter.ReplaceAllString(p, "[$1=$3]")
	return strings.ReplaceAll(p, `\.`, ".")
}

// maxValue is the longest value a table cell shows; -o json has them whole.
const maxValue = 60

// valueText is a change's value, compact, cut at maxValue runes.
func valueText(v *runtime.RawExtension) string {
	s := string(v.Raw)
	var x any
	if json.Unmarshal(v.Raw, &x) == nil {
		if b, err := json.Marshal(x); err == nil {
			s = string(b)
		}
	}
	if r := []rune(s); len(r) > maxValue {
		s = string(r[:maxValue]) + "..."
	}
	return s
}

// changeText words a change: PATH: OLD -> NEW, PATH = NEW for a value
// whose predecessor no source kept, added and removed fields.
func changeText(c v1alpha1.HistoryChange) string {
	p := shortPath(c.Path)
	switch {
	case c.Old != nil && c.New != nil:
		return p + ": " + valueText(c.Old) + " -> " + valueText(c.New)
	case c.New != nil && c.OldUnknown:
		return p + " = " + valueText(c.New)
	case c.New != nil:
		return p + ": added " + valueText(c.New)
	case c.Old != nil:
		return p + ": removed, was " + valueText(c.Old)
	}
	return p
}

// PrintBlame writes a blame document: the object's YAML with, beside each
// line, the managers that last wrote its field, how and when, for human
// output; the document otherwise (-o name prints the object's name).
func PrintBlame(w io.Writer, doc *v1alpha1.Blame, delegate printers.ResourcePrinter, opts Options) error {
	return documentForms{
		table: func() (*metav1.Table, error) { return blameTable(doc) },
		names: func() []string { return []string{objectName(doc.Object.APIVersion, doc.Object.Kind, doc.Object.Name)} },
	}.print(w, doc, delegate, opts)
}

// blameTable is the object's YAML, a line a row, each line's field's
// managers, operations and time before it.
func blameTable(doc *v1alpha1.Blame) (*metav1.Table, error) {
	table := &metav1.Table{}
	for _, name := range []string{"Manager", "Operation", "Time", "Object"} {
		table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{Name: name, Type: "string"})
	}
	var content map[string]any
	if err := json.Unmarshal(doc.Content.Raw, &content); err != nil {
		return nil, fmt.Errorf("reading the content of %s/%s: %w", strings.ToLower(doc.Object.Kind), doc.Object.Name, err)
	}
	owners := map[string][]int{}
	for _, f := range doc.Fields {
		owners[f.Path] = f.Managers
	}
	// The lines are rendered as the engine named the fields: the same keys
	// for the same kind.
	gvk := schema.FromAPIVersionAndKind(doc.Object.APIVersion, doc.Object.Kind)
	for _, l := range history.YAMLLines(numbers(content).(map[string]any), history.KeysFor(gvk)) {
		var names, ops, times []string
		if !l.Continued {
			for _, i := range owners[l.Path.String()] {
				if i < 0 || i >= len(doc.Managers) {
					continue
				}
				m := doc.Managers[i]
				op := m.Operation
				if m.Subresource != "" {
					op += " " + m.Subresource
				}
				names, ops = append(names, m.Manager), append(ops, op)
				if m.Time != nil {
					times = append(times, stamp(*m.Time))
				}
			}
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{strings.Join(names, ","), strings.Join(ops, ","), strings.Join(slices.Compact(times), ","), l.Text}})
	}
	return table, nil
}

// numbers turns the float64 of decoded JSON that hold whole numbers into
// int64, as the object's own decoding holds them, so that its YAML and the
// keys of its list entries read as the engine read them.
func numbers(v any) any {
	return replaceLeaves(v, func(leaf any) any {
		if f, ok := leaf.(float64); ok && f == float64(int64(f)) {
			return int64(f)
		}
		return leaf
	})
}
