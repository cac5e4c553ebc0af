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
// the cluster: the API server and how it is trusted, and the user the API
// server says the credentials belong to. Two invocations share a cache
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

// identityDomain starts every encoding: a hash of anything else, or of an
// earlier encoding (v1 hashed the kubeconfig's credentials), never equals one
// of these.
const identityDomain = "kubectl-idx warm cache identity v2"

// NewIdentity returns the identity of user, as Whoami found it with cfg, on
// the API server cfg connects to: cfg's server URL, the CA it trusts (its
// content, from data or file), the TLS server name and the insecure flag,
// then the user's name, UID, groups and extra values (sorted: they are sets
// to the API server).
//
// The credentials themselves are not part of it: a token an exec plugin
// renews, a rotated certificate or another kubeconfig of the same user keep
// one server, and two people (or two CI jobs) with one kubeconfig whose
// credentials differ by their environment get two. Nor is the credential id
// the API server adds to the user's extra values
// (authentication.kubernetes.io/credential-id), which changes with every
// token of one service account. Authorization depends on the user, and every
// question is authorized again with the asker's own credential whatever the
// identity (see the package doc).
func NewIdentity(cfg *rest.Config, user UserInfo) (Identity, error) {
	if cfg == nil {
		return Identity{}, errors.New("no client configuration to identify")
	}
	e := &identityEncoder{h: sha256.New()}
	e.str("domain", identityDomain)
	e.str("server", cfg.Host)
	e.bytes("ca.data", cfg.CAData)
	if err := e.fileContent("ca.file", cfg.CAFile); err != nil {
		return Identity{}, fmt.Errorf("reading the certificate authority file: %w", err)
	}
	e.str("tls.server-name", cfg.ServerName)
	e.bool("tls.insecure", cfg.Insecure)

	u := user.normalized()
	e.str("user", u.Username)
	e.str("uid", u.UID)
	e.strs("groups", u.Groups)
	extra := make([]string, 0, 2*len(u.Extra))
	for _, k := range sortedKeys(u.Extra) {
		// Each key, its count of values, then the values: read back in that
		// order, the list has one meaning.
		extra = append(extra, k, fmt.Sprint(len(u.Extra[k])))
		extra = append(extra, u.Extra[k]...)
	}
	e.strs("extra", extra)

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

// fileContent writes a file's content, empty for an empty path: the CA
// trusted, wherever it is kept.
func (e *identityEncoder) fileContent(name, path string) error {
	var content []byte
	if path != "" {
		var err error
		if content, err = os.ReadFile(path); err != nil {
			return err
		}
	}
	e.bytes(name, content)
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
