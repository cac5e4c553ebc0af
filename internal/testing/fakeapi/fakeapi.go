// Package fakeapi serves the clients an informer.Factory needs from a fixed set of
// objects, for tests. Typed requests go through k8s.io/client-go/rest/fake to an
// in-process handler that answers LIST with a JSON list and WATCH with a stream that
// stays open until the request's context ends, so real informers run against it
// unchanged. Dynamic and metadata requests go to client-go's own fakes, whose
// recorded actions tests can inspect.
//
// It does not import pkg/informer, so that package's own tests can use it; callers
// assemble informer.Clients{Typed: s.Typed, Dynamic: s.Dynamic, Metadata: s.Metadata}.
package fakeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/rest"
	restfake "k8s.io/client-go/rest/fake"
)

// Request is one HTTP request a typed client sent.
type Request struct {
	Method string
	// Path is the URL path, e.g. /api/v1/namespaces/shop/pods.
	Path  string
	Query url.Values
	// Watch is true for watch requests (query watch=true).
	Watch bool
	// Table is true for requests of the server's table (Accept: as=Table).
	Table bool
}

// Server holds the objects and the fakes. Create it with New.
type Server struct {
	// Dynamic serves objects whose kinds client-go's scheme does not know
	// (custom resources), as *unstructured.Unstructured.
	Dynamic *dynamicfake.FakeDynamicClient
	// Metadata serves every object as *metav1.PartialObjectMetadata.
	Metadata *metadatafake.FakeMetadataClient

	// BeforeList, when set, runs before a typed LIST is answered. It may block (the
	// request's context ends when the informer stops) and may return a Status to
	// answer with instead of the list.
	BeforeList func(req *http.Request) *metav1.Status
	// Columns, when it names a resource ("pods"), are that resource's table
	// columns, and Cells an object's row: the columns a real API server
	// prints for it, where a test reads them. Other resources are printed
	// with TableColumns.
	Columns map[string][]metav1.TableColumnDefinition
	Cells   func(obj runtime.Object) []any

	mu       sync.Mutex
	typed    []runtime.Object
	all      []runtime.Object
	requests []Request
}

// TableColumns are the columns of the tables the server prints
// (Accept: application/json;as=Table;v=v1;g=meta.k8s.io), for every kind alike:
// NAME, AGE, and the object's kind as a wide column. A real API server prints each kind's own
// columns; the end-to-end tests compare those with kubectl's.
var TableColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name"},
	{Name: "Age", Type: "date"},
	{Name: "Object Kind", Type: "string", Priority: 1},
}

// New returns a Server holding objs: typed k8s.io/api objects are served by Typed
// and, as metadata, by Metadata; *unstructured.Unstructured objects by Dynamic and
// Metadata. listKinds names the list kind of every custom resource the dynamic
// client may be asked for ({stable.example.com v1 crontabs}: "CronTabList"); kinds
// of the given unstructured objects are added automatically.
func New(listKinds map[schema.GroupVersionResource]string, objs ...runtime.Object) *Server {
	kinds := map[schema.GroupVersionResource]string{}
	for gvr, k := range listKinds {
		kinds[gvr] = k
	}
	s := &Server{}
	var unstructuredObjs, partials []runtime.Object
	for _, obj := range objs {
		gvk := kindOf(obj)
		if u, ok := obj.(*unstructured.Unstructured); ok {
			gvr, _ := meta.UnsafeGuessKindToResource(gvk)
			if _, ok := kinds[gvr]; !ok {
				kinds[gvr] = gvk.Kind + "List"
			}
			unstructuredObjs = append(unstructuredObjs, u.DeepCopy())
		} else {
			s.typed = append(s.typed, obj.DeepCopyObject())
		}
		s.all = append(s.all, obj.DeepCopyObject())
		partials = append(partials, asPartial(obj, gvk))
	}
	s.Dynamic = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), kinds, unstructuredObjs...)
	metaScheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(metaScheme); err != nil {
		panic(err)
	}
	s.Metadata = metadatafake.NewSimpleMetadataClient(metaScheme, partials...)
	return s
}

// kindOf returns obj's kind from its TypeMeta or, for typed objects without one (as
// informers deliver them), from client-go's scheme.
func kindOf(obj runtime.Object) schema.GroupVersionKind {
	if gvk := obj.GetObjectKind().GroupVersionKind(); !gvk.Empty() {
		return gvk
	}
	gvks, _, err := clientgoscheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		panic(fmt.Sprintf("fakeapi: no kind for %T: %v", obj, err))
	}
	return gvks[0]
}

func asPartial(obj runtime.Object, gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	p := &metav1.PartialObjectMetadata{}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		m, _, _ := unstructured.NestedMap(o.Object, "metadata")
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &p.ObjectMeta); err != nil {
			panic(fmt.Sprintf("fakeapi: metadata of %s: %v", o.GetName(), err))
		}
	case metav1.ObjectMetaAccessor:
		om, ok := o.GetObjectMeta().(*metav1.ObjectMeta)
		if !ok {
			panic(fmt.Sprintf("fakeapi: %T has no ObjectMeta", obj))
		}
		om.DeepCopyInto(&p.ObjectMeta)
	default:
		panic(fmt.Sprintf("fakeapi: %T has no metadata", obj))
	}
	p.SetGroupVersionKind(gvk)
	return p
}

// Typed returns a REST client for gv that talks to this server. Its signature
// matches informer.Clients.Typed.
func (s *Server) Typed(gv schema.GroupVersion) (rest.Interface, error) {
	prefix := apiPrefix(gv)
	return Client(gv, func(req *http.Request) *http.Response { return s.serve(gv, prefix, req) }), nil
}

// Client returns a REST client for gv that hands every request to answer: the
// client of a test server that scripts or checks its answers itself. It is
// client-go's own REST client, safe for concurrent requests, over an HTTP
// client that never leaves the process.
func Client(gv schema.GroupVersion, answer func(req *http.Request) *http.Response) rest.Interface {
	apiPath := "/apis"
	if gv.Group == "" {
		apiPath = "/api"
	}
	cfg := &rest.Config{
		Host:    "http://fakeapi.invalid",
		APIPath: apiPath,
		QPS:     -1,
		ContentConfig: rest.ContentConfig{
			GroupVersion:         &gv,
			NegotiatedSerializer: clientgoscheme.Codecs.WithoutConversion(),
		},
	}
	httpClient := restfake.CreateHTTPClient(func(req *http.Request) (*http.Response, error) {
		return answer(req), nil
	})
	c, err := rest.RESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		panic(fmt.Sprintf("fakeapi: %v", err))
	}
	return c
}

// apiPrefix is the path the API server serves gv under.
func apiPrefix(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// Contacted counts the requests received so far, typed and metadata: none
// for a command that fails before it reads anything.
func (s *Server) Contacted() int {
	return len(s.Requests()) + len(s.Metadata.Actions())
}

// CheckRefused checks a run that must fail before any request: its error err, as format
// renders it, is want, and s received nothing.
func (s *Server) CheckRefused(t testing.TB, err error, format func(error) string, want string) {
	t.Helper()
	if err == nil || format(err) != want {
		t.Fatalf("error:\n%v\nwant:\n%s", err, want)
	}
	if n := s.Contacted(); n != 0 {
		t.Errorf("%d requests before the error, want none", n)
	}
}

// Requests returns the typed requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(gv schema.GroupVersion, prefix string, req *http.Request) *http.Response {
	watching := req.URL.Query().Get("watch") == "true"
	s.mu.Lock()
	table := strings.Contains(req.Header.Get("Accept"), "as=Table")
	s.requests = append(s.requests, Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query(), Watch: watching, Table: table})
	s.mu.Unlock()

	parts := strings.Split(strings.Trim(strings.TrimPrefix(req.URL.Path, prefix), "/"), "/")
	namespace := ""
	if len(parts) >= 3 && parts[0] == "namespaces" {
		namespace, parts = parts[1], parts[2:]
	}
	if req.Method != http.MethodGet || len(parts) != 1 && len(parts) != 2 {
		return statusResponse(req, &apierrors.NewMethodNotSupported(schema.GroupResource{}, req.Method).ErrStatus)
	}
	if len(parts) == 2 {
		return s.serveGet(req, gv, gv.WithResource(parts[0]), namespace, parts[1])
	}
	resource := gv.WithResource(parts[0])
	kind, known := kindForResource(resource)
	if !known && !table {
		return statusResponse(req, &apierrors.NewNotFound(resource.GroupResource(), "").ErrStatus)
	}
	if watching {
		return &http.Response{
			StatusCode: http.StatusOK,
			Header:     http.Header{"Content-Type": []string{runtime.ContentTypeJSON}},
			Body:       newOpenStream(req.Context()),
			Request:    req,
		}
	}
	if s.BeforeList != nil {
		if status := s.BeforeList(req); status != nil {
			return statusResponse(req, status)
		}
	}
	if table {
		return s.serveTable(req, resource, namespace, known)
	}
	list, err := s.list(gv.WithKind(kind), namespace, req.URL.Query())
	if err != nil {
		return statusResponse(req, &apierrors.NewBadRequest(err.Error()).ErrStatus)
	}
	data, err := runtime.Encode(clientgoscheme.Codecs.LegacyCodec(gv), list)
	if err != nil {
		return statusResponse(req, &apierrors.NewInternalError(err).ErrStatus)
	}
	return JSON(req, data)
}

// serveGet answers a GET of one typed object by name, or NotFound.
func (s *Server) serveGet(req *http.Request, gv schema.GroupVersion, resource schema.GroupVersionResource, namespace, name string) *http.Response {
	kind, known := kindForResource(resource)
	if !known {
		return statusResponse(req, &apierrors.NewNotFound(resource.GroupResource(), name).ErrStatus)
	}
	list, err := s.list(gv.WithKind(kind), namespace, url.Values{"fieldSelector": []string{"metadata.name=" + name}})
	if err != nil {
		return statusResponse(req, &apierrors.NewBadRequest(err.Error()).ErrStatus)
	}
	items, err := meta.ExtractList(list)
	if err != nil || len(items) == 0 {
		return statusResponse(req, &apierrors.NewNotFound(resource.GroupResource(), name).ErrStatus)
	}
	data, err := runtime.Encode(clientgoscheme.Codecs.LegacyCodec(gv), items[0])
	if err != nil {
		return statusResponse(req, &apierrors.NewInternalError(err).ErrStatus)
	}
	return JSON(req, data)
}

// JSON answers req with data, a JSON document.
func JSON(req *http.Request, data []byte) *http.Response {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{runtime.ContentTypeJSON}},
		Body:       io.NopCloser(bytes.NewReader(data)),
		Request:    req,
	}
}

// serveTable answers a list as the server's table of resource with
// TableColumns. known says whether client-go's scheme serves the resource;
// one it does not and no object has is not found.
func (s *Server) serveTable(req *http.Request, resource schema.GroupVersionResource, namespace string, known bool) *http.Response {
	query := req.URL.Query()
	labelSel, err := labels.Parse(query.Get("labelSelector"))
	if err != nil {
		return statusResponse(req, &apierrors.NewBadRequest(err.Error()).ErrStatus)
	}
	fieldSel, err := fields.ParseSelector(query.Get("fieldSelector"))
	if err != nil {
		return statusResponse(req, &apierrors.NewBadRequest(err.Error()).ErrStatus)
	}
	columns, own := s.Columns[resource.Resource]
	if !own {
		columns = TableColumns
	}
	table := &metav1.Table{ColumnDefinitions: columns}
	table.Kind, table.APIVersion = "Table", "meta.k8s.io/v1"
	table.ResourceVersion = "1"
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for _, obj := range s.all {
		gvk := kindOf(obj)
		if gvr, _ := meta.UnsafeGuessKindToResource(gvk); gvr != resource {
			continue
		}
		found = true
		a, err := meta.Accessor(obj)
		if err != nil {
			return statusResponse(req, &apierrors.NewInternalError(err).ErrStatus)
		}
		if namespace != "" && a.GetNamespace() != namespace ||
			!labelSel.Matches(labels.Set(a.GetLabels())) ||
			!fieldSel.Matches(fields.Set{"metadata.name": a.GetName(), "metadata.namespace": a.GetNamespace()}) {
			continue
		}
		rowObj := runtime.Object(asPartial(obj, gvk))
		if query.Get("includeObject") == string(metav1.IncludeObject) {
			rowObj = obj
		}
		raw, err := json.Marshal(rowObj)
		if err != nil {
			return statusResponse(req, &apierrors.NewInternalError(err).ErrStatus)
		}
		cells := []any{a.GetName(), duration.HumanDuration(now.Sub(a.GetCreationTimestamp().Time)), gvk.Kind}
		if own {
			cells = s.Cells(obj)
		}
		table.Rows = append(table.Rows, metav1.TableRow{
			Cells:  cells,
			Object: runtime.RawExtension{Raw: raw},
		})
	}
	if !found && !known {
		return statusResponse(req, &apierrors.NewNotFound(resource.GroupResource(), "").ErrStatus)
	}
	data, err := json.Marshal(table)
	if err != nil {
		return statusResponse(req, &apierrors.NewInternalError(err).ErrStatus)
	}
	return JSON(req, data)
}

// kindForResource finds the kind client-go's scheme serves as resource.
func kindForResource(gvr schema.GroupVersionResource) (string, bool) {
	for kind := range clientgoscheme.Scheme.KnownTypes(gvr.GroupVersion()) {
		if plural, _ := meta.UnsafeGuessKindToResource(gvr.GroupVersion().WithKind(kind)); plural == gvr {
			if _, err := clientgoscheme.Scheme.New(gvr.GroupVersion().WithKind(kind + "List")); err == nil {
				return kind, true
			}
		}
	}
	return "", false
}

// list builds the <Kind>List of the typed objects of gvk in namespace ("" for all)
// that match the label and field selectors in query.
func (s *Server) list(gvk schema.GroupVersionKind, namespace string, query url.Values) (runtime.Object, error) {
	labelSel, err := labels.Parse(query.Get("labelSelector"))
	if err != nil {
		return nil, err
	}
	fieldSel, err := fields.ParseSelector(query.Get("fieldSelector"))
	if err != nil {
		return nil, err
	}
	list, err := clientgoscheme.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var items []runtime.Object
	for _, obj := range s.typed {
		if kindOf(obj) != gvk {
			continue
		}
		a, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if namespace != "" && a.GetNamespace() != namespace {
			continue
		}
		if !labelSel.Matches(labels.Set(a.GetLabels())) {
			continue
		}
		if !fieldSel.Matches(fieldSet(obj, a)) {
			continue
		}
		items = append(items, obj.DeepCopyObject())
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return nil, err
	}
	la.SetResourceVersion("1")
	return list, nil
}

// fieldSet is what the API server's field selectors match on obj: its name
// and namespace, and the fields of its kind that kubectl-idx selects by (an
// event's type and involved object, a pod's node).
func fieldSet(obj runtime.Object, a metav1.Object) fields.Set {
	set := fields.Set{"metadata.name": a.GetName(), "metadata.namespace": a.GetNamespace()}
	switch o := obj.(type) {
	case *corev1.Event:
		set["type"], set["reason"] = o.Type, o.Reason
		set["involvedObject.kind"], set["involvedObject.name"], set["involvedObject.namespace"] = o.InvolvedObject.Kind, o.InvolvedObject.Name, o.InvolvedObject.Namespace
		set["involvedObject.uid"] = string(o.InvolvedObject.UID)
	case *corev1.Pod:
		set["spec.nodeName"], set["status.phase"] = o.Spec.NodeName, string(o.Status.Phase)
	}
	return set
}

func statusResponse(req *http.Request, status *metav1.Status) *http.Response {
	st := status.DeepCopy()
	st.Kind, st.APIVersion = "Status", "v1"
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	code := int(st.Code)
	if code == 0 {
		code = http.StatusInternalServerError
	}
	data, err := runtime.Encode(clientgoscheme.Codecs.LegacyCodec(schema.GroupVersion{Version: "v1"}), st)
	if err != nil {
		panic(err)
	}
	return &http.Response{
		StatusCode: code,
		Header:     http.Header{"Content-Type": []string{runtime.ContentTypeJSON}},
		Body:       io.NopCloser(bytes.NewReader(data)),
		Request:    req,
	}
}

// openStream is a watch response body that sends no events and ends when the
// request's context ends or the watcher closes it.
type openStream struct {
	ctx    context.Context
	closed chan struct{}
	once   sync.Once
}

func newOpenStream(ctx context.Context) *openStream {
	return &openStream{ctx: ctx, closed: make(chan struct{})}
}

func (b *openStream) Read([]byte) (int, error) {
	select {
	case <-b.ctx.Done():
	case <-b.closed:
	}
	return 0, io.EOF
}

func (b *openStream) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}
