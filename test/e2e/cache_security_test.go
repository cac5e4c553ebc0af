package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// The warm cache as an attacker and a careful operator try it: every answer through it was
// authorized by the API server for the asker's own credential during that question; askers
// share a cache process only when the API server says they are the same user; the asker's
// --request-timeout, working directory and rights hold; credentials an exec plugin renews are
// renewed; a failing plugin fails the command in its own words. Each test runs the command
// through the cache and directly, and compares.

// serviceAccountWith creates ServiceAccount ns/name with a Role of rules bound to it, and
// returns the RoleBinding's name.
func serviceAccountWith(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		return ""
	}
	if _, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// readRules may get, list and watch the given resources of the core group.
func readRules(resources ...string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: resources, Verbs: []string{"get", "list", "watch"}}}
}

// serviceAccountToken returns a new token of ServiceAccount ns/name.
func serviceAccountToken(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Status.Token
}

// tokenPluginEnv names the variable the token plugin reads the token file's path from.
const tokenPluginEnv = "IDX_TEST_TOKEN_FILE"

// execKubeconfig writes, into dir, an exec plugin that prints the token in the file
// $IDX_TEST_TOKEN_FILE names (failing, with its message on stderr, when the file says
// "fail: MESSAGE"), and a kubeconfig for e's cluster whose user is that plugin: one
// kubeconfig, whose user depends on the environment it runs in. Both are readable by
// anyone, for tests that run as another user.
func execKubeconfig(t *testing.T, e *testenv.Env, dir string) string {
	t.Helper()
	plugin := filepath.Join(dir, "token-plugin")
	script := `#!/bin/sh
token=$(cat "$` + tokenPluginEnv + `") || exit 1
case "$token" in
fail:*) echo "${token#fail: }" >&2; exit 1 ;;
esac
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$token"
`
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kubeconfig")
	writeKubeconfigUser(t, path, e.Kubeconfig, "exec", map[string]any{"exec": map[string]any{
		"apiVersion": "client.authentication.k8s.io/v1", "command": plugin, "interactiveMode": "Never",
	}}, 0o644)
	return path
}

// writeToken writes token into a file of dir named name and returns its path.
func writeToken(t *testing.T, dir, name, token string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(token), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sameFailure checks that a cached run failed as the direct one did: exit code, nothing on
// stdout, the same stderr.
func sameFailure(t *testing.T, what string, direct, cached testenv.Result) {
	t.Helper()
	if direct.ExitCode == 0 {
		t.Fatalf("%s: the direct run succeeded:\n%s", what, direct)
	}
	if cached.Stdout != "" {
		t.Errorf("%s: through the cache, stdout is not empty:\n%s", what, cached.Stdout)
	}
	sameAnswers(t, what, direct, cached)
}

// cachedTwice runs kubectl idx with args and --cache twice as cu, a run that starts the cache
// process and one it answers, and checks that each succeeds and prints want; what names the
// question in failures.
func (cu *cacheUser) cachedTwice(t *testing.T, what string, args []string, want string) {
	t.Helper()
	for range 2 {
		res := cu.idx(t, append(args, "--cache")...)
		mustSucceed(t, what+" through the cache", res)
		if res.Stdout != want {
			t.Fatalf("%s through the cache: %q", what, res.Stdout)
		}
	}
}

// TestCacheRevokedAccess: a ServiceAccount allowed to list pods in one namespace warms the
// cache; its RoleBinding is deleted. The next question through the cache is refused with the
// API server's Forbidden, exactly as a direct run is, and prints nothing, --max-staleness or
// not, though the cache process's watch is open and a ConfigMap was created since. Once the
// ServiceAccount is deleted, the refusal is Unauthorized, likewise.
func TestCacheRevokedAccess(t *testing.T) {
	const ns = "cache-revoked"
	ctx, cs := parallelNamespace(t, ns)
	binding := serviceAccountWith(ctx, t, cs, ns, "reader", readRules("configmaps"))
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cu := newCacheUser(t, env, tokenKubeconfig(ctx, t, cs, ns, "reader"))
	args := []string{"configmaps", "-n", ns, "-o", "name"}
	cu.cachedTwice(t, "configmaps", args, "configmap/before\n")
	if err := cs.RbacV1().RoleBindings(ns).Delete(ctx, binding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var direct testenv.Result
	eventually(t, 30*time.Second, "the API server to apply the deleted RoleBinding", func() string {
		if direct = cu.idx(t, args...); direct.ExitCode == 0 {
			return "a direct run still lists configmaps"
		}
		return ""
	})
	if !strings.Contains(direct.Stderr, "Forbidden") {
		t.Fatalf("the direct run after the RoleBinding was deleted:\n%s", direct)
	}
	for _, extra := range [][]string{{"--cache"}, {"--cache", "--max-staleness=10m"}} {
		sameFailure(t, "configmaps "+strings.Join(extra, " ")+" after the RoleBinding was deleted", direct, cu.idx(t, append(args, extra...)...))
	}
	// JSON, which the cache streams as it reads, is refused the same way.
	jsonArgs := []string{"configmaps", "-n", ns, "-o", "json"}
	sameFailure(t, "configmaps -o json after the RoleBinding was deleted", cu.idx(t, jsonArgs...), cu.idx(t, append(jsonArgs, "--cache", "--max-staleness=10m")...))

	if err := cs.CoreV1().ServiceAccounts(ns).Delete(ctx, "reader", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the deleted ServiceAccount's token to be refused", func() string {
		if direct = cu.idx(t, args...); !strings.Contains(direct.Stderr, "Unauthorized") {
			return "a direct run is not Unauthorized yet:\n" + direct.String()
		}
		return ""
	})
	for _, extra := range [][]string{{"--cache"}, {"--cache", "--max-staleness=10m"}} {
		sameFailure(t, "configmaps "+strings.Join(extra, " ")+" after the ServiceAccount was deleted", direct, cu.idx(t, append(args, extra...)...))
	}
}

// TestCacheSeparatesUsersOfOneKubeconfig: one kubeconfig whose exec plugin prints the token an
// environment variable names. The first user, allowed to list Secrets, warms the cache; the
// second, allowed nothing, asks the same question with the same kubeconfig and gets the API
// server's Forbidden, as directly, never the first user's Secrets. The first user's plugin
// handing out a new token of the same ServiceAccount keeps its warm process.
func TestCacheSeparatesUsersOfOneKubeconfig(t *testing.T) {
	const ns = "cache-two-users"
	ctx, cs := parallelNamespace(t, ns)
	serviceAccountWith(ctx, t, cs, ns, "secret-reader", readRules("secrets"))
	serviceAccountWith(ctx, t, cs, ns, "nobody", nil)
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-password"}, StringData: map[string]string{"password": "hunter2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := execKubeconfig(t, env, dir)
	aliceToken := writeToken(t, dir, "alice", serviceAccountToken(ctx, t, cs, ns, "secret-reader"))
	bobToken := writeToken(t, dir, "bob", serviceAccountToken(ctx, t, cs, ns, "nobody"))
	// One runtime directory for both, as two people sharing a machine account.
	alice := newCacheUser(t, env, kubeconfig, tokenPluginEnv+"="+aliceToken)
	bob := &cacheUser{e: env, kubeconfig: kubeconfig, dir: alice.dir, env: testenv.MergeEnv(alice.env, tokenPluginEnv+"="+bobToken)}

	args := []string{"secrets", "-n", ns, "-o", "name"}
	alice.cachedTwice(t, "alice's secrets", args, "secret/db-password\n")
	aliceServer := alice.status(t)
	direct := bob.idx(t, args...)
	if !strings.Contains(direct.Stderr, "Forbidden") {
		t.Fatalf("bob's direct run:\n%s", direct)
	}
	for _, extra := range [][]string{{"--cache"}, {"--cache", "--max-staleness=10m"}} {
		cached := bob.idx(t, append(args, extra...)...)
		if strings.Contains(cached.Stdout, "db-password") {
			t.Fatalf("bob, allowed nothing, got alice's secrets through the cache:\n%s", cached)
		}
		sameFailure(t, "bob's secrets "+strings.Join(extra, " "), direct, cached)
	}
	// A process a command started as it answered directly, and one started
	// by the next command before the first had bound its socket, exit once
	// they find another answering: one for each user remains.
	eventually(t, 30*time.Second, "one cache process for each user", func() string {
		if pids := alice.serverPIDs(t); len(pids) != 2 {
			return fmt.Sprintf("cache processes %v", pids)
		}
		return ""
	})
	if st := bob.status(t); st.Running && st.PID == aliceServer.PID {
		t.Errorf("bob's cache status shows alice's process (pid %d)", st.PID)
	}

	// A renewed token of alice's keeps her warm process.
	writeToken(t, dir, "alice", serviceAccountToken(ctx, t, cs, ns, "secret-reader"))
	mustSucceed(t, "alice's secrets with a renewed token", alice.idx(t, append(args, "--cache")...))
	if st := alice.status(t); st.PID != aliceServer.PID || st.Requests.Served <= aliceServer.Requests.Served {
		t.Errorf("alice's renewed token: pid %d served %d, before pid %d served %d: want the same process, answering", st.PID, st.Requests.Served, aliceServer.PID, aliceServer.Requests.Served)
	}
}

// TestCacheRequestTimeout: the API server becomes unreachable (a proxy in front of it stops
// forwarding); a question with --request-timeout=2s fails through the cache within
// max(8s, the direct run's time + 4s), in the direct run's words, --max-staleness or not.
func TestCacheRequestTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const ns = "cache-timeout"
	createNamespace(ctx, t, env.Clientset, ns)
	p, kubeconfig := newFaultProxy(t, env)
	cu := newCacheUser(t, env, kubeconfig)
	args := []string{"configmaps", "-n", ns, "-o", "name", "--request-timeout=2s"}
	for range 2 {
		mustSucceed(t, "configmaps through the cache", cu.idx(t, append(args, "--cache")...))
	}
	mustSucceed(t, "configmaps directly", cu.idx(t, args...))
	p.Stall()
	defer p.Unstall()
	direct := cu.idx(t, args...)
	if direct.ExitCode == 0 {
		t.Fatalf("a direct run through a stalled proxy answered:\n%s", direct)
	}
	for _, extra := range [][]string{{"--cache"}, {"--cache", "--max-staleness=10m"}} {
		cached := cu.idx(t, append(args, extra...)...)
		bound := max(8*time.Second, direct.Wall+4*time.Second)
		if cached.Wall > bound {
			t.Errorf("%s: failed after %s, want at most %s (directly: %s)", strings.Join(extra, " "), cached.Wall.Round(time.Millisecond), bound, direct.Wall.Round(time.Millisecond))
		}
		sameFailure(t, "configmaps "+strings.Join(extra, " ")+" through a stalled proxy", direct, cached)
		t.Logf("%s: %s through the cache, %s directly: %s", strings.Join(extra, " "), cached.Wall.Round(time.Millisecond), direct.Wall.Round(time.Millisecond), strings.TrimSpace(cached.Stderr))
	}
}

// TestCacheFailingExecPlugin: an exec plugin that fails makes a command through the cache
// fail at once with the plugin's own message, as a direct run does; no cache process starts.
func TestCacheFailingExecPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	kubeconfig := execKubeconfig(t, env, dir)
	tokenFile := writeToken(t, dir, "token", "fail: your session expired: run login again")
	cu := newCacheUser(t, env, kubeconfig, tokenPluginEnv+"="+tokenFile)
	args := []string{"pods", "-n", "default", "-o", "name", "--request-timeout=5s"}
	direct := cu.idx(t, args...)
	if !strings.Contains(direct.Stderr, "your session expired: run login again") {
		t.Fatalf("the direct run with a failing plugin:\n%s", direct)
	}
	cached := cu.idx(t, append(args, "--cache")...)
	// A direct run runs the plugin for each of its first requests, and the plugin's
	// message reaches stderr each time; the cache's client runs it once.
	lastLine := func(s string) string {
		lines := stderrLines(s)
		return lines[len(lines)-1]
	}
	if cached.ExitCode != direct.ExitCode || cached.Stdout != "" || lastLine(cached.Stderr) != lastLine(direct.Stderr) ||
		!strings.Contains(cached.Stderr, "your session expired: run login again") {
		t.Errorf("with a failing plugin, through the cache:\n%s\ndirectly:\n%s", cached, direct)
	}
	if !strings.HasPrefix(lastLine(cached.Stderr), "Unable to connect to the server: getting credentials: exec: executable ") {
		t.Errorf("the error is not kubectl's for a failing plugin: %q", lastLine(cached.Stderr))
	}
	if cached.Wall > 5*time.Second {
		t.Errorf("the failing plugin cost %s through the cache", cached.Wall)
	}
	if pids := cu.serverPIDs(t); len(pids) != 0 {
		t.Errorf("cache processes %v started for a user whose plugin fails", pids)
	}
}

// TestCacheExecCredentialRenewedUnderAFeed: a `watch --cache` runs in the cache process with
// credentials from an exec plugin. The token it had is revoked (its ServiceAccount deleted and
// created again) and the plugin hands out a new one; the proxy to the API server drops every
// connection, so the feed's watches must authenticate again. client-go runs the plugin again
// after the 401, and the feed goes on: a ConfigMap created afterwards is in it.
func TestCacheExecCredentialRenewedUnderAFeed(t *testing.T) {
	const ns = "cache-renewed"
	ctx, cs := parallelNamespace(t, ns)
	serviceAccountWith(ctx, t, cs, ns, "watcher", readRules("configmaps"))
	p, _ := newFaultProxy(t, env)
	dir := t.TempDir()
	kubeconfig := execKubeconfig(t, env, dir)
	// The exec kubeconfig, through the proxy.
	proxied, err := env.KubeconfigVia(kubeconfig, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "first"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	oldToken := serviceAccountToken(ctx, t, cs, ns, "watcher")
	tokenFile := writeToken(t, dir, "token", oldToken)
	cu := newCacheUser(t, env, proxied, tokenPluginEnv+"="+tokenFile)
	feed := startFeedCmd(t, testenv.Cmd{Path: binary, Args: []string{"watch", "configmaps", "-n", ns, "-o", "name", "--cache"}, Env: cu.env, Timeout: feedTimeout})
	feed.waitFor(t, "the feed to start", func(lines []string, _ string) bool {
		return strings.Contains(strings.Join(lines, "\n"), "first")
	})

	if err := cs.CoreV1().ServiceAccounts(ns).Delete(ctx, "watcher", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "watcher"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writeToken(t, dir, "token", serviceAccountToken(ctx, t, cs, ns, "watcher"))
	// The API server remembers a token it accepted for a few seconds: the old one is
	// refused once a request with it is.
	oldCfg := rest.AnonymousClientConfig(env.Config)
	oldCfg.BearerToken = oldToken
	oldClient := kubernetes.NewForConfigOrDie(oldCfg)
	eventually(t, time.Minute, "the old token to be refused", func() string {
		if _, err := oldClient.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{Limit: 1}); !apierrors.IsUnauthorized(err) {
			return fmt.Sprintf("a request with the old token: %v", err)
		}
		return ""
	})
	p.Reset()
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-renewal"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	feed.waitFor(t, "the ConfigMap created after the renewal", func(lines []string, _ string) bool {
		return strings.Contains(strings.Join(lines, "\n"), "after-renewal")
	})
	res := feed.interrupt(t)
	if strings.Contains(res.Stderr, "stopped") {
		t.Errorf("the feed says the cache server stopped:\n%s", res.Stderr)
	}
}

// nobodyUID is the user the tests run kubectl-idx as when it must not be root.
const nobodyUID = 65534

// TestCacheAsAnotherUserInTheirDirectory: kubectl-idx run by a user who is not root, from a
// directory of theirs, names files relative to it. --checkpoint, --template with
// -o go-template-file, -o jsonpath-file= and --kubeconfig resolve there through the cache as
// directly, and the checkpoint a cached feed writes is the one a direct run of the same feed
// resumes from, owned by the user. The cache process is not dumpable (its /proc files are
// root's), holds none of the starter's environment beyond what it needs, and its lock file is
// gone once it is stopped.
func TestCacheAsAnotherUserInTheirDirectory(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Fatal("this test runs kubectl-idx as another user, which takes root")
	}
	ctx := context.Background()
	const ns = "cache-paths"
	createNamespace(ctx, t, env.Clientset, ns)
	if _, err := env.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The user's own directories: a home with the kubeconfig and the templates, a runtime
	// directory, and the binary where they may run it.
	home, err := os.MkdirTemp("", "idxh-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	run := filepath.Join(home, "r")
	bin := filepath.Join(home, "bin")
	for _, d := range []string{run, bin} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	idx := filepath.Join(bin, "kubectl-idx")
	copyExecutable(t, binary, idx)
	kcData, err := os.ReadFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"config":      string(kcData),
		"names.tmpl":  `{{range .items}}{{.metadata.name}}{{"\n"}}{{end}}`,
		"names.jpath": `{range .items[*]}{.metadata.name}{"\n"}{end}`,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(home, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.Walk(home, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobodyUID, nobodyUID)
	}); err != nil {
		t.Fatal(err)
	}
	creds := &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}
	userEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_RUNTIME_DIR=" + run, "KUBECACHEDIR=" + filepath.Join(home, "cache"), "KUBECTL_IDX_TEST_SECRET=not-for-the-cache"}
	idxAs := func(args ...string) testenv.Result {
		t.Helper()
		res := run0(t, testenv.Cmd{Path: idx, Args: args, Env: userEnv, Dir: home, Credential: creds, Timeout: cmdTimeout})
		noPanic(t, "kubectl-idx "+strings.Join(args, " "), res)
		return res
	}
	t.Cleanup(func() { idxAs("cache", "stop", "--kubeconfig", "config") })

	for _, args := range [][]string{
		{"configmaps", "-n", ns, "-o", "go-template-file", "--template", "names.tmpl", "--kubeconfig", "config"},
		{"configmaps", "-n", ns, "-o", "jsonpath-file=names.jpath", "--kubeconfig", "config"},
	} {
		direct := idxAs(args...)
		mustSucceed(t, strings.Join(args, " ")+" directly", direct)
		if !strings.Contains(direct.Stdout, "settings\n") {
			t.Fatalf("%s directly: %q", strings.Join(args, " "), direct.Stdout)
		}
		// The first through the cache answers directly and starts it; the next are its.
		for i := range 3 {
			sameAnswers(t, fmt.Sprintf("%s through the cache (%d)", strings.Join(args, " "), i), direct, idxAs(append(args, "--cache")...))
		}
	}

	// A feed through the cache keeps its checkpoint in the user's directory; a direct run of
	// the same feed resumes from it and prints only what happened since.
	feedArgs := []string{"watch", "configmaps", "-n", ns, "-o", "name", "--checkpoint", "feed.cp", "--kubeconfig", "config"}
	cached := startFeedCmd(t, testenv.Cmd{Path: idx, Args: append(feedArgs, "--cache"), Env: userEnv, Dir: home, Credential: creds, Timeout: feedTimeout})
	cached.waitFor(t, "the cached feed to list", func(lines []string, _ string) bool {
		return strings.Contains(strings.Join(lines, "\n"), "settings")
	})
	cached.interrupt(t)
	fi, err := os.Stat(filepath.Join(home, "feed.cp"))
	if err != nil {
		t.Fatalf("the cached feed's checkpoint is not in the user's directory: %v", err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != nobodyUID {
		t.Errorf("the checkpoint belongs to uid %d, not the user's", st.Uid)
	}
	if _, err := os.Stat("/feed.cp"); err == nil {
		t.Error("a checkpoint was written to /")
	}
	if _, err := env.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "since"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	direct := startFeedCmd(t, testenv.Cmd{Path: idx, Args: feedArgs, Env: userEnv, Dir: home, Credential: creds, Timeout: feedTimeout})
	direct.waitFor(t, "the direct feed to resume", func(lines []string, _ string) bool {
		return strings.Contains(strings.Join(lines, "\n"), "since")
	})
	res := direct.interrupt(t)
	if lines := direct.snapshot(); strings.Contains(strings.Join(lines, "\n"), "settings") {
		t.Errorf("the direct feed did not resume from the cached feed's checkpoint: it printed\n%s\n%s", strings.Join(lines, "\n"), res.Stderr)
	}

	// The cache process: root's /proc files (not dumpable), the environment it needs only.
	pid := cacheServerPID(t, run)
	for _, f := range []string{"environ", "mem"} {
		fi, err := os.Stat(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; uid != 0 {
			t.Errorf("/proc/%d/%s belongs to uid %d: the cache process is dumpable", pid, f, uid)
		}
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range strings.Split(string(environ), "\x00") {
		if name, _, _ := strings.Cut(kv, "="); name != "" && !regexp.MustCompile(`^(PATH|HOME|XDG_RUNTIME_DIR|KUBE_FEATURE_\w+|KUBE_CACHE_MUTATION_DETECTOR)$`).MatchString(name) {
			t.Errorf("the cache process has %s in its environment", name)
		}
	}
	if res := idxAs("cache", "stop", "--kubeconfig", "config"); res.ExitCode != 0 {
		t.Fatalf("cache stop: %s", res)
	}
	left, _ := filepath.Glob(filepath.Join(run, "kubectl-idx", "*"))
	if len(left) != 0 {
		t.Errorf("the stopped cache left %v behind", left)
	}
}

// run0 runs c, which may run as another user.
func run0(t *testing.T, c testenv.Cmd) testenv.Result {
	t.Helper()
	res, err := testenv.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	res.Stderr = dropDetectorNotice(res.Stderr)
	return res
}

// cacheServerPID returns the pid of the one cache process whose runtime directory is dir.
func cacheServerPID(t *testing.T, dir string) int {
	t.Helper()
	c := &cacheUser{dir: dir}
	pids := c.serverPIDs(t)
	if len(pids) != 1 {
		t.Fatalf("cache processes of %s: %v, want one", dir, pids)
	}
	return pids[0]
}

// TestCacheSmallPromises: an unknown cache subcommand is an error; --max-staleness without
// the cache is refused; an answer under --max-staleness that is older than the command says
// so on stderr.
func TestCacheSmallPromises(t *testing.T) {
	t.Parallel()
	cu := newCacheUser(t, env, env.Kubeconfig)
	res := cu.idx(t, "cache", "bogus")
	if res.ExitCode != 1 || res.Stderr != "error: unknown command \"bogus\" for \"kubectl idx cache\"\n" || res.Stdout != "" {
		t.Errorf("cache bogus:\n%s", res)
	}
	res = cu.idx(t, "pods", "-n", "shop", "--max-staleness=1m")
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "--max-staleness needs --cache") {
		t.Errorf("--max-staleness without --cache:\n%s", res)
	}
	args := []string{"pods", "-n", "shop", "-o", "name", "--cache"}
	mustSucceed(t, "pods through the cache", cu.idx(t, args...))
	mustSucceed(t, "pods through the cache", cu.idx(t, args...))
	time.Sleep(1100 * time.Millisecond)
	stale := cu.idx(t, append(args, "--max-staleness=10m")...)
	mustSucceed(t, "pods through the cache, stale", stale)
	if !regexp.MustCompile(`^warning: answered from the warm cache as it was [0-9.]+m?s before this command \(--max-staleness=10m0s\): pods\n$`).MatchString(stale.Stderr) {
		t.Errorf("a stale answer's stderr: %q", stale.Stderr)
	}
	fresh := cu.idx(t, args...)
	mustSucceed(t, "pods through the cache, fresh", fresh)
	if fresh.Stderr != "" || fresh.Stdout != stale.Stdout {
		t.Errorf("a fresh answer: %s", fresh)
	}
}
