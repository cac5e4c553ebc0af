package printers

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
)

// printOwnTable prints a table kubectl-idx builds itself (a tree, a relation
// list, several contexts' documents), laid out as kubectl lays out tables: upper-case
// headers, columns three spaces apart, priority columns only when wide, a cell
// cut at its first line break with "..." and terminal escapes made harmless.
//
// cli-runtime's TablePrinter is not used for these: since v0.37 it pads the
// header to each column's widest cell counted in bytes while the tabwriter
// counts runes, so a column of tree branches (├─, three bytes a rune) came out
// two spaces wider per branch rune than its widest cell. The server's tables
// keep cli-runtime's printer, so that they match kubectl byte for byte.
func printOwnTable(w io.Writer, table *metav1.Table, noHeaders, wide bool) error {
	if len(table.Rows) == 0 && !noHeaders {
		return nil
	}
	// The tab writer writes cell by cell: one write of the whole table.
	bw := bufio.NewWriter(w)
	tw := printers.GetNewTabWriter(bw)
	visible := func(i int) bool { return wide || table.ColumnDefinitions[i].Priority == 0 }
	if !noHeaders {
		var names []string
		for i, c := range table.ColumnDefinitions {
			if visible(i) {
				names = append(names, strings.ToUpper(c.Name))
			}
		}
		fmt.Fprintln(tw, strings.Join(names, "\t"))
	}
	for _, row := range table.Rows {
		first := true
		for i, cell := range row.Cells {
			if i >= len(table.ColumnDefinitions) {
				break
			}
			if !visible(i) {
				continue
			}
			if !first {
				fmt.Fprint(tw, "\t")
			}
			first = false
			if cell == nil {
				continue
			}
			s, ok := cell.(string)
			if !ok {
				s = fmt.Sprint(cell)
			}
			if cut := strings.IndexAny(s, "\f\n\r"); cut >= 0 {
				s = s[:cut] + "..."
			}
			if err := printers.WriteEscaped(tw, s); err != nil {
				return err
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}
