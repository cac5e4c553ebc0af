//go:build unix

package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-idx/kubectl-idx/pkg/feed"
)

// openWithin runs Open(path) on h and fails t if it has not returned after a few
// seconds (a FIFO opened for reading blocks until a writer comes).
func openWithin(t *testing.T, path string, h host) (*File, error) {
	t.Helper()
	type result struct {
		f   *File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := openWith(path, h)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-time.After(5 * time.Second):
		t.Fatalf("Open(%s) has not returned after 5s", path)
		return nil, nil
	}
}

// TestCheckpointRefusesOthersFiles: --checkpoint writes a regular file of
// the user's own and nothing else: a symbolic link (to a checkpoint, or to
// nothing yet), a named pipe, a directory, a device or a file of another
// user is refused with one line naming the file and what it is, and what it
// is, or points to, is left as it was.
func TestCheckpointRefusesOthersFiles(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	aFeedRan(t, target)
	targetData, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name string
		make func(path string) error
		want string
	}
	tests := []tc{
		{"a symbolic link to a checkpoint", func(p string) error { return os.Symlink(target, p) }, "is a symbolic link: refusing to write through it"},
		{"a symbolic link to nothing", func(p string) error { return os.Symlink(filepath.Join(dir, "not-yet"), p) }, "is a symbolic link: refusing to write through it"},
		{"a named pipe", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "is a named pipe, not a regular file: refusing to use it"},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o700) }, "is a directory, not a regular file: refusing to use it"},
	}
	if os.Geteuid() == 0 {
		// A null device of the test's own: mknod needs root.
		tests = append(tests, tc{"a device", func(p string) error { return syscall.Mknod(p, syscall.S_IFCHR|0o600, 1<<8|3) }, "is a device, not a regular file: refusing to use it"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.cp")
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			before, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := openWithin(t, path, processHost())
			want := "checkpoint " + path + " " + tc.want
			if err == nil || err.Error() != want {
				t.Errorf("Open: %v\nwant %s", err, want)
			}
			if f != nil {
				// The old behavior: what the feed then does with it.
				if _, err := f.Resume([]Stream{podsStream, otherStream}, nil); err == nil {
					f.Close()
				}
			}
			after, err := os.Lstat(path)
			if err != nil || after.Mode() != before.Mode() || !os.SameFile(before, after) {
				t.Errorf("%s was replaced: %v, %v", path, after.Mode(), err)
			}
			if data, _ := os.ReadFile(target); string(data) != string(targetData) {
				t.Errorf("the link's target was written:\n%s", data)
			}
			if _, err := os.Lstat(filepath.Join(dir, "not-yet")); !os.IsNotExist(err) {
				t.Errorf("the link's target was created: %v", err)
			}
		})
	}
}

// TestCheckpointRefusesOtherUsersFile: a checkpoint that belongs to another
// user (one who could have written what it holds) is refused, and left as it
// was; root too refuses it.
func TestCheckpointRefusesOtherUsersFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cp")
	aFeedRan(t, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	owner, me := 65534, os.Geteuid()
	h := processHost()
	if me == 0 {
		if err := os.Chown(path, owner, owner); err != nil {
			t.Fatal(err)
		}
	} else {
		// Without root the file cannot change hands: this process takes
		// another uid for its own.
		owner = me
		me = owner + 1
		h.euid = func() int { return me }
	}
	_, err = openWithin(t, path, h)
	want := fmt.Sprintf("checkpoint %s belongs to uid %d, not to this user (uid %d): refusing to use it", path, owner, me)
	if err == nil || err.Error() != want {
		t.Errorf("Open: %v\nwant %s", err, want)
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Errorf("the other user's checkpoint was rewritten:\n%s", after)
	}
}

// TestCheckpointReplacedWhileOpened: a file replaced between the look at the
// path and its open (by a symbolic link, a named pipe) is refused all the
// same: what was opened is checked, not what was looked at.
func TestCheckpointReplacedWhileOpened(t *testing.T) {
	target := filepath.Join(t.TempDir(), "target")
	aFeedRan(t, target)
	targetData, _ := os.ReadFile(target)
	for name, replace := range map[string]func(string) error{
		"by a symbolic link": func(p string) error { return os.Symlink(target, p) },
		"by a named pipe":    func(p string) error { return syscall.Mkfifo(p, 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.cp")
			aFeedRan(t, path)
			h := processHost()
			replaced := false
			h.afterLstat = func(p string) {
				if replaced {
					return
				}
				replaced = true
				if err := os.Remove(p); err != nil {
					t.Error(err)
				}
				if err := replace(p); err != nil {
					t.Error(err)
				}
			}
			f, err := openWithin(t, path, h)
			if err == nil {
				f.Close()
				t.Fatal("Open: no error")
			}
			if err.Error() != "checkpoint "+path+" is a symbolic link: refusing to write through it" && err.Error() != "checkpoint "+path+" is a named pipe, not a regular file: refusing to use it" {
				t.Errorf("Open: %v", err)
			}
			if data, _ := os.ReadFile(target); string(data) != string(targetData) {
				t.Errorf("the link's target was written:\n%s", data)
			}
		})
	}
}

// TestCheckpointRewriteNotRedirected: what is put at the path while a feed
// holds its checkpoint is neither written through nor removed. The rewrite is
// a temporary file made anew (O_EXCL) beside it, renamed over the path: a
// symbolic link put there is replaced, its target untouched. A checkpoint
// created and never resumed is removed when closed only while it is still at
// the path: a link put there instead is left.
func TestCheckpointRewriteNotRedirected(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("someone else's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "x.cp")
	f := open(t, path)
	record(t, resume(t, f, podsStream)[0], &feed.Delta{Positions: map[int]string{0: "1", 1: "1"}})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(target); string(data) != "someone else's\n" {
		t.Errorf("the link's target was written:\n%s", data)
	}
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("the checkpoint after the rewrite: %v, %v", st, err)
	}
	g := open(t, path)
	if got := resume(t, g, podsStream)[0].Restored(); got == nil || got.Positions[0] != "1" {
		t.Errorf("restored %+v", got)
	}
	g.Close()

	created := filepath.Join(dir, "created.cp")
	h := open(t, created)
	if err := os.Remove(created); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, created); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(created); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link put where a checkpoint was created: %v, %v", st, err)
	}
}

// TestCheckpointStaleTempsOnlyOwnFiles: only regular files are taken for
// temporary files a killed feed left.
func TestCheckpointStaleTempsOnlyOwnFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cp")
	aFeedRan(t, path)
	notATemp := filepath.Join(dir, ".cp.tmp-dir")
	if err := os.Mkdir(notATemp, 0o700); err != nil {
		t.Fatal(err)
	}
	f := open(t, path)
	defer f.Close()
	if _, err := os.Stat(notATemp); err != nil {
		t.Errorf("a directory named as a temporary file was removed: %v", err)
	}
}
