package served

import (
	"sync/atomic"
	"testing"
	"time"
)

// countingTrimmer returns a trimmer that waits quietFor and counts its
// trims, freeing whatever it holds beyond the live heap and minSlack.
func countingTrimmer(quietFor time.Duration, minSlack uint64) (*trimmer, *atomic.Int32) {
	var freed atomic.Int32
	return &trimmer{quietFor: quietFor, minSlack: minSlack, free: func() { freed.Add(1) }}, &freed
}

// TestTrimmerFreesOnceQuiet: memory is handed back once the last command has
// ended and no other has started for quietFor, never while one runs.
func TestTrimmerFreesOnceQuiet(t *testing.T) {
	tr, freed := countingTrimmer(20*time.Millisecond, 0)
	tr.start()
	tr.start()
	tr.done()
	time.Sleep(60 * time.Millisecond)
	if n := freed.Load(); n != 0 {
		t.Fatalf("%d trims while a command runs, want none", n)
	}
	tr.done()
	// A command that starts within quietFor puts it off.
	time.Sleep(5 * time.Millisecond)
	tr.start()
	time.Sleep(60 * time.Millisecond)
	if n := freed.Load(); n != 0 {
		t.Fatalf("%d trims though a command started within the quiet time, want none", n)
	}
	tr.done()
	deadline := time.Now().Add(5 * time.Second)
	for freed.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no trim once quiet")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(60 * time.Millisecond)
	if n := freed.Load(); n != 1 {
		t.Errorf("%d trims after one quiet stretch, want 1", n)
	}
}

// TestTrimmerLeavesSlack: a process that holds no more than its live heap and
// the slack is not collected for nothing.
func TestTrimmerLeavesSlack(t *testing.T) {
	tr, freed := countingTrimmer(time.Millisecond, 1<<50)
	tr.start()
	tr.done()
	time.Sleep(50 * time.Millisecond)
	if n := freed.Load(); n != 0 {
		t.Errorf("%d trims within the slack, want none", n)
	}
}
