//go:build linux || darwin

package warm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the uid and gid the tests use for another user.
const nobody = 65534

// shortTempDir returns a new directory directly under /tmp: t.TempDir's paths
// are long enough to push a socket path over its limit.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "w")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestPrepareDirCreates(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(shortTempDir(t), "cache", "run")
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Lstat(d)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o700 {
			t.Errorf("%s has mode %04o, want 0700", d, perm)
		}
	}
	// Used again, it is checked again and left as it is.
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyDirRefuses(t *testing.T) {
	uid := os.Getuid()
	for _, tt := range []struct {
		name   string
		root   bool // needs root to set up
		setup  func(t *testing.T, dir string)
		verify func(string) error
		want   string
	}{
		{
			name:  "0755",
			setup: func(t *testing.T, dir string) { mkdir(t, dir, 0o755) },
			want:  "cache directory %s has mode 0755, which lets other users in: it must be 0700",
		},
		{
			name:  "group readable",
			setup: func(t *testing.T, dir string) { mkdir(t, dir, 0o740) },
			want:  "cache directory %s has mode 0740, which lets other users in: it must be 0700",
		},
		{
			name: "symlink to a good directory",
			setup: func(t *testing.T, dir string) {
				target := dir + ".real"
				mkdir(t, target, 0o700)
				if err := os.Symlink(target, dir); err != nil {
					t.Fatal(err)
				}
			},
			want: "cache directory %s is a symbolic link, not a directory",
		},
		{
			name: "a file",
			setup: func(t *testing.T, dir string) {
				if err := os.WriteFile(dir, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			},
			want: "cache directory %s is not a directory",
		},
		{
			name: "another owner",
			root: true,
			setup: func(t *testing.T, dir string) {
				mkdir(t, dir, 0o700)
				if err := os.Chown(dir, nobody, nobody); err != nil {
					t.Fatal(err)
				}
			},
			want: fmt.Sprintf("cache directory %%s is owned by uid %d, not by uid %d who runs this", nobody, uid),
		},
		{
			name:   "missing, checked without creating",
			setup:  func(t *testing.T, dir string) {},
			verify: verifyDir,
			want:   "cache directory %s does not exist",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && uid != 0 {
				t.Skip("changing a directory's owner needs root; this test runs as uid", uid)
			}
			dir := filepath.Join(shortTempDir(t), "run")
			tt.setup(t, dir)
			verify := tt.verify
			if verify == nil {
				verify = prepareDir
			}
			err := verify(dir)
			want := fmt.Sprintf(tt.want, dir)
			var de *DirError
			if err == nil || err.Error() != want || !errors.As(err, &de) {
				t.Fatalf("got %v, want %q", err, want)
			}
		})
	}
	if err := prepareDir("run/kubectl-idx"); err == nil || err.Error() != "cache directory run/kubectl-idx is not an absolute path" {
		t.Errorf("a relative directory: %v", err)
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeDir(t *testing.T) {
	base := shortTempDir(t)
	cache := filepath.Join(base, "cache")
	t.Setenv("XDG_CACHE_HOME", cache)
	if os.Getenv("HOME") == "" {
		t.Setenv("HOME", base) // os.UserCacheDir on macOS
	}
	fallback, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	fallback = filepath.Join(fallback, "kubectl-idx", "run")
	mine := filepath.Join(base, "xdg")
	mkdir(t, mine, 0o700)
	theirs := filepath.Join(base, "theirs")
	mkdir(t, theirs, 0o700)
	if os.Getuid() == 0 {
		if err := os.Chown(theirs, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, xdg, want string
		root            bool // needs root to set up
	}{
		{name: "XDG_RUNTIME_DIR of the user", xdg: mine, want: filepath.Join(mine, "kubectl-idx")},
		{name: "XDG_RUNTIME_DIR of another user", xdg: theirs, want: fallback, root: true},
		{name: "unset", want: fallback},
		{name: "relative", xdg: "xdg", want: fallback},
		{name: "missing", xdg: filepath.Join(base, "missing"), want: fallback},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.root && os.Getuid() != 0 {
				t.Skip("changing a directory's owner needs root; this test runs as uid", os.Getuid())
			}
			t.Setenv("XDG_RUNTIME_DIR", tt.xdg)
			got, err := RuntimeDir()
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestSocketPathTooLong(t *testing.T) {
	var id Identity
	id[0] = 1
	dir := "/" + strings.Repeat("d", maxSocketPath)
	_, err := pathsFor(dir, id)
	if err == nil || !strings.Contains(err.Error(), "longer than the") || !strings.Contains(err.Error(), "set XDG_RUNTIME_DIR to a shorter directory") {
		t.Fatalf("got %v", err)
	}
	// The longest directory that fits: the prefix, ".sock" and a slash.
	dir = "/" + strings.Repeat("d", maxSocketPath-len("/")-len("/")-32-len(".sock"))
	if p, err := pathsFor(dir, id); err != nil || len(p.socket) != maxSocketPath {
		t.Fatalf("got %d bytes, %v", len(p.socket), err)
	}
}
