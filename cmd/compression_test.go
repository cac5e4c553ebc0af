package cmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// TestCompressionDefault runs kubectl idx version through the root's
// connection flags and reads, on the wire, whether the request asked for
// gzip: not from a server on loopback, unless --disable-compression=false
// says so; from one elsewhere (a hostname reached through the kubeconfig's
// proxy-url, the test server), as kubectl asks.
func TestCompressionDefault(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			// The proxy of a server elsewhere: answer as that server.
			t.Error("CONNECT: the proxied server is plain HTTP in this test")
			return
		}
		mu.Lock()
		seen = append(seen, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
	}))
	defer srv.Close()
	proxy := httptest.NewServer(srv.Config.Handler)
	defer proxy.Close()

	tests := []struct {
		name       string
		kubeconfig string
		args       []string
		want       string
	}{
		{name: "loopback", kubeconfig: tlsKubeconfig(t, srv.URL, ""), want: ""},
		{name: "loopback, --disable-compression=false", kubeconfig: tlsKubeconfig(t, srv.URL, ""), args: []string{"--disable-compression=false"}, want: "gzip"},
		{name: "loopback, --disable-compression", kubeconfig: tlsKubeconfig(t, srv.URL, ""), args: []string{"--disable-compression"}, want: ""},
		// A plain-HTTP server elsewhere, through a proxy on loopback: the
		// proxy-url makes client-go build a transport of its own, which
		// honors the config's compression as a TLS one does.
		{name: "elsewhere", kubeconfig: tlsKubeconfig(t, "http://kube.example.test:6443", proxy.URL), want: "gzip"},
		{name: "elsewhere, --disable-compression", kubeconfig: tlsKubeconfig(t, "http://kube.example.test:6443", proxy.URL), args: []string{"--disable-compression"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			streams, _, _, errOut := genericiooptions.NewTestIOStreams()
			root := NewCmdRoot(streams)
			root.SetArgs(append([]string{"--kubeconfig", tt.kubeconfig, "--cache-dir", t.TempDir(), "version", "-o", "json"}, tt.args...))
			if err := root.ExecuteContext(context.Background()); err != nil {
				t.Fatalf("version: %v\n%s", err, errOut)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 {
				t.Fatal("the server saw no request")
			}
			for _, got := range seen {
				if got != tt.want {
					t.Errorf("Accept-Encoding = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// tlsKubeconfig is a kubeconfig for server, whose certificate is not
// checked, through proxyURL when it is not "".
func tlsKubeconfig(t *testing.T, server, proxyURL string) string {
	t.Helper()
	cluster := "    server: " + server + "\n"
	if proxyURL != "" {
		cluster += "    proxy-url: " + proxyURL + "\n"
	} else {
		cluster += "    insecure-skip-tls-verify: true\n"
	}
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n" + cluster +
		"contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\ncurrent-context: test\nusers:\n- name: test\n  user:\n    token: not-a-real-token\n"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
