package warm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
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

func mustIdentity(t *testing.T, cfg *rest.Config, context string) Identity {
	t.Helper()
	id, err := NewIdentity(cfg, context)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestIdentityFields changes one field at a time: each must give another
// identity, and no two changes the same one.
func TestIdentityFields(t *testing.T) {
	dir := t.TempDir()
	overwrite := func(path, content string) {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyTo := func(path, name string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), name)
		overwrite(p, string(b))
		return p
	}
	tests := []struct {
		name    string
		context string
		change  func(c *rest.Config)
	}{
		{name: "context", context: "other"},
		{name: "server", change: func(c *rest.Config) { c.Host = "https://10.0.0.2:6443" }},
		{name: "CA data", change: func(c *rest.Config) { c.CAData = []byte("ca-data-2") }},
		{name: "CA file content", change: func(c *rest.Config) { overwrite(c.CAFile, "ca-file-2") }},
		{name: "CA file path", change: func(c *rest.Config) { c.CAFile = copyTo(c.CAFile, "ca.crt") }},
		{name: "TLS server name", change: func(c *rest.Config) { c.ServerName = "other" }},
		{name: "insecure", change: func(c *rest.Config) { c.Insecure = true }},
		{name: "token", change: func(c *rest.Config) { c.BearerToken = "token-b" }},
		{name: "token file content", change: func(c *rest.Config) { overwrite(c.BearerTokenFile, "file-token-b") }},
		{name: "token file path", change: func(c *rest.Config) { c.BearerTokenFile = copyTo(c.BearerTokenFile, "token") }},
		{name: "client certificate data", change: func(c *rest.Config) { c.CertData = []byte("cert-data-2") }},
		{name: "client certificate file content", change: func(c *rest.Config) { overwrite(c.CertFile, "cert-file-2") }},
		{name: "client certificate file path", change: func(c *rest.Config) { c.CertFile = copyTo(c.CertFile, "client.crt") }},
		{name: "client key data", change: func(c *rest.Config) { c.KeyData = []byte("key-data-2") }},
		{name: "client key file content", change: func(c *rest.Config) { overwrite(c.KeyFile, "key-file-2") }},
		{name: "client key file path", change: func(c *rest.Config) { c.KeyFile = copyTo(c.KeyFile, "client.key") }},
		{name: "username", change: func(c *rest.Config) { c.Username = "carol" }},
		{name: "password", change: func(c *rest.Config) { c.Password = "secret-2" }},
		{name: "no exec plugin", change: func(c *rest.Config) { c.ExecProvider = nil }},
		{name: "exec apiVersion", change: func(c *rest.Config) { c.ExecProvider.APIVersion = "client.authentication.k8s.io/v1beta1" }},
		{name: "exec command", change: func(c *rest.Config) { c.ExecProvider.Command = "other-token" }},
		{name: "exec arguments", change: func(c *rest.Config) { c.ExecProvider.Args = []string{"--cluster", "b"} }},
		{name: "exec arguments split", change: func(c *rest.Config) { c.ExecProvider.Args = []string{"--cluster a"} }},
		{name: "exec env", change: func(c *rest.Config) { c.ExecProvider.Env[0].Value = "b" }},
		{name: "no auth-provider", change: func(c *rest.Config) { c.AuthProvider = nil }},
		{name: "auth-provider name", change: func(c *rest.Config) { c.AuthProvider.Name = "gcp" }},
		{name: "auth-provider config", change: func(c *rest.Config) { c.AuthProvider.Config["id-token"] = "u" }},
		{name: "as", change: func(c *rest.Config) { c.Impersonate.UserName = "dave" }},
		{name: "as-uid", change: func(c *rest.Config) { c.Impersonate.UID = "5678" }},
		{name: "as-group", change: func(c *rest.Config) { c.Impersonate.Groups = []string{"g1"} }},
		{name: "as-user-extra value", change: func(c *rest.Config) { c.Impersonate.Extra["scopes"] = []string{"s1"} }},
		{name: "as-user-extra key", change: func(c *rest.Config) {
			c.Impersonate.Extra = map[string][]string{"scopes": {"s1"}, "s2": nil}
		}},
	}
	base := mustIdentity(t, identityBase(t, dir), "ctx")
	if again := mustIdentity(t, identityBase(t, dir), "ctx"); again != base {
		t.Fatalf("the same configuration gave %s, then %s", base, again)
	}
	seen := map[Identity]string{base: "base"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// identityBase writes the base files again: a file changed by
			// the previous case is restored.
			cfg := identityBase(t, dir)
			ctx := "ctx"
			if tt.context != "" {
				ctx = tt.context
			}
			if tt.change != nil {
				tt.change(cfg)
			}
			id := mustIdentity(t, cfg, ctx)
			if prev, ok := seen[id]; ok {
				t.Fatalf("changing %s gave the identity of %s", tt.name, prev)
			}
			seen[id] = tt.name
		})
	}
}

// TestIdentitySets checks that impersonation groups, extra values and an
// auth-provider's config are sets: their order does not matter.
func TestIdentitySets(t *testing.T) {
	dir := t.TempDir()
	a := identityBase(t, dir)
	b := identityBase(t, dir)
	b.Impersonate.Groups = []string{"g2", "g1"}
	b.Impersonate.Extra = map[string][]string{"scopes": {"s2", "s1"}}
	if ia, ib := mustIdentity(t, a, "ctx"), mustIdentity(t, b, "ctx"); ia != ib {
		t.Errorf("groups and extra in another order gave another identity")
	}
}

// TestIdentityIgnores checks that settings of how a client talks, not of who
// it is, leave the identity alone.
func TestIdentityIgnores(t *testing.T) {
	dir := t.TempDir()
	a := identityBase(t, dir)
	b := identityBase(t, dir)
	b.QPS, b.Burst, b.UserAgent, b.Timeout = 5, 10, "other", 42
	if mustIdentity(t, a, "ctx") != mustIdentity(t, b, "ctx") {
		t.Errorf("QPS, burst, user agent and timeout changed the identity")
	}
}

func TestIdentityFileErrors(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(c *rest.Config)
		want   string
	}{
		{"CA file", func(c *rest.Config) { c.CAFile = "/nonexistent/ca" }, "reading the certificate authority file"},
		{"token file", func(c *rest.Config) { c.BearerTokenFile = "/nonexistent/token" }, "reading the token file"},
		{"certificate file", func(c *rest.Config) { c.CertFile = "/nonexistent/crt" }, "reading the client certificate file"},
		{"key file", func(c *rest.Config) { c.KeyFile = "/nonexistent/key" }, "reading the client key file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := identityBase(t, t.TempDir())
			tt.change(cfg)
			_, err := NewIdentity(cfg, "ctx")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := NewIdentity(nil, "ctx"); err == nil {
		t.Error("a nil configuration gave an identity")
	}
}

func TestIdentityText(t *testing.T) {
	id := mustIdentity(t, identityBase(t, t.TempDir()), "ctx")
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

// TestIdentityConfigFlags goes through cli-runtime's ConfigFlags as commands
// do: flags that change who the client is change the identity.
func TestIdentityConfigFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example:6443", insecure-skip-tls-verify: true}
users:
- name: alice
  user: {token: alice-token}
- name: bob
  user: {token: bob-token}
contexts:
- name: a
  context: {cluster: a, user: alice}
- name: a-bob
  context: {cluster: a, user: bob}
current-context: a
`), 0o600); err != nil {
		t.Fatal(err)
	}
	identity := func(set func(f *genericclioptions.ConfigFlags)) Identity {
		t.Helper()
		f := genericclioptions.NewConfigFlags(false)
		f.KubeConfig = &kubeconfig
		if set != nil {
			set(f)
		}
		cfg, err := f.ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := f.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			t.Fatal(err)
		}
		context := raw.CurrentContext
		if *f.Context != "" {
			context = *f.Context
		}
		return mustIdentity(t, cfg, context)
	}
	str := func(s string) *string { return &s }
	base := identity(nil)
	if identity(nil) != base {
		t.Fatal("the same flags gave another identity")
	}
	for name, set := range map[string]func(f *genericclioptions.ConfigFlags){
		"--token":   func(f *genericclioptions.ConfigFlags) { f.BearerToken = str("other-token") },
		"--as":      func(f *genericclioptions.ConfigFlags) { f.Impersonate = str("carol") },
		"--context": func(f *genericclioptions.ConfigFlags) { f.Context = str("a-bob") },
		"--user":    func(f *genericclioptions.ConfigFlags) { f.AuthInfoName = str("bob") },
		"--server":  func(f *genericclioptions.ConfigFlags) { f.APIServer = str("https://b.example:6443") },
	} {
		if identity(set) == base {
			t.Errorf("%s left the identity unchanged", name)
		}
	}
	// QPS and the like are not flags; --request-timeout is, and is not who
	// the client is.
	if identity(func(f *genericclioptions.ConfigFlags) { f.Timeout = str("5s") }) != base {
		t.Error("--request-timeout changed the identity")
	}
}
