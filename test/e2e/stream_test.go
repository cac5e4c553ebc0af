package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// streamLabel marks the pods of TestStreamedListing.
const streamLabel = "e2e-stream=true"

// TestStreamedListing: -o json and -o yaml print a listing page by page as the
// server sends it, -o name too (under a label selector, whose size the server does
// not tell, it stays in pages), in kubectl-idx's order
// (namespace, then name) although the server's own order differs: its keys put "strm-a/..." before "strm/...". The
// pods of strm-a fill more than one page; strm and strm-b hold a few. The answer
// equals kubectl's objects sorted by namespace and name, and the one request that
// asks whether namespace strm has pods in the list's snapshot is made.
func TestStreamedListing(t *testing.T) {
	ctx := context.Background()
	counts := map[string]int{"strm": 3, "strm-a": query.StreamPageSize + 150, "strm-b": 4}
	for ns, n := range counts {
		createStreamPods(ctx, t, ns, n)
	}
	r := as("")
	args := []string{"pods", "-A", "-l", streamLabel}

	k := r.kubectl(t, append([]string{"get", "-o", "json"}, args...)...)
	mustSucceed(t, "kubectl get -o json", k)
	kubectlDoc := decodeDoc(t, "kubectl", k.Stdout, false)
	items := kubectlDoc["items"].([]any)
	if len(items) != counts["strm"]+counts["strm-a"]+counts["strm-b"] {
		t.Fatalf("kubectl lists %d pods, want %d", len(items), counts["strm"]+counts["strm-a"]+counts["strm-b"])
	}
	// kubectl prints the server's order, whose first namespace is strm-a.
	nsName := func(item any) (string, string) {
		m := item.(map[string]any)["metadata"].(map[string]any)
		return m["namespace"].(string), m["name"].(string)
	}
	if ns, name := nsName(items[0]); ns != "strm-a" {
		t.Fatalf("kubectl's first pod is %s/%s; the server's order no longer puts strm-a first and this test tests nothing", ns, name)
	}
	slices.SortStableFunc(items, func(a, b any) int {
		nsA, nameA := nsName(a)
		nsB, nameB := nsName(b)
		if c := strings.Compare(nsA, nsB); c != 0 {
			return c
		}
		return strings.Compare(nameA, nameB)
	})
	if ns, _ := nsName(items[0]); ns != "strm" {
		t.Fatalf("sorted, the first pod is in %s, want strm", ns)
	}
	var wantNames strings.Builder
	for _, it := range items {
		fmt.Fprintf(&wantNames, "pod/%s\n", it.(map[string]any)["metadata"].(map[string]any)["name"])
	}

	for _, format := range []string{"json", "yaml"} {
		t.Run("-o "+format, func(t *testing.T) {
			res := r.idx(t, append(args, "-o", format, "-v=6")...)
			mustSucceed(t, "kubectl-idx", res)
			compareLists(t, decodeDoc(t, "kubectl-idx", res.Stdout, format == "yaml"), kubectlDoc)
			// Whole objects come in pages of StreamPageSize, each printed and
			// dropped while the next arrives.
			if !strings.Contains(res.Stderr, fmt.Sprintf("limit=%d", query.StreamPageSize)) || !strings.Contains(res.Stderr, "continue=") {
				t.Errorf("no paged LIST of %d in the request log:\n%s", query.StreamPageSize, res.Stderr)
			}
		})
	}
	t.Run("-o name", func(t *testing.T) {
		res := r.idx(t, append(args, "-o", "name", "-v=6")...)
		mustSucceed(t, "kubectl-idx", res)
		if res.Stdout != wantNames.String() {
			t.Errorf("names differ from kubectl's sorted by namespace and name (-want +got):\n%s", cmp.Diff(strings.Split(wantNames.String(), "\n"), strings.Split(res.Stdout, "\n")))
		}
		// Names read metadata only, asked for unpaged within the budget; under
		// a label selector, whose matches the server does not count, the size
		// is untold and they stay in pages after the first small one, never a
		// watch-list; and one probe of the shorter namespace at the list's
		// resource version.
		if !regexp.MustCompile(`[?&]limit=100\b`).MatchString(res.Stderr) || !strings.Contains(res.Stderr, "continue=") || strings.Contains(res.Stderr, "sendInitialEvents=true") {
			t.Errorf("no paged LIST after a small first page, or a watch-list, in the request log:\n%s", res.Stderr)
		}
		probes := 0
		for _, line := range strings.Split(res.Stderr, "\n") {
			if strings.Contains(line, "/namespaces/strm/pods?") && strings.Contains(line, "limit=1") && strings.Contains(line, "resourceVersionMatch=Exact") {
				probes++
			}
		}
		if probes != 1 {
			t.Errorf("%d requests asked whether strm has pods, want 1:\n%s", probes, res.Stderr)
		}
	})
	t.Run("piped into head", func(t *testing.T) {
		res := r.shell(t, fmt.Sprintf("kubectl idx %s -o name | head -n 2", strings.Join(args, " ")))
		mustSucceed(t, "kubectl idx | head", res)
		if want := strings.Join(strings.SplitAfter(wantNames.String(), "\n")[:2], ""); res.Stdout != want {
			t.Errorf("head -n 2 = %q, want %q", res.Stdout, want)
		}
	})
}

// createStreamPods creates n small pods labelled streamLabel in a new namespace ns,
// and deletes them when the test ends.
func createStreamPods(ctx context.Context, t *testing.T, ns string, n int) {
	t.Helper()
	cs := env.Clientset
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", ns, err)
	}
	key, value, _ := strings.Cut(streamLabel, "=")
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%05d", i), Labels: map[string]string{key: value}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}},
			}
			_, err := cs.CoreV1().Pods(ns).Create(gctx, pod, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("creating pods in %s: %v", ns, err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		if err := cs.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{LabelSelector: streamLabel}); err != nil {
			t.Errorf("deleting the pods of %s: %v", ns, err)
		}
		if err := cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
}
