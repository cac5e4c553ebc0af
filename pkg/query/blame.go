package query

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/history"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// Blame answers `kubectl idx blame`: obj as it is now and, for each field a
// manager owns, who last wrote it and when, from its managedFields, list
// entries attributed by their merge keys. The object is read through an
// informer narrowed to its name that keeps managedFields, the one place
// besides History where they are read; a Secret is read as metadata only,
// its data never fetched.
func (s *Session) Blame(ctx context.Context, obj ObjectRef) (*v1alpha1.Blame, error) {
	ns := metav1.NamespaceAll
	if obj.Resource.Namespaced {
		ns = s.rootNamespace()
	}
	mode := informer.Full
	if obj.Resource.GVK.GroupKind() == secretKind {
		mode = informer.MetadataOnly
	}
	// One object, narrowed by its name, in a factory of its own that keeps
	// managedFields: a warm pool keys informers by that, and lends this one
	// to no other question.
	item, err := s.named(ctx, obj, informer.Config{Namespace: ns, KeepManagedFields: true}, mode)
	if err != nil {
		return nil, err
	}
	ro, isObj := item.(runtime.Object)
	if !isObj {
		return nil, obj.NotFound()
	}
	content, managers, err := s.explain(ro, obj.Resource.GVK)
	if err != nil {
		return nil, err
	}
	a, err := meta.Accessor(ro)
	if err != nil {
		return nil, err
	}
	doc := v1alpha1.NewBlame(v1alpha1.HistoryObjectFor(obj.Resource.GVK, a))
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", obj, err)
	}
	doc.Content = runtime.RawExtension{Raw: raw}
	if managers != nil {
		for _, m := range managers.Entries {
			doc.Managers = append(doc.Managers, fieldManager(m))
		}
		// The fields are those the YAML's lines show, named as the printer
		// names each line's field (history.YAMLLines), so that every
		// attributed line finds its field; a map or list no manager owns
		// whole has none.
		seen := map[string]bool{}
		for _, l := range history.YAMLLines(content, history.KeysFor(obj.Resource.GVK)) {
			p := l.Path.String()
			if l.Continued || len(l.Path) == 0 || seen[p] {
				continue
			}
			seen[p] = true
			if owners := managers.Exact(content, l.Path); len(owners) > 0 {
				doc.Fields = append(doc.Fields, v1alpha1.BlameField{Path: p, Managers: owners})
			}
		}
	}
	doc.Warnings = s.Warnings()
	doc.AsOf = s.AsOf()
	return doc, nil
}
