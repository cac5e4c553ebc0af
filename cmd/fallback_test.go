package cmd

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
)

// TestGetRunPerNamespaceFallback: what -A prints for a user who may list pods
// in some namespaces but not at the cluster scope (the engine's answer is
// pkg/query's TestSessionPerNamespaceFallback): the pods found, and the
// warning naming the namespaces skipped on stderr and in the List's or the
// GroupList's warnings. A user who may not list namespaces either gets the
// server's Forbidden error, in kubectl's words, and nothing on stdout.
func TestGetRunPerNamespaceFallback(t *testing.T) {
	const warning = `cannot list pods at the cluster scope; listed them in each of the 3 namespaces instead, skipping 1 where that is forbidden too: other`
	tests := []struct {
		name        string
		namespaces  bool // namespaces may be listed
		byNamespace bool
		format      string
		check       func(t *testing.T, stdout string)
		wantErrOut  string
		wantErr     string
	}{
		{
			name: "namespaces listable", namespaces: true, format: "json",
			check: func(t *testing.T, stdout string) {
				if _, names := jsonItems(t, stdout); !slices.Equal(names, []string{"web-0", "web-1"}) {
					t.Errorf("pods = %q, want the two in shop", names)
				}
				if !strings.Contains(stdout, `"warnings": [`) || !strings.Contains(stdout, warning) {
					t.Errorf("the List does not carry the warning:\n%s", stdout)
				}
			},
			wantErrOut: "warning: " + warning + "\n",
		},
		{
			name: "grouped output carries it too", namespaces: true, byNamespace: true, format: "json",
			check: func(t *testing.T, stdout string) {
				doc := decodeGroupDoc(t, stdout)
				if !slices.Equal(doc.Warnings, []string{warning}) || !slices.Equal(doc.names(), []string{"shop"}) {
					t.Errorf("warnings %q, groups %q", doc.Warnings, doc.names())
				}
			},
			wantErrOut: "warning: " + warning + "\n",
		},
		{
			name:    "namespaces not listable",
			wantErr: `Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" at the cluster scope`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newRunHarness(t, fixtures.FallbackServer(tc.namespaces), []string{"pods"}, runFlags{allNamespaces: true, format: tc.format})
			h.o.Group.ByNamespace = tc.byNamespace
			err := h.run(t)
			assertRun(t, err, h.out.String(), h.err.String(), "", tc.check, "", tc.wantErrOut, tc.wantErr)
		})
	}
}
