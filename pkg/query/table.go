package query

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// tableAccept asks the API server for its table of a list, as kubectl does,
// falling back to the plain list from a server that cannot print one.
const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// tablePageSize is the number of rows asked for per page of a table.
const tablePageSize = 500

// ServerTable lists req's resource in the session's scope as the API server
// prints it (as=Table): the server's columns for its own version, each row
// with the object's metadata (includeObject=Metadata) so that rows can be
// matched to the answer's objects by UID. The session's selectors apply, and
// one name asked for narrows the list to it. Pages are read one after another
// and joined.
func (s *Session) ServerTable(ctx context.Context, req Request) (*metav1.Table, error) {
	client, err := s.tableClient(req.Resource.GVR.GroupVersion())
	if err != nil {
		return nil, err
	}
	fieldSelector := s.cfg.FieldSelector
	if len(req.Names) == 1 {
		fieldSelector = NameSelector(req.Names[0], fieldSelector)
	}
	opts := metav1.ListOptions{LabelSelector: s.cfg.LabelSelector, FieldSelector: fieldSelector, Limit: tablePageSize}
	var out *metav1.Table
	for {
		r := client.Get().Resource(req.Resource.GVR.Resource).
			SetHeader("Accept", tableAccept).
			Param("includeObject", string(metav1.IncludeMetadata)).
			VersionedParams(&opts, metav1.ParameterCodec)
		if req.Resource.Namespaced {
			r = r.Namespace(s.cfg.Namespace)
		}
		data, err := r.DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the server's table of %s: %w", req.Resource.Name(), err)
		}
		page, err := decodeTable(data)
		if err != nil {
			return nil, fmt.Errorf("reading the server's table of %s: %w", req.Resource.Name(), err)
		}
		if out == nil {
			out = page
		} else {
			out.Rows = append(out.Rows, page.Rows...)
		}
		if page.Continue == "" {
			out.Continue = ""
			return out, nil
		}
		opts.Continue = page.Continue
	}
}

// decodeTable reads a meta.k8s.io/v1 Table; anything else (a server that
// answered with the plain list) is an error.
func decodeTable(data []byte) (*metav1.Table, error) {
	var kind metav1.TypeMeta
	if err := json.Unmarshal(data, &kind); err != nil {
		return nil, err
	}
	if kind.Kind != "Table" {
		return nil, fmt.Errorf("the server answered with a %s, not a Table", kind.Kind)
	}
	t := &metav1.Table{}
	if err := json.Unmarshal(data, t); err != nil {
		return nil, err
	}
	return t, nil
}

// tableClient returns a REST client for gv's tables.
func (s *Session) tableClient(gv schema.GroupVersion) (rest.Interface, error) {
	if s.cfg.TableClient != nil {
		return s.cfg.TableClient(gv)
	}
	if s.cfg.RESTConfig == nil {
		return nil, fmt.Errorf("no REST config to read %s tables with", gv)
	}
	return informer.TypedClient(s.cfg.RESTConfig, gv, runtime.ContentTypeJSON)
}
