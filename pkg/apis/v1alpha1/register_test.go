package v1alpha1_test

import (
	"encoding/json"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// TestScheme: every kind is registered with its type, and a document read
// back through the scheme's codecs is the document written.
func TestScheme(t *testing.T) {
	for kind, want := range map[string]runtime.Object{
		v1alpha1.GroupListKind: &v1alpha1.GroupList{}, v1alpha1.TreeKind: &v1alpha1.Tree{}, v1alpha1.OwnerTreeKind: &v1alpha1.Tree{},
		v1alpha1.OrphanListKind: &v1alpha1.RelationList{}, v1alpha1.UsesListKind: &v1alpha1.RelationList{},
		v1alpha1.HistoryKind: &v1alpha1.History{}, v1alpha1.BlameKind: &v1alpha1.Blame{},
		v1alpha1.DiagnosisKind: &v1alpha1.Diagnosis{},
	} {
		obj, err := v1alpha1.Scheme.New(v1alpha1.SchemeGroupVersion.WithKind(kind))
		if err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		if reflect.TypeOf(obj) != reflect.TypeOf(want) {
			t.Errorf("%s is a %T, want %T", kind, obj, want)
		}
	}
	tree := v1alpha1.NewTree(v1alpha1.OwnerTreeKind, &v1alpha1.TreeItem{APIVersion: "v1", Kind: "Pod", Name: "web-1",
		Owners: []*v1alpha1.TreeItem{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", Controller: true}}})
	data, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	back, gvk, err := serializer.NewCodecFactory(v1alpha1.Scheme).UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.OwnerTreeKind); *gvk != want {
		t.Errorf("decoded as %v, want %v", gvk, want)
	}
	tree.Warnings = []string{}
	if !apiequality.Semantic.DeepEqual(back, tree) {
		t.Errorf("read back %+v, want %+v", back, tree)
	}
}

// TestObjectKind: a document's kind is its own apiVersion and kind fields,
// written apiVersion first.
func TestObjectKind(t *testing.T) {
	l := &v1alpha1.RelationList{}
	l.GetObjectKind().SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.UsesListKind))
	if l.APIVersion != "kubectl-idx.io/v1alpha1" || l.Kind != "UsesList" {
		t.Errorf("apiVersion %q, kind %q", l.APIVersion, l.Kind)
	}
	if got := l.GetObjectKind().GroupVersionKind(); got != (schema.GroupVersionKind{Group: "kubectl-idx.io", Version: "v1alpha1", Kind: "UsesList"}) {
		t.Errorf("GroupVersionKind() = %v", got)
	}
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"apiVersion":"kubectl-idx.io/v1alpha1","kind":"UsesList","items":[],"warnings":[]}`; string(data) != want {
		t.Errorf("JSON %s, want %s", data, want)
	}
}

// TestGroupListJSON: a group's members are its items, each object with its
// apiVersion and kind; over several contexts each context's are under its
// own; arrays are never null.
func TestGroupListJSON(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}}
	podGVK := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	doc := v1alpha1.NewGroupList("namespace")
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"apiVersion":"kubectl-idx.io/v1alpha1","kind":"GroupList","groupBy":"namespace","groups":[],"warnings":[]}`; string(data) != want {
		t.Errorf("empty list: %s, want %s", data, want)
	}
	doc.Groups = []v1alpha1.Group{{Name: "shop", Key: v1alpha1.GroupKey{Namespace: "shop"}, Members: []v1alpha1.Members{{GVK: podGVK, Objects: []runtime.Object{pod}}}}}
	if data, err = json.Marshal(doc.Groups[0]); err != nil {
		t.Fatal(err)
	}
	want := `{"name":"shop","key":{"namespace":"shop"},"summary":{"members":0,"kinds":null},"items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"shop"},"spec":{"containers":null},"status":{}}]}`
	if string(data) != want {
		t.Errorf("group: %s\nwant %s", data, want)
	}
	if pod.Kind != "" {
		t.Error("the cache object got a kind")
	}
	g := doc.Groups[0]
	g.Members[0].Context = "alpha"
	g.Contexts = []v1alpha1.GroupContext{{Context: "alpha"}, {Context: "beta"}}
	if data, err = json.Marshal(g); err != nil {
		t.Fatal(err)
	}
	var contexts struct {
		Items    []any `json:"items"`
		Contexts []struct {
			Context string `json:"context"`
			Items   []any  `json:"items"`
		} `json:"contexts"`
	}
	if err := json.Unmarshal(data, &contexts); err != nil {
		t.Fatal(err)
	}
	if contexts.Items != nil || len(contexts.Contexts) != 2 || len(contexts.Contexts[0].Items) != 1 || contexts.Contexts[1].Items == nil || len(contexts.Contexts[1].Items) != 0 {
		t.Errorf("a group of several contexts: %s", data)
	}
}

// TestDeepCopy: a document's copy is equal to it and shares nothing with it
// that a change could reach.
func TestDeepCopy(t *testing.T) {
	value := "web"
	created := metav1.Now()
	exists := true
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{"app": "web"}}}
	docs := []runtime.Object{
		&v1alpha1.GroupList{TypeMeta: v1alpha1.TypeMeta{APIVersion: "kubectl-idx.io/v1alpha1", Kind: "GroupList"}, AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{"w"}}, Groups: []v1alpha1.Group{{
			Name: "web", Key: v1alpha1.GroupKey{Value: &value},
			Summary: v1alpha1.GroupSummary{Members: 1, Kinds: map[string]int{"Pod": 1}, Pods: &v1alpha1.PodSummary{Total: 1},
				Node:      &v1alpha1.NodeSummary{Roles: []string{"worker"}, Requests: v1alpha1.Resources{Other: map[string]string{"nvidia.com/gpu": "1"}}},
				Resources: &v1alpha1.ResourceSummary{Pods: 1}},
			Members:  []v1alpha1.Members{{Objects: []runtime.Object{pod}}},
			Contexts: []v1alpha1.GroupContext{{Context: "a", Summary: v1alpha1.GroupSummary{Kinds: map[string]int{"Pod": 1}}}},
		}}},
		&v1alpha1.Tree{TypeMeta: v1alpha1.TypeMeta{APIVersion: "kubectl-idx.io/v1alpha1", Kind: "Tree"}, AnswerMeta: v1alpha1.AnswerMeta{Warnings: []string{"w"}}, Root: &v1alpha1.TreeItem{
			Name: "web", CreationTimestamp: &created, Children: []*v1alpha1.TreeItem{{Name: "web-1"}}}},
		&v1alpha1.RelationList{TypeMeta: v1alpha1.TypeMeta{APIVersion: "kubectl-idx.io/v1alpha1", Kind: "UsesList"}, Subject: &v1alpha1.RelationItem{Name: "cfg"},
			Items: []v1alpha1.RelationItem{{Name: "web-1", Via: []string{"volume"}, Exists: &exists, MissingOwners: []v1alpha1.OwnerReference{{Name: "gone"}}}}},
		&v1alpha1.WatchEvent{Type: "MODIFIED", Object: pod, Gap: &v1alpha1.WatchGap{From: "1", To: "9", Reason: "expired"},
			Diff: &[]v1alpha1.Change{{Path: ".spec", Old: map[string]any{"a": []any{int64(1)}}, New: 2, HasOld: true, HasNew: true}}},
	}
	for _, doc := range docs {
		c := doc.DeepCopyObject()
		if !apiequality.Semantic.DeepEqual(c, doc) {
			t.Errorf("%T: copy %+v differs", doc, c)
			continue
		}
		before, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		// Change everything the copy holds.
		switch c := c.(type) {
		case *v1alpha1.GroupList:
			g := &c.Groups[0]
			*g.Key.Value, g.Summary.Kinds["Pod"], g.Summary.Pods.Total = "x", 9, 9
			g.Summary.Node.Roles[0], g.Summary.Node.Requests.Other["nvidia.com/gpu"] = "x", "9"
			g.Members[0].Objects[0].(*corev1.Pod).Labels["app"] = "x"
			g.Contexts[0].Summary.Kinds["Pod"] = 9
			c.Warnings[0] = "x"
		case *v1alpha1.Tree:
			c.Root.Children[0].Name, c.Root.CreationTimestamp.Time, c.Warnings[0] = "x", created.AddDate(1, 0, 0), "x"
		case *v1alpha1.RelationList:
			c.Subject.Name, c.Items[0].Via[0], *c.Items[0].Exists, c.Items[0].MissingOwners[0].Name = "x", "x", false, "x"
		case *v1alpha1.WatchEvent:
			(*c.Diff)[0].Old.(map[string]any)["a"].([]any)[0] = int64(9)
			c.Object.(*corev1.Pod).Labels["app"] = "x"
			c.Gap.To = "x"
		}
		after, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if string(before) != string(after) {
			t.Errorf("%T: changing the copy changed the original:\n%s\n%s", doc, before, after)
		}
	}
}
