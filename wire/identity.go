package wire

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Identity is a node's id and signing key. The spec makes a node's identity
// its public key (the DMTT paper, Algorithms 1–3); the id is how the rest of
// the framework names it.
type Identity struct {
	id   uint32
	priv ed25519.PrivateKey
}

// identityDomain separates identity derivation from every other use of the
// experiment seed. Changing it changes every simulated key (and so every
// signature byte), so it is fixed for the format's life.
const identityDomain = "trellis/wire/v1 identity\x00"

// NewIdentity derives node id's key from the experiment seed alone, so a
// simulation is reproducible down to its signature bytes (Ed25519 signing is
// deterministic): the 32-byte Ed25519 seed is
// SHA-256(identityDomain || seed (8 bytes LE) || id (4 bytes LE)).
//
// Anyone who knows the experiment seed can forge every such key: these are
// for simulation. A deployed node uses GenerateIdentity.
func NewIdentity(seed uint64, id uint32) *Identity {
	var in [len(identityDomain) + 12]byte
	copy(in[:], identityDomain)
	binary.LittleEndian.PutUint64(in[len(identityDomain):], seed)
	binary.LittleEndian.PutUint32(in[len(identityDomain)+8:], id)
	s := sha256.Sum256(in[:])
	return &Identity{id: id, priv: ed25519.NewKeyFromSeed(s[:])}
}

// GenerateIdentity makes a fresh key from rand (crypto/rand.Reader for a
// deployment).
func GenerateIdentity(id uint32, rand io.Reader) (*Identity, error) {
	_, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, fmt.Errorf("wire: generating key for node %d: %w", id, err)
	}
	return &Identity{id: id, priv: priv}, nil
}

// IdentityFromKey wraps an existing private key (e.g. loaded from a file).
func IdentityFromKey(id uint32, priv ed25519.PrivateKey) (*Identity, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("wire: private key of %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	return &Identity{id: id, priv: slices.Clone(priv)}, nil
}

// valid reports whether x holds a key: a zero Identity signs nothing.
func (x *Identity) valid() bool { return x != nil && len(x.priv) == ed25519.PrivateKeySize }

// ID returns the node id the identity signs as.
func (x *Identity) ID() uint32 { return x.id }

// Public returns the public key peers put in their Directory.
func (x *Identity) Public() ed25519.PublicKey { return x.priv.Public().(ed25519.PublicKey) }

// Directory maps node ids to public keys: the peers a node can verify. Build
// it once; after the last Add it is safe for concurrent use, so one Directory
// can serve every node of a simulation.
type Directory struct {
	keys map[uint32]ed25519.PublicKey
}

// NewDirectory returns an empty directory.
func NewDirectory() *Directory { return &Directory{keys: make(map[uint32]ed25519.PublicKey)} }

// Add records id's key. Re-adding the same key is a no-op; a different key
// for a known id is an error (a key change is a new identity, not an update
// a peer can slip in), and Broadcast is not a node id.
func (d *Directory) Add(id uint32, pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("wire: public key of %d bytes for node %d, want %d", len(pub), id, ed25519.PublicKeySize)
	}
	if id == Broadcast {
		return errors.New("wire: the Broadcast id cannot be a node")
	}
	if d.keys == nil { // a zero Directory is usable
		d.keys = make(map[uint32]ed25519.PublicKey)
	}
	if old, ok := d.keys[id]; ok {
		if old.Equal(pub) {
			return nil
		}
		return fmt.Errorf("wire: node %d already has a different key", id)
	}
	d.keys[id] = slices.Clone(pub)
	return nil
}

// Key returns id's public key and whether id is known.
func (d *Directory) Key(id uint32) (ed25519.PublicKey, bool) {
	k, ok := d.keys[id]
	return k, ok
}

// Len returns the number of known peers.
func (d *Directory) Len() int { return len(d.keys) }

// IDs returns the known ids in increasing order.
func (d *Directory) IDs() []uint32 {
	ids := make([]uint32, 0, len(d.keys))
	for id := range d.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// SimIdentities derives the identities of nodes 0..n-1 from the experiment
// seed (NewIdentity) and a Directory holding all of them: what a simulator
// needs in one call.
func SimIdentities(seed uint64, n int) ([]*Identity, *Directory) {
	n = max(n, 0)
	ids := make([]*Identity, n)
	d := NewDirectory()
	for i := range ids {
		ids[i] = NewIdentity(seed, uint32(i))
		d.keys[uint32(i)] = ids[i].Public()
	}
	return ids, d
}

// SignContext signs msg with Ed25519ctx (RFC 8032) under context (1 to
// 255 bytes): for a driver's own frames that are not Messages (the
// cluster's phase markers and records), each with a context of its own so
// no signature serves two purposes. Verify with ed25519.VerifyWithOptions
// and the same context.
func (x *Identity) SignContext(context string, msg []byte) ([]byte, error) {
	if !x.valid() {
		return nil, errors.New("wire: SignContext with an identity without key")
	}
	if len(context) == 0 || len(context) > 255 {
		return nil, fmt.Errorf("wire: signature context of %d bytes, want 1 to 255", len(context))
	}
	return x.priv.Sign(nil, msg, &ed25519.Options{Context: context})
}
