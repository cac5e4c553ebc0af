package feed

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// TestOwnerScopeWithInformers runs the feed as `kubectl idx watch --owner
// deployment/web -o name` does: metadata-only informers for the feed, an
// informer.OwnerResolver for the owners, on client-go's metadata fake, whose writes
// play the garbage collector's.
func TestOwnerScopeWithInformers(t *testing.T) {
	for _, sources := range [][]string{allKinds, podsOnly} {
		t.Run(strings.Join(sources, ","), func(t *testing.T) {
			testOwnerScopeWithInformers(t, sources)
		})
	}
}

var resources = map[string]informer.Resource{
	"Pod":        {GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespaced: true},
	"ReplicaSet": {GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, Namespaced: true},
	"Deployment": {GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespaced: true},
}

// fakeCluster writes metadata objects to the fake with increasing
// resourceVersions.
type fakeCluster struct {
	t      *testing.T
	client *metadatafake.FakeMetadataClient
	mu     sync.Mutex
	rv     int
	objs   map[types.UID]*metav1.PartialObjectMetadata
}

func (c *fakeCluster) write(o *metav1.PartialObjectMetadata, create bool) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	o = o.DeepCopy()
	c.rv++
	o.ResourceVersion = strconv.Itoa(c.rv)
	gvr := resources[o.Kind].GVR
	var err error
	if create {
		err = c.client.Tracker().Create(gvr, o, o.Namespace)
	} else {
		err = c.client.Tracker().Update(gvr, o, o.Namespace)
	}
	if err != nil {
		c.t.Fatalf("writing %s %s: %v", o.Kind, o.Name, err)
	}
	c.objs[o.UID] = o
}

func (c *fakeCluster) update(o *metav1.PartialObjectMetadata, mutate func(*metav1.PartialObjectMetadata)) {
	c.mu.Lock()
	n := c.objs[o.UID].DeepCopy()
	c.mu.Unlock()
	mutate(n)
	c.write(n, false)
}

func (c *fakeCluster) remove(o *metav1.PartialObjectMetadata) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.client.Tracker().Delete(resources[o.Kind].GVR, o.Namespace, o.Name); err != nil {
		c.t.Fatalf("deleting %s %s: %v", o.Kind, o.Name, err)
	}
	delete(c.objs, o.UID)
}

func testOwnerScopeWithInformers(t *testing.T, sources []string) {
	deploy, rs, a, b, objs := deploymentObjects()
	adoptable := object("ReplicaSet", "web-0")
	c0 := object("Pod", "web-0-c", adoptable)
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cluster := &fakeCluster{t: t, client: metadatafake.NewSimpleMetadataClient(scheme), objs: map[types.UID]*metav1.PartialObjectMetadata{}}
	for _, o := range append([]*metav1.PartialObjectMetadata{deploy, adoptable, c0}, objs...) {
		cluster.write(o, true)
	}

	newFactory := func() (*informer.Factory, error) {
		return informer.NewFactoryWithClients(informer.Clients{Metadata: cluster.client}, informer.Config{Namespace: "shop", SyncTimeout: 10 * time.Second}), nil
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, r := range resources {
		mapper.Add(r.GVK, meta.RESTScopeNamespace)
	}
	lookup := informer.NewOwnerResolver(newFactory, mapper)
	lookup.Warn = func(err error) { t.Errorf("warning: %v", err) }
	defer lookup.Shutdown()
	f := New(Config{Scope: AllOf(NameScope{}, NewOwnerScope(deploy.UID, lookup))})

	factory, _ := newFactory()
	defer factory.Shutdown()
	var regs []cache.ResourceEventHandlerRegistration
	for i, kind := range sources {
		inf, err := factory.Informer(resources[kind], informer.MetadataOnly, nil)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := inf.AddEventHandler(f.Handler(i))
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, reg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	factory.Start(ctx)
	if err := factory.WaitForSync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if !cache.WaitForCacheSync(ctx.Done(), r.HasSynced) {
			t.Fatal("handlers did not sync")
		}
	}

	var mu sync.Mutex
	replay := map[types.UID]string{}
	var lines, problems []string
	done := make(chan error, 1)
	go func() {
		done <- f.Run(ctx, func(ev *Event) error {
			mu.Lock()
			defer mu.Unlock()
			m := ev.Object.(*metav1.PartialObjectMetadata)
			line := fmt.Sprintf("%s %s/%s@%s", ev.Type, m.Kind, m.Name, m.ResourceVersion)
			if ev.LeftScope {
				line += " (left)"
			}
			lines = append(lines, line)
			_, present := replay[m.UID]
			if ev.Type == Added && present || ev.Type != Added && !present {
				problems = append(problems, line)
			}
			if ev.Type == Deleted {
				delete(replay, m.UID)
			} else {
				replay[m.UID] = m.ResourceVersion
			}
			return nil
		}, func() error { return nil })
	}()

	// The fake's watches only see writes made after they started.
	watching := func(resource string) int {
		n := 0
		for _, a := range cluster.client.Actions() {
			if a.GetVerb() == "watch" && a.GetResource().Resource == resource {
				n++
			}
		}
		return n
	}
	// expect waits until the replay is the watched objects among want.
	expect := func(when string, want ...*metav1.PartialObjectMetadata) {
		t.Helper()
		wantSet := map[types.UID]string{}
		cluster.mu.Lock()
		for _, o := range want {
			for _, k := range sources {
				if o.Kind == k {
					wantSet[o.UID] = cluster.objs[o.UID].ResourceVersion
				}
			}
		}
		cluster.mu.Unlock()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			diff := cmp.Diff(wantSet, replay)
			got := strings.Join(lines, "\n")
			mu.Unlock()
			if diff == "" {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: replayed feed (-want +got):\n%s\nevents:\n%s", when, diff, got)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	expect("initial state", deploy, rs, a, b)
	for _, r := range []string{"pods", "replicasets"} {
		want := 1
		if r == "replicasets" && len(sources) > 1 {
			// The feed's and the lookup's.
			want = 2
		}
		for watching(r) < want {
			time.Sleep(10 * time.Millisecond)
		}
	}

	// Adoption: web-0 and its unchanged pod enter.
	cluster.update(adoptable, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = []metav1.OwnerReference{refTo(deploy)} })
	expect("after adoption", deploy, rs, a, b, adoptable, c0)
	// Orphaning: web-1 and its unchanged pods leave.
	cluster.update(rs, func(o *metav1.PartialObjectMetadata) { o.OwnerReferences = nil })
	expect("after orphaning", deploy, adoptable, c0)
	// Background deletion: the Deployment, then the ReplicaSet, then its pod,
	// which is still in scope when it starts terminating.
	cluster.remove(deploy)
	cluster.remove(adoptable)
	expect("after the owners' deletion", c0)
	cluster.update(c0, terminating)
	expect("while the pod terminates", c0)
	cluster.remove(c0)
	expect("after the cascade")

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("%s: does not apply to the replayed state", p)
	}
	var leftScope int
	for _, l := range lines {
		if strings.HasSuffix(l, "(left)") {
			leftScope++
		}
	}
	want := 2
	if len(sources) > 1 {
		want++
	}
	if leftScope != want {
		t.Errorf("%d events left the scope, want the ReplicaSet (when watched) and its two pods:\n%s", leftScope, strings.Join(lines, "\n"))
	}
}
