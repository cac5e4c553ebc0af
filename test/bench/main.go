// Command bench times kubectl-idx against kubectl get on a real kube-apiserver and etcd
// holding many realistic pods, in the same run, and prints ratios.
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go run ./test/bench -binary bin/kubectl-idx -pods 20000
//
// Each command runs as a child process; its wall time and peak RSS (getrusage's ru_maxrss of
// the child after Wait) are recorded and its stdout is counted and discarded. The raw server
// LISTs (JSON, protobuf, metadata-only protobuf) go through client-go's REST client in this
// process, for reference: they bound what any client can do. This is a benchmark, not a test:
// nothing is asserted about the numbers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

type options struct {
	binary     string
	kubectl    string
	pods       int
	namespaces int
	runs       int
	workers    int
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "bin/kubectl-idx", "Path of the kubectl-idx binary to time.")
	flag.StringVar(&o.kubectl, "kubectl", testenv.KubectlPath(), "The kubectl to compare with ($KUBECTL, or kubectl on PATH).")
	flag.IntVar(&o.pods, "pods", 5000, "Number of pods to create.")
	flag.IntVar(&o.namespaces, "namespaces", 10, "Number of namespaces the pods are spread over.")
	flag.IntVar(&o.runs, "runs", 1, "Times each command runs; the table shows the median.")
	flag.IntVar(&o.workers, "workers", fixtures.Workers, "Concurrent requests while creating the pods.")
	flag.Parse()
	if o.pods < 1 || o.namespaces < 1 || o.runs < 1 || o.workers < 1 {
		fmt.Fprintln(os.Stderr, "error: -pods, -namespaces, -runs and -workers must be positive")
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// measurement is one command's result over o.runs runs.
type measurement struct {
	label   string
	command string
	walls   []time.Duration
	rssKB   []int64
	bytes   int64
	// inProcess marks the raw LISTs, which have no child process and so no RSS of their own.
	inProcess bool
	// ref is the label of the measurement this one is compared with; empty means
	// the `kubectl get` twin of a `kubectl idx` command.
	ref string
}

// ownerGroupingJQ groups pods by top-level owner (through their ReplicaSet's own
// controller) with full pod objects: what `kubectl idx pods -A --by-owner -o json`
// answers, done the only way kubectl can.
const ownerGroupingJQ = `(.items | map(select(.kind == "ReplicaSet") | {key: .metadata.uid, value: ((.metadata.ownerReferences // []) | map(select(.controller)) | .[0])}) | from_entries) as $rs
 | [.items[] | select(.kind == "Pod") | . as $p | ((.metadata.ownerReferences // []) | map(select(.controller)) | .[0]) as $c
   | {owner: (if $c == null then "<none>" elif ($c.kind == "ReplicaSet" and $rs[$c.uid] != null) then "\($rs[$c.uid].kind)/\($rs[$c.uid].name)" else "\($c.kind)/\($c.name)" end), pod: $p}]
 | group_by(.owner) | map({owner: .[0].owner, items: map(.pod)})`

func run(ctx context.Context, o options) error {
	if _, err := os.Stat(o.binary); err != nil {
		return fmt.Errorf("-binary: %w (run `make build` first)", err)
	}
	fixtures.Workers = o.workers
	log("starting kube-apiserver and etcd")
	env, err := testenv.Start(ctx, testenv.Options{
		// Room for the creation burst and for the big LISTs: the defaults (400 and 200 in
		// flight) make the generator's writes queue in API Priority and Fairness.
		APIServerFlags: map[string][]string{
			"max-requests-inflight":          {"2000"},
			"max-mutating-requests-inflight": {"1000"},
		},
		// 20,000 pods with managedFields and two revisions each approach etcd's default
		// 2 GiB backend quota.
		EtcdFlags:    map[string][]string{"quota-backend-bytes": {"8589934592"}},
		StartTimeout: 2 * time.Minute,
	})
	if err != nil {
		return err
	}
	defer func() {
		log("stopping kube-apiserver and etcd")
		if err := env.Stop(); err != nil {
			log("error: %v", err)
		}
	}()

	start := time.Now()
	nodes := max(3, o.pods/fixtures.PodsPerNode)
	if _, err := fixtures.Nodes(ctx, env.Clientset, nodes); err != nil {
		return fmt.Errorf("creating nodes: %w", err)
	}
	for i := range o.namespaces {
		n := o.pods / o.namespaces
		if i < o.pods%o.namespaces {
			n++
		}
		ns := fmt.Sprintf("bench-%02d", i)
		if err := fixtures.Pods(ctx, env.Clientset, ns, n); err != nil {
			return fmt.Errorf("creating pods in %s: %w", ns, err)
		}
		log("created %d pods in %s (%s so far)", n, ns, time.Since(start).Round(time.Millisecond))
	}
	created := time.Since(start)
	log("created %d pods on %d nodes in %d namespaces in %s (%.0f pods/s, %d workers)",
		o.pods, nodes, o.namespaces, created.Round(time.Millisecond), float64(o.pods)/created.Seconds(), o.workers)

	// The discovery cache is filled once, so no run pays for discovery more than another.
	envv := env.Environ(env.Kubeconfig, "")
	for _, c := range [][]string{{o.kubectl, "get", "ns"}, {o.binary, "ns"}} {
		if res, err := testenv.Run(ctx, testenv.Cmd{Path: c[0], Args: c[1:], Env: envv}); err != nil || res.ExitCode != 0 {
			return fmt.Errorf("warming up %s: %v\n%s", strings.Join(c, " "), err, res)
		}
	}

	type child struct {
		label string
		path  string
		args  []string
		ref   string
	}
	children := []child{
		{"kubectl get pods -A -o json", o.kubectl, []string{"get", "pods", "-A", "-o", "json"}, ""},
		{"kubectl idx pods -A -o json", o.binary, []string{"pods", "-A", "-o", "json"}, ""},
		{"kubectl get pods -A", o.kubectl, []string{"get", "pods", "-A"}, ""},
		{"kubectl idx pods -A", o.binary, []string{"pods", "-A"}, ""},
		{"kubectl get pods,rs -A -o json | jq (by owner)", "bash", []string{"-o", "pipefail", "-c", shellQuote([]string{o.kubectl, "get", "pods,replicasets", "-A", "-o", "json"}) + " | jq " + shellQuote([]string{ownerGroupingJQ})}, ""},
		{"kubectl idx pods -A --by-owner -o json", o.binary, []string{"pods", "-A", "--by-owner", "-o", "json"}, "kubectl get pods,rs -A -o json | jq (by owner)"},
		{"kubectl idx pods -A --by-owner -o name", o.binary, []string{"pods", "-A", "--by-owner", "-o", "name"}, "raw LIST pods, metadata protobuf"},
	}
	// kubectl-tree finds a tree by listing every namespaced type of the
	// namespace in full; its stand-in is one kubectl get of all of them.
	treeNS := "bench-00"
	types, deploy, err := treeTargets(ctx, o.kubectl, envv, treeNS)
	if err != nil {
		return err
	}
	children = append(children,
		child{"kubectl get <every namespaced type> -n NS -o json (kubectl-tree's work)", o.kubectl, []string{"get", types, "-n", treeNS, "-o", "json"}, ""},
		child{"kubectl idx tree deployment/X -n NS", o.binary, []string{"tree", "deployment/" + deploy, "-n", treeNS}, "kubectl get <every namespaced type> -n NS -o json (kubectl-tree's work)"},
		child{"kubectl idx tree deployment/X -n NS -A", o.binary, []string{"tree", "deployment/" + deploy, "-n", treeNS, "-A"}, "raw LIST pods, metadata protobuf"},
	)
	var results []*measurement
	for _, c := range children {
		results = append(results, &measurement{label: c.label, command: shellQuote(append([]string{c.path}, c.args...)), ref: c.ref})
	}
	raws := rawLists(env.Config)
	for _, r := range raws {
		results = append(results, &measurement{label: r.label, command: r.command, inProcess: true})
	}

	for i := range o.runs {
		// Alternate kubectl and kubectl-idx so drift on the machine hits both alike.
		for j, c := range children {
			cw := &countingWriter{}
			res, err := testenv.Run(ctx, testenv.Cmd{Path: c.path, Args: c.args, Env: envv, Stdout: cw, Timeout: 30 * time.Minute})
			if err != nil || res.ExitCode != 0 {
				return fmt.Errorf("%s: %v\n%s", c.label, err, res)
			}
			m := results[j]
			m.walls, m.rssKB, m.bytes = append(m.walls, res.Wall), append(m.rssKB, res.MaxRSSKB), cw.n
			log("run %d/%d %-34s %7.2fs %7.1f MB RSS %8.1f MB out", i+1, o.runs, c.label, res.Wall.Seconds(), float64(res.MaxRSSKB)/1024, float64(cw.n)/(1<<20))
		}
		for j, r := range raws {
			wall, n, err := r.do(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", r.label, err)
			}
			m := results[len(children)+j]
			m.walls, m.bytes = append(m.walls, wall), n
			log("run %d/%d %-34s %7.2fs %18s %8.1f MB out", i+1, o.runs, r.label, wall.Seconds(), "", float64(n)/(1<<20))
		}
	}

	report(os.Stdout, o, nodes, created, results)
	return nil
}

// treeTargets returns the comma-joined names of every listable namespaced type
// (as kubectl api-resources gives them) and the first Deployment of namespace.
func treeTargets(ctx context.Context, kubectl string, env []string, namespace string) (types, deployment string, err error) {
	res, err := testenv.Run(ctx, testenv.Cmd{Path: kubectl, Args: []string{"api-resources", "--verbs=list,watch", "--namespaced", "-o", "name"}, Env: env})
	if err != nil || res.ExitCode != 0 {
		return "", "", fmt.Errorf("kubectl api-resources: %v\n%s", err, res)
	}
	types = strings.Join(strings.Fields(res.Stdout), ",")
	res, err = testenv.Run(ctx, testenv.Cmd{Path: kubectl, Args: []string{"get", "deployments", "-n", namespace, "-o", "name"}, Env: env})
	if err != nil || res.ExitCode != 0 {
		return "", "", fmt.Errorf("kubectl get deployments: %v\n%s", err, res)
	}
	names := strings.Fields(res.Stdout)
	if len(names) == 0 {
		return "", "", fmt.Errorf("no deployments in %s", namespace)
	}
	return types, strings.TrimPrefix(names[0], "deployment.apps/"), nil
}

// rawList is one reference LIST through client-go's REST client.
type rawList struct {
	label, command string
	do             func(context.Context) (time.Duration, int64, error)
}

func rawLists(cfg *rest.Config) []rawList {
	c := rest.CopyConfig(cfg)
	c.Timeout = 10 * time.Minute
	cs := kubernetes.NewForConfigOrDie(c)
	list := func(accept string) func(context.Context) (time.Duration, int64, error) {
		return func(ctx context.Context) (time.Duration, int64, error) {
			start := time.Now()
			data, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/pods").SetHeader("Accept", accept).DoRaw(ctx)
			return time.Since(start), int64(len(data)), err
		}
	}
	const (
		jsonType  = "application/json"
		protoType = "application/vnd.kubernetes.protobuf"
		metaType  = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
	)
	return []rawList{
		{"raw LIST pods, JSON", "GET /api/v1/pods  Accept: " + jsonType, list(jsonType)},
		{"raw LIST pods, protobuf", "GET /api/v1/pods  Accept: " + protoType, list(protoType)},
		{"raw LIST pods, metadata protobuf", "GET /api/v1/pods  Accept: " + metaType, list(metaType)},
	}
}

func report(w io.Writer, o options, nodes int, created time.Duration, results []*measurement) {
	fmt.Fprintf(w, "\nkubectl-idx bench: %d pods on %d nodes in %d namespaces, created in %s; %d run(s) each, median shown\n",
		o.pods, nodes, o.namespaces, created.Round(time.Millisecond), o.runs)
	fmt.Fprintf(w, "kubectl: %s\n\n", kubectlVersion(o.kubectl))

	byLabel := map[string]*measurement{}
	for _, m := range results {
		byLabel[m.label] = m
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\twall s\tpeak RSS MB\tstdout MB\tidx/reference wall\tidx/reference RSS\t")
	for _, m := range results {
		rss, ratioWall, ratioRSS := "-", "", ""
		if !m.inProcess {
			rss = fmt.Sprintf("%.1f", float64(median(m.rssKB))/1024)
		}
		if strings.HasPrefix(m.label, "kubectl idx ") {
			refLabel := m.ref
			if refLabel == "" {
				refLabel = "kubectl get " + strings.TrimPrefix(m.label, "kubectl idx ")
			}
			if ref := byLabel[refLabel]; ref != nil {
				ratioWall = fmt.Sprintf("%.2fx", median(m.walls).Seconds()/median(ref.walls).Seconds())
				if !ref.inProcess {
					ratioRSS = fmt.Sprintf("%.2fx", float64(median(m.rssKB))/float64(median(ref.rssKB)))
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.1f\t%s\t%s\t\n", m.label, median(m.walls).Seconds(), rss, float64(m.bytes)/(1<<20), ratioWall, ratioRSS)
	}
	_ = tw.Flush()

	fmt.Fprintln(w, "\ncommand lines (KUBECONFIG points at the bench server; stdout discarded and counted):")
	for _, m := range results {
		fmt.Fprintf(w, "  %-34s %s\n", m.label+":", m.command)
	}
	if o.runs > 1 {
		fmt.Fprintln(w, "\nall runs (wall s / peak RSS MB):")
		for _, m := range results {
			var cells []string
			for i, d := range m.walls {
				if m.inProcess {
					cells = append(cells, fmt.Sprintf("%.2f", d.Seconds()))
				} else {
					cells = append(cells, fmt.Sprintf("%.2f/%.0f", d.Seconds(), float64(m.rssKB[i])/1024))
				}
			}
			fmt.Fprintf(w, "  %-34s %s\n", m.label+":", strings.Join(cells, "  "))
		}
	}
}

func kubectlVersion(kubectl string) string {
	res, err := testenv.Run(context.Background(), testenv.Cmd{Path: kubectl, Args: []string{"version", "--client"}, Timeout: 30 * time.Second})
	if err != nil {
		return kubectl + " (version unknown)"
	}
	line, _, _ := strings.Cut(res.Stdout, "\n")
	return kubectl + " (" + strings.TrimSpace(line) + ")"
}

func median[T int64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// countingWriter discards what it is given and counts the bytes.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\|&;()<>*?[]{}") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

func log(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench: %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
