package query

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// ServerTable lists req's resource in the session's scope as the API server
// prints it (as=Table): the server's columns for its own version, each row
// with the object's metadata (includeObject=Metadata) so that rows can be
// matched to the answer's objects by UID. The session's selectors apply, and
// one name asked for narrows the list to it. It is one request, unpaged: a
// table costs one round trip per kind printed, and the server answers it from
// its watch cache.
func (s *Session) ServerTable(ctx context.Context, req Request) (*metav1.Table, error) {
	return s.serverTable(ctx, req.Resource, s.cfg.Namespace, req.Names, s.cfg.LabelSelector)
}

// serverTable reads res's table in namespace, narrowed by names (one name
// becomes a field selector) and a label selector.
func (s *Session) serverTable(ctx context.Context, res informer.Resource, namespace string, names []string, labelSelector string) (*metav1.Table, error) {
	client, err := s.tableClient(res.GVR.GroupVersion())
	if err != nil {
		return nil, err
	}
	fieldSelector := s.cfg.FieldSelector
	if len(names) == 1 {
		fieldSelector = NameSelector(names[0], fieldSelector)
	}
	opts := metav1.ListOptions{LabelSelector: labelSelector, FieldSelector: fieldSelector}
	data, err := informer.TableRequest(client, res, namespace, opts, metav1.IncludeMetadata).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the server's table of %s: %w", res.Name(), err)
	}
	table, err := informer.DecodeTable(data)
	if err != nil {
		return nil, fmt.Errorf("reading the server's table of %s: %w", res.Name(), err)
	}
	return table, nil
}

// tableClient returns a REST client for gv's tables: the test hook, else the
// client the session's informers list gv with.
func (s *Session) tableClient(gv schema.GroupVersion) (rest.Interface, error) {
	if s.cfg.TableClient != nil {
		return s.cfg.TableClient(gv)
	}
	s.mu.Lock()
	if s.tableClients == nil {
		f, err := s.newFactory(informer.Config{})
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		s.tableClients = f.Clients().Typed
	}
	clients := s.tableClients
	s.mu.Unlock()
	return clients(gv)
}

// Tables reads the API server's table of each kind among members that has
// objects: one request per kind, in the one namespace the kind's objects are
// in (or the session's scope), with the session's selectors, narrowed to the
// name when there is one object. Rows are matched to the objects by UID when
// printed. A kind whose table cannot be read is left out with a warning, and
// is printed with NAME and AGE. Kinds are mapped to resources through known
// (the question's requests), else through the session's REST mapper.
func (s *Session) Tables(ctx context.Context, members []v1alpha1.Members, known []Request) map[schema.GroupKind]*metav1.Table {
	type want struct {
		res       informer.Resource
		namespace string
		names     []string
	}
	var kinds []schema.GroupKind
	wants := map[schema.GroupKind]*want{}
	for _, m := range members {
		gk := m.GVK.GroupKind()
		for _, obj := range m.Objects {
			a, err := meta.Accessor(obj)
			if err != nil {
				continue
			}
			w := wants[gk]
			if w == nil {
				res, err := s.resourceFor(m.GVK, known)
				if err != nil {
					s.warn("%s; showing NAME and AGE only", s.warningText(err))
					break
				}
				w = &want{res: res, namespace: a.GetNamespace()}
				wants[gk] = w
				kinds = append(kinds, gk)
			}
			if w.namespace != a.GetNamespace() {
				w.namespace = s.cfg.Namespace
			}
			w.names = append(w.names, a.GetName())
		}
	}
	tables := make(map[schema.GroupKind]*metav1.Table, len(kinds))
	for _, gk := range kinds {
		w := wants[gk]
		if !w.res.Namespaced {
			w.namespace = metav1.NamespaceAll
		}
		names := w.names
		if len(slices.Compact(slices.Sorted(slices.Values(names)))) > 1 {
			names = nil
		}
		t, err := s.serverTable(ctx, w.res, w.namespace, names, s.cfg.LabelSelector)
		if err != nil {
			s.warn("%s; showing NAME and AGE only", s.warningText(err))
			continue
		}
		tables[gk] = t
	}
	return tables
}

// resourceFor maps a kind to its resource: one of known's, else through the
// session's mapper.
func (s *Session) resourceFor(gvk schema.GroupVersionKind, known []Request) (informer.Resource, error) {
	for _, r := range known {
		if r.Resource.GVK == gvk {
			return r.Resource, nil
		}
	}
	if s.cfg.Mapper == nil {
		return informer.Resource{}, fmt.Errorf("no REST mapper to find the resource of %s", gvk.Kind)
	}
	m, err := s.cfg.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return informer.Resource{}, err
	}
	return informer.FromMapping(m), nil
}
