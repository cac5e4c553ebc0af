package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

var (
	// clusterA's kube-system namespace is readable; clusterB's is not.
	clusterA   = &Cluster{Server: "https://a.example:6443", CA: "sha256:aa", KubeSystemUID: "ks-a"}
	clusterB   = &Cluster{Server: "https://127.0.0.1:41234", CA: "sha256:bb"}
	podsStream = Stream{Context: "kind-a", Command: "watch", Resources: []string{"pods", "replicasets.apps"}, Namespace: "shop",
		Filters: []Filter{{Flag: "--selector", Value: "app=web"}, {Flag: "--owner", Value: "deployment/web uid d-1"}}, Cluster: clusterA}
	otherStream = Stream{Context: "kind-b", Command: "watch", Resources: []string{"pods", "replicasets.apps"}, Namespace: "shop", Cluster: clusterB}
	rsRef       = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-1", Controller: new(true)}
	deployRef   = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-1"}
)

func open(t testing.TB, path string) *File {
	t.Helper()
	return openOn(t, path, processHost())
}

// openOn opens the checkpoint at path on h.
func openOn(t testing.TB, path string, h host) *File {
	t.Helper()
	f, err := openWith(path, h)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func resume(t testing.TB, f *File, streams ...Stream) []*Feed {
	t.Helper()
	h, err := f.Resume(streams, nil)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func record(t testing.TB, h *Feed, d *feed.Delta) {
	t.Helper()
	if err := h.Record(d); err != nil {
		t.Fatal(err)
	}
}

// aFeedRan records what a feed of podsStream and otherStream does: the first
// list, a change, a deletion, --owner's references.
func aFeedRan(t testing.TB, path string) {
	t.Helper()
	f := open(t, path)
	h := resume(t, f, podsStream, otherStream)
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "10", 1: "9"}, Printed: 3, Put: []feed.Known{
		{Source: 0, Namespace: "shop", Name: "web-1-a", UID: "p-a", ResourceVersion: "7", Printed: true, Followed: true, Refs: []metav1.OwnerReference{rsRef}},
		{Source: 0, Namespace: "shop", Name: "web-1-b", UID: "p-b", ResourceVersion: "8", Printed: true, Followed: true, Refs: []metav1.OwnerReference{rsRef}},
		{Source: 1, Namespace: "shop", Name: "web-1", UID: "rs-1", ResourceVersion: "9", Printed: true, Followed: true, Refs: []metav1.OwnerReference{deployRef}},
		{Source: 0, Namespace: "shop", Name: "stray", UID: "p-s", ResourceVersion: "6", Followed: true, Refs: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "x", UID: "x"}}},
	}, PutOwners: []feed.Owner{{UID: "x", Refs: nil}}})
	record(t, h[1], &feed.Delta{Positions: map[int]string{0: "30", 1: "30"}})
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "12"}, Printed: 2, Put: []feed.Known{
		{Source: 0, Namespace: "shop", Name: "web-1-a", UID: "p-a", ResourceVersion: "11", Printed: true, Followed: true, Refs: []metav1.OwnerReference{rsRef}},
	}, Drop: []feed.Known{{Source: 0, Namespace: "shop", Name: "web-1-b"}}, DropOwners: []types.UID{"x"}})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feed.checkpoint")
	aFeedRan(t, path)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "kubectl-idx checkpoint v2" || !strings.HasSuffix(lines[2], ` {"closed":true}`) {
		t.Errorf("a cleanly closed checkpoint is its version, a snapshot and the end mark:\n%s", data)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the checkpoint alone", len(entries))
	}

	f := open(t, path)
	defer f.Close()
	if w := f.Warnings(); len(w) != 0 {
		t.Errorf("warnings reading a cleanly closed checkpoint: %q", w)
	}
	// Resumed in another order, and with the types in another order.
	reordered := podsStream
	reordered.Resources = []string{"replicasets.apps", "pods"}
	h := resume(t, f, otherStream, reordered)
	want := &feed.State{
		Positions: map[int]string{0: "9", 1: "12"},
		Objects: []feed.Known{
			{Source: 0, Namespace: "shop", Name: "web-1", UID: "rs-1", ResourceVersion: "9", Printed: true, Followed: true, Refs: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d-1"}}},
			{Source: 1, Namespace: "shop", Name: "stray", UID: "p-s", ResourceVersion: "6", Followed: true, Refs: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "x", UID: "x"}}},
			{Source: 1, Namespace: "shop", Name: "web-1-a", UID: "p-a", ResourceVersion: "11", Printed: true, Followed: true, Refs: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-1"}}},
		},
	}
	if diff := cmp.Diff(want, h[1].Restored()); diff != "" {
		t.Errorf("restored (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&feed.State{Positions: map[int]string{0: "30", 1: "30"}}, h[0].Restored()); diff != "" {
		t.Errorf("restored other stream (-want +got):\n%s", diff)
	}
	if h[1].Printed() != 5 {
		t.Errorf("printed %d, want 5", h[1].Printed())
	}
}

// TestCheckpointNew: a checkpoint that does not exist, or exists empty, is
// created with the streams and holds nothing to resume from until a feed
// records where it stands; one never resumed is removed again.
func TestCheckpointNew(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"missing", "empty"} {
		path := filepath.Join(dir, name)
		if name == "empty" {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		f := open(t, path)
		h := resume(t, f, podsStream)
		if h[0].Restored() != nil {
			t.Errorf("%s: restored %+v from a new checkpoint", name, h[0].Restored())
		}
		// Only one source recorded: not a point to resume from.
		record(t, h[0], &feed.Delta{Positions: map[int]string{0: "5"}})
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		f = open(t, path)
		if h := resume(t, f, podsStream); h[0].Restored() != nil {
			t.Errorf("%s: restored %+v with a source that never recorded its position", name, h[0].Restored())
		}
		f.Close()
	}
	path := filepath.Join(dir, "never resumed")
	open(t, path).Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a checkpoint created and never resumed is left behind: %v", err)
	}
}

func TestCheckpointLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	f := open(t, path)
	resume(t, f, podsStream)
	want := fmt.Sprintf("checkpoint %s is held by another feed (pid %d): two feeds cannot share a checkpoint", path, os.Getpid())
	if _, err := Open(path); err == nil || err.Error() != want {
		t.Errorf("second Open: %v, want %s", err, want)
	}
	// Still held after the file was rewritten under a new inode.
	f.mu.Lock()
	err := f.compactLocked(false)
	f.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "is held by another feed") {
		t.Errorf("Open after a rewrite: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g := open(t, path)
	g.Close()
}

func TestCheckpointMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	aFeedRan(t, path)
	with := func(change func(*Stream)) Stream {
		s := podsStream
		s.Resources = append([]string(nil), s.Resources...)
		s.Filters = append([]Filter(nil), s.Filters...)
		change(&s)
		return s
	}
	prefix := "checkpoint " + path + " was written for another feed: "
	suffix := "; resume with the same command, or give another file"
	tests := []struct {
		name    string
		streams []Stream
		want    string
	}{
		{"another context", []Stream{podsStream, with(func(s *Stream) { s.Context = "kind-c" })}, `the contexts were kind-a,kind-b, are kind-a,kind-c`},
		{"fewer contexts", []Stream{podsStream}, `the contexts were kind-a,kind-b, are kind-a`},
		{"another command", []Stream{with(func(s *Stream) { s.Command = "events" }), otherStream}, `the command in context kind-a was kubectl idx watch, is kubectl idx events`},
		{"another type list", []Stream{with(func(s *Stream) { s.Resources = []string{"pods"} }), otherStream}, `the types in context kind-a were pods,replicasets.apps, are pods`},
		{"another namespace", []Stream{with(func(s *Stream) { s.Namespace = "" }), otherStream}, `the namespace in context kind-a was shop, is all namespaces`},
		{"another selector", []Stream{with(func(s *Stream) { s.Filters[0].Value = "app=api" }), otherStream}, `--selector in context kind-a was "app=web", is "app=api"`},
		{"another owner", []Stream{with(func(s *Stream) { s.Filters[1].Value = "deployment/web uid d-2" }), otherStream}, `--owner in context kind-a was "deployment/web uid d-1", is "deployment/web uid d-2"`},
		{"no owner", []Stream{with(func(s *Stream) { s.Filters = s.Filters[:1] }), otherStream}, `--owner in context kind-a was "deployment/web uid d-1", is not given`},
		{"a filter more", []Stream{podsStream, with(func(s *Stream) {
			*s = otherStream
			s.Filters = []Filter{{Flag: "--field-selector", Value: "status.phase=Running"}}
		})}, `--field-selector in context kind-b was not given, is "status.phase=Running"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, path)
			defer f.Close()
			_, err := f.Resume(tc.streams, nil)
			if err == nil || err.Error() != prefix+tc.want+suffix {
				t.Errorf("Resume: %v\nwant %s", err, prefix+tc.want+suffix)
			}
		})
	}
	// The file is left as it was.
	f := open(t, path)
	defer f.Close()
	if w := f.Warnings(); len(w) != 0 {
		t.Errorf("after refusals, warnings %q", w)
	}
}

// TestCheckpointUnavailableContext: a context that cannot start keeps what
// the checkpoint holds of it.
func TestCheckpointUnavailableContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	aFeedRan(t, path)
	f := open(t, path)
	h, err := f.Resume([]Stream{otherStream}, []string{"kind-a"})
	if err != nil {
		t.Fatal(err)
	}
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "31"}})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = open(t, path)
	defer f.Close()
	h = resume(t, f, podsStream, otherStream)
	if got := h[0].Restored(); got == nil || got.Positions[0] != "12" || len(got.Objects) != 3 {
		t.Errorf("the unavailable context's state: %+v", got)
	}
	if got := h[1].Restored().Positions[0]; got != "31" {
		t.Errorf("the other's position %s, want 31", got)
	}
}

// TestCheckpointDamage: what a feed killed while appending leaves is
// dropped with a warning; anything else that is not what the feed wrote is
// a one-line error naming the file and the line.
func TestCheckpointDamage(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	aFeedRan(t, good)
	// An unclean one: records appended after the snapshot, no end mark.
	unclean := filepath.Join(dir, "unclean")
	f := open(t, unclean)
	h := resume(t, f, podsStream, otherStream)
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "10", 1: "9"}, Printed: 1, Put: []feed.Known{{Source: 0, Namespace: "shop", Name: "a", UID: "a", ResourceVersion: "3", Printed: true}}})
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "11"}, Printed: 1, Put: []feed.Known{{Source: 0, Namespace: "shop", Name: "a", UID: "a", ResourceVersion: "11", Printed: true}}})
	// Killed: no Close. The lock goes with the process; here, with the file.
	f.file.Close()
	close(f.stop)
	<-f.stopped
	data, _ := os.ReadFile(unclean)
	lines := strings.SplitAfter(string(data), "\n")

	write := func(t *testing.T, content string) string {
		path := filepath.Join(t.TempDir(), "cp")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Run("unclean", func(t *testing.T) {
		path := write(t, string(data))
		f := open(t, path)
		defer f.Close()
		want := []string{"checkpoint " + path + ": the feed that wrote it did not stop cleanly; the lines it printed after its last record will be printed again"}
		if diff := cmp.Diff(want, f.Warnings()); diff != "" {
			t.Errorf("warnings (-want +got):\n%s", diff)
		}
		if got := resume(t, f, podsStream, otherStream)[0].Restored().Positions[0]; got != "11" {
			t.Errorf("position %s, want 11", got)
		}
	})
	t.Run("last record cut short", func(t *testing.T) {
		last := lines[len(lines)-2]
		path := write(t, strings.Join(lines[:len(lines)-2], "")+last[:len(last)/2])
		f := open(t, path)
		defer f.Close()
		if w := f.Warnings(); len(w) != 2 || !strings.Contains(w[0], "its last record was cut short") {
			t.Errorf("warnings %q", w)
		}
		if got := resume(t, f, podsStream, otherStream)[0].Restored().Positions[0]; got != "10" {
			t.Errorf("position %s, want the record before's, 10", got)
		}
	})
	goodData, _ := os.ReadFile(good)
	goodLines := strings.SplitAfter(string(goodData), "\n")
	flip := func(line string) string {
		b := []byte(line)
		b[20] ^= 1
		return string(b)
	}
	tests := []struct {
		name, content, want string
	}{
		{"not a checkpoint", "hello\n", `is not a kubectl idx checkpoint: its first line is "hello"`},
		{"another version", "kubectl-idx checkpoint v3\n", `has format version 3; this kubectl idx reads versions 1 to 2`},
		{"version 0", "kubectl-idx checkpoint v0\n", `has format version 0; this kubectl idx reads versions 1 to 2`},
		{"a version line edited with CRLF", "kubectl-idx checkpoint v1\r\n", `is not a kubectl idx checkpoint: its first line is "kubectl-idx checkpoint v1\r"`},
		{"cut in its snapshot", goodLines[0] + goodLines[1][:30], `is damaged: line 2: its first record is cut short`},
		{"a flipped bit", lines[0] + lines[1] + flip(lines[2]) + lines[3], `is damaged: line 3: checksum mismatch`},
		{"a record after the end", strings.Join(goodLines[:3], "") + lines[2], `is damaged: line 4: a record follows the end`},
		{"no checksum", lines[0] + lines[1] + "{}\n", `is damaged: line 3: not a checksummed record`},
		{"a change first", lines[0] + lines[2], `is damaged: line 2: the first record is not a snapshot`},
		{"two streams of one context", lines[0] + string(mustEncode(t, snapshotRecord{Streams: []streamState{{Stream: podsStream}, {Stream: otherStream}, {Stream: podsStream}}})),
			`is damaged: line 2: the feed of context kind-a is there twice`},
		{"a flag given twice", lines[0] + string(mustEncode(t, snapshotRecord{Streams: []streamState{{Stream: Stream{Filters: []Filter{{"-l", "a"}, {"-l", "b"}}}}}})),
			`is damaged: line 2: the feed: the flag -l is given twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, tc.content)
			_, err := Open(path)
			want := "checkpoint " + path + " " + tc.want
			if err == nil || err.Error() != want {
				t.Errorf("Open: %v\nwant %s", err, want)
			}
		})
	}
}

// TestCheckpointCompaction: changes are appended, and the file rewritten
// once they outweigh the snapshot; what it holds stays the same.
func TestCheckpointCompaction(t *testing.T) {
	small := processHost()
	small.minCompaction = 4 << 10
	path := filepath.Join(t.TempDir(), "cp")
	f := openOn(t, path, small)
	h := resume(t, f, podsStream)
	var put []feed.Known
	for i := range 20 {
		put = append(put, feed.Known{Source: 0, Namespace: "shop", Name: fmt.Sprintf("web-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)), ResourceVersion: "1", Printed: true})
	}
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "1", 1: "1"}, Put: put})
	appended := int64(0)
	for rv := 2; rv < 400; rv++ {
		k := put[rv%len(put)]
		k.ResourceVersion = fmt.Sprint(rv)
		f.mu.Lock()
		before := f.journal
		f.mu.Unlock()
		record(t, h[0], &feed.Delta{Positions: map[int]string{0: fmt.Sprint(rv)}, Put: []feed.Known{k}, Printed: 1})
		f.mu.Lock()
		appended += max(0, f.journal-before)
		f.mu.Unlock()
		if rv%50 == 0 {
			// Records come faster than a test's disk fsyncs: let the rewrite under way
			// end now and then.
			f.background.Wait()
		}
	}
	f.background.Wait()
	f.mu.Lock()
	snapshot, rewrites := f.snapshot, f.rewrites
	f.mu.Unlock()
	last, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Rewritten over and over; the records appended while a rewrite is under way (here up
	// to 50) follow its snapshot.
	if rewrites < 5 || last.Size() > snapshot+max(snapshot, small.minCompaction)+50*200 {
		t.Errorf("%d bytes of records appended, %d rewrites, the file is %d bytes with a snapshot of %d", appended, rewrites, last.Size(), snapshot)
	}
	// Killed: what was appended since the last rewrite is read back.
	f.file.Close()
	close(f.stop)
	<-f.stopped
	g := open(t, path)
	defer g.Close()
	st := resume(t, g, podsStream)[0].Restored()
	if st.Positions[0] != "399" || len(st.Objects) != 20 {
		t.Fatalf("restored position %s, %d objects", st.Positions[0], len(st.Objects))
	}
	for _, k := range st.Objects {
		var i int
		fmt.Sscanf(k.Name, "web-%d", &i)
		if want := 399 - (399-i)%20; k.ResourceVersion != fmt.Sprint(want) {
			t.Errorf("%s at %s, want %d", k.Name, k.ResourceVersion, want)
		}
	}
}

// TestCheckpointStaleTemp: a rewrite that a kill cut short leaves a
// temporary file, which the next feed to hold the checkpoint removes.
func TestCheckpointStaleTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cp")
	aFeedRan(t, path)
	stale := filepath.Join(dir, ".cp.tmp-123")
	if err := os.WriteFile(stale, []byte("half a snapshot"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := open(t, path)
	defer f.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale temporary file is still there: %v", err)
	}
}

// TestCheckpointRelisting: a relist under way when the last record was
// written is resumed as a relist, until a position past its end is
// recorded.
func TestCheckpointRelisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	f := open(t, path)
	h := resume(t, f, podsStream)
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "10", 1: "10"}})
	gap := feed.Gap{From: "10", To: "40", Reason: "interrupted"}
	if err := h[0].Relisting(0, gap); err != nil {
		t.Fatal(err)
	}
	record(t, h[0], &feed.Delta{Printed: 4})
	reopen := func() *Feed {
		f.Close()
		f = open(t, path)
		return resume(t, f, podsStream)[0]
	}
	h0 := reopen()
	if got := h0.Relist(0); got == nil || *got != gap {
		t.Errorf("relist %v, want %v", got, gap)
	}
	if h0.Relist(1) != nil {
		t.Errorf("relist of the other source: %v", h0.Relist(1))
	}
	record(t, h0, &feed.Delta{Positions: map[int]string{0: "40"}})
	if got := reopen().Relist(0); got != nil {
		t.Errorf("relist %v after its end was recorded", got)
	}
	f.Close()
}

// TestCheckpointContextNamedNone: a context named "(none)" and no context at
// all (a run with --server and credentials only) are two streams: a
// checkpoint written for one is refused to the other, in words that tell
// them apart, and never panics.
func TestCheckpointContextNamedNone(t *testing.T) {
	named := Stream{Context: "(none)", Command: "watch", Resources: []string{"pods"}, Namespace: "shop"}
	unnamed := named
	unnamed.Context = ""
	for _, tc := range []struct {
		name           string
		written, asked Stream
		want           string
	}{
		{"named, resumed without a context", named, unnamed, `the contexts were "(none)", are (no context)`},
		{"without a context, resumed as named", unnamed, named, `the contexts were (no context), are "(none)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cp")
			f := open(t, path)
			record(t, resume(t, f, tc.written)[0], &feed.Delta{Positions: map[int]string{0: "10"}})
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			f = open(t, path)
			defer f.Close()
			want := "checkpoint " + path + " was written for another feed: " + tc.want + "; resume with the same command, or give another file"
			if _, err := f.Resume([]Stream{tc.asked}, nil); err == nil || err.Error() != want {
				t.Errorf("Resume: %v\nwant %s", err, want)
			}
			if _, err := f.Resume([]Stream{tc.written}, []string{tc.asked.Context}); err == nil || !strings.Contains(err.Error(), "the contexts were") {
				t.Errorf("Resume with the other as unavailable: %v", err)
			}
			if h, err := f.Resume([]Stream{tc.written}, nil); err != nil || h[0].Restored().Positions[0] != "10" {
				t.Errorf("Resume of the stream written: %v", err)
			}
		})
	}
}

func mustEncode(t *testing.T, rec any) []byte {
	t.Helper()
	line, err := encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// TestCheckpointStreamCheck: a stream that would not read back as it was
// written is refused before anything is written: a name that is not UTF-8
// (JSON would replace its bytes), a flag or a context given twice.
func TestCheckpointStreamCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	for _, tc := range []struct {
		name        string
		streams     []Stream
		unavailable []string
		want        string
	}{
		{"a context not UTF-8", []Stream{{Context: "k\xff", Command: "watch"}}, nil, ` cannot record the feed of context "k\xff": "k\xff" is not UTF-8`},
		{"a value not UTF-8", []Stream{{Command: "watch", Filters: []Filter{{Flag: "--selector", Value: "a=\xff"}}}}, nil, ` cannot record the feed: "a=\xff" is not UTF-8`},
		{"a flag twice", []Stream{{Context: "a", Filters: []Filter{{Flag: "--selector", Value: "a"}, {Flag: "--selector", Value: "b"}}}}, nil, ` cannot record the feed of context a: the flag --selector is given twice`},
		{"a context twice", []Stream{{Context: "a"}, {Context: "b"}}, []string{"a"}, `: context a is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := open(t, path)
			defer f.Close()
			if _, err := f.Resume(tc.streams, tc.unavailable); err == nil || err.Error() != "checkpoint "+path+tc.want {
				t.Errorf("Resume: %v\nwant %s", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused stream left a checkpoint: %v", err)
	}
}

// TestCheckpointRefusedUnchanged: a checkpoint refused to another feed is
// left as it was, without the end mark its own feed did not write, so that
// it still warns that feed of the lines it will print again.
func TestCheckpointRefusedUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	f := open(t, path)
	h := resume(t, f, podsStream)
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "10", 1: "9"}, Printed: 1})
	// Killed: no Close.
	f.file.Close()
	close(f.stop)
	<-f.stopped
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f = open(t, path)
	if _, err := f.Resume([]Stream{otherStream}, nil); err == nil {
		t.Fatal("Resume of another feed: no error")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("a refused checkpoint was rewritten:\n%s\nwas\n%s", after, before)
	}
	f = open(t, path)
	defer f.Close()
	if w := f.Warnings(); len(w) != 1 || !strings.Contains(w[0], "did not stop cleanly") {
		t.Errorf("warnings %q", w)
	}
}
