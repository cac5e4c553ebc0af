package printers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

var outEventGVK = schema.GroupVersionKind{Version: "v1", Kind: "Event"}

// groupedHeader is a stand-in for the command layer's header line: the group's
// name and its member count.
func groupedHeader(g *v1alpha1.Group) string {
	return fmt.Sprintf("%s  (%d members)", g.Name, g.Summary.Members)
}

func strPtr(s string) *string { return &s }

// pendingPod is an unscheduled pod.
func pendingPod(name string) *corev1.Pod {
	p := outPod(name, "")
	p.Status = corev1.PodStatus{Phase: corev1.PodPending}
	return p
}

// podGroup is a group of pods, summarized as the command layer would.
func podGroup(name string, key v1alpha1.GroupKey, pods ...runtime.Object) v1alpha1.Group {
	g := v1alpha1.Group{Name: name, Key: key, Summary: v1alpha1.GroupSummary{Members: len(pods), Kinds: map[string]int{}}}
	if len(pods) > 0 {
		g.Members = []v1alpha1.Members{{GVK: outPodGVK, Namespaced: true, Objects: pods}}
		g.Summary.Kinds["Pod"] = len(pods)
		g.Summary.Pods = &v1alpha1.PodSummary{Total: len(pods), Ready: len(pods), Running: len(pods)}
	}
	return g
}

// nodeDoc is a --by-node answer of one type: two nodes with pods of names of
// very different lengths, a node without pods and the unscheduled pods.
func nodeDoc() *v1alpha1.GroupList {
	return &v1alpha1.GroupList{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: "node",
		Groups: []v1alpha1.Group{
			podGroup("worker-1", v1alpha1.GroupKey{Node: "worker-1"}, outPod("a", "worker-1"), outPod("web-0", "worker-1")),
			podGroup("worker-2", v1alpha1.GroupKey{Node: "worker-2"}, outPod("a-pod-with-a-rather-long-generated-name-x2x", "worker-2")),
			podGroup("worker-3", v1alpha1.GroupKey{Node: "worker-3"}),
			podGroup("<none>", v1alpha1.GroupKey{None: true}, pendingPod("queued")),
		},
	}
}

// labelDoc is a --by-label app answer over pods, services and a custom
// resource: several types per group, a group with one type, and <none>.
func labelDoc() *v1alpha1.GroupList {
	web := v1alpha1.Group{
		Name: "app=web", Key: v1alpha1.GroupKey{Value: strPtr("web")},
		Summary: v1alpha1.GroupSummary{Members: 3, Kinds: map[string]int{"Pod": 2, "Service": 1}, Pods: &v1alpha1.PodSummary{Total: 2, Ready: 2, Running: 2}},
		Members: []v1alpha1.Members{
			{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{outPod("web-0", "worker-1"), outPod("web-1", "worker-2")}},
			{GVK: outServiceGVK, Namespaced: true, Objects: []runtime.Object{outService("web")}},
		},
	}
	empty := v1alpha1.Group{
		Name: "app=", Key: v1alpha1.GroupKey{Value: strPtr("")},
		Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Service": 1}},
		Members: []v1alpha1.Members{{GVK: outServiceGVK, Namespaced: true, Objects: []runtime.Object{outService("a-service-with-a-long-name")}}},
	}
	none := v1alpha1.Group{
		Name: "<none>", Key: v1alpha1.GroupKey{None: true},
		Summary: v1alpha1.GroupSummary{Members: 2, Kinds: map[string]int{"Pod": 1, "CronTab": 1}, Pods: &v1alpha1.PodSummary{Total: 1, Ready: 1, Running: 1}},
		Members: []v1alpha1.Members{
			{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{outTrickyPod()}},
			{GVK: outCronTabGVK, Namespaced: true, Objects: []runtime.Object{outCronTab("nightly")}},
		},
	}
	return &v1alpha1.GroupList{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: "label", Expression: "app",
		Groups: []v1alpha1.Group{web, empty, none},
	}
}

// ownerDoc is a --by-owner answer with every kind of owner key and a warning.
func ownerDoc() *v1alpha1.GroupList {
	return &v1alpha1.GroupList{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: "owner",
		Groups: []v1alpha1.Group{
			podGroup("Deployment/web", v1alpha1.GroupKey{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "d-uid"},
				outPod("web-0", "worker-1"), outPod("web-1", "worker-2")),
			podGroup("Node/worker-1", v1alpha1.GroupKey{APIVersion: "v1", Kind: "Node", Name: "worker-1", UID: "n-uid"}, outPod("static-worker-1", "worker-1")),
			podGroup("ReplicaSet/gone", v1alpha1.GroupKey{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "gone", UID: "rs-uid", Dangling: true, Reason: "owner not found"},
				outPod("gone-abc", "worker-1")),
			podGroup("<none>", v1alpha1.GroupKey{None: true}, outPod("debug", "worker-1")),
		},
		AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{"owners above Widget.example.com are unknown: forbidden"}},
	}
}

// outPrinterFlags is outPrinter with --no-headers, which the custom-columns
// printer reads itself.
func outPrinterFlags(t *testing.T, format, template string, noHeaders bool) cliprinters.ResourcePrinter {
	t.Helper()
	pf := get.NewGetPrintFlags()
	*pf.OutputFormat = format
	*pf.TemplateFlags.TemplateArgument = template
	*pf.NoHeaders = noHeaders
	p, err := pf.ToPrinter()
	if err != nil {
		t.Fatalf("ToPrinter(%q): %v", format, err)
	}
	return p
}

func groupedOpts(format string) printers.GroupedOptions {
	return printers.GroupedOptions{Options: printers.Options{Format: format, Now: outNow}, Header: groupedHeader}
}

func printGrouped(t *testing.T, doc *v1alpha1.GroupList, format, template string, opts printers.GroupedOptions) string {
	t.Helper()
	var out bytes.Buffer
	if err := printers.PrintGrouped(&out, doc, withTables(doc), outPrinter(t, format, template), opts); err != nil {
		t.Fatalf("PrintGrouped -o %s: %v", format, err)
	}
	return out.String()
}

// groupedLines splits human output into column header lines, group header
// lines (not indented) and member rows (indented by two), remembering which
// group each row is under.
type groupedLines struct {
	headers []string            // indented column header lines, in order
	groups  []string            // group header lines, in order
	rows    map[string][]string // group header line -> member rows (without indent)
}

func splitGrouped(t *testing.T, out string, isHeader func(line string) bool) groupedLines {
	t.Helper()
	gl := groupedLines{rows: map[string][]string{}}
	current := ""
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "  ") && isHeader(strings.TrimPrefix(line, "  ")):
			gl.headers = append(gl.headers, strings.TrimPrefix(line, "  "))
		case strings.HasPrefix(line, "  "):
			if current == "" {
				t.Fatalf("member row %q before any group header:\n%s", line, out)
			}
			gl.rows[current] = append(gl.rows[current], strings.TrimPrefix(line, "  "))
		default:
			current = line
			gl.groups = append(gl.groups, line)
		}
	}
	return gl
}

var columnStart = regexp.MustCompile(`\S+(?: \S+)*`)

// assertAligned checks that every row starts each of header's columns at the
// same offset: a non-space right after a space.
// Offsets count characters, as the tabwriter pads them, not bytes.
func assertAligned(t *testing.T, header string, rows []string) {
	t.Helper()
	var starts []int
	for _, span := range columnStart.FindAllStringIndex(header, -1) {
		starts = append(starts, span[0]) // the header is ASCII
	}
	if len(starts) < 2 {
		t.Fatalf("header %q has fewer than two columns", header)
	}
	for _, line := range rows {
		row := []rune(line)
		for i, s := range starts[1:] {
			if s >= len(row) || row[s-1] != ' ' || row[s] == ' ' {
				t.Errorf("row %q does not start column %d (%q) at offset %d like the header %q", line, i+1, columnStart.FindAllString(header, -1)[i+1], s, header)
				break
			}
		}
	}
}

func isPodHeader(line string) bool {
	return strings.HasPrefix(line, "NAME ") && strings.Contains(line, "READY")
}
func isServiceHeader(line string) bool {
	return strings.HasPrefix(line, "NAME ") && strings.Contains(line, "CLUSTER-IP")
}
func isAnyHeader(line string) bool {
	return strings.HasPrefix(line, "NAME ") || strings.HasPrefix(line, "NAMESPACE ")
}

func TestPrintGroupedHumanOneType(t *testing.T) {
	out := printGrouped(t, nodeDoc(), "", "", groupedOpts(""))
	golden.Assert(t, "testdata/grouped_one_type.golden", out)

	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "  NAME ") {
		t.Errorf("first line %q is not the column header: one type prints its header once, on top", lines[0])
	}
	gl := splitGrouped(t, out, isPodHeader)
	if len(gl.headers) != 1 {
		t.Errorf("%d column header lines, want 1 on top:\n%s", len(gl.headers), out)
	}
	wantGroups := []string{"worker-1  (2 members)", "worker-2  (1 members)", "worker-3  (0 members)", "<none>  (1 members)"}
	if !reflect.DeepEqual(gl.groups, wantGroups) {
		t.Errorf("group header lines %q, want %q", gl.groups, wantGroups)
	}
	wantMembers := map[string][]string{
		"worker-1  (2 members)": {"a", "web-0"},
		"worker-2  (1 members)": {"a-pod-with-a-rather-long-generated-name-x2x"},
		"<none>  (1 members)":   {"queued"},
	}
	for group, names := range wantMembers {
		var got []string
		for _, row := range gl.rows[group] {
			got = append(got, strings.Fields(row)[0])
		}
		if !reflect.DeepEqual(got, names) {
			t.Errorf("members under %q: %q, want %q", group, got, names)
		}
	}
	if rows := gl.rows["worker-3  (0 members)"]; len(rows) != 0 {
		t.Errorf("an empty group has rows: %q", rows)
	}
	if strings.Contains(out, "\n\n") {
		t.Errorf("one type needs no blank lines between groups:\n%s", out)
	}
	var all []string
	for _, rows := range gl.rows {
		all = append(all, rows...)
	}
	assertAligned(t, gl.headers[0], all)
}

func TestPrintGroupedHumanSeveralTypes(t *testing.T) {
	for _, tc := range []struct {
		name, golden  string
		withNamespace bool
	}{
		{"one namespace", "testdata/grouped_several_types.golden", false},
		{"all namespaces", "testdata/grouped_several_types_all_namespaces.golden", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := groupedOpts("")
			opts.WithNamespace = tc.withNamespace
			out := printGrouped(t, labelDoc(), "", "", opts)
			golden.Assert(t, tc.golden, out)

			if strings.HasPrefix(out, "  ") {
				t.Errorf("several types start with a group header, not a column header:\n%s", out)
			}
			gl := splitGrouped(t, out, isAnyHeader)
			wantGroups := []string{"app=web  (3 members)", "app=  (1 members)", "<none>  (2 members)"}
			if !reflect.DeepEqual(gl.groups, wantGroups) {
				t.Errorf("group header lines %q, want %q", gl.groups, wantGroups)
			}
			// A type's header line is the same in every group it appears
			// in, and all its rows align with it across groups.
			byType := map[string]string{}
			rowsByType := map[string][]string{}
			for _, h := range gl.headers {
				kind := "pod"
				switch {
				case strings.Contains(h, "CLUSTER-IP"):
					kind = "service"
				case strings.Contains(h, "SCHEDULE") || !strings.Contains(h, "READY"):
					kind = "crontab"
				}
				if prev, ok := byType[kind]; ok && prev != h {
					t.Errorf("%s header differs between groups:\n%q\n%q", kind, prev, h)
				}
				byType[kind] = h
			}
			if len(byType) != 3 {
				t.Errorf("column headers for %d types, want 3 (pods, services, crontabs): %q", len(byType), gl.headers)
			}
			for _, rows := range gl.rows {
				for _, row := range rows {
					name := strings.Fields(row)[0]
					if tc.withNamespace {
						name = strings.Fields(row)[1]
					}
					kind, _, ok := strings.Cut(name, "/")
					if !ok {
						t.Errorf("row %q has no kind prefix though the answer has several types", row)
						continue
					}
					kind, _, _ = strings.Cut(kind, ".")
					rowsByType[kind] = append(rowsByType[kind], row)
				}
			}
			for kind, rows := range rowsByType {
				assertAligned(t, byType[kind], rows)
			}
			if len(rowsByType["pod"]) != 3 || len(rowsByType["service"]) != 2 || len(rowsByType["crontab"]) != 1 {
				t.Errorf("rows per type: %d pods, %d services, %d crontabs; want 3, 2, 1", len(rowsByType["pod"]), len(rowsByType["service"]), len(rowsByType["crontab"]))
			}
		})
	}
}

func TestPrintGroupedNoHeaders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		doc    *v1alpha1.GroupList
		golden string
	}{
		{"one type", nodeDoc(), "testdata/grouped_one_type_no_headers.golden"},
		{"several types", labelDoc(), "testdata/grouped_several_types_no_headers.golden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := groupedOpts("")
			opts.NoHeaders = true
			out := printGrouped(t, tc.doc, "", "", opts)
			golden.Assert(t, tc.golden, out)
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "  NAME ") {
					t.Errorf("--no-headers printed a column header %q", line)
				}
			}
			gl := splitGrouped(t, out, func(string) bool { return false })
			if len(gl.groups) != len(tc.doc.Groups) {
				t.Errorf("%d group header lines, want %d (--no-headers drops column headers only)", len(gl.groups), len(tc.doc.Groups))
			}
		})
	}
}

// nodeDocRows are nodeDoc's groups and members in custom columns, without
// the header.
const nodeDocRows = "worker-1  (2 members)\n" +
	"  a                                             worker-1\n" +
	"  web-0                                         worker-1\n" +
	"worker-2  (1 members)\n" +
	"  a-pod-with-a-rather-long-generated-name-x2x   worker-2\n" +
	"worker-3  (0 members)\n" +
	"<none>  (1 members)\n" +
	"  queued                                        <none>\n"

func TestPrintGroupedCustomColumns(t *testing.T) {
	const spec = "NAME:.metadata.name,NODE:.spec.nodeName"
	for _, tc := range []struct {
		name      string
		noHeaders bool
		doc       *v1alpha1.GroupList
		want      string
	}{
		{
			name: "one type", doc: nodeDoc(),
			want: "  NAME                                          NODE\n" + nodeDocRows,
		},
		{
			name: "one type, no headers", noHeaders: true, doc: nodeDoc(),
			want: nodeDocRows,
		},
		{
			// Custom columns are one table for every type, as kubectl
			// prints them: one header on top.
			name: "several types", doc: labelDoc(),
			want: "  NAME                         NODE\n" +
				"app=web  (3 members)\n" +
				"  web-0                        worker-1\n" +
				"  web-1                        worker-2\n" +
				"  web                          <none>\n" +
				"app=  (1 members)\n" +
				"  a-service-with-a-long-name   <none>\n" +
				"<none>  (2 members)\n" +
				"  web-ünï                      worker-2\n" +
				"  nightly                      <none>\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pf := outPrinterFlags(t, "custom-columns", spec, tc.noHeaders)
			opts := groupedOpts("custom-columns")
			opts.NoHeaders = tc.noHeaders
			var out bytes.Buffer
			if err := printers.PrintGrouped(&out, tc.doc, withTables(tc.doc), pf, opts); err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestPrintGroupedNames(t *testing.T) {
	got := printGrouped(t, labelDoc(), "name", "", groupedOpts("name"))
	want := "app=web pod/web-0\n" +
		"app=web pod/web-1\n" +
		"app=web service/web\n" +
		"app= service/a-service-with-a-long-name\n" +
		"<none> pod/web-ünï\n" +
		"<none> crontab.stable.example.com/nightly\n"
	if got != want {
		t.Errorf("-o name:\n%s\nwant:\n%s", got, want)
	}
	got = printGrouped(t, ownerDoc(), "name", "", groupedOpts("name"))
	want = "Deployment/web pod/web-0\n" +
		"Deployment/web pod/web-1\n" +
		"Node/worker-1 pod/static-worker-1\n" +
		"ReplicaSet/gone pod/gone-abc\n" +
		"<none> pod/debug\n"
	if got != want {
		t.Errorf("-o name:\n%s\nwant:\n%s", got, want)
	}
	if got := printGrouped(t, &v1alpha1.GroupList{GroupBy: "node"}, "name", "", groupedOpts("name")); got != "" {
		t.Errorf("-o name of no groups = %q, want nothing", got)
	}
}

// jsonGroupList is the README's GroupList shape, decoded.
type jsonGroupList struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	GroupBy    v1alpha1.GroupMode `json:"groupBy"`
	Expression *string            `json:"expression"`
	Groups     []struct {
		Name    string           `json:"name"`
		Key     map[string]any   `json:"key"`
		Summary map[string]any   `json:"summary"`
		Items   []map[string]any `json:"items"`
	} `json:"groups"`
	Warnings []string `json:"warnings"`
}

// decodeStrict decodes out as exactly one JSON object with only the README's
// top-level fields.
func decodeStrict(t *testing.T, out string) (jsonGroupList, map[string]any) {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	for k := range raw {
		switch k {
		case "apiVersion", "kind", "groupBy", "expression", "groups", "warnings":
		default:
			t.Errorf("unexpected top-level field %q", k)
		}
	}
	var doc jsonGroupList
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc, raw
}

// printedJSON is obj as -o json prints a single object: a copy with
// apiVersion and kind set, decoded to plain values.
func printedJSON(t *testing.T, obj runtime.Object, gvk schema.GroupVersionKind) map[string]any {
	t.Helper()
	data, err := json.Marshal(printers.Printable(obj, gvk))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPrintGroupedJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  func() *v1alpha1.GroupList
	}{
		{"node", nodeDoc},
		{"label", labelDoc},
		{"owner", ownerDoc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.doc()
			out := printGrouped(t, in, "json", "", groupedOpts("json"))
			doc, raw := decodeStrict(t, out)

			// kubectl's layout: four-space indent, a final newline.
			var indented bytes.Buffer
			if err := json.Indent(&indented, []byte(out), "", "    "); err != nil {
				t.Fatal(err)
			}
			// json.Indent keeps the trailing newline.
			if indented.String() != out || !strings.HasSuffix(out, "}\n") {
				t.Errorf("output is not indented with four spaces as kubectl indents:\n%s", out)
			}

			if doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Kind != "GroupList" || doc.GroupBy != in.GroupBy {
				t.Errorf("apiVersion %q, kind %q, groupBy %q; want kubectl-idx.io/v1alpha1, GroupList, %q", doc.APIVersion, doc.Kind, doc.GroupBy, in.GroupBy)
			}
			switch {
			case in.Expression == "" && doc.Expression != nil:
				t.Errorf("expression %q printed for a grouping without one", *doc.Expression)
			case in.Expression != "" && (doc.Expression == nil || *doc.Expression != in.Expression):
				t.Errorf("expression = %v, want %q", doc.Expression, in.Expression)
			}
			if w, ok := raw["warnings"].([]any); !ok {
				t.Errorf("warnings = %#v, want an array", raw["warnings"])
			} else if len(w) != len(in.Warnings) {
				t.Errorf("warnings = %q, want %q", w, in.Warnings)
			}
			if len(doc.Groups) != len(in.Groups) {
				t.Fatalf("%d groups, want %d", len(doc.Groups), len(in.Groups))
			}
			for i, g := range doc.Groups {
				want := in.Groups[i]
				if g.Name != want.Name {
					t.Errorf("group %d is named %q, want %q", i, g.Name, want.Name)
				}
				var wantKey, wantSummary map[string]any
				roundTrip(t, want.Key, &wantKey)
				roundTrip(t, want.Summary, &wantSummary)
				if !reflect.DeepEqual(g.Key, wantKey) {
					t.Errorf("group %s key = %v, want %v", g.Name, g.Key, wantKey)
				}
				if !reflect.DeepEqual(g.Summary, wantSummary) {
					t.Errorf("group %s summary = %v, want %v", g.Name, g.Summary, wantSummary)
				}
				if g.Items == nil {
					t.Errorf("group %s has no items array (want [] when empty)", g.Name)
				}
				var wantItems []map[string]any
				for _, m := range want.Members {
					for _, o := range m.Objects {
						wantItems = append(wantItems, printedJSON(t, o, m.GVK))
					}
				}
				if len(g.Items) != len(wantItems) {
					t.Errorf("group %s has %d items, want %d", g.Name, len(g.Items), len(wantItems))
					continue
				}
				for j := range wantItems {
					if !reflect.DeepEqual(g.Items[j], wantItems[j]) {
						t.Errorf("group %s item %d differs from the object as -o json prints it:\n%v\nwant\n%v", g.Name, j, g.Items[j], wantItems[j])
					}
					if g.Items[j]["apiVersion"] == nil || g.Items[j]["kind"] == nil {
						t.Errorf("group %s item %d lacks apiVersion or kind", g.Name, j)
					}
				}
			}
		})
	}
}

func roundTrip(t *testing.T, in, out any) {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
}

// TestPrintGroupedJSONKeys pins the key shapes the README documents, which
// jq recipes select on.
func TestPrintGroupedJSONKeys(t *testing.T) {
	var owner, label, node map[string]any
	out := printGrouped(t, ownerDoc(), "json", "", groupedOpts("json"))
	doc, _ := decodeStrict(t, out)
	owner = doc.Groups[0].Key
	if want := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web", "uid": "d-uid"}; !reflect.DeepEqual(owner, want) {
		t.Errorf("owner key = %v, want %v", owner, want)
	}
	if want := map[string]any{"apiVersion": "v1", "kind": "Node", "name": "worker-1", "uid": "n-uid"}; !reflect.DeepEqual(doc.Groups[1].Key, want) {
		t.Errorf("cluster-scoped owner key = %v, want %v", doc.Groups[1].Key, want)
	}
	if want := map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet", "namespace": "shop", "name": "gone", "uid": "rs-uid", "dangling": true, "reason": "owner not found"}; !reflect.DeepEqual(doc.Groups[2].Key, want) {
		t.Errorf("dangling owner key = %v, want %v", doc.Groups[2].Key, want)
	}
	if want := map[string]any{"none": true}; !reflect.DeepEqual(doc.Groups[3].Key, want) {
		t.Errorf("<none> key = %v, want %v", doc.Groups[3].Key, want)
	}
	if !reflect.DeepEqual(doc.Warnings, []string{"owners above Widget.example.com are unknown: forbidden"}) {
		t.Errorf("warnings = %q", doc.Warnings)
	}

	doc, _ = decodeStrict(t, printGrouped(t, labelDoc(), "json", "", groupedOpts("json")))
	label = doc.Groups[1].Key
	if want := map[string]any{"value": ""}; !reflect.DeepEqual(label, want) {
		t.Errorf("key of a label's empty value = %v, want %v (an empty value is a value)", label, want)
	}
	doc, _ = decodeStrict(t, printGrouped(t, nodeDoc(), "json", "", groupedOpts("json")))
	node = doc.Groups[2].Key
	if want := map[string]any{"node": "worker-3"}; !reflect.DeepEqual(node, want) {
		t.Errorf("node key = %v, want %v", node, want)
	}
	if items := doc.Groups[2].Items; items == nil || len(items) != 0 {
		t.Errorf("items of a node without pods = %v, want []", items)
	}
}

func TestPrintGroupedJSONEmpty(t *testing.T) {
	doc := &v1alpha1.GroupList{TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: "node"}
	got := printGrouped(t, doc, "json", "", groupedOpts("json"))
	const want = "{\n" +
		"    \"apiVersion\": \"kubectl-idx.io/v1alpha1\",\n" +
		"    \"kind\": \"GroupList\",\n" +
		"    \"groupBy\": \"node\",\n" +
		"    \"groups\": [],\n" +
		"    \"warnings\": []\n" +
		"}\n"
	if got != want {
		t.Errorf("empty answer as JSON:\n%s\nwant:\n%s", got, want)
	}
	doc.Warnings = []string{"owners above ReplicaSet.apps are unknown: forbidden"}
	doc.Expression = "app"
	got = printGrouped(t, doc, "json", "", groupedOpts("json"))
	const wantWarned = "{\n" +
		"    \"apiVersion\": \"kubectl-idx.io/v1alpha1\",\n" +
		"    \"kind\": \"GroupList\",\n" +
		"    \"groupBy\": \"node\",\n" +
		"    \"expression\": \"app\",\n" +
		"    \"groups\": [],\n" +
		"    \"warnings\": [\n" +
		"        \"owners above ReplicaSet.apps are unknown: forbidden\"\n" +
		"    ]\n" +
		"}\n"
	if got != wantWarned {
		t.Errorf("empty answer with a warning as JSON:\n%s\nwant:\n%s", got, wantWarned)
	}
}

// TestPrintGroupedDocumentFormats: yaml, jsonpath and go-template see the
// same document as -o json.
func TestPrintGroupedDocumentFormats(t *testing.T) {
	jsonOut := printGrouped(t, ownerDoc(), "json", "", groupedOpts("json"))
	var want map[string]any
	if err := json.Unmarshal([]byte(jsonOut), &want); err != nil {
		t.Fatal(err)
	}

	t.Run("yaml", func(t *testing.T) {
		out := printGrouped(t, ownerDoc(), "yaml", "", groupedOpts("yaml"))
		data, err := yaml.YAMLToJSON([]byte(out))
		if err != nil {
			t.Fatalf("not YAML: %v\n%s", err, out)
		}
		var got map[string]any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("YAML document differs from the JSON one:\n%s", out)
		}
		if !strings.Contains(out, "kind: GroupList\n") || !strings.Contains(out, "warnings:\n- ") {
			t.Errorf("YAML lacks the kind or warnings:\n%s", out)
		}
	})
	t.Run("yaml of no groups", func(t *testing.T) {
		doc := &v1alpha1.GroupList{TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: "owner"}
		out := printGrouped(t, doc, "yaml", "", groupedOpts("yaml"))
		if !strings.Contains(out, "groups: []\n") || !strings.Contains(out, "warnings: []\n") {
			t.Errorf("YAML of no groups:\n%s\nwant groups: [] and warnings: []", out)
		}
	})
	for _, tc := range []struct {
		format, template, want string
	}{
		{"jsonpath", "{.groups[*].name}", "Deployment/web Node/worker-1 ReplicaSet/gone <none>"},
		{"jsonpath", `{range .groups[*]}{.name}={.summary.members}{"\n"}{end}`, "Deployment/web=2\nNode/worker-1=1\nReplicaSet/gone=1\n<none>=1\n"},
		{"jsonpath", "{.groups[0].items[*].metadata.name}", "web-0 web-1"},
		{"jsonpath", "{.groups[0].items[0].kind}", "Pod"},
		{"jsonpath", "{.warnings[0]}", "owners above Widget.example.com are unknown: forbidden"},
		{"go-template", `{{range .groups}}{{.name}} {{len .items}}{{"\n"}}{{end}}`, "Deployment/web 2\nNode/worker-1 1\nReplicaSet/gone 1\n<none> 1\n"},
		{"go-template", `{{.kind}} {{.groupBy}}`, "GroupList owner"},
	} {
		t.Run(tc.format+" "+tc.template, func(t *testing.T) {
			if got := printGrouped(t, ownerDoc(), tc.format, tc.template, groupedOpts(tc.format)); got != tc.want {
				t.Errorf("output = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPrintGroupedDoesNotMutateCacheObjects(t *testing.T) {
	for _, tc := range []struct {
		format, template string
		opts             printers.Options
	}{
		{format: ""},
		{format: "wide", opts: printers.Options{ShowLabels: true, ShowKind: true, WithNamespace: true, ColumnLabels: []string{"app"}}},
		{format: "", opts: printers.Options{NoHeaders: true}},
		{format: "custom-columns", template: "NAME:.metadata.name,NODE:.spec.nodeName"},
		{format: "name"},
		{format: "json"},
		{format: "yaml"},
		{format: "jsonpath", template: "{.groups[*].items[*].metadata.name}"},
		{format: "go-template", template: "{{range .groups}}{{.name}}{{end}}"},
	} {
		name := tc.format
		if name == "" {
			name = "human"
		}
		t.Run(name, func(t *testing.T) {
			for _, doc := range []*v1alpha1.GroupList{nodeDoc(), labelDoc(), ownerDoc()} {
				var before [][]runtime.Object
				for _, g := range doc.Groups {
					for _, m := range g.Members {
						var objs []runtime.Object
						for _, o := range m.Objects {
							objs = append(objs, o.DeepCopyObject())
						}
						before = append(before, objs)
					}
				}
				opts := printers.GroupedOptions{Options: tc.opts, Header: groupedHeader}
				opts.Format, opts.Now = tc.format, outNow
				var out bytes.Buffer
				if err := printers.PrintGrouped(&out, doc, withTables(doc), outPrinter(t, tc.format, tc.template), opts); err != nil {
					t.Fatalf("PrintGrouped: %v", err)
				}
				i := 0
				for _, g := range doc.Groups {
					for _, m := range g.Members {
						for j, o := range m.Objects {
							if !apiequality.Semantic.DeepEqual(o, before[i][j]) {
								t.Errorf("PrintGrouped changed cache object %d of group %s (TypeMeta now %+v)", j, g.Name, o.GetObjectKind().GroupVersionKind())
							}
						}
						i++
					}
				}
			}
		})
	}
}

// eventDoc groups events whose messages span lines, as kubelet messages do.
func eventDoc() *v1alpha1.GroupList {
	ev := func(name, msg string) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: "shop", Name: name, CreationTimestamp: metav1.NewTime(outNow.Add(-time.Hour))},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "crash", Namespace: "shop"},
			Reason:         "BackOff", Type: corev1.EventTypeWarning, Message: msg,
			Source:         corev1.EventSource{Component: "kubelet", Host: "worker-1"},
			FirstTimestamp: metav1.NewTime(outNow.Add(-time.Hour)), LastTimestamp: metav1.NewTime(outNow.Add(-time.Minute)), Count: 3,
		}
	}
	group := func(name string, objs ...runtime.Object) v1alpha1.Group {
		return v1alpha1.Group{
			Name: name, Key: v1alpha1.GroupKey{Value: strPtr(name)},
			Summary: v1alpha1.GroupSummary{Members: len(objs), Kinds: map[string]int{"Event": len(objs)}},
			Members: []v1alpha1.Members{{GVK: outEventGVK, Namespaced: true, Objects: objs}},
		}
	}
	return &v1alpha1.GroupList{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: "jsonpath", Expression: "{.reason}",
		Groups: []v1alpha1.Group{
			group("BackOff", ev("crash.1", "Back-off restarting failed container\nsee logs"), ev("crash.2", "line one\r\nline two\n")),
			group("Pulled", ev("crash.3", "pulled")),
		},
	}
}

func TestPrintGroupedMultiLineCells(t *testing.T) {
	for _, tc := range []struct {
		format, template string
		wantRows         map[string][]string // group header -> substrings, one per member row
	}{
		{
			format: "",
			wantRows: map[string][]string{
				// kubectl trims the message; the line breaks inside stay, escaped.
				"BackOff  (2 members)": {`Back-off restarting failed container\nsee logs`, `line one\r\nline two`},
				"Pulled  (1 members)":  {"pulled"},
			},
		},
		{
			format: "wide",
			wantRows: map[string][]string{
				"BackOff  (2 members)": {"crash.1", "crash.2"},
				"Pulled  (1 members)":  {"crash.3"},
			},
		},
		{
			format: "custom-columns", template: "NAME:.metadata.name,MESSAGE:.message",
			wantRows: map[string][]string{
				"BackOff  (2 members)": {"crash.1", "crash.2"},
				"Pulled  (1 members)":  {"crash.3"},
			},
		},
	} {
		name := tc.format
		if name == "" {
			name = "human"
		}
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := printers.PrintGrouped(&out, eventDoc(), withTables(eventDoc()), outPrinter(t, tc.format, tc.template), groupedOpts(tc.format))
			if err != nil {
				t.Fatalf("PrintGrouped: %v", err)
			}
			gl := splitGrouped(t, out.String(), func(l string) bool {
				return strings.HasPrefix(l, "LAST SEEN") || strings.HasPrefix(l, "NAME ")
			})
			if len(gl.headers) != 1 {
				t.Errorf("%d column headers, want 1:\n%s", len(gl.headers), out.String())
			}
			if want := []string{"BackOff  (2 members)", "Pulled  (1 members)"}; !reflect.DeepEqual(gl.groups, want) {
				t.Errorf("group headers %q, want %q: a line break in a cell split a row\n%s", gl.groups, want, out.String())
			}
			for group, subs := range tc.wantRows {
				rows := gl.rows[group]
				if len(rows) != len(subs) {
					t.Errorf("group %s has %d rows, want %d (one line per member):\n%s", group, len(rows), len(subs), out.String())
					continue
				}
				for i, s := range subs {
					if !strings.Contains(rows[i], s) {
						t.Errorf("row %d of %s = %q, want it to contain %q", i, group, rows[i], s)
					}
				}
			}
		})
	}
}

// TestPrintGroupedTypeOrder: within a group, types print in the order of the
// group's Members (the order the types were asked for), even when an earlier
// group holds only a later type.
func TestPrintGroupedTypeOrder(t *testing.T) {
	doc := &v1alpha1.GroupList{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: "label", Expression: "app",
		Groups: []v1alpha1.Group{
			{
				Name: "app=api", Key: v1alpha1.GroupKey{Value: strPtr("api")},
				Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Service": 1}},
				Members: []v1alpha1.Members{{GVK: outServiceGVK, Namespaced: true, Objects: []runtime.Object{outService("api")}}},
			},
			{
				Name: "app=web", Key: v1alpha1.GroupKey{Value: strPtr("web")},
				Summary: v1alpha1.GroupSummary{Members: 2, Kinds: map[string]int{"Pod": 1, "Service": 1}},
				Members: []v1alpha1.Members{
					{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{outPod("web-0", "worker-1")}},
					{GVK: outServiceGVK, Namespaced: true, Objects: []runtime.Object{outService("web")}},
				},
			},
		},
	}
	for _, format := range []string{"", "name"} {
		out := printGrouped(t, doc, format, "", groupedOpts(format))
		_, web, _ := strings.Cut(out, "app=web")
		pod, svc := strings.Index(web, "pod/web-0"), strings.Index(web, "service/web")
		if pod < 0 || svc < 0 || pod > svc {
			t.Errorf("-o %q: in app=web the pod (members[0]) must come before the service (members[1]):\n%s", format, out)
		}
	}
}

// TestPrintGroupedNoMembers: groups without members (nodes without pods) are
// header lines only, laid out like a one-type answer: no blank lines.
func TestPrintGroupedNoMembers(t *testing.T) {
	doc := &v1alpha1.GroupList{
		TypeMeta: v1alpha1.TypeMeta{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: v1alpha1.GroupListKind}, GroupBy: "node",
		Groups: []v1alpha1.Group{
			podGroup("worker-1", v1alpha1.GroupKey{Node: "worker-1"}),
			podGroup("worker-2", v1alpha1.GroupKey{Node: "worker-2"}),
		},
	}
	const want = "worker-1  (0 members)\nworker-2  (0 members)\n"
	for _, format := range []string{"", "wide"} {
		if got := printGrouped(t, doc, format, "", groupedOpts(format)); got != want {
			t.Errorf("-o %q:\n%q\nwant\n%q", format, got, want)
		}
	}
}
