package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/test/faultproxy"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// Network faults and server failures between kubectl-idx and the API server. A
// faultproxy sits in front of the API server and drops, resets, stalls or refuses
// connections on command; the API server is killed and restarted; etcd is compacted
// under a feed that is away. Queries must give up within a bound with one line naming
// what failed; feeds must end up with the server's picture of the world, print no
// state twice, say on stderr that they reconnected, and keep going.

// faultTimeout is the --request-timeout of the queries under faults.
const faultTimeout = 2 * time.Second

// hangBound kills a command that has not ended: a query under a fault that takes this
// long is hung, whatever its retries.
const hangBound = 30 * time.Second

// recoverWithin bounds the wait for a feed to catch up after a fault: the reflector's
// backoff after the failed attempts of a long outage (0.8 s doubling, each plus up to as
// much jitter: the fifth wait is up to 25.6 s) plus a relist, with room for a loaded
// machine. A feed that does not make it is hung.
const recoverWithin = 60 * time.Second

// startFaultProxy starts a proxy in front of e's API server, closed when the
// test ends.
func startFaultProxy(t *testing.T, e *testenv.Env) *faultproxy.Proxy {
	t.Helper()
	addr, err := e.ServerAddr()
	if err != nil {
		t.Fatal(err)
	}
	p, err := faultproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// newFaultProxy starts a proxy in front of e's API server, closed when the test ends,
// and writes an admin kubeconfig through it.
func newFaultProxy(t *testing.T, e *testenv.Env) (*faultproxy.Proxy, string) {
	t.Helper()
	p := startFaultProxy(t, e)
	kc, err := e.KubeconfigVia(e.Kubeconfig, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	return p, kc
}

// idxWithin runs the binary under test as the user of kubeconfig, killing it after
// hangBound and failing the test if it had to.
func idxWithin(t *testing.T, kubeconfig string, args ...string) testenv.Result {
	t.Helper()
	res, err := testenv.Run(context.Background(), testenv.Cmd{Path: binary, Args: args, Env: env.Environ(kubeconfig, ""), Timeout: hangBound})
	if err != nil {
		t.Fatalf("kubectl-idx %s hung: %v\n%s", strings.Join(args, " "), err, res)
	}
	res.Stderr = dropDetectorNotice(res.Stderr)
	return res
}

// failsWith checks that res is a failure with nothing on stdout and exactly one line on
// stderr matching want (a regexp, anchored), no panic, within maxWall.
func failsWith(t *testing.T, res testenv.Result, want string, maxWall time.Duration) {
	t.Helper()
	noPanic(t, "kubectl-idx", res)
	if res.ExitCode != 1 {
		t.Errorf("exit code %d, want 1\n%s", res.ExitCode, res)
	}
	if res.Stdout != "" {
		t.Errorf("stdout not empty:\n%s", res.Stdout)
	}
	if res.Wall > maxWall {
		t.Errorf("took %s, want at most %s: the retries are not bounded as documented", res.Wall.Round(time.Millisecond), maxWall)
	}
	lines := stderrLines(res.Stderr)
	if len(lines) != 1 {
		t.Fatalf("want exactly one line on stderr, got %d:\n%s", len(lines), res.Stderr)
	}
	if !regexp.MustCompile("^" + want + "$").MatchString(lines[0]) {
		t.Errorf("stderr:\n got %s\nwant %s", lines[0], want)
	}
	t.Logf("after %s: %s", res.Wall.Round(time.Millisecond), lines[0])
}

// TestFaultQueries: a query through a proxy that stalls, refuses or resets connections
// gives up within the bound the README states (the first list's --request-timeout, then
// one more for retries) with one line naming the type, the server and the problem; once
// the fault is gone, the same query answers as before.
func TestFaultQueries(t *testing.T) {
	query := []string{"pods", "-A", "-o", "name", "--request-timeout", faultTimeout.String()}
	// warm runs the query through p's kubeconfig once, which fills the discovery cache
	// for the proxy's address, so that faults hit the list and not discovery.
	warm := func(t *testing.T, kc string, args ...string) string {
		t.Helper()
		res := idxWithin(t, kc, args...)
		mustSucceed(t, "kubectl-idx through the proxy", res)
		if res.Stdout == "" {
			t.Fatal("the query printed nothing")
		}
		return res.Stdout
	}
	again := func(t *testing.T, kc, want string, args ...string) {
		t.Helper()
		res := idxWithin(t, kc, args...)
		mustSucceed(t, "kubectl-idx after the fault", res)
		if res.Stdout != want {
			t.Errorf("after the fault the query printed\n%s\nwant what it printed before\n%s", res.Stdout, want)
		}
	}
	// 2 × --request-timeout, plus process start and the reflector's scheduling.
	bound := 2*faultTimeout + 3*time.Second
	server := func(p *faultproxy.Proxy) string { return regexp.QuoteMeta(p.Addr()) }

	t.Run("no answer", func(t *testing.T) {
		t.Parallel()
		p, kc := newFaultProxy(t, env)
		before := warm(t, kc, query...)
		p.Stall()
		res := idxWithin(t, kc, query...)
		failsWith(t, res, `error: listing pods: the server `+server(p)+` did not answer within --request-timeout=2s \(retried for 2s\)`, bound)
		p.Unstall()
		again(t, kc, before, query...)
	})
	t.Run("no answer to discovery", func(t *testing.T) {
		t.Parallel()
		// A proxy nobody has used: its address has no discovery cache, so the stall hits
		// discovery first, which kubectl's libraries retry and word as kubectl does.
		p, kc := newFaultProxy(t, env)
		p.Stall()
		res := idxWithin(t, kc, query...)
		failsWith(t, res, `Unable to connect to the server: .*(Client\.Timeout exceeded|deadline exceeded).*`, hangBound)
		p.Unstall()
		warm(t, kc, query...)
	})
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		p, kc := newFaultProxy(t, env)
		before := warm(t, kc, query...)
		if err := p.Refuse(true); err != nil {
			t.Fatal(err)
		}
		res := idxWithin(t, kc, query...)
		// Tries at 0 and after 0.8-1.6 s; the third would come after the window.
		failsWith(t, res, `error: listing pods: the connection to the server `+server(p)+` was refused \(retried for 2s\)`, faultTimeout+3*time.Second)
		if err := p.Refuse(false); err != nil {
			t.Fatal(err)
		}
		again(t, kc, before, query...)
	})
	// Full objects as JSON: an answer of tens of KiB, cut after its first 16 KiB (the
	// TLS handshake takes a few), with an RST or a FIN: the connection's fault, named
	// as such and retried, never taken for an answer of the wrong shape. (After a FIN,
	// the client's next frames on the closed socket may draw an RST: either word.)
	for _, cut := range []struct {
		name  string
		after func(p *faultproxy.Proxy, n int64, times int)
	}{
		{"reset mid-list", (*faultproxy.Proxy).ResetAfter},
		{"closed mid-list", (*faultproxy.Proxy).CloseAfter},
	} {
		t.Run(cut.name, func(t *testing.T) {
			t.Parallel()
			const cutAt = 16 << 10
			full := []string{"pods", "-A", "-o", "json", "--request-timeout", faultTimeout.String()}
			p, kc := newFaultProxy(t, env)
			before := warm(t, kc, full...)
			cut.after(p, cutAt, -1)
			res := idxWithin(t, kc, full...)
			if p.Resets() == 0 {
				t.Fatalf("no connection was cut: the answer is smaller than %d bytes and the test tests nothing\n%s", cutAt, res)
			}
			res.Stderr = dropBodyReadErrors(t, res.Stderr)
			failsWith(t, res, `error: listing pods: the connection to the server `+server(p)+` was (reset|closed) \((retried for 2s|tried [23] times)\)`, bound)
			// One cut: the retry gets the whole answer.
			cut.after(p, cutAt, 1)
			n := p.Resets()
			again(t, kc, before, full...)
			if p.Resets() != n+1 {
				t.Errorf("%d connections cut during the last query, want 1", p.Resets()-n)
			}
			p.ResetAfter(0, 0)
		})
	}
}

// bodyReadError is the line client-go's REST client logs with klog.Errorf, whatever the
// verbosity, when a connection breaks while it reads an answer, before it returns the
// error. kubectl prints it too. kubectl-idx's root command keeps client-go's other error
// reports for -v=2 (utilruntime.ErrorHandlers) but not this one.
var bodyReadError = regexp.MustCompile(`(?m)^E\d{4} [0-9:.]+ +\d+ request\.go:\d+\] "Unexpected error when reading response body" err=.*\n`)

// dropBodyReadErrors removes bodyReadError lines from stderr, logging them: they do not
// fail the test, which is about kubectl-idx's own error line.
func dropBodyReadErrors(t *testing.T, stderr string) string {
	t.Helper()
	if lines := bodyReadError.FindAllString(stderr, -1); len(lines) > 0 {
		t.Logf("client-go logged %d line(s) besides kubectl-idx's error (known, not kubectl-idx's own):\n%s", len(lines), strings.Join(lines, ""))
	}
	return bodyReadError.ReplaceAllString(stderr, "")
}

// podWriter creates, changes and deletes pods in one namespace and records each write.
// Pods get spec.nodeName directly and are deleted with grace period 0: there is no
// scheduler or kubelet.
type podWriter struct{ writer }

func newPodWriter(t *testing.T, cs kubernetes.Interface, ns string) *podWriter {
	return &podWriter{writer{t: t, cs: cs, ns: ns, faulty: map[int]bool{}}}
}

func (w *podWriter) key(name string) string { return "Pod/" + w.ns + "/" + name }

func (w *podWriter) create(ctx context.Context, name string) {
	w.t.Helper()
	w.n++
	pod, err := w.cs.CoreV1().Pods(w.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubectl-idx-e2e": "fault", "v": strconv.Itoa(w.n)}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("creating pod %s: %v", name, err)
	}
	w.record(write{op: "create", key: w.key(name), uid: string(pod.UID), rv: pod.ResourceVersion})
}

func (w *podWriter) update(ctx context.Context, name string) {
	w.t.Helper()
	w.n++
	patch := fmt.Sprintf(`{"metadata":{"labels":{"v":%q}}}`, strconv.Itoa(w.n))
	pod, err := w.cs.CoreV1().Pods(w.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		w.t.Fatalf("updating pod %s: %v", name, err)
	}
	w.record(write{op: "update", key: w.key(name), uid: string(pod.UID), rv: pod.ResourceVersion})
}

func (w *podWriter) delete(ctx context.Context, name string) {
	w.t.Helper()
	pod, err := w.cs.CoreV1().Pods(w.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatalf("reading pod %s: %v", name, err)
	}
	err = w.cs.CoreV1().Pods(w.ns).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil {
		w.t.Fatalf("deleting pod %s: %v", name, err)
	}
	w.record(write{op: "delete", key: w.key(name), uid: string(pod.UID)})
}

// before, during and after are the writes of every feed fault test: all kinds of change,
// a pod deleted and created again under its name, and, during the fault, a pod created
// and deleted again, which a feed that lists again never sees.
func (w *podWriter) before(ctx context.Context) {
	for _, n := range []string{"a", "b", "c", "d", "r"} {
		w.create(ctx, n)
	}
}

func (w *podWriter) during(ctx context.Context) {
	w.gap(true)
	defer w.gap(false)
	w.update(ctx, "a")
	w.update(ctx, "a")
	w.delete(ctx, "b")
	w.create(ctx, "e")
	w.create(ctx, "tmp")
	w.delete(ctx, "tmp")
	w.delete(ctx, "r")
	w.create(ctx, "r")
}

func (w *podWriter) after(ctx context.Context) {
	w.update(ctx, "c")
	w.delete(ctx, "d")
	w.create(ctx, "f")
	w.update(ctx, "e")
}

// serverPods lists the pods of namespace as the server has them now, keyed as
// watchEvent.key.
func serverPods(ctx context.Context, t *testing.T, cs kubernetes.Interface, namespace string) map[string]objState {
	t.Helper()
	pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]objState{}
	for _, p := range pods.Items {
		out["Pod/"+namespace+"/"+p.Name] = objState{string(p.UID), p.ResourceVersion}
	}
	return out
}

// checkNoRepeats fails t for every event that prints a state, (uid, resourceVersion),
// that an earlier event printed. The one exception is a deletion found on relist, which
// carries the last state the feed knew, as the README says.
func checkNoRepeats(t *testing.T, events []watchEvent) {
	t.Helper()
	seen := map[string]int{}
	for i, ev := range events {
		id := ev.Object.Metadata.UID + "@" + ev.Object.Metadata.ResourceVersion
		if j, ok := seen[id]; ok && !(ev.Type == "DELETED" && ev.DetectedOnRelist) {
			t.Errorf("event %d (%v) prints the state event %d (%v) printed", i, ev, j, events[j])
		}
		seen[id] = i
	}
}

// feedFault is one fault a feed must survive.
type feedFault struct {
	// inject starts the fault; the writes made until recover are "during".
	inject func(t *testing.T, f *feedRun)
	// recover ends it (nil: it ends by itself).
	recover func(t *testing.T, f *feedRun)
	// mayRelist is set when the feed may have to list again after this fault rather
	// than resume its watch; then writes made during the fault may fold into later
	// states. mustRelist says it has to: no watch can resume after this fault, and the
	// deletion made during it must show as found on relist.
	mayRelist, mustRelist bool
}

// runFeedFault runs `kubectl-idx watch pods -n ns -o json` as the user of kubeconfig
// through fault, writing pods before, during and after it, and checks the feed: its
// events replayed end in the server's state, no state is printed twice, every write
// shows exactly once (writes during a fault that made the feed list again may fold into
// a later state or, created and deleted in the gap, not show at all), stderr says the
// watch reconnected, and the feed still prints changes made after the fault and exits
// 0 on SIGINT. extraEnv goes to the feed's environment.
func runFeedFault(t *testing.T, e *testenv.Env, kubeconfig, ns string, extraEnv []string, fault feedFault) {
	ctx := context.Background()
	createNamespace(ctx, t, e.Clientset, ns)
	// No namespace controller runs here: leave no pod behind for the tests that
	// compare whole-cluster answers with kubectl.
	t.Cleanup(func() {
		zero := int64(0)
		_ = e.Clientset.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	})
	w := newPodWriter(t, e.Clientset, ns)
	w.before(ctx)

	f := startFeedEnv(t, e, kubeconfig, extraEnv, "watch", "pods", "-n", ns, "-o", "json")
	caughtUp := func(what string) []watchEvent {
		t.Helper()
		server := serverPods(ctx, t, e.Clientset, ns)
		var events []watchEvent
		f.waitWithin(t, what, recoverWithin, func([]string, string) bool {
			events = f.events(t)
			return sameState(replay(&testing.T{}, events), server)
		})
		return events
	}
	caughtUp("initial state")
	// The reflector lists again, rather than resuming, a watch that ended within a
	// second of its start; let the watch get older than that, so that what the feed
	// does is the fault's doing.
	time.Sleep(1500 * time.Millisecond)
	start := len(f.snapshot())

	fault.inject(t, f)
	w.during(ctx)
	if fault.recover != nil {
		fault.recover(t, f)
	}
	f.waitWithin(t, "reconnect summary on stderr", recoverWithin, func(_ []string, stderr string) bool {
		return slices.Contains(reconnects(stderr), "pods")
	})
	w.after(ctx)
	events := caughtUp("the changes made after the fault")
	res := f.stop(t)

	// The checks, on every event printed.
	got := replay(t, events)
	if server := serverPods(ctx, t, e.Clientset, ns); !sameState(got, server) {
		t.Errorf("the feed's state differs from the server's:\n%s", describeStates(got, server))
	}
	checkNoRepeats(t, events)
	checkWritesReported(t, w.writes, events, func(wr write) bool {
		if !fault.mayRelist && !fault.mustRelist {
			return false
		}
		i := slices.IndexFunc(w.writes, func(x write) bool { return x == wr })
		return w.faulty[i]
	})
	warnings := stderrWarnings(t, res.Stderr)
	if !slices.Contains(reconnects(res.Stderr), "pods") {
		t.Errorf("stderr has no `warning: watch of pods reconnected after ...` line:\n%s", res.Stderr)
	}
	var since []string
	for _, ev := range events[start:] {
		since = append(since, ev.String())
	}
	if fault.mustRelist {
		// b was deleted in the gap: only a relist can find that out.
		var deleted []watchEvent
		for _, ev := range events[start:] {
			if ev.key() == w.key("b") && ev.Type == "DELETED" {
				deleted = append(deleted, ev)
			}
		}
		if len(deleted) != 1 || !deleted[0].DetectedOnRelist {
			t.Errorf("the deletion of b during the fault: %v, want one DELETED marked detectedOnRelist; the fault did not make the feed list again\nevents since the fault:\n%s",
				deleted, strings.Join(since, "\n"))
		}
	}
	t.Logf("%d writes, %d events (%d since the fault), stderr:\n%s", len(w.writes), len(events), len(events)-start, strings.Join(warnings, "\n"))
	if t.Failed() {
		t.Logf("events since the fault:\n%s", strings.Join(since, "\n"))
	}
}

// TestFaultFeed: a feed through a proxy that drops, resets or stalls its connections
// loses nothing, repeats nothing, says it reconnected and goes on.
func TestFaultFeed(t *testing.T) {
	t.Run("drop", func(t *testing.T) {
		t.Parallel()
		p, kc := newFaultProxy(t, env)
		runFeedFault(t, env, kc, "fault-drop", nil, feedFault{inject: func(*testing.T, *feedRun) { p.Drop() }})
	})
	t.Run("reset", func(t *testing.T) {
		t.Parallel()
		p, kc := newFaultProxy(t, env)
		runFeedFault(t, env, kc, "fault-reset", nil, feedFault{inject: func(*testing.T, *feedRun) { p.Reset() }})
	})
	t.Run("stall", func(t *testing.T) {
		t.Parallel()
		// The watch's liveness is client-go's HTTP/2 health check: a PING after
		// HTTP2_READ_IDLE_TIMEOUT_SECONDS (30) without a frame, and the connection closed
		// if no answer comes within HTTP2_PING_TIMEOUT_SECONDS (15). Shortened here to
		// 1 + 1 s. The stall lasts until the feed has said its watch is interrupted, which
		// it cannot know before the health check gives up; then the network comes back and
		// the feed must catch up. It may resume its watch or list again.
		p, kc := newFaultProxy(t, env)
		liveness := []string{"HTTP2_READ_IDLE_TIMEOUT_SECONDS=1", "HTTP2_PING_TIMEOUT_SECONDS=1"}
		var stalled time.Time
		runFeedFault(t, env, kc, "fault-stall", liveness, feedFault{
			inject: func(*testing.T, *feedRun) {
				p.Stall()
				stalled = time.Now()
			},
			recover: func(t *testing.T, f *feedRun) {
				// 2 s of liveness, 1 s before an outage is reported, and slack.
				f.waitWithin(t, "`watch of pods interrupted` during the stall", 15*time.Second, func(_ []string, stderr string) bool {
					return strings.Contains(stderr, "warning: watch of pods interrupted: ")
				})
				t.Logf("the feed reported the stall after %s", time.Since(stalled).Round(100*time.Millisecond))
				p.Unstall()
			},
			mayRelist: true,
		})
	})
}

// TestFaultFeedAPIServerRestart: kube-apiserver is killed under a feed and started
// again, and pods change before the feed is back: the proxy the feed goes through refuses
// it until then, as a load balancer would that has not seen the new server healthy yet. A
// write the feed does not watch, just before the kill, moves etcd's revision past the last
// one the feed saw; the new server's watch cache starts at the current revision, so the
// feed cannot resume its watch (410 Gone) and must list again.
func TestFaultFeedAPIServerRestart(t *testing.T) {
	t.Parallel()
	e := startOwnEnv(t, testenv.Options{RestartableAPIServer: true})
	p, kc := newFaultProxy(t, e)
	runFeedFault(t, e, kc, "fault-restart", nil, feedFault{
		inject: func(t *testing.T, _ *feedRun) {
			createNamespace(context.Background(), t, e.Clientset, "elsewhere")
			if err := p.Refuse(true); err != nil {
				t.Fatal(err)
			}
			if err := e.KillAPIServer(); err != nil {
				t.Fatal(err)
			}
			if err := e.StartAPIServer(); err != nil {
				t.Fatal(err)
			}
		},
		recover: func(t *testing.T, _ *feedRun) {
			if err := p.Refuse(false); err != nil {
				t.Fatal(err)
			}
		},
		mustRelist: true,
	})
}

// TestFaultFeedCompaction: the feed's connections are dropped and refused while pods
// change and etcd is compacted past the revision its watch would resume from. With the
// API server's watch cache off, the resumed watch gets 410 Gone and the feed must list
// again and print exactly what changed.
func TestFaultFeedCompaction(t *testing.T) {
	t.Parallel()
	e := startOwnEnv(t, testenv.Options{APIServerFlags: map[string][]string{"watch-cache": {"false"}}})
	p, kc := newFaultProxy(t, e)
	runFeedFault(t, e, kc, "fault-compaction", nil, feedFault{
		inject: func(t *testing.T, _ *feedRun) {
			if err := p.Refuse(true); err != nil {
				t.Fatal(err)
			}
			p.Drop()
		},
		recover: func(t *testing.T, _ *feedRun) {
			rev, err := e.CompactEtcd(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("etcd compacted at revision %d", rev)
			if err := p.Refuse(false); err != nil {
				t.Fatal(err)
			}
		},
		mustRelist: true,
	})
}
