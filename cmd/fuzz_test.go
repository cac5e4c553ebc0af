package cmd

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/cmd/get"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/index"
	"github.com/kubectl-idx/kubectl-idx/pkg/printers"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// The fuzz targets of the command layer: every string a user types that cmd
// parses itself. None may panic, every error must print as one line (Execute
// prints errtext.Format and README promises one line), and what parses must mean
// the same after a round trip through its canonical form.

// assertOneLine fails unless err prints as a single "error: " line.
func assertOneLine(t *testing.T, err error) {
	t.Helper()
	msg := errtext.Format(err)
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error prints on several lines: %q", msg)
	}
	if !strings.HasPrefix(msg, "error: ") {
		t.Errorf("error does not start with \"error: \": %q", msg)
	}
}

// fuzzLabelSets are label sets the label selector round trip is checked on,
// beyond those built from the selector's own requirements.
var fuzzLabelSets = []labels.Set{
	nil,
	{"app": "web"},
	{"app": "api", "tier": "front"},
	{"app": "", "env": "prod"},
	{"n": "5"},
	{"example.com/role": "db", "a": "b"},
}

// discard are streams that keep nothing.
var discard = genericiooptions.NewTestIOStreamsDiscard()

// checkSelectorValidate sets a selector on get's and watch's options and
// checks that Validate agrees with the selector parser's error perr, and
// that its error names the value ("invalid label selector ...") on one line.
func checkSelectorValidate(t *testing.T, kind, value string, perr error, set func(*QueryOptions)) {
	t.Helper()
	get, watch := NewGetOptions(nil, discard), NewWatchOptions(nil, discard)
	set(get.QueryOptions)
	set(watch.QueryOptions)
	for name, err := range map[string]error{"get": get.Validate(), "watch": watch.Validate()} {
		if (err == nil) != (perr == nil) {
			t.Fatalf("%s: Validate error %v, the %s selector parser's error %v", name, err, kind, perr)
		}
		if err != nil {
			if want := "invalid " + kind + " selector " + strconv.Quote(value) + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s: error %q does not start with %q", name, err, want)
			}
			assertOneLine(t, err)
		}
	}
}

// reparse parses again the canonical form of sel, which parse made of s: it
// must parse.
func reparse[S fmt.Stringer](t *testing.T, name string, parse func(string) (S, error), s string, sel S) (string, S) {
	t.Helper()
	canonical := sel.String()
	again, err := parse(canonical)
	if err != nil {
		t.Fatalf("%s(%q) = %q, which does not parse: %v", name, s, canonical, err)
	}
	return canonical, again
}

// FuzzLabelSelector feeds -l values through get's and watch's validation: they
// must agree with labels.Parse, and a selector that parses must print as a
// selector that parses to itself and selects the same labels.
func FuzzLabelSelector(f *testing.F) {
	for _, s := range []string{
		"", "app=web", "app==web", "app!=web", "app", "!app", "app in (web,api)", "app notin (web)",
		"app in (web,api),!canary,tier=front", "n>3", "n<10", "example.com/role=db",
		"a b c", "app in (web", "app=", "=web", "app=web,", ",", "app in ()", "n>x", "a==b==c",
		"a\nb", "app=web\r", "x=\x00", "é=1", strings.Repeat("a", 64) + "=b", "a/b/c=d", "  app  =  web  ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, perr := labels.Parse(s)
		checkSelectorValidate(t, "label", s, perr, func(o *QueryOptions) { o.LabelSelector = s })
		if perr != nil {
			return
		}
		canonical, again := reparse(t, "labels.Parse", func(s string) (labels.Selector, error) { return labels.Parse(s) }, s, sel)
		if again.String() != canonical {
			t.Errorf("labels.Parse(%q) prints %q, which prints %q", s, canonical, again.String())
		}
		sets := slices.Clone(fuzzLabelSets)
		reqs, _ := sel.Requirements()
		for _, r := range reqs {
			sets = append(sets, labels.Set{r.Key(): ""})
			for _, v := range r.ValuesUnsorted() {
				sets = append(sets, labels.Set{r.Key(): v}, labels.Set{r.Key(): v, "other": "x"})
			}
		}
		for _, set := range sets {
			if sel.Matches(set) != again.Matches(set) {
				t.Errorf("%q and %q disagree on %v", s, canonical, set)
			}
		}
	})
}

// FuzzFieldSelector feeds --field-selector values through get's and watch's
// validation, checks the canonical form round trips, and checks that the
// selector sent to the server for one named object (metadata.name=NAME plus
// the user's) parses and asks for exactly that name and the user's terms.
func FuzzFieldSelector(f *testing.F) {
	for _, seed := range [][2]string{
		{"", "web-0"},
		{"spec.nodeName=node-1", "web-0"},
		{"status.phase!=Running,spec.nodeName==node-1", "web-0"},
		{"metadata.name=other", "web-0"},
		{"a", "web-0"},
		{"a=b=c", "x"},
		{`a=b\,c`, `web\`},
		{`a=\x`, "a,b"},
		{"a=b,", "a=b"},
		{",", "a\nb"},
		{"a\n=b", "x"},
		{"=", "web"},
		{"!=", "web"},
		{"spec.nodeName=", "ö"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, fs, name string) {
		sel, perr := fields.ParseSelector(fs)
		checkSelectorValidate(t, "field", fs, perr, func(o *QueryOptions) { o.FieldSelector = fs })
		if perr != nil {
			return
		}
		canonical, again := reparse(t, "fields.ParseSelector", fields.ParseSelector, fs, sel)
		if !reflect.DeepEqual(sortedRequirements(again), sortedRequirements(sel)) {
			t.Errorf("%q and its canonical form %q differ: %v, %v", fs, canonical, sel.Requirements(), again.Requirements())
		}

		// Names come from arguments: anything but "" and, in TYPE/NAME form, "/".
		// Field selectors unescape values rune by rune, so a name that is not
		// UTF-8 (no object has one) cannot be asked for exactly.
		if name == "" || strings.Contains(name, "/") || !utf8.ValidString(name) {
			return
		}
		// get, watch and the relation commands all narrow by name through it.
		want := sortedRequirements(fields.AndSelectors(fields.OneTermEqualSelector("metadata.name", name), sel))
		for what, got := range map[string]string{
			"name selector": query.NameSelector(name, fs),
		} {
			server, err := fields.ParseSelector(got)
			if err != nil {
				t.Fatalf("%s: selector for name %q and %q is %q, which does not parse: %v", what, name, fs, got, err)
			}
			if !reflect.DeepEqual(sortedRequirements(server), want) {
				t.Errorf("%s: selector for name %q and %q is %q, meaning %v, want %v", what, name, fs, got, server.Requirements(), want)
			}
		}
	})
}

// sortedRequirements returns the terms of sel in a fixed order: parsing sorts
// them, building with AndSelectors does not.
func sortedRequirements(sel fields.Selector) fields.Requirements {
	reqs := slices.Clone(sel.Requirements())
	slices.SortFunc(reqs, func(a, b fields.Requirement) int {
		return strings.Compare(a.Field+"\x00"+string(a.Operator)+"\x00"+a.Value, b.Field+"\x00"+string(b.Operator)+"\x00"+b.Value)
	})
	return reqs
}

// fuzzGroupObjects are the objects the group-by fuzz target indexes: a typed
// pod as an informer holds it, the same pod unstructured, a custom resource, a
// metadata-only pod and a cluster-scoped node.
func fuzzGroupObjects() []runtime.Object {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "shop", Name: "web-0", UID: "uid-web-0",
			Labels: map[string]string{"app": "web", "example.com/tier": "front", "empty": ""},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9c", UID: "uid-rs", Controller: ptrTo(true),
			}},
			CreationTimestamp: metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)),
		},
		Spec: corev1.PodSpec{
			NodeName: "worker-1", ServiceAccountName: "web",
			Containers: []corev1.Container{{Name: "app", Image: "nginx:1", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		panic(err)
	}
	upod := &unstructured.Unstructured{Object: u}
	upod.SetAPIVersion("v1")
	upod.SetKind("Pod")
	upod.SetName("web-1")
	upod.SetUID("uid-web-1")
	ct := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"namespace": "shop", "name": "nightly", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"cronSpec": "0 3 * * *", "replicas": int64(2), "ratio": 0.5, "tags": []any{"a", nil, map[string]any{"x": true}}},
	}}
	partial := &metav1.PartialObjectMetadata{ObjectMeta: *pod.ObjectMeta.DeepCopy()}
	partial.Name, partial.UID = "web-2", "uid-web-2"
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1", Labels: map[string]string{"app": "node"}}}
	return []runtime.Object{pod, upod, ct, partial, node}
}

func ptrTo[T any](v T) *T { return &v }

// FuzzGroupFlags feeds every combination of the group-by flags, --by-label
// keys, --by JSONPaths and --sort-by values through get's validation. What
// validation accepts must work: the member indexers build, index every object
// without error (a store panics on one), and each object is either in groups or
// in <none>, never both and never lost; a --by-label key must be one a label
// selector accepts; a --sort-by must not fail to parse when printing.
func FuzzGroupFlags(f *testing.F) {
	const (
		byOwner = 1 << iota
		byNode
		byNamespace
		includeCompleted
		byLabel
		byJSONPath
		withServices
	)
	for _, seed := range []struct {
		bits                uint8
		label, expr, sortBy string
	}{
		{0, "", "", ""},
		{byOwner, "", "", ""},
		{byNode | includeCompleted, "", "", ""},
		{byNode | withServices, "", "", ""},
		{byNamespace, "", "", ""},
		{byLabel, "app", "", ""},
		{byLabel, "example.com/tier", "", ""},
		{byLabel, "", "", ""},
		{byLabel, " ", "", ""},
		{byLabel, "a b", "", ""},
		{byLabel, "a/b/c", "", ""},
		{byLabel, "app\n", "", ""},
		{byJSONPath, "", "{.spec.serviceAccountName}", ""},
		{byJSONPath, "", ".spec.containers[*].image", ""},
		{byJSONPath, "", "{.bad", ""},
		{byJSONPath, "", "", ""},
		{byJSONPath, "", "{.a}{.b}", ""},
		{byJSONPath, "", "{range .items[*]}{.x}{end}", ""},
		{byJSONPath, "", "..name", ""},
		{byJSONPath, "", `{.spec.containers[?(@.name=="app")].ports[0].containerPort}`, ""},
		{byJSONPath, "", ".spec\n.x", ""},
		{byOwner | byNode, "", "", ""},
		{byLabel | byJSONPath | byNamespace, "app", ".x", ""},
		{0, "", "", ".metadata.name"},
		{0, "", "", "{.metadata.creationTimestamp}"},
		{0, "", "", "{.bad"},
		{0, "", "", "bad"},
		{0, "", "", ".spec.containers[*].ports[*].containerPort"},
		// kubectl's sorter ends the process on these (klog.Exitf) or panics.
		{0, "", "", "{.metadata.labels}"},
		{0, "", "", ".spec.replicas"},
		{0, "", "", ".spec.containers"},
		{0, "", "", ".spec.tags"},
		{0, "", "", "."},
		{byNamespace, "", "", ".metadata.name"},
	} {
		f.Add(seed.bits, seed.label, seed.expr, seed.sortBy)
	}
	objs := fuzzGroupObjects()
	f.Fuzz(func(t *testing.T, bits uint8, label, expr, sortBy string) {
		o := NewGetOptions(nil, discard)
		*o.PrintFlags.HumanReadableFlags.SortBy = sortBy
		o.Group = GroupFlags{
			ByOwner: bits&byOwner != 0, ByNode: bits&byNode != 0, ByNamespace: bits&byNamespace != 0,
			IncludeCompleted: bits&includeCompleted != 0,
			ByLabel:          label, byLabelSet: bits&byLabel != 0,
			ByJSONPath: expr, byJSONPathSet: bits&byJSONPath != 0,
		}
		if err := o.Validate(); err != nil {
			assertOneLine(t, err)
			return
		}
		mode, err := o.Group.mode()
		if err != nil {
			t.Fatalf("Validate accepted flags mode() rejects: %v", err)
		}
		if mode == query.GroupByLabel {
			if _, err := labels.Parse(label); err != nil {
				t.Errorf("--by-label %q accepted, but as a selector it is invalid: %v", label, err)
			}
		}
		if mode == "" {
			if sortBy != "" {
				fuzzSortBy(t, sortBy, objs)
			}
			return
		}
		name, indexers, err := o.Group.groupBy(mode).Indexers()
		if err != nil {
			t.Fatalf("Validate accepted flags Indexers rejects: %v", err)
		}
		if indexers[name] == nil {
			t.Fatalf("Indexers returned index %q, which it does not define", name)
		}
		store := cache.NewIndexer(cache.DeletionHandlingMetaNamespaceKeyFunc, indexers)
		for _, obj := range objs {
			if err := store.Add(obj); err != nil {
				t.Fatal(err)
			}
		}
		groups, err := index.Group(store, name)
		if err != nil {
			t.Fatal(err)
		}
		none, err := index.Unindexed(store, name)
		if err != nil {
			t.Fatal(err)
		}
		grouped := map[any]bool{}
		for _, members := range groups {
			for _, m := range members {
				grouped[m] = true
			}
		}
		for _, m := range none {
			if grouped[m] {
				t.Errorf("%T is both in a group and in <none>", m)
			}
			grouped[m] = true
		}
		if len(grouped) != len(objs) {
			t.Errorf("%d of %d objects are in a group or <none>", len(grouped), len(objs))
		}
	})
}

// fuzzSortBy prints objects sorted by a --sort-by that validation accepted, as
// tables and as JSON: the expression must parse there too, and the printers
// must not panic. Each group holds objects of one shape, as one informer's do.
func fuzzSortBy(t *testing.T, sortBy string, objs []runtime.Object) {
	t.Helper()
	pod, ct := objs[0].(*corev1.Pod), objs[2].(*unstructured.Unstructured)
	pod2, ct2 := pod.DeepCopy(), ct.DeepCopy()
	pod2.Name, pod2.Labels, pod2.Spec.NodeName = "web-3", map[string]string{"app": "api"}, ""
	pod2.Spec.Containers = append(pod2.Spec.Containers, corev1.Container{Name: "sidecar"})
	ct2.SetName("hourly")
	ct2.Object["spec"] = map[string]any{"cronSpec": int64(5), "replicas": "x", "tags": []any{}}
	members := []v1alpha1.Members{
		{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true, Objects: []runtime.Object{pod.DeepCopy(), pod2}},
		{GVK: schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}, Namespaced: true, Objects: []runtime.Object{ct.DeepCopy(), ct2}},
	}
	for _, format := range []string{"", "json"} {
		_, err := printers.Print(io.Discard, members, nil, nil, printers.Options{Format: format, SortBy: sortBy, Now: time.Now()})
		if err == nil {
			continue
		}
		if _, perr := get.RelaxedJSONPathExpression(sortBy); perr != nil || strings.HasPrefix(err.Error(), "sorting error: ") {
			t.Errorf("--sort-by %q accepted, but printing failed to parse it: %v", sortBy, err)
		}
		// Values that cannot be ordered are the user's to fix: one line.
		assertOneLine(t, err)
	}
}
