package index

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// fakeLookup is an in-memory OwnerLookup: owners by kind, as metadata-only
// informers would hold them, and a record of what ResolveOwners asked.
type fakeLookup struct {
	// objs are the owners that exist, by kind.
	objs map[schema.GroupKind][]*metav1.PartialObjectMetadata
	// clusterScoped kinds answer Namespaced with false.
	clusterScoped map[schema.GroupKind]bool
	// prepareErrs are returned by Prepare for these kinds; a kind that is
	// neither in objs nor in known is unknown to the "server".
	prepareErrs map[schema.GroupKind]error
	known       map[schema.GroupKind]bool
	// getErrs are returned by Get for these UIDs.
	getErrs map[types.UID]error
	// onPrepare runs at the start of every Prepare call.
	onPrepare func()

	mu       sync.Mutex
	prepares [][]schema.GroupVersionKind
	prepared map[schema.GroupKind]bool
	gets     map[types.UID]int
}

func newFakeLookup(objs ...*metav1.PartialObjectMetadata) *fakeLookup {
	l := &fakeLookup{
		objs:          map[schema.GroupKind][]*metav1.PartialObjectMetadata{},
		clusterScoped: map[schema.GroupKind]bool{{Kind: "Node"}: true},
		prepareErrs:   map[schema.GroupKind]error{},
		known:         map[schema.GroupKind]bool{},
		getErrs:       map[types.UID]error{},
		prepared:      map[schema.GroupKind]bool{},
		gets:          map[types.UID]int{},
	}
	for _, o := range objs {
		gk := o.GroupVersionKind().GroupKind()
		l.objs[gk] = append(l.objs[gk], o)
	}
	return l
}

func (l *fakeLookup) Prepare(_ context.Context, kinds []schema.GroupVersionKind) map[schema.GroupKind]error {
	if l.onPrepare != nil {
		l.onPrepare()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prepares = append(l.prepares, slices.Clone(kinds))
	errs := map[schema.GroupKind]error{}
	for _, gvk := range kinds {
		gk := gvk.GroupKind()
		switch {
		case l.prepareErrs[gk] != nil:
			errs[gk] = l.prepareErrs[gk]
		case l.objs[gk] == nil && !l.known[gk]:
			errs[gk] = fmt.Errorf("the server doesn't have a resource type for kind %s", gk)
		default:
			l.prepared[gk] = true
		}
	}
	return errs
}

func (l *fakeLookup) Get(gk schema.GroupKind, ref OwnerRef) (metav1.Object, error) {
	uid := ref.UID
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gets[uid]++
	if !l.prepared[gk] {
		return nil, fmt.Errorf("Get(%s, %s) before Prepare", gk, uid)
	}
	if err := l.getErrs[uid]; err != nil {
		return nil, err
	}
	for _, o := range l.objs[gk] {
		if o.UID == uid {
			return o, nil
		}
	}
	return nil, nil
}

func (l *fakeLookup) Namespaced(gk schema.GroupKind) bool { return !l.clusterScoped[gk] }

// prepareCalls returns the kinds of each Prepare call as "Kind.group" strings.
func (l *fakeLookup) prepareCalls() [][]string {
	var out [][]string
	for _, call := range l.prepares {
		var kinds []string
		for _, gvk := range call {
			kinds = append(kinds, gvk.GroupVersion().String()+" "+gvk.Kind)
		}
		slices.Sort(kinds)
		out = append(out, kinds)
	}
	return out
}

// owner is an owner object as a metadata-only informer holds it; parents are
// its ownerReferences.
func owner(apiVersion, kind, namespace, name string, parents ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.APIVersion, m.Kind = apiVersion, kind
	m.Namespace, m.Name = namespace, name
	m.UID = uidOf(kind, namespace, name)
	m.OwnerReferences = parents
	return m
}

func uidOf(kind, namespace, name string) types.UID {
	return types.UID(strings.ToLower(kind) + "-" + namespace + "-" + name)
}

// ctrlOf is the controller reference to o; refOf a plain reference.
func ctrlOf(o *metav1.PartialObjectMetadata) metav1.OwnerReference {
	r := refOf(o)
	r.Controller = ptr.To(true)
	return r
}

func refOf(o *metav1.PartialObjectMetadata) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: o.UID}
}

// topOf is the OwnerRef a resolution names for o.
func topOf(o *metav1.PartialObjectMetadata) OwnerRef {
	return OwnerRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: o.UID}
}

// directRef is the reference a member in namespace holds to o, as the command
// layer passes it to ResolveOwners.
func directRef(o *metav1.PartialObjectMetadata, namespace string) OwnerRef {
	return RefFromOwnerReference(ctrlOf(o), namespace)
}

// resolveWithin runs ResolveOwners and fails the test if it does not return
// within a few seconds (a cycle that loops would hang the test run instead).
func resolveWithin(t *testing.T, ctx context.Context, l OwnerLookup, refs []OwnerRef) (map[types.UID]Resolution, error) {
	t.Helper()
	type result struct {
		res map[types.UID]Resolution
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := ResolveOwners(ctx, l, refs)
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("ResolveOwners did not return within 10s")
		return nil, nil
	}
}

func TestResolveOwners(t *testing.T) {
	deploy := owner("apps/v1", "Deployment", "shop", "web")
	rs := owner("apps/v1", "ReplicaSet", "shop", "web-5d4", ctrlOf(deploy))
	rsOld := owner("apps/v1", "ReplicaSet", "shop", "web-4c3", ctrlOf(deploy))
	bareRS := owner("apps/v1", "ReplicaSet", "shop", "bare")
	cron := owner("batch/v1", "CronJob", "ops", "db-backup")
	job := owner("batch/v1", "Job", "ops", "db-backup-2900", ctrlOf(cron))
	rollout := owner("example.com/v1alpha1", "Rollout", "rollouts", "canary")
	rolloutRS := owner("apps/v1", "ReplicaSet", "rollouts", "canary-7f9", ctrlOf(rollout))
	node := owner("v1", "Node", "", "worker-1")
	goneRS := owner("apps/v1", "ReplicaSet", "shop", "gone")
	goneDeploy := owner("apps/v1", "Deployment", "shop", "gone")
	orphanRS := owner("apps/v1", "ReplicaSet", "shop", "orphan", ctrlOf(goneDeploy))
	widget := owner("widgets.example.com/v1", "Widget", "shop", "w")
	// Only controller references lead upwards: a plain reference to a
	// Deployment is not followed, and of two references the controller wins.
	adoptedRS := owner("apps/v1", "ReplicaSet", "shop", "adopted", refOf(deploy))
	mixedRS := owner("apps/v1", "ReplicaSet", "shop", "mixed", refOf(goneDeploy), ctrlOf(deploy))

	exists := []*metav1.PartialObjectMetadata{deploy, rs, rsOld, bareRS, cron, job, rollout, rolloutRS, node, orphanRS, adoptedRS, mixedRS}

	// What a dangling or unknown direct reference resolves to: the reference
	// itself, in the member's namespace.
	danglingTop := topOf(goneRS)
	nodeTop := topOf(node) // cluster-scoped: no namespace, whatever the member's

	tests := []struct {
		name string
		refs []OwnerRef
		// setup adjusts the lookup.
		setup func(l *fakeLookup)
		want  map[types.UID]Resolution
		// wantPrepares lists each Prepare call's kinds ("group/version Kind").
		wantPrepares [][]string
	}{
		{
			name: "Deployment, ReplicaSet, Pod",
			refs: []OwnerRef{directRef(rs, "shop")},
			want: map[types.UID]Resolution{
				rs.UID: {Top: topOf(deploy), Chain: []OwnerRef{topOf(rs), topOf(deploy)}},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}, {"apps/v1 Deployment"}},
		},
		{
			name: "two ReplicaSets of one Deployment walk the Deployment once",
			refs: []OwnerRef{directRef(rs, "shop"), directRef(rsOld, "shop"), directRef(rs, "shop")},
			want: map[types.UID]Resolution{
				rs.UID:    {Top: topOf(deploy), Chain: []OwnerRef{topOf(rs), topOf(deploy)}},
				rsOld.UID: {Top: topOf(deploy), Chain: []OwnerRef{topOf(rsOld), topOf(deploy)}},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}, {"apps/v1 Deployment"}},
		},
		{
			name: "a kind already prepared is not prepared again at the next level",
			// rs,deploy --by-owner: a Deployment is a direct owner (of a
			// ReplicaSet) and a second-level owner (of a pod's ReplicaSet).
			refs: []OwnerRef{directRef(deploy, "shop"), directRef(rs, "shop")},
			want: map[types.UID]Resolution{
				deploy.UID: {Top: topOf(deploy), Chain: []OwnerRef{topOf(deploy)}},
				rs.UID:     {Top: topOf(deploy), Chain: []OwnerRef{topOf(rs), topOf(deploy)}},
			},
			wantPrepares: [][]string{{"apps/v1 Deployment", "apps/v1 ReplicaSet"}},
		},
		{
			name: "CronJob, Job, Pod",
			refs: []OwnerRef{directRef(job, "ops")},
			want: map[types.UID]Resolution{
				job.UID: {Top: topOf(cron), Chain: []OwnerRef{topOf(job), topOf(cron)}},
			},
			wantPrepares: [][]string{{"batch/v1 Job"}, {"batch/v1 CronJob"}},
		},
		{
			name: "a custom resource owning a ReplicaSet",
			refs: []OwnerRef{directRef(rolloutRS, "rollouts")},
			want: map[types.UID]Resolution{
				rolloutRS.UID: {Top: topOf(rollout), Chain: []OwnerRef{topOf(rolloutRS), topOf(rollout)}},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}, {"example.com/v1alpha1 Rollout"}},
		},
		{
			name: "a cluster-scoped owner has no namespace",
			refs: []OwnerRef{directRef(node, "kube-system")},
			want: map[types.UID]Resolution{
				node.UID: {Top: nodeTop, Chain: []OwnerRef{nodeTop}},
			},
			wantPrepares: [][]string{{"v1 Node"}},
		},
		{
			name: "a dangling cluster-scoped owner has no namespace either",
			refs: []OwnerRef{directRef(owner("v1", "Node", "", "gone-node"), "kube-system")},
			want: map[types.UID]Resolution{
				uidOf("Node", "", "gone-node"): {
					Top:      topOf(owner("v1", "Node", "", "gone-node")),
					Chain:    []OwnerRef{topOf(owner("v1", "Node", "", "gone-node"))},
					Dangling: true, Reason: "owner not found",
				},
			},
			wantPrepares: [][]string{{"v1 Node"}},
		},
		{
			name: "a direct owner that does not exist is dangling",
			refs: []OwnerRef{directRef(goneRS, "shop")},
			want: map[types.UID]Resolution{
				goneRS.UID: {Top: danglingTop, Chain: []OwnerRef{danglingTop}, Dangling: true, Reason: "owner not found"},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}},
		},
		{
			name: "an owner further up that does not exist is dangling",
			refs: []OwnerRef{directRef(orphanRS, "shop")},
			want: map[types.UID]Resolution{
				orphanRS.UID: {Top: topOf(goneDeploy), Chain: []OwnerRef{topOf(orphanRS), topOf(goneDeploy)}, Dangling: true, Reason: "owner not found"},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}, {"apps/v1 Deployment"}},
		},
		{
			name: "an owner kind the server does not know is unknown",
			refs: []OwnerRef{directRef(widget, "shop"), directRef(rs, "shop")},
			setup: func(l *fakeLookup) {
				l.objs[widget.GroupVersionKind().GroupKind()] = nil
			},
			want: map[types.UID]Resolution{
				widget.UID: {
					Top: topOf(widget), Chain: []OwnerRef{topOf(widget)},
					Unknown: true, Reason: "the server doesn't have a resource type for kind Widget.widgets.example.com",
				},
				rs.UID: {Top: topOf(deploy), Chain: []OwnerRef{topOf(rs), topOf(deploy)}},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet", "widgets.example.com/v1 Widget"}, {"apps/v1 Deployment"}},
		},
		{
			name: "an owner kind the user may not list stops the walk there",
			refs: []OwnerRef{directRef(rs, "shop")},
			setup: func(l *fakeLookup) {
				l.prepareErrs[schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}] = errors.New(`replicasets.apps is forbidden`)
			},
			want: map[types.UID]Resolution{
				rs.UID: {Top: topOf(rs), Chain: []OwnerRef{topOf(rs)}, Unknown: true, Reason: "replicasets.apps is forbidden"},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}},
		},
		{
			name: "a second-level kind the user may not list",
			refs: []OwnerRef{directRef(rs, "shop")},
			setup: func(l *fakeLookup) {
				l.prepareErrs[schema.GroupKind{Group: "apps", Kind: "Deployment"}] = errors.New(`deployments.apps is forbidden`)
			},
			want: map[types.UID]Resolution{
				rs.UID: {Top: topOf(deploy), Chain: []OwnerRef{topOf(rs), topOf(deploy)}, Unknown: true, Reason: "deployments.apps is forbidden"},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}, {"apps/v1 Deployment"}},
		},
		{
			name: "a failed Get is unknown with its error",
			refs: []OwnerRef{directRef(rs, "shop")},
			setup: func(l *fakeLookup) {
				l.getErrs[deploy.UID] = errors.New("index broken")
			},
			want: map[types.UID]Resolution{
				rs.UID: {Top: topOf(deploy), Chain: []OwnerRef{topOf(rs), topOf(deploy)}, Unknown: true, Reason: "index broken"},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}, {"apps/v1 Deployment"}},
		},
		{
			name: "an owner without a controller is the top",
			refs: []OwnerRef{directRef(bareRS, "shop")},
			want: map[types.UID]Resolution{
				bareRS.UID: {Top: topOf(bareRS), Chain: []OwnerRef{topOf(bareRS)}},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}},
		},
		{
			name: "a plain owner reference is not followed",
			refs: []OwnerRef{directRef(adoptedRS, "shop")},
			want: map[types.UID]Resolution{
				adoptedRS.UID: {Top: topOf(adoptedRS), Chain: []OwnerRef{topOf(adoptedRS)}},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}},
		},
		{
			name: "of a plain and a controller reference, the controller is followed",
			refs: []OwnerRef{directRef(mixedRS, "shop")},
			want: map[types.UID]Resolution{
				mixedRS.UID: {Top: topOf(deploy), Chain: []OwnerRef{topOf(mixedRS), topOf(deploy)}},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}, {"apps/v1 Deployment"}},
		},
		{
			name: "the direct owner's name and namespace come from the object, not the reference",
			// A reference's name is informational; the UID is what counts.
			refs: []OwnerRef{{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "stale-name", UID: rs.UID}},
			want: map[types.UID]Resolution{
				rs.UID: {Top: topOf(deploy), Chain: []OwnerRef{topOf(rs), topOf(deploy)}},
			},
			wantPrepares: [][]string{{"apps/v1 ReplicaSet"}, {"apps/v1 Deployment"}},
		},
		{
			name: "no references",
			refs: nil,
			want: map[types.UID]Resolution{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newFakeLookup(exists...)
			if tc.setup != nil {
				tc.setup(l)
			}
			before := make([]*metav1.PartialObjectMetadata, len(exists))
			for i, o := range exists {
				before[i] = o.DeepCopy()
			}
			got, err := resolveWithin(t, context.Background(), l, tc.refs)
			if err != nil {
				t.Fatalf("ResolveOwners: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("resolutions:\n%s\nwant:\n%s", fmtResolutions(got), fmtResolutions(tc.want))
			}
			if calls := l.prepareCalls(); !reflect.DeepEqual(calls, tc.wantPrepares) {
				t.Errorf("Prepare calls = %q, want %q (one per level, each kind once)", calls, tc.wantPrepares)
			}
			for uid, n := range l.gets {
				if n != 1 {
					t.Errorf("Get(%s) called %d times, want once", uid, n)
				}
			}
			for i, o := range exists {
				if !reflect.DeepEqual(o, before[i]) {
					t.Errorf("ResolveOwners changed owner %s/%s", o.Kind, o.Name)
				}
			}
		})
	}
}

func fmtResolutions(m map[types.UID]Resolution) string {
	var keys []string
	for uid := range m {
		keys = append(keys, string(uid))
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %+v\n", k, m[types.UID(k)])
	}
	return b.String()
}

// TestResolveOwnersManyMembers: however many members share owners, each level
// is one Prepare call and each owner one Get.
func TestResolveOwnersManyMembers(t *testing.T) {
	var objs []*metav1.PartialObjectMetadata
	var refs []OwnerRef
	for d := range 20 {
		deploy := owner("apps/v1", "Deployment", "shop", fmt.Sprintf("app-%d", d))
		objs = append(objs, deploy)
		for r := range 3 {
			rs := owner("apps/v1", "ReplicaSet", "shop", fmt.Sprintf("app-%d-%d", d, r), ctrlOf(deploy))
			objs = append(objs, rs)
			// Every pod of the ReplicaSet holds the same reference; the
			// command layer passes one per owner UID, but duplicates are
			// harmless.
			for range 5 {
				refs = append(refs, directRef(rs, "shop"))
			}
		}
	}
	l := newFakeLookup(objs...)
	got, err := resolveWithin(t, context.Background(), l, refs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 {
		t.Errorf("%d resolutions, want one per ReplicaSet (60)", len(got))
	}
	for _, r := range refs {
		res := got[r.UID]
		if res.Top.Kind != "Deployment" || !strings.HasPrefix(r.Name, res.Top.Name+"-") || len(res.Chain) != 2 {
			t.Errorf("%s resolved to %+v", r.Name, res)
		}
	}
	if calls := l.prepareCalls(); len(calls) != 2 {
		t.Errorf("Prepare called %d times, want 2 (one per level): %q", len(calls), calls)
	}
	if len(l.gets) != 80 {
		t.Errorf("Get asked for %d owners, want 80 (60 ReplicaSets, 20 Deployments)", len(l.gets))
	}
	for uid, n := range l.gets {
		if n != 1 {
			t.Errorf("Get(%s) called %d times, want once", uid, n)
		}
	}
}

// TestResolveOwnersCycle: the API server does not prevent controller
// references from forming a cycle; the walk must end and say so.
func TestResolveOwnersCycle(t *testing.T) {
	a := owner("apps/v1", "ReplicaSet", "shop", "a")
	b := owner("apps/v1", "Deployment", "shop", "b", ctrlOf(a))
	a.OwnerReferences = []metav1.OwnerReference{ctrlOf(b)}
	self := owner("example.com/v1", "Loop", "shop", "self")
	self.OwnerReferences = []metav1.OwnerReference{ctrlOf(self)}

	l := newFakeLookup(a, b, self)
	got, err := resolveWithin(t, context.Background(), l, []OwnerRef{directRef(a, "shop"), directRef(self, "shop")})
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range []types.UID{a.UID, self.UID} {
		res, ok := got[uid]
		if !ok {
			t.Errorf("no resolution for %s", uid)
			continue
		}
		if !res.Unknown || !strings.Contains(res.Reason, "cycle") || res.Dangling {
			t.Errorf("%s resolved to %+v, want unknown because of a cycle", uid, res)
		}
	}
	if calls := l.prepareCalls(); len(calls) > 2 {
		t.Errorf("Prepare called %d times for a two-kind cycle: %q", len(calls), calls)
	}
}

// TestResolveOwnersTooDeep: a chain longer than MaxOwnerDepth ends the walk;
// the owner it stopped at was never looked up, so it must not be reported as
// missing (dangling) but as unknown.
func TestResolveOwnersTooDeep(t *testing.T) {
	const n = MaxOwnerDepth + 4
	objs := make([]*metav1.PartialObjectMetadata, n)
	objs[n-1] = owner("example.com/v1", "Link", "shop", fmt.Sprintf("link-%02d", n-1))
	for i := n - 2; i >= 0; i-- {
		objs[i] = owner("example.com/v1", "Link", "shop", fmt.Sprintf("link-%02d", i), ctrlOf(objs[i+1]))
	}
	l := newFakeLookup(objs...)
	got, err := resolveWithin(t, context.Background(), l, []OwnerRef{directRef(objs[0], "shop")})
	if err != nil {
		t.Fatal(err)
	}
	res := got[objs[0].UID]
	if res.Dangling {
		t.Errorf("a chain of %d owners, all existing, resolved to a dangling owner: %+v", n, res.Top)
	}
	if !res.Unknown || res.Reason == "" {
		t.Errorf("a chain of %d owners resolved to top %s (unknown=%v, reason %q), want unknown with a reason (chain too deep)", n, res.Top.Name, res.Unknown, res.Reason)
	}
	if calls := len(l.prepares); calls > MaxOwnerDepth {
		t.Errorf("Prepare called %d times, more than MaxOwnerDepth", calls)
	}
}

func TestResolveOwnersContextCanceled(t *testing.T) {
	deploy := owner("apps/v1", "Deployment", "shop", "web")
	rs := owner("apps/v1", "ReplicaSet", "shop", "web-5d4", ctrlOf(deploy))
	refs := []OwnerRef{directRef(rs, "shop")}

	t.Run("before the walk", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		got, err := resolveWithin(t, ctx, newFakeLookup(deploy, rs), refs)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
		if got != nil {
			t.Errorf("resolutions %v alongside an error", got)
		}
	})
	t.Run("while a level is prepared", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		l := newFakeLookup(deploy, rs)
		// The user presses Ctrl-C while the Deployment informer syncs.
		l.onPrepare = func() {
			if len(l.prepares) == 1 {
				cancel()
			}
		}
		got, err := resolveWithin(t, ctx, l, refs)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error = %v, want context.Canceled", err)
		}
		if got != nil {
			t.Errorf("resolutions %v alongside an error", got)
		}
		if len(l.prepares) != 2 {
			t.Errorf("Prepare called %d times, want 2: the walk stops at the level that was canceled", len(l.prepares))
		}
	})
}

func TestOwnerRefGroupKind(t *testing.T) {
	tests := []struct {
		apiVersion, kind string
		want             schema.GroupKind
	}{
		{"v1", "Node", schema.GroupKind{Kind: "Node"}},
		{"apps/v1", "ReplicaSet", schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}},
		{"example.com/v1alpha1", "Rollout", schema.GroupKind{Group: "example.com", Kind: "Rollout"}},
		{"a/b/c", "Odd", schema.GroupKind{Kind: "Odd"}},
	}
	for _, tc := range tests {
		if got := (OwnerRef{APIVersion: tc.apiVersion, Kind: tc.kind}).GroupKind(); got != tc.want {
			t.Errorf("GroupKind of %s %s = %v, want %v", tc.apiVersion, tc.kind, got, tc.want)
		}
	}
}

func TestRefFromOwnerReference(t *testing.T) {
	ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "rs-uid", Controller: ptr.To(true)}
	want := OwnerRef{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web", UID: "rs-uid"}
	if got := RefFromOwnerReference(ref, "shop"); got != want {
		t.Errorf("RefFromOwnerReference = %+v, want %+v", got, want)
	}
}
