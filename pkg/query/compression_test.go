package query

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// acceptEncoding is a server that records the Accept-Encoding of the last
// request it was sent and answers /version.
type acceptEncoding struct {
	*httptest.Server
	mu   sync.Mutex
	last *string
}

func newAcceptEncoding(t *testing.T) *acceptEncoding {
	t.Helper()
	a := &acceptEncoding{}
	a.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get("Accept-Encoding")
		a.mu.Lock()
		a.last = &v
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"major":"1","minor":"37","gitVersion":"v1.37.2"}`))
	}))
	t.Cleanup(a.Close)
	return a
}

// ask sends one request with cfg, as the tool's discovery would, and returns
// the Accept-Encoding the server saw.
func (a *acceptEncoding) ask(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.ServerVersionWithContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last == nil {
		t.Fatal("the server saw no request")
	}
	return *a.last
}

// TestCompressionRule checks, on the wire, what the request's Accept-Encoding
// carries once CompressionRule has made a config: nothing from a loopback
// server by default, gzip when --disable-compression=false was given or the
// server's host is not a loopback address, nothing when
// --disable-compression was given on any host.
func TestCompressionRule(t *testing.T) {
	srv := newAcceptEncoding(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// toServer dials the test server whatever host the URL names: a
	// cluster elsewhere, as far as the config can tell.
	toServer := func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	tests := []struct {
		name string
		host string
		// flag is --disable-compression's value, nil when not given.
		flag *bool
		dial bool
		want string
	}{
		{name: "loopback address", host: srv.URL, want: ""},
		{name: "localhost", host: "https://localhost:" + strconv.Itoa(port), want: ""},
		{name: "loopback, --disable-compression=false", host: srv.URL, flag: ptr(false), want: "gzip"},
		{name: "loopback, --disable-compression", host: srv.URL, flag: ptr(true), want: ""},
		{name: "hostname elsewhere", host: "https://kube.example.test:6443", dial: true, want: "gzip"},
		{name: "address elsewhere", host: "https://192.0.2.10:6443", dial: true, want: "gzip"},
		{name: "elsewhere, --disable-compression", host: "https://kube.example.test:6443", dial: true, flag: ptr(true), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// TLS, as an API server serves: client-go gives a config
			// without TLS options http.DefaultTransport, which asks for
			// gzip whatever the config says.
			cfg := &rest.Config{Host: tt.host, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
			if tt.flag != nil {
				// What the flag's override leaves in the config.
				cfg.DisableCompression = *tt.flag
			}
			if tt.dial {
				cfg.Dial = toServer
			}
			wrap := CompressionRule(func() bool { return tt.flag != nil }, nil)
			got := wrap(cfg)
			if got := srv.ask(t, got); !strings.Contains(got, tt.want) || (tt.want == "" && got != "") {
				t.Errorf("Accept-Encoding = %q, want %q", got, tt.want)
			}
			if cfg.DisableCompression != (tt.flag != nil && *tt.flag) {
				t.Error("CompressionRule changed the config it was given, not a copy")
			}
		})
	}
}

// TestCompressionRuleAfterNext checks the rule applies to what the wrapper it
// follows returns (a served run's credential, say), and keeps its changes.
func TestCompressionRuleAfterNext(t *testing.T) {
	next := func(c *rest.Config) *rest.Config {
		c = rest.CopyConfig(c)
		c.BearerToken = "asker"
		return c
	}
	got := CompressionRule(nil, next)(&rest.Config{Host: "https://127.0.0.1:6443"})
	if !got.DisableCompression || got.BearerToken != "asker" {
		t.Errorf("DisableCompression %v, token %q; want true, asker", got.DisableCompression, got.BearerToken)
	}
}

func ptr[T any](v T) *T { return &v }
