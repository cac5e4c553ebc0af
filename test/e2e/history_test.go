package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/pkg/checkpoint"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// kubectl idx history and blame on the controller-driven control plane: a Deployment taken
// through six rollouts by four writers (kubectl apply, kubectl set image, a server-side
// apply manager of the test's own, kubectl scale), a StatefulSet and a DaemonSet through two
// revisions each, a ConfigMap the Deployment uses edited. The truth is what kubectl says on
// the same cluster: each revision's template as `kubectl rollout history --revision=N -o
// json` prints it, read twice to diff, and the writers as the objects' managedFields
// (kubectl get --show-managed-fields) name them, read without kubectl-idx's code.

// historyManager is the test's own server-side apply manager.
const historyManager = "history-e2e"

// historyApp is the Deployment web and the ConfigMap it uses, as kubectl apply writes them;
// firstEnv, when set, is an env entry put before LOG_LEVEL, and sidecar is the sidecar's
// image. kubectl apply (client-side) sets every field its manifest names: a manifest that
// still said pause:3.10 after kubectl set image changed it would change it back.
func historyApp(firstEnv, sidecar string) string {
	first := ""
	if firstEnv != "" {
		first = "\n        - {name: " + firstEnv + ", value: \"yes\"}"
	}
	return `
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {LOG_LEVEL: info}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  strategy:
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        env:` + first + `
        - name: LOG_LEVEL
          valueFrom:
            configMapKeyRef: {name: web-config, key: LOG_LEVEL}
      - name: sidecar
        image: ` + sidecar + `
`
}

// historyApplied is what the test's server-side apply manager applies to Deployment web:
// env FOO, and with port a containerPort.
func historyApplied(port bool) string {
	ports := ""
	if port {
		ports = "\n        ports:\n        - {containerPort: 8080, protocol: TCP}"
	}
	return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  template:
    spec:
      containers:
      - name: web
        env:
        - {name: FOO, value: "1"}` + ports + `
`
}

// serverSideApply applies manifest, one object, in the namespace as the test's own
// server-side apply manager, historyManager, through client-go: kubectl apply
// --server-side would also move the fields kubectl apply (client-side) owns to that
// manager (kubectl's upgrade of client-side-applied objects), and the scenario needs each
// writer to keep its own.
func (n *ctrlNS) serverSideApply(t *testing.T, manifest string) {
	t.Helper()
	data, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	var obj unstructured.Unstructured
	if err := json.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	if _, err := n.c.env.Dynamic.Resource(gvr).Namespace(n.name).Patch(context.Background(), obj.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: historyManager}); err != nil {
		t.Fatalf("server-side apply as %s: %v", historyManager, err)
	}
}

// historyWorkloads is a StatefulSet and a DaemonSet of one container, image image.
func historyWorkloads(image string) string {
	return fmt.Sprintf(`
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports:
  - {name: sql, port: 5432}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 1
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
      - name: db
        image: %[1]s
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: agent
        image: %[1]s
`, image)
}

// historyDoc is the History document as the tests read it.
type historyDoc struct {
	APIVersion string                     `json:"apiVersion"`
	Kind       string                     `json:"kind"`
	Context    string                     `json:"context"`
	From, To   time.Time                  `json:"-"`
	RawFrom    string                     `json:"from"`
	RawTo      string                     `json:"to"`
	Entries    []v1alpha1.HistoryEntry    `json:"entries"`
	Coverage   []v1alpha1.HistoryCoverage `json:"coverage"`
	Gaps       []v1alpha1.HistoryGap      `json:"gaps"`
	Warnings   []string                   `json:"warnings"`
	AsOf       []v1alpha1.AsOf            `json:"asOf"`
}

// decodeHistory parses `kubectl idx history -o json`.
func decodeHistory(t *testing.T, out string) historyDoc {
	t.Helper()
	var doc historyDoc
	mustDecode(t, "history -o json", out, &doc)
	if doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Kind != "History" || doc.Entries == nil || doc.Gaps == nil || doc.Coverage == nil || doc.Warnings == nil {
		t.Fatalf("not a History document with its arrays:\n%s", out)
	}
	var err error
	if doc.From, err = time.Parse(time.RFC3339, doc.RawFrom); err != nil {
		t.Fatal(err)
	}
	if doc.To, err = time.Parse(time.RFC3339, doc.RawTo); err != nil {
		t.Fatal(err)
	}
	return doc
}

// rollouts returns the document's Rollout entries of kind by revision.
func (d historyDoc) rollouts(kind string) map[int64]v1alpha1.HistoryEntry {
	out := map[int64]v1alpha1.HistoryEntry{}
	for _, e := range d.Entries {
		if e.Source == v1alpha1.SourceRevision && e.Object.Kind == kind {
			out[e.Revision.Number] = e
		}
	}
	return out
}

// change returns the entry's change at path, or nil.
func change(e v1alpha1.HistoryEntry, path string) *v1alpha1.HistoryChange {
	for i := range e.Changes {
		if e.Changes[i].Path == path {
			return &e.Changes[i]
		}
	}
	return nil
}

// managerNames are the managers' names.
func managerNames(ms []v1alpha1.FieldManager) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.Manager)
	}
	return out
}

// rolloutTemplate is `kubectl rollout history KIND/NAME --revision=N -o json`'s
// .spec.template: the ReplicaSet's template for a Deployment, the revision applied to the
// workload for a StatefulSet or DaemonSet.
func (n *ctrlNS) rolloutTemplate(t *testing.T, obj string, revision int64) map[string]any {
	t.Helper()
	res := n.c.mustKubectl(t, "", "rollout", "history", obj, "-n", n.name, fmt.Sprintf("--revision=%d", revision), "-o", "json")
	var o map[string]any
	mustDecode(t, fmt.Sprintf("kubectl rollout history %s --revision=%d", obj, revision), res.Stdout, &o)
	tmpl, ok, _ := unstructured.NestedMap(o, "spec", "template")
	if !ok {
		t.Fatalf("kubectl rollout history %s --revision=%d has no .spec.template", obj, revision)
	}
	return tmpl
}

// listKeys are the fields that name a list entry in the test's own flattening: those the
// pod template's keyed lists have (containers, env and volumes by name, ports by
// containerPort).
var listKeys = []string{"name", "containerPort", "mountPath", "devicePath", "ip"}

// flatten maps every leaf of v (a scalar, an empty map or list) to its value, each at a path
// the test writes its own way: fields by name, list entries by the first key of listKeys
// every entry holds once ([name=web]), else by index.
func flatten(prefix string, v any, out map[string]any) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			out[prefix] = t
		}
		for k, e := range t {
			flatten(prefix+"."+k, e, out)
		}
	case []any:
		if len(t) == 0 {
			out[prefix] = t
		}
		key := ""
	keys:
		for _, k := range listKeys {
			seen := map[string]bool{}
			for _, e := range t {
				m, ok := e.(map[string]any)
				if !ok {
					continue keys
				}
				v, ok := m[k]
				if !ok || seen[fmt.Sprint(v)] {
					continue keys
				}
				seen[fmt.Sprint(v)] = true
			}
			key = k
			break
		}
		for i, e := range t {
			if key != "" {
				flatten(fmt.Sprintf("%s[%s=%v]", prefix, key, e.(map[string]any)[key]), e, out)
			} else {
				flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
			}
		}
	default:
		out[prefix] = v
	}
}

// filterStep is a JSONPath filter on a list entry's key, as kubectl-idx writes them.
var filterStep = regexp.MustCompile(`\[\?\(@\.(\w+)==("?)(.*?)("?)\)\]`)

// flatPath is a change's JSONPath in flatten's notation.
func flatPath(p string) string {
	p = filterStep.ReplaceAllString(p, "[$1=$3]")
	return strings.ReplaceAll(p, `\.`, ".")
}

// checkTemplateDiff checks a rollout entry against kubectl's two templates: each change's
// old and new values are what its path (a kubectl JSONPath) reads in them, and the fields
// it changed are exactly those that differ between them.
func checkTemplateDiff(t *testing.T, what string, e v1alpha1.HistoryEntry, before, after map[string]any) {
	t.Helper()
	read := func(tmpl map[string]any, path string) (any, bool) {
		jp := jsonpath.New("p")
		if err := jp.Parse("{" + path + "}"); err != nil {
			t.Fatalf("%s: path %s: %v", what, path, err)
		}
		results, err := jp.FindResults(map[string]any{"spec": map[string]any{"template": tmpl}})
		if err != nil || len(results) == 0 || len(results[0]) == 0 {
			return nil, false
		}
		return results[0][0].Interface(), true
	}
	same := func(a any, raw []byte) bool {
		var b any
		if err := json.Unmarshal(raw, &b); err != nil {
			return false
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		return string(ja) == string(jb)
	}
	ours := map[string]bool{}
	for _, c := range e.Changes {
		old, hasOld := read(before, c.Path)
		nw, hasNew := read(after, c.Path)
		if before == nil {
			hasOld = false
		}
		if (c.Old != nil) != hasOld || c.Old != nil && !same(old, c.Old.Raw) {
			t.Errorf("%s: %s was %v (present: %v) in kubectl's revision before, the history says %s", what, c.Path, old, hasOld, raw(c.Old))
		}
		if (c.New != nil) != hasNew || c.New != nil && !same(nw, c.New.Raw) {
			t.Errorf("%s: %s is %v (present: %v) in kubectl's revision, the history says %s", what, c.Path, nw, hasNew, raw(c.New))
		}
		for _, side := range []*[]byte{rawOf(c.Old), rawOf(c.New)} {
			if side == nil {
				continue
			}
			var v any
			_ = json.Unmarshal(*side, &v)
			leaves := map[string]any{}
			flatten(flatPath(c.Path), v, leaves)
			for k := range leaves {
				ours[k] = true
			}
		}
	}
	a, b := map[string]any{}, map[string]any{}
	if before != nil {
		flatten(".spec.template", before, a)
	}
	flatten(".spec.template", after, b)
	kubectls := map[string]bool{}
	for k, v := range a {
		if w, ok := b[k]; !ok || fmt.Sprint(v) != fmt.Sprint(w) {
			kubectls[k] = true
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			kubectls[k] = true
		}
	}
	if diff := setDiff(kubectls, ours); diff != "" {
		t.Errorf("%s: the fields that differ between kubectl's templates and those the history changed:\n%s", what, diff)
	}
}

// raw is a change's value as its JSON, "absent" for none.
func raw(r *runtime.RawExtension) string {
	if r == nil {
		return "absent"
	}
	return string(r.Raw)
}

// rawOf is a change's value's JSON, nil for none.
func rawOf(r *runtime.RawExtension) *[]byte {
	if r == nil {
		return nil
	}
	return &r.Raw
}

// setDiff words what is in a and not b (-) and in b and not a (+), "" when they agree.
func setDiff(a, b map[string]bool) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if !b[k] {
			out = append(out, "- "+k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b)) {
		if !a[k] {
			out = append(out, "+ "+k)
		}
	}
	return strings.Join(out, "\n")
}

// getObject is `kubectl get TYPE/NAME -n NS -o json --show-managed-fields`.
func (n *ctrlNS) getObject(t *testing.T, obj string) *unstructured.Unstructured {
	t.Helper()
	res := n.c.mustKubectl(t, "", "get", obj, "-n", n.name, "-o", "json", "--show-managed-fields")
	u := &unstructured.Unstructured{}
	mustDecode(t, "kubectl get "+obj, res.Stdout, &u.Object)
	return u
}

// ownsField reports whether manager's managedFields entry of obj, as kubectl prints it,
// holds the FieldsV1 path (f:spec, k:{"name":"web"}, ...): the truth of who last wrote
// a field, read without kubectl-idx's code.
func ownsField(t *testing.T, obj *unstructured.Unstructured, manager string, path ...string) bool {
	t.Helper()
	for _, mf := range obj.GetManagedFields() {
		if mf.Manager == manager && entryHas(t, mf, path) {
			return true
		}
	}
	return false
}

// ownerOf returns the first manager (and its subresource) whose managedFields entry of
// obj holds the FieldsV1 path, "" when none does.
func ownerOf(t *testing.T, obj *unstructured.Unstructured, path ...string) (manager, subresource string) {
	t.Helper()
	for _, mf := range obj.GetManagedFields() {
		if entryHas(t, mf, path) {
			return mf.Manager, mf.Subresource
		}
	}
	return "", ""
}

// entryHas reports whether a managedFields entry's FieldsV1 holds path.
func entryHas(t *testing.T, mf metav1.ManagedFieldsEntry, path []string) bool {
	t.Helper()
	if mf.FieldsV1 == nil {
		return false
	}
	var cur map[string]any
	if err := json.Unmarshal(mf.FieldsV1.Raw, &cur); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return false
		}
		cur = next
	}
	return true
}

// webContainer is the FieldsV1 path of Deployment web's container web, then more.
func webContainer(more ...string) []string {
	return append([]string{"f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"web"}`}, more...)
}

// currentContext is the name of kubeconfig's current context.
func currentContext(t *testing.T, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg.CurrentContext
}

// historyOf is `kubectl idx history OBJ -n NS ARGS... -o json` through kubectl's plugin
// discovery, which must exit 0 with nothing on stderr.
func (n *ctrlNS) historyOf(t *testing.T, obj string, args ...string) historyDoc {
	t.Helper()
	res := n.c.idx(t, append([]string{"history", obj, "-n", n.name, "-o", "json"}, args...)...)
	mustSucceed(t, "kubectl idx history "+obj, res)
	if res.Stderr != "" {
		t.Errorf("kubectl idx history %s %s: stderr not empty:\n%s", obj, strings.Join(args, " "), res.Stderr)
	}
	return decodeHistory(t, res.Stdout)
}

// TestHistory: the six rollouts of Deployment web, made by kubectl apply, kubectl set
// image and a server-side apply manager, each with its template diff equal to kubectl
// rollout history's and each changed field (list entries included) attributed to the
// manager kubectl's managedFields name; the scale and the ConfigMap's edit; the
// StatefulSet's and DaemonSet's two revisions; the stretch before the oldest revision a
// gap; --where, --from-checkpoint, --cache, several contexts and a user who may not read
// everything.
func TestHistory(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-history"
	c := sharedIn(t, ns)
	n := &ctrlNS{c: c, name: ns}
	apply := func(manifest string, args ...string) {
		t.Helper()
		c.mustKubectl(t, manifest, append([]string{"apply", "-n", ns, "-f", "-"}, args...)...)
	}
	rolled := func(obj string) {
		t.Helper()
		c.mustKubectl(t, "", "rollout", "status", obj, "-n", ns, "--timeout=3m")
	}
	const pause39, pause310 = "registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.10"
	// The sources keep their times to the second, and a manager's last write counts as the
	// one that made a revision when it came within seconds before it: writes closer than
	// that are one moment to them. A user's rollouts are minutes apart; the test's are
	// spaced by a few seconds, the least that tells them apart.
	last := time.Now()
	spaced := func() {
		time.Sleep(time.Until(last.Add(4 * time.Second)))
		last = time.Now()
	}
	start := time.Now()
	apply(historyApp("", pause310))   // revision 1: kubectl apply
	apply(historyWorkloads(pause310)) // the StatefulSet's and DaemonSet's revision 1
	rolled("deployment/web")
	spaced()
	c.mustKubectl(t, "", "set", "image", "deployment/web", "sidecar="+pause39, "-n", ns) // 2: kubectl set image
	rolled("deployment/web")
	spaced()
	n.serverSideApply(t, historyApplied(false)) // 3: server-side apply, env FOO
	rolled("deployment/web")
	spaced()
	apply(historyApp("A_FIRST", pause39)) // 4: kubectl apply, env A_FIRST before LOG_LEVEL
	rolled("deployment/web")

	// A feed of what is under web records its checkpoint through the fifth rollout.
	cp := filepath.Join(t.TempDir(), "web.checkpoint")
	ctxName := currentContext(t, c.env.Kubeconfig)
	feed := startFeed(t, c.env, c.env.Kubeconfig, "watch", "deploy,rs,pods", "-n", ns, "--owner", "deployment/web", "--checkpoint", cp, "-o", "json")
	recorded := func() (*checkpoint.Recorded, string) {
		r, err := checkpoint.Read(cp)
		if err != nil {
			return nil, err.Error()
		}
		got, _, err := r.For(ctxName, nil, ns, []string{"pods"})
		if err != nil {
			return nil, err.Error()
		}
		return got, ""
	}
	// caughtUp says what the checkpoint still lacks of web's pods and ReplicaSets now.
	caughtUp := func() string {
		got, why := recorded()
		if why != "" {
			return why
		}
		want := map[string]string{}
		for _, o := range n.read(t, "replicasets,pods").items {
			if o.GetLabels()["app"] == "web" {
				want[o.GetName()] = o.GetResourceVersion()
			}
		}
		have := map[string]string{}
		for _, src := range got.Sources {
			if src.Resource == "deployments.apps" {
				continue
			}
			for _, o := range src.Objects {
				if o.Printed {
					have[o.Name] = o.ResourceVersion
				}
			}
		}
		if !maps.Equal(want, have) {
			return fmt.Sprintf("the checkpoint holds %v, kubectl shows %v", have, want)
		}
		return ""
	}
	eventually(t, 2*time.Minute, "the checkpoint to record web's objects", caughtUp)
	spaced()
	n.serverSideApply(t, historyApplied(true)) // 5: server-side apply, a port
	rolled("deployment/web")
	eventually(t, 2*time.Minute, "the checkpoint to record the fifth rollout", caughtUp)
	var atStop []string
	for _, p := range n.read(t, "pods").items {
		if p.GetLabels()["app"] == "web" {
			atStop = append(atStop, p.GetName())
		}
	}
	feed.interrupt(t)

	spaced()
	c.mustKubectl(t, "", "set", "image", "deployment/web", "web="+pause39, "-n", ns) // 6: kubectl set image
	rolled("deployment/web")
	spaced()
	c.mustKubectl(t, "", "scale", "deployment/web", "--replicas=3", "-n", ns) // kubectl scale
	rolled("deployment/web")
	c.mustKubectl(t, "", "patch", "configmap", "web-config", "-n", ns, "--type=merge", "-p", `{"data":{"LOG_LEVEL":"debug"}}`)
	c.mustKubectl(t, "", "set", "image", "statefulset/db", "db="+pause39, "-n", ns)
	c.mustKubectl(t, "", "set", "image", "daemonset/agent", "agent="+pause39, "-n", ns)
	rolled("statefulset/db")
	rolled("daemonset/agent")
	t.Logf("six rollouts, a scale, an edit and two revisions each of a StatefulSet and a DaemonSet after %s", time.Since(start).Round(time.Second))

	deploy := n.getObject(t, "deployment/web")
	t.Run("six revisions, kubectl's templates, each field's writer", func(t *testing.T) {
		doc := n.historyOf(t, "deployment/web")
		rollouts := doc.rollouts("Deployment")
		if len(rollouts) != 6 {
			t.Fatalf("%d rollouts, want 6 of 6: %v", len(rollouts), slices.Sorted(maps.Keys(rollouts)))
		}
		var before map[string]any
		for rev := int64(1); rev <= 6; rev++ {
			after := n.rolloutTemplate(t, "deployment/web", rev)
			checkTemplateDiff(t, fmt.Sprintf("revision %d", rev), rollouts[rev], before, after)
			before = after
		}
		// Each revision's change, attributed as kubectl's managedFields say.
		const (
			csa = "kubectl-client-side-apply"
			set = "kubectl-set"
		)
		web := `.spec.template.spec.containers[?(@.name=="web")]`
		for _, tc := range []struct {
			rev     int64
			path    string
			manager string
			truth   []string
		}{
			{2, `.spec.template.spec.containers[?(@.name=="sidecar")].image`, set, []string{"f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"sidecar"}`, "f:image"}},
			{3, web + `.env[?(@.name=="FOO")]`, historyManager, webContainer("f:env", `k:{"name":"FOO"}`)},
			{4, web + `.env[?(@.name=="A_FIRST")]`, csa, webContainer("f:env", `k:{"name":"A_FIRST"}`)},
			{5, web + `.ports`, historyManager, webContainer("f:ports", `k:{"containerPort":8080,"protocol":"TCP"}`)},
			{6, web + `.image`, set, webContainer("f:image")},
		} {
			if !ownsField(t, deploy, tc.manager, tc.truth...) {
				mf, _ := json.MarshalIndent(deploy.GetManagedFields(), "", "  ")
				t.Errorf("scenario problem: kubectl says %s does not own %v:\n%s", tc.manager, tc.truth, mf)
			}
			ch := change(rollouts[tc.rev], tc.path)
			if ch == nil {
				t.Errorf("revision %d: no change at %s: %+v", tc.rev, tc.path, rollouts[tc.rev].Changes)
				continue
			}
			if got := managerNames(ch.Managers); !slices.Equal(got, []string{tc.manager}) {
				t.Errorf("revision %d: %s written by %q, want %s", tc.rev, tc.path, got, tc.manager)
			}
			if got := managerNames(rollouts[tc.rev].Managers); !slices.Contains(got, tc.manager) {
				t.Errorf("revision %d: made by %q, want %s among them", tc.rev, got, tc.manager)
			}
		}
		if got := managerNames(rollouts[1].Managers); !slices.Equal(got, []string{csa}) {
			t.Errorf("revision 1 made by %q, want %s", got, csa)
		}
		// A_FIRST was inserted first: an attribution by index would name LOG_LEVEL's writer.
		if env, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers"); len(env) == 0 || fmt.Sprint(env[0].(map[string]any)["env"].([]any)[0].(map[string]any)["name"]) != "A_FIRST" {
			t.Errorf("scenario problem: env A_FIRST is not the first entry: %v", env)
		}
		// The scale, through the scale subresource, by its manager.
		scaler, sub := ownerOf(t, deploy, "f:spec", "f:replicas")
		found := false
		for _, e := range doc.Entries {
			if e.Source == v1alpha1.SourceManagedFields && e.Object.Kind == "Deployment" && len(e.Managers) == 1 && e.Managers[0].Manager == scaler && e.Managers[0].Subresource == sub {
				if ch := change(e, ".spec.replicas"); ch != nil && string(ch.New.Raw) == "3" {
					found = true
				}
			}
		}
		if !found || sub != "scale" {
			var written []string
			for _, e := range doc.Entries {
				if e.Source == v1alpha1.SourceManagedFields {
					b, _ := json.Marshal(e)
					written = append(written, string(b))
				}
			}
			t.Errorf("no entry of the scale to 3 by %s (subresource %q) among\n%s", scaler, sub, strings.Join(written, "\n"))
		}
		reasons := map[string]bool{}
		for _, e := range doc.Entries {
			if e.Event != nil {
				reasons[e.Event.Reason] = true
			}
		}
		if !reasons["ScalingReplicaSet"] || !reasons["SuccessfulCreate"] {
			t.Errorf("events of the rollouts: %v", reasons)
		}
		if len(doc.Gaps) != 0 {
			t.Errorf("gaps %+v over the object's life, which the revisions cover", doc.Gaps)
		}
	})

	t.Run("StatefulSet and DaemonSet revisions equal kubectl's", func(t *testing.T) {
		for _, obj := range []string{"statefulset/db", "daemonset/agent"} {
			doc := n.historyOf(t, obj)
			kind := map[string]string{"statefulset/db": "StatefulSet", "daemonset/agent": "DaemonSet"}[obj]
			rollouts := doc.rollouts(kind)
			if len(rollouts) != 2 {
				t.Errorf("%s: %d rollouts, want 2", obj, len(rollouts))
				continue
			}
			before := n.rolloutTemplate(t, obj, 1)
			checkTemplateDiff(t, obj+" revision 1", rollouts[1], nil, before)
			checkTemplateDiff(t, obj+" revision 2", rollouts[2], before, n.rolloutTemplate(t, obj, 2))
			image := fmt.Sprintf(`.spec.template.spec.containers[?(@.name=="%s")].image`, strings.Split(obj, "/")[1])
			if ch := change(rollouts[2], image); ch == nil || !slices.Equal(managerNames(ch.Managers), []string{"kubectl-set"}) {
				t.Errorf("%s revision 2: %s not written by kubectl-set: %+v", obj, image, rollouts[2].Changes)
			}
		}
	})

	t.Run("--uses: the ConfigMap's edit", func(t *testing.T) {
		cm := n.getObject(t, "configmap/web-config")
		editor, _ := ownerOf(t, cm, "f:data", "f:LOG_LEVEL")
		doc := n.historyOf(t, "deployment/web", "--uses")
		found := false
		for _, e := range doc.Entries {
			if e.Object.Kind == "ConfigMap" && e.Source == v1alpha1.SourceManagedFields && managerNames(e.Managers)[0] == editor {
				if ch := change(e, ".data.LOG_LEVEL"); ch != nil && string(ch.New.Raw) == `"debug"` && ch.OldUnknown {
					found = true
				}
			}
		}
		if !found || editor != "kubectl-patch" {
			t.Errorf("no entry of the ConfigMap's edit by %s", editor)
		}
	})

	t.Run("--since: the stretch before the oldest revision is a gap", func(t *testing.T) {
		doc := n.historyOf(t, "deployment/web", "--since", "3h")
		created := deploy.GetCreationTimestamp().Time
		if len(doc.Gaps) != 1 {
			t.Fatalf("gaps %+v, want one", doc.Gaps)
		}
		g := doc.Gaps[0]
		if !g.From.Time.Equal(doc.From) || g.To.After(created) || !g.To.Time.Equal(doc.To.Add(-time.Hour)) {
			t.Errorf("gap %s to %s, want from the window's start (%s) to an hour before its end (%s), before the creation (%s)", g.From, g.To, doc.From, doc.To, created)
		}
		for _, want := range []string{"before the oldest revision kept (revision 1", "events expire about 1h0m0s after they last happened", "no checkpoint was given"} {
			if !strings.Contains(g.Reason, want) {
				t.Errorf("gap reason %q lacks %q", g.Reason, want)
			}
		}
		res := c.idx(t, "history", "deployment/web", "-n", ns, "--since", "3h")
		mustSucceed(t, "kubectl idx history --since 3h", res)
		if lines := strings.Split(res.Stdout, "\n"); len(lines) < 2 || !strings.Contains(lines[1], "   gap   ") || !strings.Contains(lines[1], "nothing known until") {
			t.Errorf("the table's first row is not the gap:\n%s", res.Stdout)
		}
		t.Logf("kubectl idx history deployment/web --since 3h:\n%s", res.Stdout)
	})

	t.Run("--where keeps the entries of the objects that match", func(t *testing.T) {
		doc := n.historyOf(t, "deployment/web", "--where", `object.kind == "ReplicaSet"`)
		if len(doc.Entries) == 0 {
			t.Fatal("no entry")
		}
		for _, e := range doc.Entries {
			if e.Object.Kind != "ReplicaSet" {
				t.Errorf("entry of %s/%s", e.Object.Kind, e.Object.Name)
			}
		}
	})

	t.Run("--from-checkpoint", func(t *testing.T) {
		doc := n.historyOf(t, "deployment/web", "--from-checkpoint", cp)
		covered := 0
		for _, cv := range doc.Coverage {
			if cv.Source == v1alpha1.SourceCheckpoint && cv.From != nil && cv.To != nil {
				covered++
			}
		}
		if covered != 3 {
			t.Errorf("%d checkpoint coverages with a stretch, want deployments, replicasets and pods: %+v", covered, doc.Coverage)
		}
		now := map[string]bool{}
		for _, p := range n.read(t, "pods").items {
			now[p.GetName()] = true
		}
		var deleted []string
		changed := false
		for _, e := range doc.Entries {
			if e.Source != v1alpha1.SourceCheckpoint {
				continue
			}
			switch {
			case e.Action == "Deleted" && e.Object.Kind == "Pod":
				deleted = append(deleted, e.Object.Name)
				if now[e.Object.Name] || !slices.Contains(atStop, e.Object.Name) || e.Until == nil {
					t.Errorf("pod %s said deleted after the checkpoint: there then %v, now %v", e.Object.Name, slices.Contains(atStop, e.Object.Name), now[e.Object.Name])
				}
			case e.Action == "Changed" && e.Object.Kind == "Deployment" && e.Until != nil:
				changed = true
			}
		}
		var gone []string
		for _, p := range atStop {
			if !now[p] {
				gone = append(gone, p)
			}
		}
		slices.Sort(deleted)
		slices.Sort(gone)
		if !slices.Equal(deleted, gone) || len(gone) == 0 {
			t.Errorf("pods deleted since the checkpoint: %q, want %q", deleted, gone)
		}
		if !changed {
			t.Error("no entry of the Deployment changed since the checkpoint (the sixth rollout)")
		}

		// Another feed: a watch of another namespace.
		other := filepath.Join(t.TempDir(), "other.checkpoint")
		f := startFeed(t, c.env, c.env.Kubeconfig, "watch", "pods", "-n", "default", "--checkpoint", other, "-o", "name")
		eventually(t, time.Minute, "the other feed's checkpoint", func() string {
			if r, err := checkpoint.Read(other); err != nil {
				return err.Error()
			} else if got, _, err := r.For(ctxName, nil, "default", []string{"pods"}); err != nil || got.Recorded.IsZero() {
				return fmt.Sprint("not recorded yet: ", err)
			}
			return ""
		})
		f.interrupt(t)
		res := c.idx(t, "history", "deployment/web", "-n", ns, "--from-checkpoint", other)
		if want := "error: checkpoint " + other + " was written for another feed: the namespace in context " + ctxName + " was default, is " + ns + "; resume with the same command, or give another file\n"; res.ExitCode != 1 || res.Stderr != want || res.Stdout != "" {
			t.Errorf("another feed's checkpoint: want exit 1 and\n%s\n%s", want, res)
		}

		// Another cluster: a watch of the fixtures' control plane, under the same context name.
		kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
		if err := testenv.WriteKubeconfig(kubeconfig, testenv.KubeconfigContext{Name: ctxName, From: env.Kubeconfig}); err != nil {
			t.Fatal(err)
		}
		elsewhere := filepath.Join(t.TempDir(), "elsewhere.checkpoint")
		f = startFeed(t, env, kubeconfig, "watch", "pods", "-n", ns, "--checkpoint", elsewhere, "-o", "name")
		eventually(t, time.Minute, "the other cluster's checkpoint", func() string {
			if _, err := checkpoint.Read(elsewhere); err != nil {
				return err.Error()
			}
			return ""
		})
		f.interrupt(t)
		res = c.idx(t, "history", "deployment/web", "-n", ns, "--from-checkpoint", elsewhere)
		if prefix := "error: checkpoint " + elsewhere + " was written for another cluster: the kube-system namespace's UID in context " + ctxName + " was "; res.ExitCode != 1 || !strings.HasPrefix(res.Stderr, prefix) || !strings.HasSuffix(res.Stderr, "; resume against the cluster it was written for, or give another file\n") {
			t.Errorf("another cluster's checkpoint: want exit 1 and %s...\n%s", prefix, res)
		}
	})

	t.Run("--cache answers as the direct run, managedFields kept for the kinds explained only", func(t *testing.T) {
		cu := newCacheUser(t, c.env, c.env.Kubeconfig)
		args := []string{"history", "deployment/web", "-n", ns, "--uses", "-o", "json"}
		direct := cu.idx(t, args...)
		mustSucceed(t, "direct", direct)
		for i := range 2 {
			cached := cu.idx(t, append(args, "--cache")...)
			mustSucceed(t, "cached", cached)
			if strings.Contains(cached.Stderr, "answering directly") {
				t.Fatalf("not answered by the cache: %s", cached.Stderr)
			}
			d, cd := decodeHistory(t, direct.Stdout), decodeHistory(t, cached.Stdout)
			if i == 1 && len(cd.AsOf) == 0 {
				t.Errorf("an answer of the warm cache says nothing of what it is current as of")
			}
			if a, b := writesOf(d), writesOf(cd); !slices.Equal(a, b) {
				t.Errorf("run %d through the cache:\n%s\ndirectly:\n%s", i+1, strings.Join(b, "\n"), strings.Join(a, "\n"))
			}
		}
		for _, inf := range cu.status(t).Informers {
			// The Deployment, its ReplicaSets, and with --uses its ConfigMap and its pods'
			// ServiceAccount.
			if inf.ManagedFields && !slices.Contains([]string{"deployments.apps", "replicasets.apps", "configmaps", "serviceaccounts"}, inf.Resource) {
				t.Errorf("the cache keeps the managedFields of %s, which no history explains", inf.Resource)
			}
		}
	})

	t.Run("several contexts", func(t *testing.T) {
		kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
		if err := testenv.WriteKubeconfig(kubeconfig,
			testenv.KubeconfigContext{Name: "h1", From: c.env.Kubeconfig, Namespace: ns},
			testenv.KubeconfigContext{Name: "h2", From: c.env.Kubeconfig, Namespace: ns}); err != nil {
			t.Fatal(err)
		}
		res := run(t, testenv.Cmd{Path: binary, Args: []string{"history", "deployment/web", "--context", "h1,h2", "-o", "json"}, Env: c.env.Environ(kubeconfig, ""), Timeout: cmdTimeout})
		mustSucceed(t, "history --context h1,h2", res)
		var list struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal([]byte(res.Stdout), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 {
			t.Fatalf("want a List of two histories: %v\n%s", err, res.Stdout)
		}
		for i, item := range list.Items {
			doc := decodeHistory(t, string(item))
			if want := []string{"h1", "h2"}[i]; doc.Context != want || len(doc.rollouts("Deployment")) != 6 {
				t.Errorf("item %d: context %q, %d rollouts; want %s, 6", i, doc.Context, len(doc.rollouts("Deployment")), want)
			}
		}
		res = run(t, testenv.Cmd{Path: binary, Args: []string{"history", "deployment/web", "--context", "h1,h2"}, Env: c.env.Environ(kubeconfig, ""), Timeout: cmdTimeout})
		mustSucceed(t, "history --context h1,h2", res)
		if !strings.HasPrefix(res.Stdout, "CONTEXT ") || !strings.Contains(res.Stdout, "\nh2 ") {
			t.Errorf("the table over two contexts:\n%s", res.Stdout)
		}
	})

	t.Run("a user who may not read events or ConfigMaps", func(t *testing.T) {
		user, err := c.env.AddRoleUser(context.Background(), "history-reader", ns, []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"deployments", "replicasets"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"history", "deployment/web", "-n", ns, "--uses", "-o", "json"}
		res := run(t, testenv.Cmd{Path: binary, Args: args, Env: c.env.Environ(user.Kubeconfig, ""), Timeout: cmdTimeout})
		mustSucceed(t, "history as history-reader", res)
		warned := func(stderr string) []string {
			var out []string
			for _, l := range stderrLines(dropDetectorNotice(stderr)) {
				if strings.HasPrefix(l, "warning: cannot list events,") || strings.HasPrefix(l, "warning: cannot list configmaps,") {
					out = append(out, l)
				}
			}
			return out
		}
		if got := warned(res.Stderr); len(got) != 2 {
			t.Errorf("warnings naming events and configmaps: %q\n%s", got, res.Stderr)
		}
		doc := decodeHistory(t, res.Stdout)
		for _, cv := range doc.Coverage {
			if cv.Source == v1alpha1.SourceEvent && !strings.HasPrefix(cv.Unavailable, "cannot list events: ") {
				t.Errorf("the events' coverage does not say they could not be read: %+v", cv)
			}
		}
		if len(doc.rollouts("Deployment")) != 6 {
			t.Errorf("%d rollouts for a user who may read ReplicaSets, want 6", len(doc.rollouts("Deployment")))
		}
		// Through the warm cache, the API server decides the same for that user.
		cu := newCacheUser(t, c.env, user.Kubeconfig)
		cached := cu.idx(t, append(args, "--cache")...)
		mustSucceed(t, "history as history-reader, --cache", cached)
		if got, want := warned(cached.Stderr), warned(res.Stderr); !slices.Equal(got, want) {
			t.Errorf("through the cache: %q, directly: %q", got, want)
		}
	})
}

// writesOf are a history's rollouts and its managers' writes to the object's spec and
// data, which nothing but the test changes: the entries a cached run and a direct run,
// minutes apart, must agree on. A write known only to have come before the answer (the
// scale's, whose time managedFields do not keep) runs until the answer's own time, the
// window's end, which is each run's: it is written "until the end" for both.
func writesOf(d historyDoc) []string {
	var out []string
	for _, e := range d.Entries {
		if e.Source != v1alpha1.SourceRevision && e.Source != v1alpha1.SourceManagedFields {
			continue
		}
		if len(e.Managers) == 1 && (e.Managers[0].Subresource == "status" || e.Managers[0].Manager == "kube-controller-manager") {
			continue
		}
		untilEnd := e.Until != nil && e.Until.Time.Equal(d.To)
		if untilEnd {
			e.Until = nil
		}
		b, _ := json.Marshal(e)
		if untilEnd {
			b = append(b, " until the end"...)
		}
		out = append(out, string(b))
	}
	return out
}

// TestBlame: Deployment web's fields beside their writers as kubectl's managedFields name
// them, an env entry inserted first by kubectl apply and one added by a server-side apply
// manager each attributed by its name, the port by its containerPort and protocol, the
// replicas to kubectl scale.
func TestBlame(t *testing.T) {
	t.Parallel()
	const ns = "ctrl-blame"
	c := sharedIn(t, ns)
	n := &ctrlNS{c: c, name: ns}
	c.mustKubectl(t, historyApp("", "registry.k8s.io/pause:3.10"), "apply", "-n", ns, "-f", "-")
	n.serverSideApply(t, historyApplied(true))
	c.mustKubectl(t, historyApp("A_FIRST", "registry.k8s.io/pause:3.10"), "apply", "-n", ns, "-f", "-")
	c.mustKubectl(t, "", "set", "image", "deployment/web", "sidecar=registry.k8s.io/pause:3.9", "-n", ns)
	c.mustKubectl(t, "", "scale", "deployment/web", "--replicas=1", "-n", ns)
	deploy := n.getObject(t, "deployment/web")

	res := c.idx(t, "blame", "deployment/web", "-n", ns, "-o", "json")
	mustSucceed(t, "kubectl idx blame -o json", res)
	var doc v1alpha1.Blame
	mustDecode(t, "output", res.Stdout, &doc)
	if doc.Kind != "Blame" || doc.Object.Name != "web" || len(doc.Managers) != len(deploy.GetManagedFields()) {
		t.Fatalf("document %+v, want web's with its %d managers", doc, len(deploy.GetManagedFields()))
	}
	by := map[string][]string{}
	for _, f := range doc.Fields {
		for _, i := range f.Managers {
			by[f.Path] = append(by[f.Path], doc.Managers[i].Manager)
		}
	}
	web := `.spec.template.spec.containers[?(@.name=="web")]`
	for _, tc := range []struct {
		path  string
		truth []string
	}{
		{web + `.env[?(@.name=="A_FIRST")].value`, webContainer("f:env", `k:{"name":"A_FIRST"}`, "f:value")},
		{web + `.env[?(@.name=="FOO")].value`, webContainer("f:env", `k:{"name":"FOO"}`, "f:value")},
		{web + `.env[?(@.name=="LOG_LEVEL")].valueFrom.configMapKeyRef.key`, webContainer("f:env", `k:{"name":"LOG_LEVEL"}`, "f:valueFrom", "f:configMapKeyRef")},
		{web + `.ports[?(@.containerPort==8080)].protocol`, webContainer("f:ports", `k:{"containerPort":8080,"protocol":"TCP"}`, "f:protocol")},
		{`.spec.template.spec.containers[?(@.name=="sidecar")].image`, []string{"f:spec", "f:template", "f:spec", "f:containers", `k:{"name":"sidecar"}`, "f:image"}},
		{".spec.replicas", []string{"f:spec", "f:replicas"}},
	} {
		want, _ := ownerOf(t, deploy, tc.truth...)
		if want == "" {
			t.Errorf("scenario problem: nobody owns %v", tc.truth)
		}
		if got := by[tc.path]; !slices.Equal(got, []string{want}) {
			t.Errorf("%s: %q, want %s, as kubectl's managedFields say", tc.path, got, want)
		}
	}
	if a, f := by[web+`.env[?(@.name=="A_FIRST")].value`], by[web+`.env[?(@.name=="FOO")].value`]; slices.Equal(a, f) {
		t.Errorf("scenario problem: A_FIRST and FOO have the same writer %q", a)
	}

	// The YAML, each line beside its writer.
	res = c.idx(t, "blame", "deployment/web", "-n", ns)
	mustSucceed(t, "kubectl idx blame", res)
	lines := strings.Split(res.Stdout, "\n")
	if !strings.HasPrefix(lines[0], "MANAGER ") {
		t.Errorf("header %q", lines[0])
	}
	fooLine := regexp.MustCompile(`^` + historyManager + `\s+Apply\s+\S+\s+- name: FOO$`)
	if !slices.ContainsFunc(lines, fooLine.MatchString) {
		t.Errorf("no line of env FOO beside %s:\n%s", historyManager, res.Stdout)
	}
	var yamlText []string
	col := strings.Index(lines[0], "OBJECT")
	for _, l := range lines[1:] {
		if len(l) > col {
			yamlText = append(yamlText, l[col:])
		}
	}
	var back map[string]any
	if err := yaml.Unmarshal([]byte(strings.Join(yamlText, "\n")), &back); err != nil || back["kind"] != "Deployment" {
		t.Errorf("the YAML beside the writers does not read back: %v\n%s", err, strings.Join(yamlText, "\n"))
	}
}

// TestHistoryRevisionsGone: the stretch before the oldest revision kept is a gap when no
// other source reaches it. On a control plane of its own, whose API server keeps events 20 s
// (--event-ttl 20s), a Deployment keeping one old revision (revisionHistoryLimit 1) is rolled
// out twice; once kubectl shows revision 1's ReplicaSet deleted by the deployment controller
// and no event from before revision 2 kept, history told the server's TTL reports the
// stretch from the Deployment's creation to revision 2 as a gap, and told the default hour,
// which would still hold those events, none.
func TestHistoryRevisionsGone(t *testing.T) {
	t.Parallel()
	const ttl = 20 * time.Second
	c := startOwnCluster(t, testenv.Options{
		Controllers:    &testenv.ControllerOptions{Nodes: 1},
		APIServerFlags: map[string][]string{"event-ttl": {ttl.String()}},
	})
	const ns = "history-gone"
	c.createNamespace(t, ns)
	n := &ctrlNS{c: c, name: ns}
	c.mustKubectl(t, `
apiVersion: apps/v1
kind: Deployment
metadata: {name: trimmed}
spec:
  replicas: 1
  revisionHistoryLimit: 1
  selector:
    matchLabels: {app: trimmed}
  template:
    metadata:
      labels: {app: trimmed}
    spec:
      containers:
      - {name: app, image: `+pauseImage+`}
`, "apply", "-n", ns, "-f", "-")
	rolled := func() {
		t.Helper()
		c.mustKubectl(t, "", "rollout", "status", "deployment/trimmed", "-n", ns, "--timeout=3m")
	}
	rolled()
	// The sources keep their times to the second: revisions seconds apart are told apart.
	time.Sleep(3 * time.Second)
	c.mustKubectl(t, "", "set", "env", "deployment/trimmed", "STEP=2", "-n", ns)
	rolled()
	time.Sleep(3 * time.Second)
	c.mustKubectl(t, "", "set", "env", "deployment/trimmed", "STEP=3", "-n", ns)
	rolled()

	// kubectl's truth: the ReplicaSets of revisions 2 and 3 only, and no event older than
	// revision 2.
	var rev2 time.Time
	eventually(t, gcTimeout, "the deployment controller to delete revision 1's ReplicaSet", func() string {
		var kept []string
		for _, rs := range n.read(t, "replicasets").items {
			r := rs.GetAnnotations()["deployment.kubernetes.io/revision"]
			kept = append(kept, r)
			if r == "2" {
				rev2 = rs.GetCreationTimestamp().Time
			}
		}
		if slices.Sort(kept); !slices.Equal(kept, []string{"2", "3"}) {
			return fmt.Sprintf("revisions kept %v", kept)
		}
		return ""
	})
	eventually(t, 2*time.Minute, "the events from before revision 2 to expire", func() string {
		for _, ev := range typedAll[corev1.Event](t, n.read(t, "events").items) {
			if at := eventTime(ev); at.Before(rev2) {
				return fmt.Sprintf("event %s (%s) of %s is kept", ev.Name, ev.Reason, at.Format(time.RFC3339))
			}
		}
		return ""
	})
	created := n.getObject(t, "deployment/trimmed").GetCreationTimestamp().Time

	doc := n.historyOf(t, "deployment/trimmed", "--event-ttl", ttl.String())
	revs := slices.Sorted(maps.Keys(doc.rollouts("Deployment")))
	if !slices.Equal(revs, []int64{2, 3}) {
		t.Errorf("revisions %v, want kubectl's 2 and 3", revs)
	}
	if len(doc.Gaps) != 1 {
		t.Fatalf("gaps %+v, want one: from the creation to revision 2", doc.Gaps)
	}
	// The gap ends where the revisions start (revision 2's ReplicaSet) or, if earlier, where
	// the events the server still keeps start (20 s before the question).
	g, end := doc.Gaps[0], rev2
	if kept := doc.To.Add(-ttl); kept.Before(end) {
		end = kept
	}
	if !g.From.Time.Equal(created) || !doc.From.Equal(created) || !g.To.Time.Equal(end) || !end.After(created) {
		t.Errorf("gap %s to %s, want from the creation (%s) to %s: revision 2's ReplicaSet (%s) or the oldest event kept (%s)", g.From, g.To, created, end, rev2, doc.To.Add(-ttl))
	}
	for _, want := range []string{"it is before the oldest revision kept (revision 2", "events expire about 20s after they last happened", "no checkpoint was given"} {
		if !strings.Contains(g.Reason, want) {
			t.Errorf("gap reason %q lacks %q", g.Reason, want)
		}
	}
	for _, cov := range doc.Coverage {
		if cov.Source == v1alpha1.SourceRevision && !strings.Contains(cov.Description, "the revisions before 2 are no longer kept") {
			t.Errorf("the revisions' coverage does not say revision 1 is gone: %q", cov.Description)
		}
	}
	res := c.idx(t, "history", "deployment/trimmed", "-n", ns, "--event-ttl", ttl.String())
	mustSucceed(t, "kubectl idx history --event-ttl 20s", res)
	// The gap's row precedes every revision's.
	gapRow, revRow := strings.Index(res.Stdout, "   gap   "), strings.Index(res.Stdout, "   revision 2   ")
	if gapRow < 0 || revRow < 0 || gapRow > revRow || !strings.Contains(res.Stdout[gapRow:], "nothing known until") {
		t.Errorf("no gap row before revision 2's:\n%s", res.Stdout)
	}
	t.Logf("kubectl idx history deployment/trimmed --event-ttl 20s:\n%s", res.Stdout)

	// Told the default hour, the events would cover the whole life: no gap.
	if doc := n.historyOf(t, "deployment/trimmed"); len(doc.Gaps) != 0 {
		t.Errorf("with --event-ttl's default of 1h, gaps %+v, want none", doc.Gaps)
	}
}
