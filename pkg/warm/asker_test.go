package warm

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// reviewServer is an API server that answers SelfSubjectReview only: the user
// is the one its users map gives the request's Authorization header, or the
// common name of the client certificate; anything else is 401.
type reviewServer struct {
	*httptest.Server
	mu       sync.Mutex
	users    map[string]authenticationv1.UserInfo
	requests []http.Header
	// status, when set, answers every review with it instead.
	status int
}

func newReviewServer(t *testing.T, users map[string]authenticationv1.UserInfo, clientCAs *x509.CertPool) *reviewServer {
	t.Helper()
	s := &reviewServer{users: users}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if clientCAs != nil {
		s.TLS = &tls.Config{ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: clientCAs}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *reviewServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Header.Clone())
	status := s.status
	user, ok := s.users[r.Header.Get("Authorization")]
	s.mu.Unlock()
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cn := r.TLS.PeerCertificates[0].Subject.CommonName
		user, ok = authenticationv1.UserInfo{Username: cn, Groups: []string{"system:authenticated"}}, true
	}
	w.Header().Set("Content-Type", "application/json")
	if status == 0 && (r.Method != http.MethodPost || r.URL.Path != "/apis/authentication.k8s.io/v1/selfsubjectreviews") {
		status = http.StatusNotFound
	}
	if status == 0 && !ok {
		status = http.StatusUnauthorized
	}
	if status != 0 {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(metav1.Status{
			TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
			Status:   metav1.StatusFailure, Code: int32(status), Reason: metav1.StatusReason(http.StatusText(status)),
			Message: strings.ToLower(http.StatusText(status)),
		})
		return
	}
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(authenticationv1.SelfSubjectReview{
		TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectReview", APIVersion: "authentication.k8s.io/v1"},
		Status:   authenticationv1.SelfSubjectReviewStatus{UserInfo: user},
	})
}

func (s *reviewServer) config() *rest.Config {
	return &rest.Config{Host: s.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
}

func (s *reviewServer) lastAuthorization() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return ""
	}
	return s.requests[len(s.requests)-1].Get("Authorization")
}

var (
	alice = authenticationv1.UserInfo{Username: "alice", UID: "a1", Groups: []string{"system:authenticated", "readers"}, Extra: map[string]authenticationv1.ExtraValue{credentialIDKey: {"JTI=1"}}}
	bob   = authenticationv1.UserInfo{Username: "bob", UID: "b1", Groups: []string{"system:authenticated"}}
)

// TestWhoamiBearer: the user is the API server's answer, the credential the
// header the request carried, and Apply hands it on to another client.
func TestWhoamiBearer(t *testing.T) {
	s := newReviewServer(t, map[string]authenticationv1.UserInfo{"Bearer alice-token": alice}, nil)
	cfg := s.config()
	cfg.BearerToken = "alice-token"
	a, err := Whoami(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.User.Username != "alice" || a.User.UID != "a1" || !a.User.Same(userInfo(alice)) {
		t.Errorf("user %+v, want alice", a.User)
	}
	if a.Credential.Authorization != "Bearer alice-token" || len(a.Credential.Certificate) != 0 {
		t.Errorf("credential %+v, want alice's bearer token and no certificate", a.Credential)
	}
	// Another client, given the credential, is alice too, whatever its own
	// configuration named.
	other := s.config()
	other.BearerToken = "bob-token"
	other.BearerTokenFile = "/nonexistent"
	b, err := Whoami(context.Background(), a.Credential.Apply(other))
	if err != nil {
		t.Fatal(err)
	}
	if !b.User.Same(a.User) || s.lastAuthorization() != "Bearer alice-token" {
		t.Errorf("with alice's credential applied: user %+v, header %q", b.User, s.lastAuthorization())
	}
}

// TestWhoamiExecPlugin: one kubeconfig whose exec plugin prints the token an
// environment variable names is two users in two environments, and the
// credential is what the plugin printed (the attack of two people sharing a
// kubeconfig).
func TestWhoamiExecPlugin(t *testing.T) {
	s := newReviewServer(t, map[string]authenticationv1.UserInfo{"Bearer alice-token": alice, "Bearer bob-token": bob}, nil)
	plugin := filepath.Join(t.TempDir(), "token-plugin")
	script := `#!/bin/sh
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$WHO-token"
`
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	whoami := func(who string) *Asker {
		t.Helper()
		cfg := s.config()
		cfg.ExecProvider = &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1", Command: plugin, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
			Env: []clientcmdapi.ExecEnvVar{{Name: "WHO", Value: who}},
		}
		a, err := Whoami(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b := whoami("alice"), whoami("bob")
	if a.User.Username != "alice" || b.User.Username != "bob" {
		t.Fatalf("users %q and %q, want alice and bob", a.User.Username, b.User.Username)
	}
	if a.Credential.Authorization != "Bearer alice-token" || b.Credential.Authorization != "Bearer bob-token" {
		t.Errorf("credentials %q and %q", a.Credential.Authorization, b.Credential.Authorization)
	}
	cfg := s.config()
	ida, err := NewIdentity(cfg, a.User)
	if err != nil {
		t.Fatal(err)
	}
	idb, err := NewIdentity(cfg, b.User)
	if err != nil {
		t.Fatal(err)
	}
	if ida == idb {
		t.Error("alice and bob, through one kubeconfig, have one identity")
	}
}

// TestWhoamiClientCertificate: a client certificate is forwarded as PEM that
// authenticates as the same user.
func TestWhoamiClientCertificate(t *testing.T) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "carol"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	s := newReviewServer(t, nil, pool)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := s.config()
	cfg.CertFile, cfg.KeyFile = certFile, keyFile
	a, err := Whoami(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.User.Username != "carol" || a.Credential.Authorization != "" {
		t.Fatalf("user %q, authorization %q: want carol by her certificate", a.User.Username, a.Credential.Authorization)
	}
	block, _ := pem.Decode(a.Credential.Certificate)
	if block == nil || string(block.Bytes) != string(der) {
		t.Fatal("the forwarded certificate is not the client's")
	}
	// The forwarded pair is carol's, in a configuration that names none.
	b, err := Whoami(context.Background(), a.Credential.Apply(s.config()))
	if err != nil {
		t.Fatal(err)
	}
	if b.User.Username != "carol" {
		t.Errorf("with the forwarded certificate: %q", b.User.Username)
	}
}

// TestWhoamiErrors: the API server's refusal and the transport's failure are
// returned as they are, for a command to word as a direct run; a server
// without SelfSubjectReview says so.
func TestWhoamiErrors(t *testing.T) {
	s := newReviewServer(t, map[string]authenticationv1.UserInfo{"Bearer alice-token": alice}, nil)
	cfg := s.config()
	cfg.BearerToken = "revoked"
	if _, err := Whoami(context.Background(), cfg); !apierrors.IsUnauthorized(err) {
		t.Errorf("a token the server does not know: %v, want Unauthorized", err)
	}
	s.mu.Lock()
	s.status = http.StatusNotFound
	s.mu.Unlock()
	cfg.BearerToken = "alice-token"
	if _, err := Whoami(context.Background(), cfg); !errors.Is(err, ErrNoSelfReview) {
		t.Errorf("a server without SelfSubjectReview: %v, want ErrNoSelfReview", err)
	}

	failing := filepath.Join(t.TempDir(), "failing-plugin")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'the token expired: log in again' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg = s.config()
	cfg.ExecProvider = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: failing, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
	if _, err := Whoami(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "failed with exit code 1") {
		t.Errorf("a failing exec plugin: %v, want its failure", err)
	}

	// Nothing answers: the request timeout bounds the question.
	release := make(chan struct{})
	hung := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	hung.StartTLS()
	defer hung.Close()
	defer close(release)
	cfg = &rest.Config{Host: hung.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, Timeout: 300 * time.Millisecond}
	start := time.Now()
	if _, err := Whoami(context.Background(), cfg); err == nil {
		t.Error("a server that never answers answered")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a 300ms request timeout took %s", took)
	}
}

// TestCredentialApply: Apply keeps the server, its CA and impersonation and
// replaces every credential the configuration names with the one given.
func TestCredentialApply(t *testing.T) {
	cfg := &rest.Config{
		Host:            "https://10.0.0.1:6443",
		BearerToken:     "mine",
		BearerTokenFile: "/token",
		Username:        "u", Password: "p",
		TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca"), ServerName: "k", CertData: []byte("c"), KeyData: []byte("k"), CertFile: "/c", KeyFile: "/k"},
		ExecProvider:    &clientcmdapi.ExecConfig{Command: "get-token"},
		AuthProvider:    &clientcmdapi.AuthProviderConfig{Name: "oidc"},
		Impersonate:     rest.ImpersonationConfig{UserName: "bob", Groups: []string{"g"}},
		Timeout:         2 * time.Second,
	}
	for name, tt := range map[string]struct {
		cred  *Credential
		check func(*rest.Config) error
	}{
		"bearer": {&Credential{Authorization: "Bearer theirs"}, func(c *rest.Config) error {
			if c.BearerToken != "theirs" || c.Username != "" {
				return fmt.Errorf("token %q, username %q", c.BearerToken, c.Username)
			}
			return nil
		}},
		"basic": {&Credential{Authorization: "Basic " + "YWxpY2U6czNjcmV0"}, func(c *rest.Config) error {
			if c.Username != "alice" || c.Password != "s3cret" || c.BearerToken != "" {
				return fmt.Errorf("basic %q:%q, token %q", c.Username, c.Password, c.BearerToken)
			}
			return nil
		}},
		"certificate": {&Credential{Certificate: []byte("cert"), Key: []byte("key")}, func(c *rest.Config) error {
			if string(c.CertData) != "cert" || string(c.KeyData) != "key" || c.BearerToken != "" {
				return fmt.Errorf("cert %q, key %q, token %q", c.CertData, c.KeyData, c.BearerToken)
			}
			return nil
		}},
		"another scheme": {&Credential{Authorization: "Negotiate xyz"}, func(c *rest.Config) error {
			if c.WrapTransport == nil || c.BearerToken != "" {
				return errors.New("no header set for another scheme")
			}
			return nil
		}},
		"none": {nil, func(c *rest.Config) error {
			if c.BearerToken != "" || c.Username != "" || len(c.CertData) != 0 {
				return errors.New("a credential left in an anonymous configuration")
			}
			return nil
		}},
	} {
		out := tt.cred.Apply(cfg)
		if out.BearerTokenFile != "" || out.CertFile != "" || out.KeyFile != "" || out.ExecProvider != nil || out.AuthProvider != nil {
			t.Errorf("%s: the configuration's own credentials are left: %+v", name, out)
		}
		if out.Host != cfg.Host || string(out.CAData) != "ca" || out.ServerName != "k" || out.Impersonate.UserName != "bob" || out.Timeout != cfg.Timeout {
			t.Errorf("%s: the server, its CA, impersonation or the timeout are lost: %+v", name, out)
		}
		if err := tt.check(out); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if cfg.BearerToken != "mine" || cfg.ExecProvider == nil {
		t.Error("Apply changed the configuration it was given")
	}
}
