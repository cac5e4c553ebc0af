// Package realistic builds pods as heavy as a production cluster's for the
// memory and encoding tests of several packages: pkg/wire's
// testdata/pod-realistic.json (a copy of the bench's: 12 KB of JSON, half of
// it metadata, managedFields from two writers), varied pod by pod.
package realistic

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ReplicaMix is the sizes of the ReplicaSets of the bench's realistic cluster
// (test/fixtures' RealisticPods), ten pods per template on average.
var ReplicaMix = []int{3, 2, 5, 1, 10, 3, 2, 20, 4, 50}

// Pods returns n realistic pods in ReplicaSets of ReplicaMix's sizes. The
// pods of a ReplicaSet have their template in common; each ReplicaSet has its
// own app name (labels, selectors, environment, ConfigMap), template hash and
// owner; each pod its own name, UID, token volume, node, IPs, container IDs,
// creation and start times (pod i created i seconds after the first, started
// 3 s later) and resourceVersion (1000+i). Copies of one pod would make every
// pod look like the one before it.
func Pods(tb testing.TB, n int) []corev1.Pod {
	tb.Helper()
	_, self, _, ok := goruntime.Caller(0)
	if !ok {
		tb.Fatal("cannot locate pod-realistic.json")
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "..", "pkg", "wire", "testdata", "pod-realistic.json"))
	if err != nil {
		tb.Fatal(err)
	}
	pods := make([]corev1.Pod, 0, n)
	for set := 0; len(pods) < n; set++ {
		app := fmt.Sprintf("app%04d-api", set)
		hash := fmt.Sprintf("h%09d", set)
		r := strings.NewReplacer(
			"payments-api", app,
			"mr5qwb2qwm", hash,
			"de798313-5871-494a-8d09-ed0ca7141508", fmt.Sprintf("de798313-5871-494a-8d09-%012d", set),
		)
		text := r.Replace(string(data))
		for range min(ReplicaMix[set%len(ReplicaMix)], n-len(pods)) {
			i := len(pods)
			var p corev1.Pod
			if err := json.Unmarshal([]byte(strings.ReplaceAll(text, "4tkll", fmt.Sprintf("%05d", i))), &p); err != nil {
				tb.Fatal(err)
			}
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
