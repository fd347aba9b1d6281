package imports

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNothingCitesOutsideTheRepository reads every tracked Go, Markdown,
// TOML, Python and shell file and fails on a line that cites something
// outside the repository.
func TestNothingCitesOutsideTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	cmd := exec.Command("git", "ls-files", "-z", "*.go", "*.md", "*.toml", "*.py", "*.sh")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	self := filepath.ToSlash(filepath.Join("internal", "imports", "citations_test.go"))
	files := 0
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" || name == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet in the index
			}
			t.Fatal(err)
		}
		files++
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			if m := OutsideCitation.FindString(sc.Text()); m != "" {
				t.Errorf("%s:%d cites %q, which is not in the repository: cite the paper's section, equation or algorithm, a docs/ page, or say what the check is for", name, line, m)
			}
		}
		if err := sc.Err(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if files < 10 {
		t.Fatalf("git ls-files listed %d files", files)
	}
}

// TestOutsideCitationPattern pins what the pattern matches and what it leaves
// alone.
func TestOutsideCitationPattern(t *testing.T) {
	for _, s := range []string{
		"(spec" + "/dmtt.md, \"Mobility\")",
		"see spec" + "/robust-rules.md",
		"(issue" + " 22, acceptance 3)",
		"Issue" + " 8: quick results",
		"issues" + " 8 and 22",
		"issue" + " #22",
		"runs/issue" + "22",
		"is acceptance" + " item 2 of",
		"(acceptance" + " 4)",
		"found item" + " 3",
		"func TestFound" + "3NoHonestNode",
	} {
		if !OutsideCitation.MatchString(s) {
			t.Errorf("%q is not matched", s)
		}
	}
	for _, s := range []string{
		"Specification of the wire format",
		`trust.rules = "spec"`,
		"RDP order grid: spec (default)",
		"RFC 8439",
		"the messages issue from the node",
		"the acceptance rule of Algorithm 2",
		"(acceptance bound 10^-4)",
		"found 3 liars",
		"tissue 5",
	} {
		if OutsideCitation.MatchString(s) {
			t.Errorf("%q is matched", s)
		}
	}
}
