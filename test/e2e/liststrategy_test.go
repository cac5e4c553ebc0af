package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// strategyObjects is how many ConfigMaps checkListStrategies lists: more than the
// first, small page of a list (100), so that a way of listing is chosen.
const strategyObjects = 150

// checkListStrategies checks, on c's API server, that every way kubectl idx reads a
// list gives what kubectl get gives: one unpaged LIST (a list that fits the unpaged
// limit), a watch-list (one past it, or of a size the server does not tell, as under a
// label selector) and pages (with both turned off), for whole objects and for
// metadata; a listing of whole objects printed as it arrives stays in pages, one of
// names is asked for unpaged within the limit. The request log (-v=6) shows the way taken, so that a test of one way
// cannot pass by another. An environment value it does not understand is an error.
func checkListStrategies(t *testing.T, c *ctrlCluster) {
	ns := "e2e-list-strategies"
	c.createNamespace(t, ns)
	ctx := context.Background()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range strategyObjects {
		g.Go(func() error {
			cm := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Labels: map[string]string{"strategy": "e2e"}},
				Data:       map[string]string{"i": fmt.Sprint(i), "pad": strings.Repeat("x", 200)},
			}
			_, err := c.env.Clientset.CoreV1().ConfigMaps(ns).Create(gctx, cm, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("creating ConfigMaps in %s: %v", ns, err)
	}

	// A list's requests, as client-go logs them at -v=6.
	const (
		probe     = "limit=100&"
		unpaged   = unpagedMark
		watchList = "sendInitialEvents=true"
		paged     = "continue="
	)
	ways := []struct {
		name string
		env  []string
		// selector adds -l, under which the server does not count what is left.
		selector bool
		// streamed lists ConfigMaps alone, which is printed as it arrives;
		// other ways list them with the namespace's ServiceAccounts, which is
		// answered from informers' stores.
		streamed bool
		// outputs are the -o values tried; none means json and name.
		outputs []string
		// want and wantNot are request log fragments.
		want, wantNot []string
	}{
		{name: "unpaged", want: []string{probe, unpaged}, wantNot: []string{watchList, paged}},
		{name: "watch-list past the limit", env: []string{"KUBECTL_IDX_UNPAGED_LIMIT=1Ki"}, want: []string{probe, watchList}, wantNot: []string{paged, unpaged}},
		{name: "watch-list of a size untold", selector: true, want: []string{probe, watchList}, wantNot: []string{paged, unpaged}},
		// A listing of whole objects of one type is printed page by page as
		// it arrives, never held whole: pages after the small one, whatever
		// the size. One of names, which reads metadata only, is asked for
		// unpaged within the limit, in pages past it.
		{name: "streamed", streamed: true, outputs: []string{"json"}, want: []string{probe, paged}, wantNot: []string{unpaged, watchList}},
		{name: "streamed metadata", streamed: true, outputs: []string{"name"}, want: []string{probe, unpaged}, wantNot: []string{watchList, paged}},
		{name: "streamed metadata past the limit", streamed: true, outputs: []string{"name"}, env: []string{"KUBECTL_IDX_UNPAGED_LIMIT=1Ki"}, want: []string{probe, paged}, wantNot: []string{watchList, unpaged}},
		{name: "pages", env: []string{"KUBECTL_IDX_UNPAGED_LIMIT=0", "KUBECTL_IDX_WATCH_LIST=off"}, want: []string{"limit="}, wantNot: []string{probe, watchList, unpaged}},
	}
	for _, w := range ways {
		if w.outputs == nil {
			w.outputs = []string{"json", "name"}
		}
		for _, output := range w.outputs {
			t.Run(w.name+" -o "+output, func(t *testing.T) {
				types := "configmaps,serviceaccounts"
				if w.streamed {
					types = "configmaps"
				}
				args := []string{types, "-n", ns, "-o", output}
				if w.selector {
					args = append(args, "-l", "strategy=e2e")
				}
				want := c.mustKubectl(t, "", append([]string{"get"}, args...)...)
				got := run(t, testenv.Cmd{
					Path: binary, Args: append(args, "-v=6"), Timeout: cmdTimeout,
					Env: testenv.MergeEnv(c.env.Environ(c.env.Kubeconfig, ""), w.env...),
				})
				mustSucceed(t, "kubectl idx "+strings.Join(args, " "), got)
				if output == "json" {
					gotDoc := decodeDoc(t, "kubectl idx", got.Stdout, false)
					// The namespace's kube-root-ca.crt is listed too.
					if items, _ := gotDoc["items"].([]any); len(items) < strategyObjects {
						t.Fatalf("kubectl idx listed %d objects, want at least %d", len(items), strategyObjects)
					}
					compareDocs(t, gotDoc, decodeDoc(t, "kubectl", want.Stdout, false), true)
				} else if got.Stdout != want.Stdout {
					t.Errorf("kubectl idx -o name differs from kubectl's:\n%s\nwant\n%s", got.Stdout, want.Stdout)
				}
				log := listRequests(got.Stderr, "/namespaces/"+ns+"/configmaps")
				for _, s := range w.want {
					if !strings.Contains(log, s) {
						t.Errorf("no request with %q:\n%s", s, log)
					}
				}
				for _, s := range w.wantNot {
					if strings.Contains(log, s) {
						t.Errorf("a request with %q:\n%s", s, log)
					}
				}
			})
		}
	}

	// A list of every namespace past the limit is read namespace by
	// namespace, each in one answer where it fits; whole objects as they
	// arrive (-o json) and into the store (a grouping) alike. Other tests
	// write other namespaces meanwhile: the check is of this one's objects.
	for _, args := range [][]string{{"configmaps", "-A", "-o", "json"}, {"configmaps", "-A", "--by-owner", "-o", "json"}} {
		t.Run("by namespace "+strings.Join(args, " "), func(t *testing.T) {
			want := decodeDoc(t, "kubectl", c.mustKubectl(t, "", "get", "configmaps", "-n", ns, "-o", "json").Stdout, false)
			got := run(t, testenv.Cmd{
				Path: binary, Args: append(args, "-v=6"), Timeout: cmdTimeout,
				Env: testenv.MergeEnv(c.env.Environ(c.env.Kubeconfig, ""), "KUBECTL_IDX_UNPAGED_LIMIT=1Ki", "KUBECTL_IDX_LIST_BY_NAMESPACE=always"),
			})
			mustSucceed(t, "kubectl idx "+strings.Join(args, " "), got)
			gotNames := namesIn(t, decodeDoc(t, "kubectl idx", got.Stdout, false), ns)
			if wantNames := namesIn(t, want, ns); !slices.Equal(gotNames, wantNames) {
				t.Errorf("%s's ConfigMaps: kubectl idx listed %d (%.3q...), kubectl %d (%.3q...)", ns, len(gotNames), gotNames, len(wantNames), wantNames)
			}
			all := listRequests(got.Stderr, "/api/v1/configmaps")
			if !strings.Contains(all, probe) || strings.Contains(all, paged) || strings.Contains(all, watchList) {
				t.Errorf("the list of every namespace: want its small first page only:\n%s", all)
			}
			if one := listRequests(got.Stderr, "/namespaces/"+ns+"/configmaps"); !strings.Contains(one, "limit=") {
				t.Errorf("no list of namespace %s:\n%s", ns, one)
			}
		})
	}

	for _, bad := range []string{"KUBECTL_IDX_UNPAGED_LIMIT=lots", "KUBECTL_IDX_WATCH_LIST=yes", "KUBECTL_IDX_LIST_BY_NAMESPACE=sometimes"} {
		res := run(t, testenv.Cmd{
			Path: binary, Args: []string{"configmaps", "-n", ns}, Timeout: cmdTimeout,
			Env: testenv.MergeEnv(c.env.Environ(c.env.Kubeconfig, ""), bad),
		})
		noPanic(t, bad, res)
		name, _, _ := strings.Cut(bad, "=")
		if res.ExitCode != 1 || !strings.HasPrefix(res.Stderr, "error: "+bad+": want ") || strings.Count(strings.TrimSpace(res.Stderr), "\n") != 0 {
			t.Errorf("%s: want exit 1 and one line naming %s\n%s", bad, name, res)
		}
	}
}

// namesIn returns the names of doc's items in namespace ns, as "namespace/name"
// with their resourceVersions, sorted: doc is a List, or a grouping whose
// groups hold items.
func namesIn(t *testing.T, doc map[string]any, ns string) []string {
	t.Helper()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if md, ok := v["metadata"].(map[string]any); ok && v["kind"] == "ConfigMap" {
				if md["namespace"] == ns {
					out = append(out, fmt.Sprintf("%s/%s@%s", md["namespace"], md["name"], md["resourceVersion"]))
				}
				return
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	slices.Sort(out)
	return out
}

// unpagedMark marks, in listRequests' log, a list asked for without a limit.
const unpagedMark = "(unpaged)"

// listRequests returns the URLs of the GET requests for path in a -v=6 log, one
// per line, a list without a limit (and not a watch) marked unpagedMark.
func listRequests(stderr, path string) string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		// I1129 09:41:03.833267 4742 round_trippers.go:632] "Response" verb="GET" url="https://…" status="200 OK" milliseconds=0
		_, rest, ok := strings.Cut(line, `"Response" verb="GET" url="`)
		if !ok {
			continue
		}
		url, _, _ := strings.Cut(rest, `"`)
		p, query, _ := strings.Cut(url, "?")
		if !strings.HasSuffix(p, path) {
			continue
		}
		// Each parameter ends with &, so that limit=100& is not limit=1000&.
		url += "&"
		if !strings.Contains(query, "limit=") && !strings.Contains(query, "watch=") {
			url += " " + unpagedMark
		}
		out = append(out, url)
	}
	return strings.Join(out, "\n")
}
