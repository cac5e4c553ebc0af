package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The controller-driven suite: workloads made with kubectl as a user makes them (apply, scale,
// set image, rollout undo, delete --cascade, patch), each scenario in a namespace of its own on
// the shared controller-driven control plane, and every kubectl idx answer about them checked
// against what `kubectl get -o json` says at the same moment (controllers_truth_test.go).

// widgetCRD is a custom resource kind of the suite's own, whose objects own ConfigMaps.
var widgetCRD = suiteCRD("ctrl.kubectl-idx.io", "{kind: Widget, listKind: WidgetList, plural: widgets, singular: widget, shortNames: [wdg]}", "widgets", `
    additionalPrinterColumns:
    - {name: Size, type: string, jsonPath: .spec.size}
`)

// suiteCRD is the manifest of a namespaced custom resource kind of the suite, of group,
// names (the CRD's names, in YAML flow style) and plural, served as v1 with a spec of any
// shape; extra ends the version's entry (printer columns).
func suiteCRD(group, names, plural, extra string) string {
	return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ` + plural + "." + group + `
  labels: {kubectl-idx.io/e2e: controllers}
spec:
  group: ` + group + `
  names: ` + names + `
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
` + strings.TrimPrefix(extra, "\n")
}

// cronManifest is a CronJob that fires at the turn of every minute and keeps one successful
// Job: the cronjob controller deletes the older ones, and the garbage collector their pods.
const cronManifest = `
apiVersion: batch/v1
kind: CronJob
metadata:
  name: tick
  labels: {app: tick}
spec:
  schedule: "* * * * *"
  successfulJobsHistoryLimit: 1
  failedJobsHistoryLimit: 1
  jobTemplate:
    spec:
      backoffLimit: 0
      template:
        metadata:
          labels: {app: tick}
        spec:
          restartPolicy: Never
          containers:
          - name: tick
            image: registry.k8s.io/busybox:1.36
            command: ["date"]
`

// appsManifest is an application as a team deploys it: a Deployment using a ConfigMap (volume,
// env, envFrom), a Secret (env) and a ServiceAccount of its own, its Service, Ingress,
// PodDisruptionBudget, NetworkPolicies and HorizontalPodAutoscaler (which stays within its
// bounds: there are no metrics), the Service of a second Deployment (apiDeployment), a
// DaemonSet and a Job.
const appsManifest = `
apiVersion: v1
kind: ServiceAccount
metadata: {name: web}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {LOG_LEVEL: info, site.conf: "listen 8080;"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unused}
data: {k: v}
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret}
stringData: {DB_PASSWORD: e2e-not-a-secret}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web, tier: frontend}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  strategy:
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    metadata:
      labels: {app: web, tier: frontend}
    spec:
      serviceAccountName: web
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 100m, memory: 64Mi}
        env:
        - name: LOG_LEVEL
          valueFrom:
            configMapKeyRef: {name: web-config, key: LOG_LEVEL}
        - name: DB_PASSWORD
          valueFrom:
            secretKeyRef: {name: web-secret, key: DB_PASSWORD}
        envFrom:
        - configMapRef: {name: web-config}
        volumeMounts:
        - {name: config, mountPath: /etc/web}
      volumes:
      - name: config
        configMap: {name: web-config}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  labels: {app: web}
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: 8080}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  rules:
  - host: web.example.test
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: web
            port: {number: 80}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: 2
  selector:
    matchLabels: {app: web}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web}
spec:
  podSelector:
    matchExpressions:
    - {key: tier, operator: In, values: [frontend]}
  policyTypes: [Ingress]
  ingress:
  - from:
    - podSelector:
        matchLabels: {app: agent}
    ports:
    - {port: 8080}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: default-deny}
spec:
  podSelector: {}
  policyTypes: [Ingress]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 6
  metrics:
  - type: Resource
    resource:
      name: cpu
      target: {type: Utilization, averageUtilization: 80}
---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  selector: {app: api}
  ports:
  - {name: http, port: 80, targetPort: 8080}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  labels: {app: agent}
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 10m, memory: 16Mi}
        envFrom:
        - configMapRef: {name: agent-flags, optional: true}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  labels: {app: migrate}
spec:
  backoffLimit: 0
  template:
    metadata:
      labels: {app: migrate}
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: registry.k8s.io/busybox:1.36
        command: ["true"]
        envFrom:
        - configMapRef: {name: web-config}
`

// apiDeployment is Deployment api, of appsManifest; with a nodeSelector, the rollout it starts
// is stuck: the new ReplicaSet's pod stays Pending and unscheduled, and with maxUnavailable 0
// the old pods stay.
func apiDeployment(nodeSelector string) string {
	if nodeSelector != "" {
		nodeSelector = "\n      nodeSelector: {" + nodeSelector + "}"
	}
	return `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  labels: {app: api}
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  strategy:
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    metadata:
      labels: {app: api}
    spec:` + nodeSelector + `
      containers:
      - name: api
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 50m, memory: 32Mi}
`
}

// dbManifest is a StatefulSet whose claims the PV controller binds to static
// PersistentVolumes (staticVolume) of a StorageClass of the suite's own, with its headless
// Service and a PodDisruptionBudget. whenDeleted: Delete makes the StatefulSet own its claims.
const dbManifest = `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: kubectl-idx-e2e-static
  labels: {kubectl-idx.io/e2e: controllers}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: Immediate
reclaimPolicy: Retain
---
apiVersion: v1
kind: Service
metadata:
  name: db
  labels: {app: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports:
  - {name: sql, port: 5432}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  labels: {app: db}
spec:
  serviceName: db
  replicas: 2
  selector:
    matchLabels: {app: db}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: registry.k8s.io/pause:3.10
        resources:
          requests: {cpu: 200m, memory: 256Mi}
        volumeMounts:
        - {name: data, mountPath: /var/lib/db}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      storageClassName: kubectl-idx-e2e-static
      accessModes: [ReadWriteOnce]
      resources:
        requests: {storage: 1Gi}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db}
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: db}
`

// staticVolume is a PersistentVolume named kubectl-idx-e2e-%[1]s of the StorageClass of
// dbManifest, for the PV controller to bind a claim to.
const staticVolume = `
apiVersion: v1
kind: PersistentVolume
metadata:
  name: kubectl-idx-e2e-%[1]s
  labels: {kubectl-idx.io/e2e: controllers}
spec:
  storageClassName: kubectl-idx-e2e-static
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: /var/lib/kubectl-idx-e2e/%[1]s, type: DirectoryOrCreate}
`

// manifests renders template (which names its object %[1]s) once for each name, as one
// multi-document manifest.
func manifests(template string, names ...string) string {
	var docs []string
	for _, name := range names {
		docs = append(docs, fmt.Sprintf(template, name))
	}
	return strings.Join(docs, "---")
}

// cascadeDeployment is a two-replica Deployment named %[1]s, one per cascade mode.
const cascadeDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[1]s
  labels: {app: %[1]s}
spec:
  replicas: 2
  selector:
    matchLabels: {app: %[1]s}
  template:
    metadata:
      labels: {app: %[1]s}
    spec:
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
`

// widgetManifest is a Widget; widgetOwned, with its UID, two ConfigMaps it owns (one as
// controller, held by a finalizer of the suite's own) and a bare pod that uses that one.
const (
	widgetManifest = `
apiVersion: ctrl.kubectl-idx.io/v1
kind: Widget
metadata: {name: w1}
spec: {size: small}
`
	widgetOwned = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: w1-config
  finalizers: [kubectl-idx.io/hold]
  ownerReferences:
  - {apiVersion: ctrl.kubectl-idx.io/v1, kind: Widget, name: w1, uid: %[1]s, controller: true, blockOwnerDeletion: true}
data: {size: small}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: w1-extra
  ownerReferences:
  - {apiVersion: ctrl.kubectl-idx.io/v1, kind: Widget, name: w1, uid: %[1]s}
data: {color: blue}
---
apiVersion: v1
kind: Pod
metadata:
  name: reader
  labels: {app: reader}
spec:
  containers:
  - name: reader
    image: registry.k8s.io/pause:3.10
    envFrom:
    - configMapRef: {name: w1-config}
    volumeMounts:
    - {name: widget, mountPath: /etc/widget}
  volumes:
  - name: widget
    configMap: {name: w1-config}
`
)

// holdFinalizer is the suite's own finalizer, which nothing but the suite removes.
const holdFinalizer = "kubectl-idx.io/hold"

// TestControllersSuite: every kubectl idx command against workloads the real controllers
// made, in scenarios that run side by side (rollouts and a stuck rollout, a StatefulSet on
// bound claims, the three cascade modes, a custom resource and a finalizer), then the
// CronJob's history cleanup, then answers across all namespaces.
func TestControllersSuite(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := controllerCluster(t)
	// The CronJob first: it fires at the turn of the minute, and its history cleanup is
	// checked last, after everything else ran meanwhile.
	cronNS := c.applyNS(t, "ctrl-cron", "", cronManifest)
	c.mustKubectl(t, "", "create", "job", "tick-manual", "--from=cronjob/tick", "-n", cronNS.name)
	kinds := c.installWidgets(t)
	cronNS.kinds = kinds

	apps := c.applyNS(t, "ctrl-apps", kinds, appsManifest+"---"+apiDeployment(""))
	// Three volumes for two claims: the PV controller picks.
	db := c.applyNS(t, "ctrl-db", kinds, dbManifest+"---"+manifests(staticVolume, "db-a", "db-b", "db-c"))
	t.Cleanup(func() {
		c.kubectl(t, "", "delete", "persistentvolumes,storageclasses", "-l", "kubectl-idx.io/e2e=controllers", "--wait=false")
	})
	cascade := c.applyNS(t, "ctrl-cascade", kinds, manifests(cascadeDeployment, "bg", "fg", "orph"))
	owned := c.applyNS(t, "ctrl-owned", kinds, widgetManifest)
	uid := c.mustKubectl(t, "", "get", "widget", "w1", "-n", owned.name, "-o", "jsonpath={.metadata.uid}").Stdout
	c.mustKubectl(t, fmt.Sprintf(widgetOwned, uid), "apply", "-n", owned.name, "-f", "-")
	t.Cleanup(func() { c.unhold(t, owned.name, "configmap/w1-config") })
	manual := c.manualJob(t, cronNS)

	t.Run("scenarios", func(t *testing.T) {
		t.Run("rollouts", func(t *testing.T) {
			t.Parallel()
			testRollouts(t, apps)
		})
		t.Run("statefulset", func(t *testing.T) {
			t.Parallel()
			testStatefulSet(t, db)
		})
		t.Run("cascading deletion", func(t *testing.T) {
			t.Parallel()
			testCascade(t, cascade)
		})
		t.Run("custom resource and finalizer", func(t *testing.T) {
			t.Parallel()
			testOwned(t, owned)
		})
	})
	t.Run("cronjob history", func(t *testing.T) { testCronHistory(t, cronNS, manual) })
	t.Run("across namespaces", func(t *testing.T) { testAcrossNamespaces(t, c, kinds) })
	t.Logf("suite done %s after it started (the control plane's start included)", time.Since(start).Round(time.Second))
}

// applyNS creates namespace name and applies manifest in it with kubectl.
func (c *ctrlCluster) applyNS(t *testing.T, name, kinds, manifest string) *ctrlNS {
	t.Helper()
	c.createNamespace(t, name)
	c.mustKubectl(t, manifest, "apply", "-n", name, "-f", "-")
	return &ctrlNS{c: c, name: name, kinds: kinds}
}

// installWidgets installs the Widget CRD, removed when t ends, and returns every namespaced
// type that can be listed but Events (core and events.k8s.io), widgets included, for reads of
// everything in a namespace.
func (c *ctrlCluster) installWidgets(t *testing.T) string {
	t.Helper()
	c.mustKubectl(t, widgetCRD, "apply", "-f", "-")
	t.Cleanup(func() { c.kubectl(t, "", "delete", "crd", "widgets.ctrl.kubectl-idx.io", "--wait=false") })
	c.mustKubectl(t, "", "wait", "--for=condition=Established", "--timeout=60s", "crd/widgets.ctrl.kubectl-idx.io")
	var kinds string
	eventually(t, time.Minute, "discovery to serve widgets", func() string {
		kinds = c.listableKinds(t)
		if !slices.Contains(strings.Split(kinds, ","), "widgets.ctrl.kubectl-idx.io") {
			return "kubectl api-resources lists no widgets"
		}
		return ""
	})
	return kinds
}

// listableKinds returns every namespaced type the API server serves now that can be
// listed, but Events (core and events.k8s.io), comma-separated.
func (c *ctrlCluster) listableKinds(t *testing.T) string {
	t.Helper()
	var kinds []string
	for _, r := range strings.Fields(c.mustKubectl(t, "", "api-resources", "--verbs=list", "--namespaced", "-o", "name").Stdout) {
		if r != "events" && r != "events.events.k8s.io" {
			kinds = append(kinds, r)
		}
	}
	return strings.Join(kinds, ",")
}

// unhold removes every finalizer of obj (TYPE/NAME) in namespace ns, if it is still there, so
// that a failed test does not leave its namespace stuck.
func (c *ctrlCluster) unhold(t *testing.T, ns, obj string) {
	c.kubectl(t, "", "patch", obj, "-n", ns, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
}

// firstProblem returns the first non-empty answer of a readiness check, or "".
func firstProblem(whys ...string) string {
	for _, why := range whys {
		if why != "" {
			return why
		}
	}
	return ""
}

// liveReplicaSet returns the ReplicaSet of Deployment d in w that has replicas, or nil.
func liveReplicaSet(t *testing.T, w workloads, d *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	for _, rs := range w.controlledBy("ReplicaSet", d) {
		if *typed[appsv1.ReplicaSet](t, rs).Spec.Replicas > 0 {
			return rs
		}
	}
	return nil
}

// daemonSetRunning returns what DaemonSet name in w still lacks to run one Ready pod on each
// of the control plane's nodes, or "".
func (c *ctrlCluster) daemonSetRunning(t *testing.T, w workloads, name string) string {
	t.Helper()
	u, ds, missing := typedIn[appsv1.DaemonSet](t, w, name)
	if missing != "" {
		return missing
	}
	st, n := ds.Status, int32(len(c.env.Nodes))
	if st.ObservedGeneration != ds.Generation || st.DesiredNumberScheduled != n || st.NumberReady != n || st.UpdatedNumberScheduled != n {
		return fmt.Sprintf("DaemonSet %s status: desired %d, ready %d, updated %d", name, st.DesiredNumberScheduled, st.NumberReady, st.UpdatedNumberScheduled)
	}
	nodes := map[string]bool{}
	for _, p := range w.controlledBy("Pod", u) {
		pod := typed[corev1.Pod](t, p)
		if why := c.podRunning(pod); why != "" {
			return "pod " + pod.Name + ": " + why
		}
		nodes[pod.Spec.NodeName] = true
	}
	if len(nodes) != len(c.env.Nodes) {
		return fmt.Sprintf("DaemonSet %s runs on %d nodes", name, len(nodes))
	}
	return ""
}

// unschedulable returns why pod p is not Pending, unscheduled and marked Unschedulable by
// the scheduler, or "".
func unschedulable(p *corev1.Pod) string {
	if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		return fmt.Sprintf("pod %s is %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName)
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
			return ""
		}
	}
	return "pod " + p.Name + " is not marked Unschedulable yet"
}

// remaining returns which of uids w still holds, as "Kind/name".
func remaining(w workloads, uids []types.UID) []string {
	var out []string
	for _, o := range w.items {
		if slices.Contains(uids, o.GetUID()) {
			out = append(out, o.GetKind()+"/"+o.GetName())
		}
	}
	return out
}

// uidsOf returns the UIDs of objs.
func uidsOf(objs ...*unstructured.Unstructured) []types.UID {
	var out []types.UID
	for _, o := range objs {
		out = append(out, o.GetUID())
	}
	return out
}

// labelKey groups by the value of label key, as --by-label names its groups.
func labelKey(key string) func(*unstructured.Unstructured) (string, bool) {
	return func(u *unstructured.Unstructured) (string, bool) {
		v, ok := u.GetLabels()[key]
		return key + "=" + v, ok
	}
}

// jsonPathKey groups by the string at path, as --by JSONPATH names its groups.
func jsonPathKey(path ...string) func(*unstructured.Unstructured) (string, bool) {
	return func(u *unstructured.Unstructured) (string, bool) {
		v, ok, _ := unstructured.NestedString(u.Object, path...)
		return v, ok
	}
}

// testRollouts: Deployment web through two rollouts (set image), a rollout undo and a scale,
// leaving three ReplicaSets, two scaled to 0; Deployment api stuck in a rollout on a
// nodeSelector no node matches; a DaemonSet with a pod on each node; a Job; the objects that
// select, reference and scale them.
func testRollouts(t *testing.T, n *ctrlNS) {
	c := n.c
	read := func() workloads { return n.read(t, "deployments,replicasets,daemonsets,jobs,pods") }
	took := eventually(t, 2*time.Minute, "the workloads of "+n.name+" to run", func() string {
		w := read()
		return firstProblem(c.deploymentRolledOut(t, w, "web", 3), c.deploymentRolledOut(t, w, "api", 2),
			c.daemonSetRunning(t, w, "agent"), jobSucceeded(t, w, "migrate", 1))
	})
	t.Logf("web, api, agent and migrate running after %s", took.Round(time.Millisecond))

	var live []types.UID
	for _, step := range []struct {
		args     []string
		replicas int32
	}{
		{[]string{"set", "image", "deployment/web", "web=registry.k8s.io/pause:3.9"}, 3},
		{[]string{"set", "image", "deployment/web", "web=registry.k8s.io/pause:3.8"}, 3},
		{[]string{"rollout", "undo", "deployment/web"}, 3},
		{[]string{"scale", "deployment/web", "--replicas=4"}, 4},
	} {
		c.mustKubectl(t, "", append(step.args, "-n", n.name)...)
		took := eventually(t, 2*time.Minute, "kubectl "+strings.Join(step.args, " ")+" to roll out", func() string {
			return c.deploymentRolledOut(t, read(), "web", step.replicas)
		})
		w := read()
		live = append(live, liveReplicaSet(t, w, w.get("Deployment", "web")).GetUID())
		t.Logf("kubectl %s rolled out after %s", strings.Join(step.args, " "), took.Round(time.Millisecond))
	}
	// rollout undo scales the ReplicaSet of the previous revision up again; no new one.
	if live[2] != live[0] {
		t.Errorf("rollout undo: live ReplicaSet %s, want %s, the one of the first set image", live[2], live[0])
	}

	c.mustKubectl(t, apiDeployment("disktype: nvme"), "apply", "-n", n.name, "-f", "-")
	var pending string
	took = eventually(t, 2*time.Minute, "Deployment api's rollout to be stuck on its nodeSelector", func() string {
		w := n.read(t, "deployments,replicasets,pods,events")
		d := w.get("Deployment", "api")
		if dep := typed[appsv1.Deployment](t, d); dep.Status.ObservedGeneration != dep.Generation {
			return "Deployment api's new generation not observed yet"
		}
		var stuck, old []*unstructured.Unstructured
		for _, rs := range w.controlledBy("ReplicaSet", d) {
			if len(typed[appsv1.ReplicaSet](t, rs).Spec.Template.Spec.NodeSelector) > 0 {
				stuck = append(stuck, w.controlledBy("Pod", rs)...)
			} else {
				old = append(old, w.controlledBy("Pod", rs)...)
			}
		}
		if len(stuck) != 1 || len(old) != 2 {
			return fmt.Sprintf("%d pods of the new ReplicaSet, %d of the old", len(stuck), len(old))
		}
		p := typed[corev1.Pod](t, stuck[0])
		if why := unschedulable(p); why != "" {
			return why
		}
		for _, u := range old {
			if why := c.podRunning(typed[corev1.Pod](t, u)); why != "" {
				return "old pod " + u.GetName() + ": " + why
			}
		}
		for _, e := range w.ofKind("Event") {
			if ev := typed[corev1.Event](t, e); ev.InvolvedObject.UID == p.UID && ev.Reason == "FailedScheduling" {
				pending = p.Name
				return ""
			}
		}
		return "no FailedScheduling event for pod " + p.Name
	})
	t.Logf("pod %s Pending and unscheduled after %s", pending, took.Round(time.Millisecond))

	w := read()
	webPod := w.controlledBy("Pod", liveReplicaSet(t, w, w.get("Deployment", "web")))[0].GetName()
	agentPod := w.controlledBy("Pod", w.get("DaemonSet", "agent"))[0].GetName()
	jobPod := w.controlledBy("Pod", w.get("Job", "migrate"))[0].GetName()

	t.Run("kubectl idx TYPE", func(t *testing.T) {
		n.checkList(t, "deployments,replicasets,pods")
		n.checkList(t, "daemonsets,jobs,services,ingresses,poddisruptionbudgets,networkpolicies,horizontalpodautoscalers")
		n.checkList(t, "configmaps,secrets,serviceaccounts,controllerrevisions")
		n.checkTable(t, "deployments,replicasets,pods,daemonsets,jobs,horizontalpodautoscalers,poddisruptionbudgets")
		// What the controllers write beside the workloads: the DaemonSet's revisions and the
		// Services' EndpointSlices.
		n.checkTable(t, "controllerrevisions,endpointslices")
	})
	t.Run("--by-owner", func(t *testing.T) { n.checkByOwner(t, "Pod,ReplicaSet,Job,ControllerRevision") })
	t.Run("--by-node", func(t *testing.T) { n.checkByNode(t) })
	t.Run("--by-label", func(t *testing.T) {
		list := "deployments,services,pods"
		c.checkGroups(t, func() workloads { return n.read(t, list) }, []string{"Deployment", "Service", "Pod"}, labelKey("app"),
			list, "-n", n.name, "--by-label", "app")
	})
	t.Run("--by serviceAccountName", func(t *testing.T) {
		c.checkGroups(t, func() workloads { return n.read(t, "pods") }, []string{"Pod"}, jsonPathKey("spec", "serviceAccountName"),
			"pods", "-n", n.name, "--by", "{.spec.serviceAccountName}")
	})
	t.Run("tree", func(t *testing.T) {
		web := n.checkTree(t, "Deployment", "web")
		if len(web.Children) != 3 {
			t.Errorf("scenario problem: Deployment web owns %d ReplicaSets, want 3 after two rollouts and an undo", len(web.Children))
		}
		n.checkTree(t, "Deployment", "api")
		n.checkTree(t, "DaemonSet", "agent")
		n.checkTree(t, "Job", "migrate")
	})
	t.Run("owners", func(t *testing.T) {
		for _, p := range []string{webPod, pending, agentPod, jobPod} {
			n.checkOwners(t, "Pod", p)
		}
	})
	t.Run("selects", func(t *testing.T) {
		for _, o := range [][2]string{{"Service", "web"}, {"PodDisruptionBudget", "web"}, {"NetworkPolicy", "web"}, {"Service", "api"}, {"Deployment", "api"}, {"DaemonSet", "agent"}} {
			n.checkSelects(t, o[0], o[1])
		}
	})
	t.Run("selected-by", func(t *testing.T) {
		for _, p := range []string{webPod, pending, agentPod, jobPod} {
			n.checkSelectedBy(t, p)
		}
	})
	t.Run("uses", func(t *testing.T) {
		for _, o := range [][2]string{
			{"ConfigMap", "web-config"}, {"Secret", "web-secret"}, {"ServiceAccount", "web"}, {"ServiceAccount", "default"},
			// Every pod mounts it: the ServiceAccount admission plugin adds it to the projected
			// kube-api-access volume, and kube-controller-manager publishes it in every namespace.
			{"ConfigMap", "kube-root-ca.crt"},
		} {
			if got := n.checkUses(t, o[0], o[1]); len(got) == 0 {
				t.Errorf("scenario problem: nothing uses %s %s", o[0], o[1])
			}
		}
		// What a pod, a template and a DaemonSet with an optional missing ConfigMap use.
		for _, o := range [][2]string{{"Pod", webPod}, {"Deployment", "web"}, {"DaemonSet", "agent"}, {"Job", "migrate"}} {
			n.checkUses(t, o[0], o[1])
		}
	})
	t.Run("events", func(t *testing.T) {
		t.Logf("events of Deployment web: %q", n.checkEvents(t, "Deployment", "web"))
		t.Logf("Warning events of Deployment api: %q", n.checkEvents(t, "Deployment", "api", "Warning"))
	})
	t.Run("orphans", func(t *testing.T) { n.checkOrphans(t) })
}

// statefulSetReady returns what StatefulSet name in w still lacks to run replicas Ready pods,
// each on its claim bound by the PV controller, or "".
func (c *ctrlCluster) statefulSetReady(t *testing.T, w workloads, name string, replicas int32) string {
	t.Helper()
	u, sts, missing := typedIn[appsv1.StatefulSet](t, w, name)
	if missing != "" {
		return missing
	}
	st := sts.Status
	if st.ObservedGeneration != sts.Generation || st.Replicas != replicas || st.ReadyReplicas != replicas || st.CurrentRevision != st.UpdateRevision {
		return fmt.Sprintf("StatefulSet %s status: replicas %d, ready %d, revisions %s and %s", name, st.Replicas, st.ReadyReplicas, st.CurrentRevision, st.UpdateRevision)
	}
	if pods := w.controlledBy("Pod", u); len(pods) != int(replicas) {
		return fmt.Sprintf("%d pods controlled by StatefulSet %s", len(pods), name)
	}
	for i := range replicas {
		pod := fmt.Sprintf("%s-%d", name, i)
		p := w.get("Pod", pod)
		if p == nil {
			return "no pod " + pod
		}
		if why := c.podRunning(typed[corev1.Pod](t, p)); why != "" {
			return "pod " + pod + ": " + why
		}
		claim := w.get("PersistentVolumeClaim", "data-"+pod)
		if claim == nil {
			return "no claim data-" + pod
		}
		if phase := typed[corev1.PersistentVolumeClaim](t, claim).Status.Phase; phase != corev1.ClaimBound {
			return "claim data-" + pod + " is " + string(phase)
		}
	}
	return ""
}

// testStatefulSet: StatefulSet db on claims the PV controller bound to static volumes, scaled
// from 2 to 1, which leaves the claim of the removed pod bound and owned by the StatefulSet.
func testStatefulSet(t *testing.T, n *ctrlNS) {
	c := n.c
	read := func() workloads { return n.read(t, "statefulsets,pods,persistentvolumeclaims") }
	took := eventually(t, 2*time.Minute, "StatefulSet db to run 2 pods on bound claims", func() string {
		return c.statefulSetReady(t, read(), "db", 2)
	})
	t.Logf("db-0 and db-1 running on bound claims after %s", took.Round(time.Millisecond))
	c.mustKubectl(t, "", "scale", "statefulset/db", "--replicas=1", "-n", n.name)
	took = eventually(t, 2*time.Minute, "StatefulSet db to scale to 1", func() string {
		w := read()
		if w.get("PersistentVolumeClaim", "data-db-1") == nil {
			return "claim data-db-1 is gone"
		}
		return c.statefulSetReady(t, w, "db", 1)
	})
	t.Logf("scaled to 1 after %s", took.Round(time.Millisecond))

	t.Run("kubectl idx TYPE", func(t *testing.T) {
		n.checkList(t, "statefulsets,persistentvolumeclaims,pods,controllerrevisions,services")
		n.checkTable(t, "statefulsets,persistentvolumeclaims,pods")
		n.checkList(t, "persistentvolumes", "-l", "kubectl-idx.io/e2e=controllers")
	})
	t.Run("--by-owner", func(t *testing.T) { n.checkByOwner(t, "Pod,PersistentVolumeClaim,ControllerRevision") })
	t.Run("--by-node", func(t *testing.T) { n.checkByNode(t) })
	t.Run("tree", func(t *testing.T) {
		tree := n.checkTree(t, "StatefulSet", "db")
		var kinds []string
		for _, ch := range tree.Children {
			kinds = append(kinds, ch.Kind+"/"+ch.Name)
		}
		if !slices.Contains(kinds, "PersistentVolumeClaim/data-db-1") || !slices.Contains(kinds, "Pod/db-0") {
			t.Errorf("scenario problem: StatefulSet db owns %q, want its claims and pod db-0 among them", kinds)
		}
	})
	t.Run("owners", func(t *testing.T) {
		n.checkOwners(t, "Pod", "db-0")
		n.checkOwners(t, "PersistentVolumeClaim", "data-db-1")
	})
	t.Run("uses", func(t *testing.T) {
		if got := n.checkUses(t, "PersistentVolumeClaim", "data-db-0"); len(got) != 1 {
			t.Errorf("scenario problem: data-db-0 has %d users, want pod db-0", len(got))
		}
		n.checkUses(t, "PersistentVolumeClaim", "data-db-1")
		n.checkUses(t, "Pod", "db-0")
	})
	t.Run("selects", func(t *testing.T) {
		n.checkSelects(t, "Service", "db")
		n.checkSelects(t, "PodDisruptionBudget", "db")
	})
	t.Run("selected-by", func(t *testing.T) { n.checkSelectedBy(t, "db-0") })
	t.Run("events", func(t *testing.T) { t.Logf("events of StatefulSet db: %q", n.checkEvents(t, "StatefulSet", "db")) })
	t.Run("orphans", func(t *testing.T) { n.checkOrphans(t) })
}

// testCascade: one Deployment deleted in each cascade mode. Background: the garbage collector
// removes the ReplicaSet and pods after the Deployment. Foreground, with one pod held by a
// finalizer: the Deployment and its ReplicaSet wait, terminating, until the pod goes.
// Orphan: the ReplicaSet loses its ownerReference and keeps its pods; the Deployment applied
// again adopts it.
func testCascade(t *testing.T, n *ctrlNS) {
	c := n.c
	read := func() workloads { return n.read(t, "deployments,replicasets,pods") }
	eventually(t, 2*time.Minute, "the Deployments of "+n.name+" to roll out", func() string {
		w := read()
		return firstProblem(c.deploymentRolledOut(t, w, "bg", 2), c.deploymentRolledOut(t, w, "fg", 2), c.deploymentRolledOut(t, w, "orph", 2))
	})
	// under returns d, its ReplicaSets and their pods.
	under := func(w workloads, name string) []*unstructured.Unstructured {
		d := w.get("Deployment", name)
		out := []*unstructured.Unstructured{d}
		for _, rs := range w.controlledBy("ReplicaSet", d) {
			out = append(append(out, rs), w.controlledBy("Pod", rs)...)
		}
		return out
	}
	waitGone := func(what string, uids []types.UID) {
		t.Helper()
		took := eventually(t, 2*time.Minute, what, func() string {
			if left := remaining(read(), uids); len(left) > 0 {
				return "still there: " + strings.Join(left, ", ")
			}
			return ""
		})
		t.Logf("%s: done after %s", what, took.Round(time.Millisecond))
	}
	orphans := func(t *testing.T) map[string]*relationItem {
		return n.checkOrphans(t)
	}

	// Background.
	bg := under(read(), "bg")
	c.mustKubectl(t, "", "delete", "deployment", "bg", "--cascade=background", "-n", n.name)
	waitGone("the garbage collector to delete Deployment bg's ReplicaSet and pods", uidsOf(bg...))
	t.Run("background", func(t *testing.T) {
		n.checkByOwner(t, "Pod,ReplicaSet")
		orphans(t)
	})

	// Foreground, one pod held by a finalizer.
	fg := under(read(), "fg")
	held := fg[2].GetName()
	c.mustKubectl(t, "", "patch", "pod", held, "-n", n.name, "--type=merge", "-p", `{"metadata":{"finalizers":["`+holdFinalizer+`"]}}`)
	t.Cleanup(func() { c.unhold(t, n.name, "pod/"+held) })
	c.mustKubectl(t, "", "delete", "deployment", "fg", "--cascade=foreground", "--wait=false", "-n", n.name)
	took := eventually(t, 2*time.Minute, "foreground deletion of Deployment fg to wait for the held pod", func() string {
		w := read()
		for _, o := range fg {
			cur := w.get(o.GetKind(), o.GetName())
			switch {
			case o.GetKind() == "Pod" && o.GetName() != held:
				if cur != nil {
					return "pod " + o.GetName() + " is still there"
				}
			case cur == nil:
				return o.GetKind() + " " + o.GetName() + " is gone, want it held"
			case cur.GetDeletionTimestamp() == nil:
				return o.GetKind() + " " + o.GetName() + " is not being deleted"
			case o.GetKind() != "Pod" && !slices.Contains(cur.GetFinalizers(), metav1.FinalizerDeleteDependents):
				return o.GetKind() + " " + o.GetName() + " has finalizers " + strings.Join(cur.GetFinalizers(), ",")
			}
		}
		return ""
	})
	t.Logf("Deployment fg and ReplicaSet %s waiting on pod %s after %s", fg[1].GetName(), held, took.Round(time.Millisecond))
	t.Run("foreground, a pod held by a finalizer", func(t *testing.T) {
		n.checkTable(t, "deployments,replicasets,pods")
		n.checkTree(t, "Deployment", "fg")
		n.checkOwners(t, "Pod", held)
		n.checkByOwner(t, "Pod,ReplicaSet")
		orphans(t)
		t.Logf("events of Deployment fg: %q", n.checkEvents(t, "Deployment", "fg"))
	})
	c.mustKubectl(t, "", "patch", "pod", held, "-n", n.name, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	waitGone("Deployment fg, its ReplicaSet and the held pod to go once the finalizer is removed", uidsOf(fg...))

	// Orphan.
	orph := under(read(), "orph")
	rs, pod := orph[1], orph[2].GetName()
	c.mustKubectl(t, "", "delete", "deployment", "orph", "--cascade=orphan", "-n", n.name)
	took = eventually(t, 2*time.Minute, "the garbage collector to orphan Deployment orph's ReplicaSet", func() string {
		w := read()
		if w.get("Deployment", "orph") != nil {
			return "Deployment orph is still there"
		}
		if left := remaining(w, uidsOf(orph[1:]...)); len(left) != len(orph)-1 {
			return "only " + strings.Join(left, ", ") + " left"
		}
		if refs := w.get("ReplicaSet", rs.GetName()).GetOwnerReferences(); len(refs) > 0 {
			return fmt.Sprintf("ReplicaSet %s still has ownerReferences %v", rs.GetName(), refs)
		}
		return ""
	})
	t.Logf("ReplicaSet %s orphaned with its pods after %s", rs.GetName(), took.Round(time.Millisecond))
	t.Run("orphan", func(t *testing.T) {
		orphans(t)
		n.checkByOwner(t, "Pod,ReplicaSet")
		n.checkTree(t, "ReplicaSet", rs.GetName())
		n.checkOwners(t, "Pod", pod)
	})

	// The same Deployment applied again adopts the orphan, pods and all.
	c.mustKubectl(t, fmt.Sprintf(cascadeDeployment, "orph"), "apply", "-n", n.name, "-f", "-")
	took = eventually(t, 2*time.Minute, "Deployment orph applied again to adopt its ReplicaSet", func() string {
		w := read()
		if why := c.deploymentRolledOut(t, w, "orph", 2); why != "" {
			return why
		}
		if live := liveReplicaSet(t, w, w.get("Deployment", "orph")); live.GetUID() != rs.GetUID() {
			return "the Deployment runs ReplicaSet " + live.GetName() + ", not the orphan"
		}
		return ""
	})
	t.Logf("ReplicaSet %s adopted after %s", rs.GetName(), took.Round(time.Millisecond))
	t.Run("adopted", func(t *testing.T) {
		n.checkTree(t, "Deployment", "orph")
		n.checkOwners(t, "Pod", pod)
		orphans(t)
	})
}

// testOwned: a Widget owning two ConfigMaps, one held by a finalizer and used by a pod. The
// Widget deleted, the garbage collector deletes both; the held one stays, terminating, with
// a reference to an owner that is gone, until the finalizer is removed.
func testOwned(t *testing.T, n *ctrlNS) {
	c := n.c
	eventually(t, 2*time.Minute, "pod reader to run", func() string {
		p := n.read(t, "pods").get("Pod", "reader")
		if p == nil {
			return "no pod reader"
		}
		return c.podRunning(typed[corev1.Pod](t, p))
	})
	uses := func(t *testing.T) {
		if got := n.checkUses(t, "ConfigMap", "w1-config"); len(got) != 1 {
			t.Errorf("scenario problem: w1-config has %d users, want pod reader", len(got))
		}
	}
	orphans := func(t *testing.T) map[string]*relationItem {
		return n.checkOrphans(t)
	}
	t.Run("a Widget owns ConfigMaps", func(t *testing.T) {
		n.checkList(t, "widgets.ctrl.kubectl-idx.io")
		n.checkTable(t, "widgets.ctrl.kubectl-idx.io")
		n.checkTree(t, "Widget", "w1")
		n.checkOwners(t, "ConfigMap", "w1-config")
		n.checkByOwner(t, "ConfigMap")
		uses(t)
		orphans(t)
	})

	c.mustKubectl(t, "", "delete", "widget", "w1", "-n", n.name)
	took := eventually(t, 2*time.Minute, "the garbage collector to delete Widget w1's ConfigMaps", func() string {
		w := n.read(t, "configmaps")
		if w.get("ConfigMap", "w1-extra") != nil {
			return "w1-extra is still there"
		}
		if cm := w.get("ConfigMap", "w1-config"); cm == nil || cm.GetDeletionTimestamp() == nil {
			return "w1-config is not being deleted"
		}
		return ""
	})
	t.Logf("w1-extra deleted, w1-config held after %s", took.Round(time.Millisecond))
	t.Run("owner gone, a ConfigMap held by its finalizer", func(t *testing.T) {
		if got := orphans(t); len(got) != 1 {
			t.Errorf("scenario problem: %d orphans, want w1-config", len(got))
		}
		n.checkOwners(t, "ConfigMap", "w1-config")
		n.checkByOwner(t, "ConfigMap")
		n.checkTable(t, "configmaps")
		uses(t)
	})

	c.mustKubectl(t, "", "patch", "configmap", "w1-config", "-n", n.name, "--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	eventually(t, time.Minute, "w1-config to go once its finalizer is removed", func() string {
		if n.read(t, "configmaps").get("ConfigMap", "w1-config") != nil {
			return "w1-config is still there"
		}
		return ""
	})
	t.Run("finalizer removed", func(t *testing.T) {
		orphans(t)
		// Gone, and still referenced by the pod: a warning; and the pod uses what is gone.
		uses(t)
		n.checkUses(t, "Pod", "reader")
	})
}

// cronRun is what the suite saw of the Job it made from the CronJob by hand.
type cronRun struct {
	job  types.UID
	pods []types.UID
}

// manualJob waits for Job tick-manual, made from the CronJob with kubectl create job --from,
// to succeed, and returns it and its pods as the CronJob's history cleanup will find them.
func (c *ctrlCluster) manualJob(t *testing.T, n *ctrlNS) cronRun {
	t.Helper()
	var run cronRun
	eventually(t, 2*time.Minute, "Job tick-manual to succeed", func() string {
		w := n.read(t, "jobs,pods")
		if why := jobSucceeded(t, w, "tick-manual", 1); why != "" {
			return why
		}
		job := w.get("Job", "tick-manual")
		run = cronRun{job: job.GetUID(), pods: uidsOf(w.controlledBy("Pod", job)...)}
		return ""
	})
	return run
}

// testCronHistory: the CronJob fired on schedule, and once that Job succeeded its history
// limit of one made the cronjob controller delete the older Job (the one made by hand) and
// the garbage collector its pod. The CronJob is then suspended, as a user does, so its tree
// holds still while it is checked.
func testCronHistory(t *testing.T, n *ctrlNS, manual cronRun) {
	c := n.c
	read := func() workloads { return n.read(t, "cronjobs,jobs,pods") }
	var scheduled string
	took := eventually(t, 3*time.Minute, "a scheduled Job to succeed and the history limit to remove tick-manual and its pod", func() string {
		w := read()
		if left := remaining(w, append([]types.UID{manual.job}, manual.pods...)); len(left) > 0 {
			return "still there: " + strings.Join(left, ", ")
		}
		for _, j := range w.controlledBy("Job", w.get("CronJob", "tick")) {
			if jobSucceeded(t, w, j.GetName(), 1) == "" {
				scheduled = j.GetName()
				return ""
			}
		}
		return "no scheduled Job has succeeded"
	})
	t.Logf("Job %s succeeded and tick-manual was cleaned up after %s more", scheduled, took.Round(time.Millisecond))
	c.mustKubectl(t, "", "patch", "cronjob", "tick", "-n", n.name, "-p", `{"spec":{"suspend":true}}`)
	w := read()
	var pod string
	for _, j := range w.controlledBy("Job", w.get("CronJob", "tick")) {
		for _, p := range w.controlledBy("Pod", j) {
			pod = p.GetName()
		}
	}

	n.checkList(t, "cronjobs,jobs,pods")
	n.checkTable(t, "cronjobs,jobs,pods")
	n.checkUses(t, "CronJob", "tick")
	n.checkByOwner(t, "Job,Pod")
	n.checkTree(t, "CronJob", "tick")
	n.checkOwners(t, "Pod", pod)
	events := n.checkEvents(t, "CronJob", "tick")
	if !slices.Contains(events, "SuccessfulDelete CronJob/tick") {
		t.Errorf("scenario problem: the CronJob's events %q do not tell of the history cleanup", events)
	}
	t.Logf("events of CronJob tick: %q", events)
}

// testAcrossNamespaces: groupings and orphans of the whole cluster, with every scenario's
// namespace in it, and Leases owned by the cluster-scoped Nodes.
func testAcrossNamespaces(t *testing.T, c *ctrlCluster, kinds string) {
	all := &ctrlNS{c: c, kinds: kinds}
	node := c.env.Nodes[0]
	t.Run("--by-namespace", func(t *testing.T) {
		c.checkGroups(t, func() workloads { return all.read(t, "pods") }, []string{"Pod"},
			func(u *unstructured.Unstructured) (string, bool) { return u.GetNamespace(), true }, "pods", "-A", "--by-namespace")
	})
	t.Run("--by serviceAccountName", func(t *testing.T) {
		c.checkGroups(t, func() workloads { return all.read(t, "pods") }, []string{"Pod"}, jsonPathKey("spec", "serviceAccountName"),
			"pods", "-A", "--by", "{.spec.serviceAccountName}")
	})
	t.Run("--by-node", func(t *testing.T) { all.checkByNode(t) })
	t.Run("--by-owner", func(t *testing.T) { all.checkByOwner(t, "Pod") })
	t.Run("orphans", func(t *testing.T) { all.checkOrphans(t) })
	// kwok renews each node's Lease every few seconds; the Lease names its Node as owner.
	t.Run("tree of a Node", func(t *testing.T) { all.checkTree(t, "Node", node) })
	t.Run("events of a Node", func(t *testing.T) { t.Logf("events of Node %s: %q", node, all.checkEvents(t, "Node", node)) })
	t.Run("owners of a Lease", func(t *testing.T) {
		(&ctrlNS{c: c, name: "kube-node-lease", kinds: kinds}).checkOwners(t, "Lease", node)
	})
	t.Run("Leases --by-owner", func(t *testing.T) {
		(&ctrlNS{c: c, name: "kube-node-lease", kinds: kinds}).checkByOwner(t, "Lease")
	})
	t.Run("Leases table", func(t *testing.T) {
		(&ctrlNS{c: c, name: "kube-node-lease", kinds: kinds}).checkTable(t, "leases")
	})
}
