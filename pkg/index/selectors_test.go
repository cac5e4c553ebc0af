package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/cache"
)

// om is the metadata of a fixture, its UID made like newPod's.
func om(ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name)}
}

// labelSel builds a LabelSelector from match labels and expressions.
func labelSel(matchLabels map[string]string, exprs ...metav1.LabelSelectorRequirement) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: matchLabels, MatchExpressions: exprs}
}

func expr(key string, op metav1.LabelSelectorOperator, vals ...string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: vals}
}

func service(ns, name string, sel map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: om(ns, name), Spec: corev1.ServiceSpec{Selector: sel}}
}

func deployment(ns, name string, sel *metav1.LabelSelector) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: om(ns, name), Spec: appsv1.DeploymentSpec{Selector: sel}}
}

func pdb(ns, name string, sel *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{ObjectMeta: om(ns, name), Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel}}
}

func netpol(ns, name string, sel metav1.LabelSelector) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{ObjectMeta: om(ns, name), Spec: networkingv1.NetworkPolicySpec{PodSelector: sel}}
}

func job(ns, name string, sel *metav1.LabelSelector) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: om(ns, name), Spec: batchv1.JobSpec{Selector: sel}}
}

// describe renders a selector so that the two selectors whose String() is
// "" stay apart.
func describe(sel labels.Selector) string {
	switch {
	case sel == nil:
		return "<nil>"
	case labels.MatchesNothing(sel):
		return "<nothing>"
	case sel.Empty():
		return "<everything>"
	}
	return sel.String()
}

// orderedNames returns the namespace/name keys of objs in their order.
func orderedNames(t *testing.T, objs []any) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		k, err := cache.MetaNamespaceKeyFunc(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

func TestSelectorOf(t *testing.T) {
	web := map[string]string{"app": "web"}
	webTier := labelSel(web, expr("tier", metav1.LabelSelectorOpIn, "fe", "be"))
	raw := func(apiVersion, kind string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"namespace": "default", "name": "raw"},
			"spec":     spec,
		}}
	}
	cases := []struct {
		name    string
		obj     any
		want    string
		noSel   bool
		wantErr string
	}{
		{name: "service", obj: service("default", "web", map[string]string{"app": "web", "tier": "fe"}), want: "app=web,tier=fe"},
		// Endpoints of a Service without a selector are managed by hand.
		{name: "service nil selector", obj: service("default", "web", nil), want: "<nothing>"},
		{name: "service empty selector", obj: service("default", "web", map[string]string{}), want: "<nothing>"},
		{name: "service empty value", obj: service("default", "web", map[string]string{"app": ""}), want: "app="},
		// Not validated again, like the endpoints controller: it matches exactly.
		{name: "service invalid key", obj: service("default", "web", map[string]string{"bad key": "x"}), want: "bad key=x"},
		{name: "replication controller", obj: &corev1.ReplicationController{ObjectMeta: om("default", "rc"), Spec: corev1.ReplicationControllerSpec{Selector: web}}, want: "app=web"},
		{name: "replication controller nil", obj: &corev1.ReplicationController{ObjectMeta: om("default", "rc")}, want: "<nothing>"},
		{name: "replication controller empty", obj: &corev1.ReplicationController{ObjectMeta: om("default", "rc"), Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{}}}, want: "<nothing>"},
		{name: "deployment", obj: deployment("default", "web", webTier), want: "app=web,tier in (be,fe)"},
		{name: "deployment nil", obj: deployment("default", "web", nil), want: "<nothing>"},
		{name: "deployment empty", obj: deployment("default", "web", labelSel(nil)), want: "<everything>"},
		{
			name:    "deployment invalid operator",
			obj:     deployment("default", "web", labelSel(nil, expr("app", "Foo", "web"))),
			wantErr: `invalid spec.selector of Deployment default/web: "Foo" is not a valid label selector operator`,
		},
		{
			name:    "deployment invalid value",
			obj:     deployment("default", "web", labelSel(map[string]string{"app": "not valid!"})),
			wantErr: "invalid spec.selector of Deployment default/web: ",
		},
		{
			name:    "deployment in without values",
			obj:     deployment("default", "web", labelSel(nil, expr("app", metav1.LabelSelectorOpIn))),
			wantErr: "invalid spec.selector of Deployment default/web: ",
		},
		{name: "replica set", obj: &appsv1.ReplicaSet{ObjectMeta: om("default", "rs"), Spec: appsv1.ReplicaSetSpec{Selector: labelSel(web)}}, want: "app=web"},
		{name: "replica set nil", obj: &appsv1.ReplicaSet{ObjectMeta: om("default", "rs")}, want: "<nothing>"},
		{name: "stateful set", obj: &appsv1.StatefulSet{ObjectMeta: om("default", "db"), Spec: appsv1.StatefulSetSpec{Selector: labelSel(nil, expr("app", metav1.LabelSelectorOpExists))}}, want: "app"},
		{name: "stateful set nil", obj: &appsv1.StatefulSet{ObjectMeta: om("default", "db")}, want: "<nothing>"},
		{name: "daemon set", obj: &appsv1.DaemonSet{ObjectMeta: om("kube-system", "ds"), Spec: appsv1.DaemonSetSpec{Selector: labelSel(web)}}, want: "app=web"},
		{name: "daemon set nil", obj: &appsv1.DaemonSet{ObjectMeta: om("kube-system", "ds")}, want: "<nothing>"},
		{name: "job", obj: job("default", "j", labelSel(map[string]string{"batch.kubernetes.io/controller-uid": "u1"})), want: "batch.kubernetes.io/controller-uid=u1"},
		{name: "job nil", obj: job("default", "j", nil), want: "<nothing>"},
		{name: "pdb", obj: pdb("default", "web", labelSel(nil, expr("app", metav1.LabelSelectorOpNotIn, "db"))), want: "app notin (db)"},
		{name: "pdb nil", obj: pdb("default", "web", nil), want: "<nothing>"},
		// policy/v1: an empty selector selects every pod in the namespace.
		{name: "pdb empty", obj: pdb("default", "web", labelSel(nil)), want: "<everything>"},
		{name: "network policy", obj: netpol("default", "np", *labelSel(nil, expr("app", metav1.LabelSelectorOpDoesNotExist))), want: "!app"},
		{name: "network policy empty", obj: netpol("default", "np", metav1.LabelSelector{}), want: "<everything>"},
		{
			name:    "network policy invalid",
			obj:     netpol("default", "np", *labelSel(nil, expr("app", "Foo"))),
			wantErr: "invalid spec.podSelector of NetworkPolicy default/np: ",
		},
		{name: "tombstone", obj: tombstone(service("default", "web", web)), want: "app=web"},

		{name: "unstructured service", obj: toUnstructured(t, service("default", "web", web), "v1", "Service"), want: "app=web"},
		{name: "unstructured service nil", obj: toUnstructured(t, service("default", "web", nil), "v1", "Service"), want: "<nothing>"},
		{name: "unstructured deployment", obj: toUnstructured(t, deployment("default", "web", webTier), "apps/v1", "Deployment"), want: "app=web,tier in (be,fe)"},
		{name: "unstructured deployment nil", obj: toUnstructured(t, deployment("default", "web", nil), "apps/v1", "Deployment"), want: "<nothing>"},
		{name: "unstructured deployment empty", obj: toUnstructured(t, deployment("default", "web", labelSel(nil)), "apps/v1", "Deployment"), want: "<everything>"},
		{name: "unstructured pdb empty", obj: toUnstructured(t, pdb("default", "web", labelSel(nil)), "policy/v1", "PodDisruptionBudget"), want: "<everything>"},
		{name: "unstructured network policy empty", obj: toUnstructured(t, netpol("default", "np", metav1.LabelSelector{}), "networking.k8s.io/v1", "NetworkPolicy"), want: "<everything>"},
		// podSelector cannot be nil; decoding a missing one gives {}.
		{name: "unstructured network policy without podSelector", obj: raw("networking.k8s.io/v1", "NetworkPolicy", map[string]any{}), want: "<everything>"},
		{name: "unstructured job", obj: raw("batch/v1", "Job", map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"a": "b"}}}), want: "a=b"},
		{name: "unstructured null selector", obj: raw("apps/v1", "ReplicaSet", map[string]any{"selector": nil}), want: "<nothing>"},
		{
			name:    "unstructured invalid operator",
			obj:     toUnstructured(t, deployment("default", "web", labelSel(nil, expr("app", "Foo"))), "apps/v1", "Deployment"),
			wantErr: `invalid spec.selector of Deployment default/web: "Foo" is not a valid label selector operator`,
		},
		{
			name:    "unstructured selector not an object",
			obj:     raw("apps/v1", "Deployment", map[string]any{"selector": "app=web"}),
			wantErr: "invalid spec.selector of Deployment default/raw: expected an object, got string",
		},
		{
			name:    "unstructured malformed matchLabels",
			obj:     raw("apps/v1", "StatefulSet", map[string]any{"selector": map[string]any{"matchLabels": "app=web"}}),
			wantErr: "invalid spec.selector of StatefulSet default/raw: ",
		},
		{
			name:    "unstructured service with a number",
			obj:     raw("v1", "Service", map[string]any{"selector": map[string]any{"port": int64(80)}}),
			wantErr: "invalid spec.selector of Service default/raw: ",
		},
		{name: "unstructured without spec", obj: raw("v1", "ReplicationController", nil), want: "<nothing>"},

		{name: "pod", obj: newPod("default", "web-1", withLabels("app", "web")), noSel: true},
		{name: "config map", obj: &corev1.ConfigMap{ObjectMeta: om("default", "cfg")}, noSel: true},
		{name: "unstructured pod", obj: toUnstructured(t, newPod("default", "p"), "v1", "Pod"), noSel: true},
		// Same group and kind names elsewhere are different kinds.
		{name: "unstructured other group", obj: raw("example.com/v1", "Deployment", map[string]any{"selector": map[string]any{}}), noSel: true},
		// Metadata-only informers hold no spec.
		{name: "partial service", obj: partial(service("default", "web", web), "v1", "Service"), noSel: true},

		{name: "untyped nil", obj: nil, wantErr: "expected an object with metadata, got nil <nil>"},
		{name: "nil service", obj: (*corev1.Service)(nil), wantErr: "got nil *v1.Service"},
		{name: "nil network policy", obj: (*networkingv1.NetworkPolicy)(nil), wantErr: "got nil *v1.NetworkPolicy"},
		{name: "string", obj: "default/web", wantErr: "got string"},
		{name: "service value", obj: corev1.Service{}, wantErr: "got v1.Service"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(tc.obj)
			sel, has, err := SelectorOf(tc.obj)
			assertUnchanged(t, before, tc.obj)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				if sel != nil {
					t.Errorf("selector %q alongside an error", sel)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if has == tc.noSel {
				t.Fatalf("has = %v, want %v", has, !tc.noSel)
			}
			if tc.noSel {
				if sel != nil {
					t.Errorf("selector %q for an object without one", sel)
				}
				return
			}
			if got := describe(sel); got != tc.want {
				t.Errorf("selector = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestSelectorKinds checks that SelectorKinds, HasSelector and SelectorOf
// agree: every listed kind has a typed form SelectorOf reads, and no other.
func TestSelectorKinds(t *testing.T) {
	typed := []metav1.Object{
		&corev1.Service{}, &corev1.ReplicationController{},
		&appsv1.Deployment{}, &appsv1.ReplicaSet{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{},
		&batchv1.Job{}, &policyv1.PodDisruptionBudget{}, &networkingv1.NetworkPolicy{},
	}
	var fromTyped []schema.GroupKind
	for _, obj := range typed {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj.(runtime.Object))
		if err != nil {
			t.Fatal(err)
		}
		gk := gvks[0].GroupKind()
		fromTyped = append(fromTyped, gk)
		if !HasSelector(gk) {
			t.Errorf("HasSelector(%v) = false", gk)
		}
		if _, has, err := SelectorOf(obj); !has || err != nil {
			t.Errorf("SelectorOf(%T) = has %v, %v", obj, has, err)
		}
	}
	kinds := SelectorKinds()
	if len(kinds) != len(fromTyped) {
		t.Errorf("SelectorKinds() = %v, want the kinds of %v", kinds, fromTyped)
	}
	for _, gk := range kinds {
		if !slices.Contains(fromTyped, gk) {
			t.Errorf("SelectorKinds() lists %v, which SelectorOf does not read typed", gk)
		}
	}
	if kinds[0] != (schema.GroupKind{Kind: "Service"}) {
		t.Errorf("SelectorKinds()[0] = %v, want Service first", kinds[0])
	}
	// The caller owns the slice.
	kinds[0] = schema.GroupKind{Kind: "Pod"}
	if SelectorKinds()[0].Kind != "Service" || HasSelector(schema.GroupKind{Kind: "Pod"}) {
		t.Error("changing SelectorKinds' result changed the kinds")
	}
	for _, gk := range []schema.GroupKind{
		{Kind: "Pod"}, {Kind: "ConfigMap"}, {Group: "batch", Kind: "CronJob"},
		{Group: "extensions", Kind: "Deployment"}, {Kind: "Deployment"}, {Group: "apps", Kind: "deployment"},
	} {
		if HasSelector(gk) {
			t.Errorf("HasSelector(%v) = true", gk)
		}
	}
}

func TestLabelPairIndexFunc(t *testing.T) {
	labelled := newPod("default", "web-1", withLabels("app", "web", "example.com/tier", ""))
	want := []string{"app", "app=web", "example.com/tier", "example.com/tier="}
	cases := []indexCase{
		{name: "no labels", obj: newPod("default", "bare"), want: nil},
		{name: "empty labels", obj: newPod("default", "p", withLabels()), want: nil},
		{name: "labels", obj: labelled, want: want},
		{name: "unstructured", obj: toUnstructured(t, labelled, "v1", "Pod"), want: want},
		{name: "partial metadata", obj: partial(labelled, "v1", "Pod"), want: want},
		{name: "tombstone", obj: tombstone(labelled), want: want},
		{name: "any kind", obj: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"zone": "a"}}}, want: []string{"zone", "zone=a"}},
		{
			name: "malformed labels",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"metadata": map[string]any{"name": "x", "labels": "app=web"},
			}},
			want: nil,
		},
	}
	runIndexCases(t, LabelPairIndexFunc, append(cases, wrongTypes(LabelPairIndex)...))
}

func TestSelectorIndexFunc(t *testing.T) {
	web := service("default", "web", map[string]string{"tier": "fe", "app": "web"})
	cases := []indexCase{
		// The first equality in key order.
		{name: "service", obj: web, want: []string{"app=web"}},
		{name: "service without selector", obj: service("default", "manual", nil), want: nil},
		{name: "service empty value", obj: service("default", "s", map[string]string{"app": ""}), want: []string{"app="}},
		{
			name: "equality preferred to in",
			obj:  deployment("default", "d", labelSel(map[string]string{"z": "1"}, expr("a", metav1.LabelSelectorOpIn, "x"))),
			want: []string{"z=1"},
		},
		{
			name: "in: a key per value",
			obj:  deployment("default", "d", labelSel(nil, expr("tier", metav1.LabelSelectorOpIn, "fe", "be"), expr("app", metav1.LabelSelectorOpExists))),
			want: []string{"tier=be", "tier=fe"},
		},
		{
			name: "exists",
			obj:  job("default", "j", labelSel(nil, expr("app", metav1.LabelSelectorOpNotIn, "db"), expr("tier", metav1.LabelSelectorOpExists))),
			want: []string{"tier"},
		},
		{name: "notin only", obj: pdb("default", "p", labelSel(nil, expr("app", metav1.LabelSelectorOpNotIn, "db"))), want: []string{SelectAllKey}},
		{name: "does-not-exist only", obj: netpol("default", "np", *labelSel(nil, expr("app", metav1.LabelSelectorOpDoesNotExist))), want: []string{SelectAllKey}},
		{name: "empty pdb", obj: pdb("default", "p", labelSel(nil)), want: []string{SelectAllKey}},
		{name: "nil pdb", obj: pdb("default", "p", nil), want: nil},
		{name: "empty network policy", obj: netpol("default", "np", metav1.LabelSelector{}), want: []string{SelectAllKey}},
		// A store panics on an index error; an invalid selector has no key.
		{name: "invalid operator", obj: deployment("default", "d", labelSel(nil, expr("app", "Foo"))), want: nil},
		{name: "invalid unstructured", obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "d"}, "spec": map[string]any{"selector": int64(3)},
		}}, want: nil},
		{name: "pod", obj: newPod("default", "p", withLabels("app", "web")), want: nil},
		{name: "config map", obj: &corev1.ConfigMap{ObjectMeta: om("default", "cfg")}, want: nil},
		{name: "partial service", obj: partial(web, "v1", "Service"), want: nil},
		{name: "unstructured service", obj: toUnstructured(t, web, "v1", "Service"), want: []string{"app=web"}},
		{name: "tombstone", obj: tombstone(web), want: []string{"app=web"}},
	}
	runIndexCases(t, SelectorIndexFunc, append(cases, wrongTypes(SelectorIndex)...))
}

// TestSelectorKeys covers the selectors only the label syntax can write:
// ==, !=, gt and lt.
func TestSelectorKeys(t *testing.T) {
	for _, tc := range []struct {
		sel  string
		want []string
	}{
		{"", []string{SelectAllKey}},
		{"app=web,tier=fe", []string{"app=web"}},
		{"app==web", []string{"app=web"}},
		{"app=", []string{"app="}},
		{"tier in (b,a),app", []string{"tier=a", "tier=b"}},
		{"app,tier in (a)", []string{"tier=a"}},
		{"a in (x),z=1", []string{"z=1"}},
		{"app", []string{"app"}},
		// gt and lt need the label, like exists.
		{"x>1", []string{"x"}},
		{"!app,x<1", []string{"x"}},
		{"app!=web", []string{SelectAllKey}},
		{"!app", []string{SelectAllKey}},
		{"app notin (a),b!=c", []string{SelectAllKey}},
	} {
		sel, err := labels.Parse(tc.sel)
		if err != nil {
			t.Fatal(err)
		}
		got := selectorKeys(sel)
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("selectorKeys(%q) = %q, want %q", tc.sel, got, tc.want)
		}
	}
	if got := selectorKeys(labels.Nothing()); got != nil {
		t.Errorf("selectorKeys(Nothing) = %q, want nil", got)
	}
}

// newPodStore returns a pod store indexed as a selects query needs.
func newPodStore() cache.Indexer {
	ix := Indexers()
	ix[LabelPairIndex] = LabelPairIndexFunc
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, ix)
}

// newSelectorStore returns a store of selector-holding objects. Informers hold
// one kind each; a test store can mix them as long as names differ.
func newSelectorStore() cache.Indexer {
	ix := Indexers()
	ix[SelectorIndex] = SelectorIndexFunc
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, ix)
}

func selectedNames(t *testing.T, s cache.Indexer, ns string, sel labels.Selector) []string {
	t.Helper()
	objs, err := Selected(s, ns, sel)
	if err != nil {
		t.Fatal(err)
	}
	if objs != nil && len(objs) == 0 {
		t.Errorf("Selected(%q, %q) = an empty slice, want nil", ns, sel)
	}
	return orderedNames(t, objs)
}

func selectedByNames(t *testing.T, s cache.Indexer, ns string, set labels.Set) []string {
	t.Helper()
	objs, err := SelectedBy(s, ns, set)
	if err != nil {
		t.Fatal(err)
	}
	if objs != nil && len(objs) == 0 {
		t.Errorf("SelectedBy(%q, %v) = an empty slice, want nil", ns, set)
	}
	return orderedNames(t, objs)
}

func mustParse(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func TestSelected(t *testing.T) {
	s := newPodStore()
	web1 := newPod("default", "web-1", withLabels("app", "web", "tier", "fe"))
	web2 := newPod("default", "web-2", withLabels("app", "web"))
	db := newPod("default", "db", withLabels("app", "db", "tier", ""))
	bare := newPod("default", "bare")
	web3 := newPod("other", "web-3", withLabels("app", "web"))
	// A metadata-only pod: labels are metadata.
	metaOnly := partial(newPod("meta", "p", withLabels("app", "web")), "v1", "Pod")
	objs := []any{web1, web2, db, bare, web3, metaOnly}
	unchanged := addAll(t, s, objs)
	check := func(t *testing.T, ns, sel string, want ...string) {
		t.Helper()
		if got := selectedNames(t, s, ns, mustParse(t, sel)); !slices.Equal(got, want) {
			t.Errorf("Selected(%q, %q) = %q, want %q", ns, sel, got, want)
		}
	}

	t.Run("after add", func(t *testing.T) {
		check(t, "default", "app=web", "default/web-1", "default/web-2")
		check(t, "", "app=web", "default/web-1", "default/web-2", "meta/p", "other/web-3")
		check(t, "default", "tier", "default/db", "default/web-1")
		check(t, "default", "tier=", "default/db")
		check(t, "default", "app in (web,db)", "default/db", "default/web-1", "default/web-2")
		check(t, "default", "app=web,tier=fe", "default/web-1")
		check(t, "default", "app=web,tier!=fe", "default/web-2")
		// No requirement needs a label: the namespace is the candidate set.
		check(t, "default", "app notin (web)", "default/bare", "default/db")
		check(t, "default", "", "default/bare", "default/db", "default/web-1", "default/web-2")
		check(t, "", "!app", "default/bare")
		check(t, "default", "app=nope")
		check(t, "default", "app=web,nope")
		check(t, "nowhere", "")
		check(t, "nowhere", "app=web")
		for _, sel := range []labels.Selector{labels.Nothing(), nil} {
			if got, err := Selected(s, "default", sel); got != nil || err != nil {
				t.Errorf("Selected(default, %v) = %v, %v; want nil", sel, got, err)
			}
		}
	})

	t.Run("update", func(t *testing.T) {
		moved := web2.DeepCopy()
		moved.Labels = map[string]string{"app": "db"}
		if err := s.Update(moved); err != nil {
			t.Fatal(err)
		}
		check(t, "default", "app=web", "default/web-1")
		check(t, "default", "app=db", "default/db", "default/web-2")
		check(t, "default", "tier", "default/db", "default/web-1")
	})

	t.Run("delete", func(t *testing.T) {
		for _, o := range []any{web1, db} {
			if err := s.Delete(o); err != nil {
				t.Fatal(err)
			}
		}
		check(t, "default", "app=web")
		check(t, "default", "tier")
		check(t, "default", "app", "default/web-2")
		check(t, "default", "", "default/bare", "default/web-2")
	})

	unchanged()
}

func TestSelectedBy(t *testing.T) {
	s := newSelectorStore()
	webSvc := service("default", "web-svc", map[string]string{"app": "web"})
	objs := []any{
		webSvc,
		service("default", "manual", nil),
		deployment("default", "web", labelSel(map[string]string{"app": "web"}, expr("tier", metav1.LabelSelectorOpIn, "fe", "be"))),
		deployment("other", "web-other", labelSel(map[string]string{"app": "web"})),
		netpol("default", "all", metav1.LabelSelector{}),
		netpol("default", "not-db", *labelSel(nil, expr("app", metav1.LabelSelectorOpNotIn, "db"))),
		pdb("default", "none", nil),
		pdb("default", "everything", labelSel(nil)),
		&corev1.ReplicationController{ObjectMeta: om("default", "legacy"), Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{"app": "web", "tier": "fe"}}},
		job("default", "batch", labelSel(nil, expr("job-name", metav1.LabelSelectorOpExists))),
		&corev1.ConfigMap{ObjectMeta: om("default", "cfg")},
		deployment("default", "broken", labelSel(nil, expr("app", "Foo"))),
		toUnstructured(t, service("default", "u-svc", map[string]string{"app": "db"}), "v1", "Service"),
	}
	unchanged := addAll(t, s, objs)
	check := func(t *testing.T, ns string, set labels.Set, want ...string) {
		t.Helper()
		if got := selectedByNames(t, s, ns, set); !slices.Equal(got, want) {
			t.Errorf("SelectedBy(%q, %v) = %q, want %q", ns, set, got, want)
		}
	}

	t.Run("after add", func(t *testing.T) {
		check(t, "default", labels.Set{"app": "web", "tier": "fe"},
			"default/all", "default/everything", "default/legacy", "default/not-db", "default/web", "default/web-svc")
		check(t, "default", labels.Set{"app": "db"}, "default/all", "default/everything", "default/u-svc")
		check(t, "default", labels.Set{}, "default/all", "default/everything", "default/not-db")
		check(t, "default", nil, "default/all", "default/everything", "default/not-db")
		check(t, "default", labels.Set{"job-name": "x"}, "default/all", "default/batch", "default/everything", "default/not-db")
		check(t, "", labels.Set{"app": "web"},
			"default/all", "default/everything", "default/not-db", "default/web-svc", "other/web-other")
		check(t, "other", labels.Set{"app": "web"}, "other/web-other")
		check(t, "nowhere", labels.Set{"app": "web"})
		// The keys hold no '=' confusion: a label named like a pair is a key.
		check(t, "other", labels.Set{"app=web": ""})
	})

	t.Run("update", func(t *testing.T) {
		moved := webSvc.DeepCopy()
		moved.Spec.Selector = map[string]string{"app": "db"}
		if err := s.Update(moved); err != nil {
			t.Fatal(err)
		}
		check(t, "default", labels.Set{"app": "web", "tier": "fe"},
			"default/all", "default/everything", "default/legacy", "default/not-db", "default/web")
		check(t, "default", labels.Set{"app": "db"}, "default/all", "default/everything", "default/u-svc", "default/web-svc")
	})

	t.Run("delete", func(t *testing.T) {
		for _, o := range objs[4:6] {
			if err := s.Delete(o); err != nil {
				t.Fatal(err)
			}
		}
		check(t, "default", labels.Set{}, "default/everything")
		check(t, "default", labels.Set{"app": "web", "tier": "be"}, "default/everything", "default/web")
	})

	unchanged()
}

func TestSelectorQueriesNeedTheirIndexes(t *testing.T) {
	bare := cache.NewIndexer(cache.MetaNamespaceKeyFunc, Indexers())
	if _, err := Selected(bare, "default", labels.Everything()); err == nil || err.Error() != `index "labelpair" does not exist` {
		t.Errorf("Selected error = %v", err)
	}
	onlyPairs := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{LabelPairIndex: LabelPairIndexFunc})
	if _, err := Selected(onlyPairs, "default", mustParse(t, "app=web")); err == nil || err.Error() != `index "namespace" does not exist` {
		t.Errorf("Selected error = %v", err)
	}
	if _, err := SelectedBy(bare, "default", labels.Set{"app": "web"}); err == nil || err.Error() != `index "selector" does not exist` {
		t.Errorf("SelectedBy error = %v", err)
	}
}

// selectorGen draws labels and selectors from a small vocabulary, so that
// random pods and selectors meet often enough to test something.
type selectorGen struct {
	rng *rand.Rand
}

var (
	genKeys   = []string{"app", "tier", "env", "n", "example.com/role"}
	genValues = []string{"a", "b", "c", "", "1", "2"}
	genNS     = []string{"ns-a", "ns-b", "ns-c"}
)

func (g selectorGen) pick(from []string) string { return from[g.rng.IntN(len(from))] }

// picks returns one to three distinct values.
func (g selectorGen) picks() []string {
	var out []string
	for range 1 + g.rng.IntN(3) {
		if v := g.pick(genValues); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func (g selectorGen) labels() map[string]string {
	n := g.rng.IntN(5)
	if n == 0 {
		return nil
	}
	ls := map[string]string{}
	for range n {
		ls[g.pick(genKeys)] = g.pick(genValues)
	}
	return ls
}

// selector returns a selector of up to three requirements over every
// operator, Nothing and Everything included.
func (g selectorGen) selector(t *testing.T) labels.Selector {
	switch g.rng.IntN(20) {
	case 0:
		return labels.Nothing()
	case 1:
		return labels.Everything()
	}
	ops := []selection.Operator{
		selection.Equals, selection.DoubleEquals, selection.NotEquals, selection.In, selection.NotIn,
		selection.Exists, selection.DoesNotExist, selection.GreaterThan, selection.LessThan,
	}
	sel := labels.NewSelector()
	for range g.rng.IntN(4) {
		op := ops[g.rng.IntN(len(ops))]
		var vals []string
		switch op {
		case selection.Equals, selection.DoubleEquals, selection.NotEquals:
			vals = []string{g.pick(genValues)}
		case selection.In, selection.NotIn:
			vals = g.picks()
		case selection.GreaterThan, selection.LessThan:
			vals = []string{g.pick([]string{"0", "1", "2"})}
		}
		r, err := labels.NewRequirement(g.pick(genKeys), op, vals)
		if err != nil {
			t.Fatal(err)
		}
		sel = sel.Add(*r)
	}
	if g.rng.IntN(5) == 0 {
		r, err := labels.NewRequirement("id", selection.Equals, []string{fmt.Sprintf("pod-%03d", g.rng.IntN(300))})
		if err != nil {
			t.Fatal(err)
		}
		sel = sel.Add(*r)
	}
	return sel
}

// labelSelector returns nil, {} or up to two match labels and two
// expressions; one in fifty is invalid.
func (g selectorGen) labelSelector() *metav1.LabelSelector {
	switch g.rng.IntN(10) {
	case 0:
		return nil
	case 1:
		return &metav1.LabelSelector{}
	}
	ls := &metav1.LabelSelector{}
	for range g.rng.IntN(3) {
		if ls.MatchLabels == nil {
			ls.MatchLabels = map[string]string{}
		}
		ls.MatchLabels[g.pick(genKeys)] = g.pick(genValues)
	}
	ops := []metav1.LabelSelectorOperator{
		metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist,
	}
	for range g.rng.IntN(3) {
		op := ops[g.rng.IntN(len(ops))]
		var vals []string
		if op == metav1.LabelSelectorOpIn || op == metav1.LabelSelectorOpNotIn {
			vals = g.picks()
		}
		ls.MatchExpressions = append(ls.MatchExpressions, expr(g.pick(genKeys), op, vals...))
	}
	if g.rng.IntN(50) == 0 {
		ls.MatchExpressions = append(ls.MatchExpressions, expr("app", "Foo"))
	}
	return ls
}

// pod returns a pod with random labels; one in five also has a label of its
// own, so that some buckets hold a single pod.
func (g selectorGen) pod(name string) *corev1.Pod {
	p := newPod(g.pick(genNS), name)
	p.Labels = g.labels()
	if g.rng.IntN(5) == 0 {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels["id"] = name
	}
	return p
}

// selectorObject returns an object of a random selector kind, named name in
// namespace ns.
func (g selectorGen) selectorObject(t *testing.T, ns, name string) any {
	switch g.rng.IntN(6) {
	case 0:
		return service(ns, name, g.labels())
	case 1:
		return deployment(ns, name, g.labelSelector())
	case 2:
		return pdb(ns, name, g.labelSelector())
	case 3:
		ls := g.labelSelector()
		if ls == nil {
			ls = &metav1.LabelSelector{}
		}
		return netpol(ns, name, *ls)
	case 4:
		return &corev1.ReplicationController{ObjectMeta: om(ns, name), Spec: corev1.ReplicationControllerSpec{Selector: g.labels()}}
	}
	// Unstructured objects take the other path through SelectorOf.
	return toUnstructured(t, job(ns, name, g.labelSelector()), "batch/v1", "Job")
}

// TestSelectorsAgreeWithScan is the property behind the two indexes: on
// random pods and selectors, Selected and SelectedBy return exactly what
// matching every pod against every selector returns, so the indexes never
// miss a match, through adds, updates and deletes.
func TestSelectorsAgreeWithScan(t *testing.T) {
	g := selectorGen{rng: rand.New(rand.NewPCG(1, 2))}
	pods, sels := newPodStore(), newSelectorStore()
	const n = 300
	for i := range n {
		if err := pods.Add(g.pod(fmt.Sprintf("pod-%03d", i))); err != nil {
			t.Fatal(err)
		}
		if err := sels.Add(g.selectorObject(t, g.pick(genNS), fmt.Sprintf("sel-%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	selectors := make([]labels.Selector, n)
	for i := range selectors {
		selectors[i] = g.selector(t)
	}

	scanSelected := func(ns string, sel labels.Selector) []string {
		var out []any
		for _, obj := range pods.List() {
			p := obj.(*corev1.Pod)
			if (ns == "" || p.Namespace == ns) && sel.Matches(labels.Set(p.Labels)) {
				out = append(out, p)
			}
		}
		return sortedObjKeys(t, out)
	}
	scanSelectedBy := func(ns string, set labels.Set) []string {
		var out []any
		for _, obj := range sels.List() {
			m, _ := meta.Accessor(obj)
			sel, has, err := SelectorOf(obj)
			if (ns == "" || m.GetNamespace() == ns) && err == nil && has && sel.Matches(set) {
				out = append(out, obj)
			}
		}
		return sortedObjKeys(t, out)
	}
	check := func(t *testing.T) {
		var selected, selectedBy int
		for _, sel := range selectors {
			for _, ns := range []string{"ns-a", ""} {
				got, want := selectedNames(t, pods, ns, sel), scanSelected(ns, sel)
				if !slices.Equal(got, want) {
					t.Fatalf("Selected(%q, %q) = %q, want %q", ns, describe(sel), got, want)
				}
				selected += len(got)
			}
		}
		sets := []labels.Set{nil}
		for _, obj := range pods.List() {
			sets = append(sets, obj.(*corev1.Pod).Labels)
		}
		for range 50 {
			sets = append(sets, g.labels())
		}
		for _, set := range sets {
			for _, ns := range []string{"ns-b", ""} {
				got, want := selectedByNames(t, sels, ns, set), scanSelectedBy(ns, set)
				if !slices.Equal(got, want) {
					t.Fatalf("SelectedBy(%q, %v) = %q, want %q", ns, set, got, want)
				}
				selectedBy += len(got)
			}
		}
		// Guard against a vocabulary so sparse that everything is empty.
		if selected < n || selectedBy < n {
			t.Fatalf("only %d selected and %d selected-by matches: the test proves little", selected, selectedBy)
		}
		t.Logf("%d selected, %d selected-by matches", selected, selectedBy)
	}

	t.Run("after add", check)
	t.Run("after update and delete", func(t *testing.T) {
		for _, obj := range pods.List()[:n/3] {
			p := obj.(*corev1.Pod).DeepCopy()
			p.Labels = g.labels()
			if err := pods.Update(p); err != nil {
				t.Fatal(err)
			}
		}
		for _, obj := range sels.List()[:n/3] {
			m, _ := meta.Accessor(obj)
			if err := sels.Update(g.selectorObject(t, m.GetNamespace(), m.GetName())); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []cache.Indexer{pods, sels} {
			for _, obj := range s.List()[:n/6] {
				if err := s.Delete(obj); err != nil {
					t.Fatal(err)
				}
			}
		}
		check(t)
	})
}

// sortedObjKeys returns the namespace/name keys of objs, sorted.
func sortedObjKeys(t *testing.T, objs []any) []string {
	keys := orderedNames(t, objs)
	slices.Sort(keys)
	return keys
}

// BenchmarkSelectors compares the indexed queries with the scans they
// replace, on benchPodSet's 10,000 pods and a Service per app and namespace.
// Every pod carries pod-template-hash=abc123, so "shared" shows the cost of a
// selector with a label on every pod: its bucket is read too, because the
// app bucket (200 pods) is above fewCandidates.
func BenchmarkSelectors(b *testing.B) {
	pods, sels := newPodStore(), newSelectorStore()
	for _, p := range benchPodSet() {
		if err := pods.Add(p); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 500 {
		svc := service(fmt.Sprintf("ns-%d", i%10), fmt.Sprintf("svc-%d", i), map[string]string{"app": fmt.Sprintf("rs-%d", i%50)})
		if err := sels.Add(svc); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct{ name, sel string }{
		{"app", "app=rs-3"},
		{"shared", "app=rs-3,pod-template-hash=abc123"},
	} {
		sel, err := labels.Parse(bc.sel)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("selected/index/"+bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Selected(pods, "ns-3", sel); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("selected/scan/"+bc.name, func(b *testing.B) {
			for b.Loop() {
				var out []any
				for _, obj := range pods.List() {
					if p := obj.(*corev1.Pod); p.Namespace == "ns-3" && sel.Matches(labels.Set(p.Labels)) {
						out = append(out, p)
					}
				}
			}
		})
	}
	set := labels.Set{"app": "rs-3", "pod-template-hash": "abc123"}
	b.Run("selected-by/index", func(b *testing.B) {
		for b.Loop() {
			if _, err := SelectedBy(sels, "ns-3", set); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("selected-by/scan", func(b *testing.B) {
		for b.Loop() {
			var out []any
			for _, obj := range sels.List() {
				s, _, _ := SelectorOf(obj)
				if obj.(*corev1.Service).Namespace == "ns-3" && s.Matches(set) {
					out = append(out, obj)
				}
			}
		}
	})
}
