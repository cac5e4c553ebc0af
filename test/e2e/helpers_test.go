package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// cmdTimeout bounds one kubectl or kubectl-idx run; generous for a loaded 2-core machine.
const cmdTimeout = 90 * time.Second

// runner runs kubectl-idx or kubectl as a user of the test cluster.
type runner struct {
	kubeconfig string
}

// as returns the runner for user: "" is the admin (system:masters), narrowUser the user
// who may only read pods in fixtures.Shop.
func as(user string) runner {
	switch user {
	case "":
		return runner{kubeconfig: env.Kubeconfig}
	case narrowUser:
		return runner{kubeconfig: narrow.Kubeconfig}
	}
	panic("unknown user " + user)
}

// idx runs the binary under test.
func (r runner) idx(t *testing.T, args ...string) testenv.Result {
	t.Helper()
	res := run(t, testenv.Cmd{Path: binary, Args: args, Env: env.Environ(r.kubeconfig, ""), Timeout: cmdTimeout})
	res.Stderr = dropDetectorNotice(res.Stderr)
	return res
}

// detectorNotice is the klog line client-go prints for every informer when
// KUBE_CACHE_MUTATION_DETECTOR=true, which the e2e run sets on purpose; no user sees it.
var detectorNotice = regexp.MustCompile(`(?m)^W\d{4} [0-9:.]+ +\d+ mutation_detector\.go:\d+\] Mutation detector is enabled, this will result in memory leakage\.\n`)

func dropDetectorNotice(stderr string) string {
	return detectorNotice.ReplaceAllString(stderr, "")
}

// kubectl runs the reference kubectl with args as given (the caller adds "get").
func (r runner) kubectl(t *testing.T, args ...string) testenv.Result {
	t.Helper()
	return run(t, testenv.Cmd{Path: testenv.KubectlPath(), Args: args, Env: env.Environ(r.kubeconfig, ""), Timeout: cmdTimeout})
}

// shell runs a bash pipeline with kubectl-idx discoverable as `kubectl idx`.
func (r runner) shell(t *testing.T, script string) testenv.Result {
	t.Helper()
	res, err := testenv.Run(context.Background(), testenv.Cmd{
		Path: "bash", Args: []string{"-o", "pipefail", "-c", script},
		Env: env.Environ(r.kubeconfig, pluginPath), Timeout: cmdTimeout,
	})
	if err != nil {
		t.Fatalf("%s: %v\n%s", script, err, res)
	}
	res.Stderr = dropDetectorNotice(res.Stderr)
	return res
}

func run(t *testing.T, c testenv.Cmd) testenv.Result {
	t.Helper()
	res, err := testenv.Run(context.Background(), c)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", c.Path, strings.Join(c.Args, " "), err, res)
	}
	return res
}

// mustSucceed fails t unless res exited 0 with no panic text.
func mustSucceed(t *testing.T, what string, res testenv.Result) {
	t.Helper()
	if res.ExitCode != 0 {
		t.Fatalf("%s: want exit code 0\n%s", what, res)
	}
	noPanic(t, what, res)
}

func noPanic(t *testing.T, what string, res testenv.Result) {
	t.Helper()
	for _, s := range []string{"panic", "goroutine "} {
		if strings.Contains(res.Stderr, s) || strings.Contains(res.Stdout, s) {
			t.Fatalf("%s: output contains %q\n%s", what, s, res)
		}
	}
}

// bothSucceed runs kubectl-idx with args and `kubectl get` with kubectlArgs (args when nil),
// and returns their results after checking both exited 0.
func bothSucceed(t *testing.T, r runner, args, kubectlArgs []string) (idxRes, kubectlRes testenv.Result) {
	t.Helper()
	if kubectlArgs == nil {
		kubectlArgs = args
	}
	kubectlRes = r.kubectl(t, append([]string{"get"}, kubectlArgs...)...)
	mustSucceed(t, "kubectl get "+strings.Join(kubectlArgs, " "), kubectlRes)
	idxRes = r.idx(t, args...)
	mustSucceed(t, "kubectl-idx "+strings.Join(args, " "), idxRes)
	return idxRes, kubectlRes
}

// decodeDoc parses JSON or YAML output into plain Go values with kubectl's managedFields
// removed, so map key order and the server-side bookkeeping that kubectl-idx's informer
// transform drops do not count.
func decodeDoc(t *testing.T, what, out string, isYAML bool) map[string]any {
	t.Helper()
	data := []byte(out)
	if isYAML {
		var err error
		if data, err = yaml.YAMLToJSON(data); err != nil {
			t.Fatalf("%s: output is not YAML: %v\n%s", what, err, out)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: output is not one JSON object: %v\n%s", what, err, out)
	}
	return doc
}

func dropManagedFields(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
}

func itemKey(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	return fmt.Sprintf("%v %v/%v", obj["kind"], md["namespace"], md["name"])
}

// compareLists checks that two `-o json` List documents have the same kind and the same
// items in the same order, item by item, after dropping kubectl's managedFields.
func compareLists(t *testing.T, idxDoc, kubectlDoc map[string]any) {
	t.Helper()
	compareDocs(t, idxDoc, kubectlDoc, true)
}

// compareDocs is compareLists, dropping kubectl's managedFields only when dropMF is set.
func compareDocs(t *testing.T, idxDoc, kubectlDoc map[string]any, dropMF bool) {
	t.Helper()
	drop := func(obj map[string]any) {
		if dropMF {
			dropManagedFields(obj)
		}
	}
	for _, k := range []string{"kind", "apiVersion"} {
		if idxDoc[k] != kubectlDoc[k] {
			t.Errorf("%s: kubectl-idx %v, kubectl %v", k, idxDoc[k], kubectlDoc[k])
		}
	}
	idxItems, _ := idxDoc["items"].([]any)
	kubectlItems, _ := kubectlDoc["items"].([]any)
	if kubectlItems == nil {
		// A single object, as `kubectl get TYPE NAME -o json` prints.
		drop(kubectlDoc)
		if diff := cmp.Diff(kubectlDoc, idxDoc); diff != "" {
			t.Errorf("object differs (-kubectl +kubectl-idx):\n%s", diff)
		}
		return
	}
	keys := func(items []any) []string {
		var out []string
		for _, it := range items {
			obj, _ := it.(map[string]any)
			out = append(out, itemKey(obj))
		}
		return out
	}
	if diff := cmp.Diff(keys(kubectlItems), keys(idxItems)); diff != "" {
		t.Fatalf("items differ in names or order (-kubectl +kubectl-idx):\n%s", diff)
	}
	for i := range kubectlItems {
		want := kubectlItems[i].(map[string]any)
		drop(want)
		if diff := cmp.Diff(want, idxItems[i]); diff != "" {
			t.Errorf("item %s differs (-kubectl +kubectl-idx):\n%s", itemKey(want), diff)
		}
	}
}

// table is one block of kubectl's human-readable output.
type table struct {
	header string
	cols   []string
	rows   [][]string
}

var headerCell = regexp.MustCompile(`\S+(?: \S+)*`)

// parseTables splits human-readable output into its tables (kubectl separates the tables of
// several types with a blank line) and each row into cells by the header's column starts, so
// cells holding spaces ("7 (20h ago)") and empty cells stay whole.
func parseTables(out string) []table {
	var tables []table
	for _, block := range strings.Split(strings.TrimRight(out, "\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		if len(lines) == 0 || lines[0] == "" {
			continue
		}
		tables = append(tables, parseTable(lines, false))
	}
	return tables
}

// parseTable splits the rows of one table, lines, into cells by its header's column starts,
// counted in bytes and each cell trimmed; for a tree, counted in runes (the tree-drawing
// characters take several bytes, one column, as text/tabwriter aligns them) and each cell
// left as it starts: the tree-drawing indent is the answer.
func parseTable(lines []string, tree bool) table {
	tb := table{header: lines[0]}
	idx := headerCell.FindAllStringIndex(lines[0], -1)
	for _, span := range idx {
		tb.cols = append(tb.cols, lines[0][span[0]:span[1]])
	}
	for _, line := range lines[1:] {
		cell, n := func(from, to int) string { return strings.TrimSpace(line[from:to]) }, len(line)
		if tree {
			rs := []rune(line)
			cell, n = func(from, to int) string { return strings.TrimRight(string(rs[from:to]), " ") }, len(rs)
		}
		row := make([]string, len(idx))
		for i, span := range idx {
			end := n
			if i+1 < len(idx) {
				end = min(idx[i+1][0], n)
			}
			if span[0] < end {
				row[i] = cell(span[0], end)
			}
		}
		tb.rows = append(tb.rows, row)
	}
	return tb
}

// headerWithoutTimeWidths returns tb's header with the padding of each column in
// timeCols shortened to three spaces, after checking that the padding is what the
// column's own widest cell asks for: printers pad a column to its widest cell (or
// its name) plus three spaces. Two reads of the same objects a second apart may
// print AGE cells of different widths; with this, their headers compare exactly in
// every other column and each is still checked against its own rows.
func headerWithoutTimeWidths(tb table, timeCols []string) (string, error) {
	idx := headerCell.FindAllStringIndex(tb.header, -1)
	var b strings.Builder
	for i, span := range idx {
		name := tb.header[span[0]:span[1]]
		if i+1 == len(idx) {
			b.WriteString(tb.header[span[0]:])
			break
		}
		end := idx[i+1][0]
		if !slices.Contains(timeCols, name) {
			b.WriteString(tb.header[span[0]:end])
			continue
		}
		width := len(name)
		for _, row := range tb.rows {
			if i < len(row) {
				width = max(width, len(row[i]))
			}
		}
		if got := end - span[0]; got != width+3 {
			return "", fmt.Errorf("column %s is %d wide in header %q, want %d: its widest cell or its name and three spaces", name, got, tb.header, width+3)
		}
		b.WriteString(name + "   ")
	}
	return b.String(), nil
}

var wideGap = regexp.MustCompile(`\s{3,}`)

// parseHeaderless splits --no-headers output on the three-space tabwriter padding; fine for
// tables without empty cells.
func parseHeaderless(out string) [][]string {
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line != "" {
			rows = append(rows, wideGap.Split(strings.TrimSpace(line), -1))
		}
	}
	return rows
}

// ageLike matches what duration.HumanDuration prints for a recent object.
var ageLike = regexp.MustCompile(`^(\d+[smhdy])+$`)

// maskColumns replaces the cells of time-dependent columns (AGE: the objects were created
// seconds ago, so kubectl and kubectl-idx may be a second apart) after checking they look
// like ages.
func maskColumns(t *testing.T, what string, tb table, masked ...string) table {
	t.Helper()
	out := table{header: tb.header, cols: tb.cols}
	for _, row := range tb.rows {
		r := slices.Clone(row)
		for i, col := range tb.cols {
			if slices.Contains(masked, col) && i < len(r) {
				if !ageLike.MatchString(r[i]) {
					t.Errorf("%s: column %s holds %q, not an age", what, col, r[i])
				}
				r[i] = "<age>"
			}
		}
		out.rows = append(out.rows, r)
	}
	return out
}

// firstCol returns column 0 of each row.
func firstCol(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		if len(r) > 0 {
			out = append(out, r[0])
		}
	}
	return out
}

// stderrLines returns the non-empty lines of stderr.
func stderrLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// shortNames returns the names part of "namespace/name" keys.
func shortNames(keys []string) []string {
	var out []string
	for _, k := range keys {
		_, name, _ := strings.Cut(k, "/")
		out = append(out, name)
	}
	return out
}

// writeKubeconfigUser writes to path a kubeconfig of one context, name, on the cluster of the
// kubeconfig from, whose only user is name with credentials user: the admin's credentials out,
// the user's in. perm is the file's mode.
func writeKubeconfigUser(t *testing.T, path, from, name string, user map[string]any, perm os.FileMode) {
	t.Helper()
	if err := testenv.WriteKubeconfig(path, testenv.KubeconfigContext{Name: name, From: from}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["users"] = []any{map[string]any{"name": name, "user": user}}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, perm); err != nil {
		t.Fatal(err)
	}
}

// copyExecutable copies the program at from to to, which anyone may run: a place where a
// user other than the test's may run it.
func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// feedTimeout bounds one feed process; the longest test runs its feed for about a minute.
const feedTimeout = 5 * time.Minute

// waitTimeout bounds the wait for the feed to report something; a reconnect after an API
// server restart takes the reflector's backoff, up to several seconds on a loaded machine.
const waitTimeout = 60 * time.Second

// feedRun is a running command that prints as it goes (`kubectl-idx watch`, a watch table)
// whose stdout lines are collected as they come.
type feedRun struct {
	proc  *testenv.Process
	mu    sync.Mutex
	lines []string
	last  time.Time // when the last line came
	done  chan struct{}
}

// startFeed runs the binary under test with args against e as the user of kubeconfig.
func startFeed(t *testing.T, e *testenv.Env, kubeconfig string, args ...string) *feedRun {
	t.Helper()
	return startFeedEnv(t, e, kubeconfig, nil, args...)
}

// startFeedEnv is startFeed with extra KEY=value settings in the feed's environment.
func startFeedEnv(t *testing.T, e *testenv.Env, kubeconfig string, extraEnv []string, args ...string) *feedRun {
	t.Helper()
	return startFeedCmd(t, testenv.Cmd{
		Path: binary, Args: args, Env: testenv.MergeEnv(e.Environ(kubeconfig, ""), extraEnv...), Timeout: feedTimeout,
	})
}

// startFeedCmd runs c, a feed, and collects its lines.
func startFeedCmd(t *testing.T, c testenv.Cmd) *feedRun {
	t.Helper()
	p, err := testenv.StartProcess(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	f := &feedRun{proc: p, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		for l := range p.Lines {
			f.mu.Lock()
			f.lines = append(f.lines, l.Text)
			f.last = l.At
			f.mu.Unlock()
		}
	}()
	// A test that failed half-way leaves the feed running: end it.
	t.Cleanup(p.Kill)
	return f
}

func (f *feedRun) snapshot() []string {
	lines, _ := f.snapshotAt()
	return lines
}

// snapshotAt returns the lines so far and when the last of them came.
func (f *feedRun) snapshotAt() ([]string, time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.lines), f.last
}

// feedEvents parses lines as NDJSON events of type E.
func feedEvents[E any](t *testing.T, lines []string) []E {
	t.Helper()
	var out []E
	for _, l := range lines {
		var ev E
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("feed line is not a JSON event: %v\n%s", err, l)
		}
		out = append(out, ev)
	}
	return out
}

// waitFor polls until cond holds for the lines and stderr so far, for at most
// waitTimeout (see waitWithin).
func (f *feedRun) waitFor(t *testing.T, what string, cond func(lines []string, stderr string) bool) {
	t.Helper()
	f.waitWithin(t, what, waitTimeout, cond)
}

// waitWithin polls until cond holds for the feed's lines and stderr so far, for at most d;
// a feed that exits or does not get there in time fails the test, with what it printed.
func (f *feedRun) waitWithin(t *testing.T, what string, d time.Duration, cond func(lines []string, stderr string) bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		lines, stderr := f.snapshot(), dropDetectorNotice(f.proc.Stderr())
		if cond(lines, stderr) {
			return
		}
		select {
		case <-f.done:
			res, _ := f.proc.Wait(time.Second)
			t.Fatalf("the feed exited while waiting for %s\n%s\n--- stdout ---\n%s", what, res, strings.Join(lines, "\n"))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the feed hung: no %s within %s\n--- stderr ---\n%s\n--- stdout ---\n%s", what, d, stderr, strings.Join(lines, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// exit waits at most d for the feed to exit, killing it after that, and returns its result
// (stderr without the detector notice) once its stdout is read to the end; the error says
// it had to be killed.
func (f *feedRun) exit(d time.Duration) (testenv.Result, error) {
	res, err := f.proc.Wait(d)
	<-f.done
	res.Stderr = dropDetectorNotice(res.Stderr)
	return res, err
}

// ended sends sig and returns the feed's result once it has exited, failing t if it does
// not within d.
func (f *feedRun) ended(t *testing.T, sig syscall.Signal, d time.Duration) testenv.Result {
	t.Helper()
	if err := f.proc.Signal(sig); err != nil {
		t.Fatal(err)
	}
	res, err := f.exit(d)
	if err != nil {
		t.Fatalf("the feed hung on %s: %v\n%s", sig, err, res)
	}
	return res
}

// endedZero sends sig and checks the feed exits 0 within d and prints nothing it should not.
func (f *feedRun) endedZero(t *testing.T, sig syscall.Signal, d time.Duration) testenv.Result {
	t.Helper()
	res := f.ended(t, sig, d)
	if res.ExitCode != 0 {
		t.Fatalf("after %s: want exit code 0\n%s", sig, res)
	}
	noPanic(t, "kubectl-idx watch", res)
	return res
}

// interrupt sends SIGINT and checks the feed exits 0 and prints nothing it should not.
func (f *feedRun) interrupt(t *testing.T) testenv.Result {
	t.Helper()
	return f.signal(t, syscall.SIGINT)
}

// signal sends sig and checks the feed exits 0 and prints nothing it should not.
func (f *feedRun) signal(t *testing.T, sig syscall.Signal) testenv.Result {
	t.Helper()
	return f.endedZero(t, sig, 30*time.Second)
}

// stop ends the feed with SIGINT, failing the test if it does not exit 0 within 20 s.
func (f *feedRun) stop(t *testing.T) testenv.Result {
	t.Helper()
	return f.endedZero(t, syscall.SIGINT, 20*time.Second)
}

// mustDecode parses out, JSON a command printed, into v; a failure names the output what
// and shows it.
func mustDecode(t *testing.T, what, out string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, out)
	}
}

// listItems parses out, a List kubectl or kubectl-idx printed with -o json, into its items.
func listItems(t *testing.T, what, out string) []*unstructured.Unstructured {
	t.Helper()
	var list struct {
		Items []*unstructured.Unstructured `json:"items"`
	}
	mustDecode(t, what, out, &list)
	return list.Items
}
