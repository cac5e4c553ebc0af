package informer_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// TestMain keeps klog quiet: the mutation detector the tests run under logs a
// warning for every informer.
func TestMain(m *testing.M) { fixtures.Main(m) }

var (
	podsRes, servicesRes, nodesRes, deploymentsRes = fixtures.Pods, fixtures.Services, fixtures.Nodes, fixtures.Deployments
	// crontabsRes is a custom resource: client-go's scheme does not know it, so Full
	// mode goes through the dynamic client.
	crontabsRes      = fixtures.CronTabs
	crontabListKinds = map[schema.GroupVersionResource]string{crontabsRes.GVR: "CronTabList"}
)

// testManagedFields is what every fixture carries, so tests can see it dropped or kept.
func testManagedFields() []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{
		Manager: "kubectl-client-side-apply", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)},
	}}
}

func testPod(namespace, name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels, ManagedFields: testManagedFields()},
		Spec:       corev1.PodSpec{NodeName: "worker-1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
}

func testService(namespace, name string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

func testNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, ManagedFields: testManagedFields()}}
}

func testCronTab(namespace, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1",
		"kind":       "CronTab",
		"spec":       map[string]any{"cronSpec": "* * * * */5", "image": "cron"},
	}}
	u.SetNamespace(namespace)
	u.SetName(name)
	u.SetManagedFields(testManagedFields())
	return u
}

func clientsOf(s *fakeapi.Server) informer.Clients {
	return informer.Clients{Typed: s.Typed, Dynamic: s.Dynamic, Metadata: s.Metadata}
}

// newFactory returns a factory on s whose informers stop when the test ends.
func newFactory(t *testing.T, s *fakeapi.Server, cfg informer.Config) *informer.Factory {
	t.Helper()
	f := informer.NewFactoryWithClients(clientsOf(s), cfg)
	t.Cleanup(f.Shutdown)
	return f
}

// restFactory returns a factory of cfg over rc whose informers stop when the
// test ends.
func restFactory(t *testing.T, rc *rest.Config, cfg informer.Config) *informer.Factory {
	t.Helper()
	f, err := informer.NewFactory(rc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Shutdown)
	return f
}

func mustInformer(t *testing.T, f *informer.Factory, res informer.Resource, mode informer.Mode) cache.SharedIndexInformer {
	t.Helper()
	inf, err := f.Informer(res, mode, nil)
	if err != nil {
		t.Fatalf("Informer(%s, %s): %v", res.Name(), mode, err)
	}
	return inf
}

// startAndSync starts f and waits for it, bounding the wait so a hang fails the test.
func startAndSync(t *testing.T, f *informer.Factory) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	f.Start(ctx)
	return f.WaitForSync(ctx)
}

// startAndSyncPartial starts f and waits, for at most 20 seconds, for what it may list; it
// returns the informers skipped, and fails t on any other error.
func startAndSyncPartial(t *testing.T, f *informer.Factory) []informer.Skipped {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	f.Start(ctx)
	skipped, err := f.WaitForSyncPartial(ctx)
	if err != nil {
		t.Fatalf("WaitForSyncPartial: %v", err)
	}
	return skipped
}

func storeKeys(inf cache.SharedIndexInformer) []string {
	keys := inf.GetStore().ListKeys()
	sort.Strings(keys)
	return keys
}

func TestFactoryFillsStores(t *testing.T) {
	objects := []runtime.Object{
		testPod("shop", "web-0", map[string]string{"app": "web"}),
		testPod("shop", "web-1", map[string]string{"app": "web"}),
		testPod("other", "db-0", nil),
		testCronTab("shop", "nightly"),
		testCronTab("other", "hourly"),
	}
	tests := []struct {
		name     string
		res      informer.Resource
		mode     informer.Mode
		wantType reflect.Type
		wantKeys []string
	}{
		{
			name: "metadata-only pods through the metadata client", res: podsRes, mode: informer.MetadataOnly,
			wantType: reflect.TypeOf(&metav1.PartialObjectMetadata{}), wantKeys: []string{"shop/web-0", "shop/web-1"},
		},
		{
			name: "full pods through the typed client", res: podsRes, mode: informer.Full,
			wantType: reflect.TypeOf(&corev1.Pod{}), wantKeys: []string{"shop/web-0", "shop/web-1"},
		},
		{
			name: "full custom resources through the dynamic client", res: crontabsRes, mode: informer.Full,
			wantType: reflect.TypeOf(&unstructured.Unstructured{}), wantKeys: []string{"shop/nightly"},
		},
		{
			name: "metadata-only custom resources through the metadata client", res: crontabsRes, mode: informer.MetadataOnly,
			wantType: reflect.TypeOf(&metav1.PartialObjectMetadata{}), wantKeys: []string{"shop/nightly"},
		},
	}
	for _, tc := range tests {
		for _, keep := range []bool{false, true} {
			name := tc.name + "/drop managedFields"
			if keep {
				name = tc.name + "/keep managedFields"
			}
			t.Run(name, func(t *testing.T) {
				s := fakeapi.New(crontabListKinds, objects...)
				f := newFactory(t, s, informer.Config{Namespace: "shop", KeepManagedFields: keep})
				inf := mustInformer(t, f, tc.res, tc.mode)
				if err := startAndSync(t, f); err != nil {
					t.Fatalf("WaitForSync: %v", err)
				}
				if got := storeKeys(inf); !slices.Equal(got, tc.wantKeys) {
					t.Errorf("store keys = %q, want %q", got, tc.wantKeys)
				}
				for _, obj := range inf.GetStore().List() {
					if got := reflect.TypeOf(obj); got != tc.wantType {
						t.Errorf("store holds %v, want %v", got, tc.wantType)
						continue
					}
					a, err := meta.Accessor(obj)
					if err != nil {
						t.Fatal(err)
					}
					mf := a.GetManagedFields()
					if keep && !reflect.DeepEqual(mf, testManagedFields()) {
						t.Errorf("%s: managedFields = %+v, want them kept with KeepManagedFields", a.GetName(), mf)
					}
					if !keep && mf != nil {
						t.Errorf("%s: managedFields = %+v, want them dropped", a.GetName(), mf)
					}
				}
			})
		}
	}
}

func TestFactoryClusterScopedIgnoresNamespace(t *testing.T) {
	s := fakeapi.New(nil, testNode("worker-1"), testNode("worker-2"))
	f := newFactory(t, s, informer.Config{Namespace: "shop"})
	inf := mustInformer(t, f, nodesRes, informer.Full)
	if err := startAndSync(t, f); err != nil {
		t.Fatalf("WaitForSync: %v", err)
	}
	if got, want := storeKeys(inf), []string{"worker-1", "worker-2"}; !slices.Equal(got, want) {
		t.Errorf("store keys = %q, want %q", got, want)
	}
	for _, r := range s.Requests() {
		if r.Path != "/api/v1/nodes" {
			t.Errorf("request path = %q, want /api/v1/nodes (nodes are not namespaced)", r.Path)
		}
	}
}

// sentRequest is what a list or watch carried to the server, whatever the client.
type sentRequest struct {
	verb, namespace, labels, fields string
}

func sentByFake(actions []clienttesting.Action) []sentRequest {
	var out []sentRequest
	for _, a := range actions {
		switch a := a.(type) {
		case clienttesting.ListAction:
			r := a.GetListRestrictions()
			out = append(out, sentRequest{"list", a.GetNamespace(), r.Labels.String(), r.Fields.String()})
		case clienttesting.WatchAction:
			r := a.GetWatchRestrictions()
			out = append(out, sentRequest{"watch", a.GetNamespace(), r.Labels.String(), r.Fields.String()})
		}
	}
	return out
}

func sentByTyped(reqs []fakeapi.Request) []sentRequest {
	var out []sentRequest
	for _, r := range reqs {
		verb := "list"
		if r.Watch {
			verb = "watch"
		}
		ns := ""
		if rest, ok := strings.CutPrefix(r.Path, "/api/v1/namespaces/"); ok {
			ns, _, _ = strings.Cut(rest, "/")
		}
		out = append(out, sentRequest{verb, ns, r.Query.Get("labelSelector"), r.Query.Get("fieldSelector")})
	}
	return out
}

func TestFactorySendsNamespaceAndSelectors(t *testing.T) {
	const labelSel, fieldSel = "app=web", "spec.nodeName=worker-1"
	tests := []struct {
		name      string
		res       informer.Resource
		mode      informer.Mode
		namespace string
		sent      func(s *fakeapi.Server) []sentRequest
		wantNS    string
	}{
		{"metadata client", podsRes, informer.MetadataOnly, "shop", func(s *fakeapi.Server) []sentRequest { return sentByFake(s.Metadata.Actions()) }, "shop"},
		{"dynamic client", crontabsRes, informer.Full, "shop", func(s *fakeapi.Server) []sentRequest { return sentByFake(s.Dynamic.Actions()) }, "shop"},
		{"typed client", podsRes, informer.Full, "shop", func(s *fakeapi.Server) []sentRequest { return sentByTyped(s.Requests()) }, "shop"},
		{"typed client, all namespaces", podsRes, informer.Full, "", func(s *fakeapi.Server) []sentRequest { return sentByTyped(s.Requests()) }, ""},
		{"metadata client, cluster-scoped", nodesRes, informer.MetadataOnly, "shop", func(s *fakeapi.Server) []sentRequest { return sentByFake(s.Metadata.Actions()) }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(crontabListKinds, testPod("shop", "web-0", map[string]string{"app": "web"}), testCronTab("shop", "nightly"), testNode("worker-1"))
			f := newFactory(t, s, informer.Config{Namespace: tc.namespace, LabelSelector: labelSel, FieldSelector: fieldSel})
			mustInformer(t, f, tc.res, tc.mode)
			if err := startAndSync(t, f); err != nil {
				t.Fatalf("WaitForSync: %v", err)
			}
			// The watch starts right after the list; give it a moment to be recorded.
			var sent []sentRequest
			deadline := time.Now().Add(5 * time.Second)
			for {
				sent = tc.sent(s)
				if slices.ContainsFunc(sent, func(r sentRequest) bool { return r.verb == "watch" }) || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			want := []sentRequest{
				{"list", tc.wantNS, labelSel, fieldSel},
				{"watch", tc.wantNS, labelSel, fieldSel},
			}
			if !slices.Equal(sent, want) {
				t.Errorf("requests sent = %+v, want %+v", sent, want)
			}
		})
	}
}

func TestFactoryFirstListAsksForLatestInPages(t *testing.T) {
	tests := []struct {
		pageSize  int64
		wantLimit string
	}{
		{0, strconv.Itoa(informer.DefaultPageSize)},
		{1000, "1000"},
		{50, "50"},
	}
	for _, tc := range tests {
		t.Run(tc.wantLimit, func(t *testing.T) {
			s := fakeapi.New(nil, testPod("shop", "web-0", nil))
			f := newFactory(t, s, informer.Config{PageSize: tc.pageSize, UnpagedBudget: -1})
			mustInformer(t, f, podsRes, informer.Full)
			if err := startAndSync(t, f); err != nil {
				t.Fatalf("WaitForSync: %v", err)
			}
			reqs := s.Requests()
			if len(reqs) == 0 || reqs[0].Watch {
				t.Fatalf("first request is not a list: %+v", reqs)
			}
			q := reqs[0].Query
			if rv := q.Get("resourceVersion"); rv != "" {
				t.Errorf("first list resourceVersion = %q, want \"\" (latest, not the watch cache's \"0\")", rv)
			}
			if got := q.Get("limit"); got != tc.wantLimit {
				t.Errorf("first list limit = %q, want %q (Config.PageSize %d)", got, tc.wantLimit, tc.pageSize)
			}
		})
	}
}

func TestFactoryInformerIsSharedPerResourceAndMode(t *testing.T) {
	s := fakeapi.New(nil)
	f := newFactory(t, s, informer.Config{})
	full := mustInformer(t, f, podsRes, informer.Full)
	if again := mustInformer(t, f, podsRes, informer.Full); again != full {
		t.Error("second Informer(pods, full) returned a different informer")
	}
	if md := mustInformer(t, f, podsRes, informer.MetadataOnly); md == full {
		t.Error("Informer(pods, metadata) returned the full informer")
	}
	mustInformer(t, f, deploymentsRes, informer.Full)
	var got []string
	for _, r := range f.Resources() {
		got = append(got, r.Name())
	}
	if want := []string{"pods", "pods", "deployments.apps"}; !slices.Equal(got, want) {
		t.Errorf("Resources() = %q, want %q", got, want)
	}
}

func TestModeCovers(t *testing.T) {
	all := []informer.Mode{informer.Full, informer.MetadataOnly, informer.Rows, informer.FullRows, informer.Summary}
	// What each mode's store can answer besides its own questions.
	covers := map[informer.Mode][]informer.Mode{
		informer.Full:    {informer.MetadataOnly, informer.Summary},
		informer.Summary: {informer.MetadataOnly},
	}
	for _, m := range all {
		for _, n := range all {
			want := m == n || slices.Contains(covers[m], n)
			if got := m.Covers(n); got != want {
				t.Errorf("%s.Covers(%s) = %v, want %v", m, n, got, want)
			}
		}
	}
}

func TestFactoryInformerIndexers(t *testing.T) {
	byNode := func(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Spec.NodeName}, nil }
	byImage := func(obj any) ([]string, error) { return []string{obj.(*corev1.Pod).Spec.Containers[0].Image}, nil }

	s := fakeapi.New(nil, testPod("shop", "web-0", nil))
	f := newFactory(t, s, informer.Config{})
	inf, err := f.Informer(podsRes, informer.Full, cache.Indexers{"node": byNode})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Informer(podsRes, informer.Full, cache.Indexers{"node": byNode, "image": byImage}); err != nil {
		t.Fatalf("adding a new index to an existing informer: %v", err)
	}
	if got := inf.GetIndexer().GetIndexers(); len(got) != 2 {
		t.Errorf("informer has %d indexers, want node and image", len(got))
	}
	// The doc of Factory.Informer: "adding an index name twice with a different
	// function is an error". Silently keeping the first function would make the
	// second caller's queries return the wrong objects.
	_, err = f.Informer(podsRes, informer.Full, cache.Indexers{"node": byImage})
	if err == nil {
		t.Error("re-registering index \"node\" with a different function: got no error")
	}

	if err := startAndSync(t, f); err != nil {
		t.Fatalf("WaitForSync: %v", err)
	}
	got, err := inf.GetIndexer().ByIndex("node", "worker-1")
	if err != nil || len(got) != 1 {
		t.Errorf("ByIndex(node, worker-1) = %d objects, %v; want 1", len(got), err)
	}
}

func TestFactoryInformerAfterStart(t *testing.T) {
	s := fakeapi.New(nil, testPod("shop", "web-0", nil), testService("shop", "web"))
	f := newFactory(t, s, informer.Config{})
	mustInformer(t, f, podsRes, informer.Full)
	if err := startAndSync(t, f); err != nil {
		t.Fatal(err)
	}
	// Owner kinds are discovered after the first sync: a late informer runs at
	// once and the next WaitForSync waits for it.
	inf, err := f.Informer(servicesRes, informer.Full, nil)
	if err != nil {
		t.Fatalf("Informer after Start: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.WaitForSync(ctx); err != nil {
		t.Fatalf("WaitForSync after a late informer: %v", err)
	}
	if n := len(inf.GetStore().List()); n != 1 {
		t.Errorf("late informer has %d objects, want 1", n)
	}
}

func TestWaitForSyncReturnsPermanentListErrors(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "",
		errors.New(`User "jane" cannot list resource "pods" in API group "" in the namespace "shop"`))
	const wantMsg = `pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "shop"`

	failList := func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, forbidden }
	tests := []struct {
		name  string
		res   informer.Resource
		mode  informer.Mode
		setup func(s *fakeapi.Server)
		// same is true when the client hands back the very error value; the typed
		// client decodes a new one from the response body.
		same bool
	}{
		{"metadata client", podsRes, informer.MetadataOnly, func(s *fakeapi.Server) { s.Metadata.PrependReactor("list", "pods", failList) }, true},
		{"dynamic client", crontabsRes, informer.Full, func(s *fakeapi.Server) { s.Dynamic.PrependReactor("list", "crontabs", failList) }, true},
		{"typed client", podsRes, informer.Full, func(s *fakeapi.Server) {
			s.BeforeList = func(*http.Request) *metav1.Status { return &forbidden.ErrStatus }
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(crontabListKinds)
			tc.setup(s)
			f := newFactory(t, s, informer.Config{SyncTimeout: 30 * time.Second})
			mustInformer(t, f, tc.res, tc.mode)
			start := time.Now()
			err := startAndSync(t, f)
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("WaitForSync took %s; a forbidden list must fail at once, not after retries or the timeout", elapsed)
			}
			var status apierrors.APIStatus
			if !errors.As(err, &status) {
				t.Fatalf("WaitForSync error %v (%T) is not an API status", err, err)
			}
			if err.Error() != wantMsg {
				t.Errorf("error = %q, want %q", err.Error(), wantMsg)
			}
			if !apierrors.IsForbidden(err) {
				t.Errorf("error reason = %q, want Forbidden", apierrors.ReasonForError(err))
			}
			if tc.same && !errors.Is(err, forbidden) {
				t.Errorf("error is not the status error the client returned")
			}
		})
	}
}

func TestWaitForSyncRetriesRetriableErrors(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("etcd leader changed")
	tests := []struct {
		name      string
		failures  int32 // lists that fail before one succeeds; -1 fails forever
		wantLists int32
		wantErr   bool
	}{
		{"gives up after three failed lists", -1, 3, true},
		{"recovers when a retry succeeds", 1, 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(nil, testPod("shop", "web-0", nil))
			var lists atomic.Int32
			s.Metadata.PrependReactor("list", "pods", func(clienttesting.Action) (bool, runtime.Object, error) {
				n := lists.Add(1)
				if tc.failures < 0 || n <= tc.failures {
					return true, nil, unavailable
				}
				return false, nil, nil
			})
			f := newFactory(t, s, informer.Config{SyncTimeout: 30 * time.Second})
			inf := mustInformer(t, f, podsRes, informer.MetadataOnly)
			err := startAndSync(t, f)
			if got := lists.Load(); got != tc.wantLists {
				t.Errorf("lists before WaitForSync returned = %d, want %d", got, tc.wantLists)
			}
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("WaitForSync: %v", err)
				}
				if got := storeKeys(inf); !slices.Equal(got, []string{"shop/web-0"}) {
					t.Errorf("store keys = %q, want [shop/web-0]", got)
				}
				return
			}
			if !errors.Is(err, unavailable) || err.Error() != "etcd leader changed" {
				t.Errorf("error = %v, want the ServiceUnavailable status %q", err, "etcd leader changed")
			}
		})
	}
}

func TestWaitForSyncTimeoutNamesUnsyncedResources(t *testing.T) {
	tests := []struct {
		name    string
		blocked []string // path suffixes whose lists never answer
		want    string
	}{
		{
			name: "one resource", blocked: []string{"/pods"},
			want: "timed out waiting for caches to sync after 1s: pods did not sync (raise --sync-timeout to wait longer)",
		},
		{
			name: "two of three, sorted", blocked: []string{"/pods", "/deployments"},
			want: "timed out waiting for caches to sync after 1s: deployments.apps, pods did not sync (raise --sync-timeout to wait longer)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(nil, testNode("worker-1"))
			s.BeforeList = func(req *http.Request) *metav1.Status {
				for _, b := range tc.blocked {
					if strings.HasSuffix(req.URL.Path, b) {
						<-req.Context().Done()
					}
				}
				return nil
			}
			f := newFactory(t, s, informer.Config{SyncTimeout: time.Second})
			mustInformer(t, f, podsRes, informer.Full)
			mustInformer(t, f, nodesRes, informer.Full)
			mustInformer(t, f, deploymentsRes, informer.Full)
			start := time.Now()
			err := startAndSync(t, f)
			elapsed := time.Since(start)
			if !errors.Is(err, informer.ErrSyncTimeout) {
				t.Fatalf("WaitForSync error = %v, want one wrapping ErrSyncTimeout", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error = %q, want %q", err.Error(), tc.want)
			}
			if elapsed < time.Second || elapsed > 5*time.Second {
				t.Errorf("WaitForSync returned after %s, want about the 1s sync timeout", elapsed)
			}
		})
	}
}

func TestWaitForSyncContextCanceled(t *testing.T) {
	s := fakeapi.New(nil)
	s.BeforeList = func(req *http.Request) *metav1.Status { <-req.Context().Done(); return nil }
	f := newFactory(t, s, informer.Config{})
	mustInformer(t, f, podsRes, informer.Full)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	f.Start(ctx)
	err := f.WaitForSync(ctx)
	if want := "waiting for pods to sync: context deadline exceeded"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if errors.Is(err, informer.ErrSyncTimeout) {
		t.Error("a caller's deadline is not --sync-timeout; the error must not wrap ErrSyncTimeout")
	}
}

func TestWaitForSyncProgress(t *testing.T) {
	tests := []struct {
		name     string
		delay    time.Duration
		wantLine bool
	}{
		{"slow sync past the delay draws a line", 0, true},
		{"sync shorter than the delay stays quiet", time.Hour, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(nil, testPod("shop", "web-0", nil))
			s.BeforeList = func(*http.Request) *metav1.Status { time.Sleep(400 * time.Millisecond); return nil }
			var progress strings.Builder
			f := newFactory(t, s, informer.Config{Progress: &progress, ProgressDelay: tc.delay})
			mustInformer(t, f, podsRes, informer.Full)
			if err := startAndSync(t, f); err != nil {
				t.Fatalf("WaitForSync: %v", err)
			}
			got := progress.String()
			if !tc.wantLine {
				if got != "" {
					t.Errorf("progress = %q, want nothing", got)
				}
				return
			}
			if !strings.Contains(got, "syncing: pods 0 received") {
				t.Errorf("progress = %q, want a line with \"syncing: pods 0 received\"", got)
			}
			if !strings.HasSuffix(got, "\r\x1b[K") {
				t.Errorf("progress = %q, want the line erased at the end", got)
			}
		})
	}
}

func TestDropManagedFields(t *testing.T) {
	podWith := func() *corev1.Pod { return testPod("shop", "web-0", nil) }
	podWithout := func() *corev1.Pod { p := podWith(); p.ManagedFields = nil; return p }
	cronWithout := func() *unstructured.Unstructured {
		u := testCronTab("shop", "nightly")
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		return u
	}
	partial := func(mf []metav1.ManagedFieldsEntry) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web-0", ManagedFields: mf}}
	}
	tests := []struct {
		name string
		in   any
		want any
	}{
		{"typed object", podWith(), podWithout()},
		{"typed object without managedFields", podWithout(), podWithout()},
		{"unstructured object", testCronTab("shop", "nightly"), cronWithout()},
		{"metadata-only object", partial(testManagedFields()), partial(nil)},
		{
			"tombstone keeps its shape",
			cache.DeletedFinalStateUnknown{Key: "shop/web-0", Obj: podWith()},
			cache.DeletedFinalStateUnknown{Key: "shop/web-0", Obj: podWithout()},
		},
		{"not an object", "shop/web-0", "shop/web-0"},
		{"nil", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := summarize(tc.in) // before the transform changes it
			got, err := informer.DropManagedFields(tc.in)
			if err != nil {
				t.Fatalf("DropManagedFields: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DropManagedFields(%s) = %s, want %s", in, summarize(got), summarize(tc.want))
			}
		})
	}
}

// summarize names a transform input or output by type and managedFields count.
func summarize(v any) string {
	if d, ok := v.(cache.DeletedFinalStateUnknown); ok {
		return fmt.Sprintf("DeletedFinalStateUnknown{Key: %q, Obj: %s}", d.Key, summarize(d.Obj))
	}
	if a, err := meta.Accessor(v); err == nil {
		return fmt.Sprintf("%T %s with %d managedFields", v, a.GetName(), len(a.GetManagedFields()))
	}
	return fmt.Sprintf("%T %v", v, v)
}

func TestFromMapping(t *testing.T) {
	tests := []struct {
		mapping  *meta.RESTMapping
		wantName string
		wantNS   bool
	}{
		{&meta.RESTMapping{Resource: podsRes.GVR, GroupVersionKind: podsRes.GVK, Scope: meta.RESTScopeNamespace}, "pods", true},
		{&meta.RESTMapping{Resource: nodesRes.GVR, GroupVersionKind: nodesRes.GVK, Scope: meta.RESTScopeRoot}, "nodes", false},
		{&meta.RESTMapping{Resource: deploymentsRes.GVR, GroupVersionKind: deploymentsRes.GVK, Scope: meta.RESTScopeNamespace}, "deployments.apps", true},
	}
	for _, tc := range tests {
		t.Run(tc.wantName, func(t *testing.T) {
			got := informer.FromMapping(tc.mapping)
			want := informer.Resource{GVR: tc.mapping.Resource, GVK: tc.mapping.GroupVersionKind, Namespaced: tc.wantNS}
			if got != want {
				t.Errorf("FromMapping = %+v, want %+v", got, want)
			}
			if got.Name() != tc.wantName {
				t.Errorf("Name() = %q, want %q", got.Name(), tc.wantName)
			}
		})
	}
}

func TestWaitForSyncPartialSkipsFailingResources(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "",
		errors.New(`User "jane" cannot list resource "deployments" in API group "apps" at the cluster scope`))
	s := fakeapi.New(nil, testPod("shop", "web-0", nil), testNode("worker-1"))
	var deploymentLists atomic.Int32
	s.Metadata.PrependReactor("list", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		deploymentLists.Add(1)
		return true, nil, forbidden
	})
	f := newFactory(t, s, informer.Config{SyncTimeout: 30 * time.Second})
	pods := mustInformer(t, f, podsRes, informer.MetadataOnly)
	mustInformer(t, f, deploymentsRes, informer.MetadataOnly)
	nodes := mustInformer(t, f, nodesRes, informer.MetadataOnly)
	skipped := startAndSyncPartial(t, f)
	if len(skipped) != 1 || skipped[0].Resource != deploymentsRes {
		t.Fatalf("skipped = %+v, want deployments only", skipped)
	}
	if !apierrors.IsForbidden(skipped[0].Err) || !strings.Contains(skipped[0].Err.Error(), `cannot list resource "deployments"`) {
		t.Errorf("skipped error = %v, want the Forbidden status", skipped[0].Err)
	}
	if got := storeKeys(pods); !slices.Equal(got, []string{"shop/web-0"}) {
		t.Errorf("pods = %q, want [shop/web-0]", got)
	}
	if got := storeKeys(nodes); !slices.Equal(got, []string{"worker-1"}) {
		t.Errorf("nodes = %q, want [worker-1]", got)
	}
	// The skipped informer is stopped: no more lists once the answer is in.
	n := deploymentLists.Load()
	time.Sleep(1500 * time.Millisecond)
	if got := deploymentLists.Load(); got != n {
		t.Errorf("deployments listed %d more times after being skipped", got-n)
	}

	// The strict wait still fails on the same server.
	f2 := newFactory(t, s, informer.Config{SyncTimeout: 30 * time.Second})
	mustInformer(t, f2, podsRes, informer.MetadataOnly)
	mustInformer(t, f2, deploymentsRes, informer.MetadataOnly)
	if err := startAndSync(t, f2); !apierrors.IsForbidden(err) {
		t.Errorf("WaitForSync error = %v, want Forbidden", err)
	}
}

func TestWaitForSyncPartialManyFailures(t *testing.T) {
	// More failing informers than any fixed-size channel would hold: every one
	// must be reported, none may hang the wait.
	s := fakeapi.New(nil, testPod("shop", "web-0", nil))
	s.Metadata.PrependReactor("list", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetResource().Resource == "pods" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(a.GetResource().GroupResource(), "", errors.New("no"))
	})
	f := newFactory(t, s, informer.Config{SyncTimeout: 30 * time.Second})
	mustInformer(t, f, podsRes, informer.MetadataOnly)
	const n = 100
	for i := range n {
		res := informer.Resource{
			GVR:        schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: fmt.Sprintf("things%d", i)},
			GVK:        schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: fmt.Sprintf("Thing%d", i)},
			Namespaced: true,
		}
		mustInformer(t, f, res, informer.MetadataOnly)
	}
	skipped := startAndSyncPartial(t, f)
	if len(skipped) != n {
		t.Errorf("skipped %d resources, want %d", len(skipped), n)
	}
}
