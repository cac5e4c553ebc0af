package served

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// trimmer hands the operating system back the memory the cache process's
// commands left behind, once it has none to answer. What a warm informer
// keeps is long-lived, but a list leaves behind several times as much: the
// pages it decoded, and what the transforms dropped of them. Go's runtime
// returns free memory slowly and keeps the heap free to grow to twice what
// is live (GOGC=100) before it collects again, so after the lists of the
// bench's six questions at 20,000 realistic pods the process held 1.3 GB
// for about 0.5 GB of live objects. That is not what the process needs, but
// it is what a laptop sees it hold, until the kernel takes it back.
//
// It is a complement to keeping less, not a way to keep more: a collection
// and the return of free memory (debug.FreeOSMemory) once no command has run
// for quietFor, only when the process holds more than slack beyond its live
// heap. Questions themselves run at GOGC's pace: a lower GOGC or a memory
// limit would make every warm answer pay for collections of the whole cache.
type trimmer struct {
	running atomic.Int64
	// quietFor is how long the process must have answered nothing before a
	// trim; slack is the share of the live heap it may hold beyond it,
	// besides minSlack.
	quietFor time.Duration
	slack    float64
	minSlack uint64
	// free is debug.FreeOSMemory; tests count its calls.
	free func()

	mu    sync.Mutex
	timer *time.Timer
}

// Defaults of a cache server's trimmer: a second of quiet, and a fifth of
// the live heap, at least 32 MiB, beyond it.
const (
	trimQuietFor = time.Second
	trimSlack    = 0.2
	trimMinSlack = 32 << 20
)

func newTrimmer() *trimmer {
	return &trimmer{quietFor: trimQuietFor, slack: trimSlack, minSlack: trimMinSlack, free: debug.FreeOSMemory}
}

// start counts a command in.
func (t *trimmer) start() {
	t.running.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}

// done counts a command out; the last one out schedules a trim.
func (t *trimmer) done() {
	if t.running.Add(-1) > 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
	}
	t.timer = time.AfterFunc(t.quietFor, t.trim)
}

// trim frees what the process holds beyond its live heap and slack, if no
// command has started meanwhile.
func (t *trimmer) trim() {
	if t.running.Load() > 0 {
		return
	}
	held, live := heldAndLive()
	if held <= live+max(uint64(float64(live)*t.slack), t.minSlack) {
		return
	}
	t.free()
}

// heldAndLive reads the memory the Go runtime holds from the operating
// system, less what it has returned already, and the heap the last
// collection found live.
func heldAndLive() (held, live uint64) {
	samples := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(samples)
	total, released := samples[0].Value.Uint64(), samples[1].Value.Uint64()
	return total - released, samples[2].Value.Uint64()
}
