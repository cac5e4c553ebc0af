package pipe

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestReaderGone: the channel closes once the pipe's reader is closed, with
// nothing written; anything but a pipe or a socket has none.
func TestReaderGone(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ReaderGone(f) != nil || ReaderGone(&strings.Builder{}) != nil {
		t.Error("a regular file, or a writer that is no file, has a channel")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	gone := ReaderGone(w)
	if gone == nil {
		t.Skip("this system does not report a pipe's departed reader")
	}
	select {
	case <-gone:
		t.Fatal("closed while the reader is there")
	case <-time.After(50 * time.Millisecond):
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("not closed after the reader went away")
	}
}
