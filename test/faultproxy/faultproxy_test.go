package faultproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// echoServer accepts connections on loopback and writes back every line it reads, until
// the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func newProxy(t *testing.T) *Proxy {
	t.Helper()
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// client is one connection through the proxy.
type client struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, p *Proxy) *client {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("dialing the proxy: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &client{t: t, conn: c, r: bufio.NewReader(c)}
}

func (c *client) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, line+"\n"); err != nil {
		c.t.Fatalf("writing %q: %v", line, err)
	}
}

// recv reads one line within d.
func (c *client) recv(d time.Duration) (string, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	s, err := c.r.ReadString('\n')
	if len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s, err
}

// echo checks that line comes back.
func (c *client) echo(line string) {
	c.t.Helper()
	c.send(line)
	got, err := c.recv(5 * time.Second)
	if err != nil || got != line {
		c.t.Fatalf("echo of %q: got %q, %v", line, got, err)
	}
}

// waitConns waits until p counts n connections.
func waitConns(t *testing.T, p *Proxy, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for p.Conns() != n {
		if time.Now().After(deadline) {
			t.Fatalf("Conns() = %d, want %d", p.Conns(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestForwards(t *testing.T) {
	p := newProxy(t)
	a, b := dial(t, p), dial(t, p)
	a.echo("hello")
	b.echo("world")
	a.echo("again")
	if n := p.BytesDown(); n != 18 {
		t.Errorf("BytesDown() = %d after three echoes of 6 bytes, want 18", n)
	}
	waitConns(t, p, 2)
	_ = a.conn.Close()
	waitConns(t, p, 1)
}

func TestHalfClosePassesThrough(t *testing.T) {
	p := newProxy(t)
	c := dial(t, p)
	c.send("last words")
	if err := c.conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := c.recv(5 * time.Second)
	if err != nil || got != "last words" {
		t.Fatalf("after a half-close: got %q, %v", got, err)
	}
	if _, err := c.recv(5 * time.Second); !errors.Is(err, io.EOF) {
		t.Errorf("after the echo: %v, want EOF", err)
	}
	waitConns(t, p, 0)
}

func TestDrop(t *testing.T) {
	p := newProxy(t)
	a, b := dial(t, p), dial(t, p)
	a.echo("a")
	b.echo("b")
	p.Drop()
	wantCut(t, p, "read after Drop", io.EOF, "EOF (a FIN)", a, b)
}

func TestReset(t *testing.T) {
	p := newProxy(t)
	c := dial(t, p)
	c.echo("a")
	p.Reset()
	wantCut(t, p, "read after Reset", syscall.ECONNRESET, "ECONNRESET", c)
}

// wantCut checks that the next read of each of clients fails with want (named
// wantName), that p is left with no connection, and that it still accepts.
func wantCut(t *testing.T, p *Proxy, what string, want error, wantName string, clients ...*client) {
	t.Helper()
	for _, c := range clients {
		if _, err := c.recv(5 * time.Second); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %s", what, err, wantName)
		}
	}
	waitConns(t, p, 0)
	dial(t, p).echo("after")
}

func TestStall(t *testing.T) {
	p := newProxy(t)
	open := dial(t, p)
	open.echo("before")
	p.Stall()
	p.Stall() // twice is once
	open.send("held")
	// A connection made during the stall is accepted, and stalled too.
	fresh := dial(t, p)
	fresh.send("held too")
	for _, c := range []*client{open, fresh} {
		if got, err := c.recv(300 * time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read during a stall: %q, %v; want nothing until the deadline", got, err)
		}
	}
	waitConns(t, p, 2)
	p.Unstall()
	p.Unstall()
	for c, want := range map[*client]string{open: "held", fresh: "held too"} {
		if got, err := c.recv(5 * time.Second); err != nil || got != want {
			t.Errorf("after Unstall: got %q, %v; want %q", got, err, want)
		}
	}
	open.echo("after")
}

func TestDropWhileStalled(t *testing.T) {
	p := newProxy(t)
	c := dial(t, p)
	c.echo("a")
	p.Stall()
	c.send("held")
	waitConns(t, p, 1)
	p.Drop()
	if _, err := c.recv(5 * time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read after Drop during a stall: %v, want the connection closed", err)
	}
	waitConns(t, p, 0)
	p.Unstall()
	dial(t, p).echo("after")
}

func TestRefuse(t *testing.T) {
	p := newProxy(t)
	open := dial(t, p)
	open.echo("before")
	if err := p.Refuse(true); err != nil {
		t.Fatal(err)
	}
	if err := p.Refuse(true); err != nil {
		t.Fatalf("Refuse(true) twice: %v", err)
	}
	_, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial while refusing: %v, want ECONNREFUSED", err)
	}
	// Open connections are left alone.
	open.echo("during")
	if err := p.Refuse(false); err != nil {
		t.Fatal(err)
	}
	if err := p.Refuse(false); err != nil {
		t.Fatalf("Refuse(false) twice: %v", err)
	}
	dial(t, p).echo("after")
	open.echo("still")
}

func TestTargetDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	_ = ln.Close()
	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// The client sees its connection reset, at connect or at its first read.
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("read with the target down: %v, want the connection closed", err)
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("dial with the target down: %v, want ECONNRESET", err)
	}
	if n := p.Conns(); n != 0 {
		t.Errorf("Conns() = %d with the target down, want 0", n)
	}
}

func TestClose(t *testing.T) {
	p, err := New(echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p)
	c.echo("a")
	p.Stall()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.recv(5 * time.Second); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read after Close: %v, want the connection closed", err)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial after Close: %v, want ECONNREFUSED", err)
	}
	if err := p.Refuse(false); err == nil {
		t.Error("Refuse(false) after Close listened again")
	}
	if n := p.Conns(); n != 0 {
		t.Errorf("Conns() = %d after Close, want 0", n)
	}
}

// repeatUntil calls f in a goroutine of wg, after every pause, until stop is closed.
func repeatUntil(wg *sync.WaitGroup, stop <-chan struct{}, pause time.Duration, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(pause):
				f()
			}
		}
	}()
}

// TestConcurrentControls runs every control from several goroutines while clients talk
// through the proxy; with -race it checks the controls are safe for concurrent use, and
// that the proxy still forwards once the faults stop.
func TestConcurrentControls(t *testing.T) {
	p := newProxy(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	controls := []func(){
		p.Drop, p.Reset, p.Stall, p.Unstall,
		func() { _ = p.Refuse(true) }, func() { _ = p.Refuse(false) },
		func() { p.ResetAfter(3, -1) }, func() { p.ResetAfter(0, 0) },
		func() { p.Throttle(1000) }, func() { p.Throttle(0) },
		func() { _ = p.Conns() },
	}
	for _, f := range controls {
		repeatUntil(&wg, stop, time.Millisecond, f)
	}
	for range 4 {
		repeatUntil(&wg, stop, 0, func() {
			c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(50 * time.Millisecond))
			_, _ = io.WriteString(c, "x\n")
			_, _ = c.Read(make([]byte, 2))
			_ = c.Close()
		})
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	p.Unstall()
	p.ResetAfter(0, 0)
	p.Throttle(0)
	if err := p.Refuse(false); err != nil {
		t.Fatal(err)
	}
	dial(t, p).echo("after the storm")
	waitConns(t, p, 1)
}

// TestCloseAfter: CloseAfter cuts as ResetAfter does, with a FIN: the client reads
// the bytes up to the cut, then the end of the connection, and Resets counts it;
// ResetAfter afterwards cuts with an RST again.
func TestCloseAfter(t *testing.T) {
	p := newProxy(t)
	cutAfterNine(t, p, p.CloseAfter, io.EOF, "EOF (a FIN)")
	dial(t, p).echo("12345")
	p.ResetAfter(4, 1)
	c := dial(t, p)
	c.send("12345")
	if got, err := c.recv(5 * time.Second); got != "1234" || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("ResetAfter after CloseAfter: got %q, %v; want %q and ECONNRESET", got, err, "1234")
	}
	waitConns(t, p, 1)
}

// cutAfterNine has cut (ResetAfter or CloseAfter) cut the next connection after 9
// bytes toward the client, once, and checks that the client reads them and then
// want (named wantName). Each echo is 6 bytes ("12345\n"): the second one is cut
// after its third byte.
func cutAfterNine(t *testing.T, p *Proxy, cut func(n int64, times int), want error, wantName string) {
	t.Helper()
	cut(9, 1)
	c := dial(t, p)
	c.echo("12345")
	c.send("67890")
	got, err := c.recv(5 * time.Second)
	if got != "678" || !errors.Is(err, want) {
		t.Errorf("after 9 bytes: got %q, %v; want %q and %s", got, err, "678", wantName)
	}
	if n := p.Resets(); n != 1 {
		t.Errorf("Resets() = %d, want 1", n)
	}
}

func TestResetAfter(t *testing.T) {
	p := newProxy(t)
	cutAfterNine(t, p, p.ResetAfter, syscall.ECONNRESET, "ECONNRESET")
	// Once only: the next connection carries on.
	next := dial(t, p)
	for range 3 {
		next.echo("12345")
	}
	// Every time, until turned off.
	p.ResetAfter(4, -1)
	for range 2 {
		c := dial(t, p)
		c.send("12345")
		if got, err := c.recv(5 * time.Second); got != "1234" || !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("after 4 bytes: got %q, %v; want %q and ECONNRESET", got, err, "1234")
		}
	}
	// The connection that has carried 18 bytes already is reset at its next byte.
	next.send("x")
	if _, err := next.recv(5 * time.Second); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("an open connection past the limit: %v, want ECONNRESET", err)
	}
	p.ResetAfter(0, 0)
	// What was cut off was not sent: 6+3 on the first connection, 3×6 on the next
	// (its last answer cut off at nothing), 4 on each of two more.
	if n := p.BytesDown(); n != 6+3+3*6+2*4 {
		t.Errorf("BytesDown() = %d, want %d", n, 6+3+3*6+2*4)
	}
	dial(t, p).echo("after")
	if n := p.Resets(); n != 4 {
		t.Errorf("Resets() = %d, want 4", n)
	}
}

// echoTimed sends a line of n bytes (newline included) through c and reads it back,
// returning how long the first byte and the whole line took to come back.
func (c *client) echoTimed(n int) (first, all time.Duration) {
	c.t.Helper()
	line := strings.Repeat("x", n-1)
	start := time.Now()
	c.send(line)
	_ = c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.r.Peek(1); err != nil {
		c.t.Fatalf("waiting for the first byte: %v", err)
	}
	first = time.Since(start)
	got, err := c.recv(30 * time.Second)
	all = time.Since(start)
	if err != nil || got != line {
		c.t.Fatalf("echo of %d bytes: got %d bytes, %v", n, len(got), err)
	}
	return first, all
}

func TestThrottle(t *testing.T) {
	p := newProxy(t)
	open := dial(t, p)
	open.echo("before")
	// 64 KiB at 32 KiB/s takes 2s, less the last piece's twentieth of a second;
	// the bounds are loose for a loaded machine.
	p.Throttle(32 << 10)
	first, all := open.echoTimed(64 << 10)
	if first > 500*time.Millisecond {
		t.Errorf("the first byte came after %s: a throttled answer must start at once and keep flowing", first)
	}
	if all < 1500*time.Millisecond || all > 5*time.Second {
		t.Errorf("64 KiB at 32 KiB/s took %s, want about 2s", all)
	}
	// New connections are throttled too, on their own.
	fresh := dial(t, p)
	if _, all := fresh.echoTimed(16 << 10); all < 300*time.Millisecond {
		t.Errorf("16 KiB at 32 KiB/s on a new connection took %s, want about 0.5s", all)
	}
	// Idle time is no credit: the next answer is paced from its start.
	time.Sleep(500 * time.Millisecond)
	if _, all := open.echoTimed(16 << 10); all < 300*time.Millisecond {
		t.Errorf("16 KiB at 32 KiB/s after a pause took %s, want about 0.5s", all)
	}
	p.Throttle(0)
	if _, all := open.echoTimed(1 << 20); all > time.Second {
		t.Errorf("1 MiB unthrottled took %s", all)
	}
}

func TestThrottleWithStallAndResetAfter(t *testing.T) {
	p := newProxy(t)
	p.Throttle(8 << 10)
	c := dial(t, p)
	line := strings.Repeat("x", 4<<10-1)
	c.send(line)
	// A stall holds the rest of a throttled answer, and Unstall lets it go.
	if _, err := c.r.Peek(1); err != nil {
		t.Fatal(err)
	}
	p.Stall()
	// Unthrottled, the rest would take half a second.
	before, err := c.recv(time.Second)
	if !errors.Is(err, os.ErrDeadlineExceeded) || len(before) >= len(line) {
		t.Fatalf("during the stall: got %d bytes, %v; want part of %d and nothing more", len(before), err, len(line))
	}
	p.Unstall()
	if rest, err := c.recv(10 * time.Second); err != nil || before+rest != line {
		t.Fatalf("after Unstall: got %d+%d bytes, %v; want %d", len(before), len(rest), err, len(line))
	}
	// ResetAfter cuts a throttled answer at the byte it names.
	p.ResetAfter(4<<10+100, 1)
	c.send(line)
	got, err := c.recv(10 * time.Second)
	if len(got) != 100 || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("got %d bytes, %v; want 100 and ECONNRESET", len(got), err)
	}
}
