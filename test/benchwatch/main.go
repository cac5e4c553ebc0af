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
// With -checkpoint (the default), a second feed runs beside the first on the same writes,
// with --checkpoint FILE: the report gives each one's figures side by side, and the
// checkpoint's cost as the difference: CPU time, bytes written (wchar less the other feed's,
// which prints the same lines) and the file's size at the end.
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
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	binary     string
	checkpoint bool
	rate       int
	duration   time.Duration
	objects    int
	workers    int
	rssEvery   time.Duration
	settle     time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "bin/kubectl-idx", "Path of the kubectl-idx binary to measure.")
	flag.BoolVar(&o.checkpoint, "checkpoint", true, "Run a second feed with --checkpoint beside the first, on the same writes.")
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
	testenv.Main(func(ctx context.Context) error { return run(ctx, o) })
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
	total := o.rate * int(o.duration/time.Second)
	feeds := []*feedUnderTest{{name: "without checkpoint", args: args}}
	if o.checkpoint {
		dir, err := os.MkdirTemp("", "benchwatch-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cp := filepath.Join(dir, "configmaps.checkpoint")
		feeds = append(feeds, &feedUnderTest{name: "with --checkpoint", args: append(slices.Clone(args), "--checkpoint", cp), checkpoint: cp})
	}
	for _, f := range feeds {
		if err := f.start(ctx, o, env, total); err != nil {
			return err
		}
	}

	// Warm up: a feed prints nothing until a change; the first one says it is watching.
	fmt.Fprintf(os.Stderr, "waiting for the feeds...\n")
	ready := make([]bool, len(feeds))
	for warm, deadline := -1, time.Now().Add(2*time.Minute); slices.Contains(ready, false); warm-- {
		if time.Now().After(deadline) {
			return fmt.Errorf("the feeds printed nothing in two minutes:\n%s", feeds[0].proc.Stderr())
		}
		if err := patch(ctx, cs, 0, warm); err != nil {
			return err
		}
		for i, f := range feeds {
			if ready[i] {
				continue
			}
			select {
			case a := <-f.arrivals:
				if a.seq >= 0 {
					return fmt.Errorf("%s: unexpected change %d during warm-up", f.name, a.seq)
				}
				ready[i] = true
			case <-time.After(time.Second):
			}
		}
	}
	// Let the runtime settle, then take the starting RSS and CPU time.
	time.Sleep(2 * time.Second)
	sampleCtx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	sampleStart := time.Now()
	for _, f := range feeds {
		if err := f.settle(sampleCtx, o, sampleStart); err != nil {
			return err
		}
	}

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

	want := total - int(writeErrs.Load())
	var cwg sync.WaitGroup
	for _, f := range feeds {
		cwg.Go(func() { f.collect(want) })
	}
	cwg.Wait()
	stopSampling()
	for _, f := range feeds {
		if err := f.stop(sampleStart); err != nil {
			return err
		}
	}
	slices.Sort(writeLatencies)

	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "command\tkubectl-idx %s\n", strings.Join(args, " "))
	fmt.Fprintf(w, "writes\t%d in %s (%.0f/s; target %d/s), %d failed, dispatch up to %s late\n",
		total, writeTime.Round(time.Millisecond), float64(total)/writeTime.Seconds(), o.rate, writeErrs.Load(), late.Round(time.Millisecond))
	if v := firstErr.Load(); v != nil {
		fmt.Fprintf(w, "first write error\t%s\n", v)
	}
	if len(writeLatencies) > 0 {
		fmt.Fprintf(w, "write request (for reference)\t%s\n", percentiles(writeLatencies))
	}
	for _, f := range feeds {
		fmt.Fprintf(w, "\n%s\n", f.name)
		f.report(w, want, o)
	}
	if len(feeds) == 2 {
		a, b := feeds[0], feeds[1]
		secs := writeTime.Seconds()
		fmt.Fprintf(w, "\nthe checkpoint's cost\tCPU %+.2f s over the run (%+.1f%% of a core at %d changes/s); %+.1f MiB written (%.0f KiB/s); the file %.1f KiB at the end\n",
			b.cpu.Seconds()-a.cpu.Seconds(), 100*(b.cpu.Seconds()-a.cpu.Seconds())/secs, o.rate,
			float64(b.wchar-a.wchar)/(1<<20), float64(b.wchar-a.wchar)/1024/secs, float64(b.fileSize)/1024)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, f := range feeds {
		fmt.Fprintf(os.Stdout, "\n%s:", f.name)
		printSeries(os.Stdout, f.series, o.rssEvery)
	}
	return nil
}

// feedUnderTest is one feed process measured, with what it printed.
type feedUnderTest struct {
	name       string
	args       []string
	checkpoint string

	proc              *testenv.Process
	arrivals          chan arrival
	lines, badLines   atomic.Int64
	readDone          chan struct{}
	rssMu             sync.Mutex
	rssStart, rssEnd  int64
	rssSamples        []int64
	series            []rssSample
	samplerDone       chan struct{}
	cpuStart, cpu     time.Duration
	wcharStart, wchar int64
	fileSize          int64
	rssPeak           int64
	seen              map[int]int
	delays            []time.Duration
	received, inFeed  []time.Duration
	res               testenv.Result
}

// start runs the feed and reads its lines as they come.
func (f *feedUnderTest) start(ctx context.Context, o options, env *testenv.Env, total int) error {
	p, err := testenv.StartProcess(ctx, testenv.Cmd{
		Path: o.binary, Args: f.args, Env: env.Environ(env.Kubeconfig, ""), Timeout: o.duration + 5*time.Minute,
	})
	if err != nil {
		return err
	}
	f.proc, f.arrivals, f.readDone = p, make(chan arrival, total+1024), make(chan struct{})
	go func() {
		defer close(f.readDone)
		for l := range p.Lines {
			f.lines.Add(1)
			seq, writtenAt, handled, ok := parseLine(l.Text)
			if !ok {
				f.badLines.Add(1)
				continue
			}
			f.arrivals <- arrival{seq: seq, delay: l.At.Sub(writtenAt), received: handled.Sub(writtenAt), inFeed: l.At.Sub(handled)}
		}
	}()
	return nil
}

// settle drops what the warm-up left, takes the starting RSS, CPU time and bytes written,
// and samples RSS until ctx ends: every second for the maximum, every o.rssEvery for the
// series.
func (f *feedUnderTest) settle(ctx context.Context, o options, sampleStart time.Time) error {
	for len(f.arrivals) > 0 {
		<-f.arrivals
	}
	var err error
	if f.rssStart, err = f.proc.RSSKB(); err != nil {
		return err
	}
	f.cpuStart, f.wcharStart = cpuTime(f.proc.Pid()), wchar(f.proc.Pid())
	f.rssSamples, f.series = []int64{f.rssStart}, []rssSample{{0, f.rssStart}}
	f.samplerDone = make(chan struct{})
	go func() {
		defer close(f.samplerDone)
		every, slow := time.NewTicker(time.Second), time.NewTicker(o.rssEvery)
		defer every.Stop()
		defer slow.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-every.C:
				if kb, err := f.proc.RSSKB(); err == nil {
					f.rssMu.Lock()
					f.rssSamples = append(f.rssSamples, kb)
					f.rssMu.Unlock()
				}
			case <-slow.C:
				if kb, err := f.proc.RSSKB(); err == nil {
					f.rssMu.Lock()
					f.series = append(f.series, rssSample{time.Since(sampleStart), kb})
					f.rssMu.Unlock()
				}
			}
		}
	}()
	return nil
}

// collect takes the changes printed until every one of want has arrived or nothing came
// for ten seconds.
func (f *feedUnderTest) collect(want int) {
	f.seen = make(map[int]int, want)
	idle := time.NewTimer(10 * time.Second)
	for len(f.seen) < want {
		select {
		case a := <-f.arrivals:
			f.seen[a.seq]++
			if f.seen[a.seq] == 1 {
				f.delays = append(f.delays, a.delay)
				f.received = append(f.received, a.received)
				f.inFeed = append(f.inFeed, a.inFeed)
			}
			idle.Reset(10 * time.Second)
		case <-idle.C:
			return
		}
	}
}

// stop takes the final figures and ends the feed with SIGINT.
func (f *feedUnderTest) stop(sampleStart time.Time) error {
	<-f.samplerDone
	f.rssEnd, _ = f.proc.RSSKB()
	f.series = append(f.series, rssSample{time.Since(sampleStart), f.rssEnd})
	f.cpu, f.wchar = cpuTime(f.proc.Pid())-f.cpuStart, wchar(f.proc.Pid())-f.wcharStart
	// The feed's peak over its whole life, start-up included. getrusage after Wait would
	// not do: Go starts children with vfork and execve carries this process's own peak RSS
	// into the child's ru_maxrss.
	f.rssPeak = peakRSSKB(f.proc.Pid())
	if f.checkpoint != "" {
		if st, err := os.Stat(f.checkpoint); err == nil {
			f.fileSize = st.Size()
		}
	}
	if err := f.proc.Signal(os.Interrupt); err != nil {
		return err
	}
	<-f.readDone
	var err error
	f.res, err = f.proc.Wait(30 * time.Second)
	for _, d := range [][]time.Duration{f.delays, f.received, f.inFeed} {
		slices.Sort(d)
	}
	return err
}

// report writes the feed's figures.
func (f *feedUnderTest) report(w io.Writer, want int, o options) {
	var duplicates int
	for _, n := range f.seen {
		if n > 1 {
			duplicates += n - 1
		}
	}
	fmt.Fprintf(w, "  command\tkubectl-idx %s\n", strings.Join(f.args, " "))
	fmt.Fprintf(w, "  changes printed\t%d of %d; %d missing, %d repeated, %d unreadable lines\n",
		len(f.seen), want, want-len(f.seen), duplicates, f.badLines.Load())
	for _, row := range []struct {
		label string
		d     []time.Duration
	}{
		{"  write → printed line", f.delays},
		{"    write → informer handler", f.received},
		{"    handler → printed line (the feed)", f.inFeed},
	} {
		if len(row.d) > 0 {
			fmt.Fprintf(w, "%s\t%s\n", row.label, percentiles(row.d))
		}
	}
	rssMax := max(slices.Max(f.rssSamples), f.rssEnd)
	fmt.Fprintf(w, "  CPU\t%.2f s user+system over the run; %.1f MiB written (wchar: stdout and any file)\n", f.cpu.Seconds(), float64(f.wchar)/(1<<20))
	fmt.Fprintf(w, "  RSS\tstart %s  end %s  max %s (sampled every second)\n", mib(f.rssStart), mib(f.rssEnd), mib(rssMax))
	fmt.Fprintf(w, "  exit\tcode %d after SIGINT; peak RSS over its life before SIGINT %s (VmHWM)\n", f.res.ExitCode, mib(f.rssPeak))
	fmt.Fprintf(w, "  RSS flatness\t%s\n", flatness(f.series, o.settle))
	if s := f.res.Stderr; s != "" {
		fmt.Fprintf(w, "  stderr\t%q\n", s)
	}
}

func percentiles(d []time.Duration) string {
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s", pct(d, 50), pct(d, 90), pct(d, 99), pct(d, 99.9), d[len(d)-1].Round(100*time.Microsecond))
}

// cpuTime returns the user and system CPU time process pid has used, from /proc; 0 if
// unreadable.
func cpuTime(pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The fields after the command, which is in parentheses and may hold spaces.
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	// USER_HZ is 100 on every Linux this runs on.
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// wchar returns the bytes process pid has written, files, pipes and sockets alike, from
// /proc; 0 if unreadable.
func wchar(pid int) int64 {
	n, _ := testenv.ProcField("/proc/"+strconv.Itoa(pid)+"/io", "wchar:")
	return n
}

// peakRSSKB returns VmHWM, the peak RSS of process pid, from /proc; 0 if unreadable.
func peakRSSKB(pid int) int64 {
	kb, _ := testenv.ProcField("/proc/"+strconv.Itoa(pid)+"/status", "VmHWM:")
	return kb
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
