package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-idx/kubectl-idx/test/fixtures"
	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// contextsGroup is one output format's commands in -contexts mode: kubectl get over each
// context in turn, kubectl idx over each context alone, and kubectl idx over all of them
// at once, the one compared with the other two.
type contextsGroup struct {
	sequential *measurement
	singles    []*measurement
	multi      *measurement
}

// contextsOutputs are the output formats timed in -contexts mode, -o json (the answer
// scripts read) first.
var contextsOutputs = [][]string{{"-o", "json"}, {"-o", "name"}, {}}

// runContexts is the -contexts mode: o.contexts control planes, each its own kube-apiserver
// and etcd filled alike with o.pods pods, one kubeconfig with a context per server (c1, c2,
// ...), and kubectl idx asked about all of them at once, timed against the same command over
// the slowest single context and against kubectl get over each context one after another,
// as a user without the plugin would.
func runContexts(ctx context.Context, o options) error {
	fixtures.Workers = o.workers
	names := make([]string, o.contexts)
	for i := range names {
		names[i] = fmt.Sprintf("c%d", i+1)
	}
	var envs []*testenv.Env
	defer func() {
		for i, env := range envs {
			log("%s: stopping kube-apiserver and etcd", names[i])
			if err := env.Stop(); err != nil {
				log("error: %v", err)
			}
		}
	}()
	// One after another: on a small machine, control planes starting together can outlast
	// the start timeout.
	for _, name := range names {
		log("%s: starting kube-apiserver and etcd", name)
		env, err := testenv.Start(ctx, serverOptions(o))
		if err != nil {
			return fmt.Errorf("context %s: %w", name, err)
		}
		envs = append(envs, env)
	}

	var (
		nodes int
		took  []time.Duration
	)
	for i, env := range envs {
		p, err := populate(ctx, o, writer(env.Config), names[i]+": ")
		if err != nil {
			return fmt.Errorf("context %s: %w", names[i], err)
		}
		nodes = p.nodes
		took = append(took, p.took)
		log("%s: created %d pods on %d nodes in %d namespaces in %s (%.0f pods/s, %d workers); etcd backend %s",
			names[i], p.pods, p.nodes, p.namespaces, p.took.Round(time.Millisecond), float64(p.pods)/p.took.Seconds(), o.workers, storageSize(ctx, env.Clientset))
	}

	churnCtx, stopChurn := context.WithCancel(ctx)
	defer stopChurn()
	for i, env := range envs {
		if err := churn(churnCtx, env.Clientset, o.churn); err != nil {
			return fmt.Errorf("context %s: %w", names[i], err)
		}
	}
	// The servers hold the same pods: the first one's weight is every one's.
	weight, err := weighPods(ctx, envs[0].Clientset)
	if err != nil {
		return err
	}
	log("%s", weight)

	kubeconfig := filepath.Join(envs[0].Dir, "contexts.kubeconfig")
	if err := writeContexts(envs, names, kubeconfig); err != nil {
		return err
	}
	// The discovery cache dir of the first server serves them all: kubectl keys it by host.
	envv := envs[0].Environ(kubeconfig, "")
	// The discovery cache is filled once per context, so no run pays for discovery more
	// than another.
	for _, name := range names {
		for _, c := range [][]string{{o.kubectl, "get", "ns", "--context", name}, {o.binary, "ns", "--context", name}} {
			if res, err := testenv.Run(ctx, testenv.Cmd{Path: c[0], Args: c[1:], Env: envv}); err != nil || res.ExitCode != 0 {
				return fmt.Errorf("warming up %s: %v\n%s", strings.Join(c, " "), err, res)
			}
		}
	}

	var (
		children []child
		results  []*measurement
		groups   []contextsGroup
	)
	add := func(c child) *measurement {
		m := &measurement{label: c.label, command: shellQuote(append([]string{c.path}, c.args...))}
		children, results = append(children, c), append(results, m)
		return m
	}
	for _, out := range contextsOutputs {
		var g contextsGroup
		get := append([]string{"get", "pods", "-A"}, out...)
		var seq []string
		for _, name := range names {
			seq = append(seq, shellQuote(append(append([]string{o.kubectl}, get...), "--context", name)))
		}
		// One shell runs them, so the wall is the sequence's and the peak RSS (ru_maxrss
		// of the shell's waited-for children) the largest of them.
		g.sequential = add(child{label: fmt.Sprintf("kubectl %s --context cI, I=1..%d in turn", strings.Join(get, " "), len(names)),
			path: "bash", args: []string{"-c", strings.Join(seq, " && ")}})
		for _, name := range names {
			args := append([]string{"pods", "-A", "--context", name}, out...)
			g.singles = append(g.singles, add(child{label: "kubectl idx " + strings.Join(args, " "), path: o.binary, args: args}))
		}
		args := append([]string{"pods", "-A", "--context", strings.Join(names, ",")}, out...)
		g.multi = add(child{label: "kubectl idx " + strings.Join(args, " "), path: o.binary, args: args})
		groups = append(groups, g)
	}

	guard, err := newMemoryGuard(o.minAvailableMiB << 10)
	if err != nil {
		return err
	}
	log("measuring (%s)", serverRSS())
	rssFile := filepath.Join(envs[0].Dir, "maxrss")
	idle := &idleWaiter{max: o.waitIdle}
	for i := range o.runs {
		for j, c := range children {
			m := results[j]
			if m.failed != "" {
				continue
			}
			idle.wait(ctx)
			res, err := measureOnce(ctx, c, m, envv, guard, rssFile)
			if !m.killed && (err != nil || res.ExitCode != 0) {
				// A command that fails (kubectl idx built without several contexts, a
				// partial answer) is a finding: report it and measure the rest.
				m.failed = failure(res, err)
			}
			log("run %d/%d %-48s %7.2fs %7.1f MB RSS %8.1f MB out %s", i+1, o.runs, c.label, res.Wall.Seconds(), float64(res.MaxRSSKB)/1024, float64(m.bytes)/(1<<20), m.failed)
		}
	}

	reportContexts(os.Stdout, o, names, nodes, took, weight, idle, groups, results)
	return nil
}

// writeContexts writes to path one kubeconfig with a context per environment, named
// names[i], each with its own cluster and user taken from that environment's admin
// kubeconfig. The current context is the first.
func writeContexts(envs []*testenv.Env, names []string, path string) error {
	merged := clientcmdapi.NewConfig()
	for i, env := range envs {
		cfg, err := clientcmd.LoadFromFile(env.Kubeconfig)
		if err != nil {
			return fmt.Errorf("reading kubeconfig %s: %w", env.Kubeconfig, err)
		}
		cur := cfg.Contexts[cfg.CurrentContext]
		if cur == nil || cfg.Clusters[cur.Cluster] == nil || cfg.AuthInfos[cur.AuthInfo] == nil {
			return fmt.Errorf("kubeconfig %s: current context %q has no cluster or user", env.Kubeconfig, cfg.CurrentContext)
		}
		name := names[i]
		merged.Clusters[name] = cfg.Clusters[cur.Cluster]
		merged.AuthInfos[name] = cfg.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	merged.CurrentContext = names[0]
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// slowest returns the single-context command with the highest median wall, or nil with
// the label of one that did not complete: the slowest of the rest would then not be the
// slowest.
func slowest(singles []*measurement) (*measurement, string) {
	var s *measurement
	for _, m := range singles {
		if m.failed != "" {
			return nil, m.label
		}
		if s == nil || median(m.walls) > median(s.walls) {
			s = m
		}
	}
	return s, ""
}

func reportContexts(w io.Writer, o options, names []string, nodes int, took []time.Duration, weight podWeight, idle *idleWaiter, groups []contextsGroup, results []*measurement) {
	var created []string
	for _, d := range took {
		created = append(created, fmt.Sprintf("%s (%.0f pods/s)", d.Round(time.Millisecond), float64(o.pods)/d.Seconds()))
	}
	fmt.Fprintf(w, "\nkubectl-idx bench (-contexts %d): %d clusters, contexts %s, each its own kube-apiserver and etcd with %d pods on %d nodes in %d namespaces, created in %s; %d run(s) each, median shown\n",
		o.contexts, len(names), strings.Join(names, ","), o.pods, nodes, o.namespaces, strings.Join(created, ", "), o.runs)
	fmt.Fprintf(w, "pods: %s, %s\n", podKind(o), weight)
	fmt.Fprintf(w, "machine: %s\n", idle)
	fmt.Fprintf(w, "kubectl: %s\n\n", kubectlVersion(o.kubectl))

	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\twall s\tpeak RSS MB\tstdout MB\tmulti/slowest single wall\tmulti/slowest single RSS\tmulti/kubectl in turn wall\tmulti/kubectl in turn RSS\t")
	var failed, noSlowest []string
	row := func(m *measurement, label string, cells ...string) {
		rss := fmt.Sprintf("%.1f", float64(median(m.rssKB))/1024)
		if m.killed {
			// The figures are those of the run up to the kill: lower bounds.
			rss = ">=" + rss
		}
		if m.failed != "" {
			label += " (failed, see below)"
			failed = append(failed, fmt.Sprintf("%s did not complete: %s", m.label, m.failed))
		}
		for len(cells) < 4 {
			cells = append(cells, "")
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.1f\t%s\t\n", label, median(m.walls).Seconds(), rss, float64(m.bytes)/(1<<20), strings.Join(cells, "\t"))
	}
	for gi, g := range groups {
		if gi > 0 {
			fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t")
		}
		s, incomplete := slowest(g.singles)
		if s == nil {
			noSlowest = append(noSlowest, fmt.Sprintf("%s: no slowest single context, %s did not complete", g.multi.label, incomplete))
		}
		row(g.sequential, g.sequential.label)
		for _, m := range g.singles {
			label := m.label
			if m == s {
				label += " (slowest single context)"
			}
			row(m, label)
		}
		var cells []string
		if s != nil {
			wall, rss := ratios(g.multi, s)
			cells = append(cells, wall, rss)
		} else {
			cells = append(cells, "", "")
		}
		wall, rss := ratios(g.multi, g.sequential)
		row(g.multi, g.multi.label, append(cells, wall, rss)...)
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nmulti/slowest single: kubectl idx over every context at once over the same command's single-context run with the highest median wall (its wall and its RSS).")
	fmt.Fprintln(w, "multi/kubectl in turn: over one shell running kubectl get for each context one after another (the sequence's wall, its largest peak RSS).")
	for _, s := range noSlowest {
		fmt.Fprintln(w, s)
	}
	for _, f := range failed {
		fmt.Fprintf(w, "\n%s\n", f)
	}
	reportCommands(w, o, results, fmt.Sprintf("KUBECONFIG holds contexts %s, one per bench server", strings.Join(names, ",")))
}
