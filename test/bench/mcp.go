package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
)

// The MCP mode (-mcp): `kubectl idx mcp` measured from its client, the MCP SDK's, over
// stdio, as an agent runs it:
//
//   - tool calls answered from warm informers: query grouped by owner with a where, and
//     relations tree of a Deployment, each -mcp-calls times after a first (cold) call,
//     alternating; p50 and p99 of the client's wall time per call; then the same with
//     maxStalenessSeconds 60, which skips the freshness proof but not the authorization;
//   - the answer to "pods not Running under their top-level owners, with node": every page
//     of query groupBy owner, where phase != Running (the default projection has the
//     node), against `kubectl get pods -A -o json`, what a tool built on LISTs reads for
//     the same question; the answer is checked complete against kubectl's pods;
//   - the server's resident memory per 1,000 pods, after both;
//   - with -baseline, the warm tool calls again through the baseline binary's server,
//     on the same API server, once the first has stopped, its rows marked [baseline].
//
// Every figure is printed with bytes per pod beside it: of the cluster's pods, and of the
// pods the answer is about.

// mcpNotRunning is the question whose answer size is measured.
var mcpNotRunning = map[string]any{"resources": "pods", "allNamespaces": true, "groupBy": "owner", "where": []string{`object.status.phase != "Running"`}}

// mcpCall is one question asked of the server.
type mcpCall struct {
	label string
	tool  string
	args  map[string]any
	walls []time.Duration
	// first is the first call's wall, with informers to list.
	first time.Duration
	// bytes is one answer's size (the CallToolResult's JSON) and pods the pods it covers.
	bytes, pods int
}

func runMCP(ctx context.Context, o options, env []string) error {
	_, deploy, err := treeTargets(ctx, o.kubectl, env, "bench-00")
	if err != nil {
		return err
	}
	cs, cmd, err := startMCP(ctx, o.binary, env)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			cs.Close()
		}
	}()
	calls, err := timeMCPCalls(ctx, cs, deploy, o.mcpCalls, "")
	if err != nil {
		return err
	}
	callOnce := func(c *mcpCall) (time.Duration, *sdk.CallToolResult, []byte, error) {
		return callMCP(ctx, cs, c)
	}

	// The whole answer to the question, every page of it.
	var answerBytes, pages, answered int
	cursor := ""
	for {
		args := map[string]any{"limit": 5000}
		for k, v := range mcpNotRunning {
			args[k] = v
		}
		if cursor != "" {
			args["cursor"] = cursor
		}
		c := &mcpCall{label: "complete answer", tool: "query", args: args}
		_, res, raw, err := callOnce(c)
		if err != nil {
			return err
		}
		answerBytes += len(raw)
		pages++
		answered += podsIn(res)
		var page v1alpha1.QueryAnswer
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &page); err != nil {
			return err
		}
		if !page.Truncated {
			break
		}
		cursor = page.NextCursor
	}
	serverRSS := procStatusKB(cmd.Process.Pid, "VmRSS:")

	kubectlBytes, notRunning, err := kubectlNotRunning(ctx, o.kubectl, env)
	if err != nil {
		return err
	}
	if answered != notRunning {
		return fmt.Errorf("the MCP answer holds %d pods not Running, kubectl get pods -A -o json %d: the answer is not complete", answered, notRunning)
	}
	if o.baseline != "" {
		// The same calls through the baseline binary, on the same server, once the
		// measured binary's server has stopped.
		cs.Close()
		closed = true
		bcs, _, err := startMCP(ctx, o.baseline, env)
		if err != nil {
			return err
		}
		base, err := timeMCPCalls(ctx, bcs, deploy, o.mcpCalls, " [baseline]")
		bcs.Close()
		if err != nil {
			return err
		}
		calls = append(calls, base...)
	}

	w := tabwriter.NewWriter(os.Stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintf(w, "\nkubectl idx mcp, measured from the client over stdio: %d pods in %d namespaces, %d warm calls of each\n\n", o.pods, o.namespaces, o.mcpCalls)
	fmt.Fprintln(w, "tool call\tfirst\tp50\tp99\tanswer bytes\tbytes per pod (cluster)\tpods in answer\tbytes per pod (answer)\t")
	for _, c := range calls {
		perAnswer := "-"
		if c.pods > 0 {
			perAnswer = fmt.Sprintf("%.1f", float64(c.bytes)/float64(c.pods))
		}
		fmt.Fprintf(w, "%s\t%.3fs\t%.3fs\t%.3fs\t%d\t%.2f\t%d\t%s\t\n", c.label, c.first.Seconds(), quantile(c.walls, 0.50).Seconds(), quantile(c.walls, 0.99).Seconds(),
			c.bytes, float64(c.bytes)/float64(o.pods), c.pods, perAnswer)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "pods not Running under their top-level owners, with node\tbytes\tbytes per pod (cluster)\tbytes per pod (answer)\tpages\t")
	fmt.Fprintf(w, "kubectl idx mcp, query groupBy owner (complete, %d pods)\t%d\t%.2f\t%.1f\t%d\t\n", answered, answerBytes, float64(answerBytes)/float64(o.pods), float64(answerBytes)/float64(max(answered, 1)), pages)
	fmt.Fprintf(w, "kubectl get pods -A -o json\t%d\t%.2f\t%.1f\t1\t\n", kubectlBytes, float64(kubectlBytes)/float64(o.pods), float64(kubectlBytes)/float64(max(notRunning, 1)))
	fmt.Fprintf(w, "ratio\t%.1fx smaller\t\t\t\t\n", float64(kubectlBytes)/float64(max(answerBytes, 1)))
	fmt.Fprintln(w)
	fmt.Fprintf(w, "server RSS after the calls\t%.1f MB\t%.2f MB per 1,000 pods\t\n", float64(serverRSS)/1024, float64(serverRSS)/1024/(float64(o.pods)/1000))
	return w.Flush()
}

// startMCP starts binary's kubectl idx mcp and connects the SDK's client to it over
// stdio; the command is returned for its process.
func startMCP(ctx context.Context, binary string, env []string) (*sdk.ClientSession, *exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, binary, "mcp")
	cmd.Env = env
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	log("starting %s mcp", binary)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "kubectl-idx-bench", Version: "v0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("starting %s mcp: %w\n%s", binary, err, stderr)
	}
	return cs, cmd, nil
}

// timeMCPCalls asks the questions of the bench once each (the first call, with
// informers to list), then n warm times each, alternating, and returns them, their
// labels ending with suffix.
func timeMCPCalls(ctx context.Context, cs *sdk.ClientSession, deploy string, n int, suffix string) ([]*mcpCall, error) {
	tree := map[string]any{"relation": "tree", "object": "deployment/" + deploy, "namespace": "bench-00"}
	stale := func(args map[string]any) map[string]any {
		out := map[string]any{"maxStalenessSeconds": 60}
		for k, v := range args {
			out[k] = v
		}
		return out
	}
	calls := []*mcpCall{
		{label: `query pods -A groupBy owner where phase != Running (first page)`, tool: "query", args: mcpNotRunning},
		{label: "relations tree deployment/X -n bench-00", tool: "relations", args: tree},
		// The same with a staleness bound: no freshness proof, the authorization still.
		{label: `query ... (first page), maxStalenessSeconds 60`, tool: "query", args: stale(mcpNotRunning)},
		{label: "relations tree ..., maxStalenessSeconds 60", tool: "relations", args: stale(tree)},
	}
	for _, c := range calls {
		c.label += suffix
		wall, res, raw, err := callMCP(ctx, cs, c)
		if err != nil {
			return nil, err
		}
		c.first, c.bytes, c.pods = wall, len(raw), podsIn(res)
		log("first %s: %.3fs, %d bytes", c.label, wall.Seconds(), len(raw))
	}
	for i := range n {
		for _, c := range calls {
			wall, _, _, err := callMCP(ctx, cs, c)
			if err != nil {
				return nil, err
			}
			c.walls = append(c.walls, wall)
		}
		if (i+1)%10 == 0 {
			log("%d of %d warm calls of each%s", i+1, n, suffix)
		}
	}
	return calls, nil
}

// callMCP calls c's tool once and returns the client's wall time, the result and its
// JSON; a tool error is an error.
func callMCP(ctx context.Context, cs *sdk.ClientSession, c *mcpCall) (time.Duration, *sdk.CallToolResult, []byte, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
	wall := time.Since(start)
	if err != nil {
		return wall, nil, nil, err
	}
	raw, _ := json.Marshal(res)
	if res.IsError {
		return wall, res, raw, fmt.Errorf("%s: tool error: %s", c.label, raw)
	}
	return wall, res, raw, nil
}

// podsIn counts the pods an answer holds: objects and group members.
func podsIn(res *sdk.CallToolResult) int {
	b, _ := json.Marshal(res.StructuredContent)
	var a struct {
		Objects []v1alpha1.ObjectView `json:"objects"`
		Items   []v1alpha1.ObjectView `json:"items"`
		Groups  []v1alpha1.GroupView  `json:"groups"`
		Changes []v1alpha1.ChangeView `json:"changes"`
		Subject *v1alpha1.ObjectView  `json:"subject"`
		Events  []v1alpha1.EventView  `json:"events"`
	}
	_ = json.Unmarshal(b, &a)
	n := 0
	for _, v := range append(a.Objects, a.Items...) {
		if v.Kind == "Pod" {
			n++
		}
	}
	for _, g := range a.Groups {
		n += len(g.Members)
	}
	return n
}

// kubectlNotRunning runs kubectl get pods -A -o json, counts its bytes, and counts the pods
// not Running in it.
func kubectlNotRunning(ctx context.Context, kubectl string, env []string) (int, int, error) {
	cmd := exec.CommandContext(ctx, kubectl, "get", "pods", "-A", "-o", "json")
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	counted := &countingReader{r: out}
	var list struct {
		Items []struct {
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"items"`
	}
	decodeErr := json.NewDecoder(counted).Decode(&list)
	_, _ = io.Copy(io.Discard, counted)
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("kubectl get pods -A -o json: %w", err)
	}
	if decodeErr != nil {
		return 0, 0, decodeErr
	}
	notRunning := 0
	for _, it := range list.Items {
		if it.Status.Phase != "Running" {
			notRunning++
		}
	}
	return int(counted.n), notRunning, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// quantile returns the q quantile of walls (nearest rank).
func quantile(walls []time.Duration, q float64) time.Duration {
	if len(walls) == 0 {
		return 0
	}
	s := slices.Clone(walls)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
