// Package heapfloor lets a short-lived command that keeps most of what it
// reads until it answers grow its heap to a floor before the garbage
// collector runs, as the Go compiler does for itself (its starting heap).
//
// Go collects whenever the heap has doubled since the last cycle (GOGC=100),
// and each cycle marks everything still live. A command such as `why -A`
// reads some twenty types whole and keeps them, so its heap grows in steps
// and every step is marked again: at 20,000 realistic pods `why -A` ran
// twelve cycles over a live heap growing to 200 MB, which took a fifth of its
// CPU. With a floor, the heap grows to the floor before the first cycle, and
// a command that allocates less than the floor runs none.
//
// The floor is never more than a quarter of the memory the process may use
// (the machine's, or its cgroup's limit where one is set), and it is a floor,
// not a limit: once the live heap reaches half of it, the collector goes back
// to Go's own pace, so a heap larger than the floor costs what it always did.
// A GOGC or GOMEMLIMIT in the environment is the user's choice, and leaves
// the collector as it is.
package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// Default is the floor of the commands that raise one: 1 GiB, which at
// 20,000 realistic pods is more than `why -A` allocates in all (about 580 MB).
const Default = 1 << 30

// minHeap is the Go runtime's heap goal at GOGC=100 before anything is
// live: the goal is at least minHeap*GOGC/100.
const minHeap = 4 << 20

// defaultGOGC is what the collector goes back to.
const defaultGOGC = 100

// memoryFiles are where Linux says how much memory the process may use:
// its cgroup's limit (v2, v1) and the machine's (meminfo's MemTotal).
type memoryFiles struct {
	cgroups []string
	meminfo string
}

// linuxMemoryFiles are Linux's.
var linuxMemoryFiles = memoryFiles{
	cgroups: []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
	meminfo: "/proc/meminfo",
}

// Raise sets the heap the collector lets the process reach before its next
// cycle to floor bytes, bounded by a quarter of the memory it may use, and
// keeps it there after each cycle while the live heap stays under half of
// it. It returns the floor set, 0 when it set none: GOGC or GOMEMLIMIT is
// set, the floor would be no higher than Go's own, or the process raised
// one already (the first call decides).
//
// It is for a process that ends after one answer: a long-lived one (a feed,
// a server) would hold up to the floor of garbage for as long as it lives.
func Raise(floor uint64) uint64 {
	set := uint64(0)
	once.Do(func() { set = raise(floorFor(floor, os.Getenv, memoryAvailable(linuxMemoryFiles))) })
	return set
}

var once sync.Once

// floorFor returns the floor to raise: floor, bounded by a quarter of avail
// (0: not known); 0 when getenv has GOGC or GOMEMLIMIT.
func floorFor(floor uint64, getenv func(string) string, avail uint64) uint64 {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return 0
	}
	if avail > 0 {
		floor = min(floor, avail/4)
	}
	return floor
}

// raise sets GOGC for a heap goal of floor, and again after every cycle
// (watchCycles); it returns floor, or 0 when that goal is no higher than
// Go's own and it set nothing.
func raise(floor uint64) uint64 {
	gogc := percentFor(floor, liveHeap())
	if gogc <= defaultGOGC {
		return 0
	}
	debug.SetGCPercent(gogc)
	watchCycles(floor)
	return floor
}

// percentFor returns the GOGC whose heap goal is floor, live bytes being
// live: the goal is the larger of live*(1+GOGC/100) and minHeap*GOGC/100.
func percentFor(floor, live uint64) int {
	if live < minHeap {
		live = minHeap
	}
	if floor <= live {
		return 0
	}
	p := (floor/live - 1) * 100
	if p > 1<<20 {
		p = 1 << 20
	}
	return int(p)
}

// watchCycles sets GOGC again after every cycle: for a goal of floor while
// the live heap is under half of it, and back to Go's own from then on.
// Runtime finalizers run after the cycle that found their object
// unreachable, each on the finalizer goroutine: one object a cycle.
func watchCycles(floor uint64) {
	sentinel := new(cycle)
	runtime.SetFinalizer(sentinel, func(*cycle) {
		live := liveHeap()
		if live >= floor/2 {
			debug.SetGCPercent(defaultGOGC)
			return
		}
		debug.SetGCPercent(max(percentFor(floor, live), defaultGOGC))
		watchCycles(floor)
	})
}

// cycle is an object a cycle finds unreachable. It holds a pointer: an
// object of less than 16 bytes without one may share a block with others
// (the tiny allocator), and its finalizer wait for all of them.
type cycle struct{ _ *int }

// liveHeap returns the bytes the last cycle found live (0 before any).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// memoryAvailable returns the memory this process may use, by files: the
// smallest of its cgroup's limit and the machine's memory; 0 where neither
// can be read (not Linux).
func memoryAvailable(files memoryFiles) uint64 {
	var avail uint64
	consider := func(n uint64) {
		if n > 0 && (avail == 0 || n < avail) {
			avail = n
		}
	}
	for _, path := range files.cgroups {
		if b, err := os.ReadFile(path); err == nil {
			// "max", or cgroup v1's page-rounded largest int64, is no limit.
			if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && n < 1<<62 {
				consider(n)
			}
		}
	}
	if b, err := os.ReadFile(files.meminfo); err == nil {
		consider(memTotal(string(b)))
	}
	return avail
}

// memTotal reads MemTotal (in kB) from /proc/meminfo's text; 0 when absent.
func memTotal(meminfo string) uint64 {
	for line := range strings.SplitSeq(meminfo, "\n") {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
