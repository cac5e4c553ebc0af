package printers_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	cliprinters "k8s.io/cli-runtime/pkg/printers"
	"k8s.io/kubectl/pkg/cmd/get"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
)

// outNow is the reference time of the output tests.
var outNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

var (
	outPodGVK     = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	outServiceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Service"}
	outCronTabGVK = schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}
)

// outPod is a pod as an informer delivers it: no TypeMeta.
func outPod(name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "42",
			CreationTimestamp: metav1.NewTime(outNow.Add(-48 * time.Hour)),
			Labels:            map[string]string{"app": "web", "tier": "front"},
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}},
		},
	}
}

// outTrickyPod carries text that encoders escape or fold: non-ASCII, HTML
// characters, and multi-line strings including an empty line and leading spaces,
// which YAML writes as block scalars.
func outTrickyPod() *corev1.Pod {
	p := outPod("web-ünï", "worker-2")
	p.Annotations = map[string]string{
		"note":      "café <b>bold</b> & 日本語 \u2028 \"quoted\"",
		"script":    "#!/bin/sh\necho one\n\necho three\n",
		"indented":  "  two leading spaces\nnext line",
		"trailing":  "ends with spaces   ",
		"empty":     "",
		"yes":       "yes",
		"number":    "0123",
		"multi-end": "a\n\n\n",
	}
	p.Spec.Containers[0].Command = []string{"sh", "-c", "echo '<ok>' && exit 0"}
	return p
}

func outService(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, CreationTimestamp: metav1.NewTime(outNow.Add(-72 * time.Hour))},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.0.10",
			Ports: []corev1.ServicePort{{Port: 80, Protocol: corev1.ProtocolTCP}},
		},
	}
}

func outCronTab(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1",
		"kind":       "CronTab",
		"spec":       map[string]any{"cronSpec": "*/5 * * * *", "image": "cron <latest>", "replicas": int64(2)},
	}}
	u.SetNamespace("shop")
	u.SetName(name)
	u.SetCreationTimestamp(metav1.NewTime(outNow.Add(-time.Hour)))
	return u
}

// outGVKs maps every object to gvk, as Print's groups do.
func outGVKs(gvk schema.GroupVersionKind, objs ...runtime.Object) map[runtime.Object]schema.GroupVersionKind {
	m := map[runtime.Object]schema.GroupVersionKind{}
	for _, o := range objs {
		m[o] = gvk
	}
	return m
}

// kubectlList prints objs the way `kubectl get -o json|yaml` prints several objects
// (k8s.io/kubectl/pkg/cmd/get/get.go, printGeneric): a corev1.List of the objects is
// round-tripped through the unstructured JSON scheme, its items are moved into a new
// UnstructuredList whose metadata carries resourceVersion, and that goes to the
// printer.
func kubectlList(t *testing.T, p cliprinters.ResourcePrinter, objs []runtime.Object, gvks map[runtime.Object]schema.GroupVersionKind) string {
	t.Helper()
	list := corev1.List{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	for _, o := range objs {
		list.Items = append(list.Items, runtime.RawExtension{Object: printers.Printable(o, gvks[o])})
	}
	data, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	converted, err := runtime.Decode(unstructured.UnstructuredJSONScheme, data)
	if err != nil {
		t.Fatal(err)
	}
	items, err := meta.ExtractList(converted)
	if err != nil {
		t.Fatal(err)
	}
	out := &unstructured.UnstructuredList{Object: map[string]any{"kind": "List", "apiVersion": "v1", "metadata": map[string]any{}}}
	if lm, err := meta.ListAccessor(converted); err == nil {
		out.Object["metadata"] = map[string]any{"resourceVersion": lm.GetResourceVersion()}
	}
	for _, it := range items {
		out.Items = append(out.Items, *it.(*unstructured.Unstructured))
	}
	var buf bytes.Buffer
	if err := p.PrintObj(out, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

type listCase struct {
	name string
	objs []runtime.Object
	gvks map[runtime.Object]schema.GroupVersionKind
}

func listCases() []listCase {
	one := outPod("web-0", "worker-1")
	pods := []runtime.Object{outPod("web-0", "worker-1"), outTrickyPod(), outPod("web-2", "worker-3")}
	crs := []runtime.Object{outCronTab("nightly"), outCronTab("hourly-<x>")}
	mixedPod, mixedSvc, mixedCR := outTrickyPod(), outService("web"), outCronTab("nightly")
	mixed := outGVKs(outPodGVK, mixedPod)
	mixed[mixedSvc] = outServiceGVK
	mixed[mixedCR] = outCronTabGVK
	return []listCase{
		{"zero items", nil, nil},
		{"one typed object", []runtime.Object{one}, outGVKs(outPodGVK, one)},
		{"typed objects with unicode, HTML and multi-line text", pods, outGVKs(outPodGVK, pods...)},
		{"custom resources", crs, outGVKs(outCronTabGVK, crs...)},
		{"several kinds", []runtime.Object{mixedPod, mixedSvc, mixedCR}, mixed},
	}
}

func TestWriteJSONListMatchesKubectl(t *testing.T) {
	for _, tc := range listCases() {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := printers.WriteJSONList(&got, tc.objs, tc.gvks); err != nil {
				t.Fatal(err)
			}
			want := kubectlList(t, &cliprinters.JSONPrinter{}, tc.objs, tc.gvks)
			// Typed objects keep the API's field order (what the server sends),
			// kubectl sorts keys: the documents must be equal as JSON, and equal
			// byte for byte once both have sorted keys and kubectl's indentation.
			if g, w := sortedJSON(t, got.String()), sortedJSON(t, want); g != w {
				t.Errorf("WriteJSONList differs from kubectl's JSON printer:\n%s", lineDiff(g, w))
			}
			if allUnstructured(tc.objs) && got.String() != want {
				t.Errorf("unstructured items must match kubectl byte for byte:\n%s", lineDiff(got.String(), want))
			}
			if !strings.HasPrefix(got.String(), "{\n    \"apiVersion\": \"v1\",\n    \"items\": [") ||
				!strings.HasSuffix(got.String(), "\"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n") {
				t.Errorf("list framing differs from kubectl's:\n%s", got.String())
			}
		})
	}
}

// sortedJSON re-encodes a JSON document with sorted keys and kubectl's indentation.
func sortedJSON(t *testing.T, doc string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, doc)
	}
	out, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out) + "\n"
}

func allUnstructured(objs []runtime.Object) bool {
	for _, o := range objs {
		if _, ok := o.(*unstructured.Unstructured); !ok {
			return false
		}
	}
	return true
}

func TestWriteYAMLListMatchesKubectl(t *testing.T) {
	for _, tc := range listCases() {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := printers.WriteYAMLList(&got, tc.objs, tc.gvks); err != nil {
				t.Fatal(err)
			}
			want := kubectlList(t, &cliprinters.YAMLPrinter{}, tc.objs, tc.gvks)
			if got.String() != want {
				t.Errorf("WriteYAMLList differs from kubectl's YAML printer:\n%s", lineDiff(got.String(), want))
			}
		})
	}
}

// TestWriteYAMLListBlockScalar pins the case the line-by-line indentation must get
// right: an empty line inside a block scalar stays empty, without indentation.
func TestWriteYAMLListBlockScalar(t *testing.T) {
	p := outPod("web-0", "worker-1")
	p.Annotations = map[string]string{"script": "one\n\nthree\n"}
	var got bytes.Buffer
	if err := printers.WriteYAMLList(&got, []runtime.Object{p}, outGVKs(outPodGVK, p)); err != nil {
		t.Fatal(err)
	}
	const want = "      script: |\n        one\n\n        three\n"
	if !strings.Contains(got.String(), want) {
		t.Errorf("output lacks the block scalar %q:\n%s", want, got.String())
	}
}

// lineDiff shows the first differing line of got and want with its neighbours.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			from := max(0, i-3)
			return "first difference at line " + strconv.Itoa(i+1) + ":\n--- got:\n" + strings.Join(g[from:min(len(g), i+4)], "\n") +
				"\n--- want:\n" + strings.Join(w[from:min(len(w), i+4)], "\n")
		}
	}
	return "(no line differs; lengths differ)"
}

// outPrinter returns the delegate printer kubectl's get flags build for format.
func outPrinter(t *testing.T, format, template string) cliprinters.ResourcePrinter {
	t.Helper()
	pf := get.NewGetPrintFlags()
	*pf.OutputFormat = format
	if template != "" {
		*pf.TemplateFlags.TemplateArgument = template
	}
	p, err := pf.ToPrinter()
	if err != nil {
		t.Fatalf("ToPrinter(%q): %v", format, err)
	}
	return p
}

// outGroups returns the pods, services and custom resources the Print tests use,
// all without TypeMeta as informers hold them.
func outGroups() []group {
	return []group{
		{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{outPod("web-1", "worker-2"), outTrickyPod(), outPod("web-0", "worker-1")}},
		{GVK: outServiceGVK, Namespaced: true, Objects: []runtime.Object{outService("web")}},
		{GVK: outCronTabGVK, Namespaced: true, Objects: []runtime.Object{outCronTab("nightly")}},
	}
}

func TestPrintDoesNotMutateCacheObjects(t *testing.T) {
	tests := []struct {
		format, template string
		opts             printers.Options
	}{
		{format: "json"},
		{format: "yaml"},
		{format: "name"},
		{format: "jsonpath", template: "{.items[*].metadata.name}"},
		{format: "custom-columns", template: "NAME:.metadata.name,NODE:.spec.nodeName"},
		{format: ""},
		{format: "wide", opts: printers.Options{ShowLabels: true, ShowKind: true, WithNamespace: true, ColumnLabels: []string{"app"}}},
		{format: "json", opts: printers.Options{SortBy: "{.metadata.name}"}},
		{format: "", opts: printers.Options{SortBy: "{.metadata.name}"}},
		{format: "yaml", opts: printers.Options{SingleItem: true}},
		{format: "name", opts: printers.Options{SingleItem: true}},
	}
	for _, tc := range tests {
		name := tc.format
		if name == "" {
			name = "human"
		}
		if tc.opts.SortBy != "" {
			name += " sorted"
		}
		if tc.opts.SingleItem {
			name += " single item"
		}
		t.Run(name, func(t *testing.T) {
			groups := outGroups()
			if tc.opts.SortBy != "" {
				// Sorting typed objects together with unstructured ones is tested
				// in TestPrintSortBy; keep this test about mutation.
				groups = groups[:2]
			}
			if tc.opts.SingleItem {
				groups = []group{{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{outTrickyPod()}}}
			}
			before := make([][]runtime.Object, len(groups))
			for i, g := range groups {
				for _, o := range g.Objects {
					before[i] = append(before[i], o.DeepCopyObject())
				}
			}
			opts := tc.opts
			opts.Format = tc.format
			opts.Now = outNow
			var out bytes.Buffer
			// A failed Print is reported, and the objects are checked all the same.
			if _, err := safePrint(&out, groups, outPrinter(t, tc.format, tc.template), opts); err != nil {
				t.Errorf("Print: %v", err)
			} else if out.Len() == 0 {
				t.Error("Print wrote nothing")
			}
			for i, g := range groups {
				if len(g.Objects) != len(before[i]) {
					t.Fatalf("group %d has %d objects after Print, want %d", i, len(g.Objects), len(before[i]))
				}
				for j, o := range g.Objects {
					if !apiequality.Semantic.DeepEqual(o, before[i][j]) {
						t.Errorf("Print changed cache object %d of %s (TypeMeta now %+v)", j, g.GVK.Kind, o.GetObjectKind().GroupVersionKind())
					}
				}
			}
		})
	}
}

func TestPrintSingleItem(t *testing.T) {
	tests := []struct {
		name       string
		format     string
		single     bool
		objs       int
		wantPrefix string
		wantList   bool
	}{
		{"yaml, one named object", "yaml", true, 1, "apiVersion: v1\nkind: Pod\nmetadata:\n", false},
		{"json, one named object", "json", true, 1, "{\n", false},
		{"name, one named object", "name", true, 1, "pod/web-0\n", false},
		{"yaml, one object not asked for by name", "yaml", false, 1, "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n", true},
		{"yaml, single item asked but two found", "yaml", true, 2, "apiVersion: v1\nitems:\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs := []runtime.Object{outPod("web-0", "worker-1"), outPod("web-1", "worker-1")}[:tc.objs]
			groups := []group{{GVK: outPodGVK, Namespaced: true, Objects: objs}}
			var out bytes.Buffer
			n, err := printGroups(&out, tabled(groups), outPrinter(t, tc.format, ""), printers.Options{Format: tc.format, SingleItem: tc.single, Now: outNow})
			if err != nil {
				t.Fatalf("Print: %v", err)
			}
			if n != tc.objs {
				t.Errorf("Print returned %d, want %d", n, tc.objs)
			}
			got := out.String()
			if !strings.HasPrefix(got, tc.wantPrefix) {
				t.Errorf("output starts\n%s\nwant it to start\n%s", first(got, 6), tc.wantPrefix)
			}
			if !strings.Contains(got, "kind: Pod") && !strings.Contains(got, `"kind": "Pod"`) && tc.format != "name" {
				t.Errorf("output lacks the object's kind:\n%s", got)
			}
			isList := strings.Contains(got, "kind: List") || strings.Contains(got, `"kind": "List"`)
			if isList != tc.wantList {
				t.Errorf("output is a List: %v, want %v:\n%s", isList, tc.wantList, got)
			}
		})
	}
}

// safePrint is printers.Print with a panic turned into an error, so one bad case
// does not end the whole test binary.
func safePrint(w *bytes.Buffer, groups []group, delegate cliprinters.ResourcePrinter, opts printers.Options) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Print panicked: %v", r)
		}
	}()
	return printGroups(w, tabled(groups), delegate, opts)
}

func TestPrintDelegateFormats(t *testing.T) {
	twoPods := func() []group {
		return []group{{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{outPod("web-0", "worker-1"), outPod("web-1", "worker-2")}}}
	}
	tests := []struct {
		name, format, template string
		groups                 []group
		want                   string
	}{
		{"name", "name", "", twoPods(), "pod/web-0\npod/web-1\n"},
		{"name, several kinds", "name", "", outGroups(), "pod/web-1\npod/web-ünï\npod/web-0\nservice/web\ncrontab.stable.example.com/nightly\n"},
		{"jsonpath", "jsonpath", "{.items[*].metadata.name}", twoPods(), "web-0 web-1"},
		{"custom-columns", "custom-columns", "NAME:.metadata.name,NODE:.spec.nodeName", twoPods(), "NAME    NODE\nweb-0   worker-1\nweb-1   worker-2\n"},
		{"go-template", "go-template", `{{range .items}}{{.kind}}/{{.metadata.name}}{{"\n"}}{{end}}`, twoPods(), "Pod/web-0\nPod/web-1\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			n, err := safePrint(&out, tc.groups, outPrinter(t, tc.format, tc.template), printers.Options{Format: tc.format, Now: outNow})
			if err != nil {
				t.Fatalf("Print: %v", err)
			}
			if want := total(tc.groups); n != want {
				t.Errorf("Print returned %d, want %d", n, want)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("output:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func total(groups []group) int {
	n := 0
	for _, g := range groups {
		n += len(g.Objects)
	}
	return n
}

// first returns the first n lines of s.
func first(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "")
}

func TestPrintSortBy(t *testing.T) {
	// Created in the order web-2, web-0, web-1 on nodes b, c, a.
	pods := func() []runtime.Object {
		return []runtime.Object{outPod("web-2", "node-b"), outPod("web-0", "node-c"), outPod("web-1", "node-a")}
	}
	byName := []string{"web-0", "web-1", "web-2"}
	byNode := []string{"web-1", "web-2", "web-0"}
	tests := []struct {
		format, sortBy string
		// withCRs adds a group of custom resources (unstructured) to the typed pods.
		withCRs bool
		want    []string
		wantErr string
	}{
		{format: "json", sortBy: "{.metadata.name}", want: byName},
		{format: "json", sortBy: ".metadata.name", want: byName},
		{format: "json", sortBy: "{.spec.nodeName}", want: byNode},
		{format: "name", sortBy: ".spec.nodeName", want: byNode},
		{format: "", sortBy: "{.metadata.name}", want: byName},
		{format: "", sortBy: ".metadata.name", want: byName},
		{format: "wide", sortBy: ".spec.nodeName", want: byNode},
		{format: "", sortBy: "{.spec.nodeName}", want: byNode},
		{format: "json", sortBy: "{.metadata.name}", withCRs: true, want: []string{"nightly", "web-0", "web-1", "web-2"}},
		{format: "name", sortBy: ".metadata.name", withCRs: true, want: []string{"nightly", "web-0", "web-1", "web-2"}},
		{format: "json", sortBy: "{.metadata.nope}", wantErr: `couldn't find any field with path "{.metadata.nope}" in the list of objects`},
		{format: "", sortBy: "{.metadata.nope}", wantErr: `couldn't find any field with path "{.metadata.nope}" in the list of objects`},
	}
	for _, tc := range tests {
		name := tc.format
		if name == "" {
			name = "human"
		}
		if tc.withCRs {
			name += " with custom resources"
		}
		t.Run(name+" "+tc.sortBy, func(t *testing.T) {
			groups := []group{{GVK: outPodGVK, Namespaced: true, Objects: pods()}}
			if tc.withCRs {
				groups = append(groups, group{GVK: outCronTabGVK, Namespaced: true, Objects: []runtime.Object{outCronTab("nightly")}})
			}
			var out bytes.Buffer
			_, err := safePrint(&out, groups, outPrinter(t, tc.format, ""), printers.Options{Format: tc.format, SortBy: tc.sortBy, Now: outNow})
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("Print error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Print: %v", err)
			}
			if got := printedNames(t, tc.format, out.String()); !equalStrings(got, tc.want) {
				t.Errorf("printed order %q, want %q", got, tc.want)
			}
		})
	}
}

// printedNames extracts object names, in order, from json, name or table output.
func printedNames(t *testing.T, format, out string) []string {
	t.Helper()
	var names []string
	switch format {
	case "json":
		var list struct {
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("output is not JSON: %v\n%s", err, out)
		}
		for _, it := range list.Items {
			names = append(names, it.Metadata.Name)
		}
	case "name":
		for _, line := range strings.Fields(out) {
			_, name, _ := strings.Cut(line, "/")
			names = append(names, name)
		}
	default:
		for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if i == 0 {
				continue // header
			}
			names = append(names, strings.Fields(line)[0])
		}
	}
	return names
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPrintSeveralGroupsAsTables(t *testing.T) {
	groups := func() []group {
		return []group{
			{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{outPod("web-0", "worker-1"), outPod("web-1", "worker-2")}},
			{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespaced: true},
			{GVK: outServiceGVK, Namespaced: true, Objects: []runtime.Object{outService("web")}},
		}
	}
	tests := []struct {
		name   string
		golden string
		opts   printers.Options
	}{
		{"default", "testdata/print_groups.golden", printers.Options{}},
		{"all namespaces", "testdata/print_groups_all_namespaces.golden", printers.Options{WithNamespace: true}},
		{"no headers", "testdata/print_groups_no_headers.golden", printers.Options{NoHeaders: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Now = outNow
			var out bytes.Buffer
			n, err := printGroups(&out, tabled(groups()), nil, opts)
			if err != nil {
				t.Fatalf("Print: %v", err)
			}
			if n != 3 {
				t.Errorf("Print returned %d, want 3", n)
			}
			got := out.String()
			blank := strings.Contains(got, "\n\n")
			if blank == tc.opts.NoHeaders {
				t.Errorf("blank line between tables: %v, want %v (kubectl separates tables only when they have headers)", blank, !tc.opts.NoHeaders)
			}
			for _, name := range []string{"pod/web-0", "pod/web-1", "service/web"} {
				if !strings.Contains(got, name) {
					t.Errorf("output lacks kind-prefixed name %q", name)
				}
			}
			golden.Assert(t, tc.golden, got)
		})
	}
}

func TestPrintOneGroupHasNoKindPrefix(t *testing.T) {
	groups := []group{{GVK: outServiceGVK, Namespaced: true, Objects: []runtime.Object{outService("web")}}}
	var out bytes.Buffer
	if _, err := printGroups(&out, tabled(groups), nil, printers.Options{Now: outNow}); err != nil {
		t.Fatal(err)
	}
	const want = "NAME   TYPE        CLUSTER-IP   AGE\n" +
		"web    ClusterIP   10.96.0.10   3d\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestPrintableSetsKindOnACopy(t *testing.T) {
	p := outPod("web-0", "worker-1")
	got := printers.Printable(p, outPodGVK)
	if got == runtime.Object(p) {
		t.Fatal("Printable returned the cache object itself")
	}
	if gvk := got.GetObjectKind().GroupVersionKind(); gvk != outPodGVK {
		t.Errorf("copy has kind %v, want %v", gvk, outPodGVK)
	}
	if gvk := p.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		t.Errorf("cache object got kind %v", gvk)
	}
	cr := outCronTab("nightly")
	if gvk := printers.Printable(cr, schema.GroupVersionKind{}).GetObjectKind().GroupVersionKind(); gvk != outCronTabGVK {
		t.Errorf("an empty GVK must keep the object's own kind; got %v", gvk)
	}
}

func TestPrintListWarnings(t *testing.T) {
	p := outPod("shop", "web-1")
	groups := []group{{GVK: outPodGVK, Namespaced: true, Objects: []runtime.Object{p}}}
	warnings := []string{`cannot list pods in namespace "secret-ns"`, "second"}
	for _, format := range []string{"json", "yaml", "jsonpath"} {
		t.Run(format, func(t *testing.T) {
			pf := get.NewGetPrintFlags()
			*pf.OutputFormat = format
			if format == "jsonpath" {
				*pf.OutputFormat = "jsonpath={.warnings[1]}"
			}
			delegate, err := pf.ToPrinter()
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := printGroups(&buf, tabled(groups), delegate, printers.Options{Format: format, Warnings: warnings}); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Items    []map[string]any `json:"items"`
				Warnings []string         `json:"warnings"`
			}
			switch format {
			case "json":
				if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatalf("%v\n%s", err, buf.String())
				}
			case "yaml":
				if err := yaml.Unmarshal(buf.Bytes(), &doc); err != nil {
					t.Fatalf("%v\n%s", err, buf.String())
				}
			default:
				if buf.String() != "second" {
					t.Errorf("jsonpath printed %q, want %q", buf.String(), "second")
				}
				return
			}
			if len(doc.Items) != 1 || !slices.Equal(doc.Warnings, warnings) {
				t.Errorf("items %d, warnings %q; want 1 and %q\n%s", len(doc.Items), doc.Warnings, warnings, buf.String())
			}
		})
	}
	// A complete answer is kubectl's List, with no warnings field.
	var buf bytes.Buffer
	if _, err := printGroups(&buf, tabled(groups), nil, printers.Options{Format: "json"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "warnings") {
		t.Errorf("complete answer has a warnings field:\n%s", buf.String())
	}
}

// countingWriter counts the writes it is given.
type countingWriter struct {
	writes int
	bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestPrintWritesInLargePieces: a table of 2,000 rows, and their names,
// reach the writer in a few large writes, not one per cell or line (a system
// call each on a terminal, a pipe or the warm cache's socket), and hold what
// an unbuffered print would.
func TestPrintWritesInLargePieces(t *testing.T) {
	var objs []runtime.Object
	for i := range 2000 {
		objs = append(objs, outPod(fmt.Sprintf("web-%04d", i), "worker-1"))
	}
	groups := tabled([]group{{GVK: outPodGVK, Namespaced: true, Objects: objs}})
	for _, format := range []string{"", "name"} {
		t.Run("format "+format, func(t *testing.T) {
			opts := printers.Options{Now: outNow, Format: format, WithNamespace: true}
			var delegate cliprinters.ResourcePrinter
			if format == "name" {
				delegate = &cliprinters.NamePrinter{}
			}
			var w countingWriter
			if _, err := printGroups(&w, groups, delegate, opts); err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(w.String(), "\n"); lines < 2000 {
				t.Fatalf("%d lines printed, want a line per pod", lines)
			}
			if w.writes > 4 {
				t.Errorf("%d writes for %d bytes, want a few large ones", w.writes, w.Len())
			}
		})
	}
}
