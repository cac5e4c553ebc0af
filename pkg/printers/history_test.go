package printers_test

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

var historyT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func hTime(d time.Duration) metav1.Time { return metav1.NewTime(historyT0.Add(d)) }

func rawValue(s string) *runtime.RawExtension { return &runtime.RawExtension{Raw: []byte(s)} }

// historyDoc is a history of every kind of line: a gap, a rollout of two
// changes (one without a writer), a write whose time is not kept, an event.
func historyDoc() *v1alpha1.History {
	web := v1alpha1.HistoryObject{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	set := v1alpha1.FieldManager{Manager: "kubectl-set", Operation: "Update"}
	doc := v1alpha1.NewHistory(web)
	until := hTime(2 * time.Hour)
	doc.Entries = []v1alpha1.HistoryEntry{
		{Time: hTime(0), Until: &until, Object: web, Source: v1alpha1.SourceManagedFields, Action: "Written",
			Managers: []v1alpha1.FieldManager{{Manager: "kubectl", Operation: "Update", Subresource: "scale"}},
			Changes:  []v1alpha1.HistoryChange{{Path: ".spec.replicas", New: rawValue("4"), OldUnknown: true}}},
		{Time: hTime(10 * time.Minute), Object: web, Source: v1alpha1.SourceRevision, Action: "Rollout",
			Revision: &v1alpha1.HistoryRevision{Number: 2, Previous: 1}, Managers: []v1alpha1.FieldManager{set},
			Changes: []v1alpha1.HistoryChange{
				{Path: `.spec.template.metadata.labels.app\.kubernetes\.io/version`, Old: rawValue(`"1"`), New: rawValue(`"2"`)},
				{Path: `.spec.template.spec.containers[?(@.name=="web")].ports[?(@.containerPort==8080)]`, New: rawValue(`{"containerPort":8080}`), Managers: []v1alpha1.FieldManager{set}},
				{Path: `.spec.template.spec.containers[?(@.name=="web")].args`, Old: rawValue(`["--a-very-long-argument-that-goes-on","--and-on-and-on-until-the-cell-is-cut"]`)},
			},
			Note: "some fields were changed again by a later revision: who set them here is no longer kept"},
		{Time: hTime(11 * time.Minute), Object: v1alpha1.HistoryObject{Kind: "ReplicaSet", Name: "web-2"}, Source: v1alpha1.SourceEvent, Action: "FailedCreate",
			Event: &v1alpha1.HistoryEvent{Type: "Warning", Reason: "FailedCreate", Message: "quota", Count: 3, Reporter: "replicaset-controller"}},
	}
	doc.Gaps = []v1alpha1.HistoryGap{{From: hTime(-time.Hour), To: hTime(0), Reason: "no source covers this stretch: x"}}
	return doc
}

// TestPrintHistoryTable: a row per change, the entry's time, object and
// source on its first; each change beside its own writers; paths short,
// values cut; the gap first, by its start.
func TestPrintHistoryTable(t *testing.T) {
	var b strings.Builder
	if err := printers.PrintHistory(&b, historyDoc(), nil, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	want := `TIME                   OBJECT             SOURCE          WHO                      CHANGE
2026-03-01T09:00:00Z                      gap                                      nothing known until 2026-03-01T10:00:00Z: no source covers this stretch: x
2026-03-01T10:00:00Z   deployment/web     managedFields   kubectl (Update scale)   between then and 2026-03-01T12:00:00Z: .spec.replicas = 4
2026-03-01T10:10:00Z   deployment/web     revision 2                               .spec.template.metadata.labels.app.kubernetes.io/version: "1" -> "2"
                                                          kubectl-set (Update)     .spec.template.spec.containers[name=web].ports[containerPort=8080]: added {"containerPort":8080}
                                                                                   .spec.template.spec.containers[name=web].args: removed, was ["--a-very-long-argument-that-goes-on","--and-on-and-on-unti...
                                                                                   (some fields were changed again by a later revision: who set them here is no longer kept)
2026-03-01T10:11:00Z   replicaset/web-2   event           replicaset-controller    Warning FailedCreate: quota (x3)
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	if err := printers.PrintHistory(&b, historyDoc(), nil, printers.Options{Format: "name"}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "deployment.apps/web\nreplicaset/web-2\n" {
		t.Errorf("-o name: %q", b.String())
	}
}

// TestPrintHistoryContexts: over several contexts, one table with a CONTEXT
// column, and -o json a v1 List of the histories, each with its context.
func TestPrintHistoryContexts(t *testing.T) {
	answers := []query.Answer[*v1alpha1.History]{{Context: "a", Value: historyDoc()}, {Context: "b", Value: historyDoc()}}
	var b strings.Builder
	if _, err := printers.PrintDocuments(&b, answers, nil, printers.Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[0], "CONTEXT   TIME ") || !strings.HasPrefix(lines[1], "a         2026-03-01T09:00:00Z") || !strings.Contains(b.String(), "\nb         2026-03-01T10:11:00Z") {
		t.Errorf("table over two contexts:\n%s", b.String())
	}
	b.Reset()
	p, err := genericclioptions.NewPrintFlags("").WithTypeSetter(v1alpha1.Scheme).WithDefaultOutput("json").ToPrinter()
	if err != nil {
		t.Fatal(err)
	}
	answers = []query.Answer[*v1alpha1.History]{{Context: "a", Value: historyDoc()}, {Context: "b", Value: historyDoc()}}
	if _, err := printers.PrintDocuments(&b, answers, p, printers.Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind": "List"`, `"context": "a"`, `"context": "b"`, `"kind": "History"`, `"oldUnknown": true`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("-o json lacks %s:\n%s", want, b.String())
		}
	}
}
