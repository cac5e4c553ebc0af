package printers

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/events"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// PrintEventTable prints the events of one context or several
// (query.Session.EventList's listings) in kubectl events' table, oldest
// first: NAMESPACE too when the listing spans namespaces, as kubectl events
// -A prints it; over several contexts each context's rows after its name,
// CONTEXT first. It prints nothing when there are no events, and returns
// how many it printed.
func PrintEventTable(w io.Writer, answers []query.Answer[*query.Listing], noHeaders bool) (int, error) {
	return buffered(w, func(w io.Writer) (int, error) { return printEventTable(w, answers, noHeaders) })
}

func printEventTable(w io.Writer, answers []query.Answer[*query.Listing], noHeaders bool) (int, error) {
	tw := printers.GetNewTabWriter(w)
	headed := noHeaders
	n := 0
	for _, a := range answers {
		if a.Value == nil {
			continue
		}
		list := &corev1.EventList{}
		for _, m := range a.Value.Members {
			for _, o := range m.Objects {
				e, ok := o.(*corev1.Event)
				if !ok {
					return n, fmt.Errorf("printing events: want *v1.Event, got %T", o)
				}
				// kubectl's printer reads the event by value; the cache's
				// copy stays as it is.
				list.Items = append(list.Items, *e)
			}
		}
		if len(list.Items) == 0 {
			continue
		}
		n += len(list.Items)
		p := &events.EventPrinter{NoHeaders: headed, AllNamespaces: a.Value.Scope == ""}
		if a.Context == "" {
			if err := p.PrintObj(list, tw); err != nil {
				return n, err
			}
			continue
		}
		if err := printContextEvents(tw, p, list, a.Context, !headed); err != nil {
			return n, err
		}
		headed = true
	}
	return n, tw.Flush()
}

// printContextEvents prints obj with kubectl's event printer p, each line
// after context and a tab; header says the first line is the header, which
// comes after CONTEXT.
func printContextEvents(w io.Writer, p *events.EventPrinter, obj runtime.Object, context string, header bool) error {
	var buf bytes.Buffer
	if err := p.PrintObj(obj, &buf); err != nil {
		return err
	}
	for i, line := range strings.SplitAfter(buf.String(), "\n") {
		if line == "" {
			continue
		}
		cell := context
		if i == 0 && header {
			cell = "CONTEXT"
		}
		if _, err := io.WriteString(w, cell+"\t"+line); err != nil {
			return err
		}
	}
	return nil
}

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
	header := !p.headed && !p.opts.NoHeaders
	p.headed = true
	return printContextEvents(p.tw, p.table, e, ev.Context, header)
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
