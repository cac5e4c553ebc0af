package query

import (
	"bufio"
	"io"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// EventPrinter prints a feed's events (printers.EventPrinter,
// printers.EventsWatchPrinter).
type EventPrinter interface {
	Print(w io.Writer, ev *feed.Event) error
	Flush(w io.Writer) error
}

// PrintTo returns out printing the merged feeds to w, buffered, with the
// printer newPrinter makes once they are planned: its Start, Emit and Flush.
func (out FeedOutput) PrintTo(w io.Writer, newPrinter func(plans []FeedPlan, sources []schema.GroupVersionKind) (EventPrinter, error)) FeedOutput {
	buf := bufio.NewWriterSize(w, 64<<10)
	var p EventPrinter
	out.Start = func(plans []FeedPlan, sources []schema.GroupVersionKind) (err error) {
		p, err = newPrinter(plans, sources)
		return err
	}
	out.Emit = func(ev *feed.Event) error { return p.Print(buf, ev) }
	out.Flush = func() error {
		if err := p.Flush(buf); err != nil {
			return err
		}
		return buf.Flush()
	}
	return out
}
