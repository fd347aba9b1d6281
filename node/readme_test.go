package node_test

import (
	"os"
	"strings"
	"testing"
)

// TestLibraryGuideShowsExampleNode keeps the library guide's "Driving a
// node yourself" snippet (docs/guides/library.md) a verbatim excerpt of
// ExampleNode (indented with four spaces per tab, as the guides' Go blocks
// are), so the guide shows code that compiles and runs.
func TestLibraryGuideShowsExampleNode(t *testing.T) {
	readme, err := os.ReadFile("../docs/guides/library.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Driving a node yourself\n")
	if !ok {
		t.Fatal(`docs/guides/library.md has no "Driving a node yourself" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, snippet, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatal(`docs/guides/library.md's "Driving a node yourself" has no Go block`)
	}
	snippet, _, _ = strings.Cut(snippet, "```")

	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "\nfunc ExampleNode() {\n")
	if !ok {
		t.Fatal("example_test.go has no ExampleNode")
	}
	body, _, _ = strings.Cut(body, "\n}\n")
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, "\t")
		tabs := len(l) - len(trimmed)
		if tabs > 0 { // the function body's own level goes
			tabs--
		}
		lines[i] = strings.Repeat("    ", tabs) + trimmed
	}
	if !strings.Contains(strings.Join(lines, "\n")+"\n", snippet) {
		t.Errorf("docs/guides/library.md's snippet is not an excerpt of ExampleNode (node/example_test.go); copy it again:\n%s", snippet)
	}
	if strings.Count(snippet, "\n") < 10 {
		t.Errorf("docs/guides/library.md's snippet has %d lines; it should show the round's calls", strings.Count(snippet, "\n"))
	}
}
