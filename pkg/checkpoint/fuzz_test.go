package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// The fuzz targets of the checkpoint: a file's bytes, which anyone who can
// write the file chooses, and the stream a feed records, which its flags and
// kubeconfig name. Neither may panic; every error is one line (the command
// prints it as "error: ..."); a file read is resumed, rewritten and read back
// as it was; a stream is read back as it was written, and told apart from any
// other.

// fuzzSeedFiles are checkpoints as feeds wrote them: those kept in testdata
// (written by earlier versions) and those this version writes.
func fuzzSeedFiles(f testing.TB) [][]byte {
	f.Helper()
	var seeds [][]byte
	paths, err := filepath.Glob(filepath.Join("testdata", "*.checkpoint"))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	dir := f.TempDir()
	clean := filepath.Join(dir, "clean")
	aFeedRan(f, clean)
	data, err := os.ReadFile(clean)
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, data)
	// Unclean, with a relist under way and a change cut short.
	unclean := filepath.Join(dir, "unclean")
	cp, err := Open(unclean)
	if err != nil {
		f.Fatal(err)
	}
	h, err := cp.Resume([]Stream{podsStream, otherStream}, nil)
	if err != nil {
		f.Fatal(err)
	}
	_ = h[0].Record(&feed.Delta{Positions: map[int]string{0: "10", 1: "9"}, Printed: 1, Put: []feed.Known{{Source: 0, Namespace: "shop", Name: "a", UID: "a", ResourceVersion: "3", Printed: true}}})
	_ = h[1].Relisting(0, feed.Gap{From: "10", To: "40", Reason: "interrupted"})
	_ = h[1].Record(&feed.Delta{Positions: map[int]string{0: "41"}, Drop: []feed.Known{{Source: 1, Namespace: "shop", Name: "b"}}})
	cp.file.Close()
	close(cp.stop)
	<-cp.stopped
	if data, err = os.ReadFile(unclean); err != nil {
		f.Fatal(err)
	}
	return append(seeds, data, data[:len(data)-20])
}

// oneLine fails t unless err's message is a single line.
func oneLine(t *testing.T, what string, msg string) {
	t.Helper()
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("%s prints on several lines: %q", what, msg)
	}
}

// FuzzCheckpointFile: whatever a checkpoint file holds, Open returns an error
// or a file; a file read resumes the streams it holds (one of them as an
// unavailable context's), records, closes, and reads back with the same
// streams.
func FuzzCheckpointFile(f *testing.F) {
	for _, s := range fuzzSeedFiles(f) {
		f.Add(s)
	}
	f.Add([]byte(""))
	f.Add([]byte(header + "\n"))
	f.Add([]byte("kubectl-idx checkpoint v9\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) { checkFile(t, dir, data) })
}

// checkFile checks FuzzCheckpointFile's properties of data, written to a
// checkpoint in dir.
func checkFile(t *testing.T, dir string, data []byte) {
	path := filepath.Join(dir, "cp")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cp, err := Open(path)
	if err != nil {
		oneLine(t, "Open's error", err.Error())
		return
	}
	for _, w := range cp.Warnings() {
		oneLine(t, "a warning", w)
	}
	var streams []Stream
	var unavailable []string
	for i, m := range cp.streams {
		if i > 0 && i == len(cp.streams)-1 {
			unavailable = append(unavailable, m.stream.Context)
		} else {
			streams = append(streams, m.stream)
		}
	}
	handles, err := cp.Resume(streams, unavailable)
	if err != nil {
		cp.Close()
		t.Fatalf("Resume of the streams the file holds: %v", err)
	}
	for i, h := range handles {
		_ = h.Restored()
		_ = h.Printed()
		positions := map[int]string{}
		for src := range streams[i].Resources {
			_ = h.Relist(src)
			positions[src] = "1"
		}
		if err := h.Record(&feed.Delta{Positions: positions, Printed: 1}); err != nil {
			t.Errorf("Record: %v", err)
		}
	}
	if err := cp.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	again, err := Open(path)
	if err != nil {
		t.Fatalf("the file written is not read back: %v", err)
	}
	defer again.Close()
	var read []Stream
	for _, m := range again.streams {
		read = append(read, m.stream)
	}
	if diff := cmp.Diff(append(streams, streamsOf(cp, unavailable)...), read, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("streams read back (-written +read):\n%s", diff)
	}
}

// streamsOf returns the streams cp held of the contexts unavailable.
func streamsOf(cp *File, unavailable []string) []Stream {
	var out []Stream
	for _, c := range unavailable {
		for _, m := range cp.streams {
			if m.stream.Context == c {
				out = append(out, m.stream)
			}
		}
	}
	return out
}

// FuzzCheckpointStream: a stream of any context, command, types, namespace,
// flag and cluster is refused before anything is written (a string that is
// not UTF-8, a flag twice) or written and read back as it was; it resumes
// itself, and is refused to a stream of another context, in words that tell
// the two contexts apart, and to one of a cluster whose kube-system namespace
// has another UID.
func FuzzCheckpointStream(f *testing.F) {
	f.Add("kind-a", "watch", "pods,replicasets.apps", "shop", "--selector", "app=web", "kind-b", "https://127.0.0.1:6443", "0f3c2a7e-5d0b-4e0e-9a53-6f2b1c9d8e7f")
	f.Add("(none)", "watch", "pods", "", "--owner", "deployment/web uid d-1", "", "https://10.0.0.1", "")
	f.Add("", "events", "events", "shop", "object", "deployment/web uid 1", "(none)", "", "ks")
	f.Add("a,b", "watch", "pods", "default", "--where", `object.metadata.name != "x"`, "a", "https://proxy.example/clusters/prod", "ks")
	f.Add("arn:aws:eks:eu-west-1:123456789012:cluster/prod", "watch", "deployments.apps", "", "", "", "(no context)", "https://ABC.gr7.eu-west-1.eks.amazonaws.com", "")
	f.Add("k\xff", "watch", "pods", "shop", "--selector", "a=\xff", "k\ufffd", "https://h\xff", "")
	f.Add("a\nb", "watch", "pods,pods", "shop", "names", "pods/a,pods/b", `"a\nb"`, "", "\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, context, command, resources, namespace, flag, value, other, server, kubeSystem string) {
		s := Stream{Context: context, Command: command, Resources: strings.Split(resources, ","), Namespace: namespace,
			Cluster: &Cluster{Server: server, CA: "sha256:aa", KubeSystemUID: types.UID(kubeSystem)}}
		if flag != "" || value != "" {
			s.Filters = []Filter{{Flag: flag, Value: value}}
		}
		if a, b := contextName(context), contextName(other); context != other && a == b {
			t.Errorf("contexts %q and %q are both worded %s", context, other, a)
		}
		path := filepath.Join(dir, "cp")
		os.Remove(path)
		cp, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		h, err := cp.Resume([]Stream{s}, nil)
		if err != nil {
			oneLine(t, "Resume's error", err.Error())
			if s.check() == nil {
				t.Errorf("Resume of a fresh file: %v", err)
			}
			cp.Close()
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("a refused stream left a checkpoint: %v", err)
			}
			return
		}
		positions := map[int]string{}
		for i := range s.Resources {
			positions[i] = "7"
		}
		if err := h[0].Record(&feed.Delta{Positions: positions}); err != nil {
			t.Fatal(err)
		}
		if err := cp.Close(); err != nil {
			t.Fatal(err)
		}

		cp, err = Open(path)
		if err != nil {
			t.Fatalf("the file written is not read back: %v", err)
		}
		defer cp.Close()
		if len(cp.streams) != 1 {
			t.Fatalf("%d streams read back", len(cp.streams))
		}
		if diff := cmp.Diff(s, cp.streams[0].stream, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("stream read back (-written +read):\n%s", diff)
		}
		o := s
		o.Context = other
		if _, err := cp.Resume([]Stream{o}, nil); context != other && err == nil {
			t.Errorf("a stream of context %q resumes one of %q", other, context)
		} else if err != nil {
			oneLine(t, "Resume's error", err.Error())
			if context == other {
				t.Errorf("Resume of the stream written: %v", err)
			}
		}
		if kubeSystem != "" {
			o := s
			o.Cluster = &Cluster{Server: server, CA: "sha256:aa", KubeSystemUID: types.UID(kubeSystem + "2")}
			if _, err := cp.Resume([]Stream{o}, nil); err == nil {
				t.Errorf("a stream of a cluster whose kube-system is %s2 resumes one of %s", kubeSystem, kubeSystem)
			} else {
				oneLine(t, "Resume's error", err.Error())
			}
		}
		// Resumed by a user who may not read kube-system: the server and CA
		// decide.
		o = s
		o.Cluster = &Cluster{Server: server, CA: "sha256:aa"}
		h, err = cp.Resume([]Stream{o}, nil)
		if err != nil {
			t.Fatalf("Resume of the stream written: %v", err)
		}
		if got := h[0].Restored(); got == nil || len(got.Positions) != len(s.Resources) {
			t.Errorf("restored %+v", got)
		}
		if got := cp.streams[0].stream.Cluster; *got != *s.Cluster {
			t.Errorf("cluster recorded %+v, want %+v", got, s.Cluster)
		}
	})
}
