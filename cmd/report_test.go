package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// The report step is one for every command and for one context or several:
// these tests run every command, as RunE does, over one fake cluster and over
// two, and hold the two against each other.

// world is what a fake cluster holds and what its user may not read.
type world struct {
	objects func() []runtime.Object
	// forbid are the resources (plural) the user may not list, typed or
	// metadata only.
	forbid []string
	// fallback serves fixtures.FallbackServer: pods may be listed in shop
	// and empty but not in other nor at the cluster scope.
	fallback bool
}

// server is a fake API server of w.
func (w world) server() *fakeapi.Server {
	if w.fallback {
		return fixtures.FallbackServer(true)
	}
	s := fakeapi.New(nil, w.objects()...)
	fixtures.ForbidMetadataList(s, w.forbid...)
	if len(w.forbid) > 0 {
		s.BeforeList = func(req *http.Request) *metav1.Status {
			for _, r := range w.forbid {
				if strings.HasSuffix(req.URL.Path, "/"+r) {
					return &fixtures.Forbidden(schema.GroupResource{Group: "apps", Resource: r}, "shop").ErrStatus
				}
			}
			return nil
		}
	}
	return s
}

// commandCase is one command line, and the worlds it answers nothing in
// and in part in.
type commandCase struct {
	name string
	cmd  func(*Flags, genericiooptions.IOStreams) *cobra.Command
	args []string
	// lists are the discovery of the clusters; mapper adds the owner kinds
	// the listing tests' discovery lacks.
	lists  []*metav1.APIResourceList
	mapper bool
	// all is -A; namespace the one asked otherwise.
	all       bool
	namespace string
	// empty holds nothing to answer with; notice is what a table of it says.
	empty  *world
	notice string
	// partial holds what the user may not read in full: warnings.
	partial *world
	// feed follows until stopped.
	feed bool
}

func getCmd(f *Flags, streams genericiooptions.IOStreams) *cobra.Command {
	return newCmdGet(NewGetOptions(f, streams))
}

var (
	listWorld      = world{objects: fixtures.ListObjects}
	fallbackWorld  = world{fallback: true}
	ownerWorld     = world{objects: fixtures.OwnerObjects, forbid: []string{"replicasets"}}
	relationWorld  = world{objects: fixtures.RelationObjects}
	forbiddenRS    = world{objects: fixtures.RelationObjects, forbid: []string{"replicasets"}}
	selectionWorld = world{objects: func() []runtime.Object {
		return append(fixtures.SelectionObjects(),
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "unused"}},
			fixtures.Pod("empty", "lonely", "lonely", true))
	}}
	forbiddenSelection = world{objects: selectionWorld.objects, forbid: []string{"replicasets"}}
)

func commandCases() []commandCase {
	listing := fixtures.APIResources()
	relation := fixtures.RelationAPIResources()
	cases := []commandCase{
		{name: "get", cmd: getCmd, args: []string{"pods"}, lists: listing, namespace: "empty", empty: &listWorld, notice: "No resources found in empty namespace."},
		{name: "get -A", cmd: getCmd, args: []string{"pods"}, lists: listing, all: true, partial: &fallbackWorld},
		{name: "get --by-owner", cmd: getCmd, args: []string{"pods", "--by-owner"}, lists: listing, mapper: true, namespace: "shop", partial: &ownerWorld},
		{name: "get --by-owner, nothing", cmd: getCmd, args: []string{"pods", "--by-owner"}, lists: listing, mapper: true, namespace: "empty", empty: &listWorld, notice: "No resources found in empty namespace."},
		{name: "get --by-node", cmd: getCmd, args: []string{"pods", "--by-node"}, lists: listing, namespace: "empty", empty: &listWorld, notice: "No resources found in empty namespace."},
		{name: "get --by-node -A", cmd: getCmd, args: []string{"pods", "--by-node"}, lists: listing, all: true, partial: &fallbackWorld},
	}
	for _, flags := range [][]string{{"--by-label", "app"}, {"--by-namespace"}, {"--by", "{.spec.nodeName}"}} {
		args := append([]string{"pods"}, flags...)
		cases = append(cases,
			commandCase{name: "get " + flags[0], cmd: getCmd, args: args, lists: listing, namespace: "empty", empty: &listWorld, notice: "No resources found in empty namespace."},
			commandCase{name: "get -A " + flags[0], cmd: getCmd, args: args, lists: listing, all: true, partial: &fallbackWorld},
		)
	}
	return append(cases,
		commandCase{name: "tree", cmd: NewCmdTree, args: []string{"deployment/web"}, lists: relation, namespace: "shop", partial: &forbiddenRS},
		commandCase{name: "owners", cmd: NewCmdOwners, args: []string{"pod/web-7d9c-a"}, lists: relation, namespace: "shop", partial: &forbiddenRS},
		commandCase{name: "orphans", cmd: NewCmdOrphans, lists: relation, namespace: "empty", empty: &relationWorld, notice: "No resources found in empty namespace."},
		commandCase{name: "orphans, in part", cmd: NewCmdOrphans, lists: relation, namespace: "shop", partial: &forbiddenRS},
		commandCase{name: "uses", cmd: NewCmdUses, args: []string{"configmap/unused"}, lists: relation, namespace: "shop", empty: &selectionWorld, notice: "Nothing found: configmap/unused is not used by any pod or pod template"},
		commandCase{name: "uses, in part", cmd: NewCmdUses, args: []string{"configmap/app-config"}, lists: relation, namespace: "shop", partial: &forbiddenSelection},
		// A Service without a selector: a warning and nothing found.
		commandCase{name: "selects", cmd: NewCmdSelects, args: []string{"svc/external"}, lists: relation, namespace: "shop", empty: &selectionWorld, notice: "No resources found in shop namespace.", partial: &selectionWorld},
		commandCase{name: "selected-by", cmd: NewCmdSelectedBy, args: []string{"pod/lonely"}, lists: relation, namespace: "empty", empty: &selectionWorld, notice: "No resources found in empty namespace."},
		commandCase{name: "selected-by, in part", cmd: NewCmdSelectedBy, args: []string{"pod/web-7d9c-a"}, lists: relation, namespace: "shop", partial: &forbiddenSelection},
		commandCase{name: "events", cmd: NewCmdEvents, args: []string{"configmap/app-config"}, lists: relation, namespace: "shop", empty: &selectionWorld, notice: "No events found in shop namespace."},
		commandCase{name: "events, in part", cmd: NewCmdEvents, args: []string{"deployment/web"}, lists: relation, namespace: "shop", partial: &forbiddenRS},
		commandCase{name: "watch", cmd: NewCmdWatch, args: []string{"pods"}, lists: listing, namespace: "empty", empty: &listWorld, feed: true},
	)
}

// ran is what one command line printed and its exit code.
type ran struct {
	stdout string
	stderr []string
	code   int
}

// run runs tc over targets as RunE does, and finishes as Execute does.
func (tc commandCase) run(t *testing.T, targets []query.Target) ran {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	f := &Flags{ContextFlags: query.ContextFlags{ConfigFlags: genericclioptions.NewConfigFlags(true), AllNamespaces: tc.all}, resolved: targets}
	cmd := tc.cmd(f, streams)
	// As the root command runs them: errors are Execute's to print.
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(append(slices.Clone(tc.args), "--sync-timeout", "20s"))
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if tc.feed {
		// A feed follows until interrupted: long enough for every context
		// to have started, or failed.
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		time.AfterFunc(500*time.Millisecond, stop)
	}
	code := finish(ctx, cmd.ExecuteContext(ctx), errOut, "kubeconfig")
	var lines []string
	if s := strings.TrimSuffix(errOut.String(), "\n"); s != "" {
		lines = strings.Split(s, "\n")
	}
	return ran{stdout: out.String(), stderr: lines, code: code}
}

// targets are the targets of w's clusters, one per name ("" for a plain
// run): each its own server, as each context reads its own.
func (tc commandCase) targets(t *testing.T, w world, names ...string) []query.Target {
	t.Helper()
	namespace := tc.namespace
	if tc.all {
		namespace = metav1.NamespaceAll
	}
	var out []query.Target
	for _, name := range names {
		target := faketarget.New(t, name, w.server(), namespace, tc.lists)
		if tc.mapper {
			target.Mapper = fakeTarget(t, name, fakeapi.New(nil), namespace).Mapper
		}
		out = append(out, target)
	}
	return out
}

// unprefixed is lines without each's context, "" when a line names none.
func unprefixed(lines []string, context string) []string {
	var out []string
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, fmt.Sprintf("warning: context %q: ", context)); ok {
			out = append(out, "warning: "+rest)
		}
	}
	return out
}

// warningLines are the warning lines among lines.
func warningLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "warning: ") {
			out = append(out, l)
		}
	}
	return out
}

// TestReportOneAndSeveral runs every command over one cluster and over two
// holding the same: an empty answer says kubectl's notice, the same, both
// ways; an answer in part warns of the same, each context naming its own;
// and they exit alike.
func TestReportOneAndSeveral(t *testing.T) {
	for _, tc := range commandCases() {
		t.Run(tc.name, func(t *testing.T) {
			if tc.empty != nil {
				t.Run("empty", func(t *testing.T) {
					one := tc.run(t, tc.targets(t, *tc.empty, ""))
					two := tc.run(t, tc.targets(t, *tc.empty, "a", "b"))
					for what, r := range map[string]ran{"one context": one, "two contexts": two} {
						want := warningLines(r.stderr)
						if tc.notice != "" {
							want = append(want, tc.notice)
						}
						if r.code != 0 || !slices.Equal(r.stderr, want) {
							t.Errorf("%s: exit %d, stderr %q; want 0 and the notice %q", what, r.code, r.stderr, tc.notice)
						}
						if !tc.feed && r.stdout != "" {
							t.Errorf("%s: stdout %q, want nothing", what, r.stdout)
						}
					}
					if a, b := unprefixed(two.stderr, "a"), warningLines(one.stderr); !slices.Equal(a, b) {
						t.Errorf("warnings of one context %q, of context a %q", b, a)
					}
				})
			}
			if tc.partial != nil {
				t.Run("in part", func(t *testing.T) {
					one := tc.run(t, tc.targets(t, *tc.partial, ""))
					two := tc.run(t, tc.targets(t, *tc.partial, "a", "b"))
					warnings := warningLines(one.stderr)
					if len(warnings) == 0 {
						t.Fatalf("fixture problem: no warning of one context: %q", one.stderr)
					}
					if one.code != 0 || two.code != 0 {
						t.Errorf("exit %d with one context, %d with two; want 0: an answer in part is an answer", one.code, two.code)
					}
					for _, c := range []string{"a", "b"} {
						if got := unprefixed(two.stderr, c); !slices.Equal(got, warnings) {
							t.Errorf("context %s warned %q, one context %q", c, got, warnings)
						}
					}
					if n := len(warningLines(two.stderr)); n != 2*len(warnings) {
						t.Errorf("two contexts: %d warning lines, want each context's: %q", n, two.stderr)
					}
					// The notice follows the same rule both ways.
					if hasNotice(one.stderr) != hasNotice(two.stderr) {
						t.Errorf("notice with one context %v, with two %v:\n%q\n%q", hasNotice(one.stderr), hasNotice(two.stderr), one.stderr, two.stderr)
					}
				})
			}
		})
	}
}

// hasNotice reports whether lines end with a notice of an empty answer.
func hasNotice(lines []string) bool {
	return len(lines) > 0 && !strings.HasPrefix(lines[len(lines)-1], "warning: ")
}

// TestReportFailedContext: a context that cannot answer is the error of a
// plain run (exit 1, kubectl's words) and, beside one that answers, a
// warning naming it (exit 2, no notice, the answer printed); when no context
// can answer, every one's warning and one error (exit 1).
func TestReportFailedContext(t *testing.T) {
	refused := errors.New(`Get "https://10.0.0.1:6443/api": dial tcp 10.0.0.1:6443: connect: connection refused`)
	for _, tc := range commandCases() {
		w := tc.empty
		if w == nil {
			w = tc.partial
		}
		t.Run(tc.name, func(t *testing.T) {
			one := tc.run(t, []query.Target{{Err: refused}})
			if want := []string{errtext.Format(refused)}; one.code != 1 || !slices.Equal(one.stderr, want) || one.stdout != "" {
				t.Errorf("one context: exit %d, stderr %q, stdout %q; want 1 and %q", one.code, one.stderr, one.stdout, want)
			}

			answered := tc.targets(t, *w, "a")
			two := tc.run(t, append(answered, query.Target{Context: "down", Err: refused}))
			failure := fmt.Sprintf("warning: context %q: %s", "down", errtext.Warning(refused))
			if two.code != ExitPartial || !slices.Contains(two.stderr, failure) || hasNotice(two.stderr) {
				t.Errorf("two contexts, one down: exit %d, stderr %q; want %d, the warning %q and no notice", two.code, two.stderr, ExitPartial, failure)
			}

			none := tc.run(t, []query.Target{{Context: "down", Err: refused}, {Context: "gone", Err: refused}})
			want := []string{failure, fmt.Sprintf("warning: context %q: %s", "gone", errtext.Warning(refused)), "error: no context could answer: all 2 failed"}
			if none.code != 1 || !slices.Equal(none.stderr, want) || none.stdout != "" {
				t.Errorf("every context down: exit %d, stderr %q, stdout %q; want 1 and %q", none.code, none.stderr, none.stdout, want)
			}
		})
	}
}

// TestIgnoreNotFoundContexts: --ignore-not-found drops every context's
// NotFound, as kubectl get does the one context's: no warning, the objects
// found, exit 0; without it each context warns and the answer is partial.
func TestIgnoreNotFoundContexts(t *testing.T) {
	tc := commandCase{cmd: getCmd, lists: fixtures.APIResources(), namespace: "shop"}
	targets := func() []query.Target { return tc.targets(t, listWorld, "a", "b") }

	tc.args = []string{"pods", "web-0", "nope", "--ignore-not-found", "-o", "name"}
	got := tc.run(t, targets())
	if want := "a/pod/web-0\nb/pod/web-0\n"; got.code != 0 || len(got.stderr) != 0 || got.stdout != want {
		t.Errorf("--ignore-not-found: exit %d, stderr %q, stdout %q; want 0, nothing and %q", got.code, got.stderr, got.stdout, want)
	}

	tc.args = []string{"pods", "nope", "--ignore-not-found"}
	if got := tc.run(t, targets()); got.code != 0 || len(got.stderr) != 0 || got.stdout != "" {
		t.Errorf("--ignore-not-found, nothing found: exit %d, stderr %q, stdout %q; want 0 and nothing", got.code, got.stderr, got.stdout)
	}

	tc.args = []string{"pods", "web-0", "nope", "-o", "name"}
	got = tc.run(t, targets())
	for _, c := range []string{"a", "b"} {
		if w := fmt.Sprintf(`warning: context %q: Error from server (NotFound): pods "nope" not found`, c); got.code == 0 || !slices.Contains(got.stderr, w) {
			t.Errorf("without --ignore-not-found: exit %d, stderr %q; want an error and %q", got.code, got.stderr, w)
		}
	}
}
