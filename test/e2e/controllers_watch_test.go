package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// `kubectl idx watch --owner` on the controller-driven control plane: the objects under the
// root are created, adopted, orphaned and deleted by the deployment, replicaset, job and
// cronjob controllers and the garbage collector, and the feed, replayed (ADDED and MODIFIED
// put an object, DELETED removes it), must give what kubectl shows under the root at the
// same moment. Each test has a namespace of its own and runs in parallel with the others;
// the CronJob test, which waits for two schedules, comes first so that it starts first.

// pauseImage is the image of the Deployments the tests create; nothing pulls it (kwok runs
// the pods).
const pauseImage = "registry.k8s.io/pause:3.10"

// gcTimeout bounds the wait for a controller or the garbage collector to finish a step.
const gcTimeout = 2 * time.Minute

// ownerFeed is `kubectl idx watch KINDS -n NS --owner TYPE/NAME -o json` on a
// controller-driven control plane, with the truth it is checked against.
type ownerFeed struct {
	*feedRun
	c    *ctrlCluster
	ns   string
	root types.UID
	// refs are the ownerReferences of every object kubectl has shown the test, by UID, kept
	// after the object is gone.
	refs map[types.UID][]metav1.OwnerReference
}

// startOwnerFeed starts the feed of kinds under owner (TYPE/NAME) in ns and waits until it
// has printed what kubectl shows under owner, which it returns with the feed.
func (c *ctrlCluster) startOwnerFeed(t *testing.T, ns, kinds, owner string, flags ...string) (*ownerFeed, map[string]objState) {
	t.Helper()
	res := c.mustKubectl(t, "", "get", owner, "-n", ns, "-o", "jsonpath={.metadata.uid}")
	args := append([]string{"watch", kinds, "-n", ns, "--owner", owner, "-o", "json"}, flags...)
	o := &ownerFeed{
		feedRun: startFeed(t, c.env, c.env.Kubeconfig, args...),
		c:       c, ns: ns, root: types.UID(res.Stdout),
		refs: map[types.UID][]metav1.OwnerReference{},
	}
	_, truth := o.agree(t, "the initial state of "+owner)
	return o, truth
}

// deploymentFeed creates Deployment name with replicas pods in ns through kubectl, waits
// until the controllers have rolled it out, and starts the feed of deploy,rs,pods under it
// (startOwnerFeed).
func (c *ctrlCluster) deploymentFeed(t *testing.T, ns, name string, replicas int32, flags ...string) (*ownerFeed, map[string]objState) {
	t.Helper()
	c.mustKubectl(t, "", "create", "deployment", name, "-n", ns, "--image="+pauseImage, fmt.Sprintf("--replicas=%d", replicas))
	eventually(t, gcTimeout, "Deployment "+name+" to roll out", func() string {
		return c.deploymentRolledOut(t, c.readWorkloads(t, ns), name, replicas)
	})
	return c.startOwnerFeed(t, ns, "deploy,rs,pods", "deployment/"+name, flags...)
}

// sharedIn returns the shared controller-driven control plane after creating namespace ns
// there for the test and applying manifests in it with kubectl.
func sharedIn(t *testing.T, ns string, manifests ...string) *ctrlCluster {
	t.Helper()
	c := controllerCluster(t)
	c.createNamespace(t, ns)
	for _, m := range manifests {
		c.mustKubectl(t, m, "apply", "-n", ns, "-f", "-")
	}
	return c
}

// watchedDeployment is deploymentFeed of Deployment web in a namespace ns of its own on the
// shared controller-driven control plane.
func watchedDeployment(t *testing.T, ns string, replicas int32) (*ctrlCluster, *ownerFeed, map[string]objState) {
	t.Helper()
	c := sharedIn(t, ns)
	o, truth := c.deploymentFeed(t, ns, "web", replicas)
	return c, o, truth
}

// stop ends the feed as Ctrl-C would and checks it printed nothing on stderr.
func (o *ownerFeed) stop(t *testing.T) {
	t.Helper()
	if res := o.interrupt(t); res.Stderr != "" {
		t.Errorf("stderr not empty:\n%s", res.Stderr)
	}
}

// noneLeftScope checks that no event is marked leftScope: why says why nothing may leave.
func noneLeftScope(t *testing.T, events []watchEvent, why string) {
	t.Helper()
	for _, ev := range events {
		if ev.LeftScope {
			t.Errorf("%v: %s", ev, why)
		}
	}
}

// read is kubectl's view of the namespace, from which the feed learns ownerReferences.
func (o *ownerFeed) read(t *testing.T) workloads {
	t.Helper()
	w := o.c.readWorkloads(t, o.ns)
	for _, u := range w.items {
		o.refs[u.GetUID()] = u.GetOwnerReferences()
	}
	return w
}

// under returns the objects of w that are the root or owned by it through any chain of
// ownerReferences, keyed as watchEvent.key: what the feed must replay to. An owner kubectl
// still shows counts with its references now; one it no longer shows, with the last ones it
// showed: the garbage collector's view, in which a deleted owner links what it owned to
// the root until that is gone too. w must come from o.read.
func (o *ownerFeed) under(w workloads) map[string]objState {
	var owned func(uid types.UID, depth int) bool
	owned = func(uid types.UID, depth int) bool {
		if uid == o.root {
			return true
		}
		if depth > 20 {
			return false
		}
		for _, ref := range o.refs[uid] {
			if owned(ref.UID, depth+1) {
				return true
			}
		}
		return false
	}
	out := map[string]objState{}
	for _, u := range w.items {
		if owned(u.GetUID(), 0) {
			out[u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName()] = objState{string(u.GetUID()), u.GetResourceVersion()}
		}
	}
	return out
}

// agree waits until replaying the feed gives what kubectl shows under the root, read before
// and after the feed's events with nothing changed in between (the controllers may write
// at any time; a pair of reads that differ is tried again). It returns the events and that
// truth, after checking the rules every feed keeps (replay).
func (o *ownerFeed) agree(t *testing.T, what string) ([]watchEvent, map[string]objState) {
	t.Helper()
	var events []watchEvent
	var truth map[string]objState
	eventually(t, waitTimeout, what, func() string {
		before := o.read(t)
		events = o.events(t)
		after := o.read(t)
		if !maps.Equal(before.versions(), after.versions()) {
			return "kubectl's reads around the feed's events differ"
		}
		truth = o.under(after)
		if feed := replay(&testing.T{}, events); !sameState(feed, truth) {
			return fmt.Sprintf("replaying the feed differs from kubectl:\n%s\nevents:\n%s", describeStates(feed, truth), eventLines(events))
		}
		return ""
	})
	replay(t, events)
	return events, truth
}

// waitGone waits until kubectl shows nothing under the root, what the root once owned
// included: the garbage collector is done.
func (o *ownerFeed) waitGone(t *testing.T, what string) time.Duration {
	t.Helper()
	return eventually(t, gcTimeout, what, func() string {
		if left := o.under(o.read(t)); len(left) > 0 {
			return "kubectl still shows under the root: " + strings.Join(slices.Sorted(maps.Keys(left)), ", ")
		}
		return ""
	})
}

// eventsOf returns the events of the object with uid, in order.
func eventsOf(events []watchEvent, uid string) []watchEvent {
	var out []watchEvent
	for _, ev := range events {
		if ev.Object.Metadata.UID == uid {
			out = append(out, ev)
		}
	}
	return out
}

func eventLines(events []watchEvent) string {
	lines := make([]string, len(events))
	for i, ev := range events {
		lines[i] = ev.String()
	}
	return strings.Join(lines, "\n")
}

// checkDeletedOnce checks that each object of was (a truth) has exactly one DELETED, its last
// event, and that leftScope and detectedOnRelist are as wanted (relist nil: either).
func checkDeletedOnce(t *testing.T, events []watchEvent, was map[string]objState, leftScope bool, relist *bool) {
	t.Helper()
	for _, key := range slices.Sorted(maps.Keys(was)) {
		evs := eventsOf(events, was[key].uid)
		if len(evs) == 0 {
			t.Errorf("%s: no event at all", key)
			continue
		}
		n := 0
		for _, ev := range evs {
			if ev.Type == "DELETED" {
				n++
			}
		}
		last := evs[len(evs)-1]
		switch {
		case n != 1 || last.Type != "DELETED":
			t.Errorf("%s: %d DELETED events, want one, last:\n%s", key, n, eventLines(evs))
		case last.LeftScope != leftScope:
			t.Errorf("%s: %v, want leftScope %v", key, last, leftScope)
		case relist != nil && last.DetectedOnRelist != *relist:
			t.Errorf("%s: %v, want detectedOnRelist %v", key, last, *relist)
		}
	}
}

// tickCronJob runs a Job every minute, whose pod kwok completes, and keeps one successful Job.
const tickCronJob = `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
spec:
  schedule: "*/1 * * * *"
  successfulJobsHistoryLimit: 1
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        spec:
          restartPolicy: Never
          containers:
          - {name: tick, image: "registry.k8s.io/busybox:1.36", command: ["true"]}
`

// TestControllersWatchCronJobHistory: a CronJob runs a Job every minute and keeps one
// successful Job; when the second Job has succeeded the CronJob controller deletes the first,
// and the garbage collector its pod. The feed of jobs,pods under the CronJob follows: the
// first Job and its pod DELETED, the Jobs and pods kubectl shows, and nothing else.
func TestControllersWatchCronJobHistory(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-watch-cronjob"
	c := sharedIn(t, ns, tickCronJob)
	o, _ := c.startOwnerFeed(t, ns, "jobs,pods", "cronjob/tick")

	var first *unstructured.Unstructured
	took := eventually(t, 3*time.Minute, "a second Job to succeed and the CronJob controller to delete the first", func() string {
		w := o.read(t)
		jobs := w.ofKind("Job")
		if first == nil && len(jobs) > 0 {
			first = jobs[0]
		}
		switch {
		case first == nil:
			return "no Job yet"
		case w.get("Job", first.GetName()) != nil:
			return fmt.Sprintf("the first Job, %s, is still there (%d Jobs)", first.GetName(), len(jobs))
		case len(jobs) == 0:
			return "no Job after the first"
		}
		for uid, refs := range o.refs {
			if slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == first.GetUID() }) && slices.ContainsFunc(w.items, func(u *unstructured.Unstructured) bool { return u.GetUID() == uid }) {
				return "a pod of the first Job is still there"
			}
		}
		return jobSucceeded(t, w, jobs[0].GetName(), 1)
	})
	t.Logf("the first Job was cleaned up %s after the feed started", took.Round(time.Second))

	events, truth := o.agree(t, "the feed to match kubectl after the cleanup")
	// The first Job and its pod, as kubectl showed them before they went.
	gone := map[string]objState{"Job/" + ns + "/" + first.GetName(): {uid: string(first.GetUID())}}
	for uid, refs := range o.refs {
		for _, r := range refs {
			if r.UID == first.GetUID() {
				evs := eventsOf(events, string(uid))
				if len(evs) == 0 {
					t.Errorf("the feed never showed %s's pod (uid %s)", first.GetName(), uid)
					continue
				}
				gone[evs[0].key()] = objState{uid: string(uid)}
			}
		}
	}
	if len(gone) < 2 {
		t.Errorf("the first Job had no pod kubectl showed: %v", gone)
	}
	checkDeletedOnce(t, events, gone, false, nil)
	noneLeftScope(t, events, "nothing leaves a CronJob's scope while it exists")
	t.Logf("under the CronJob now: %v\nevents:\n%s", slices.Sorted(maps.Keys(truth)), eventLines(events))
	o.stop(t)
}

// TestControllersWatchBackgroundCascade: `kubectl delete deployment` (background cascading
// deletion): the Deployment goes, then the garbage collector deletes its ReplicaSet and
// pods; each gets one DELETED and the feed replays to nothing.
func TestControllersWatchBackgroundCascade(t *testing.T) {
	t.Parallel()
	checkCascade(t, "ctrl-watch-background", "background")
}

// TestControllersWatchForegroundCascade: `kubectl delete --cascade=foreground`: the
// Deployment waits, terminating, while the garbage collector deletes the ReplicaSet and its
// pods (terminating too, until kwok lets them go); each gets one DELETED.
func TestControllersWatchForegroundCascade(t *testing.T) {
	t.Parallel()
	checkCascade(t, "ctrl-watch-foreground", "foreground")
}

// checkCascade deletes a rolled-out Deployment with cascade and checks the feed under it
// deletes everything once, with nothing marked as having left the scope.
func checkCascade(t *testing.T, ns, cascade string) {
	c, o, was := watchedDeployment(t, ns, 3)
	c.mustKubectl(t, "", "delete", "deployment", "web", "-n", ns, "--cascade="+cascade)
	took := o.waitGone(t, "the garbage collector to delete what Deployment web owned")
	t.Logf("%s cascade done %s after kubectl delete", cascade, took.Round(time.Millisecond))
	events, _ := o.agree(t, "the feed to replay to nothing")
	checkDeletedOnce(t, events, was, false, nil)
	t.Logf("events:\n%s", eventLines(events))
	o.stop(t)
}

// TestControllersWatchOrphanCascade: `kubectl delete --cascade=orphan`: the garbage
// collector removes the ReplicaSet's ownerReference, then deletes the Deployment. The
// ReplicaSet and its pods, unchanged, still exist but are no longer under the root: each
// leaves the feed as DELETED marked leftScope, in its current state; the Deployment is
// DELETED unmarked.
func TestControllersWatchOrphanCascade(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-watch-orphan"
	c, o, was := watchedDeployment(t, ns, 2)
	c.mustKubectl(t, "", "delete", "deployment", "web", "-n", ns, "--cascade=orphan")
	o.waitGone(t, "the garbage collector to orphan ReplicaSet and pods")
	events, _ := o.agree(t, "the feed to replay to nothing")

	deploy := "Deployment/" + ns + "/web"
	checkDeletedOnce(t, events, map[string]objState{deploy: was[deploy]}, false, nil)
	delete(was, deploy)
	checkDeletedOnce(t, events, was, true, nil)
	now := o.read(t)
	for key, st := range was {
		evs := eventsOf(events, st.uid)
		if len(evs) == 0 {
			continue // reported by checkDeletedOnce
		}
		last := evs[len(evs)-1]
		cur := slices.IndexFunc(now.items, func(u *unstructured.Unstructured) bool { return string(u.GetUID()) == st.uid })
		switch {
		case cur < 0:
			t.Errorf("%s: kubectl no longer shows it; orphaned, it should remain", key)
		case now.items[cur].GetResourceVersion() != last.Object.Metadata.ResourceVersion:
			t.Errorf("%s: leftScope event %v, kubectl shows resourceVersion %s", key, last, now.items[cur].GetResourceVersion())
		case strings.HasPrefix(key, "Pod/") && (len(evs) != 2 || last.Object.Metadata.ResourceVersion != st.rv):
			t.Errorf("%s: the pod did not change (rv %s), want ADDED then DELETED leftScope:\n%s", key, st.rv, eventLines(evs))
		}
	}
	t.Logf("events:\n%s", eventLines(events))
	o.stop(t)
}

// adoptTemplate is the pod template of the ReplicaSet and the Deployment of
// TestControllersWatchAdoption: the same, so that the Deployment takes the ReplicaSet as its
// own instead of replacing it.
const adoptTemplate = `
    metadata:
      labels: {app: adopt}
    spec:
      containers:
      - {name: pause, image: "` + pauseImage + `"}`

// adoptReplicaSet selects and runs the pods of adoptTemplate, but its own labels do not
// match the selector of adoptDeployment.
const adoptReplicaSet = `
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: adopt, labels: {app: adopt-later}}
spec:
  replicas: 2
  selector: {matchLabels: {app: adopt}}
  template:` + adoptTemplate

// adoptDeployment is paused: it makes no ReplicaSet of its own.
const adoptDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: adopt}
spec:
  paused: true
  replicas: 2
  selector: {matchLabels: {app: adopt}}
  template:` + adoptTemplate

// TestControllersWatchAdoption: a ReplicaSet nobody owns runs two pods; a paused Deployment
// with the same selector and template does not adopt it while the ReplicaSet's own labels do
// not match. With the feed running under the Deployment, the ReplicaSet is relabelled; the
// deployment controller adopts it (a controller ownerReference), and the ReplicaSet and its
// pods, which did not change, enter the feed as ADDED. Resumed, the Deployment keeps them.
func TestControllersWatchAdoption(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-watch-adopt"
	c := sharedIn(t, ns, adoptReplicaSet)
	var pods []*unstructured.Unstructured
	eventually(t, gcTimeout, "ReplicaSet adopt to run two pods", func() string {
		w := c.readWorkloads(t, ns)
		rs := w.get("ReplicaSet", "adopt")
		if rs == nil {
			return "no ReplicaSet adopt"
		}
		pods = w.controlledBy("Pod", rs)
		if n := typed[appsv1.ReplicaSet](t, rs).Status.ReadyReplicas; n != 2 || len(pods) != 2 {
			return fmt.Sprintf("%d pods, %d ready", len(pods), n)
		}
		return ""
	})
	c.mustKubectl(t, adoptDeployment, "apply", "-n", ns, "-f", "-")
	eventually(t, gcTimeout, "the deployment controller to see Deployment adopt", func() string {
		w := c.readWorkloads(t, ns)
		d := typed[appsv1.Deployment](t, w.get("Deployment", "adopt"))
		if d.Status.ObservedGeneration != d.Generation {
			return fmt.Sprintf("observedGeneration %d of %d", d.Status.ObservedGeneration, d.Generation)
		}
		if rss := w.ofKind("ReplicaSet"); len(rss) != 1 || len(rss[0].GetOwnerReferences()) != 0 {
			t.Fatalf("the paused Deployment made or took a ReplicaSet before the test relabelled it: %d ReplicaSets", len(rss))
		}
		return ""
	})
	o, _ := c.startOwnerFeed(t, ns, "deploy,rs,pods", "deployment/adopt")

	c.mustKubectl(t, "", "label", "replicaset", "adopt", "-n", ns, "app=adopt", "--overwrite")
	took := eventually(t, gcTimeout, "Deployment adopt to adopt ReplicaSet adopt", func() string {
		rs := o.read(t).get("ReplicaSet", "adopt")
		if ref := metav1.GetControllerOfNoCopy(rs); ref == nil || ref.UID != o.root {
			return fmt.Sprintf("ownerReferences %v", rs.GetOwnerReferences())
		}
		return ""
	})
	t.Logf("adopted %s after relabelling", took.Round(time.Millisecond))
	events, truth := o.agree(t, "the feed to take in the adopted ReplicaSet and its pods")
	if len(truth) != 4 {
		t.Errorf("kubectl shows %d objects under the Deployment, want it, the ReplicaSet and two pods: %v", len(truth), truth)
	}
	rsEvents := eventsOf(events, string(o.read(t).get("ReplicaSet", "adopt").GetUID()))
	if len(rsEvents) == 0 || rsEvents[0].Type != "ADDED" {
		t.Errorf("the adopted ReplicaSet's events: %v, want ADDED first", rsEvents)
	}
	for _, p := range pods {
		evs := eventsOf(events, string(p.GetUID()))
		if len(evs) != 1 || evs[0].Type != "ADDED" || evs[0].Object.Metadata.ResourceVersion != p.GetResourceVersion() {
			t.Errorf("pod %s, unchanged at rv %s: %v, want one ADDED in that state", p.GetName(), p.GetResourceVersion(), evs)
		}
	}

	// Resumed, the Deployment runs the adopted ReplicaSet as its own: its template is the
	// Deployment's.
	c.mustKubectl(t, "", "rollout", "resume", "deployment/adopt", "-n", ns)
	c.mustKubectl(t, "", "rollout", "status", "deployment/adopt", "-n", ns, "--timeout=2m")
	events, truth = o.agree(t, "the feed to match kubectl after the rollout resumed")
	t.Logf("under the Deployment after resuming: %v\nevents:\n%s", slices.Sorted(maps.Keys(truth)), eventLines(events))
	noneLeftScope(t, events, "nothing leaves the scope once adopted")
	o.stop(t)
}

// TestControllersWatchRollout: `kubectl set image` makes the deployment controller create a
// ReplicaSet, which the feed follows with its pods; `kubectl rollout undo` scales the first
// one up again. After each step the feed replays to what kubectl shows under the Deployment.
func TestControllersWatchRollout(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-watch-rollout"
	c, o, was := watchedDeployment(t, ns, 2)
	replicaSets := func(truth map[string]objState) []string {
		var out []string
		for key, st := range truth {
			if strings.HasPrefix(key, "ReplicaSet/") {
				out = append(out, st.uid)
			}
		}
		slices.Sort(out)
		return out
	}
	first := replicaSets(was)

	c.mustKubectl(t, "", "set", "image", "deployment/web", "-n", ns, "pause=registry.k8s.io/pause:3.9")
	c.mustKubectl(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	events, truth := o.agree(t, "the feed to match kubectl after set image")
	rolled := replicaSets(truth)
	if len(first) != 1 || len(rolled) != 2 || !slices.Contains(rolled, first[0]) {
		t.Fatalf("ReplicaSets under the Deployment: %v before the rollout, %v after, want one more", first, rolled)
	}
	for _, uid := range rolled {
		if uid == first[0] {
			continue
		}
		if evs := eventsOf(events, uid); len(evs) == 0 || evs[0].Type != "ADDED" {
			t.Errorf("the new ReplicaSet: %v, want ADDED first", evs)
		}
	}

	c.mustKubectl(t, "", "rollout", "undo", "deployment/web", "-n", ns)
	c.mustKubectl(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	events, truth = o.agree(t, "the feed to match kubectl after rollout undo")
	if undone := replicaSets(truth); !slices.Equal(undone, rolled) {
		t.Errorf("ReplicaSets under the Deployment after undo: %v, want the same two %v", undone, rolled)
	}
	noneLeftScope(t, events, "nothing leaves the scope in a rollout")
	t.Logf("events:\n%s", eventLines(events))
	o.stop(t)
}

// TestControllersWatchRestartAndExpiry runs two feeds on a controller-driven control plane of
// its own whose API server reads watches from etcd (no watch cache), compacted every 2 s
// while a ConfigMap elsewhere changes ten times a second; each feed request ends after 3 s
// (--request-timeout), so the feeds' watches expire and resume from revisions compacted
// away, and the feeds list again, over and over.
//
// Deployment live is deleted (background cascade) with one of its pods held by a finalizer
// of the test's: the garbage collector deletes the Deployment and the ReplicaSet and leaves
// that pod terminating, owned by a ReplicaSet that is gone. It must stay in the feed while
// the feed lists again and while kube-apiserver is killed and started again, then leave as
// DELETED once released. The other feed sleeps (SIGSTOP) through the restart and the
// deletion of Deployment gap, its ReplicaSet and pods, and finds each deleted on relisting.
// Both replay to nothing and say on stderr that they reconnected.
func TestControllersWatchRestartAndExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := startOwnCluster(t, testenv.Options{
		RestartableAPIServer: true,
		Controllers:          &testenv.ControllerOptions{Nodes: 1},
		APIServerFlags: map[string][]string{
			"watch-cache":              {"false"},
			"etcd-compaction-interval": {"2s"},
		},
	})
	e := c.env
	createNamespace(ctx, t, e.Clientset, "churn")
	defer churn(ctx, t, e.Clientset, "churn")()
	const ns = "ctrl-watch-restart"
	c.createNamespace(t, ns)
	live, _ := c.deploymentFeed(t, ns, "live", 2, "--request-timeout=3s")
	gap, gapWas := c.deploymentFeed(t, ns, "gap", 2, "--request-timeout=3s")

	w := live.read(t)
	held := w.controlledBy("Pod", w.controlledBy("ReplicaSet", w.get("Deployment", "live"))[0])[0]
	c.mustKubectl(t, "", "patch", "pod", held.GetName(), "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":["kubectl-idx.io/e2e-hold"]}}`)
	_, liveWas := live.agree(t, "the live feed to show the held pod")
	heldKey := "Pod/" + ns + "/" + held.GetName()

	if err := gap.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c.mustKubectl(t, "", "delete", "deployment", "live", "-n", ns)
	eventually(t, gcTimeout, "the garbage collector to delete all of Deployment live but the held pod", func() string {
		w := live.read(t)
		if left := slices.Sorted(maps.Keys(live.under(w))); !slices.Equal(left, []string{heldKey}) {
			return fmt.Sprintf("under Deployment live: %v", left)
		}
		if w.get("Pod", held.GetName()).GetDeletionTimestamp() == nil {
			return "the held pod is not terminating"
		}
		return ""
	})
	// The feed's watch of pods ends, cannot resume (410 Gone) and lists again; stderr says so
	// once the reflector's backoff has grown past a second.
	live.waitFor(t, "the live feed to list pods again after its watch expired", func(_ []string, stderr string) bool {
		return strings.Contains(stderr, "warning: watch of pods interrupted: The resourceVersion for the provided watch is too old")
	})
	live.agree(t, "the live feed to keep the held pod under the deleted Deployment across relists")

	restartedAt := len(dropDetectorNotice(live.proc.Stderr()))
	if err := e.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := e.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	live.waitFor(t, "the live feed to reconnect after the restart", func(_ []string, stderr string) bool {
		back := reconnects(stderr[min(restartedAt, len(stderr)):])
		return slices.Contains(back, "deployments.apps") && slices.Contains(back, "replicasets.apps") && slices.Contains(back, "pods")
	})
	if _, truth := live.agree(t, "the live feed to keep the held pod after the restart"); len(truth) != 1 {
		t.Errorf("kubectl shows %v under Deployment live, want the held pod alone", truth)
	}

	c.mustKubectl(t, "", "delete", "deployment", "gap", "-n", ns)
	took := gap.waitGone(t, "the garbage collector to delete what Deployment gap owned")
	t.Logf("Deployment gap's dependents gone %s after kubectl delete, with the API server just restarted", took.Round(time.Millisecond))
	// Past every revision the sleeping feed saw: it cannot resume, it lists again.
	if _, err := e.CompactEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	if err := gap.proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	events, _ := gap.agree(t, "the gap feed to find the deletions on relisting")
	relisted := true
	checkDeletedOnce(t, events, gapWas, false, &relisted)

	c.mustKubectl(t, "", "patch", "pod", held.GetName(), "-n", ns, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	live.waitGone(t, "the held pod to go")
	events, _ = live.agree(t, "the live feed to replay to nothing")
	checkDeletedOnce(t, events, liveWas, false, nil)

	for name, o := range map[string]*ownerFeed{"live": live, "gap": gap} {
		res := o.interrupt(t)
		warnings := stderrWarnings(t, res.Stderr)
		if len(reconnects(res.Stderr)) == 0 {
			t.Errorf("the %s feed never said it reconnected:\n%s", name, strings.Join(warnings, "\n"))
		}
		t.Logf("stderr of the %s feed:\n%s", name, strings.Join(warnings, "\n"))
	}
}
