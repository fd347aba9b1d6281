package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ZMTP 3.1 (rfc.zeromq.org/spec/37), the subset trellis speaks: the NULL
// security mechanism and the PUSH → PULL pattern, over tcp:// and ipc://
// (a Unix stream socket). A node binds one PULL socket; it keeps one PUSH
// connection to each peer it sends to and one to the monitor. Every trellis
// message is one single-part ZMTP message whose one frame is our signed
// encoding (doc.go).

const (
	greetingSize = 64
	// handshakeTimeout bounds the greeting and READY exchange of a new
	// connection, so a peer that connects and says nothing holds nothing
	// for long.
	handshakeTimeout = 5 * time.Second
	// frameTimeout bounds the arrival of a frame's body once its header
	// came: minFrameTime plus one second per MiB (a slow-loris sender is
	// cut off; an honest 4 MiB model has 9 s even at 1 MiB/s).
	minFrameTime = 5 * time.Second
	// writeTimeout bounds one frame's write: a stalled receiver costs the
	// connection, never the sender's other peers.
	writeTimeout = 30 * time.Second
	// idleTimeout closes a connection that sent nothing for this long.
	idleTimeout = 10 * time.Minute
)

// greeting is our 64-byte ZMTP greeting: signature, version 3.1, NULL
// mechanism, as-server 0 (NULL ignores it), filler.
func greeting() []byte {
	g := make([]byte, greetingSize)
	g[0], g[9], g[10], g[11] = 0xFF, 0x7F, 3, 1
	copy(g[12:32], "NULL")
	return g
}

// checkGreeting checks a peer's greeting: the signature, major version 3
// or later, the NULL mechanism.
func checkGreeting(g []byte) error {
	if g[0] != 0xFF || g[9]&1 != 1 {
		return errors.New("not a ZMTP greeting")
	}
	if g[10] < 3 {
		return fmt.Errorf("ZMTP version %d.%d, want 3.x", g[10], g[11])
	}
	if mech := string(bytes.TrimRight(g[12:32], "\x00")); mech != "NULL" {
		return fmt.Errorf("security mechanism %q, want NULL", mech)
	}
	return nil
}

// readyCommand is a READY command frame (flags, size, body) naming our
// socket type.
func readyCommand(socketType string) []byte {
	body := []byte{5}
	body = append(body, "READY"...)
	body = append(body, byte(len("Socket-Type")))
	body = append(body, "Socket-Type"...)
	body = binary.BigEndian.AppendUint32(body, uint32(len(socketType)))
	body = append(body, socketType...)
	return append([]byte{0x04, byte(len(body))}, body...)
}

// Frame flags (ZMTP 3.1 §"Framing").
const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// readFrameHeader reads a frame's flags and size.
func readFrameHeader(r io.Reader) (flags byte, size uint64, err error) {
	var h [9]byte
	if _, err := io.ReadFull(r, h[:2]); err != nil {
		return 0, 0, err
	}
	flags = h[0]
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return 0, 0, fmt.Errorf("frame flags %#x: reserved bits set", flags)
	}
	if flags&flagLong == 0 {
		return flags, uint64(h[1]), nil
	}
	if _, err := io.ReadFull(r, h[2:9]); err != nil {
		return 0, 0, err
	}
	return flags, binary.BigEndian.Uint64(h[1:9]), nil
}

// frameHeader is the header of a last (not more) message frame of n bytes.
func frameHeader(dst []byte, n int) []byte {
	if n <= 255 {
		return append(dst, 0, byte(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, flagLong), uint64(n))
}

// handshake sends our greeting and READY, reads the peer's, and checks that
// its socket type is want.
func handshake(c net.Conn, ours, want string) error {
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(append(greeting(), readyCommand(ours)...)); err != nil {
		return err
	}
	g := make([]byte, greetingSize)
	if _, err := io.ReadFull(c, g); err != nil {
		return fmt.Errorf("greeting: %w", err)
	}
	if err := checkGreeting(g); err != nil {
		return err
	}
	flags, size, err := readFrameHeader(c)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	if flags&flagCommand == 0 || size > 1024 {
		return errors.New("handshake: want a READY command of at most 1 KiB")
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	props, err := parseReady(body)
	if err != nil {
		return err
	}
	if got := props["Socket-Type"]; got != want {
		return fmt.Errorf("peer socket type %q, want %q", got, want)
	}
	return nil
}

// parseReady reads a READY command's properties.
func parseReady(b []byte) (map[string]string, error) {
	if len(b) < 6 || b[0] != 5 || string(b[1:6]) != "READY" {
		return nil, errors.New("handshake: not a READY command")
	}
	props := map[string]string{}
	for b = b[6:]; len(b) > 0; {
		n := int(b[0])
		if len(b) < 1+n+4 {
			return nil, errors.New("handshake: truncated READY property")
		}
		name := string(b[1 : 1+n])
		v := binary.BigEndian.Uint32(b[1+n:])
		b = b[1+n+4:]
		if uint64(v) > uint64(len(b)) {
			return nil, errors.New("handshake: truncated READY property value")
		}
		props[name] = string(b[:v])
		b = b[v:]
	}
	return props, nil
}

// splitEndpoint turns "tcp://host:port" or "ipc://path" into a network and
// an address.
func splitEndpoint(ep string) (network, addr string, err error) {
	switch {
	case strings.HasPrefix(ep, "tcp://"):
		return "tcp", strings.TrimPrefix(ep, "tcp://"), nil
	case strings.HasPrefix(ep, "ipc://"):
		p := strings.TrimPrefix(ep, "ipc://")
		if len(p) >= 108 {
			return "", "", fmt.Errorf("endpoint %q: an ipc path must be shorter than 108 bytes (a Unix socket's limit)", ep)
		}
		return "unix", p, nil
	}
	return "", "", fmt.Errorf("endpoint %q: want tcp://HOST:PORT or ipc://PATH", ep)
}

// ListenStats counts what a PULL socket refused.
type ListenStats struct {
	Frames     atomic.Uint64 // frames handed on
	Oversized  atomic.Uint64 // frames beyond the size limit (the connection is closed)
	Multipart  atomic.Uint64 // multi-part messages (dropped: trellis sends single frames)
	Handshakes atomic.Uint64 // connections refused at the handshake
	Refused    atomic.Uint64 // connections beyond the connection limit
	Closed     atomic.Uint64 // connections closed after an unacceptable frame
}

// Listener is a bound PULL socket: it accepts PUSH peers and hands each
// single-frame message to its handler, which must not block (it runs on
// the connection's goroutine) and says whether the frame was acceptable:
// a connection that delivers an unacceptable frame (garbage, a forgery)
// is closed, so a hostile peer cannot hold connection slots with junk;
// an honest Pusher reconnects when it next has something to send.
type Listener struct {
	ln       net.Listener
	maxFrame int
	maxConns int
	handle   func([]byte) bool
	Stats    ListenStats

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Listen binds a PULL socket at endpoint. Frames larger than maxFrame
// bytes close their connection; at most maxConns connections are served
// at once. An ipc:// endpoint's stale socket file is replaced.
func Listen(endpoint string, maxFrame, maxConns int, handle func(frame []byte) (ok bool)) (*Listener, error) {
	network, addr, err := splitEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if network == "unix" {
		_ = os.Remove(addr)
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, fmt.Errorf("binding %s: %w", endpoint, err)
	}
	l := &Listener{ln: ln, maxFrame: maxFrame, maxConns: maxConns, handle: handle, conns: map[net.Conn]struct{}{}}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Addr is the bound address (for tcp://HOST:0, the port chosen).
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

func (l *Listener) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors
			continue
		}
		l.mu.Lock()
		if l.conns == nil || len(l.conns) >= l.maxConns {
			l.mu.Unlock()
			l.Stats.Refused.Add(1)
			c.Close()
			continue
		}
		l.conns[c] = struct{}{}
		l.wg.Add(1)
		l.mu.Unlock()
		go l.serve(c)
	}
}

// serve reads one connection's messages until it closes or misbehaves.
func (l *Listener) serve(c net.Conn) {
	defer l.wg.Done()
	defer func() {
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
		c.Close()
	}()
	if err := handshake(c, "PULL", "PUSH"); err != nil {
		l.Stats.Handshakes.Add(1)
		return
	}
	multipart := false
	for {
		// A connection that delivers nothing for idleTimeout is closed
		// (its peer reconnects when it has something to say).
		_ = c.SetReadDeadline(time.Now().Add(idleTimeout))
		flags, size, err := readFrameHeader(c)
		if err != nil {
			return
		}
		if size > uint64(l.maxFrame) {
			l.Stats.Oversized.Add(1)
			return
		}
		// The body must come in time, and its buffer grows only as bytes
		// arrive: a peer that announces a large frame and sends nothing
		// holds no memory.
		_ = c.SetReadDeadline(time.Now().Add(minFrameTime + time.Duration(size>>20)*time.Second))
		body, err := readBody(c, int(size))
		if err != nil {
			return
		}
		_ = c.SetReadDeadline(time.Time{})
		switch {
		case flags&flagCommand != 0:
			// PING and other commands: nothing a PULL socket must answer.
		case flags&flagMore != 0:
			multipart = true
		case multipart:
			multipart = false
			l.Stats.Multipart.Add(1)
		default:
			l.Stats.Frames.Add(1)
			if !l.handle(body) {
				l.Stats.Closed.Add(1)
				return
			}
		}
	}
}

// readBody reads an n-byte frame body into a buffer that starts at 1 MiB
// at most and doubles as bytes arrive.
func readBody(r io.Reader, n int) ([]byte, error) {
	buf := make([]byte, 0, min(n, 1<<20))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, min(cap(buf), n-len(buf)))...)[:len(buf)]
		}
		k, err := r.Read(buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+k]
		if err != nil && len(buf) < n {
			return nil, err
		}
	}
	return buf, nil
}

// Close unbinds the socket, closes its connections and waits for their
// goroutines.
func (l *Listener) Close() error {
	err := l.ln.Close()
	l.mu.Lock()
	for c := range l.conns {
		c.Close()
	}
	l.conns = nil
	l.mu.Unlock()
	l.wg.Wait()
	return err
}

// Pusher is a PUSH connection to one peer's PULL socket with a bounded
// queue: Send never blocks; a frame that finds the queue full (the peer is
// slow, dead or not up yet beyond what the queue holds) is dropped and
// counted. It connects in the background, reconnects after an error and
// sends frames in the order queued.
type Pusher struct {
	endpoint   string
	q          chan []byte
	maxBytes   int64
	queued     atomic.Int64 // bytes in q
	Dropped    atomic.Uint64
	Sent       atomic.Uint64
	Reconnects atomic.Uint64
	closing    chan struct{} // no more frames: send what is queued
	stop       chan struct{} // give up on what is queued
	done       chan struct{}
	closeOnce  sync.Once
	mu         sync.Mutex
	conn       net.Conn
}

// Dial starts a PUSH connection to endpoint holding at most maxFrames
// frames and maxBytes bytes in its queue.
func Dial(endpoint string, maxFrames int, maxBytes int64) (*Pusher, error) {
	if _, _, err := splitEndpoint(endpoint); err != nil {
		return nil, err
	}
	p := &Pusher{endpoint: endpoint, q: make(chan []byte, maxFrames), maxBytes: maxBytes,
		closing: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p, nil
}

// Send queues frame (which the Pusher then owns), or drops it when the
// queue is full or the Pusher closed; it reports whether it was queued.
func (p *Pusher) Send(frame []byte) bool {
	select {
	case <-p.closing:
		p.Dropped.Add(1)
		return false
	default:
	}
	n := int64(len(frame))
	if p.queued.Add(n) > p.maxBytes {
		p.queued.Add(-n)
		p.Dropped.Add(1)
		return false
	}
	select {
	case p.q <- frame:
		return true
	default:
		p.queued.Add(-n)
		p.Dropped.Add(1)
		return false
	}
}

// Close sends what is queued for at most linger, then closes the
// connection and returns once the Pusher's goroutine ended.
func (p *Pusher) Close(linger time.Duration) {
	p.closeOnce.Do(func() {
		close(p.closing)
		select {
		case <-p.done:
			return
		case <-time.After(linger):
		}
		close(p.stop)
		p.mu.Lock()
		if p.conn != nil {
			p.conn.Close() // unblocks a write in progress
		}
		p.mu.Unlock()
		<-p.done
	})
}

func (p *Pusher) setConn(c net.Conn) {
	p.mu.Lock()
	p.conn = c
	p.mu.Unlock()
}

func (p *Pusher) run() {
	defer close(p.done)
	var conn net.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	stopped := func() bool {
		select {
		case <-p.stop:
			return true
		default:
			return false
		}
	}
	backoff := 10 * time.Millisecond
	var pending []byte
	for {
		if pending == nil {
			select {
			case pending = <-p.q:
				p.queued.Add(-int64(len(pending)))
			case <-p.closing:
				select {
				case pending = <-p.q:
					p.queued.Add(-int64(len(pending)))
				default:
					return // closing with nothing left to send
				}
			}
		}
		if stopped() {
			return
		}
		if conn == nil {
			c, err := p.connect()
			if err != nil {
				select {
				case <-time.After(backoff):
				case <-p.stop:
					return
				}
				backoff = min(2*backoff, 500*time.Millisecond)
				continue
			}
			conn, backoff = c, 10*time.Millisecond
			p.setConn(c)
		}
		hdr := frameHeader(make([]byte, 0, 9), len(pending))
		_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		bufs := net.Buffers{hdr, pending}
		if _, err := bufs.WriteTo(conn); err != nil {
			// The peer went away (or stalled): reconnect and send the frame
			// again; a receiver refuses a duplicate as a replay.
			conn.Close()
			conn = nil
			p.setConn(nil)
			p.Reconnects.Add(1)
			continue
		}
		p.Sent.Add(1)
		pending = nil
	}
}

// connect dials and completes the handshake; a reader goroutine discards
// what the peer sends (ZMTP commands) and closes the connection when the
// peer does, so the next write fails at once.
func (p *Pusher) connect() (net.Conn, error) {
	network, addr, _ := splitEndpoint(p.endpoint)
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	if err := handshake(c, "PUSH", "PULL"); err != nil {
		c.Close()
		return nil, err
	}
	go func() {
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}()
	return c, nil
}
