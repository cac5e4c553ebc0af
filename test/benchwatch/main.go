// Command benchwatch measures `kubectl idx watch` under load on a real kube-apiserver and
// etcd: it writes a steady stream of object changes and measures, for each one, the delay
// from the write to the line the feed prints for it, and the feed's memory over the run.
//
//	make build
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go run ./test/benchwatch -binary bin/kubectl-idx
//
// Each write patches one of -objects ConfigMaps with an annotation holding the time just
// before the request was sent and a sequence number; the feed runs as a child process with
// `-o json --watch-only` and its NDJSON lines are parsed as they arrive. The delay therefore
// includes the API server's write, etcd, the watch fan-out, the informer, the feed's queue
// and encoding, and the pipe. RSS is sampled from /proc every second for its maximum, and
// every -rss-every for the series printed at the end, with a flatness figure for soaks: RSS
// at the end of -settle against the end of the run, and the slope of a least-squares line
// through the samples after -settle.
//
//	go run ./test/benchwatch -binary bin/kubectl-idx -rate 500 -duration 10m
//
// This is a benchmark, not a test: nothing is asserted about the numbers, but lost or
// repeated changes are reported, and so is a write rate below the target.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-idx/kubectl-idx/test/testenv"
)

const (
	namespace = "bench"
	// Annotations each write sets.
	writtenAtKey = "bench.kubectl-idx.io/written-at"
	seqKey       = "bench.kubectl-idx.io/seq"
)

type options struct {
	binary   string
	rate     int
	duration time.Duration
	objects  int
	workers  int
	rssEvery time.Duration
	settle   time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "bin/kubectl-idx", "Path of the kubectl-idx binary to measure.")
	flag.IntVar(&o.rate, "rate", 1000, "Object changes written per second.")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "How long to write.")
	flag.IntVar(&o.objects, "objects", 1000, "Number of ConfigMaps the changes go round.")
	flag.IntVar(&o.workers, "workers", 64, "Concurrent write requests.")
	flag.DurationVar(&o.rssEvery, "rss-every", 10*time.Second, "Interval of the feed RSS series printed at the end.")
	flag.DurationVar(&o.settle, "settle", time.Minute, "Start-up time left out of the RSS flatness figures.")
	flag.Parse()
	if o.rate < 1 || o.duration <= 0 || o.objects < 1 || o.workers < 1 || o.rssEvery <= 0 || o.settle < 0 {
		fmt.Fprintln(os.Stderr, "error: -rate, -duration, -objects, -workers and -rss-every must be positive, -settle not negative")
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// arrival is one change as the feed printed it.
type arrival struct {
	seq int
	// delay runs from the write to the printed line; received, from the write to the
	// informer's handler (the event's "time"); inFeed, from the handler to the line.
	delay, received, inFeed time.Duration
}

func run(ctx context.Context, o options) error {
	fmt.Fprintf(os.Stderr, "starting kube-apiserver and etcd...\n")
	env, err := testenv.Start(ctx, testenv.Options{
		APIServerFlags: map[string][]string{
			"max-requests-inflight":          {"2000"},
			"max-mutating-requests-inflight": {"1000"},
		},
		// A throwaway bench cluster: without fsync, etcd's disk is no longer
		// what limits the write rate, so the delay measured is the API server's
		// and the feed's, not this machine's disk.
		EtcdFlags:    map[string][]string{"quota-backend-bytes": {"8589934592"}, "unsafe-no-fsync": {"true"}},
		StartTimeout: 2 * time.Minute,
	})
	if err != nil {
		return err
	}
	defer func() { _ = env.Stop() }()

	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = float32(o.rate*4), o.rate*4
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "creating %d configmaps...\n", o.objects)
	var eg errgroup.Group
	eg.SetLimit(o.workers)
	for i := range o.objects {
		eg.Go(func() error {
			_, err := cs.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: objectName(i), Labels: map[string]string{"app": "bench"}},
				Data:       map[string]string{"payload": "some configuration of a realistic size, a few hundred bytes in all"},
			}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("creating configmap %d: %w", i, err)
			}
			return nil
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}

	args := []string{"watch", "configmaps", "-n", namespace, "--watch-only", "-o", "json"}
	feed, err := testenv.StartProcess(ctx, testenv.Cmd{
		Path: o.binary, Args: args, Env: env.Environ(env.Kubeconfig, ""), Timeout: o.duration + 5*time.Minute,
	})
	if err != nil {
		return err
	}
	total := o.rate * int(o.duration/time.Second)
	arrivals := make(chan arrival, total+1024)
	var lines, badLines atomic.Int64
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		for l := range feed.Lines {
			lines.Add(1)
			seq, writtenAt, handled, ok := parseLine(l.Text)
			if !ok {
				badLines.Add(1)
				continue
			}
			arrivals <- arrival{seq: seq, delay: l.At.Sub(writtenAt), received: handled.Sub(writtenAt), inFeed: l.At.Sub(handled)}
		}
	}()

	// Warm up: the feed prints nothing until a change; the first one says it is watching.
	fmt.Fprintf(os.Stderr, "waiting for the feed...\n")
	warm := -1
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if err := patch(ctx, cs, 0, warm); err != nil {
			return err
		}
		select {
		case a := <-arrivals:
			if a.seq != warm {
				return fmt.Errorf("unexpected change %d during warm-up", a.seq)
			}
		case <-time.After(time.Second):
			if time.Now().After(deadline) {
				return fmt.Errorf("the feed printed nothing in two minutes:\n%s", feed.Stderr())
			}
			continue
		}
		break
	}
	// Let the runtime settle, then take the starting RSS.
	time.Sleep(2 * time.Second)
	for len(arrivals) > 0 {
		<-arrivals
	}
	rssStart, err := feed.RSSKB()
	if err != nil {
		return err
	}

	// rssSamples (every second) give the maximum, series (every o.rssEvery, from the
	// first write on) the shape over time.
	var rssMu sync.Mutex
	rssSamples := []int64{rssStart}
	series := []rssSample{{0, rssStart}}
	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	sampleStart := time.Now()
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		every, slow := time.NewTicker(time.Second), time.NewTicker(o.rssEvery)
		defer every.Stop()
		defer slow.Stop()
		for {
			select {
			case <-sampleCtx.Done():
				return
			case <-every.C:
				if kb, err := feed.RSSKB(); err == nil {
					rssMu.Lock()
					rssSamples = append(rssSamples, kb)
					rssMu.Unlock()
				}
			case <-slow.C:
				if kb, err := feed.RSSKB(); err == nil {
					rssMu.Lock()
					series = append(series, rssSample{time.Since(sampleStart), kb})
					rssMu.Unlock()
				}
			}
		}
	}()

	fmt.Fprintf(os.Stderr, "writing %d changes per second for %s...\n", o.rate, o.duration)
	jobs := make(chan int, o.workers)
	var writeErrs atomic.Int64
	var wlMu sync.Mutex
	writeLatencies := make([]time.Duration, 0, total)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := range jobs {
				t0 := time.Now()
				if err := patch(ctx, cs, seq%o.objects, seq); err != nil {
					writeErrs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				d := time.Since(t0)
				wlMu.Lock()
				writeLatencies = append(writeLatencies, d)
				wlMu.Unlock()
			}
		}()
	}
	start := time.Now()
	var late time.Duration
	for seq := range total {
		due := start.Add(time.Duration(seq) * time.Second / time.Duration(o.rate))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		} else {
			late = max(late, -d)
		}
		select {
		case jobs <- seq:
		case <-ctx.Done():
			close(jobs)
			return ctx.Err()
		}
	}
	close(jobs)
	wg.Wait()
	writeTime := time.Since(start)

	// Collect until every change has arrived or nothing came for ten seconds.
	delays := make([]time.Duration, 0, total)
	received := make([]time.Duration, 0, total)
	inFeed := make([]time.Duration, 0, total)
	seen := make(map[int]int, total)
	idle := time.NewTimer(10 * time.Second)
collect:
	for len(seen) < total-int(writeErrs.Load()) {
		select {
		case a := <-arrivals:
			seen[a.seq]++
			if seen[a.seq] == 1 {
				delays = append(delays, a.delay)
				received = append(received, a.received)
				inFeed = append(inFeed, a.inFeed)
			}
			idle.Reset(10 * time.Second)
		case <-idle.C:
			break collect
		}
	}
	stopSampling()
	<-samplerDone
	rssEnd, _ := feed.RSSKB()
	series = append(series, rssSample{time.Since(sampleStart), rssEnd})
	// The feed's peak over its whole life, start-up included. getrusage after Wait would
	// not do: Go starts children with vfork and execve carries this process's own peak RSS
	// into the child's ru_maxrss.
	rssPeak := peakRSSKB(feed.Pid())
	if err := feed.Signal(os.Interrupt); err != nil {
		return err
	}
	<-readDone
	res, err := feed.Wait(30 * time.Second)
	if err != nil {
		return err
	}

	var duplicates int
	for _, n := range seen {
		if n > 1 {
			duplicates += n - 1
		}
	}
	for _, d := range [][]time.Duration{delays, received, inFeed, writeLatencies} {
		slices.Sort(d)
	}
	rssMax := max(slices.Max(rssSamples), rssEnd)

	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "command\tkubectl-idx %s\n", strings.Join(args, " "))
	fmt.Fprintf(w, "writes\t%d in %s (%.0f/s; target %d/s), %d failed, dispatch up to %s late\n",
		total, writeTime.Round(time.Millisecond), float64(total)/writeTime.Seconds(), o.rate, writeErrs.Load(), late.Round(time.Millisecond))
	if v := firstErr.Load(); v != nil {
		fmt.Fprintf(w, "first write error\t%s\n", v)
	}
	fmt.Fprintf(w, "changes printed\t%d of %d; %d missing, %d repeated, %d unreadable lines\n",
		len(seen), total-int(writeErrs.Load()), total-int(writeErrs.Load())-len(seen), duplicates, badLines.Load())
	for _, row := range []struct {
		label string
		d     []time.Duration
	}{
		{"write → printed line", delays},
		{"  write request (for reference)", writeLatencies},
		{"  write → informer handler", received},
		{"  handler → printed line (the feed)", inFeed},
	} {
		if len(row.d) > 0 {
			fmt.Fprintf(w, "%s\tp50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n", row.label,
				pct(row.d, 50), pct(row.d, 90), pct(row.d, 99), pct(row.d, 99.9), row.d[len(row.d)-1].Round(100*time.Microsecond))
		}
	}
	fmt.Fprintf(w, "feed RSS\tstart %s  end %s  max %s (sampled every second)\n", mib(rssStart), mib(rssEnd), mib(rssMax))
	fmt.Fprintf(w, "feed exit\tcode %d after SIGINT; peak RSS over its life before SIGINT %s (VmHWM)\n", res.ExitCode, mib(rssPeak))
	fmt.Fprintf(w, "feed RSS flatness\t%s\n", flatness(series, o.settle))
	if s := res.Stderr; s != "" {
		fmt.Fprintf(w, "feed stderr\t%q\n", s)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	printSeries(os.Stdout, series, o.rssEvery)
	return nil
}

// peakRSSKB returns VmHWM, the peak RSS of process pid, from /proc; 0 if unreadable.
func peakRSSKB(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// rssSample is the feed's RSS at a time since the first write.
type rssSample struct {
	at time.Duration
	kb int64
}

// flatness compares the RSS at the end of settle (the first sample at or after it) with
// the last sample, and fits a least-squares line through the samples from settle on: a
// feed whose memory stays flat has a slope near zero however noisy the samples are.
func flatness(series []rssSample, settle time.Duration) string {
	i := slices.IndexFunc(series, func(s rssSample) bool { return s.at >= settle })
	if i < 0 || len(series)-i < 3 {
		return fmt.Sprintf("n/a: fewer than 3 samples after %s", clock(settle))
	}
	from, end := series[i], series[len(series)-1]
	// Least squares of MiB over minutes.
	var n, sx, sy, sxx, sxy float64
	for _, s := range series[i:] {
		x, y := s.at.Minutes(), float64(s.kb)/1024
		n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	span := (end.at - from.at).Minutes()
	return fmt.Sprintf("at %s %s, at end (%s) %s: %+.1f MiB (%+.1f%%); least-squares slope over %s..%s %+.2f MiB/min (%+.2f%% of the %s value per minute, %d samples)",
		clock(from.at), mib(from.kb), clock(end.at), mib(end.kb), float64(end.kb-from.kb)/1024, 100*float64(end.kb-from.kb)/float64(from.kb),
		clock(from.at), clock(end.at), slope, 100*slope/(float64(from.kb)/1024), clock(from.at), int(n)) +
		fmt.Sprintf("; fitted growth over those %.1f min %+.1f MiB", span, slope*span)
}

// printSeries prints the RSS series in MiB, one line per minute of samples.
func printSeries(w io.Writer, series []rssSample, every time.Duration) {
	perLine := max(1, int(time.Minute/every))
	fmt.Fprintf(w, "\nfeed RSS series (MiB, sampled every %s from the first write; the last sample is at the end of the run):\n", every)
	for i := 0; i < len(series); i += perLine {
		line := series[i:min(i+perLine, len(series))]
		cells := make([]string, len(line))
		for j, s := range line {
			cells[j] = fmt.Sprintf("%6.1f", float64(s.kb)/1024)
		}
		fmt.Fprintf(w, "  %6s  %s\n", clock(line[0].at), strings.Join(cells, " "))
	}
}

// clock renders d as m:ss.
func clock(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func objectName(i int) string { return fmt.Sprintf("cm-%05d", i) }

// patch stamps object i with seq and the time just before the request is sent.
func patch(ctx context.Context, cs kubernetes.Interface, i, seq int) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		writtenAtKey: time.Now().UTC().Format(time.RFC3339Nano),
		seqKey:       strconv.Itoa(seq),
	}}})
	if err != nil {
		return err
	}
	_, err = cs.CoreV1().ConfigMaps(namespace).Patch(ctx, objectName(i), types.MergePatchType, body, metav1.PatchOptions{})
	return err
}

// parseLine reads the stamp of a MODIFIED event and the time the feed received it.
func parseLine(line string) (seq int, writtenAt, handled time.Time, ok bool) {
	var ev struct {
		Type   string    `json:"type"`
		Time   time.Time `json:"time"`
		Object struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"object"`
	}
	if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != "MODIFIED" {
		return 0, time.Time{}, time.Time{}, false
	}
	a := ev.Object.Metadata.Annotations
	t, err := time.Parse(time.RFC3339Nano, a[writtenAtKey])
	if err != nil {
		return 0, time.Time{}, time.Time{}, false
	}
	seq, err = strconv.Atoi(a[seqKey])
	if err != nil {
		return 0, time.Time{}, time.Time{}, false
	}
	return seq, t, ev.Time, true
}

// pct returns the p-th percentile of sorted.
func pct(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i].Round(100 * time.Microsecond)
}

func mib(kb int64) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }
