package printers_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

var (
	watchNow      = time.Date(2025, 5, 14, 12, 0, 0, 0, time.UTC)
	podGVK        = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	deploymentGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	watchSources  = []printers.WatchSource{{GVK: podGVK}, {GVK: deploymentGVK}}
)

func watchPod(name, node string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "7", Labels: labels,
			CreationTimestamp: metav1.NewTime(watchNow.Add(-2 * time.Hour)),
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.244.1.7",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
}

func watchDeployment(name string, replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, ResourceVersion: "9", CreationTimestamp: metav1.NewTime(watchNow.Add(-48 * time.Hour))},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
		Status:     appsv1.DeploymentStatus{ReadyReplicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3},
	}
}

func at(sec int) time.Time { return watchNow.Add(time.Duration(sec) * time.Second) }

// watchEvents is a short feed: a snapshot of two pods and a Deployment, a scale-up with its
// diff, a pod deleted while the watch was down.
func watchEvents() []*feed.Event {
	web0 := watchPod("web-0", "worker-1", map[string]string{"app": "web"})
	web1 := watchPod("web-1-with-a-longer-name", "worker-2", map[string]string{"app": "web", "tier": "front"})
	d3, d5 := watchDeployment("web", 3), watchDeployment("web", 5)
	return []*feed.Event{
		{Type: feed.Added, Time: at(0), Source: 0, Object: web0},
		{Type: feed.Added, Time: at(0), Source: 0, Object: web1},
		{Type: feed.Added, Time: at(0), Source: 1, Object: d3},
		{Type: feed.Modified, Time: at(75), Source: 1, Object: d5, Old: d3, Changes: []feed.Change{
			{Path: ".spec.replicas", Old: int64(3), New: int64(5), HasOld: true, HasNew: true},
			{Path: ".metadata.labels.tier", New: "web", HasNew: true},
		}},
		{Type: feed.Deleted, Time: at(3600), Source: 0, Object: web0, DetectedOnRelist: true},
	}
}

// printWatch prints events with a Flush after each batch of sizes (all at once when none).
func printWatch(t *testing.T, opts printers.EventPrinterOptions, delegate cliprinters.ResourcePrinter, events []*feed.Event, batches ...int) string {
	t.Helper()
	opts.Sources = watchSources
	opts.Now = func() time.Time { return watchNow }
	opts.Location = time.UTC
	p := printers.NewEventPrinter(opts, delegate)
	var buf bytes.Buffer
	if len(batches) == 0 {
		batches = []int{len(events)}
	}
	i := 0
	for _, n := range batches {
		for ; n > 0 && i < len(events); n-- {
			if err := p.Print(&buf, events[i]); err != nil {
				t.Fatalf("Print: %v", err)
			}
			i++
		}
		if err := p.Flush(&buf); err != nil {
			t.Fatalf("Flush: %v", err)
		}
	}
	return buf.String()
}

func TestEventPrinterTables(t *testing.T) {
	tests := []struct {
		name    string
		opts    printers.EventPrinterOptions
		batches []int
		golden  string
	}{
		{name: "default", opts: printers.EventPrinterOptions{Diff: true}, golden: "testdata/watch_table.golden"},
		{name: "flushed event by event", opts: printers.EventPrinterOptions{Diff: true}, batches: []int{1, 1, 1, 1, 1}, golden: "testdata/watch_table_streamed.golden"},
		{name: "wide, labels, no headers, no diff", opts: printers.EventPrinterOptions{Format: "wide", NoHeaders: true, ShowLabels: true, ColumnLabels: []string{"app.kubernetes.io/tier", "tier"}}, golden: "testdata/watch_table_wide.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			events := rows(watchEvents())
			before := make([]runtime.Object, len(events))
			for i, ev := range events {
				before[i] = ev.Object.DeepCopyObject()
			}
			golden.Assert(t, tc.golden, printWatch(t, tc.opts, nil, events, tc.batches...))
			for i, ev := range events {
				if !cmp.Equal(before[i], ev.Object) {
					t.Errorf("event %d: the printer modified the cache object", i)
				}
			}
		})
	}
}

func TestEventPrinterJSON(t *testing.T) {
	out := printWatch(t, printers.EventPrinterOptions{Format: "json", Diff: true}, nil, watchEvents())
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want one per event:\n%s", len(lines), out)
	}
	type doc struct {
		Type             string           `json:"type"`
		Time             string           `json:"time"`
		DetectedOnRelist *bool            `json:"detectedOnRelist"`
		Diff             *json.RawMessage `json:"diff"`
		Object           struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"object"`
	}
	var docs []doc
	for _, l := range lines {
		var d doc
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("line is not JSON: %v\n%s", err, l)
		}
		docs = append(docs, d)
	}
	if !strings.HasPrefix(lines[0], `{"type":"ADDED","time":"2025-05-14T12:00:00Z","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0"`) {
		t.Errorf("first line starts %.120s", lines[0])
	}
	if d := docs[3]; d.Type != "MODIFIED" || d.Diff == nil || string(*d.Diff) != `[{"path":".spec.replicas","old":3,"new":5},{"path":".metadata.labels.tier","new":"web"}]` {
		t.Errorf("MODIFIED event: %s", lines[3])
	}
	if d := docs[3].Object; d.APIVersion != "apps/v1" || d.Kind != "Deployment" {
		t.Errorf("MODIFIED object is %s %s, want apps/v1 Deployment", d.APIVersion, d.Kind)
	}
	if d := docs[4]; d.Type != "DELETED" || d.DetectedOnRelist == nil || !*d.DetectedOnRelist || d.Time != "2025-05-14T13:00:00Z" {
		t.Errorf("DELETED event: %.200s", lines[4])
	}
	for i, d := range docs[:3] {
		if d.DetectedOnRelist != nil || d.Diff != nil {
			t.Errorf("event %d has fields that do not apply: %.200s", i, lines[i])
		}
	}
	// --diff with nothing shown changed is an empty list; without --diff there is no field.
	mod := &feed.Event{Type: feed.Modified, Time: watchNow, Object: watchPod("web-0", "", nil)}
	if out := printWatch(t, printers.EventPrinterOptions{Format: "json", Diff: true}, nil, []*feed.Event{mod}); !strings.Contains(out, `"diff":[]`) {
		t.Errorf("MODIFIED without changes under --diff: %s", out)
	}
	if out := printWatch(t, printers.EventPrinterOptions{Format: "json"}, nil, []*feed.Event{mod}); strings.Contains(out, `"diff"`) {
		t.Errorf("MODIFIED without --diff has a diff: %s", out)
	}
}

func TestEventPrinterYAML(t *testing.T) {
	out := printWatch(t, printers.EventPrinterOptions{Format: "yaml"}, nil, watchEvents()[:2])
	docs := strings.Split(out, "---\n")
	if len(docs) != 2 || strings.HasPrefix(out, "---") {
		t.Fatalf("want two documents separated by ---:\n%s", out)
	}
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		if m["type"] != "ADDED" || m["object"] == nil {
			t.Errorf("document %v lacks type or object", m)
		}
	}
}

func TestEventPrinterDelegates(t *testing.T) {
	name := genericclioptions.NewNamePrintFlags("")
	tmpl := genericclioptions.NewKubeTemplatePrintFlags()
	delegate := func(format, template string) cliprinters.ResourcePrinter {
		t.Helper()
		*tmpl.TemplateArgument = template
		if p, err := name.ToPrinter(format); err == nil {
			return p
		}
		p, err := tmpl.ToPrinter(format)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		format, template, want string
	}{
		{"name", "", "pod/web-0\npod/web-1-with-a-longer-name\ndeployment.apps/web\ndeployment.apps/web\npod/web-0\n"},
		// Templates apply to the event; each event is one line, newline or not.
		{"jsonpath", "{.type} {.object.kind}/{.object.metadata.name}", "ADDED Pod/web-0\nADDED Pod/web-1-with-a-longer-name\nADDED Deployment/web\nMODIFIED Deployment/web\nDELETED Pod/web-0\n"},
		{"jsonpath", `{.type}{"\n"}`, "ADDED\nADDED\nADDED\nMODIFIED\nDELETED\n"},
		{"go-template", "{{.type}} {{.object.metadata.name}} {{.detectedOnRelist}}", "ADDED web-0 <no value>\nADDED web-1-with-a-longer-name <no value>\nADDED web <no value>\nMODIFIED web <no value>\nDELETED web-0 true\n"},
	}
	for _, tc := range tests {
		t.Run(tc.format+" "+tc.template, func(t *testing.T) {
			got := printWatch(t, printers.EventPrinterOptions{Format: tc.format}, delegate(tc.format, tc.template), watchEvents())
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestEventPrinterUnknownSource(t *testing.T) {
	p := printers.NewEventPrinter(printers.EventPrinterOptions{Format: "json", Sources: watchSources}, nil)
	err := p.Print(&bytes.Buffer{}, &feed.Event{Type: feed.Added, Source: 7, Object: watchPod("a", "", nil)})
	if err == nil {
		t.Error("an event of an unknown source printed")
	}
}

// TestEventPrinterLeftScope: an object that left the --owner scope is a DELETED
// marked leftScope in JSON, and a DELETED row with a note in tables.
func TestEventPrinterLeftScope(t *testing.T) {
	web0 := watchPod("web-0", "worker-1", map[string]string{"app": "web"})
	events := []*feed.Event{
		{Type: feed.Added, Time: at(0), Source: 0, Object: web0},
		{Type: feed.Deleted, Time: at(60), Source: 0, Object: web0, LeftScope: true},
	}
	out := printWatch(t, printers.EventPrinterOptions{Format: "json"}, nil, events)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || strings.Contains(lines[0], "leftScope") ||
		!strings.HasPrefix(lines[1], `{"type":"DELETED","time":"2025-05-14T12:01:00Z","leftScope":true,"object":{`) {
		t.Errorf("JSON:\n%s", out)
	}
	golden.Assert(t, "testdata/watch_table_left_scope.golden", printWatch(t, printers.EventPrinterOptions{}, nil, rows(events)))
}

// TestEventPrinterServerRowShapes: the kind's name column is left out wherever
// it is (events print it last, as a wide column), and a row with more cells
// than columns (the server's IPAddress rows) prints one cell per column.
func TestEventPrinterServerRowShapes(t *testing.T) {
	pod := watchPod("web-0", "worker-1", nil)
	eventColumns := []metav1.TableColumnDefinition{
		{Name: "Last Seen", Type: "string"}, {Name: "Type", Type: "string"}, {Name: "Message", Type: "string"},
		{Name: "Count", Type: "integer", Priority: 1}, {Name: "Name", Type: "string", Format: "name", Priority: 1},
	}
	extra := []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name"}, {Name: "Parent", Type: "string"}}
	for _, tc := range []struct {
		format  string
		columns []metav1.TableColumnDefinition
		cells   []any
		want    string
	}{
		{"", eventColumns, []any{"5m", "Normal", "Pulled", int64(3), "web-0.123"}, "TIME EVENT KIND NAMESPACE NAME LAST SEEN TYPE MESSAGE|12:00:00 ADDED Pod shop web-0 5m Normal Pulled"},
		{"wide", eventColumns, []any{"5m", "Normal", "Pulled", int64(3), "web-0.123"}, "TIME EVENT KIND NAMESPACE NAME LAST SEEN TYPE MESSAGE COUNT|12:00:00 ADDED Pod shop web-0 5m Normal Pulled 3"},
		{"", extra, []any{"10.0.0.1", "services/default/kubernetes", "surplus"}, "TIME EVENT KIND NAMESPACE NAME PARENT|12:00:00 ADDED Pod shop web-0 services/default/kubernetes"},
	} {
		ev := &feed.Event{Type: feed.Added, Time: at(0), Source: 0, Object: &informer.Row{Object: pod, Columns: tc.columns, Cells: tc.cells}}
		out := printWatch(t, printers.EventPrinterOptions{Format: tc.format}, nil, []*feed.Event{ev})
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
		if got := strings.Join(lines, "|"); got != tc.want {
			t.Errorf("-o %q:\n%s\nwant %q", tc.format, out, tc.want)
		}
	}
}

// TestEventPrinterGapAndOldUnknown: a relist's events carry their gap in
// JSON; a MODIFIED whose state before is unknown has no diff in JSON and a
// note under its row in the table.
func TestEventPrinterGapAndOldUnknown(t *testing.T) {
	web0 := watchPod("web-0", "worker-1", map[string]string{"app": "web"})
	gap := &feed.Gap{From: "120", To: "480", Reason: "expired"}
	events := []*feed.Event{
		{Type: feed.Modified, Time: at(0), Source: 0, Object: web0, Gap: gap, OldUnknown: true},
		{Type: feed.Deleted, Time: at(0), Source: 0, Object: web0, Gap: gap, DetectedOnRelist: true},
	}
	out := printWatch(t, printers.EventPrinterOptions{Format: "json", Diff: true}, nil, events)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 ||
		!strings.HasPrefix(lines[0], `{"type":"MODIFIED","time":"2025-05-14T12:00:00Z","gap":{"from":"120","to":"480","reason":"expired"},"oldUnknown":true,"object":{`) ||
		!strings.HasPrefix(lines[1], `{"type":"DELETED","time":"2025-05-14T12:00:00Z","detectedOnRelist":true,"gap":{"from":"120","to":"480","reason":"expired"},"object":{`) {
		t.Errorf("JSON:\n%s", out)
	}
	table := printWatch(t, printers.EventPrinterOptions{Diff: true}, nil, rows(events[:1]))
	if !strings.Contains(table, "\n    (changed while the feed was stopped; the checkpoint keeps no state to compare with)\n") {
		t.Errorf("table:\n%s", table)
	}
}
