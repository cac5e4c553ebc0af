package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-idx/kubectl-idx/internal/testing/syncbuf"
	"github.com/kubectl-idx/kubectl-idx/pkg/apis/v1alpha1"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// `kubectl idx mcp`, the built binary, driven over stdio by the MCP SDK's own client
// (CommandTransport), against the real API server: each tool answers what the CLI answers to
// the same question, sees a write made just before the call, refuses what the user may not
// read, says when the server is gone, and stays under its byte cap on a namespace of 2,000
// pods. The MCP project's own inspector (npm) lists the tools and calls one.

// mcpCallTimeout bounds one tool call, waits for informers included.
const mcpCallTimeout = 2 * time.Minute

// mcpServer is a running `kubectl-idx mcp` and the client session to it.
type mcpServer struct {
	cs     *sdk.ClientSession
	stderr *syncbuf.Buffer // read while it runs
}

// startMCP starts `kubectl-idx mcp ARGS` as kubeconfig's user of e, the session closed (and
// the process ended) when the test ends.
func startMCP(t *testing.T, e *testenv.Env, kubeconfig string, args ...string) *mcpServer {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"mcp"}, args...)...)
	cmd.Env = e.Environ(kubeconfig, "")
	s := &mcpServer{stderr: &syncbuf.Buffer{}}
	cmd.Stderr = s.stderr
	ctx, cancel := context.WithTimeout(context.Background(), mcpCallTimeout)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "kubectl-idx-e2e", Version: "v0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("starting kubectl-idx mcp: %v\n%s", err, s.stderr)
	}
	s.cs = cs
	t.Cleanup(func() {
		if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "signal") {
			t.Errorf("closing kubectl-idx mcp: %v\n%s", err, s.stderr)
		}
		if strings.Contains(s.stderr.String(), "panic") {
			t.Errorf("kubectl-idx mcp panicked:\n%s", s.stderr)
		}
	})
	return s
}

// call calls tool with args and decodes its structuredContent into out; it returns the result
// and the structuredContent's JSON.
func (s *mcpServer) call(t *testing.T, tool string, args map[string]any, out any) (*sdk.CallToolResult, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpCallTimeout)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v\nstderr:\n%s", tool, args, err, s.stderr)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if !res.IsError && out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %v: structuredContent: %v\n%s", tool, args, err, raw)
		}
	}
	return res, raw
}

// must calls tool and fails t unless it succeeds.
func (s *mcpServer) must(t *testing.T, tool string, args map[string]any, out any) []byte {
	t.Helper()
	res, raw := s.call(t, tool, args, out)
	if res.IsError {
		t.Fatalf("%s %v: tool error: %s", tool, args, toolText(res))
	}
	return raw
}

// toolText is the text content of res.
func toolText(res *sdk.CallToolResult) string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// mustFailTool fails t unless res is a tool error whose text starts with one of kinds and holds
// want.
func mustFailTool(t *testing.T, what string, res *sdk.CallToolResult, want string, kinds ...string) {
	t.Helper()
	msg := toolText(res)
	if !res.IsError {
		t.Fatalf("%s: want a tool error, got a success: %s", what, msg)
	}
	if !slices.ContainsFunc(kinds, func(k string) bool { return strings.HasPrefix(msg, k+": ") }) {
		t.Errorf("%s: error %q, want it to start with one of %v", what, msg, kinds)
	}
	if !strings.Contains(msg, want) {
		t.Errorf("%s: error %q, want it to hold %q", what, msg, want)
	}
}

// cliJSON runs `kubectl idx ARGS -o json` as runner r and decodes it into out.
func cliJSON(t *testing.T, r runner, out any, args ...string) {
	t.Helper()
	res := r.idx(t, append(args, "-o", "json")...)
	mustSucceed(t, "kubectl idx "+strings.Join(args, " "), res)
	mustDecode(t, fmt.Sprintf("kubectl idx %s -o json", strings.Join(args, " ")), res.Stdout, out)
}

// cliObject is an object of a v1 List as kubectl idx prints it.
type cliObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		UID       string `json:"uid"`
	} `json:"metadata"`
	// Events.
	Reason         string `json:"reason"`
	InvolvedObject struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"involvedObject"`
}

func (o cliObject) ref() string { return o.Kind + " " + o.Metadata.Namespace + "/" + o.Metadata.Name }

func viewRef(v v1alpha1.ObjectView) string { return v.Kind + " " + v.Namespace + "/" + v.Name }

// cliList is a v1 List.
type cliList struct {
	Items []cliObject `json:"items"`
}

func (l cliList) refs() []string {
	out := []string{}
	for _, o := range l.Items {
		out = append(out, o.ref())
	}
	return out
}

// settled leaves out of refs the objects of the namespaces the other tests of this file
// write while it runs (mcp-2000's pods, created as TestMCPByteCap starts, among them): a
// CLI answer and an MCP one asked a moment later differ there by what was written in
// between.
func settled(refs []string) []string {
	out := []string{}
	for _, r := range refs {
		if _, ref, _ := strings.Cut(r, " "); !strings.HasPrefix(ref, "mcp-") {
			out = append(out, r)
		}
	}
	return out
}

// cliGroups is a GroupList.
type cliGroups struct {
	Groups []struct {
		Name    string         `json:"name"`
		Key     map[string]any `json:"key"`
		Summary map[string]any `json:"summary"`
		Items   []cliObject    `json:"items"`
	} `json:"groups"`
}

// groupsOf is each group's summary and members, by name, as the CLI's document has them.
func (g cliGroups) members() (map[string][]string, map[string]any) {
	members, summaries := map[string][]string{}, map[string]any{}
	for _, gr := range g.Groups {
		refs := []string{}
		for _, o := range gr.Items {
			refs = append(refs, o.ref())
		}
		slices.Sort(refs)
		members[gr.Name] = refs
		summaries[gr.Name] = map[string]any{"key": gr.Key, "summary": gr.Summary}
	}
	return members, summaries
}

// checkSelectionPaths compares the MCP server's relation paths of object in shop with the
// items of kubectl idx verb (selects or selected-by) as admin, each the path path(kind/name).
func (s *mcpServer) checkSelectionPaths(t *testing.T, admin runner, verb, relation, object string, path func(item string) string) {
	t.Helper()
	var list cliList
	cliJSON(t, admin, &list, verb, object, "-n", "shop")
	want := []string{}
	for _, it := range list.Items {
		want = append(want, path(it.Kind+"/"+it.Metadata.Name))
	}
	if diff := cmp.Diff(want, s.relationPaths(t, map[string]any{"relation": relation, "object": object, "namespace": "shop"})); diff != "" {
		t.Errorf("%s %s (-cli +mcp):\n%s", relation, object, diff)
	}
}

// withCursor returns a copy of a query's args asking for the page at cursor ("" is the first).
func withCursor(args map[string]any, cursor string) map[string]any {
	a := map[string]any{}
	maps.Copy(a, args)
	if cursor != "" {
		a["cursor"] = cursor
	}
	return a
}

// queryAll pages through the query tool's answer to args and returns every page.
func (s *mcpServer) queryAll(t *testing.T, args map[string]any) []v1alpha1.QueryAnswer {
	t.Helper()
	var pages []v1alpha1.QueryAnswer
	cursor := ""
	for {
		a := withCursor(args, cursor)
		var page v1alpha1.QueryAnswer
		s.must(t, "query", a, &page)
		pages = append(pages, page)
		if !page.Truncated {
			return pages
		}
		if len(pages) > 500 {
			t.Fatal("query: more than 500 pages")
		}
		cursor = page.NextCursor
	}
}

// queryRefs is every object of the query tool's answer to args, in order.
func (s *mcpServer) queryRefs(t *testing.T, args map[string]any) []string {
	t.Helper()
	out := []string{}
	for _, p := range s.queryAll(t, args) {
		for _, o := range p.Objects {
			out = append(out, viewRef(o))
		}
	}
	return out
}

// queryGroups is every group of the query tool's grouped answer to args: members and, as the
// CLI's document has them, key and summary.
func (s *mcpServer) queryGroups(t *testing.T, args map[string]any) (map[string][]string, map[string]any) {
	t.Helper()
	members, summaries := map[string][]string{}, map[string]any{}
	for _, p := range s.queryAll(t, args) {
		for _, g := range p.Groups {
			if _, ok := members[g.Name]; !ok {
				members[g.Name] = []string{}
			}
			for _, m := range g.Members {
				members[g.Name] = append(members[g.Name], viewRef(m))
			}
			summaries[g.Name] = map[string]any{"key": g.Key, "summary": g.Summary}
		}
	}
	for name := range members {
		slices.Sort(members[name])
	}
	return members, summaries
}

// relationPaths is every item of the relations tool's answer to args, as its path.
func (s *mcpServer) relationPaths(t *testing.T, args map[string]any) []string {
	t.Helper()
	var answer v1alpha1.RelationsAnswer
	s.must(t, "relations", args, &answer)
	if answer.Truncated {
		t.Fatalf("relations %v: truncated at %d of %d", args, answer.Count, answer.Total)
	}
	out := []string{}
	for _, it := range answer.Items {
		out = append(out, strings.Join(it.Path, " > "))
	}
	return out
}

// cliTree is a Tree or OwnerTree document.
type cliTree struct {
	Root *cliTreeItem `json:"root"`
}

type cliTreeItem struct {
	Kind     string         `json:"kind"`
	Name     string         `json:"name"`
	Children []*cliTreeItem `json:"children"`
	Owners   []*cliTreeItem `json:"owners"`
}

// paths flattens a tree into the paths from its root, depth first, as the relations tool
// gives them.
func (tr cliTree) paths() []string {
	out := []string{}
	var walk func(it *cliTreeItem, path []string)
	walk = func(it *cliTreeItem, path []string) {
		for _, n := range append(append([]*cliTreeItem{}, it.Children...), it.Owners...) {
			p := append(append([]string{}, path...), n.Kind+"/"+n.Name)
			out = append(out, strings.Join(p, " > "))
			walk(n, p)
		}
	}
	walk(tr.Root, []string{tr.Root.Kind + "/" + tr.Root.Name})
	return out
}

// TestMCPAnswersAsCLI: on the fixtures' cluster, every tool answers what the CLI answers to
// the same question, read from the CLI's JSON: the same objects in the same order, the same
// groups with the same members, keys and summaries, the same trees, chains, selections,
// references and orphans, the same current state of a feed; and the tools list, over every
// protocol revision the SDK negotiates.
func TestMCPAnswersAsCLI(t *testing.T) {
	t.Parallel()
	s := startMCP(t, env, env.Kubeconfig)
	admin := as("")

	for _, v := range sdk.SupportedProtocolVersions() {
		cmd := exec.Command(binary, "mcp")
		cmd.Env = env.Environ(env.Kubeconfig, "")
		ctx, cancel := context.WithTimeout(context.Background(), mcpCallTimeout)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, &sdk.ClientSessionOptions{ProtocolVersion: v})
		if err != nil {
			cancel()
			t.Fatalf("protocol %s: %v", v, err)
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != 6 || cs.InitializeResult().ProtocolVersion != v {
			t.Errorf("protocol %s: negotiated %s, %d tools, %v", v, cs.InitializeResult().ProtocolVersion, len(tools.Tools), err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "query", Arguments: map[string]any{"resources": "pods", "namespace": "shop"}})
		if err != nil || res.IsError || res.StructuredContent == nil {
			t.Errorf("protocol %s: query: %v %+v", v, err, res)
		}
		_ = cs.Close()
		cancel()
	}

	var contexts v1alpha1.ContextsAnswer
	s.must(t, "contexts", nil, &contexts)
	if len(contexts.Contexts) != 1 || !contexts.Contexts[0].Reachable || contexts.Contexts[0].Version != serverVersion {
		t.Errorf("contexts: %+v", contexts.Contexts)
	}

	for _, tc := range []struct {
		cli  []string
		args map[string]any
	}{
		{[]string{"pods", "-A"}, map[string]any{"resources": "pods", "allNamespaces": true}},
		{[]string{"pods,services,deployments", "-n", "shop"}, map[string]any{"resources": "pods,services,deployments", "namespace": "shop"}},
		{[]string{"deploy,sts,ds", "-A"}, map[string]any{"resources": "deploy,sts,ds", "allNamespaces": true}},
		{[]string{"pods", "-A", "-l", "app=web"}, map[string]any{"resources": "pods", "allNamespaces": true, "labelSelector": "app=web"}},
		{[]string{"pods", "-A", "--where", `object.status.phase != "Running"`}, map[string]any{"resources": "pods", "allNamespaces": true, "where": []string{`object.status.phase != "Running"`}}},
		{[]string{"pods", "-A", "--where", `owner != null && owner.kind == "Deployment"`}, map[string]any{"resources": "pods", "allNamespaces": true, "where": []string{`owner != null && owner.kind == "Deployment"`}}},
		{[]string{"nodes"}, map[string]any{"resources": "nodes"}},
	} {
		var list cliList
		cliJSON(t, admin, &list, tc.cli...)
		if len(list.Items) == 0 {
			t.Fatalf("kubectl idx %v: nothing to compare", tc.cli)
		}
		if diff := cmp.Diff(settled(list.refs()), settled(s.queryRefs(t, tc.args))); diff != "" {
			t.Errorf("query %v against kubectl idx %v (-cli +mcp):\n%s", tc.args, tc.cli, diff)
		}
	}

	for _, tc := range []struct {
		cli     []string
		groupBy string
	}{
		{[]string{"pods", "-A", "--by-owner"}, "owner"},
		{[]string{"pods", "-A", "--by-node"}, "node"},
		{[]string{"pods", "-A", "--by-namespace"}, "namespace"},
		{[]string{"pods,services", "-A", "--by-label", "app"}, "label:app"},
		{[]string{"pods", "-A", "--by-owner", "--where", `object.status.phase != "Running"`}, "owner"},
	} {
		var doc cliGroups
		cliJSON(t, admin, &doc, tc.cli...)
		wantMembers, wantSummaries := doc.members()
		args := map[string]any{"resources": tc.cli[0], "allNamespaces": true, "groupBy": tc.groupBy, "limit": 7}
		if i := slices.Index(tc.cli, "--where"); i >= 0 {
			args["where"] = []string{tc.cli[i+1]}
		}
		gotMembers, gotSummaries := s.queryGroups(t, args)
		if diff := cmp.Diff(wantMembers, gotMembers); diff != "" {
			t.Errorf("query %v against kubectl idx %v: groups (-cli +mcp):\n%s", args, tc.cli, diff)
		}
		if diff := cmp.Diff(wantSummaries, gotSummaries); diff != "" {
			t.Errorf("query %v against kubectl idx %v: keys and summaries (-cli +mcp):\n%s", args, tc.cli, diff)
		}
	}

	// Relations, for every Deployment, Service and pod of shop.
	var shop cliList
	cliJSON(t, admin, &shop, "deployments,services,pods", "-n", "shop")
	checked, paths := 0, 0
	for _, o := range shop.Items {
		object := strings.ToLower(o.Kind) + "/" + o.Metadata.Name
		switch o.Kind {
		case "Deployment":
			var tree cliTree
			cliJSON(t, admin, &tree, "tree", object, "-n", "shop")
			paths += len(tree.paths())
			if diff := cmp.Diff(tree.paths(), s.relationPaths(t, map[string]any{"relation": "tree", "object": object, "namespace": "shop"})); diff != "" {
				t.Errorf("tree %s (-cli +mcp):\n%s", object, diff)
			}
		case "Pod":
			var tree cliTree
			cliJSON(t, admin, &tree, "owners", object, "-n", "shop")
			if diff := cmp.Diff(tree.paths(), s.relationPaths(t, map[string]any{"relation": "owners", "object": object, "namespace": "shop"})); diff != "" {
				t.Errorf("owners %s (-cli +mcp):\n%s", object, diff)
			}
			s.checkSelectionPaths(t, admin, "selected-by", "selectedBy", object, func(it string) string { return it + " > " + o.Kind + "/" + o.Metadata.Name })
		case "Service":
			s.checkSelectionPaths(t, admin, "selects", "selects", object, func(it string) string { return o.Kind + "/" + o.Metadata.Name + " > " + it })
		}
		checked++
	}
	if checked < 3 || paths < 2 {
		t.Fatalf("only %d objects of shop to ask relations about, %d paths down their Deployments", checked, paths)
	}
	var uses struct {
		Direction string `json:"direction"`
		Items     []struct {
			Kind string   `json:"kind"`
			Name string   `json:"name"`
			Via  []string `json:"via"`
		} `json:"items"`
	}
	cliJSON(t, admin, &uses, "uses", "configmap/web-config", "-n", "shop")
	var wantUses []string
	for _, it := range uses.Items {
		wantUses = append(wantUses, it.Kind+"/"+it.Name+" via "+strings.Join(it.Via, ","))
	}
	var usesAnswer v1alpha1.RelationsAnswer
	s.must(t, "relations", map[string]any{"relation": "uses", "object": "configmap/web-config", "namespace": "shop"}, &usesAnswer)
	var gotUses []string
	for _, it := range usesAnswer.Items {
		gotUses = append(gotUses, it.Kind+"/"+it.Name+" via "+strings.Join(it.Via, ","))
	}
	if len(wantUses) == 0 || !cmp.Equal(wantUses, gotUses) {
		t.Errorf("uses configmap/web-config: cli %v, mcp %v", wantUses, gotUses)
	}
	var orphans struct {
		Items []struct{ Kind, Namespace, Name string } `json:"items"`
	}
	cliJSON(t, admin, &orphans, "orphans", "-A")
	wantOrphans := []string{}
	for _, it := range orphans.Items {
		wantOrphans = append(wantOrphans, it.Kind+"/"+it.Name)
	}
	if diff := cmp.Diff(wantOrphans, s.relationPaths(t, map[string]any{"relation": "orphans", "allNamespaces": true})); diff != "" {
		t.Errorf("orphans (-cli +mcp):\n%s", diff)
	}

	// A feed's current state is the listing's.
	var pods cliList
	cliJSON(t, admin, &pods, "pods", "-n", "shop")
	var changes v1alpha1.ChangesAnswer
	s.must(t, "changes", map[string]any{"resources": "pods", "namespace": "shop", "limit": 5000}, &changes)
	var got, want []string
	for _, c := range changes.Changes {
		got = append(got, c.Type+" "+viewRef(c.Object)+" "+c.UID)
	}
	for _, o := range pods.Items {
		want = append(want, "ADDED "+o.ref()+" "+o.Metadata.UID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes' current state (-cli +mcp):\n%s", diff)
	}
}

// TestMCPReadYourWrites: a call made right after a write (client-go Create, Update, Delete)
// sees it: a query of ConfigMaps, and the changes since a feed's cursor.
func TestMCPReadYourWrites(t *testing.T) {
	const ns = "mcp-ryw"
	ctx, cs := parallelNamespace(t, ns)
	s := startMCP(t, env, env.Kubeconfig)
	var answer v1alpha1.QueryAnswer
	s.must(t, "query", map[string]any{"resources": "configmaps", "namespace": ns}, &answer)
	var feed v1alpha1.ChangesAnswer
	s.must(t, "changes", map[string]any{"resources": "configmaps", "namespace": ns}, &feed)
	cursor := feed.NextCursor
	for i := range 30 {
		name := fmt.Sprintf("ryw-%02d", i)
		created, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.must(t, "query", map[string]any{"resources": "configmaps", "namespace": ns, "limit": 5000}, &answer)
		if !slices.ContainsFunc(answer.Objects, func(o v1alpha1.ObjectView) bool { return o.Name == name }) {
			t.Fatalf("write %d: the query right after creating configmap %s does not hold it: %v", i, name, answer.Objects)
		}
		// What the answer is current as of: the type, its namespace, a resourceVersion at
		// or past the write's, shown current during the call.
		if len(answer.AsOf) != 1 || answer.AsOf[0].Resource != "configmaps" || answer.AsOf[0].Namespace != ns ||
			!rvAfter(answer.AsOf[0].ResourceVersion, created.ResourceVersion) && answer.AsOf[0].ResourceVersion != created.ResourceVersion ||
			answer.AsOf[0].AgeSeconds < 0 || answer.AsOf[0].AgeSeconds > 30 {
			t.Fatalf("write %d at resourceVersion %s: asOf %+v", i, created.ResourceVersion, answer.AsOf)
		}
		s.must(t, "changes", map[string]any{"resources": "configmaps", "namespace": ns, "cursor": cursor}, &feed)
		if !slices.ContainsFunc(feed.Changes, func(c v1alpha1.ChangeView) bool { return c.Type == "ADDED" && c.Object.Name == name }) {
			t.Fatalf("write %d: the changes right after creating configmap %s do not hold it: %+v", i, name, feed.Changes)
		}
		cursor = feed.NextCursor
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "ryw-00", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"k": "v"}
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.must(t, "changes", map[string]any{"resources": "configmaps", "namespace": ns, "cursor": cursor}, &feed)
	if len(feed.Changes) != 1 || feed.Changes[0].Type != "MODIFIED" || feed.Changes[0].Object.Name != "ryw-00" {
		t.Fatalf("the changes right after an update: %+v", feed.Changes)
	}
	cursor = feed.NextCursor
	if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, "ryw-01", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s.must(t, "changes", map[string]any{"resources": "configmaps", "namespace": ns, "cursor": cursor}, &feed)
	if len(feed.Changes) != 1 || feed.Changes[0].Type != "DELETED" || feed.Changes[0].Object.Name != "ryw-01" {
		t.Fatalf("the changes right after a delete: %+v", feed.Changes)
	}
	// With nothing new, a call waits up to timeoutSeconds, then answers nothing and the same
	// cursor.
	cursor = feed.NextCursor
	start := time.Now()
	s.must(t, "changes", map[string]any{"resources": "configmaps", "namespace": ns, "cursor": cursor, "timeoutSeconds": 1}, &feed)
	if len(feed.Changes) != 0 || feed.NextCursor != cursor || time.Since(start) < time.Second {
		t.Errorf("an idle wait: %+v after %s", feed, time.Since(start))
	}
}

// TestMCPForbidden: the namespace-limited user gets the API server's Forbidden as a tool error;
// a ServiceAccount whose RoleBinding is deleted is refused at the next call, whatever the
// staleness it accepts, by query and by a feed it started before.
func TestMCPForbidden(t *testing.T) {
	t.Parallel()
	s := startMCP(t, env, narrow.Kubeconfig)
	var answer v1alpha1.QueryAnswer
	s.must(t, "query", map[string]any{"resources": "pods", "namespace": "shop"}, &answer)
	if answer.Count == 0 {
		t.Fatal("the narrow user reads no pods in shop")
	}
	for _, args := range []map[string]any{
		{"resources": "deployments", "namespace": "shop"},
		{"resources": "pods", "namespace": "ops"},
		{"resources": "pods", "allNamespaces": true},
	} {
		res, _ := s.call(t, "query", args, nil)
		mustFailTool(t, fmt.Sprint(args), res, `User "jane" cannot list resource`, "Forbidden")
	}
	res, _ := s.call(t, "relations", map[string]any{"relation": "owners", "object": "deployment/web", "namespace": "shop"}, nil)
	mustFailTool(t, "owners of a deployment", res, "forbidden", "Forbidden")

	ctx := context.Background()
	const ns = "mcp-revoked"
	cs := env.Clientset
	createNamespace(ctx, t, cs, ns)
	binding := serviceAccountWith(ctx, t, cs, ns, "reader", readRules("configmaps"))
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := startMCP(t, env, tokenKubeconfig(ctx, t, cs, ns, "reader"))
	args := map[string]any{"resources": "configmaps", "namespace": ns}
	for range 2 {
		sa.must(t, "query", args, &answer)
		if answer.Count != 1 || answer.Objects[0].Name != "before" {
			t.Fatalf("the reader's configmaps: %+v", answer.Objects)
		}
	}
	var feed v1alpha1.ChangesAnswer
	sa.must(t, "changes", args, &feed)
	if err := cs.RbacV1().RoleBindings(ns).Delete(ctx, binding, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the API server to apply the deleted RoleBinding", func() string {
		if res := as("").kubectl(t, "auth", "can-i", "list", "configmaps", "-n", ns, "--as", "system:serviceaccount:"+ns+":reader"); strings.TrimSpace(res.Stdout) != "no" {
			return "kubectl auth can-i still says " + res.Stdout
		}
		return ""
	})
	for _, stale := range []float64{0, 600} {
		res, _ := sa.call(t, "query", map[string]any{"resources": "configmaps", "namespace": ns, "maxStalenessSeconds": stale}, nil)
		mustFailTool(t, fmt.Sprintf("configmaps after the RoleBinding was deleted, maxStalenessSeconds %v", stale), res, "cannot list resource", "Forbidden")
	}
	res, _ = sa.call(t, "changes", map[string]any{"resources": "configmaps", "namespace": ns, "cursor": feed.NextCursor}, nil)
	mustFailTool(t, "the feed after the RoleBinding was deleted", res, "cannot list resource", "Forbidden")
}

// TestMCPUnreachable: when the API server cannot be reached, a call is a tool error that says
// so, within the request timeout; once it is back, calls answer again.
func TestMCPUnreachable(t *testing.T) {
	t.Parallel()
	p, kc := newFaultProxy(t, env)
	s := startMCP(t, env, kc, "--request-timeout", faultTimeout.String(), "--sync-timeout", "20s")
	args := map[string]any{"resources": "pods", "namespace": "shop"}
	var answer v1alpha1.QueryAnswer
	s.must(t, "query", args, &answer)
	if err := p.Refuse(true); err != nil {
		t.Fatal(err)
	}
	p.Reset()
	start := time.Now()
	res, _ := s.call(t, "query", args, nil)
	mustFailTool(t, "query of an unreachable server", res, p.Addr(), "Unreachable", "Timeout")
	if wall := time.Since(start); wall > hangBound {
		t.Errorf("the call took %s", wall)
	}
	t.Logf("after %s: %s", time.Since(start).Round(time.Millisecond), toolText(res))
	res, _ = s.call(t, "contexts", nil, nil)
	var contexts v1alpha1.ContextsAnswer
	raw, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(raw, &contexts)
	if len(contexts.Contexts) != 1 || contexts.Contexts[0].Reachable || contexts.Contexts[0].Error == "" {
		t.Errorf("contexts while unreachable: %+v", contexts.Contexts)
	}
	if err := p.Refuse(false); err != nil {
		t.Fatal(err)
	}
	eventually(t, recoverWithin, "calls to answer again", func() string {
		res, _ := s.call(t, "query", args, nil)
		if res.IsError {
			return toolText(res)
		}
		return ""
	})
}

// TestMCPBadWhere: an expression that does not parse, or names a field the kind's schema does
// not have, is a tool error with the reason; one that reads a Secret's data is refused.
func TestMCPBadWhere(t *testing.T) {
	t.Parallel()
	s := startMCP(t, env, env.Kubeconfig)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"resources": "deployments", "allNamespaces": true, "where": []string{"object.spec.replica > 3"}}, `unknown field at column 13: "replica"`},
		{map[string]any{"resources": "pods", "where": []string{"object.spec..replicas"}}, "syntax error"},
		{map[string]any{"resources": "pods", "where": []string{"object.metadata.name"}}, "bool"},
		{map[string]any{"resources": "secrets", "allNamespaces": true, "where": []string{`object.data.password == "x"`}}, "a Secret's data"},
	} {
		res, _ := s.call(t, "query", tc.args, nil)
		mustFailTool(t, fmt.Sprint(tc.args), res, tc.want, "InvalidWhere")
	}
}

// TestMCPByteCap: on a namespace of 2,000 pods every answer stays under the byte cap, says it
// is truncated and pages to the whole answer, each pod once.
func TestMCPByteCap(t *testing.T) {
	const ns, n = "mcp-2000", 2000
	ctx, cs := parallelNamespace(t, ns)
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%04d", i), Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%20), "tier": "web"},
					Annotations: map[string]string{"note": strings.Repeat("n", 600)}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10", Env: []corev1.EnvVar{{Name: "PASSWORD", Value: "e2e-byte-cap-secret"}}}}},
			}
			_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	const maxBytes = 64 << 10
	s := startMCP(t, env, env.Kubeconfig, "--max-bytes", fmt.Sprint(maxBytes))
	check := func(what string, raw []byte, truncated bool) {
		t.Helper()
		if len(raw) > maxBytes {
			t.Errorf("%s: %d bytes, over the cap of %d", what, len(raw), maxBytes)
		}
		if !truncated {
			t.Errorf("%s: not truncated", what)
		}
		if strings.Contains(string(raw), "e2e-byte-cap-secret") {
			t.Errorf("%s: an env value in the answer", what)
		}
	}
	for _, args := range []map[string]any{
		{"resources": "pods", "namespace": ns, "limit": 5000},
		{"resources": "pods", "namespace": ns, "limit": 5000, "fields": []string{"{.metadata.annotations}", "{.spec.containers[*].env}"}},
		{"resources": "pods", "namespace": ns, "limit": 5000, "groupBy": "label:app"},
	} {
		seen := map[string]bool{}
		cursor, pages := "", 0
		for {
			a := withCursor(args, cursor)
			var answer v1alpha1.QueryAnswer
			raw := s.must(t, "query", a, &answer)
			pages++
			if answer.Total != n {
				t.Fatalf("query %v: total %d, want %d", args, answer.Total, n)
			}
			if answer.Truncated {
				check(fmt.Sprintf("query %v page %d", args, pages), raw, true)
			} else if len(raw) > maxBytes {
				t.Errorf("query %v last page: %d bytes", args, len(raw))
			}
			for _, o := range answer.Objects {
				seen[o.Name] = true
			}
			for _, gr := range answer.Groups {
				for _, o := range gr.Members {
					seen[o.Name] = true
				}
			}
			if !answer.Truncated {
				break
			}
			cursor = answer.NextCursor
		}
		if len(seen) != n {
			t.Errorf("query %v: %d pods over %d pages, want %d", args, len(seen), pages, n)
		}
		t.Logf("query %v: %d pages", args, pages)
	}
	var feed v1alpha1.ChangesAnswer
	raw := s.must(t, "changes", map[string]any{"resources": "pods", "namespace": ns, "limit": 5000}, &feed)
	check("changes", raw, feed.Truncated)
}

// inspectorDir holds the MCP inspector, installed by `npm ci` (the Makefile's test-e2e).
const inspectorDir = "testdata/mcp-inspector"

// TestMCPInspector: the MCP project's own inspector CLI lists the tools of kubectl idx mcp and
// calls one.
func TestMCPInspector(t *testing.T) {
	t.Parallel()
	bin, err := filepath.Abs(filepath.Join(inspectorDir, "node_modules", ".bin", "mcp-inspector"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the MCP inspector is not installed (make test-e2e runs npm ci in %s): %v", inspectorDir, err)
	}
	inspect := func(args ...string) testenv.Result {
		t.Helper()
		all := append([]string{"--cli", "-e", "KUBECONFIG=" + env.Kubeconfig, "-e", "KUBECACHEDIR=" + filepath.Join(t.TempDir(), "cache"), binary, "mcp"}, args...)
		res := run(t, testenv.Cmd{Path: bin, Args: all, Env: os.Environ(), Timeout: cmdTimeout})
		mustSucceed(t, "mcp-inspector "+strings.Join(args, " "), res)
		return res
	}
	res := inspect("--method", "tools/list")
	var tools struct {
		Tools []struct {
			Name         string `json:"name"`
			OutputSchema any    `json:"outputSchema"`
		} `json:"tools"`
	}
	mustDecode(t, "tools/list", res.Stdout, &tools)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.OutputSchema == nil {
			t.Errorf("tool %s has no outputSchema", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"changes", "contexts", "events", "query", "relations", "why"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	res = inspect("--method", "tools/call", "--tool-name", "query", "--tool-arg", "resources=pods", "--tool-arg", "namespace=shop")
	var called struct {
		IsError           bool                 `json:"isError"`
		StructuredContent v1alpha1.QueryAnswer `json:"structuredContent"`
	}
	mustDecode(t, "tools/call", res.Stdout, &called)
	var list cliList
	cliJSON(t, as(""), &list, "pods", "-n", "shop")
	var got []string
	for _, o := range called.StructuredContent.Objects {
		got = append(got, viewRef(o))
	}
	if called.IsError || !cmp.Equal(list.refs(), got) {
		t.Errorf("tools/call query: error %v, objects %v, want %v", called.IsError, got, list.refs())
	}
}

// mcpCtrlManifest is a Deployment with its Service, using a ConfigMap and a Secret, for the
// controller-driven cluster.
const mcpCtrlManifest = `
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {LOG_LEVEL: info}
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret}
stringData: {DB_PASSWORD: e2e-mcp-not-a-secret}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        env:
        - {name: TOKEN, value: e2e-mcp-env-value}
        - name: DB_PASSWORD
          valueFrom:
            secretKeyRef: {name: web-secret, key: DB_PASSWORD}
        envFrom:
        - configMapRef: {name: web-config}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
  - {port: 80}
`

// TestMCPControllers: on the cluster the real controllers drive, the tools answer what the CLI
// answers at the same moment (groups, the tree, the selection, the events the controllers
// wrote), and a feed narrowed to a Deployment follows it being scaled.
func TestMCPControllers(t *testing.T) {
	t.Parallel()
	c := controllerCluster(t)
	n := c.applyNS(t, "mcp-ctrl", "", mcpCtrlManifest)
	eventually(t, 2*time.Minute, "deployment web to roll out", func() string {
		return c.deploymentRolledOut(t, c.readWorkloads(t, n.name), "web", 3)
	})
	s := startMCP(t, c.env, c.env.Kubeconfig)
	cli := func(out any, args ...string) string {
		res := c.idx(t, append(args, "-o", "json")...)
		if res.ExitCode != 0 {
			return res.String()
		}
		if err := json.Unmarshal([]byte(res.Stdout), out); err != nil {
			return err.Error()
		}
		return ""
	}
	same := func(what string, want, got any) string {
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Sprintf("%s (-cli +mcp):\n%s", what, diff)
		}
		return ""
	}
	eventually(t, time.Minute, "query pods by owner to answer as the CLI", func() string {
		var doc cliGroups
		if why := cli(&doc, "pods", "-n", n.name, "--by-owner"); why != "" {
			return why
		}
		wantMembers, wantSummaries := doc.members()
		gotMembers, gotSummaries := s.queryGroups(t, map[string]any{"resources": "pods", "namespace": n.name, "groupBy": "owner"})
		if len(wantMembers["Deployment/web"]) != 3 {
			return fmt.Sprintf("the CLI's groups: %v", wantMembers)
		}
		return firstProblem(same("members", wantMembers, gotMembers), same("keys and summaries", wantSummaries, gotSummaries))
	})
	eventually(t, time.Minute, "relations to answer as the CLI", func() string {
		var tree cliTree
		if why := cli(&tree, "tree", "deployment/web", "-n", n.name); why != "" {
			return why
		}
		var sel cliList
		if why := cli(&sel, "selects", "service/web", "-n", n.name); why != "" {
			return why
		}
		wantSel := []string{}
		for _, it := range sel.Items {
			wantSel = append(wantSel, "Service/web > "+it.Kind+"/"+it.Metadata.Name)
		}
		return firstProblem(
			same("tree deployment/web", tree.paths(), s.relationPaths(t, map[string]any{"relation": "tree", "object": "deployment/web", "namespace": n.name})),
			same("selects service/web", wantSel, s.relationPaths(t, map[string]any{"relation": "selects", "object": "service/web", "namespace": n.name})))
	})
	eventually(t, time.Minute, "events to answer as the CLI", func() string {
		var list cliList
		if why := cli(&list, "events", "deployment/web", "-n", n.name); why != "" {
			return why
		}
		want := []string{}
		for _, e := range list.Items {
			want = append(want, e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name+" "+e.Reason)
		}
		slices.Sort(want)
		if len(want) == 0 {
			return "the controllers wrote no events yet"
		}
		var answer v1alpha1.EventsAnswer
		s.must(t, "events", map[string]any{"object": "deployment/web", "namespace": n.name, "limit": 5000}, &answer)
		got := []string{}
		for _, e := range answer.Events {
			got = append(got, e.Object+" "+e.Reason)
		}
		slices.Sort(got)
		return same("events deployment/web", want, got)
	})

	// A feed of the Deployment's pods follows a scale-up, and replays to the pods the CLI lists.
	feedArgs := map[string]any{"resources": "pods", "namespace": n.name, "owner": "deployment/web", "limit": 5000}
	var feed v1alpha1.ChangesAnswer
	s.must(t, "changes", feedArgs, &feed)
	state := map[string]string{}
	apply := func(changes []v1alpha1.ChangeView) {
		for _, ch := range changes {
			if ch.Type == "DELETED" {
				delete(state, ch.UID)
				continue
			}
			state[ch.UID] = ch.Object.Name
		}
	}
	apply(feed.Changes)
	if len(state) != 3 {
		t.Fatalf("the feed's current state: %+v", feed.Changes)
	}
	c.mustKubectl(t, "", "scale", "deployment/web", "-n", n.name, "--replicas=4")
	eventually(t, 2*time.Minute, "deployment web to scale to 4", func() string {
		return c.deploymentRolledOut(t, c.readWorkloads(t, n.name), "web", 4)
	})
	eventually(t, time.Minute, "the feed to hold the pods the CLI lists", func() string {
		args := map[string]any{"cursor": feed.NextCursor, "timeoutSeconds": 1}
		for k, v := range feedArgs {
			args[k] = v
		}
		s.must(t, "changes", args, &feed)
		apply(feed.Changes)
		var pods cliList
		if why := cli(&pods, "pods", "-n", n.name, "-l", "app=web"); why != "" {
			return why
		}
		want := map[string]string{}
		for _, p := range pods.Items {
			want[p.Metadata.UID] = p.Metadata.Name
		}
		return same("the feed's pods", want, state)
	})
	if strings.Contains(s.stderr.String(), "e2e-mcp-env-value") {
		t.Error("an env value on the server's stderr")
	}
}
