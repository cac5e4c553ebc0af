package history

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// KeysFor returns the KeyFunc of objects of kind gvk: the merge keys of a
// built-in kind's lists (StructKeys), and for the lists of other kinds, or
// that have no merge key, "name" where every entry has a name of its own
// (the convention custom resources follow). Lists whose entries have
// neither are named by index.
func KeysFor(gvk schema.GroupVersionKind) KeyFunc {
	var typed KeyFunc
	if obj, err := clientgoscheme.Scheme.New(gvk); err == nil {
		typed = StructKeys(obj)
	}
	return func(p Path) string {
		if typed != nil {
			if k := typed(p); k != "" {
				return k
			}
		}
		return "name"
	}
}

// PodTemplateKeys is the KeyFunc of a pod template (a workload's
// spec.template, a revision's template): containers, env and volumes by
// name, ports by containerPort, volumeMounts by mountPath.
var PodTemplateKeys = StructKeys(&corev1.PodTemplateSpec{})
