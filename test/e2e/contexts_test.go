package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// Several clusters in one answer: --context a,b,c and --all-contexts. A second control plane
// (beta) holds the fixtures too, plus objects of its own, so that the two clusters have
// namespaces, owners and nodes of the same names and objects that only one of them has. One
// kubeconfig reaches both and three that fail: alpha (the shared control plane, admin), beta
// (the second one, admin), closed and closed2 (ports nothing listens on) and narrow (the
// shared control plane as the user who may read pods in shop only). Listings and groupings
// are checked against `kubectl --context X get` for each context X, run at the same moment;
// relation commands against the same command asked of one context, and tree against the
// controller references of kubectl's objects; failures against kubectl's own words for them.

// contextsNamespace exists in beta only and holds a Deployment and a bare pod of its own.
const contextsNamespace = "contexts-beta"

// contextsWatchNamespace holds the pods the feed tests create in both clusters. envtest runs
// no namespace controller, so it is left behind on the shared control plane, empty.
const contextsWatchNamespace = "contexts-watch"

// contextsWorld is what the contexts tests run against.
type contextsWorld struct {
	// beta is the second control plane.
	beta *testenv.Env
	// dir holds the kubeconfigs.
	dir string
	// r runs kubectl and kubectl-idx with the kubeconfig of every context.
	r runner
	// kubeconfig has the contexts alpha, beta, closed, closed2 and narrow.
	kubeconfig string
	// closedOnly has the one context closed.
	closedOnly string
}

// sharedContexts is the world of the contexts tests, started by the first of them (a run of
// other tests pays nothing) and stopped by TestMain through stopContextsWorld.
var sharedContexts struct {
	once  sync.Once
	world *contextsWorld
	err   error
}

// contextsWorldFor returns the shared world, starting it on first use.
func contextsWorldFor(t *testing.T) *contextsWorld {
	t.Helper()
	sharedContexts.once.Do(func() {
		start := time.Now()
		sharedContexts.world, sharedContexts.err = startContextsWorld()
		if sharedContexts.err == nil {
			t.Logf("second control plane ready in %s", time.Since(start).Round(time.Millisecond))
		}
	})
	if sharedContexts.err != nil {
		t.Fatalf("the contexts tests' world: %v", sharedContexts.err)
	}
	return sharedContexts.world
}

// stopContextsWorld stops the second control plane, if a test started it, and removes the
// kubeconfigs; it returns code, or 1 when stopping failed after a passing run.
func stopContextsWorld(code int) int {
	w := sharedContexts.world
	if w == nil {
		return code
	}
	err := w.beta.Stop()
	_ = os.RemoveAll(w.dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e teardown: stopping the contexts tests' control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// TestContexts is not parallel with the other top-level tests: its feed test creates pods on
// the shared control plane, which the parallel tests comparing whole-cluster listings with
// kubectl must not see. Its answers subtests run in parallel with one another, then the feed
// tests run alone.
func TestContexts(t *testing.T) {
	w := contextsWorldFor(t)
	t.Run("answers", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			test func(*testing.T)
		}{
			{"table", w.testTable},
			{"json and yaml", w.testJSON},
			{"jq recipes", w.testJQ},
			{"jsonpath and go-template", w.testTemplates},
			{"empty answer", w.testEmpty},
			{"name", w.testName},
			{"unreachable context", w.testUnreachable},
			{"stalled context", w.testStalled},
			{"forbidden context", w.testForbidden},
			{"partial answers", w.testPartial},
			{"every context fails", w.testAllFail},
			{"all-contexts", w.testAllContexts},
			{"by-owner", w.testByOwner},
			{"merged groups", w.testMergedGroups},
			{"by-node", w.testByNode},
			{"relations", w.testRelations},
			{"bad input", w.testBadInput},
			{"plugin discovery", w.testPlugin},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.test(t)
			})
		}
	})
	t.Run("watch", w.testWatch)
}

// startContextsWorld starts beta, loads it and writes the kubeconfigs into a dir of its own.
func startContextsWorld() (w *contextsWorld, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	beta, err := testenv.Start(ctx, testenv.Options{CRDs: fixtures.CRDs()})
	if err != nil {
		return nil, fmt.Errorf("starting the second control plane: %w", err)
	}
	defer func() {
		if err != nil {
			_ = beta.Stop()
		}
	}()
	if _, err := fixtures.Load(ctx, beta.Clientset, beta.Dynamic); err != nil {
		return nil, fmt.Errorf("loading the fixtures into the second control plane: %w", err)
	}
	if err := loadBetaOnly(ctx, beta.Clientset); err != nil {
		return nil, fmt.Errorf("loading the second control plane's own objects: %w", err)
	}
	closed, err := testenv.ClosedAddr()
	if err != nil {
		return nil, err
	}
	closed2, err := testenv.ClosedAddr()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kubectl-idx-contexts-")
	if err != nil {
		return nil, err
	}
	w = &contextsWorld{beta: beta, dir: dir, kubeconfig: filepath.Join(dir, "kubeconfig"), closedOnly: filepath.Join(dir, "closed.kubeconfig")}
	if err := testenv.WriteKubeconfig(w.kubeconfig,
		testenv.KubeconfigContext{Name: "alpha", From: env.Kubeconfig},
		testenv.KubeconfigContext{Name: "beta", From: beta.Kubeconfig},
		testenv.KubeconfigContext{Name: "closed", From: env.Kubeconfig, Server: "https://" + closed},
		testenv.KubeconfigContext{Name: "closed2", From: env.Kubeconfig, Server: "https://" + closed2},
		testenv.KubeconfigContext{Name: "narrow", From: narrow.Kubeconfig, Namespace: fixtures.Shop},
	); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := testenv.WriteKubeconfig(w.closedOnly, testenv.KubeconfigContext{Name: "closed", From: env.Kubeconfig, Server: "https://" + closed}); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	w.r = runner{kubeconfig: w.kubeconfig}
	return w, nil
}

// loadBetaOnly creates what only beta has: namespace contextsNamespace with Deployment extra
// (a ReplicaSet and two pods, one of them on worker-3, which has no pod in the fixtures) and
// a bare pod, and in shop a bare pod labelled app=web, which beta's Service web selects.
func loadBetaOnly(ctx context.Context, cs kubernetes.Interface) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: contextsNamespace, Labels: map[string]string{fixtures.LabelKey: fixtures.LabelValue}}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
	}
	lbls := map[string]string{"app": "extra", fixtures.LabelKey: fixtures.LabelValue}
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: lbls},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "extra", Image: pauseImage}}},
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "extra", Namespace: contextsNamespace, Labels: lbls},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "extra"}},
			Template: tmpl,
		},
	}
	dep, err := cs.AppsV1().Deployments(contextsNamespace).Create(ctx, dep, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating deployment extra: %w", err)
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "extra-5d4c8f", Namespace: contextsNamespace, Labels: lbls,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name, UID: dep.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2), Selector: dep.Spec.Selector, Template: tmpl},
	}
	if rs, err = cs.AppsV1().ReplicaSets(contextsNamespace).Create(ctx, rs, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating replicaset extra-5d4c8f: %w", err)
	}
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "extra-5d4c8f-a1", Namespace: contextsNamespace, Labels: lbls}, Spec: *tmpl.Spec.DeepCopy()},
		{ObjectMeta: metav1.ObjectMeta{Name: "extra-5d4c8f-b2", Namespace: contextsNamespace, Labels: lbls}, Spec: *tmpl.Spec.DeepCopy()},
		{ObjectMeta: metav1.ObjectMeta{Name: "solo", Namespace: contextsNamespace}, Spec: *tmpl.Spec.DeepCopy()},
		{ObjectMeta: metav1.ObjectMeta{Name: "beta-only", Namespace: fixtures.Shop, Labels: map[string]string{"app": "web"}}, Spec: *tmpl.Spec.DeepCopy()},
	}
	for i, p := range pods[:2] {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
		p.Spec.NodeName = []string{"worker-1", "worker-3"}[i]
	}
	for _, p := range pods {
		if _, err := cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

// get runs `kubectl --context name get ARGS` and fails t unless it succeeds.
func (w *contextsWorld) get(t *testing.T, name string, args ...string) testenv.Result {
	t.Helper()
	args = append([]string{"--context", name, "get"}, args...)
	res := w.r.kubectl(t, args...)
	mustSucceed(t, "kubectl "+strings.Join(args, " "), res)
	return res
}

// items runs `kubectl --context name get ARGS -o json` and returns the items.
func (w *contextsWorld) items(t *testing.T, name string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	return kubectlItems(t, w.r, append([]string{"--context", name}, args...)...)
}

// kubectlFailure is the line kubectl ends with when `kubectl --context name get ARGS`
// fails: the cause in kubectl's wording, which kubectl-idx's warning for name must carry.
func (w *contextsWorld) kubectlFailure(t *testing.T, name string, args ...string) string {
	t.Helper()
	args = append([]string{"--context", name, "get"}, args...)
	res := w.r.kubectl(t, args...)
	lines := stderrLines(res.Stderr)
	if res.ExitCode == 0 || len(lines) == 0 {
		t.Fatalf("kubectl %s: want a failure\n%s", strings.Join(args, " "), res)
	}
	return lines[len(lines)-1]
}

// contextWarning is the line kubectl-idx prints on stderr for a context that failed.
func contextWarning(name, cause string) string {
	return fmt.Sprintf("warning: context %q: %s", name, cause)
}

// wantExit fails t unless res exited with code, printed no panic and, when stderr is not
// nil, printed exactly those stderr lines.
func wantExit(t *testing.T, what string, res testenv.Result, code int, stderr []string) {
	t.Helper()
	noPanic(t, what, res)
	if res.ExitCode != code {
		t.Errorf("%s: exit code %d, want %d\n%s", what, res.ExitCode, code, res)
	}
	if got := stderrLines(res.Stderr); stderr != nil && !slices.Equal(got, stderr) {
		t.Errorf("%s: stderr lines differ (-want +got):\n%s", what, cmp.Diff(stderr, got))
	}
}

// checkContextTables compares human-readable output over contexts names with `kubectl
// --context X get ARGS` for each: the same tables (one per kind), each with CONTEXT before
// kubectl's columns, and the rows of each context together, in the order of names, equal to
// kubectl's for that context but for the AGE cells.
func (w *contextsWorld) checkContextTables(t *testing.T, out string, names []string, args ...string) {
	t.Helper()
	got := parseTables(out)
	var withRows []string
	for _, name := range names {
		want := parseTables(w.get(t, name, args...).Stdout)
		if len(want) == 0 {
			// Nothing of these kinds in this context: no rows of it either.
			for i, tb := range got {
				for _, r := range tb.rows {
					if r[0] == name {
						t.Errorf("table %d has a row of context %s, where kubectl finds nothing: %q", i, name, r)
					}
				}
			}
			continue
		}
		withRows = append(withRows, name)
		if len(got) != len(want) {
			t.Fatalf("kubectl-idx printed %d tables, kubectl --context %s %d\nkubectl-idx:\n%s", len(got), name, len(want), out)
		}
		compareContextRows(t, got, want, name, "kubectl")
	}
	if len(withRows) == 0 {
		t.Fatalf("fixture problem: kubectl get %v printed no table for any of %q", args, names)
	}
	for i, tb := range got {
		var order []string
		for _, r := range tb.rows {
			if len(order) == 0 || order[len(order)-1] != r[0] {
				order = append(order, r[0])
			}
		}
		if !slices.Equal(order, withRows) {
			t.Errorf("table %d: the contexts' rows come as %q, want %q, each context's together", i, order, withRows)
		}
	}
	if t.Failed() {
		t.Logf("kubectl-idx:\n%s", out)
	}
}

func (w *contextsWorld) testTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		ctxs string
	}{
		{"pods in all namespaces", []string{"pods", "-A"}, "alpha,beta"},
		{"the contexts' order is the one given", []string{"pods", "-A"}, "beta,alpha"},
		{"pods in one namespace", []string{"pods", "-n", fixtures.Shop}, "alpha,beta"},
		{"wide", []string{"pods", "-A", "-o", "wide"}, "alpha,beta"},
		{"two kinds, a table each", []string{"deploy,svc", "-n", fixtures.Shop}, "alpha,beta"},
		{"cluster-scoped", []string{"nodes"}, "alpha,beta"},
		{"a custom resource", []string{"crontabs.stable.example.com", "-A"}, "beta,alpha"},
		{"sorted by a field, context by context", []string{"pods", "-A", "--sort-by", ".metadata.name"}, "alpha,beta"},
		{"labels as columns", []string{"pods", "-n", fixtures.Shop, "-L", "app"}, "beta,alpha"},
		{"objects in one context only", []string{"deploy", "-n", contextsNamespace}, "alpha,beta"},
		{"two kinds in one context only", []string{"deploy,pods", "-n", contextsNamespace}, "beta,alpha"},
		{"custom columns", []string{"pods", "-A", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"}, "alpha,beta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(slices.Clone(tc.args), "--context", tc.ctxs)
			res := w.r.idx(t, args...)
			wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, []string{})
			w.checkContextTables(t, res.Stdout, strings.Split(tc.ctxs, ","), tc.args...)
			if tc.args[0] == "pods" && slices.Contains(tc.args, "-A") && !slices.Contains(tc.args, "-o") {
				header := parseTables(res.Stdout)[0].cols
				if want := []string{"CONTEXT", "NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"}; !slices.Equal(header[:min(len(header), len(want))], want) {
					t.Errorf("header %q, want it to start with %q", header, want)
				}
			}
		})
	}
}

// testEmpty: an answer no context has objects for is kubectl's: nothing on stdout and, when
// every context says so, kubectl's notice on stderr.
func (w *contextsWorld) testEmpty(t *testing.T) {
	for _, args := range [][]string{
		{"pods", "-n", fixtures.EmptyNamespace},
		{"pods", "-A", "-l", "app=nope"},
	} {
		notice := w.get(t, "alpha", args...).Stderr
		if b := w.get(t, "beta", args...).Stderr; b != notice || notice == "" {
			t.Fatalf("fixture problem: kubectl's notices differ or are empty: %q, %q", notice, b)
		}
		a := append(slices.Clone(args), "--context", "alpha,beta")
		res := w.r.idx(t, a...)
		wantExit(t, "kubectl-idx "+strings.Join(a, " "), res, 0, nil)
		if res.Stdout != "" || res.Stderr != notice {
			t.Errorf("kubectl-idx %s: stdout %q, stderr %q; want nothing and kubectl's %q", strings.Join(a, " "), res.Stdout, res.Stderr, notice)
		}
	}
}

// testTemplates: jsonpath and go-template run over the List of per-context Lists.
func (w *contextsWorld) testTemplates(t *testing.T) {
	var wantPath, wantTemplate strings.Builder
	for _, name := range []string{"beta", "alpha"} {
		var podNames []string
		for _, p := range w.items(t, name, "pods", "-n", fixtures.Shop) {
			podNames = append(podNames, p.GetName())
		}
		fmt.Fprintf(&wantPath, "%s %s\n", name, strings.Join(podNames, " "))
		fmt.Fprintf(&wantTemplate, "%s %d\n", name, len(podNames))
	}
	for _, tc := range []struct{ output, want string }{
		{`jsonpath={range .items[*]}{.context}{" "}{.items[*].metadata.name}{"\n"}{end}`, wantPath.String()},
		{`go-template={{range .items}}{{.context}} {{len .items}}{{"\n"}}{{end}}`, wantTemplate.String()},
	} {
		args := []string{"pods", "-n", fixtures.Shop, "--context", "beta,alpha", "-o", tc.output}
		res := w.r.idx(t, args...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, []string{})
		if res.Stdout != tc.want {
			t.Errorf("kubectl-idx %s:\n%s\nwant, from kubectl context by context:\n%s", strings.Join(args, " "), res.Stdout, tc.want)
		}
	}
}

// contextList is a per-context List of an answer over several contexts.
type contextList struct {
	Context  string           `json:"context"`
	Error    string           `json:"error"`
	Warnings []string         `json:"warnings"`
	Items    []map[string]any `json:"items"`
}

// decodeContextList checks the v1 List of per-context Lists and returns the inner Lists
// and the outer List's warnings; the inner Lists also come back as plain documents for
// compareLists.
func decodeContextList(t *testing.T, out string, isYAML bool) ([]contextList, []map[string]any, []string) {
	t.Helper()
	doc := decodeDoc(t, "kubectl-idx", out, isYAML)
	if doc["apiVersion"] != "v1" || doc["kind"] != "List" {
		t.Errorf("document is %v %v, want a v1 List", doc["apiVersion"], doc["kind"])
	}
	data, _ := json.Marshal(doc)
	var outer struct {
		Items    []contextList `json:"items"`
		Warnings []string      `json:"warnings"`
	}
	if err := json.Unmarshal(data, &outer); err != nil {
		t.Fatalf("the per-context Lists: %v\n%s", err, out)
	}
	var raw []map[string]any
	for _, it := range doc["items"].([]any) {
		m, _ := it.(map[string]any)
		if m["apiVersion"] != "v1" || m["kind"] != "List" {
			t.Errorf("item of context %v is %v %v, want a v1 List", m["context"], m["apiVersion"], m["kind"])
		}
		raw = append(raw, m)
	}
	return outer.Items, raw, outer.Warnings
}

// checkContextLists compares the per-context Lists with `kubectl --context X get ARGS -o
// json` for each context X of names that answered; the others (failed, by name) must be an
// empty List with their error.
func (w *contextsWorld) checkContextLists(t *testing.T, out string, isYAML bool, names []string, failed map[string]string, args ...string) []string {
	t.Helper()
	lists, raw, warnings := decodeContextList(t, out, isYAML)
	var got []string
	for _, l := range lists {
		got = append(got, l.Context)
	}
	if !slices.Equal(got, names) {
		t.Fatalf("the Lists are of contexts %q, want %q", got, names)
	}
	for i, name := range names {
		l := lists[i]
		if cause, ok := failed[name]; ok {
			if l.Error != cause || len(l.Items) != 0 {
				t.Errorf("context %s: error %q and %d items, want error %q and no items", name, l.Error, len(l.Items), cause)
			}
			continue
		}
		if l.Error != "" || len(l.Warnings) != 0 {
			t.Errorf("context %s answered, yet its List has error %q, warnings %q", name, l.Error, l.Warnings)
		}
		want := decodeDoc(t, "kubectl", w.get(t, name, append(slices.Clone(args), "-o", "json")...).Stdout, false)
		if items, _ := want["items"].([]any); len(items) == 0 {
			t.Fatalf("fixture problem: kubectl --context %s get %v found nothing", name, args)
		}
		t.Run(name, func(t *testing.T) { compareLists(t, raw[i], want) })
	}
	return warnings
}

func (w *contextsWorld) testJSON(t *testing.T) {
	for _, output := range []string{"json", "yaml"} {
		t.Run(output, func(t *testing.T) {
			args := []string{"pods", "-A", "--context", "alpha,beta", "-o", output}
			res := w.r.idx(t, args...)
			wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, []string{})
			if warnings := w.checkContextLists(t, res.Stdout, output == "yaml", []string{"alpha", "beta"}, nil, "pods", "-A"); len(warnings) != 0 {
				t.Errorf("warnings %q for an answer every context gave", warnings)
			}
		})
	}
	t.Run("several kinds", func(t *testing.T) {
		args := []string{"deploy,svc,ct", "-n", fixtures.Shop, "--context", "beta,alpha", "-o", "json"}
		res := w.r.idx(t, args...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, []string{})
		w.checkContextLists(t, res.Stdout, false, []string{"beta", "alpha"}, nil, "deploy,svc,ct", "-n", fixtures.Shop)
	})
}

// testJQ runs the recipes for answers over several contexts through bash and real jq, with
// kubectl-idx discovered as `kubectl idx`, and compares them with what kubectl says context
// by context.
func (w *contextsWorld) testJQ(t *testing.T) {
	names := []string{"alpha", "beta"}
	var want strings.Builder
	counts := map[string]int{}
	for _, name := range names {
		for _, p := range w.items(t, name, "pods", "-A") {
			fmt.Fprintf(&want, "%s %s/%s\n", name, p.GetNamespace(), p.GetName())
			counts[name]++
		}
	}
	for _, tc := range []struct{ cmd, want string }{
		{
			cmd:  `kubectl idx pods -A --context alpha,beta -o json | jq -r '.items[] | .context as $c | .items[] | "\($c) \(.metadata.namespace)/\(.metadata.name)"'`,
			want: want.String(),
		},
		{
			cmd:  `kubectl idx pods -A --context alpha,beta -o json | jq '.items[] | select(.context=="beta") | .items | length'`,
			want: fmt.Sprintf("%d\n", counts["beta"]),
		},
		{
			// A partial answer exits 2: without pipefail, as most shells run pipelines.
			cmd:  `set +o pipefail; kubectl idx pods -A --context alpha,beta,closed -o json 2>/dev/null | jq -r '.warnings[]'`,
			want: fmt.Sprintf("context %q: %s\n", "closed", w.kubectlFailure(t, "closed", "pods", "-A")),
		},
	} {
		res := w.r.shell(t, tc.cmd)
		mustSucceed(t, tc.cmd, res)
		if res.Stdout != tc.want || res.Stderr != "" {
			t.Errorf("%s\nprinted\n%s\nwant (kubectl, context by context)\n%s\nstderr: %s", tc.cmd, res.Stdout, tc.want, res.Stderr)
		}
	}
}

func (w *contextsWorld) testName(t *testing.T) {
	for _, tc := range []struct {
		ctxs string
		args []string
	}{
		{"alpha,beta", []string{"deploy,pods", "-A"}},
		{"beta,alpha", []string{"deploy,pods", "-A"}},
		{"alpha,beta", []string{"pods", "-A", "--sort-by", ".metadata.name"}},
		{"alpha,beta", []string{"deploy", "-n", contextsNamespace}},
	} {
		args := append(slices.Clone(tc.args), "--context", tc.ctxs, "-o", "name")
		res := w.r.idx(t, args...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, []string{})
		var want strings.Builder
		for _, name := range strings.Split(tc.ctxs, ",") {
			for _, line := range strings.SplitAfter(w.get(t, name, append(slices.Clone(tc.args), "-o", "name")...).Stdout, "\n") {
				if line != "" {
					want.WriteString(name + "/" + line)
				}
			}
		}
		if res.Stdout != want.String() || want.Len() == 0 {
			t.Errorf("kubectl-idx %s:\n%s\nwant kubectl's lines, context by context, after the context and a slash:\n%s", strings.Join(args, " "), res.Stdout, want.String())
		}
	}
}

func (w *contextsWorld) testUnreachable(t *testing.T) {
	cause := w.kubectlFailure(t, "closed", "pods", "-A")
	if !strings.Contains(cause, "refused") {
		t.Fatalf("kubectl's failure for closed does not say the connection was refused: %s", cause)
	}
	warning := []string{contextWarning("closed", cause)}
	names := []string{"alpha", "beta", "closed"}
	ctxs := strings.Join(names, ",")

	t.Run("table", func(t *testing.T) {
		res := w.r.idx(t, "pods", "-A", "--context", ctxs)
		wantExit(t, "kubectl-idx pods -A --context "+ctxs, res, 2, warning)
		w.checkContextTables(t, res.Stdout, names[:2], "pods", "-A")
	})
	t.Run("json", func(t *testing.T) {
		res := w.r.idx(t, "pods", "-A", "--context", ctxs, "-o", "json")
		wantExit(t, "kubectl-idx pods -A -o json --context "+ctxs, res, 2, warning)
		warnings := w.checkContextLists(t, res.Stdout, false, names, map[string]string{"closed": cause}, "pods", "-A")
		if want := []string{fmt.Sprintf("context %q: %s", "closed", cause)}; !slices.Equal(warnings, want) {
			t.Errorf("warnings %q, want %q", warnings, want)
		}
	})
	t.Run("name", func(t *testing.T) {
		res := w.r.idx(t, "pods", "-A", "--context", "closed,beta", "-o", "name")
		wantExit(t, "kubectl-idx pods -A -o name --context closed,beta", res, 2, warning)
		want := regexp.MustCompile(`(?m)^beta/pod/`).ReplaceAllString(w.get(t, "beta", "pods", "-A", "-o", "name").Stdout, "beta/pod/")
		want = regexp.MustCompile(`(?m)^pod/`).ReplaceAllString(want, "beta/pod/")
		if res.Stdout != want {
			t.Errorf("stdout:\n%s\nwant beta's pods:\n%s", res.Stdout, want)
		}
	})
	t.Run("grouping", func(t *testing.T) {
		args := []string{"pods", "-A", "--by-namespace", "--context", "alpha,closed", "-o", "json"}
		res := w.r.idx(t, args...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 2, warning)
		var doc struct {
			Groups   []contextGroup `json:"groups"`
			Warnings []string       `json:"warnings"`
		}
		mustDecode(t, "output", res.Stdout, &doc)
		if want := []string{fmt.Sprintf("context %q: %s", "closed", cause)}; !slices.Equal(doc.Warnings, want) {
			t.Errorf("warnings %q, want %q", doc.Warnings, want)
		}
		n := 0
		for _, g := range doc.Groups {
			for _, c := range g.Contexts {
				if c.Context != "alpha" {
					t.Errorf("group %s has members of context %s", g.Name, c.Context)
				}
				n += len(c.Items)
			}
		}
		if want := len(w.items(t, "alpha", "pods", "-A")); n != want {
			t.Errorf("the groups hold %d pods, kubectl --context alpha %d", n, want)
		}
	})
	t.Run("relation", func(t *testing.T) {
		args := []string{"tree", "deployment/web", "-n", fixtures.Shop, "--context", "closed,alpha", "-o", "json"}
		res := w.r.idx(t, args...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 2, warning)
		single := w.r.idx(t, "tree", "deployment/web", "-n", fixtures.Shop, "--context", "alpha", "-o", "json")
		mustSucceed(t, "kubectl-idx tree deployment/web --context alpha", single)
		want := decodeDoc(t, "kubectl-idx", single.Stdout, false)
		doc := decodeDoc(t, "kubectl-idx", res.Stdout, false)
		items, _ := doc["items"].([]any)
		var found bool
		for _, it := range items {
			m, _ := it.(map[string]any)
			if m["context"] != "alpha" {
				continue
			}
			found = true
			got, _ := withoutContext(m)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("alpha's tree differs from alpha's alone (-alone +in the List):\n%s", diff)
			}
		}
		if !found {
			t.Errorf("no tree of context alpha:\n%s", res.Stdout)
		}
	})
	t.Run("one context keeps the old behavior", func(t *testing.T) {
		res := w.r.idx(t, "pods", "-A", "--context", "closed")
		wantExit(t, "kubectl-idx pods -A --context closed", res, 1, []string{cause})
		if res.Stdout != "" {
			t.Errorf("stdout not empty:\n%s", res.Stdout)
		}
	})
}

// testStalled: a context whose server accepts connections and never answers fails within
// --request-timeout and its retries while the others answer: they are asked concurrently.
func (w *contextsWorld) testStalled(t *testing.T) {
	p := startFaultProxy(t, env)
	p.Stall()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testenv.WriteKubeconfig(kc,
		testenv.KubeconfigContext{Name: "alpha", From: env.Kubeconfig},
		testenv.KubeconfigContext{Name: "stalled", From: env.Kubeconfig, Server: "https://" + p.Addr()},
		testenv.KubeconfigContext{Name: "beta", From: w.beta.Kubeconfig},
	); err != nil {
		t.Fatal(err)
	}
	r := runner{kubeconfig: kc}
	args := []string{"pods", "-A", "--context", "alpha,stalled,beta", "--request-timeout", faultTimeout.String()}
	res, err := testenv.Run(context.Background(), testenv.Cmd{Path: binary, Args: args, Env: env.Environ(kc, ""), Timeout: hangBound})
	if err != nil {
		t.Fatalf("kubectl-idx %s hung: %v\n%s", strings.Join(args, " "), err, res)
	}
	res.Stderr = dropDetectorNotice(res.Stderr)
	wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 2, nil)
	lines := stderrLines(res.Stderr)
	stalled := regexp.MustCompile(`^warning: context "stalled": Unable to connect to the server: .*(Client\.Timeout exceeded|deadline exceeded|TLS handshake timeout).*$`)
	if len(lines) != 1 || !stalled.MatchString(lines[0]) {
		t.Errorf("stderr:\n%s\nwant one line matching %s", res.Stderr, stalled)
	}
	t.Logf("after %s: %s", res.Wall.Round(time.Millisecond), strings.Join(lines, "; "))
	w2 := &contextsWorld{beta: w.beta, r: r}
	w2.checkContextTables(t, res.Stdout, []string{"alpha", "beta"}, "pods", "-A")
}

func (w *contextsWorld) testForbidden(t *testing.T) {
	cause := w.kubectlFailure(t, "narrow", "pods", "-A")
	if cause != forbiddenAtClusterScope(narrowUser) {
		t.Fatalf("kubectl --context narrow get pods -A: %q, want %q", cause, forbiddenAtClusterScope(narrowUser))
	}
	t.Run("all namespaces", func(t *testing.T) {
		res := w.r.idx(t, "pods", "-A", "--context", "alpha,narrow")
		wantExit(t, "kubectl-idx pods -A --context alpha,narrow", res, 2, []string{contextWarning("narrow", cause)})
		w.checkContextTables(t, res.Stdout, []string{"alpha"}, "pods", "-A")
	})
	t.Run("the namespace the user may read", func(t *testing.T) {
		res := w.r.idx(t, "pods", "-n", fixtures.Shop, "--context", "alpha,narrow")
		wantExit(t, "kubectl-idx pods -n shop --context alpha,narrow", res, 0, []string{})
		w.checkContextTables(t, res.Stdout, []string{"alpha", "narrow"}, "pods", "-n", fixtures.Shop)
	})
	t.Run("json", func(t *testing.T) {
		res := w.r.idx(t, "pods", "-A", "--context", "narrow,alpha", "-o", "json")
		wantExit(t, "kubectl-idx pods -A -o json --context narrow,alpha", res, 2, []string{contextWarning("narrow", cause)})
		warnings := w.checkContextLists(t, res.Stdout, false, []string{"narrow", "alpha"}, map[string]string{"narrow": cause}, "pods", "-A")
		if want := []string{fmt.Sprintf("context %q: %s", "narrow", cause)}; !slices.Equal(warnings, want) {
			t.Errorf("warnings %q, want %q", warnings, want)
		}
	})
}

// unreadableOwnerWarnings returns the warnings context name, whose user may list
// pods in namespace and nothing else, gives for --by-owner over them: one per kind
// of controller of the namespace's pods (read as the admin of alpha, which the
// context shares), sorted, each prefixed with the context.
func unreadableOwnerWarnings(t *testing.T, w *contextsWorld, name, user, namespace string) []string {
	t.Helper()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(env.Clientset.Discovery()))
	seen := map[schema.GroupKind]bool{}
	var out []string
	for _, pod := range w.items(t, "alpha", "pods", "-n", namespace) {
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			t.Fatal(err)
		}
		gk := schema.GroupKind{Group: gv.Group, Kind: ref.Kind}
		if seen[gk] {
			continue
		}
		seen[gk] = true
		m, err := mapper.RESTMapping(gk, gv.Version)
		if err != nil {
			t.Fatalf("mapping %s: %v", gk, err)
		}
		kindName, resource := gk.Kind, m.Resource.Resource
		if gk.Group != "" {
			kindName += "." + gk.Group
			resource += "." + gk.Group
		}
		out = append(out, fmt.Sprintf("context %q: owners above %s are unknown: %s is forbidden: User %q cannot list resource %q in API group %q in the namespace %q",
			name, kindName, resource, user, m.Resource.Resource, gk.Group, namespace))
	}
	if len(out) == 0 {
		t.Fatalf("fixture problem: no pod in %s has a controller", namespace)
	}
	slices.Sort(out)
	return out
}

// jsonWarnings returns the top-level warnings of a JSON answer.
func jsonWarnings(t *testing.T, stdout string) []string {
	t.Helper()
	var doc struct {
		Warnings []string `json:"warnings"`
	}
	mustDecode(t, "output", stdout, &doc)
	return doc.Warnings
}

// unprefixed returns warnings without the `context "x": ` each starts with.
func unprefixed(warnings []string) []string {
	out := make([]string, len(warnings))
	for i, w := range warnings {
		_, out[i], _ = strings.Cut(w, ": ")
	}
	return out
}

// testPartial: a context that answers in part (what its user may not read) is no failure: the
// exit code is 0, and its warnings, as it gives them alone, come prefixed with its name on
// stderr and in the document, and in its own List.
func (w *contextsWorld) testPartial(t *testing.T) {
	// prefixed returns the warnings of the one-context answer of args, named after name.
	prefixed := func(t *testing.T, r runner, name string, args ...string) []string {
		t.Helper()
		a := append(slices.Clone(args), "--context", name, "-o", "json")
		res := r.idx(t, a...)
		mustSucceed(t, "kubectl-idx "+strings.Join(a, " "), res)
		var doc struct {
			Warnings []string `json:"warnings"`
		}
		mustDecode(t, "output", res.Stdout, &doc)
		if len(doc.Warnings) == 0 {
			t.Fatalf("fixture problem: kubectl-idx %s answers with no warning", strings.Join(a, " "))
		}
		var out []string
		for _, warning := range doc.Warnings {
			out = append(out, fmt.Sprintf("context %q: %s", name, warning))
		}
		return out
	}
	stderrOf := func(warnings []string) []string {
		var out []string
		for _, warning := range warnings {
			out = append(out, "warning: "+warning)
		}
		return out
	}

	t.Run("owners the user may not read", func(t *testing.T) {
		// What narrow must say follows from what shop holds, read as the admin
		// before and after the answers: one warning per kind of controller of
		// shop's pods, which narrow may not list. The one-context answer and the
		// two-context answer are both held to it.
		args := []string{"pods", "-n", fixtures.Shop, "--by-owner", "--context", "alpha,narrow", "-o", "json"}
		one := []string{"pods", "-n", fixtures.Shop, "--by-owner", "--context", "narrow", "-o", "json"}
		for attempt := 1; ; attempt++ {
			want := unreadableOwnerWarnings(t, w, "narrow", narrowUser, fixtures.Shop)
			single := w.r.idx(t, one...)
			res := w.r.idx(t, args...)
			if again := unreadableOwnerWarnings(t, w, "narrow", narrowUser, fixtures.Shop); !slices.Equal(again, want) {
				// The pods' owners changed under the answers; read again.
				if attempt == 3 {
					t.Fatalf("shop's pods keep changing owners: %q, then %q", want, again)
				}
				continue
			}
			mustSucceed(t, "kubectl-idx "+strings.Join(one, " "), single)
			if got := jsonWarnings(t, single.Stdout); !slices.Equal(got, unprefixed(want)) {
				t.Errorf("kubectl-idx %s: warnings %q, want %q", strings.Join(one, " "), got, unprefixed(want))
			}
			wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, stderrOf(want))
			if got := jsonWarnings(t, res.Stdout); !slices.Equal(got, want) {
				t.Errorf("warnings %q, want %q", got, want)
			}
			return
		}
	})

	t.Run("namespaces the user may not read", func(t *testing.T) {
		// A user of beta who may list namespaces, and pods in shop only: kubectl-idx lists
		// namespace by namespace and says which it could not read.
		ctx := context.Background()
		const user = "contexts-ns-reader"
		u, err := w.beta.AddRoleUser(ctx, user, fixtures.Shop, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}})
		if err != nil {
			t.Fatal(err)
		}
		cr := &rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}}},
		}
		if _, err := w.beta.Clientset.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cr.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		}
		if _, err := w.beta.Clientset.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		if err := testenv.WriteKubeconfig(kc,
			testenv.KubeconfigContext{Name: "alpha", From: env.Kubeconfig},
			testenv.KubeconfigContext{Name: "partial", From: u.Kubeconfig},
		); err != nil {
			t.Fatal(err)
		}
		r := runner{kubeconfig: kc}
		want := prefixed(t, r, "partial", "pods", "-A")
		args := []string{"pods", "-A", "--context", "partial,alpha", "-o", "json"}
		res := r.idx(t, args...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, stderrOf(want))
		lists, raw, warnings := decodeContextList(t, res.Stdout, false)
		if !slices.Equal(warnings, want) {
			t.Errorf("warnings %q, want %q", warnings, want)
		}
		if len(lists) != 2 || lists[0].Context != "partial" || lists[0].Error != "" || len(lists[0].Warnings) != len(want) {
			t.Fatalf("the Lists: %+v; want partial's first, with no error and its %d warning(s)", lists, len(want))
		}
		// partial's objects are beta's pods in shop, as the admin reads them.
		adminShop := decodeDoc(t, "kubectl", w.get(t, "beta", "pods", "-n", fixtures.Shop, "-o", "json").Stdout, false)
		compareLists(t, raw[0], adminShop)
	})
}

func (w *contextsWorld) testAllFail(t *testing.T) {
	closed, closed2 := w.kubectlFailure(t, "closed", "pods"), w.kubectlFailure(t, "closed2", "pods")
	for _, tc := range []struct {
		name   string
		r      runner
		args   []string
		stderr []string
	}{
		{
			name: "two unreachable contexts", r: w.r, args: []string{"pods", "-A", "--context", "closed,closed2"},
			stderr: []string{contextWarning("closed", closed), contextWarning("closed2", closed2), "error: no context could answer: all 2 failed"},
		},
		{
			name: "json", r: w.r, args: []string{"pods", "-A", "--context", "closed2,closed", "-o", "json"},
			stderr: []string{contextWarning("closed2", closed2), contextWarning("closed", closed), "error: no context could answer: all 2 failed"},
		},
		{
			name: "all-contexts of a kubeconfig with one unreachable context", r: runner{kubeconfig: w.closedOnly}, args: []string{"pods", "-A", "--all-contexts"},
			stderr: []string{contextWarning("closed", closed), "error: no context could answer: all 1 failed"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.r.idx(t, tc.args...)
			wantExit(t, "kubectl-idx "+strings.Join(tc.args, " "), res, 1, tc.stderr)
			if res.Stdout != "" {
				t.Errorf("stdout not empty:\n%s", res.Stdout)
			}
		})
	}
}

// testAllContexts: --all-contexts asks every context of the kubeconfig, sorted by name.
func (w *contextsWorld) testAllContexts(t *testing.T) {
	res := w.r.idx(t, "pods", "-A", "--all-contexts")
	wantExit(t, "kubectl-idx pods -A --all-contexts", res, 2, []string{
		contextWarning("closed", w.kubectlFailure(t, "closed", "pods", "-A")),
		contextWarning("closed2", w.kubectlFailure(t, "closed2", "pods", "-A")),
		contextWarning("narrow", w.kubectlFailure(t, "narrow", "pods", "-A")),
	})
	w.checkContextTables(t, res.Stdout, []string{"alpha", "beta"}, "pods", "-A")
}

// contextGroup is a group of a GroupList over several contexts.
type contextGroup struct {
	Name string `json:"name"`
	Key  struct {
		Context string `json:"context"`
		None    bool   `json:"none"`
	} `json:"key"`
	Summary struct {
		Members int          `json:"members"`
		Node    *nodeSummary `json:"node"`
	} `json:"summary"`
	Items    json.RawMessage `json:"items"`
	Contexts []struct {
		Context string `json:"context"`
		Summary struct {
			Members int          `json:"members"`
			Node    *nodeSummary `json:"node"`
		} `json:"summary"`
		Items []*unstructured.Unstructured `json:"items"`
	} `json:"contexts"`
	// owner is the group as a one-context group reads, for ownerKeyOf.
	owner outputGroup
}

// idxContextGroups runs kubectl-idx ARGS -o json and decodes the GroupList, checking what
// holds of every group over several contexts: "contexts" instead of "items", each context's
// summary counting its items, and the group's summary their sum.
func (w *contextsWorld) idxContextGroups(t *testing.T, groupBy string, args ...string) []contextGroup {
	t.Helper()
	args = append(slices.Clone(args), "-o", "json")
	res := w.r.idx(t, args...)
	wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, []string{})
	var doc struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		GroupBy    string            `json:"groupBy"`
		Groups     []json.RawMessage `json:"groups"`
		Warnings   []string          `json:"warnings"`
	}
	mustDecode(t, "kubectl-idx "+strings.Join(args, " "), res.Stdout, &doc)
	if doc.APIVersion != "kubectl-idx.io/v1alpha1" || doc.Kind != "GroupList" || doc.GroupBy != groupBy {
		t.Errorf("document is %s %s by %q, want a kubectl-idx.io/v1alpha1 GroupList by %s", doc.APIVersion, doc.Kind, doc.GroupBy, groupBy)
	}
	if doc.Warnings == nil || len(doc.Warnings) != 0 {
		t.Errorf("warnings %q, want an empty array", doc.Warnings)
	}
	groups := make([]contextGroup, len(doc.Groups))
	for i, raw := range doc.Groups {
		g := &groups[i]
		if err := json.Unmarshal(raw, g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &g.owner); err != nil {
			t.Fatal(err)
		}
		if g.Items != nil {
			t.Errorf("group %s has items; over several contexts its members are under contexts", g.Name)
		}
		sum := 0
		for _, c := range g.Contexts {
			if c.Summary.Members != len(c.Items) {
				t.Errorf("group %s, context %s: summary.members %d, %d items", g.Name, c.Context, c.Summary.Members, len(c.Items))
			}
			sum += c.Summary.Members
		}
		if g.Summary.Members != sum {
			t.Errorf("group %s: summary.members %d, its contexts' add up to %d", g.Name, g.Summary.Members, sum)
		}
	}
	return groups
}

// ownerIndexOf is loadOwnerIndex for context name.
func (w *contextsWorld) ownerIndexOf(t *testing.T, name string) ownerIndex {
	t.Helper()
	return workloads{items: w.items(t, name, ownerKinds, "-A")}.owners()
}

// checkGroupsHuman checks human output of a grouping over several contexts against its JSON
// document: the column header with CONTEXT first, then one header line per group, in order,
// starting with header(group), and beneath it the members of each of the group's contexts,
// in order, each row starting with its context.
func checkGroupsHuman(t *testing.T, out string, groups []contextGroup, header func(contextGroup) string) {
	t.Helper()
	var want []humanGroup
	for _, g := range groups {
		h := humanGroup{header: header(g)}
		for _, c := range g.Contexts {
			for _, it := range c.Items {
				h.rows = append(h.rows, c.Context+" "+nsName(it))
			}
		}
		want = append(want, h)
	}
	checkGroupedHuman(t, out, contextsColumnHeader, want)
}

// contextsColumnHeader is the column header of grouped output over several contexts.
var contextsColumnHeader = regexp.MustCompile(`^  CONTEXT +NAMESPACE +NAME +`)

// groupNameLines is the -o name output a GroupList stands for: "<group> <context>/pod/<name>"
// for every member, group by group, context by context.
func groupNameLines(groups []contextGroup) string {
	var b strings.Builder
	for _, g := range groups {
		for _, c := range g.Contexts {
			for _, it := range c.Items {
				fmt.Fprintf(&b, "%s %s/%s/%s\n", g.Name, c.Context, strings.ToLower(it.GetKind()), it.GetName())
			}
		}
	}
	return b.String()
}

// checkGroupOutputs compares the -o name and human output of a grouping with its JSON.
func (w *contextsWorld) checkGroupOutputs(t *testing.T, groups []contextGroup, header func(contextGroup) string, args ...string) {
	t.Helper()
	t.Run("name", func(t *testing.T) {
		a := append(slices.Clone(args), "-o", "name")
		res := w.r.idx(t, a...)
		wantExit(t, "kubectl-idx "+strings.Join(a, " "), res, 0, []string{})
		if want := groupNameLines(groups); res.Stdout != want {
			t.Errorf("kubectl-idx %s:\n%s\nwant, from -o json:\n%s", strings.Join(a, " "), res.Stdout, want)
		}
	})
	t.Run("table", func(t *testing.T) {
		res := w.r.idx(t, args...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, []string{})
		checkGroupsHuman(t, res.Stdout, groups, header)
	})
}

// testByOwner: owners of different clusters are different groups, each with its context in
// its key; every pod of every context is under the top-level owner walked from kubectl's
// objects of that context.
func (w *contextsWorld) testByOwner(t *testing.T) {
	names := []string{"alpha", "beta"}
	want := map[string]map[string]ownerTruth{}
	for _, name := range names {
		owners := w.ownerIndexOf(t, name)
		want[name] = map[string]ownerTruth{}
		for _, p := range w.items(t, name, "pods", "-A") {
			want[name]["Pod "+nsName(p)] = owners.top(t, p)
		}
	}
	args := []string{"pods", "-A", "--by-owner", "--context", strings.Join(names, ",")}
	groups := w.idxContextGroups(t, "owner", args...)
	got := map[string]map[string]ownerTruth{"alpha": {}, "beta": {}}
	ownedIn := map[string][]string{}
	for _, g := range groups {
		key := ownerKeyOf(t, g.owner)
		var ctxs []string
		for _, c := range g.Contexts {
			ctxs = append(ctxs, c.Context)
		}
		switch {
		case !g.Key.None:
			if g.Key.Context == "" || !slices.Equal(ctxs, []string{g.Key.Context}) {
				t.Errorf("owner group %s: key.context %q, contexts %q; want the owner's context as key.context and its one context", g.Name, g.Key.Context, ctxs)
			}
			ownedIn[g.Name] = append(ownedIn[g.Name], g.Key.Context)
		case g.Key.Context != "":
			if !slices.Equal(ctxs, []string{g.Key.Context}) {
				t.Errorf("group %s of context %s has contexts %q", g.Name, g.Key.Context, ctxs)
			}
		default:
			// Objects without an owner, of every context: the contexts in the order given.
			if !slices.IsSortedFunc(ctxs, func(a, b string) int { return slices.Index(names, a) - slices.Index(names, b) }) || len(slices.Compact(slices.Clone(ctxs))) != len(ctxs) {
				t.Errorf("group %s: contexts %q, want each once in the order %q", g.Name, ctxs, names)
			}
		}
		for _, c := range g.Contexts {
			m, ok := got[c.Context]
			if !ok {
				t.Errorf("group %s has members of context %q, which was not asked", g.Name, c.Context)
				continue
			}
			for _, it := range c.Items {
				id := it.GetKind() + " " + nsName(it)
				if _, dup := m[id]; dup {
					t.Errorf("%s of context %s is in two groups", id, c.Context)
				}
				m[id] = key
			}
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("top-level owner per context and pod differs (-kubectl +kubectl-idx):\n%s", diff)
	}
	// Both clusters have a Deployment web, only beta a Deployment extra.
	if !slices.Equal(ownedIn["Deployment/web"], names) || !slices.Equal(ownedIn["Deployment/extra"], []string{"beta"}) {
		t.Errorf("Deployment/web is a group in contexts %q, Deployment/extra in %q; want %q and [beta]", ownedIn["Deployment/web"], ownedIn["Deployment/extra"], names)
	}
	w.checkGroupOutputs(t, groups, func(g contextGroup) string {
		if g.Key.None {
			return g.Name + "  "
		}
		ns := ""
		if g.owner.Key.Namespace != "" {
			ns = " -n " + g.owner.Key.Namespace
		}
		return g.Name + ns + " --context " + g.Key.Context + "  "
	}, args...)
}

// testMergedGroups: namespaces, label values and JSONPath values of several contexts gather
// the members of every context under one group; the group lists each context with members,
// in the order given.
func (w *contextsWorld) testMergedGroups(t *testing.T) {
	names := []string{"beta", "alpha"}
	pods := map[string][]*unstructured.Unstructured{}
	for _, name := range names {
		pods[name] = w.items(t, name, "pods", "-A")
	}
	for _, tc := range []struct {
		name    string
		flags   []string
		groupBy string
		key     func(*unstructured.Unstructured) (string, bool)
	}{
		{"namespace", []string{"--by-namespace"}, "namespace", func(u *unstructured.Unstructured) (string, bool) { return u.GetNamespace(), true }},
		{"label", []string{"--by-label", "app"}, "label", labelKey("app")},
		{"JSONPath", []string{"--by", "{.spec.serviceAccountName}"}, "jsonpath", jsonPathKey("spec", "serviceAccountName")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := map[string][]string{}
			var wantNames []string
			for _, name := range names {
				groupNames, members := keyedTruth(pods[name], []string{"Pod"}, tc.key)
				for _, g := range groupNames {
					if !slices.Contains(wantNames, g) {
						wantNames = append(wantNames, g)
					}
					for _, m := range members[g] {
						want[g] = append(want[g], name+": "+m)
					}
				}
			}
			slices.SortFunc(wantNames, func(a, b string) int {
				if (a == "<none>") != (b == "<none>") {
					if a == "<none>" {
						return 1
					}
					return -1
				}
				return strings.Compare(a, b)
			})
			args := append(append([]string{"pods", "-A"}, tc.flags...), "--context", strings.Join(names, ","))
			groups := w.idxContextGroups(t, tc.groupBy, args...)
			got := map[string][]string{}
			var gotNames []string
			shared, single := false, false
			for _, g := range groups {
				gotNames = append(gotNames, g.Name)
				if g.Key.Context != "" {
					t.Errorf("group %s has key.context %q: only owner groups belong to one context", g.Name, g.Key.Context)
				}
				shared = shared || len(g.Contexts) == 2
				single = single || len(g.Contexts) == 1
				for _, c := range g.Contexts {
					for _, it := range c.Items {
						got[g.Name] = append(got[g.Name], c.Context+": "+it.GetKind()+" "+nsName(it))
					}
				}
			}
			if !slices.Equal(gotNames, wantNames) {
				t.Errorf("groups %q, want %q", gotNames, wantNames)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("members differ (-kubectl +kubectl-idx):\n%s", diff)
			}
			if !shared || !single {
				t.Errorf("fixture problem: want groups with members of both contexts and of one (both: %v, one: %v)", shared, single)
			}
			w.checkGroupOutputs(t, groups, func(g contextGroup) string { return g.Name + "  " }, args...)
		})
	}
}

// testByNode: a node name of several clusters is one group; each context's part of its
// summary is that cluster's node as kubectl shows it, and the group's adds them up.
func (w *contextsWorld) testByNode(t *testing.T) {
	names := []string{"alpha", "beta"}
	truth := map[string]map[string]nodeSummary{}
	for _, name := range names {
		pods := typedAll[corev1.Pod](t, w.items(t, name, "pods", "-A"))
		truth[name] = map[string]nodeSummary{}
		for _, n := range typedAll[corev1.Node](t, w.items(t, name, "nodes")) {
			truth[name][n.Name] = nodeTruth(t, n, pods, false)
		}
	}
	args := []string{"pods", "-A", "--by-node", "--context", strings.Join(names, ",")}
	groups := w.idxContextGroups(t, "node", args...)
	for _, g := range groups {
		if g.Key.None {
			continue
		}
		if g.Summary.Node == nil {
			t.Errorf("node group %s has no summary.node", g.Name)
			continue
		}
		var sum nodeSummary
		var statuses []string
		for _, c := range g.Contexts {
			want, ok := truth[c.Context][g.Name]
			if !ok || c.Summary.Node == nil {
				t.Errorf("group %s, context %s: summary.node %v; kubectl has the node: %v", g.Name, c.Context, c.Summary.Node, ok)
				continue
			}
			gotNode := *c.Summary.Node
			gotNode.Requests = resources{CPUMillis: gotNode.Requests.CPUMillis, MemoryBytes: gotNode.Requests.MemoryBytes}
			gotNode.Allocatable = resources{CPUMillis: gotNode.Allocatable.CPUMillis, MemoryBytes: gotNode.Allocatable.MemoryBytes}
			if diff := cmp.Diff(want, gotNode); diff != "" {
				t.Errorf("group %s, context %s: node summary differs (-kubectl +kubectl-idx):\n%s", g.Name, c.Context, diff)
			}
			sum.Requests.CPUMillis += want.Requests.CPUMillis
			sum.Requests.MemoryBytes += want.Requests.MemoryBytes
			sum.Allocatable.CPUMillis += want.Allocatable.CPUMillis
			sum.Allocatable.MemoryBytes += want.Allocatable.MemoryBytes
			statuses = append(statuses, want.Status)
		}
		n := g.Summary.Node
		if n.Requests.CPUMillis != sum.Requests.CPUMillis || n.Requests.MemoryBytes != sum.Requests.MemoryBytes ||
			n.Allocatable.CPUMillis != sum.Allocatable.CPUMillis || n.Allocatable.MemoryBytes != sum.Allocatable.MemoryBytes {
			t.Errorf("group %s: requests %dm/%d bytes of allocatable %dm/%d bytes; its contexts' add up to %dm/%d of %dm/%d", g.Name,
				n.Requests.CPUMillis, n.Requests.MemoryBytes, n.Allocatable.CPUMillis, n.Allocatable.MemoryBytes,
				sum.Requests.CPUMillis, sum.Requests.MemoryBytes, sum.Allocatable.CPUMillis, sum.Allocatable.MemoryBytes)
		}
		if len(statuses) > 0 && len(slices.Compact(slices.Clone(statuses))) == 1 && n.Status != statuses[0] {
			t.Errorf("group %s: status %q, yet the node is %q in each of the contexts %v", g.Name, n.Status, statuses[0], names)
		}
	}
	w.checkGroupOutputs(t, groups, func(g contextGroup) string { return g.Name + "  " }, args...)
}

// withoutContext returns doc less its "context" field, and that field.
func withoutContext(doc map[string]any) (map[string]any, any) {
	out := map[string]any{}
	for k, v := range doc {
		if k != "context" {
			out[k] = v
		}
	}
	return out, doc["context"]
}

// testRelations: the relation commands over several contexts answer a v1 List of the
// documents each context gives alone, each with its context, and one table with CONTEXT first
// whose rows are each context's own; the tree of each context is the one kubectl's objects of
// that context make.
func (w *contextsWorld) testRelations(t *testing.T) {
	names := []string{"beta", "alpha"}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"tree", []string{"tree", "deployment/web", "-n", fixtures.Shop}},
		{"owners", []string{"owners", "pod/postgres-0", "-n", fixtures.Shop}},
		{"selects", []string{"selects", "service/web", "-n", fixtures.Shop}},
		{"selected-by", []string{"selected-by", "pod/postgres-0", "-n", fixtures.Shop}},
		{"uses", []string{"uses", "deployment/web", "-n", fixtures.Shop}},
		{"orphans", []string{"orphans", "-A"}},
		{"events", []string{"events", "deployment/web", "-n", fixtures.Shop}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append(slices.Clone(tc.args), "--context", strings.Join(names, ","), "-o", "json")
			res := w.r.idx(t, args...)
			wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 0, []string{})
			doc := decodeDoc(t, "kubectl-idx", res.Stdout, false)
			items, _ := doc["items"].([]any)
			if doc["apiVersion"] != "v1" || doc["kind"] != "List" || len(items) != len(names) {
				t.Fatalf("want a v1 List of %d documents, got %v %v of %d\n%s", len(names), doc["apiVersion"], doc["kind"], len(items), res.Stdout)
			}
			for i, name := range names {
				got, ctx := withoutContext(items[i].(map[string]any))
				if ctx != name {
					t.Errorf("document %d has context %v, want %s", i, ctx, name)
				}
				one := append(slices.Clone(tc.args), "--context", name, "-o", "json")
				single := w.r.idx(t, one...)
				mustSucceed(t, "kubectl-idx "+strings.Join(one, " "), single)
				if diff := cmp.Diff(decodeDoc(t, "kubectl-idx", single.Stdout, false), got); diff != "" {
					t.Errorf("context %s: the document differs from the one context's answer (-alone +in the List):\n%s", name, diff)
				}
				if tc.name == "tree" {
					w.checkWebTree(t, name, items[i])
				}
			}

			// The table: CONTEXT first, then each context's own rows.
			tableArgs := append(slices.Clone(tc.args), "--context", strings.Join(names, ","))
			res = w.r.idx(t, tableArgs...)
			wantExit(t, "kubectl-idx "+strings.Join(tableArgs, " "), res, 0, []string{})
			got := parseTables(res.Stdout)
			for _, name := range names {
				one := append(slices.Clone(tc.args), "--context", name)
				single := w.r.idx(t, one...)
				mustSucceed(t, "kubectl-idx "+strings.Join(one, " "), single)
				want := parseTables(single.Stdout)
				if len(want) == 0 || len(got) != len(want) {
					t.Fatalf("kubectl-idx printed %d tables over the contexts, %d for context %s alone\n%s\n%s", len(got), len(want), name, res.Stdout, single.Stdout)
				}
				// Times are masked, Events' LAST SEEN ("92m (x4 over 122m)")
				// too: the two reads are a moment apart, and may fall on both
				// sides of a minute.
				compareContextRows(t, got, want, name, "kubectl-idx alone")
			}
		})
	}
	t.Run("an object one context lacks", func(t *testing.T) {
		t.Parallel()
		// Pod beta-only is in namespace shop of beta only.
		cause := w.kubectlFailure(t, "alpha", "pod/beta-only", "-n", fixtures.Shop)
		args := []string{"tree", "pod/beta-only", "-n", fixtures.Shop, "--context", "alpha,beta"}
		res := w.r.idx(t, args...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " "), res, 2, []string{contextWarning("alpha", cause)})
		if tables := parseTables(res.Stdout); len(tables) != 1 || len(tables[0].rows) != 1 || tables[0].rows[0][0] != "beta" {
			t.Errorf("want one row, of beta:\n%s", res.Stdout)
		}
		res = w.r.idx(t, append(args, "-o", "json")...)
		wantExit(t, "kubectl-idx "+strings.Join(args, " ")+" -o json", res, 2, []string{contextWarning("alpha", cause)})
		doc := decodeDoc(t, "kubectl-idx", res.Stdout, false)
		uid := w.get(t, "beta", "pod/beta-only", "-n", fixtures.Shop, "-o", "jsonpath={.metadata.uid}").Stdout
		var found bool
		items, _ := doc["items"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			if m["context"] != "beta" {
				continue
			}
			found = true
			if root, _ := m["root"].(map[string]any); root["uid"] != uid {
				t.Errorf("beta's tree has root %v, want Pod beta-only, uid %s", root, uid)
			}
		}
		if !found {
			t.Errorf("no document of context beta:\n%s", res.Stdout)
		}
	})
}

// checkWebTree checks context name's tree of Deployment web against kubectl: its root is the
// Deployment and its pods are those whose controller references lead to it.
func (w *contextsWorld) checkWebTree(t *testing.T, name string, doc any) {
	t.Helper()
	data, _ := json.Marshal(doc)
	var tree treeDoc
	if err := json.Unmarshal(data, &tree); err != nil || tree.Root == nil {
		t.Fatalf("context %s: not a tree (%v):\n%s", name, err, data)
	}
	owners := w.ownerIndexOf(t, name)
	var want []string
	var root string
	for _, d := range w.items(t, name, "deployments", "-n", fixtures.Shop) {
		if d.GetName() == "web" {
			root = string(d.GetUID())
		}
	}
	for _, p := range w.items(t, name, "pods", "-n", fixtures.Shop) {
		if o := owners.top(t, p); o.UID == root && root != "" {
			want = append(want, string(p.GetUID()))
		}
	}
	var got []string
	var walk func(it *treeItem)
	walk = func(it *treeItem) {
		if it.Kind == "Pod" {
			got = append(got, it.UID)
		}
		for _, c := range it.Children {
			walk(c)
		}
	}
	walk(tree.Root)
	slices.Sort(want)
	slices.Sort(got)
	if tree.Root.UID != root || len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("context %s: tree of %s (uid %s) with pods %q; kubectl: Deployment web uid %s, pods %q", name, tree.Root.Name, tree.Root.UID, got, root, want)
	}
}

// testBadInput: what is wrong with --context and --all-contexts is said in one line before
// any request, with exit code 1 and nothing on stdout.
func (w *contextsWorld) testBadInput(t *testing.T) {
	// One wording for one unknown context or one among several: kubectl's
	// when the namespace is given (without -n it validates the whole
	// configuration first and says "Error in configuration: context was not
	// found for specified context: nope").
	const unknown = `error: context "nope" does not exist`
	if k := w.kubectlFailure(t, "nope", "pods", "-n", fixtures.Shop); k != unknown {
		t.Errorf("kubectl says %q for an unknown context with -n; the test's %q no longer follows it", k, unknown)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pods", "--context", "alpha,,beta"}, `error: invalid --context "alpha,,beta": empty context name`},
		{[]string{"pods", "--context", "alpha,"}, `error: invalid --context "alpha,": empty context name`},
		{[]string{"pods", "--context", "alpha,beta,alpha"}, `error: invalid --context "alpha,beta,alpha": context "alpha" is named twice`},
		{[]string{"pods", "--all-contexts", "--context", "alpha"}, "error: --all-contexts and --context cannot be used together"},
		{[]string{"pods", "-A", "--by-owner", "--context", "alpha,nope"}, unknown},
		{[]string{"pods", "--context", "alpha,nope"}, unknown},
		{[]string{"pods", "--context", "nope"}, unknown},
		{[]string{"pods", "--context", "nope", "-n", fixtures.Shop}, unknown},
		{[]string{"tree", "deployment/web", "--context", "nope"}, unknown},
		{[]string{"tree", "deployment/web", "-n", fixtures.Shop, "--context", "alpha,,beta"}, `error: invalid --context "alpha,,beta": empty context name`},
		{[]string{"tree", "deployment/web", "-n", fixtures.Shop, "--context", "beta,nope"}, unknown},
		{[]string{"watch", "pods", "--context", "beta,beta"}, `error: invalid --context "beta,beta": context "beta" is named twice`},
		{[]string{"watch", "pods", "--all-contexts", "--context", "alpha,beta"}, "error: --all-contexts and --context cannot be used together"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			res := w.r.idx(t, tc.args...)
			wantExit(t, "kubectl-idx "+strings.Join(tc.args, " "), res, 1, []string{tc.want})
			if res.Stdout != "" {
				t.Errorf("stdout not empty:\n%s", res.Stdout)
			}
			// At -v=6 client-go logs every request it makes: there must be none.
			res = w.r.idx(t, append(slices.Clone(tc.args), "-v=6")...)
			lines := stderrLines(res.Stderr)
			if res.ExitCode != 1 || len(lines) == 0 || lines[len(lines)-1] != tc.want {
				t.Errorf("-v=6: exit code %d, stderr:\n%s\nwant exit code 1 and the same last line", res.ExitCode, res.Stderr)
			}
			for _, l := range lines {
				if strings.Contains(l, "https://") {
					t.Errorf("-v=6: a request before the error: %s", l)
				}
			}
		})
	}
}

// testPlugin: kubectl hands --context a,b to the plugin untouched, and the plugin's exit code
// back to the shell.
func (w *contextsWorld) testPlugin(t *testing.T) {
	direct := w.r.idx(t, "pods", "-A", "--context", "alpha,beta", "-o", "name")
	mustSucceed(t, "kubectl-idx pods -A --context alpha,beta -o name", direct)
	for _, script := range []string{
		"kubectl idx pods -A --context alpha,beta -o name",
		"kubectl idx --context alpha,beta pods -A -o name",
		"kubectl idx --context=alpha,beta pods -A -o name",
	} {
		res := w.r.shell(t, script)
		wantExit(t, script, res, 0, []string{})
		if res.Stdout != direct.Stdout || !strings.HasPrefix(res.Stdout, "alpha/pod/") || !strings.Contains(res.Stdout, "\nbeta/pod/") {
			t.Errorf("%s:\n%s\nwant what the binary prints itself:\n%s", script, res.Stdout, direct.Stdout)
		}
	}
	cause := w.kubectlFailure(t, "closed", "pods", "-A")
	res := w.r.shell(t, "kubectl idx pods -A --context alpha,closed -o name")
	wantExit(t, "kubectl idx pods -A --context alpha,closed -o name", res, 2, []string{contextWarning("closed", cause)})
	if !strings.HasPrefix(res.Stdout, "alpha/pod/") {
		t.Errorf("stdout lacks alpha's pods:\n%s", res.Stdout)
	}
}

// ctxEvent is a feed event of a feed over several contexts.
type ctxEvent struct {
	Context string `json:"context"`
	watchEvent
}

// contextsFeed is a `kubectl-idx watch -o json` over several contexts.
type contextsFeed struct{ *feedRun }

func (f contextsFeed) events(t *testing.T) []ctxEvent {
	t.Helper()
	return feedEvents[ctxEvent](t, f.snapshot())
}

// has reports whether the feed printed an event of type typ for uid from context name.
func (f contextsFeed) has(t *testing.T, typ, name string, uid types.UID) bool {
	for _, ev := range f.events(t) {
		if ev.Type == typ && ev.Object.Metadata.UID == string(uid) && ev.Context == name {
			return true
		}
	}
	return false
}

// stop ends the feed with SIGINT and returns its result after checking its exit code.
func (f contextsFeed) stop(t *testing.T, code int) testenv.Result {
	t.Helper()
	res := f.ended(t, syscall.SIGINT, 30*time.Second)
	wantExit(t, "kubectl-idx watch", res, code, nil)
	return res
}

// testWatch: the feed over several contexts names the context of every event; a context
// that cannot be reached is a warning and the others' events keep coming.
func (w *contextsWorld) testWatch(t *testing.T) {
	ctx := context.Background()
	clusters := map[string]kubernetes.Interface{"alpha": env.Clientset, "beta": w.beta.Clientset}
	for name, cs := range clusters {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: contextsWatchNamespace, Labels: map[string]string{fixtures.LabelKey: fixtures.LabelValue}}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating namespace %s in %s: %v", ns.Name, name, err)
		}
	}
	// create makes pod name in the cluster of context c, deleted when t ends.
	create := func(t *testing.T, c, name string) types.UID {
		t.Helper()
		cs := clusters[c]
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: contextsWatchNamespace, Labels: map[string]string{fixtures.LabelKey: fixtures.LabelValue}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: pauseImage}}},
		}
		p, err := cs.CoreV1().Pods(contextsWatchNamespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating pod %s in %s: %v", name, c, err)
		}
		t.Cleanup(func() {
			_ = cs.CoreV1().Pods(contextsWatchNamespace).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		})
		return p.UID
	}

	t.Run("json", func(t *testing.T) {
		names := []string{"alpha", "beta"}
		before := map[string][]string{}
		total := 0
		for _, name := range names {
			for _, p := range w.items(t, name, "pods", "-A") {
				before[name] = append(before[name], nsName(p))
				total++
			}
		}
		f := contextsFeed{startFeed(t, env, w.kubeconfig, "watch", "pods", "-A", "--context", "alpha,beta", "-o", "json")}
		f.waitFor(t, "the initial state of both contexts", func(lines []string, _ string) bool { return len(lines) >= total })
		uids := map[string]types.UID{}
		for _, name := range names {
			uids[name] = create(t, name, "probe")
		}
		f.waitFor(t, "the new pod of each context", func([]string, string) bool {
			return f.has(t, "ADDED", "alpha", uids["alpha"]) && f.has(t, "ADDED", "beta", uids["beta"])
		})
		res := f.stop(t, 0)
		if res.Stderr != "" {
			t.Errorf("stderr not empty:\n%s", res.Stderr)
		}
		initial := map[string][]string{}
		for i, ev := range f.events(t) {
			if !slices.Contains(names, ev.Context) {
				t.Errorf("event %d (%v) has context %q", i, ev, ev.Context)
				continue
			}
			if i < total {
				if ev.Type != "ADDED" {
					t.Errorf("initial event %v of %s, want ADDED", ev, ev.Context)
				}
				initial[ev.Context] = append(initial[ev.Context], ev.Object.Metadata.Namespace+"/"+ev.Object.Metadata.Name)
			}
			for name, uid := range uids {
				if ev.Object.Metadata.UID == string(uid) && ev.Context != name {
					t.Errorf("event %v is of the pod created in %s, yet has context %s", ev, name, ev.Context)
				}
			}
		}
		if diff := cmp.Diff(before, initial); diff != "" {
			t.Errorf("initial events per context differ from kubectl (-kubectl +kubectl-idx):\n%s", diff)
		}
	})

	t.Run("an unreachable context", func(t *testing.T) {
		cause := w.kubectlFailure(t, "closed", "pods", "-n", contextsWatchNamespace)
		f := contextsFeed{startFeed(t, env, w.kubeconfig, "watch", "pods", "-n", contextsWatchNamespace, "--context", "alpha,closed,beta", "-o", "json")}
		f.waitFor(t, "the warning about closed", func(_ []string, stderr string) bool {
			return strings.Contains(stderr, contextWarning("closed", cause))
		})
		uids := map[string]types.UID{"beta": create(t, "beta", "probe-b"), "alpha": create(t, "alpha", "probe-a")}
		f.waitFor(t, "the new pod of alpha and of beta", func([]string, string) bool {
			return f.has(t, "ADDED", "alpha", uids["alpha"]) && f.has(t, "ADDED", "beta", uids["beta"])
		})
		res := f.stop(t, 2)
		if got := stderrLines(res.Stderr); !slices.Equal(got, []string{contextWarning("closed", cause)}) {
			t.Errorf("stderr lines %q, want the one warning about closed", got)
		}
		for _, ev := range f.events(t) {
			if ev.Context != "alpha" && ev.Context != "beta" {
				t.Errorf("event %v has context %q", ev, ev.Context)
			}
		}
	})

	t.Run("an outage of one context", func(t *testing.T) {
		// alpha through a proxy that drops its connections and refuses new ones for a while.
		p := startFaultProxy(t, env)
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		if err := testenv.WriteKubeconfig(kc,
			testenv.KubeconfigContext{Name: "alpha", From: env.Kubeconfig, Server: "https://" + p.Addr()},
			testenv.KubeconfigContext{Name: "beta", From: w.beta.Kubeconfig},
		); err != nil {
			t.Fatal(err)
		}
		f := contextsFeed{startFeed(t, env, kc, "watch", "pods", "-n", contextsWatchNamespace, "--context", "alpha,beta", "-o", "json")}
		before := create(t, "alpha", "before")
		f.waitFor(t, "alpha's pod before the outage", func([]string, string) bool { return f.has(t, "ADDED", "alpha", before) })

		if err := p.Refuse(true); err != nil {
			t.Fatal(err)
		}
		p.Reset()
		interrupted := regexp.MustCompile(`(?m)^warning: context "alpha": watch of pods interrupted: .+; reconnecting$`)
		f.waitFor(t, "the warning that alpha's watch is interrupted", func(_ []string, stderr string) bool { return interrupted.MatchString(stderr) })
		during := create(t, "beta", "during")
		f.waitFor(t, "beta's pod during alpha's outage", func([]string, string) bool { return f.has(t, "ADDED", "beta", during) })

		if err := p.Refuse(false); err != nil {
			t.Fatal(err)
		}
		reconnected := regexp.MustCompile(`(?m)^warning: context "alpha": watch of pods reconnected after \S+$`)
		f.waitFor(t, "alpha's watch to reconnect", func(_ []string, stderr string) bool { return reconnected.MatchString(stderr) })
		after := create(t, "alpha", "after")
		f.waitFor(t, "alpha's pod after the outage", func([]string, string) bool { return f.has(t, "ADDED", "alpha", after) })
		res := f.stop(t, 0)
		for _, l := range stderrLines(res.Stderr) {
			if !strings.HasPrefix(l, `warning: context "alpha": watch of pods `) {
				t.Errorf("stderr line %q is not a warning about alpha's watch", l)
			}
		}
		for _, ev := range f.events(t) {
			if ev.Object.Metadata.UID == string(during) && ev.Context != "beta" || ev.Context != "alpha" && ev.Context != "beta" {
				t.Errorf("event %v has context %q", ev, ev.Context)
			}
		}
	})

	t.Run("events", func(t *testing.T) {
		// A ConfigMap of the same name in each cluster, and an event about it
		// recorded in each once the feed runs: events -w follows each
		// context's, every line naming its context.
		uids := map[string]types.UID{}
		for name, cs := range clusters {
			cm, err := cs.CoreV1().ConfigMaps(contextsWatchNamespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe-events"}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			uids[name] = cm.UID
			t.Cleanup(func() {
				_ = cs.CoreV1().ConfigMaps(contextsWatchNamespace).Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
			})
		}
		f := contextsFeed{startFeed(t, env, w.kubeconfig, "events", "configmap/probe-events", "-n", contextsWatchNamespace, "-w", "--context", "alpha,beta", "-o", "json")}
		for name, cs := range clusters {
			now := metav1.Now()
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Name: "probe-events." + name, Namespace: contextsWatchNamespace},
				InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Namespace: contextsWatchNamespace, Name: "probe-events", UID: uids[name]},
				Reason:         "Probed", Message: "recorded in " + name, Type: corev1.EventTypeNormal,
				FirstTimestamp: now, LastTimestamp: now, Count: 1, Source: corev1.EventSource{Component: "e2e"},
			}
			if _, err := cs.CoreV1().Events(contextsWatchNamespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		f.waitFor(t, "each context's event", func(lines []string, _ string) bool {
			seen := map[string]bool{}
			for _, ev := range f.events(t) {
				seen[ev.Context+"/"+ev.Object.Metadata.Name] = true
			}
			return seen["alpha/probe-events.alpha"] && seen["beta/probe-events.beta"]
		})
		res := f.stop(t, 0)
		if res.Stderr != "" {
			t.Errorf("stderr not empty:\n%s", res.Stderr)
		}
		for _, ev := range f.events(t) {
			if want := "probe-events." + ev.Context; ev.Object.Metadata.Name != want {
				t.Errorf("event %v of context %q, want only %s", ev, ev.Context, want)
			}
		}
	})

	t.Run("table", func(t *testing.T) {
		f := contextsFeed{startFeed(t, env, w.kubeconfig, "watch", "pods", "-n", contextsWatchNamespace, "--context", "beta,alpha")}
		// The namespace is empty: the feed prints nothing before the first event.
		create(t, "beta", "probe-t")
		row := regexp.MustCompile(`^beta +\d\d:\d\d:\d\d +ADDED +Pod +` + contextsWatchNamespace + ` +probe-t +`)
		f.waitFor(t, "the new pod's row", func(lines []string, _ string) bool {
			return slices.ContainsFunc(lines, row.MatchString)
		})
		f.stop(t, 0)
		lines := f.snapshot()
		if header := regexp.MustCompile(`^CONTEXT +TIME +EVENT +KIND +NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE$`); !header.MatchString(lines[0]) {
			t.Errorf("first line %q is not the header with CONTEXT first", lines[0])
		}
		for _, l := range lines[1:] {
			if l != "" && !strings.HasPrefix(l, "alpha ") && !strings.HasPrefix(l, "beta ") {
				t.Errorf("row %q does not start with its context", l)
			}
		}
	})
}

// TestContextsREADMERecipes runs every recipe of README.md and docs/*.md over several contexts (the ones
// TestREADMERecipes leaves out) as written, through bash without pipefail as most shells run
// pipelines (a partial answer exits 2; the recipe prints jq's answer), with kubectl-idx
// discovered as `kubectl idx`. The reference is the same jq program run on the document
// built from `kubectl --context X get -o json` of each context: a v1 List of per-context
// Lists, or a GroupList for --by-owner and --by-namespace.
func TestContextsREADMERecipes(t *testing.T) {
	w := contextsWorldFor(t)
	var found int
	for _, line := range docLines(t) {
		m := readmeRecipe.FindStringSubmatch(line)
		if m == nil || !manyContexts(m[1]) {
			continue
		}
		found++
		cmd := strings.TrimSpace(m[1])
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			w.checkREADMERecipe(t, cmd)
		})
	}
	if found == 0 {
		t.Fatal("README.md and docs/*.md have no jq recipe over several contexts")
	}
}

// checkREADMERecipe runs one recipe and its reference and compares their output.
func (w *contextsWorld) checkREADMERecipe(t *testing.T, cmd string) {
	idxPart, jqPart, ok := strings.Cut(cmd, " | ")
	fields := strings.Fields(idxPart)
	if !ok || len(fields) < 3 || strings.ContainsAny(idxPart, `'"`) {
		t.Fatalf("recipe %q is not `kubectl idx ARGS | jq ...` with plain ARGS", cmd)
	}
	var names, getArgs []string
	by := ""
	for i := 2; i < len(fields); i++ {
		switch f := fields[i]; {
		case f == "--all-contexts":
			names = []string{"alpha", "beta", "closed", "closed2", "narrow"}
		case f == "--context" && i+1 < len(fields):
			i++
			names = strings.Split(fields[i], ",")
		case strings.HasPrefix(f, "--context="):
			names = strings.Split(strings.TrimPrefix(f, "--context="), ",")
		case f == "-o" && i+1 < len(fields) && fields[i+1] == "json":
			i++
		case strings.HasPrefix(f, "--by"):
			by = f
		default:
			getArgs = append(getArgs, f)
		}
	}
	var doc any
	if by == "" {
		doc = w.referenceList(t, names, getArgs)
	} else {
		doc = w.referenceGroups(t, names, getArgs, by)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "reference.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	reference := "jq " + strings.TrimPrefix(strings.TrimSpace(jqPart), "jq ") + " < " + file
	want := w.r.shell(t, reference)
	mustSucceed(t, reference, want)
	if want.Stdout == "" {
		t.Fatalf("fixture problem: the reference prints nothing: %s", reference)
	}
	got := w.r.shell(t, "set +o pipefail; "+cmd)
	mustSucceed(t, cmd, got)
	if got.Stdout != want.Stdout {
		t.Errorf("%s\nprints:\n%s\nwant (the same jq on kubectl's objects of each context):\n%s", cmd, got.Stdout, want.Stdout)
	}
}

// tryItems runs `kubectl --context name get ARGS -o json` and returns the items, or the
// line kubectl failed with.
func (w *contextsWorld) tryItems(t *testing.T, name string, args ...string) ([]*unstructured.Unstructured, string) {
	t.Helper()
	a := append(append([]string{"--context", name, "get"}, args...), "-o", "json")
	res := w.r.kubectl(t, a...)
	if res.ExitCode != 0 {
		lines := stderrLines(res.Stderr)
		if len(lines) == 0 {
			t.Fatalf("kubectl %s failed silently", strings.Join(a, " "))
		}
		return nil, lines[len(lines)-1]
	}
	return listItems(t, "kubectl "+strings.Join(a, " "), res.Stdout), ""
}

// referenceList is the v1 List of per-context Lists the README documents, from kubectl.
func (w *contextsWorld) referenceList(t *testing.T, names, args []string) map[string]any {
	t.Helper()
	lists := []any{}
	warnings := []string{}
	for _, name := range names {
		items, cause := w.tryItems(t, name, args...)
		l := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "context": name}
		objs := []any{}
		for _, it := range items {
			objs = append(objs, it.Object)
		}
		l["items"] = objs
		if cause != "" {
			l["error"] = cause
			warnings = append(warnings, fmt.Sprintf("context %q: %s", name, cause))
		}
		lists = append(lists, l)
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": lists, "warnings": warnings}
}

// referenceGroups is the GroupList the README documents for grouping flag by over contexts
// names, from kubectl: owner groups apart per context, sorted by kind, namespace and name,
// then context; namespace groups gathering every context's members; each group with its
// contexts' members in the order given and summaries counting them.
func (w *contextsWorld) referenceGroups(t *testing.T, names, args []string, by string) map[string]any {
	t.Helper()
	type group struct {
		sortKey, name string
		key           map[string]any
		contexts      []string
		items         map[string][]any
	}
	groups := map[string]*group{}
	warnings := []string{}
	for ci, name := range names {
		items, cause := w.tryItems(t, name, args...)
		if cause != "" {
			warnings = append(warnings, fmt.Sprintf("context %q: %s", name, cause))
			continue
		}
		var owners ownerIndex
		if by == "--by-owner" {
			owners = w.ownerIndexOf(t, name)
		}
		for _, it := range items {
			var id string
			g := &group{items: map[string][]any{}}
			switch by {
			case "--by-owner":
				o := owners.top(t, it)
				g.name = o.groupName()
				if o.None {
					id, g.sortKey, g.key = "<none>", "\xff", map[string]any{"none": true}
					break
				}
				id = name + "\x00" + o.UID
				g.sortKey = fmt.Sprintf("%s/%s/%s\x00%03d", o.Kind, o.Namespace, o.Name, ci)
				g.key = map[string]any{"context": name, "apiVersion": o.APIVersion, "kind": o.Kind, "namespace": o.Namespace, "name": o.Name, "uid": o.UID}
				if o.Dangling {
					g.key["dangling"] = true
				}
			case "--by-namespace":
				id, g.name, g.sortKey, g.key = it.GetNamespace(), it.GetNamespace(), it.GetNamespace(), map[string]any{"namespace": it.GetNamespace()}
			default:
				t.Fatalf("no reference for %s: add one to referenceGroups", by)
			}
			if have, ok := groups[id]; ok {
				g = have
			} else {
				groups[id] = g
			}
			if !slices.Contains(g.contexts, name) {
				g.contexts = append(g.contexts, name)
			}
			g.items[name] = append(g.items[name], it.Object)
		}
	}
	sorted := make([]*group, 0, len(groups))
	for _, g := range groups {
		sorted = append(sorted, g)
	}
	slices.SortFunc(sorted, func(a, b *group) int { return strings.Compare(a.sortKey, b.sortKey) })
	out := []any{}
	for _, g := range sorted {
		var ctxs []any
		n := 0
		for _, c := range g.contexts {
			ctxs = append(ctxs, map[string]any{"context": c, "summary": map[string]any{"members": len(g.items[c])}, "items": g.items[c]})
			n += len(g.items[c])
		}
		out = append(out, map[string]any{"name": g.name, "key": g.key, "summary": map[string]any{"members": n}, "contexts": ctxs})
	}
	return map[string]any{"apiVersion": "kubectl-idx.io/v1alpha1", "kind": "GroupList", "groupBy": strings.TrimPrefix(by, "--by-"), "groups": out, "warnings": warnings}
}

// maskTimes masks the relative times in every cell of tb (maskTimeCell).
func maskTimes(tb table) table {
	out := table{header: tb.header, cols: tb.cols}
	for _, row := range tb.rows {
		r := slices.Clone(row)
		for i, col := range tb.cols {
			if i < len(r) {
				r[i] = maskTimeCell(col, r[i])
			}
		}
		out.rows = append(out.rows, r)
	}
	return out
}

// compareContextRows compares, table by table, the rows of context name in got, an answer
// over several contexts, with want, the tables of that context alone that wantFrom printed,
// all but their times (timeColumns, maskTimes).
func compareContextRows(t *testing.T, got, want []table, name, wantFrom string) {
	t.Helper()
	for i := range want {
		part, ok := contextPart(t, i, got[i], name, want[i].cols)
		if !ok {
			continue
		}
		g := maskTimes(maskColumns(t, "kubectl-idx", part, timeColumns...))
		w := maskTimes(maskColumns(t, wantFrom, want[i], timeColumns...))
		if diff := cmp.Diff(w.rows, g.rows); diff != "" {
			t.Errorf("table %d, context %s: rows differ (-%s +kubectl-idx over the contexts):\n%s", i, name, wantFrom, diff)
		}
	}
}

// contextPart is the part of table i of an answer over several contexts,
// got, that holds context name's rows, without the CONTEXT column, under
// cols. It is false, and the test told, when got's columns are not cols
// after CONTEXT.
func contextPart(t *testing.T, i int, got table, name string, cols []string) (table, bool) {
	t.Helper()
	if want := append([]string{"CONTEXT"}, cols...); !slices.Equal(got.cols, want) {
		t.Errorf("table %d columns %q, want %q", i, got.cols, want)
		return table{}, false
	}
	part := table{cols: cols}
	for _, r := range got.rows {
		if r[0] == name {
			part.rows = append(part.rows, r[1:])
		}
	}
	return part, true
}
