package warm

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// maxSocketPath is the longest socket path bind(2) takes with room for the
// terminating NUL: sun_path is 108 bytes on Linux.
const maxSocketPath = 107

// peerCred returns the uid and pid of the process at the other end of a
// connected unix socket, as the kernel recorded them at connect(2) (or at
// listen(2), for the client's view of a server): SO_PEERCRED.
func peerCred(c syscall.Conn) (uid, pid int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		cred, gerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, 0, err
	}
	if gerr != nil {
		return 0, 0, gerr
	}
	return int(cred.Uid), int(cred.Pid), nil
}

// notTraceable makes the process not dumpable (PR_SET_DUMPABLE 0): no core
// file whatever the limits, and no ptrace(2) or /proc/PID/mem, environ or
// fd by another process of the same user (only by one with CAP_SYS_PTRACE,
// root's); /proc/PID's files then belong to root. What the server holds,
// objects and its user's credentials, stays in its memory.
func notTraceable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
