package strategy

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated table in docs/methods/toolbox.md")

// The docs' table of strategies is MarkdownTable, between its markers
// (`go test ./strategy -run TestDocsTable -update` rewrites it).
func TestDocsTableIsTheRegistry(t *testing.T) {
	const path = "../docs/methods/toolbox.md"
	const begin, end = "<!-- strategies: begin (generated from the strategy registry) -->\n", "<!-- strategies: end -->\n"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q", path, begin, end)
	}
	got, want := doc[i+len(begin):j], MarkdownTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's table of strategies differs from the registry; run go test ./strategy -run TestDocsTable -update\ngot:\n%s\nwant:\n%s", path, got, want)
}

// The methods guide's list of strategies (docs/guides/methods.md) is Names().
func TestMethodsGuideListsEveryStrategy(t *testing.T) {
	b, err := os.ReadFile("../docs/guides/methods.md")
	if err != nil {
		t.Fatal(err)
	}
	const lead = "- Strategies (`strategy.Names()`): "
	doc := string(b)
	i := strings.Index(doc, lead)
	if i < 0 {
		t.Fatalf("docs/guides/methods.md lacks %q", lead)
	}
	list := doc[i+len(lead):]
	list = list[:strings.Index(list, "\n- ")]
	words := strings.FieldsFunc(list, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_') })
	for _, name := range Names() {
		if !slices.Contains(words, name) {
			t.Errorf("docs/guides/methods.md's list of strategies lacks %s", name)
		}
	}
}
