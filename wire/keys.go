package wire

import (
	"bufio"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// KeySource gives a node its identity and the directory of its peers'
// public keys: derived from the seed in simulation (SeedKeys), read from
// key files in deployment (KeyFiles).
type KeySource interface {
	Identity(i int) (*Identity, error)
	Directory() (*Directory, error)
}

// SeedKeys derives every node's key from the experiment seed
// (SimIdentities): reproducible, and therefore not secret.
type SeedKeys struct {
	ids []*Identity
	dir *Directory
}

// All is every node's identity, indexed by id (a simulator signs for the
// Byzantine ones).
func (k *SeedKeys) All() []*Identity { return k.ids }

// NewSeedKeys derives the keys of n nodes from seed.
func NewSeedKeys(seed uint64, n int) *SeedKeys {
	ids, dir := SimIdentities(seed, n)
	return &SeedKeys{ids: ids, dir: dir}
}

// Identity implements KeySource.
func (k *SeedKeys) Identity(i int) (*Identity, error) {
	if i < 0 || i >= len(k.ids) {
		return nil, fmt.Errorf("keys: node %d outside [0, %d)", i, len(k.ids))
	}
	return k.ids[i], nil
}

// Directory implements KeySource.
func (k *SeedKeys) Directory() (*Directory, error) { return k.dir, nil }

// Key files (a deployment's): the directory file has one line per node,
// "ID PUBLIC_KEY_HEX" (Ed25519, 32 bytes); a node's private key file has
// one line, "ID SEED_HEX" (the 32-byte Ed25519 seed), readable by its owner
// only. Lines starting with # are comments.
const (
	DirectoryKeyFile = "directory.keys"
)

// NodeKeyFile is the name WriteKeyFiles gives node i's private key file.
func NodeKeyFile(i int) string { return fmt.Sprintf("node-%d.key", i) }

// KeyFiles reads a deployment's keys: the directory file, and the private
// key file of the node being built.
type KeyFiles struct {
	DirectoryPath, PrivatePath string
}

// Identity implements KeySource: the private key file must be node i's,
// and its public key the directory's entry for node i.
func (k KeyFiles) Identity(i int) (*Identity, error) {
	dir, err := k.Directory()
	if err != nil {
		return nil, err
	}
	return ReadPrivateKey(k.PrivatePath, i, dir, k.DirectoryPath)
}

// ReadPrivateKey reads node i's private key file (one line "ID SEED_HEX",
// as WriteKeyFiles writes it): a file of another node, or a key whose
// public half is not dir's entry for node i (dirName names dir in the
// error), is refused.
func ReadPrivateKey(path string, i int, dir *Directory, dirName string) (*Identity, error) {
	lines, err := keyLines(path)
	if err != nil {
		return nil, err
	}
	if len(lines) != 1 {
		return nil, fmt.Errorf("%s: %d key lines, want one (\"ID SEED_HEX\")", path, len(lines))
	}
	id, b, err := parseKeyLine(lines[0], ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if id != uint32(i) {
		return nil, fmt.Errorf("%s holds the key of node %d, this is node %d", path, id, i)
	}
	x, err := IdentityFromKey(id, ed25519.NewKeyFromSeed(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if pub, ok := dir.Key(id); !ok || !pub.Equal(x.Public()) {
		return nil, fmt.Errorf("%s: node %d's key does not match its entry in %s", path, id, dirName)
	}
	return x, nil
}

// Directory implements KeySource.
func (k KeyFiles) Directory() (*Directory, error) {
	lines, err := keyLines(k.DirectoryPath)
	if err != nil {
		return nil, err
	}
	dir := NewDirectory()
	for _, l := range lines {
		id, b, err := parseKeyLine(l, ed25519.PublicKeySize)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.DirectoryPath, err)
		}
		if err := dir.Add(id, ed25519.PublicKey(b)); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", k.DirectoryPath, l.no, err)
		}
	}
	if dir.Len() == 0 {
		return nil, fmt.Errorf("%s: no keys (want lines \"ID PUBLIC_KEY_HEX\")", k.DirectoryPath)
	}
	return dir, nil
}

type keyLine struct {
	no     int
	fields []string
}

func keyLines(path string) ([]keyLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("keys: %w (make key files with WriteKeyFiles)", err)
	}
	defer f.Close()
	var out []keyLine
	sc := bufio.NewScanner(io.LimitReader(f, 16<<20))
	for no := 1; sc.Scan(); no++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		out = append(out, keyLine{no: no, fields: strings.Fields(t)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func parseKeyLine(l keyLine, size int) (uint32, []byte, error) {
	if len(l.fields) != 2 {
		return 0, nil, fmt.Errorf("line %d: %d fields, want \"ID KEY_HEX\"", l.no, len(l.fields))
	}
	id, err := strconv.ParseUint(l.fields[0], 10, 32)
	if err != nil || id == uint64(Broadcast) {
		return 0, nil, fmt.Errorf("line %d: node id %q is not a number below %d", l.no, l.fields[0], Broadcast)
	}
	b, err := hex.DecodeString(l.fields[1])
	if err != nil || len(b) != size {
		return 0, nil, fmt.Errorf("line %d: key of node %d is not %d bytes of hex", l.no, id, size)
	}
	return uint32(id), b, nil
}

// WriteKeyFiles makes fresh keys for n nodes from rand (crypto/rand.Reader
// in deployment) and writes the directory file and one private key file
// per node into dir, the private ones readable by their owner only.
func WriteKeyFiles(dir string, n int, rand io.Reader) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var pub strings.Builder
	pub.WriteString("# trellis node directory: ID PUBLIC_KEY_HEX (Ed25519)\n")
	for i := range n {
		s := make([]byte, ed25519.SeedSize)
		if _, err := io.ReadFull(rand, s); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
		k := ed25519.NewKeyFromSeed(s)
		fmt.Fprintf(&pub, "%d %s\n", i, hex.EncodeToString(k.Public().(ed25519.PublicKey)))
		line := fmt.Sprintf("%d %s\n", i, hex.EncodeToString(s))
		if err := os.WriteFile(filepath.Join(dir, NodeKeyFile(i)), []byte(line), 0o600); err != nil {
			return err
		}
	}
	// The directory file last, through a temporary file: a reader never
	// sees a directory without its private keys, or half a directory.
	path := filepath.Join(dir, DirectoryKeyFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(pub.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
