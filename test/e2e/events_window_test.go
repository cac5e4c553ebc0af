package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// `kubectl idx events` with --since, --until and -w on the controller-driven control
// plane: the events are kube-controller-manager's (ScalingReplicaSet, SuccessfulCreate,
// SuccessfulDelete, recorded through core v1 with lastTimestamp and count) and
// kube-scheduler's (Scheduled, recorded through events.k8s.io/v1 with eventTime and no
// lastTimestamp), and the truth is `kubectl get events -o json` filtered the same way.

// clusterEvents reads the events of namespace ns with kubectl.
func (c *ctrlCluster) clusterEvents(t *testing.T, ns string) []corev1.Event {
	t.Helper()
	res := c.mustKubectl(t, "", "get", "events", "-n", ns, "-o", "json")
	var list corev1.EventList
	mustDecode(t, "kubectl get events", res.Stdout, &list)
	return list.Items
}

// eventTime is when an event last happened, as README's events section words it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// subtree returns the UIDs of Deployment name in w and of the ReplicaSets and pods under
// it.
func subtree(w workloads, name string) map[types.UID]bool {
	out := map[types.UID]bool{}
	d := w.get("Deployment", name)
	if d == nil {
		return out
	}
	out[d.GetUID()] = true
	for _, rs := range w.controlledBy("ReplicaSet", d) {
		out[rs.GetUID()] = true
		for _, p := range w.controlledBy("Pod", rs) {
			out[p.GetUID()] = true
		}
	}
	return out
}

// idxEvents decodes the list `kubectl idx events -o json` prints.
func idxEvents(t *testing.T, out string) []corev1.Event {
	t.Helper()
	var list corev1.EventList
	mustDecode(t, "kubectl idx events -o json", out, &list)
	return list.Items
}

// eventKeys are the events as "uid reason", sorted.
func eventKeys(evs []corev1.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, string(e.UID)+" "+e.Reason)
	}
	slices.Sort(out)
	return out
}

// fromEventsAPI reports whether e was recorded through events.k8s.io/v1: it has an
// eventTime and no lastTimestamp.
func fromEventsAPI(e *corev1.Event) bool {
	return !e.EventTime.IsZero() && e.LastTimestamp.IsZero()
}

// sharedWithWeb is sharedIn(t, ns) with Deployment web of two pause pods, created as kubectl
// create does and rolled out.
func sharedWithWeb(t *testing.T, ns string) *ctrlCluster {
	t.Helper()
	c := sharedIn(t, ns)
	c.mustKubectl(t, "", "create", "deployment", "web", "-n", ns, "--image="+pauseImage, "--replicas=2")
	eventually(t, gcTimeout, "Deployment web to roll out", func() string {
		return c.deploymentRolledOut(t, c.readWorkloads(t, ns), "web", 2)
	})
	return c
}

// TestEventsWindowRollout lists the events of a Deployment before and after a rollout with
// --since and --until, whose bounds fall in a quiet gap between the two: --since gives the
// rollout's events, kube-scheduler's Scheduled events of the new pods (eventTime only)
// among them, --until those of the first rollout still in the tree; both as kubectl's
// events, filtered by the same tree and times, say.
func TestEventsWindowRollout(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-events-window"
	c := sharedWithWeb(t, ns)
	// A quiet gap of three seconds after the first rollout's last event, ending at a whole
	// second: lastTimestamp has a resolution of one second, so an event after the gap
	// never reads as one before it.
	var lastFirst time.Time
	for _, e := range c.clusterEvents(t, ns) {
		if tm := eventTime(&e); tm.After(lastFirst) {
			lastFirst = tm
		}
	}
	gapEnd := lastFirst.Add(3 * time.Second).Truncate(time.Second).Add(time.Second)
	time.Sleep(time.Until(gapEnd))

	c.mustKubectl(t, "", "set", "image", "deployment/web", "-n", ns, "pause=registry.k8s.io/pause:3.9")
	c.mustKubectl(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")

	// A window bound half way into the gap, give or take the time the command takes to
	// start: the duration is measured from the test's clock just before the run.
	within := func() string { return (time.Since(gapEnd) + 1500*time.Millisecond).Round(time.Millisecond).String() }
	bound := gapEnd.Add(-1500 * time.Millisecond)
	// check compares the answer to kubectl's events kept by keep, until they agree; args
	// gives the flags afresh for each attempt, so that a window measured from the gap
	// stays in it.
	check := func(what string, keep func(e *corev1.Event) bool, args func() []string) []corev1.Event {
		t.Helper()
		var got []corev1.Event
		eventually(t, gcTimeout, what+" to match kubectl get events", func() string {
			tree := subtree(c.readWorkloads(t, ns), "web")
			var want []corev1.Event
			for _, e := range c.clusterEvents(t, ns) {
				if tree[e.InvolvedObject.UID] && keep(&e) {
					want = append(want, e)
				}
			}
			flags := args()
			res := c.idx(t, append([]string{"events", "deployment/web", "-n", ns, "-o", "json"}, flags...)...)
			if res.ExitCode != 0 {
				return res.String()
			}
			got = idxEvents(t, res.Stdout)
			if !slices.Equal(eventKeys(got), eventKeys(want)) {
				return fmt.Sprintf("kubectl idx events %s:\n%s\nkubectl get events:\n%s", strings.Join(flags, " "), strings.Join(eventKeys(got), "\n"), strings.Join(eventKeys(want), "\n"))
			}
			return ""
		})
		if !slices.IsSortedFunc(got, func(a, b corev1.Event) int { return eventTime(&a).Compare(eventTime(&b)) }) {
			t.Errorf("%s: not oldest first:\n%s", what, strings.Join(eventKeys(got), "\n"))
		}
		return got
	}

	after := check("--since", func(e *corev1.Event) bool { return !eventTime(e).Before(bound) }, func() []string {
		return []string{"--since", within()}
	})
	reasons := map[string]bool{}
	scheduled := 0
	for _, e := range after {
		reasons[e.Reason] = true
		if e.Reason == "Scheduled" && fromEventsAPI(&e) {
			scheduled++
		}
	}
	for _, r := range []string{"ScalingReplicaSet", "SuccessfulCreate", "Scheduled"} {
		if !reasons[r] {
			t.Errorf("--since: no %s event among %v", r, slices.Sorted(maps.Keys(reasons)))
		}
	}
	if scheduled < 2 {
		t.Errorf("--since: %d Scheduled events recorded through events.k8s.io/v1, want one per new pod", scheduled)
	}

	before := check("--until", func(e *corev1.Event) bool { return eventTime(e).Before(bound) }, func() []string {
		return []string{"--until", within()}
	})
	for _, e := range before {
		if !eventTime(&e).Before(gapEnd.Add(-time.Second)) {
			t.Errorf("--until: event %s %s at %s is after the gap", e.Reason, e.Name, eventTime(&e))
		}
	}
	if len(before) == 0 {
		t.Error("--until: no events of the first rollout")
	}

	// Both bounds: the rollout's events, up to a second ago.
	check("--since and --until", func(e *corev1.Event) bool {
		return !eventTime(e).Before(bound) && eventTime(e).Before(time.Now().Add(-time.Second))
	}, func() []string { return []string{"--since", within(), "--until", "1s"} })
	check("--for-kind pods --types Normal", func(e *corev1.Event) bool {
		return e.InvolvedObject.Kind == "Pod" && e.Type == corev1.EventTypeNormal
	}, func() []string { return []string{"--for-kind", "pods", "--types", "Normal", "--since", "1h"} })
}

// TestEventsWatchRollout follows the events of a Deployment with -w through a rollout and
// two undos: the initial state is the events of the tree, then the events of the rollout
// arrive, those of the new ReplicaSet and its pods (created after the start) included, and
// the scaling events the undos repeat come again as MODIFIED. The feed, replayed,
// holds exactly the events kubectl shows about objects that were in the tree while it ran,
// at their resourceVersions, and no (uid, resourceVersion) is printed twice.
func TestEventsWatchRollout(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-events-watch"
	c := sharedWithWeb(t, ns)
	// seen are the objects that were in the tree at any read, and replicaSets the names of
	// the ReplicaSets among them: a pod a rollout created and deleted between two reads is
	// known by its name, which is its ReplicaSet's and a suffix.
	seen := map[types.UID]bool{}
	replicaSets := map[string]bool{}
	inTree := func(e *corev1.Event) bool {
		ref := e.InvolvedObject
		if seen[ref.UID] {
			return true
		}
		i := strings.LastIndex(ref.Name, "-")
		return ref.Kind == "Pod" && i > 0 && replicaSets[ref.Name[:i]]
	}
	feed := startFeed(t, c.env, c.env.Kubeconfig, "events", "deployment/web", "-n", ns, "-w", "-o", "json")
	agree := func(what string) []watchEvent {
		t.Helper()
		var events []watchEvent
		eventually(t, gcTimeout, what, func() string {
			w := c.readWorkloads(t, ns)
			maps.Copy(seen, subtree(w, "web"))
			for _, rs := range w.ofKind("ReplicaSet") {
				if seen[rs.GetUID()] {
					replicaSets[rs.GetName()] = true
				}
			}
			want := map[string]string{}
			about := map[string]string{}
			for _, e := range c.clusterEvents(t, ns) {
				about[string(e.UID)] = e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name + " " + e.Reason
				if inTree(&e) {
					want[string(e.UID)] = e.ResourceVersion
				}
			}
			events = feed.events(t)
			got := map[string]string{}
			for _, ev := range events {
				if ev.Object.Kind != "Event" {
					return "not an Event: " + ev.String()
				}
				if ev.Type == "DELETED" {
					delete(got, ev.Object.Metadata.UID)
					continue
				}
				got[ev.Object.Metadata.UID] = ev.Object.Metadata.ResourceVersion
			}
			if !maps.Equal(got, want) {
				var diff []string
				for uid, rv := range got {
					if want[uid] != rv {
						diff = append(diff, fmt.Sprintf("feed %s rv=%s (%s), kubectl rv=%q", uid, rv, about[uid], want[uid]))
					}
				}
				for uid, rv := range want {
					if _, ok := got[uid]; !ok {
						diff = append(diff, fmt.Sprintf("kubectl %s rv=%s (%s), not in the feed", uid, rv, about[uid]))
					}
				}
				slices.Sort(diff)
				return strings.Join(diff, "\n")
			}
			return ""
		})
		return events
	}
	initial := agree("the initial events")
	for _, ev := range initial {
		if ev.Type != "ADDED" {
			t.Errorf("initial state: %s, want ADDED", ev)
		}
	}

	c.mustKubectl(t, "", "set", "image", "deployment/web", "-n", ns, "pause=registry.k8s.io/pause:3.9")
	c.mustKubectl(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	events := agree("the rollout's events")

	printed := map[string]bool{}
	for _, ev := range events {
		key := ev.Object.Metadata.UID + " " + ev.Object.Metadata.ResourceVersion
		if printed[key] {
			t.Errorf("printed twice: %s", ev)
		}
		printed[key] = true
	}
	// The new ReplicaSet and its pods joined the tree after the start; their events are
	// the feed's.
	w := c.readWorkloads(t, ns)
	d := w.get("Deployment", "web")
	byUID := map[string]corev1.Event{}
	for _, e := range c.clusterEvents(t, ns) {
		byUID[string(e.UID)] = e
	}
	newRS := 0
	for _, rs := range w.controlledBy("ReplicaSet", d) {
		if strings.Contains(fmt.Sprint(rs.Object["spec"]), "pause:3.9") {
			newRS++
			found := map[string]bool{}
			for _, ev := range events[len(initial):] {
				e := byUID[ev.Object.Metadata.UID]
				if e.InvolvedObject.UID == rs.GetUID() {
					found["ReplicaSet "+e.Reason] = true
				}
				for _, p := range w.controlledBy("Pod", rs) {
					if e.InvolvedObject.UID == p.GetUID() && e.Reason == "Scheduled" && fromEventsAPI(&e) {
						found["Pod Scheduled"] = true
					}
				}
			}
			for _, want := range []string{"ReplicaSet SuccessfulCreate", "Pod Scheduled"} {
				if !found[want] {
					t.Errorf("the new ReplicaSet %s: no %s event in the feed after the start; got %v", rs.GetName(), want, slices.Sorted(maps.Keys(found)))
				}
			}
		}
	}
	if newRS != 1 {
		t.Errorf("%d new ReplicaSets, want 1", newRS)
	}
	// Two undos repeat the first rollout's scaling steps with the same messages: the
	// recorder counts them on the events it made then, each update one MODIFIED.
	for range 2 {
		c.mustKubectl(t, "", "rollout", "undo", "deployment/web", "-n", ns)
		c.mustKubectl(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	}
	events = agree("the events of two rollout undos")
	printed = map[string]bool{}
	added := map[string]bool{}
	modified := 0
	for _, ev := range events {
		key := ev.Object.Metadata.UID + " " + ev.Object.Metadata.ResourceVersion
		if printed[key] {
			t.Errorf("printed twice: %s", ev)
		}
		printed[key] = true
		switch ev.Type {
		case "ADDED":
			if added[ev.Object.Metadata.UID] {
				t.Errorf("ADDED again: %s", ev)
			}
			added[ev.Object.Metadata.UID] = true
		case "MODIFIED":
			if !added[ev.Object.Metadata.UID] {
				t.Errorf("MODIFIED before ADDED: %s", ev)
			}
			modified++
		}
	}
	if modified == 0 {
		t.Error("no repeated event was printed as MODIFIED")
	}
	t.Logf("events:\n%s", eventLines(events))
	if res := feed.interrupt(t); res.Stderr != "" {
		t.Errorf("stderr not empty:\n%s", res.Stderr)
	}
}
