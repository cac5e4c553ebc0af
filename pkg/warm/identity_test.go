package warm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// identityBase returns a configuration with every field the identity covers
// set, its files written under dir.
func identityBase(t *testing.T, dir string) *rest.Config {
	t.Helper()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return &rest.Config{
		Host:            "https://10.0.0.1:6443",
		BearerToken:     "token-a",
		BearerTokenFile: write("token", "file-token-a"),
		Username:        "alice",
		Password:        "secret",
		TLSClientConfig: rest.TLSClientConfig{
			ServerName: "kubernetes",
			CAData:     []byte("ca-data"),
			CAFile:     write("ca.crt", "ca-file"),
			CertData:   []byte("cert-data"),
			CertFile:   write("client.crt", "cert-file"),
			KeyData:    []byte("key-data"),
			KeyFile:    write("client.key", "key-file"),
		},
		ExecProvider: &clientcmdapi.ExecConfig{
			APIVersion: "client.authentication.k8s.io/v1",
			Command:    "get-token",
			Args:       []string{"--cluster", "a"},
			Env:        []clientcmdapi.ExecEnvVar{{Name: "PROFILE", Value: "a"}},
		},
		AuthProvider: &clientcmdapi.AuthProviderConfig{
			Name:   "oidc",
			Config: map[string]string{"client-id": "a", "id-token": "t"},
		},
		Impersonate: rest.ImpersonationConfig{
			UserName: "bob",
			UID:      "1234",
			Groups:   []string{"g1", "g2"},
			Extra:    map[string][]string{"scopes": {"s1", "s2"}},
		},
		// Settings that do not change who the client is.
		QPS:       50,
		Burst:     300,
		UserAgent: "kubectl-idx",
	}
}

// identityUser is a user with every field the identity covers set.
func identityUser() UserInfo {
	return UserInfo{
		Username: "system:serviceaccount:shop:reader",
		UID:      "1234",
		Groups:   []string{"system:serviceaccounts", "system:authenticated"},
		Extra: map[string][]string{
			"authentication.kubernetes.io/pod-name": {"web-0"},
			"scopes":                                {"s1", "s2"},
			credentialIDKey:                         {"JTI=a"},
		},
	}
}

func mustIdentity(t *testing.T, cfg *rest.Config, user UserInfo) Identity {
	t.Helper()
	id, err := NewIdentity(cfg, user)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestIdentityFields changes one field of the cluster or the user at a time:
// each must give another identity, and no two changes the same one.
func TestIdentityFields(t *testing.T) {
	dir := t.TempDir()
	overwrite := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		change func(c *rest.Config)
		user   func(u *UserInfo)
	}{
		{name: "server", change: func(c *rest.Config) { c.Host = "https://10.0.0.2:6443" }},
		{name: "CA data", change: func(c *rest.Config) { c.CAData = []byte("ca-data-2") }},
		{name: "CA file content", change: func(c *rest.Config) { overwrite(c.CAFile, "ca-file-2") }},
		{name: "TLS server name", change: func(c *rest.Config) { c.ServerName = "other" }},
		{name: "insecure", change: func(c *rest.Config) { c.Insecure = true }},
		{name: "username", user: func(u *UserInfo) { u.Username = "alice" }},
		{name: "uid", user: func(u *UserInfo) { u.UID = "5678" }},
		{name: "a group less", user: func(u *UserInfo) { u.Groups = u.Groups[:1] }},
		{name: "a group more", user: func(u *UserInfo) { u.Groups = append(u.Groups, "admins") }},
		{name: "an extra value", user: func(u *UserInfo) { u.Extra["scopes"] = []string{"s1"} }},
		{name: "an extra key", user: func(u *UserInfo) { u.Extra["s2"] = nil }},
		{name: "extra values run together", user: func(u *UserInfo) { u.Extra["scopes"] = []string{"s1s2"} }},
	}
	base := mustIdentity(t, identityBase(t, dir), identityUser())
	if again := mustIdentity(t, identityBase(t, dir), identityUser()); again != base {
		t.Fatalf("the same configuration and user gave %s, then %s", base, again)
	}
	seen := map[Identity]string{base: "base"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// identityBase writes the base files again: a file changed by
			// the previous case is restored.
			cfg, user := identityBase(t, dir), identityUser()
			if tt.change != nil {
				tt.change(cfg)
			}
			if tt.user != nil {
				tt.user(&user)
			}
			id := mustIdentity(t, cfg, user)
			if prev, ok := seen[id]; ok {
				t.Fatalf("changing %s gave the identity of %s", tt.name, prev)
			}
			seen[id] = tt.name
		})
	}
}

// TestIdentityIsTheUserNotTheCredential: the credentials a configuration
// names, how a client talks, where the CA file lives and the id of the very
// credential the API server saw leave the identity alone: a renewed token or
// another kubeconfig of the same user keeps one cache server.
func TestIdentityIsTheUserNotTheCredential(t *testing.T) {
	dir := t.TempDir()
	base := mustIdentity(t, identityBase(t, dir), identityUser())
	for name, change := range map[string]func(c *rest.Config, u *UserInfo){
		"token":         func(c *rest.Config, _ *UserInfo) { c.BearerToken = "token-b" },
		"token file":    func(c *rest.Config, _ *UserInfo) { c.BearerTokenFile = "/elsewhere" },
		"certificate":   func(c *rest.Config, _ *UserInfo) { c.CertData, c.KeyData = []byte("c2"), []byte("k2") },
		"basic auth":    func(c *rest.Config, _ *UserInfo) { c.Username, c.Password = "carol", "x" },
		"exec plugin":   func(c *rest.Config, _ *UserInfo) { c.ExecProvider.Env[0].Value = "b" },
		"auth provider": func(c *rest.Config, _ *UserInfo) { c.AuthProvider = nil },
		"impersonation": func(c *rest.Config, _ *UserInfo) { c.Impersonate = rest.ImpersonationConfig{} },
		"CA file path": func(c *rest.Config, _ *UserInfo) {
			p := filepath.Join(t.TempDir(), "ca.crt")
			if err := os.WriteFile(p, []byte("ca-file"), 0o600); err != nil {
				t.Fatal(err)
			}
			c.CAFile = p
		},
		"QPS, user agent and timeout": func(c *rest.Config, _ *UserInfo) { c.QPS, c.Burst, c.UserAgent, c.Timeout = 5, 10, "other", 42 },
		"credential id":               func(_ *rest.Config, u *UserInfo) { u.Extra[credentialIDKey] = []string{"JTI=b"} },
		"no credential id":            func(_ *rest.Config, u *UserInfo) { delete(u.Extra, credentialIDKey) },
		"groups and extra in another order": func(_ *rest.Config, u *UserInfo) {
			u.Groups = []string{"system:authenticated", "system:serviceaccounts"}
			u.Extra["scopes"] = []string{"s2", "s1"}
		},
	} {
		cfg, user := identityBase(t, dir), identityUser()
		change(cfg, &user)
		if mustIdentity(t, cfg, user) != base {
			t.Errorf("%s changed the identity", name)
		}
		if !user.Same(identityUser()) {
			t.Errorf("%s: the users are not the Same", name)
		}
	}
}

func TestIdentityErrors(t *testing.T) {
	cfg := identityBase(t, t.TempDir())
	cfg.CAFile = "/nonexistent/ca"
	if _, err := NewIdentity(cfg, identityUser()); err == nil || !strings.Contains(err.Error(), "reading the certificate authority file") {
		t.Fatalf("got %v, want an error reading the certificate authority file", err)
	}
	if _, err := NewIdentity(nil, identityUser()); err == nil {
		t.Error("a nil configuration gave an identity")
	}
}

func TestIdentityText(t *testing.T) {
	id := mustIdentity(t, identityBase(t, t.TempDir()), identityUser())
	b, err := json.Marshal(id)
	if err != nil {
		t.Fatal(err)
	}
	var back Identity
	if err := json.Unmarshal(b, &back); err != nil || back != id {
		t.Fatalf("round trip: %v, %s != %s", err, back, id)
	}
	if len(id.prefix()) != 32 || !strings.HasPrefix(id.String(), id.prefix()) {
		t.Errorf("prefix %q of %s", id.prefix(), id)
	}
	for _, bad := range []string{`""`, `"abc"`, `"` + strings.ToUpper(id.String()) + `"`, `"` + strings.Repeat("g", 64) + `"`, `12`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s decoded as an identity", bad)
		}
	}
}
