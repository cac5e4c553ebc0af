package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// watchEvent is one line of `kubectl idx watch -o json`, as the README documents it.
type watchEvent struct {
	Type             string `json:"type"`
	Time             string `json:"time"`
	DetectedOnRelist bool   `json:"detectedOnRelist"`
	LeftScope        bool   `json:"leftScope"`
	Diff             []struct {
		Path string          `json:"path"`
		Old  json.RawMessage `json:"old"`
		New  json.RawMessage `json:"new"`
	} `json:"diff"`
	Object struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Namespace       string            `json:"namespace"`
			Name            string            `json:"name"`
			UID             string            `json:"uid"`
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"object"`
}

// key names the object of an event as kind/namespace/name.
func (e watchEvent) key() string {
	return e.Object.Kind + "/" + e.Object.Metadata.Namespace + "/" + e.Object.Metadata.Name
}

func (e watchEvent) String() string {
	rel := ""
	if e.DetectedOnRelist {
		rel = " (relist)"
	}
	if e.LeftScope {
		rel += " (left scope)"
	}
	return fmt.Sprintf("%s %s uid=%s rv=%s%s", e.Type, e.key(), e.Object.Metadata.UID, e.Object.Metadata.ResourceVersion, rel)
}

// events parses the lines so far as NDJSON events.
func (f *feedRun) events(t *testing.T) []watchEvent {
	t.Helper()
	return feedEvents[watchEvent](t, f.snapshot())
}

// objState is what the feed or the server says about one object.
type objState struct{ uid, rv string }

// replay applies events in order and checks what must hold of any feed: ADDED only for an
// object not present, MODIFIED and DELETED only for one present, MODIFIED only with a new
// resourceVersion, and no event reporting a state (uid, resourceVersion) twice.
func replay(t *testing.T, events []watchEvent) map[string]objState {
	t.Helper()
	state := map[string]objState{}
	seen := map[string]watchEvent{}
	for i, ev := range events {
		k := ev.key()
		id := ev.Type + " " + ev.Object.Metadata.UID + "@" + ev.Object.Metadata.ResourceVersion
		if prev, ok := seen[id]; ok {
			t.Errorf("event %d repeats %v", i, prev)
		}
		seen[id] = ev
		cur, present := state[k]
		switch ev.Type {
		case "ADDED":
			if present {
				t.Errorf("event %d: %v, but the feed already has %s (uid %s)", i, ev, k, cur.uid)
			}
			state[k] = objState{ev.Object.Metadata.UID, ev.Object.Metadata.ResourceVersion}
		case "MODIFIED":
			if !present {
				t.Errorf("event %d: %v of an object the feed does not have", i, ev)
			} else if cur.rv == ev.Object.Metadata.ResourceVersion {
				t.Errorf("event %d: %v repeats the state reported before", i, ev)
			}
			state[k] = objState{ev.Object.Metadata.UID, ev.Object.Metadata.ResourceVersion}
		case "DELETED":
			if !present {
				t.Errorf("event %d: %v of an object the feed does not have", i, ev)
			}
			delete(state, k)
		default:
			t.Errorf("event %d: unknown type %q", i, ev.Type)
		}
	}
	return state
}

// serverState lists configmaps and secrets in namespace as the server has them now, keyed
// as watchEvent.key, leaving out kube-root-ca.crt, which the API server creates.
func serverState(ctx context.Context, t *testing.T, cs kubernetes.Interface, namespace string, secrets bool) map[string]objState {
	t.Helper()
	out := map[string]objState{}
	cms, err := cs.CoreV1().ConfigMaps(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		out["ConfigMap/"+namespace+"/"+cm.Name] = objState{string(cm.UID), cm.ResourceVersion}
	}
	if secrets {
		ss, err := cs.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range ss.Items {
			out["Secret/"+namespace+"/"+s.Name] = objState{string(s.UID), s.ResourceVersion}
		}
	}
	return out
}

func sameState(a, b map[string]objState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func describeStates(feed, server map[string]objState) string {
	keys := map[string]bool{}
	for k := range feed {
		keys[k] = true
	}
	for k := range server {
		keys[k] = true
	}
	var lines []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		if feed[k] != server[k] {
			lines = append(lines, fmt.Sprintf("%s: feed %v, server %v", k, feed[k], server[k]))
		}
	}
	return strings.Join(lines, "\n")
}

// write is one change the test made, with the state it produced.
type write struct {
	op       string // create, update, delete
	key      string
	uid, rv  string
	duringUp bool // the feed could see it live (not during a gap the test made)
}

// writer creates, updates and deletes configmaps and records what each write produced.
type writer struct {
	t      *testing.T
	cs     kubernetes.Interface
	ns     string
	mu     sync.Mutex
	writes []write
	n      int
	// faulty marks the writes made while a fault lasted (see gap), which the feed may see
	// folded into a later state if it had to list again.
	faulty map[int]bool
	inGap  bool
}

func (w *writer) record(wr write) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inGap {
		w.faulty[len(w.writes)] = true
	}
	w.writes = append(w.writes, wr)
}

// gap marks the writes that follow as made during the fault, until gap(false); a writer
// that marks them is made with faulty set.
func (w *writer) gap(on bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inGap = on
}

func (w *writer) create(ctx context.Context, name string) {
	w.t.Helper()
	w.n++
	cm, err := w.cs.CoreV1().ConfigMaps(w.ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubectl-idx-e2e": "watch"}},
		Data:       map[string]string{"v": strconv.Itoa(w.n)},
	}, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("creating configmap %s: %v", name, err)
	}
	w.record(write{op: "create", key: "ConfigMap/" + w.ns + "/" + name, uid: string(cm.UID), rv: cm.ResourceVersion})
}

func (w *writer) update(ctx context.Context, name string) {
	w.t.Helper()
	w.n++
	patch := fmt.Sprintf(`{"data":{"v":%q}}`, strconv.Itoa(w.n))
	cm, err := w.cs.CoreV1().ConfigMaps(w.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		w.t.Fatalf("updating configmap %s: %v", name, err)
	}
	w.record(write{op: "update", key: "ConfigMap/" + w.ns + "/" + name, uid: string(cm.UID), rv: cm.ResourceVersion})
}

func (w *writer) delete(ctx context.Context, name string) {
	w.t.Helper()
	cm, err := w.cs.CoreV1().ConfigMaps(w.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatalf("reading configmap %s: %v", name, err)
	}
	if err := w.cs.CoreV1().ConfigMaps(w.ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &cm.UID}}); err != nil {
		w.t.Fatalf("deleting configmap %s: %v", name, err)
	}
	w.record(write{op: "delete", key: "ConfigMap/" + w.ns + "/" + name, uid: string(cm.UID)})
}

// checkWritesReported checks that every write shows in the feed exactly once: a create or
// update as the event carrying its resourceVersion, a delete as the DELETED of its UID. A
// write the feed could not see live (the watch was down, it relisted) may have been folded
// into a later state of the same object, as one MODIFIED; coalesced lists which may.
func checkWritesReported(t *testing.T, writes []write, events []watchEvent, coalesced func(write) bool) {
	t.Helper()
	for _, w := range writes {
		n := 0
		for _, ev := range events {
			if ev.Object.Metadata.UID != w.uid {
				continue
			}
			switch {
			case w.op == "delete" && ev.Type == "DELETED":
				n++
			case w.op != "delete" && ev.Type != "DELETED" && ev.Object.Metadata.ResourceVersion == w.rv:
				n++
			}
		}
		switch {
		case n == 1:
		case n == 0 && coalesced != nil && coalesced(w):
			t.Logf("%s %s@%s folded into a later state while the feed could not see it", w.op, w.key, w.rv)
		default:
			t.Errorf("%s %s (uid %s, rv %s) is reported %d times, want once", w.op, w.key, w.uid, w.rv, n)
		}
	}
}

// stderrWarnings returns stderr's lines after checking each is one of the feed's warnings.
func stderrWarnings(t *testing.T, stderr string) []string {
	t.Helper()
	lines := stderrLines(stderr)
	for _, l := range lines {
		if !strings.HasPrefix(l, "warning: watch of ") {
			t.Errorf("unexpected stderr line: %s", l)
		}
	}
	return lines
}

var reconnectedLine = regexp.MustCompile(`^warning: watch of (\S+) reconnected after \S+$`)

func reconnects(stderr string) []string {
	var out []string
	for _, l := range stderrLines(stderr) {
		if m := reconnectedLine.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestWatchSnapshotAndInterrupt: the feed starts with the current state as ADDED events, in
// namespace/name order, then runs until SIGINT, which ends it with exit code 0.
func TestWatchSnapshotAndInterrupt(t *testing.T) {
	want := as("").kubectl(t, "get", "pods", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}")
	mustSucceed(t, "kubectl get pods", want)
	names := strings.Fields(want.Stdout)

	f := startFeed(t, env, env.Kubeconfig, "watch", "pods", "-A", "-o", "json")
	f.waitFor(t, "the initial state", func(lines []string, _ string) bool { return len(lines) >= len(names) })
	res := f.interrupt(t)
	if res.Stderr != "" {
		t.Errorf("stderr not empty:\n%s", res.Stderr)
	}
	var got []string
	for _, ev := range f.events(t) {
		if ev.Type != "ADDED" || ev.Object.Kind != "Pod" {
			t.Errorf("initial event %v, want ADDED Pod", ev)
		}
		got = append(got, ev.Object.Metadata.Namespace+"/"+ev.Object.Metadata.Name)
	}
	if !slices.Equal(got, names) {
		t.Errorf("initial events name\n%s\nwant (kubectl get)\n%s", strings.Join(got, "\n"), strings.Join(names, "\n"))
	}
}

// TestWatchTable: the table starts with TIME EVENT KIND NAMESPACE NAME and the kind's
// columns, one header per kind. SIGTERM ends the feed with exit code 0.
func TestWatchTable(t *testing.T) {
	f := startFeed(t, env, env.Kubeconfig, "watch", "deploy,svc", "-n", fixtures.Shop)
	f.waitFor(t, "both tables", func(lines []string, _ string) bool {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "TIME ") {
				n++
			}
		}
		return n == 2 && !strings.HasPrefix(lines[len(lines)-1], "TIME ")
	})
	f.signal(t, syscall.SIGTERM)
	lines := f.snapshot()
	deployHeader := regexp.MustCompile(`^TIME +EVENT +KIND +NAMESPACE +NAME +READY +UP-TO-DATE +AVAILABLE +AGE$`)
	svcHeader := regexp.MustCompile(`^TIME +EVENT +KIND +NAMESPACE +NAME +TYPE +CLUSTER-IP +EXTERNAL-IP +PORT\(S\) +AGE$`)
	row := regexp.MustCompile(`^\d\d:\d\d:\d\d +ADDED +(Deployment|Service) +shop +\S+ +`)
	if !deployHeader.MatchString(lines[0]) {
		t.Errorf("first line %q is not the Deployment header", lines[0])
	}
	var sawSvc bool
	for _, l := range lines[1:] {
		switch {
		case l == "":
		case svcHeader.MatchString(l):
			sawSvc = true
		case !row.MatchString(l):
			t.Errorf("line %q is not an ADDED row", l)
		}
	}
	if !sawSvc {
		t.Errorf("no Service header in\n%s", strings.Join(lines, "\n"))
	}
}

// TestWatchPipedIntoHead: `kubectl idx watch ... | head -3` ends as soon as head has its
// lines, with exit code 0 and nothing on stderr, although no event follows the snapshot.
// It goes through kubectl's plugin discovery.
func TestWatchPipedIntoHead(t *testing.T) {
	start := time.Now()
	res := as("").shell(t, "kubectl idx watch pods -A | head -3")
	mustSucceed(t, "kubectl idx watch pods -A | head -3", res)
	if n := len(strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")); n != 3 {
		t.Errorf("head printed %d lines, want 3:\n%s", n, res.Stdout)
	}
	if res.Stderr != "" {
		t.Errorf("stderr not empty:\n%s", res.Stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the pipeline took %s to end after head was done", d)
	}
}

// TestWatchOwner: --owner deployment/web feeds the pods of the Deployment's ReplicaSets and
// nothing else.
func TestWatchOwner(t *testing.T) {
	want := map[string]bool{}
	for _, p := range cluster.WebPods {
		want[p] = true
	}
	if len(want) == 0 {
		t.Fatal("fixture problem: no pods of Deployment web in shop")
	}
	f := startFeed(t, env, env.Kubeconfig, "watch", "pods", "-n", fixtures.Shop, "--owner", "deployment/web", "-o", "name")
	f.waitFor(t, "the pods of web", func(lines []string, _ string) bool { return len(lines) >= len(want) })
	// Give anything that should not be there a moment to show.
	time.Sleep(time.Second)
	res := f.interrupt(t)
	if res.Stderr != "" {
		t.Errorf("stderr not empty:\n%s", res.Stderr)
	}
	var got []string
	for _, l := range f.snapshot() {
		got = append(got, strings.TrimPrefix(l, "pod/"))
	}
	if len(got) != len(want) {
		t.Errorf("fed %v, want the %d pods of web", got, len(want))
	}
	for _, n := range got {
		if !want[n] {
			t.Errorf("fed %s, which web does not own", n)
		}
	}
}

// TestWatchAcrossExpirations creates, updates and deletes objects for about a minute on an
// API server without a watch cache whose etcd is compacted every two seconds, while each
// watch request ends after three seconds (--request-timeout). Watches expire a dozen times;
// after quiet periods the resource version to resume from is compacted away, the server
// answers 410 Gone and the informer lists again. The feed must report every change exactly
// once, never repeat itself, and end in the server's state.
//
// kube-apiserver's --min-request-timeout cannot shorten these watches: client-go's reflector
// always sends timeoutSeconds (5 to 10 minutes), which the server honours over its own
// default. --request-timeout, the client-side bound kubectl already offers, does it.
func TestWatchAcrossExpirations(t *testing.T) {
	ctx := context.Background()
	e := startOwnEnv(t, testenv.Options{APIServerFlags: map[string][]string{
		"watch-cache":              {"false"},
		"etcd-compaction-interval": {"2s"},
	}})
	for _, ns := range []string{"feed", "churn"} {
		createNamespace(ctx, t, e.Clientset, ns)
	}
	// Churn in another namespace moves etcd's revision on, so that resuming a quiet watch
	// needs history the compaction removed.
	stopChurn := churn(ctx, t, e.Clientset, "churn")
	defer stopChurn()

	w := &writer{t: t, cs: e.Clientset, ns: "feed"}
	w.create(ctx, "marker")
	for i := range 5 {
		w.create(ctx, fmt.Sprintf("cm-%d", i))
	}
	f := startFeed(t, e, e.Kubeconfig, "watch", "configmaps", "-n", "feed", "-o", "json", "--diff", "--request-timeout=3s")
	f.waitFor(t, "the initial state", func(lines []string, _ string) bool { return len(lines) >= 6 })

	// reported waits until the feed has shown the state of the last write.
	reported := func(what string) {
		t.Helper()
		last := w.writes[len(w.writes)-1]
		f.waitFor(t, what, func([]string, string) bool {
			return slices.ContainsFunc(f.events(t), func(ev watchEvent) bool {
				return ev.Object.Metadata.UID == last.uid && (last.op == "delete" || ev.Object.Metadata.ResourceVersion == last.rv)
			})
		})
	}
	next := 5
	deleted := map[string]bool{}
	for round := range 4 {
		// Make the changes while the watch is up (the marker is through), so that every
		// one of them must show; the informer may relist before, after and between rounds.
		w.update(ctx, "marker")
		reported(fmt.Sprintf("the marker of round %d", round))
		for range 3 {
			w.create(ctx, fmt.Sprintf("cm-%d", next))
			next++
		}
		for i := round; i < next; i += 2 {
			if name := fmt.Sprintf("cm-%d", i); !deleted[name] {
				w.update(ctx, name)
			}
		}
		w.delete(ctx, fmt.Sprintf("cm-%d", next-2))
		deleted[fmt.Sprintf("cm-%d", next-2)] = true
		// Same name, new object.
		w.delete(ctx, fmt.Sprintf("cm-%d", next-1))
		w.create(ctx, fmt.Sprintf("cm-%d", next-1))
		reported(fmt.Sprintf("the changes of round %d", round))
		// Quiet: watches end, the feed resumes or relists.
		time.Sleep(8 * time.Second)
	}

	server := serverState(ctx, t, e.Clientset, "feed", false)
	var events []watchEvent
	f.waitFor(t, "the feed to reach the server's state", func([]string, string) bool {
		events = f.events(t)
		return sameState(replay(&testing.T{}, events), server)
	})
	res := f.interrupt(t)
	got := replay(t, events)
	if !sameState(got, server) {
		t.Errorf("the feed's state differs from the server's:\n%s", describeStates(got, server))
	}
	warnings := stderrWarnings(t, res.Stderr)
	if len(reconnects(res.Stderr)) == 0 {
		t.Errorf("no watch was resumed by a relist; the test did not test what it says (stderr: %q)", warnings)
	}
	checkWritesReported(t, w.writes, events, nil)
	for _, ev := range events {
		if ev.Type != "MODIFIED" {
			continue
		}
		if len(ev.Diff) != 1 || ev.Diff[0].Path != ".data.v" {
			t.Errorf("%v: diff %+v, want the one change of .data.v", ev, ev.Diff)
		}
	}
	t.Logf("%d writes, %d events, stderr:\n%s", len(w.writes), len(events), strings.Join(warnings, "\n"))
}

// TestWatchAPIServerRestart restarts kube-apiserver on the same etcd under a running feed,
// changing objects right after; then stops the feed (SIGSTOP, as a laptop lid would), kills
// kube-apiserver, starts it again and changes objects the feed cannot see before it resumes. The feed says it reconnected and reports exactly what changed: deletions found
// on relist as DELETED marked detectedOnRelist, each changed object as one MODIFIED, new ones
// as ADDED, an object deleted and created again under its name as DELETED then ADDED.
func TestWatchAPIServerRestart(t *testing.T) {
	ctx := context.Background()
	// Without a bound, a graceful stop waits minutes for the clients' watches to end.
	e := startOwnEnv(t, testenv.Options{RestartableAPIServer: true, APIServerFlags: map[string][]string{
		"shutdown-watch-termination-grace-period": {"2s"},
	}})
	createNamespace(ctx, t, e.Clientset, "feed")
	w := &writer{t: t, cs: e.Clientset, ns: "feed"}
	for _, n := range []string{"a", "b", "c", "d", "r"} {
		w.create(ctx, n)
	}
	secret := func(name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"k": "v"}}
	}
	if _, err := e.Clientset.CoreV1().Secrets("feed").Create(ctx, secret("s1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	f := startFeed(t, e, e.Kubeconfig, "watch", "configmaps,secrets", "-n", "feed", "-o", "json")
	caughtUp := func(what string) []watchEvent {
		t.Helper()
		server := serverState(ctx, t, e.Clientset, "feed", true)
		var events []watchEvent
		f.waitFor(t, what, func([]string, string) bool {
			events = f.events(t)
			return sameState(replay(&testing.T{}, events), server)
		})
		return events
	}
	caughtUp("the initial state")

	// Phase 1: a graceful restart under a running feed, then changes as soon as the server
	// is back. They may reach the feed live or through a relist: each must show once.
	if err := e.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := e.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	w.update(ctx, "a")
	w.delete(ctx, "b")
	w.create(ctx, "e")
	caughtUp("the changes after the restart")
	f.waitFor(t, "the reconnect warnings", func(_ []string, stderr string) bool {
		return len(reconnects(stderr)) >= 2
	})
	phase1 := len(f.snapshot())

	// Phase 2: the feed sleeps through a crash and changes it cannot see. A write it does
	// not watch moves the revision past the last one the feed saw, so the restarted server's
	// fresh watch cache cannot resume its watches (410 Gone) and the informers list again.
	// (A graceful stop could hand the sleeping feed a bookmark with the latest revision.)
	if err := f.proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	createNamespace(ctx, t, e.Clientset, "elsewhere")
	if err := e.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := e.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	gap := len(w.writes)
	w.delete(ctx, "c")
	w.update(ctx, "d")
	w.create(ctx, "f")
	w.delete(ctx, "r")
	w.create(ctx, "r")
	if err := e.Clientset.CoreV1().Secrets("feed").Delete(ctx, "s1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	events := caughtUp("the changes made while the feed slept")
	f.waitFor(t, "the reconnect warnings after the second restart", func(_ []string, stderr string) bool {
		return len(reconnects(stderr)) >= 4
	})

	replay(t, events)
	checkWritesReported(t, w.writes, events, nil)
	var after []string
	for _, ev := range events[phase1:] {
		after = append(after, ev.String())
	}
	byKey := map[string][]watchEvent{}
	for _, ev := range events[phase1:] {
		byKey[ev.key()] = append(byKey[ev.key()], ev)
	}
	expect := func(key string, want ...string) {
		t.Helper()
		var got []string
		for _, ev := range byKey[key] {
			s := ev.Type
			if ev.DetectedOnRelist {
				s += " relist"
			}
			got = append(got, s)
		}
		if !slices.Equal(got, want) {
			t.Errorf("after the second restart %s: %v, want %v\nall events after it:\n%s", key, got, want, strings.Join(after, "\n"))
		}
	}
	expect("ConfigMap/feed/c", "DELETED relist")
	expect("ConfigMap/feed/d", "MODIFIED")
	expect("ConfigMap/feed/f", "ADDED")
	expect("ConfigMap/feed/r", "DELETED relist", "ADDED")
	expect("Secret/feed/s1", "DELETED relist")
	for _, k := range []string{"ConfigMap/feed/a", "ConfigMap/feed/e", "ConfigMap/feed/kube-root-ca.crt"} {
		expect(k)
	}
	for _, wr := range w.writes[gap:] {
		if wr.op == "update" {
			// One MODIFIED, carrying the state after the write.
			if ev := byKey[wr.key]; len(ev) != 1 || ev[0].Object.Metadata.ResourceVersion != wr.rv {
				t.Errorf("%s: %v, want one MODIFIED at rv %s", wr.key, ev, wr.rv)
			}
		}
	}

	t.Run("README recipes", func(t *testing.T) { checkWatchRecipes(ctx, t, e) })
	t.Run("owner follows new ReplicaSets", func(t *testing.T) { checkOwnerRollout(ctx, t, e) })

	res := f.interrupt(t)
	warnings := stderrWarnings(t, res.Stderr)
	got := reconnects(res.Stderr)
	for _, r := range []string{"configmaps", "secrets"} {
		if n := strings.Count(strings.Join(got, " "), r); n < 2 {
			t.Errorf("stderr says %d times that the watch of %s reconnected, want at least 2 (one per restart):\n%s", n, r, strings.Join(warnings, "\n"))
		}
	}
	t.Logf("stderr:\n%s", strings.Join(warnings, "\n"))
}

// checkWatchRecipes runs docs/watch.md's change feed recipes, as written, through bash and real
// jq with kubectl-idx discovered as `kubectl idx`, against a change the test makes.
func checkWatchRecipes(ctx context.Context, t *testing.T, e *testenv.Env) {
	recipes := watchRecipes(t)
	if len(recipes) == 0 {
		t.Fatal("docs/watch.md has no change feed recipes")
	}
	bin, err := e.PluginPath(binary)
	if err != nil {
		t.Fatal(err)
	}
	for i, rc := range recipes {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			p, err := testenv.StartProcess(ctx, testenv.Cmd{
				Path: "bash", Args: []string{"-o", "pipefail", "-c", rc}, Env: e.Environ(e.Kubeconfig, bin), Timeout: 2 * time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Kill)
			var out []string
			done := make(chan struct{})
			go func() {
				defer close(done)
				for l := range p.Lines {
					out = append(out, l.Text)
				}
			}()
			// Let the feed sync before changing anything, with --watch-only recipes too.
			time.Sleep(3 * time.Second)
			// A bare pod with a node needs no scheduler, and no kubelet holds its deletion
			// up with grace period 0.
			name := fmt.Sprintf("recipe-%d", i)
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "recipe"}},
				Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
			}
			if _, err := e.Clientset.CoreV1().Pods("feed").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			patch := `{"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}}`
			if _, err := e.Clientset.CoreV1().Pods("feed").Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := e.Clientset.CoreV1().Pods("feed").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
				t.Fatal(err)
			}
			// jq buffers its output in a pipe until it ends: give the feed time to print,
			// then end it.
			time.Sleep(3 * time.Second)
			// End the feed alone, as Ctrl-C would: jq then sees the end of its input.
			pid, err := childNamed(p.Pid(), "kubectl-idx")
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			res, err := p.Wait(30 * time.Second)
			<-done
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("%s: %v\n%s", rc, err, res)
			}
			got := strings.Join(out, "\n")
			// Recipes about relists print nothing here: no watch is interrupted.
			if strings.Contains(rc, "detectedOnRelist") == strings.Contains(got, name) {
				t.Errorf("%s printed:\n%s", rc, got)
			}
			if stderr := dropDetectorNotice(res.Stderr); stderr != "" {
				t.Errorf("stderr not empty:\n%s", stderr)
			}
			t.Logf("%s\n%s", rc, got)
		})
	}
}

// watchRecipes returns the commands of docs/watch.md that pipe
// `kubectl idx watch` into jq, with continuation lines joined.
func watchRecipes(t *testing.T) []string {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "watch.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(data)
	var out []string
	sc := bufio.NewScanner(strings.NewReader(section))
	var cur string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur != "" {
			cur += " " + strings.TrimSuffix(line, "\\")
		} else if strings.HasPrefix(line, "kubectl idx watch ") {
			cur = strings.TrimSuffix(line, "\\")
		}
		if cur != "" && !strings.HasSuffix(line, "\\") {
			if strings.Contains(cur, "| jq") {
				out = append(out, strings.Join(strings.Fields(cur), " "))
			}
			cur = ""
		}
	}
	return out
}

// childNamed returns the pid of the child of parent whose command name is name.
func childNamed(parent int, name string) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		children, err := testenv.Children(parent)
		if err != nil {
			return 0, err
		}
		for _, c := range children {
			if c.Name == name {
				return c.PID, nil
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("no child %s of %d", name, parent)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkOwnerRollout: with --owner deployment/app, a ReplicaSet created later (a rollout) and
// its pods are fed as they appear; pods owned by something else are not. The test plays the
// controllers, which envtest does not run.
func checkOwnerRollout(ctx context.Context, t *testing.T, e *testenv.Env) {
	cs := e.Clientset
	labels := map[string]string{"app": "app"}
	deploy, err := cs.AppsV1().Deployments("feed").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(apiVersion, kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
	}
	newRS := func(name string) *appsv1.ReplicaSet {
		rs, err := cs.AppsV1().ReplicaSets("feed").Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: ref("apps/v1", "Deployment", "app", deploy.UID)},
			Spec: appsv1.ReplicaSetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: deploy.Spec.Template,
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	newPod := func(name string, owner []metav1.OwnerReference) {
		_, err := cs.CoreV1().Pods("feed").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, OwnerReferences: owner},
			Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	rs1 := newRS("app-1")
	newPod("app-1-a", ref("apps/v1", "ReplicaSet", "app-1", rs1.UID))

	f := startFeed(t, e, e.Kubeconfig, "watch", "pods,rs", "-n", "feed", "--owner", "deployment/app", "-o", "name")
	f.waitFor(t, "the initial state", func(lines []string, _ string) bool { return len(lines) >= 2 })
	// The rollout: a new ReplicaSet and its pods, created as the controllers would, one
	// right after the other; and a pod nobody owns.
	rs2 := newRS("app-2")
	newPod("app-2-a", ref("apps/v1", "ReplicaSet", "app-2", rs2.UID))
	newPod("app-2-b", ref("apps/v1", "ReplicaSet", "app-2", rs2.UID))
	newPod("stray", nil)
	f.waitFor(t, "the new ReplicaSet's pods", func(lines []string, _ string) bool { return len(lines) >= 5 })
	time.Sleep(time.Second)
	res := f.interrupt(t)
	if res.Stderr != "" {
		t.Errorf("stderr not empty:\n%s", res.Stderr)
	}
	// The initial state comes first, in order; then the new ReplicaSet and its pods, whose
	// order between the two informers is the watches' to decide.
	got := f.snapshot()
	if len(got) > 2 {
		slices.Sort(got[2:])
	}
	want := []string{"pod/app-1-a", "replicaset.apps/app-1", "pod/app-2-a", "pod/app-2-b", "replicaset.apps/app-2"}
	if !slices.Equal(got, want) {
		t.Errorf("fed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// startOwnEnv starts a control plane for one test, stopped when it ends.
func startOwnEnv(t *testing.T, opts testenv.Options) *testenv.Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := testenv.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// parallelNamespace marks t parallel and creates namespace ns as env's admin, whose clientset
// it returns with the context of the test's requests.
func parallelNamespace(t *testing.T, ns string) (context.Context, kubernetes.Interface) {
	t.Helper()
	t.Parallel()
	ctx := context.Background()
	createNamespace(ctx, t, env.Clientset, ns)
	return ctx, env.Clientset
}

func createNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// churn updates a configmap in namespace every 100ms until the returned function is called.
func churn(ctx context.Context, t *testing.T, cs kubernetes.Interface, namespace string) func() {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "churn"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			patch := fmt.Sprintf(`{"data":{"n":"%d"}}`, i)
			// Errors are fine: only the revision moving on matters.
			_, _ = cs.CoreV1().ConfigMaps(namespace).Patch(ctx, cm.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		}
	}()
	return func() {
		close(stop)
		<-done
	}
}
