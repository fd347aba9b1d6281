package node_test

import (
	"os"
	"strings"
	"testing"
)

// TestREADMEShowsExampleNode keeps README's "Driving a node yourself"
// snippet a verbatim excerpt of ExampleNode (indented with four spaces per
// tab, as README's Go blocks are), so the README shows code that compiles
// and runs.
func TestREADMEShowsExampleNode(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skip("README not found")
	}
	_, section, ok := strings.Cut(string(readme), "\n## Driving a node yourself\n")
	if !ok {
		t.Fatal(`README has no "Driving a node yourself" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, snippet, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatal(`README's "Driving a node yourself" has no Go block`)
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
		t.Errorf("README's snippet is not an excerpt of ExampleNode (node/example_test.go); copy it again:\n%s", snippet)
	}
	if strings.Count(snippet, "\n") < 10 {
		t.Errorf("README's snippet has %d lines; it should show the round's calls", strings.Count(snippet, "\n"))
	}
}
