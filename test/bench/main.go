// Command bench times kubectl-idx against kubectl get on a real kube-apiserver and etcd
// holding many pods as heavy as a production cluster's, in the same run, and prints ratios.
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go run ./test/bench -binary bin/kubectl-idx -pods 20000
//
// The pods are fixtures.RealisticPods (-light: fixtures.Pods, those of earlier runs):
// about 12 KB of compact JSON each, half of it metadata, with the managedFields the API
// server itself writes for the controller that creates them and the kubelet that writes
// their status; ReplicaSets of Deployments and a StatefulSet per namespace own them, so
// names like db-0 repeat across namespaces. Every report starts with the bytes per pod of the server's own
// LISTs (JSON and metadata-only protobuf), measured after the pods are created. The API
// server is then restarted, to hold its objects and not their creation's history, and one
// pod's status changes every -churn as in a cluster at work (see churn).
//
// Each command runs as a child process; its wall time, user plus system CPU time and peak
// RSS (getrusage's, taken by a small parent of its own: see rusageChild) are recorded and
// its stdout is counted and discarded. The raw server LISTs (JSON, protobuf, metadata-only
// protobuf, the server's table) go through client-go's REST client in this process, for
// reference: they bound what any client can do. This is a benchmark, not a test: nothing is
// asserted about the numbers. The report ends with the speed targets (targets): each
// kubectl idx command's wall over its reference's in the same run, and each run's own ratio.
//
// The report then times kubectl idx why against issue 39's targets (reportWhy): why of one
// Deployment, directly and through the warm cache (-cache), against the seconds the issue
// names, and why -A against pods -A --by-owner -o name; -only why runs those alone. A why
// exits 3 or 4 on the bench's pods (their Deployments have no controller to write their
// status), which counts as a success.
//
// -scale measures memory at scale instead, for the question a laptop user asks: how much does
// a query over every pod of a big cluster take? It runs the commands that exercise each kind
// of pod informer, metadata-only (-o name, the table) and full (-o json), --by-owner
// included, next to kubectl get, and reports peak RSS per 1,000 pods:
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go run ./test/bench -binary bin/kubectl-idx -scale -pods 100000 -namespaces 50
//
// -contexts N measures a question of several clusters instead: it starts N control planes
// (each its own kube-apiserver and etcd, each with -pods pods), writes one kubeconfig with
// contexts c1 to cN, and times kubectl idx pods -A --context c1,...,cN (-o json, -o name
// and the table) against the same command over the slowest single context and against
// kubectl get pods -A --context cI for each context in turn, as a user without the plugin
// would run it:
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go run ./test/bench -binary bin/kubectl-idx -contexts 3 -pods 5000 -runs 3
//
// -serve creates the pods, prints a KUBECONFIG line and keeps the server up until
// interrupted, measuring nothing: a dev control plane for --profile runs.
//
// A memory guard kills any command that brings the machine's available memory below
// -min-available (a kubectl reference too big for the machine) and reports it killed, so the
// run goes on and whatever else runs on the machine keeps its memory.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

type options struct {
	binary string
	// baseline, when set, is a second kubectl-idx binary (an earlier build)
	// timed on the same commands in the same run.
	baseline   string
	kubectl    string
	pods       int
	namespaces int
	runs       int
	workers    int
	// scale selects the memory-at-scale command set; kubectlJSON adds kubectl get -o json to it.
	scale, kubectlJSON bool
	// minAvailableMiB is the memory guard's floor on MemAvailable.
	minAvailableMiB int64
	// createWithin stops starting new namespaces after this long; zero means no limit.
	createWithin time.Duration
	// requested is -pods; pods becomes the number created.
	requested int
	// only, when set, keeps the commands whose label contains it (and those
	// they are compared with).
	only string
	// contexts, when 2 or more, selects the multi-context mode (runContexts) over that
	// many control planes.
	contexts int
	// light creates the pods of earlier runs, fixtures.Pods, instead of
	// fixtures.RealisticPods.
	light bool
	// serve keeps the server and its pods up for profiling instead of measuring.
	serve bool
	// churn is how often a pod's status changes while the bench measures; zero means
	// never.
	churn time.Duration
	// quiet measures again once the churn has stopped and the API server serves
	// the later pages of a paged LIST from etcd.
	quiet bool
	// waitIdle bounds the wait for an idle machine before each measurement (idleWaiter).
	waitIdle time.Duration
	// cache times each kubectl idx command through the warm cache too (cache.go).
	cache bool
	// mcp measures kubectl idx mcp from its client instead (mcp.go), mcpCalls warm calls
	// of each question.
	mcp      bool
	mcpCalls int
}

// rusageChild, as the first argument, makes the bench the small parent of one command:
// -rusage-child FILE COMMAND ARGS... runs the command on this process's stdin, stdout and
// stderr, writes its peak RSS in KiB (ru_maxrss) to FILE and exits with its exit code.
//
// The bench cannot take ru_maxrss of its own children: Go starts them with vfork, and
// Linux's execve carries the peak RSS of the address space it leaves (the parent's) into
// the child's ru_maxrss, so every command would read at least the bench's own peak (some
// 170 MB, and the raw LISTs' bodies after them). A command started by this small process
// carries at most this process's peak, a few MB.
const rusageChild = "-rusage-child"

func main() {
	if len(os.Args) > 3 && os.Args[1] == rusageChild {
		os.Exit(runRusageChild(os.Args[2], os.Args[3:]))
	}
	var o options
	flag.StringVar(&o.binary, "binary", "bin/kubectl-idx", "Path of the kubectl-idx binary to time.")
	flag.StringVar(&o.baseline, "baseline", "", "Path of a second kubectl-idx binary (an earlier build) to time on the same commands in the same run, each row marked [baseline].")
	flag.StringVar(&o.kubectl, "kubectl", testenv.KubectlPath(), "The kubectl to compare with ($KUBECTL, or kubectl on PATH).")
	flag.IntVar(&o.pods, "pods", 5000, "Number of pods to create.")
	flag.IntVar(&o.namespaces, "namespaces", 10, "Number of namespaces the pods are spread over.")
	flag.IntVar(&o.runs, "runs", 1, "Times each command runs; the table shows the median.")
	flag.IntVar(&o.workers, "workers", fixtures.Workers, "Concurrent requests while creating the pods.")
	flag.BoolVar(&o.scale, "scale", false, "Measure peak RSS per 1,000 pods of the full and metadata-only pod informer commands against kubectl get, instead of the comparison table.")
	flag.BoolVar(&o.kubectlJSON, "kubectl-json", false, "With -scale, also run kubectl get pods -A -o json (about 300 MB per 1,000 realistic pods).")
	flag.Int64Var(&o.minAvailableMiB, "min-available", 3072, "Kill a command, and report it killed, when the machine's available memory falls below this many MiB.")
	flag.StringVar(&o.only, "only", "", "Run only the commands whose label contains this text, and their references, e.g. -only tree.")
	flag.DurationVar(&o.createWithin, "create-within", 0, "Start no new namespace of pods after this long, and measure the pods created by then; 0 means no limit.")
	flag.BoolVar(&o.light, "light", false, "Create the pods of earlier bench runs (fixtures.Pods: every object written by one field manager, the bench's own, and no StatefulSet, so no pod name repeats across namespaces) instead of fixtures.RealisticPods. They are no lighter in bytes: 13.2 KB of JSON per pod against 12.4 KB.")
	flag.BoolVar(&o.serve, "serve", false, "Create the pods, print a KUBECONFIG for the server and wait until interrupted, measuring nothing: a dev control plane for --profile runs.")
	flag.DurationVar(&o.waitIdle, "wait-idle", time.Minute, "Before each measurement, wait up to this long for the machine to be idle (at least 90% of its CPU time idle over half a second), so that other work on a shared machine does not land in one command's figures; 0 means never wait.")
	flag.DurationVar(&o.churn, "churn", 5*time.Second, "Restart a container of a pod this often, through its status as the kubelet writes it, while measuring, as in a cluster at work (the API server serves the later pages of a paged LIST from the watch-cache snapshots such changes leave); 0 means never.")
	flag.BoolVar(&o.quiet, "quiet", true, "After measuring with -churn, stop it, wait until the API server serves a paged pod LIST's later pages from etcd, as on a cluster nobody wrote pods to for a while (its etcd is compacted every minute here, five by default), and measure everything again; the targets table shows both side by side.")
	flag.BoolVar(&o.cache, "cache", false, "Time each kubectl idx command through the warm cache too: the first question, which starts it, then again from warm informers, and with --max-staleness 1m; and report the cache process's memory (cache.go).")
	flag.BoolVar(&o.mcp, "mcp", false, "Measure kubectl idx mcp from its client over stdio instead: warm tool calls' p50 and p99, and the size of a complete answer against kubectl get pods -A -o json, with bytes per pod; with -baseline, the warm tool calls through the baseline binary too, on the same server (mcp.go).")
	flag.IntVar(&o.mcpCalls, "mcp-calls", 50, "With -mcp, how many warm calls of each question are timed.")
	flag.IntVar(&o.contexts, "contexts", 0, "Start this many control planes (at least 2), each with -pods pods, behind one kubeconfig with contexts c1, c2, ..., and time kubectl idx over all of them at once against the slowest single context and against kubectl get over each in turn; 0 times one server.")
	flag.Parse()
	if o.contexts < 0 || o.contexts == 1 {
		fmt.Fprintln(os.Stderr, "error: -contexts must be 0 (one server) or at least 2")
		os.Exit(1)
	}
	if o.contexts > 0 && (o.scale || o.kubectlJSON || o.baseline != "" || o.only != "" || o.createWithin > 0 || o.serve) {
		fmt.Fprintln(os.Stderr, "error: -contexts cannot be combined with -scale, -kubectl-json, -baseline, -only, -create-within or -serve")
		os.Exit(1)
	}
	if o.pods < 1 || o.namespaces < 1 || o.runs < 1 || o.workers < 1 || o.minAvailableMiB < 0 {
		fmt.Fprintln(os.Stderr, "error: -pods, -namespaces, -runs and -workers must be positive, -min-available not negative")
		os.Exit(1)
	}

	testenv.Main(func(ctx context.Context) error { return run(ctx, o) })
}

// measurement is one command's result over o.runs runs.
type measurement struct {
	label   string
	command string
	walls   []time.Duration
	rssKB   []int64
	// cpu is each run's user plus system CPU time, the command's children included: on
	// a machine shared with others it moves far less than the wall.
	cpu   []time.Duration
	bytes int64
	// inProcess marks the raw LISTs, which have no child process and so no RSS of their own.
	inProcess bool
	// ref is the label of the measurement this one is compared with; empty means
	// the `kubectl get` twin of a `kubectl idx` command.
	ref string
	// informer is the kind of pod informer a kubectl idx command starts, for the table.
	informer string
	// floor is the label of the raw LIST that bounds a kubectl idx command: the
	// server's own cost of what the command reads (see floorOf).
	floor string
	// failed says why a run did not complete (killed by the memory guard, an exit code);
	// walls and rssKB then hold that run's figures up to its end.
	failed string
	// killed is set when the memory guard ended it: its figures are lower bounds.
	killed bool
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
	if o.contexts > 0 {
		return runContexts(ctx, o)
	}
	fixtures.Workers = o.workers
	opts := serverOptions(o)
	log("starting kube-apiserver and etcd")
	env, err := testenv.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer func() {
		log("stopping kube-apiserver and etcd")
		if err := env.Stop(); err != nil {
			log("error: %v", err)
		}
	}()

	p, err := populate(ctx, o, writer(env.Config), "")
	if err != nil {
		return err
	}
	nodes, created := p.nodes, p.took
	// What the report counts per 1,000 pods is what exists.
	o.requested, o.pods, o.namespaces = o.pods, p.pods, p.namespaces
	if p.stoppedAtDeadline {
		log("stopped creating after -create-within %s: %d of the %d pods asked for", o.createWithin, p.pods, o.requested)
	}
	log("created %d pods on %d nodes in %d namespaces in %s (%.0f pods/s, %d workers); etcd backend %s",
		o.pods, nodes, o.namespaces, created.Round(time.Millisecond), float64(o.pods)/created.Seconds(), o.workers, storageSize(ctx, env.Clientset))
	weight, err := weighPods(ctx, env.Clientset)
	if err != nil {
		return err
	}
	log("%s", weight)
	// The creation burst leaves the API server's watch cache holding its event history
	// (up to 102,400 pod events with their encodings: 7.5 GB of RSS at 35,000 pods, 8.7 GB
	// at 20,000 realistic pods here), whose garbage collection slows every answer; a
	// cluster at rest holds its objects only. A restart gets there and leaves room for the
	// clients measured.
	log("restarting kube-apiserver (%s)", serverRSS())
	if err := env.StopAPIServer(); err != nil {
		return err
	}
	if err := env.StartAPIServer(); err != nil {
		return err
	}
	if err := waitForPodCache(ctx, env.Clientset); err != nil {
		return err
	}
	log("kube-apiserver restarted (%s)", serverRSS())
	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	if err := churn(churnCtx, env.Clientset, o.churn); err != nil {
		return err
	}
	if o.serve {
		return serve(ctx, env)
	}

	// The discovery cache is filled once, so no run pays for discovery more than another.
	envv := env.Environ(env.Kubeconfig, "")
	for _, c := range [][]string{{o.kubectl, "get", "ns"}, {o.binary, "ns"}} {
		if res, err := testenv.Run(ctx, testenv.Cmd{Path: c[0], Args: c[1:], Env: envv}); err != nil || res.ExitCode != 0 {
			return fmt.Errorf("warming up %s: %v\n%s", strings.Join(c, " "), err, res)
		}
	}

	if o.mcp {
		return runMCP(ctx, o, envv)
	}
	var children []child
	if o.scale {
		if children, err = scaleChildren(ctx, o, envv); err != nil {
			return err
		}
	} else {
		children = []child{
			{"kubectl get pods -A -o json", o.kubectl, []string{"get", "pods", "-A", "-o", "json"}, "", ""},
			{"kubectl idx pods -A -o json", o.binary, []string{"pods", "-A", "-o", "json"}, "", full},
			{"kubectl idx pods -A -o json --where <status>", o.binary, []string{"pods", "-A", "-o", "json", "--where", `object.status.phase == "Running"`}, "kubectl idx pods -A -o json", full},
			{"kubectl idx pods -A -o name", o.binary, []string{"pods", "-A", "-o", "name"}, rawMetadata, metadataOnly},
			{"kubectl idx pods -A -o name --where <labels>", o.binary, []string{"pods", "-A", "-o", "name", "--where", `object.metadata.labels["tier"] == "frontend"`}, "kubectl idx pods -A -o name", metadataOnly},
			{"kubectl get pods -A", o.kubectl, []string{"get", "pods", "-A"}, "", ""},
			{"kubectl idx pods -A", o.binary, []string{"pods", "-A"}, "", metadataOnly + " + server table"},
			{"kubectl get pods,rs -A -o json | jq (by owner)", "bash", []string{"-o", "pipefail", "-c", shellQuote([]string{o.kubectl, "get", "pods,replicasets", "-A", "-o", "json"}) + " | jq " + shellQuote([]string{ownerGroupingJQ})}, "", ""},
			{"kubectl idx pods -A --by-owner -o json", o.binary, []string{"pods", "-A", "--by-owner", "-o", "json"}, "kubectl get pods,rs -A -o json | jq (by owner)", full},
			{"kubectl idx pods -A --by-owner -o name", o.binary, []string{"pods", "-A", "--by-owner", "-o", "name"}, rawMetadata, metadataOnly},
		}
		// kubectl-tree finds a tree by listing every namespaced type of the
		// namespace in full; its stand-in is one kubectl get of all of them.
		treeNS := "bench-00"
		types, deploy, err := treeTargets(ctx, o.kubectl, envv, treeNS)
		if err != nil {
			return err
		}
		children = append(children,
			child{"kubectl get <every namespaced type> -n NS -o json (kubectl-tree's work)", o.kubectl, []string{"get", types, "-n", treeNS, "-o", "json"}, "", ""},
			child{"kubectl idx tree deployment/X -n NS", o.binary, []string{"tree", "deployment/" + deploy, "-n", treeNS}, "kubectl get <every namespaced type> -n NS -o json (kubectl-tree's work)", ""},
			child{"kubectl idx tree deployment/X -n NS -A", o.binary, []string{"tree", "deployment/" + deploy, "-n", treeNS, "-A"}, rawMetadata, ""},
			// history reads the tree, the Deployment and its ReplicaSets whole with
			// their managedFields, and the namespace's events; kubectl's nearest
			// answer is the list of its revisions.
			child{"kubectl rollout history deployment/X -n NS", o.kubectl, []string{"rollout", "history", "deployment/" + deploy, "-n", treeNS}, "", ""},
			child{"kubectl idx history deployment/X -n NS", o.binary, []string{"history", "deployment/" + deploy, "-n", treeNS}, "kubectl rollout history deployment/X -n NS", ""},
			child{"kubectl idx history deployment/X -n NS --uses -o json", o.binary, []string{"history", "deployment/" + deploy, "-n", treeNS, "--uses", "-o", "json"}, "kubectl rollout history deployment/X -n NS", ""},
			// why of one Deployment reads its namespace's share of the pods; why -A every
			// pod, whole, once, against the owner grouping issue 39 names.
			child{whyOne, o.binary, []string{"why", "deployment/" + deploy, "-n", treeNS}, "", full},
			child{whyAll, o.binary, []string{"why", "-A"}, "kubectl idx pods -A --by-owner -o name", full},
		)
	}
	var baseEnv []string
	if o.cache {
		children = cachedTwins(o, children)
		if o.baseline != "" {
			// The baseline's cache server in a directory of its own: one
			// build's first question would replace the other's server (a
			// server answers its own build only), and every warm run would
			// find it cold.
			if baseEnv, err = cacheEnv(envv, filepath.Join(env.Dir, "baseline")); err != nil {
				return err
			}
		}
		if envv, err = cacheEnv(envv, env.Dir); err != nil {
			return err
		}
	}
	if o.baseline != "" {
		// Each kubectl-idx command again with the baseline binary, compared
		// with the same reference.
		var twins []child
		for _, c := range children {
			twins = append(twins, c)
			if c.path != o.binary {
				continue
			}
			ref := c.ref
			if ref == "" {
				ref = "kubectl get " + strings.TrimPrefix(c.label, "kubectl idx ")
			}
			twins = append(twins, child{c.label + " [baseline]", o.baseline, c.args, ref, ""})
		}
		children = twins
	}
	if o.only != "" {
		keep := map[string]bool{}
		for _, c := range children {
			if strings.Contains(c.label, o.only) {
				keep[c.label], keep[c.ref] = true, true
			}
		}
		children = slices.DeleteFunc(children, func(c child) bool { return !keep[c.label] })
	}
	noteFirstCached(children)
	guard, err := newMemoryGuard(o.minAvailableMiB << 10)
	if err != nil {
		return err
	}
	idle := &idleWaiter{max: o.waitIdle}
	m := &measurer{o: o, env: env, envv: envv, baseEnv: baseEnv, children: children, raws: rawLists(env.Config), guard: guard, idle: idle, rssFile: filepath.Join(env.Dir, "maxrss")}
	churning := fmt.Sprintf("a pod written every %s", o.churn)
	if o.churn <= 0 {
		churning = "no pod written while measuring"
	}
	phases := []phase{{name: churning}}
	log("measuring, %s (%s)", churning, serverRSS())
	if phases[0].results, phases[0].fromEtcd, err = m.measure(ctx); err != nil {
		return err
	}
	if phases[0].fromEtcd > 0 && o.churn > 0 {
		log("warning: the API server read %d pod LIST pages from etcd instead of its watch cache while measuring with churn", phases[0].fromEtcd)
	}
	if o.quiet && o.churn > 0 && !o.scale {
		stopChurn()
		log("churn stopped: waiting for the API server to serve a paged pod LIST from etcd, as on a cluster nobody wrote pods to for a while")
		since := time.Now()
		if err := waitQuiet(ctx, env.Clientset, 12*time.Minute); err != nil {
			return err
		}
		quiet := phase{name: fmt.Sprintf("quiet: no pod written for %s before measuring", time.Since(since).Round(time.Second))}
		log("measuring, %s (%s)", quiet.name, serverRSS())
		if quiet.results, quiet.fromEtcd, err = m.measure(ctx); err != nil {
			return err
		}
		phases = append(phases, quiet)
	}
	for _, p := range phases {
		report(os.Stdout, o, p, nodes, created, weight, idle)
		reportCache(os.Stdout, o, p.results)
	}
	if !o.scale {
		reportTargets(os.Stdout, phases)
	}
	return nil
}

// phase is one measurement of every command: with churn, or on a quiet cluster.
type phase struct {
	name    string
	results []*measurement
	// fromEtcd is how many pod LIST requests the API server served from etcd
	// rather than its watch cache during the phase.
	fromEtcd int
}

// measurer runs the commands of one bench o.runs times each.
type measurer struct {
	o    options
	env  *testenv.Env
	envv []string
	// baseEnv, with -cache and -baseline, is envv with the baseline's cache
	// server apart (cacheEnv); nil otherwise.
	baseEnv  []string
	children []child
	raws     []rawList
	guard    *memoryGuard
	idle     *idleWaiter
	rssFile  string
}

// measure runs every command, then every raw LIST, o.runs times, alternating
// kubectl and kubectl-idx so drift on the machine hits both alike, and returns
// the results with how many pod LISTs the server served from etcd meanwhile.
func (m *measurer) measure(ctx context.Context) ([]*measurement, int, error) {
	o, envv := m.o, m.envv
	var results []*measurement
	for _, c := range m.children {
		results = append(results, &measurement{label: c.label, command: shellQuote(append([]string{c.path}, c.args...)), ref: c.ref, informer: c.informer, floor: floorOf(c)})
	}
	for _, r := range m.raws {
		results = append(results, &measurement{label: r.label, command: r.command, inProcess: true})
	}
	fromEtcd := podListsFromEtcd(ctx, m.env.Clientset)
	for i := range o.runs {
		for j, c := range m.children {
			res := results[j]
			if res.failed != "" {
				continue
			}
			cenv := envv
			if m.baseEnv != nil && c.path == o.baseline {
				cenv = m.baseEnv
			}
			if err := beforeCached(ctx, o, c, cenv); err != nil {
				return nil, 0, err
			}
			m.idle.wait(ctx)
			out, err := measureOnce(ctx, c, res, cenv, m.guard, m.rssFile)
			if strings.HasSuffix(c.label, cacheFirst) {
				// The first question answered directly and handed the cache
				// process its command, which it runs after: its memory is read
				// once it has.
				m.idle.wait(ctx)
			}
			afterCached(ctx, o, c, cenv)
			if !res.killed && (err != nil || !exitOK(c, out.ExitCode)) {
				if !o.scale {
					return nil, 0, fmt.Errorf("%s: %v\n%s", c.label, err, out)
				}
				// At scale a failure is a finding (a sync timeout, an API server limit):
				// report it and measure the rest.
				res.failed = failure(out, err)
			}
			log("run %d/%d %-34s %7.2fs %7.1f MB RSS %8.1f MB out %s", i+1, o.runs, c.label, out.Wall.Seconds(), float64(out.MaxRSSKB)/1024, float64(res.bytes)/(1<<20), res.failed)
		}
		afterCachedRun(ctx, o, o.binary, envv)
		if m.baseEnv != nil {
			afterCachedRun(ctx, o, o.baseline, m.baseEnv)
		}
		for j, r := range m.raws {
			m.idle.wait(ctx)
			wall, n, err := r.do(ctx)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", r.label, err)
			}
			res := results[len(m.children)+j]
			res.walls, res.bytes = append(res.walls, wall), n
			log("run %d/%d %-34s %7.2fs %18s %8.1f MB out", i+1, o.runs, r.label, wall.Seconds(), "", float64(n)/(1<<20))
		}
	}
	return results, podListsFromEtcd(ctx, m.env.Clientset) - fromEtcd, nil
}

// waitQuiet returns once the API server serves the later pages of a paged pod
// LIST from etcd, as it does once no pod changed since etcd's last compaction
// (every minute on the bench's server, five by default), or fails after
// timeout.
func waitQuiet(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		before := podListsFromEtcd(ctx, cs)
		first, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 50})
		if err != nil {
			return fmt.Errorf("listing pods: %w", err)
		}
		if first.Continue != "" {
			if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 50, Continue: first.Continue}); err != nil {
				return fmt.Errorf("listing pods: %w", err)
			}
		}
		if podListsFromEtcd(ctx, cs) > before {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server still served a paged pod LIST from its watch cache %s after the churn stopped", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(15 * time.Second):
		}
	}
}

// serverOptions returns the control plane the bench starts (one, or one per context with
// -contexts).
func serverOptions(o options) testenv.Options {
	opts := testenv.Options{
		// Room for the creation burst and for the big LISTs: the defaults (400 and 200 in
		// flight) make the generator's writes queue in API Priority and Fairness.
		APIServerFlags: map[string][]string{
			"max-requests-inflight":          {"2000"},
			"max-mutating-requests-inflight": {"1000"},
			// A cluster quiet for a while, with the API server's watch cache
			// holding no snapshot to serve a paged LIST's later pages from,
			// within a minute of the churn's end rather than five (-quiet).
			"etcd-compaction-interval": {"1m"},
		},
		// 20,000 pods with managedFields and two revisions each approach etcd's default
		// 2 GiB backend quota; 8 GiB holds 100,000. Without fsync the creation runs at the
		// API server's pace, not the disk's; nothing measured waits for the disk.
		EtcdFlags:    map[string][]string{"quota-backend-bytes": {"8589934592"}, "unsafe-no-fsync": {"true"}},
		StartTimeout: 2 * time.Minute,
		// The API server restarts once the pods are created (see run).
		RestartableAPIServer: true,
	}
	if o.scale {
		// The API server's one-minute default would end a LIST that is slow to encode
		// on a loaded machine.
		opts.APIServerFlags["request-timeout"] = []string{"10m"}
	}
	return opts
}

// populated is what populate created.
type populated struct {
	nodes, pods, namespaces int
	took                    time.Duration
	// stoppedAtDeadline is set when -create-within left namespaces out.
	stoppedAtDeadline bool
}

// populate creates the nodes and o.pods pods spread over o.namespaces namespaces on the
// server of cs, logging each namespace with prefix.
func populate(ctx context.Context, o options, cs kubernetes.Interface, prefix string) (populated, error) {
	start := time.Now()
	nodes := max(3, o.pods/fixtures.PodsPerNode)
	if _, err := fixtures.Nodes(ctx, cs, nodes); err != nil {
		return populated{}, fmt.Errorf("creating nodes: %w", err)
	}
	// A few namespaces at a time, so the phases of one (owners, pods, statuses) overlap
	// with the others' and the API server always has work.
	var (
		mu                sync.Mutex
		madePods, madeNS  int
		g, gctx           = errgroup.WithContext(ctx)
		deadline          = start.Add(o.createWithin)
		stoppedAtDeadline bool
	)
	g.SetLimit(4)
	for i := range o.namespaces {
		n := o.pods / o.namespaces
		if i < o.pods%o.namespaces {
			n++
		}
		ns := fmt.Sprintf("bench-%02d", i)
		g.Go(func() error {
			if o.createWithin > 0 && time.Now().After(deadline) {
				mu.Lock()
				stoppedAtDeadline = true
				mu.Unlock()
				return nil
			}
			create := fixtures.RealisticPods
			if o.light {
				create = fixtures.Pods
			}
			if err := create(gctx, cs, ns, n); err != nil {
				return fmt.Errorf("creating pods in %s: %w", ns, err)
			}
			mu.Lock()
			defer mu.Unlock()
			madePods, madeNS = madePods+n, madeNS+1
			log("%screated %d pods in %s (%d in all, %s so far)", prefix, n, ns, madePods, time.Since(start).Round(time.Millisecond))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return populated{}, err
	}
	return populated{nodes: nodes, pods: madePods, namespaces: madeNS, took: time.Since(start), stoppedAtDeadline: stoppedAtDeadline}, nil
}

// measureOnce runs c once under the memory guard and adds its wall time, peak RSS and
// stdout size to m. A kill by the guard is recorded in m (failed and killed); any other
// failure is the caller's to judge from the result and error.
func measureOnce(ctx context.Context, c child, m *measurement, env []string, guard *memoryGuard, rssFile string) (testenv.Result, error) {
	cw := &countingWriter{}
	stopGuard := guard.watch()
	res, cpu, err := runMeasured(ctx, testenv.Cmd{Path: c.path, Args: c.args, Env: env, Stdout: cw, Timeout: 30 * time.Minute}, rssFile)
	killed, killedAtKB := stopGuard()
	if killed != "" {
		// Peak RSS up to the kill, as the guard read it: a lower bound.
		res.MaxRSSKB = max(res.MaxRSSKB, killedAtKB)
		m.failed, m.killed = killed, true
	}
	m.walls, m.rssKB, m.cpu, m.bytes = append(m.walls, res.Wall), append(m.rssKB, res.MaxRSSKB), append(m.cpu, cpu), cw.n
	return res, err
}

// failure says why a command that was not killed by the guard failed.
func failure(res testenv.Result, err error) string {
	return fmt.Sprintf("exit code %d: %v %s", res.ExitCode, err, lastLine(res.Stderr))
}

// runRusageChild implements rusageChild.
func runRusageChild(file string, args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		return 127
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if err := os.WriteFile(file, fmt.Appendf(nil, "%d %d", ru.Maxrss, cpu.Microseconds()), 0o600); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			return 127
		}
	}
	return cmd.ProcessState.ExitCode()
}

// runMeasured runs c through rusageChild and returns its result with MaxRSSKB the
// command's own peak RSS, and its user plus system CPU time. A command killed (by the
// memory guard, at its timeout) leaves no figure: MaxRSSKB and the CPU time are then zero.
func runMeasured(ctx context.Context, c testenv.Cmd, rssFile string) (testenv.Result, time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return testenv.Result{}, 0, err
	}
	_ = os.Remove(rssFile)
	c.Path, c.Args = self, append([]string{rusageChild, rssFile, c.Path}, c.Args...)
	res, err := testenv.Run(ctx, c)
	res.MaxRSSKB = 0
	var cpuMicros int64
	if data, rerr := os.ReadFile(rssFile); rerr == nil {
		_, _ = fmt.Sscan(string(data), &res.MaxRSSKB, &cpuMicros)
	}
	return res, time.Duration(cpuMicros) * time.Microsecond, err
}

// child is one command the bench runs as a child process.
type child struct {
	label string
	path  string
	args  []string
	// ref and informer go to the measurement.
	ref, informer string
}

// Kinds of pod informer, as cmd/get.go chooses them: -o name needs metadata only; human pod
// output, grouped or not (the group summaries count ready pods), and -o json need full pods.
const (
	full         = "full"
	metadataOnly = "metadata-only"
)

// scaleChildren returns the -scale command set: each kind of pod informer, plain and
// --by-owner, after the kubectl get it is compared with, then the questions over every
// type and every pod (the tree of a Deployment over all namespaces, its history, why
// -A), so that with -cache the cache process's memory is read after every kind of
// question. The -o json pair is last: its kubectl side is the one most likely not to fit
// the machine.
func scaleChildren(ctx context.Context, o options, envv []string) ([]child, error) {
	// Syncing 100,000 pods on a loaded machine can outlast the default 60 s; the
	// timeout changes nothing else.
	idx := func(args ...string) []string { return append(args, "--sync-timeout=10m") }
	cs := []child{
		{"kubectl get pods -A -o name", o.kubectl, []string{"get", "pods", "-A", "-o", "name"}, "", ""},
		{"kubectl idx pods -A -o name", o.binary, idx("pods", "-A", "-o", "name"), "", metadataOnly},
		{"kubectl idx pods -A --by-owner -o name", o.binary, idx("pods", "-A", "--by-owner", "-o", "name"), "kubectl get pods -A -o name", metadataOnly},
		// A request timeout far shorter than the list takes: each request is
		// bounded, a list still receiving data is not.
		{"kubectl idx pods -A -o name --request-timeout=5s", o.binary, idx("pods", "-A", "-o", "name", "--request-timeout=5s"), "kubectl get pods -A -o name", metadataOnly},
		{"kubectl get pods -A", o.kubectl, []string{"get", "pods", "-A"}, "", ""},
		{"kubectl idx pods -A", o.binary, idx("pods", "-A"), "", metadataOnly + " + server table"},
		{"kubectl idx pods -A --by-owner", o.binary, idx("pods", "-A", "--by-owner"), "kubectl get pods -A", full},
	}
	treeNS := "bench-00"
	_, deploy, err := treeTargets(ctx, o.kubectl, envv, treeNS)
	if err != nil {
		return nil, err
	}
	cs = append(cs,
		child{"kubectl idx tree deployment/X -n NS -A", o.binary, idx("tree", "deployment/"+deploy, "-n", treeNS, "-A"), "", ""},
		child{"kubectl idx history deployment/X -n NS --uses", o.binary, idx("history", "deployment/"+deploy, "-n", treeNS, "--uses"), "", ""},
		child{whyAll, o.binary, idx("why", "-A"), "", full},
	)
	if o.kubectlJSON {
		cs = append(cs, child{"kubectl get pods -A -o json", o.kubectl, []string{"get", "pods", "-A", "-o", "json"}, "", ""})
	}
	return append(cs, child{"kubectl idx pods -A -o json", o.binary, idx("pods", "-A", "-o", "json"), "", full}), nil
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

// Labels of the raw LISTs that are floors (floorOf).
const (
	rawJSON          = "raw LIST pods, JSON"
	rawProtobuf      = "raw LIST pods, protobuf"
	rawMetadata      = "raw LIST pods, metadata protobuf"
	rawTableMetadata = "raw LIST pods, Table with metadata"
)

// floorOf returns the label of the raw LIST that bounds c, a kubectl idx command:
// what it reads from the server, in the form the server sends it at least cost.
// JSON output can be no faster than the server's JSON (which is also what kubectl
// reads); other full-object commands read protobuf, metadata-only ones metadata
// protobuf, and human output of metadata-only pods the server's table. Commands
// of other informers (tree) have none.
func floorOf(c child) string {
	if !strings.HasPrefix(c.label, "kubectl idx pods ") {
		return ""
	}
	switch {
	case slices.Contains(c.args, "json"):
		return rawJSON
	case c.informer == full:
		return rawProtobuf
	case c.informer == metadataOnly:
		return rawMetadata
	case strings.HasPrefix(c.informer, metadataOnly):
		return rawTableMetadata
	}
	return ""
}

// rawLists returns the reference LISTs.
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
		tableType = "application/json;as=Table;v=v1;g=meta.k8s.io"
	)
	table := func(include string) func(context.Context) (time.Duration, int64, error) {
		return func(ctx context.Context) (time.Duration, int64, error) {
			start := time.Now()
			data, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/pods").SetHeader("Accept", tableType).Param("includeObject", include).DoRaw(ctx)
			return time.Since(start), int64(len(data)), err
		}
	}
	return []rawList{
		{rawJSON, "GET /api/v1/pods  Accept: " + jsonType, list(jsonType)},
		{rawProtobuf, "GET /api/v1/pods  Accept: " + protoType, list(protoType)},
		{rawMetadata, "GET /api/v1/pods  Accept: " + metaType, list(metaType)},
		// The server's table, as human output reads it (rows with their
		// objects' metadata) and bare.
		{rawTableMetadata, "GET /api/v1/pods?includeObject=Metadata  Accept: " + tableType, table("Metadata")},
		{"raw LIST pods, Table without objects", "GET /api/v1/pods?includeObject=None  Accept: " + tableType, table("None")},
	}
}

func report(w io.Writer, o options, p phase, nodes int, created time.Duration, weight podWeight, idle *idleWaiter) {
	results := p.results
	mode := ""
	if o.scale {
		mode = " (-scale)"
	}
	fmt.Fprintf(w, "\nkubectl-idx bench%s, %s: %d pods on %d nodes in %d namespaces, created in %s (%.0f pods/s); %d run(s) each, median shown\n",
		mode, p.name, o.pods, nodes, o.namespaces, created.Round(time.Millisecond), float64(o.pods)/created.Seconds(), o.runs)
	fmt.Fprintf(w, "pod LIST requests the API server served from etcd rather than its watch cache: %d\n", p.fromEtcd)
	if o.pods != o.requested {
		fmt.Fprintf(w, "creation stopped at -create-within %s: %d of the %d pods asked for\n", o.createWithin, o.pods, o.requested)
	}
	fmt.Fprintf(w, "pods: %s, %s\n", podKind(o), weight)
	fmt.Fprintf(w, "machine: %s\n", idle)
	fmt.Fprintf(w, "kubectl: %s\n\n", kubectlVersion(o.kubectl))

	byLabel := map[string]*measurement{}
	for _, m := range results {
		byLabel[m.label] = m
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\tpod informer\twall s\tCPU s\tpeak RSS MB\tRSS MB per 1k pods\tstdout MB\tidx/reference wall\tidx/reference RSS\tidx/floor wall\tfloor\t")
	perK := float64(o.pods) / 1000
	var failed []*measurement
	for _, m := range results {
		rss, rssPerK, cpu, ratioWall, ratioRSS, ratioFloor := "-", "-", "-", "", "", ""
		if !m.inProcess {
			cpu = fmt.Sprintf("%.2f", median(m.cpu).Seconds())
			rss = fmt.Sprintf("%.1f", float64(median(m.rssKB))/1024)
			rssPerK = fmt.Sprintf("%.2f", float64(median(m.rssKB))/1024/perK)
		}
		if strings.HasPrefix(m.label, "kubectl idx ") {
			refLabel := m.ref
			if refLabel == "" {
				refLabel = "kubectl get " + strings.TrimPrefix(m.label, "kubectl idx ")
			}
			if ref := byLabel[refLabel]; ref != nil {
				ratioWall, ratioRSS = ratios(m, ref)
			}
			if floor := byLabel[m.floor]; floor != nil {
				ratioFloor, _ = ratios(m, floor)
			}
		}
		label := m.label
		if m.failed != "" {
			label += " (failed, see below)"
			failed = append(failed, m)
		}
		if m.killed {
			// The figures are those of the run up to the kill: lower bounds.
			rss, rssPerK = ">="+rss, ">="+rssPerK
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\t%s\t\n", label, m.informer, median(m.walls).Seconds(), cpu, rss, rssPerK, float64(m.bytes)/(1<<20), ratioWall, ratioRSS, ratioFloor, strings.TrimPrefix(m.floor, "raw LIST pods, "))
	}
	_ = tw.Flush()
	for _, m := range failed {
		fmt.Fprintf(w, "\n%s did not complete: %s\n", m.label, m.failed)
	}
	if o.scale && !o.kubectlJSON {
		fmt.Fprintln(w, "\nkubectl get pods -A -o json left out (-kubectl-json runs it): it needs about 300 MB per 1,000 realistic pods.")
	}
	reportWhy(w, o, weight, byLabel)
	reportCommands(w, o, results, "KUBECONFIG points at the bench server")
}

// The labels of the why commands.
const (
	whyOne = "kubectl idx why deployment/X -n NS"
	whyAll = "kubectl idx why -A"
)

// exitOK reports whether code is a successful exit of c: 0, or for why a verdict
// (3 causes found, 4 unknown), which a bench's pods often give: their Deployments have no
// controller writing their status.
func exitOK(c child, code int) bool {
	return code == 0 || strings.HasPrefix(c.label, "kubectl idx why ") && (code == 3 || code == 4)
}

// whyTargets are issue 39's figures for why: a time for one Deployment, cold and warm
// (through the cache), and a ratio for every owner against the owner grouping.
var whyTargets = []struct {
	label   string
	seconds float64
	ref     string
	max     float64
}{
	{label: whyOne, seconds: 1.5},
	{label: whyOne + cacheWarm, seconds: 0.3},
	{label: whyAll, ref: "kubectl idx pods -A --by-owner -o name", max: 2},
}

// reportWhy prints why's figures against issue 39's targets, each as the ratio of its wall
// to the baseline, with the pods' weight in bytes beside it: a figure on lighter pods would
// look better than a user sees.
func reportWhy(w io.Writer, o options, weight podWeight, byLabel map[string]*measurement) {
	if byLabel[whyOne] == nil && byLabel[whyAll] == nil {
		return
	}
	fmt.Fprintf(w, "\nwhy (issue 39), %d pods in %d namespaces, %.0f bytes of JSON and %.0f of metadata-only protobuf per pod:\n", o.pods, o.namespaces, weight.json, weight.metadataProtobuf)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "command\twall s\tCPU s\tpeak RSS MB\tbaseline\tratio\ttarget\tmet\teach run\t")
	for _, t := range whyTargets {
		m := byLabel[t.label]
		if m == nil || len(m.walls) == 0 {
			continue
		}
		wall := median(m.walls).Seconds()
		base, baseline, limit := t.seconds, fmt.Sprintf("%.2f s", t.seconds), 1.0
		var baseWalls []time.Duration
		if t.ref != "" {
			ref := byLabel[t.ref]
			if ref == nil || len(ref.walls) == 0 {
				continue
			}
			base, baseline, limit, baseWalls = median(ref.walls).Seconds(), fmt.Sprintf("%s %.2f s", t.ref, median(ref.walls).Seconds()), t.max, ref.walls
		}
		ratio := wall / base
		met := "no"
		if ratio <= limit && m.failed == "" {
			met = "yes"
		}
		var each []string
		for i, d := range m.walls {
			b := base
			if i < len(baseWalls) {
				b = baseWalls[i].Seconds()
			}
			each = append(each, fmt.Sprintf("%.2fx", d.Seconds()/b))
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.1f\t%s\t%.2fx\t<= %.2fx\t%s\t%s\t\n", strings.TrimPrefix(t.label, "kubectl idx "), wall, median(m.cpu).Seconds(),
			float64(median(m.rssKB))/1024, baseline, ratio, limit, met, strings.Join(each, " "))
	}
	_ = tw.Flush()
}

// targets are the speed targets: each kubectl idx command against its reference in the
// same run, and the largest ratio of their walls that meets the target.
var targets = []struct {
	label, ref string
	max        float64
}{
	{"kubectl idx pods -A --by-owner -o name", rawMetadata, 1.5},
	{"kubectl idx pods -A -o json", rawJSON, 1.3},
	{"kubectl idx tree deployment/X -n NS -A", rawMetadata, 2},
	{"kubectl idx pods -A", "kubectl get pods -A", 0.10},
	{"kubectl idx pods -A --by-owner -o json", "kubectl get pods,rs -A -o json | jq (by owner)", 0.05},
	{"kubectl idx pods -A -o json --where <status>", "kubectl idx pods -A -o json", 1.05},
	{"kubectl idx pods -A -o name --where <labels>", "kubectl idx pods -A -o name", 1.05},
	// Issue 39's: why over every top-level owner against the listing of the pods by owner.
	{whyAll, "kubectl idx pods -A --by-owner -o name", 2},
	// With -cache: a repeat question from warm informers, and the first one, which starts
	// the cache server, against the direct run.
	{"kubectl idx pods -A --by-owner -o json" + cacheWarm, "kubectl idx pods -A --by-owner -o json", 0.3},
	{"kubectl idx pods -A -o json" + cacheFirst, "kubectl idx pods -A -o json", 1.1},
	{"kubectl idx pods -A --by-owner -o name" + cacheFirst, "kubectl idx pods -A --by-owner -o name", 1.1},
}

// wallTargets are the speed targets that are a time of their own, not a ratio: issue 40's
// for kubectl idx history of one Deployment at 20,000 realistic pods and issue 39's for
// kubectl idx why of one, cold (a direct run) and warm (a repeat question through the
// cache, with -cache).
var wallTargets = []struct {
	label string
	max   time.Duration
}{
	{"kubectl idx history deployment/X -n NS", 1500 * time.Millisecond},
	{"kubectl idx history deployment/X -n NS" + cacheWarm, 300 * time.Millisecond},
	// Issue 39's for why of one Deployment, cold and warm.
	{whyOne, 1500 * time.Millisecond},
	{whyOne + cacheWarm, 300 * time.Millisecond},
}

// reportTargets prints the targets table, the phases side by side (with churn,
// quiet): for each, the ratio of the medians, whether it meets the target, and
// each run's own ratio (the command and its reference ran minutes apart at
// most, so a run's ratio is less exposed to drift on a shared machine than the
// medians, which may come from different runs).
func reportTargets(w io.Writer, phases []phase) {
	fmt.Fprintln(w, "\ntargets (wall of kubectl idx over its reference's, this run):")
	for i, p := range phases {
		fmt.Fprintf(w, "  [%d] %s\n", i+1, p.name)
	}
	byLabel := make([]map[string]*measurement, len(phases))
	for i, p := range phases {
		byLabel[i] = map[string]*measurement{}
		for _, m := range p.results {
			byLabel[i][m.label] = m
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	header := "command\treference\ttarget\t"
	for i := range phases {
		header += fmt.Sprintf("[%d] s\tref s\tratio\tmet\teach run\t", i+1)
	}
	fmt.Fprintln(tw, header)
	for _, t := range targets {
		for _, label := range []string{t.label, t.label + " [baseline]"} {
			row := fmt.Sprintf("%s\t%s\t<= %.2fx\t", strings.TrimPrefix(label, "kubectl idx "), t.ref, t.max)
			shown := false
			for i := range phases {
				m, ref := byLabel[i][label], byLabel[i][t.ref]
				if m == nil || ref == nil {
					row += "-\t-\t-\t-\t-\t"
					continue
				}
				shown = true
				ratio, _ := ratios(m, ref)
				met := "no"
				if r := median(m.walls).Seconds() / median(ref.walls).Seconds(); r <= t.max && m.failed == "" {
					met = "yes"
				}
				if ratio == "" {
					met = "-"
				}
				var each []string
				for k := range min(len(m.walls), len(ref.walls)) {
					each = append(each, fmt.Sprintf("%.2fx", m.walls[k].Seconds()/ref.walls[k].Seconds()))
				}
				row += fmt.Sprintf("%.2f\t%.2f\t%s\t%s\t%s\t", median(m.walls).Seconds(), median(ref.walls).Seconds(), ratio, met, strings.Join(each, " "))
			}
			if shown {
				fmt.Fprintln(tw, row)
			}
		}
	}
	for _, t := range wallTargets {
		label := strings.TrimPrefix(t.label, "kubectl idx ")
		row := fmt.Sprintf("%s\t-\t<= %.2fs\t", label, t.max.Seconds())
		shown := false
		for i := range phases {
			m := byLabel[i][t.label]
			if m == nil {
				row += "-\t-\t-\t-\t-\t"
				continue
			}
			shown = true
			met := "no"
			if median(m.walls) <= t.max && m.failed == "" {
				met = "yes"
			}
			var each []string
			for _, w := range m.walls {
				each = append(each, fmt.Sprintf("%.2fs", w.Seconds()))
			}
			row += fmt.Sprintf("%.2f\t-\t-\t%s\t%s\t", median(m.walls).Seconds(), met, strings.Join(each, " "))
		}
		if shown {
			fmt.Fprintln(tw, row)
		}
	}
	_ = tw.Flush()
}

// ratios returns m's median wall and peak RSS over ref's, as the table prints them. A
// reference the guard killed would have taken more: the ratio is then an upper bound,
// marked <=. Against one that failed otherwise, or for an m that failed, there is no
// ratio; against a raw LIST there is no RSS ratio.
func ratios(m, ref *measurement) (wall, rss string) {
	if m.failed != "" || (ref.failed != "" && !ref.killed) {
		return "", ""
	}
	bound := ""
	if ref.killed {
		bound = "<="
	}
	wall = fmt.Sprintf("%s%.2fx", bound, median(m.walls).Seconds()/median(ref.walls).Seconds())
	if !ref.inProcess {
		rss = fmt.Sprintf("%s%.2fx", bound, float64(median(m.rssKB))/float64(median(ref.rssKB)))
	}
	return wall, rss
}

// reportCommands prints each measurement's command line and, with several runs, every
// run's figures; kubeconfig says what KUBECONFIG held.
func reportCommands(w io.Writer, o options, results []*measurement, kubeconfig string) {
	fmt.Fprintf(w, "\ncommand lines (%s; stdout discarded and counted):\n", kubeconfig)
	for _, m := range results {
		fmt.Fprintf(w, "  %-34s %s\n", m.label+":", m.command)
	}
	if o.runs > 1 {
		fmt.Fprintln(w, "\nall runs (wall s / CPU s / peak RSS MB):")
		for _, m := range results {
			var cells []string
			for i, d := range m.walls {
				if m.inProcess {
					cells = append(cells, fmt.Sprintf("%.2f", d.Seconds()))
				} else {
					cells = append(cells, fmt.Sprintf("%.2f/%.2f/%.0f", d.Seconds(), m.cpu[i].Seconds(), float64(m.rssKB[i])/1024))
				}
			}
			fmt.Fprintf(w, "  %-34s %s\n", m.label+":", strings.Join(cells, "  "))
		}
	}
}

// memoryGuard kills the command the bench is running when the machine's available memory
// falls below a floor, so that a kubectl reference too big for the machine ends as a
// reported failure instead of the kernel's OOM killer picking a victim among whatever else
// runs there (the API server, other people's tests).
type memoryGuard struct {
	floorKB int64
	// spare holds the bench's child processes when the guard was made: the API server and
	// etcd, which it never kills.
	spare map[int]bool
}

func newMemoryGuard(floorKB int64) (*memoryGuard, error) {
	pids, err := childPIDs()
	if err != nil {
		return nil, err
	}
	g := &memoryGuard{floorKB: floorKB, spare: map[int]bool{}}
	for _, pid := range pids {
		g.spare[pid] = true
	}
	return g, nil
}

// watch polls MemAvailable until the returned stop is called; stop returns why it killed
// the command, or "" when it did not, and the command's peak RSS (VmHWM of the processes in
// its group) when it killed it.
func (g *memoryGuard) watch() (stop func() (string, int64)) {
	done := make(chan struct{})
	var why atomic.Value
	var peakKB atomic.Int64
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			avail, err := memAvailableKB()
			if err != nil || avail >= g.floorKB {
				continue
			}
			pids, err := childPIDs()
			if err != nil {
				continue
			}
			for _, pid := range pids {
				if g.spare[pid] {
					continue
				}
				// testenv.Run starts each command in its own process group.
				peakKB.Store(max(peakKB.Load(), groupPeakKB(pid)))
				if syscall.Kill(-pid, syscall.SIGKILL) == nil {
					why.CompareAndSwap(nil, fmt.Sprintf("killed by the memory guard: the machine's available memory fell to %d MiB (floor %d MiB, -min-available)", avail>>10, g.floorKB>>10))
				}
			}
		}
	}()
	return func() (string, int64) {
		close(done)
		if v, ok := why.Load().(string); ok {
			return v, peakKB.Load()
		}
		return "", 0
	}
}

// groupPeakKB returns the largest VmHWM (peak RSS of the address space) among the
// processes of process group pgid, from /proc.
func groupPeakKB(pgid int) int64 {
	procs, _ := procStats()
	var peak int64
	for _, p := range procs {
		if p.pgrp == pgid {
			peak = max(peak, procStatusKB(p.pid, "VmHWM:"))
		}
	}
	return peak
}

// childPIDs returns the pids of this process's children, from /proc.
func childPIDs() ([]int, error) {
	procs, err := procStats()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	var pids []int
	for _, p := range procs {
		if p.ppid == self {
			pids = append(pids, p.pid)
		}
	}
	return pids, nil
}

// procStat is what the bench reads of /proc/PID/stat.
type procStat struct{ pid, ppid, pgrp int }

// procStats returns every process's procStat.
func procStats() ([]procStat, error) {
	paths, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	var procs []procStat
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 3 {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		procs = append(procs, procStat{pid, ppid, pgrp})
	}
	return procs, nil
}

// procStatusKB returns a "NAME:   N kB" field of /proc/PID/status, 0 if absent.
func procStatusKB(pid int, name string) int64 {
	kb, _ := testenv.ProcField(fmt.Sprintf("/proc/%d/status", pid), name)
	return kb
}

// memAvailableKB returns MemAvailable from /proc/meminfo.
func memAvailableKB() (int64, error) {
	return testenv.ProcField("/proc/meminfo", "MemAvailable:")
}

// waitForPodCache waits until the API server serves pods from its watch cache, which a
// restarted server fills from etcd before it answers LISTs at resourceVersion 0.
func waitForPodCache(ctx context.Context, cs kubernetes.Interface) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		_, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 1})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waiting for the API server's pod cache: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// serverRSS describes the RSS of the bench's child processes (the API server and etcd
// between commands), from /proc.
func serverRSS() string {
	pids, err := childPIDs()
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, pid := range pids {
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		parts = append(parts, fmt.Sprintf("%s RSS %.0f MB", strings.TrimSpace(string(comm)), float64(procStatusKB(pid, "VmRSS:"))/1024))
	}
	return strings.Join(parts, ", ")
}

// idleWaiter waits, before each measurement, for the machine to be idle: on a machine
// shared with other work, a command that starts while another process is busy takes
// longer than the one it is compared with, by as much as the other process takes.
type idleWaiter struct {
	// max bounds each wait; zero means never wait.
	max time.Duration
	// measured counts the waits, busy those that ended at max.
	measured, busy int
}

// wait returns once the machine's CPU time has been at least 90% idle over half a
// second, or after w.max.
func (w *idleWaiter) wait(ctx context.Context) {
	if w.max <= 0 {
		return
	}
	w.measured++
	deadline := time.Now().Add(w.max)
	for ctx.Err() == nil {
		idle, err := idleFraction(ctx, 500*time.Millisecond)
		if err != nil || idle >= 0.9 {
			return
		}
		if time.Now().After(deadline) {
			w.busy++
			return
		}
	}
}

// String says how the measurements started, for the report.
func (w *idleWaiter) String() string {
	switch {
	case w.max <= 0:
		return "measurements started without waiting for an idle machine (-wait-idle 0)"
	case w.busy == 0:
		return fmt.Sprintf("each of the %d measurements started on an idle machine (at least 90%% of its CPU time idle over half a second, -wait-idle)", w.measured)
	}
	return fmt.Sprintf("%d of the %d measurements started on a machine still busy with other work after -wait-idle %s: their figures include it", w.busy, w.measured, w.max)
}

// idleFraction returns the share of the machine's CPU time spent idle over the next
// period, from /proc/stat.
func idleFraction(ctx context.Context, period time.Duration) (float64, error) {
	read := func() (idle, total uint64, err error) {
		data, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0, err
		}
		line, _, _ := strings.Cut(string(data), "\n")
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != "cpu" {
			return 0, 0, errors.New("no cpu line in /proc/stat")
		}
		for i, v := range f[1:] {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, 0, err
			}
			total += n
			if i == 3 || i == 4 { // idle, iowait
				idle += n
			}
		}
		return idle, total, nil
	}
	i0, t0, err := read()
	if err != nil {
		return 0, err
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(period):
	}
	i1, t1, err := read()
	if err != nil {
		return 0, err
	}
	if t1 == t0 {
		return 1, nil
	}
	return float64(i1-i0) / float64(t1-t0), nil
}

// churn restarts a container of one pod now and then every, through the pod's status as
// the kubelet writes it, until ctx ends; every zero means now only.
//
// The pods of a cluster at work change all the time, and the API server's watch cache
// keeps a snapshot at each change, from which it serves the later pages of a paged LIST
// (Kubernetes 1.34 and later). It drops the snapshots older than etcd's last compaction
// (every five minutes): a server with no pod changed since serves every page after the
// first from etcd. On 20,000 realistic pods a metadata-only LIST in pages of 2,000 took
// 1.46 s that way, 0.72 s from the watch cache.
func churn(ctx context.Context, cs kubernetes.Interface, every time.Duration) error {
	list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 100})
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	i := slices.IndexFunc(list.Items, func(p corev1.Pod) bool { return len(p.Status.ContainerStatuses) > 0 })
	if i < 0 {
		return errors.New("no pod has a container status to update")
	}
	ns, name := list.Items[i].Namespace, list.Items[i].Name
	restart := func() error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Status.ContainerStatuses[0].RestartCount++
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{FieldManager: fixtures.ManagerKubelet})
		return err
	}
	if err := restart(); err != nil {
		return fmt.Errorf("updating the status of pod %s/%s: %w", ns, name, err)
	}
	if every <= 0 {
		return nil
	}
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		warned := false
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := restart(); err != nil && ctx.Err() == nil && !warned {
				log("warning: updating the status of pod %s/%s: %v", ns, name, err)
				warned = true
			}
		}
	}()
	return nil
}

// podListsFromEtcd returns how many pod LIST requests the API server has served from etcd
// rather than its watch cache (apiserver_storage_list_total), or 0 when its metrics do not
// say.
func podListsFromEtcd(ctx context.Context, cs kubernetes.Interface) int {
	data, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "apiserver_storage_list_total{") && strings.Contains(line, `resource="pods"`) && strings.Contains(line, `storage="etcd"`) {
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				n += int(v)
			}
		}
	}
	return n
}

// storageSize returns the etcd backend size the API server reports in its metrics, the
// figure etcd's quota applies to, or "unknown".
func storageSize(ctx context.Context, cs kubernetes.Interface) string {
	data, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "unknown"
	}
	var total float64
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "apiserver_storage_size_bytes{") {
			f := strings.Fields(line)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
				total = max(total, v)
			}
		}
	}
	if total == 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.2f GiB", total/(1<<30))
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
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

// writer returns a clientset for creating the pods: protobuf, which the API server decodes
// several times faster than JSON, and a client-side rate limit far above what the workers
// can ask for.
func writer(cfg *rest.Config) kubernetes.Interface {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = cfg.ContentType + ",application/json"
	cfg.QPS, cfg.Burst = 5000, 10000
	return kubernetes.NewForConfigOrDie(cfg)
}

// podKind names the pods o creates, for the report.
func podKind(o options) string {
	if o.light {
		return "earlier bench pods (-light: fixtures.Pods)"
	}
	return "realistic (fixtures.RealisticPods)"
}

// serve is -serve: it prints how to reach the server and waits for ctx to end.
func serve(ctx context.Context, env *testenv.Env) error {
	fmt.Printf("export KUBECONFIG=%s\n", env.Kubeconfig)
	log("serving until interrupted (Ctrl-C)")
	<-ctx.Done()
	return nil
}
