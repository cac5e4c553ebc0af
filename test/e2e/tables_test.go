package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// Every listable type, on two API server versions: `kubectl idx TYPE -A`, `-o wide` and
// `-o json` against `kubectl get` of the same, on a controller-driven control plane loaded with
// the demo workload and one object of as many other kinds as the server serves. The tables
// must have the same header and the same cells (time cells masked, maskTimeCell), the JSON the
// same items. `kubectl idx watch TYPE -A` and its -o wide, stopped once the current objects are
// printed, must show kubectl's columns and cells after its own (compareWatchTable), and on the
// newer version the OWNER column of --show-owner must name the top-level controllers
// (checkShowOwner, tables_watch_test.go). The types come from discovery, never from a list of
// ours: a kind a new server version adds is compared the day the assets move to that version.

const (
	// tablesNamespace holds the workload of TestTablesEveryType; its cluster-scoped objects
	// are named tablesNamespace-*.
	tablesNamespace = "e2e-tables"
	// tablesMinTypes is how many types must have had objects: fewer means the listing or the
	// setup broke, not that the comparison passed.
	tablesMinTypes = 25
	// tablesConcurrency bounds the types compared at once (each runs kubectl and kubectl idx
	// back to back): enough to keep a version under two minutes on 2 cores.
	tablesConcurrency = 4
	// tablesAttempts and tablesRetryDelay bound the retries of one output of one type while
	// its objects move (kwok renews node leases every few seconds, events arrive, controllers
	// write status).
	tablesAttempts   = 6
	tablesRetryDelay = time.Second
)

func TestTablesEveryType(t *testing.T) {
	t.Run(minorVersion(serverVersion), func(t *testing.T) {
		c := controllerCluster(t)
		checkEveryType(t, c, serverVersion, true)
		t.Run("list strategies", func(t *testing.T) { checkListStrategies(t, c) })
	})

	assets := os.Getenv(PreviousAssetsEnv)
	name, version := "previous", ""
	var versionErr error
	if assets != "" {
		if version, versionErr = assetsVersion(assets); versionErr == nil {
			name = minorVersion(version)
		}
	}
	t.Run(name, func(t *testing.T) {
		if assets == "" {
			t.Fatalf("%s is not set: run `make test-e2e`, which builds the previous version's control plane with hack/envtest-assets.sh and sets it", PreviousAssetsEnv)
		}
		if versionErr != nil {
			t.Fatalf("%s=%s: %v", PreviousAssetsEnv, assets, versionErr)
		}
		c := startPreviousCluster(t, assets)
		checkEveryType(t, c, version, false)
		t.Run("list strategies", func(t *testing.T) { checkListStrategies(t, c) })
	})
}

// minorVersion turns v1.37.2 into v1.37, the subtest's name.
func minorVersion(v string) string {
	if i := strings.LastIndex(v, "."); strings.Count(v, ".") == 2 {
		return v[:i]
	}
	return v
}

// assetsVersion returns the version of the kube-apiserver in an assets directory, v1.34.4 from
// its --version, "Kubernetes v1.34.4".
func assetsVersion(dir string) (string, error) {
	out, err := exec.Command(filepath.Join(dir, "kube-apiserver"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("kube-apiserver --version: %w", err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "Kubernetes ")
	if !ok {
		return "", fmt.Errorf("kube-apiserver --version printed %q", out)
	}
	return v, nil
}

// startPreviousCluster starts a controller-driven control plane from the assets of the
// previous version, stopped when t ends; its logs are kept, and named, when t failed.
func startPreviousCluster(t *testing.T, assets string) *ctrlCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "kubectl-idx-previous-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	e, err := testenv.Start(ctx, testenv.Options{
		Assets:      assets,
		Dir:         dir,
		Controllers: &testenv.ControllerOptions{Nodes: controllerNodes},
	})
	if err != nil {
		t.Fatalf("starting the control plane from %s=%s: %v (logs in %s)", PreviousAssetsEnv, assets, err, filepath.Join(dir, "logs"))
	}
	t.Logf("control plane from %s ready in %s", assets, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stopping the control plane from %s: %v", assets, err)
		}
		if t.Failed() {
			t.Logf("control plane logs kept in %s", filepath.Join(dir, "logs"))
			return
		}
		_ = os.RemoveAll(dir)
	})
	pp, err := e.PluginPath(binary)
	if err != nil {
		t.Fatal(err)
	}
	return &ctrlCluster{env: e, pluginPath: pp}
}

// checkEveryType loads the workload onto c, whose API server must be of version, and compares
// kubectl idx with kubectl get for every listable type that has objects. On a shared control
// plane it waits at the end until the workload is gone, so that its pods are not on the nodes
// when the tests after it start.
func checkEveryType(t *testing.T, c *ctrlCluster, version string, shared bool) {
	start := time.Now()
	var v struct {
		ServerVersion struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	mustDecode(t, "kubectl version -o json", c.mustKubectl(t, "", "version", "-o", "json").Stdout, &v)
	if v.ServerVersion.GitVersion != version {
		t.Fatalf("the API server is %s, want %s", v.ServerVersion.GitVersion, version)
	}

	if shared {
		t.Cleanup(func() {
			if res := c.kubectl(t, "", "wait", "--for=delete", "namespace/"+tablesNamespace, "--timeout=2m"); res.ExitCode != 0 {
				t.Logf("namespace %s still there:\n%s", tablesNamespace, res)
			}
		})
	}
	loadEveryKind(t, c, servedResources(t, c))
	t.Logf("workload loaded in %s", time.Since(start).Round(time.Millisecond))
	// Read again: the workload added a custom resource.
	served := servedResources(t, c)

	types := strings.Fields(c.mustKubectl(t, "", "api-resources", "--verbs=list,watch", "-o", "name").Stdout)
	var (
		mu              sync.Mutex
		compared, empty []string
		ran             int // subtests not left out by -run
		wg              sync.WaitGroup
	)
	sem := make(chan struct{}, tablesConcurrency)
	compareStart := time.Now()
	for _, typ := range types {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(typ, func(t *testing.T) {
				mu.Lock()
				ran++
				mu.Unlock()
				if n := countItems(t, c, typ); n == 0 {
					mu.Lock()
					empty = append(empty, typ)
					mu.Unlock()
					return
				}
				mu.Lock()
				compared = append(compared, typ)
				mu.Unlock()
				t.Run("table", func(t *testing.T) { compareTable(t, c, typ) })
				t.Run("wide", func(t *testing.T) { compareTable(t, c, typ, "-o", "wide") })
				t.Run("json", func(t *testing.T) { compareJSON(t, c, typ) })
				t.Run("watch", func(t *testing.T) { compareWatchTable(t, c, typ, served[typ].kind) })
				t.Run("watch-wide", func(t *testing.T) { compareWatchTable(t, c, typ, served[typ].kind, "-o", "wide") })
			})
		}()
	}
	wg.Wait()
	// --show-owner adds objects of its own (owner chains the workload lacks), so it runs after
	// the types are compared; one version is enough: the column is kubectl idx's own.
	if shared {
		t.Run("show-owner", func(t *testing.T) { checkShowOwner(t, c) })
	}
	slices.Sort(compared)
	slices.Sort(empty)
	t.Logf("compared %d types in %s: %s", len(compared), time.Since(compareStart).Round(time.Millisecond), strings.Join(compared, " "))
	t.Logf("skipped %d types without objects: %s", len(empty), strings.Join(empty, " "))
	// A -run filter on the types (TestTablesEveryType/v1.37/pods) leaves the others out.
	if ran == len(types) && len(compared) < tablesMinTypes {
		t.Errorf("only %d of %d listable types had objects, want at least %d: the setup or the listing is broken", len(compared), len(types), tablesMinTypes)
	}
}

// servedResource is what discovery says of a listable resource.
type servedResource struct {
	// apiVersion is the group version discovery prefers (v1, apps/v1).
	apiVersion string
	// kind is the resource's kind (Pod, Deployment), the KIND of a watch's rows.
	kind string
}

// servedResources maps each listable resource, as resource.group (pods, deployments.apps),
// to what discovery says of it, from kubectl api-resources.
func servedResources(t *testing.T, c *ctrlCluster) map[string]servedResource {
	t.Helper()
	out := c.mustKubectl(t, "", "api-resources", "--verbs=list,watch").Stdout
	tables := parseTables(out)
	if len(tables) != 1 {
		t.Fatalf("kubectl api-resources printed %d tables:\n%s", len(tables), out)
	}
	tb := tables[0]
	name, gv, kind := slices.Index(tb.cols, "NAME"), slices.Index(tb.cols, "APIVERSION"), slices.Index(tb.cols, "KIND")
	if name < 0 || gv < 0 || kind < 0 {
		t.Fatalf("kubectl api-resources: no NAME, APIVERSION or KIND column in %q", tb.header)
	}
	served := map[string]servedResource{}
	for _, row := range tb.rows {
		res := row[name]
		if group, _, ok := strings.Cut(row[gv], "/"); ok {
			res += "." + group
		}
		served[res] = servedResource{apiVersion: row[gv], kind: row[kind]}
	}
	return served
}

// extraObject is an object of a kind the demo workload has none of, created when the server
// serves resource at apiVersion.
type extraObject struct {
	resource, apiVersion, manifest string
}

// extraObjects are the objects, beside the demo workload and what the control plane makes
// itself (nodes, namespaces, events, endpoints, leases, flow control, RBAC, ...), that give as
// many listable types as possible something to list. Cluster-scoped names start with
// tablesNamespace; nothing here can get in another test's way: the webhooks match a group no
// server has, the admission policies only this test's namespace, and the priority class is
// not the default.
var extraObjects = []extraObject{
	{"serviceaccounts", "v1", `
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: e2e-tables}`},
	{"horizontalpodautoscalers.autoscaling", "autoscaling/v2", `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: e2e-tables}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 5
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}`},
	{"leases.coordination.k8s.io", "coordination.k8s.io/v1", `
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: e2e-lock, namespace: e2e-tables}
spec: {holderIdentity: someone, leaseDurationSeconds: 30}`},
	{"priorityclasses.scheduling.k8s.io", "scheduling.k8s.io/v1", `
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-tables-low}
value: 1000
description: TestTablesEveryType`},
	{"replicationcontrollers", "v1", `
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: e2e-tables}
spec:
  replicas: 1
  selector: {app: legacy}
  template:
    metadata:
      labels: {app: legacy}
    spec:
      containers:
      - {name: legacy, image: registry.example/legacy:1.0}`},
	{"podtemplates", "v1", `
apiVersion: v1
kind: PodTemplate
metadata: {name: template, namespace: e2e-tables}
template:
  metadata:
    labels: {app: template}
  spec:
    containers:
    - {name: template, image: registry.example/template:1.0}`},
	{"resourcequotas", "v1", `
apiVersion: v1
kind: ResourceQuota
metadata: {name: quota, namespace: e2e-tables}
spec:
  hard: {pods: "100", configmaps: "50"}`},
	{"limitranges", "v1", `
apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: e2e-tables}
spec:
  limits:
  - type: Container
    max: {cpu: "2"}`},
	{"storageclasses.storage.k8s.io", "storage.k8s.io/v1", `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: e2e-tables-local}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate`},
	// The persistentvolume controller binds the claim to the volume.
	{"persistentvolumes", "v1", `
apiVersion: v1
kind: PersistentVolume
metadata: {name: e2e-tables-pv}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: e2e-tables-local
  hostPath: {path: /tmp/e2e-tables-pv}`},
	{"persistentvolumeclaims", "v1", `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: e2e-tables}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: e2e-tables-local
  resources:
    requests: {storage: 1Gi}`},
	{"ingressclasses.networking.k8s.io", "networking.k8s.io/v1", `
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: e2e-tables}
spec: {controller: example.com/ingress-controller}`},
	{"ingresses.networking.k8s.io", "networking.k8s.io/v1", `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: e2e-tables}
spec:
  ingressClassName: e2e-tables
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: web, port: {number: 80}}`},
	{"networkpolicies.networking.k8s.io", "networking.k8s.io/v1", `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web, namespace: e2e-tables}
spec:
  podSelector:
    matchLabels: {app: web}
  ingress:
  - from:
    - podSelector: {}`},
	{"runtimeclasses.node.k8s.io", "node.k8s.io/v1", `
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: e2e-tables}
handler: runc`},
	{"roles.rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1", `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: e2e-tables}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list]`},
	{"rolebindings.rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1", `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: e2e-tables}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects:
- {kind: ServiceAccount, name: robot, namespace: e2e-tables}`},
	{"csidrivers.storage.k8s.io", "storage.k8s.io/v1", `
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: e2e-tables.csi.example.com}
spec: {attachRequired: true, podInfoOnMount: false}`},
	{"csinodes.storage.k8s.io", "storage.k8s.io/v1", `
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: kwok-node-0}
spec:
  drivers:
  - {name: e2e-tables.csi.example.com, nodeID: kwok-node-0, topologyKeys: [kubernetes.io/hostname]}`},
	{"csistoragecapacities.storage.k8s.io", "storage.k8s.io/v1", `
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: capacity, namespace: e2e-tables}
storageClassName: e2e-tables-local
capacity: 10Gi`},
	{"volumeattachments.storage.k8s.io", "storage.k8s.io/v1", `
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: e2e-tables-attachment}
spec:
  attacher: e2e-tables.csi.example.com
  nodeName: kwok-node-0
  source: {persistentVolumeName: e2e-tables-pv}`},
	{"volumeattributesclasses.storage.k8s.io", "storage.k8s.io/v1", `
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: e2e-tables-gold}
driverName: e2e-tables.csi.example.com
parameters: {iops: "3000"}`},
	{"validatingwebhookconfigurations.admissionregistration.k8s.io", "admissionregistration.k8s.io/v1", webhookConfiguration("ValidatingWebhookConfiguration")},
	{"mutatingwebhookconfigurations.admissionregistration.k8s.io", "admissionregistration.k8s.io/v1", webhookConfiguration("MutatingWebhookConfiguration")},
	{"validatingadmissionpolicies.admissionregistration.k8s.io", "admissionregistration.k8s.io/v1", `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: e2e-tables}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - {expression: "true", message: always allowed}`},
	{"validatingadmissionpolicybindings.admissionregistration.k8s.io", "admissionregistration.k8s.io/v1", `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: e2e-tables}
spec:
  policyName: e2e-tables
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: e2e-tables}`},
	{"mutatingadmissionpolicies.admissionregistration.k8s.io", "admissionregistration.k8s.io/v1", `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: e2e-tables}
spec:
  failurePolicy: Fail
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: 'Object{metadata: Object.metadata{labels: {"e2e-tables": "mutated"}}}'`},
	{"mutatingadmissionpolicybindings.admissionregistration.k8s.io", "admissionregistration.k8s.io/v1", `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: e2e-tables}
spec:
  policyName: e2e-tables
  matchResources:
    namespaceSelector:
      matchLabels: {kubernetes.io/metadata.name: e2e-tables}`},
	{"deviceclasses.resource.k8s.io", "resource.k8s.io/v1", `
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: e2e-tables-gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}`},
	{"resourceclaimtemplates.resource.k8s.io", "resource.k8s.io/v1", `
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: e2e-tables}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: e2e-tables-gpu}`},
	{"resourceclaims.resource.k8s.io", "resource.k8s.io/v1", `
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: e2e-tables}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: e2e-tables-gpu}`},
	{"resourceslices.resource.k8s.io", "resource.k8s.io/v1", `
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: e2e-tables-kwok-node-0-gpu}
spec:
  driver: gpu.example.com
  nodeName: kwok-node-0
  pool: {name: kwok-node-0, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0`},
}

// webhookConfiguration is a webhook configuration of kind (Validating or Mutating) whose one
// webhook matches nothing the tests create, and is ignored if it fails.
func webhookConfiguration(kind string) string {
	return `
apiVersion: admissionregistration.k8s.io/v1
kind: ` + kind + `
metadata: {name: e2e-tables}
webhooks:
- name: never.e2e-tables.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  clientConfig: {url: "https://127.0.0.1:1/never"}
  rules:
  - {apiGroups: [e2e-tables.example.com], apiVersions: [v1], operations: [CREATE], resources: [nothings]}`
}

// loadEveryKind creates tablesNamespace with the demo workload (test/demo/workload.yaml, its
// two namespaces folded into tablesNamespace) and its CRD, waits until the controllers have
// rolled it out, then adds the served extraObjects and a CertificateSigningRequest. Everything
// is deleted when t ends.
func loadEveryKind(t *testing.T, c *ctrlCluster, served map[string]servedResource) {
	t.Helper()
	ns := tablesNamespace
	c.createNamespace(t, ns)

	crd := fixtures.CronTabCRD()
	crd.APIVersion, crd.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
	crdYAML, err := yaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	c.mustKubectl(t, string(crdYAML), "apply", "-f", "-")
	t.Cleanup(func() { c.kubectl(t, "", "delete", "crd", crd.Name, "--wait=false", "--ignore-not-found") })
	c.mustKubectl(t, "", "wait", "--for=condition=Established", "crd/"+crd.Name, "--timeout=1m")

	c.mustKubectl(t, demoWorkload(t, ns), "apply", "-f", "-")
	for _, w := range []string{"deployment/web", "deployment/api", "statefulset/cache", "daemonset/node-agent"} {
		c.mustKubectl(t, "", "-n", ns, "rollout", "status", w, "--timeout=2m")
	}
	c.mustKubectl(t, "", "-n", ns, "wait", "--for=condition=Complete", "job/report-now", "--timeout=2m")

	var docs, skipped []string
	for _, o := range extraObjects {
		if served[o.resource].apiVersion != o.apiVersion {
			skipped = append(skipped, o.resource+" "+o.apiVersion)
			continue
		}
		docs = append(docs, strings.TrimSpace(o.manifest))
	}
	if served["certificatesigningrequests.certificates.k8s.io"].apiVersion == "certificates.k8s.io/v1" {
		docs = append(docs, csrManifest(t))
	} else {
		skipped = append(skipped, "certificatesigningrequests.certificates.k8s.io certificates.k8s.io/v1")
	}
	if len(skipped) > 0 {
		t.Logf("not served, so not created: %s", strings.Join(skipped, ", "))
	}
	manifest := strings.Join(docs, "\n---\n") + "\n"
	c.mustKubectl(t, manifest, "apply", "-f", "-")
	t.Cleanup(func() { c.kubectl(t, manifest, "delete", "-f", "-", "--wait=false", "--ignore-not-found") })

	// What the controllers write about the extras, before the tables are read: the claim bound
	// to the volume, the replication controller's pod running, the quota's usage and the
	// autoscaler's first status.
	waits := [][]string{
		{"pvc/data", "--for=jsonpath={.status.phase}=Bound"},
		{"rc/legacy", "--for=jsonpath={.status.readyReplicas}=1"},
		{"resourcequota/quota", "--for=jsonpath={.status.hard.pods}=100"},
		{"hpa/web", "--for=jsonpath={.status.currentReplicas}=3"},
	}
	for _, w := range waits {
		c.mustKubectl(t, "", append([]string{"-n", ns, "wait", "--timeout=2m"}, w...)...)
	}
}

// demoWorkload returns test/demo/workload.yaml with its Namespaces dropped and its objects
// moved into ns.
func demoWorkload(t *testing.T, ns string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "demo", "workload.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, doc := range strings.Split(string(data), "\n---\n") {
		if strings.Contains(doc, "\nkind: Namespace\n") {
			continue
		}
		doc = strings.ReplaceAll(doc, "  namespace: shop\n", "  namespace: "+ns+"\n")
		doc = strings.ReplaceAll(doc, "  namespace: ops\n", "  namespace: "+ns+"\n")
		if !strings.Contains(doc, "  namespace: "+ns+"\n") {
			t.Fatalf("test/demo/workload.yaml: a document in neither shop nor ops:\n%s", doc)
		}
		docs = append(docs, doc)
	}
	if len(docs) < 10 {
		t.Fatalf("test/demo/workload.yaml: only %d objects", len(docs))
	}
	return strings.Join(docs, "\n---\n")
}

// csrManifest returns a CertificateSigningRequest for a signer nobody runs, so it stays
// Pending, with a request of a key made here.
func csrManifest(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "e2e-tables"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	req := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	return `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: e2e-tables}
spec:
  signerName: example.com/e2e-tables
  expirationSeconds: 3600
  usages: [digital signature, client auth]
  request: ` + req
}

// countItems returns how many objects of typ kubectl lists in all namespaces.
func countItems(t *testing.T, c *ctrlCluster, typ string) int {
	t.Helper()
	res := c.mustKubectl(t, "", "get", typ, "-A", "-o", "json")
	return len(listItems(t, "kubectl get "+typ+" -A -o json", res.Stdout))
}

// compareTable compares `kubectl idx TYPE -A EXTRA...` with `kubectl get` of the same: the same
// columns in the same order (the header's names; its spacing follows the cells' widths, which
// the ages change), and the same rows (keyed by NAMESPACE/NAME, in any order) with
// the same cells, time cells masked. The objects may change while the two run, so it reads
// kubectl, kubectl idx and, if they differ, kubectl again (kubectl idx may have seen the
// newer state), up to tablesAttempts times, and fails with the last attempt's differences.
func compareTable(t *testing.T, c *ctrlCluster, typ string, extra ...string) {
	t.Helper()
	args := append([]string{typ, "-A"}, extra...)
	what := strings.Join(args, " ")
	var diff []string
	var kubectlOut, idxOut string
	for attempt := 1; attempt <= tablesAttempts; attempt++ {
		if attempt > 1 {
			time.Sleep(tablesRetryDelay)
		}
		kubectlOut = c.mustKubectl(t, "", append([]string{"get"}, args...)...).Stdout
		res := c.idx(t, args...)
		mustSucceed(t, "kubectl idx "+what, res)
		idxOut = res.Stdout
		if diff = diffTables(kubectlOut, idxOut); diff == nil {
			logAttempts(t, what, attempt)
			return
		}
		if again := c.mustKubectl(t, "", append([]string{"get"}, args...)...).Stdout; diffTables(again, idxOut) == nil {
			logAttempts(t, what, attempt)
			return
		}
	}
	t.Errorf("kubectl idx %s differs from kubectl get %s in all %d attempts; the last:\n%s\n--- kubectl get %s ---\n%s\n--- kubectl idx %s ---\n%s",
		what, what, tablesAttempts, strings.Join(diff, "\n"), what, headLines(kubectlOut, 12), what, headLines(idxOut, 12))
}

// compareJSON compares the items of `kubectl idx TYPE -A -o json` with kubectl's through
// compareLists, retrying like compareTable while the objects move.
func compareJSON(t *testing.T, c *ctrlCluster, typ string) {
	t.Helper()
	args := []string{typ, "-A", "-o", "json"}
	what := strings.Join(args, " ")
	var idxDoc, kubectlDoc map[string]any
	for attempt := 1; attempt <= tablesAttempts; attempt++ {
		if attempt > 1 {
			time.Sleep(tablesRetryDelay)
		}
		kubectlDoc = decodeDoc(t, "kubectl get "+what, c.mustKubectl(t, "", append([]string{"get"}, args...)...).Stdout, false)
		res := c.idx(t, args...)
		mustSucceed(t, "kubectl idx "+what, res)
		idxDoc = decodeDoc(t, "kubectl idx "+what, res.Stdout, false)
		if listsEqual(idxDoc, kubectlDoc) {
			logAttempts(t, what, attempt)
			compareLists(t, idxDoc, kubectlDoc)
			return
		}
		again := decodeDoc(t, "kubectl get "+what, c.mustKubectl(t, "", append([]string{"get"}, args...)...).Stdout, false)
		if listsEqual(idxDoc, again) {
			logAttempts(t, what, attempt)
			compareLists(t, idxDoc, again)
			return
		}
	}
	t.Errorf("kubectl idx %s differs from kubectl get %s in all %d attempts; the last:", what, what, tablesAttempts)
	compareLists(t, idxDoc, kubectlDoc)
}

// listsEqual is compareLists's verdict without its report: the same kind and apiVersion, and
// the same items in the same order once kubectl's managedFields are dropped.
func listsEqual(idxDoc, kubectlDoc map[string]any) bool {
	if idxDoc["kind"] != kubectlDoc["kind"] || idxDoc["apiVersion"] != kubectlDoc["apiVersion"] {
		return false
	}
	idxItems, _ := idxDoc["items"].([]any)
	kubectlItems, _ := kubectlDoc["items"].([]any)
	if len(idxItems) != len(kubectlItems) {
		return false
	}
	for i := range kubectlItems {
		want, _ := kubectlItems[i].(map[string]any)
		dropManagedFields(want)
		if !cmp.Equal(want, idxItems[i]) {
			return false
		}
	}
	return true
}

func logAttempts(t *testing.T, what string, attempt int) {
	t.Helper()
	if attempt > 1 {
		t.Logf("%s matched on attempt %d", what, attempt)
	}
}

// headLines returns the first n lines of s, and how many more there were.
func headLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... %d more lines", len(lines)-n)
}

// diffTables returns how the table kubectl-idx printed (got) differs from kubectl's (want), one
// line per difference, or nil: the columns, then each row missing, extra or with a different
// cell, time cells masked.
func diffTables(want, got string) []string {
	wt, gt := parseTables(want), parseTables(got)
	if len(wt) != 1 || len(gt) != 1 {
		return []string{fmt.Sprintf("kubectl printed %d tables, kubectl-idx %d", len(wt), len(gt))}
	}
	w, g := wt[0], gt[0]
	var diff []string
	if !slices.Equal(w.cols, g.cols) {
		diff = append(diff, fmt.Sprintf("header: kubectl %q, kubectl-idx %q", strings.Join(w.cols, "  "), strings.Join(g.cols, "  ")))
	}
	wRows, gRows := rowsByKey(w), rowsByKey(g)
	var keys []string
	for k := range wRows {
		keys = append(keys, k)
	}
	for k := range gRows {
		if _, ok := wRows[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var rowDiff []string
	for _, k := range keys {
		wr, gr := wRows[k], gRows[k]
		if len(wr) != len(gr) {
			rowDiff = append(rowDiff, fmt.Sprintf("row %s: kubectl has %d, kubectl-idx %d", k, len(wr), len(gr)))
			continue
		}
		// Rows of one key are either the one row of an object (NAMESPACE/NAME) or identical
		// whole rows (a table without NAME), so comparing the first of each is enough.
		for _, col := range w.cols {
			if !slices.Contains(g.cols, col) {
				continue
			}
			if wc, gc := wr[0][col], gr[0][col]; wc != gc {
				rowDiff = append(rowDiff, fmt.Sprintf("row %s, %s: kubectl %q, kubectl-idx %q", k, col, wc, gc))
			}
		}
	}
	const maxRows = 8
	if len(rowDiff) > maxRows {
		rowDiff = append(rowDiff[:maxRows], fmt.Sprintf("... %d more differences in rows", len(rowDiff)-maxRows))
	}
	return append(diff, rowDiff...)
}

// rowsByKey returns a table's rows as column -> masked cell, by NAMESPACE/NAME, or, in a
// table without a NAME column (kubectl get events), by the whole masked row.
func rowsByKey(tb table) map[string][]map[string]string {
	name, namespace := slices.Index(tb.cols, "NAME"), slices.Index(tb.cols, "NAMESPACE")
	out := map[string][]map[string]string{}
	for _, row := range tb.rows {
		cells := map[string]string{}
		masked := make([]string, len(row))
		for i, cell := range row {
			if i < len(tb.cols) {
				masked[i] = maskTimeCell(tb.cols[i], cell)
				cells[tb.cols[i]] = masked[i]
			}
		}
		var key string
		switch {
		case name >= 0 && namespace >= 0:
			key = row[namespace] + "/" + row[name]
		case name >= 0:
			key = row[name]
		default:
			key = strings.Join(masked, " | ")
		}
		out[key] = append(out[key], cells)
	}
	return out
}

// timeColumn matches the headers of the columns whose cells are times relative to now, which
// kubectl prints as durations ("5s", "3m2s", "2d3h"): AGE and DURATION, and LAST SEEN,
// FIRST SEEN, LAST SCHEDULE and the other "LAST x"/"FIRST x" columns of events, CronJobs and
// custom resources' date columns (the fixtures' CronTab has LAST RUN).
var timeColumn = regexp.MustCompile(`^(AGE|DURATION|(LAST|FIRST) [A-Z ]+)$`)

// timeToken is one relative time in a cell: a duration as duration.HumanDuration prints it,
// <invalid> (a time a little in the future: the clocks of the reads differ) or <unknown> (no
// time).
var timeToken = regexp.MustCompile(`\b(\d+[smhdy])+\b|<invalid>|<unknown>`)

// restartsAgo is a pod's RESTARTS cell with the time of the last restart, "2 (5m ago)".
var restartsAgo = regexp.MustCompile(`^(\d+) \((\d+[smhdy])+ ago\)$`)

// maskTimeCell replaces the relative times in a cell with <t>, and nothing else: kubectl and
// kubectl idx run a moment apart, and a duration printed a second later may differ by a unit.
// Only the time tokens of time columns are masked; the rest of their cells is compared as is
// ("5m (x3 over 10m)", an event seen three times, becomes "<t> (x3 over <t>)"; "<none>" stays),
// as is every other column but the restart time in a pod's RESTARTS.
func maskTimeCell(col, cell string) string {
	switch {
	case timeColumn.MatchString(col):
		return timeToken.ReplaceAllString(cell, "<t>")
	case col == "RESTARTS":
		return restartsAgo.ReplaceAllString(cell, "$1 (<t> ago)")
	}
	return cell
}
