package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/internal/pipe"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/golden"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/syncbuf"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

func TestWatchFlagsAndValidation(t *testing.T) {
	runFlagCases(t, []flagCase{
		{
			name: "no arguments", args: []string{"watch"},
			wantErr: `you must specify the type of resource to watch; use "kubectl api-resources" for a complete list of supported resources`,
		},
		{
			name: "unknown output format", args: []string{"watch", "pods", "-o", "table"},
			wantErr: `unable to match a printer suitable for the output format "table", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml`,
		},
		{
			name: "custom columns cannot be printed per event", args: []string{"watch", "pods", "-o", "custom-columns=NAME:.metadata.name"},
			wantErr: `unable to match a printer suitable for the output format "custom-columns=NAME:.metadata.name", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml`,
		},
		{name: "jsonpath without template", args: []string{"watch", "pods", "-o", "jsonpath"}, wantErr: "template format specified but no template given"},
		{name: "sort-by is get's", args: []string{"watch", "pods", "--sort-by", ".metadata.name"}, wantErr: "unknown flag: --sort-by"},
		{
			name: "owner without a name", args: []string{"watch", "pods", "--owner", "deployment"}, discovery: true,
			wantErr: `--owner must be TYPE/NAME, e.g. deployment/web, got "deployment"`,
		},
		{name: "owner of an unknown type", args: []string{"watch", "pods", "--owner", "podz/web"}, discovery: true, wantErr: `the server doesn't have a resource type "podz"`},
		{
			name: "namespaced owner across all namespaces", args: []string{"watch", "pods", "-A", "--owner", "deploy/web"}, discovery: true,
			wantErr: "--owner deploy/web names a namespaced object: use it with --namespace, not --all-namespaces",
		},
		{
			name: "diff with names", args: []string{"watch", "pods", "--diff", "-o", "name"}, discovery: true,
			wantErr: "--diff cannot be used with -o name: names carry no fields; use -o json or the default table",
		},
		{
			name: "name across all namespaces", args: []string{"watch", "pods", "web-0", "-A"}, discovery: true,
			wantErr: "a resource cannot be retrieved by name across all namespaces",
		},
		{
			name: "malformed label selector", args: []string{"watch", "pods", "-l", "app in (web"}, discovery: true,
			wantErr: `invalid label selector "app in (web": unable to parse requirement: found '', expected: ',' or ')'`,
		},
		{
			name: "negative sync timeout", args: []string{"watch", "pods", "--sync-timeout=-1s"}, discovery: true,
			wantErr: "--sync-timeout must not be negative, got -1s",
		},
		{name: "unknown type", args: []string{"watch", "podz"}, discovery: true, wantErr: `the server doesn't have a resource type "podz"`},
	})
}

// watchHarness is a WatchOptions wired to fakes, run in the background.
type watchHarness struct {
	o      *WatchOptions
	server *fakeapi.Server
	out    *syncbuf.Buffer
	errOut *syncbuf.Buffer
	cancel context.CancelFunc
	done   chan error
}

// watchFlags are the flags of one Run case; the zero value is `kubectl idx watch <args>`
// in namespace shop.
type watchFlags struct {
	format, template string
	watchOnly, diff  bool
	owner            string
	allNamespaces    bool
	showOwner        bool
	where            []string
	checkpoint       string
	selector         string
	// kubeSystem is the UID of namespace kube-system; without it, the
	// namespace is not found, or forbidden with kubeSystemForbidden.
	kubeSystem          types.UID
	kubeSystemForbidden bool
}

// startWatch runs `kubectl idx watch args` on s until the test ends or stop is called.
func startWatch(t *testing.T, s *fakeapi.Server, args []string, f watchFlags) *watchHarness {
	t.Helper()
	h := &watchHarness{server: s, out: &syncbuf.Buffer{}, errOut: &syncbuf.Buffer{}, done: make(chan error, 1)}
	o := NewWatchOptions(nil, genericiooptions.IOStreams{In: strings.NewReader(""), Out: h.out, ErrOut: h.errOut})
	*o.PrintFlags.OutputFormat = f.format
	*o.PrintFlags.TemplateFlags.TemplateArgument = f.template
	o.WatchOnly, o.Diff, o.Owner, o.AllNamespaces, o.ShowOwner = f.watchOnly, f.diff, f.owner, f.allNamespaces, f.showOwner
	o.Where = f.where
	o.Checkpoint, o.LabelSelector = f.checkpoint, f.selector
	o.SyncTimeout = 20 * time.Second
	ns := "shop"
	if f.allNamespaces {
		ns = ""
	}
	// The owner lookups need ReplicaSets, which the shared test discovery
	// lacks: fakeTarget's mapper knows them.
	target := fakeTarget(t, "", s, ns)
	target.GetMetadata = func(_ context.Context, res informer.Resource, namespace, name string) (metav1.Object, error) {
		if name == "web" && namespace == "shop" {
			return &metav1.ObjectMeta{Name: name, Namespace: namespace, UID: "uid-deploy-web"}, nil
		}
		if res.GVR.Resource == "namespaces" && name == "kube-system" {
			switch {
			case f.kubeSystemForbidden:
				return nil, apierrors.NewForbidden(res.GVR.GroupResource(), name, errors.New(`User "jane" cannot get resource "namespaces"`))
			case f.kubeSystem != "":
				return &metav1.ObjectMeta{Name: name, UID: f.kubeSystem}, nil
			}
		}
		return nil, apierrors.NewNotFound(res.GVR.GroupResource(), name)
	}
	o.resolved = []query.Target{target}
	if err := o.Complete(nil, args); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	h.o = o
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.cancel = cancel
	go func() { h.done <- o.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-h.done
	})
	return h
}

// waitOut waits until stdout has n lines.
func (h *watchHarness) waitOut(t *testing.T, n int) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := h.out.String()
		if strings.Count(out, "\n") >= n {
			return out
		}
		select {
		case err := <-h.done:
			h.done <- err
			t.Fatalf("Run ended with %v while waiting for %d lines:\n%s", err, n, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d lines of output:\n%s\nstderr:\n%s", n, out, h.errOut)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// finish waits until stdout has n lines, and rest more (time for lines that
// must not come), then ends Run as SIGINT would, which must return nil; it
// returns all Run printed.
func (h *watchHarness) finish(t *testing.T, n int, rest time.Duration) string {
	t.Helper()
	h.waitOut(t, n)
	time.Sleep(rest)
	if err := h.stop(); err != nil {
		t.Fatalf("Run = %v, want nil after the context ends", err)
	}
	return h.out.String()
}

// setCronSpec sets the crontab name's spec.cronSpec to spec, at
// resourceVersion rv: the fake server keeps the one it is given.
func setCronSpec(t *testing.T, crontabs dynamic.ResourceInterface, name, spec, rv string) {
	t.Helper()
	u, err := crontabs.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.SetResourceVersion(rv)
	if err := unstructured.SetNestedField(u.Object, spec, "spec", "cronSpec"); err != nil {
		t.Fatal(err)
	}
	if _, err := crontabs.Update(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// stop ends Run as SIGINT would and returns its error.
func (h *watchHarness) stop() error {
	h.cancel()
	err := <-h.done
	h.done <- err
	return err
}

var clock = regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d `)

// maskClock replaces the TIME cells, the time events arrived, with a constant.
func maskClock(s string) string { return clock.ReplaceAllString(s, "HH:MM:SS ") }

func TestWatchRunTable(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	h := startWatch(t, s, []string{"pods,svc,ct"}, watchFlags{})
	h.finish(t, 10, 0)
	golden.Assert(t, "testdata/watch_pods_services_crontabs.golden", maskClock(h.out.String()))
	if h.errOut.String() != "" {
		t.Errorf("stderr = %q", h.errOut)
	}
}

// TestWatchRunShowOwner: --show-owner ends each row of the watch table with
// the object's top-level controller.
func TestWatchRunShowOwner(t *testing.T) {
	s := fakeapi.New(nil, fixtures.OwnerObjects()...)
	h := startWatch(t, s, []string{"pods"}, watchFlags{showOwner: true})
	h.finish(t, 9, 0)
	got := map[string]string{}
	for i, line := range strings.Split(strings.TrimSpace(h.out.String()), "\n") {
		f := strings.Fields(line)
		if i == 0 {
			if f[len(f)-1] != "OWNER" {
				t.Fatalf("header %q does not end with OWNER", line)
			}
			continue
		}
		got[f[4]] = f[len(f)-1]
	}
	for pod, owner := range map[string]string{"web-5d4-aaaaa": "Deployment/web", "orphan-ddddd": "ReplicaSet/gone-6b8", "debug": "<none>"} {
		if got[pod] != owner {
			t.Errorf("%s: OWNER %q, want %q\n%s", pod, got[pod], owner, h.out.String())
		}
	}
}

// jsonLines decodes each line of out, JSON lines as -o json prints them, as an E.
func jsonLines[E any](t *testing.T, out string) []E {
	t.Helper()
	var evs []E
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev E
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON line: %v\n%s", err, line)
		}
		evs = append(evs, ev)
	}
	return evs
}

// TestWatchRunLiveEvents changes custom resources through the dynamic fake, whose watch
// delivers events, and reads them back as JSON lines.
func TestWatchRunLiveEvents(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	h := startWatch(t, s, []string{"ct"}, watchFlags{format: "json", diff: true})
	h.waitOut(t, 2)
	ctx := context.Background()
	crontabs := s.Dynamic.Resource(fixtures.CronTabs.GVR).Namespace("shop")
	created := fixtures.CronTab("shop", "hourly", "0 * * * *")
	created.SetResourceVersion("100")
	if _, err := crontabs.Create(ctx, created, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setCronSpec(t, crontabs, "hourly", "30 * * * *", "101")
	if err := crontabs.Delete(ctx, "nightly", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range jsonLines[struct {
		Type   string `json:"type"`
		Time   string `json:"time"`
		Diff   []map[string]any
		Object struct {
			Kind     string
			Metadata struct{ Name string }
		}
	}](t, h.finish(t, 5, 0)) {
		if _, err := time.Parse(time.RFC3339Nano, ev.Time); err != nil {
			t.Errorf("time %q: %v", ev.Time, err)
		}
		s := fmt.Sprintf("%s %s/%s", ev.Type, ev.Object.Kind, ev.Object.Metadata.Name)
		for _, c := range ev.Diff {
			s += fmt.Sprintf(" %v: %v -> %v", c["path"], c["old"], c["new"])
		}
		got = append(got, s)
	}
	want := []string{
		"ADDED CronTab/every-5m", "ADDED CronTab/nightly",
		"ADDED CronTab/hourly",
		"MODIFIED CronTab/hourly .spec.cronSpec: 0 * * * * -> 30 * * * *",
		"DELETED CronTab/nightly",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWatchRunWatchOnlyTemplate(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	h := startWatch(t, s, []string{"ct"}, watchFlags{format: "jsonpath", template: "{.type} {.object.metadata.name}", watchOnly: true})
	// Nothing is printed for the current state; wait for the feed to be up, then change.
	deadline := time.Now().Add(10 * time.Second)
	for len(s.Dynamic.Actions()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if err := s.Dynamic.Resource(fixtures.CronTabs.GVR).Namespace("shop").Delete(context.Background(), "every-5m", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := h.waitOut(t, 1); got != "DELETED every-5m\n" {
		t.Errorf("stdout = %q, want only the deletion", got)
	}
}

func TestWatchRunOwner(t *testing.T) {
	ref := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}}
	}
	rs := func(name, uid, owner string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(uid), OwnerReferences: ref("Deployment", owner, "uid-deploy-"+owner)}}
	}
	owned := func(p *corev1.Pod, rsName, rsUID string) *corev1.Pod {
		p.OwnerReferences = ref("ReplicaSet", rsName, rsUID)
		return p
	}
	objects := []runtime.Object{
		rs("web-1", "uid-rs-web-1", "web"),
		rs("web-2", "uid-rs-web-2", "web"),
		rs("api-1", "uid-rs-api-1", "api"),
		owned(fixtures.Pod("shop", "web-1-a", "web", true), "web-1", "uid-rs-web-1"),
		owned(fixtures.Pod("shop", "web-2-a", "web", true), "web-2", "uid-rs-web-2"),
		owned(fixtures.Pod("shop", "api-1-a", "api", true), "api-1", "uid-rs-api-1"),
		fixtures.Pod("shop", "bare", "web", true),
	}
	s := fakeapi.New(nil, objects...)
	h := startWatch(t, s, []string{"pods"}, watchFlags{format: "name", owner: "deployment/web"})
	if got, want := h.finish(t, 2, 200*time.Millisecond), "pod/web-1-a\npod/web-2-a\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestWatchRunOwnerNotFound(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	h := startWatch(t, s, []string{"pods"}, watchFlags{owner: "deployment/gone"})
	err := <-h.done
	h.done <- err
	if got := errtext.Format(err); got != `Error from server (NotFound): deployments.apps "gone" not found` {
		t.Errorf("error = %s", got)
	}
}

// TestWatchRunEndsWhenStdoutCloses: a reader that went away ends the feed
// quietly, though the feed has nothing more to print.
func TestWatchRunEndsWhenStdoutCloses(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if pipe.ReaderGone(w) == nil {
		t.Skip("this system does not report a pipe's departed reader")
	}
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	o := NewWatchOptions(nil, genericiooptions.IOStreams{Out: w, ErrOut: &syncbuf.Buffer{}})
	o.resolved = []query.Target{fakeTarget(t, "", s, "shop")}
	if err := o.Complete(nil, []string{"pods"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- o.Run(context.Background()) }()
	var out []byte
	buf := make([]byte, 4096)
	if err := r.SetReadDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(string(out), "web-1") {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("reading stdout: %v", err)
		}
		out = append(out, buf[:n]...)
	}
	r.Close()
	select {
	case err := <-done:
		// The feed ends as the reader's departure is seen, or at its next
		// write, which Execute takes for a quiet end.
		if err != nil && !errors.Is(err, syscall.EPIPE) {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end after stdout closed")
	}
}

func TestWatchWarnings(t *testing.T) {
	var errOut strings.Builder
	o := NewWatchOptions(nil, genericiooptions.IOStreams{ErrOut: &errOut})
	pods := fixtures.Pods
	for _, context := range []string{"", "alpha"} {
		n := o.feedNotices(context)
		n.OnWatchLost(pods, apierrors.NewResourceExpired("too old resource version: 5 (10)"))
		n.OnWatchLost(pods, fmt.Errorf("listing: %w", errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")))
		for _, d := range []time.Duration{15*time.Millisecond + 400*time.Microsecond, 4249 * time.Millisecond, 65*time.Second + 300*time.Millisecond} {
			n.OnWatchRestored(informer.Reconnect{Resource: pods, Down: d, Relisted: true})
		}
	}
	want := `warning: watch of pods interrupted: too old resource version: 5 (10); reconnecting
warning: watch of pods interrupted: listing: dial tcp 127.0.0.1:6443: connect: connection refused; reconnecting
warning: watch of pods reconnected after 15ms
warning: watch of pods reconnected after 4.2s
warning: watch of pods reconnected after 1m5s
warning: context "alpha": watch of pods interrupted: too old resource version: 5 (10); reconnecting
warning: context "alpha": watch of pods interrupted: listing: dial tcp 127.0.0.1:6443: connect: connection refused; reconnecting
warning: context "alpha": watch of pods reconnected after 15ms
warning: context "alpha": watch of pods reconnected after 4.2s
warning: context "alpha": watch of pods reconnected after 1m5s
`
	if got := errOut.String(); got != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
}
