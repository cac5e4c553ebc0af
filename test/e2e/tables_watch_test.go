package e2e

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// The watch table and --show-owner on the workload of TestTablesEveryType (tables_test.go):
// `kubectl idx watch TYPE -A` prints TIME EVENT KIND NAMESPACE NAME, then the columns of the
// server's table of the kind but its first (the name), as kubectl get prints them; --show-owner
// adds each object's top-level controller as OWNER.

const (
	// watchFirstRowTimeout bounds the wait for a watch's first row: the time to discover, list
	// and print, on a loaded machine.
	watchFirstRowTimeout = time.Minute
	// watchQuiet ends the wait for a watch's current objects when fewer rows than the count
	// came (an object went away between the count and the watch's list): nothing new for this
	// long after the first row. The current objects are printed in one go.
	watchQuiet = 2 * time.Second
	// watchStopTimeout bounds the wait for a watch to exit after SIGINT.
	watchStopTimeout = 30 * time.Second
)

// watchPrefixColumns open every row of a watch table.
var watchPrefixColumns = []string{"TIME", "EVENT", "KIND", "NAMESPACE", "NAME"}

// watchOutput is what a `kubectl idx watch` stopped by runWatch printed.
type watchOutput struct {
	lines  []string
	stderr string
}

func (w watchOutput) String() string {
	s := headLines(strings.Join(w.lines, "\n"), 12)
	if w.stderr != "" {
		s += "\n--- stderr ---\n" + strings.TrimRight(w.stderr, "\n")
	}
	return s
}

// runWatch runs `kubectl idx ARGS`, a watch printing a table, until it has printed want ADDED
// rows (or, fewer, nothing new for watchQuiet after the first), then interrupts it and returns
// what it printed. The watch must exit 0 on SIGINT, without a panic.
func runWatch(t *testing.T, c *ctrlCluster, want int, args ...string) watchOutput {
	t.Helper()
	what := "kubectl idx " + strings.Join(args, " ")
	f := startFeedCmd(t, testenv.Cmd{
		Path: testenv.KubectlPath(), Args: append([]string{"idx"}, args...),
		Env: c.env.Environ(c.env.Kubeconfig, c.pluginPath), Timeout: 2 * time.Minute,
	})
	start := time.Now()
	exited := false
	for {
		lines, last := f.snapshotAt()
		added, quiet := 0, !last.IsZero() && time.Since(last) > watchQuiet
		for _, l := range lines {
			if cells := strings.Fields(l); len(cells) > 1 && cells[1] == "ADDED" {
				added++
			}
		}
		select {
		case <-f.done:
			exited = true
		default:
		}
		if added >= want || added > 0 && quiet || exited {
			break
		}
		if time.Since(start) > watchFirstRowTimeout {
			f.proc.Kill()
			<-f.done
			t.Fatalf("%s printed %d of %d ADDED rows in %s:\n%s", what, added, want, watchFirstRowTimeout, watchOutput{f.snapshot(), f.proc.Stderr()})
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !exited {
		if err := f.proc.Signal(syscall.SIGINT); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatal(err)
		}
	}
	res, err := f.exit(watchStopTimeout)
	lines := f.snapshot()
	out := watchOutput{lines: lines, stderr: res.Stderr}
	switch {
	case exited:
		t.Fatalf("%s exited by itself, exit code %d, after printing %d lines:\n%s", what, res.ExitCode, len(lines), out)
	case err != nil || res.ExitCode != 0:
		t.Fatalf("%s after SIGINT: %v, exit code %d, want 0:\n%s", what, err, res.ExitCode, out)
	}
	res.Stdout = strings.Join(lines, "\n")
	noPanic(t, what, res)
	return out
}

// parseWatchTable splits a watch's table into cells by its header's column starts, as
// parseTables does, counting runes: empty cells (the NAMESPACE of a cluster-scoped object)
// stay empty. The rows are the ADDED ones. An ADDED row that does not line up with the header
// is a problem: the columns widen when a later row is wider than those before (the current
// objects are printed at once, but an object added since may be), and its cells would be cut
// in the wrong places. A table without a header, or whose header does not start with the
// watch's columns, has no columns.
func parseWatchTable(lines []string) (table, []string) {
	var tb table
	var problems []string
	var starts []int
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		r := []rune(line)
		if starts == nil {
			tb.header = line
			for _, span := range headerCell.FindAllStringIndex(line, -1) {
				tb.cols = append(tb.cols, line[span[0]:span[1]])
				starts = append(starts, len([]rune(line[:span[0]])))
			}
			if len(tb.cols) < len(watchPrefixColumns) || !slices.Equal(tb.cols[:len(watchPrefixColumns)], watchPrefixColumns) {
				tb.cols = nil
				return tb, []string{fmt.Sprintf("the watch's header %q does not start with %s", line, strings.Join(watchPrefixColumns, " "))}
			}
			continue
		}
		if slices.Equal(strings.Fields(line), strings.Fields(tb.header)) {
			problems = append(problems, "the watch printed its header twice")
			continue
		}
		row := make([]string, len(starts))
		aligned := true
		for i, s := range starts {
			if i > 0 && s <= len(r) && r[s-1] != ' ' {
				aligned = false
			}
			end := len(r)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(r))
			}
			if s < end {
				row[i] = strings.TrimSpace(string(r[s:end]))
			}
		}
		if row[1] != "ADDED" {
			continue
		}
		if !aligned {
			problems = append(problems, fmt.Sprintf("row %q does not line up with the header %q", line, tb.header))
		}
		tb.rows = append(tb.rows, row)
	}
	if starts == nil {
		problems = append(problems, "the watch printed no header")
	}
	return tb, problems
}

// diffWatchTable returns how a watch's table w differs from the table `kubectl get` printed
// (want) for the same objects of kind, one line per difference: first the header's (its
// columns after TIME EVENT KIND NAMESPACE NAME against kubectl's but NAMESPACE and NAME),
// then the rows' (each object's cells in the columns both have, time cells masked, keyed by
// NAMESPACE/NAME; a cluster-scoped kind's NAMESPACE cells empty). header says whether the
// header differs: that is no moving object, a retry cannot cure it.
func diffWatchTable(want string, w table, kind string) (diff []string, header bool) {
	wt := parseTables(want)
	if len(wt) != 1 {
		return []string{fmt.Sprintf("kubectl printed %d tables", len(wt))}, false
	}
	k := wt[0]
	var wantCols []string
	for _, col := range k.cols {
		if col != "NAMESPACE" && col != "NAME" {
			wantCols = append(wantCols, col)
		}
	}
	gotCols := w.cols[len(watchPrefixColumns):]
	if !slices.Equal(wantCols, gotCols) {
		diff = append(diff, fmt.Sprintf("columns after %s: kubectl get's (but NAMESPACE and NAME) %q, the watch's %q",
			strings.Join(watchPrefixColumns, " "), strings.Join(wantCols, "   "), strings.Join(gotCols, "   ")))
		header = true
	}
	namespaced := slices.Contains(k.cols, "NAMESPACE")
	var rowDiff []string
	got := map[string]map[string]string{}
	for _, row := range w.rows {
		key := row[4]
		if namespaced {
			key = row[3] + "/" + key
		}
		if row[2] != kind {
			rowDiff = append(rowDiff, fmt.Sprintf("row %s: KIND %q, want %q", key, row[2], kind))
		}
		if !namespaced && row[3] != "" {
			rowDiff = append(rowDiff, fmt.Sprintf("row %s: NAMESPACE %q for a cluster-scoped kind", key, row[3]))
		}
		if _, dup := got[key]; dup {
			rowDiff = append(rowDiff, fmt.Sprintf("row %s: ADDED twice", key))
		}
		cells := map[string]string{}
		for i, col := range gotCols {
			if _, seen := cells[col]; !seen {
				cells[col] = maskTimeCell(col, row[len(watchPrefixColumns)+i])
			}
		}
		got[key] = cells
	}
	if !slices.Contains(k.cols, "NAME") {
		// kubectl get events has no NAME column (its -o wide has): there is nothing to match
		// the watch's rows with kubectl's by, so only their number is compared.
		if len(k.rows) != len(w.rows) {
			rowDiff = append(rowDiff, fmt.Sprintf("kubectl get printed %d rows, the watch %d ADDED rows", len(k.rows), len(w.rows)))
		}
		return append(diff, rowDiff...), header
	}
	wantRows := rowsByKey(k)
	keys := slices.Sorted(maps.Keys(wantRows))
	for key := range got {
		if _, ok := wantRows[key]; !ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	for _, key := range keys {
		wr, ok := wantRows[key]
		if !ok {
			rowDiff = append(rowDiff, fmt.Sprintf("row %s: in the watch, not in kubectl get", key))
			continue
		}
		gr, ok := got[key]
		if !ok {
			rowDiff = append(rowDiff, fmt.Sprintf("row %s: in kubectl get, not in the watch", key))
			continue
		}
		for _, col := range wantCols {
			gc, ok := gr[col]
			if !ok {
				continue
			}
			if wc := wr[0][col]; wc != gc {
				rowDiff = append(rowDiff, fmt.Sprintf("row %s, %s: kubectl get %q, the watch %q", key, col, wc, gc))
			}
		}
	}
	const maxRows = 8
	if len(rowDiff) > maxRows {
		rowDiff = append(rowDiff[:maxRows], fmt.Sprintf("... %d more differences in rows", len(rowDiff)-maxRows))
	}
	return append(diff, rowDiff...), header
}

// compareWatchTable compares the table of `kubectl idx watch TYPE -A EXTRA...`, stopped once
// it has printed the current objects, with `kubectl get TYPE -A EXTRA...` (diffWatchTable).
// The objects may change meanwhile: it reads kubectl before the watch (which says how many
// rows to wait for) and after it, passes if the watch matches either, and otherwise tries
// again, up to tablesAttempts times; a header that differs fails at once.
func compareWatchTable(t *testing.T, c *ctrlCluster, typ, kind string, extra ...string) {
	t.Helper()
	args := append([]string{typ, "-A"}, extra...)
	what := strings.Join(args, " ")
	get := append([]string{"get"}, args...)
	var diff []string
	var kubectlOut string
	var out watchOutput
	for attempt := 1; attempt <= tablesAttempts; attempt++ {
		if attempt > 1 {
			time.Sleep(tablesRetryDelay)
		}
		before := c.mustKubectl(t, "", get...).Stdout
		n := 0
		if tbs := parseTables(before); len(tbs) == 1 {
			n = len(tbs[0].rows)
		}
		out = runWatch(t, c, n, append([]string{"watch"}, args...)...)
		kubectlOut = c.mustKubectl(t, "", get...).Stdout
		wt, problems := parseWatchTable(out.lines)
		if wt.cols == nil {
			diff = problems
			break
		}
		if problems != nil {
			diff = problems
			continue
		}
		var header bool
		if diff, header = diffWatchTable(kubectlOut, wt, kind); diff == nil {
			logAttempts(t, "watch "+what, attempt)
			return
		}
		if header {
			break
		}
		if d, _ := diffWatchTable(before, wt, kind); d == nil {
			logAttempts(t, "watch "+what, attempt)
			return
		}
	}
	t.Errorf("kubectl idx watch %s differs from kubectl get %s:\n%s\n--- kubectl get %s ---\n%s\n--- kubectl idx watch %s ---\n%s",
		what, what, strings.Join(diff, "\n"), what, headLines(kubectlOut, 12), what, out)
}

// showOwnerKinds are the kinds of the objects and the controllers --show-owner is checked
// against: every controller of a pod or ReplicaSet of the workload, and nodes (the controller
// of mirror pods).
const showOwnerKinds = "pods,replicasets,deployments,statefulsets,daemonsets,jobs,cronjobs,replicationcontrollers,nodes"

// ownerlessPods are two pods checkShowOwner adds to the workload: one no controller owns
// (<none>), one whose controller is of a kind no server serves (the walk stops at the
// reference: Gadget/gizmo). The garbage collector cannot look such an owner up, so it leaves
// the pod alone.
const ownerlessPods = `apiVersion: v1
kind: Pod
metadata:
  name: bare
  namespace: e2e-tables
  labels: {app: e2e-tables-bare}
spec:
  containers:
  - {name: bare, image: registry.example/bare:1.0}
---
apiVersion: v1
kind: Pod
metadata:
  name: gadget-owned
  namespace: e2e-tables
  labels: {app: e2e-tables-gadget}
  ownerReferences:
  - {apiVersion: e2e-tables.example.com/v1, kind: Gadget, name: gizmo, uid: 5f0c1b4e-0000-4000-8000-000000000001, controller: true}
spec:
  containers:
  - {name: gadget, image: registry.example/gadget:1.0}
`

// checkShowOwner checks the OWNER column of --show-owner in `kubectl idx pods -A`,
// `kubectl idx replicasets -A` and `kubectl idx watch pods -n NS` against the top-level
// controllers found by walking controller references through showOwnerKinds read at the same
// moment (ownerIndex.top), after adding the chains the workload lacks: a Job made from the
// CronJob (pod -> Job -> CronJob) and ownerlessPods. --show-owner with --by-node is an error.
func checkShowOwner(t *testing.T, c *ctrlCluster) {
	ns := tablesNamespace
	c.mustKubectl(t, "", "-n", ns, "create", "job", "owner-manual", "--from=cronjob/nightly-report")
	c.mustKubectl(t, ownerlessPods, "apply", "-f", "-")
	eventually(t, 2*time.Minute, "a pod of job owner-manual", func() string {
		if c.mustKubectl(t, "", "-n", ns, "get", "pods", "-l", "job-name=owner-manual", "-o", "name").Stdout == "" {
			return "none yet"
		}
		return ""
	})
	read := func() workloads { return c.read(t, showOwnerKinds, "-A") }

	t.Run("pods", func(t *testing.T) {
		truth := checkOwnerTable(t, c, read, "Pod", "pods", "-A", "--show-owner")
		for _, want := range []string{ns + "/bare=<none>", ns + "/gadget-owned=Gadget/gizmo"} {
			if !slices.Contains(truth, want) {
				t.Errorf("no pod %s among %q", want, truth)
			}
		}
		for _, prefix := range []string{"Deployment/", "StatefulSet/", "DaemonSet/", "CronJob/", "Job/", "ReplicationController/"} {
			if !slices.ContainsFunc(truth, func(s string) bool { return strings.Contains(s, "="+prefix) }) {
				t.Errorf("no pod owned by a %s: the workload lost a chain; owners: %q", prefix, truth)
			}
		}
	})
	t.Run("replicasets", func(t *testing.T) {
		truth := checkOwnerTable(t, c, read, "ReplicaSet", "replicasets", "-A", "--show-owner")
		if !slices.ContainsFunc(truth, func(s string) bool { return strings.Contains(s, "=Deployment/") }) {
			t.Errorf("no ReplicaSet owned by a Deployment: %q", truth)
		}
	})
	t.Run("watch", func(t *testing.T) { checkOwnerWatch(t, c, read, ns) })
	t.Run("by-node", func(t *testing.T) {
		res := c.idx(t, "pods", "-A", "--show-owner", "--by-node")
		noPanic(t, "kubectl idx pods -A --show-owner --by-node", res)
		lines := stderrLines(res.Stderr)
		if res.ExitCode != 1 || res.Stdout != "" || len(lines) != 1 || !strings.Contains(lines[0], "--show-owner") {
			t.Errorf("kubectl idx pods -A --show-owner --by-node: want exit code 1, no output and a one-line error naming --show-owner\n%s", res)
		}
	})
}

// ownersOf returns the top-level controller of each object of kind in w, as the OWNER column
// names it (Kind/name, <none>), by NAMESPACE/NAME.
func ownersOf(t *testing.T, w workloads, kind string) map[string]string {
	t.Helper()
	idx := w.owners()
	out := map[string]string{}
	for _, o := range w.ofKind(kind) {
		out[nsName(o)] = idx.top(t, o).groupName()
	}
	return out
}

// ownerDiff fails t when the OWNER cells of what differ from the truth.
func ownerDiff(t *testing.T, what string, want, got map[string]string, out string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("OWNER column of %s (-top-level controller by kubectl's objects, +kubectl idx):\n%s\n--- kubectl idx ---\n%s", what, d, headLines(out, 20))
	}
}

// checkOwnerTable runs `kubectl idx ARGS` (a table of kind with --show-owner) between two
// equal reads of the owner graph and compares its OWNER column with the truth; its header
// must be kubectl get's and OWNER. It returns the truth as sorted NAMESPACE/NAME=OWNER lines.
func checkOwnerTable(t *testing.T, c *ctrlCluster, read func() workloads, kind string, args ...string) []string {
	t.Helper()
	what := "kubectl idx " + strings.Join(args, " ")
	w, res := c.steady(t, read, workloads.ownership, args...)
	if res.Stderr != "" {
		t.Logf("%s: stderr:\n%s", what, res.Stderr)
	}
	tbs := parseTables(res.Stdout)
	if len(tbs) != 1 {
		t.Fatalf("%s printed %d tables:\n%s", what, len(tbs), res.Stdout)
	}
	tb := tbs[0]
	plain := parseTables(c.mustKubectl(t, "", "get", args[0], "-A").Stdout)
	if len(plain) != 1 || !slices.Equal(tb.cols, append(slices.Clone(plain[0].cols), "OWNER")) {
		t.Fatalf("%s: header %q, want kubectl get %s -A's and OWNER", what, tb.header, args[0])
	}
	got := map[string]string{}
	for _, row := range tb.rows {
		got[row[0]+"/"+row[1]] = row[len(row)-1]
	}
	want := ownersOf(t, w, kind)
	ownerDiff(t, what, want, got, res.Stdout)
	var truth []string
	for k, v := range want {
		truth = append(truth, k+"="+v)
	}
	slices.Sort(truth)
	return truth
}

// checkOwnerWatch compares the OWNER cells of `kubectl idx watch pods -n NS --show-owner`,
// stopped once the pods are printed, with the truth read before and after it, when the owner
// graph did not change meanwhile.
func checkOwnerWatch(t *testing.T, c *ctrlCluster, read func() workloads, ns string) {
	args := []string{"watch", "pods", "-n", ns, "--show-owner"}
	what := "kubectl idx " + strings.Join(args, " ")
	for attempt := 1; attempt <= steadyAttempts; attempt++ {
		before := read()
		want := map[string]string{}
		for k, v := range ownersOf(t, before, "Pod") {
			if strings.HasPrefix(k, ns+"/") {
				want[k] = v
			}
		}
		out := runWatch(t, c, len(want), args...)
		if !maps.Equal(before.ownership(), read().ownership()) {
			t.Logf("the owner graph changed while %s ran (attempt %d); again", what, attempt)
			time.Sleep(pollInterval)
			continue
		}
		tb, problems := parseWatchTable(out.lines)
		if tb.cols == nil {
			t.Fatalf("%s:\n%s\n%s", what, strings.Join(problems, "\n"), out)
		}
		if problems != nil {
			t.Logf("%s (attempt %d):\n%s", what, attempt, strings.Join(problems, "\n"))
			continue
		}
		if tb.cols[len(tb.cols)-1] != "OWNER" {
			t.Fatalf("%s: header %q does not end with OWNER", what, tb.header)
		}
		got := map[string]string{}
		for _, row := range tb.rows {
			got[row[3]+"/"+row[4]] = row[len(row)-1]
		}
		if out.stderr != "" {
			t.Logf("%s: stderr:\n%s", what, out.stderr)
		}
		ownerDiff(t, what, want, got, strings.Join(out.lines, "\n"))
		return
	}
	t.Fatalf("the owner graph kept changing around %s, %d times", what, steadyAttempts)
}
