package cmd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/openapi/openapitest"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/errtext"
	"github.com/kubectl-idx/kubectl-idx/pkg/where"
)

// TestWhereFlagErrors: a --where that cannot be read is one line naming the
// flag and the expression, then the expression with a caret under the place
// when there is one; exit 1, nothing on stdout, and no request: every
// command reads it in Complete, before it asks the server anything.
func TestWhereFlagErrors(t *testing.T) {
	syntax := "error: --where \"object.spec..replicas\": syntax error at column 13: no viable alternative at input '..'\n" +
		"  object.spec..replicas\n" +
		"              ^"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "syntax error", args: []string{"pods", "--where", "object.spec..replicas"}, want: syntax},
		{
			name: "unknown variable", args: []string{"pods", "--where", `objct.metadata.name == "web"`},
			want: "error: --where \"objct.metadata.name == \\\"web\\\"\": unknown variable at column 1: \"objct\" (the variables are object, owner, node, now)\n" +
				"  objct.metadata.name == \"web\"\n" +
				"  ^",
		},
		{
			name: "unknown function", args: []string{"pods", "--where", `object.metadata.name.startswith("web")`},
			want: "error: --where \"object.metadata.name.startswith(\\\"web\\\")\": unknown function at column 32: \"startswith\"\n" +
				"  object.metadata.name.startswith(\"web\")\n" +
				"                                 ^",
		},
		{name: "not a bool", args: []string{"pods", "--where", "size(object.metadata.labels)"}, want: `error: --where "size(object.metadata.labels)": must evaluate to bool but got int`},
		{name: "empty", args: []string{"pods", "--where", " "}, want: `error: --where " ": empty expression`},
		{
			name: "the second of two", args: []string{"pods", "--where", "true", "--where", "1 + 1"},
			want: `error: --where "1 + 1": must evaluate to bool but got int`,
		},
		{name: "no value", args: []string{"pods", "--where"}, want: "error: flag needs an argument: --where"},
		{name: "a line break in the expression", args: []string{"pods", "--where", "object.kind == 'Pod' &&\n  object.spec..x"}, want: "error: --where \"object.kind == 'Pod' &&\\n  object.spec..x\": syntax error at line 2, column 15: no viable alternative at input '..'\n" +
			"    object.spec..x\n" +
			"                ^"},
		{name: "grouped", args: []string{"pods", "--by-owner", "--where", "object.spec..replicas"}, want: syntax},
		{name: "watch", args: []string{"watch", "pods", "--where", "object.spec..replicas"}, want: syntax},
		{name: "tree", args: []string{"tree", "deployment/web", "--where", "object.spec..replicas"}, want: syntax},
		{name: "owners", args: []string{"owners", "pod/web-0", "--where", "object.spec..replicas"}, want: syntax},
		{name: "orphans", args: []string{"orphans", "--where", "object.spec..replicas"}, want: syntax},
		{name: "events", args: []string{"events", "deployment/web", "--where", "object.spec..replicas"}, want: syntax},
		{name: "events -w", args: []string{"events", "deployment/web", "-w", "--where", "object.spec..replicas"}, want: syntax},
		{name: "uses", args: []string{"uses", "configmap/app", "--where", "object.spec..replicas"}, want: syntax},
		{name: "selects", args: []string{"selects", "service/web", "--where", "object.spec..replicas"}, want: syntax},
		{name: "selected-by", args: []string{"selected-by", "pod/web-0", "--where", "object.spec..replicas"}, want: syntax},
		{name: "several contexts", args: []string{"pods", "--context", "a,b", "--where", "object.spec..replicas"}, want: syntax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := unreachableKubeconfig(t)
			if slices.Contains(tc.args, "--context") {
				kubeconfig = twoContextKubeconfig(t)
			}
			// The connection flags first: --where without a value is last.
			executeFails(t, append([]string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, tc.args...), tc.want+"\n")
		})
	}
}

// twoContextKubeconfig is a kubeconfig with contexts a and b of a server the
// test must never contact.
func twoContextKubeconfig(t *testing.T) string {
	t.Helper()
	return fixtures.ContextsKubeconfig(t, untouchedServer(t), "a", "b")
}

// TestWhereRun: what --where makes of an answer, through the listing
// command: the objects that match in every output, warnings on stderr and in
// -o json's List, and the errors that need the kind: an unknown field (with
// the server's schemas), node on a kind without one, a cost over the limit.
func TestWhereRun(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		where  []string
		format string
		typed  bool

		wantOut    string
		check      func(t *testing.T, stdout string)
		wantErrOut string
		wantErr    string
	}{
		{
			name: "names", args: []string{"pods"}, where: []string{`object.status.phase == "Running"`}, format: "name",
			wantOut: "pod/web-0\n",
		},
		{
			name: "table of several types", args: []string{"pods,svc"}, where: []string{`object.metadata.name.startsWith("web-")`},
			check: func(t *testing.T, stdout string) {
				if !strings.Contains(stdout, "web-0") || !strings.Contains(stdout, "web-1") || strings.Contains(stdout, "service/web") || strings.Count(stdout, "\n") != 3 {
					t.Errorf("want the two pods alone:\n%s", stdout)
				}
			},
		},
		{
			name: "nothing matches", args: []string{"pods"}, where: []string{`object.metadata.name == "none"`},
			wantErrOut: "No resources found in shop namespace.\n",
		},
		{
			name: "warnings in -o json and on stderr", args: []string{"pods"}, where: []string{`object.status.podIP.startsWith("10.")`}, format: "json",
			check: func(t *testing.T, stdout string) {
				var list struct {
					Items    []unstructured.Unstructured `json:"items"`
					Warnings []string                    `json:"warnings"`
				}
				if err := json.Unmarshal([]byte(stdout), &list); err != nil {
					t.Fatal(err)
				}
				if len(list.Items) != 1 || list.Items[0].GetName() != "web-0" {
					t.Errorf("items %v, want web-0", list.Items)
				}
				if want := []string{`--where "object.status.podIP.startsWith(\"10.\")": no such key: podIP (on 1 object)`}; !slices.Equal(list.Warnings, want) {
					t.Errorf("warnings %q, want %q", list.Warnings, want)
				}
			},
			wantErrOut: "warning: --where \"object.status.podIP.startsWith(\\\"10.\\\")\": no such key: podIP (on 1 object)\n",
		},
		{
			name: "a missing key is a counted warning", args: []string{"pods"}, where: []string{`object.status.podIP.startsWith("10.")`}, format: "name",
			wantOut:    "pod/web-0\n",
			wantErrOut: "warning: --where \"object.status.podIP.startsWith(\\\"10.\\\")\": no such key: podIP (on 1 object)\n",
		},
		{
			name: "an unknown field, from the server's schema", args: []string{"pods"}, where: []string{`object.spec.replica > 1`}, typed: true,
			wantErr: "error: --where \"object.spec.replica > 1\": unknown field at column 13: \"replica\"\n  object.spec.replica > 1\n              ^",
		},
		{
			name: "not a bool, from the server's schema", args: []string{"pods"}, where: []string{`object.metadata.name`}, typed: true,
			wantErr: `error: --where "object.metadata.name": must evaluate to bool but got string`,
		},
		{
			name: "a type error, from the server's schema", args: []string{"deploy"}, where: []string{`object.spec.replicas == "3"`}, typed: true,
			wantErr: "error: --where \"object.spec.replicas == \\\"3\\\"\": type error at column 22: found no matching overload for '_==_' applied to '(int, string)'\n  object.spec.replicas == \"3\"\n                       ^",
		},
		{
			name: "node on a kind without one", args: []string{"svc"}, where: []string{`node == null`},
			wantErr: `error: --where "node == null": node is set only for pods, not for Service`,
		},
		{
			name: "a cost over the limit", args: []string{"pods"}, where: []string{`object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))`},
			wantErr: `error: --where "object.spec.volumes.exists(a, object.spec.volumes.exists(b, object.spec.volumes.exists(c, a.name == c.name)))": estimated cost exceeds the limit by a factor of 1844.7: in the worst case it grows faster than the square of the object's size (nest fewer comprehensions over its lists)`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeapi.New(nil, fixtures.ListObjects()...)
			h := newRunHarness(t, s, tc.args, runFlags{format: tc.format})
			h.o.Where = tc.where
			if tc.typed {
				h.o.resolved[0].Schemas = where.NewSchemas(openapitest.NewEmbeddedFileClient())
			}
			err := h.run(t)
			if tc.wantErr != "" {
				s.CheckRefused(t, err, errtext.Format, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, h.out.String())
			} else if got := h.out.String(); got != tc.wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, tc.wantOut)
			}
			if got := h.err.String(); got != tc.wantErrOut {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, tc.wantErrOut)
			}
		})
	}
}

// TestWhereOneAndSeveral runs every command with a --where that fails on
// every object over one cluster and over two holding the same: each context
// warns of its own errors, with its own counts, as the one context does.
func TestWhereOneAndSeveral(t *testing.T) {
	warned := 0
	for _, tc := range commandCases() {
		if tc.feed {
			continue
		}
		w := tc.partial
		if w == nil {
			w = tc.empty
		}
		// No object has the label: each is an error, and none matches.
		tc.args = append(slices.Clone(tc.args), "--where", `object.metadata.labels["tier"] != "x"`)
		if tc.namespace == "empty" && tc.name != "selected-by" {
			// Where the objects are; pod lonely is in empty.
			tc.namespace = "shop"
		}
		t.Run(tc.name, func(t *testing.T) {
			one := tc.run(t, tc.targets(t, *w, ""))
			two := tc.run(t, tc.targets(t, *w, "a", "b"))
			var whereLines []string
			for _, l := range warningLines(one.stderr) {
				if strings.HasPrefix(l, "warning: --where ") {
					whereLines = append(whereLines, l)
				}
			}
			if len(whereLines) > 0 {
				warned++
			}
			for _, c := range []string{"a", "b"} {
				var got []string
				for _, l := range unprefixed(two.stderr, c) {
					if strings.HasPrefix(l, "warning: --where ") {
						got = append(got, l)
					}
				}
				if !slices.Equal(got, whereLines) {
					t.Errorf("context %s warned %q, one context %q", c, got, whereLines)
				}
			}
			if one.code != 0 || two.code != 0 {
				t.Errorf("exit %d with one context, %d with two; want 0\n%q\n%q", one.code, two.code, one.stderr, two.stderr)
			}
		})
	}
	if warned < 15 {
		t.Errorf("fixture problem: only %d commands met objects without the label", warned)
	}
}

// TestWatchRunWhere: an object that starts matching enters the feed (ADDED),
// one that stops leaves it (DELETED with leftScope), and the table says which
// flag it left.
func TestWatchRunWhere(t *testing.T) {
	s := fakeapi.New(nil, fixtures.ListObjects()...)
	h := startWatch(t, s, []string{"ct"}, watchFlags{format: "json", where: []string{`object.spec.cronSpec.startsWith("0 ")`}})
	h.waitOut(t, 1)
	crontabs := s.Dynamic.Resource(fixtures.CronTabs.GVR).Namespace("shop")
	setCronSpec(t, crontabs, "every-5m", "0 5 * * *", "100")
	setCronSpec(t, crontabs, "nightly", "*/10 * * * *", "101")
	setCronSpec(t, crontabs, "every-5m", "0 6 * * *", "102")
	var got []string
	for _, ev := range jsonLines[struct {
		Type      string `json:"type"`
		LeftScope bool   `json:"leftScope"`
		Object    struct {
			Metadata struct{ Name string }
		}
	}](t, h.finish(t, 4, 0)) {
		l := ev.Type + " " + ev.Object.Metadata.Name
		if ev.LeftScope {
			l += " (left)"
		}
		got = append(got, l)
	}
	want := []string{"ADDED nightly", "ADDED every-5m", "DELETED nightly (left)", "MODIFIED every-5m"}
	if !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
}

// TestWatchRunWhereAndOwner: with --owner, both scopes hold.
func TestWatchRunWhereAndOwner(t *testing.T) {
	s := fakeapi.New(nil, fixtures.OwnerObjects()...)
	h := startWatch(t, s, []string{"pods"}, watchFlags{format: "name", owner: "deployment/web", where: []string{`object.metadata.name.startsWith("web-") && object.status.containerStatuses.all(c, c.ready)`}})
	if got, want := h.finish(t, 1, 300*time.Millisecond), "pod/web-5d4-aaaaa\n"; got != want {
		t.Errorf("stdout %q, want %q: a pod owned and matching: not one owned that does not match (web-5d4-bbbbb, adopted), nor one that matches but is not owned", got, want)
	}
}
