package printers

import (
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/events"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// EventsWatchOptions configure an EventsWatchPrinter.
type EventsWatchOptions struct {
	// Format is the -o value: "" and "wide" print kubectl events -w's table;
	// every other format prints what `kubectl idx watch events` would (see
	// EventPrinter).
	Format string
	// NoHeaders leaves out the table's header.
	NoHeaders bool
	// AllNamespaces adds a NAMESPACE column, as kubectl events -A does.
	AllNamespaces bool
	// Source is the feed's one resource, the core Event kind.
	Source WatchSource
}

// EventsWatchPrinter prints the feed of `kubectl idx events -w`. Humans get
// kubectl events -w's table: LAST SEEN, TYPE, REASON, OBJECT and MESSAGE, a
// row per event recorded or repeated, aligned per batch the feed delivers,
// and nothing for an event that expired (kubectl prints none either). Every
// other format is kubectl idx watch's, ADDED, MODIFIED and DELETED alike, so
// that a replay of the JSON lines holds exactly the events in scope. It is
// not safe for concurrent use.
type EventsWatchPrinter struct {
	opts  EventsWatchOptions
	feed  *EventPrinter
	table *events.EventPrinter
	// tw is kubectl's tab writer over out, flushed with each batch.
	tw  flushWriter
	out io.Writer
}

// flushWriter is a writer that holds output until Flush, as a tab writer does.
type flushWriter interface {
	io.Writer
	Flush() error
}

// NewEventsWatchPrinter returns a printer for opts; delegate is the printer
// cli-runtime's flags chose, for name, jsonpath and templates.
func NewEventsWatchPrinter(opts EventsWatchOptions, delegate printers.ResourcePrinter) *EventsWatchPrinter {
	p := &EventsWatchPrinter{opts: opts}
	if IsHuman(opts.Format) {
		p.table = events.NewEventPrinter(opts.NoHeaders, opts.AllNamespaces)
		return p
	}
	p.feed = NewEventPrinter(EventPrinterOptions{Format: opts.Format, NoHeaders: opts.NoHeaders, Sources: []WatchSource{opts.Source}}, delegate)
	return p
}

// Print prints ev to w, or for tables holds the row until Flush.
func (p *EventsWatchPrinter) Print(w io.Writer, ev *feed.Event) error {
	if p.feed != nil {
		return p.feed.Print(w, ev)
	}
	if ev.Type == feed.Deleted {
		return nil
	}
	e, ok := ev.Object.(*corev1.Event)
	if !ok {
		return fmt.Errorf("printing events: want *v1.Event, got %T", ev.Object)
	}
	if p.tw == nil || p.out != w {
		p.tw, p.out = printers.GetNewTabWriter(w), w
	}
	// kubectl's printer reads the event by value; the cache's copy stays as it
	// is.
	return p.table.PrintObj(e, p.tw)
}

// Flush writes what Print held.
func (p *EventsWatchPrinter) Flush(w io.Writer) error {
	if p.feed != nil {
		return p.feed.Flush(w)
	}
	if p.tw == nil {
		return nil
	}
	return p.tw.Flush()
}
