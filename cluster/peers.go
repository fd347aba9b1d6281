package cluster

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/wire"
)

// PeersFile is the name `trellis keys` and `trellis launch` give the peers
// file.
const PeersFile = "peers.toml"

// Peers is a deployment's peers file: where the monitor and every node
// listen, and each node's public key. A node verifies only the keys listed
// here: a peer whose key is not in the file is refused.
type Peers struct {
	// Monitor is the monitor's endpoint (ipc://PATH or tcp://HOST:PORT).
	Monitor string `toml:"monitor"`
	// MonitorKey is the monitor's Ed25519 public key in hex (its CURVE key
	// for encrypted links, MonitorKeyFile); empty in a run whose keys
	// derive from the seed.
	MonitorKey string `toml:"monitor_key,omitempty"`
	Nodes      []Peer `toml:"node"`
}

// Peer is one node's entry.
type Peer struct {
	ID       int    `toml:"id"`
	Endpoint string `toml:"endpoint"`
	// Key is the node's Ed25519 public key in hex; empty in a run whose
	// keys derive from the seed (--seed-keys: simulation keys, not secret).
	Key string `toml:"key"`
}

// LoadPeers reads and checks a peers file for n nodes: ids 0…n−1 once each,
// valid endpoints, keys of 32 bytes in hex (all present or all absent).
func LoadPeers(path string, n int) (*Peers, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("peers file: %w (make one with `trellis keys`)", err)
	}
	var p Peers
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(&p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("%s: unknown key %q (want monitor, monitor_key and [[node]] tables of id, endpoint, key)", path, und[0].String())
	}
	if err := p.check(n); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// ValidatePeers checks a peers file's contents for n nodes (LoadPeers'
// checks).
func ValidatePeers(p *Peers, n int) error { return p.check(n) }

func (p *Peers) check(n int) error {
	if _, _, err := splitEndpoint(p.Monitor); err != nil {
		return fmt.Errorf("monitor: %w", err)
	}
	if len(p.Nodes) != n {
		return fmt.Errorf("%d nodes listed, the config has %d", len(p.Nodes), n)
	}
	seen := make([]bool, n)
	keys := 0
	for _, q := range p.Nodes {
		if q.ID < 0 || q.ID >= n || seen[q.ID] {
			return fmt.Errorf("node id %d: want each of 0…%d exactly once", q.ID, n-1)
		}
		seen[q.ID] = true
		if _, _, err := splitEndpoint(q.Endpoint); err != nil {
			return fmt.Errorf("node %d: %w", q.ID, err)
		}
		if q.Key != "" {
			keys++
			if k, err := hex.DecodeString(q.Key); err != nil || len(k) != ed25519.PublicKeySize {
				return fmt.Errorf("node %d: key is not %d bytes of hex", q.ID, ed25519.PublicKeySize)
			}
		}
	}
	if keys != 0 && keys != n {
		return fmt.Errorf("%d of %d nodes have a key: list every node's or none (seed keys)", keys, n)
	}
	if p.MonitorKey != "" {
		if _, err := p.monitorPublic(); err != nil {
			return err
		}
	}
	return nil
}

// monitorPublic is the monitor's public key (nil if the file has none).
func (p *Peers) monitorPublic() (ed25519.PublicKey, error) {
	if p.MonitorKey == "" {
		return nil, nil
	}
	k, err := hex.DecodeString(p.MonitorKey)
	if err != nil || len(k) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("monitor_key is not %d bytes of hex", ed25519.PublicKeySize)
	}
	if _, err := wire.CurvePublic(k); err != nil {
		return nil, fmt.Errorf("monitor_key: %w", err)
	}
	return k, nil
}

// Endpoint is node i's endpoint.
func (p *Peers) Endpoint(i int) string {
	for _, q := range p.Nodes {
		if q.ID == i {
			return q.Endpoint
		}
	}
	return ""
}

// HasKeys reports whether the file lists public keys.
func (p *Peers) HasKeys() bool { return len(p.Nodes) > 0 && p.Nodes[0].Key != "" }

// Directory is the public keys of the file.
func (p *Peers) Directory() (*wire.Directory, error) {
	dir := wire.NewDirectory()
	for _, q := range p.Nodes {
		k, err := hex.DecodeString(q.Key)
		if err != nil || len(k) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("peers: node %d has no valid key", q.ID)
		}
		if err := dir.Add(uint32(q.ID), ed25519.PublicKey(k)); err != nil {
			return nil, err
		}
	}
	return dir, nil
}

// Write writes the peers file atomically.
func (p *Peers) Write(path string) error {
	var buf bytes.Buffer
	buf.WriteString("# trellis peers: the monitor's endpoint and public key, every node's endpoint and Ed25519 public key\n")
	if err := toml.NewEncoder(&buf).Encode(p); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Keys is a node's wire.KeySource in deployment: its private key file
// (wire.ReadPrivateKey) and the peers file's public keys, which must list
// the same key for it.
type Keys struct {
	Peers       *Peers
	PrivatePath string
}

// Identity implements wire.KeySource.
func (k Keys) Identity(i int) (*wire.Identity, error) {
	dir, err := k.Directory()
	if err != nil {
		return nil, err
	}
	return wire.ReadPrivateKey(k.PrivatePath, i, dir, "the peers file")
}

// Directory implements wire.KeySource.
func (k Keys) Directory() (*wire.Directory, error) { return k.Peers.Directory() }

// IPCEndpoints are the default endpoints of a run on one machine: one Unix
// socket per node and one for the monitor, in sockDir (keep it short: a
// socket path has at most 107 bytes).
func IPCEndpoints(sockDir string, n int) *Peers {
	p := &Peers{Monitor: "ipc://" + filepath.Join(sockDir, "monitor.sock")}
	for i := range n {
		p.Nodes = append(p.Nodes, Peer{ID: i, Endpoint: "ipc://" + filepath.Join(sockDir, fmt.Sprintf("node-%d.sock", i))})
	}
	return p
}

// LoopbackEndpoints are endpoints of a run on one machine over TCP: the
// monitor and every node on 127.0.0.1, each on a port the kernel said was
// free (another program may take it before the node binds; then the node
// says so).
func LoopbackEndpoints(n int) (*Peers, error) {
	port := func() (string, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		defer l.Close()
		return "tcp://" + l.Addr().String(), nil
	}
	p := &Peers{}
	var err error
	if p.Monitor, err = port(); err != nil {
		return nil, err
	}
	for i := range n {
		ep, err := port()
		if err != nil {
			return nil, err
		}
		p.Nodes = append(p.Nodes, Peer{ID: i, Endpoint: ep})
	}
	return p, nil
}

// WriteKeys makes fresh keys for p's nodes and its monitor from rand
// (crypto/rand.Reader), writes each node's private key file into dir
// (wire.NodeKeyFile, readable by its owner only), the monitor's
// (MonitorKeyFile, likewise) and the peers file with the public keys.
func WriteKeys(dir string, p *Peers, rand io.Reader) error {
	if err := wire.WriteKeyFiles(dir, len(p.Nodes), rand); err != nil {
		return err
	}
	if err := writeMonitorKey(dir, p, rand); err != nil {
		return err
	}
	d, err := wire.KeyFiles{DirectoryPath: filepath.Join(dir, wire.DirectoryKeyFile)}.Directory()
	if err != nil {
		return err
	}
	for i := range p.Nodes {
		pub, _ := d.Key(uint32(p.Nodes[i].ID))
		p.Nodes[i].Key = hex.EncodeToString(pub)
	}
	return p.Write(filepath.Join(dir, PeersFile))
}
