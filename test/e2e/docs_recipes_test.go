package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// The documentation's recipes, run as written on `make demo`'s world: a control plane driven
// by the real controllers with the demo's workload (test/demo/workload.yaml) rolled out.
//
// A recipe is a command of a ```sh block of README.md or docs/*.md, with its continuation
// lines. Conventions the documents follow:
//   - `<!-- recipes: not run: REASON -->` on the line before a block leaves the block out
//     (installing, releasing, a krew install); every other block holds only kubectl, jq and
//     export commands;
//   - a recipe whose comment (the comment lines just above it, or its own trailing comment)
//     has a parenthesis starting with "none", as in "(none in make demo)", may print nothing
//     there; any other must print something (or, when it redirects to a file, fill the file);
//   - recipes over several contexts (--context a,b, --all-contexts) run on several clusters
//     in TestContextsREADMERecipes, not here;
//   - console and text blocks are transcripts and are not run.

// docRecipe is one command of a document's sh block.
type docRecipe struct {
	file string
	line int
	// cmd is the command as written, continuation lines included.
	cmd string
	// mayBeEmpty: its comment says the demo has nothing of the kind.
	mayBeEmpty bool
}

// name is the recipe on one line, for subtest names and messages.
func (r docRecipe) name() string {
	return strings.Join(strings.Fields(strings.ReplaceAll(r.cmd, "\\\n", " ")), " ")
}

var (
	notRunMarker = regexp.MustCompile(`^<!-- recipes: not run: .+ -->$`)
	noneMarker   = regexp.MustCompile(`#.*\(none\b`)
	feedRecipe   = regexp.MustCompile(`kubectl idx (watch\b|events\b.*\s(-w|--watch)\b)`)
)

// docFiles returns README.md and docs/*.md, relative to this package.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no docs/*.md")
	}
	slices.Sort(docs)
	return append([]string{filepath.Join("..", "..", "README.md")}, docs...)
}

// docLines returns every line of README.md and docs/*.md.
func docLines(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Split(string(data), "\n")...)
	}
	return out
}

// docRecipes parses the recipes of README.md and docs/*.md and the blocks left out. A
// block that is not marked and holds a command other than kubectl, jq or export fails t.
func docRecipes(t *testing.T) (recipes []docRecipe, notRun []string) {
	t.Helper()
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(f, filepath.Join("..", "..")+string(filepath.Separator))
		var (
			inBlock, run bool
			lang, prev   string
			comment, cur string
			start        int
		)
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(line, "```") {
				if !inBlock {
					inBlock, lang = true, strings.TrimPrefix(line, "```")
					run = lang == "sh" && !notRunMarker.MatchString(prev)
					if lang == "sh" && !run {
						notRun = append(notRun, fmt.Sprintf("%s:%d %s", rel, n, prev))
					}
					comment, cur = "", ""
				} else {
					inBlock = false
				}
				prev = line
				continue
			}
			if strings.TrimSpace(line) != "" {
				prev = line
			}
			if !inBlock || !run {
				continue
			}
			trimmed := strings.TrimSpace(line)
			if cur == "" {
				switch {
				case trimmed == "":
					comment = ""
					continue
				case strings.HasPrefix(trimmed, "#"):
					comment += trimmed + "\n"
					continue
				}
				start = n
				cur = line
			} else {
				cur += "\n" + line
			}
			if strings.HasSuffix(trimmed, "\\") {
				continue
			}
			r := docRecipe{file: rel, line: start, cmd: cur, mayBeEmpty: noneMarker.MatchString(comment) || noneMarker.MatchString(cur)}
			cur = ""
			// export sets a variable for the commands after it and prints nothing.
			r.mayBeEmpty = r.mayBeEmpty || strings.HasPrefix(r.cmd, "export ")
			switch strings.Fields(r.cmd)[0] {
			case "kubectl", "jq", "export":
			default:
				t.Errorf("%s:%d: %q is not a kubectl or jq command: mark its block with <!-- recipes: not run: REASON -->", r.file, r.line, r.name())
				continue
			}
			recipes = append(recipes, r)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return recipes, notRun
}

// demoShared is the control plane the documents' recipes run on, run as `make demo` runs
// one (three kwok nodes, the CRDs of the fixtures) with the demo's workload applied and
// rolled out (setupDemo).
var demoShared = lazyCluster{
	name:      "make demo's cluster",
	dirPrefix: "kubectl-idx-demo-",
	timeout:   6 * time.Minute,
	opts:      testenv.Options{CRDs: fixtures.CRDs(), Controllers: &testenv.ControllerOptions{Nodes: controllerNodes}},
	setup:     setupDemo,
}

// demoCluster returns make demo's cluster, starting it on first use. It is a cluster of its
// own: the other controller-driven tests use namespace shop for other objects.
func demoCluster(t *testing.T) *ctrlCluster {
	t.Helper()
	return demoShared.get(t)
}

// setupDemo applies the demo's workload to c as test/demo does (fixtures.DemoSetup), then
// makes the rollout its commands make (web's image set to 1.1), so that the recipes find
// web's two revisions as a newcomer's cluster has them after make demo.
func setupDemo(ctx context.Context, c *ctrlCluster) error {
	manifest, err := filepath.Abs(filepath.Join("..", "demo", "workload.yaml"))
	if err != nil {
		return err
	}
	for _, cmd := range append(fixtures.DemoSetup(manifest),
		"kubectl -n shop set image deployment/web web=registry.example/web:1.1 >/dev/null",
		"kubectl -n shop rollout status deployment/web --timeout=2m >/dev/null",
	) {
		res, err := testenv.Shell(ctx, c.env.Environ(c.env.Kubeconfig, c.pluginPath), cmd)
		if err != nil || res.ExitCode != 0 {
			return fmt.Errorf("%s: exit code %d: %v\n%s", cmd, res.ExitCode, err, res.Stderr)
		}
	}
	return nil
}

// shell runs script through bash -o pipefail in dir, with kubectl-idx found as `kubectl idx`.
func (c *ctrlCluster) shell(t *testing.T, dir, script string) testenv.Result {
	t.Helper()
	res := run(t, testenv.Cmd{
		Path: "bash", Args: []string{"-o", "pipefail", "-c", script},
		Env: c.env.Environ(c.env.Kubeconfig, c.pluginPath), Dir: dir, Timeout: cmdTimeout,
	})
	res.Stderr = dropDetectorNotice(res.Stderr)
	return res
}

// feed runs a recipe that follows changes for a few seconds, then ends it as Ctrl-C
// would end kubectl idx alone (SIGINT to kubectl-idx), so the rest of the pipeline sees
// the end of its input and prints what it has.
func (c *ctrlCluster) feed(t *testing.T, dir, script string) testenv.Result {
	t.Helper()
	p, err := testenv.StartProcess(t.Context(), testenv.Cmd{
		Path: "bash", Args: []string{"-o", "pipefail", "-c", script},
		Env: c.env.Environ(c.env.Kubeconfig, c.pluginPath), Dir: dir, Timeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	var out strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		for l := range p.Lines {
			out.WriteString(l.Text + "\n")
		}
	}()
	time.Sleep(5 * time.Second)
	var found bool
	procs := descendants(t, p.Pid())
	// bash runs a single command in its own process (exec), a pipeline in children.
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.Pid())); err == nil {
		procs[p.Pid()] = strings.TrimSpace(string(comm))
	}
	for pid, name := range procs {
		if name == "kubectl-idx" {
			found = true
			if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !found {
		res, _ := p.Wait(10 * time.Second)
		<-done
		t.Fatalf("no kubectl-idx running after 5s:\n%s\n%s", out.String(), res.Stderr)
	}
	res, err := p.Wait(30 * time.Second)
	<-done
	if err != nil {
		t.Fatalf("%v\n%s", err, res)
	}
	res.Stdout = out.String()
	res.Stderr = dropDetectorNotice(res.Stderr)
	return res
}

// redirected matches the files a command writes with > or >>, outside single quotes
// (quoted removes those).
var (
	redirected = regexp.MustCompile(`>>?\s*([^\s|&;>]+)`)
	quoted     = regexp.MustCompile(`'[^']*'`)
)

// plainListing reports whether a `kubectl idx ... | jq ...` recipe lists objects as
// `kubectl get` does, so that the same pipeline with `kubectl get` is its reference.
func plainListing(cmd string) bool {
	m := readmeRecipe.FindStringSubmatch(cmd)
	if m == nil || strings.Contains(cmd, "\n") {
		return false
	}
	idx, _, _ := strings.Cut(m[1], "|")
	fields := strings.Fields(idx)
	if len(fields) < 3 {
		return false
	}
	switch fields[2] {
	case "tree", "owners", "selects", "selected-by", "uses", "orphans", "events", "history", "blame", "watch", "cache", "version", "mcp", "completion", "options":
		return false
	}
	for _, f := range fields[3:] {
		if strings.HasPrefix(f, "--by") || strings.HasPrefix(f, "--where") || strings.HasPrefix(f, "--show-owner") || strings.HasPrefix(f, "--cache") {
			return false
		}
	}
	return true
}

// TestREADMERecipes runs every recipe of README.md and docs/*.md, as written, on make demo's
// cluster (see the conventions above). A `kubectl idx TYPE ... | jq ...` listing must also
// print what the same pipeline prints with `kubectl get`.
func TestREADMERecipes(t *testing.T) {
	recipes, notRun := docRecipes(t)
	if len(recipes) < 50 {
		t.Fatalf("the documents have %d recipes, want at least 50", len(recipes))
	}
	for _, b := range notRun {
		t.Logf("not run: %s", b)
	}
	c := demoCluster(t)
	t.Cleanup(func() { c.shell(t, "", "kubectl idx cache stop") })
	var ran, contexts int
	for _, r := range recipes {
		if manyContexts(r.cmd) {
			contexts++
			continue
		}
		ran++
		t.Run(r.name(), func(t *testing.T) {
			dir := t.TempDir()
			var res testenv.Result
			if feedRecipe.MatchString(r.cmd) {
				res = c.feed(t, dir, r.cmd)
			} else {
				res = c.shell(t, dir, r.cmd)
			}
			if res.ExitCode != 0 {
				t.Fatalf("%s:%d: exit code %d\n%s", r.file, r.line, res.ExitCode, res)
			}
			out := res.Stdout
			for _, m := range redirected.FindAllStringSubmatch(quoted.ReplaceAllString(r.cmd, "''"), -1) {
				data, err := os.ReadFile(filepath.Join(dir, m[1]))
				if err != nil {
					t.Fatalf("%s:%d: %v", r.file, r.line, err)
				}
				out += string(data)
			}
			if strings.TrimSpace(out) == "" && !r.mayBeEmpty {
				t.Errorf("%s:%d: printed nothing on make demo's cluster (a recipe that may says \"(none ...)\" in its comment)\nstderr:\n%s", r.file, r.line, res.Stderr)
			}
			if plainListing(r.cmd) {
				ref := strings.ReplaceAll(r.cmd, "kubectl idx", "kubectl get")
				// The controllers may change what both read between the two: again.
				var want string
				for range 3 {
					want = c.shell(t, dir, ref).Stdout
					if want == out {
						break
					}
					out = c.shell(t, dir, r.cmd).Stdout
				}
				if out != want {
					t.Errorf("%s:%d: prints:\n%s\nwant (from %s):\n%s", r.file, r.line, out, ref, want)
				}
			}
		})
	}
	t.Logf("%d recipes run, %d over several contexts left to TestContextsREADMERecipes, %d blocks not run", ran, contexts, len(notRun))
}
