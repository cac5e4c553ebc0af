package warm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"os"
	"slices"
	"sort"

	"k8s.io/client-go/rest"
)

// Identity is the SHA-256 of everything that decides who a cache server is to
// the cluster: the server, how it is trusted, the credentials as the kubeconfig
// names them, impersonation and the context. Two invocations share a cache
// server only when their identities are equal; the socket is named after the
// first half of it and the handshake compares all of it.
type Identity [sha256.Size]byte

// String returns the identity in lowercase hex.
func (id Identity) String() string { return hex.EncodeToString(id[:]) }

// IsZero reports whether id was never set.
func (id Identity) IsZero() bool { return id == Identity{} }

// prefix is the half of the identity a socket and a lock file are named
// after: 128 bits, long enough that two identities of one user never meet by
// chance; the handshake compares the rest.
func (id Identity) prefix() string { return id.String()[:32] }

// MarshalText encodes the identity in hex for the handshake.
func (id Identity) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText accepts exactly 64 lowercase hex digits, nothing else.
func (id *Identity) UnmarshalText(b []byte) error {
	if len(b) != 2*sha256.Size {
		return fmt.Errorf("identity must be %d hex digits, not %d bytes", 2*sha256.Size, len(b))
	}
	for _, c := range b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return errors.New("identity must be lowercase hex")
		}
	}
	_, err := hex.Decode(id[:], b)
	return err
}

// identityDomain starts every encoding: a hash of anything else, or of a later
// encoding, never equals one of these.
const identityDomain = "kubectl-idx warm cache identity v1"

// NewIdentity returns the identity of cfg, a client configuration as
// cli-runtime's ConfigFlags.ToRESTConfig builds it (so --token, --as, --user and
// the rest are in it), under the context named contextName.
//
// Files the configuration names are read: the CA, the token file, the client
// certificate and key. Their paths and their contents are both part of the
// identity, so a rotated token or certificate gives another identity and
// another server (the old one exits when idle). An exec plugin's credentials are
// not known until it runs: its apiVersion, command, arguments and env stand for
// them. An auth-provider is identified by its name and config, which holds its
// tokens.
//
// Not part of it: QPS, timeouts, the user agent and other settings that change
// how a client talks to the server but not who it is, the proxy (a function in
// rest.Config), and the environment an exec plugin inherits (AWS_PROFILE and the
// like), which the cache server keeps as it was when it started.
func NewIdentity(cfg *rest.Config, contextName string) (Identity, error) {
	if cfg == nil {
		return Identity{}, errors.New("no client configuration to identify")
	}
	e := &identityEncoder{h: sha256.New()}
	e.str("domain", identityDomain)
	e.str("context", contextName)
	e.str("server", cfg.Host)

	e.bytes("ca.data", cfg.CAData)
	if err := e.file("ca.file", cfg.CAFile); err != nil {
		return Identity{}, fmt.Errorf("reading the certificate authority file: %w", err)
	}
	e.str("tls.server-name", cfg.ServerName)
	e.bool("tls.insecure", cfg.Insecure)

	e.str("token", cfg.BearerToken)
	if err := e.file("token.file", cfg.BearerTokenFile); err != nil {
		return Identity{}, fmt.Errorf("reading the token file: %w", err)
	}
	e.bytes("client-certificate.data", cfg.CertData)
	if err := e.file("client-certificate.file", cfg.CertFile); err != nil {
		return Identity{}, fmt.Errorf("reading the client certificate file: %w", err)
	}
	e.bytes("client-key.data", cfg.KeyData)
	if err := e.file("client-key.file", cfg.KeyFile); err != nil {
		return Identity{}, fmt.Errorf("reading the client key file: %w", err)
	}
	e.str("username", cfg.Username)
	e.str("password", cfg.Password)

	e.bool("exec", cfg.ExecProvider != nil)
	if x := cfg.ExecProvider; x != nil {
		e.str("exec.api-version", x.APIVersion)
		e.str("exec.command", x.Command)
		// Arguments and env keep their order: a different order is at worst
		// another server, never two users sharing one.
		e.strs("exec.args", x.Args)
		env := make([]string, 0, 2*len(x.Env))
		for _, v := range x.Env {
			env = append(env, v.Name, v.Value)
		}
		e.strs("exec.env", env)
	}

	e.bool("auth-provider", cfg.AuthProvider != nil)
	if p := cfg.AuthProvider; p != nil {
		e.str("auth-provider.name", p.Name)
		e.strs("auth-provider.config", sortedPairs(p.Config))
	}

	imp := cfg.Impersonate
	e.str("as", imp.UserName)
	e.str("as-uid", imp.UID)
	// Groups and extra values are sets to the API server: sorted, so the order
	// flags or kubeconfig list them in does not split one identity in two.
	e.strs("as-groups", sorted(imp.Groups))
	extra := make([]string, 0, 2*len(imp.Extra))
	for _, k := range sortedKeys(imp.Extra) {
		// Each key, its count of values, then the values: read back in that
		// order, the list has one meaning.
		extra = append(extra, k, fmt.Sprint(len(imp.Extra[k])))
		extra = append(extra, sorted(imp.Extra[k])...)
	}
	e.strs("as-user-extra", extra)

	var id Identity
	e.h.Sum(id[:0])
	return id, nil
}

// identityEncoder writes fields in a fixed order, each as its name and its value
// with their lengths in front (lists with their count), so that no two different
// configurations encode to the same bytes: one can be read back unambiguously.
type identityEncoder struct{ h hash.Hash }

func (e *identityEncoder) raw(b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	e.h.Write(n[:])
	e.h.Write(b)
}

func (e *identityEncoder) bytes(name string, v []byte) {
	e.raw([]byte(name))
	e.raw(v)
}

func (e *identityEncoder) str(name, v string) { e.bytes(name, []byte(v)) }

func (e *identityEncoder) bool(name string, v bool) {
	b := []byte{0}
	if v {
		b[0] = 1
	}
	e.bytes(name, b)
}

func (e *identityEncoder) strs(name string, vs []string) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(vs)))
	e.bytes(name, n[:])
	for _, v := range vs {
		e.raw([]byte(v))
	}
}

// file writes a file's path and its content; an empty path writes both empty.
func (e *identityEncoder) file(name, path string) error {
	e.str(name+".path", path)
	var content []byte
	if path != "" {
		var err error
		if content, err = os.ReadFile(path); err != nil {
			return err
		}
	}
	e.bytes(name+".content", content)
	return nil
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedPairs(m map[string]string) []string {
	pairs := make([]string, 0, 2*len(m))
	for _, k := range sortedKeys(m) {
		pairs = append(pairs, k, m[k])
	}
	return pairs
}
