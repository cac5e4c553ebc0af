//go:build linux || darwin

package warm

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// supported says this GOOS has unix sockets with peer credentials.
const supported = true

// fileOwner returns the uid that owns the file fi describes.
func fileOwner(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// umaskMu serializes withUmask: the umask belongs to the process, not to a
// goroutine.
var umaskMu sync.Mutex

// withUmask runs f with the process umask set to mask, then restores it. Files
// other goroutines create meanwhile get at most the permissions of mask: never
// wider, at worst narrower. A server calls it before it starts anything else.
func withUmask(mask int, f func() error) error {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	old := unix.Umask(mask)
	defer unix.Umask(old)
	return f()
}

// tryLock takes an exclusive flock on f without waiting; false means another
// open file holds it. The lock goes with the open file: closing it releases
// it, and a started server does not inherit it (Go opens files close-on-exec).
func tryLock(f *os.File) (bool, error) {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// detach makes cmd start in a session of its own: no controlling terminal, so
// closing the terminal or ^C in it does not reach the server.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// openNoFollow opens or creates path for a lock, mode 0600, refusing to
// follow a symbolic link in its place.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
}

// openExistingNoFollow opens the lock file at path, if there is one, refusing
// to follow a symbolic link in its place.
func openExistingNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|unix.O_NOFOLLOW, 0)
}

// noCoreDump sets the process's core file size limit to zero: a crashing
// server must not write its memory, objects and credentials, to disk.
// systemd-coredump and apport honour the limit too.
func noCoreDump() error {
	return unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 0, Max: 0})
}

// sendFile sends one byte carrying f's descriptor over c.
func sendFile(c *net.UnixConn, f *os.File) error {
	_, _, err := c.WriteMsgUnix([]byte{0}, syscall.UnixRights(int(f.Fd())), nil)
	return err
}

// receiveFile reads the one byte sendFile sends and returns the descriptor
// it carries as a file. Anything else (no descriptor, several, a truncated
// message) is an error, and every descriptor received is closed.
func receiveFile(c *net.UnixConn) (*os.File, error) {
	b := make([]byte, 1)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, flags, _, err := c.ReadMsgUnix(b, oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	msgs, perr := syscall.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		rights, err := syscall.ParseUnixRights(&m)
		if err != nil {
			perr = err
			continue
		}
		fds = append(fds, rights...)
	}
	if n != 1 || perr != nil || len(fds) != 1 || flags&syscall.MSG_CTRUNC != 0 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, errors.New("the client's stdout did not come as one descriptor")
	}
	syscall.CloseOnExec(fds[0])
	return os.NewFile(uintptr(fds[0]), "the client's stdout"), nil
}
