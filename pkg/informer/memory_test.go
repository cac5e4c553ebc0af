package informer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/realistic"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// realisticPods returns n realistic pods (internal/testing/realistic), each
// at resourceVersion 7.
func realisticPods(t testing.TB, n int) []corev1.Pod {
	t.Helper()
	pods := realistic.Pods(t, n)
	for i := range pods {
		pods[i].ResourceVersion = "7"
	}
	return pods
}

// podServer is an API server of pods for memory and sharing tests: its
// LISTs are protobuf, as the API server's to kubectl-idx's clients, paged
// by limit= with the count of what is left; its watch-lists
// (sendInitialEvents) stream the pods as JSON events and end them with the
// bookmark; its other watches stay open and carry what send sends to those
// of whole pods.
type podServer struct {
	pods []corev1.Pod

	mu        sync.Mutex
	watchList int
	watches   []chan []byte
}

func newPodServer(t testing.TB, pods []corev1.Pod) (*podServer, *rest.Config) {
	p := &podServer{pods: pods}
	return p, serveTest(t, p.serve)
}

func (p *podServer) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	metadata := strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadata")
	if q.Get("watch") == "true" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		enc := json.NewEncoder(w)
		if q.Get("sendInitialEvents") == "true" {
			p.mu.Lock()
			p.watchList++
			p.mu.Unlock()
			for i := range p.pods {
				_ = enc.Encode(map[string]any{"type": "ADDED", "object": p.object(&p.pods[i], metadata)})
			}
			end := metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{
				ResourceVersion: "7", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
			if metadata {
				end.TypeMeta = metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}
			}
			_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": end})
		}
		w.(http.Flusher).Flush()
		events := make(chan []byte, 16)
		if !metadata {
			p.mu.Lock()
			p.watches = append(p.watches, events)
			p.mu.Unlock()
		}
		for {
			select {
			case <-r.Context().Done():
				return
			case ev := <-events:
				_, _ = w.Write(ev)
				w.(http.Flusher).Flush()
			}
		}
	}
	from := 0
	if c := q.Get("continue"); c != "" {
		if _, err := fmt.Sscanf(c, "o%d", &from); err != nil {
			http.Error(w, "bad continue token", http.StatusBadRequest)
			return
		}
	}
	to := len(p.pods)
	if limit, _ := strconv.Atoi(q.Get("limit")); limit > 0 {
		to = min(to, from+limit)
	}
	lm := metav1.ListMeta{ResourceVersion: "7"}
	if to < len(p.pods) {
		lm.Continue = fmt.Sprintf("o%d", to)
		left := int64(len(p.pods) - to)
		lm.RemainingItemCount = &left
	}
	var body []byte
	var err error
	if metadata {
		list := &metav1.PartialObjectMetadataList{ListMeta: lm}
		for i := from; i < to; i++ {
			list.Items = append(list.Items, metav1.PartialObjectMetadata{ObjectMeta: p.pods[i].ObjectMeta})
		}
		body, err = protobufAnswer("meta.k8s.io/v1", "PartialObjectMetadataList", list)
	} else {
		body, err = protobufAnswer("v1", "PodList", &corev1.PodList{ListMeta: lm, Items: p.pods[from:to]})
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/vnd.kubernetes.protobuf")
	_, _ = w.Write(body)
}

// object is pod as an event carries it: whole or its metadata.
func (p *podServer) object(pod *corev1.Pod, metadata bool) any {
	if metadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: pod.ObjectMeta}
	}
	c := pod.DeepCopy()
	c.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	return c
}

// send sends an event of pod to the open watches of whole pods.
func (p *podServer) send(t testing.TB, typ string, pod *corev1.Pod) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "object": p.object(pod, false)})
	if err != nil {
		t.Fatal(err)
	}
	// The reflector opens its watch once its list is in the store.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		p.mu.Lock()
		open := len(p.watches)
		p.mu.Unlock()
		if open > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no watch of whole pods is open")
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.watches {
		w <- append(b, '\n')
	}
}

func (p *podServer) watchLists() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watchList
}

// listPaths are the ways a factory reads a list: the small page then the
// rest unpaged (the default, for what fits the budget), a watch-list (for
// what does not), and pages (budget off).
var listPaths = []struct {
	name string
	cfg  informer.Config
}{
	{"unpaged", informer.Config{WatchListStall: -1}},
	{"watch-list", informer.Config{UnpagedBudget: 1, WatchListStall: 30 * time.Second}},
	{"pages", informer.Config{UnpagedBudget: -1, PageSize: 250}},
}

// syncedInformer returns the synced informer of pods in mode of a factory
// of cfg over rc.
func syncedInformer(t testing.TB, rc *rest.Config, cfg informer.Config, mode informer.Mode) (*informer.Factory, cache.SharedIndexInformer) {
	t.Helper()
	cfg.SyncTimeout = time.Minute
	f, err := informer.NewFactory(rc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	inf, err := f.Informer(podsRes, mode, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f.Start(context.Background())
	if err := f.WaitForSync(ctx); err != nil {
		f.Shutdown()
		t.Fatal(err)
	}
	return f, inf
}

// byKey returns the objects of inf's store by key.
func byKey(inf cache.SharedIndexInformer) map[string]runtime.Object {
	out := map[string]runtime.Object{}
	for _, obj := range inf.GetStore().List() {
		m, _ := meta.Accessor(obj)
		out[m.GetNamespace()+"/"+m.GetName()] = obj.(runtime.Object)
	}
	return out
}

// TestSharedObjectsEqualUnsharedOnes: whatever the way of listing and the
// mode, the objects a factory with a Sharer keeps are, field for field,
// those a factory without one keeps, and the pods of one template share
// their parts (in every mode but the summaries', which keep nothing of
// their containers).
func TestSharedObjectsEqualUnsharedOnes(t *testing.T) {
	pods := realisticPods(t, 300)
	for _, path := range listPaths {
		for _, mode := range []informer.Mode{informer.Full, informer.MetadataOnly, informer.Summary} {
			t.Run(path.name+"/"+mode.String(), func(t *testing.T) {
				srv, rc := newPodServer(t, pods)
				plain, plainInf := syncedInformer(t, rc, path.cfg, mode)
				defer plain.Shutdown()
				cfg := path.cfg
				cfg.Sharer = informer.NewSharer()
				shared, sharedInf := syncedInformer(t, rc, cfg, mode)
				defer shared.Shutdown()
				if path.name == "watch-list" && srv.watchLists() != 2 {
					t.Fatalf("%d watch-lists, want one per factory", srv.watchLists())
				}
				want, got := byKey(plainInf), byKey(sharedInf)
				if len(got) != len(pods) || len(want) != len(pods) {
					t.Fatalf("%d shared and %d unshared objects, want %d", len(got), len(want), len(pods))
				}
				for k, w := range want {
					if !reflect.DeepEqual(got[k], w) {
						t.Fatalf("%s differs once shared:\n got %+v\nwant %+v", k, got[k], w)
					}
				}
				// Pods 0-2 are of the first ReplicaSet.
				a, b := got["payments-prod/app0000-api-h000000000-00001"], got["payments-prod/app0000-api-h000000000-00002"]
				ma, _ := meta.Accessor(a)
				mb, _ := meta.Accessor(b)
				if !same(ma.GetLabels(), mb.GetLabels()) || !same(ma.GetOwnerReferences(), mb.GetOwnerReferences()) {
					t.Error("two pods of one ReplicaSet have labels and owner references of their own")
				}
				if pa, ok := a.(*corev1.Pod); ok && mode == informer.Full {
					pb := b.(*corev1.Pod)
					if !same(pa.Spec.Containers[0].Env, pb.Spec.Containers[0].Env) || !same(pa.Spec.Affinity, pb.Spec.Affinity) {
						t.Error("two pods of one ReplicaSet have containers' environment and affinity of their own")
					}
				}
				// Nothing is shared without a Sharer.
				pa, _ := meta.Accessor(want["payments-prod/app0000-api-h000000000-00001"])
				pb, _ := meta.Accessor(want["payments-prod/app0000-api-h000000000-00002"])
				if same(pa.GetLabels(), pb.GetLabels()) {
					t.Error("a factory without a Sharer shares labels")
				}
			})
		}
	}
}

// TestSharedObjectsAfterUpdates: a watch's new version of a pod, whose
// template changed, replaces that pod alone: the pods it shared parts with
// keep theirs, and a pod added later shares with those listed.
func TestSharedObjectsAfterUpdates(t *testing.T) {
	pods := realisticPods(t, 10)
	srv, rc := newPodServer(t, pods)
	cfg := informer.Config{Sharer: informer.NewSharer()}
	f, inf := syncedInformer(t, rc, cfg, informer.Full)
	defer f.Shutdown()
	before := byKey(inf)
	wantOthers := map[string]runtime.Object{}
	for k, obj := range before {
		wantOthers[k] = obj.DeepCopyObject()
	}
	changed := pods[1].DeepCopy()
	changed.ResourceVersion = "8"
	changed.Labels["app"] = "changed"
	changed.Spec.Containers[0].Env[5].Value = "changed"
	changed.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight = 1
	srv.send(t, "MODIFIED", changed)
	added := pods[2].DeepCopy()
	added.Name, added.UID, added.ResourceVersion = "app0000-api-h000000000-new", "new-uid", "9"
	srv.send(t, "ADDED", added)
	key := func(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }
	deadline := time.Now().Add(30 * time.Second)
	for {
		obj, ok, _ := inf.GetStore().GetByKey(key(added))
		if ok {
			got := obj.(*corev1.Pod)
			first := before[key(&pods[0])].(*corev1.Pod)
			if !same(got.Labels, first.Labels) || !same(got.Spec.Containers[0].Env, first.Spec.Containers[0].Env) {
				t.Error("a pod a watch added does not share its template's parts with the pods listed before")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the added pod never reached the store")
		}
		time.Sleep(5 * time.Millisecond)
	}
	obj, _, _ := inf.GetStore().GetByKey(key(&pods[1]))
	got := obj.(*corev1.Pod)
	if got.Labels["app"] != "changed" || got.Spec.Containers[0].Env[5].Value != "changed" || got.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].Weight != 1 {
		t.Errorf("the changed pod is not as changed: labels %v", got.Labels)
	}
	for k, want := range wantOthers {
		if k == key(&pods[1]) {
			continue
		}
		if obj, _, _ := inf.GetStore().GetByKey(k); !reflect.DeepEqual(obj, want) {
			t.Errorf("%s changed when another pod of its ReplicaSet did", k)
		}
		// The objects listed, which questions may still hold, are as
		// they were too.
		if !reflect.DeepEqual(before[k], want) {
			t.Errorf("the listed %s changed when another pod of its ReplicaSet did", k)
		}
	}
	if !reflect.DeepEqual(before[key(&pods[1])], wantOthers[key(&pods[1])]) {
		t.Error("the version of the changed pod a question may still hold changed")
	}
}

// TestSharedObjectsKeepTheMutationDetectorQuiet runs the listing and the
// updates of shared pods again with client-go's cache mutation detector
// (KUBE_CACHE_MUTATION_DETECTOR=true, as the e2e tests run), in a process of
// its own since the detector is chosen as the process starts: it compares
// every object the stores took with a copy of it every second and panics
// when one changed. A control run that changes a shared part of a stored
// pod shows it is watching.
func TestSharedObjectsKeepTheMutationDetectorQuiet(t *testing.T) {
	if os.Getenv("KUBE_CACHE_MUTATION_DETECTOR") == "true" {
		pods := realisticPods(t, 50)
		for _, path := range listPaths {
			srv, rc := newPodServer(t, pods)
			cfg := path.cfg
			cfg.Sharer = informer.NewSharer()
			f, inf := syncedInformer(t, rc, cfg, informer.Full)
			changed := pods[1].DeepCopy()
			changed.ResourceVersion = "8"
			changed.Labels["app"] = "changed"
			srv.send(t, "MODIFIED", changed)
			if os.Getenv("SHARE_TEST_MUTATE") == "true" {
				obj, _, _ := inf.GetStore().GetByKey("payments-prod/" + pods[0].Name)
				obj.(*corev1.Pod).Spec.Containers[0].Env[5].Value = "mutated"
			}
			// The detector compares every second.
			time.Sleep(2500 * time.Millisecond)
			f.Shutdown()
		}
		return
	}
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	run := func(mutate bool) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSharedObjectsKeepTheMutationDetectorQuiet$", "-test.count=1")
		cmd.Env = append(os.Environ(), "KUBE_CACHE_MUTATION_DETECTOR=true", "SHARE_TEST_MUTATE="+strconv.FormatBool(mutate))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	if out, err := run(false); err != nil {
		t.Fatalf("with the mutation detector: %v\n%s", err, out)
	}
	if out, err := run(true); err == nil || !strings.Contains(out, "cache *v1.Pod modified") {
		t.Errorf("a shared part changed in a store went unnoticed by the mutation detector (%v):\n%s", err, out)
	}
}

// heapBytes returns the bytes of the heap's live objects.
func heapBytes() uint64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestWarmMemoryPerThousandRealisticPods measures the Go heap an informer's
// store of realistic pods holds (realisticPods: the bench's pod, in
// ReplicaSets of the bench's sizes), listed as a warm cache lists it
// (protobuf, managedFields dropped before decoding, unpaged), with and
// without a Sharer, in the modes a warm cache keeps; and requires sharing
// to save a third of a whole pod at least. -v prints the figures.
func TestWarmMemoryPerThousandRealisticPods(t *testing.T) {
	if testing.Short() {
		t.Skip("lists 4,000 realistic pods twelve times")
	}
	if os.Getenv("KUBE_CACHE_MUTATION_DETECTOR") == "true" {
		t.Skip("the cache mutation detector keeps a copy of every object, unshared")
	}
	const n = 4000
	pods := realisticPods(t, n)
	_, rc := newPodServer(t, pods)
	measure := func(mode informer.Mode, sharer bool) float64 {
		cfg := informer.Config{WatchListStall: -1}
		before := heapBytes()
		if sharer {
			cfg.Sharer = informer.NewSharer()
		}
		f, inf := syncedInformer(t, rc, cfg, mode)
		after := heapBytes()
		if got := len(inf.GetStore().ListKeys()); got != n {
			t.Fatalf("%d pods in the store, want %d", got, n)
		}
		goruntime.KeepAlive(cfg.Sharer)
		f.Shutdown()
		return float64(after-before) / n * 1000
	}
	figures := map[informer.Mode][2]float64{}
	for _, mode := range []informer.Mode{informer.Full, informer.Summary, informer.MetadataOnly} {
		// Twice each, the lower kept: a collection may find garbage of the
		// test's own.
		var fig [2]float64
		for i, sharer := range []bool{false, true} {
			fig[i] = min(measure(mode, sharer), measure(mode, sharer))
		}
		figures[mode] = fig
		t.Logf("%-8s %6.2f MB per 1000 realistic pods unshared, %6.2f MB shared (%.0f%%)", mode, fig[0]/1e6, fig[1]/1e6, 100*fig[1]/fig[0])
	}
	if full := figures[informer.Full]; full[1] > full[0]*2/3 {
		t.Errorf("shared, whole pods take %.2f MB per 1000, unshared %.2f MB: want a third less at least", full[1]/1e6, full[0]/1e6)
	}
	for mode, fig := range figures {
		if fig[1] > fig[0] {
			t.Errorf("shared, %s pods take more (%.2f MB per 1000) than unshared (%.2f MB)", mode, fig[1]/1e6, fig[0]/1e6)
		}
	}
}

// BenchmarkShareRealisticPod is the time a Sharer adds to the decoding of
// each realistic pod a list brings (managedFields dropped before decoding,
// as NewFactory's clients drop them).
func BenchmarkShareRealisticPod(b *testing.B) {
	pods := realisticPods(b, 1000)
	raw := make([][]byte, len(pods))
	for i := range pods {
		p := pods[i].DeepCopy()
		p.ManagedFields = nil
		var err error
		if raw[i], err = p.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
	for _, share := range []bool{false, true} {
		name := "decode"
		if share {
			name = "decode+share"
		}
		b.Run(name, func(b *testing.B) {
			s := informer.NewSharer()
			i := 0
			for b.Loop() {
				var p corev1.Pod
				if err := p.Unmarshal(raw[i%len(raw)]); err != nil {
					b.Fatal(err)
				}
				if share {
					s.Share(&p)
				}
				i++
			}
		})
	}
}
