package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// benchObjects are n pods as a cluster names them: 20 namespaces, pods of
// Deployments ("checkout-7d4b9c8f6-x2k9q"), random UIDs, 8-digit
// resourceVersions; owned by their ReplicaSet when owned is set.
func benchObjects(n int, owned bool) []feed.Known {
	out := make([]feed.Known, n)
	for i := range out {
		rs := fmt.Sprintf("checkout-%d-7d4b9c8f6", i/10)
		out[i] = feed.Known{
			Source: 0, Namespace: fmt.Sprintf("team-%02d", i%20), Name: fmt.Sprintf("%s-%05x", rs, i),
			UID:             types.UID(fmt.Sprintf("%08x-4b1e-4c8a-9f2d-%012x", i, i*7919)),
			ResourceVersion: fmt.Sprint(48_000_000 + i), Printed: true,
		}
		if owned {
			out[i].Followed = true
			out[i].Refs = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: types.UID(fmt.Sprintf("%08x-77aa-4c8a-9f2d-%012x", i/10, i/10))}}
		}
	}
	return out
}

var benchStream = Stream{Context: "prod", Command: "watch", Resources: []string{"pods"}, Namespace: ""}

// BenchmarkSnapshot writes the snapshot of 20,000 pods, as a feed does when
// it starts, stops or compacts: bytes/object is the checkpoint's size per
// object.
func BenchmarkSnapshot(b *testing.B) {
	for _, owned := range []bool{false, true} {
		b.Run(fmt.Sprintf("owner=%v", owned), func(b *testing.B) {
			f, h := benchFile(b, 20_000, owned)
			defer f.Close()
			_ = h
			b.ResetTimer()
			for b.Loop() {
				f.mu.Lock()
				if err := f.compactLocked(false); err != nil {
					b.Fatal(err)
				}
				f.mu.Unlock()
			}
			b.ReportMetric(float64(f.snapshot)/20_000, "bytes/object")
		})
	}
}

// BenchmarkRecordChange records one changed pod and the new position, as a
// feed does after every flush when changes trickle in one at a time, over a
// checkpoint of 20,000 pods: the cost of a record, compactions amortized.
func BenchmarkRecordChange(b *testing.B) {
	for _, owned := range []bool{false, true} {
		b.Run(fmt.Sprintf("owner=%v", owned), func(b *testing.B) {
			f, h := benchFile(b, 20_000, owned)
			defer f.Close()
			objs := benchObjects(20_000, owned)
			var written int64
			rv := 50_000_000
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				rv++
				k := objs[i%len(objs)]
				k.ResourceVersion = fmt.Sprint(rv)
				f.mu.Lock()
				before := f.journal + f.snapshot
				f.mu.Unlock()
				if err := h.Record(&feed.Delta{Positions: map[int]string{0: k.ResourceVersion}, Put: []feed.Known{k}, Printed: 1}); err != nil {
					b.Fatal(err)
				}
				f.mu.Lock()
				if after := f.journal + f.snapshot; after > before {
					written += after - before
				} else {
					written += f.snapshot
				}
				f.mu.Unlock()
			}
			b.ReportMetric(float64(written)/float64(b.N), "bytes/record")
		})
	}
}

func benchFile(b *testing.B, n int, owned bool) (*File, *Feed) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "cp")
	f, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	h, err := f.Resume([]Stream{benchStream}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := h[0].Record(&feed.Delta{Positions: map[int]string{0: "50000000"}, Put: benchObjects(n, owned)}); err != nil {
		b.Fatal(err)
	}
	f.mu.Lock()
	if err := f.compactLocked(false); err != nil {
		b.Fatal(err)
	}
	f.mu.Unlock()
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		b.Fatalf("no snapshot: %v", err)
	}
	return f, h[0]
}
