package printers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// clusterReplicaMix is the sizes of the ReplicaSets of the bench's realistic
// cluster (test/fixtures' RealisticPods), ten pods per template on average.
var clusterReplicaMix = []int{3, 2, 5, 1, 10, 3, 2, 20, 4, 50}

// clusterPods returns n pods as the cache process holds a cluster's
// (../wire/testdata/pod-realistic.json, a copy of the bench's, without its
// managedFields as the informers drop them: 6.9 KB of compact JSON), in
// ReplicaSets of the bench's sizes. The pods of a ReplicaSet have their
// template in common; each ReplicaSet has its own app name (labels,
// selectors, environment, ConfigMap), template hash and owner; each pod its
// own name, UID, token volume, node, IPs, container IDs and times. Copies of
// one pod would make every encoding of a pod look like the one before it.
func clusterPods(tb testing.TB, n int) []runtime.Object {
	tb.Helper()
	data, err := os.ReadFile("../wire/testdata/pod-realistic.json")
	if err != nil {
		tb.Fatal(err)
	}
	pods := make([]runtime.Object, 0, n)
	for set := 0; len(pods) < n; set++ {
		app := fmt.Sprintf("app%04d-api", set)
		hash := fmt.Sprintf("h%09d", set)
		r := strings.NewReplacer(
			"payments-api", app,
			"mr5qwb2qwm", hash,
			"de798313-5871-494a-8d09-ed0ca7141508", fmt.Sprintf("de798313-5871-494a-8d09-%012d", set),
		)
		text := r.Replace(string(data))
		for range min(clusterReplicaMix[set%len(clusterReplicaMix)], n-len(pods)) {
			i := len(pods)
			p := &corev1.Pod{}
			if err := json.Unmarshal([]byte(strings.ReplaceAll(text, "4tkll", fmt.Sprintf("%05d", i))), p); err != nil {
				tb.Fatal(err)
			}
			p.ManagedFields = nil
			p.Name = fmt.Sprintf("%s-%s-%05d", app, hash, i)
			p.UID = types.UID(fmt.Sprintf("afa6164f-6731-4a57-8b40-%012d", i))
			p.ResourceVersion = fmt.Sprint(1000 + i)
			created := metav1.NewTime(time.Date(2026, 11, 20, 20, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second))
			p.CreationTimestamp = created
			p.Spec.NodeName = fmt.Sprintf("node-%03d", i%50)
			p.Status.HostIP = fmt.Sprintf("10.0.0.%d", i%50)
			p.Status.HostIPs = []corev1.HostIP{{IP: p.Status.HostIP}}
			p.Status.PodIP = fmt.Sprintf("10.128.%d.%d", i/250, i%250)
			p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
			started := metav1.NewTime(created.Add(3 * time.Second))
			p.Status.StartTime = &started
			for j := range p.Status.Conditions {
				p.Status.Conditions[j].LastTransitionTime = started
			}
			for j := range p.Status.ContainerStatuses {
				c := &p.Status.ContainerStatuses[j]
				c.ContainerID = fmt.Sprintf("containerd://%064d", i*10+j)
				if c.State.Running != nil {
					c.State.Running.StartedAt = started
				}
			}
			pods = append(pods, p)
		}
	}
	return pods
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
