package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// WatchSource describes one resource of a change feed, indexed by feed.Event.Source.
type WatchSource struct {
	// GVK is the kind objects are printed as.
	GVK schema.GroupVersionKind
}

// WatchSources are the sources of a feed of the kinds of several contexts'
// feeds (kinds[i] the kinds of context i's, in its feed.Event.Source order):
// each kind once, in the order first seen, and where each context's kinds
// are among them, for their events' Source.
func WatchSources(kinds [][]schema.GroupVersionKind) ([]WatchSource, [][]int) {
	var sources []WatchSource
	at := map[schema.GroupVersionKind]int{}
	of := make([][]int, len(kinds))
	for i, ks := range kinds {
		for _, gvk := range ks {
			if _, ok := at[gvk]; !ok {
				at[gvk] = len(sources)
				sources = append(sources, WatchSource{GVK: gvk})
			}
			of[i] = append(of[i], at[gvk])
		}
	}
	return sources, of
}

// EventPrinterOptions configure an EventPrinter.
type EventPrinterOptions struct {
	// Format is the -o value: "" and "wide" print table rows, "json" one JSON
	// document per line, "yaml" one YAML document per event; anything else goes
	// to the delegate printer.
	Format string
	// NoHeaders, ShowLabels and ColumnLabels are kubectl's table flags.
	NoHeaders    bool
	ShowLabels   bool
	ColumnLabels []string
	// Diff adds the changed fields to MODIFIED events: a "diff" array in JSON and
	// YAML, indented lines under the row in tables.
	Diff bool
	// Sources are the feed's resources.
	Sources []WatchSource
	// Contexts marks a feed over several kubeconfig contexts: every event
	// names its own (feed.Event.Context), tables start with a CONTEXT
	// column, -o name lines with the context and a slash, and JSON events
	// have a "context" field.
	Contexts bool
	// Scope names the flags that narrow the feed, for the note under the row
	// of an object that left it: "--owner" when empty, "--where",
	// "--owner or --where".
	Scope string
	// Owner, when set, adds an OWNER column after each kind's own columns:
	// the object's top-level controller when the event was printed, as the
	// lookup of the event's context names it (Owner(ev.Context)).
	Owner func(context string) func(runtime.Object) string
	// Now is the reference time for AGE-like columns; nil means time.Now.
	Now func() time.Time
	// Location is the time zone of the TIME column; nil means time.Local.
	Location *time.Location
}

// EventPrinter prints feed events one at a time. Table rows are held until
// Flush, which aligns them with each other and with the rows printed before;
// every other format is written at once. It is not safe for concurrent use.
type EventPrinter struct {
	opts     EventPrinterOptions
	delegate printers.ResourcePrinter
	yamlDocs int

	// Table state.
	pending []pendingRow
	// prefixWidths are the widths of TIME EVENT KIND NAMESPACE NAME, shared by
	// every kind so the rows of different kinds line up.
	prefix       []string
	prefixWidths []int
	// kindWidths are the widths of each source's own columns.
	kindWidths map[int][]int
	headed     map[int]bool
}

// pendingRow is a table row waiting for Flush: a header or an event.
type pendingRow struct {
	source int
	// blank opens the row with an empty line, as kubectl separates tables.
	blank bool
	cells []string
	// diff lines follow the row, indented: the changes of --diff, or a note.
	diff []string
}

// watchPrefix are the columns every table row starts with.
var watchPrefix = []string{"TIME", "EVENT", "KIND", "NAMESPACE", "NAME"}

// NewEventPrinter returns a printer for opts. delegate is the printer
// cli-runtime's flags chose; it serves name, jsonpath and templates.
func NewEventPrinter(opts EventPrinterOptions, delegate printers.ResourcePrinter) *EventPrinter {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	p := &EventPrinter{opts: opts, delegate: delegate, kindWidths: map[int][]int{}, headed: map[int]bool{}}
	p.prefix = watchPrefix
	if opts.Contexts {
		p.prefix = append([]string{"CONTEXT"}, watchPrefix...)
	}
	p.prefixWidths = make([]int, len(p.prefix))
	for i, h := range p.prefix {
		p.prefixWidths[i] = len(h)
	}
	// TIME, EVENT and KIND have known widths: rows line up from the first one.
	at := len(p.prefix) - len(watchPrefix)
	p.prefixWidths[at] = len("15:04:05")
	p.prefixWidths[at+1] = len(feed.Modified)
	for _, src := range opts.Sources {
		p.prefixWidths[at+2] = max(p.prefixWidths[at+2], len(src.GVK.Kind))
	}
	return p
}

// Print prints ev to w, or holds it until Flush for tables.
func (p *EventPrinter) Print(w io.Writer, ev *feed.Event) error {
	src, err := p.source(ev)
	if err != nil {
		return err
	}
	switch p.opts.Format {
	case "", "wide":
		return p.addRow(ev, src)
	case "json":
		data, err := p.eventJSON(ev, src)
		if err != nil {
			return err
		}
		_, err = w.Write(append(data, '\n'))
		return err
	case "yaml":
		data, err := p.eventJSON(ev, src)
		if err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(data)
		if err != nil {
			return err
		}
		// kubectl's YAML printer separates documents, it does not open them.
		if p.yamlDocs > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		p.yamlDocs++
		_, err = w.Write(y)
		return err
	case "name":
		if p.opts.Contexts {
			if _, err := io.WriteString(w, ev.Context+"/"); err != nil {
				return err
			}
		}
		return p.delegate.PrintObj(Printable(ev.Object, src.GVK), w)
	}
	// jsonpath and templates apply to the event document, so they can read
	// its type.
	var buf bytes.Buffer
	if err := p.delegate.PrintObj(p.eventDocument(ev, src), &buf); err != nil {
		return err
	}
	// One line per event, whether or not the template ends with a newline.
	if buf.Len() > 0 && !bytes.HasSuffix(buf.Bytes(), []byte("\n")) {
		buf.WriteByte('\n')
	}
	_, err = w.Write(buf.Bytes())
	return err
}

func (p *EventPrinter) source(ev *feed.Event) (WatchSource, error) {
	if ev.Source < 0 || ev.Source >= len(p.opts.Sources) {
		return WatchSource{}, fmt.Errorf("event of unknown source %d", ev.Source)
	}
	return p.opts.Sources[ev.Source], nil
}

// eventDocument is ev as the feed's document.
func (p *EventPrinter) eventDocument(ev *feed.Event, src WatchSource) *v1alpha1.WatchEvent {
	doc := &v1alpha1.WatchEvent{
		Context:          ev.Context,
		Type:             string(ev.Type),
		Time:             ev.Time.UTC().Format(time.RFC3339Nano),
		DetectedOnRelist: ev.DetectedOnRelist,
		LeftScope:        ev.LeftScope,
		Gap:              ev.Gap,
		OldUnknown:       ev.OldUnknown,
		Object:           Printable(ev.Object, src.GVK),
	}
	if p.opts.Diff && ev.Type == feed.Modified && !ev.OldUnknown {
		changes := ev.Changes
		if changes == nil {
			changes = []v1alpha1.Change{}
		}
		doc.Diff = &changes
	}
	return doc
}

// eventJSON encodes ev as one line of JSON.
func (p *EventPrinter) eventJSON(ev *feed.Event, src WatchSource) ([]byte, error) {
	data, err := json.Marshal(p.eventDocument(ev, src))
	if err != nil {
		return nil, fmt.Errorf("encoding %s event of %s: %w", ev.Type, describe(ev.Object), err)
	}
	return data, nil
}

// addRow formats ev as a table row and holds it for Flush.
func (p *EventPrinter) addRow(ev *feed.Event, src WatchSource) error {
	m, err := meta.Accessor(ev.Object)
	if err != nil {
		return fmt.Errorf("printing %T: %w", ev.Object, err)
	}
	table, err := eventTable(ev.Object, src, p.opts.Now())
	if err != nil {
		return err
	}
	if owner := p.ownerOf(ev); owner != nil {
		table.Rows[0].Object.Object = ev.Object
		addOwnerColumn(table, owner)
	}
	wide := p.opts.Format == "wide"
	// The name is in NAME already: the kind's own name column (format
	// "name": first for most kinds, last and wide for events) is left out.
	nameCol := slices.IndexFunc(table.ColumnDefinitions, func(c metav1.TableColumnDefinition) bool { return c.Format == "name" })
	if !p.headed[ev.Source] {
		p.headed[ev.Source] = true
		if !p.opts.NoHeaders {
			header := append([]string(nil), p.prefix...)
			for i, col := range table.ColumnDefinitions {
				if i == nameCol || col.Priority != 0 && !wide {
					continue
				}
				header = append(header, strings.ToUpper(col.Name))
			}
			for _, l := range p.opts.ColumnLabels {
				parts := strings.Split(l, "/")
				header = append(header, strings.ToUpper(parts[len(parts)-1]))
			}
			if p.opts.ShowLabels {
				header = append(header, "LABELS")
			}
			p.pending = append(p.pending, pendingRow{source: ev.Source, cells: header, blank: len(p.headed) > 1})
		}
	}
	var cells []string
	if p.opts.Contexts {
		cells = append(cells, ev.Context)
	}
	cells = append(cells,
		ev.Time.In(p.opts.Location).Format("15:04:05"),
		string(ev.Type),
		src.GVK.Kind,
		m.GetNamespace(),
		m.GetName(),
	)
	if len(table.Rows) == 1 {
		// A server may send more cells than columns (IPAddress does);
		// kubectl prints one per column, as here.
		for i, cell := range table.Rows[0].Cells {
			if i == nameCol || i >= len(table.ColumnDefinitions) {
				continue
			}
			if table.ColumnDefinitions[i].Priority != 0 && !wide {
				continue
			}
			cells = append(cells, cellString(cell))
		}
	}
	for _, l := range p.opts.ColumnLabels {
		cells = append(cells, printers.EscapeTerminal(m.GetLabels()[l]))
	}
	if p.opts.ShowLabels {
		cells = append(cells, printers.EscapeTerminal(labels.FormatLabels(m.GetLabels())))
	}
	row := pendingRow{source: ev.Source, cells: cells}
	if ev.LeftScope {
		// DELETED alone would tell a reader of the table that the object is
		// gone; scripts read JSON, where "leftScope" says the same.
		scope := p.opts.Scope
		if scope == "" {
			scope = "--owner"
		}
		row.diff = append(row.diff, "    (left the "+scope+" scope; not deleted)")
	}
	if p.opts.Diff && ev.Type == feed.Modified {
		if ev.OldUnknown {
			row.diff = append(row.diff, oldUnknownNote)
		}
		for _, c := range ev.Changes {
			row.diff = append(row.diff, "    "+printers.EscapeTerminal(c.Path+": "+diffValue(c.Old, c.HasOld)+" → "+diffValue(c.New, c.HasNew)))
		}
	}
	p.pending = append(p.pending, row)
	return nil
}

// serverRow is an object that carries the API server's table row of itself
// (informer.Row, from a feed that watches tables).
type serverRow interface {
	TableRow() ([]metav1.TableColumnDefinition, []any)
}

// eventTable is the one-row table of an event's object: the server's row when
// the object carries it, else NAME and AGE.
func eventTable(obj runtime.Object, src WatchSource, now time.Time) (*metav1.Table, error) {
	if r, ok := obj.(serverRow); ok {
		columns, cells := r.TableRow()
		return &metav1.Table{ColumnDefinitions: columns, Rows: []metav1.TableRow{{Cells: cells}}}, nil
	}
	return TableFor(src.GVK.GroupKind(), []runtime.Object{obj}, now)
}

// oldUnknownNote follows, with --diff, the row of a MODIFIED whose state
// before is not known (feed.Event.OldUnknown).
const oldUnknownNote = "    (changed while the feed was stopped; the checkpoint keeps no state to compare with)"

// cellString renders a table cell as kubectl's table printer does: a string up
// to its first line break (then "..."), anything else with fmt, nil as nothing,
// terminal escapes neutralized.
func cellString(cell any) string {
	switch v := cell.(type) {
	case nil:
		return ""
	case string:
		if i := strings.IndexAny(v, "\f\n\r"); i >= 0 {
			return printers.EscapeTerminal(v[:i]) + "..."
		}
		return printers.EscapeTerminal(v)
	default:
		return printers.EscapeTerminal(fmt.Sprint(v))
	}
}

// maxDiffValue bounds a value shown in a table's diff line; JSON output has
// the whole value.
const maxDiffValue = 120

func diffValue(v any, present bool) string {
	if !present {
		return "<none>"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(data)
	if utf8.RuneCountInString(s) > maxDiffValue {
		s = string([]rune(s)[:maxDiffValue]) + "..."
	}
	return s
}

// Flush writes the table rows held since the last Flush, aligned with three
// spaces between columns as kubectl aligns them. Column widths only grow, so a
// row printed later lines up with those before it unless it is wider.
func (p *EventPrinter) Flush(w io.Writer) error {
	if len(p.pending) == 0 {
		return nil
	}
	for _, r := range p.pending {
		kw := p.kindWidths[r.source]
		for i, c := range r.cells {
			n := utf8.RuneCountInString(c)
			if i < len(p.prefixWidths) {
				p.prefixWidths[i] = max(p.prefixWidths[i], n)
				continue
			}
			j := i - len(p.prefixWidths)
			for len(kw) <= j {
				kw = append(kw, 0)
			}
			kw[j] = max(kw[j], n)
		}
		p.kindWidths[r.source] = kw
	}
	var b strings.Builder
	for _, r := range p.pending {
		b.Reset()
		if r.blank {
			b.WriteByte('\n')
		}
		kw := p.kindWidths[r.source]
		for i, c := range r.cells {
			b.WriteString(c)
			if i == len(r.cells)-1 {
				break
			}
			width := 0
			if i < len(p.prefixWidths) {
				width = p.prefixWidths[i]
			} else {
				width = kw[i-len(p.prefixWidths)]
			}
			b.WriteString(strings.Repeat(" ", width-utf8.RuneCountInString(c)+3))
		}
		b.WriteByte('\n')
		for _, d := range r.diff {
			b.WriteString(d)
			b.WriteByte('\n')
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			p.pending = p.pending[:0]
			return err
		}
	}
	clear(p.pending)
	p.pending = p.pending[:0]
	return nil
}

// ownerOf is the OWNER column's lookup for ev, nil without the column.
func (p *EventPrinter) ownerOf(ev *feed.Event) func(runtime.Object) string {
	if p.opts.Owner == nil {
		return nil
	}
	return p.opts.Owner(ev.Context)
}
