package informer

import "testing"

// TestIsLoopback: the hosts a REST config names that are this machine.
func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"https://127.0.0.1:6443":     true,
		"https://127.45.6.7":         true,
		"http://[::1]:8080":          true,
		"https://[::1]:6443":         true,
		"http://127.0.0.2":           true,
		"https://localhost:6443":     true,
		"https://LOCALHOST.:6443":    true,
		"https://kind.localhost:443": true,
		"127.0.0.1:6443":             true,
		"localhost":                  true,
		"https://[::ffff:127.0.0.1]": true,
		"https://10.0.0.1:6443":      false,
		"https://128.0.0.1":          false,
		"https://[::2]:6443":         false,
		"https://kube.example.com":   false,
		"https://localhost.example":  false,
		"https://0.0.0.0:6443":       false,
		"":                           false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}
