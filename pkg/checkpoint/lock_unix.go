//go:build unix

package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// lock opens the checkpoint at path (creating it 0600) and takes its
// exclusive lock without waiting. The file at path may have been replaced
// by the holder's rewrite between the open and the lock: the lock is then on
// a file no longer there, and lock opens the path again.
func lock(path string) (*os.File, error) {
	for range 100 {
		fd, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening checkpoint %s: %w", path, err)
		}
		if err := lockFile(fd); err != nil {
			fd.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("checkpoint %s is held by another feed%s: two feeds cannot share a checkpoint", path, holder(path))
			}
			return nil, fmt.Errorf("locking checkpoint %s: %w", path, err)
		}
		locked, err1 := fd.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(locked, now) {
			return fd, nil
		}
		fd.Close()
	}
	return nil, fmt.Errorf("locking checkpoint %s: another process keeps replacing it", path)
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

// holder names the process that wrote the checkpoint's snapshot, as
// " (pid N)", or "".
func holder(path string) string {
	data, err := os.ReadFile(path)
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

// syncDir fsyncs directory dir, so that a rename in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
