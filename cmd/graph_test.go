package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
)

// The relation graphs (-o dot, -o mermaid): which commands take them, the
// errors of the others, and what the graph commands print over the fakes.
// What the graphs draw is pkg/printers' to test (TestPrintGraph).

// graphFormats are kubectl get's output formats with the graph formats, as
// the allowed formats of the graph commands' error list them.
const graphFormats = "custom-columns,custom-columns-file,dot,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,mermaid,name,template,templatefile,wide,yaml"

// noGraph is the error of -o dot on a command without graphs.
const noGraph = "error: -o dot draws relation graphs: use it with kubectl idx tree, owners, selects, selected-by or uses"

// TestGraphFlags runs commands through Execute, as main does, with graph
// formats where they are refused and unknown formats where graphs are
// allowed, against a server that fails the test when contacted: each is a
// usage error, one line on stderr, exit 1, nothing on stdout.
func TestGraphFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"get -o dot", []string{"pods", "-o", "dot"}, noGraph},
		{"get -o mermaid", []string{"pods", "-A", "--output=mermaid"}, "error: -o mermaid draws relation graphs: use it with kubectl idx tree, owners, selects, selected-by or uses"},
		{"get --by-owner -o dot", []string{"pods", "--by-owner", "-o", "dot"}, noGraph},
		{"events list -o dot", []string{"events", "-o", "dot"}, noGraph},
		{"events of an object -o dot", []string{"events", "deploy/web", "-o", "dot"}, noGraph},
		{"orphans -o dot", []string{"orphans", "-o", "dot"}, noGraph},
		{"orphans -A -o mermaid", []string{"orphans", "-A", "-o", "mermaid"}, "error: -o mermaid draws relation graphs: use it with kubectl idx tree, owners, selects, selected-by or uses"},
		{"watch -o dot", []string{"watch", "pods", "-o", "dot"}, noGraph},
		{"tree -o unknown", []string{"tree", "deploy/web", "-o", "svg"}, `error: unable to match a printer suitable for the output format "svg", allowed formats are: ` + graphFormats},
		{"owners -o unknown", []string{"owners", "pod/web", "-o", "Dot"}, `error: unable to match a printer suitable for the output format "Dot", allowed formats are: ` + graphFormats},
		{"selects -o unknown", []string{"selects", "svc/web", "-o", "graphviz"}, `error: unable to match a printer suitable for the output format "graphviz", allowed formats are: ` + graphFormats},
		{"selected-by -o unknown", []string{"selected-by", "pod/web", "-o", "mmd"}, `error: unable to match a printer suitable for the output format "mmd", allowed formats are: ` + graphFormats},
		{"uses -o unknown", []string{"uses", "cm/app", "-o", "bogus"}, `error: unable to match a printer suitable for the output format "bogus", allowed formats are: ` + graphFormats},
		{"tree -o dot without object", []string{"tree", "-o", "dot"}, "error: you must specify the object to show the tree of as TYPE/NAME, e.g. deployment/web"},
		{"tree -o dot --sort-by", []string{"tree", "deploy/web", "-o", "dot", "--sort-by", ".metadata.name"}, "error: --sort-by is not supported by kubectl idx tree"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			executeFails(t, append([]string{"--kubeconfig", unreachableKubeconfig(t), "--cache-dir", t.TempDir()}, tc.args...), tc.want+"\n")
		})
	}
}

// TestGraphOutputFlag: the graph commands' -o offers dot and mermaid in its
// help and its completion; the other commands' -o is kubectl's.
func TestGraphOutputFlag(t *testing.T) {
	root := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	for _, c := range root.Commands() {
		flag := c.Flags().Lookup("output")
		if flag == nil {
			continue
		}
		graphs := strings.Contains(flag.Usage, "dot, mermaid")
		want := map[string]bool{"tree": true, "owners": true, "selects": true, "selected-by": true, "uses": true}[c.Name()]
		if graphs != want {
			t.Errorf("%s: -o help %q, graphs offered %v, want %v", c.Name(), flag.Usage, graphs, want)
		}
		if !want {
			continue
		}
		complete, ok := c.GetFlagCompletionFunc("output")
		if !ok {
			t.Errorf("%s: no completion for -o", c.Name())
			continue
		}
		got, _ := complete(c, nil, "")
		if strings.Join(got, ",") != "json,yaml,kyaml,name,go-template,go-template-file,template,templatefile,jsonpath,jsonpath-as-json,jsonpath-file,custom-columns,custom-columns-file,wide,dot,mermaid" {
			t.Errorf("%s: -o completes %q", c.Name(), got)
		}
		if got, _ := complete(c, nil, "m"); strings.Join(got, ",") != "mermaid" {
			t.Errorf("%s: -o m completes %q", c.Name(), got)
		}
	}
}

// TestGraphRun runs the graph commands as RunE does against the fakes with
// -o dot and -o mermaid and compares what they print; warnings still go to
// stderr.
func TestGraphRun(t *testing.T) {
	selection := fixtures.SelectionObjects()
	tests := []struct {
		name       string
		command    string
		args       []string
		output     string
		useSel     bool
		forbidden  []string
		golden     string
		wantErrOut string
	}{
		{name: "tree dot", command: "tree", args: []string{"deployment/web"}, output: "dot", golden: "testdata/tree_deployment.dot.golden"},
		{name: "tree mermaid", command: "tree", args: []string{"deployment/web"}, output: "mermaid", golden: "testdata/tree_deployment.mermaid.golden"},
		{
			name: "tree, a type the user may not list", command: "tree", args: []string{"deploy/web"}, output: "dot", forbidden: []string{"replicasets"},
			golden:     "testdata/tree_deployment_forbidden.dot.golden",
			wantErrOut: "warning: cannot list replicasets.apps, the answer may be incomplete: Error from server (Forbidden): replicasets.apps is forbidden: User \"jane\" cannot list resource \"replicasets\" in API group \"apps\" in the namespace \"shop\"\n",
		},
		{name: "owners dot", command: "owners", args: []string{"pod/web-7d9c-a"}, output: "dot", golden: "testdata/owners_pod.dot.golden"},
		{name: "owners, missing owner, mermaid", command: "owners", args: []string{"rs/legacy-1"}, output: "mermaid", golden: "testdata/owners_missing.mermaid.golden"},
		{name: "selects dot", command: "selects", args: []string{"svc/web"}, useSel: true, output: "dot", golden: "testdata/selects_service.dot.golden"},
		{
			name: "selects nothing, mermaid", command: "selects", args: []string{"svc/external"}, useSel: true, output: "mermaid",
			golden:     "testdata/selects_nothing.mermaid.golden",
			wantErrOut: "warning: service/external has no selector, so it selects no pods\n",
		},
		{name: "selected-by mermaid", command: "selected-by", args: []string{"pod/web-7d9c-a"}, useSel: true, output: "mermaid", golden: "testdata/selected_by_pod.mermaid.golden"},
		{name: "uses, users, dot", command: "uses", args: []string{"configmap/app-config"}, useSel: true, output: "dot", golden: "testdata/uses_configmap.dot.golden"},
		{name: "uses, what a template uses, mermaid", command: "uses", args: []string{"deployment/web"}, useSel: true, output: "mermaid", golden: "testdata/uses_deployment.mermaid.golden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objects := fixtures.RelationObjects()
			if tc.useSel {
				objects = selection
			}
			c := newRelationCase(objects, tc.output)
			fixtures.ForbidMetadataList(c.server, tc.forbidden...)
			o := c.command(t, tc.command)
			// As selects' options and the object commands' descriptions set it.
			o.(interface{ options() *RelationOptions }).options().graphs = true
			prepare(t, o, tc.args)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := o.Run(ctx)
			assertRun(t, err, c.stdout.String(), c.stderr.String(), tc.golden, nil, "", tc.wantErrOut, "")
			if strings.Contains(c.stdout.String(), fixtures.SecretValue) {
				t.Errorf("secret data in the output:\n%s", c.stdout)
			}
		})
	}
}

// options lets the tests reach the shared options of a relation command.
func (o *RelationOptions) options() *RelationOptions { return o }
