// Package testenv runs a real kube-apiserver and etcd (controller-runtime's envtest) for the
// end-to-end tests, the demo and the bench, and runs the kubectl-idx binary and kubectl against
// them as child processes. With Options.Controllers it also runs kube-controller-manager,
// kube-scheduler and kwok's fake nodes, so that controllers, not the tests, write the
// ReplicaSets, pods, statuses and deletions.
//
// The binaries come from KUBEBUILDER_ASSETS, or Options.Assets for a control plane of another
// version (hack/envtest-assets.sh builds them); envtest is never allowed to download anything.
// Every child process gets its own KUBECONFIG and a discovery cache dir inside the
// environment's temp dir, so nothing leaks into ~/.kube.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// AssetsEnv names the variable holding the directory with kube-apiserver and etcd.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// Options configures Start. The zero value starts a plain API server with no CRDs.
type Options struct {
	// Assets is the directory holding kube-apiserver and etcd and, with Controllers, the
	// ControllerAssets, as hack/envtest-assets.sh writes it (KUBE_VERSION picks the version).
	// Empty means KUBEBUILDER_ASSETS; a test sets it to start a control plane of another
	// Kubernetes version beside the one of KUBEBUILDER_ASSETS.
	Assets string
	// CRDs are installed, and waited for, before Start returns.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// APIServerFlags are set on kube-apiserver on top of envtest's defaults,
	// e.g. {"max-requests-inflight": {"2000"}} for the bench.
	APIServerFlags map[string][]string
	// EtcdFlags are set on etcd on top of envtest's defaults.
	EtcdFlags map[string][]string
	// Dir receives the kubeconfig files and the kubectl cache. Empty means a new temp dir,
	// removed by Stop; a given Dir is created if needed and left in place.
	Dir string
	// StartTimeout bounds each control plane component's start; 0 means one minute, which
	// leaves room for a loaded 2-core machine.
	StartTimeout time.Duration
	// RestartableAPIServer keeps kube-apiserver's serving certificates in Dir, so that
	// StopAPIServer, KillAPIServer and StartAPIServer can restart it on the same address with
	// the same CA and every kubeconfig written before keeps working.
	RestartableAPIServer bool
	// Controllers, when set, starts a control plane driven by real controllers: the API server
	// with Node and RBAC authorization and service account signing, kube-controller-manager,
	// kube-scheduler and kwok running Controllers.Nodes fake nodes, all on 127.0.0.1, each
	// logging to LogFile(name). Start returns once the nodes are Ready. A component that fails
	// to start fails Start with the path of its log, and Dir is then kept for reading it.
	Controllers *ControllerOptions
}

// Env is a running control plane with an admin user.
type Env struct {
	// Config is the admin user's (group system:masters) client config.
	Config *rest.Config
	// Clientset and Dynamic talk to the server as the admin user.
	Clientset kubernetes.Interface
	Dynamic   dynamic.Interface
	// Dir holds the kubeconfig files and the kubectl discovery cache.
	Dir string
	// Kubeconfig is the path of the admin kubeconfig file.
	Kubeconfig string
	// Nodes are the names of the fake nodes kwok runs (Options.Controllers only).
	Nodes []string

	env        *envtest.Environment
	removeDir  bool
	binDir     string
	cacheDir   string
	stopped    bool
	serverHost string
	components []*component
	logFiles   []*os.File
}

// User is an extra identity on the server with its own kubeconfig file.
type User struct {
	Name       string
	Config     *rest.Config
	Kubeconfig string
}

// Start starts etcd and kube-apiserver from opts.Assets (KUBEBUILDER_ASSETS when empty),
// installs opts.CRDs and writes the admin kubeconfig. It fails, never skips, when
// KUBEBUILDER_ASSETS is unset and needed: an e2e run that silently tests nothing is worse than
// a red one.
func Start(ctx context.Context, opts Options) (*Env, error) {
	assets, err := opts.assetsDir()
	if err != nil {
		return nil, err
	}
	// envtest logs through controller-runtime's logger; without one it prints a warning with a
	// stack trace after 30s. Its errors reach us as return values anyway.
	ctrllog.SetLogger(logr.Discard())

	e := &Env{Dir: opts.Dir}
	if e.Dir == "" {
		if e.Dir, err = os.MkdirTemp("", "kubectl-idx-env-"); err != nil {
			return nil, fmt.Errorf("creating environment dir: %w", err)
		}
		e.removeDir = true
	} else if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating environment dir: %w", err)
	}
	e.cacheDir = filepath.Join(e.Dir, "kube-cache")

	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = time.Minute
	}
	e.env = &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		DownloadBinaryAssets:     false,
		CRDs:                     opts.CRDs,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	// envtest resolves each binary through TEST_ASSET_* and KUBEBUILDER_ASSETS before
	// BinaryAssetsDirectory; setting the paths pins them to the directory checked above.
	e.env.ControlPlane.GetAPIServer().Path = filepath.Join(assets, "kube-apiserver")
	e.env.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(assets, "etcd")}
	if opts.RestartableAPIServer {
		// envtest generates serving certificates into a temp dir it removes on Stop; a dir of
		// our own survives a restart, so the new process serves the same certificate.
		certDir := filepath.Join(e.Dir, "kube-apiserver")
		if err := os.MkdirAll(certDir, 0o700); err != nil {
			e.cleanDir()
			return nil, fmt.Errorf("creating kube-apiserver cert dir: %w", err)
		}
		e.env.ControlPlane.GetAPIServer().CertDir = certDir
	}
	if opts.Controllers != nil {
		if err := e.configureControllerAPIServer(assets); err != nil {
			e.closeLogs()
			e.cleanDir()
			return nil, err
		}
	}
	for k, v := range opts.APIServerFlags {
		e.env.ControlPlane.GetAPIServer().Configure().Set(k, v...)
	}
	for k, v := range opts.EtcdFlags {
		e.env.ControlPlane.Etcd.Configure().Set(k, v...)
	}

	cfg, err := e.env.Start()
	if err != nil {
		_ = e.env.Stop()
		e.closeLogs()
		if opts.Controllers != nil {
			return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w (logs: %s, %s)", assets, err, e.LogFile("kube-apiserver"), e.LogFile("etcd"))
		}
		e.cleanDir()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
	}
	if err := e.init(cfg); err != nil {
		_ = e.Stop()
		return nil, err
	}
	if opts.Controllers != nil {
		if err := e.startControllers(ctx, assets, *opts.Controllers, timeout); err != nil {
			// The logs say why; keep them.
			e.removeDir = false
			_ = e.Stop()
			return nil, fmt.Errorf("starting the controllers: %w", err)
		}
	}
	return e, nil
}

func (e *Env) init(cfg *rest.Config) error {
	// An admin of our own, with a name that shows in audit output, used by the Go clients and
	// written as the kubeconfig the child processes use.
	admin, err := e.env.AddUser(envtest.User{Name: "kubectl-idx-admin", Groups: []string{"system:masters"}}, cfg)
	if err != nil {
		return fmt.Errorf("adding admin user: %w", err)
	}
	e.Config = admin.Config()
	e.serverHost = e.Config.Host
	if e.Kubeconfig, err = writeKubeconfig(admin, filepath.Join(e.Dir, "kubeconfig")); err != nil {
		return err
	}
	if e.Clientset, err = kubernetes.NewForConfig(e.Config); err != nil {
		return fmt.Errorf("building admin clientset: %w", err)
	}
	if e.Dynamic, err = dynamic.NewForConfig(e.Config); err != nil {
		return fmt.Errorf("building admin dynamic client: %w", err)
	}
	if _, err := e.Clientset.Discovery().ServerVersion(); err != nil {
		return fmt.Errorf("reading server version: %w", err)
	}
	return nil
}

// AssetsDir returns KUBEBUILDER_ASSETS after checking it holds kube-apiserver and etcd.
func AssetsDir() (string, error) {
	dir := os.Getenv(AssetsEnv)
	if dir == "" {
		return "", errors.New(AssetsEnv + " is not set: run the e2e tests with `make test-e2e`, or set it to the output of hack/envtest-assets.sh")
	}
	return dir, checkAssets(AssetsEnv+"="+dir, dir)
}

// assetsDir returns o.Assets, or KUBEBUILDER_ASSETS when it is empty, after checking it holds
// kube-apiserver and etcd.
func (o Options) assetsDir() (string, error) {
	if o.Assets == "" {
		return AssetsDir()
	}
	return o.Assets, checkAssets("Options.Assets "+o.Assets, o.Assets)
}

// assetsSource names an assets directory in errors the way the caller chose it: as
// KUBEBUILDER_ASSETS=DIR or as Options.Assets DIR.
func assetsSource(dir string) string {
	if dir == os.Getenv(AssetsEnv) {
		return AssetsEnv + "=" + dir
	}
	return "Options.Assets " + dir
}

// checkAssets checks that dir, named source in errors, holds executable kube-apiserver and
// etcd.
func checkAssets(source, dir string) error {
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		p := filepath.Join(dir, bin)
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%s: %w (build it with hack/envtest-assets.sh)", source, err)
		}
		if st.Mode()&0o111 == 0 {
			return fmt.Errorf("%s: %s is not executable", source, p)
		}
	}
	return nil
}

// Host returns the API server URL, e.g. https://127.0.0.1:41234/.
func (e *Env) Host() string { return e.serverHost }

// Stop stops the controllers, if any, then kube-apiserver and etcd, and removes the temp dir
// Start created. A controller that exited before Stop is reported as an error. It is safe to
// call twice.
func (e *Env) Stop() error {
	if e == nil || e.stopped {
		return nil
	}
	e.stopped = true
	var errs []error
	// The controllers go first: stopped after the API server, they would spend their
	// shutdown retrying it.
	if err := e.stopControllers(); err != nil {
		errs = append(errs, err)
	}
	if err := e.env.Stop(); err != nil {
		errs = append(errs, fmt.Errorf("stopping kube-apiserver and etcd: %w", err))
	}
	e.closeLogs()
	e.cleanDir()
	return errors.Join(errs...)
}

func (e *Env) closeLogs() {
	for _, f := range e.logFiles {
		_ = f.Close()
	}
	e.logFiles = nil
}

func (e *Env) cleanDir() {
	if e.removeDir {
		_ = os.RemoveAll(e.Dir)
	}
}

// AddNarrowUser creates a user with no groups (so only the system:authenticated defaults:
// discovery, self reviews) and a Role + RoleBinding granting get, list and watch on pods in
// namespace only, and writes its kubeconfig next to the admin one. The namespace must exist.
func (e *Env) AddNarrowUser(ctx context.Context, name, namespace string) (*User, error) {
	return e.addRoleUser(ctx, name, namespace, name+"-pod-reader", []rbacv1.PolicyRule{{
		APIGroups: []string{""},
		Resources: []string{"pods"},
		Verbs:     []string{"get", "list", "watch"},
	}})
}

// AddRoleUser creates a user with no groups and a Role (named after the user) + RoleBinding
// granting rules in namespace, and writes its kubeconfig next to the admin one. The
// namespace must exist.
func (e *Env) AddRoleUser(ctx context.Context, name, namespace string, rules []rbacv1.PolicyRule) (*User, error) {
	return e.addRoleUser(ctx, name, namespace, name, rules)
}

func (e *Env) addRoleUser(ctx context.Context, name, namespace, roleName string, rules []rbacv1.PolicyRule) (*User, error) {
	au, err := e.env.AddUser(envtest.User{Name: name}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: roleName, Namespace: namespace},
		Rules:      rules,
	}
	if _, err := e.Clientset.RbacV1().Roles(namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating role %s/%s: %w", namespace, role.Name, err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: namespace},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: name}},
	}
	if _, err := e.Clientset.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating rolebinding %s/%s: %w", namespace, binding.Name, err)
	}
	path, err := writeKubeconfig(au, filepath.Join(e.Dir, name+".kubeconfig"))
	if err != nil {
		return nil, err
	}
	return &User{Name: name, Config: au.Config(), Kubeconfig: path}, nil
}

func writeKubeconfig(u *envtest.AuthenticatedUser, path string) (string, error) {
	data, err := u.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("rendering kubeconfig for %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig: %w", err)
	}
	return path, nil
}

// PluginPath returns a directory holding an executable named kubectl-idx (a symlink to
// binary), for `kubectl idx` plugin discovery: put it first on PATH.
func (e *Env) PluginPath(binary string) (string, error) {
	if e.binDir != "" {
		return e.binDir, nil
	}
	abs, err := filepath.Abs(binary)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("plugin binary: %w", err)
	}
	dir := filepath.Join(e.Dir, "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	link := filepath.Join(dir, "kubectl-idx")
	_ = os.Remove(link)
	if err := os.Symlink(abs, link); err != nil {
		return "", fmt.Errorf("linking %s into %s: %w", abs, dir, err)
	}
	e.binDir = dir
	return dir, nil
}

// Environ returns the environment for a child process talking to this server with
// kubeconfig: the current environment with KUBECONFIG and KUBECACHEDIR replaced, and
// extraPath, if any, prepended to PATH.
func (e *Env) Environ(kubeconfig, extraPath string) []string {
	env := []string{"KUBECONFIG=" + kubeconfig, "KUBECACHEDIR=" + e.cacheDir}
	if extraPath != "" {
		env = append(env, "PATH="+extraPath+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	return MergeEnv(os.Environ(), env...)
}
