package printers_test

import (
	"errors"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	cliprinters "k8s.io/cli-runtime/pkg/printers"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// The API server prints every table; these tests stand in for it with a few
// columns per kind, enough to exercise alignment, wide columns and escaping.
// The end-to-end tests compare the real servers' columns with kubectl's.

// testColumns and testCells are the stand-in server's table of one kind.
func testColumns(obj runtime.Object) []metav1.TableColumnDefinition {
	name := metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"}
	age := metav1.TableColumnDefinition{Name: "Age", Type: "date"}
	switch obj.(type) {
	case *corev1.Pod:
		return []metav1.TableColumnDefinition{name, {Name: "Ready", Type: "string"}, {Name: "Status", Type: "string"}, age, {Name: "Node", Type: "string", Priority: 1}}
	case *corev1.Service:
		return []metav1.TableColumnDefinition{name, {Name: "Type", Type: "string"}, {Name: "Cluster-IP", Type: "string"}, age}
	case *corev1.Event:
		return []metav1.TableColumnDefinition{name, {Name: "Reason", Type: "string"}, {Name: "Message", Type: "string"}, age}
	case *unstructured.Unstructured:
		return []metav1.TableColumnDefinition{name, {Name: "Spec", Type: "string"}, age}
	}
	return []metav1.TableColumnDefinition{name, age}
}

func testCells(obj runtime.Object) []any {
	m, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	age := duration.HumanDuration(outNow.Sub(m.GetCreationTimestamp().Time))
	switch o := obj.(type) {
	case *corev1.Pod:
		ready, status := printers.ObjectStatus(o, outNow)
		return []any{o.Name, ready, status, age, o.Spec.NodeName}
	case *corev1.Service:
		return []any{o.Name, string(o.Spec.Type), o.Spec.ClusterIP, age}
	case *corev1.Event:
		return []any{o.Name, o.Reason, o.Message, age}
	case *unstructured.Unstructured:
		spec, _, _ := unstructured.NestedString(o.Object, "spec", "cronSpec")
		return []any{o.GetName(), spec, age}
	}
	return []any{m.GetName(), age}
}

// testServerTable is the stand-in server's table of objs, all of one kind.
func testServerTable(objs []runtime.Object) *metav1.Table {
	if len(objs) == 0 {
		return nil
	}
	t := &metav1.Table{ColumnDefinitions: testColumns(objs[0])}
	for _, obj := range objs {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: testCells(obj), Object: runtime.RawExtension{Object: obj}})
	}
	return t
}

// group is one kind's objects of one context, with the table its server
// prints of them (nil: none), as the tests build them.
type group struct {
	GVK         schema.GroupVersionKind
	Namespaced  bool
	Context     string
	Objects     []runtime.Object
	ServerTable *metav1.Table
}

// split turns groups into the members and the tables printers.Print takes.
func split(groups []group) ([]v1alpha1.Members, printers.Tables) {
	members := make([]v1alpha1.Members, len(groups))
	tables := printers.Tables{}
	for i, g := range groups {
		members[i] = v1alpha1.Members{GVK: g.GVK, Namespaced: g.Namespaced, Context: g.Context, Objects: g.Objects}
		if g.ServerTable != nil {
			if tables[g.Context] == nil {
				tables[g.Context] = map[schema.GroupKind]*metav1.Table{}
			}
			tables[g.Context][g.GVK.GroupKind()] = g.ServerTable
		}
	}
	return members, tables
}

// printGroups is printers.Print of groups, one context's.
func printGroups(w io.Writer, groups []group, delegate cliprinters.ResourcePrinter, opts printers.Options) (int, error) {
	members, tables := split(groups)
	return printers.Print(w, members, tables, delegate, opts)
}

// tabled gives each group the stand-in server's table of its objects.
func tabled(groups []group) []group {
	out := make([]group, len(groups))
	for i, g := range groups {
		out[i] = g
		out[i].ServerTable = testServerTable(g.Objects)
	}
	return out
}

// ctxInfo is how one context of an answer over several went.
type ctxInfo struct {
	name     string
	warnings []string
	err      string
}

// answersOf are the listings of the contexts of infos, each holding its
// groups; a context with an error answered nothing.
func answersOf(groups []group, infos []ctxInfo) []query.Answer[*query.Listing] {
	var out []query.Answer[*query.Listing]
	for _, c := range infos {
		a := query.Answer[*query.Listing]{Context: c.name, Warnings: c.warnings}
		if c.err != "" {
			a.Err = errors.New(c.err)
			out = append(out, a)
			continue
		}
		a.Value = &query.Listing{}
		for _, g := range groups {
			if g.Context != c.name {
				continue
			}
			a.Value.Members = append(a.Value.Members, v1alpha1.Members{GVK: g.GVK, Namespaced: g.Namespaced, Objects: g.Objects})
			if g.ServerTable != nil {
				if a.Value.Tables == nil {
					a.Value.Tables = map[schema.GroupKind]*metav1.Table{}
				}
				a.Value.Tables[g.GVK.GroupKind()] = g.ServerTable
			}
		}
		out = append(out, a)
	}
	return out
}

// withTables is the stand-in server's tables of doc's kinds.
func withTables(doc *v1alpha1.GroupList) printers.Tables {
	byKind := map[schema.GroupKind][]runtime.Object{}
	for _, g := range doc.Groups {
		for _, m := range g.Members {
			byKind[m.GVK.GroupKind()] = append(byKind[m.GVK.GroupKind()], m.Objects...)
		}
	}
	tables := map[schema.GroupKind]*metav1.Table{}
	for gk, objs := range byKind {
		if t := testServerTable(objs); t != nil {
			tables[gk] = t
		}
	}
	return printers.Tables{"": tables}
}

// rows wraps each event's objects in the stand-in server's row of it, as a
// feed that watches tables delivers them (informer.Row).
func rows(events []*feed.Event) []*feed.Event {
	out := make([]*feed.Event, len(events))
	for i, ev := range events {
		c := *ev
		c.Object = &informer.Row{Object: ev.Object, Columns: testColumns(ev.Object), Cells: testCells(ev.Object)}
		out[i] = &c
	}
	return out
}
