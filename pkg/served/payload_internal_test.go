package served

import (
	"slices"
	"testing"

	"github.com/kubectl-idx/kubectl-idx/pkg/warm"
)

// TestRunKubeconfigAndCacheDir: a served run reads the kubeconfig files and
// the discovery cache a direct run of the asker would, from the asker's
// environment and working directory, not the server's.
func TestRunKubeconfigAndCacheDir(t *testing.T) {
	for _, tc := range []struct {
		name       string
		env        map[string]string
		kubeconfig []string
		cacheDir   string
	}{
		{name: "nothing"},
		{name: "HOME", env: map[string]string{"HOME": "/home/a"}, kubeconfig: []string{"/home/a/.kube/config"}, cacheDir: "/home/a/.kube/cache"},
		{
			name:       "KUBECONFIG, relative paths against the directory, and KUBECACHEDIR",
			env:        map[string]string{"HOME": "/home/a", "KUBECONFIG": "one:/abs/two", "KUBECACHEDIR": "/cache"},
			kubeconfig: []string{"/work/one", "/abs/two"}, cacheDir: "/cache",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Run{req: &warm.RunRequest{Env: tc.env, Dir: "/work"}}
			got, err := r.Kubeconfig()
			if err != nil || !slices.Equal(got, tc.kubeconfig) {
				t.Errorf("Kubeconfig() = %q, %v; want %q", got, err, tc.kubeconfig)
			}
			if dir := r.CacheDir(); dir != tc.cacheDir {
				t.Errorf("CacheDir() = %q, want %q", dir, tc.cacheDir)
			}
		})
	}
}

// TestServeArgs: the server's --idle-timeout and --drop-after come from the
// environment, a value that is no positive duration an error naming it.
func TestServeArgs(t *testing.T) {
	t.Setenv(IdleTimeoutEnv, "")
	t.Setenv(DropAfterEnv, "")
	if args, err := ServeArgs(); err != nil || !slices.Equal(args, []string{"cache", "serve"}) {
		t.Errorf("ServeArgs() = %q, %v", args, err)
	}
	t.Setenv(IdleTimeoutEnv, "90s")
	if args, err := ServeArgs(); err != nil || !slices.Equal(args, []string{"cache", "serve", "--idle-timeout=1m30s"}) {
		t.Errorf("ServeArgs() = %q, %v", args, err)
	}
	t.Setenv(DropAfterEnv, "-1m")
	if _, err := ServeArgs(); err == nil || err.Error() != DropAfterEnv+"=-1m: want a positive duration such as 30m" {
		t.Errorf("ServeArgs() error = %v", err)
	}
}
