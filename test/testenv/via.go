package testenv

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigVia writes a copy of the kubeconfig file at kubeconfig (the admin's, a
// User's) whose server is https://addr, for clients that must reach this API server
// through something in between, such as a fault-injecting proxy, and returns its path.
// Credentials and CA are unchanged: the API server's certificate is for 127.0.0.1, so
// addr must be a loopback address (127.0.0.1:port) for TLS to verify.
func (e *Env) KubeconfigVia(kubeconfig, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("kubeconfig via %q: %w", addr, err)
	}
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", fmt.Errorf("reading kubeconfig %s: %w", kubeconfig, err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + net.JoinHostPort(host, port)
	}
	name := strings.TrimSuffix(filepath.Base(kubeconfig), ".kubeconfig") + "-via-" + port + ".kubeconfig"
	path := filepath.Join(e.Dir, name)
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return path, nil
}

// ServerAddr returns the API server's host:port, e.g. 127.0.0.1:41234, what a proxy in
// front of it forwards to.
func (e *Env) ServerAddr() (string, error) {
	host := strings.TrimSuffix(strings.TrimPrefix(e.serverHost, "https://"), "/")
	if _, _, err := net.SplitHostPort(host); err != nil {
		return "", fmt.Errorf("API server host %q: %w", e.serverHost, err)
	}
	return host, nil
}
