package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// The warm cache, end to end: answers through it are a direct run's, current as of the
// command's start; a connection from another user is refused before a byte is read; the
// process listens on no TCP port, exits when idle, and a dead or hung one costs one warning
// line; an API server restart under it is waited out. Every test keeps its cache processes
// in a runtime directory of its own (XDG_RUNTIME_DIR) and stops them when it ends.

// cacheUser runs kubectl-idx as the user of kubeconfig on e, with a cache directory of its
// own.
type cacheUser struct {
	e          *testenv.Env
	kubeconfig string
	env        []string
	dir        string
}

// newCacheUser returns a cacheUser whose cache processes live in a new runtime directory,
// with extra variables in the environment; when t ends, its cache server is stopped.
func newCacheUser(t *testing.T, e *testenv.Env, kubeconfig string, extra ...string) *cacheUser {
	t.Helper()
	// Short: a socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "idxc-")
	if err != nil {
		t.Fatal(err)
	}
	c := &cacheUser{e: e, kubeconfig: kubeconfig, dir: dir}
	c.env = testenv.MergeEnv(e.Environ(kubeconfig, ""), append([]string{"XDG_RUNTIME_DIR=" + dir, "KUBECTL_IDX_CACHE="}, extra...)...)
	t.Cleanup(func() {
		// cache status and stop ask the API server who the user is: a user a
		// test deleted has its servers killed instead.
		res := c.idx(t, "cache", "stop")
		if res.ExitCode != 0 {
			for _, pid := range c.serverPIDs(t) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		os.RemoveAll(dir)
	})
	return c
}

// idx runs the binary under test with args.
func (c *cacheUser) idx(t *testing.T, args ...string) testenv.Result {
	t.Helper()
	res := run(t, testenv.Cmd{Path: binary, Args: args, Env: c.env, Timeout: cmdTimeout})
	res.Stderr = dropDetectorNotice(res.Stderr)
	noPanic(t, "kubectl-idx "+strings.Join(args, " "), res)
	return res
}

// status is `kubectl idx cache status -o json`.
func (c *cacheUser) status(t *testing.T) v1alpha1.CacheStatus {
	t.Helper()
	res := c.idx(t, "cache", "status", "-o", "json")
	mustSucceed(t, "cache status", res)
	var st v1alpha1.CacheStatus
	mustDecode(t, "cache status -o json", res.Stdout, &st)
	return st
}

// agedToken is a cell that depends on when it was printed: an age, a time of day.
var agedToken = regexp.MustCompile(`\b(?:\d+[smhdy])+\b|\b\d\d:\d\d:\d\d\b`)

// comparable is what of an answer must be the same through the cache as without it: JSON and
// YAML without the cache's "asOf", tables with their ages masked and their columns' padding
// (which follows the widest age) collapsed.
func comparable(t *testing.T, out string) (string, bool) {
	t.Helper()
	trimmed := strings.TrimSpace(out)
	if strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "apiVersion:") {
		var doc map[string]any
		data := []byte(out)
		if !strings.HasPrefix(trimmed, "{") {
			var err error
			if data, err = yaml.YAMLToJSON(data); err != nil {
				t.Fatalf("not YAML: %v\n%s", err, out)
			}
		}
		if err := json.Unmarshal(data, &doc); err == nil {
			_, asOf := doc["asOf"]
			delete(doc, "asOf")
			b, _ := json.MarshalIndent(doc, "", " ")
			return string(b), asOf
		}
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, strings.Join(strings.Fields(agedToken.ReplaceAllString(l, "<age>")), " "))
	}
	return strings.Join(lines, "\n"), false
}

// sameAnswers checks that a cached run printed what the direct run did.
func sameAnswers(t *testing.T, what string, direct, cached testenv.Result) {
	t.Helper()
	if cached.ExitCode != direct.ExitCode {
		t.Errorf("%s: exit code %d through the cache, %d directly\n--- cached ---\n%s\n--- direct ---\n%s", what, cached.ExitCode, direct.ExitCode, cached, direct)
		return
	}
	d, dAsOf := comparable(t, direct.Stdout)
	c, _ := comparable(t, cached.Stdout)
	if dAsOf {
		t.Errorf("%s: a direct run's answer says what it is current as of", what)
	}
	if diff := cmp.Diff(d, c); diff != "" {
		t.Errorf("%s: stdout differs (-direct +cached):\n%s", what, diff)
	}
	ds, _ := comparable(t, direct.Stderr)
	cs, _ := comparable(t, cached.Stderr)
	if diff := cmp.Diff(ds, cs); diff != "" {
		t.Errorf("%s: stderr differs (-direct +cached):\n%s", what, diff)
	}
}

// TestCacheAnswersAsDirect: every command that reads, on the shared fixtures, prints through
// the cache what it prints without: the first time, which starts the cache, and again from
// warm informers; JSON answers from the cache say what they are current as of.
func TestCacheAnswersAsDirect(t *testing.T) {
	t.Parallel()
	web := cluster.WebPods[0]
	commands := [][]string{
		{"pods", "-A"}, {"pods", "-A", "-o", "wide"}, {"pods", "-A", "-o", "name"}, {"pods", "-A", "-o", "json"},
		{"pods", "-n", "shop", "-o", "yaml"}, {"pods", web, "-n", "shop", "-o", "json"}, {"pods", "nope", web, "-n", "shop"},
		{"deploy,svc,cm", "-n", "shop"}, {"crontabs", "-A", "-o", "json"}, {"nodes", "-o", "wide"}, {"all", "-n", "shop", "-o", "name"},
		{"pods", "-A", "--show-owner"}, {"pods", "-n", "shop", "-l", "app=web", "-o", "name"},
		{"pods", "-A", "--field-selector", "status.phase=Running", "-o", "name"}, {"pods", "-A", "--sort-by", "{.spec.nodeName}"},
		{"pods", "-n", "shop", "-o", "jsonpath={.items[*].metadata.name}"}, {"pods", "-n", "shop", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName"},
		{"pods", "-A", "--by-owner"}, {"pods", "-A", "--by-owner", "-o", "json"}, {"pods", "-A", "--by-owner", "-o", "name"},
		{"pods", "-A", "--by-node"}, {"pods", "-A", "--by-node", "-o", "json"}, {"deploy,svc,pods", "-n", "shop", "--by-label", "app"},
		{"pods", "-A", "--by-namespace", "-o", "yaml"}, {"pods", "-A", "--by", "{.spec.serviceAccountName}"},
		{"tree", "deployment/web", "-n", "shop"}, {"tree", "deployment/web", "-n", "shop", "-o", "json"}, {"tree", "node/worker-1", "-o", "json"},
		{"owners", "pod/" + web, "-n", "shop"}, {"owners", "pod/" + web, "-n", "shop", "-o", "yaml"},
		{"orphans", "-A"}, {"orphans", "-A", "-o", "json"},
		{"uses", "deployment/web", "-n", "shop", "-o", "json"}, {"uses", "configmap/web-config", "-n", "shop"},
		{"selects", "service/web", "-n", "shop"}, {"selected-by", "pod/" + web, "-n", "shop", "-o", "json"},
		{"events", "deployment/web", "-n", "shop"}, {"events", "-n", "shop"}, {"events", "-A", "-o", "json"},
		{"podz"}, {"tree", "deployment/nope", "-n", "shop"},
		// --where: the warm informers are every question's, so the pages are not filtered
		// as they arrive; the answer is.
		{"pods", "-A", "-o", "json", "--where", `object.status.phase == "Running"`},
		{"pods", "-A", "-o", "name", "--where", `object.metadata.name.startsWith("web")`},
		{"pods", "-A", "--by-owner", "--where", `owner != null && owner.kind == "Deployment"`},
		{"tree", "deployment/web", "-n", "shop", "--where", `object.kind != "Pod"`},
	}
	admin := newCacheUser(t, env, env.Kubeconfig)
	jane := newCacheUser(t, env, narrow.Kubeconfig)
	for _, who := range []struct {
		name string
		c    *cacheUser
		cmds [][]string
	}{
		{"admin", admin, commands},
		{"a user who may read pods in shop only", jane, [][]string{{"pods", "-n", "shop", "-o", "name"}, {"pods", "-A", "-o", "name"}, {"pods", "-n", "ops"}, {"pods", "-n", "shop", "--by-owner"}}},
	} {
		t.Run(who.name, func(t *testing.T) {
			for _, args := range who.cmds {
				what := strings.Join(args, " ")
				direct := who.c.idx(t, args...)
				first := who.c.idx(t, append(args, "--cache")...)
				sameAnswers(t, what+" (the first through the cache)", direct, first)
				warm := who.c.idx(t, append(args, "--cache")...)
				sameAnswers(t, what+" (from warm informers)", direct, warm)
				// An object asked for by name alone prints as kubectl prints it: itself.
				single := len(args) > 1 && args[0] == "pods" && args[1] == web
				if _, asOf := comparable(t, warm.Stdout); !asOf && !single && warm.ExitCode == 0 && (slices.Contains(args, "json") || slices.Contains(args, "yaml")) {
					t.Errorf("%s: a JSON or YAML answer from the cache does not say what it is current as of:\n%s", what, warm.Stdout)
				}
			}
			// The first command found no cache, answered directly and handed it
			// the command.
			if st := who.c.status(t); !st.Running || len(st.Informers) == 0 || st.Requests.Served == 0 || st.Requests.Warmed == 0 {
				t.Errorf("cache status after the commands: %+v", st)
			}
		})
	}

	t.Run("watch", func(t *testing.T) {
		// The first lines of a feed: the pods of shop as they are.
		want := len(cluster.WebPods)
		lines := func(args ...string) []string {
			p, err := testenv.StartProcess(context.Background(), testenv.Cmd{Path: binary, Args: args, Env: admin.env, Timeout: feedTimeout})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Kill()
			var out []string
			deadline := time.After(waitTimeout)
			for len(out) < want+1 {
				select {
				case l, ok := <-p.Lines:
					if !ok {
						t.Fatalf("%v ended: %s", args, p.Stderr())
					}
					s, _ := comparable(t, l.Text)
					out = append(out, s)
				case <-deadline:
					t.Fatalf("%v printed %d lines", args, len(out))
				}
			}
			return out
		}
		args := []string{"watch", "pods", "-n", "shop", "-l", "app=web"}
		direct := lines(args...)
		if diff := cmp.Diff(direct, lines(append(args, "--cache")...)); diff != "" {
			t.Errorf("a feed's first state differs (-direct +cached):\n%s", diff)
		}
		// A checkpointed feed through the cache reads its own informers, whose positions
		// the checkpoint records.
		cp := filepath.Join(t.TempDir(), "pods.checkpoint")
		if diff := cmp.Diff(direct, lines(append(args, "--cache", "--checkpoint", cp)...)); diff != "" {
			t.Errorf("a checkpointed feed's first state differs (-direct +cached):\n%s", diff)
		}
		if data, err := os.ReadFile(cp); err != nil || !strings.Contains(string(data), `"resources":["pods"]`) {
			t.Errorf("the checkpoint of a feed through the cache: %v\n%s", err, data)
		}
	})
}

// TestCacheReadYourWrites: on the controller-driven cluster, where the controllers write all
// the time, an object created just before a command is in the answer through the cache, 200
// times in a row, and the answer says it is current as of the object's resourceVersion or
// later.
func TestCacheReadYourWrites(t *testing.T) {
	t.Parallel()
	c := controllerCluster(t)
	const ns = "cache-rw"
	c.createNamespace(t, ns)
	cu := newCacheUser(t, c.env, c.env.Kubeconfig)
	ctx := context.Background()
	// The first question through the cache answers directly and starts it.
	mustSucceed(t, "configmaps, starting the cache", cu.idx(t, "configmaps", "-n", ns, "-o", "json", "--cache"))
	var slowest time.Duration
	for i := range 200 {
		name := fmt.Sprintf("rw-%03d", i)
		cm, err := c.env.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res := cu.idx(t, "configmaps", "-n", ns, "-o", "json", "--cache")
		mustSucceed(t, "configmaps through the cache", res)
		var list struct {
			Items []struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			} `json:"items"`
			AsOf []v1alpha1.AsOf `json:"asOf"`
		}
		mustDecode(t, "output", res.Stdout, &list)
		if !slices.ContainsFunc(list.Items, func(it struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}) bool {
			return it.Metadata.Name == name
		}) {
			t.Fatalf("round %d: configmap %s, created before the command, is missing from its answer", i, name)
		}
		created, _ := strconv.ParseUint(cm.ResourceVersion, 10, 64)
		if len(list.AsOf) != 1 {
			t.Fatalf("round %d: asOf %+v", i, list.AsOf)
		}
		if asOf, _ := strconv.ParseUint(list.AsOf[0].ResourceVersion, 10, 64); asOf < created {
			t.Fatalf("round %d: the answer is current as of resourceVersion %d, before the write at %d", i, asOf, created)
		}
		slowest = max(slowest, res.Wall)
	}
	t.Logf("200 writes each read back through the cache; slowest command %s", slowest.Round(time.Millisecond))
}

// peerSocketEnv names the socket a helper process started by TestCacheRefusesOtherUsers
// connects to as another user (runPeerProbe).
const peerSocketEnv = "KUBECTL_IDX_E2E_PEER_SOCKET"

// runPeerProbe connects to the socket, says hello as a client of the cache would, and prints
// what it got back: "refused" when the server closed the connection without a byte.
func runPeerProbe(socket string) int {
	c, err := net.Dial("unix", socket)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	defer c.Close()
	hello, _ := json.Marshal(map[string]any{"protocol": 1, "version": "any", "identity": strings.Repeat("0", 64)})
	frame := append([]byte{'h', 0, 0, 0, 0}, hello...)
	size := len(hello)
	frame[1], frame[2], frame[3], frame[4] = byte(size>>24), byte(size>>16), byte(size>>8), byte(size)
	_, _ = c.Write(frame)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(make([]byte, 1))
	switch {
	case n == 0 && (err == io.EOF || strings.Contains(fmt.Sprint(err), "reset")):
		fmt.Println("refused")
	default:
		fmt.Println("answered:", n, err)
	}
	return 0
}

// TestCacheRefusesOtherUsers: the cache server reads nothing from a connection of another
// user. The tests run as root, which passes the socket's walls (a 0700 directory, a 0600
// socket), so the socket is opened up: linked into a directory anyone may enter, made
// writable by all, and a process of uid 65534 connects to it. The server closes the
// connection unread and counts it.
func TestCacheRefusesOtherUsers(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Fatal("this test opens up a socket to another uid, which takes root")
	}
	cu := newCacheUser(t, env, env.Kubeconfig)
	mustSucceed(t, "pods through the cache", cu.idx(t, "pods", "-n", "shop", "--cache"))
	st := cu.status(t)
	open, err := os.MkdirTemp("", "idxo-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(open)
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(open, "cache.sock")
	if err := os.Link(st.Socket, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(link, 0o666); err != nil {
		t.Fatal(err)
	}
	// The test binary, where uid 65534 may run it.
	self := filepath.Join(open, "e2e.test")
	copyExecutable(t, os.Args[0], self)
	cmd := exec.Command(self)
	cmd.Env = []string{peerSocketEnv + "=" + link, "HOME=/"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "refused" {
		t.Fatalf("a client of uid 65534: %v\n%s", err, out)
	}
	after := cu.status(t)
	if after.Requests.RefusedPeers != st.Requests.RefusedPeers+1 {
		t.Errorf("refused peers %d, then %d: want one more", st.Requests.RefusedPeers, after.Requests.RefusedPeers)
	}
	if after.PID != st.PID {
		t.Errorf("the server changed (pid %d, then %d)", st.PID, after.PID)
	}
}

// TestCacheSocketIsPrivateAndNoTCP: the cache server's socket is 0600 in a 0700 directory,
// and the process listens on no TCP port, v4 or v6.
func TestCacheSocketIsPrivateAndNoTCP(t *testing.T) {
	t.Parallel()
	cu := newCacheUser(t, env, env.Kubeconfig)
	mustSucceed(t, "pods through the cache", cu.idx(t, "pods", "-A", "--by-owner", "--cache"))
	st := cu.status(t)
	for path, want := range map[string]os.FileMode{filepath.Dir(st.Socket): 0o700 | os.ModeDir, st.Socket: 0o600 | os.ModeSocket} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s has mode %v, want %v", path, fi.Mode(), want)
		}
	}
	inodes := map[string]bool{}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", st.PID))
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", st.PID, fd.Name())); err == nil && strings.HasPrefix(target, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(target, "socket:["), "]")] = true
		}
	}
	if len(inodes) == 0 {
		t.Fatalf("the cache server (pid %d) has no sockets at all", st.PID)
	}
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", st.PID, table))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// st 0A is LISTEN; the inode is the tenth field.
			if len(f) > 9 && f[3] == "0A" && inodes[f[9]] {
				t.Errorf("the cache server listens on TCP: /proc/net/%s: %s", table, line)
			}
		}
	}
	if ss, err := exec.LookPath("ss"); err == nil {
		out, err := exec.Command(ss, "-ltnpH").CombinedOutput()
		if err != nil {
			t.Fatalf("ss -ltnp: %v\n%s", err, out)
		}
		if strings.Contains(string(out), fmt.Sprintf("pid=%d,", st.PID)) {
			t.Errorf("ss -ltnp shows the cache server listening:\n%s", out)
		}
	}
}

// TestCacheIdleExit: a cache server with nothing to answer for its idle timeout exits and
// removes its socket.
func TestCacheIdleExit(t *testing.T) {
	t.Parallel()
	cu := newCacheUser(t, env, env.Kubeconfig, "KUBECTL_IDX_CACHE_IDLE_TIMEOUT=3s")
	mustSucceed(t, "pods through the cache", cu.idx(t, "pods", "-n", "shop", "--cache"))
	st := cu.status(t)
	if !st.Running || st.IdleTimeout != "3s" {
		t.Fatalf("status: %+v", st)
	}
	took := eventually(t, 30*time.Second, "the idle cache server to exit", func() string {
		if syscall.Kill(st.PID, 0) == nil {
			return fmt.Sprintf("pid %d still runs", st.PID)
		}
		if _, err := os.Lstat(st.Socket); err == nil {
			return st.Socket + " is still there"
		}
		return ""
	})
	t.Logf("exited %s after its last command ended (idle timeout 3s)", took.Round(100*time.Millisecond))
}

// serverPIDs are the cache servers of cu running now.
func (c *cacheUser) serverPIDs(t *testing.T) []int {
	t.Helper()
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		environ, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if strings.Contains(string(cmdline), "cache\x00serve") && strings.Contains(string(environ), "XDG_RUNTIME_DIR="+c.dir+"\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestCacheFaults: commands started at once start one cache server; a dead server is
// replaced; one killed while answering, or one that hangs, costs one warning line and the
// command answers directly.
func TestCacheFaults(t *testing.T) {
	t.Parallel()
	cu := newCacheUser(t, env, env.Kubeconfig)
	direct := cu.idx(t, "pods", "-A", "-o", "name")
	mustSucceed(t, "pods", direct)

	t.Run("commands at once start one server", func(t *testing.T) {
		var wg sync.WaitGroup
		results := make([]testenv.Result, 4)
		for i := range results {
			wg.Go(func() { results[i] = cu.idx(t, "pods", "-A", "-o", "name", "--cache") })
		}
		wg.Wait()
		for _, res := range results {
			if res.ExitCode != 0 || res.Stdout != direct.Stdout || res.Stderr != "" {
				t.Errorf("a command started with three others:\n%s", res)
			}
		}
		if pids := cu.serverPIDs(t); len(pids) != 1 {
			t.Errorf("cache servers running: %v, want one", pids)
		}
	})

	t.Run("a dead server is replaced", func(t *testing.T) {
		st := cu.status(t)
		if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the killed server to be gone", func() string {
			if syscall.Kill(st.PID, 0) == nil {
				return "still there"
			}
			return ""
		})
		res := cu.idx(t, "pods", "-A", "-o", "name", "--cache")
		if res.ExitCode != 0 || res.Stdout != direct.Stdout || res.Stderr != "" {
			t.Errorf("the command after the server was killed:\n%s", res)
		}
		if now := cu.status(t); !now.Running || now.PID == st.PID {
			t.Errorf("status after: %+v", now)
		}
	})

	t.Run("a server killed while answering", func(t *testing.T) {
		const ns = "cache-killed"
		ctx := context.Background()
		createNamespace(ctx, t, env.Clientset, ns)
		// A feed of changes only prints when something changes: the server is killed
		// before it printed anything.
		p, err := testenv.StartProcess(ctx, testenv.Cmd{Path: binary, Args: []string{"watch", "configmaps", "-n", ns, "--watch-only", "-o", "json", "--cache"}, Env: cu.env, Timeout: feedTimeout})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Kill()
		var st v1alpha1.CacheStatus
		eventually(t, 30*time.Second, "the feed to be answered by the server", func() string {
			if st = cu.status(t); st.Requests == nil || st.Requests.Running == 0 {
				return "no command running on the server"
			}
			return ""
		})
		if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		warning := regexp.MustCompile(`^warning: the cache server at \S+ closed the connection before the answer ended; answering directly$`)
		eventually(t, 30*time.Second, "one warning line", func() string {
			lines := stderrLines(dropDetectorNotice(p.Stderr()))
			if len(lines) != 1 || !warning.MatchString(lines[0]) {
				return fmt.Sprintf("stderr: %q", lines)
			}
			return ""
		})
		// The command goes on by itself: a change is printed.
		deadline := time.Now().Add(waitTimeout)
		for {
			name := fmt.Sprintf("after-%d", time.Now().UnixNano())
			if _, err := env.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			select {
			case l := <-p.Lines:
				if !strings.Contains(l.Text, `"ADDED"`) {
					t.Errorf("the direct feed printed %s", l.Text)
				}
				if lines := stderrLines(dropDetectorNotice(p.Stderr())); len(lines) != 1 {
					t.Errorf("stderr has %d lines, want the one warning: %q", len(lines), lines)
				}
				return
			case <-time.After(2 * time.Second):
			}
			if time.Now().After(deadline) {
				t.Fatalf("the direct feed printed nothing\n%s", p.Stderr())
			}
		}
	})

	t.Run("a hung server", func(t *testing.T) {
		mustSucceed(t, "pods through the cache", cu.idx(t, "pods", "-A", "-o", "name", "--cache"))
		st := cu.status(t)
		if err := syscall.Kill(st.PID, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer syscall.Kill(st.PID, syscall.SIGCONT)
		res := cu.idx(t, "pods", "-A", "-o", "name", "--cache")
		want := "warning: the cache server at " + st.Socket + " did not answer within 2s; answering directly"
		if res.ExitCode != 0 || res.Stdout != direct.Stdout || strings.TrimSuffix(res.Stderr, "\n") != want {
			t.Errorf("the command with the server stopped:\n%s\nwant stderr %q", res, want)
		}
		if res.Wall > 15*time.Second {
			t.Errorf("took %s: a hung server must cost its dial timeout, 2s", res.Wall)
		}
	})
}

// TestCacheAPIServerRestart: kube-apiserver restarts under a warm cache. A command asked while
// it is down fails as a direct run does, in the same words, and does not wait; once it is back,
// the cache answers as a direct run does, and an object created after the restart is in the
// next answer.
func TestCacheAPIServerRestart(t *testing.T) {
	t.Parallel()
	e := startOwnEnv(t, testenv.Options{RestartableAPIServer: true})
	ctx := context.Background()
	const ns = "cache-restart"
	createNamespace(ctx, t, e.Clientset, ns)
	for i := range 3 {
		if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("before-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cu := newCacheUser(t, e, e.Kubeconfig)
	args := []string{"configmaps", "-n", ns, "-o", "name", "--request-timeout=2s"}
	mustSucceed(t, "configmaps through the cache", cu.idx(t, append(args, "--cache")...))
	st := cu.status(t)

	if err := e.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	direct := cu.idx(t, args...)
	cached := cu.idx(t, append(args, "--cache", "--max-staleness=10m")...)
	if direct.ExitCode == 0 {
		t.Fatalf("a direct run with the API server down answered:\n%s", direct)
	}
	sameAnswers(t, "the command asked while the API server was down", direct, cached)
	if cached.Wall > max(8*time.Second, direct.Wall+4*time.Second) {
		t.Errorf("through the cache it failed after %s, directly after %s", cached.Wall, direct.Wall)
	}

	if err := e.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	after := cu.idx(t, append(args, "--cache", "--sync-timeout=3m")...)
	mustSucceed(t, "configmaps after the restart", after)
	if !strings.Contains(after.Stdout, "configmap/after\n") {
		t.Errorf("the object created after the restart is missing:\n%s", after.Stdout)
	}
	sameAnswers(t, "configmaps after the restart", cu.idx(t, args...), after)
	if again := cu.status(t); again.PID != st.PID {
		t.Errorf("the cache server changed (pid %d, then %d): a restart of the API server should be waited out", st.PID, again.PID)
	}
}

// TestCacheCredentialsRejected: when the API server stops accepting the credentials a cache
// server was started with (401), the command fails as a direct run does, in kubectl's words,
// and the server exits, dropping what it read with them.
func TestCacheCredentialsRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const ns = "cache-401"
	createNamespace(ctx, t, env.Clientset, ns)
	cs := env.Clientset
	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := tokenKubeconfig(ctx, t, cs, ns, sa.Name)
	cu := newCacheUser(t, env, kubeconfig)
	args := []string{"configmaps", "-n", ns, "-o", "name", "--cache"}
	mustSucceed(t, "configmaps as the service account, through the cache", cu.idx(t, args...))
	st := cu.status(t)
	// Deleting the ServiceAccount invalidates its tokens.
	if err := cs.CoreV1().ServiceAccounts(ns).Delete(ctx, sa.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var res testenv.Result
	eventually(t, time.Minute, "the rejected credentials to fail a command", func() string {
		if res = cu.idx(t, args...); res.ExitCode == 0 {
			return "the command still succeeds"
		}
		return ""
	})
	if !strings.Contains(res.Stderr, "Unauthorized") {
		t.Errorf("the command with rejected credentials:\n%s", res)
	}
	// The server may find its own credentials rejected while it answers (it
	// asks who they belong to every 20s): it stops, and the command answers
	// directly, saying so first. Either way the answer is the direct one.
	const stopped = "warning: the cache server stopped during the answer: the API server rejected its credentials (401 Unauthorized); answering directly\n"
	res.Stderr = strings.TrimPrefix(res.Stderr, stopped)
	direct := cu.idx(t, args[:len(args)-1]...)
	sameAnswers(t, "configmaps with rejected credentials", direct, res)
	// The server asks who its credentials belong to every 20s, whether or
	// not a watch of its has listed again since.
	eventually(t, time.Minute, "the cache server to exit", func() string {
		if syscall.Kill(st.PID, 0) == nil {
			return fmt.Sprintf("pid %d still runs", st.PID)
		}
		return ""
	})
}

// tokenKubeconfig writes a kubeconfig for a token of ServiceAccount ns/name on env.
func tokenKubeconfig(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfigUser(t, path, env.Kubeconfig, "sa", map[string]any{"token": tok.Status.Token}, 0o600)
	return path
}
