package cluster

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/nacl/box"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/trellis-fl/trellis/wire"
)

// The CURVE security mechanism of ZMTP 3 (CurveZMQ, as libzmq speaks it):
// the client, which knows the server's long-term public key S, and the
// server exchange short-term keys (C′, S′) in HELLO and WELCOME, the
// client proves its long-term key C in INITIATE (a vouch: C′ and S
// boxed from C to S′), the server answers READY, and every frame after
// that is a MESSAGE: a NaCl box (XSalsa20-Poly1305) from one short-term
// key to the other, under a nonce that must grow. All primitives are
// golang.org/x/crypto's nacl/box and nacl/secretbox; this file only lays
// out the commands.
//
// What it gives a trellis link: a peer on the path reads nothing (models
// included) and can change nothing undetected; a server accepts only the
// long-term keys it allows (the nodes of the peers file), and a client
// completes the handshake only with the holder of the server key it was
// given (its peers file entry), so a connection slot can no longer be
// taken by a process without a node's key. Forward secrecy: the
// short-term keys are fresh per connection and dropped with it.

// CurveKey is a long-term CURVE key pair (X25519).
type CurveKey struct{ Public, Secret [32]byte }

// CurveKeyOf is the CURVE key pair of a node's Ed25519 identity
// (wire.Identity.CurveSecret).
func CurveKeyOf(id *wire.Identity) CurveKey {
	k := CurveKey{Secret: id.CurveSecret()}
	curve25519.ScalarBaseMult(&k.Public, &k.Secret)
	return k
}

// CurveServer secures a Listener with CURVE.
type CurveServer struct {
	Key CurveKey
	// Allow says whether a client's long-term public key may connect.
	Allow func(client [32]byte) bool
	// Log, when set, receives refused handshakes (at most one a second).
	Log *slog.Logger
}

// CurveClient secures a Pusher with CURVE.
type CurveClient struct {
	Key CurveKey
	// Server is the long-term public key of the server dialled.
	Server [32]byte
	// Log, when set, receives failed handshakes (the first of a run of
	// failures with the same error).
	Log *slog.Logger
}

// Sizes of the CURVE commands' bodies (name length byte and name
// included) and of a MESSAGE's overhead.
const (
	helloSize      = 200
	welcomeSize    = 168
	cookieSize     = 96
	initiateMin    = 257
	curveOverhead  = 8 + 8 + box.Overhead + 1 // "\x07MESSAGE", nonce, tag, flags
	maxCommandSize = 4096
)

// The nonce prefixes of CurveZMQ (RFC 26).
const (
	helloPrefix    = "CurveZMQHELLO---"
	welcomePrefix  = "WELCOME-"
	cookiePrefix   = "COOKIE--"
	initiatePrefix = "CurveZMQINITIATE"
	vouchPrefix    = "VOUCH---"
	readyPrefix    = "CurveZMQREADY---"
	clientMsgNonce = "CurveZMQMESSAGEC"
	serverMsgNonce = "CurveZMQMESSAGES"
)

// shortNonce is a 24-byte nonce of a 16-byte prefix and a big-endian
// counter.
func shortNonce(prefix string, n uint64) *[24]byte {
	var b [24]byte
	copy(b[:], prefix)
	binary.BigEndian.PutUint64(b[16:], n)
	return &b
}

// longNonce is a 24-byte nonce of an 8-byte prefix and 16 random bytes.
func longNonce(prefix string) (*[24]byte, error) {
	var b [24]byte
	copy(b[:], prefix)
	_, err := rand.Read(b[8:])
	return &b, err
}

func nonceFrom(prefix string, tail []byte) *[24]byte {
	var b [24]byte
	copy(b[:], prefix)
	copy(b[len(prefix):], tail)
	return &b
}

// curveSession encrypts and decrypts the frames of one connection once
// the handshake is done.
type curveSession struct {
	shared     [32]byte // box.Precompute of the peer's short-term key and ours
	sendPrefix string
	recvPrefix string
	sendNonce  uint64
	recvNonce  uint64 // the last nonce received: the next must be larger
	pt, out    []byte // seal's buffers, reused: a frame is written before the next is sealed
}

// seal is frame as a MESSAGE command's body (more and command flags
// clear), len(frame)+curveOverhead bytes, valid until the next seal.
// (NaCl's boxes do not work in place: the plaintext is one copy, the box
// another; both buffers are kept for the next frame.)
func (s *curveSession) seal(frame []byte) []byte {
	s.sendNonce++
	s.pt = append(append(s.pt[:0], 0), frame...) // the flags byte, then the frame
	s.out = append(s.out[:0], "\x07MESSAGE"...)
	s.out = binary.BigEndian.AppendUint64(s.out, s.sendNonce)
	s.out = box.SealAfterPrecomputation(s.out, s.pt, shortNonce(s.sendPrefix, s.sendNonce), &s.shared)
	return s.out
}

// open decrypts a MESSAGE body and returns its flags (ZMTP's
// more and command bits) and data; a body that is not a MESSAGE, does not
// authenticate or repeats an old nonce is an error.
func (s *curveSession) open(body []byte) (flags byte, data []byte, err error) {
	if len(body) < curveOverhead || string(body[:8]) != "\x07MESSAGE" {
		return 0, nil, errors.New("CURVE: not a MESSAGE")
	}
	n := binary.BigEndian.Uint64(body[8:])
	if n <= s.recvNonce {
		return 0, nil, errors.New("CURVE: a MESSAGE nonce did not grow (a replay)")
	}
	pt, ok := box.OpenAfterPrecomputation(nil, body[16:], shortNonce(s.recvPrefix, n), &s.shared)
	if !ok {
		return 0, nil, errors.New("CURVE: a MESSAGE did not authenticate")
	}
	s.recvNonce = n
	var f byte
	if pt[0]&0x01 != 0 {
		f |= flagMore
	}
	if pt[0]&0x02 != 0 {
		f |= flagCommand
	}
	return f, pt[1:], nil
}

// writeCommand writes body as one command frame.
func writeCommand(c net.Conn, body []byte) error {
	hdr := []byte{flagCommand, byte(len(body))}
	if len(body) > 255 {
		hdr = binary.BigEndian.AppendUint64([]byte{flagCommand | flagLong}, uint64(len(body)))
	}
	_, err := c.Write(append(hdr, body...))
	return err
}

// readCommand reads one command frame of at most maxCommandSize bytes;
// an ERROR command is returned as an error with the peer's reason.
func readCommand(c net.Conn, what string) ([]byte, error) {
	flags, size, err := readFrameHeader(c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if flags&flagCommand == 0 || size > maxCommandSize {
		return nil, fmt.Errorf("want a %s command of at most %d bytes", what, maxCommandSize)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(body) >= 7 && string(body[:6]) == "\x05ERROR" {
		n := min(int(body[6]), len(body)-7)
		return nil, fmt.Errorf("the peer refused the handshake: %q", body[7:7+n])
	}
	return body, nil
}

// errorCommand is an ERROR command's body.
func errorCommand(reason string) []byte {
	return append([]byte{5, 'E', 'R', 'R', 'O', 'R', byte(len(reason))}, reason...)
}

// exchangeGreetings sends our CURVE greeting and checks that the peer's
// speaks CURVE. (Its as-server bit is not checked: libzmq leaves it 0 on
// both sides; a role mismatch fails at HELLO.)
func exchangeGreetings(c net.Conn, asServer bool) error {
	if _, err := c.Write(greeting("CURVE", asServer)); err != nil {
		return err
	}
	return readGreeting(c, "CURVE")
}

// curveClientHandshake runs the client's side: HELLO, WELCOME, INITIATE
// (with our socket type), READY (whose socket type must be want).
func curveClientHandshake(c net.Conn, k *CurveClient, ours, want string) (*curveSession, error) {
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	if err := exchangeGreetings(c, false); err != nil {
		return nil, err
	}
	cPub, cSec, err := box.GenerateKey(rand.Reader) // C′, c′
	if err != nil {
		return nil, err
	}
	// HELLO: version 1.0, 72 bytes of padding (anti-amplification), C′,
	// nonce 1, and 64 zero bytes boxed from C′ to S.
	hello := make([]byte, 0, helloSize)
	hello = append(hello, "\x05HELLO\x01\x00"...)
	hello = append(hello, make([]byte, 72)...)
	hello = append(hello, cPub[:]...)
	hello = binary.BigEndian.AppendUint64(hello, 1)
	hello = box.Seal(hello, make([]byte, 64), shortNonce(helloPrefix, 1), &k.Server, cSec)
	if err := writeCommand(c, hello); err != nil {
		return nil, err
	}
	welcome, err := readCommand(c, "WELCOME")
	if err != nil {
		return nil, err
	}
	if len(welcome) != welcomeSize || string(welcome[:8]) != "\x07WELCOME" {
		return nil, errors.New("CURVE: want a WELCOME command")
	}
	wpt, ok := box.Open(nil, welcome[24:], nonceFrom(welcomePrefix, welcome[8:24]), &k.Server, cSec)
	if !ok {
		return nil, errors.New("CURVE: the server's WELCOME does not open with the server key given for it (the peers file's key is not the server's)")
	}
	var sPub [32]byte // S′
	copy(sPub[:], wpt[:32])
	cookie := wpt[32:]
	// INITIATE: the cookie, nonce 2, and boxed from C′ to S′: C, the
	// vouch (C′ and S boxed from C to S′) and our metadata.
	vn, err := longNonce(vouchPrefix)
	if err != nil {
		return nil, err
	}
	vouch := box.Seal(nil, append(append([]byte{}, cPub[:]...), k.Server[:]...), vn, &sPub, &k.Key.Secret)
	pt := append(append([]byte{}, k.Key.Public[:]...), vn[8:]...)
	pt = append(append(pt, vouch...), socketTypeProperty(ours)...)
	initiate := append([]byte("\x08INITIATE"), cookie...)
	initiate = binary.BigEndian.AppendUint64(initiate, 2)
	initiate = box.Seal(initiate, pt, shortNonce(initiatePrefix, 2), &sPub, cSec)
	if err := writeCommand(c, initiate); err != nil {
		return nil, err
	}
	ready, err := readCommand(c, "READY")
	if err != nil {
		return nil, err
	}
	if len(ready) < 14+box.Overhead || string(ready[:6]) != "\x05READY" {
		return nil, errors.New("CURVE: want a READY command")
	}
	rn := binary.BigEndian.Uint64(ready[6:])
	meta, ok := box.Open(nil, ready[14:], shortNonce(readyPrefix, rn), &sPub, cSec)
	if !ok {
		return nil, errors.New("CURVE: the server's READY does not authenticate")
	}
	if err := checkSocketType(meta, want); err != nil {
		return nil, err
	}
	s := &curveSession{sendPrefix: clientMsgNonce, recvPrefix: serverMsgNonce, sendNonce: 2, recvNonce: rn}
	box.Precompute(&s.shared, &sPub, cSec)
	return s, nil
}

// curveServerHandshake runs the server's side: HELLO, WELCOME (a cookie
// holding our short-term secret, so that the server's state lives in the
// client until INITIATE), INITIATE (its client key must be allowed, its
// vouch valid and its socket type want), READY.
func curveServerHandshake(c net.Conn, k *CurveServer, ours, want string) (*curveSession, error) {
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	defer c.SetDeadline(time.Time{})
	if err := exchangeGreetings(c, true); err != nil {
		return nil, err
	}
	hello, err := readCommand(c, "HELLO")
	if err != nil {
		return nil, err
	}
	if len(hello) != helloSize || string(hello[:6]) != "\x05HELLO" {
		return nil, errors.New("CURVE: want a HELLO command of 200 bytes")
	}
	if hello[6] != 1 || hello[7] != 0 {
		return nil, fmt.Errorf("CURVE: HELLO version %d.%d, want 1.0", hello[6], hello[7])
	}
	var cPub [32]byte // C′
	copy(cPub[:], hello[80:112])
	if _, ok := box.Open(nil, hello[120:], nonceFrom(helloPrefix, hello[112:120]), &cPub, &k.Key.Secret); !ok {
		return nil, errors.New("CURVE: the client's HELLO does not open with our key (the client was given another server key)")
	}
	sPub, sSec, err := box.GenerateKey(rand.Reader) // S′, s′
	if err != nil {
		return nil, err
	}
	var cookieKey [32]byte
	if _, err := rand.Read(cookieKey[:]); err != nil {
		return nil, err
	}
	cn, err := longNonce(cookiePrefix)
	if err != nil {
		return nil, err
	}
	cookie := secretbox.Seal(append([]byte{}, cn[8:]...), append(append([]byte{}, cPub[:]...), sSec[:]...), cn, &cookieKey)
	wn, err := longNonce(welcomePrefix)
	if err != nil {
		return nil, err
	}
	welcome := append([]byte("\x07WELCOME"), wn[8:]...)
	welcome = box.Seal(welcome, append(append([]byte{}, sPub[:]...), cookie...), wn, &cPub, &k.Key.Secret)
	if err := writeCommand(c, welcome); err != nil {
		return nil, err
	}
	initiate, err := readCommand(c, "INITIATE")
	if err != nil {
		return nil, err
	}
	if len(initiate) < initiateMin || string(initiate[:9]) != "\x08INITIATE" {
		return nil, errors.New("CURVE: want an INITIATE command")
	}
	ck, ok := secretbox.Open(nil, initiate[25:105], nonceFrom(cookiePrefix, initiate[9:25]), &cookieKey)
	if !ok || subtle.ConstantTimeCompare(ck[:32], cPub[:]) != 1 || subtle.ConstantTimeCompare(ck[32:], sSec[:]) != 1 {
		return nil, errors.New("CURVE: INITIATE carries a cookie that is not ours")
	}
	in := binary.BigEndian.Uint64(initiate[105:])
	pt, ok := box.Open(nil, initiate[113:], shortNonce(initiatePrefix, in), &cPub, sSec)
	if !ok {
		return nil, errors.New("CURVE: INITIATE does not authenticate")
	}
	var client [32]byte // C
	copy(client[:], pt[:32])
	vouch, ok := box.Open(nil, pt[48:128], nonceFrom(vouchPrefix, pt[32:48]), &client, sSec)
	if !ok || subtle.ConstantTimeCompare(vouch[:32], cPub[:]) != 1 || subtle.ConstantTimeCompare(vouch[32:], k.Key.Public[:]) != 1 {
		return nil, errors.New("CURVE: the client's vouch does not hold (its short-term key is not vouched for by its long-term key)")
	}
	if k.Allow == nil || !k.Allow(client) {
		_ = writeCommand(c, errorCommand("client key not in the peers file"))
		return nil, fmt.Errorf("CURVE: client key %x is not in the peers file", client)
	}
	if err := checkSocketType(pt[128:], want); err != nil {
		return nil, err
	}
	ready := binary.BigEndian.AppendUint64([]byte("\x05READY"), 1)
	ready = box.Seal(ready, socketTypeProperty(ours), shortNonce(readyPrefix, 1), &cPub, sSec)
	if err := writeCommand(c, ready); err != nil {
		return nil, err
	}
	s := &curveSession{sendPrefix: serverMsgNonce, recvPrefix: clientMsgNonce, sendNonce: 1, recvNonce: in}
	box.Precompute(&s.shared, &cPub, sSec)
	return s, nil
}

// checkSocketType checks that metadata (ZMTP properties) names socket
// type want.
func checkSocketType(meta []byte, want string) error {
	props, err := parseProperties(meta)
	if err != nil {
		return err
	}
	if got := props["Socket-Type"]; got != want {
		return fmt.Errorf("peer socket type %q, want %q", got, want)
	}
	return nil
}

// rateLimited logs at most once a second.
type rateLimited struct{ last atomic.Int64 }

func (r *rateLimited) allow() bool {
	now := time.Now().UnixNano()
	last := r.last.Load()
	return now-last >= int64(time.Second) && r.last.CompareAndSwap(last, now)
}
