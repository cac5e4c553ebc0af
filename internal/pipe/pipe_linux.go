//go:build linux

package pipe

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// pollFd is struct pollfd of poll(2).
type pollFd struct {
	fd      int32
	events  int16
	revents int16
}

const (
	pollErr  = 0x8
	pollHup  = 0x10
	pollNval = 0x20
)

// ReaderGone returns a channel closed when the reader of out, a pipe or a
// socket, goes away, or nil for anything else. Linux reports a pipe whose
// reader has exited as an error condition on the write end, which poll(2)
// returns even when no event is asked for; a feed with nothing to print learns
// at once that `| head` is done, instead of at its next write.
func ReaderGone(out io.Writer) <-chan struct{} {
	f, ok := out.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	fd := -1
	if err := rc.Control(func(u uintptr) { fd = int(u) }); err != nil || fd < 0 {
		return nil
	}
	closed := make(chan struct{})
	go func() {
		fds := []pollFd{{fd: int32(fd)}}
		for {
			// ppoll exists on every Linux architecture; poll does not on arm64.
			_, _, errno := syscall.Syscall6(syscall.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), 1, 0, 0, 0, 0)
			if errno == syscall.EINTR {
				continue
			}
			if errno != 0 {
				return
			}
			if fds[0].revents&(pollErr|pollHup|pollNval) != 0 {
				close(closed)
				return
			}
		}
	}()
	return closed
}
