package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// `kubectl idx watch --checkpoint` (and `events -w --checkpoint`) stopped and started again
// on the controller-driven control plane, while the controllers and the garbage collector
// change what it watches. After every restart, replaying everything both runs printed gives
// what `kubectl get` shows; after SIGTERM no event is printed twice, after kill -9 only the
// events printed after the checkpoint's last record may be.

// cpEvent is one line of a checkpointed feed.
type cpEvent struct {
	Context string `json:"context"`
	Gap     *struct {
		From   string `json:"from"`
		To     string `json:"to"`
		Reason string `json:"reason"`
	} `json:"gap"`
	OldUnknown bool `json:"oldUnknown"`
	watchEvent
}

// key names the object of an event as context|kind/namespace/name.
func (e cpEvent) key() string { return e.Context + "|" + e.watchEvent.key() }

// line is what a repeat is judged by: the type, UID and resourceVersion.
func (e cpEvent) line() string {
	return e.Type + " " + e.Object.Metadata.UID + "@" + e.Object.Metadata.ResourceVersion
}

func (e cpEvent) String() string {
	s := e.Context + " " + e.watchEvent.String()
	if e.Gap != nil {
		s += fmt.Sprintf(" gap %s-%s %s", e.Gap.From, e.Gap.To, e.Gap.Reason)
	}
	if e.OldUnknown {
		s += " (old unknown)"
	}
	return s
}

// resumable is a feed started, stopped and started again with one checkpoint.
type resumable struct {
	t          *testing.T
	env        *testenv.Env
	kubeconfig string
	path       string
	args       []string
	runs       []*feedRun
}

func newResumable(t *testing.T, env *testenv.Env, kubeconfig string, args ...string) *resumable {
	return &resumable{t: t, env: env, kubeconfig: kubeconfig, path: filepath.Join(t.TempDir(), "feed.checkpoint"), args: args}
}

// start starts a run of the feed.
func (r *resumable) start() {
	r.t.Helper()
	args := append(slices.Clone(r.args), "-o", "json", "--checkpoint", r.path)
	r.runs = append(r.runs, startFeed(r.t, r.env, r.kubeconfig, args...))
}

func (r *resumable) current() *feedRun { return r.runs[len(r.runs)-1] }

// parse parses the lines of run.
func parseRun(t *testing.T, run *feedRun) []cpEvent {
	t.Helper()
	return feedEvents[cpEvent](t, run.snapshot())
}

// events returns the events of every run, in order.
func (r *resumable) events() []cpEvent {
	var out []cpEvent
	for _, run := range r.runs {
		out = append(out, parseRun(r.t, run)...)
	}
	return out
}

// terminate stops the current run with SIGTERM, which must end it with 0, and returns its
// stderr.
func (r *resumable) terminate() string {
	r.t.Helper()
	return r.current().signal(r.t, syscall.SIGTERM).Stderr
}

// kill stops the current run with SIGKILL.
func (r *resumable) kill() {
	r.t.Helper()
	run := r.current()
	if err := run.proc.Signal(syscall.SIGKILL); err != nil {
		r.t.Fatal(err)
	}
	<-run.done
	if _, err := run.proc.Wait(30 * time.Second); err != nil {
		r.t.Fatal(err)
	}
}

// recorded returns how many events the checkpoint's records cover, over every stream: the
// events printed after them were not recorded when the feed stopped.
func (r *resumable) recorded() int64 {
	r.t.Helper()
	data, err := os.ReadFile(r.path)
	if err != nil {
		r.t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, 64<<20)
	var total int64
	for n := 0; sc.Scan(); n++ {
		if n == 0 {
			continue
		}
		_, payload, _ := strings.Cut(sc.Text(), " ")
		var rec struct {
			Streams []struct {
				Printed int64 `json:"printed"`
			} `json:"streams"`
			Printed int64 `json:"printed"`
		}
		if err := json.Unmarshal([]byte(payload), &rec); err != nil {
			// A last record cut short: the feed drops it too.
			break
		}
		for _, s := range rec.Streams {
			total += s.Printed
		}
		total += rec.Printed
	}
	return total
}

// applyLines replays events as a consumer does: ADDED and MODIFIED put the object, DELETED
// removes it. Strict, it reports what no feed may print: an ADDED of an object present, a
// MODIFIED or DELETED of one absent, a MODIFIED that does not change the resourceVersion, an
// event printed twice (type, UID and resourceVersion) except those allowed. Tolerant (after
// kill -9), an ADDED of an object present replaces it and a DELETED of one absent is
// ignored, as the documented consumer does.
func applyLines(t *testing.T, events []cpEvent, strict bool, allowed map[string]bool) map[string]objState {
	t.Helper()
	state := map[string]objState{}
	seen := map[string]cpEvent{}
	for i, ev := range events {
		k := ev.key()
		if prev, ok := seen[ev.line()]; ok && !allowed[ev.line()] {
			t.Errorf("event %d %v repeats %v", i, ev, prev)
		}
		seen[ev.line()] = ev
		cur, present := state[k]
		switch ev.Type {
		case "ADDED":
			if present && strict {
				t.Errorf("event %d: %v, but the feed already has %s (uid %s)", i, ev, k, cur.uid)
			}
			state[k] = objState{ev.Object.Metadata.UID, ev.Object.Metadata.ResourceVersion}
		case "MODIFIED":
			if strict && !present {
				t.Errorf("event %d: %v of an object the feed does not have", i, ev)
			} else if strict && cur.rv == ev.Object.Metadata.ResourceVersion {
				t.Errorf("event %d: %v repeats the state printed before", i, ev)
			}
			state[k] = objState{ev.Object.Metadata.UID, ev.Object.Metadata.ResourceVersion}
		case "DELETED":
			if strict && !present {
				t.Errorf("event %d: %v of an object the feed does not have", i, ev)
			}
			delete(state, k)
		default:
			t.Errorf("event %d: unknown type %q", i, ev.Type)
		}
	}
	return state
}

// truthOf keys what w holds as the feed of context keys its events.
func truthOf(context string, w workloads, keep func(*unstructured.Unstructured) bool) map[string]objState {
	out := map[string]objState{}
	for _, u := range w.items {
		if keep == nil || keep(u) {
			out[context+"|"+u.GetKind()+"/"+u.GetNamespace()+"/"+u.GetName()] = objState{string(u.GetUID()), u.GetResourceVersion()}
		}
	}
	return out
}

// agree waits until replaying every run of r (strict, or tolerant after a kill) gives the
// truth read gives, read before and after the feed's lines with nothing changed between.
func (r *resumable) agree(what string, strict bool, read func() (map[string]objState, map[types.UID]string)) []cpEvent {
	r.t.Helper()
	var events []cpEvent
	eventually(r.t, waitTimeout, what, func() string {
		before, vb := read()
		events = r.events()
		after, va := read()
		if !maps.Equal(vb, va) || !maps.Equal(before, after) {
			return "kubectl's reads around the feed's events differ"
		}
		got := applyLines(&testing.T{}, events, strict, nil)
		if !sameState(got, after) {
			var lines []string
			for _, ev := range events {
				lines = append(lines, ev.String())
			}
			return fmt.Sprintf("replaying the feed differs from kubectl:\n%s\nevents:\n%s", describeStates(got, after), strings.Join(lines, "\n"))
		}
		return ""
	})
	return events
}

// eventsAgree waits until replaying every run of r, a feed of Deployment web's events in
// ns, holds every event about web and what it owns now, and nothing but events about objects
// named web or web-* (web's ReplicaSets and pods): an event about an object created and
// deleted while the feed was stopped cannot be tied to web once the object is gone (what
// owned it went with it), and is not printed, as `kubectl idx events` without -w does not
// print it either.
func (r *resumable) eventsAgree(c *ctrlCluster, ns, what string, strict bool) []cpEvent {
	r.t.Helper()
	var events []cpEvent
	eventually(r.t, waitTimeout, what, func() string {
		w := c.read(r.t, "deployments,replicasets,pods", "-n", ns)
		owned := map[types.UID]bool{}
		for _, o := range w.items {
			if o.GetKind() == "Deployment" && o.GetName() == "web" {
				owned[o.GetUID()] = true
			}
		}
		for range 2 {
			for _, o := range w.items {
				for _, ref := range o.GetOwnerReferences() {
					if owned[ref.UID] {
						owned[o.GetUID()] = true
					}
				}
			}
		}
		before := c.read(r.t, "events", "-n", ns)
		events = r.events()
		after := c.read(r.t, "events", "-n", ns)
		if !maps.Equal(before.versions(), after.versions()) {
			return "kubectl's reads around the feed's events differ"
		}
		must, may := map[string]objState{}, map[string]objState{}
		for _, e := range after.items {
			uid, _, _ := unstructured.NestedString(e.Object, "involvedObject", "uid")
			name, _, _ := unstructured.NestedString(e.Object, "involvedObject", "name")
			st := objState{string(e.GetUID()), e.GetResourceVersion()}
			key := "|Event/" + e.GetNamespace() + "/" + e.GetName()
			if owned[types.UID(uid)] {
				must[key] = st
			}
			if name == "web" || strings.HasPrefix(name, "web-") {
				may[key] = st
			}
		}
		got := applyLines(&testing.T{}, events, strict, nil)
		var problems []string
		for k, st := range must {
			if got[k] != st {
				problems = append(problems, fmt.Sprintf("%s: feed %v, kubectl %v", k, got[k], st))
			}
		}
		for k, st := range got {
			if may[k] != st {
				problems = append(problems, fmt.Sprintf("%s: feed %v, kubectl %v (not about web or what it owns)", k, st, may[k]))
			}
		}
		if len(problems) > 0 {
			slices.Sort(problems)
			return fmt.Sprintf("replaying the feed differs from kubectl:\n%s\nevents:\n%s", strings.Join(problems, "\n"), eventsText(events))
		}
		return ""
	})
	return events
}

// cpKinds are the types the checkpointed feeds of the namespace watch.
const cpKinds = "deployments,replicasets,jobs,pods,cronjobs"

// TestControllersCheckpointResume: a feed of a namespace's workloads, stopped during a
// rollout, misses a scale-down, an orphaning delete and a CronJob's history cleanup, and
// picks them up when it starts again with its checkpoint, as does the feed of a
// Deployment's events. Stopped with SIGTERM, nothing is printed twice; killed (-9), only
// what was printed after the checkpoint's last record is printed again.
func TestControllersCheckpointResume(t *testing.T) {
	for _, stop := range []string{"SIGTERM", "kill -9"} {
		t.Run(stop, func(t *testing.T) {
			t.Parallel()
			ns := "ctrl-cp-term"
			if stop != "SIGTERM" {
				ns = "ctrl-cp-kill"
			}
			c := sharedIn(t, ns, tickCronJob)
			c.mustKubectl(t, "", "create", "deployment", "web", "-n", ns, "--image="+pauseImage, "--replicas=3")
			c.mustKubectl(t, "", "create", "deployment", "orph", "-n", ns, "--image="+pauseImage, "--replicas=2")
			var firstJob *unstructured.Unstructured
			took := eventually(t, 3*time.Minute, "web and orph to roll out and the CronJob's first Job to succeed", func() string {
				w := c.readWorkloads(t, ns)
				for _, j := range w.ofKind("Job") {
					if jobSucceeded(t, w, j.GetName(), 1) == "" {
						firstJob = j
					}
				}
				if firstJob == nil {
					return "no Job of tick has succeeded"
				}
				return firstProblem(c.deploymentRolledOut(t, w, "web", 3), c.deploymentRolledOut(t, w, "orph", 2))
			})
			t.Logf("ready after %s; the first Job is %s", took.Round(time.Second), firstJob.GetName())

			read := func() (map[string]objState, map[types.UID]string) {
				w := c.read(t, cpKinds, "-n", ns)
				return truthOf("", w, nil), w.versions()
			}
			feed := newResumable(t, c.env, c.env.Kubeconfig, "watch", cpKinds, "-n", ns)
			events := newResumable(t, c.env, c.env.Kubeconfig, "events", "deployment/web", "-n", ns, "-w")
			feed.start()
			events.start()
			feed.agree("the first run to show the namespace", true, read)
			events.eventsAgree(c, ns, "the first run to show web's events", true)
			// A feed killed between a write to stdout and the record that follows it: the
			// checkpoint as it was before the rollout stands for the one the kill left, so that
			// the rollout's events are printed again.
			var early [2][]byte
			if stop != "SIGTERM" {
				for i, r := range []*resumable{feed, events} {
					data, err := os.ReadFile(r.path)
					if err != nil {
						t.Fatal(err)
					}
					early[i] = data
				}
			}

			// A rollout, stopped half-way through: once both feeds printed some of it (the
			// ReplicaSets ADDED before it are the initial state's).
			before := [2]int{len(feed.current().snapshot()), len(events.current().snapshot())}
			c.mustKubectl(t, "", "set", "image", "deployment/web", "-n", ns, "pause=registry.k8s.io/pause:3.9")
			feed.current().waitFor(t, "the rollout's new ReplicaSet", func([]string, string) bool {
				return slices.ContainsFunc(parseRun(t, feed.current())[before[0]:], func(ev cpEvent) bool { return ev.Type == "ADDED" && ev.Object.Kind == "ReplicaSet" })
			})
			events.current().waitFor(t, "an event of the rollout", func(lines []string, _ string) bool { return len(lines) > before[1] })
			var stderr []string
			if stop == "SIGTERM" {
				stderr = append(stderr, feed.terminate(), events.terminate())
			} else {
				feed.kill()
				events.kill()
				for i, r := range []*resumable{feed, events} {
					if err := os.WriteFile(r.path, early[i], 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			printed := [2]int{len(feed.runs[0].snapshot()), len(events.runs[0].snapshot())}
			recorded := [2]int64{feed.recorded(), events.recorded()}
			t.Logf("stopped with %s: the feed had printed %d events, its checkpoint records %d; web's events %d and %d",
				stop, printed[0], recorded[0], printed[1], recorded[1])
			if stop == "SIGTERM" && (recorded[0] != int64(printed[0]) || recorded[1] != int64(printed[1])) {
				t.Errorf("after SIGTERM the checkpoints record %v events, the feeds printed %v", recorded, printed)
			}

			// While it is stopped: the rollout ends, web scales down, orph is deleted leaving
			// its ReplicaSet and pods, the CronJob's next Job succeeds and the first goes.
			c.mustKubectl(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
			c.mustKubectl(t, "", "scale", "deployment/web", "-n", ns, "--replicas=1")
			c.mustKubectl(t, "", "delete", "deployment", "orph", "-n", ns, "--cascade=orphan")
			took = eventually(t, 3*time.Minute, "web to scale down, orph to be orphaned and the first Job cleaned up", func() string {
				w := c.readWorkloads(t, ns)
				if w.get("Job", firstJob.GetName()) != nil {
					return "Job " + firstJob.GetName() + " is still there"
				}
				for _, rs := range w.ofKind("ReplicaSet") {
					if strings.HasPrefix(rs.GetName(), "orph-") && len(rs.GetOwnerReferences()) > 0 {
						return "orph's ReplicaSet still has an owner"
					}
				}
				if w.get("Deployment", "orph") != nil {
					return "Deployment orph is still there"
				}
				return c.deploymentRolledOut(t, w, "web", 1)
			})
			t.Logf("changes made while stopped, over %s", took.Round(time.Second))

			feed.start()
			events.start()
			strict := stop == "SIGTERM"
			all := feed.agree("both runs to replay to the namespace", strict, read)
			allEvents := events.eventsAgree(c, ns, "both runs to replay to web's events", strict)
			for i, r := range []*resumable{feed, events} {
				evs := []([]cpEvent){all, allEvents}[i]
				second := evs[printed[i]:]
				if len(second) == 0 {
					t.Errorf("%s: the second run printed nothing", r.args[0])
				}
				if strict {
					applyLines(t, evs, true, nil)
				} else {
					// What was printed after the last record may be printed again, and only that.
					tail := map[string]bool{}
					for _, ev := range evs[recorded[i]:printed[i]] {
						tail[ev.line()] = true
					}
					applyLines(t, evs, false, tail)
					again := 0
					for _, ev := range second {
						if tail[ev.line()] {
							again++
						}
					}
					t.Logf("%s: %d events printed after the last record, %d of them printed again", r.args[0], len(tail), again)
					if len(tail) == 0 || again == 0 {
						t.Errorf("%s: no event printed after the last record, or none printed again: the test does not test what it says", r.args[0])
					}
				}
				for _, ev := range second {
					if ev.Gap != nil {
						t.Errorf("%s: %v: a gap, but the server had the checkpoint's resourceVersions", r.args[0], ev)
					}
				}
			}
			// The cleaned-up Job and its pod, and the orphaned ReplicaSet's changes, are told.
			var jobGone, orphGone bool
			for _, ev := range all[printed[0]:] {
				jobGone = jobGone || ev.Type == "DELETED" && ev.Object.Metadata.UID == string(firstJob.GetUID())
				orphGone = orphGone || ev.Type == "DELETED" && ev.Object.Kind == "Deployment" && ev.Object.Metadata.Name == "orph"
			}
			if !jobGone || !orphGone {
				t.Errorf("the second run misses the first Job's deletion (%v) or orph's (%v)", jobGone, orphGone)
			}
			for i, r := range []*resumable{feed, events} {
				res := r.terminate()
				lines := stderrLines(res)
				if strict && len(lines) > 0 || !strict && !slices.ContainsFunc(lines, func(l string) bool {
					return strings.Contains(l, "did not stop cleanly; the lines it printed after its last record will be printed again")
				}) {
					t.Errorf("%s: stderr of the second run:\n%s", []string{"watch", "events"}[i], res)
				}
				if stop == "SIGTERM" && stderr[i] != "" {
					t.Errorf("%s: stderr of the first run:\n%s", []string{"watch", "events"}[i], stderr[i])
				}
				data, _ := os.ReadFile(r.path)
				if !strings.HasSuffix(string(data), " {\"closed\":true}\n") {
					t.Errorf("the checkpoint of a feed stopped with SIGTERM has no end mark:\n%.300s", data)
				}
			}
		})
	}
}

// TestControllersCheckpointOwner: with --owner, stopped during a rollout and started again
// after it ended and the Deployment scaled down, the feed under the Deployment replays to
// what kubectl shows under it.
func TestControllersCheckpointOwner(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-cp-owner"
	c, o, _ := watchedDeployment(t, ns, 3)
	o.stop(t)
	feed := newResumable(t, c.env, c.env.Kubeconfig, "watch", "deploy,rs,pods", "-n", ns, "--owner", "deployment/web")
	read := func() (map[string]objState, map[types.UID]string) {
		w := o.read(t)
		under := o.under(w)
		out := map[string]objState{}
		for k, v := range under {
			out["|"+k] = v
		}
		return out, w.versions()
	}
	feed.start()
	feed.agree("the feed under web", true, read)
	before := len(feed.current().snapshot())
	c.mustKubectl(t, "", "set", "image", "deployment/web", "-n", ns, "pause=registry.k8s.io/pause:3.9")
	feed.current().waitFor(t, "the rollout's new ReplicaSet", func([]string, string) bool {
		return slices.ContainsFunc(parseRun(t, feed.current())[before:], func(ev cpEvent) bool { return ev.Type == "ADDED" && ev.Object.Kind == "ReplicaSet" })
	})
	if res := feed.terminate(); res != "" {
		t.Errorf("stderr of the first run:\n%s", res)
	}
	printed := len(feed.runs[0].snapshot())
	c.mustKubectl(t, "", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	c.mustKubectl(t, "", "scale", "deployment/web", "-n", ns, "--replicas=1")
	eventually(t, gcTimeout, "web to scale down", func() string { return c.deploymentRolledOut(t, o.read(t), "web", 1) })
	feed.start()
	all := feed.agree("both runs to replay to what is under web", true, read)
	applyLines(t, all, true, nil)
	if len(all) == printed {
		t.Error("the second run printed nothing")
	}
	if res := feed.terminate(); res != "" {
		t.Errorf("stderr of the second run:\n%s", res)
	}
}

// TestControllersCheckpointContexts: one checkpoint for a feed over two contexts, each its
// own namespace of the controller-driven control plane: each resumes on its own.
func TestControllersCheckpointContexts(t *testing.T) {
	t.Parallel()
	c := controllerCluster(t)
	names := map[string]string{"cp-alpha": "ctrl-cp-alpha", "cp-beta": "ctrl-cp-beta"}
	var contexts []testenv.KubeconfigContext
	for _, name := range slices.Sorted(maps.Keys(names)) {
		ns := names[name]
		c.createNamespace(t, ns)
		c.mustKubectl(t, "", "create", "deployment", "web", "-n", ns, "--image="+pauseImage, "--replicas=2")
		contexts = append(contexts, testenv.KubeconfigContext{Name: name, From: c.env.Kubeconfig, Namespace: ns})
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.WriteKubeconfig(kubeconfig, contexts...); err != nil {
		t.Fatal(err)
	}
	eventually(t, gcTimeout, "both Deployments to roll out", func() string {
		return firstProblem(c.deploymentRolledOut(t, c.readWorkloads(t, names["cp-alpha"]), "web", 2), c.deploymentRolledOut(t, c.readWorkloads(t, names["cp-beta"]), "web", 2))
	})
	read := func() (map[string]objState, map[types.UID]string) {
		out, versions := map[string]objState{}, map[types.UID]string{}
		for name, ns := range names {
			w := c.read(t, "deployments,replicasets,pods", "-n", ns)
			maps.Copy(out, truthOf(name, w, nil))
			maps.Copy(versions, w.versions())
		}
		return out, versions
	}
	feed := newResumable(t, c.env, kubeconfig, "watch", "deploy,rs,pods", "--context", "cp-alpha,cp-beta")
	feed.start()
	feed.agree("the first run over both contexts", true, read)
	if res := feed.terminate(); res != "" {
		t.Errorf("stderr of the first run:\n%s", res)
	}
	printed := len(feed.runs[0].snapshot())
	c.mustKubectl(t, "", "scale", "deployment/web", "-n", names["cp-alpha"], "--replicas=1")
	c.mustKubectl(t, "", "set", "image", "deployment/web", "-n", names["cp-beta"], "pause=registry.k8s.io/pause:3.9")
	c.mustKubectl(t, "", "rollout", "status", "deployment/web", "-n", names["cp-beta"], "--timeout=2m")
	eventually(t, gcTimeout, "alpha to scale down", func() string {
		return c.deploymentRolledOut(t, c.readWorkloads(t, names["cp-alpha"]), "web", 1)
	})
	feed.start()
	all := feed.agree("both runs over both contexts", true, read)
	applyLines(t, all, true, nil)
	seen := map[string]bool{}
	for _, ev := range all[printed:] {
		seen[ev.Context] = true
	}
	if !seen["cp-alpha"] || !seen["cp-beta"] {
		t.Errorf("the second run printed events of %v, want both contexts", slices.Sorted(maps.Keys(seen)))
	}
	if res := feed.terminate(); res != "" {
		t.Errorf("stderr of the second run:\n%s", res)
	}
	// Another feed is refused, naming the difference.
	res := run(t, testenv.Cmd{Path: binary, Args: []string{"watch", "deploy,rs", "--context", "cp-alpha,cp-beta", "--checkpoint", feed.path}, Env: c.env.Environ(kubeconfig, ""), Timeout: cmdTimeout})
	want := "error: checkpoint " + feed.path + " was written for another feed: the types in context cp-alpha were deployments.apps,replicasets.apps,pods, are deployments.apps,replicasets.apps; resume with the same command, or give another file\n"
	if res.ExitCode != 1 || dropDetectorNotice(res.Stderr) != want || res.Stdout != "" {
		t.Errorf("a feed of other types on the checkpoint:\n%s\nwant stderr %s", res, want)
	}
}

// TestControllersCheckpointCompacted: on a control plane whose API server reads watches
// from etcd (no watch cache), etcd compacted while the feeds are stopped: the server no
// longer has the resourceVersions they resume from (410 Gone for the workloads; for
// Events, a watch that ends at once), so they list again and print the difference, every
// line of it marked with the gap, and say so on stderr.
func TestControllersCheckpointCompacted(t *testing.T) {
	t.Parallel()
	c := startOwnCluster(t, testenv.Options{
		Controllers:    &testenv.ControllerOptions{Nodes: 1},
		APIServerFlags: map[string][]string{"watch-cache": {"false"}, "etcd-compaction-interval": {"0"}},
	})
	e := c.env
	const ns = "ctrl-cp-compacted"
	c.createNamespace(t, ns)
	c.mustKubectl(t, "", "create", "deployment", "web", "-n", ns, "--image="+pauseImage, "--replicas=2")
	c.mustKubectl(t, "", "create", "deployment", "gone", "-n", ns, "--image="+pauseImage, "--replicas=1")
	eventually(t, gcTimeout, "the Deployments to roll out", func() string {
		w := c.readWorkloads(t, ns)
		return firstProblem(c.deploymentRolledOut(t, w, "web", 2), c.deploymentRolledOut(t, w, "gone", 1))
	})
	read := func() (map[string]objState, map[types.UID]string) {
		w := c.read(t, "deployments,replicasets,pods", "-n", ns)
		return truthOf("", w, nil), w.versions()
	}
	feed := newResumable(t, e, e.Kubeconfig, "watch", "deploy,rs,pods", "-n", ns)
	events := newResumable(t, e, e.Kubeconfig, "events", "deployment/web", "-n", ns, "-w")
	feed.start()
	events.start()
	feed.agree("the first run", true, read)
	events.eventsAgree(c, ns, "the first run of web's events", true)
	for _, r := range []*resumable{feed, events} {
		if res := r.terminate(); res != "" {
			t.Errorf("stderr of the first run:\n%s", res)
		}
	}
	printed := [2]int{len(feed.runs[0].snapshot()), len(events.runs[0].snapshot())}

	// While stopped: web scales up (new pods, events), gone is deleted with its
	// ReplicaSet and pod; then etcd forgets every revision before now.
	c.mustKubectl(t, "", "scale", "deployment/web", "-n", ns, "--replicas=3")
	c.mustKubectl(t, "", "delete", "deployment", "gone", "-n", ns)
	eventually(t, gcTimeout, "web to scale up and gone to go", func() string {
		w := c.readWorkloads(t, ns)
		for _, o := range w.items {
			if strings.HasPrefix(o.GetName(), "gone") {
				return o.GetKind() + " " + o.GetName() + " is still there"
			}
		}
		return c.deploymentRolledOut(t, w, "web", 3)
	})
	rev, err := e.CompactEtcd(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd compacted at revision %d", rev)

	feed.start()
	events.start()
	all := feed.agree("both runs to replay to the namespace", true, read)
	allEvents := events.eventsAgree(c, ns, "both runs to replay to web's events", true)
	for i, r := range []*resumable{feed, events} {
		evs := []([]cpEvent){all, allEvents}[i]
		applyLines(t, evs, true, nil)
		second := evs[printed[i]:]
		if len(second) == 0 {
			t.Errorf("%s: the second run printed nothing", r.args[0])
		}
		// The relist's lines carry its gap; any after it are changes made since, past it.
		gapTo := ""
		for _, ev := range second {
			switch {
			case ev.Gap != nil && ev.Gap.Reason == "expired":
				gapTo = ev.Gap.To
			case gapTo == "":
				t.Errorf("%s: %v is not marked as folded in an expired gap", r.args[0], ev)
			case !rvAfter(ev.Object.Metadata.ResourceVersion, gapTo):
				t.Errorf("%s: %v is not marked as folded, yet is not newer than the relist at %s", r.args[0], ev, gapTo)
			}
		}
		stderr := stderrLines(r.terminate())
		if !slices.ContainsFunc(stderr, func(l string) bool {
			return strings.Contains(l, "could not resume from resourceVersion") && strings.Contains(l, "which the server no longer has")
		}) {
			t.Errorf("%s: stderr does not say it could not resume:\n%s", r.args[0], strings.Join(stderr, "\n"))
		}
		t.Logf("%s, second run:\n%s\nstderr:\n%s", r.args[0], eventsText(second), strings.Join(stderr, "\n"))
	}
	// The deleted Deployment's objects are DELETED with their last state known.
	var deleted []string
	for _, ev := range all[printed[0]:] {
		if ev.Type == "DELETED" && strings.HasPrefix(ev.Object.Metadata.Name, "gone") {
			if !ev.DetectedOnRelist {
				t.Errorf("%v: not marked detectedOnRelist", ev)
			}
			deleted = append(deleted, ev.Object.Kind)
		}
	}
	slices.Sort(deleted)
	if want := []string{"Deployment", "Pod", "ReplicaSet"}; !slices.Equal(deleted, want) {
		t.Errorf("gone's objects DELETED: %v, want %v", deleted, want)
	}
}

// rvAfter reports whether resourceVersion a is newer than b; both are etcd revisions.
func rvAfter(a, b string) bool {
	return len(a) > len(b) || len(a) == len(b) && a > b
}

func eventsText(evs []cpEvent) string {
	var lines []string
	for _, ev := range evs {
		lines = append(lines, ev.String())
	}
	return strings.Join(lines, "\n")
}

// frontDoor forwards TCP connections to one API server or, once switched, to
// another: the one address a kubeconfig names, behind which a cluster is
// made anew. TLS goes through it untouched: each server's own certificate
// for 127.0.0.1 answers.
type frontDoor struct {
	ln     net.Listener
	target atomic.Value // string, host:port
}

func newFrontDoor(t *testing.T, target string) *frontDoor {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &frontDoor{ln: ln}
	d.target.Store(target)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go d.forward(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return d
}

func (d *frontDoor) addr() string { return d.ln.Addr().String() }

func (d *frontDoor) forward(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", d.target.Load().(string))
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		_, _ = io.Copy(up, c)
		_ = up.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(c, up)
}

// contextNamed writes a kubeconfig at dir/name whose one context, prod, has
// the cluster and user of kubeconfig from and namespace ns.
func contextNamed(t *testing.T, dir, name, from, ns string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := testenv.WriteKubeconfig(path, testenv.KubeconfigContext{Name: "prod", From: from, Namespace: ns}); err != nil {
		t.Fatal(err)
	}
	return path
}

func kubeSystemUID(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Get(t.Context(), metav1.NamespaceSystem, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(ns.UID)
}

// TestCheckpointOtherCluster: a checkpoint is tied to the cluster it was
// written for, not to the context's name. Behind the same address and
// context name, a cluster made anew (another API server and etcd: another
// kube-system namespace) is refused, naming the file and both UIDs, and the
// file is left as it was; the same cluster reached under its own address
// resumes and prints only what is new. A user who may not read kube-system
// is told nothing of it, and the server decides: the same cluster under
// another address is refused to them, naming both.
func TestCheckpointOtherCluster(t *testing.T) {
	const ns = "cp-cluster"
	other := startOwnEnv(t, testenv.Options{})
	ctx := t.Context()
	for _, cs := range []kubernetes.Interface{env.Clientset, other.Clientset} {
		createNamespace(ctx, t, cs, ns)
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	addrA, err := env.ServerAddr()
	if err != nil {
		t.Fatal(err)
	}
	addrB, err := other.ServerAddr()
	if err != nil {
		t.Fatal(err)
	}
	front := newFrontDoor(t, addrA)
	viaA, err := env.KubeconfigVia(env.Kubeconfig, front.addr())
	if err != nil {
		t.Fatal(err)
	}
	viaB, err := other.KubeconfigVia(other.Kubeconfig, front.addr())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kcA, kcB := contextNamed(t, dir, "a", viaA, ns), contextNamed(t, dir, "b", viaB, ns)
	path := filepath.Join(dir, "feed.checkpoint")
	args := []string{"watch", "configmaps", "-o", "name", "--checkpoint", path}

	first := startFeed(t, env, kcA, args...)
	first.waitFor(t, "configmap/a", func(lines []string, _ string) bool { return slices.Contains(lines, "configmap/a") })
	if res := first.signal(t, syscall.SIGTERM); res.Stderr != "" {
		t.Errorf("stderr of the first run:\n%s", res.Stderr)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// The cluster made anew behind the same address.
	front.target.Store(addrB)
	res := run(t, testenv.Cmd{Path: binary, Args: args, Env: other.Environ(kcB, ""), Timeout: cmdTimeout})
	want := "error: checkpoint " + path + " was written for another cluster: the kube-system namespace's UID in context prod was " +
		kubeSystemUID(t, env.Clientset) + ", is " + kubeSystemUID(t, other.Clientset) + "; resume against the cluster it was written for, or give another file\n"
	if res.ExitCode != 1 || dropDetectorNotice(res.Stderr) != want || res.Stdout != "" {
		t.Errorf("resumed against the cluster made anew:\n%s\nwant exit code 1 and stderr %s", res, want)
	}
	if now, _ := os.ReadFile(path); string(now) != string(written) {
		t.Errorf("the refused checkpoint was rewritten:\n%s\nwas\n%s", now, written)
	}

	// The first cluster under its own address: the same kube-system.
	direct := startFeed(t, env, contextNamed(t, dir, "direct", env.Kubeconfig, ns), args...)
	// The feed prints nothing of what it printed before; a ConfigMap created
	// once it has synced is the first line.
	time.Sleep(2 * time.Second)
	if _, err := env.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "b"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	direct.waitFor(t, "configmap/b", func(lines []string, _ string) bool { return slices.Contains(lines, "configmap/b") })
	if res := direct.signal(t, syscall.SIGTERM); !slices.Equal(direct.snapshot(), []string{"configmap/b"}) || res.Stderr != "" {
		t.Errorf("resumed under another address of the same cluster: stdout %q, stderr:\n%s\nwant only configmap/b", direct.snapshot(), res.Stderr)
	}

	// jane may not get namespace kube-system: nothing said of it, and the
	// server stands for the cluster.
	janePath := filepath.Join(dir, "jane.checkpoint")
	janeArgs := []string{"watch", "pods", "-o", "name", "--checkpoint", janePath}
	front.target.Store(addrA)
	jane := startFeed(t, env, contextNamed(t, dir, "jane", narrow.Kubeconfig, fixtures.Shop), janeArgs...)
	jane.waitFor(t, "the pods of "+fixtures.Shop, func(lines []string, _ string) bool { return len(lines) > 0 })
	if res := jane.signal(t, syscall.SIGTERM); res.Stderr != "" {
		t.Errorf("stderr of jane's first run:\n%s", res.Stderr)
	}
	if data, _ := os.ReadFile(janePath); strings.Contains(string(data), "kubeSystemUID") || !strings.Contains(string(data), `"server":"https://`+addrA+`"`) {
		t.Errorf("jane's checkpoint:\n%s", data)
	}
	janeVia, err := env.KubeconfigVia(narrow.Kubeconfig, front.addr())
	if err != nil {
		t.Fatal(err)
	}
	res = run(t, testenv.Cmd{Path: binary, Args: janeArgs, Env: env.Environ(contextNamed(t, dir, "jane-via", janeVia, fixtures.Shop), ""), Timeout: cmdTimeout})
	want = "error: checkpoint " + janePath + " was written for another cluster: the server in context prod was https://" + addrA + ", is https://" + front.addr() +
		"; resume against the cluster it was written for, or give another file\n"
	if res.ExitCode != 1 || dropDetectorNotice(res.Stderr) != want || res.Stdout != "" {
		t.Errorf("jane resumed under another address:\n%s\nwant exit code 1 and stderr %s", res, want)
	}
}

// TestCheckpointSymlink: --checkpoint naming a symbolic link is refused with
// one line, whether the link points to a checkpoint of the same feed or to
// nothing yet: the link stays a link, its target is neither written nor
// created, and the feed prints nothing.
func TestCheckpointSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "feed.checkpoint")
	args := func(path string) []string {
		return []string{"watch", "pods", "-n", fixtures.Shop, "-o", "name", "--checkpoint", path}
	}
	first := startFeed(t, env, env.Kubeconfig, args(target)...)
	first.waitFor(t, "the pods of "+fixtures.Shop, func(lines []string, _ string) bool { return len(lines) > 0 })
	if res := first.signal(t, syscall.SIGTERM); res.Stderr != "" {
		t.Errorf("stderr of the first run:\n%s", res.Stderr)
	}
	written, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"to the feed's checkpoint": target, "to nothing yet": filepath.Join(dir, "not-yet")} {
		t.Run(name, func(t *testing.T) {
			link := filepath.Join(t.TempDir(), "link.checkpoint")
			if err := os.Symlink(to, link); err != nil {
				t.Fatal(err)
			}
			res := run(t, testenv.Cmd{Path: binary, Args: args(link), Env: env.Environ(env.Kubeconfig, ""), Timeout: 30 * time.Second})
			want := "error: checkpoint " + link + " is a symbolic link: refusing to write through it\n"
			if res.ExitCode != 1 || dropDetectorNotice(res.Stderr) != want || res.Stdout != "" {
				t.Errorf("a feed given a symbolic link:\n%s\nwant exit code 1 and stderr %s", res, want)
			}
			if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the link is no longer one: %v, %v", st, err)
			}
			after, err := os.Stat(target)
			if err != nil {
				t.Fatal(err)
			}
			if data, _ := os.ReadFile(target); string(data) != string(written) || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("the link's target was written (modified %s, was %s):\n%s", after.ModTime(), before.ModTime(), data)
			}
			if _, err := os.Lstat(filepath.Join(dir, "not-yet")); !os.IsNotExist(err) {
				t.Errorf("the link's target was created: %v", err)
			}
		})
	}
}
