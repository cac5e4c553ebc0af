// Package resourcelist builds the resource lists of the tests of requests and limits: the
// summaries' unit tests (pkg/index) and the end-to-end tests that check them against the API
// server's own arithmetic.
//
// It imports nothing of kubectl-idx, so that pkg/index's internal tests can use it.
package resourcelist

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Parse parses name=quantity pairs ("cpu=250m", "memory=64Mi") into a resource list; none
// is a nil list, as a container without requests has. A quantity that does not parse panics,
// as resource.MustParse does: the pairs are the test's own.
func Parse(pairs ...string) corev1.ResourceList {
	if len(pairs) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for _, p := range pairs {
		name, q, _ := strings.Cut(p, "=")
		out[corev1.ResourceName(name)] = resource.MustParse(q)
	}
	return out
}

// String renders the non-zero quantities of l, sorted, for messages and comparison:
// "cpu=2350m memory=3416Mi".
func String(l corev1.ResourceList) string {
	var out []string
	for name, q := range l {
		if !q.IsZero() {
			out = append(out, string(name)+"="+q.String())
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
