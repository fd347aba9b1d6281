package dashboard

import (
	"os/exec"
	"strings"
	"testing"
)

// The page's model (assets/model.js: the comparison's series, colours and
// dashes, the mean and band over seeds, the round slider, the connection
// badge) passes its tests under node (testdata/model_test.js).
func TestPageModel(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("dashboard: node not found; install Node.js to test the page's model")
	}
	out, err := exec.CommandContext(t.Context(), node, "testdata/model_test.js", "assets/model.js").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("node testdata/model_test.js: %v\n%s", err, out)
	}
}
