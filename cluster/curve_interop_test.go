package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/wire"
)

// TestPyzmqCurveClient: a client on real libzmq (python3-zmq, CURVE over
// libsodium) with a trellis node's key and the right server key delivers
// its frames to a trellis CURVE socket; with a wrong server key it is
// refused in the handshake and delivers nothing. Both sides derive the
// X25519 keys from the nodes' Ed25519 keys, libsodium on one side and
// package wire on the other.
func TestPyzmqCurveClient(t *testing.T) {
	py := python(t)
	keyDir := t.TempDir()
	peers := &Peers{Monitor: "tcp://127.0.0.1:1", Nodes: []Peer{{ID: 0, Endpoint: "tcp://127.0.0.1:1"}, {ID: 1, Endpoint: "tcp://127.0.0.1:1"}, {ID: 2, Endpoint: "tcp://127.0.0.1:1"}}}
	if err := WriteKeys(keyDir, peers, rand.Reader); err != nil {
		t.Fatal(err)
	}
	keys := Keys{Peers: peers, PrivatePath: filepath.Join(keyDir, wire.NodeKeyFile(0))}
	server, err := keys.Identity(0)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := keys.Directory()
	pub1, _ := dir.Key(1)
	client, err := wire.CurvePublic(pub1)
	if err != nil {
		t.Fatal(err)
	}
	col := newCollector()
	l, err := ListenCurve("tcp://127.0.0.1:0", 1<<20, 8, &CurveServer{Key: CurveKeyOf(server), Allow: func(k [32]byte) bool { return k == client }}, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ep := "tcp://" + l.Addr().String()
	push := func(serverKey []byte, frames ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
		defer cancel()
		args := []string{filepath.Join("testdata", "curve_push.py"), ep, hex.EncodeToString(serverKey), filepath.Join(keyDir, wire.NodeKeyFile(1))}
		for _, f := range frames {
			args = append(args, hex.EncodeToString([]byte(f)))
		}
		if out, err := exec.CommandContext(ctx, py, args...).CombinedOutput(); err != nil {
			t.Fatalf("python client: %v\n%s", err, out)
		}
	}
	pub2, _ := dir.Key(2) // another node's key: not the server's
	push(pub2, "with the wrong server key")
	if h := l.Stats.Handshakes.Load(); h == 0 {
		t.Error("the client with the wrong server key was not refused in the handshake")
	}
	push(server.Public(), "first", "second")
	got := col.waitFor(t, 2)
	if len(got) != 2 || string(got[0]) != "first" || string(got[1]) != "second" {
		t.Errorf("frames %q, want only the right-key client's \"first\", \"second\"", got)
	}
}
