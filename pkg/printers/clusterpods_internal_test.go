package printers

import (
	"bytes"
	"context"
	goruntime "runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/realistic"
)

// clusterPods returns n pods as the cache process holds a cluster's
// (internal/testing/realistic, without their managedFields as the informers
// drop them: 6.9 KB of compact JSON each).
func clusterPods(tb testing.TB, n int) []runtime.Object {
	tb.Helper()
	pods := realistic.Pods(tb, n)
	out := make([]runtime.Object, len(pods))
	for i := range pods {
		pods[i].ManagedFields = nil
		out[i] = &pods[i]
	}
	return out
}

// BenchmarkClusterEncodings writes 20,000 pods of a cluster as -o json:
// encoded afresh without kept encodings (fresh), encoded and kept in new
// Encodings (keep), and from the encodings kept by the answer before
// (kept). It reports the bytes kept per pod.
func BenchmarkClusterEncodings(b *testing.B) {
	objs := clusterPods(b, 20000)
	gvks := map[runtime.Object]schema.GroupVersionKind{}
	for _, o := range objs {
		gvks[o] = podGVK
	}
	write := func(b *testing.B, out *bytes.Buffer, enc *Encodings) {
		out.Reset()
		if err := writeJSONListFields(out, objs, gvks, nil, true, enc); err != nil {
			b.Fatal(err)
		}
	}
	var out bytes.Buffer
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			write(b, &out, nil)
		}
		b.SetBytes(int64(out.Len()))
	})
	b.Run("keep", func(b *testing.B) {
		var kept int64
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			enc := NewEncodings(ctx, time.Hour)
			write(b, &out, enc)
			_, kept = enc.Kept()
			cancel()
		}
		b.SetBytes(int64(out.Len()))
		b.ReportMetric(float64(kept)/float64(len(objs)), "kept-B/pod")
	})
	b.Run("kept", func(b *testing.B) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		heap := func() uint64 {
			// Twice: the buffers' pools are emptied by the second.
			goruntime.GC()
			goruntime.GC()
			var m goruntime.MemStats
			goruntime.ReadMemStats(&m)
			return m.HeapAlloc
		}
		write(b, &out, nil) // out grown to the answer first
		before := heap()
		enc := NewEncodings(ctx, time.Hour)
		write(b, &out, enc)
		// What the Encodings hold: their maps and entries with the bytes.
		held := heap() - before
		for b.Loop() {
			write(b, &out, enc)
		}
		b.SetBytes(int64(out.Len()))
		_, kept := enc.Kept()
		b.ReportMetric(float64(kept)/float64(len(objs)), "kept-B/pod")
		b.ReportMetric(float64(held)/float64(len(objs)), "heap-B/pod")
	})
}
