package warm

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
)

// UserInfo is who the API server says a credential belongs to: the status of
// a SelfSubjectReview made with it (after impersonation, when the client
// impersonates). Two askers are the same user to the cluster exactly when
// their UserInfos are equal, credential ids aside (Same).
type UserInfo struct {
	Username string              `json:"username"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

// credentialIDKey is the extra key under which the API server names the very
// credential a request came with (a service account token's ID, a client
// certificate's hash): it changes with every rotated token of one user, so it
// is left out of the identity (see NewIdentity).
const credentialIDKey = "authentication.kubernetes.io/credential-id"

// Same reports whether u and v are the same user to the API server: the same
// name, UID, groups and extra values, whatever their order, and whichever
// credential (credentialIDKey) each came with.
func (u UserInfo) Same(v UserInfo) bool {
	a, b := u.normalized(), v.normalized()
	if a.Username != b.Username || a.UID != b.UID || !slices.Equal(a.Groups, b.Groups) || len(a.Extra) != len(b.Extra) {
		return false
	}
	for k, vs := range a.Extra {
		if ws, ok := b.Extra[k]; !ok || !slices.Equal(vs, ws) {
			return false
		}
	}
	return true
}

// normalized returns u with its groups and extra values sorted and without
// the credential's own id: the user as authorization sees it.
func (u UserInfo) normalized() UserInfo {
	n := UserInfo{Username: u.Username, UID: u.UID, Groups: sorted(u.Groups), Extra: map[string][]string{}}
	for k, vs := range u.Extra {
		if k == credentialIDKey {
			continue
		}
		n.Extra[k] = sorted(vs)
	}
	return n
}

// String names the user as the API server does in its messages.
func (u UserInfo) String() string { return fmt.Sprintf("%q", u.Username) }

// Credential is what a command authenticated with, resolved: the
// Authorization header its requests carried (a bearer token, basic
// credentials, an exec plugin's or an auth provider's token) and the client
// certificate it presented, if any. A command through the warm cache hands
// it to the cache server with its request, so that the server asks the API
// server with the asker's own credential whether the asker may read what the
// answer holds, every time (an exec plugin runs in the asker's process, with
// the asker's environment, as it would for a direct run). It travels only on
// the cache socket, to a process of the same user, which keeps it for the
// request's life and writes it nowhere.
type Credential struct {
	// Authorization is the Authorization header's value; "" for none.
	Authorization string `json:"authorization,omitempty"`
	// Certificate is the client certificate chain in PEM, Key its private key
	// in PEM (PKCS #8); both nil without one.
	Certificate []byte `json:"certificate,omitempty"`
	Key         []byte `json:"key,omitempty"`
}

// IsZero reports whether c holds no credential: an anonymous request.
func (c *Credential) IsZero() bool {
	return c == nil || c.Authorization == "" && len(c.Certificate) == 0
}

// fingerprint hashes everything of c: a key under which a server remembers
// whom the API server said it belongs to.
func (c *Credential) fingerprint() [sha256.Size]byte {
	e := &identityEncoder{h: sha256.New()}
	e.str("domain", "kubectl-idx credential v1")
	if c != nil {
		e.str("authorization", c.Authorization)
		e.bytes("certificate", c.Certificate)
		e.bytes("key", c.Key)
	}
	var sum [sha256.Size]byte
	e.h.Sum(sum[:0])
	return sum
}

// Apply returns a copy of cfg that authenticates with c and nothing else:
// the credentials cfg names (token, token file, basic auth, client
// certificate, exec plugin, auth provider) are replaced by c, and the rest
// (the server, its CA, impersonation, timeouts) is kept.
func (c *Credential) Apply(cfg *rest.Config) *rest.Config {
	out := rest.AnonymousClientConfig(cfg)
	out.Impersonate = cfg.Impersonate
	out.WrapTransport = cfg.WrapTransport
	out.WarningHandler, out.WarningHandlerWithContext = cfg.WarningHandler, cfg.WarningHandlerWithContext
	if c == nil {
		return out
	}
	if len(c.Certificate) > 0 {
		out.CertData, out.KeyData = c.Certificate, c.Key
	}
	if auth := c.Authorization; auth != "" {
		if token, ok := strings.CutPrefix(auth, "Bearer "); ok {
			out.BearerToken = token
		} else if user, pass, ok := basicAuth(auth); ok {
			out.Username, out.Password = user, pass
		} else {
			out.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &authorizationHeader{rt: rt, value: auth} })
		}
	}
	return out
}

// basicAuth parses a Basic Authorization header as net/http does.
func basicAuth(auth string) (user, pass string, ok bool) {
	const prefix = "Basic "
	if len(auth) < len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) {
		return "", "", false
	}
	b, err := base64.StdEncoding.DecodeString(auth[len(prefix):])
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(b), ":")
}

// authorizationHeader sets an Authorization header of a scheme client-go has
// no field for (an auth provider's).
type authorizationHeader struct {
	rt    http.RoundTripper
	value string
}

func (a *authorizationHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" {
		return a.rt.RoundTrip(req)
	}
	req = utilnet.CloneRequest(req)
	req.Header.Set("Authorization", a.value)
	return a.rt.RoundTrip(req)
}

func (a *authorizationHeader) WrappedRoundTripper() http.RoundTripper { return a.rt }

// Asker is who asks a question through the warm cache, as the API server
// sees them, and the credential they asked with.
type Asker struct {
	User       UserInfo
	Credential *Credential
}

// ErrNoSelfReview says the API server does not answer SelfSubjectReview
// (authentication.k8s.io/v1, Kubernetes 1.28 and later), which is how the
// warm cache tells users apart: such a server is answered directly.
var ErrNoSelfReview = errors.New("the API server does not say who a credential belongs to (SelfSubjectReview, Kubernetes 1.28 and later)")

// Whoami asks the API server, with cfg's credentials, who they belong to
// (a SelfSubjectReview), and returns that with the credential the request
// carried: the Authorization header and the client certificate, as
// client-go resolved them (running cfg's exec plugin, reading its token
// file). Errors are the API server's and the transport's as they are
// (Unauthorized, an unreachable server, an exec plugin that fails), so that
// a command reports them as a direct run would; a server without
// SelfSubjectReview is ErrNoSelfReview.
func Whoami(ctx context.Context, cfg *rest.Config) (*Asker, error) {
	cfg = rest.CopyConfig(cfg)
	// The innermost wrapper: it sees the request as every authenticating
	// round tripper (bearer, basic, exec, auth provider) left it.
	var mu sync.Mutex
	var auth string
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &seenAuthorization{rt: rt, seen: func(v string) {
			mu.Lock()
			auth = v
			mu.Unlock()
		}}
	})
	client, err := authenticationclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	review, err := client.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		if notServed(err) {
			return nil, fmt.Errorf("%w: %w", ErrNoSelfReview, err)
		}
		return nil, err
	}
	a := &Asker{User: userInfo(review.Status.UserInfo), Credential: &Credential{}}
	mu.Lock()
	a.Credential.Authorization = auth
	mu.Unlock()
	if a.Credential.Certificate, a.Credential.Key, err = clientCertificate(cfg); err != nil {
		return nil, fmt.Errorf("reading the client certificate: %w", err)
	}
	return a, nil
}

// IdentityOf asks the API server who cfg's credentials belong to (Whoami)
// and returns the identity of that user on cfg's server, with the asker: the
// one way every side of the cache names a server, the client looking for
// one, a server checking its own credentials and each asker's, and cache
// status and stop. Its errors are Whoami's.
func IdentityOf(ctx context.Context, cfg *rest.Config) (Identity, *Asker, error) {
	a, err := Whoami(ctx, cfg)
	if err != nil {
		return Identity{}, nil, err
	}
	id, err := NewIdentity(cfg, a.User)
	if err != nil {
		return Identity{}, nil, err
	}
	return id, a, nil
}

// seenAuthorization tells seen the Authorization header of every request.
type seenAuthorization struct {
	rt   http.RoundTripper
	seen func(string)
}

func (s *seenAuthorization) RoundTrip(req *http.Request) (*http.Response, error) {
	s.seen(req.Header.Get("Authorization"))
	return s.rt.RoundTrip(req)
}

func (s *seenAuthorization) WrappedRoundTripper() http.RoundTripper { return s.rt }

// notServed reports whether err says the server has no SelfSubjectReview.
func notServed(err error) bool {
	var status interface{ Status() metav1.Status }
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code == http.StatusNotFound || code == http.StatusMethodNotAllowed
}

func userInfo(u authenticationv1.UserInfo) UserInfo {
	out := UserInfo{Username: u.Username, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		out.Extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			out.Extra[k] = []string(v)
		}
	}
	return out
}

// clientCertificate returns the client certificate chain and key cfg
// presents, in PEM, as client-go's TLS configuration resolves them (data,
// files, an exec plugin's certificate); nil for none.
func clientCertificate(cfg *rest.Config) (certPEM, keyPEM []byte, err error) {
	tc, err := cfg.TransportConfig()
	if err != nil {
		return nil, nil, err
	}
	tlsCfg, err := transport.TLSConfigFor(tc)
	if err != nil || tlsCfg == nil {
		return nil, nil, err
	}
	var cert *tls.Certificate
	switch {
	case tlsCfg.GetClientCertificate != nil:
		if cert, err = tlsCfg.GetClientCertificate(&tls.CertificateRequestInfo{}); err != nil {
			return nil, nil, err
		}
	case len(tlsCfg.Certificates) > 0:
		cert = &tlsCfg.Certificates[0]
	}
	if cert == nil || len(cert.Certificate) == 0 {
		return nil, nil, nil
	}
	for _, der := range cert.Certificate {
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		return nil, nil, err
	}
	return certPEM, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
