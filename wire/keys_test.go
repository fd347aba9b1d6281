package wire

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Key files written by WriteKeyFiles are read back; a wrong, corrupt or
// mismatched file is a clear error.
func TestKeyFiles(t *testing.T) {
	dir := t.TempDir()
	if err := WriteKeyFiles(dir, 3, rand.Reader); err != nil {
		t.Fatal(err)
	}
	k := KeyFiles{DirectoryPath: filepath.Join(dir, DirectoryKeyFile), PrivatePath: filepath.Join(dir, NodeKeyFile(2))}
	d, err := k.Directory()
	if err != nil || d.Len() != 3 {
		t.Fatalf("directory: %v (%v)", d, err)
	}
	id, err := k.Identity(2)
	if err != nil || id.ID() != 2 {
		t.Fatalf("identity: %v", err)
	}
	if fi, _ := os.Stat(k.PrivatePath); fi.Mode().Perm() != 0o600 {
		t.Errorf("private key file mode %v, want 0600", fi.Mode().Perm())
	}
	expect := func(err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want one containing %q", err, want)
		}
	}
	_, err = k.Identity(1)
	expect(err, "holds the key of node 2, this is node 1")
	other := t.TempDir()
	if err := WriteKeyFiles(other, 3, rand.Reader); err != nil {
		t.Fatal(err)
	}
	_, err = KeyFiles{DirectoryPath: k.DirectoryPath, PrivatePath: filepath.Join(other, NodeKeyFile(2))}.Identity(2)
	expect(err, "does not match its entry")
	bad := filepath.Join(dir, "bad.keys")
	os.WriteFile(bad, []byte("0 abcd\n"), 0o600)
	_, err = KeyFiles{DirectoryPath: bad}.Directory()
	expect(err, "line 1: key of node 0 is not 32 bytes of hex")
	os.WriteFile(bad, []byte("x "+strings.Repeat("00", 32)+"\n"), 0o600)
	_, err = KeyFiles{DirectoryPath: bad}.Directory()
	expect(err, `node id "x"`)
	_, err = KeyFiles{DirectoryPath: filepath.Join(dir, "missing")}.Directory()
	expect(err, "no such file")
}
