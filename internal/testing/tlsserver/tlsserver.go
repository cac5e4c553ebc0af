// Package tlsserver serves a test's handler over TLS, as the API server is
// served, for the tests of what client-go's real transports do with it.
package tlsserver

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"
)

// Start serves h over TLS until the test ends, speaking HTTP/2 when h2 is true
// and HTTP/1.1 otherwise. It returns the server and a client configuration
// that reaches it and trusts its certificate.
func Start(t testing.TB, h http.HandlerFunc, h2 bool) (*httptest.Server, *rest.Config) {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.EnableHTTP2 = h2
	s.StartTLS()
	t.Cleanup(s.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	return s, &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}
