package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// clock is this process's host with a clock of its own, at start; each
// call to tick moves it on by d.
func clock(start time.Time) (h host, tick func(time.Duration) time.Time) {
	var mu sync.Mutex
	cur := start
	h = processHost()
	h.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return cur
	}
	return h, func(d time.Duration) time.Time {
		mu.Lock()
		defer mu.Unlock()
		cur = cur.Add(d)
		return cur
	}
}

// TestCheckpointTimes: each record is stamped; a source's since is its first
// position, moved by a relist, which folds what came before; each object
// keeps the time of the record that put its version; and a reader sees them
// after the feed stopped and while it runs (the lock held, records appended
// since the last snapshot).
func TestCheckpointTimes(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	stand, tick := clock(t0)
	path := filepath.Join(t.TempDir(), "cp")
	f := openOn(t, path, stand)
	h := resume(t, f, podsStream)
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "10", 1: "9"}, Put: []feed.Known{
		{Source: 0, Namespace: "shop", Name: "web-1-a", UID: "p-a", ResourceVersion: "7", Printed: true, Followed: true, Refs: []metav1.OwnerReference{rsRef}},
		{Source: 0, Namespace: "shop", Name: "web-1-b", UID: "p-b", ResourceVersion: "8", Printed: true},
	}})
	t1 := tick(90*time.Second + 400*time.Millisecond)
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "12"}, Put: []feed.Known{
		{Source: 0, Namespace: "shop", Name: "web-1-a", UID: "p-a", ResourceVersion: "11", Printed: true, Followed: true, Refs: []metav1.OwnerReference{rsRef}},
	}})
	t2 := tick(time.Minute)
	if err := h[0].Relisting(1, feed.Gap{From: "9", To: "20", Reason: "expired"}); err != nil {
		t.Fatal(err)
	}

	// Read while the feed runs: its lock is held and the changes are
	// appended after the snapshot.
	r, err := Read(path)
	if err != nil {
		t.Fatalf("reading a checkpoint a feed holds: %v", err)
	}
	got, warnings, err := r.For("kind-a", clusterA, "shop", []string{"pods"})
	if err != nil || len(warnings) > 0 {
		t.Fatalf("For: %v %q", err, warnings)
	}
	t2 = t2.Truncate(time.Second)
	want := &Recorded{Stream: podsStream, Recorded: t2, Sources: []RecordedSource{
		{Resource: "pods", ResourceVersion: "12", Since: t0, Objects: []RecordedObject{
			{Namespace: "shop", Name: "web-1-a", UID: "p-a", ResourceVersion: "11", At: t1.Truncate(time.Second), Refs: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-1"}}, Printed: true},
			{Namespace: "shop", Name: "web-1-b", UID: "p-b", ResourceVersion: "8", At: t0, Printed: true},
		}},
		{Resource: "replicasets.apps", ResourceVersion: "9", Since: t2, Relisting: true},
	}}
	if diff := cmp.Diff(want, normalize(got)); diff != "" {
		t.Errorf("while the feed runs (-want +got):\n%s", diff)
	}

	tick(time.Minute)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = Read(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err = r.For("kind-a", clusterA, "shop", []string{"replicasets.apps"})
	if err != nil {
		t.Fatal(err)
	}
	want.Clean = true
	if diff := cmp.Diff(want, normalize(got)); diff != "" {
		t.Errorf("after a clean stop (-want +got):\n%s", diff)
	}

	// Resumed by a feed that cannot resume (nothing recorded of one of its
	// sources), it starts afresh: the times before are not its.
	os.WriteFile(path, nil, 0o600)
	f = openOn(t, path, stand)
	h = resume(t, f, podsStream)
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "30"}})
	f.Close()
	f = openOn(t, path, stand)
	resume(t, f, podsStream)
	f.Close()
	r, err = Read(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _ = r.For("kind-a", clusterA, "shop", []string{"pods"})
	if !got.Sources[0].Since.IsZero() {
		t.Errorf("since %v of a feed started afresh, want none until it records a position again", got.Sources[0].Since)
	}
}

// normalize puts times in UTC, as the file keeps them.
func normalize(r *Recorded) *Recorded {
	if r == nil {
		return nil
	}
	c := *r
	c.Recorded = c.Recorded.UTC()
	c.Sources = append([]RecordedSource(nil), r.Sources...)
	for i := range c.Sources {
		c.Sources[i].Since = c.Sources[i].Since.UTC()
		objs := append([]RecordedObject(nil), c.Sources[i].Objects...)
		for j := range objs {
			objs[j].At = objs[j].At.UTC()
		}
		c.Sources[i].Objects = objs
	}
	return &c
}

// TestReadRefuses: a checkpoint of another cluster or another feed is
// refused in the words Resume uses, the cluster first; nothing is written.
func TestReadRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	aFeedRan(t, path)
	before, _ := os.ReadFile(path)
	eventsPath := filepath.Join(t.TempDir(), "events.cp")
	f := open(t, eventsPath)
	h := resume(t, f, Stream{Context: "kind-a", Command: "events", Resources: []string{"events"}, Namespace: "shop", Cluster: clusterA})
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "5"}})
	f.Close()

	another := func(p, what string) string {
		return "checkpoint " + p + " was written for another feed: " + what + "; resume with the same command, or give another file"
	}
	for _, tc := range []struct {
		name, path, context, namespace string
		cluster                        *Cluster
		resources                      []string
		want                           string
	}{
		{"another cluster", path, "kind-a", "elsewhere", &Cluster{Server: clusterA.Server, KubeSystemUID: "ks-new"}, []string{"services"},
			"checkpoint " + path + " was written for another cluster: the kube-system namespace's UID in context kind-a was ks-a, is ks-new; resume against the cluster it was written for, or give another file"},
		{"another context", path, "kind-c", "shop", clusterA, []string{"pods"}, another(path, "the contexts were kind-a,kind-b, are kind-c")},
		{"no context", path, "", "shop", clusterA, []string{"pods"}, another(path, "the contexts were kind-a,kind-b, are (no context)")},
		{"another namespace", path, "kind-a", "bank", clusterA, []string{"pods"}, another(path, "the namespace in context kind-a was shop, is bank")},
		{"other types", path, "kind-a", "shop", clusterA, []string{"deployments.apps", "configmaps"}, another(path, "the types in context kind-a were pods,replicasets.apps, are deployments.apps,configmaps")},
		{"events -w", eventsPath, "kind-a", "shop", clusterA, []string{"pods"}, another(eventsPath, "the command in context kind-a was kubectl idx events, is kubectl idx watch")},
		{"the same", path, "kind-a", "shop", clusterA, []string{"replicasets.apps"}, ""},
		{"without the cluster check", path, "kind-b", "shop", nil, []string{"pods"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Read(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = r.For(tc.context, tc.cluster, tc.namespace, tc.resources)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("error\n got %s\nwant %s", got, tc.want)
			}
		})
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("reading changed the file:\n%s\nwas\n%s", after, before)
	}
}

// TestReadFiles: Read takes what Open takes, a regular file of the user's
// own, never through a link, and creates nothing; a version 1 file is read
// with a warning that its cluster was not checked, and without times.
func TestReadFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cp")
	aFeedRan(t, path)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct{ path, want string }{
		{link, "checkpoint " + link + " is a symbolic link: refusing to read through it"},
		{dir, "checkpoint " + dir + " is a directory, not a regular file: refusing to use it"},
		{empty, "checkpoint " + empty + " is empty: no feed has recorded in it"},
		{missing, "opening checkpoint " + missing + ": lstat " + missing + ": no such file or directory"},
	} {
		if _, err := Read(tc.path); err == nil || err.Error() != tc.want {
			t.Errorf("Read(%s): %v, want %s", tc.path, err, tc.want)
		}
	}
	if _, err := os.Lstat(missing); err == nil {
		t.Errorf("Read created %s", missing)
	}

	old := filepath.Join(dir, "v1")
	data, err := os.ReadFile("testdata/v1-clean.checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(old, data, 0o600)
	r, err := Read(old)
	if err != nil {
		t.Fatal(err)
	}
	ctx := r.Contexts()[0]
	got, warnings, err := r.For(ctx, clusterA, "shop", []string{"pods"})
	if err != nil {
		t.Fatalf("a version 1 file: %v", err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "read without checking that it is the same cluster") {
		t.Errorf("warnings %q", warnings)
	}
	if !got.Recorded.IsZero() || !got.Sources[0].Since.IsZero() {
		t.Errorf("times %v %v of a file that kept none", got.Recorded, got.Sources[0].Since)
	}
}
