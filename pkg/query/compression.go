package query

import (
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// CompressionRule returns the wrapper (for ConfigFlags.WrapConfigFn) that
// gives every REST config the tool builds its default for response
// compression, after next (nil for none) has done its part: no compression
// from a server on a loopback address (informer.IsLoopback), unless explicit says the
// user set --disable-compression, either way, in which case the config keeps
// what the flag and kubeconfig made it.
//
// client-go asks for gzip unless told not to, and kube-apiserver then gzips
// every response over 128 KiB. Over a network that saves the bytes; on
// loopback there is no network to save, and both ends pay the CPU: gunzip
// was a quarter of `why -A`'s CPU at 20,000 pods, and the server spends more
// compressing than the client spends inflating.
func CompressionRule(explicit func() bool, next func(*rest.Config) *rest.Config) func(*rest.Config) *rest.Config {
	return func(cfg *rest.Config) *rest.Config {
		if next != nil {
			cfg = next(cfg)
		}
		if cfg == nil || cfg.DisableCompression || (explicit != nil && explicit()) || !informer.IsLoopback(cfg.Host) {
			return cfg
		}
		cfg = rest.CopyConfig(cfg)
		cfg.DisableCompression = true
		return cfg
	}
}
