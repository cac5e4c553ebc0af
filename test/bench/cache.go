package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

// -cache times every kubectl idx command through the warm cache too, in the same run: after
// the direct command come [cache, first] (the cache server stopped before it: the first
// question, which answers directly, starts it and hands it the command to warm its informers
// after), [cache] (the same question again, from warm informers, shown
// current by the freshness check) and [cache, stale 1m] (the same with --max-staleness 1m,
// which skips the check when the last one is under a minute old). Each is compared with the
// direct command. After each cached run the cache process's resident memory is read from
// cache status and reported per 1,000 pods. With -scale the cache server is stopped before
// the first cached command of a run only, so that its memory after the last one is that of
// every command's informers together: --by-owner's and -o json's, as a user's session
// leaves it.

// Labels' suffixes of the cached twins.
const (
	cacheFirst = " [cache, first]"
	cacheWarm  = " [cache]"
	cacheStale = " [cache, stale 1m]"
)

// firstCached is the label of the first [cache, first] command measured (noteFirstCached).
var firstCached string

// noteFirstCached records the label of the first [cache, first] command of children, the
// commands measured.
func noteFirstCached(children []child) {
	for _, c := range children {
		if strings.HasSuffix(c.label, cacheFirst) {
			firstCached = c.label
			return
		}
	}
}

// cachedTwins adds the cached twins after each kubectl idx command of children.
func cachedTwins(o options, children []child) []child {
	var out []child
	for _, c := range children {
		out = append(out, c)
		if c.path != o.binary {
			continue
		}
		out = append(out,
			child{c.label + cacheFirst, c.path, append(c.args, "--cache"), c.label, c.informer},
			child{c.label + cacheWarm, c.path, append(c.args, "--cache"), c.label, c.informer},
			child{c.label + cacheStale, c.path, append(c.args, "--cache", "--max-staleness=1m"), c.label, c.informer},
		)
	}
	return out
}

// cacheEnv returns env with the bench's cache in a directory of dir, kept for the whole run.
func cacheEnv(env []string, dir string) ([]string, error) {
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o700); err != nil {
		return nil, err
	}
	return testenv.MergeEnv(env, "XDG_RUNTIME_DIR="+run, "KUBECTL_IDX_CACHE_IDLE_TIMEOUT=2h", "KUBECTL_IDX_CACHE_DROP_AFTER=2h"), nil
}

// beforeCached stops the cache server before a [cache, first] run (with -scale, before
// the first one of a run).
func beforeCached(ctx context.Context, o options, c child, env []string) error {
	if !strings.HasSuffix(c.label, cacheFirst) || o.scale && c.label != firstCached {
		return nil
	}
	res, err := testenv.Run(ctx, testenv.Cmd{Path: o.binary, Args: []string{"cache", "stop"}, Env: env})
	if err != nil || res.ExitCode != 0 {
		return fmt.Errorf("cache stop: %v\n%s", err, res)
	}
	return nil
}

// cacheRSS holds the cache process's resident memory after each cached command, the last
// run's.
var cacheRSS = map[string]int64{}

// afterCached reads the cache process's memory after a cached run.
func afterCached(ctx context.Context, o options, c child, env []string) {
	if !strings.Contains(c.label, " [cache") {
		return
	}
	res, err := testenv.Run(ctx, testenv.Cmd{Path: o.binary, Args: []string{"cache", "status", "-o", "json"}, Env: env})
	if err != nil || res.ExitCode != 0 {
		log("cache status: %v %s", err, res.Stderr)
		return
	}
	var st struct {
		Memory struct {
			RSS int64 `json:"rssBytes"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &st); err == nil {
		cacheRSS[c.label] = st.Memory.RSS
		// Logged as it is read too: a run that fails before its report (an
		// API server out of memory at 100,000 pods) still says it.
		log("cache process after %s: %.1f MB RSS, %.2f MB per 1k pods", c.label, float64(st.Memory.RSS)/(1<<20), float64(st.Memory.RSS)/(1<<20)/(float64(o.pods)/1000))
	}
}

// afterCachedRun stops the cache process once a run's commands are measured, before the
// raw LISTs: at 100,000 pods its whole pods and the API server's answers to those LISTs
// together do not fit the machine. The next run's first cached command starts it again.
func afterCachedRun(ctx context.Context, o options, env []string) {
	if !o.cache {
		return
	}
	if res, err := testenv.Run(ctx, testenv.Cmd{Path: o.binary, Args: []string{"cache", "stop"}, Env: env}); err != nil || res.ExitCode != 0 {
		log("cache stop: %v %s", err, res.Stderr)
	}
}

// reportCache prints the cache process's memory after each cached command.
func reportCache(w io.Writer, o options, results []*measurement) {
	if len(cacheRSS) == 0 {
		return
	}
	fmt.Fprintln(w, "\ncache process resident memory after each cached command (the informers of the commands before it included):")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "after\tRSS MB\tMB per 1k pods\t")
	for _, m := range results {
		if rss, ok := cacheRSS[m.label]; ok {
			fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t\n", m.label, float64(rss)/(1<<20), float64(rss)/(1<<20)/(float64(o.pods)/1000))
		}
	}
	_ = tw.Flush()
}
