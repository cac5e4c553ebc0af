package warm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// ErrUnsupported is returned by everything that would start, reach or serve a
// cache on a system without unix domain sockets with peer credentials.
var ErrUnsupported = errors.New("the warm cache needs unix domain sockets with peer credentials, which " + runtime.GOOS + " does not offer")

// RuntimeDir returns the directory of the sockets and lock files:
// $XDG_RUNTIME_DIR/kubectl-idx when XDG_RUNTIME_DIR names a directory the user
// owns (on Linux a tmpfs only the user can enter, emptied at logout), else
// kubectl-idx/run in os.UserCacheDir. It neither creates nor checks the
// directory: every use does, through Connect, Status, Stop and NewServer.
func RuntimeDir() (string, error) {
	if !supported {
		return "", ErrUnsupported
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		if fi, err := os.Stat(x); err == nil && fi.IsDir() {
			if uid, ok := fileOwner(fi); ok && uid == os.Getuid() {
				return filepath.Join(x, "kubectl-idx"), nil
			}
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding a directory for the cache socket: %w", err)
	}
	return filepath.Join(cache, "kubectl-idx", "run"), nil
}

// DirError says why a directory may not hold cache sockets.
type DirError struct {
	Path    string
	Problem string
}

func (e *DirError) Error() string {
	return fmt.Sprintf("cache directory %s %s", e.Path, e.Problem)
}

// prepareDir creates dir (and its parents) with mode 0700 if it does not
// exist, then checks it as verifyDir does. It never changes the mode or owner
// of a directory that exists.
func prepareDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return &DirError{Path: dir, Problem: "is not an absolute path"}
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return fmt.Errorf("creating the cache directory: %w", err)
		}
		if err := os.Mkdir(dir, 0o700); err == nil {
			// Made by us just now: the umask could have narrowed 0700, never
			// widened it; make it exactly 0700 so the user can use it.
			if err := os.Chmod(dir, 0o700); err != nil {
				return fmt.Errorf("creating the cache directory: %w", err)
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("creating the cache directory: %w", err)
		}
	}
	return verifyDir(dir)
}

// verifyDir checks, without following a symbolic link, that dir is a
// directory owned by the user with no permission for group or others: nobody
// else can enter it, so nobody else can reach a socket or a lock file in it.
func verifyDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &DirError{Path: dir, Problem: "does not exist"}
	case err != nil:
		return fmt.Errorf("checking the cache directory: %w", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return &DirError{Path: dir, Problem: "is a symbolic link, not a directory"}
	case !fi.IsDir():
		return &DirError{Path: dir, Problem: "is not a directory"}
	}
	uid, ok := fileOwner(fi)
	if !ok {
		return &DirError{Path: dir, Problem: "has no owner this system reports"}
	}
	if uid != os.Getuid() {
		return &DirError{Path: dir, Problem: fmt.Sprintf("is owned by uid %d, not by uid %d who runs this", uid, os.Getuid())}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return &DirError{Path: dir, Problem: fmt.Sprintf("has mode %04o, which lets other users in: it must be 0700", perm)}
	}
	return nil
}

// paths are the files of one identity in a verified directory.
type paths struct {
	dir    string
	socket string
	lock   string
}

// pathsFor names the socket and the lock file of id in dir. A socket path
// longer than bind(2) takes is an error naming it, not a truncated path.
func pathsFor(dir string, id Identity) (paths, error) {
	p := paths{
		dir:    dir,
		socket: filepath.Join(dir, id.prefix()+".sock"),
		lock:   filepath.Join(dir, id.prefix()+".lock"),
	}
	if len(p.socket) > maxSocketPath {
		return p, fmt.Errorf("cache socket path %s is %d bytes, longer than the %d a unix socket takes: set XDG_RUNTIME_DIR to a shorter directory of yours", p.socket, len(p.socket), maxSocketPath)
	}
	return p, nil
}
