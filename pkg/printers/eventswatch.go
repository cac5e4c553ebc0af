package printers

import (
	"bytes"
	"fmt"
	"io"
	"strings"

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
	// Contexts marks a feed over several kubeconfig contexts: the table
	// starts with a CONTEXT column, every other format names the event's
	// context as EventPrinter does.
	Contexts bool
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
	// headed is set once the table's first line, its header, is written.
	headed bool
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
	p.feed = NewEventPrinter(EventPrinterOptions{Format: opts.Format, NoHeaders: opts.NoHeaders, Sources: []WatchSource{opts.Source}, Contexts: opts.Contexts}, delegate)
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
	if !p.opts.Contexts {
		return p.table.PrintObj(e, p.tw)
	}
	// Over several contexts each line after its context's name, the header's
	// after CONTEXT, as PrintEventTable prints them.
	var buf bytes.Buffer
	if err := p.table.PrintObj(e, &buf); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line == "" {
			continue
		}
		cell := ev.Context
		if !p.headed && !p.opts.NoHeaders {
			cell = "CONTEXT"
		}
		p.headed = true
		if _, err := io.WriteString(p.tw, cell+"\t"+line); err != nil {
			return err
		}
	}
	return nil
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
