package experiment

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

	"github.com/trellis-fl/trellis/wire"
)

// KeySource gives a node its identity and the directory of its peers'
// public keys: derived from the seed in simulation (SeedKeys), read from
// key files in deployment (KeyFiles).
type KeySource interface {
	Identity(i int) (*wire.Identity, error)
	Directory() (*wire.Directory, error)
}

// SeedKeys derives every node's key from the experiment seed
// (wire.SimIdentities): reproducible, and therefore not secret.
type SeedKeys struct {
	ids []*wire.Identity
	dir *wire.Directory
}

// NewSeedKeys derives the keys of n nodes from seed.
func NewSeedKeys(seed uint64, n int) *SeedKeys {
	ids, dir := wire.SimIdentities(seed, n)
	return &SeedKeys{ids: ids, dir: dir}
}

// Identity implements KeySource.
func (k *SeedKeys) Identity(i int) (*wire.Identity, error) {
	if i < 0 || i >= len(k.ids) {
		return nil, fmt.Errorf("keys: node %d outside [0, %d)", i, len(k.ids))
	}
	return k.ids[i], nil
}

// Directory implements KeySource.
func (k *SeedKeys) Directory() (*wire.Directory, error) { return k.dir, nil }

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

// Identity implements KeySource: the private key file must be node i's.
func (k KeyFiles) Identity(i int) (*wire.Identity, error) {
	lines, err := keyLines(k.PrivatePath)
	if err != nil {
		return nil, err
	}
	if len(lines) != 1 {
		return nil, fmt.Errorf("%s: %d key lines, want one (\"ID SEED_HEX\")", k.PrivatePath, len(lines))
	}
	id, b, err := parseKeyLine(lines[0], ed25519.SeedSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.PrivatePath, err)
	}
	if id != uint32(i) {
		return nil, fmt.Errorf("%s holds the key of node %d, this is node %d", k.PrivatePath, id, i)
	}
	x, err := wire.IdentityFromKey(id, ed25519.NewKeyFromSeed(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.PrivatePath, err)
	}
	dir, err := k.Directory()
	if err != nil {
		return nil, err
	}
	if pub, ok := dir.Key(id); !ok || !pub.Equal(x.Public()) {
		return nil, fmt.Errorf("%s: node %d's key does not match its entry in %s", k.PrivatePath, id, k.DirectoryPath)
	}
	return x, nil
}

// Directory implements KeySource.
func (k KeyFiles) Directory() (*wire.Directory, error) {
	lines, err := keyLines(k.DirectoryPath)
	if err != nil {
		return nil, err
	}
	dir := wire.NewDirectory()
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
	if err != nil || id == uint64(wire.Broadcast) {
		return 0, nil, fmt.Errorf("line %d: node id %q is not a number below %d", l.no, l.fields[0], wire.Broadcast)
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
	return writeAtomic(filepath.Join(dir, DirectoryKeyFile), []byte(pub.String()))
}
