package feed_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// fakeLookup holds owners by UID and records the lookups.
type fakeLookup struct {
	owners map[types.UID][]metav1.OwnerReference
	// waited lists the UIDs looked up with wait set.
	waited []types.UID
	calls  int
}

func (l *fakeLookup) OwnerReferences(_ context.Context, _ schema.GroupVersionKind, uid types.UID, wait bool) ([]metav1.OwnerReference, bool) {
	l.calls++
	if wait {
		l.waited = append(l.waited, uid)
	}
	refs, ok := l.owners[uid]
	return refs, ok
}

// OnOwnerChange implements feed.OwnerLookup; these tests use the scope alone.
func (l *fakeLookup) OnOwnerChange(func(feed.OwnerChange)) {}

func ownerRef(kind, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: uid, UID: types.UID(uid), Controller: ptr.To(true)}
}

func pod(name string, refs ...metav1.OwnerReference) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("pod-" + name), OwnerReferences: refs}}
}

func TestOwnerScope(t *testing.T) {
	lookup := &fakeLookup{owners: map[types.UID][]metav1.OwnerReference{
		"rs-1":     {ownerRef("Deployment", "deploy")},
		"rs-2":     {ownerRef("Deployment", "deploy")},
		"rs-other": {ownerRef("Deployment", "other")},
		"other":    nil,
		// A cycle the API server does not prevent.
		"loop-a": {ownerRef("ReplicaSet", "loop-b")},
		"loop-b": {ownerRef("ReplicaSet", "loop-a")},
	}}
	s := feed.NewOwnerScope("deploy", lookup)
	ctx := context.Background()
	deploy := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "deploy"}}
	tests := []struct {
		name string
		obj  *corev1.Pod
		want bool
	}{
		{"the root itself", deploy, true},
		{"owned directly", pod("direct", ownerRef("Deployment", "deploy")), true},
		{"owned through a ReplicaSet", pod("a", ownerRef("ReplicaSet", "rs-1")), true},
		{"through a ReplicaSet of a later rollout", pod("b", ownerRef("ReplicaSet", "rs-2")), true},
		{"owned by another Deployment's ReplicaSet", pod("c", ownerRef("ReplicaSet", "rs-other")), false},
		{"no owner", pod("bare"), false},
		{"a dangling owner", pod("d", ownerRef("ReplicaSet", "gone")), false},
		{"any of several owners", pod("e", ownerRef("ReplicaSet", "rs-other"), ownerRef("ReplicaSet", "rs-1")), true},
		{"a reference cycle ends", pod("f", ownerRef("ReplicaSet", "loop-a")), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.Contains(ctx, 0, tc.obj); got != tc.want {
				t.Errorf("Contains = %v, want %v", got, tc.want)
			}
		})
	}
	// A dangling owner is waited for once, then looked up without waiting.
	lookup.waited = nil
	s.Contains(ctx, 0, pod("g", ownerRef("ReplicaSet", "gone")))
	if len(lookup.waited) != 0 {
		t.Errorf("waited again for a missing owner: %v", lookup.waited)
	}
	// An owner that shows up late is found and waited for again afterwards if lost.
	lookup.owners["gone"] = []metav1.OwnerReference{ownerRef("Deployment", "deploy")}
	if !s.Contains(ctx, 0, pod("h", ownerRef("ReplicaSet", "gone"))) {
		t.Error("an owner that appeared later is not followed")
	}
}
