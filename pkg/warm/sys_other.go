//go:build !(linux || darwin)

package warm

import (
	"net"
	"os"
	"os/exec"
	"syscall"
)

// supported says this GOOS has no unix sockets with peer credentials that this
// package knows how to read: no cache at all. Windows has AF_UNIX sockets but
// no way to learn the uid of the process at the other end.
const supported = false

const maxSocketPath = 0

func fileOwner(os.FileInfo) (int, bool) { return 0, false }

func withUmask(int, func() error) error { return ErrUnsupported }

func tryLock(*os.File) (bool, error) { return false, ErrUnsupported }

func detach(*exec.Cmd) {}

func processAlive(int) bool { return false }

func peerCred(syscall.Conn) (uid, pid int, err error) { return 0, 0, ErrUnsupported }

func openNoFollow(string) (*os.File, error) { return nil, ErrUnsupported }

func noCoreDump() error { return ErrUnsupported }

func sendFile(*net.UnixConn, *os.File) error { return ErrUnsupported }

func receiveFile(*net.UnixConn) (*os.File, error) { return nil, ErrUnsupported }

func notTraceable() error { return ErrUnsupported }

func openExistingNoFollow(string) (*os.File, error) { return nil, ErrUnsupported }
