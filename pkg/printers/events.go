package printers

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/events"

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
		var buf bytes.Buffer
		if err := p.PrintObj(list, &buf); err != nil {
			return n, err
		}
		for i, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			cell := a.Context
			if i == 0 && !headed {
				cell = "CONTEXT"
			}
			fmt.Fprintf(tw, "%s\t%s\n", cell, line)
		}
		headed = true
	}
	return n, tw.Flush()
}
