package warm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

const (
	// DefaultDialTimeout bounds connecting to a server and its handshake: a
	// server that takes longer is treated as hung.
	DefaultDialTimeout = 2 * time.Second
	// DefaultStartTimeout bounds starting a server until it answers, waiting
	// for another command that is starting one, and waiting for a stopped one
	// to exit.
	DefaultStartTimeout = 10 * time.Second
)

// Spec says which cache server a client wants and how to start it.
type Spec struct {
	// Identity is the identity to be served (NewIdentity).
	Identity Identity
	// Version is this binary's version: a server of another version is
	// stopped and replaced.
	Version string
	// Dir holds the sockets; RuntimeDir when empty.
	Dir string
	// Command is the absolute path of the binary to start as the server;
	// os.Executable when empty. It runs with Args as its arguments, in "/",
	// in a session of its own, with the part of the client's environment
	// ServerEnviron keeps, stdin a pipe and stdout and stderr the null
	// device.
	Command string
	// Args are the server's arguments (such as "cache", "serve"). They are
	// visible to every user in ps: they must hold no credential.
	Args []string
	// Payload is passed to the server on its stdin, where ReadPayload reads
	// it: the connection flags, credentials included, travel there and not in
	// Args or the environment. At most 1 MiB.
	Payload []byte
	// DialTimeout is DefaultDialTimeout when zero.
	DialTimeout time.Duration
	// StartTimeout is DefaultStartTimeout when zero.
	StartTimeout time.Duration
}

// ErrUnavailable is wrapped by every error after which a direct run is the
// right answer: no server could be reached, started or trusted, or a run
// failed before any of its output arrived. The caller prints one warning line
// and runs the command itself.
var ErrUnavailable = errors.New("the cache server is unavailable")

// ErrNotRunning is returned by Status and Stop when no server answers, and
// wrapped by Dial's error when none of its version does.
var ErrNotRunning = errors.New("no cache server is running for this identity")

// unavailableError is an error that errors.Is ErrUnavailable but reads as its
// cause alone.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

func unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return &unavailableError{err}
}

// errNothingAnswers is a dial that found no socket, or a socket nobody
// listens on: a server may be started.
var errNothingAnswers = errors.New("no cache server answers")

func (spec *Spec) complete(starting bool) error {
	if !supported {
		return ErrUnsupported
	}
	if spec.Identity.IsZero() {
		return errors.New("cache spec without an identity")
	}
	if spec.Version == "" {
		return errors.New("cache spec without a version")
	}
	if spec.DialTimeout <= 0 {
		spec.DialTimeout = DefaultDialTimeout
	}
	if spec.StartTimeout <= 0 {
		spec.StartTimeout = DefaultStartTimeout
	}
	if spec.Dir == "" {
		dir, err := RuntimeDir()
		if err != nil {
			return err
		}
		spec.Dir = dir
	}
	if starting {
		if spec.Command == "" {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("finding this binary to start the cache server: %w", err)
			}
			spec.Command = exe
		}
		if !filepath.IsAbs(spec.Command) {
			return fmt.Errorf("cache server command %q is not an absolute path", spec.Command)
		}
		if len(spec.Payload) > maxFrame {
			return fmt.Errorf("cache start payload of %d bytes exceeds the %d-byte limit", len(spec.Payload), maxFrame)
		}
	}
	return nil
}

// Conn is a connection to a cache server, handshaken. It carries one
// request.
type Conn struct {
	c       *net.UnixConn
	r       *bufio.Reader
	socket  string
	pid     int
	welcome welcome
	used    bool
	// dialTimeout is the Spec's: how long a server has to answer.
	dialTimeout time.Duration
}

// Dial returns a connection to the running server of spec.Identity, of
// spec's version, and starts nothing. When none answers (no socket, a socket
// a dead server left, or a server of another version, which Connect
// replaces) its error wraps ErrNotRunning. Every error but the context's
// wraps ErrUnavailable, as Connect's do.
func Dial(ctx context.Context, spec Spec) (*Conn, error) {
	c, err := reach(ctx, &spec, false)
	return c, clientError(ctx, err)
}

// Connect returns a connection to the server of spec.Identity, starting one
// if none answers. Two commands starting at once start one server: the
// starter holds an exclusive lock on the identity's lock file. A server of
// another version is asked to stop, waited for and replaced. Every error but
// the context's wraps ErrUnavailable: the caller runs the command directly,
// with one warning line saying why.
func Connect(ctx context.Context, spec Spec) (*Conn, error) {
	c, err := reach(ctx, &spec, true)
	return c, clientError(ctx, err)
}

// clientError is Dial's and Connect's error for err: the context's end as
// it is, since it is the caller's (an interrupted command does not go on to
// run directly), and anything else wrapped in ErrUnavailable.
func clientError(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return unavailable(err)
}

// reach dials the server of spec. When none of spec's version answers, it
// starts one if starting is set, and otherwise says ErrNotRunning.
func reach(ctx context.Context, spec *Spec, starting bool) (*Conn, error) {
	if err := spec.complete(starting); err != nil {
		return nil, err
	}
	if err := prepareDir(spec.Dir); err != nil {
		return nil, err
	}
	p, err := pathsFor(spec.Dir, spec.Identity)
	if err != nil {
		return nil, err
	}
	c, err := dial(ctx, p.socket, spec)
	switch {
	case err == nil && c.welcome.Refused == "":
		return c, nil
	case err == nil:
		c.Close() // another version: replaced by a start, under the lock
		if !starting {
			return nil, fmt.Errorf("%w: the one on %s is version %s", ErrNotRunning, p.socket, c.welcome.Version)
		}
	case !errors.Is(err, errNothingAnswers):
		return nil, err
	case !starting:
		return nil, fmt.Errorf("%w: %w", ErrNotRunning, err)
	}
	return start(ctx, p, spec)
}

// start makes sure a server of spec's version answers, under the lock: the
// first command to hold it starts the server, the others find it answering.
func start(ctx context.Context, p paths, spec *Spec) (_ *Conn, err error) {
	lock, err := lockFile(ctx, p.lock, spec.StartTimeout)
	if err != nil {
		return nil, err
	}
	defer func() {
		lock.Close()
		if err != nil {
			// No server of this identity answers to remove it when it exits.
			removeLock(p.lock)
		}
	}()

	c, err := dial(ctx, p.socket, spec)
	switch {
	case err == nil && c.welcome.Refused == "":
		return c, nil
	case err == nil:
		if err := c.stop(ctx, spec.StartTimeout); err != nil {
			return nil, fmt.Errorf("replacing cache server version %s: %w", c.welcome.Version, err)
		}
	case !errors.Is(err, errNothingAnswers):
		return nil, err
	}

	exited, err := spawn(spec)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(spec.StartTimeout)
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		c, err := dial(ctx, p.socket, spec)
		switch {
		case err == nil && c.welcome.Refused == "":
			return c, nil
		case err == nil:
			c.Close()
			return nil, fmt.Errorf("the cache server started from %s is version %s, not %s", spec.Command, c.welcome.Version, spec.Version)
		case !errors.Is(err, errNothingAnswers):
			return nil, err
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("the cache server exited before it answered: %v", err)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the cache server did not answer on %s within %s of its start", p.socket, spec.StartTimeout)
		}
	}
}

// spawn starts the server process detached, hands it the payload on its
// stdin and returns a channel that receives its exit.
func spawn(spec *Spec) (<-chan error, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.Command, spec.Args...)
	cmd.Dir = "/"
	cmd.Env = ServerEnviron(os.Environ())
	cmd.Stdin = r
	// Stdout and Stderr stay nil: the null device. The server writes no log.
	detach(cmd)
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("starting the cache server: %w", err)
	}
	r.Close()
	exited := make(chan error, 1)
	// Waiting reaps the server if it exits while this command still runs;
	// otherwise it outlives this command and init reaps it.
	go func() { exited <- cmd.Wait() }()
	go func() {
		// A payload larger than the pipe's buffer is written as the server
		// reads it; a server that exits first makes this fail, and the start
		// fails with its exit.
		_ = writeFrame(w, framePayload, spec.Payload)
		w.Close()
	}()
	return exited, nil
}

// lockFile opens the lock file, refusing anything but a regular file of the
// user's with no permission for others, and takes an exclusive lock on it,
// waiting at most wait for another command to release it.
func lockFile(ctx context.Context, path string, wait time.Duration) (*os.File, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, fmt.Errorf("opening the cache lock file: %w", err)
	}
	fi, err := f.Stat()
	if err == nil {
		uid, _ := fileOwner(fi)
		switch {
		case !fi.Mode().IsRegular():
			err = fmt.Errorf("cache lock file %s is not a regular file", path)
		case uid != os.Getuid():
			err = fmt.Errorf("cache lock file %s is owned by uid %d", path, uid)
		case fi.Mode().Perm()&0o077 != 0:
			err = fmt.Errorf("cache lock file %s has mode %04o, which lets other users in", path, fi.Mode().Perm())
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	deadline := time.Now().Add(wait)
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if ok && !sameFile(f, path) {
			// A server that exited removed the file while this one waited
			// for its lock (removeLock): lock the one at the path now.
			f.Close()
			return lockFile(ctx, path, time.Until(deadline))
		}
		if ok {
			return f, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("another command has been starting the cache server for %s (%s is locked)", wait, path)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sameFile reports whether path still names the open file f.
func sameFile(f *os.File, path string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	li, err := os.Lstat(path)
	return err == nil && os.SameFile(fi, li)
}

// removeLock removes the lock file at path if no command holds it (none is
// starting a server): a server does so as it exits, so that lock files do
// not pile up, one per identity ever used. A command that opened it before
// and locks it after finds it gone and locks a new one (lockFile).
func removeLock(path string) {
	f, err := openExistingNoFollow(path)
	if err != nil {
		return
	}
	defer f.Close()
	if ok, err := tryLock(f); err == nil && ok && sameFile(f, path) {
		os.Remove(path)
	}
}

// dial connects to the socket, checks that the process listening on it runs as
// this user, and says hello. A welcome refused for protocol or version is
// returned as a connection that can ask for status and stop only; one refused
// for identity is an error.
func dial(ctx context.Context, socket string, spec *Spec) (*Conn, error) {
	d := net.Dialer{Timeout: spec.DialTimeout}
	nc, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w on %s", errNothingAnswers, socket)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("connecting to the cache server at %s: %w", socket, err)
	}
	uc := nc.(*net.UnixConn)
	uid, pid, err := peerCred(uc)
	if err != nil {
		uc.Close()
		return nil, fmt.Errorf("reading the credentials of the process listening on %s: %w", socket, err)
	}
	if uid != os.Getuid() {
		uc.Close()
		return nil, fmt.Errorf("the process listening on %s runs as uid %d, not as uid %d: not talking to it", socket, uid, os.Getuid())
	}
	c := &Conn{c: uc, r: bufio.NewReader(uc), socket: socket, pid: pid, dialTimeout: spec.DialTimeout}
	if err := c.handshake(ctx, spec); err != nil {
		uc.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) handshake(ctx context.Context, spec *Spec) error {
	stop := c.bound(ctx, spec.DialTimeout)
	defer stop()
	err := writeJSON(c.c, frameHello, hello{Protocol: Protocol, Version: spec.Version, Identity: spec.Identity})
	if err == nil {
		err = readJSON(c.r, frameWelcome, &c.welcome)
	}
	if err != nil {
		return c.ioError(ctx, err, spec.DialTimeout)
	}
	switch {
	case c.welcome.Refused == refusedIdentity:
		return fmt.Errorf("the cache server at %s refused the handshake: %s", c.socket, c.welcome.Message)
	case c.welcome.Identity != spec.Identity:
		return fmt.Errorf("the cache server at %s serves another identity", c.socket)
	}
	return nil
}

// bound sets a deadline on the connection, brought forward to now when ctx
// ends; the returned function clears it.
func (c *Conn) bound(ctx context.Context, d time.Duration) func() {
	_ = c.c.SetDeadline(time.Now().Add(d))
	stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(time.Unix(1, 0)) })
	return func() {
		stop()
		_ = c.c.SetDeadline(time.Time{})
	}
}

// ioError words a failed exchange within a bound.
func (c *Conn) ioError(ctx context.Context, err error, d time.Duration) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("the cache server at %s did not answer within %s", c.socket, d)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the cache server at %s closed the connection", c.socket)
	}
	return fmt.Errorf("talking to the cache server at %s: %w", c.socket, err)
}

// Close closes the connection; a run in progress on the server is cancelled.
func (c *Conn) Close() error { return c.c.Close() }

// ServerVersion returns the version the server said it is.
func (c *Conn) ServerVersion() string { return c.welcome.Version }

func (c *Conn) use() error {
	if c.used {
		return errors.New("a cache connection carries one request")
	}
	c.used = true
	return nil
}

// Run sends req and copies the server's answer to stdout and stderr as it
// arrives, until its exit code, which it returns. Cancelling ctx closes the
// connection, which cancels the run on the server. An error before any output
// arrived wraps ErrUnavailable (run the command directly); after, it does not:
// part of the answer is printed, and the error is the command's. A run the
// server cut short (Server.Shutdown, stop) returns its exit code and an error
// saying why. Run closes the connection.
func (c *Conn) Run(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) (int, error) {
	defer c.c.Close()
	if err := c.use(); err != nil {
		return -1, err
	}
	if c.welcome.Refused != "" {
		return -1, unavailable(errors.New(c.welcome.Message))
	}
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	stop := context.AfterFunc(ctx, func() { c.c.Close() })
	defer stop()
	// A pipe or a file is passed to the server, which writes the answer
	// into it itself; a terminal, or any other writer, gets it in frames.
	file, _ := stdout.(*os.File)
	if _, term := terminal(stdout); file != nil && !term && !req.StdoutTerminal {
		r := *req
		r.StdoutFile = true
		req = &r
	} else {
		file = nil
	}
	if err := writeJSON(c.c, frameRequest, request{Op: opRun, Run: req}); err != nil {
		return -1, c.runError(ctx, false, err)
	}
	started := false
	buf := make([]byte, dataChunk)
	for {
		t, p, err := readFrameInto(c.r, buf)
		if err != nil {
			return -1, c.runError(ctx, started, err)
		}
		switch t {
		case frameFile:
			if file == nil {
				return -1, c.runError(ctx, started, fmt.Errorf("%w: %s frame unasked", errBadFrame, t))
			}
			if err := sendFile(c.c, file); err != nil {
				return -1, c.runError(ctx, started, err)
			}
			// The server sends an empty stdout frame before it writes
			// into the file: until then, nothing was written.
			file = nil
		case frameStdout, frameStderr:
			started = true
			w := stdout
			if t == frameStderr {
				w = stderr
			}
			if _, err := w.Write(p); err != nil {
				return -1, err
			}
		case frameExit:
			var e exitStatus
			if err := json.Unmarshal(p, &e); err != nil {
				return -1, c.runError(ctx, started, fmt.Errorf("%w: exit frame: %v", errBadFrame, err))
			}
			if e.Stopped != "" {
				return e.Code, c.runError(ctx, started, fmt.Errorf("the cache server stopped during the answer: %s", e.Stopped))
			}
			return e.Code, nil
		case frameFailure:
			var f failure
			if err := json.Unmarshal(p, &f); err != nil {
				return -1, c.runError(ctx, started, fmt.Errorf("%w: failure frame: %v", errBadFrame, err))
			}
			// Declined: nothing was written, not even into a stdout passed.
			return -1, c.runError(ctx, started && !f.Declined, &refusedError{msg: f.Message})
		default:
			return -1, c.runError(ctx, started, fmt.Errorf("%w: %s frame in an answer", errBadFrame, t))
		}
	}
}

// Warm hands the server a command this client answered itself, to be run
// there with its output discarded so that its informers are warm for the
// next command, and returns once the server has taken it: the server does
// not tie the run to this connection, which Warm closes.
func (c *Conn) Warm(ctx context.Context, req *RunRequest) error {
	defer c.c.Close()
	if err := c.use(); err != nil {
		return err
	}
	if c.welcome.Refused != "" {
		return errors.New(c.welcome.Message)
	}
	// The server answers at once: a hung one is given its dial timeout.
	defer c.bound(ctx, c.dialTimeout)()
	if err := writeJSON(c.c, frameRequest, request{Op: opWarm, Run: req}); err != nil {
		return c.runError(ctx, false, err)
	}
	t, p, err := readFrame(c.r)
	if err != nil {
		return c.runError(ctx, false, err)
	}
	switch t {
	case frameWarming:
		return nil
	case frameFailure:
		var f failure
		if err := json.Unmarshal(p, &f); err != nil {
			return fmt.Errorf("%w: failure frame: %v", errBadFrame, err)
		}
		return &refusedError{msg: f.Message}
	}
	return fmt.Errorf("%w: %s frame in answer to warm", errBadFrame, t)
}

// runError words an error of Run: ErrUnavailable when nothing was printed.
func (c *Conn) runError(ctx context.Context, started bool, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var op *net.OpError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		err = fmt.Errorf("the cache server at %s closed the connection before the answer ended", c.socket)
	case errors.As(err, &op):
		err = fmt.Errorf("talking to the cache server at %s: %w", c.socket, err)
	}
	if !started {
		return unavailable(err)
	}
	return err
}

// stop asks the server to stop and waits until its process has exited.
func (c *Conn) stop(ctx context.Context, wait time.Duration) error {
	defer c.c.Close()
	if err := c.use(); err != nil {
		return err
	}
	done := c.bound(ctx, wait)
	err := writeJSON(c.c, frameRequest, request{Op: opStop})
	if err == nil {
		var t frameType
		if t, _, err = readFrame(c.r); err == nil && t != frameStopped {
			err = fmt.Errorf("%w: %s frame in answer to stop", errBadFrame, t)
		}
	}
	done()
	if err != nil {
		return c.ioError(ctx, err, wait)
	}
	if c.pid <= 0 {
		// The kernel gave no pid (another pid namespace): the socket is gone
		// already, which is what a successor needs.
		return nil
	}
	deadline := time.Now().Add(wait)
	for processAlive(c.pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the cache server (pid %d) did not exit within %s of stopping", c.pid, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// existing dials the server of spec without starting one.
func existing(ctx context.Context, spec *Spec) (*Conn, error) {
	if err := spec.complete(false); err != nil {
		return nil, err
	}
	if err := verifyDir(spec.Dir); err != nil {
		var de *DirError
		if errors.As(err, &de) && de.Problem == "does not exist" {
			return nil, ErrNotRunning
		}
		return nil, err
	}
	p, err := pathsFor(spec.Dir, spec.Identity)
	if err != nil {
		return nil, err
	}
	c, err := dial(ctx, p.socket, spec)
	if errors.Is(err, errNothingAnswers) {
		return nil, ErrNotRunning
	}
	return c, err
}

// Status asks the server of spec.Identity, of whatever version, for its
// status. It starts nothing: ErrNotRunning when no server answers.
func Status(ctx context.Context, spec Spec) (*StatusReport, error) {
	c, err := existing(ctx, &spec)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.use(); err != nil {
		return nil, err
	}
	stop := c.bound(ctx, spec.DialTimeout)
	defer stop()
	var rep StatusReport
	err = writeJSON(c.c, frameRequest, request{Op: opStatus})
	if err == nil {
		err = readJSON(c.r, frameStatus, &rep)
	}
	if err != nil {
		var refused *refusedError
		if errors.As(err, &refused) || errors.Is(err, errBadFrame) {
			return nil, err
		}
		return nil, c.ioError(ctx, err, spec.DialTimeout)
	}
	return &rep, nil
}

// Stop stops the server of spec.Identity, of whatever version, and waits for
// its process to exit. It starts nothing: ErrNotRunning when no server answers.
func Stop(ctx context.Context, spec Spec) error {
	c, err := existing(ctx, &spec)
	if err != nil {
		return err
	}
	return c.stop(ctx, spec.StartTimeout)
}

// NewRunRequest describes a run of args from this process: the allowed
// environment variables (EnvAllowed), the working directory, and whether
// stdout and stderr are terminals and how wide stdout is.
func NewRunRequest(args []string, stdout, stderr io.Writer) (*RunRequest, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("finding the working directory: %w", err)
	}
	req := &RunRequest{Args: args, Env: map[string]string{}, Dir: dir}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && EnvAllowed(k) {
			req.Env[k] = v
		}
	}
	if fd, ok := terminal(stdout); ok {
		req.StdoutTerminal = true
		if w, _, err := term.GetSize(fd); err == nil && w > 0 && w <= maxWidth {
			req.Width = w
		}
	}
	_, req.StderrTerminal = terminal(stderr)
	return req, nil
}

// terminal returns the file descriptor of w if it is a terminal.
func terminal(w io.Writer) (int, bool) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}
