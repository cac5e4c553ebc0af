package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
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
	first := h.waitOut(t, 2)
	if err := h.stop(); err != nil {
		t.Fatalf("Run = %v", err)
	}
	if h.errOut.String() != "" {
		t.Errorf("stderr = %q", h.errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "kubectl-idx checkpoint v1\n") || !strings.Contains(string(data), `"resources":["pods"],"namespace":"shop"`) ||
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
