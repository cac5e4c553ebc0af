//go:build unix

package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"
)

// lock opens the checkpoint at path, creating it (0600) if there is none,
// and takes its exclusive lock without waiting; created says it made the
// file. Only a regular file of this user's is opened, never through a
// symbolic link: the path is looked at (lstat), opened with O_NOFOLLOW (and
// O_NONBLOCK, lest a named pipe put there meanwhile block the open), and
// what was opened is checked again (fstat) and must be what was looked at;
// a new file is created with O_EXCL. The file at path may also have been
// replaced by the holder's rewrite between the open and the lock: the lock
// is then on a file no longer there, and lock opens the path again.
func (h host) lock(path string) (*os.File, bool, error) {
	for range 100 {
		seen, err := os.Lstat(path)
		exists := err == nil
		if exists {
			if err := h.usable(path, seen); err != nil {
				return nil, false, err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, false, fmt.Errorf("opening checkpoint %s: %w", path, err)
		}
		h.afterLstat(path)
		flags := os.O_RDWR | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
		if !exists {
			flags |= os.O_CREATE | os.O_EXCL
		}
		fd, err := os.OpenFile(path, flags, 0o600)
		if err != nil {
			if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
				// Created or removed since it was looked at: look again.
				continue
			}
			if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
				// A link put there since (O_NOFOLLOW fails with ELOOP on
				// Linux, with other errors elsewhere).
				return nil, false, h.usable(path, st)
			}
			return nil, false, fmt.Errorf("opening checkpoint %s: %w", path, err)
		}
		opened, err := fd.Stat()
		if err == nil {
			err = h.usable(path, opened)
		}
		if err != nil {
			fd.Close()
			return nil, false, err
		}
		if exists && !os.SameFile(seen, opened) {
			// Replaced since it was looked at (a rewrite renamed over it).
			fd.Close()
			continue
		}
		if err := lockFile(fd); err != nil {
			defer fd.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, false, fmt.Errorf("checkpoint %s is held by another feed%s: two feeds cannot share a checkpoint", path, holder(fd))
			}
			return nil, false, fmt.Errorf("locking checkpoint %s: %w", path, err)
		}
		if now, err := os.Lstat(path); err == nil && os.SameFile(opened, now) {
			return fd, !exists, nil
		}
		fd.Close()
	}
	return nil, false, fmt.Errorf("locking checkpoint %s: another process keeps replacing it", path)
}

// openRead opens the checkpoint at path for reading, the same checks as lock
// made (a regular file of this user's, never through a symbolic link), but
// neither created nor locked.
func (h host) openRead(path string) (*os.File, error) {
	readable := func(fi fs.FileInfo) error {
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("checkpoint %s is a symbolic link: refusing to read through it", path)
		}
		return h.usable(path, fi)
	}
	seen, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint %s: %w", path, err)
	}
	if err := readable(seen); err != nil {
		return nil, err
	}
	fd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, readable(st)
		}
		return nil, fmt.Errorf("opening checkpoint %s: %w", path, err)
	}
	opened, err := fd.Stat()
	if err == nil {
		err = readable(opened)
	}
	if err != nil {
		fd.Close()
		return nil, err
	}
	return fd, nil
}

// usable returns why the file fi, at path, is not one a checkpoint may be:
// anything but a regular file of this user's. A symbolic link would have
// the feed write where its target is (any file the user may write), a named
// pipe or a device would be read and written as one, and another user's
// file holds what that user wrote.
func (h host) usable(path string, fi fs.FileInfo) error {
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		return fmt.Errorf("checkpoint %s is a symbolic link: refusing to write through it", path)
	case !m.IsRegular():
		return fmt.Errorf("checkpoint %s is %s, not a regular file: refusing to use it", path, fileKind(m))
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int64(st.Uid) != int64(h.euid()) {
		return fmt.Errorf("checkpoint %s belongs to uid %d, not to this user (uid %d): refusing to use it", path, st.Uid, h.euid())
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// lockFile takes f's exclusive lock without waiting.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// holder names the process that wrote the snapshot of the checkpoint open
// as fd, as " (pid N)", or "".
func holder(fd *os.File) string {
	data, err := io.ReadAll(io.NewSectionReader(fd, 0, 1<<62))
	if err != nil {
		return ""
	}
	_, rest, _ := strings.Cut(string(data), "\n")
	line, _, _ := strings.Cut(rest, "\n")
	_, payload, _ := strings.Cut(line, " ")
	var snap struct {
		Writer *writerInfo `json:"writer"`
	}
	if json.Unmarshal([]byte(payload), &snap) != nil || snap.Writer == nil || snap.Writer.PID == 0 {
		return ""
	}
	return fmt.Sprintf(" (pid %d)", snap.Writer.PID)
}

// ownFile reports whether fi, a file in a checkpoint's directory, is one a
// feed may remove: a regular file of this user's.
func (h host) ownFile(fi fs.FileInfo) bool {
	return h.usable("", fi) == nil
}

// syncDir fsyncs directory dir, so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
