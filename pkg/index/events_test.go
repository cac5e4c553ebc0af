package index

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// involvedEvent is a core Event about the object ref names.
func involvedEvent(ns, name string, ref corev1.ObjectReference) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("event-" + name)},
		InvolvedObject: ref,
		Reason:         "Test",
	}
}

func podObjectRef(name string, uid types.UID) corev1.ObjectReference {
	return corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "shop", Name: name, UID: uid}
}

func TestInvolvedObjectKey(t *testing.T) {
	for _, tc := range []struct{ kind, ns, name, want string }{
		{"Pod", "shop", "web-1", "Pod/shop/web-1"},
		// Cluster-scoped: the namespace part stays, empty, so keys cannot
		// collide with a namespaced object's.
		{"Node", "", "worker-1", "Node//worker-1"},
	} {
		if got := InvolvedObjectKey(tc.kind, tc.ns, tc.name); got != tc.want {
			t.Errorf("InvolvedObjectKey(%q, %q, %q) = %q, want %q", tc.kind, tc.ns, tc.name, got, tc.want)
		}
	}
}

func TestInvolvedObjectIndexFunc(t *testing.T) {
	withUID := involvedEvent("shop", "web-1.17a", podObjectRef("web-1", "pod-uid"))
	cases := []indexCase{
		// The UID tells a recreated object from its predecessor, so it wins.
		{name: "with UID", obj: withUID, want: []string{"pod-uid"}},
		{name: "UID without name", obj: involvedEvent("shop", "e", corev1.ObjectReference{Kind: "Pod", UID: "pod-uid"}), want: []string{"pod-uid"}},
		{name: "without UID", obj: involvedEvent("shop", "e", podObjectRef("web-1", "")), want: []string{"Pod/shop/web-1"}},
		{
			name: "cluster-scoped without UID",
			obj:  involvedEvent("default", "e", corev1.ObjectReference{Kind: "Node", Name: "worker-1"}),
			want: []string{"Node//worker-1"},
		},
		{name: "no name and no UID", obj: involvedEvent("shop", "e", corev1.ObjectReference{Kind: "Pod", Namespace: "shop"}), want: nil},
		{name: "empty involvedObject", obj: &corev1.Event{}, want: nil},
		{name: "tombstone", obj: tombstone(withUID), want: []string{"pod-uid"}},

		// Only core events have an involvedObject: anything else is a
		// programming error, named by its type.
		{name: "untyped nil", obj: nil, wantErr: "involvedobject index: want *v1.Event, got <nil>"},
		{name: "nil event", obj: (*corev1.Event)(nil), wantErr: "involvedobject index: expected an event, got nil *v1.Event"},
		{name: "tombstone of a nil event", obj: tombstone((*corev1.Event)(nil)), wantErr: "got nil *v1.Event"},
		{name: "event value", obj: corev1.Event{}, wantErr: "got v1.Event"},
		{name: "pod", obj: newPod("shop", "web-1"), wantErr: "want *v1.Event, got *v1.Pod"},
		// A tombstone is only the envelope: the error names what it holds.
		{name: "tombstone of a pod", obj: tombstone(newPod("shop", "web-1")), wantErr: "want *v1.Event, got *v1.Pod"},
		{name: "tombstone of a key", obj: tombstone("shop/web-1"), wantErr: "got string"},
		{name: "unstructured event", obj: toUnstructured(t, withUID, "v1", "Event"), wantErr: "got *unstructured.Unstructured"},
		{name: "metadata-only event", obj: partial(withUID, "v1", "Event"), wantErr: "got *v1.PartialObjectMetadata"},
		{name: "events.k8s.io event", obj: &eventsv1.Event{Regarding: podObjectRef("web-1", "pod-uid")}, wantErr: "got *v1.Event"},
	}
	runIndexCases(t, InvolvedObjectIndexFunc, cases)
}

func TestInvolvedObjectIndexStore(t *testing.T) {
	s := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{InvolvedObjectIndex: InvolvedObjectIndexFunc})
	pulled := involvedEvent("shop", "web-1.pulled", podObjectRef("web-1", "pod-uid"))
	started := involvedEvent("shop", "web-1.started", podObjectRef("web-1", "pod-uid"))
	old := involvedEvent("shop", "web-1.old", podObjectRef("web-1", ""))
	nodeEvent := involvedEvent("default", "worker-1.ready", corev1.ObjectReference{Kind: "Node", Name: "worker-1"})
	anonymous := involvedEvent("shop", "anonymous", corev1.ObjectReference{})
	objs := []any{pulled, started, old, nodeEvent, anonymous}
	unchanged := addAll(t, s, objs)
	assertGroups(t, s, InvolvedObjectIndex, map[string][]string{
		"pod-uid":        {"shop/web-1.pulled", "shop/web-1.started"},
		"Pod/shop/web-1": {"shop/web-1.old"},
		"Node//worker-1": {"default/worker-1.ready"},
	}, []string{"shop/anonymous"})

	// The pod is recreated: a new event names the new UID, the old ones
	// stay under the old.
	recreated := involvedEvent("shop", "web-1.started", podObjectRef("web-1", "pod-uid-2"))
	if err := s.Update(recreated); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(pulled); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(nodeEvent); err != nil {
		t.Fatal(err)
	}
	if got := byIndex(t, s, InvolvedObjectIndex, "pod-uid"); len(got) != 0 {
		t.Errorf("ByIndex(pod-uid) = %q, want none", got)
	}
	if got, want := byIndex(t, s, InvolvedObjectIndex, "pod-uid-2"), []string{"shop/web-1.started"}; !slices.Equal(got, want) {
		t.Errorf("ByIndex(pod-uid-2) = %q, want %q", got, want)
	}
	if got, want := byIndex(t, s, InvolvedObjectIndex, InvolvedObjectKey("Pod", "shop", "web-1")), []string{"shop/web-1.old"}; !slices.Equal(got, want) {
		t.Errorf("ByIndex(Pod/shop/web-1) = %q, want %q", got, want)
	}
	if got := byIndex(t, s, InvolvedObjectIndex, InvolvedObjectKey("Node", "", "worker-1")); len(got) != 0 {
		t.Errorf("ByIndex(Node//worker-1) = %q after the event was deleted", got)
	}
	unchanged()
}
