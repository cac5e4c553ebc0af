package heapfloor

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercentFor(t *testing.T) {
	for _, tc := range []struct {
		floor, live uint64
		want        int
	}{
		// Before anything is live, Go's minimum heap sets the goal.
		{1 << 30, 0, 25500},
		{1 << 30, 1 << 20, 25500},
		{1 << 30, 256 << 20, 300},
		{1 << 30, 512 << 20, 100},
		{1 << 30, 1 << 30, 0},
		{64 << 20, 100 << 20, 0},
	} {
		if got := percentFor(tc.floor, tc.live); got != tc.want {
			t.Errorf("percentFor(%d, %d) = %d, want %d", tc.floor, tc.live, got, tc.want)
		}
		// Its goal is the floor, the larger of Go's two.
		if p := uint64(percentFor(tc.floor, tc.live)); p > 0 {
			live := max(tc.live, minHeap)
			if goal := max(live+live*p/100, minHeap*p/100); goal > tc.floor || goal < tc.floor-live {
				t.Errorf("percentFor(%d, %d): goal %d", tc.floor, tc.live, goal)
			}
		}
	}
}

func TestFloorFor(t *testing.T) {
	none := func(string) string { return "" }
	if got := floorFor(Default, none, 0); got != Default {
		t.Errorf("memory unknown: %d, want %d", got, Default)
	}
	if got := floorFor(Default, none, 2<<30); got != 512<<20 {
		t.Errorf("2 GiB of memory: %d, want a quarter of it", got)
	}
	if got := floorFor(Default, none, 64<<30); got != Default {
		t.Errorf("64 GiB of memory: %d, want %d", got, Default)
	}
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		env := func(k string) string {
			if k == name {
				return "200"
			}
			return ""
		}
		if got := floorFor(Default, env, 64<<30); got != 0 {
			t.Errorf("%s set: %d, want 0 (the user's choice)", name, got)
		}
	}
}

func TestMemoryAvailable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	meminfo := write("meminfo", "MemTotal:       24576000 kB\nMemFree:         1000 kB\n")
	noLimit := write("v2-max", "max\n")
	v1NoLimit := write("v1-none", "9223372036854771712\n")
	limit := write("v2-limit", "2147483648\n")
	missing := filepath.Join(dir, "absent")
	for _, tc := range []struct {
		name  string
		files memoryFiles
		want  uint64
	}{
		{"the machine's", memoryFiles{[]string{noLimit, v1NoLimit}, meminfo}, 24576000 << 10},
		{"a cgroup's limit under it", memoryFiles{[]string{limit}, meminfo}, 2 << 30},
		{"nothing to read", memoryFiles{[]string{missing}, missing}, 0},
		{"a meminfo without MemTotal", memoryFiles{nil, write("odd", "MemFree: 3 kB\n")}, 0},
	} {
		if got := memoryAvailable(tc.files); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestRaiseThenGoBack raises a floor of 64 MiB, sees the collector's goal
// there, then keeps more than half of it live and sees Go's own pace back.
func TestRaiseThenGoBack(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(defaultGOGC) })
	runtime.GC()
	const floor = 64 << 20
	if got := raise(floor); got != floor {
		t.Fatalf("raise = %d, want %d", got, floor)
	}
	if p := gogc(); p <= defaultGOGC {
		t.Fatalf("GOGC %d after raise, want more than %d", p, defaultGOGC)
	}
	if g := goal(); g < floor*3/4 || g > floor {
		t.Errorf("heap goal %d MiB, want about %d", g>>20, floor>>20)
	}
	// A cycle with little live: the goal stays at the floor.
	runtime.GC()
	waitFor(t, "the goal set again after a cycle", func() bool { g := goal(); return g >= floor*3/4 && g <= floor })
	if p := gogc(); p <= defaultGOGC {
		t.Errorf("GOGC %d after a cycle with little live, want the floor's", p)
	}
	// More than half the floor live: Go's own pace.
	kept := make([][]byte, 40)
	for i := range kept {
		kept[i] = make([]byte, 1<<20)
	}
	runtime.GC()
	waitFor(t, "GOGC back to 100", func() bool { return gogc() == defaultGOGC })
	runtime.KeepAlive(kept)
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s: GOGC %d, goal %d MiB", what, gogc(), goal()>>20)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func gogc() int {
	return int(read("/gc/gogc:percent"))
}

func goal() uint64 {
	return read("/gc/heap/goal:bytes")
}

func read(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
