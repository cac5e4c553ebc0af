package informer_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// listServer serves a list of pods in JSON the way the API server pages one:
// at most limit= objects per answer, a continue token to the rest
// ("o<offset>") and the count of what is left; without a limit, the whole
// list. It records the limit and continue token of every LIST it answers.
type listServer struct {
	pods int
	// noRemaining leaves remainingItemCount out, as servers before 1.15 did.
	noRemaining bool
	// protobuf answers LISTs in protobuf, each pod with managedFields of
	// 2 KB, as the API server keeps them.
	protobuf bool
	// watchList is how the server answers a watch-list (sendInitialEvents):
	// "" streams the pods and ends them with the bookmark, "stall" never
	// ends them, "refuse" rejects the parameter as an API server without the
	// WatchList feature does.
	watchList string

	mu   sync.Mutex
	asks []string
}

func newListServer(t *testing.T, pods int) (*listServer, *rest.Config) {
	l := &listServer{pods: pods}
	return l, serveTest(t, l.serve)
}

// serveTest serves h until the test ends and returns the client configuration to reach it.
func serveTest(t testing.TB, h http.HandlerFunc) *rest.Config {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return &rest.Config{Host: s.URL}
}

func (l *listServer) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/namespaces") {
		// Namespaces it does not serve, as a server that does not let the
		// user list them: lists are not sliced by namespace.
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	if q.Get("watch") == "true" {
		if q.Get("sendInitialEvents") == "true" {
			l.mu.Lock()
			l.asks = append(l.asks, fmt.Sprintf("watch-list rv=%s match=%s", q.Get("resourceVersion"), q.Get("resourceVersionMatch")))
			l.mu.Unlock()
			if l.watchList == "refuse" {
				w.WriteHeader(http.StatusUnprocessableEntity)
				_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,"message":"sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}`)
				return
			}
			w.WriteHeader(http.StatusOK)
			enc := json.NewEncoder(w)
			// A metadata client's watch gets PartialObjectMetadata, as the
			// API server sends it.
			typeMeta := metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
			if strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata") {
				typeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}
			}
			for i := range l.pods {
				p := listedPod(i)
				p.TypeMeta = typeMeta
				_ = enc.Encode(map[string]any{"type": "ADDED", "object": p})
			}
			if l.watchList == "" {
				end := corev1.Pod{TypeMeta: typeMeta, ObjectMeta: metav1.ObjectMeta{
					ResourceVersion: "9", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
				_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": end})
			}
			w.(http.Flusher).Flush()
		} else {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
		return
	}
	l.mu.Lock()
	l.asks = append(l.asks, fmt.Sprintf("limit=%s continue=%s", q.Get("limit"), q.Get("continue")))
	l.mu.Unlock()
	from := 0
	if c := q.Get("continue"); c != "" {
		if _, err := fmt.Sscanf(c, "o%d", &from); err != nil {
			http.Error(w, "bad continue token", http.StatusBadRequest)
			return
		}
	}
	to := l.pods
	if limit, _ := strconv.Atoi(q.Get("limit")); limit > 0 {
		to = min(to, from+limit)
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: metav1.ListMeta{ResourceVersion: "7"}}
	if to < l.pods {
		list.Continue = fmt.Sprintf("o%d", to)
		if !l.noRemaining {
			left := int64(l.pods - to)
			list.RemainingItemCount = &left
		}
	}
	for i := from; i < to; i++ {
		list.Items = append(list.Items, listedPod(i))
	}
	if l.protobuf {
		for i := range list.Items {
			list.Items[i].ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":"` + strings.Repeat("x", 2000) + `"}`)}}}
		}
		raw, err := list.Marshal()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		data, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Raw: raw}).Marshal()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
		_, _ = w.Write(append([]byte("k8s\x00"), data...))
		return
	}
	_ = json.NewEncoder(w).Encode(&list)
}

// listedPod is the listServer's pod i.
func listedPod(i int) corev1.Pod {
	return corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("web-%04d", i), Namespace: "shop", ResourceVersion: "7",
		Labels: map[string]string{"pad": fmt.Sprintf("%0100d", i)},
	}}
}

func (l *listServer) lists() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.asks)
}

// TestFactoryListsUnpagedWhatFitsTheBudget: the first list starts with a small
// page, which is the whole list when the list is short; a longer list whose
// size, by that page, fits Config.UnpagedBudget is asked for again unpaged
// (which the API server answers from its watch cache however long the type
// has been quiet); a larger one, or one whose size the server does not tell,
// is read by a watch-list, which the server also answers from its cache.
// Either way the informer holds every object once.
func TestFactoryListsUnpagedWhatFitsTheBudget(t *testing.T) {
	tests := []struct {
		name        string
		pods        int
		budget      int64
		noRemaining bool
		want        []string
	}{
		{"short list: one page", 60, 0, false, []string{"limit=100 continue="}},
		{"fits: unpaged", 1000, 0, false, []string{"limit=100 continue=", "limit= continue="}},
		{"too large: watch-list", 1000, 50 << 10, false, []string{"limit=100 continue=", "watch-list rv= match=NotOlderThan"}},
		{"size untold: watch-list", 1000, 0, true, []string{"limit=100 continue=", "watch-list rv= match=NotOlderThan"}},
		{"budget off: pages from the start", 1000, -1, false, []string{"limit=400 continue=", "limit=400 continue=o400", "limit=400 continue=o800"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, rc := newListServer(t, tc.pods)
			l.noRemaining = tc.noRemaining
			inf := syncedPods(t, rc, informer.Config{PageSize: 400, UnpagedBudget: tc.budget, SyncTimeout: 30 * time.Second})
			if got := l.lists(); !slices.Equal(got, tc.want) {
				t.Errorf("lists asked for:\n  %q\nwant\n  %q", got, tc.want)
			}
			keys := storeKeys(inf)
			if len(keys) != tc.pods || len(slices.Compact(slices.Sorted(slices.Values(keys)))) != tc.pods {
				t.Errorf("%d pods in the store (%d distinct), want %d", len(keys), len(slices.Compact(slices.Sorted(slices.Values(keys)))), tc.pods)
			}
		})
	}
}

// TestFactoryBudgetCountsTheAnswerStripped: the size the budget is held
// against is the answer without its items' managedFields, which are taken
// out as it arrives: a list of pods whose managedFields make it larger than
// the budget as sent, and smaller without them, is asked for unpaged; with
// managedFields kept, it is not (and is read by a watch-list, whose pods the
// test server sends without them). The pods listed arrive whole, without
// their managedFields.
func TestFactoryBudgetCountsTheAnswerStripped(t *testing.T) {
	const pods = 1000
	// About 2.3 KB a pod as sent, 0.2 KB without managedFields.
	const budget = 1 << 20
	tests := []struct {
		name string
		keep bool
		want []string
	}{
		{"managedFields dropped: unpaged", false, []string{"limit=100 continue=", "limit= continue="}},
		{"managedFields kept: too large", true, []string{"limit=100 continue=", "watch-list rv= match=NotOlderThan"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, rc := newListServer(t, pods)
			l.protobuf = true
			inf := syncedPods(t, rc, informer.Config{PageSize: 400, UnpagedBudget: budget, KeepManagedFields: tc.keep, SyncTimeout: 30 * time.Second})
			if got := l.lists(); !slices.Equal(got, tc.want) {
				t.Errorf("lists asked for:\n  %q\nwant\n  %q", got, tc.want)
			}
			objs := inf.GetStore().List()
			if len(objs) != pods {
				t.Fatalf("%d pods in the store, want %d", len(objs), pods)
			}
			for _, o := range objs {
				p := o.(*corev1.Pod)
				if len(p.ManagedFields) > 0 || len(p.Labels["pad"]) != 100 || p.Namespace != "shop" {
					t.Fatalf("pod %s: %d managedFields, label of %d bytes", p.Name, len(p.ManagedFields), len(p.Labels["pad"]))
				}
			}
		})
	}
}

// syncedPods returns a Full informer of pods over rc, of a factory of cfg started and synced,
// shut down when the test ends.
func syncedPods(t *testing.T, rc *rest.Config, cfg informer.Config) cache.SharedIndexInformer {
	t.Helper()
	f := restFactory(t, rc, cfg)
	inf := mustInformer(t, f, podsRes, informer.Full)
	if err := startAndSync(t, f); err != nil {
		t.Fatalf("WaitForSync: %v", err)
	}
	return inf
}

// TestFactoryWatchListFallsBackToPages: a list too large to hold whole goes on
// in pages, from the start, when the server refuses the watch-list, or when it
// never ends its initial events (an aggregated API that does not implement
// it), which is said, naming the type; the factory asks no further watch-list
// of that type.
func TestFactoryWatchListFallsBackToPages(t *testing.T) {
	pages := []string{"limit=400 continue=", "limit=400 continue=o400", "limit=400 continue=o800"}
	for _, how := range []string{"refuse", "stall"} {
		t.Run(how, func(t *testing.T) {
			l, rc := newListServer(t, 1000)
			l.watchList = how
			var mu sync.Mutex
			var warnings []string
			inf := syncedPods(t, rc, informer.Config{
				PageSize: 400, UnpagedBudget: 50 << 10, WatchListStall: 300 * time.Millisecond, SyncTimeout: 30 * time.Second,
				OnWarning: func(res informer.Resource, w string) {
					mu.Lock()
					defer mu.Unlock()
					warnings = append(warnings, w)
				},
			})
			want := append([]string{"limit=100 continue=", "watch-list rv= match=NotOlderThan"}, pages...)
			if got := l.lists(); !slices.Equal(got, want) {
				t.Errorf("lists asked for:\n  %q\nwant\n  %q", got, want)
			}
			if n := len(storeKeys(inf)); n != 1000 {
				t.Errorf("%d pods in the store, want 1000", n)
			}
			mu.Lock()
			defer mu.Unlock()
			var wantWarnings []string
			if how == "stall" {
				wantWarnings = []string{"the server did not end the watch-list of pods within 300ms: listed in pages"}
			}
			if !slices.Equal(warnings, wantWarnings) {
				t.Errorf("warnings %q, want %q", warnings, wantWarnings)
			}
		})
	}
}

// TestFactoryStreams: a list of whole objects that goes to a sink (a streamed
// -o json) stays in pages after the small one, whatever would fit the budget:
// each page is handed over, and dropped, while the next arrives, where an
// unpaged answer or a watch-list would be held whole until its end. A list of
// metadata only that goes to a sink (a streamed -o name) is asked for again
// unpaged within the budget, as any list is, and handed over whole; past it,
// in pages, never by a watch-list, which would hold it whole however large.
func TestFactoryStreams(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      informer.Mode
		budget    int64
		watchList string
		lists     []string
		pages     []int
	}{
		{"whole objects: pages", informer.Full, 0, "", []string{"limit=100 continue=", "limit=400 continue=o100", "limit=400 continue=o500", "limit=400 continue=o900"}, []int{100, 400, 400, 100}},
		{"metadata that fits: unpaged", informer.MetadataOnly, 0, "", []string{"limit=100 continue=", "limit= continue="}, []int{1000}},
		{"metadata too large: pages", informer.MetadataOnly, 50 << 10, "", []string{"limit=100 continue=", "limit=400 continue=o100", "limit=400 continue=o500", "limit=400 continue=o900"}, []int{100, 400, 400, 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, rc := newListServer(t, 1000)
			l.watchList = tc.watchList
			f := restFactory(t, rc, informer.Config{PageSize: 400, UnpagedBudget: tc.budget, SyncTimeout: 30 * time.Second})
			sink := streamPods(t, f, tc.mode)
			if got := l.lists(); !slices.Equal(got, tc.lists) {
				t.Errorf("lists asked for:\n  %q\nwant\n  %q", got, tc.lists)
			}
			if got := sink.sizes(); !slices.Equal(got, tc.pages) {
				t.Errorf("pages handed to the sink %v, want %v", got, tc.pages)
			}
		})
	}
}
