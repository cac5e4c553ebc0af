package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
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

// shared is the controller-driven control plane.
var shared = lazyCluster{
	name:      "controller-driven control plane",
	dirPrefix: "kubectl-idx-controllers-",
	timeout:   3 * time.Minute,
	opts:      testenv.Options{Controllers: &testenv.ControllerOptions{Nodes: controllerNodes}},
}

// lazyCluster is a controller-driven control plane started by the first test that asks for
// it (a run of tests that need none pays nothing) and stopped by TestMain.
type lazyCluster struct {
	// name names the control plane in failures and in what the run prints.
	name string
	// dirPrefix begins the name of its dir, which holds every component's log.
	dirPrefix string
	// timeout bounds its start, setup included.
	timeout time.Duration
	// opts are the options it is started with; Dir is set by start.
	opts testenv.Options
	// setup, when set, prepares the started control plane before any test uses it.
	setup func(ctx context.Context, c *ctrlCluster) error

	once    sync.Once
	cluster *ctrlCluster
	dir     string
	err     error
}

// get returns the control plane, starting it on first use. A control plane that does not
// start fails the test, naming the component and its log.
func (l *lazyCluster) get(t *testing.T) *ctrlCluster {
	t.Helper()
	l.once.Do(func() { l.cluster, l.err = l.start() })
	if l.err != nil {
		t.Fatalf("%s: %v", l.name, l.err)
	}
	return l.cluster
}

// start starts the control plane in a dir of its own, which stop removes unless the run
// failed, finds kubectl-idx for its kubectl and runs setup. What it returns with an error,
// if anything, is for stop to stop.
func (l *lazyCluster) start() (*ctrlCluster, error) {
	dir, err := os.MkdirTemp("", l.dirPrefix)
	if err != nil {
		return nil, err
	}
	l.dir = dir
	ctx, cancel := context.WithTimeout(context.Background(), l.timeout)
	defer cancel()
	begun := time.Now()
	opts := l.opts
	opts.Dir = dir
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	c := &ctrlCluster{env: env}
	if c.pluginPath, err = env.PluginPath(binary); err != nil {
		return c, err
	}
	if l.setup != nil {
		if err := l.setup(ctx, c); err != nil {
			return c, err
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: %s ready in %s (logs in %s)\n", l.name, time.Since(begun).Round(time.Millisecond), env.LogFile("*"))
	return c, nil
}

// stop stops the control plane if a test started it. Its dir, with every component's log,
// is removed after a passing run and kept, and named, after a failed one.
func (l *lazyCluster) stop(failed bool) error {
	if l.dir == "" {
		return nil
	}
	var err error
	if l.cluster != nil {
		err = l.cluster.env.Stop()
	}
	if failed || err != nil || l.err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %s logs kept in %s/logs\n", l.name, l.dir)
		return err
	}
	return os.RemoveAll(l.dir)
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
	return shared.get(t)
}

// startOwnCluster starts a controller-driven control plane of t's own (startOwnEnv) with
// kubectl-idx found by its kubectl's plugin discovery.
func startOwnCluster(t *testing.T, opts testenv.Options) *ctrlCluster {
	t.Helper()
	e := startOwnEnv(t, opts)
	bin, err := e.PluginPath(binary)
	if err != nil {
		t.Fatal(err)
	}
	return &ctrlCluster{env: e, pluginPath: bin}
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
	return c.read(t, workloadKinds, "-n", ns)
}

// read is `kubectl get KINDS SCOPE... -o json`: the objects of kinds (comma-separated, as
// kubectl takes them) in the scope flags give (-n NS, -A, -l SELECTOR).
func (c *ctrlCluster) read(t *testing.T, kinds string, scope ...string) workloads {
	t.Helper()
	args := append(append([]string{"get", kinds}, scope...), "-o", "json")
	res := c.mustKubectl(t, "", args...)
	return workloads{items: listItems(t, "kubectl "+strings.Join(args, " "), res.Stdout)}
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

// ownership returns what each object's owners are, by UID: its namespace and name,
// ownerReferences, deletion state and finalizers, and nothing the controllers rewrite all the
// time (a Lease's renewTime, a status): two reads with equal ownership saw the same owner
// graph, the truth of orphans and --by-owner.
func (w workloads) ownership() map[types.UID]string {
	out := make(map[types.UID]string, len(w.items))
	for _, o := range w.items {
		refs, _ := json.Marshal(o.GetOwnerReferences())
		out[o.GetUID()] = fmt.Sprintf("%s %s %s deleting=%v finalizers=%q", o.GetKind(), nsName(o), refs, o.GetDeletionTimestamp() != nil, o.GetFinalizers())
	}
	return out
}

// ownershipAndPods is ownership with each pod's resourceVersion added: what trees, owner chains
// and --by-owner answers depend on, READY and pod counts included.
func (w workloads) ownershipAndPods() map[types.UID]string {
	out := w.ownership()
	for _, o := range w.ofKind("Pod") {
		out[o.GetUID()] += " resourceVersion=" + o.GetResourceVersion()
	}
	return out
}

// steadyAttempts bounds how often steady runs a command while the truth keeps moving.
const steadyAttempts = 10

// steady runs `kubectl idx ARGS` between two reads of the truth it is checked against and
// returns its result with the second read, once key says both reads saw the same (the
// controllers changed nothing that matters meanwhile, so answer and truth are of one moment).
// key nil means every object's resourceVersion. While the truth moves it tries again, at most
// steadyAttempts times. kubectl idx must exit 0; the caller judges stderr.
func (c *ctrlCluster) steady(t *testing.T, read func() workloads, key func(workloads) map[types.UID]string, args ...string) (workloads, testenv.Result) {
	t.Helper()
	if key == nil {
		key = workloads.versions
	}
	what := "kubectl idx " + strings.Join(args, " ")
	for attempt := 1; attempt <= steadyAttempts; attempt++ {
		before := read()
		res := c.idx(t, args...)
		mustSucceed(t, what, res)
		after := read()
		if maps.Equal(key(before), key(after)) {
			return after, res
		}
		t.Logf("the truth changed while %s ran (attempt %d); again", what, attempt)
		time.Sleep(pollInterval)
	}
	t.Fatalf("the truth kept changing around %s, %d times", what, steadyAttempts)
	return workloads{}, testenv.Result{}
}

// answer runs `kubectl idx ARGS` through steady (ARGS end in -o json), checks that it printed
// nothing on stderr, decodes stdout into doc and returns the truth of the same moment.
func (c *ctrlCluster) answer(t *testing.T, doc any, read func() workloads, key func(workloads) map[types.UID]string, args ...string) workloads {
	t.Helper()
	w, res := c.steady(t, read, key, args...)
	what := "kubectl idx " + strings.Join(args, " ")
	if res.Stderr != "" {
		t.Errorf("%s: stderr not empty:\n%s", what, res.Stderr)
	}
	mustDecode(t, what, res.Stdout, doc)
	return w
}

// owners returns the objects as an ownerIndex, for ownerIndex.top and checkOwnerGroups. A
// kind read without a namespace (nodes) is cluster-scoped.
func (w workloads) owners() ownerIndex {
	idx := ownerIndex{byUID: map[types.UID]*unstructured.Unstructured{}, clusterScoped: map[string]bool{}}
	for _, o := range w.items {
		idx.byUID[o.GetUID()] = o
		if o.GetNamespace() == "" {
			idx.clusterScoped[o.GetKind()] = true
		}
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

// typedAll converts kubectl items into their Go type, as typed does.
func typedAll[T any](t *testing.T, items []*unstructured.Unstructured) []*T {
	t.Helper()
	out := make([]*T, 0, len(items))
	for _, u := range items {
		out = append(out, typed[T](t, u))
	}
	return out
}

// typedIn returns the object of w named name whose kind is T's type name (appsv1.Deployment:
// Deployment), and it converted to T; or, when w holds none, why: "no Deployment NAME".
func typedIn[T any](t *testing.T, w workloads, name string) (*unstructured.Unstructured, *T, string) {
	t.Helper()
	kind := reflect.TypeFor[T]().Name()
	u := w.get(kind, name)
	if u == nil {
		return nil, nil, "no " + kind + " " + name
	}
	return u, typed[T](t, u), ""
}
