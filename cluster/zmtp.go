package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ZMTP 3.1 (rfc.zeromq.org/spec/37), the subset trellis speaks: the NULL
// and CURVE (curve.go) security mechanisms and the PUSH → PULL pattern,
// over tcp:// and ipc:// (a Unix stream socket). A node binds one PULL socket; it keeps one PUSH
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

// greeting is our 64-byte ZMTP greeting: signature, version 3.1, the
// mechanism, as-server (NULL ignores it), filler.
func greeting(mechanism string, asServer bool) []byte {
	g := make([]byte, greetingSize)
	g[0], g[9], g[10], g[11] = 0xFF, 0x7F, 3, 1
	copy(g[12:32], mechanism)
	if asServer {
		g[32] = 1
	}
	return g
}

// checkGreeting checks a peer's greeting: the signature, major version 3
// or later, our mechanism.
func checkGreeting(g []byte, mechanism string) error {
	if g[0] != 0xFF || g[9]&1 != 1 {
		return errors.New("not a ZMTP greeting")
	}
	if g[10] < 3 {
		return fmt.Errorf("ZMTP version %d.%d, want 3.x", g[10], g[11])
	}
	if mech := string(bytes.TrimRight(g[12:32], "\x00")); mech != mechanism {
		return fmt.Errorf("the peer's security mechanism is %q, ours %q (both ends need the same encryption setting)", mech, mechanism)
	}
	return nil
}

// readGreeting reads the peer's greeting and checks it names mechanism.
func readGreeting(c io.Reader, mechanism string) error {
	g := make([]byte, greetingSize)
	if _, err := io.ReadFull(c, g); err != nil {
		return fmt.Errorf("greeting: %w", err)
	}
	return checkGreeting(g, mechanism)
}

// readyCommand is a READY command frame (flags, size, body) naming our
// socket type.
func readyCommand(socketType string) []byte {
	body := append([]byte("\x05READY"), socketTypeProperty(socketType)...)
	return append([]byte{0x04, byte(len(body))}, body...)
}

// socketTypeProperty is the ZMTP metadata property naming our socket
// type.
func socketTypeProperty(socketType string) []byte {
	b := append([]byte{byte(len("Socket-Type"))}, "Socket-Type"...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(socketType)))
	return append(b, socketType...)
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
	if _, err := c.Write(append(greeting("NULL", false), readyCommand(ours)...)); err != nil {
		return err
	}
	if err := readGreeting(c, "NULL"); err != nil {
		return err
	}
	body, err := readCommand(c, "READY")
	if err != nil {
		return err
	}
	if len(body) < 6 || string(body[:6]) != "\x05READY" {
		return errors.New("handshake: not a READY command")
	}
	return checkSocketType(body[6:], want)
}

// parseProperties reads ZMTP metadata (a READY command's, or CURVE's
// INITIATE and READY boxes').
func parseProperties(b []byte) (map[string]string, error) {
	props := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+4 {
			return nil, errors.New("handshake: truncated metadata property")
		}
		name := string(b[1 : 1+n])
		v := binary.BigEndian.Uint32(b[1+n:])
		b = b[1+n+4:]
		if uint64(v) > uint64(len(b)) {
			return nil, errors.New("handshake: truncated metadata property value")
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
	// Undecryptable counts CURVE frames that did not authenticate (the
	// connection is closed).
	Undecryptable atomic.Uint64
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
	curve    *CurveServer // nil: the NULL mechanism
	refusals rateLimited
	Stats    ListenStats

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Listen binds a PULL socket at endpoint with the NULL mechanism. Frames
// larger than maxFrame bytes close their connection; at most maxConns
// connections are served at once. An ipc:// endpoint's stale socket file
// is replaced.
func Listen(endpoint string, maxFrame, maxConns int, handle func(frame []byte) (ok bool)) (*Listener, error) {
	return ListenCurve(endpoint, maxFrame, maxConns, nil, handle)
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// ListenCurve is Listen with the CURVE mechanism as its server (curve
// nil: NULL): a client whose key curve.Allow refuses, or whose handshake
// fails, is counted in Stats.Handshakes and closed.
func ListenCurve(endpoint string, maxFrame, maxConns int, curve *CurveServer, handle func(frame []byte) (ok bool)) (*Listener, error) {
	network, addr, err := splitEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if network == "unix" {
		_ = os.Remove(addr)
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		if dir := filepath.Dir(addr); network == "unix" && !isDir(dir) {
			return nil, fmt.Errorf("binding %s: the socket's directory %s does not exist: create it (mkdir -p %s) before starting the processes that use it", endpoint, dir, dir)
		}
		return nil, fmt.Errorf("binding %s: %w", endpoint, err)
	}
	l := &Listener{ln: ln, maxFrame: maxFrame, maxConns: maxConns, handle: handle, curve: curve, conns: map[net.Conn]struct{}{}}
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
	var sess *curveSession
	var err error
	maxSize := uint64(l.maxFrame)
	if l.curve != nil {
		sess, err = curveServerHandshake(c, l.curve, "PULL", "PUSH")
		maxSize += curveOverhead
	} else {
		err = handshake(c, "PULL", "PUSH")
	}
	if err != nil {
		l.Stats.Handshakes.Add(1)
		if l.curve != nil && l.curve.Log != nil && l.refusals.allow() {
			l.curve.Log.Warn("refused a connection at the handshake", "from", c.RemoteAddr().String(), "err", err)
		}
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
		if size > maxSize {
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
		if sess != nil {
			// Every frame after a CURVE handshake is a MESSAGE, whatever
			// its flags say; its own flags are inside the box.
			if flags, body, err = sess.open(body); err != nil {
				l.Stats.Undecryptable.Add(1)
				return
			}
		}
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
	curve      *CurveClient // nil: the NULL mechanism
	q          chan []byte
	maxBytes   int64
	queued     atomic.Int64 // bytes in q
	Dropped    atomic.Uint64
	Sent       atomic.Uint64
	Reconnects atomic.Uint64
	// Handshakes counts failed handshakes (a wrong server key, another
	// mechanism, a peer that is not a PULL socket).
	Handshakes atomic.Uint64
	lastErr    string        // the last handshake error logged
	closing    chan struct{} // no more frames: send what is queued
	stop       chan struct{} // give up on what is queued
	done       chan struct{}
	closeOnce  sync.Once
	mu         sync.Mutex
	conn       net.Conn
}

// Dial starts a PUSH connection to endpoint holding at most maxFrames
// frames and maxBytes bytes in its queue, with the NULL mechanism.
func Dial(endpoint string, maxFrames int, maxBytes int64) (*Pusher, error) {
	return DialCurve(endpoint, maxFrames, maxBytes, nil)
}

// DialCurve is Dial with the CURVE mechanism as its client (curve nil:
// NULL). A server that fails the handshake (it does not hold the key
// curve.Server) is retried with backoff, as a server that is down.
func DialCurve(endpoint string, maxFrames int, maxBytes int64, curve *CurveClient) (*Pusher, error) {
	if _, _, err := splitEndpoint(endpoint); err != nil {
		return nil, err
	}
	p := &Pusher{endpoint: endpoint, curve: curve, q: make(chan []byte, maxFrames), maxBytes: maxBytes,
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
	var sess *curveSession
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
			c, s, err := p.connect()
			if err != nil {
				select {
				case <-time.After(backoff):
				case <-p.stop:
					return
				}
				backoff = min(2*backoff, 500*time.Millisecond)
				continue
			}
			conn, sess, backoff = c, s, 10*time.Millisecond
			p.setConn(c)
		}
		out := pending
		if sess != nil {
			out = sess.seal(pending)
		}
		hdr := frameHeader(make([]byte, 0, 9), len(out))
		_ = conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		bufs := net.Buffers{hdr, out}
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
func (p *Pusher) connect() (net.Conn, *curveSession, error) {
	network, addr, _ := splitEndpoint(p.endpoint)
	c, err := net.DialTimeout(network, addr, 2*time.Second)
	if err != nil {
		return nil, nil, err
	}
	var sess *curveSession
	if p.curve != nil {
		sess, err = curveClientHandshake(c, p.curve, "PUSH", "PULL")
	} else {
		err = handshake(c, "PUSH", "PULL")
	}
	if err != nil {
		c.Close()
		p.Handshakes.Add(1)
		if p.curve != nil && p.curve.Log != nil && err.Error() != p.lastErr {
			p.lastErr = err.Error() // a run of the same failure is logged once
			p.curve.Log.Warn("handshake failed", "endpoint", p.endpoint, "err", err)
		}
		return nil, nil, err
	}
	p.lastErr = ""
	go func() {
		_, _ = io.Copy(io.Discard, c)
		c.Close()
	}()
	return c, sess, nil
}
