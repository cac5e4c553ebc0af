package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestServerWarnings: the Warning headers of a server's answer reach stderr
// as kubectl prints them, each once however often the server repeats it, and
// stdout carries the answer alone.
func TestServerWarnings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			t.Errorf("unexpected request: %s %s", r.Method, r.URL)
			http.NotFound(w, r)
			return
		}
		w.Header().Add("Warning", `299 - "this server is deprecated"`)
		w.Header().Add("Warning", `299 - "this server is deprecated"`)
		w.Header().Add("Warning", `299 - "upgrade by Friday"`)
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(version.Info{GitVersion: "v1.37.2"}); err != nil {
			t.Error(err)
		}
	}))
	t.Cleanup(srv.Close)

	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	if code := Execute(streams, []string{"version", "--kubeconfig", writeKubeconfig(t, srv.URL)}); code != 0 {
		t.Fatalf("exit code %d, stderr:\n%s", code, errOut)
	}
	if want := "Warning: this server is deprecated\nWarning: upgrade by Friday\n"; errOut.String() != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
	if !strings.Contains(out.String(), "Server Version: v1.37.2\n") || strings.Contains(out.String(), "Warning") {
		t.Errorf("stdout = %q, want the versions alone", out)
	}
}
