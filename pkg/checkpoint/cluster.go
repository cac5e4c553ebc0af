package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// Cluster identifies the cluster a stream was written for. The
// resourceVersions and UIDs a checkpoint holds are positions in one
// cluster's storage: resumed against another cluster that a kubeconfig names
// by the same context (one made anew at the same address, another behind the
// same name), its watches would start from versions that mean nothing there.
type Cluster struct {
	// Server is the API server's URL as the client reaches it.
	Server string `json:"server,omitempty"`
	// CA is "sha256:" and the hex SHA-256 of the certificates the client
	// trusts for the server (certificate-authority or -data, the DER of each
	// PEM block in order), "" when it names none (the system's roots,
	// insecure-skip-tls-verify).
	CA string `json:"ca,omitempty"`
	// KubeSystemUID is the UID of the cluster's kube-system namespace, which
	// no one can delete and a cluster made anew gets anew: "" when the user
	// may not read it.
	KubeSystemUID types.UID `json:"kubeSystemUID,omitempty"`
}

// ClusterOf returns the identity of the cluster cfg reaches, whose
// kube-system namespace has the UID kubeSystem ("" when not known). A nil
// cfg (a client without one, as in tests) has no server and no CA.
func ClusterOf(cfg *rest.Config, kubeSystem types.UID) (Cluster, error) {
	c := Cluster{KubeSystemUID: kubeSystem}
	if cfg == nil {
		return c, nil
	}
	c.Server = serverURL(cfg)
	data := cfg.CAData
	if len(data) == 0 && cfg.CAFile != "" {
		var err error
		if data, err = os.ReadFile(cfg.CAFile); err != nil {
			return Cluster{}, fmt.Errorf("reading the certificate authority of %s: %w", c.Server, err)
		}
	}
	c.CA = caHash(data)
	return c, nil
}

// serverURL is the server's URL as client-go builds it from cfg (a host
// without a scheme gets the one the client uses), without a final slash.
func serverURL(cfg *rest.Config) string {
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return cfg.Host
	}
	return strings.TrimSuffix(u.String(), "/")
}

// caHash hashes the certificates of a PEM bundle, so that the same
// certificates read the same however the bundle is laid out (line ends,
// comments between blocks); data that holds none is hashed as it is.
func caHash(data []byte) string {
	if len(bytes.TrimSpace(data)) == 0 {
		return ""
	}
	h := sha256.New()
	found := false
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		if block.Type == "CERTIFICATE" {
			// DER is self-delimiting: the blocks in a row read one way only.
			h.Write(block.Bytes)
			found = true
		}
	}
	if !found {
		h.Write(bytes.TrimSpace(data))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// sameCluster returns, as an error, how the cluster a stream of context was
// written for differs from the one it is asked of. When both know the
// kube-system namespace's UID, it decides: the same cluster reached under
// another URL (a load balancer, a proxy, an address become a name) or with a
// rotated CA resumes, a cluster made anew at the same address does not.
// Otherwise the server and its CA must be the same. A stream whose cluster
// was not recorded (format version 1) resumes without the check.
func (f *File) sameCluster(context string, was, is *Cluster) error {
	if was == nil || is == nil {
		return nil
	}
	in := ""
	if context != "" {
		in = " in context " + contextName(context)
	}
	if was.KubeSystemUID != "" && is.KubeSystemUID != "" {
		if was.KubeSystemUID != is.KubeSystemUID {
			return f.otherCluster("the kube-system namespace's UID"+in, shown(string(was.KubeSystemUID)), shown(string(is.KubeSystemUID)))
		}
		return nil
	}
	if was.Server != is.Server {
		return f.otherCluster("the server"+in, shown(was.Server), shown(is.Server))
	}
	if was.CA != is.CA {
		return f.otherCluster("the server's certificate authority"+in, caName(was.CA), caName(is.CA))
	}
	return nil
}

func caName(ca string) string {
	if ca == "" {
		return "none"
	}
	return shown(ca)
}

func (f *File) otherCluster(what, was, is string) error {
	return fmt.Errorf("checkpoint %s was written for another cluster: %s was %s, is %s; resume against the cluster it was written for, or give another file", f.path, what, was, is)
}

// merged is the cluster to record for a stream written for was and resumed
// for is, the same: is, keeping the kube-system namespace's UID was knew
// when is does not (a user who may not read it resumed a stream of one who
// could).
func merged(was, is *Cluster) *Cluster {
	if was == nil || is == nil || is.KubeSystemUID != "" || was.KubeSystemUID == "" {
		return is
	}
	c := *is
	c.KubeSystemUID = was.KubeSystemUID
	return &c
}
