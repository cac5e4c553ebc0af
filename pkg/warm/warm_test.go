//go:build linux || darwin

package warm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperArg makes the test binary act as a helper process instead of running
// tests, the way os/exec's tests re-execute themselves: a fake cache server
// started by Connect, or a process of another user.
const helperArg = "warm-test-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(helper(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

// serverPayload is what the fake server reads on its stdin: what a real
// `cache serve` would rebuild its connection flags from.
type serverPayload struct {
	Dir      string   `json:"dir"`
	Identity Identity `json:"identity"`
	Version  string   `json:"version"`
	// PIDFile collects the pid of every fake server started, one a line: the
	// test's own bookkeeping, in the test's directory.
	PIDFile string `json:"pidFile"`
	// Secret stands for a credential: it must not show in ps.
	Secret string `json:"secret"`
}

func helper(role string, args []string) int {
	switch role {
	case "server":
		// Started by Connect: detached, the payload on stdin.
		b, err := ReadPayload(os.Stdin)
		if err != nil {
			return 3
		}
		var p serverPayload
		if err := json.Unmarshal(b, &p); err != nil {
			return 3
		}
		f, err := os.OpenFile(p.PIDFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return 3
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
		srv, err := NewServer(Options{
			Identity: p.Identity, Version: p.Version, Dir: p.Dir, Handler: testHandler,
			Status: func() any { return map[string]string{"informers": "none"} },
		})
		if err != nil {
			return 4
		}
		_ = srv.Serve(context.Background())
		return 0
	case "exit":
		return 7
	case "server-as":
		// A server run as another user, in a directory of that user's.
		srv, err := NewServer(Options{Identity: testIdentity("other user"), Version: "v1", Dir: args[0], Handler: testHandler, IdleTimeout: time.Minute})
		if err != nil {
			fmt.Println("error:", err)
			return 4
		}
		fmt.Println(srv.Socket())
		_ = srv.Serve(context.Background())
		return 0
	case "peer":
		// A client run as another user against a socket opened up for it.
		fmt.Println(peerAttempt(args[0]))
		return 0
	}
	return 2
}

// peerAttempt connects to socket, writes a hello and reads, then says what
// the server did. A server that closes the connection without reading it
// leaves the hello unread, and Linux then resets the connection (ECONNRESET
// on the read, or EPIPE if the close came before the write); a server that
// read the hello and closed would give a clean end of file.
func peerAttempt(socket string) string {
	c, err := net.Dial("unix", socket)
	if err != nil {
		return "dial: " + err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var buf bytes.Buffer
	_ = writeJSON(&buf, frameHello, hello{Protocol: Protocol, Version: "v1", Identity: testIdentity("t")})
	_, werr := c.Write(buf.Bytes())
	n, rerr := c.Read(make([]byte, 1))
	switch {
	case n > 0:
		return "answered"
	case errors.Is(werr, syscall.EPIPE), errors.Is(rerr, syscall.ECONNRESET):
		return "refused unread"
	case rerr == io.EOF:
		return "closed after reading"
	}
	return fmt.Sprintf("write: %v, read: %v", werr, rerr)
}

// testHandler answers the fake server's runs by their first argument.
func testHandler(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int {
	if len(req.Args) == 0 {
		return 2
	}
	switch req.Args[0] {
	case "pid":
		fmt.Fprintln(stdout, os.Getpid())
	case "echo":
		fmt.Fprintln(stdout, strings.Join(req.Args[1:], " "))
		fmt.Fprintln(stderr, "warning: echo")
	case "exit":
		code, _ := strconv.Atoi(req.Args[1])
		return code
	}
	return 0
}

func testIdentity(s string) Identity { return sha256.Sum256([]byte(s)) }

// testServer starts a server in this process; it is shut down at the end of
// the test. The channel is closed when Serve has returned.
func testServer(t *testing.T, opts Options) (*Server, <-chan struct{}) {
	t.Helper()
	if opts.Identity.IsZero() {
		opts.Identity = testIdentity("t")
	}
	if opts.Version == "" {
		opts.Version = "v1"
	}
	if opts.Handler == nil {
		opts.Handler = testHandler
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.Serve(context.Background()); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	t.Cleanup(func() {
		srv.Shutdown("the test is over")
		waitServe(t, served, 10*time.Second)
	})
	return srv, served
}

// waitServe waits for Serve to return.
func waitServe(t *testing.T, served <-chan struct{}, within time.Duration) {
	t.Helper()
	select {
	case <-served:
	case <-time.After(within):
		t.Fatalf("Serve did not return within %s", within)
	}
}

// testSpec is the spec of a client that starts the fake server.
func testSpec(t *testing.T, dir, version string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id := testIdentity("t")
	payload, err := json.Marshal(serverPayload{Dir: dir, Identity: id, Version: version, PIDFile: filepath.Join(filepath.Dir(dir), "pids"), Secret: "s3cr3t-token"})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Identity: id, Version: version, Dir: dir, Command: exe, Args: []string{helperArg, "server"}, Payload: payload}
	t.Cleanup(func() {
		if err := Stop(context.Background(), spec); err != nil && !errors.Is(err, ErrNotRunning) {
			t.Errorf("stopping the fake server: %v", err)
		}
	})
	return spec
}

// startedPIDs returns the pids the fake servers wrote.
func startedPIDs(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "pids"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func run(t *testing.T, c *Conn, args ...string) (int, string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	code, err := c.Run(context.Background(), &RunRequest{Args: args}, &out, &errOut)
	return code, out.String(), errOut.String(), err
}

func TestSocketIs0600(t *testing.T) {
	// A umask that would leave the socket open to everyone.
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	srv, _ := testServer(t, Options{Dir: filepath.Join(shortTempDir(t), "run")})
	fi, err := os.Lstat(srv.Socket())
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := fileOwner(fi)
	if fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 || uid != os.Getuid() {
		t.Errorf("socket %s: %s, owner %d; want a socket, mode 0600, owner %d", srv.Socket(), fi.Mode(), uid, os.Getuid())
	}
	if got := syscall.Umask(0); got != 0 {
		t.Errorf("NewServer left the umask at %04o", got)
	}
	if n := srv.ln.Addr().Network(); n != "unix" {
		t.Errorf("listening on %s", n)
	}
	var core syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &core); err != nil || core.Cur != 0 || core.Max != 0 {
		t.Errorf("core file size limit %+v, %v; want 0", core, err)
	}
}

func TestRun(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3*dataChunk/16+1)
	var got *RunRequest
	srv, _ := testServer(t, Options{
		Dir: filepath.Join(shortTempDir(t), "run"),
		Handler: func(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int {
			got = req
			io.WriteString(stdout, big)
			io.WriteString(stderr, "warning: something\n")
			io.WriteString(stdout, "end\n")
			return 3
		},
	})
	spec := Spec{Identity: testIdentity("t"), Version: "v1", Dir: filepath.Dir(srv.Socket())}
	c, err := Connect(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", "/a/config")
	t.Setenv("KUBECTL_IDX_CACHE", "auto")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not for the server")
	req, err := NewRunRequest([]string{"pods", "-A"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code, err := c.Run(context.Background(), req, &out, &errOut)
	if err != nil || code != 3 {
		t.Fatalf("Run: %d, %v", code, err)
	}
	if out.String() != big+"end\n" || errOut.String() != "warning: something\n" {
		t.Errorf("stdout %d bytes, stderr %q", out.Len(), errOut.String())
	}
	wd, _ := os.Getwd()
	if strings.Join(got.Args, " ") != "pods -A" || got.Dir != wd || got.Env["KUBECONFIG"] != "/a/config" || got.Env["KUBECTL_IDX_CACHE"] != "auto" {
		t.Errorf("the handler got %+v", got)
	}
	for k := range got.Env {
		if !EnvAllowed(k) {
			t.Errorf("the handler got %s", k)
		}
	}
	if got.StdoutTerminal || got.StderrTerminal || got.Width != 0 {
		t.Errorf("buffers were taken for terminals: %+v", got)
	}
	if _, err := c.Run(context.Background(), req, &out, &errOut); err == nil {
		t.Error("a connection carried two requests")
	}
}

// TestRunUnavailable checks that a run that fails before any output says so
// with ErrUnavailable, and one that fails after does not.
func TestRunUnavailable(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	release := make(chan struct{})
	srv, served := testServer(t, Options{
		Dir: dir,
		Handler: func(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int {
			switch req.Args[0] {
			case "decline":
				return Decline
			case "decline-late":
				io.WriteString(stdout, "x")
				return Decline
			case "panic":
				<-release
				panic("object data")
			}
			return 0
		},
	})
	spec := Spec{Identity: testIdentity("t"), Version: "v1", Dir: dir}
	connect := func() *Conn {
		t.Helper()
		c, err := Connect(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	code, _, _, err := run(t, connect(), "decline")
	if !errors.Is(err, ErrUnavailable) || err.Error() != "the cache server declined the request" {
		t.Errorf("declined: %d, %v", code, err)
	}
	if code, out, _, err := run(t, connect(), "decline-late"); err != nil || code != 1 || out != "x" {
		t.Errorf("declined after writing: %d, %q, %v", code, out, err)
	}

	// The same with stdout passed to the server (a file): declined before
	// writing is still unavailable; after, it is the answer.
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := connect().Run(context.Background(), &RunRequest{Args: []string{"decline"}}, f, io.Discard); !errors.Is(err, ErrUnavailable) {
		t.Errorf("declined, stdout passed: %v", err)
	}
	code, err = connect().Run(context.Background(), &RunRequest{Args: []string{"decline-late"}}, f, io.Discard)
	if b, _ := os.ReadFile(f.Name()); err != nil || code != 1 || string(b) != "x" {
		t.Errorf("declined after writing, stdout passed: %d, %q, %v", code, b, err)
	}

	c := connect()
	var out bytes.Buffer
	_, err = c.Run(context.Background(), &RunRequest{Args: []string{"pods"}, Env: map[string]string{"LD_PRELOAD": "x"}}, &out, &out)
	want := `the cache server refused the request: environment variable "LD_PRELOAD" is not passed to the cache server`
	if !errors.Is(err, ErrUnavailable) || err.Error() != want {
		t.Errorf("a forbidden variable: %v", err)
	}

	// A panic stops the server; nothing of it reaches the client, which
	// passed its stdout (a file) and is told nothing was written to it.
	c = connect()
	close(release)
	_, err = c.Run(context.Background(), &RunRequest{Args: []string{"panic"}}, f, io.Discard)
	if !errors.Is(err, ErrUnavailable) || err.Error() != "the cache server failed while answering and has stopped" {
		t.Errorf("a panic: %v", err)
	}
	waitServe(t, served, 10*time.Second)
	if r := srv.stopReason(); r != "a request failed with a panic" {
		t.Errorf("stopped because %q", r)
	}
}

// TestHandshakeRefusals talks to a server with the wrong identity, garbage and
// another version.
func TestHandshakeRefusals(t *testing.T) {
	srv, _ := testServer(t, Options{Dir: filepath.Join(shortTempDir(t), "run")})
	ctx := context.Background()

	_, err := dial(ctx, srv.Socket(), &Spec{Identity: testIdentity("another"), Version: "v1", DialTimeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "refused the handshake: this cache server serves another identity") {
		t.Errorf("another identity: %v", err)
	}

	c, err := net.Dial("unix", srv.Socket())
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("garbage was answered: %d bytes, %v", n, err)
	}
	c.Close()

	// Another version may ask for status and stop, not run.
	old, err := dial(ctx, srv.Socket(), &Spec{Identity: testIdentity("t"), Version: "v0", DialTimeout: 2 * time.Second})
	if err != nil || old.welcome.Refused != refusedVersion || old.ServerVersion() != "v1" {
		t.Fatalf("another version: %+v, %v", old, err)
	}
	_, _, _, err = run(t, old, "pid")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "this cache server is version v1, not v0") {
		t.Errorf("a run from another version: %v", err)
	}
	rep, err := Status(ctx, Spec{Identity: testIdentity("t"), Version: "v0", Dir: filepath.Dir(srv.Socket())})
	if err != nil || rep.Version != "v1" {
		t.Errorf("status from another version: %+v, %v", rep, err)
	}

	deadline := time.Now().Add(5 * time.Second)
	for srv.refusedHandshakes.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.refusedHandshakes.Load(); n != 4 {
		t.Errorf("%d refused handshakes, want 4 (identity, garbage, two of another version)", n)
	}
	if n := srv.refusedPeers.Load(); n != 0 {
		t.Errorf("%d refused peers, want 0", n)
	}
}

// TestIdleExit checks that a server with no run exits after its idle timeout,
// whatever status requests it answers meanwhile.
func TestIdleExit(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	srv, served := testServer(t, Options{Dir: dir, IdleTimeout: 200 * time.Millisecond})
	spec := Spec{Identity: testIdentity("t"), Version: "v1", Dir: dir}
	statuses := 0
	deadline := time.After(5 * time.Second)
	for polling := true; polling; {
		select {
		case <-served:
			polling = false
		case <-deadline:
			t.Fatalf("the server did not exit; %d status requests answered", statuses)
		case <-time.After(20 * time.Millisecond):
			if _, err := Status(context.Background(), spec); err == nil {
				statuses++
			}
		}
	}
	if statuses < 3 {
		t.Errorf("%d status requests answered while idle; the test needs a few", statuses)
	}
	if r := srv.stopReason(); r != "idle for 200ms" {
		t.Errorf("stopped because %q", r)
	}
	if _, err := os.Lstat(srv.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left: %v", err)
	}
	if _, err := Status(context.Background(), Spec{Identity: testIdentity("t"), Version: "v1", Dir: dir}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("status after exit: %v", err)
	}
}

// TestRunKeepsAlive checks that a run longer than the idle timeout, a watch,
// keeps the server alive, and that the idle time counts from its end.
func TestRunKeepsAlive(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	idle := 300 * time.Millisecond
	srv, served := testServer(t, Options{
		Dir: dir, IdleTimeout: idle,
		Handler: func(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int {
			select {
			case <-time.After(4 * idle):
			case <-ctx.Done():
				return 1
			}
			return 0
		},
	})
	c, err := Connect(context.Background(), Spec{Identity: testIdentity("t"), Version: "v1", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if code, _, _, err := run(t, c, "watch"); err != nil || code != 0 {
		t.Fatalf("the run was cut short: %d, %v (reason %q)", code, err, srv.stopReason())
	}
	waitServe(t, served, 5*time.Second)
	if d := time.Since(start); d < 4*idle+idle {
		t.Errorf("the server exited %s after the run started, before it had been idle %s after it", d, idle)
	}
}

// TestClientGoneCancelsRun checks that a client that goes away mid-stream
// cancels the handler's context.
func TestClientGoneCancelsRun(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	cancelled := make(chan error, 1)
	testServer(t, Options{
		Dir: dir,
		Handler: func(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int {
			io.WriteString(stdout, "first event\n")
			<-ctx.Done()
			cancelled <- context.Cause(ctx)
			return 0
		},
	})
	c, err := Connect(context.Background(), Spec{Identity: testIdentity("t"), Version: "v1", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := writerFunc(func(p []byte) (int, error) {
		cancel() // the user pressed ^C once the first line was out
		return len(p), nil
	})
	if _, err := c.Run(ctx, &RunRequest{Args: []string{"watch"}}, out, io.Discard); !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v", err)
	}
	select {
	case cause := <-cancelled:
		if !errors.Is(cause, errClientGone) {
			t.Errorf("the handler's context ended with %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled when its client went away")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestShutdownDuringRun is what the warm side does when the credentials stop
// working: runs in progress end, told why, and the server exits.
func TestShutdownDuringRun(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	srv, served := testServer(t, Options{
		Dir: dir,
		Handler: func(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int {
			io.WriteString(stdout, "pod/a\n")
			<-ctx.Done()
			return 1
		},
	})
	c, err := Connect(context.Background(), Spec{Identity: testIdentity("t"), Version: "v1", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	out := writerFunc(func(p []byte) (int, error) {
		srv.Shutdown("the API server rejected its credentials")
		return len(p), nil
	})
	code, err := c.Run(context.Background(), &RunRequest{Args: []string{"watch"}}, out, io.Discard)
	if code != 1 || err == nil || err.Error() != "the cache server stopped during the answer: the API server rejected its credentials" || errors.Is(err, ErrUnavailable) {
		t.Errorf("Run: %d, %v", code, err)
	}
	waitServe(t, served, 5*time.Second)
}

// TestServerWatchesFiles checks that a server exits when its socket is removed
// or its directory opened to others.
func TestServerWatchesFiles(t *testing.T) {
	for _, tt := range []struct {
		name   string
		tamper func(srv *Server) error
		want   string
	}{
		{"socket removed", func(srv *Server) error { return os.Remove(srv.Socket()) }, "cache socket %s was removed or replaced"},
		{"directory opened", func(srv *Server) error { return os.Chmod(filepath.Dir(srv.Socket()), 0o755) }, "cache directory %s has mode 0755, which lets other users in: it must be 0700"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, served := testServer(t, Options{Dir: filepath.Join(shortTempDir(t), "run"), checkEvery: 20 * time.Millisecond})
			if err := tt.tamper(srv); err != nil {
				t.Fatal(err)
			}
			waitServe(t, served, 5*time.Second)
			arg := srv.Socket()
			if strings.HasPrefix(tt.want, "cache directory") {
				arg = filepath.Dir(arg)
			}
			if want := fmt.Sprintf(tt.want, arg); srv.stopReason() != want {
				t.Errorf("stopped because %q, want %q", srv.stopReason(), want)
			}
		})
	}
}

func TestListen(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
	p, _ := pathsFor(dir, testIdentity("t"))
	opts := Options{Dir: dir, Identity: testIdentity("t"), Version: "v1", Handler: testHandler}

	// A file that is not a socket is left alone.
	if err := os.WriteFile(p.socket, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := NewServer(opts); err == nil || err.Error() != p.socket+" exists and is not a socket: not touching it" {
		t.Errorf("over a file: %v", err)
	}
	if b, _ := os.ReadFile(p.socket); string(b) != "keep" {
		t.Error("the file was changed")
	}
	os.Remove(p.socket)

	// A socket a dead server left is replaced.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: p.socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	srv, _ := testServer(t, opts)

	// A socket a live server answers on is not.
	if _, err := NewServer(opts); err == nil || err.Error() != "a cache server already answers on "+p.socket {
		t.Errorf("over a live server: %v", err)
	}
	if _, err := os.Lstat(srv.Socket()); err != nil {
		t.Errorf("the live server's socket: %v", err)
	}
}

// TestConnectStartsOneServer starts the fake server from four commands at
// once: one process starts, all four are answered by it.
func TestConnectStartsOneServer(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	spec := testSpec(t, dir, "v1")
	var wg sync.WaitGroup
	pids := make([]string, 4)
	errs := make([]error, 4)
	for i := range pids {
		wg.Go(func() {
			c, err := Connect(context.Background(), spec)
			if err != nil {
				errs[i] = err
				return
			}
			var out bytes.Buffer
			_, errs[i] = c.Run(context.Background(), &RunRequest{Args: []string{"pid"}}, &out, io.Discard)
			pids[i] = strings.TrimSpace(out.String())
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	started := startedPIDs(t, dir)
	if len(started) != 1 {
		t.Fatalf("%d servers started: %v", len(started), started)
	}
	for i, pid := range pids {
		if pid != started[0] {
			t.Errorf("client %d was answered by pid %s, not %s", i, pid, started[0])
		}
	}
	pid, _ := strconv.Atoi(started[0])
	rep, err := Status(context.Background(), spec)
	if err != nil || rep.PID != pid || rep.Version != "v1" || rep.Served != 4 || string(rep.Cache) != `{"informers":"none"}` {
		t.Errorf("status: %+v, %v", rep, err)
	}
	if err := Stop(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Errorf("the server (pid %d) is alive after Stop", pid)
	}
	if _, err := os.Lstat(rep.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left: %v", err)
	}
	if err := Stop(context.Background(), spec); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Stop with no server: %v", err)
	}
}

// TestConnectReplacesOtherVersion: a server of another version is stopped,
// waited for, and replaced.
func TestConnectReplacesOtherVersion(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	ctx := context.Background()
	c, err := Connect(ctx, testSpec(t, dir, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	v2 := testSpec(t, dir, "v2")
	c, err = Connect(ctx, v2)
	if err != nil {
		t.Fatal(err)
	}
	if _, out, _, err := run(t, c, "pid"); err != nil || c.ServerVersion() != "v2" {
		t.Fatalf("the new server: %q, %q, %v", c.ServerVersion(), out, err)
	}
	started := startedPIDs(t, dir)
	if len(started) != 2 || started[0] == started[1] {
		t.Fatalf("servers started: %v", started)
	}
	old, _ := strconv.Atoi(started[0])
	if processAlive(old) {
		t.Errorf("the old server (pid %d) is still alive", old)
	}
	if rep, err := Status(ctx, v2); err != nil || rep.Version != "v2" || strconv.Itoa(rep.PID) != started[1] {
		t.Errorf("status: %+v, %v", rep, err)
	}
}

// TestConnectHungServer: a server that accepts but never answers makes
// Connect fail within DefaultDialTimeout, without starting another.
func TestConnectHungServer(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	if err := prepareDir(dir); err != nil {
		t.Fatal(err)
	}
	p, _ := pathsFor(dir, testIdentity("t"))
	ln, _, err := listen(p.socket)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 10)
	defer func() {
		ln.Close()
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	}()
	go func() {
		for {
			// Accepted and held: never read, never answered.
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	start := time.Now()
	_, err = Connect(context.Background(), testSpec(t, dir, "v1"))
	elapsed := time.Since(start)
	want := fmt.Sprintf("the cache server at %s did not answer within 2s", p.socket)
	if !errors.Is(err, ErrUnavailable) || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
	if elapsed > DefaultDialTimeout+time.Second {
		t.Errorf("Connect took %s", elapsed)
	}
	if pids := startedPIDs(t, dir); len(pids) != 0 {
		t.Errorf("servers started beside the hung one: %v", pids)
	}
}

// TestConnectFailures: a server that exits before answering, and a directory
// that is not private, are errors that say so and wrap ErrUnavailable.
func TestConnectFailures(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	spec := testSpec(t, dir, "v1")
	spec.Args = []string{helperArg, "exit"}
	start := time.Now()
	_, err := Connect(context.Background(), spec)
	if !errors.Is(err, ErrUnavailable) || err.Error() != "the cache server exited before it answered: exit status 7" {
		t.Errorf("a server that exits: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("it took %s to notice", d)
	}

	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	_, err = Connect(context.Background(), testSpec(t, dir, "v1"))
	var de *DirError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &de) {
		t.Errorf("an open directory: %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	spec.Command = "kubectl-idx"
	if _, err := Connect(context.Background(), spec); !errors.Is(err, ErrUnavailable) || err.Error() != `cache server command "kubectl-idx" is not an absolute path` {
		t.Errorf("a relative command: %v", err)
	}
}

// TestPayloadNotInPS checks that the payload reaches the server on its stdin
// and shows neither in its arguments nor in its environment.
func TestPayloadNotInPS(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("reading another process's arguments needs /proc:", err)
	}
	dir := filepath.Join(shortTempDir(t), "run")
	spec := testSpec(t, dir, "v1")
	c, err := Connect(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	_, out, _, err := run(t, c, "pid")
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(out)
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile(filepath.Join("/proc", pid, f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("s3cr3t-token")) {
			t.Errorf("the payload's secret is in the server's %s", f)
		}
	}
}

// TestNoTCPListener checks, from the kernel's tables, that a server holds no
// listening TCP socket, and listens on its unix socket: one in this process
// and one started by Connect.
func TestNoTCPListener(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("the kernel's socket tables are read from /proc:", err)
	}
	srv, _ := testServer(t, Options{Dir: filepath.Join(shortTempDir(t), "run")})
	checkListeners(t, os.Getpid(), srv.Socket())

	dir := filepath.Join(shortTempDir(t), "run")
	c, err := Connect(context.Background(), testSpec(t, dir, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	_, out, _, err := run(t, c, "pid")
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(out))
	p, _ := pathsFor(dir, testIdentity("t"))
	checkListeners(t, pid, p.socket)
}

// checkListeners fails unless the process pid holds a socket listening on the
// unix socket path and none listening on TCP.
func checkListeners(t *testing.T, pid int, socket string) {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if inode, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
			held[strings.TrimSuffix(inode, "]")] = true
		}
	}
	var tcp []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		for _, row := range procTable(t, table) {
			// st 0A is LISTEN; the inode is the tenth column.
			if len(row) > 9 && row[3] == "0A" && held[row[9]] {
				tcp = append(tcp, row[1])
			}
		}
	}
	if len(tcp) > 0 {
		t.Errorf("pid %d listens on TCP: %v", pid, tcp)
	}
	unix := false
	for _, row := range procTable(t, "/proc/net/unix") {
		// Flags 00010000 is __SO_ACCEPTCON, a listening socket.
		if len(row) > 7 && row[len(row)-1] == socket && row[3] == "00010000" && held[row[6]] {
			unix = true
		}
	}
	if !unix {
		t.Errorf("pid %d does not listen on %s", pid, socket)
	}
}

func procTable(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // no IPv6
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	s := bufio.NewScanner(f)
	for s.Scan() {
		rows = append(rows, strings.Fields(s.Text()))
	}
	return rows
}

// asNobody prepares base for processes of uid nobody: base becomes
// traversable, and a copy of the test binary they can run is put in it (go
// test's own build directory is root's alone).
func asNobody(t *testing.T, base string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("running a process as another user needs root; this test runs as uid", os.Getuid())
	}
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "warm.test")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func nobodyCommand(exe string, args ...string) *exec.Cmd {
	cmd := exec.Command(exe, append([]string{helperArg}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	return cmd
}

// TestPeerOfAnotherUIDRefused opens the directory and the socket to everyone,
// for this test only, so that a process of another uid can connect at all:
// the server must close it before reading its hello.
func TestPeerOfAnotherUIDRefused(t *testing.T) {
	base := shortTempDir(t)
	exe := asNobody(t, base)
	dir := filepath.Join(base, "run")
	srv, _ := testServer(t, Options{Dir: dir, checkEvery: time.Hour})
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(srv.Socket(), 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := nobodyCommand(exe, "peer", srv.Socket()).CombinedOutput()
	if err != nil {
		t.Fatalf("the peer: %v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "refused unread" {
		t.Errorf("the peer of another uid saw %q", got)
	}
	if n := srv.refusedPeers.Load(); n != 1 {
		t.Errorf("%d refused peers, want 1", n)
	}
	if n := srv.hellos.Load() + srv.refusedHandshakes.Load(); n != 0 {
		t.Errorf("the server read %d hellos", n)
	}
	// The user's own process is still served.
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c, err := Connect(context.Background(), Spec{Identity: testIdentity("t"), Version: "v1", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, out, _, err := run(t, c, "echo", "hi"); err != nil || out != "hi\n" {
		t.Errorf("the user's run: %q, %v", out, err)
	}
}

// TestServerOfAnotherUIDRefused: a client does not talk to a server of
// another uid, even on a socket it can connect to.
func TestServerOfAnotherUIDRefused(t *testing.T) {
	base := shortTempDir(t)
	exe := asNobody(t, base)
	dir := filepath.Join(base, "theirs")
	mkdir(t, dir, 0o700)
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	cmd := nobodyCommand(exe, "server-as", dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	socket := strings.TrimSpace(line)
	if err != nil || !strings.HasPrefix(socket, dir) {
		t.Fatalf("the server of another user: %q, %v", line, err)
	}
	_, err = dial(context.Background(), socket, &Spec{Identity: testIdentity("other user"), Version: "v1", DialTimeout: 2 * time.Second})
	want := fmt.Sprintf("the process listening on %s runs as uid %d, not as uid 0: not talking to it", socket, nobody)
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

// TestStatusNotRunning: status and stop start nothing.
func TestStatusNotRunning(t *testing.T) {
	base := shortTempDir(t)
	for _, dir := range []string{filepath.Join(base, "missing"), base} {
		spec := Spec{Identity: testIdentity("t"), Version: "v1", Dir: dir}
		if _, err := Status(context.Background(), spec); !errors.Is(err, ErrNotRunning) {
			t.Errorf("status in %s: %v", dir, err)
		}
		if err := Stop(context.Background(), spec); !errors.Is(err, ErrNotRunning) {
			t.Errorf("stop in %s: %v", dir, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(base, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("status created the directory: %v", err)
	}
	entries, _ := os.ReadDir(base)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if len(names) != 0 {
		t.Errorf("status and stop wrote %v", names)
	}
}

// TestDialStartsNothing: Dial finds a running server of its version and
// starts none: with no server, or one of another version, it says
// ErrNotRunning, which is also ErrUnavailable.
func TestDialStartsNothing(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	spec := testSpec(t, dir, "v1")
	if _, err := Dial(context.Background(), spec); !errors.Is(err, ErrNotRunning) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Dial with no server: %v", err)
	}
	if pids := startedPIDs(t, dir); len(pids) != 0 {
		t.Fatalf("Dial started servers %v", pids)
	}
	srv, _ := testServer(t, Options{Dir: dir, Version: "v0"})
	if _, err := Dial(context.Background(), spec); !errors.Is(err, ErrNotRunning) || !strings.Contains(err.Error(), "version v0") {
		t.Fatalf("Dial with a server of another version: %v", err)
	}
	srv.Shutdown("replaced by the test")
	testServer(t, Options{Dir: dir})
	c, err := Dial(context.Background(), spec)
	if err != nil {
		t.Fatalf("Dial with a server running: %v", err)
	}
	c.Close()
	if pids := startedPIDs(t, dir); len(pids) != 0 {
		t.Errorf("Dial started servers %v", pids)
	}
}

// TestWarm: a warm request is taken at once, whatever the run takes; the
// run has the request, its output goes nowhere and it runs to its end: its
// output does not end it, nor does its client going away. Status counts it
// among the warmed, not the served or running.
func TestWarm(t *testing.T) {
	dir := filepath.Join(shortTempDir(t), "run")
	release := make(chan struct{})
	type result struct {
		req       *RunRequest
		wrote     error
		ctxBefore error
		ctxErr    error
	}
	results := make(chan result, 1)
	srv, _ := testServer(t, Options{
		Dir: dir,
		Handler: func(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int {
			<-release
			before := ctx.Err()
			io.WriteString(stderr, "warning: discarded\n")
			var err error
			for range 1000 {
				if _, err = io.WriteString(stdout, "a line of the answer\n"); err != nil {
					break
				}
			}
			results <- result{req: req, wrote: err, ctxBefore: before, ctxErr: ctx.Err()}
			return 0
		},
	})
	spec := Spec{Identity: testIdentity("t"), Version: "v1", Dir: filepath.Dir(srv.Socket())}
	c, err := Dial(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Warm(context.Background(), &RunRequest{Args: []string{"pods", "-A"}}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Warm: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Warm waited for the run")
	}
	rep, err := Status(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Warmed != 1 || rep.Served != 0 || rep.Running != 0 {
		t.Errorf("status while warming: warmed %d, served %d, running %d", rep.Warmed, rep.Served, rep.Running)
	}
	close(release)
	select {
	case r := <-results:
		if strings.Join(r.req.Args, " ") != "pods -A" {
			t.Errorf("the run got %+v", r.req)
		}
		if r.ctxBefore != nil {
			t.Errorf("the run was cancelled when its client went away: %v", r.ctxBefore)
		}
		if r.wrote != nil || r.ctxErr != nil {
			t.Errorf("the run's output: write error %v, context %v; want it written to the end", r.wrote, r.ctxErr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the warm run did not run")
	}
	if _, err := c.Run(context.Background(), &RunRequest{Args: []string{"pods"}}, io.Discard, io.Discard); err == nil {
		t.Error("a connection carried a warm request and a run")
	}
}

// TestRunIntoClientStdout: a client whose stdout is a pipe (or a file)
// passes it, and the server writes the answer straight into it, with stderr
// and the exit code in frames as before. A client that says it passes its
// stdout and then sends no descriptor is refused, and the server goes on.
func TestRunIntoClientStdout(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3*dataChunk/16+1)
	var stdoutType string
	srv, _ := testServer(t, Options{
		Dir: filepath.Join(shortTempDir(t), "run"),
		Handler: func(ctx context.Context, req *RunRequest, stdout, stderr io.Writer) int {
			stdoutType = fmt.Sprintf("%T", stdout)
			io.WriteString(stdout, big)
			io.WriteString(stderr, "warning: something\n")
			io.WriteString(stdout, "end\n")
			return 3
		},
	})
	spec := Spec{Identity: testIdentity("t"), Version: "v1", Dir: filepath.Dir(srv.Socket())}

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(pr)
		read <- string(b)
	}()
	c, err := Dial(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	code, err := c.Run(context.Background(), &RunRequest{Args: []string{"pods"}}, pw, &errOut)
	if err != nil || code != 3 {
		t.Fatalf("Run: %d, %v", code, err)
	}
	// The client's descriptor is the only one left: the server closed its.
	pw.Close()
	select {
	case got := <-read:
		if got != big+"end\n" {
			t.Errorf("the pipe got %d bytes, want %d", len(got), len(big)+4)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server kept the client's stdout open")
	}
	if stdoutType != "*warm.fileWriter" || errOut.String() != "warning: something\n" {
		t.Errorf("the handler wrote to a %s; stderr %q", stdoutType, errOut.String())
	}

	// A file too; a buffer gets frames.
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if c, err = Dial(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if code, err := c.Run(context.Background(), &RunRequest{Args: []string{"pods"}}, f, io.Discard); err != nil || code != 3 {
		t.Fatalf("Run into a file: %d, %v", code, err)
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != big+"end\n" {
		t.Errorf("the file got %d bytes", len(b))
	}
	if c, err = Dial(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code, err := c.Run(context.Background(), &RunRequest{Args: []string{"pods"}}, &out, io.Discard); err != nil || code != 3 || out.String() != big+"end\n" {
		t.Fatalf("Run into a buffer: %d, %v, %d bytes", code, err, out.Len())
	}
	if stdoutType != "*warm.frameWriter" {
		t.Errorf("a buffer's answer was written to a %s", stdoutType)
	}

	// Asked for its stdout, a client sends a byte without a descriptor.
	c, err = Dial(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(c.c, frameRequest, request{Op: opRun, Run: &RunRequest{Args: []string{"pods"}, StdoutFile: true}}); err != nil {
		t.Fatal(err)
	}
	if typ, _, err := readFrame(c.r); err != nil || typ != frameFile {
		t.Fatalf("asked for stdout: %s, %v", typ, err)
	}
	c.c.Write([]byte{0})
	var f2 failure
	if err := readJSON(c.r, frameFailure, &f2); err != nil || !strings.Contains(f2.Message, "did not come as one descriptor") || !f2.Declined {
		t.Errorf("a missing descriptor: %+v, %v", f2, err)
	}
	c.Close()
	if _, err := Status(context.Background(), spec); err != nil {
		t.Errorf("the server after a missing descriptor: %v", err)
	}
}
