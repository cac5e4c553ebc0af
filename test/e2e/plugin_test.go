package e2e

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// TestPluginDiscovery runs the binary as kubectl runs plugins: an executable named
// kubectl-idx on PATH, invoked as `kubectl idx`.
func TestPluginDiscovery(t *testing.T) {
	r := as("")
	t.Run("kubectl idx lists like kubectl get", func(t *testing.T) {
		got := r.shell(t, "kubectl idx pods -A -o name")
		mustSucceed(t, "kubectl idx pods -A -o name", got)
		want := r.kubectl(t, "get", "pods", "-A", "-o", "name")
		mustSucceed(t, "kubectl get pods -A -o name", want)
		if got.Stdout != want.Stdout || got.Stdout == "" {
			t.Errorf("kubectl idx:\n%s\nkubectl get:\n%s", got.Stdout, want.Stdout)
		}
	})
	t.Run("kubectl plugin list finds it", func(t *testing.T) {
		res := r.shell(t, "kubectl plugin list")
		if !strings.Contains(res.Stdout, filepath.Join(pluginPath, "kubectl-idx")) {
			t.Errorf("kubectl plugin list does not show %s:\n%s", pluginPath, res)
		}
	})
	t.Run("help names the command kubectl idx", func(t *testing.T) {
		res := r.shell(t, "kubectl idx --help")
		mustSucceed(t, "kubectl idx --help", res)
		usage := usageLine(res.Stdout)
		if !strings.HasPrefix(usage, "kubectl idx") {
			t.Errorf("usage line %q does not start with `kubectl idx`:\n%s", usage, res.Stdout)
		}
		if strings.Contains(res.Stdout, "kubectl-idx ") {
			t.Errorf("help mentions the binary name kubectl-idx instead of `kubectl idx`:\n%s", res.Stdout)
		}
	})
}

// TestHelpAndOptions: every command's help ends as kubectl get --help does, naming the
// options command instead of listing the global flags, and kubectl idx options lists
// kubectl's own global options (those kubectl-idx takes) and -A and --all-contexts.
func TestHelpAndOptions(t *testing.T) {
	r := as("")
	ref := r.kubectl(t, "get", "--help")
	mustSucceed(t, "kubectl get --help", ref)
	refLines := stderrLines(ref.Stdout)
	const tip = `Use "kubectl idx options" for a list of global command-line options (applies to all commands).`
	if last := refLines[len(refLines)-1]; last != strings.Replace(tip, "kubectl idx", "kubectl", 1) {
		t.Fatalf("kubectl get --help ends with %q; the test's %q no longer follows it", last, tip)
	}
	for _, cmd := range []string{"kubectl idx pods --help", "kubectl idx tree --help", "kubectl idx watch --help", "kubectl idx version --help"} {
		t.Run(cmd, func(t *testing.T) {
			res := r.shell(t, cmd)
			mustSucceed(t, cmd, res)
			lines := stderrLines(res.Stdout)
			if last := lines[len(lines)-1]; last != tip {
				t.Errorf("help ends with %q, want %q", last, tip)
			}
			if strings.Contains(res.Stdout, "Global Flags") {
				t.Errorf("help has a Global Flags section:\n%s", res.Stdout)
			}
			for _, global := range []string{"kubeconfig", "request-timeout", "insecure-skip-tls-verify", "namespace"} {
				if regexp.MustCompile(`(?m)^ +(?:-\w, )?--` + global + ` `).MatchString(res.Stdout) {
					t.Errorf("help lists --%s:\n%s", global, res.Stdout)
				}
			}
		})
	}

	kubectlOptions := r.kubectl(t, "options")
	mustSucceed(t, "kubectl options", kubectlOptions)
	res := r.shell(t, "kubectl idx options")
	mustSucceed(t, "kubectl idx options", res)
	if want := "The following options can be passed to any command:\n\n"; !strings.HasPrefix(res.Stdout, want) || !strings.HasPrefix(kubectlOptions.Stdout, want) {
		t.Errorf("kubectl idx options and kubectl options must both start with %q:\n%s\n%s", want, res.Stdout, kubectlOptions.Stdout)
	}
	kubectls := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^ +(?:-\w, )?--([\w-]+)=`).FindAllStringSubmatch(kubectlOptions.Stdout, -1) {
		kubectls[m[1]] = true
	}
	var ours []string
	for _, m := range regexp.MustCompile(`(?m)^ +(?:-\w, )?--([\w-]+)`).FindAllStringSubmatch(res.Stdout, -1) {
		ours = append(ours, m[1])
	}
	for _, want := range []string{"kubeconfig", "context", "namespace", "server", "token", "request-timeout", "v", "all-namespaces", "all-contexts"} {
		if !slices.Contains(ours, want) {
			t.Errorf("kubectl idx options lacks --%s:\n%s", want, res.Stdout)
		}
	}
	for _, name := range ours {
		if !kubectls[name] && name != "all-namespaces" && name != "all-contexts" {
			t.Errorf("kubectl idx options lists --%s, which kubectl options does not", name)
		}
	}
}

// usageLine returns the first line after "Usage:" in cobra help.
func usageLine(help string) string {
	sc := bufio.NewScanner(strings.NewReader(help))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "Usage:" && sc.Scan() {
			return strings.TrimSpace(sc.Text())
		}
	}
	return ""
}

// jqRecipes are jq recipes of the documents, on the fixtures. Each runs as written, through
// bash and real jq with kubectl-idx discovered as `kubectl idx`; its expected output comes
// from the same pipeline with `kubectl get` (or kubectl, when the recipe has no `kubectl get`
// equivalent). The documents' own recipes, named after make demo's objects, are run by
// TestREADMERecipes on make demo's cluster.
var jqRecipes = []recipe{
	{
		name: "CRD instance names",
		cmd:  `kubectl idx crontabs.stable.example.com -A -o json | jq -r '.items[].metadata.name'`,
		want: "cert-check\nlog-rotate\nnightly-report\n",
	},
	{
		name: "pods not running",
		cmd:  `kubectl idx pods -A -o json | jq -r '.items[] | select(.status.phase != "Running") | "\(.metadata.namespace)/\(.metadata.name) \(.status.phase)"'`,
	},
	{
		name: "pods with restarts",
		cmd:  `kubectl idx pods -A -o json | jq -r '.items[] | select(any(.status.containerStatuses[]?; .restartCount > 0)) | "\(.metadata.name) \([.status.containerStatuses[].restartCount] | add)"'`,
	},
	{
		name: "pods per node",
		cmd:  `kubectl idx pods -A -o json | jq -r '[.items[] | .spec.nodeName // "<unscheduled>"] | group_by(.) | map("\(.[0]) \(length)") | .[]'`,
	},
	{
		name: "images in use",
		cmd:  `kubectl idx pods -A -o json | jq -r '[.items[].spec.containers[].image] | unique | .[]'`,
	},
	{
		name: "owner of each pod",
		cmd:  `kubectl idx pods -n shop -o json | jq -r '.items[] | "\(.metadata.name) \(.metadata.ownerReferences[0].kind // "-")/\(.metadata.ownerReferences[0].name // "-")"'`,
	},
	{
		name: "one object is not a List",
		cmd:  `kubectl idx deploy web -n shop -o json | jq -r '.kind + " " + .metadata.name + " " + (.status.readyReplicas | tostring)'`,
		want: "Deployment web 3\n",
	},
	{
		name: "services and their selectors",
		cmd:  `kubectl idx svc -A -o json | jq -r '.items[] | select(.spec.selector) | "\(.metadata.namespace)/\(.metadata.name) \(.spec.selector | to_entries | map("\(.key)=\(.value)") | join(","))"'`,
	},
	{
		name: "nodes that are cordoned",
		cmd:  `kubectl idx nodes -o json | jq -r '.items[] | select(.spec.unschedulable) | .metadata.name'`,
		want: "worker-2\n",
	},
	// The group-by recipes have no `kubectl get` equivalent: each reference computes the
	// same answer from kubectl's objects (owner references, spec.nodeName, requests).
	{
		name: "pods per Deployment",
		cmd:  `kubectl idx pods -A --by-owner -o json | jq -r '.groups[] | select(.key.kind == "Deployment") | "\(.key.namespace)/\(.key.name) \(.summary.members)"'`,
		// Each pod whose controller is a ReplicaSet whose controller is a Deployment,
		// counted per Deployment.
		kubectl: `kubectl get pods,replicasets -A -o json | jq -r '
			(.items | map(select(.kind == "ReplicaSet")) | map({key: .metadata.uid, value: ([.metadata.ownerReferences[]? | select(.controller)][0])}) | from_entries) as $rs
			| [.items[] | select(.kind == "Pod")
				| [.metadata.ownerReferences[]? | select(.controller)][0] as $c
				| select($c != null and $c.kind == "ReplicaSet")
				| $rs[$c.uid] as $d | select($d != null and $d.kind == "Deployment")
				| "\(.metadata.namespace)/\($d.name)"]
			| group_by(.) | map("\(.[0]) \(length)") | .[]'`,
	},
	{
		name:    "nodes with no pods",
		cmd:     `kubectl idx pods -A --by-node -o json | jq -r '.groups[] | select(.key.node != null and .summary.members == 0) | .key.node'`,
		kubectl: `kubectl get nodes,pods -A -o json | jq -r '[.items[] | select(.kind == "Pod") | .spec.nodeName // empty] as $used | .items[] | select(.kind == "Node") | .metadata.name | select(. as $n | $used | any(.[]; . == $n) | not)'`,
		want:    "worker-3\n",
	},
	{
		name:    "pods without an owner",
		cmd:     `kubectl idx pods -A --by-owner -o json | jq -r '.groups[] | select(.key.none) | .items[] | "\(.metadata.namespace)/\(.metadata.name)"'`,
		kubectl: `kubectl get pods -A -o json | jq -r '.items[] | select([.metadata.ownerReferences[]? | select(.controller)] | length == 0) | "\(.metadata.namespace)/\(.metadata.name)"'`,
	},
	{
		name: "top 5 nodes by requested CPU",
		cmd:  `kubectl idx pods -A --by-node -o json | jq -r '[.groups[] | select(.key.node != null)] | sort_by(-.summary.node.requests.cpuMillis, .key.node) | .[:5][] | "\(.key.node) \(.summary.node.requests.cpu)"'`,
		// CPU requests of the pods bound to each node that have not finished, as a
		// canonical quantity. The fixtures have no init containers or overhead, which
		// the scheduler's rule would add.
		kubectl: `kubectl get nodes,pods -A -o json | jq -r '
			def millis: if endswith("m") then .[:-1] | tonumber else tonumber * 1000 end;
			def qty: if . % 1000 == 0 then "\(. / 1000)" else "\(.)m" end;
			[.items[] | select(.kind == "Pod" and .spec.nodeName != null and .status.phase != "Succeeded" and .status.phase != "Failed")
				| {node: .spec.nodeName, cpu: ([.spec.containers[].resources.requests.cpu // "0" | millis] | add)}] as $pods
			| [.items[] | select(.kind == "Node") | .metadata.name as $n | {node: $n, cpu: ([$pods[] | select(.node == $n) | .cpu] | add // 0)}]
			| sort_by(-.cpu, .node) | .[:5][] | "\(.node) \(.cpu | qty)"'`,
	},
	// The relation recipes have no `kubectl get` equivalent either: each reference follows
	// the same links (ownerReferences, selectors, pod spec references, involvedObject) in
	// kubectl's objects.
	{
		name: "pods under a Deployment",
		cmd:  `kubectl idx tree deployment/web -n shop -o json | jq -r '.. | objects | select(.kind? == "Pod") | .name'`,
		kubectl: `kubectl get deployments,replicasets,pods -n shop -o json | jq -r '
			(.items[] | select(.kind == "Deployment" and .metadata.name == "web") | .metadata.uid) as $d
			| [.items[] | select(.kind == "ReplicaSet" and any(.metadata.ownerReferences[]?; .uid == $d)) | .metadata.uid] as $rs
			| .items[] | select(.kind == "Pod" and any(.metadata.ownerReferences[]?; .uid as $u | $rs | any(.[]; . == $u))) | .metadata.name'`,
	},
	{
		name: "top-level owner of a pod",
		cmd:  `kubectl idx owners pod/postgres-0 -n shop -o json | jq -r '.root | until(.owners == null; .owners[0]) | .kind + "/" + .name'`,
		kubectl: `kubectl get pods,replicasets,deployments,statefulsets,daemonsets,jobs,cronjobs -n shop -o json | jq -r '
			(.items | map({key: .metadata.uid, value: .}) | from_entries) as $by
			| .items[] | select(.kind == "Pod" and .metadata.name == "postgres-0")
			| until(.metadata.ownerReferences == null; $by[.metadata.ownerReferences[0].uid]) | .kind + "/" + .metadata.name'`,
		want: "StatefulSet/postgres\n",
	},
	{
		name: "pods a Service selects",
		cmd:  `kubectl idx selects service/web -n shop -o json | jq -r '.items[].metadata.name'`,
		kubectl: `kubectl get services,pods -n shop -o json | jq -r '
			(.items[] | select(.kind == "Service" and .metadata.name == "web") | .spec.selector) as $sel
			| .items[] | select(.kind == "Pod" and (.metadata.labels as $l | $sel | to_entries | all(.value == $l[.key]))) | .metadata.name'`,
	},
	{
		name: "what selects a pod",
		cmd:  `kubectl idx selected-by pod/postgres-0 -n shop -o json | jq -r '.items[] | .kind + "/" + .metadata.name'`,
		// Selectors of every kind selected-by reads, in its order; matchExpressions are not
		// evaluated here, so a selector using them fails the comparison rather than pass.
		kubectl: `kubectl get pods,services,deployments,replicasets,statefulsets,daemonsets,jobs,replicationcontrollers,poddisruptionbudgets,networkpolicies -n shop -o json | jq -r '
			def selector: if .kind == "Service" or .kind == "ReplicationController" then (.spec.selector // {} | if . == {} then null else {matchLabels: .} end)
				elif .kind == "NetworkPolicy" then .spec.podSelector else .spec.selector end;
			(.items[] | select(.kind == "Pod" and .metadata.name == "postgres-0") | .metadata.labels) as $l
			| .items[] | select(.kind != "Pod") | select(selector as $s | $s != null and ($s.matchExpressions // [] | length == 0)
				and ($s.matchLabels // {} | to_entries | all(.value == $l[.key])))
			| .kind + "/" + .metadata.name'`,
		want: "Service/postgres\nStatefulSet/postgres\n",
	},
	{
		name: "pods using a ConfigMap",
		cmd:  `kubectl idx uses configmap/web-config -n shop -o json | jq -r '.items[] | select(.kind == "Pod") | .name'`,
		kubectl: `kubectl get pods -n shop -o json | jq -r '
			.items[] | select(
				any(.spec.volumes[]?; .configMap.name == "web-config" or any(.projected.sources[]?; .configMap.name == "web-config"))
				or any(.spec.containers[], .spec.initContainers[]?; any(.env[]?; .valueFrom.configMapKeyRef.name == "web-config") or any(.envFrom[]?; .configMapRef.name == "web-config")))
			| .metadata.name'`,
	},
	{
		name: "orphans and the owner each lost",
		cmd:  `kubectl idx orphans -A -o json | jq -r '.items[] | (.missingOwners // .orphaningOwners)[0] as $o | "\(.namespace)/\(.name) \($o.kind)/\($o.name)"'`,
		// Every object of every listable type (events aside) whose ownerReferences name a
		// UID no object has, sorted as orphans sorts them.
		kubectl: `kubectl get "$(kubectl api-resources --verbs=list -o name | grep -v '^events' | paste -sd, -)" -A -o json | jq -r '
			([.items[].metadata.uid | select(. != null)] | map({key: ., value: true}) | from_entries) as $uids
			| [.items[] | select(any(.metadata.ownerReferences[]?; $uids[.uid] | not))] | sort_by(.kind, .metadata.namespace, .metadata.name)[]
			| ([.metadata.ownerReferences[] | select($uids[.uid] | not)][0]) as $o
			| "\(.metadata.namespace)/\(.metadata.name) \($o.kind)/\($o.name)"'`,
	},
	{
		name: "warnings under a Deployment",
		cmd:  `kubectl idx events deployment/web -n shop --types Warning -o json | jq -r '.items[] | "\(.involvedObject.kind)/\(.involvedObject.name) \(.reason)"'`,
		// The Warning events whose involvedObject is the Deployment, one of its
		// ReplicaSets or one of their pods, oldest first.
		kubectl: `kubectl get deployments,replicasets,pods,events -n shop -o json | jq -r '
			(.items[] | select(.kind == "Deployment" and .metadata.name == "web") | .metadata.uid) as $d
			| [.items[] | select(.kind == "ReplicaSet" and any(.metadata.ownerReferences[]?; .uid == $d)) | .metadata.uid] as $rs
			| ([$d] + $rs + [.items[] | select(.kind == "Pod" and any(.metadata.ownerReferences[]?; .uid as $u | $rs | any(.[]; . == $u))) | .metadata.uid]) as $tree
			| [.items[] | select(.kind == "Event" and .type == "Warning" and (.involvedObject.uid as $u | $tree | any(.[]; . == $u)))]
			| sort_by(.lastTimestamp)[] | "\(.involvedObject.kind)/\(.involvedObject.name) \(.reason)"'`,
	},
	{
		name: "the stretches of the last day nothing covers",
		cmd:  `kubectl idx history deployment/web -n shop --since 24h -o json | jq -r '.gaps[] | "\(.from) \(.to)"'`,
		// The window is the last day; the revisions cover the pod template from the
		// Deployment's creation when revision 1 is kept (else from the oldest revision's
		// ReplicaSet), the events the last hour (the API server's --event-ttl): the gap is
		// the day's start to the earlier of those, by the clock as the answer is asked.
		kubectl: `now=$(date -u +%s); kubectl get deployments,replicasets -n shop -o json | jq -r --argjson now "$now" '
			(.items[] | select(.kind == "Deployment" and .metadata.name == "web")) as $d
			| [.items[] | select(.kind == "ReplicaSet" and any(.metadata.ownerReferences[]?; .uid == $d.metadata.uid and .controller)
				and .metadata.annotations["deployment.kubernetes.io/revision"] != null)] as $rs
			| ([$rs[] | .metadata.annotations | ."deployment.kubernetes.io/revision", (."deployment.kubernetes.io/revision-history" // "" | split(",")[])
				| select(. != "") | tonumber] | min) as $low
			| (if $rs == [] then null elif $low == 1 then ($d.metadata.creationTimestamp | fromdate) else ([$rs[].metadata.creationTimestamp | fromdate] | min) end) as $revs
			| ($now - 86400) as $from | ([$now - 3600, $revs] | map(select(. != null)) | min) as $to
			| select($to > $from) | "\($from | todate) \($to | todate)"'`,
		clock: true,
	},
}

// recipe is a shell pipeline with its reference.
type recipe struct {
	name string
	cmd  string
	// kubectl is the reference pipeline; empty means cmd with "kubectl idx" replaced by
	// "kubectl get".
	kubectl string
	// want, when set, is the exact expected output as well.
	want string
	// clock says the answer depends on the time it is asked, to the second: the reference
	// runs before and after the recipe, and the recipe's output must be one of the two.
	clock bool
}

func TestJQRecipes(t *testing.T) {
	for _, rc := range jqRecipes {
		t.Run(rc.name, func(t *testing.T) {
			t.Parallel()
			if rc.clock {
				checkClockRecipe(t, rc.cmd, rc.kubectl)
				return
			}
			checkRecipe(t, rc.cmd, rc.kubectl, rc.want)
		})
	}
}

// checkRecipe runs a recipe and its kubectl reference and compares their stdout.
func checkRecipe(t *testing.T, cmd, reference, want string) {
	t.Helper()
	r := as("")
	if reference == "" {
		reference = strings.ReplaceAll(cmd, "kubectl idx", "kubectl get")
	}
	ref := r.shell(t, reference)
	mustSucceed(t, reference, ref)
	if ref.Stdout == "" {
		t.Fatalf("fixture problem: %s prints nothing", reference)
	}
	if want != "" && ref.Stdout != want {
		t.Fatalf("fixture problem: %s prints %q, want %q", reference, ref.Stdout, want)
	}
	got := r.shell(t, cmd)
	mustSucceed(t, cmd, got)
	if got.Stdout != ref.Stdout {
		t.Errorf("%s\nprints:\n%s\nwant (from %s):\n%s", cmd, got.Stdout, reference, ref.Stdout)
	}
}

// checkClockRecipe runs a recipe whose answer depends on the time it is asked between two
// runs of its reference: its stdout must be the reference's before it or after it.
func checkClockRecipe(t *testing.T, cmd, reference string) {
	t.Helper()
	r := as("")
	before := r.shell(t, reference)
	mustSucceed(t, reference, before)
	if before.Stdout == "" {
		t.Fatalf("fixture problem: %s prints nothing", reference)
	}
	got := r.shell(t, cmd)
	after := r.shell(t, reference)
	mustSucceed(t, cmd, got)
	mustSucceed(t, reference, after)
	if got.Stdout != before.Stdout && got.Stdout != after.Stdout {
		t.Errorf("%s\nprints:\n%s\nwant (from %s, before and after it):\n%s%s", cmd, got.Stdout, reference, before.Stdout, after.Stdout)
	}
}

// readmeRecipe matches a README line that runs kubectl idx into jq, with an optional prompt.
var readmeRecipe = regexp.MustCompile(`^\s*(?:\$\s+)?(kubectl idx .*\|\s*jq .*)$`)

// manyContexts reports whether a recipe asks several kubeconfig contexts.
func manyContexts(cmd string) bool {
	return strings.Contains(cmd, "--all-contexts") || regexp.MustCompile(`--context[= ]\S*,`).MatchString(cmd)
}

// TestVersion: `kubectl idx version` prints the build identity linked in (version, commit,
// date: the same values `version --client -o json` reports) and the server's version.
func TestVersion(t *testing.T) {
	info, err := env.Clientset.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	r := as("")
	res := r.idx(t, "version")
	mustSucceed(t, "kubectl-idx version", res)
	js := r.idx(t, "version", "--client", "-o", "json")
	mustSucceed(t, "kubectl-idx version --client -o json", js)
	var client struct {
		ClientVersion struct{ Version, Commit, Date string } `json:"clientVersion"`
		ServerVersion any                                    `json:"serverVersion"`
	}
	mustDecode(t, "version --client -o json", js.Stdout, &client)
	if client.ServerVersion != nil {
		t.Errorf("version --client reports a server version: %v", client.ServerVersion)
	}
	cv := client.ClientVersion
	for what, v := range map[string]string{"version": cv.Version, "commit": cv.Commit, "date": cv.Date, "server version": info.GitVersion} {
		if v == "" {
			t.Errorf("%s is empty", what)
		} else if !strings.Contains(res.Stdout, v) {
			t.Errorf("version output lacks the %s %q:\n%s", what, v, res.Stdout)
		}
	}
	if info.GitVersion != serverVersion {
		t.Errorf("the envtest kube-apiserver reports version %q, want %s: hack/envtest-assets.sh must link "+
			"k8s.io/component-base/version.gitVersion (and gitMajor, gitMinor) into kube-apiserver", info.GitVersion, serverVersion)
	}
}

// TestDemo runs test/demo the way CI does (-exit) and checks it worked.
func TestDemo(t *testing.T) {
	root, abs := repoAndBinary(t)
	res, err := testenv.Run(context.Background(), testenv.Cmd{
		Path:    "go",
		Args:    []string{"run", "./test/demo", "-exit", "-binary", abs, "-dir", t.TempDir()},
		Env:     os.Environ(),
		Timeout: 10 * time.Minute,
		Dir:     root,
	})
	if err != nil {
		t.Fatalf("go run ./test/demo: %v\n%s", err, res)
	}
	if res.ExitCode != 0 {
		t.Fatalf("demo failed:\n%s", res)
	}
	// The controllers made what the demo shows: ReplicaSets and pods under their Deployment,
	// pods on the fake nodes, a new ReplicaSet in the feed across the rollout.
	for _, s := range []string{
		"export KUBECONFIG=", "export PATH=", "$ kubectl idx pods -A --by-owner", "Deployment/web -n shop  3 pods, 3/3 ready",
		"kwok-node-0  Ready", "└─ReplicaSet/web-", "$ kubectl idx selects service/web", "ADDED      ReplicaSet",
		"Job/report-now\t0/1 ready", "$ kubectl idx pods -n shop --show-owner", "Deployment/web\n",
	} {
		if !strings.Contains(res.Stdout, s) {
			t.Errorf("demo output lacks %q:\n%s", s, res.Stdout)
		}
	}
}
