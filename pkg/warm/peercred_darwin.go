package warm

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxSocketPath is the longest socket path bind(2) takes with room for the
// terminating NUL: sun_path is 104 bytes on macOS.
const maxSocketPath = 103

// xucredVersion is XUCRED_VERSION of <sys/ucred.h>, which x/sys/unix does not
// define.
const xucredVersion = 0

// peerCred returns the uid and pid of the process at the other end of a
// connected unix socket, as the kernel recorded them at connect(2) (or at
// listen(2)): LOCAL_PEERCRED, what getpeereid(3) reads, and LOCAL_PEERPID.
func peerCred(c syscall.Conn) (uid, pid int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Xucred
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		if cred, gerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED); gerr != nil {
			return
		}
		// The pid only serves to wait for a stopped server to exit.
		pid, _ = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return 0, 0, err
	}
	if gerr != nil {
		return 0, 0, gerr
	}
	if cred.Version != xucredVersion {
		return 0, 0, fmt.Errorf("peer credentials of version %d, not %d", cred.Version, xucredVersion)
	}
	return int(cred.Uid), pid, nil
}

// notTraceable refuses debuggers (PT_DENY_ATTACH): what the server holds,
// objects and its user's credentials, stays in its memory.
func notTraceable() error {
	return unix.PtraceDenyAttach()
}
