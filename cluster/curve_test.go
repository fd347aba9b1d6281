package cluster

import (
	"bytes"
	"crypto/rand"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/nacl/box"

	"github.com/trellis-fl/trellis/wire"
)

// newCurveKey is a fresh CURVE key pair.
func newCurveKey(t testing.TB) CurveKey {
	t.Helper()
	pub, sec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return CurveKey{Public: *pub, Secret: *sec}
}

// allowOnly lets in the clients with one of keys.
func allowOnly(keys ...CurveKey) func([32]byte) bool {
	return func(c [32]byte) bool {
		for _, k := range keys {
			if k.Public == c {
				return true
			}
		}
		return false
	}
}

// TestCurveRefusals: a client given the wrong server key, a client whose
// key the server does not allow, and a client on the NULL mechanism each
// fail the handshake (counted on both sides) and deliver nothing; the
// server goes on serving an allowed client.
func TestCurveRefusals(t *testing.T) {
	server, client, stranger := newCurveKey(t), newCurveKey(t), newCurveKey(t)
	col := newCollector()
	l, err := ListenCurve("tcp://127.0.0.1:0", 1<<10, 8, &CurveServer{Key: server, Allow: allowOnly(client)}, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ep := "tcp://" + l.Addr().String()
	for _, tc := range []struct {
		name  string
		curve *CurveClient
	}{
		{"wrong server key", &CurveClient{Key: client, Server: stranger.Public}},
		{"client not allowed", &CurveClient{Key: stranger, Server: server.Public}},
		{"NULL mechanism", nil},
	} {
		before := l.Stats.Handshakes.Load()
		p, err := DialCurve(ep, 4, 1<<20, tc.curve)
		if err != nil {
			t.Fatal(err)
		}
		p.Send([]byte("let me in"))
		deadline := time.Now().Add(2 * time.Minute) // a hang guard
		for (l.Stats.Handshakes.Load() == before || p.Handshakes.Load() == 0) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		p.Close(0)
		if l.Stats.Handshakes.Load() == before || p.Handshakes.Load() == 0 {
			t.Errorf("%s: server counted %d refusals, client %d failures; want both", tc.name, l.Stats.Handshakes.Load()-before, p.Handshakes.Load())
		}
	}
	p, err := DialCurve(ep, 4, 1<<20, &CurveClient{Key: client, Server: server.Public})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(time.Second)
	p.Send([]byte("hello"))
	if got := col.waitFor(t, 1); len(got) != 1 || string(got[0]) != "hello" {
		t.Errorf("frames %q, want only the allowed client's", got)
	}
}

// TestCurveClientHandshakeErrors: what the client reports when the server
// refuses it (libzmq's ERROR command) or holds another key.
func TestCurveClientHandshakeErrors(t *testing.T) {
	server, client, stranger := newCurveKey(t), newCurveKey(t), newCurveKey(t)
	for _, tc := range []struct {
		name      string
		serverKey CurveKey
		client    CurveClient
		want      string
	}{
		{"refused", server, CurveClient{Key: stranger, Server: server.Public}, "not in the peers file"},
		{"wrong key", server, CurveClient{Key: client, Server: stranger.Public}, "EOF"}, // the server hangs up
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 1)
		go func() {
			a, err := ln.Accept()
			if err == nil {
				_, err = curveServerHandshake(a, &CurveServer{Key: tc.serverKey, Allow: allowOnly(client)}, "PULL", "PUSH")
				a.Close()
			}
			errs <- err
		}()
		b, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, err = curveClientHandshake(b, &tc.client, "PUSH", "PULL")
		b.Close()
		ln.Close()
		serr := <-errs
		if err == nil || serr == nil {
			t.Fatalf("%s: client error %v, server error %v; want both to fail", tc.name, err, serr)
		}
		t.Logf("%s: client: %v; server: %v", tc.name, err, serr)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: client error %q, want it to say %q", tc.name, err, tc.want)
		}
	}
}

// TestCurveSessionRefusesReplaysAndTampering: a MESSAGE is accepted once,
// in nonce order; a replayed, reordered or altered one is refused.
func TestCurveSessionRefusesReplaysAndTampering(t *testing.T) {
	k := newCurveKey(t)
	peer := newCurveKey(t)
	send := &curveSession{sendPrefix: clientMsgNonce}
	recv := &curveSession{recvPrefix: clientMsgNonce}
	box.Precompute(&send.shared, &peer.Public, &k.Secret)
	box.Precompute(&recv.shared, &k.Public, &peer.Secret)
	m1 := bytes.Clone(send.seal([]byte("first")))
	m2 := bytes.Clone(send.seal([]byte("second")))
	bad := bytes.Clone(m2)
	bad[len(bad)-1] ^= 1
	if _, _, err := recv.open(bytes.Clone(bad)); err == nil {
		t.Error("an altered MESSAGE was accepted")
	}
	if _, d, err := recv.open(bytes.Clone(m1)); err != nil || string(d) != "first" {
		t.Fatalf("first MESSAGE: %q, %v", d, err)
	}
	if _, _, err := recv.open(bytes.Clone(m1)); err == nil {
		t.Error("a replayed MESSAGE was accepted")
	}
	if _, d, err := recv.open(bytes.Clone(m2)); err != nil || string(d) != "second" {
		t.Fatalf("second MESSAGE: %q, %v", d, err)
	}
	if _, _, err := recv.open(bytes.Clone(m1)); err == nil {
		t.Error("an older MESSAGE was accepted after a newer one")
	}
}

// TestCurveKeyOfIdentity: a node's CURVE key pair is its Ed25519 key's,
// and its public half is what its peers derive from the peers file.
func TestCurveKeyOfIdentity(t *testing.T) {
	ids, dir := wire.SimIdentities(3, 2)
	k := CurveKeyOf(ids[1])
	pub, _ := dir.Key(1)
	want, err := wire.CurvePublic(pub)
	if err != nil || want != k.Public {
		t.Errorf("public key %x, derived from the directory %x (%v)", k.Public, want, err)
	}
}

// pipeConn is a connection whose peer sends the bytes of r and ignores
// what it is sent: the handshakes' fuzzing harness.
type pipeConn struct {
	net.Conn
	r io.Reader
}

func (c pipeConn) Read(b []byte) (int, error)      { return c.r.Read(b) }
func (c pipeConn) Write(b []byte) (int, error)     { return len(b), nil }
func (c pipeConn) SetDeadline(time.Time) error     { return nil }
func (c pipeConn) SetReadDeadline(time.Time) error { return nil }
func (c pipeConn) RemoteAddr() net.Addr            { return &net.TCPAddr{} }
func (pipeConn) Close() error                      { return nil }
func (pipeConn) SetWriteDeadline(time.Time) error  { return nil }

// FuzzCurveHandshake: whatever a peer sends during the CURVE handshake,
// or as a MESSAGE after it, both sides return (an error) without
// panicking, and nothing unauthenticated gets through.
func FuzzCurveHandshake(f *testing.F) {
	server, client := newCurveKey(f), newCurveKey(f)
	var hello bytes.Buffer
	hello.Write(greeting("CURVE", false))
	hello.Write([]byte{flagCommand, helloSize, 5, 'H', 'E', 'L', 'L', 'O', 1, 0})
	hello.Write(make([]byte, helloSize-8))
	var welcome bytes.Buffer
	welcome.Write(greeting("CURVE", true))
	welcome.Write([]byte{flagCommand, welcomeSize, 7, 'W', 'E', 'L', 'C', 'O', 'M', 'E'})
	welcome.Write(make([]byte, welcomeSize-8))
	for _, b := range [][]byte{hello.Bytes(), welcome.Bytes(), greeting("CURVE", true), greeting("NULL", false),
		append(greeting("CURVE", true), errorCommand("no")...), nil} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := curveServerHandshake(pipeConn{r: bytes.NewReader(b)}, &CurveServer{Key: server, Allow: allowOnly(client)}, "PULL", "PUSH"); err == nil {
			t.Fatalf("a server handshake succeeded on fuzzed bytes: %+v", s)
		}
		if s, err := curveClientHandshake(pipeConn{r: bytes.NewReader(b)}, &CurveClient{Key: client, Server: server.Public}, "PUSH", "PULL"); err == nil {
			t.Fatalf("a client handshake succeeded on fuzzed bytes: %+v", s)
		}
		sess := &curveSession{recvPrefix: clientMsgNonce}
		if _, _, err := sess.open(bytes.Clone(b)); err == nil {
			t.Fatal("a fuzzed MESSAGE authenticated")
		}
	})
}
