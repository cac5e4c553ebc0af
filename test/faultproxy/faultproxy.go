// Package faultproxy is a TCP proxy on loopback that injects network faults on command,
// for end-to-end tests that put it between kubectl-idx and a real API server.
//
// It forwards bytes and nothing else, so TLS passes through untouched: a client that
// verifies the server's certificate for 127.0.0.1 verifies it through the proxy too.
// The faults are those a client meets on real networks:
//
//   - Drop: every open connection is closed (FIN), as when a load balancer or the server
//     ends them; new connections are accepted as before.
//   - Reset: every open connection is reset (RST), as after a crash or a NAT timeout.
//   - Stall: no byte moves in either direction, on open and new connections, while the
//     sockets stay open: a blackhole, as when a route or a VPN goes away. Unstall lets
//     the held bytes through in order.
//   - Refuse: new connections are refused (the kernel answers with RST, the client sees
//     ECONNREFUSED), as when nothing listens on the port; open connections are left alone.
//   - ResetAfter: a connection is reset once it has carried so many bytes toward the
//     client, that is in the middle of an answer.
//   - Throttle: the bytes toward the client are paced to so many a second, on open and
//     new connections, in pieces of a twentieth of a second's worth: a slow link, over
//     which an answer keeps arriving but takes long to arrive whole.
//
// Every method is safe for concurrent use.
package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from a loopback port to a target address.
type Proxy struct {
	target string
	addr   string

	mu sync.Mutex
	ln net.Listener // nil while refusing or after Close
	// flowing is closed while bytes may move; Stall replaces it with an open channel.
	flowing chan struct{}
	conns   map[*conn]struct{}
	closed  bool
	wg      sync.WaitGroup
	// resetAt and resetsLeft are ResetAfter's settings, cutWithFIN CloseAfter's;
	// resets counts the connections either cut.
	resetAt    int64
	resetsLeft int
	cutWithFIN bool
	resets     int
	// rate is Throttle's bytes per second toward the client; zero when off.
	rate int64
	// sentDown counts the bytes forwarded toward clients, over all connections.
	sentDown int64
}

// conn is one proxied connection: the client's side and the target's.
type conn struct {
	client, target *net.TCPConn
	done           chan struct{}
	once           sync.Once
	// down counts the bytes forwarded to the client; only its pipe touches it.
	down int64
	// sendAt is when the next throttled piece toward the client may go; only the
	// down pipe touches it.
	sendAt time.Time
}

// close closes both sides; with reset, as an RST rather than a FIN.
func (c *conn) close(reset bool) {
	c.once.Do(func() {
		if reset {
			// SO_LINGER 0 makes close(2) drop unsent data and send an RST.
			_ = c.client.SetLinger(0)
			_ = c.target.SetLinger(0)
		}
		_ = c.client.Close()
		_ = c.target.Close()
		close(c.done)
	})
}

// New starts a proxy on 127.0.0.1 with a port of the kernel's choosing, forwarding to
// target (host:port).
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	flowing := make(chan struct{})
	close(flowing)
	p := &Proxy{
		target:  target,
		addr:    ln.Addr().String(),
		ln:      ln,
		flowing: flowing,
		conns:   map[*conn]struct{}{},
	}
	p.wg.Add(1)
	go p.accept(ln)
	return p, nil
}

// Addr returns the address clients connect to, e.g. 127.0.0.1:41234. It stays the same
// across Refuse.
func (p *Proxy) Addr() string { return p.addr }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			// Closed by Refuse or Close; a transient accept error on loopback is not
			// worth a retry loop in a test tool.
			return
		}
		p.wg.Add(1)
		go p.serve(c.(*net.TCPConn))
	}
}

func (p *Proxy) serve(client *net.TCPConn) {
	defer p.wg.Done()
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		// The target is down (an API server being restarted): the client sees its
		// connection reset, as it would talking to the target directly.
		_ = client.SetLinger(0)
		_ = client.Close()
		return
	}
	c := &conn{client: client, target: up.(*net.TCPConn), done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		c.close(false)
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(c, c.target, c.client, false) }()
	go func() { defer wg.Done(); p.pipe(c, c.client, c.target, true) }()
	wg.Wait()
	c.close(false)
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// pipe copies src to dst while the proxy is not stalled; down is the direction toward
// the client. A clean end of src is passed on as a half-close of dst; any error ends the
// whole connection.
func (p *Proxy) pipe(c *conn, dst, src *net.TCPConn, down bool) {
	buf := make([]byte, 32<<10)
	for {
		if !p.waitFlowing(c) {
			return
		}
		n, err := src.Read(buf)
		if n > 0 {
			if down {
				if !p.sendDown(c, buf[:n]) {
					return
				}
			} else {
				// Bytes read just before a Stall are held, not sent.
				if !p.waitFlowing(c) {
					return
				}
				if _, werr := dst.Write(buf[:n]); werr != nil {
					c.close(false)
					return
				}
			}
		}
		if errors.Is(err, io.EOF) {
			_ = dst.CloseWrite()
			return
		}
		if err != nil {
			c.close(false)
			return
		}
	}
}

// sendDown forwards data to the client, as Stall, ResetAfter and Throttle allow, piece
// by piece when throttled; false means the connection is closed.
func (p *Proxy) sendDown(c *conn, data []byte) bool {
	for len(data) > 0 {
		// Bytes read just before a Stall are held, not sent.
		if !p.waitFlowing(c) {
			return false
		}
		piece := data
		if rate := p.throttle(); rate > 0 {
			piece = data[:min(len(data), pieceSize(rate))]
			if !c.pace(len(piece), rate) {
				return false
			}
		} else {
			c.sendAt = time.Time{}
		}
		data = data[len(piece):]
		piece, cut, fin := p.cutDown(c, piece)
		if _, err := c.client.Write(piece); err != nil {
			c.close(false)
			return false
		}
		if cut {
			c.close(!fin)
			return false
		}
	}
	return true
}

// pieceSize is how many bytes a throttled connection forwards at a time: a twentieth
// of a second's worth, so that a slow answer arrives steadily, and at most 16 KiB.
func pieceSize(rate int64) int {
	return int(max(1, min(rate/20, 16<<10)))
}

// pace waits until n more bytes may go at rate bytes a second and books them; false
// means the connection was closed meanwhile. The schedule is kept across pieces, so
// that the rate holds on average however late the timers fire; a connection that was
// idle gets no credit for it.
func (c *conn) pace(n int, rate int64) bool {
	now := time.Now()
	if c.sendAt.Before(now) {
		c.sendAt = now
	}
	if wait := c.sendAt.Sub(now); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.done:
			return false
		}
	}
	c.sendAt = c.sendAt.Add(time.Duration(int64(n) * int64(time.Second) / rate))
	return true
}

// throttle returns Throttle's rate, zero when off.
func (p *Proxy) throttle() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rate
}

// cutDown returns the part of chunk to forward to the client, whether to cut the
// connection after it, as ResetAfter or CloseAfter asks, and whether with a FIN; it
// counts that part as sent.
func (p *Proxy) cutDown(c *conn, chunk []byte) ([]byte, bool, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := p.resetAt
	if at <= 0 || p.resetsLeft == 0 || c.down+int64(len(chunk)) <= at {
		c.down += int64(len(chunk))
		p.sentDown += int64(len(chunk))
		return chunk, false, false
	}
	chunk = chunk[:at-min(c.down, at)]
	p.sentDown += int64(len(chunk))
	c.down += int64(len(chunk))
	if p.resetsLeft > 0 {
		p.resetsLeft--
	}
	p.resets++
	return chunk, true, p.cutWithFIN
}

// waitFlowing blocks while the proxy is stalled; false means c was closed meanwhile.
func (p *Proxy) waitFlowing(c *conn) bool {
	p.mu.Lock()
	flowing := p.flowing
	p.mu.Unlock()
	select {
	case <-flowing:
		return true
	case <-c.done:
		return false
	}
}

// snapshot returns the open connections.
func (p *Proxy) snapshot() []*conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*conn, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	return out
}

// Drop closes every open connection with a FIN on both sides and keeps accepting new ones.
func (p *Proxy) Drop() {
	for _, c := range p.snapshot() {
		c.close(false)
	}
}

// Reset closes every open connection with an RST on both sides and keeps accepting new ones.
func (p *Proxy) Reset() {
	for _, c := range p.snapshot() {
		c.close(true)
	}
}

// Stall stops forwarding in both directions, on open and new connections, until Unstall.
// Sockets stay open: clients see silence, not an error.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.flowing:
		p.flowing = make(chan struct{})
	default:
		// Already stalled.
	}
}

// Unstall forwards again, starting with the bytes held during the stall.
func (p *Proxy) Unstall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.flowing:
	default:
		close(p.flowing)
	}
}

// Refuse(true) stops listening, so that new connections are refused by the kernel
// (ECONNREFUSED) while open ones go on; Refuse(false) listens again on the same address.
// The error is for a port taken meanwhile by someone else, which on loopback within a
// test does not happen in practice.
func (p *Proxy) Refuse(on bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("faultproxy: closed")
	}
	if on {
		if p.ln != nil {
			err := p.ln.Close()
			p.ln = nil
			return err
		}
		return nil
	}
	if p.ln != nil {
		return nil
	}
	// Go sets SO_REUSEADDR, so connections of the old listener in TIME_WAIT do not
	// keep the port.
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("faultproxy: listening on %s again: %w", p.addr, err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

// ResetAfter resets connections in the middle of an answer: once a connection has
// carried n bytes from the target to the client, the proxy forwards no more and resets
// it (RST on both sides). It does so for the next times connections that get that far,
// or for every one while times is negative; ResetAfter(0, 0) turns it off. Bytes count
// from the connection's start, TLS handshake included.
func (p *Proxy) ResetAfter(n int64, times int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resetAt, p.resetsLeft, p.cutWithFIN = n, times, false
}

// CloseAfter is ResetAfter with a FIN instead of an RST: the client reads the end of
// the connection in the middle of an answer (an HTTP/2 stream then reads
// io.ErrUnexpectedEOF). Resets counts these too.
func (p *Proxy) CloseAfter(n int64, times int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resetAt, p.resetsLeft, p.cutWithFIN = n, times, true
}

// Throttle paces the bytes toward the client to bytesPerSecond on each connection, open
// and new ones, forwarding them in pieces of a twentieth of a second's worth (at most
// 16 KiB) so that data keeps flowing; the bytes toward the target are not slowed.
// Throttle(0) turns it off. Every byte counts, TLS records included.
func (p *Proxy) Throttle(bytesPerSecond int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rate = max(0, bytesPerSecond)
}

// Resets returns how many connections ResetAfter has reset.
func (p *Proxy) Resets() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resets
}

// BytesDown returns how many bytes the proxy has forwarded toward clients, over all
// connections since it started, TLS records included: what a client received, for a
// test to size a Throttle by.
func (p *Proxy) BytesDown() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sentDown
}

// Conns returns the number of open proxied connections.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops listening, closes every connection and waits for the proxy's goroutines.
// It is safe to call twice.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var err error
	if p.ln != nil {
		err = p.ln.Close()
		p.ln = nil
	}
	p.mu.Unlock()
	p.Drop()
	p.wg.Wait()
	return err
}
