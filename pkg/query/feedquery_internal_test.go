package query

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/pkg/informer"
)

// TestClusterOf: the cluster of a checkpoint's stream is the REST config's
// server and CA and the UID of namespace kube-system, read with the target's
// client; a user who may not read it, or a server without it, leaves the UID
// out without a word; any other failure is an error.
func TestClusterOf(t *testing.T) {
	ca := []byte("-----BEGIN CERTIFICATE-----\nMIIBAA==\n-----END CERTIFICATE-----\n")
	caHash, err := checkpoint.ClusterOf(&rest.Config{Host: "https://h", TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     *rest.Config
		get     func(name string) (metav1.Object, error)
		want    *checkpoint.Cluster
		wantErr string
	}{
		{name: "readable", cfg: &rest.Config{Host: "https://h", TLSClientConfig: rest.TLSClientConfig{CAData: ca}},
			get:  func(name string) (metav1.Object, error) { return &metav1.ObjectMeta{Name: name, UID: "ks-1"}, nil },
			want: &checkpoint.Cluster{Server: "https://h", CA: caHash.CA, KubeSystemUID: "ks-1"}},
		{name: "forbidden", cfg: &rest.Config{Host: "https://h", TLSClientConfig: rest.TLSClientConfig{CAData: ca}},
			get: func(name string) (metav1.Object, error) {
				return nil, apierrors.NewForbidden(corev1.Resource("namespaces"), name, errors.New("no"))
			},
			want: &checkpoint.Cluster{Server: "https://h", CA: caHash.CA}},
		{name: "not found", get: func(name string) (metav1.Object, error) {
			return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
		}, want: &checkpoint.Cluster{}},
		{name: "server error", get: func(name string) (metav1.Object, error) {
			return nil, apierrors.NewInternalError(errors.New("etcd is down"))
		}, wantErr: "reading namespace kube-system, which identifies the cluster for --checkpoint: Internal error occurred: etcd is down"},
		{name: "no client", want: &checkpoint.Cluster{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := Target{RESTConfig: tc.cfg}
			if tc.get != nil {
				target.GetMetadata = func(_ context.Context, res informer.Resource, namespace, name string) (metav1.Object, error) {
					if res.GVR.Resource != "namespaces" || res.GVR.Version != "v1" || res.Namespaced || namespace != "" {
						t.Errorf("read %v %q in namespace %q", res.GVR, name, namespace)
					}
					return tc.get(name)
				}
			}
			got, err := clusterOf(t.Context(), NewSession(Config{Target: target}))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("clusterOf: %v\nwant %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clusterOf (-want +got):\n%s", diff)
			}
		})
	}
}
