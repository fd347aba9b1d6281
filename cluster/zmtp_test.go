package cluster

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func sockDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "zt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// collector gathers the frames a Listener hands on.
type collector struct {
	mu     sync.Mutex
	frames [][]byte
	got    chan struct{}
}

func newCollector() *collector { return &collector{got: make(chan struct{}, 1024)} }

func (c *collector) handle(b []byte) bool {
	c.mu.Lock()
	c.frames = append(c.frames, b)
	c.mu.Unlock()
	select {
	case c.got <- struct{}{}:
	default:
	}
	return true
}

func (c *collector) waitFor(t *testing.T, n int) [][]byte {
	t.Helper()
	deadline := time.After(2 * time.Minute) // a hang guard
	for {
		c.mu.Lock()
		if len(c.frames) >= n {
			f := c.frames
			c.mu.Unlock()
			return f
		}
		c.mu.Unlock()
		select {
		case <-c.got:
		case <-deadline:
			t.Fatalf("%d of %d frames arrived", len(c.frames), n)
		}
	}
}

// TestPushPull: frames of every size class arrive in order and intact,
// over IPC and TCP, with the NULL and the CURVE mechanism.
func TestPushPull(t *testing.T) {
	server, client := newCurveKey(t), newCurveKey(t)
	for _, tc := range []struct {
		ep     string
		server *CurveServer
		client *CurveClient
	}{
		{"ipc://" + filepath.Join(sockDir(t), "a.sock"), nil, nil},
		{"tcp://127.0.0.1:0", nil, nil},
		{"ipc://" + filepath.Join(sockDir(t), "b.sock"), &CurveServer{Key: server, Allow: allowOnly(client)}, &CurveClient{Key: client, Server: server.Public}},
		{"tcp://127.0.0.1:0", &CurveServer{Key: server, Allow: allowOnly(client)}, &CurveClient{Key: client, Server: server.Public}},
	} {
		ep := tc.ep
		col := newCollector()
		l, err := ListenCurve(ep, 1<<20, 4, tc.server, col.handle)
		if err != nil {
			t.Fatal(err)
		}
		if ep[:3] == "tcp" {
			ep = "tcp://" + l.Addr().String()
		}
		p, err := DialCurve(ep, 16, 1<<24, tc.client)
		if err != nil {
			t.Fatal(err)
		}
		sizes := []int{1, 255, 256, 70000, 1 << 20}
		for k, n := range sizes {
			p.Send(bytes.Repeat([]byte{byte(k + 1)}, n))
		}
		got := col.waitFor(t, len(sizes))
		for k, n := range sizes {
			if !bytes.Equal(got[k], bytes.Repeat([]byte{byte(k + 1)}, n)) {
				t.Errorf("%s: frame %d: %d bytes, want %d of %d", ep, k, len(got[k]), n, k+1)
			}
		}
		if h := l.Stats.Handshakes.Load() + p.Handshakes.Load(); h != 0 {
			t.Errorf("%s: %d failed handshakes", ep, h)
		}
		p.Close(time.Second)
		l.Close()
	}
}

// TestPusherBoundedAndReconnects: sending to a peer that is not up never
// blocks (a full queue drops and counts); what was queued arrives once the
// peer binds, and again after the peer restarts on the same endpoint; a
// dead peer does not hold up sending to a live one.
func TestPusherBoundedAndReconnects(t *testing.T) {
	dir := sockDir(t)
	ep := "ipc://" + filepath.Join(dir, "late.sock")
	p, err := Dial(ep, 8, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	dead, err := Dial("ipc://"+filepath.Join(dir, "never.sock"), 8, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close(0)
	for k := range 100 {
		p.Send([]byte{byte(k)})
		dead.Send([]byte{byte(k)}) // returns at once whatever happens
	}
	if d := dead.Dropped.Load(); d < 90 {
		t.Errorf("dead peer: %d of 100 frames dropped, want all but the queue's", d)
	}
	col := newCollector()
	l, err := Listen(ep, 1<<20, 4, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	queued := 100 - int(p.Dropped.Load())
	first := col.waitFor(t, queued)
	for k, f := range first {
		// The frames that found room in the queue, in the order sent.
		if len(f) != 1 || k == 0 && f[0] != 0 || k > 0 && f[0] <= first[k-1][0] {
			t.Fatalf("frames %v: want the queued ones in the order sent, from 0", first)
		}
	}
	// The peer restarts: a frame sent after it is up again arrives.
	l.Close()
	col2 := newCollector()
	l2, err := Listen(ep, 1<<20, 4, col2.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	for range 3 { // the first write after the restart may meet the old connection
		p.Send([]byte("after restart"))
	}
	got := col2.waitFor(t, 1)
	if !bytes.Equal(got[0], []byte("after restart")) {
		t.Errorf("after the restart got %q", got[0])
	}
}

// TestListenerRefusesExtraConnections: beyond its connection limit a
// Listener closes new connections instead of serving them.
func TestListenerRefusesExtraConnections(t *testing.T) {
	ep := "ipc://" + filepath.Join(sockDir(t), "c.sock")
	col := newCollector()
	l, err := Listen(ep, 1<<10, 1, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a := rawPush(t, ep)
	defer a.Close()
	network, addr, _ := splitEndpoint(ep)
	if b, err := net.Dial(network, addr); err == nil {
		defer b.Close()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for l.Stats.Refused.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if l.Stats.Refused.Load() == 0 {
		t.Error("a second connection was served beyond the limit of 1")
	}
}

// A Unix socket in a directory that does not exist: the error says which
// directory and to create it.
func TestListenNamesAMissingSocketDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sockets")
	_, err := Listen("ipc://"+filepath.Join(dir, "node-0.sock"), 1<<16, 4, func([]byte) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "mkdir -p "+dir) {
		t.Fatalf("got %v, want an error saying to create %s", err, dir)
	}
}
