package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The controller-driven control plane: kube-apiserver and etcd as envtest runs them, set up
// the way kubeadm sets up a cluster (Node and RBAC authorization, the ServiceAccount admission
// plugin on, service account tokens signed with a key kube-controller-manager also holds),
// plus kube-controller-manager, kube-scheduler and kwok, each a child process with its own
// client certificate, kubeconfig and log file. Everything listens on 127.0.0.1 only.

// ControllerAssets are the files Options.Controllers needs in the assets directory
// (Options.Assets, or KUBEBUILDER_ASSETS) beside kube-apiserver and etcd;
// hack/envtest-assets.sh builds and writes them.
var ControllerAssets = []string{"kube-controller-manager", "kube-scheduler", "kwok", KwokStagesFile}

// KwokStagesFile is the kwok Stage configuration in the assets directory: the stages kwokctl
// gives kwok, from the same kwok release, which make nodes Ready, run scheduled pods,
// complete the pods of Jobs and finish deletions. kwok runs them with KubeletStages after
// them.
const KwokStagesFile = "kwok-stages.yaml"

// KubeletStages are the stages of the kubelet behaviours kwok's own do not play (an image
// that cannot be pulled, a crash loop, a readiness that never comes, a failure, a pod held
// back), each only for pods labelled KubeletBehaviourLabel with its name
// (kwok-kubelet-stages.yaml). They live in the repository, not in the assets: the assets
// are built once per kwok release.
//
//go:embed kwok-kubelet-stages.yaml
var KubeletStages []byte

// KubeletBehaviourLabel is the pod label that picks one of KubeletStages: image-pull-backoff,
// crash-loop, never-ready, fail or hold.
const KubeletBehaviourLabel = "kubelet.kubectl-idx.io/behaviour"

// KwokNodeAnnotation marks the nodes kwok manages (it runs with
// --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake), as kwok's docs do.
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// ServiceAccountIssuer is the --service-account-issuer of the controller-driven API server,
// the one kubeadm uses.
const ServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// ControllerOptions configures the controllers Start runs when Options.Controllers is set.
type ControllerOptions struct {
	// Nodes is how many fake nodes kwok runs, named kwok-node-0, kwok-node-1, ...; 0 means 3.
	Nodes int
	// NodeCapacity is each node's capacity and allocatable; nil means 4 CPUs, 16Gi of memory
	// and 110 pods, a kubelet's default pod limit.
	NodeCapacity corev1.ResourceList
	// KubeControllerManagerFlags, KubeSchedulerFlags and KwokFlags are set on top of the
	// harness's own, replacing a flag of the same name.
	KubeControllerManagerFlags map[string]string
	KubeSchedulerFlags         map[string]string
	KwokFlags                  map[string]string
}

// component is one control plane process the harness runs itself (envtest runs
// kube-apiserver and etcd).
type component struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{}
	err     error // how the process ended, set before done is closed
}

// LogFile returns the path of a component's log file (kube-apiserver, etcd,
// kube-controller-manager, kube-scheduler or kwok) in an environment started with
// Options.Controllers.
func (e *Env) LogFile(name string) string {
	return filepath.Join(e.Dir, "logs", name+".log")
}

// configureControllerAPIServer sets up etcd and kube-apiserver for a control plane with
// controllers, before envtest starts them: loopback addresses, log files, authorization,
// admission and service account signing. assets is the directory Start runs kube-apiserver
// from; the controllers come from the same one, so all components are of one version.
func (e *Env) configureControllerAPIServer(assets string) error {
	for _, name := range ControllerAssets {
		if _, err := os.Stat(filepath.Join(assets, name)); err != nil {
			return fmt.Errorf("%s: %w (build it with hack/envtest-assets.sh)", assetsSource(assets), err)
		}
	}
	for _, dir := range []string{"logs", "pki"} {
		if err := os.MkdirAll(filepath.Join(e.Dir, dir), 0o700); err != nil {
			return fmt.Errorf("creating %s dir: %w", dir, err)
		}
	}
	if err := e.writeServiceAccountKey(); err != nil {
		return err
	}
	if err := e.writeFrontProxyCerts(); err != nil {
		return err
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}

	// envtest picks "localhost" and whatever it resolves to; pin etcd's client and peer
	// listeners and kube-apiserver's secure port to 127.0.0.1.
	etcd := e.env.ControlPlane.Etcd
	etcd.URL = &url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", ports[0])}
	etcd.Configure().Set("listen-peer-urls", "http://"+net.JoinHostPort("127.0.0.1", ports[1]))
	api := e.env.ControlPlane.GetAPIServer()
	api.SecureServing.Address = "127.0.0.1"
	api.SecureServing.Port = ports[2]
	// Its serving certificate and key stay in Dir, next to the logs.
	if api.CertDir == "" {
		api.CertDir = filepath.Join(e.Dir, "kube-apiserver")
		if err := os.MkdirAll(api.CertDir, 0o700); err != nil {
			return fmt.Errorf("creating kube-apiserver cert dir: %w", err)
		}
	}
	etcdLog, err := e.openLog("etcd")
	if err != nil {
		return err
	}
	etcd.Out, etcd.Err = etcdLog, etcdLog
	apiLog, err := e.openLog("kube-apiserver")
	if err != nil {
		return err
	}
	api.Out, api.Err = apiLog, apiLog

	args := api.Configure()
	// Node authorizes what kubelets (here kwok, which is not one of them) may do with their
	// own node and pods; RBAC everything else, the bootstrap roles included.
	args.Set("authorization-mode", "Node,RBAC")
	// envtest disables the ServiceAccount admission plugin because nothing creates the
	// default ServiceAccounts without kube-controller-manager; here something does.
	args.Disable("disable-admission-plugins")
	args.Set("enable-admission-plugins", "NodeRestriction")
	args.Set("service-account-issuer", ServiceAccountIssuer)
	args.Set("service-account-key-file", e.pki("sa.pub"))
	args.Set("service-account-signing-key-file", e.pki("sa.key"))
	// The front proxy (aggregation layer) as kubeadm configures it. kube-apiserver publishes
	// this CA in kube-system/extension-apiserver-authentication, where kube-controller-manager
	// and kube-scheduler look for it to authenticate their own clients; without it they log
	// an error every few seconds.
	args.Set("requestheader-client-ca-file", e.pki("front-proxy-ca.crt"))
	args.Set("requestheader-allowed-names", "front-proxy-client")
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", e.pki("front-proxy-client.crt"))
	args.Set("proxy-client-key-file", e.pki("front-proxy-client.key"))
	return nil
}

// openLog opens the log file of a component envtest runs; Stop closes it.
func (e *Env) openLog(name string) (*os.File, error) {
	f, err := os.OpenFile(e.LogFile(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s log: %w", name, err)
	}
	e.logFiles = append(e.logFiles, f)
	return f, nil
}

// pki returns the path of a key or certificate the controllers share.
func (e *Env) pki(name string) string { return filepath.Join(e.Dir, "pki", name) }

// writeServiceAccountKey writes the key pair kube-controller-manager signs service account
// tokens with (sa.key) and kube-apiserver checks them with (sa.pub).
func (e *Env) writeServiceAccountKey() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating service account key: %w", err)
	}
	priv, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("encoding service account public key: %w", err)
	}
	if err := os.WriteFile(e.pki("sa.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: priv}), 0o600); err != nil {
		return fmt.Errorf("writing service account key: %w", err)
	}
	if err := os.WriteFile(e.pki("sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return fmt.Errorf("writing service account public key: %w", err)
	}
	return nil
}

// writeFrontProxyCerts writes a front proxy CA and the client certificate kube-apiserver
// proxies requests to aggregated API servers with.
func (e *Env) writeFrontProxyCerts() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating front proxy CA key: %w", err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "front-proxy-ca"}, caKey)
	if err != nil {
		return fmt.Errorf("generating front proxy CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating front proxy client key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "front-proxy-client"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("signing front proxy client certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding front proxy client key: %w", err)
	}
	for name, block := range map[string]*pem.Block{
		"front-proxy-ca.crt":     {Type: "CERTIFICATE", Bytes: ca.Raw},
		"front-proxy-client.crt": {Type: "CERTIFICATE", Bytes: der},
		"front-proxy-client.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(e.pki(name), pem.EncodeToMemory(block), 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return nil
}

// startControllers starts kube-controller-manager, kube-scheduler and kwok against the
// running API server, creates the fake nodes, and waits until the controllers have shown
// they work: every node Ready with a lease and without the not-ready taint, and the default
// ServiceAccount in the default namespace.
func (e *Env) startControllers(ctx context.Context, assets string, opts ControllerOptions, timeout time.Duration) error {
	// The API server's CA, which kube-controller-manager publishes in every namespace
	// (kube-root-ca.crt) for service account token volumes.
	if err := os.WriteFile(e.pki("ca.crt"), e.Config.CAData, 0o600); err != nil {
		return fmt.Errorf("writing API server CA: %w", err)
	}
	kubeconfigs := map[string]string{}
	for _, u := range []struct{ component, user string }{
		// The bootstrap RBAC policy binds these user names to their roles, and the
		// extension-apiserver-authentication-reader role lets them authenticate their own
		// clients through the API server.
		{"kube-controller-manager", "system:kube-controller-manager"},
		{"kube-scheduler", "system:kube-scheduler"},
		// kwok plays every kubelet and writes the status of nodes and pods of any name; no
		// bootstrap role covers that, so it is bound to cluster-admin below.
		{"kwok", "kwok-controller"},
	} {
		au, err := e.env.AddUser(envtest.User{Name: u.user}, e.Config)
		if err != nil {
			return fmt.Errorf("adding user %s: %w", u.user, err)
		}
		if kubeconfigs[u.component], err = writeKubeconfig(au, filepath.Join(e.Dir, u.component+".kubeconfig")); err != nil {
			return err
		}
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kwok-controller"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: "kwok-controller"}},
	}
	if _, err := e.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating clusterrolebinding %s: %w", binding.Name, err)
	}

	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	kcm := e.kubeconfigFlags(kubeconfigs["kube-controller-manager"])
	kcm["bind-address"] = "127.0.0.1"
	kcm["secure-port"] = ports[0]
	kcm["leader-elect"] = "false"
	// Each controller gets its own service account token, as in kubeadm clusters, so the
	// bootstrap roles of the controllers apply, not the manager's own.
	kcm["use-service-account-credentials"] = "true"
	kcm["service-account-private-key-file"] = e.pki("sa.key")
	kcm["root-ca-file"] = e.pki("ca.crt")
	kcm["v"] = "2"
	sched := e.kubeconfigFlags(kubeconfigs["kube-scheduler"])
	sched["bind-address"] = "127.0.0.1"
	sched["secure-port"] = ports[1]
	sched["leader-elect"] = "false"
	sched["v"] = "2"
	// kwok's stages, then the kubelet behaviours of the repository's own.
	stages, err := os.ReadFile(filepath.Join(assets, KwokStagesFile))
	if err != nil {
		return fmt.Errorf("reading kwok's stages: %w", err)
	}
	stagesPath := filepath.Join(e.Dir, KwokStagesFile)
	if err := os.WriteFile(stagesPath, slices.Concat(stages, []byte("\n---\n"), KubeletStages), 0o600); err != nil {
		return fmt.Errorf("writing kwok's stages: %w", err)
	}
	kwok := map[string]string{
		"kubeconfig":                            kubeconfigs["kwok"],
		"config":                                stagesPath,
		"manage-all-nodes":                      "false",
		"manage-nodes-with-annotation-selector": KwokNodeAnnotation + "=fake",
		// A kubelet's default: kwok renews each node's Lease in kube-node-lease, which is
		// what the node lifecycle controller watches.
		"node-lease-duration-seconds": "40",
		"server-address":              net.JoinHostPort("127.0.0.1", ports[2]),
		// Pod IPs are only data; kept apart from the service range (10.0.0.0/24).
		"cidr": "10.244.0.0/16",
	}
	for k, v := range opts.KubeControllerManagerFlags {
		kcm[k] = v
	}
	for k, v := range opts.KubeSchedulerFlags {
		sched[k] = v
	}
	for k, v := range opts.KwokFlags {
		kwok[k] = v
	}

	// kwok first, so the nodes are taken care of from the moment they exist.
	if err := e.startComponent(ctx, timeout, "kwok", filepath.Join(assets, "kwok"), kwok,
		[]string{"KWOK_WORKDIR=" + filepath.Join(e.Dir, "kwok")}, "http://"+net.JoinHostPort("127.0.0.1", ports[2])+"/healthz"); err != nil {
		return err
	}
	if err := e.startComponent(ctx, timeout, "kube-controller-manager", filepath.Join(assets, "kube-controller-manager"), kcm,
		nil, "https://"+net.JoinHostPort("127.0.0.1", ports[0])+"/healthz"); err != nil {
		return err
	}
	if err := e.startComponent(ctx, timeout, "kube-scheduler", filepath.Join(assets, "kube-scheduler"), sched,
		nil, "https://"+net.JoinHostPort("127.0.0.1", ports[1])+"/healthz"); err != nil {
		return err
	}

	n := opts.Nodes
	if n == 0 {
		n = 3
	}
	capacity := opts.NodeCapacity
	if capacity == nil {
		capacity = corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("4"),
			corev1.ResourceMemory: resource.MustParse("16Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		}
	}
	for i := range n {
		node := kwokNode(fmt.Sprintf("kwok-node-%d", i), i, capacity)
		if _, err := e.Clientset.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
		e.Nodes = append(e.Nodes, node.Name)
	}
	return e.waitForControllers(ctx, timeout)
}

// kubeconfigFlags returns the flags a component needs to reach the API server as the user of
// kubeconfig, and to check the credentials of its own clients through it.
func (e *Env) kubeconfigFlags(kubeconfig string) map[string]string {
	return map[string]string{
		"kubeconfig":                kubeconfig,
		"authentication-kubeconfig": kubeconfig,
		"authorization-kubeconfig":  kubeconfig,
	}
}

// kwokNode returns a node for kwok to run, registered the way a kubelet registers one:
// well-known labels, capacity and addresses in its status. Its IP is in 198.51.100.0/24
// (TEST-NET-2, for documentation): data for pod status, never an address anything listens on.
func kwokNode(name string, i int, capacity corev1.ResourceList) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity.DeepCopy(),
			Allocatable: capacity.DeepCopy(),
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: "198.51.100." + strconv.Itoa(10+i)},
				{Type: corev1.NodeHostName, Address: name},
			},
		},
	}
}

// waitForControllers polls until each node is Ready, has a Lease and has lost the not-ready
// taint the API server puts on new nodes (kwok and the node lifecycle controller at work),
// and the default ServiceAccount exists (the serviceaccount controller).
func (e *Env) waitForControllers(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var waiting string
	for {
		waiting = e.notReady(ctx)
		if waiting == "" {
			return nil
		}
		if err := e.componentsRunning(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("control plane not ready after %s: %s (logs in %s)", timeout, waiting, filepath.Join(e.Dir, "logs"))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// notReady returns what the control plane still lacks, or "" when it is ready.
func (e *Env) notReady(ctx context.Context) string {
	for _, name := range e.Nodes {
		node, err := e.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Sprintf("reading node %s: %v", name, err)
		}
		ready := false
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			return fmt.Sprintf("node %s is not Ready (kwok)", name)
		}
		for _, t := range node.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady {
				return fmt.Sprintf("node %s still has the %s taint (kube-controller-manager's node lifecycle controller)", name, t.Key)
			}
		}
		if _, err := e.Clientset.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return fmt.Sprintf("node %s has no lease (kwok): %v", name, err)
		}
	}
	if _, err := e.Clientset.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return "no default ServiceAccount in namespace default (kube-controller-manager's serviceaccount controller)"
		}
		return fmt.Sprintf("reading ServiceAccount default/default: %v", err)
	}
	return ""
}

// componentsRunning returns an error naming the first component that has exited.
func (e *Env) componentsRunning() error {
	for _, c := range e.components {
		select {
		case <-c.done:
			return c.exitError("exited")
		default:
		}
	}
	return nil
}

// startComponent starts binary with flags (--name=value, in a stable order) and extraEnv,
// writing its output to its log file, and waits until healthz answers 200 OK.
func (e *Env) startComponent(ctx context.Context, timeout time.Duration, name, binary string, flags map[string]string, extraEnv []string, healthz string) error {
	logPath := e.LogFile(name)
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening %s log: %w", name, err)
	}
	keys := make([]string, 0, len(flags))
	for k := range flags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	args := make([]string, 0, len(keys))
	for _, k := range keys {
		args = append(args, "--"+k+"="+flags[k])
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = componentEnv(extraEnv)
	cmd.Dir = e.Dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	fmt.Fprintf(f, "# %s %s\n", binary, strings.Join(args, " "))
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("starting %s: %w (log: %s)", name, err, logPath)
	}
	c := &component{name: name, logPath: logPath, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	e.components = append(e.components, c)
	return c.waitHealthy(ctx, healthz, timeout)
}

// componentEnv is the environment of a control plane component: ours without the variables
// meant for the clients under test. KUBE_CACHE_MUTATION_DETECTOR in particular would make
// every informer of the controllers deep-copy and compare its cache.
func componentEnv(extra []string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "KUBE_CACHE_MUTATION_DETECTOR", "KUBECONFIG", "KUBECACHEDIR", "KUBE_FEATURE_WatchListClient":
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// waitHealthy polls url until it answers 200 OK, the process exits or timeout passes. The
// components serve healthz with self-signed certificates on loopback, and healthz is open to
// anonymous requests, so the probe neither verifies nor authenticates.
func (c *component) waitHealthy(ctx context.Context, url string, timeout time.Duration) error {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback health probe
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "no answer yet"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if res, err := client.Do(req); err != nil {
			last = err.Error()
		} else {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			last = res.Status
		}
		select {
		case <-c.done:
			return c.exitError("exited before it was healthy")
		case <-ctx.Done():
			return fmt.Errorf("%s not healthy after %s (%s: %s); its log is %s:\n%s", c.name, timeout, url, last, c.logPath, tail(c.logPath, 20))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// exitError describes a component that has exited, with the end of its log.
func (c *component) exitError(what string) error {
	return fmt.Errorf("%s %s (%v); its log is %s:\n%s", c.name, what, c.err, c.logPath, tail(c.logPath, 20))
}

// stop sends SIGTERM to the component's process group and waits for it, then SIGKILL.
func (c *component) stop(grace time.Duration) error {
	defer c.log.Close()
	select {
	case <-c.done:
		// It was already gone: that is a failure unless we killed it.
		return c.exitError("had exited before Stop")
	default:
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-c.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
	return fmt.Errorf("%s did not stop within %s of SIGTERM; killed (log: %s)", c.name, grace, c.logPath)
}

// stopControllers stops the components in the reverse order of their start.
func (e *Env) stopControllers() error {
	var errs []error
	for i := len(e.components) - 1; i >= 0; i-- {
		if err := e.components[i].stop(15 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	e.components = nil
	return errors.Join(errs...)
}

// tail returns the last n lines of the file at path, for error messages.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// freePorts returns n distinct ports free on 127.0.0.1 at the time of the call. Each
// listener stays open until all are picked, so the kernel hands out n different ports;
// another process may still take one before its component binds it, as with envtest's own
// port picking.
func freePorts(n int) ([]string, error) {
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}
