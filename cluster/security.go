package cluster

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/trellis-fl/trellis/wire"
)

// Encryption says which links of a deployment use the CURVE mechanism
// (curve.go): every process of a run must be given the same.
type Encryption string

const (
	// EncryptAuto (the default, also "") encrypts links to tcp://
	// endpoints and leaves ipc:// ones (Unix sockets on one machine, which
	// no one on a network reads) on the NULL mechanism.
	EncryptAuto Encryption = "auto"
	// EncryptCurve encrypts every link, Unix sockets too.
	EncryptCurve Encryption = "curve"
	// EncryptNone encrypts nothing (each message is still signed).
	EncryptNone Encryption = "none"
)

// Check reports an unknown setting.
func (e Encryption) Check() error {
	switch e {
	case "", EncryptAuto, EncryptCurve, EncryptNone:
		return nil
	}
	return fmt.Errorf("encryption %q: want auto (CURVE on tcp://, none on ipc://), curve or none", string(e))
}

// curveFor reports whether the link to endpoint uses CURVE.
func (e Encryption) curveFor(endpoint string) bool {
	switch e {
	case EncryptCurve:
		return true
	case EncryptNone:
		return false
	}
	return strings.HasPrefix(endpoint, "tcp://")
}

// MonitorKeyFile is the name WriteKeys gives the monitor's private key
// file: the monitor's CURVE key (an Ed25519 seed in hex, carried to X25519
// as a node's is), whose public half is the peers file's monitor_key.
const MonitorKeyFile = "monitor.key"

// monitorKeyID is the id a monitor's identity carries (no node has it).
const monitorKeyID = wire.Broadcast

// SeedMonitorIdentity is the monitor's key of a run whose keys derive
// from the seed (simulation keys, not secret).
func SeedMonitorIdentity(seed uint64) *wire.Identity { return wire.NewIdentity(seed, monitorKeyID) }

// ReadMonitorKey reads the monitor's private key file; its public half
// must be the peers file's monitor_key.
func ReadMonitorKey(path string, p *Peers) (*wire.Identity, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("monitor key: %w (`trellis keys` writes %s)", err, MonitorKeyFile)
	}
	var seed []byte
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			if seed, err = hex.DecodeString(line); err != nil || len(seed) != ed25519.SeedSize {
				return nil, fmt.Errorf("%s: want one line of %d bytes in hex (an Ed25519 seed)", path, ed25519.SeedSize)
			}
			break
		}
	}
	if seed == nil {
		return nil, fmt.Errorf("%s: no key", path)
	}
	id, err := wire.IdentityFromKey(monitorKeyID, ed25519.NewKeyFromSeed(seed))
	if err != nil {
		return nil, err
	}
	if p.MonitorKey != hex.EncodeToString(id.Public()) {
		return nil, fmt.Errorf("%s: the key is not the peers file's monitor_key", path)
	}
	return id, nil
}

// writeMonitorKey makes the monitor's key from rand, writes its private
// key file into dir (owner-only) and sets p.MonitorKey.
func writeMonitorKey(dir string, p *Peers, rand io.Reader) error {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(rand, seed); err != nil {
		return fmt.Errorf("monitor key: %w", err)
	}
	line := "# trellis monitor key: Ed25519 seed (hex); its public key is the peers file's monitor_key\n" + hex.EncodeToString(seed) + "\n"
	if err := os.WriteFile(filepath.Join(dir, MonitorKeyFile), []byte(line), 0o600); err != nil {
		return err
	}
	p.MonitorKey = hex.EncodeToString(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
	return nil
}

// nodeCurveKeys is every node's CURVE public key, as a set: the clients a
// node's or the monitor's socket lets in.
func nodeCurveKeys(dir *wire.Directory) (func([32]byte) bool, error) {
	set := make(map[[32]byte]bool, dir.Len())
	for _, id := range dir.IDs() {
		pub, _ := dir.Key(id)
		k, err := wire.CurvePublic(pub)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", id, err)
		}
		set[k] = true
	}
	return func(k [32]byte) bool { return set[k] }, nil
}

// listenSecured binds a node's or the monitor's PULL socket, with CURVE
// when enc says so for its endpoint: our key, every node allowed.
func listenSecured(enc Encryption, endpoint string, maxFrame, maxConns int, id *wire.Identity, dir *wire.Directory, log *slog.Logger, handle func([]byte) bool) (*Listener, error) {
	if !enc.curveFor(endpoint) {
		return Listen(endpoint, maxFrame, maxConns, handle)
	}
	if id == nil {
		return nil, fmt.Errorf("%s is encrypted (CURVE) but no key was given for it (the monitor's: --key %s, which `trellis keys` writes)", endpoint, MonitorKeyFile)
	}
	allow, err := nodeCurveKeys(dir)
	if err != nil {
		return nil, err
	}
	return ListenCurve(endpoint, maxFrame, maxConns, &CurveServer{Key: CurveKeyOf(id), Allow: allow, Log: log}, handle)
}

// dialSecured connects a node's PUSH socket to endpoint, with CURVE when
// enc says so: our key, the server's from its Ed25519 key (nil: unknown,
// an error).
func dialSecured(enc Encryption, endpoint string, id *wire.Identity, server ed25519.PublicKey, log *slog.Logger) (*Pusher, error) {
	s, curve, err := serverCurveKey(enc, endpoint, server)
	if err != nil {
		return nil, err
	}
	if !curve {
		return Dial(endpoint, queueFrames, queueBytes)
	}
	return DialCurve(endpoint, queueFrames, queueBytes, &CurveClient{Key: CurveKeyOf(id), Server: s, Log: log})
}

// serverCurveKey is the CURVE key of the server at endpoint from its
// Ed25519 key, and whether the link is encrypted (enc); an encrypted link
// to a server of unknown key (nil) is an error.
func serverCurveKey(enc Encryption, endpoint string, server ed25519.PublicKey) (key [32]byte, curve bool, err error) {
	if !enc.curveFor(endpoint) {
		return key, false, nil
	}
	if server == nil {
		return key, true, fmt.Errorf("%s is encrypted (CURVE) but the peers file has no key for it (write the keys again with `trellis keys`)", endpoint)
	}
	key, err = wire.CurvePublic(server)
	return key, true, err
}
