package cluster

import (
	"context"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/wire"
)

// python finds a Python 3 with Debian's python3-zmq and python3-nacl
// (Debian's /usr/bin/python3 first: the packages install there).
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil {
			if exec.Command(path, "-c", "import zmq, nacl.bindings").Run() == nil {
				return path
			}
		}
	}
	t.Skip("no Python 3 with zmq and nacl: apt-get install -y python3-zmq python3-nacl (Debian's packages, real libzmq and libsodium)")
	return ""
}

// TestPythonPeer: a peer in Python using real libzmq
// (python3-zmq) and libsodium (python3-nacl) plays node 1 of a two-node
// run; it verifies the trellis node's signed models and phase markers and
// answers with its own, which the trellis node validates and uses, every
// round: over Unix sockets with the NULL mechanism, and over TCP with
// CURVE both ways (the Python peer's PUSH a CURVE client of the node, its
// PULL a CURVE server the node connects to).
func TestPythonPeer(t *testing.T) {
	py := python(t)
	t.Run("ipc", func(t *testing.T) {
		tc := startNode0(t, twoNodes, true, false)
		pythonPeer(t, py, tc)
	})
	t.Run("tcp-curve", func(t *testing.T) {
		peers, err := LoopbackEndpoints(2)
		if err != nil {
			t.Fatal(err)
		}
		tc := startNode0On(t, peers, twoNodes, true, false)
		pythonPeer(t, py, tc, "curve")
	})
}

// pythonPeer runs testdata/peer.py as node 1 of tc for 3 rounds and
// checks that node 0 accepted and used its messages every round.
func pythonPeer(t *testing.T, py string, tc *testCluster, extra ...string) {
	dir, _ := tc.keys.Directory()
	pub0, _ := dir.Key(0)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{filepath.Join("testdata", "peer.py"), tc.peers.Endpoint(1), tc.peers.Endpoint(0),
		filepath.Join(tc.keyDir, wire.NodeKeyFile(1)), hex.EncodeToString(pub0), "1", "0", "3"}, extra...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python peer: %v\n%s", err, out)
	}
	t.Logf("python peer:\n%s", out)
	if err := hangGuard(t, tc.done, "end of node 0's run"); err != nil {
		t.Fatalf("RunNode: %v", err)
	}
	for r := range 3 {
		rec := hangGuard(t, tc.records, "record")
		if rec.Round != r {
			t.Fatalf("record of round %d, want %d", rec.Round, r)
		}
		if rec.Ready.Rejected != 0 || len(rec.Refused) != 0 || len(rec.Missing) != 0 {
			t.Errorf("round %d: rejected %d, refused %v, missing %v; want the Python peer's messages all accepted", r, rec.Ready.Rejected, rec.Refused, rec.Missing)
		}
		if w := rec.Ready.Weights[1]; !(w > 0) {
			t.Errorf("round %d: weight of the Python peer %v, want > 0", r, w)
		}
	}
}
