// Package e2e runs the built kubectl-idx binary against a real kube-apiserver and etcd
// (envtest) loaded with the fixtures' demo cluster, and compares what it prints with what
// kubectl prints for the same query on the same cluster. The tests that need objects written
// by controllers share a second control plane with kube-controller-manager, kube-scheduler
// and kwok's fake nodes, started on first use (controllerCluster).
//
//	make test-e2e
//
// needs KUBEBUILDER_ASSETS (hack/envtest-assets.sh), KUBECTL_IDX_BINARY (make build), kubectl
// and jq. A missing piece fails the run: a skipped e2e test is a defect.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// BinaryEnv names the variable holding the kubectl-idx binary under test.
const BinaryEnv = "KUBECTL_IDX_BINARY"

// serverVersion is the version of the kube-apiserver in KUBEBUILDER_ASSETS, the one every
// test runs against (hack/envtest-assets.sh's default, the Makefile's KUBE_VERSION).
const serverVersion = "v1.37.2"

// PreviousAssetsEnv names the variable holding a second control plane's assets, of the
// Makefile's KUBE_PREVIOUS version: the comparison of every listable type's table and JSON
// with kubectl's runs on both versions.
const PreviousAssetsEnv = "KUBECTL_IDX_PREVIOUS_ASSETS"

// narrowUser may get, list and watch pods in fixtures.Shop and nothing else.
const narrowUser = "jane"

// Set up once by TestMain, read-only for the tests.
var (
	env        *testenv.Env
	cluster    *fixtures.Cluster
	binary     string
	narrow     *testenv.User
	pluginPath string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if socket := os.Getenv(peerSocketEnv); socket != "" {
		// A helper of TestCacheRefusesOtherUsers, run as another user.
		return runPeerProbe(socket)
	}
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e setup: %v\n", err)
		_ = env.Stop()
		return 1
	}
	code := m.Run()
	code = stopContextsWorld(code)
	for _, l := range []*lazyCluster{&demoShared, &shared} {
		if err := l.stop(code != 0); err != nil {
			fmt.Fprintf(os.Stderr, "e2e teardown: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e teardown: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func setup() error {
	binary = os.Getenv(BinaryEnv)
	if binary == "" {
		return fmt.Errorf("%s is not set: run `make test-e2e`, or build with `make build` and set it to bin/kubectl-idx", BinaryEnv)
	}
	st, err := os.Stat(binary)
	if err != nil {
		return fmt.Errorf("%s: %w (run `make build`)", BinaryEnv, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s=%s is not an executable file", BinaryEnv, binary)
	}
	for _, tool := range []string{testenv.KubectlPath(), "jq", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is required: %w", tool, err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if env, err = testenv.Start(ctx, testenv.Options{CRDs: fixtures.CRDs()}); err != nil {
		return err
	}
	if cluster, err = fixtures.Load(ctx, env.Clientset, env.Dynamic); err != nil {
		return fmt.Errorf("loading fixtures: %w", err)
	}
	if narrow, err = env.AddNarrowUser(ctx, narrowUser, fixtures.Shop); err != nil {
		return err
	}
	if pluginPath, err = env.PluginPath(binary); err != nil {
		return err
	}
	return nil
}
