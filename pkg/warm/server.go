package warm

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Handler answers one run request as a direct run of req.Args would, writing
// what it would print to stdout and stderr, and returns the exit code. ctx ends
// when the client goes away (the connection closes) or the server shuts down;
// a watch runs until then. stdout and stderr are safe for use by one goroutine
// each; they are never terminals (req says what the client's are) and their
// writes fail once the client is gone. A Handler must not keep them after it
// returns. It answers itself, from the warm informers, whatever --cache or
// KUBECTL_IDX_CACHE say: a server never connects to a server.
type Handler func(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int

// Decline is the exit code a Handler returns, before it writes anything, for a
// request it will not answer: one whose flags resolve to another identity than
// the server's, for instance. The client then reports ErrUnavailable and the
// command runs directly. Returned after a write, it counts as exit code 1.
const Decline = -1

const (
	// DefaultIdleTimeout is how long a server with no run in progress waits
	// for one before it exits.
	DefaultIdleTimeout = 10 * time.Minute
	// handshakeTimeout bounds how long the server waits for a client's hello
	// and then its request: a connection that sends neither is dropped.
	handshakeTimeout = 5 * time.Second
	// shutdownGrace is how long a shutting-down server lets cancelled runs
	// write their last frames before it closes their connections.
	shutdownGrace = 2 * time.Second
	// defaultCheckEvery is how often a server checks that its directory is
	// still private and its socket still the one it created.
	defaultCheckEvery = 5 * time.Second
)

// Options configure a Server.
type Options struct {
	// Identity is the identity the server serves: a client that says another
	// is refused.
	Identity Identity
	// Version is the binary's version: a client of another version may ask
	// for status and stop only, which is how a newer binary replaces it.
	Version string
	// Dir holds the socket; RuntimeDir when empty. The starter and the server
	// must agree on it: the server inherits the starter's environment.
	Dir string
	// IdleTimeout is how long the server waits with no run in progress before
	// it exits; DefaultIdleTimeout when zero. A run in progress (a watch) keeps
	// it alive however long it lasts; status requests do not count.
	IdleTimeout time.Duration
	// Handler answers run requests.
	Handler Handler
	// Status reports what the warm informers hold, for `cache status`; its
	// result is encoded as JSON into StatusReport.Cache. Optional. It must
	// report counts and times, never object data.
	Status func() any

	// checkEvery overrides defaultCheckEvery, for tests.
	checkEvery time.Duration
}

// Server is a cache server listening on its identity's socket. Create it with
// NewServer, run it with Serve.
type Server struct {
	opts     Options
	paths    paths
	uid      int
	ln       *net.UnixListener
	sockInfo fs.FileInfo
	started  time.Time

	// ctx is the parent of every run's context; Shutdown cancels it.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	serving   atomic.Bool
	closeOnce sync.Once
	wg        sync.WaitGroup

	mu      sync.Mutex
	conns   map[*net.UnixConn]struct{}
	closing bool
	reason  string
	// The idle timer runs while no run does; status and stop requests do not
	// count as use.
	idle    *time.Timer
	runs    int
	lastEnd time.Time
	lastRun time.Time

	running           atomic.Int64
	served            atomic.Uint64
	warmed            atomic.Uint64
	hellos            atomic.Uint64
	refusedPeers      atomic.Uint64
	refusedHandshakes atomic.Uint64
}

// NewServer checks the directory, removes a stale socket of the identity (one
// nothing answers on) and listens on a new one, created with mode 0600. It
// fails when a server already answers there. It acts on the whole process, which
// is the server's: core dumps are turned off for good, the process is made
// untraceable (PR_SET_DUMPABLE 0 on Linux, PT_DENY_ATTACH on macOS), and the
// umask is 0177 while the socket is created, so call it before starting
// anything that creates files. Serve should follow at once: a client that connects
// meanwhile waits for its handshake, and gives up after its DialTimeout, so
// informers are started by the Handler or beside Serve, not before it.
func NewServer(opts Options) (*Server, error) {
	if !supported {
		return nil, ErrUnsupported
	}
	switch {
	case opts.Identity.IsZero():
		return nil, errors.New("cache server without an identity")
	case opts.Version == "":
		return nil, errors.New("cache server without a version")
	case opts.Handler == nil:
		return nil, errors.New("cache server without a handler")
	case opts.IdleTimeout < 0:
		return nil, fmt.Errorf("cache idle timeout %s is negative", opts.IdleTimeout)
	}
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.checkEvery == 0 {
		opts.checkEvery = defaultCheckEvery
	}
	if err := noCoreDump(); err != nil {
		return nil, fmt.Errorf("disabling core dumps of the cache server: %w", err)
	}
	if err := notTraceable(); err != nil {
		return nil, fmt.Errorf("making the cache server untraceable: %w", err)
	}
	if opts.Dir == "" {
		dir, err := RuntimeDir()
		if err != nil {
			return nil, err
		}
		opts.Dir = dir
	}
	if err := prepareDir(opts.Dir); err != nil {
		return nil, err
	}
	p, err := pathsFor(opts.Dir, opts.Identity)
	if err != nil {
		return nil, err
	}
	ln, fi, err := listen(p.socket)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	now := time.Now()
	return &Server{
		opts:     opts,
		paths:    p,
		uid:      os.Getuid(),
		ln:       ln,
		sockInfo: fi,
		started:  now,
		ctx:      ctx,
		cancel:   cancel,
		done:     make(chan struct{}),
		conns:    map[*net.UnixConn]struct{}{},
		lastEnd:  now,
	}, nil
}

// listen creates the socket at path, a path in a verified directory. A file
// already there is removed only if it is a socket nothing answers on: one a
// dead server left.
func listen(path string) (*net.UnixListener, fs.FileInfo, error) {
	switch fi, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, fmt.Errorf("checking the cache socket: %w", err)
	case fi.Mode().Type() != fs.ModeSocket:
		return nil, nil, fmt.Errorf("%s exists and is not a socket: not touching it", path)
	default:
		c, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			c.Close()
			return nil, nil, fmt.Errorf("a cache server already answers on %s", path)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, nil, fmt.Errorf("checking the cache socket: %w", err)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("removing the stale cache socket: %w", err)
		}
	}
	var ln *net.UnixListener
	// bind(2) creates the socket file with mode 0777 less the umask: 0177
	// makes it 0600 from the start, with no moment when it is wider.
	err := withUmask(0o177, func() error {
		var err error
		ln, err = net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("listening on the cache socket: %w", err)
	}
	// Close removes the socket itself, and only if it is still this one: a
	// stopped server must not remove its successor's.
	ln.SetUnlinkOnClose(false)
	fi, err := os.Lstat(path)
	if err == nil {
		uid, _ := fileOwner(fi)
		switch {
		case fi.Mode().Type() != fs.ModeSocket:
			err = fmt.Errorf("%s is not the socket just created", path)
		case uid != os.Getuid():
			err = fmt.Errorf("cache socket %s is owned by uid %d", path, uid)
		case fi.Mode().Perm() != 0o600:
			err = fmt.Errorf("cache socket %s has mode %04o, not 0600", path, fi.Mode().Perm())
		}
	}
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	return ln, fi, nil
}

// Socket returns the path the server listens on.
func (s *Server) Socket() string { return s.paths.socket }

// Done is closed when the server starts shutting down.
func (s *Server) Done() <-chan struct{} { return s.done }

// Serve accepts connections until the server shuts down: after IdleTimeout
// with no run, on a stop request, on Shutdown, when ctx ends, or when
// its directory or socket is tampered with. It then cancels the runs in
// progress, gives them a moment to finish and returns. Every connection is
// checked before a byte is read from it: a peer of another uid is closed.
func (s *Server) Serve(ctx context.Context) error {
	if !s.serving.CompareAndSwap(false, true) {
		return errors.New("cache server is already serving")
	}
	s.mu.Lock()
	if !s.closing {
		s.idle = time.AfterFunc(s.opts.IdleTimeout, s.idleFired)
	}
	s.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { s.Shutdown("its context ended") })
	defer stop()
	go s.watchFiles()

	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			select {
			case <-s.done:
			default:
				if !errors.Is(err, net.ErrClosed) {
					// Out of file descriptors or the like: pause instead of spinning.
					select {
					case <-time.After(50 * time.Millisecond):
					case <-s.done:
					}
					continue
				}
				s.Shutdown("its listener closed")
			}
			break
		}
		if !s.admit(c) {
			continue
		}
		s.wg.Add(1)
		go s.handle(c)
	}
	<-s.done
	s.drain()
	removeLock(s.paths.lock)
	return nil
}

// admit checks the uid of the process that connected and tracks the
// connection, for drain to close. A peer of another uid is closed before
// anything is read from it.
func (s *Server) admit(c *net.UnixConn) bool {
	uid, _, err := peerCred(c)
	if err != nil || uid != s.uid {
		s.refusedPeers.Add(1)
		c.Close()
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// forget closes a connection.
func (s *Server) forget(c *net.UnixConn) {
	c.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, c)
}

// runStarted stops the idle timer while a run is in progress.
func (s *Server) runStarted() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs++
	s.lastRun = time.Now()
	s.idle.Stop()
}

// runEnded restarts the idle timer when the last run in progress ends.
func (s *Server) runEnded() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs--
	s.lastEnd = time.Now()
	if s.runs == 0 && !s.closing {
		s.idle.Reset(s.opts.IdleTimeout)
	}
}

func (s *Server) idleFired() {
	s.mu.Lock()
	// A run may have come and gone since the timer fired.
	idle := s.runs == 0 && time.Since(s.lastEnd) >= s.opts.IdleTimeout
	s.mu.Unlock()
	if idle {
		s.Shutdown(fmt.Sprintf("idle for %s", s.opts.IdleTimeout))
	}
}

// Shutdown stops the server: it stops listening, removes its socket and
// cancels the runs in progress, whose clients are told reason. The warm side
// calls it when the credentials stop working (the API server answers 401),
// so that the next command starts a server with fresh ones or fails directly
// in kubectl's words. It does not wait; Serve returns once runs have ended.
func (s *Server) Shutdown(reason string) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	s.reason = reason
	if s.idle != nil {
		s.idle.Stop()
	}
	s.mu.Unlock()
	s.closeListener()
	s.cancel()
	close(s.done)
}

// stopReason returns why the server is shutting down, or "" while it is not.
func (s *Server) stopReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// closeListener stops listening and removes the socket if the path still
// names the one this server created.
func (s *Server) closeListener() {
	s.closeOnce.Do(func() {
		// Removed first: once the listener is closed, Serve may return and
		// the process exit.
		if fi, err := os.Lstat(s.paths.socket); err == nil && os.SameFile(fi, s.sockInfo) {
			os.Remove(s.paths.socket)
		}
		s.ln.Close()
	})
}

// drain waits for the connections' goroutines: a grace period for cancelled
// runs to end, then their connections are closed, then a last grace period
// for handlers that still ignore both. A handler stuck beyond that is left to
// the process's exit.
func (s *Server) drain() {
	finished := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
		return
	case <-time.After(shutdownGrace):
	}
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	select {
	case <-finished:
	case <-time.After(shutdownGrace):
	}
}

// watchFiles shuts the server down when its directory stops being private or
// its socket is removed or replaced: nobody can reach it then, or somebody
// else might.
func (s *Server) watchFiles() {
	t := time.NewTicker(s.opts.checkEvery)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if err := verifyDir(s.paths.dir); err != nil {
			s.Shutdown(err.Error())
			return
		}
		if fi, err := os.Lstat(s.paths.socket); err != nil || !os.SameFile(fi, s.sockInfo) {
			s.Shutdown(fmt.Sprintf("cache socket %s was removed or replaced", s.paths.socket))
			return
		}
	}
}

// handle serves one connection: the handshake, then one request.
func (s *Server) handle(c *net.UnixConn) {
	defer s.wg.Done()
	defer s.forget(c)
	r := bufio.NewReader(c)
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))

	var h hello
	if err := readJSON(r, frameHello, &h); err != nil {
		// A dial that only checks whether the socket answers sends nothing:
		// not a refusal.
		if !errors.Is(err, io.EOF) {
			s.refusedHandshakes.Add(1)
		}
		return
	}
	s.hellos.Add(1)
	w := welcome{hello: hello{Protocol: Protocol, Version: s.opts.Version, Identity: s.opts.Identity}}
	switch {
	case subtle.ConstantTimeCompare(h.Identity[:], s.opts.Identity[:]) != 1:
		w.Refused, w.Message = refusedIdentity, "this cache server serves another identity"
	case h.Protocol != Protocol:
		w.Refused, w.Message = refusedProtocol, fmt.Sprintf("this cache server speaks protocol %d, not %d", Protocol, h.Protocol)
	case h.Version != s.opts.Version:
		w.Refused, w.Message = refusedVersion, fmt.Sprintf("this cache server is version %s, not %s", s.opts.Version, h.Version)
	}
	if w.Refused != "" {
		s.refusedHandshakes.Add(1)
	}
	if err := writeJSON(c, frameWelcome, w); err != nil || w.Refused == refusedIdentity {
		return
	}

	var req request
	if err := readJSON(r, frameRequest, &req); err != nil {
		return
	}
	switch req.Op {
	case opStatus:
		rep, err := s.report()
		if err != nil {
			s.fail(c, err.Error())
			return
		}
		_ = writeJSON(c, frameStatus, rep)
	case opStop:
		// The socket is gone before the client hears so: it may start a
		// successor at once.
		s.Shutdown("a client asked it to stop")
		_ = writeFrame(c, frameStopped, nil)
	case opRun, opWarm:
		if w.Refused != "" {
			s.fail(c, w.Message+"; it answers status and stop only")
			return
		}
		if req.Run == nil {
			s.fail(c, "run request without a command")
			return
		}
		if err := req.Run.validate(); err != nil {
			s.fail(c, err.Error())
			return
		}
		if req.Op == opWarm {
			s.warm(c, req.Run)
			return
		}
		s.run(c, r, req.Run)
	default:
		s.fail(c, fmt.Sprintf("unknown request %q", req.Op))
	}
}

// fail refuses a request, saying why.
func (s *Server) fail(c net.Conn, why string) {
	_ = writeJSON(c, frameFailure, failure{Message: "the cache server refused the request: " + why})
}

// errClientGone ends a run whose client closed its connection.
var errClientGone = errors.New("the client went away")

// run calls the handler with writers that send frames (stdout straight into
// the client's own, when it passed it), then sends its exit code.
func (s *Server) run(c *net.UnixConn, r *bufio.Reader, req *RunRequest) {
	var out *os.File
	if req.StdoutFile {
		// The client sends its stdout once asked, and nothing before: a
		// byte already read past the request would be a broken protocol.
		if r.Buffered() > 0 {
			s.fail(c, "data after the request")
			return
		}
		if err := writeFrame(c, frameFile, nil); err != nil {
			return
		}
		f, err := receiveFile(c)
		if err != nil {
			_ = writeJSON(c, frameFailure, failure{Message: "the cache server refused the request: " + err.Error(), Declined: true})
			return
		}
		out = f
		defer out.Close()
	}
	ctx, cancel := context.WithCancelCause(s.ctx)
	defer cancel(nil)
	// A run may last (a watch): no deadline from here on.
	_ = c.SetDeadline(time.Time{})
	go func() {
		// The client sends nothing after its request, so this read returns
		// only when it goes away (or breaks the protocol): either ends the run.
		_, _ = r.ReadByte()
		cancel(errClientGone)
	}()

	s.runStarted()
	defer s.runEnded()
	s.served.Add(1)
	s.running.Add(1)
	defer s.running.Add(-1)

	var mu sync.Mutex
	var wrote atomic.Bool
	var stdout io.Writer = &frameWriter{c: c, mu: &mu, t: frameStdout, wrote: &wrote}
	if out != nil {
		stdout = &fileWriter{c: c, mu: &mu, f: out, wrote: &wrote}
	}
	stderr := &frameWriter{c: c, mu: &mu, t: frameStderr, wrote: &wrote}
	code, panicked := s.call(ctx, req, stdout, stderr)

	mu.Lock()
	defer mu.Unlock()
	switch {
	case panicked:
		// Nothing of the panic is reported: its value may hold object data.
		_ = writeJSON(c, frameFailure, failure{Message: "the cache server failed while answering and has stopped"})
		s.Shutdown("a request failed with a panic")
	case code == Decline && !wrote.Load():
		_ = writeJSON(c, frameFailure, failure{Message: "the cache server declined the request", Declined: true})
	default:
		if code == Decline {
			code = 1
		}
		e := exitStatus{Code: code}
		if s.ctx.Err() != nil {
			e.Stopped = s.stopReason()
		}
		_ = writeJSON(c, frameExit, e)
	}
}

// warm takes a command a client answered itself and runs it here with its
// output discarded, so that the next one finds its informers warm and, for
// -o json, its objects' encodings kept. The client does not wait: it is told
// the command is taken, and the connection is closed. The run goes to its
// end, or until the server shuts down; its client going away does not end
// it. It keeps the server from idling meanwhile; status counts it among the
// warmed, not the running.
func (s *Server) warm(c *net.UnixConn, req *RunRequest) {
	// Counted and holding off the idle timer before the client hears it is
	// taken: a status it asks for next counts it.
	s.runStarted()
	defer s.runEnded()
	s.warmed.Add(1)
	if err := writeFrame(c, frameWarming, nil); err != nil {
		s.warmed.Add(^uint64(0))
		return
	}
	c.Close()
	if _, panicked := s.call(s.ctx, req, io.Discard, io.Discard); panicked {
		s.Shutdown("a request failed with a panic")
	}
}

// call runs the handler, turning a panic into a failed run instead of a dead
// server that no client hears from.
func (s *Server) call(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) (code int, panicked bool) {
	defer func() {
		if recover() != nil {
			code, panicked = 1, true
		}
	}()
	return s.opts.Handler(ctx, req, stdout, stderr), false
}

// report builds the answer to a status request.
func (s *Server) report() (*StatusReport, error) {
	s.mu.Lock()
	lastRun := s.lastRun
	s.mu.Unlock()
	rep := &StatusReport{
		Version:           s.opts.Version,
		Protocol:          Protocol,
		Identity:          s.opts.Identity,
		PID:               os.Getpid(),
		Socket:            s.paths.socket,
		Started:           s.started,
		IdleTimeout:       s.opts.IdleTimeout.String(),
		Running:           s.running.Load(),
		Served:            s.served.Load(),
		Warmed:            s.warmed.Load(),
		RefusedPeers:      s.refusedPeers.Load(),
		RefusedHandshakes: s.refusedHandshakes.Load(),
	}
	if !lastRun.IsZero() {
		rep.LastRequest = &lastRun
	}
	if s.opts.Status != nil {
		b, err := json.Marshal(s.opts.Status())
		if err != nil {
			return nil, fmt.Errorf("encoding the cache status: %w", err)
		}
		rep.Cache = b
	}
	return rep, nil
}

// fileWriter writes a run's stdout straight into the client's own. Before
// its first byte it sends an empty stdout frame: a client that sees the
// connection end without one knows nothing was written, and answers
// directly, as it does when the answer comes in frames.
type fileWriter struct {
	c     net.Conn
	mu    *sync.Mutex
	f     *os.File
	wrote *atomic.Bool
}

func (w *fileWriter) Write(p []byte) (int, error) {
	if len(p) > 0 && !w.wrote.Load() {
		w.mu.Lock()
		err := writeFrame(w.c, frameStdout, nil)
		if err == nil {
			w.wrote.Store(true)
		}
		w.mu.Unlock()
		if err != nil {
			return 0, err
		}
	}
	return w.f.Write(p)
}

// frameWriter sends what a handler writes as stdout or stderr frames. The two
// writers of a run share a mutex, so frames never interleave.
type frameWriter struct {
	c     net.Conn
	mu    *sync.Mutex
	t     frameType
	wrote *atomic.Bool
}

func (w *frameWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	var h [5]byte
	for len(p) > 0 {
		k := min(len(p), dataChunk)
		// The header and the bytes go out in one writev(2), without a copy
		// of the bytes; w.mu keeps each frame whole.
		h[0] = byte(w.t)
		binary.BigEndian.PutUint32(h[1:], uint32(k))
		bufs := net.Buffers{h[:], p[:k]}
		if _, err := bufs.WriteTo(w.c); err != nil {
			return n, err
		}
		w.wrote.Store(true)
		n += k
		p = p[k:]
	}
	return n, nil
}
