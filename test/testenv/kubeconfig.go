package testenv

import (
	"fmt"
	"net"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigContext is one context of the kubeconfig WriteKubeconfig writes.
type KubeconfigContext struct {
	// Name names the context, and its cluster and user entries.
	Name string
	// From is a kubeconfig file (an Env's Kubeconfig, a User's): the context gets the
	// cluster and user of its current context.
	From string
	// Server, when set, replaces the cluster's server URL, e.g. with one nothing answers.
	Server string
	// Namespace is the context's default namespace; empty leaves it unset.
	Namespace string
}

// WriteKubeconfig writes one kubeconfig file at path holding every context of contexts,
// each with a cluster and user of its own named after it, copied from its From file, so
// that one file reaches several control planes and users as `--context NAME`. The first
// context is the current one.
func WriteKubeconfig(path string, contexts ...KubeconfigContext) error {
	out := clientcmdapi.NewConfig()
	for _, c := range contexts {
		if _, dup := out.Contexts[c.Name]; dup {
			return fmt.Errorf("kubeconfig %s: context %q given twice", path, c.Name)
		}
		from, err := clientcmd.LoadFromFile(c.From)
		if err != nil {
			return fmt.Errorf("reading kubeconfig %s: %w", c.From, err)
		}
		cur, ok := from.Contexts[from.CurrentContext]
		if !ok {
			return fmt.Errorf("kubeconfig %s has no current context", c.From)
		}
		cluster, user := from.Clusters[cur.Cluster], from.AuthInfos[cur.AuthInfo]
		if cluster == nil || user == nil {
			return fmt.Errorf("kubeconfig %s: context %q names a cluster or user it lacks", c.From, from.CurrentContext)
		}
		cluster = cluster.DeepCopy()
		if c.Server != "" {
			cluster.Server = c.Server
		}
		out.Clusters[c.Name] = cluster
		out.AuthInfos[c.Name] = user.DeepCopy()
		out.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name, Namespace: c.Namespace}
		if out.CurrentContext == "" {
			out.CurrentContext = c.Name
		}
	}
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// ClosedAddr returns a loopback address nothing listens on, the port of a listener just
// closed: a connection to it is refused (unless another process happens to bind the port
// first, which the kernel's choice of free ports makes unlikely within a test's life).
func ClosedAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", err
	}
	return addr, nil
}
