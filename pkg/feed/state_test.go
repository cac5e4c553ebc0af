package feed_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// mark is one marked handler call of one source.
type mark struct {
	step
	m feed.Mark
}

func at(s step, pos string) mark { return mark{step: s, m: feed.Mark{Position: pos}} }
func folded(s step, g *feed.Gap) mark {
	return mark{step: s, m: feed.Mark{Gap: g}}
}
func position(src int, pos string) mark {
	return mark{step: step{source: src, kind: "position"}, m: feed.Mark{Position: pos}}
}

// deliverMarked calls f's marked handlers as a cursor would.
func deliverMarked(f *feed.Feed, marks []mark) {
	for _, mk := range marks {
		h := f.Marked(mk.source)
		switch mk.kind {
		case "add":
			h.OnAdd(mk.obj, false, mk.m)
		case "initial":
			h.OnAdd(mk.obj, true, mk.m)
		case "update":
			h.OnUpdate(nil, mk.obj, mk.m)
		case "delete":
			h.OnDelete(mk.obj, mk.m)
		case "position":
			h.OnPosition(mk.m)
		}
	}
}

func knownKey(k feed.Known) string { return fmt.Sprintf("%d %s/%s", k.Source, k.Namespace, k.Name) }

// describe renders what cp holds of its objects, one line each.
func describe(cp *feed.Checkpoint) []string {
	var out []string
	for _, k := range cp.State().Objects {
		s := fmt.Sprintf("%s %s@%s", knownKey(k), k.UID, k.ResourceVersion)
		if k.Printed {
			s += " printed"
		}
		if k.Followed {
			var refs []string
			for _, r := range k.Refs {
				refs = append(refs, string(r.UID))
			}
			s += " refs=" + strings.Join(refs, ",")
		}
		out = append(out, s)
	}
	return out
}

// stub stands for a restored object as the query layer makes it: its
// metadata only.
func stub(k feed.Known) runtime.Object {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: k.Namespace, Name: k.Name, UID: k.UID, ResourceVersion: k.ResourceVersion, OwnerReferences: k.Refs,
	}}
}

// runMarked delivers marks to a feed of cfg, runs it until they are handled
// and returns its events as runFeed's lines, with " gap FROM-TO REASON" and
// " (old unknown)" for their marks.
func runMarked(t *testing.T, cfg feed.Config, before func(*feed.Feed), marks []mark) ([]string, []*feed.Event) {
	t.Helper()
	f := feed.New(cfg)
	if before != nil {
		before(f)
	}
	deliverMarked(f, marks)
	return drain(t, f, func(ev *feed.Event) string {
		line := eventLine(ev)
		if ev.LeftScope {
			line += " (left scope)"
		}
		if ev.Gap != nil {
			line += fmt.Sprintf(" gap %s-%s %s", ev.Gap.From, ev.Gap.To, ev.Gap.Reason)
		}
		if ev.OldUnknown {
			line += " (old unknown)"
		}
		return line
	})
}

func TestFeedRecordsState(t *testing.T) {
	cp := feed.NewCheckpoint()
	gap := &feed.Gap{From: "12", To: "30", Reason: "expired"}
	lines, _ := runMarked(t, feed.Config{Record: cp.Record}, nil, []mark{
		at(initial(0, cm("shop", "a", "uid-a", "10")), ""),
		at(initial(0, cm("shop", "b", "uid-b", "11")), ""),
		position(0, "11"),
		position(1, "9"),
		at(update(0, cm("shop", "a", "uid-a", "12")), "12"),
		at(add(1, cm("shop", "s", "uid-s", "13")), "13"),
		// The watch of 0 expired at 12; the relist finds b gone, c new.
		folded(del(0, tombstone(cm("shop", "b", "uid-b", "11"))), gap),
		folded(update(0, cm("shop", "a", "uid-a", "12")), gap),
		folded(add(0, cm("shop", "c", "uid-c", "25")), gap),
		position(0, "30"),
	})
	want := []string{
		"ADDED 0 shop/a@10", "ADDED 0 shop/b@11", "MODIFIED 0 shop/a@12", "ADDED 1 shop/s@13",
		"DELETED 0 shop/b@11 (relist) gap 12-30 expired", "ADDED 0 shop/c@25 gap 12-30 expired",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	st := cp.State()
	if diff := cmp.Diff(map[int]string{0: "30", 1: "13"}, st.Positions); diff != "" {
		t.Errorf("positions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"0 shop/a uid-a@12 printed", "0 shop/c uid-c@25 printed", "1 shop/s uid-s@13 printed"}, describe(cp)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if cp.Printed() != len(want) {
		t.Errorf("printed %d, want %d", cp.Printed(), len(want))
	}
}

// restoredAt is the checkpoint of source 0 at position pos holding objects.
func restoredAt(pos string, objects ...feed.Known) *feed.State {
	return &feed.State{Positions: map[int]string{0: pos}, Objects: objects}
}

// printed is what a checkpoint knows of an object of source 0 in shop that
// the feed printed.
func printed(name, uid, rv string) feed.Known {
	return feed.Known{Source: 0, Namespace: "shop", Name: name, UID: types.UID(uid), ResourceVersion: rv, Printed: true}
}

// stubsByName returns the stubs the restored feed holds for source 0, by name.
func stubsByName(f *feed.Feed) map[string]runtime.Object {
	byName := map[string]runtime.Object{}
	for _, s := range f.Stubs(0) {
		byName[s.(metav1.Object).GetName()] = s
	}
	return byName
}

// TestFeedResumes: a feed restored from a checkpoint prints nothing of the
// first list, then exactly the changes the watch from the position brings;
// an object unchanged since is whole again (its next MODIFIED has its old
// state and diff), one changed since is MODIFIED with its old state unknown.
func TestFeedResumes(t *testing.T) {
	restored := restoredAt("12", printed("a", "uid-a", "10"), printed("b", "uid-b", "12"), printed("x", "uid-x", "5"))
	cp := feed.NewCheckpoint()
	a10 := cm("shop", "a", "uid-a", "10", "v", "1")
	var byName map[string]runtime.Object
	lines, events := runMarked(t, feed.Config{Restore: restored, Stub: stub, Record: cp.Record, Diff: true},
		func(f *feed.Feed) {
			byName = stubsByName(f)
			deliverMarked(f, []mark{
				// The first list: the server's now, and x, deleted since, as
				// its stub.
				at(initial(0, a10), ""),
				at(initial(0, cm("shop", "b", "uid-b", "14", "v", "2")), ""),
				at(initial(0, cm("shop", "n", "uid-n", "13")), ""),
				at(initial(0, byName["x"]), ""),
				position(0, "12"),
				// The watch from 12.
				at(add(0, cm("shop", "n", "uid-n", "13")), "13"),
				at(del(0, cm("shop", "x", "uid-x", "13")), "13"),
				at(update(0, cm("shop", "b", "uid-b", "14", "v", "2")), "14"),
				at(update(0, cm("shop", "a", "uid-a", "15", "v", "3")), "15"),
			})
		}, nil)
	want := []string{"ADDED 0 shop/n@13", "DELETED 0 shop/x@13", "MODIFIED 0 shop/b@14 (old unknown)", "MODIFIED 0 shop/a@15"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(events) == 4 {
		if ev := events[2]; ev.Old != nil || ev.Changes != nil {
			t.Errorf("MODIFIED of b, changed since the checkpoint: old %v, changes %v", ev.Old, ev.Changes)
		}
		if ev := events[3]; ev.Old != a10 || len(ev.Changes) != 1 || ev.Changes[0].Path != ".data.v" {
			t.Errorf("MODIFIED of a, unchanged until then: old %v, changes %+v", ev.Old, ev.Changes)
		}
	}
	if got := cp.State().Positions[0]; got != "15" {
		t.Errorf("position %s, want 15", got)
	}
}

// TestFeedResumesAcrossAGap: the watch from the position is refused, the
// informer lists again: each object changed since is one MODIFIED, each
// gone a DELETED with what the checkpoint knew of it, all marked with the
// gap.
func TestFeedResumesAcrossAGap(t *testing.T) {
	restored := restoredAt("12", printed("a", "uid-a", "10"), printed("b", "uid-b", "12"), printed("x", "uid-x", "5"))
	gap := &feed.Gap{From: "12", To: "40", Reason: "expired"}
	lines, _ := runMarked(t, feed.Config{Restore: restored, Stub: stub}, func(f *feed.Feed) {
		byName := stubsByName(f)
		deliverMarked(f, []mark{
			at(initial(0, cm("shop", "a", "uid-a", "10")), ""),
			at(initial(0, cm("shop", "b", "uid-b", "20")), ""),
			at(initial(0, byName["x"]), ""),
			position(0, "12"),
			folded(del(0, tombstone(byName["x"].(*metav1.PartialObjectMetadata))), gap),
			folded(update(0, cm("shop", "a", "uid-a", "10")), gap),
			folded(update(0, cm("shop", "b", "uid-b", "30")), gap),
			folded(add(0, cm("shop", "c", "uid-c", "35")), gap),
			position(0, "40"),
		})
	}, nil)
	want := []string{
		"DELETED 0 shop/x@5 (relist) gap 12-40 expired",
		"MODIFIED 0 shop/b@30 gap 12-40 expired (old unknown)",
		"ADDED 0 shop/c@35 gap 12-40 expired",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// TestFeedDropsWhatItHandledBefore: a watch resumed from a position before
// the last one recorded (a relist's position is recorded once a later object
// has been) delivers again what the feed handled: older versions, deletions
// of what it no longer holds, the deletion of an earlier object of a name
// created again. None of it is printed again.
func TestFeedDropsWhatItHandledBefore(t *testing.T) {
	restored := restoredAt("10", printed("a", "uid-a", "20"), printed("r", "uid-r2", "18"))
	lines, _ := runMarked(t, feed.Config{Restore: restored, Stub: stub}, func(f *feed.Feed) {
		deliverMarked(f, []mark{
			at(initial(0, cm("shop", "a", "uid-a", "20")), ""),
			at(initial(0, cm("shop", "r", "uid-r2", "18")), ""),
			position(0, "10"),
			at(update(0, cm("shop", "a", "uid-a", "15")), "15"),
			at(del(0, cm("shop", "gone", "uid-g", "16")), "16"),
			at(del(0, cm("shop", "r", "uid-r1", "17")), "17"),
			at(add(0, cm("shop", "r", "uid-r2", "18")), "18"),
			at(update(0, cm("shop", "a", "uid-a", "20")), "20"),
			at(update(0, cm("shop", "a", "uid-a", "21")), "21"),
		})
	}, nil)
	if diff := cmp.Diff([]string{"MODIFIED 0 shop/a@21"}, lines); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// ownedBy returns a metadata-only object of kind named name in shop, with
// UID "<kind>-<name>", owned by owners.
func ownedBy(kind, name, rv string, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Namespace: "shop", Name: name, UID: types.UID(strings.ToLower(kind) + "-" + name), ResourceVersion: rv, OwnerReferences: owners,
	}}
	o.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: kind})
	return o
}

func refOf(kind, name string) metav1.OwnerReference {
	return ownerRef(kind, strings.ToLower(kind)+"-"+name)
}

// changeLookup is an OwnerLookup whose owners the test sets and whose
// reports it sends.
type changeLookup struct {
	mu     sync.Mutex
	owners map[types.UID][]metav1.OwnerReference
	fn     func(feed.OwnerChange)
	asked  []types.UID
}

func (l *changeLookup) OwnerReferences(_ context.Context, _ schema.GroupVersionKind, uid types.UID, _ bool) ([]metav1.OwnerReference, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, uid)
	refs, ok := l.owners[uid]
	return refs, ok
}

func (l *changeLookup) OnOwnerChange(fn func(feed.OwnerChange)) { l.fn = fn }

// TestFeedOwnerScopeAcrossRestart: with --owner deployment/web over pods,
// the checkpoint keeps the ownerReferences the scope follows: the pods' and
// those of the ReplicaSet the lookup found. Restored, the scope judges as it
// did; the ReplicaSet orphaned while the feed was stopped (the lookup
// reports it) takes its pods, unchanged, out as DELETED leftScope, whole.
func TestFeedOwnerScopeAcrossRestart(t *testing.T) {
	deploy := refOf("Deployment", "web")
	lookup := &changeLookup{owners: map[types.UID][]metav1.OwnerReference{"replicaset-web-1": {deploy}}}
	p1 := ownedBy("Pod", "web-1-a", "10", refOf("ReplicaSet", "web-1"))
	p2 := ownedBy("Pod", "web-1-b", "11", refOf("ReplicaSet", "web-1"))
	stray := ownedBy("Pod", "stray", "12")
	cp := feed.NewCheckpoint()
	lines, _ := runMarked(t, feed.Config{Scope: feed.NewOwnerScope(deploy.UID, lookup), Record: cp.Record}, nil, []mark{
		at(initial(0, p1), ""), at(initial(0, p2), ""), at(initial(0, stray), ""), position(0, "12"),
	})
	if diff := cmp.Diff([]string{"ADDED 0 shop/web-1-a@10", "ADDED 0 shop/web-1-b@11"}, lines); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	want := []string{
		"0 shop/web-1-a pod-web-1-a@10 printed refs=replicaset-web-1",
		"0 shop/web-1-b pod-web-1-b@11 printed refs=replicaset-web-1",
	}
	if diff := cmp.Diff(want, describe(cp)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	st := cp.State()
	if diff := cmp.Diff([]feed.Owner{{UID: "replicaset-web-1", Refs: []metav1.OwnerReference{deploy}}}, st.Owners); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}

	// Stopped; meanwhile the ReplicaSet is orphaned (kubectl delete
	// --cascade=orphan of the Deployment). The restarted lookup reports it.
	lookup.owners["replicaset-web-1"] = nil
	lookup.asked = nil
	cp2 := feed.NewCheckpoint()
	lines, events := runMarked(t, feed.Config{Scope: feed.NewOwnerScope(deploy.UID, lookup), Restore: st, Stub: stub, Record: cp2.Record}, func(f *feed.Feed) {
		deliverMarked(f, []mark{at(initial(0, p1), ""), at(initial(0, p2), ""), at(initial(0, stray), ""), position(0, "12")})
		lookup.fn(feed.OwnerChange{Kind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSet"}, UID: "replicaset-web-1"})
	}, nil)
	want = []string{"DELETED 0 shop/web-1-a@10 (left scope)", "DELETED 0 shop/web-1-b@11 (left scope)"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("events after the restart (-want +got):\n%s", diff)
	}
	for _, ev := range events {
		if ev.Object != runtime.Object(p1) && ev.Object != runtime.Object(p2) {
			t.Errorf("%s printed %T, not the object the list brought", ev.Type, ev.Object)
		}
	}
	if !slices.Contains(lookup.asked, "replicaset-web-1") {
		t.Errorf("the restored owner was not looked up, so its informer would not report it: asked %v", lookup.asked)
	}
	if diff := cmp.Diff([]string{
		"0 shop/web-1-a pod-web-1-a@10 refs=replicaset-web-1",
		"0 shop/web-1-b pod-web-1-b@11 refs=replicaset-web-1",
	}, describe(cp2)); diff != "" {
		t.Errorf("objects after the restart (-want +got):\n%s", diff)
	}
}
