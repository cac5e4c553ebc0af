package cmd

import (
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/syncbuf"
	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// TestWatchCheckpoint: a feed with a new checkpoint prints the current state
// and records it; started again with it, it prints nothing of what it
// printed; another feed, or a second feed at once, is refused, naming the
// file.
func TestWatchCheckpoint(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	path := filepath.Join(t.TempDir(), "pods.checkpoint")
	h := startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path})
	first := h.finish(t, 2, 0)
	if h.errOut.String() != "" {
		t.Errorf("stderr = %q", h.errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "kubectl-idx checkpoint v2\n") || !strings.Contains(string(data), `"resources":["pods"],"namespace":"shop"`) ||
		!strings.HasSuffix(string(data), " {\"closed\":true}\n") {
		t.Errorf("checkpoint:\n%s", data)
	}
	for _, l := range strings.Fields(first) {
		name := strings.TrimPrefix(l, "pod/")
		if !strings.Contains(string(data), fmt.Sprintf(`"name":%q`, name)) {
			t.Errorf("the checkpoint does not hold %s, which the feed printed", name)
		}
	}

	// Resumed: nothing happened since.
	h = startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path})
	time.Sleep(500 * time.Millisecond)
	if err := h.stop(); err != nil {
		t.Fatalf("resumed Run = %v", err)
	}
	if h.out.String() != "" || h.errOut.String() != "" {
		t.Errorf("resumed with nothing new: stdout %q, stderr %q", h.out, h.errOut)
	}

	// Held by another feed.
	held, err := checkpoint.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h = startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path})
	want := fmt.Sprintf("checkpoint %s is held by another feed (pid %d): two feeds cannot share a checkpoint", path, os.Getpid())
	if err := h.stop(); err == nil || err.Error() != want {
		t.Errorf("a second feed on the same checkpoint: %v\nwant %s", err, want)
	}
	held.Close()

	// Another feed.
	h = startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path, selector: "app=web"})
	want = `checkpoint ` + path + ` was written for another feed: --selector was not given, is "app=web"; resume with the same command, or give another file`
	if err := h.stop(); err == nil || err.Error() != want {
		t.Errorf("another feed: %v\nwant %s", err, want)
	}
	if h.out.String() != "" {
		t.Errorf("another feed printed %q", h.out)
	}

	// Another --where: all expressions must hold, in any order.
	path = filepath.Join(t.TempDir(), "where.checkpoint")
	where := []string{`object.metadata.name != "x"`, `has(object.metadata.labels)`}
	h = startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path, where: where})
	h.waitOut(t, 1)
	if err := h.stop(); err != nil {
		t.Fatalf("Run with --where = %v", err)
	}
	h = startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path, where: []string{where[1], where[0]}})
	time.Sleep(500 * time.Millisecond)
	if err := h.stop(); err != nil || h.out.String() != "" {
		t.Errorf("resumed with the same --where in another order: %v, stdout %q", err, h.out)
	}
	h = startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path, where: where[:1]})
	want = `checkpoint ` + path + ` was written for another feed: --where was "(has(object.metadata.labels)) && (object.metadata.name != \"x\")", is "object.metadata.name != \"x\""; resume with the same command, or give another file`
	if err := h.stop(); err == nil || err.Error() != want {
		t.Errorf("another --where: %v\nwant %s", err, want)
	}
}

// TestWatchCheckpointNoContext: a run with no kubeconfig context (--server
// and credentials only) given a checkpoint written under a context named
// "(none)" refuses it, naming both, and does not panic.
func TestWatchCheckpointNoContext(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	path := filepath.Join(t.TempDir(), "pods.checkpoint")
	f, err := checkpoint.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.Resume([]checkpoint.Stream{{Context: "(none)", Command: "watch", Resources: []string{"pods"}, Namespace: "shop"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h[0].Record(&feed.Delta{Positions: map[int]string{0: "1"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path})
	want := `checkpoint ` + path + ` was written for another feed: the contexts were "(none)", are (no context); resume with the same command, or give another file`
	if err := w.stop(); err == nil || err.Error() != want {
		t.Errorf("Run = %v\nwant %s", err, want)
	}
	if w.out.String() != "" {
		t.Errorf("stdout %q", w.out)
	}
}

// checkpointed runs a feed of pods over s with flags until it has printed 2 lines, stops it
// and returns its checkpoint file, flags.checkpoint.
func checkpointed(t *testing.T, s *fakeapi.Server, flags watchFlags) []byte {
	t.Helper()
	startWatch(t, s, []string{"pods"}, flags).finish(t, 2, 0)
	data, err := os.ReadFile(flags.checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestWatchCheckpointCluster: a feed's checkpoint records its cluster's
// kube-system namespace; resumed against a cluster whose namespace has
// another UID (one made anew at the same address), it is refused, naming the
// file and both UIDs, and left as it was; resumed by a user who may not read
// the namespace, the server and CA decide, silently.
func TestWatchCheckpointCluster(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	path := filepath.Join(t.TempDir(), "pods.checkpoint")
	data := checkpointed(t, s, watchFlags{format: "name", checkpoint: path, kubeSystem: "ks-1"})
	if !strings.Contains(string(data), `"cluster":{"kubeSystemUID":"ks-1"}`) {
		t.Errorf("the checkpoint does not record the cluster:\n%s", data)
	}

	h := startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path, kubeSystem: "ks-2"})
	want := "checkpoint " + path + " was written for another cluster: the kube-system namespace's UID was ks-1, is ks-2; resume against the cluster it was written for, or give another file"
	if err := h.stop(); err == nil || err.Error() != want {
		t.Errorf("resumed against another cluster: %v\nwant %s", err, want)
	}
	if h.out.String() != "" {
		t.Errorf("stdout %q", h.out)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Errorf("the refused checkpoint was rewritten:\n%s", after)
	}

	h = startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path, kubeSystemForbidden: true})
	time.Sleep(500 * time.Millisecond)
	if err := h.stop(); err != nil {
		t.Fatalf("resumed by a user who may not read kube-system: %v", err)
	}
	if h.out.String() != "" || h.errOut.String() != "" {
		t.Errorf("resumed by a user who may not read kube-system: stdout %q, stderr %q", h.out, h.errOut)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"cluster":{"kubeSystemUID":"ks-1"}`) {
		t.Errorf("the UID recorded is lost:\n%s", data)
	}
}

// TestWatchCheckpointVersion1: a checkpoint an earlier kubectl idx wrote,
// without the cluster, resumes with a warning and records the cluster.
func TestWatchCheckpointVersion1(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	path := filepath.Join(t.TempDir(), "pods.checkpoint")
	data := checkpointed(t, s, watchFlags{format: "name", checkpoint: path})
	// As version 1 wrote it: the same records without the cluster.
	lines := strings.Split(string(data), "\n")
	_, snapshot, _ := strings.Cut(lines[1], " ")
	snapshot = strings.Replace(snapshot, `,"cluster":{}`, "", 1)
	v1 := fmt.Sprintf("kubectl-idx checkpoint v1\n%08x %s\n%s\n", crc32c(snapshot), snapshot, lines[2])
	if err := os.WriteFile(path, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startWatch(t, s, []string{"pods"}, watchFlags{format: "name", checkpoint: path, kubeSystem: "ks-1"})
	time.Sleep(500 * time.Millisecond)
	if err := h.stop(); err != nil {
		t.Fatalf("resumed from version 1: %v", err)
	}
	want := "warning: checkpoint " + path + ": the feed was recorded without its cluster, by a kubectl idx that wrote format version 1: resuming without checking that it is the same cluster, which is recorded from now on\n"
	if h.out.String() != "" || h.errOut.String() != want {
		t.Errorf("resumed from version 1: stdout %q, stderr %q\nwant stderr %q", h.out, h.errOut, want)
	}
	if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "kubectl-idx checkpoint v2\n") || !strings.Contains(string(data), `"cluster":{"kubeSystemUID":"ks-1"}`) {
		t.Errorf("the checkpoint after the resume:\n%s", data)
	}
}

// TestEventsWatchCheckpointCluster: events -w records its cluster as watch
// does, and refuses a checkpoint of another cluster.
func TestEventsWatchCheckpointCluster(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.checkpoint")
	run := func(uid string) (string, error) {
		objs := append(eventsWindowObjects(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system", UID: types.UID(uid)}})
		c := newRelationCase(objs, "name")
		o := c.command(t, "events").(*EventsOptions)
		stdout := &syncbuf.Buffer{}
		o.Out = stdout
		o.Watch, o.Checkpoint = true, path
		prepare(t, o, []string{"deployment/web"})
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- o.Run(ctx) }()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && strings.Count(stdout.String(), "\n") < 3; time.Sleep(20 * time.Millisecond) {
			select {
			case err := <-done:
				return stdout.String(), err
			default:
			}
		}
		cancel()
		return stdout.String(), <-done
	}
	if out, err := run("ks-1"); err != nil || out == "" {
		t.Fatalf("first run: %v, stdout %q", err, out)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"kubeSystemUID":"ks-1"`) {
		t.Errorf("the checkpoint does not record the cluster:\n%s", data)
	}
	want := "checkpoint " + path + " was written for another cluster: the kube-system namespace's UID was ks-1, is ks-2; resume against the cluster it was written for, or give another file"
	if out, err := run("ks-2"); err == nil || err.Error() != want || out != "" {
		t.Errorf("resumed against another cluster: %v, stdout %q\nwant %s", err, out, want)
	}
}

// crc32c is a checkpoint record's checksum of payload.
func crc32c(payload string) uint32 {
	return crc32.Checksum([]byte(payload), crc32.MakeTable(crc32.Castagnoli))
}
