package feed

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// coreEvent returns an Event about o, with resourceVersion rv and count.
func coreEvent(name string, o *metav1.PartialObjectMetadata, rv string, count int32) *corev1.Event {
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("event-" + name), ResourceVersion: rv},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID,
		},
		Reason: name, Count: count,
	}
}

// TestInvolvedObjectScope follows the events of a Deployment through a
// rollout: events about the Deployment, its ReplicaSets and their pods belong,
// also about a ReplicaSet and pods created after the start and about a pod
// deleted since; events about other objects, or without an involved UID, do
// not. A repeated event is one MODIFIED; a relist's unchanged event nothing.
func TestInvolvedObjectScope(t *testing.T) {
	web := object("Deployment", "web")
	rs1 := object("ReplicaSet", "web-1", web)
	pod1 := object("Pod", "web-1-a", rs1)
	other := object("Pod", "other")
	lookup := &scriptLookup{store: map[types.UID]*metav1.PartialObjectMetadata{}}
	for _, o := range []*metav1.PartialObjectMetadata{web, rs1, pod1, other} {
		lookup.store[o.UID] = o
	}
	f := New(Config{Scope: NewInvolvedObjectScope(web.UID, lookup)})
	h := f.Handler(0)
	noUID := coreEvent("no-uid", pod1, "1", 1)
	noUID.InvolvedObject.UID = ""
	for _, e := range []*corev1.Event{
		coreEvent("scaled", web, "1", 1),
		coreEvent("created", rs1, "2", 1),
		coreEvent("scheduled", pod1, "3", 1),
		coreEvent("elsewhere", other, "4", 1),
		noUID,
	} {
		h.OnAdd(e, true)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		done <- f.Run(ctx, func(ev *Event) error {
			e := ev.Object.(*corev1.Event)
			lines <- fmt.Sprintf("%s %s rv=%s", ev.Type, e.Name, e.ResourceVersion)
			return nil
		}, func() error { return nil })
	}()
	expect := func(step string, want ...string) {
		t.Helper()
		var got []string
		deadline := time.After(5 * time.Second)
		for len(got) < len(want) {
			select {
			case l := <-lines:
				got = append(got, l)
			case <-deadline:
				t.Fatalf("%s: got %q, want %q", step, got, want)
			}
		}
		// The markers below show that nothing else came before them.
		if !slices.Equal(got, want) {
			t.Fatalf("%s: got %q, want %q", step, got, want)
		}
	}
	// marker is an event about the Deployment whose emission shows that
	// everything queued before it was handled.
	markers := 0
	marker := func() string {
		markers++
		name := fmt.Sprintf("marker-%d", markers)
		h.OnAdd(coreEvent(name, web, "100", 1), false)
		return "ADDED " + name + " rv=100"
	}

	expect("initial state", "ADDED created rv=2", "ADDED scaled rv=1", "ADDED scheduled rv=3")

	// A rollout: a new ReplicaSet and its pod, known to the lookup first.
	rs2 := object("ReplicaSet", "web-2", web)
	pod2 := object("Pod", "web-2-a", rs2)
	for _, o := range []*metav1.PartialObjectMetadata{rs2, pod2} {
		lookup.store[o.UID] = o
		lookup.fn(OwnerChange{Kind: schema.FromAPIVersionAndKind(o.APIVersion, o.Kind), UID: o.UID, Refs: o.OwnerReferences})
	}
	h.OnAdd(coreEvent("created-2", rs2, "5", 1), false)
	h.OnAdd(coreEvent("scheduled-2", pod2, "6", 1), false)
	expect("rollout", "ADDED created-2 rv=5", "ADDED scheduled-2 rv=6", marker())

	// A repeated event, then a relist that finds it unchanged.
	h.OnUpdate(nil, coreEvent("scheduled", pod1, "7", 2))
	h.OnUpdate(nil, coreEvent("scheduled", pod1, "7", 2))
	expect("repeat", "MODIFIED scheduled rv=7", marker())

	// The old pod is deleted; an event about it recorded after still belongs.
	delete(lookup.store, pod1.UID)
	lookup.fn(OwnerChange{Kind: schema.FromAPIVersionAndKind(pod1.APIVersion, pod1.Kind), UID: pod1.UID, Deleted: true, Refs: pod1.OwnerReferences})
	h.OnAdd(coreEvent("killing", pod1, "8", 1), false)
	h.OnAdd(coreEvent("elsewhere-2", other, "9", 1), false)
	expect("deleted pod", "ADDED killing rv=8", marker())

	// An event expires.
	h.OnDelete(coreEvent("created", rs1, "2", 1))
	expect("expired", "DELETED created rv=2", marker())

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rest := len(lines); rest != 0 {
		var extra []string
		for range rest {
			extra = append(extra, <-lines)
		}
		t.Errorf("unexpected events: %s", strings.Join(extra, ", "))
	}
}

// TestInvolvedObjectRefs: an event's involvedObject is its one reference; an
// event without an involved UID, or another object, has none.
func TestInvolvedObjectRefs(t *testing.T) {
	pod := object("Pod", "web-1-a")
	refs := involvedObjectRefs(coreEvent("e", pod, "1", 1))
	want := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "web-1-a", UID: pod.UID}}
	if !slices.Equal(refs, want) {
		t.Errorf("refs = %+v, want %+v", refs, want)
	}
	noUID := coreEvent("e", pod, "1", 1)
	noUID.InvolvedObject.UID = ""
	if refs := involvedObjectRefs(noUID); refs != nil {
		t.Errorf("refs without UID = %+v, want none", refs)
	}
	if refs := involvedObjectRefs(pod); refs != nil {
		t.Errorf("refs of a pod = %+v, want none", refs)
	}
}
