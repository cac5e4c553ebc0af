package informer

import (
	"net"
	"net/url"
	"strings"
)

// IsLoopback says whether host, a REST config's Host (a URL, or host[:port]
// as kubeconfigs also write it), names a loopback address: 127.0.0.0/8, ::1
// or localhost.
func IsLoopback(host string) bool {
	if host == "" {
		return false
	}
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return false
	}
	name := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}
