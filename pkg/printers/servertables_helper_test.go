package printers_test

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
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

// tabled gives each group the stand-in server's table of its objects.
func tabled(groups []printers.Group) []printers.Group {
	out := make([]printers.Group, len(groups))
	for i, g := range groups {
		out[i] = g
		out[i].ServerTable = testServerTable(g.Objects)
	}
	return out
}

// withTables adds the stand-in server's tables of doc's kinds to opts.
func withTables(opts printers.GroupedOptions, doc *v1alpha1.GroupList) printers.GroupedOptions {
	byKind := map[schema.GroupKind][]runtime.Object{}
	for _, g := range doc.Groups {
		for _, m := range g.Members {
			byKind[m.GVK.GroupKind()] = append(byKind[m.GVK.GroupKind()], m.Objects...)
		}
	}
	opts.ServerTables = map[schema.GroupKind]*metav1.Table{}
	for gk, objs := range byKind {
		if t := testServerTable(objs); t != nil {
			opts.ServerTables[gk] = t
		}
	}
	return opts
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
