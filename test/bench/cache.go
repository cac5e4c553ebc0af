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
	"time"

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
	res, err := testenv.Run(ctx, testenv.Cmd{Path: c.path, Args: []string{"cache", "stop"}, Env: env})
	if err != nil || res.ExitCode != 0 {
		return fmt.Errorf("cache stop: %v\n%s", err, res)
	}
	return nil
}

// cacheMemory is the cache process's memory after a cached command: right after it
// (what the command's lists left behind included), and settled, once the process has
// answered nothing for longer than its trim waits (pkg/served's trimmer hands what the
// lists left back to the system after a second of quiet), which is what it holds
// between questions.
type cacheMemory struct {
	rss, settledRSS, settledHeap, encoded int64
}

// cacheMem holds cacheMemory after each cached command, the last run's.
var cacheMem = map[string]cacheMemory{}

// settleFor is how long the bench waits before the settled reading: the trimmer's
// second of quiet, and the collection and return of memory it starts.
const settleFor = 3 * time.Second

// readCacheMemory asks the cache process of binary for its memory (cache status -o json).
func readCacheMemory(ctx context.Context, binary string, env []string) (rss, heap, encoded int64, err error) {
	res, err := testenv.Run(ctx, testenv.Cmd{Path: binary, Args: []string{"cache", "status", "-o", "json"}, Env: env})
	if err != nil || res.ExitCode != 0 {
		return 0, 0, 0, fmt.Errorf("cache status: %v %s", err, res.Stderr)
	}
	var st struct {
		Memory struct {
			RSS     int64 `json:"rssBytes"`
			Heap    int64 `json:"heapBytes"`
			Encoded int64 `json:"encodedBytes"`
		} `json:"memory"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &st); err != nil {
		return 0, 0, 0, fmt.Errorf("cache status: %v", err)
	}
	return st.Memory.RSS, st.Memory.Heap, st.Memory.Encoded, nil
}

// afterCached reads the cache process's memory after a cached run, then again once
// settled.
func afterCached(ctx context.Context, o options, c child, env []string) {
	if !strings.Contains(c.label, " [cache") {
		return
	}
	rss, _, _, err := readCacheMemory(ctx, c.path, env)
	if err != nil {
		log("%v", err)
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-time.After(settleFor):
	}
	settled, heap, encoded, err := readCacheMemory(ctx, c.path, env)
	if err != nil {
		log("%v", err)
		return
	}
	cacheMem[c.label] = cacheMemory{rss: rss, settledRSS: settled, settledHeap: heap, encoded: encoded}
	// Logged as it is read too: a run that fails before its report (an API server
	// out of memory at 100,000 pods) still says it.
	per := float64(o.pods) / 1000
	log("cache process after %s: %.1f MB RSS (%.2f MB per 1k pods); settled %.1f MB RSS (%.2f MB per 1k pods), %.1f MB of Go heap, %.1f MB of it kept JSON encodings (compressed)",
		c.label, mb(rss), mb(rss)/per, mb(settled), mb(settled)/per, mb(heap), mb(encoded))
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// afterCachedRun stops binary's cache process once a run's commands are measured, before
// the raw LISTs: at 100,000 pods its whole pods and the API server's answers to those
// LISTs together do not fit the machine. The next run's first cached command starts it
// again.
func afterCachedRun(ctx context.Context, o options, binary string, env []string) {
	if !o.cache {
		return
	}
	if res, err := testenv.Run(ctx, testenv.Cmd{Path: binary, Args: []string{"cache", "stop"}, Env: env}); err != nil || res.ExitCode != 0 {
		log("cache stop: %v %s", err, res.Stderr)
	}
}

// reportCache prints the cache process's memory after each cached command.
func reportCache(w io.Writer, o options, results []*measurement) {
	if len(cacheMem) == 0 {
		return
	}
	fmt.Fprintf(w, "\ncache process memory after each cached command (the informers of the commands before it included); settled: after %s without a command, as between questions:\n", settleFor)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "after\tRSS MB\tMB per 1k pods\tsettled RSS MB\tsettled MB per 1k pods\tGo heap MB\tkept JSON MB (compressed)\t")
	per := float64(o.pods) / 1000
	for _, m := range results {
		if c, ok := cacheMem[m.label]; ok {
			fmt.Fprintf(tw, "%s\t%.1f\t%.2f\t%.1f\t%.2f\t%.1f\t%.1f\t\n", m.label, mb(c.rss), mb(c.rss)/per, mb(c.settledRSS), mb(c.settledRSS)/per, mb(c.settledHeap), mb(c.encoded))
		}
	}
	_ = tw.Flush()
}
