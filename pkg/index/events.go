package index

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// InvolvedObjectIndex is the name of the index from an object to the core
// Events about it: the involved object's UID or, for events recorded without
// one, InvolvedObjectKey of its kind, namespace and name.
const InvolvedObjectIndex = "involvedobject"

// InvolvedObjectKey is the key of events whose involvedObject has no UID.
func InvolvedObjectKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

// InvolvedObjectIndexFunc is the IndexFunc of InvolvedObjectIndex. It accepts
// *corev1.Event only: events are read in full, their subject lives in the body.
func InvolvedObjectIndexFunc(obj any) ([]string, error) {
	// Errors name the unwrapped type, as objectMeta's do: a tombstone is only
	// the envelope.
	obj = unwrap(obj)
	e, ok := obj.(*corev1.Event)
	if !ok {
		return nil, fmt.Errorf("%s index: want *v1.Event, got %T", InvolvedObjectIndex, obj)
	}
	if e == nil {
		return nil, fmt.Errorf("%s index: expected an event, got nil %T", InvolvedObjectIndex, obj)
	}
	ref := e.InvolvedObject
	if ref.UID != "" {
		return []string{string(ref.UID)}, nil
	}
	if ref.Name == "" {
		return nil, nil
	}
	return []string{InvolvedObjectKey(ref.Kind, ref.Namespace, ref.Name)}, nil
}
