package informer_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// nsServer serves pods in several namespaces as the API server does, in JSON:
// the namespaces' list at resourceVersion 100; a list of every namespace's
// pods paged by limit and continue (tokens "o<offset>") at 100; a namespace's
// own list at 100 plus its index plus one (each namespace listed later, as on
// a server being written), paged the same way; and a watch of every
// namespace that sends events, then stays open. It records every request.
type nsServer struct {
	namespaces []string
	perNS      int
	events     []map[string]any

	mu   sync.Mutex
	asks []string
}

func newNSServer(t *testing.T, namespaces []string, perNS int) (*nsServer, *rest.Config) {
	s := &nsServer{namespaces: namespaces, perNS: perNS}
	return s, serveTest(t, s.serve)
}

func (s *nsServer) pod(ns string, i int, rv string) corev1.Pod {
	return corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("web-%04d", i), Namespace: ns, ResourceVersion: rv, UID: types.UID("uid-" + ns + "-" + strconv.Itoa(i)),
		Labels: map[string]string{"pad": fmt.Sprintf("%0100d", i), "version": "listed"},
	}}
}

// nsRV is the resourceVersion namespace ns's own list is at.
func (s *nsServer) nsRV(ns string) int { return 101 + slices.Index(s.namespaces, ns) }

func (s *nsServer) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	w.Header().Set("Content-Type", "application/json")
	path := r.URL.Path
	s.mu.Lock()
	ask := path
	if q.Get("watch") == "true" {
		ask += " watch rv=" + q.Get("resourceVersion")
	} else {
		ask += fmt.Sprintf(" limit=%s continue=%s", q.Get("limit"), q.Get("continue"))
	}
	s.asks = append(s.asks, ask)
	s.mu.Unlock()
	switch {
	case path == "/api/v1/namespaces":
		list := metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadataList"}, ListMeta: metav1.ListMeta{ResourceVersion: "100"}}
		for _, ns := range s.namespaces {
			list.Items = append(list.Items, metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
		_ = json.NewEncoder(w).Encode(&list)
	case q.Get("watch") == "true":
		w.WriteHeader(http.StatusOK)
		enc := json.NewEncoder(w)
		for _, ev := range s.events {
			_ = enc.Encode(ev)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	case path == "/api/v1/pods":
		var all []corev1.Pod
		// The server's order: by key, /registry/pods/NAMESPACE/NAME.
		for _, ns := range slices.SortedFunc(slices.Values(s.namespaces), func(a, b string) int { return strings.Compare(a+"/", b+"/") }) {
			for i := range s.perNS {
				all = append(all, s.pod(ns, i, "100"))
			}
		}
		s.page(w, q, all, "100")
	default:
		ns, ok := strings.CutPrefix(path, "/api/v1/namespaces/")
		ns, ok2 := strings.CutSuffix(ns, "/pods")
		if !ok || !ok2 || !slices.Contains(s.namespaces, ns) {
			http.NotFound(w, r)
			return
		}
		rv := strconv.Itoa(s.nsRV(ns))
		var pods []corev1.Pod
		for i := range s.perNS {
			pods = append(pods, s.pod(ns, i, rv))
		}
		s.page(w, q, pods, rv)
	}
}

func (s *nsServer) page(w http.ResponseWriter, q map[string][]string, pods []corev1.Pod, rv string) {
	from := 0
	if c := first(q["continue"]); c != "" {
		if _, err := fmt.Sscanf(c, "o%d", &from); err != nil {
			http.Error(w, "bad continue token", http.StatusBadRequest)
			return
		}
	}
	to := len(pods)
	if limit, _ := strconv.Atoi(first(q["limit"])); limit > 0 {
		to = min(to, from+limit)
	}
	list := corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: pods[from:to]}
	if to < len(pods) {
		list.Continue = fmt.Sprintf("o%d", to)
		left := int64(len(pods) - to)
		list.RemainingItemCount = &left
	}
	_ = json.NewEncoder(w).Encode(&list)
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

func (s *nsServer) lists() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.asks)
}

// TestFactorySlicesByNamespaceWhatIsTooLarge: a list of every namespace's pods
// too large for one answer is read namespace by namespace, each in one answer
// (which the API server serves from its watch cache however quiet the type),
// in the server's order of keys; the informer watches from the namespaces'
// list's resourceVersion and drops the events each namespace's list already
// holds, and keeps those that came after it, and those of a namespace created
// after the namespaces were listed.
func TestFactorySlicesByNamespaceWhatIsTooLarge(t *testing.T) {
	namespaces := []string{"shop", "a", "a-b"}
	s, rc := newNSServer(t, namespaces, 300)
	ev := func(typ string, p corev1.Pod) map[string]any { return map[string]any{"type": typ, "object": p} }
	changed := func(p corev1.Pod, version string) corev1.Pod {
		p.Labels = map[string]string{"version": version}
		return p
	}
	// "a" is listed at 102, "shop" at 101, "a-b" at 103.
	s.events = []map[string]any{
		ev("MODIFIED", changed(s.pod("a", 1, "101"), "before its list")),   // in a's list already: dropped
		ev("DELETED", s.pod("a-b", 2, "103")),                              // in a-b's list already: dropped
		ev("ADDED", s.pod("new", 0, "101")),                                // a namespace nobody listed: kept
		ev("MODIFIED", changed(s.pod("shop", 3, "104"), "after its list")), // after shop's list: kept
		ev("DELETED", s.pod("a", 4, "105")),                                // after a's list: kept
	}
	inf := syncedPods(t, rc, informer.Config{PageSize: 100, UnpagedBudget: 20 << 10, SyncTimeout: 30 * time.Second})
	lists := s.lists()
	i := slices.IndexFunc(lists, func(a string) bool { return strings.Contains(a, "watch") })
	if i < 0 {
		// The watch starts after the list; wait for it.
		eventually(t, func() bool {
			lists = s.lists()
			i = slices.IndexFunc(lists, func(a string) bool { return strings.Contains(a, "watch") })
			return i >= 0
		})
	}
	// 300 pods of about 600 bytes each fit a budget of 20 KiB in 34, fewer
	// than a page: each namespace in pages of 100.
	limit := "100"
	want := []string{"/api/v1/pods limit=100 continue=", "/api/v1/namespaces limit= continue="}
	for _, ns := range []string{"a-b", "a", "shop"} {
		want = append(want, "/api/v1/namespaces/"+ns+"/pods limit="+limit+" continue=")
	}
	got := slices.Clone(lists[:i])
	// The first pages of the next namespaces are asked for ahead: in any order.
	paged := slices.DeleteFunc(slices.Clone(got), func(a string) bool { return !strings.Contains(a, "continue=o") })
	firsts := slices.DeleteFunc(slices.Clone(got), func(a string) bool { return strings.Contains(a, "continue=o") })
	if !slices.Equal(firsts[:2], want[:2]) || !slices.Equal(slices.Sorted(slices.Values(firsts[2:])), slices.Sorted(slices.Values(want[2:]))) {
		t.Errorf("lists asked for:\n  %q\nwant (after the first two, in any order)\n  %q", firsts, want)
	}
	if len(paged) != 3*2 {
		t.Errorf("later pages %q: want two of each namespace", paged)
	}
	if lists[i] != "/api/v1/pods watch rv=100" {
		t.Errorf("watch %q, want it from the namespaces' list's resourceVersion 100", lists[i])
	}

	get := func(ns, name string) (*corev1.Pod, bool) {
		obj, ok, err := inf.GetStore().GetByKey(ns + "/" + name)
		if err != nil || !ok {
			return nil, false
		}
		return obj.(*corev1.Pod), true
	}
	eventually(t, func() bool {
		_, added := get("new", "web-0000")
		_, kept := get("a", "web-0004")
		return added && !kept
	})
	if p, ok := get("a", "web-0001"); !ok || p.Labels["version"] != "listed" {
		t.Errorf("a/web-0001: an event its namespace's list already held was applied: %v", p)
	}
	if _, ok := get("a-b", "web-0002"); !ok {
		t.Errorf("a-b/web-0002: a deletion before its namespace's list was applied")
	}
	if p, ok := get("shop", "web-0003"); !ok || p.Labels["version"] != "after its list" {
		t.Errorf("shop/web-0003: the change after its namespace's list was not applied: %v", p)
	}
	if n := len(inf.GetStore().ListKeys()); n != 3*300 {
		t.Errorf("%d pods in the store, want %d", n, 3*300)
	}
}

// TestFactorySlicesAStreamedListInTheServersOrder: a streamed list (-o json)
// of every namespace is sliced too, each namespace within an eighth of the
// budget, and reaches its sink in the order of the server's keys, as one list
// of every namespace would.
func TestFactorySlicesAStreamedListInTheServersOrder(t *testing.T) {
	s, rc := newNSServer(t, []string{"b", "a", "a-b"}, 250)
	f := restFactory(t, rc, informer.Config{PageSize: 100, UnpagedBudget: 8 << 20, SyncTimeout: 30 * time.Second})
	sink := streamPods(t, f, informer.Full)
	var want []string
	for _, ns := range []string{"a-b", "a", "b"} {
		for i := range 250 {
			want = append(want, fmt.Sprintf("%s/web-%04d", ns, i))
		}
	}
	if got := sink.keys(); !slices.Equal(got, want) {
		t.Errorf("the sink took %d objects, first %q, want %d in the server's order, first %q", len(got), got[:min(3, len(got))], len(want), want[:3])
	}
	for _, a := range s.lists() {
		if strings.HasPrefix(a, "/api/v1/pods limit=") && !strings.HasSuffix(a, "continue=") {
			t.Errorf("a later page of the list of every namespace was asked for: %q", a)
		}
	}
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFactorySlicesByNamespaceWhenAsked: auto slices a list only where its
// namespaces hold enough objects on average (thousands of small ones would
// each cost a request); always slices whatever they hold; never never does.
func TestFactorySlicesByNamespaceWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		by     informer.ByNamespace
		perNS  int
		sliced bool
	}{
		{"", 300, true},
		{"", 120, false},
		{informer.ByNamespaceAlways, 120, true},
		{informer.ByNamespaceNever, 300, false},
	} {
		t.Run(fmt.Sprintf("%s %d a namespace", cmp.Or(string(tc.by), "auto"), tc.perNS), func(t *testing.T) {
			s, rc := newNSServer(t, []string{"a", "b"}, tc.perNS)
			inf := syncedPods(t, rc, informer.Config{PageSize: 100, UnpagedBudget: 20 << 10, WatchListStall: -1, ByNamespace: tc.by, SyncTimeout: 30 * time.Second})
			if n := len(inf.GetStore().ListKeys()); n != 2*tc.perNS {
				t.Errorf("%d pods in the store, want %d", n, 2*tc.perNS)
			}
			sliced := slices.ContainsFunc(s.lists(), func(a string) bool { return strings.HasPrefix(a, "/api/v1/namespaces/a/pods") })
			if sliced != tc.sliced {
				t.Errorf("listed by namespace: %v, want %v:\n%q", sliced, tc.sliced, s.lists())
			}
		})
	}
}

// TestListTuningFromEnv: ByNamespaceEnv takes auto, always and never, and
// names itself when it is given anything else.
func TestListTuningFromEnv(t *testing.T) {
	for v, want := range map[string]informer.ByNamespace{"": "", "auto": "", "always": informer.ByNamespaceAlways, "never": informer.ByNamespaceNever} {
		t.Setenv(informer.ByNamespaceEnv, v)
		got, err := informer.ListTuningFromEnv()
		if err != nil || got.ByNamespace != want {
			t.Errorf("%s=%q: %v, %v; want %q", informer.ByNamespaceEnv, v, got.ByNamespace, err, want)
		}
	}
	t.Setenv(informer.ByNamespaceEnv, "sometimes")
	if _, err := informer.ListTuningFromEnv(); err == nil || err.Error() != "KUBECTL_IDX_LIST_BY_NAMESPACE=sometimes: want auto, always or never" {
		t.Errorf("KUBECTL_IDX_LIST_BY_NAMESPACE=sometimes: %v", err)
	}
}

// TestFactoryFeedsAreNotSliced: a feed's cursor takes a list's version as that
// of every object listed, which a list read by namespace is not: a feed lists
// every namespace whole (here, by a watch-list past the budget).
func TestFactoryFeedsAreNotSliced(t *testing.T) {
	s, rc := newNSServer(t, []string{"a", "b"}, 300)
	f := restFactory(t, rc, informer.Config{PageSize: 100, UnpagedBudget: 20 << 10, WatchListStall: -1, ByNamespace: informer.ByNamespaceAlways, SyncTimeout: 30 * time.Second})
	c := informer.NewCursor(podsRes, nil, func(informer.Resource, informer.Gap) {})
	if _, err := f.FeedInformer(podsRes, informer.Full, c); err != nil {
		t.Fatal(err)
	}
	if err := startAndSync(t, f); err != nil {
		t.Fatalf("WaitForSync: %v", err)
	}
	if slices.ContainsFunc(s.lists(), func(a string) bool { return strings.HasPrefix(a, "/api/v1/namespaces") }) {
		t.Errorf("a feed's list was read by namespace:\n%q", s.lists())
	}
}
