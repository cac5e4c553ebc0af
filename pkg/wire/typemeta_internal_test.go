package wire

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// TestEmbedsTypeMeta lists, from client-go's whole scheme, the built-in kinds that
// are read as JSON rather than protobuf. StatefulSet must be among them (its
// volumeClaimTemplates carry apiVersion and kind) and Pod must not (pods are the
// bulk of every large list and must stay on protobuf).
func TestEmbedsTypeMeta(t *testing.T) {
	var jsonKinds []string
	for gvk, typ := range clientgoscheme.Scheme.AllKnownTypes() {
		if gvk.Version == "__internal" || strings.HasSuffix(gvk.Kind, "List") {
			continue
		}
		if EmbedsTypeMeta(reflect.PointerTo(typ)) {
			jsonKinds = append(jsonKinds, gvk.GroupKind().String())
		}
	}
	sort.Strings(jsonKinds)
	has := func(k string) bool {
		for _, j := range jsonKinds {
			if j == k {
				return true
			}
		}
		return false
	}
	for _, want := range []string{"StatefulSet.apps"} {
		if !has(want) {
			t.Errorf("%s should be read as JSON; JSON kinds: %v", want, jsonKinds)
		}
	}
	for _, notWant := range []string{"Pod", "Deployment.apps", "ReplicaSet.apps", "Node", "Service", "ConfigMap", "Event"} {
		if has(notWant) {
			t.Errorf("%s should be read as protobuf; JSON kinds: %v", notWant, jsonKinds)
		}
	}
	t.Logf("kinds read as JSON: %v", jsonKinds)
}
