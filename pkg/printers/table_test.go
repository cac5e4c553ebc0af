package printers_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// TestTableFor: the fallback table, printed when the server's cannot be read,
// has NAME and AGE from metadata alone, in the objects' order, each row
// carrying its object; a nil object is an error, not a panic.
func TestTableFor(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	objs := []runtime.Object{
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", CreationTimestamp: metav1.NewTime(now.Add(-49 * time.Hour))}},
		&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "a", CreationTimestamp: metav1.NewTime(now.Add(-90 * time.Second))}},
		&metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "c"}},
	}
	table, err := printers.TableFor(schema.GroupKind{Kind: "Pod"}, objs, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range table.ColumnDefinitions {
		got = append(got, c.Name)
	}
	if strings.Join(got, ",") != "Name,Age" {
		t.Errorf("columns %q, want Name,Age", got)
	}
	want := [][]any{{"b", "2d1h"}, {"a", "90s"}, {"c", "<unknown>"}}
	for i, row := range table.Rows {
		if len(row.Cells) != 2 || row.Cells[0] != want[i][0] || row.Cells[1] != want[i][1] {
			t.Errorf("row %d = %v, want %v", i, row.Cells, want[i])
		}
		if row.Object.Object != objs[i] {
			t.Errorf("row %d does not carry its object", i)
		}
	}
	if _, err := printers.TableFor(schema.GroupKind{Kind: "Pod"}, []runtime.Object{(*corev1.Pod)(nil)}, now); err == nil {
		t.Error("a nil object gave no error")
	}
}
