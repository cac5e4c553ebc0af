package checkpoint

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// TestCheckpointOtherCluster: a stream resumes only against the cluster it
// was written for, each context's its own: the kube-system namespace's UID
// decides when both runs could read it; otherwise the server and its CA.
func TestCheckpointOtherCluster(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	aFeedRan(t, path)
	with := func(s Stream, c Cluster) Stream {
		s.Cluster = &c
		return s
	}
	prefix := "checkpoint " + path + " was written for another cluster: "
	suffix := "; resume against the cluster it was written for, or give another file"
	tests := []struct {
		name    string
		streams []Stream
		// want is the error after prefix, "" for none; then the clusters
		// recorded, in the order of streams.
		want     string
		recorded []*Cluster
	}{
		{name: "made anew at the same address", streams: []Stream{with(podsStream, Cluster{Server: clusterA.Server, CA: "sha256:a2", KubeSystemUID: "ks-a2"}), otherStream},
			want: `the kube-system namespace's UID in context kind-a was ks-a, is ks-a2`},
		{name: "another server, kube-system not readable", streams: []Stream{podsStream, with(otherStream, Cluster{Server: "https://127.0.0.1:41235", CA: clusterB.CA})},
			want: `the server in context kind-b was https://127.0.0.1:41234, is https://127.0.0.1:41235`},
		{name: "another CA, kube-system not readable", streams: []Stream{podsStream, with(otherStream, Cluster{Server: clusterB.Server, CA: "sha256:b2"})},
			want: `the server's certificate authority in context kind-b was sha256:bb, is sha256:b2`},
		{name: "no CA now", streams: []Stream{podsStream, with(otherStream, Cluster{Server: clusterB.Server})},
			want: `the server's certificate authority in context kind-b was sha256:bb, is none`},
		{name: "kube-system no longer readable, another server", streams: []Stream{with(podsStream, Cluster{Server: "https://a2.example:6443", CA: clusterA.CA}), otherStream},
			want: `the server in context kind-a was https://a.example:6443, is https://a2.example:6443`},
		{name: "the contexts' clusters swapped", streams: []Stream{with(podsStream, *clusterB), with(otherStream, *clusterA)},
			want: `the server in context kind-a was https://a.example:6443, is https://127.0.0.1:41234`},
		{name: "the same cluster under another URL and CA", streams: []Stream{with(podsStream, Cluster{Server: "https://10.0.0.1", CA: "sha256:a3", KubeSystemUID: "ks-a"}), otherStream},
			recorded: []*Cluster{{Server: "https://10.0.0.1", CA: "sha256:a3", KubeSystemUID: "ks-a"}, clusterB}},
		{name: "kube-system no longer readable, the same server", streams: []Stream{with(podsStream, Cluster{Server: clusterA.Server, CA: clusterA.CA}), otherStream},
			recorded: []*Cluster{clusterA, clusterB}},
		{name: "kube-system readable now", streams: []Stream{podsStream, with(otherStream, Cluster{Server: clusterB.Server, CA: clusterB.CA, KubeSystemUID: "ks-b"})},
			recorded: []*Cluster{clusterA, {Server: clusterB.Server, CA: clusterB.CA, KubeSystemUID: "ks-b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cp")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			f := open(t, p)
			_, err = f.Resume(tc.streams, nil)
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				want := strings.Replace(prefix, path, p, 1) + tc.want + suffix
				if err == nil || err.Error() != want {
					t.Errorf("Resume: %v\nwant %s", err, want)
				}
				if after, _ := os.ReadFile(p); string(after) != string(data) {
					t.Errorf("the refused checkpoint was rewritten")
				}
				return
			}
			if err != nil {
				t.Fatalf("Resume: %v", err)
			}
			f = open(t, p)
			defer f.Close()
			var got []*Cluster
			for _, m := range f.streams {
				got = append(got, m.stream.Cluster)
			}
			if diff := cmp.Diff(tc.recorded, got); diff != "" {
				t.Errorf("clusters recorded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckpointVersion1: a checkpoint an earlier kubectl idx wrote (format
// version 1, no clusters) resumes, with a warning per stream whose cluster
// it did not know, and is rewritten as version 2 with the clusters; a context
// unavailable meanwhile keeps its stream without one until it resumes.
func TestCheckpointVersion1(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v1-clean.checkpoint"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cp")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f := open(t, path)
	if w := f.Warnings(); len(w) != 0 {
		t.Errorf("warnings reading a clean version 1 file: %q", w)
	}
	h, err := f.Resume([]Stream{podsStream}, []string{otherStream.Context})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"checkpoint " + path + ": the feed of context kind-a was recorded without its cluster, by a kubectl idx that wrote format version 1: resuming without checking that it is the same cluster, which is recorded from now on"}
	if diff := cmp.Diff(want, f.Warnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if got := h[0].Restored(); got == nil || got.Positions[0] != "12" || len(got.Objects) != 3 {
		t.Errorf("restored %+v", got)
	}
	record(t, h[0], &feed.Delta{Positions: map[int]string{0: "13"}})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !strings.HasPrefix(string(got), "kubectl-idx checkpoint v2\n") || !strings.Contains(string(got), `"cluster":{"server":"https://a.example:6443","ca":"sha256:aa","kubeSystemUID":"ks-a"}`) {
		t.Errorf("the file rewritten:\n%s", got)
	}

	// Version 2 now: kind-a's cluster is checked; kind-b's, not known yet, is
	// taken up with a warning.
	f = open(t, path)
	other := podsStream
	other.Cluster = &Cluster{Server: clusterA.Server, KubeSystemUID: "ks-x"}
	if _, err := f.Resume([]Stream{other, otherStream}, nil); err == nil || !strings.Contains(err.Error(), "was written for another cluster: the kube-system namespace's UID in context kind-a was ks-a, is ks-x") {
		t.Errorf("Resume against another cluster: %v", err)
	}
	if _, err := f.Resume([]Stream{podsStream, otherStream}, nil); err != nil {
		t.Fatal(err)
	}
	if w := f.Warnings(); len(w) != 1 || !strings.Contains(w[0], "the feed of context kind-b was recorded without its cluster") {
		t.Errorf("warnings %q", w)
	}
	f.Close()
	f = open(t, path)
	defer f.Close()
	resume(t, f, podsStream, otherStream)
	if w := f.Warnings(); len(w) != 0 {
		t.Errorf("warnings once every cluster is recorded: %q", w)
	}
}

// TestCheckpointVersion1ClusterIgnored: a version 1 file holding a cluster
// (no earlier kubectl idx wrote one) is read as not knowing it.
func TestCheckpointVersion1ClusterIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cp")
	s := podsStream
	s.Cluster = &Cluster{Server: "https://elsewhere"}
	content := "kubectl-idx checkpoint v1\n" + string(mustEncode(t, snapshotRecord{Streams: []streamState{{Stream: s}}}))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f := open(t, path)
	defer f.Close()
	if f.streams[0].stream.Cluster != nil {
		t.Errorf("cluster %+v read from a version 1 file", f.streams[0].stream.Cluster)
	}
	resume(t, f, podsStream)
}

func TestClusterOf(t *testing.T) {
	ca := testCA(t, "ca-1")
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	// The same certificate, laid out otherwise: CRLF, a comment before it.
	if err := os.WriteFile(caFile, []byte("# the cluster's CA\r\n"+strings.ReplaceAll(string(ca), "\n", "\r\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	hash := caHash(ca)
	if !strings.HasPrefix(hash, "sha256:") || len(hash) != len("sha256:")+64 {
		t.Fatalf("caHash = %q", hash)
	}
	tests := []struct {
		name string
		cfg  *rest.Config
		want Cluster
	}{
		{"no config", nil, Cluster{KubeSystemUID: "ks"}},
		{"CA data", &rest.Config{Host: "https://127.0.0.1:6443/", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, Cluster{Server: "https://127.0.0.1:6443", CA: hash, KubeSystemUID: "ks"}},
		{"CA file, host without a scheme", &rest.Config{Host: "127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAFile: caFile}}, Cluster{Server: "https://127.0.0.1:6443", CA: hash, KubeSystemUID: "ks"}},
		{"a path behind a proxy", &rest.Config{Host: "https://proxy.example/clusters/prod", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, Cluster{Server: "https://proxy.example/clusters/prod", CA: hash, KubeSystemUID: "ks"}},
		{"insecure", &rest.Config{Host: "https://10.0.0.1", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, Cluster{Server: "https://10.0.0.1", KubeSystemUID: "ks"}},
		{"another CA", &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: testCA(t, "ca-2")}}, Cluster{Server: "https://127.0.0.1:6443", CA: caHash(testCA(t, "ca-2")), KubeSystemUID: "ks"}},
		{"not PEM", &rest.Config{Host: "https://h", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("junk\n")}}, Cluster{Server: "https://h", CA: caHash([]byte("junk")), KubeSystemUID: "ks"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ClusterOf(tc.cfg, "ks")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ClusterOf (-want +got):\n%s", diff)
			}
		})
	}
	if caHash(testCA(t, "ca-2")) == hash {
		t.Error("two CAs hash the same")
	}
	missing := filepath.Join(t.TempDir(), "missing.crt")
	_, err := ClusterOf(&rest.Config{Host: "https://h", TLSClientConfig: rest.TLSClientConfig{CAFile: missing}}, "")
	if err == nil || !strings.HasPrefix(err.Error(), "reading the certificate authority of https://h: open "+missing) {
		t.Errorf("ClusterOf with a missing CA file: %v", err)
	}
}

// testCAs keeps each name's certificate: testCA returns the same one each
// time it is asked.
var testCAs = map[string][]byte{}

// testCA returns a self-signed CA certificate named name, as PEM.
func testCA(t *testing.T, name string) []byte {
	t.Helper()
	if pem, ok := testCAs[name]; ok {
		return pem
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	testCAs[name] = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return testCAs[name]
}
