package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/fakeapi"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/faketarget"
	"github.com/kubectl-idx/kubectl-idx/internal/testing/fixtures"
	"github.com/kubectl-idx/kubectl-idx/pkg/query"
)

// TestMCPFlags: the mcp command's flags, refused before any request with
// their exact errors.
func TestMCPFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--limit", "0"}, "--limit must be between 1 and 5000, got 0"},
		{[]string{"--limit", "5001"}, "--limit must be between 1 and 5000, got 5001"},
		{[]string{"--max-bytes", "100"}, "--max-bytes must be at least 1024, got 100"},
		{[]string{"--sync-timeout", "-1s"}, "--sync-timeout must not be negative, got -1s"},
		{[]string{"pods"}, `unknown command "pods" for "kubectl idx mcp"`},
	} {
		out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
		code := execute(context.Background(), genericiooptions.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, append([]string{"mcp"}, tc.args...), &runContext{})
		if code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("mcp %v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestMCPRun: the command serves MCP on its stdin and stdout, and nothing
// else goes to stdout; it ends when the client closes stdin.
func TestMCPRun(t *testing.T) {
	s := fakeapi.New(nil, fixtures.RelationObjects()...)
	target := faketarget.New(t, "", s, "shop", fixtures.RelationAPIResources())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	f := &Flags{ContextFlags: query.ContextFlags{ConfigFlags: genericclioptions.NewConfigFlags(true)}, resolved: []query.Target{target}}
	cmd := NewCmdMCP(f, genericiooptions.IOStreams{In: inR, Out: outW, ErrOut: io.Discard})
	cmd.SetArgs(nil)
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(context.Background())
		outW.Close()
	}()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil).Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "query", Arguments: map[string]any{"resources": "deployments"}})
	if err != nil || res.IsError {
		t.Fatalf("query: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"name":"web"`) || !strings.Contains(string(b), `"count":2`) {
		t.Errorf("query deployments: %s", b)
	}
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("mcp ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcp did not end when its stdin closed")
	}
}
