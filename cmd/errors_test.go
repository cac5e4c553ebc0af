package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
)

// TestDemoHint: when the kubeconfig read does not exist (none at all, or the
// one --kubeconfig or KUBECONFIG names), kubectl's error is followed by one
// line saying how to get a local cluster; with a kubeconfig, or an error that
// is not about reaching a cluster, by nothing.
func TestDemoHint(t *testing.T) {
	server := "http://" + fixtures.ClosedAddress(t)
	refused := "The connection to the server " + strings.TrimPrefix(server, "http://") + " was refused - did you specify the right host or port?"
	missing := filepath.Join(t.TempDir(), "nonexistent")
	tests := []struct {
		name       string
		args       []string
		kubeconfig string // KUBECONFIG
		homeConfig bool   // ~/.kube/config exists
		want       []string
	}{
		{name: "no kubeconfig at all", args: []string{"pods", "--server", server}, want: []string{refused, errtext.DemoHint}},
		{name: "--kubeconfig", args: []string{"pods", "--kubeconfig", writeKubeconfig(t, server)}, want: []string{refused}},
		{name: "KUBECONFIG", args: []string{"pods", "--server", server}, kubeconfig: writeKubeconfig(t, server), want: []string{refused}},
		{name: "~/.kube/config", args: []string{"pods", "--server", server}, homeConfig: true, want: []string{refused}},
		{name: "--kubeconfig that does not exist", args: []string{"pods", "--kubeconfig", missing}, want: []string{"error: stat " + missing + ": no such file or directory", errtext.DemoHint}},
		{name: "--kubeconfig that does not exist, ~/.kube/config", args: []string{"tree", "deploy/web", "--kubeconfig", missing}, homeConfig: true, want: []string{"error: stat " + missing + ": no such file or directory", errtext.DemoHint}},
		{name: "KUBECONFIG that does not exist", args: []string{"pods", "--server", server}, kubeconfig: missing, want: []string{refused, errtext.DemoHint}},
		{name: "KUBECONFIG of files that do not exist", args: []string{"pods", "--server", server}, kubeconfig: missing + string(filepath.ListSeparator) + missing + "-2", want: []string{refused, errtext.DemoHint}},
		{name: "KUBECONFIG, one file that exists", args: []string{"pods", "--server", server}, kubeconfig: missing + string(filepath.ListSeparator) + writeKubeconfig(t, server), want: []string{refused}},
		{
			name: "an error before any request", args: []string{"--server", server},
			want: []string{`error: you must specify the type of resource to get; use "kubectl api-resources" for a complete list of supported resources`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("KUBECONFIG", tc.kubeconfig)
			t.Setenv("KUBERNETES_SERVICE_HOST", "")
			if tc.homeConfig {
				if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(home, ".kube", "config"), []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			executeFails(t, append(tc.args, "--cache-dir", t.TempDir()), strings.Join(tc.want, "\n")+"\n")
		})
	}
}
