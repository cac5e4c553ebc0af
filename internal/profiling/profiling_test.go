package profiling

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUnknownProfile: an unknown --profile is kubectl's error from Start,
// and Stop then writes nothing: no panic, no file.
func TestUnknownProfile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "profile.pprof")
	p := &Profile{name: "bogus", output: out}
	if err := p.Start(); err == nil || err.Error() != "unknown profile 'bogus'" {
		t.Fatalf("Start: %v, want unknown profile 'bogus'", err)
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("Stop left %s behind (%v)", out, err)
	}
}

// TestHeapProfile: a named profile is written by Stop.
func TestHeapProfile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "profile.pprof")
	p := &Profile{name: "heap", output: out}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("no heap profile written: %v", err)
	}
}
