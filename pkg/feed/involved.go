package feed

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// NewInvolvedObjectScope returns the Scope of `kubectl idx events -w`: the
// core Events (*corev1.Event, read in full) whose involvedObject is the
// object with UID root or an object root owns, through any chain of
// ownerReferences. An event's involvedObject stands in for its
// ownerReferences, so membership is an OwnerScope's, one level up: an event
// about a pod of a ReplicaSet created by a rollout belongs as soon as the
// lookup knows the pod, and one about a pod deleted since keeps belonging,
// with the pod's last ownerReferences, while the feed holds events about it.
//
// Events whose involvedObject has no UID (a few emitters name their object by
// kind and name only) never belong. While the feed judges its initial state,
// an involved object or owner the lookup does not know is not waited for: the
// events listed are about objects that existed before the lookup's informers
// listed, so one missing from them is gone; were it only late, the lookup's
// report of it judges the events about it again.
func NewInvolvedObjectScope(root types.UID, lookup OwnerLookup) *OwnerScope {
	s := NewOwnerScope(root, lookup)
	s.refs = involvedObjectRefs
	s.noInitialWait = true
	return s
}

// involvedObjectRefs returns an event's involvedObject as its one reference.
func involvedObjectRefs(m metav1.Object) []metav1.OwnerReference {
	e, ok := m.(*corev1.Event)
	if !ok || e.InvolvedObject.UID == "" {
		return nil
	}
	ref := e.InvolvedObject
	return []metav1.OwnerReference{{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: ref.UID}}
}

// initialKey marks the context a notification of the initial state is
// judged in.
type initialKey struct{}

// initialNotification reports whether ctx is that of a notification of the
// initial state.
func initialNotification(ctx context.Context) bool {
	v, _ := ctx.Value(initialKey{}).(bool)
	return v
}
