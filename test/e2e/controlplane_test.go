package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// Helpers for tests on the controller-driven control plane: kube-apiserver and etcd with
// kube-controller-manager, kube-scheduler and kwok's fake nodes, where the objects the
// answers are about are written by controllers. Truth is what `kubectl get -o json` says.

// controllerNodes is how many fake nodes the controller-driven control plane runs.
const controllerNodes = 3

// shared is the controller-driven control plane, started by the first test that asks for it
// (a run of tests that need none pays nothing) and stopped by TestMain.
var shared struct {
	once    sync.Once
	cluster *ctrlCluster
	dir     string
	err     error
}

// ctrlCluster runs kubectl, and kubectl-idx through kubectl's plugin discovery, against the
// controller-driven control plane as its admin.
type ctrlCluster struct {
	env        *testenv.Env
	pluginPath string
}

// controllerCluster returns the shared controller-driven control plane, starting it on first
// use. A control plane that does not start fails the test, naming the component and its log.
func controllerCluster(t *testing.T) *ctrlCluster {
	t.Helper()
	shared.once.Do(func() {
		shared.cluster, shared.err = startControllerCluster()
	})
	if shared.err != nil {
		t.Fatalf("controller-driven control plane: %v", shared.err)
	}
	return shared.cluster
}

// startControllerCluster starts a control plane driven by real controllers in a dir of its
// own, which stopControllerCluster removes unless the run failed.
func startControllerCluster() (*ctrlCluster, error) {
	dir, err := os.MkdirTemp("", "kubectl-idx-controllers-")
	if err != nil {
		return nil, err
	}
	shared.dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	env, err := testenv.Start(ctx, testenv.Options{
		Dir:         dir,
		Controllers: &testenv.ControllerOptions{Nodes: controllerNodes},
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "e2e: controller-driven control plane ready in %s (logs in %s)\n", time.Since(start).Round(time.Millisecond), env.LogFile("*"))
	pp, err := env.PluginPath(binary)
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &ctrlCluster{env: env, pluginPath: pp}, nil
}

// stopControllerCluster stops the shared control plane if a test started it. Its dir, with
// every component's log, is removed after a passing run and kept, and named, after a failed
// one.
func stopControllerCluster(failed bool) error {
	if shared.dir == "" {
		return nil
	}
	var err error
	if shared.cluster != nil {
		err = shared.cluster.env.Stop()
	}
	if failed || err != nil || shared.err != nil {
		fmt.Fprintf(os.Stderr, "e2e: controller-driven control plane logs kept in %s/logs\n", shared.dir)
		return err
	}
	return os.RemoveAll(shared.dir)
}

// kubectl runs kubectl with args, feeding it stdin if not empty.
func (c *ctrlCluster) kubectl(t *testing.T, stdin string, args ...string) testenv.Result {
	t.Helper()
	cmd := testenv.Cmd{Path: testenv.KubectlPath(), Args: args, Env: c.env.Environ(c.env.Kubeconfig, ""), Timeout: cmdTimeout}
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return run(t, cmd)
}

// mustKubectl is kubectl that fails t unless kubectl exits 0.
func (c *ctrlCluster) mustKubectl(t *testing.T, stdin string, args ...string) testenv.Result {
	t.Helper()
	res := c.kubectl(t, stdin, args...)
	mustSucceed(t, "kubectl "+strings.Join(args, " "), res)
	return res
}

// idx runs `kubectl idx ARGS`, found by kubectl's plugin discovery as a user's would be.
func (c *ctrlCluster) idx(t *testing.T, args ...string) testenv.Result {
	t.Helper()
	res := run(t, testenv.Cmd{
		Path: testenv.KubectlPath(), Args: append([]string{"idx"}, args...),
		Env: c.env.Environ(c.env.Kubeconfig, c.pluginPath), Timeout: cmdTimeout,
	})
	res.Stderr = dropDetectorNotice(res.Stderr)
	return res
}

// createNamespace creates a labelled namespace, deleted (without waiting) when t ends, and
// waits for its default ServiceAccount: with the ServiceAccount admission plugin on, a pod
// cannot be created before kube-controller-manager has made it.
func (c *ctrlCluster) createNamespace(t *testing.T, name string) {
	t.Helper()
	c.mustKubectl(t, "", "create", "namespace", name)
	t.Cleanup(func() { c.kubectl(t, "", "delete", "namespace", name, "--wait=false") })
	c.mustKubectl(t, "", "label", "namespace", name, "kubectl-idx.io/e2e=controllers")
	eventually(t, time.Minute, "the default ServiceAccount of namespace "+name, func() string {
		res := c.kubectl(t, "", "get", "serviceaccount", "default", "-n", name, "-o", "name")
		if res.ExitCode != 0 {
			return strings.TrimSpace(res.Stderr)
		}
		return ""
	})
}

// pollInterval is how often eventually looks again.
const pollInterval = 250 * time.Millisecond

// eventually calls check until it returns "" or timeout passes, then fails t with what was
// being waited for and check's last answer (what is still missing). No fixed sleeps: the
// controllers' pace decides how long a run takes.
func eventually(t *testing.T, timeout time.Duration, what string, check func() string) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		why := check()
		if why == "" {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting %s for %s: %s", timeout, what, why)
		}
		time.Sleep(pollInterval)
	}
}

// workloadKinds are the types a workloads read lists, in one kubectl call.
const workloadKinds = "deployments,replicasets,jobs,pods"

// workloads is what one `kubectl get deployments,replicasets,jobs,pods -o json` said about a
// namespace: the truth the controller-driven tests check answers against.
type workloads struct {
	items []*unstructured.Unstructured
}

// readWorkloads reads the deployments, replicasets, jobs and pods of namespace ns.
func (c *ctrlCluster) readWorkloads(t *testing.T, ns string) workloads {
	t.Helper()
	res := c.mustKubectl(t, "", "get", workloadKinds, "-n", ns, "-o", "json")
	var list struct {
		Items []*unstructured.Unstructured `json:"items"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &list); err != nil {
		t.Fatalf("kubectl get %s -n %s -o json: %v", workloadKinds, ns, err)
	}
	return workloads{items: list.Items}
}

// ofKind returns the objects of kind, in kubectl's order.
func (w workloads) ofKind(kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range w.items {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// get returns the object of kind named name, or nil.
func (w workloads) get(kind, name string) *unstructured.Unstructured {
	for _, o := range w.items {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// controlledBy returns the objects of kind whose controller reference names owner's UID.
func (w workloads) controlledBy(kind string, owner *unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range w.ofKind(kind) {
		if ref := metav1.GetControllerOfNoCopy(o); ref != nil && ref.UID == owner.GetUID() {
			out = append(out, o)
		}
	}
	return out
}

// versions returns each object's resourceVersion by UID: two reads with equal versions saw
// the same objects in the same state.
func (w workloads) versions() map[types.UID]string {
	out := make(map[types.UID]string, len(w.items))
	for _, o := range w.items {
		out[o.GetUID()] = o.GetResourceVersion()
	}
	return out
}

// owners returns the objects as an ownerIndex, for ownerIndex.top and checkOwnerGroups.
func (w workloads) owners() ownerIndex {
	idx := ownerIndex{byUID: map[types.UID]*unstructured.Unstructured{}, clusterScoped: map[string]bool{}}
	for _, o := range w.items {
		idx.byUID[o.GetUID()] = o
	}
	return idx
}

// typed converts a kubectl item into its Go type, failing t if it does not fit.
func typed[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("%s %s as %T: %v", u.GetKind(), nsName(u), out, err)
	}
	return out
}
