package printers

import (
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// PrintCacheStatus prints a running cache server's status for people: a few
// lines about the process, then a table of its informers, kubectl's way.
func PrintCacheStatus(w io.Writer, st *v1alpha1.CacheStatus, now time.Time) error {
	ago := func(t *metav1.Time) string {
		if t == nil || t.IsZero() {
			return "never"
		}
		return duration.HumanDuration(now.Sub(t.Time)) + " ago"
	}
	fmt.Fprintf(w, "Context:      %s\n", st.Context)
	fmt.Fprintf(w, "Server:       %s\n", st.Server)
	fmt.Fprintf(w, "Process:      %d, version %s, started %s\n", st.PID, st.Version, ago(st.Started))
	fmt.Fprintf(w, "Socket:       %s\n", st.Socket)
	fmt.Fprintf(w, "Idle timeout: %s (last command %s); unused informers dropped after %s\n", st.IdleTimeout, ago(st.LastRequest), st.DropAfter)
	if r := st.Requests; r != nil {
		fmt.Fprintf(w, "Commands:     %d answered, %d warmed, %d running; refused: %d from other users, %d handshakes\n", r.Served, r.Warmed, r.Running, r.RefusedPeers, r.RefusedHandshakes)
	}
	if m := st.Memory; m != nil {
		fmt.Fprintf(w, "Memory:       %s resident, %s Go heap", bytesText(m.RSS), bytesText(m.Heap))
		if m.EncodedObjects > 0 {
			fmt.Fprintf(w, " (%s of it the JSON of %d objects, kept compressed for -o json)", bytesText(m.EncodedBytes), m.EncodedObjects)
		}
		fmt.Fprintln(w)
	}
	if len(st.Informers) == 0 {
		_, err := fmt.Fprintln(w, "Informers:    none")
		return err
	}
	fmt.Fprintln(w)
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Resource"}, {Name: "Namespace"}, {Name: "Mode"}, {Name: "Selector"}, {Name: "Objects"},
		{Name: "Since"}, {Name: "Last Used"}, {Name: "In Use"}, {Name: "Resource Version"}, {Name: "Confirmed"}, {Name: "Watch"},
	}}
	for _, in := range st.Informers {
		ns := in.Namespace
		if ns == "" {
			ns = "<all>"
		}
		var sel []string
		for _, s := range []string{in.LabelSelector, in.FieldSelector} {
			if s != "" {
				sel = append(sel, s)
			}
		}
		selector := strings.Join(sel, ",")
		if selector == "" {
			selector = "<none>"
		}
		confirmed := "<none>"
		if c := in.Confirmed; c != nil {
			confirmed = fmt.Sprintf("%s (%s ago)", c.ResourceVersion, duration.HumanDuration(now.Sub(c.Time.Time)))
		}
		watch := "up"
		switch {
		case in.Failed != "":
			watch = "failed: " + in.Failed
		case in.WatchDown != nil:
			watch = fmt.Sprintf("down %s: %s", duration.HumanDuration(now.Sub(in.WatchDown.Since.Time)), in.WatchDown.Reason)
		case !in.Synced:
			watch = "listing"
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{
			in.Resource, ns, in.Mode, selector, fmt.Sprint(in.Objects),
			duration.HumanDuration(now.Sub(in.Since.Time)), duration.HumanDuration(now.Sub(in.LastUsed.Time)), fmt.Sprint(in.InUse),
			in.ResourceVersion, confirmed, watch,
		}})
	}
	return printOwnTable(w, table, false, false)
}

// bytesText words a byte count in binary units, as free -h does.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
