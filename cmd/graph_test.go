package cmd

import (
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// The relation graphs (-o dot, -o mermaid): which commands take them and the
// errors of the others; TestRelationRun runs the graph commands over the
// fakes. What the graphs draw is pkg/printers' to test (TestPrintGraph).

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
