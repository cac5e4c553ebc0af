package query_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// podTableColumns are the columns of the API server's pod table.
var podTableColumns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name"}, {Name: "Ready", Type: "string"}, {Name: "Status", Type: "string"},
	{Name: "Restarts", Type: "string"}, {Name: "Age", Type: "string"}, {Name: "IP", Type: "string", Priority: 1},
	{Name: "Node", Type: "string", Priority: 1}, {Name: "Nominated Node", Type: "string", Priority: 1},
	{Name: "Readiness Gates", Type: "string", Priority: 1},
}

// podCells prints a pod's row as the API server does, for what the test
// pods hold: READY counts the ready containers, STATUS is a waiting
// container's reason or the phase.
func podCells(obj runtime.Object) []any {
	p := obj.(*corev1.Pod)
	ready, restarts, status := 0, int32(0), string(p.Status.Phase)
	for _, st := range p.Status.ContainerStatuses {
		if st.Ready {
			ready++
		}
		restarts += st.RestartCount
		if st.State.Waiting != nil && st.State.Waiting.Reason != "" {
			status = st.State.Waiting.Reason
		}
	}
	node := p.Spec.NodeName
	if node == "" {
		node = "<none>"
	}
	gates := "<none>"
	if n := len(p.Spec.ReadinessGates); n > 0 {
		gates = fmt.Sprintf("0/%d", n)
	}
	return []any{p.Name, fmt.Sprintf("%d/%d", ready, len(p.Spec.Containers)), status, fmt.Sprint(restarts), "1h", "", node, "<none>", gates}
}

// triageWorld is Deployment web in shop with 42 ready pods on n1 (one
// with a readiness gate its row says is not met), Deployment web in other
// whose two pods crash, and pod debug of its own on a node that is gone.
func triageWorld() []runtime.Object {
	var objs []runtime.Object
	for _, o := range whyWorld(false) {
		if m, ok := o.(metav1.Object); ok && m.GetNamespace() == "other" {
			continue
		}
		objs = append(objs, o)
		if p, ok := o.(*corev1.Pod); ok && p.Name == "web-1-a" {
			for i := range 40 {
				more := p.DeepCopy()
				more.Name, more.UID = fmt.Sprintf("web-1-more-%d", i), types.UID(fmt.Sprintf("shop-more-%d", i))
				if i == 0 {
					more.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}
					more.Status.Conditions[0].Status = corev1.ConditionFalse
				}
				objs = append(objs, more)
			}
		}
	}
	for _, o := range whyWorld(true) {
		if m, ok := o.(metav1.Object); ok && m.GetNamespace() == "other" {
			objs = append(objs, o)
		}
	}
	return append(objs, &corev1.Pod{ObjectMeta: whyMeta("shop", "debug", "debug"),
		Spec:   corev1.PodSpec{NodeName: "gone", Containers: []corev1.Container{{Name: "debug", Image: "busybox"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}})
}

// TestSessionWhyAllTriage: WhyAll reads the pods its server's table says
// run ready under a controller as metadata and reads the others whole, one
// name at a time, and answers as when it reads every pod whole: with the
// tables read namespace by namespace (the namespaces listed), and in one
// table of every pod where the namespaces cannot be listed. A server whose
// table has not the pod columns has every pod read whole.
func TestSessionWhyAllTriage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		namespaces bool
		// tables are the paths of the pod tables read.
		tables []string
	}{
		// The pods whose rows say they crash are read before the
		// lists end (the ReplicaSets' waits for them here).
		{"namespace by namespace", true, []string{"/api/v1/namespaces/other/pods", "/api/v1/namespaces/shop/pods"}},
		// The names two namespaces share are read again in theirs.
		{"one table", false, []string{"/api/v1/namespaces/other/pods", "/api/v1/namespaces/shop/pods", "/api/v1/pods"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			world := triageWorld()
			if tc.namespaces {
				world = append(world, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}})
			}
			testWhyAllTriage(t, world, tc.tables, tc.namespaces)
		})
	}
}

func testWhyAllTriage(t *testing.T, world []runtime.Object, tables []string, early bool) {
	// crashing are the GETs of the pods whose rows alone say to read them.
	crashing := []string{"/api/v1/namespaces/other/pods/web-1-a", "/api/v1/namespaces/other/pods/web-1-b", "/api/v1/namespaces/shop/pods/web-1-more-0"}
	answer := func(t *testing.T, columns bool, whole bool) (string, []fakeapi.Request) {
		t.Helper()
		srv := fakeapi.New(nil, world...)
		if early && columns && !whole {
			// Triage needs the ReplicaSets before any pod is read after
			// the lists.
			srv.BeforeList = func(req *http.Request) *metav1.Status {
				if req.URL.Path != "/apis/apps/v1/replicasets" {
					return nil
				}
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
					reqs := srv.Requests()
					if !slices.ContainsFunc(crashing, func(path string) bool {
						return !slices.ContainsFunc(reqs, func(r fakeapi.Request) bool { return r.Path == path })
					}) {
						return nil
					}
					if time.Now().After(deadline) {
						t.Errorf("the ReplicaSets' list waited 10 s for the GETs of %q, which never came", crashing)
						return nil
					}
				}
			}
		}
		if columns {
			srv.Columns = map[string][]metav1.TableColumnDefinition{"pods": podTableColumns}
			srv.Cells = podCells
		}
		cfg, _ := relationConfig(t)
		cfg.Namespace, cfg.DefaultNamespace = "", "shop"
		s, _ := newSession(t, srv, cfg)
		doc, err := s.WhyAll(testContext(t), query.WhyOptions{Now: whyNow, WholePods: whole})
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return string(data), srv.Requests()
	}
	// typedPodLists are the typed reads of pods, lists and GETs, as
	// path?resourceVersion (of a GET).
	typedPodLists := func(reqs []fakeapi.Request) []string {
		var out []string
		for _, r := range reqs {
			if !r.Watch && !r.Table && (r.Path == "/api/v1/pods" || strings.Contains(r.Path, "/pods/") || strings.HasSuffix(r.Path, "/pods")) {
				rv := ""
				if strings.Contains(r.Path, "/pods/") {
					rv = r.Query.Get("resourceVersion")
				}
				out = append(out, r.Path+"?"+rv)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}

	whole, wholeReqs := answer(t, true, true)
	if got, want := typedPodLists(wholeReqs), []string{"/api/v1/pods?"}; !slices.Equal(got, want) {
		t.Errorf("read whole: pod lists %q, want %q", got, want)
	}
	triaged, reqs := answer(t, true, false)
	if diff := cmp.Diff(whole, triaged); diff != "" {
		t.Errorf("triaged diagnosis differs from the one of every pod read whole (-whole +triaged):\n%s", diff)
	}
	// The crashing pods, the pod of its own and the pod whose readiness gate
	// is not met; not the 41 that run ready.
	want := []string{"/api/v1/namespaces/other/pods/web-1-a?0", "/api/v1/namespaces/other/pods/web-1-b?0",
		"/api/v1/namespaces/shop/pods/debug?0", "/api/v1/namespaces/shop/pods/web-1-more-0?0"}
	if got := typedPodLists(reqs); !slices.Equal(got, want) {
		t.Errorf("triaged: pod lists %q, want %q", got, want)
	}
	// Each read once: those read early are not read again.
	gets := map[string]int{}
	for _, r := range reqs {
		if strings.Contains(r.Path, "/pods/") {
			if gets[r.Path]++; gets[r.Path] > 1 {
				t.Errorf("triaged: %s read %d times", r.Path, gets[r.Path])
			}
		}
	}
	var read []string
	for _, r := range reqs {
		if r.Table && strings.HasSuffix(r.Path, "/pods") {
			if r.Query.Get("includeObject") != "None" {
				t.Errorf("triaged: table %s read with includeObject=%q, want None", r.Path, r.Query.Get("includeObject"))
			}
			read = append(read, r.Path)
		}
	}
	if slices.Sort(read); !slices.Equal(slices.Compact(read), tables) {
		t.Errorf("triaged: pod tables %q, want %q", read, tables)
	}
	var doc struct {
		Causes []struct{ Reason string } `json:"causes"`
	}
	if err := json.Unmarshal([]byte(triaged), &doc); err != nil || len(doc.Causes) == 0 {
		t.Errorf("triaged: no causes (%v):\n%s", err, triaged)
	}

	noColumns, reqs := answer(t, false, false)
	if diff := cmp.Diff(whole, noColumns); diff != "" {
		t.Errorf("a table without the pod columns: diagnosis differs (-whole +got):\n%s", diff)
	}
	if got, want := typedPodLists(reqs), []string{"/api/v1/pods?"}; !slices.Equal(got, want) {
		t.Errorf("a table without the pod columns: pod lists %q, want %q", got, want)
	}
}

// TestSessionWhyAllTriageTooManyWhole: when more than an eighth of the pods
// would be read whole (here all four), every pod is, in one list.
func TestSessionWhyAllTriageTooManyWhole(t *testing.T) {
	objs := whyWorld(true)
	srv := fakeapi.New(nil, objs...)
	srv.Columns = map[string][]metav1.TableColumnDefinition{"pods": podTableColumns}
	srv.Cells = podCells
	cfg, _ := relationConfig(t)
	cfg.Namespace, cfg.DefaultNamespace = "", "shop"
	s, _ := newSession(t, srv, cfg)
	doc, err := s.WhyAll(testContext(t), query.WhyOptions{Now: whyNow})
	if err != nil {
		t.Fatal(err)
	}
	if got := causeLines(doc); !slices.Contains(got, "CrashLoopBackOff Pod/web-1-a") {
		t.Errorf("causes %q", got)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(r.Path, "/pods/") {
			t.Errorf("a pod read by name: %s", r.Path)
		}
	}
}
