//go:build unix

package doccheck

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
)

// TestMain doubles as the blocks' config editor: run with DOCCHECK_MODE=set
// and the arguments FILE KEY=VALUE…, the test binary writes the overrides
// into the TOML file (setInFile) instead of testing.
func TestMain(m *testing.M) {
	if os.Getenv("DOCCHECK_MODE") == "set" {
		if len(os.Args) < 3 {
			fmt.Fprintln(os.Stderr, "doccheck: want FILE KEY=VALUE…")
			os.Exit(2)
		}
		if err := setInFile(os.Args[1], os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "doccheck:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// setInFile writes KEY=VALUE overrides into a TOML config file: a dotted
// key's last part goes into the table its other parts name (added at the
// end if the file has none), replacing the key's line if there is one; a
// plain key goes before the first table. VALUE is written as given (a TOML
// value: 2, [8], "x").
func setInFile(path string, kvs []string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("%q: want KEY=VALUE", kv)
		}
		table, key := "", k
		if i := strings.LastIndex(k, "."); i >= 0 {
			table, key = k[:i], k[i+1:]
		}
		lines = setKey(lines, table, key, v)
	}
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// setKey sets key = value in table ("" for the top level) of a TOML file's
// lines.
func setKey(lines []string, table, key, value string) []string {
	isTable := func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "[") }
	keyOf := func(l string) string {
		k, _, ok := strings.Cut(l, "=")
		if !ok || isTable(l) || strings.HasPrefix(strings.TrimSpace(l), "#") {
			return ""
		}
		return strings.TrimSpace(k)
	}
	start, end := 0, len(lines) // the table's lines, header excluded
	if table != "" {
		at := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "["+table+"]" })
		if at < 0 {
			return append(lines, "", "["+table+"]", key+" = "+value)
		}
		start = at + 1
	}
	for i := start; i < len(lines); i++ {
		if isTable(lines[i]) {
			end = i
			break
		}
	}
	for i := start; i < end; i++ {
		if keyOf(lines[i]) == key {
			lines[i] = key + " = " + value
			return lines
		}
	}
	return slices.Insert(lines, start, key+" = "+value)
}

func TestSetKey(t *testing.T) {
	in := []string{"# a preset", "name = \"q\"", "rounds = 10", "", "[data]", "samples = 12000", "", "[model]", "hidden = [128]"}
	got := setKey(slices.Clone(in), "", "rounds", "2")
	got = setKey(got, "", "nodes", "6")
	got = setKey(got, "model", "hidden", "[8]")
	got = setKey(got, "data", "dataset", "\"mnist\"")
	got = setKey(got, "topology", "k", "2")
	want := []string{"nodes = 6", "# a preset", "name = \"q\"", "rounds = 2", "", "[data]", "dataset = \"mnist\"", "samples = 12000", "", "[model]", "hidden = [8]", "", "[topology]", "k = 2"}
	if !slices.Equal(got, want) {
		t.Errorf("setKey:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// root is the repository, from this package's directory.
var root = filepath.Join("..", "..")

// block is one fenced code block of a page.
type block struct {
	page string // relative to root
	line int    // of the opening fence, from 1
	lang string
	text string
	// The marker's directives.
	set      []string // KEY=VALUE pairs for --set
	file     []string // KEY=VALUE pairs for the files of presets show only
	demo     string   // flags for trellis demo
	long     string   // reason; skipped under -short
	skip     string   // reason; never run
	excerpt  string   // file the Go block is an excerpt of
	badMarks []string // directives not understood
}

const markerPrefix, markerSuffix = "<!-- doc-test:", "-->"

// parsePage returns the fenced blocks of a Markdown page, each with the
// directives of the marker on the line just above it, and the reason of a
// skip-file marker if the page has one.
func parsePage(page, text string) (blocks []block, skipFile string) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m, ok := marker(l); ok {
			if r, ok := strings.CutPrefix(m, "skip-file "); ok {
				skipFile = r
			}
		}
		lang, ok := strings.CutPrefix(l, "```")
		if !ok || lang == "" {
			continue
		}
		b := block{page: page, line: i + 1, lang: strings.TrimSpace(lang)}
		if i > 0 {
			if m, ok := marker(lines[i-1]); ok {
				b.directives(m)
			}
		}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		b.text = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, b)
	}
	return blocks, skipFile
}

// marker returns the directives of a doc-test marker line.
func marker(line string) (string, bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, markerPrefix) || !strings.HasSuffix(line, markerSuffix) {
		return "", false
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(line, markerPrefix), markerSuffix)), true
}

// directives reads a marker's directives into b.
func (b *block) directives(m string) {
	for _, d := range strings.Split(m, ";") {
		d = strings.TrimSpace(d)
		word, rest, _ := strings.Cut(d, " ")
		rest = strings.TrimSpace(rest)
		switch {
		case word == "set" && rest != "":
			b.set = append(b.set, strings.Fields(rest)...)
		case word == "file" && rest != "":
			b.file = append(b.file, strings.Fields(rest)...)
		case word == "demo" && rest != "":
			b.demo = rest
		case word == "long" && rest != "":
			b.long = rest
		case word == "skip" && rest != "":
			b.skip = rest
		case word == "excerpt" && strings.HasPrefix(rest, "of "):
			b.excerpt = strings.TrimSpace(strings.TrimPrefix(rest, "of "))
		case word == "skip-file":
		default:
			b.badMarks = append(b.badMarks, d)
		}
	}
}

// pages lists README.md and every Markdown page under docs/, relative to
// root.
func pages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found %d pages", len(out))
	}
	return out
}

// shellWords finds where a command line's own words end: at a comment
// (" #"), a redirection, a pipe, "&&", "||" or ";" outside quotes. It
// returns that index (len(s) if none) and whether the line leaves a quote
// open.
func shellWords(s string) (end int, open bool) {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return i, false
		case strings.ContainsRune("|&;<>", r):
			return i, false
		}
	}
	return len(s), quote != 0
}

// setTakers are the trellis subcommands that take --set. For the others
// (launch), a block writes its config from a preset, and the overrides go
// into that file (setInFile).
var setTakers = []string{"run", "sweep", "validate", "worst-case"}

// rewrite returns a sh block's script with a marker's flags added to the
// trellis commands they apply to: --set KEY=VALUE to run, sweep and
// validate, the same overrides written into the file of a "trellis presets
// show NAME > FILE", the demo flags to demo. A command continued over several lines
// ("\" at the end) gets them on its last line.
func rewrite(text string, set, file []string, demo string) string {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var out []string
	var cmd []string // the lines of the logical command so far
	for _, l := range lines {
		cmd = append(cmd, l)
		if strings.HasSuffix(strings.TrimRight(l, " \t"), "\\") {
			continue
		}
		out = append(out, addFlags(cmd, set, file, demo)...)
		cmd = nil
	}
	out = append(out, cmd...)
	return strings.Join(out, "\n") + "\n"
}

// addFlags adds the flags to a logical command (its lines) if it is a
// trellis command that takes them.
func addFlags(cmd []string, set, file []string, demo string) []string {
	words := strings.Fields(strings.ReplaceAll(strings.Join(cmd, " "), "\\", " "))
	for len(words) > 0 && strings.Contains(words[0], "=") { // VAR=value trellis …
		words = words[1:]
	}
	for i := 0; i < len(words); i++ { // "> file" as one word or two
		if w, ok := strings.CutPrefix(words[i], ">"); ok && w != "" {
			words = slices.Insert(slices.Delete(words, i, i+1), i, ">", w)
		}
	}
	if len(words) < 2 || words[0] != "trellis" {
		return cmd
	}
	var flags []string
	switch {
	case len(words) >= 6 && words[1] == "presets" && words[2] == "show" && words[4] == ">" && len(set)+len(file) > 0:
		// A preset's TOML written to a file, for commands that take no
		// --set (launch): the overrides go into the file.
		edit := []string{`&& DOCCHECK_MODE=set "$DOCCHECK_SET"`, shellQuote(words[5])}
		for _, kv := range append(slices.Clone(set), file...) {
			edit = append(edit, shellQuote(kv))
		}
		last := cmd[len(cmd)-1]
		end, _ := shellWords(strings.Replace(last, ">", " ", 1)) // past the redirection
		cmd = slices.Clone(cmd)
		cmd[len(cmd)-1] = strings.TrimRight(last[:end], " \t") + " " + strings.Join(edit, " ") + " " + last[end:]
		return cmd
	case slices.Contains(setTakers, words[1]):
		for _, kv := range set {
			flags = append(flags, "--set", shellQuote(kv))
		}
	case words[1] == "demo" && demo != "":
		flags = append(flags, demo)
	}
	if len(flags) == 0 {
		return cmd
	}
	last := cmd[len(cmd)-1]
	end, _ := shellWords(last)
	head := strings.TrimRight(last[:end], " \t")
	cmd = slices.Clone(cmd)
	cmd[len(cmd)-1] = head + " " + strings.Join(flags, " ") + " " + last[end:]
	return cmd
}

// shellQuote quotes a word for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func TestRewriteAddsTheMarkersFlags(t *testing.T) {
	set := []string{"rounds=2", "model.hidden=[8]"}
	for _, c := range []struct{ in, want string }{
		{"trellis run quickstart   # a preset\n", "trellis run quickstart --set 'rounds=2' --set 'model.hidden=[8]' # a preset\n"},
		{"trellis sweep my.toml -o runs/x\n", "trellis sweep my.toml -o runs/x --set 'rounds=2' --set 'model.hidden=[8]' \n"},
		{"trellis validate my.toml -o d && trellis report d\n", "trellis validate my.toml -o d --set 'rounds=2' --set 'model.hidden=[8]' && trellis report d\n"},
		{"trellis launch my.toml -o d\n", "trellis launch my.toml -o d\n"},
		{"trellis presets show quickstart > my.toml   # edit\n", "trellis presets show quickstart > my.toml && DOCCHECK_MODE=set \"$DOCCHECK_SET\" 'my.toml' 'rounds=2' 'model.hidden=[8]' # edit\n"},
		{"trellis presets show quickstart >my.toml\n", "trellis presets show quickstart >my.toml && DOCCHECK_MODE=set \"$DOCCHECK_SET\" 'my.toml' 'rounds=2' 'model.hidden=[8]' \n"},
		{"trellis validate a.toml \\\n    --json\n", "trellis validate a.toml \\\n    --json --set 'rounds=2' --set 'model.hidden=[8]' \n"},
		{"TRELLIS_CPU=avx2 trellis run q\n", "TRELLIS_CPU=avx2 trellis run q --set 'rounds=2' --set 'model.hidden=[8]' \n"},
		{"trellis report runs/x --rows a\n", "trellis report runs/x --rows a\n"},
		{"trellis presets show quickstart\n", "trellis presets show quickstart\n"},
		{"echo trellis run x\n", "echo trellis run x\n"},
		{"trellis demo   # the demo\n", "trellis demo --rounds 2 # the demo\n"},
	} {
		if got := rewrite(c.in, set, nil, "--rounds 2"); got != c.want {
			t.Errorf("rewrite(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestMarkerDirectives(t *testing.T) {
	text := "text\n<!-- doc-test: long 27 runs; set rounds=2 nodes=6 -->\n```sh\ntrellis run x\n```\n\n<!-- doc-test: skip needs Slurm -->\n```sh\nsbatch x\n```\n<!-- doc-test: excerpt of node/example_test.go -->\n```go\nx := 1\n```\n<!-- doc-test: frobnicate -->\n```sh\ntrue\n```\n```toml\na = 1\n```\n"
	bs, skipFile := parsePage("p.md", text)
	if skipFile != "" || len(bs) != 5 {
		t.Fatalf("%d blocks, skip-file %q", len(bs), skipFile)
	}
	if b := bs[0]; b.line != 3 || b.lang != "sh" || b.long != "27 runs" || !slices.Equal(b.set, []string{"rounds=2", "nodes=6"}) || b.text != "trellis run x\n" {
		t.Errorf("block 0: %+v", b)
	}
	if bs[1].skip != "needs Slurm" || bs[2].excerpt != "node/example_test.go" || bs[2].lang != "go" {
		t.Errorf("blocks 1, 2: %+v %+v", bs[1], bs[2])
	}
	if len(bs[3].badMarks) != 1 || bs[4].lang != "toml" || bs[4].skip != "" {
		t.Errorf("blocks 3, 4: %+v %+v", bs[3], bs[4])
	}
	if _, skipFile := parsePage("p.md", "<!-- doc-test: skip-file old records -->\n"); skipFile != "old records" {
		t.Errorf("skip-file: %q", skipFile)
	}
}

// buildTrellis builds the command line into dir.
func buildTrellis(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "trellis"), "./cmd/trellis")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/trellis: %v\n%s", err, out)
	}
}

// blockTimeout bounds one block; a block that needs longer is marked long
// and trimmed with --set, or skipped.
const blockTimeout = 5 * time.Minute

// runScript runs a sh block in dir with bin first on PATH and returns its
// combined output. The block runs in its own process group, killed whole
// on a timeout (a launch has children).
func runScript(ctx context.Context, dir, bin, script string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -eo pipefail\n"+script)
	cmd.Dir = dir
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DOCCHECK_SET="+self)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (timed out after %v)", err, blockTimeout)
	}
	return out.Bytes(), err
}

// TestDocCommands runs every sh block of README.md and of the pages under
// docs/, in order per page, each page in a temporary directory of its own.
func TestDocCommands(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found: the blocks are bash scripts")
	}
	// The binary and each page's directory outlive the subtests that make
	// them (a page's blocks share its directory), so the test removes them.
	var made []string
	t.Cleanup(func() {
		for _, d := range made {
			os.RemoveAll(d)
		}
	})
	mkdir := func(t *testing.T) string {
		d, err := os.MkdirTemp("", "doccheck-")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, d)
		return d
	}
	configs := mustAbs(t, filepath.Join(root, "configs"))
	var bin string
	for _, page := range pages(t) {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		blocks, skipFile := parsePage(page, string(text))
		var dir string
		for _, b := range blocks {
			if b.lang != "sh" {
				continue
			}
			t.Run(fmt.Sprintf("%s:%d", page, b.line), func(t *testing.T) {
				switch {
				case len(b.badMarks) > 0:
					t.Fatalf("%s:%d: marker directives not understood: %q (see the package documentation)", page, b.line-1, b.badMarks)
				case skipFile != "":
					t.Skipf("skipped (page): %s", skipFile)
				case b.skip != "":
					t.Skipf("skipped: %s", b.skip)
				case b.long != "" && testing.Short():
					t.Skipf("skipped under -short: %s", b.long)
				}
				if bin == "" {
					d := mkdir(t)
					buildTrellis(t, d)
					bin = d
				}
				if dir == "" {
					dir = mkdir(t)
					if err := os.Symlink(configs, filepath.Join(dir, "configs")); err != nil {
						t.Fatal(err)
					}
				}
				script := rewrite(b.text, b.set, b.file, b.demo)
				start := time.Now()
				out, err := runScript(context.Background(), dir, bin, script)
				t.Logf("%s:%d ran in %.1f s", page, b.line, time.Since(start).Seconds())
				if err != nil {
					t.Errorf("%s:%d: the block fails: %v\nscript:\n%s\noutput (last 40 lines):\n%s", page, b.line, err, script, tail(out, 40))
				}
			})
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// tail returns the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestGoBlocksAreExcerpts: every Go block of README.md and docs/ names the
// compiled file it is taken from, and its lines, indentation aside, appear
// in that file in the same order, one after the other.
func TestGoBlocksAreExcerpts(t *testing.T) {
	n := 0
	for _, page := range pages(t) {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		blocks, _ := parsePage(page, string(text))
		for _, b := range blocks {
			if b.lang != "go" {
				continue
			}
			n++
			if b.excerpt == "" {
				t.Errorf("%s:%d: a Go block without <!-- doc-test: excerpt of FILE --> just above it: show code from a compiled Example", page, b.line)
				continue
			}
			src, err := os.ReadFile(filepath.Join(root, b.excerpt))
			if err != nil {
				t.Errorf("%s:%d: %v", page, b.line, err)
				continue
			}
			if !strings.HasSuffix(b.excerpt, "_test.go") && !strings.HasSuffix(b.excerpt, ".go") {
				t.Errorf("%s:%d: excerpt of %s, not a Go file", page, b.line, b.excerpt)
			}
			if !containsLines(trimmedLines(string(src)), trimmedLines(b.text)) {
				t.Errorf("%s:%d: the Go block is not an excerpt of %s: copy it from there again", page, b.line, b.excerpt)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Go block found")
	}
}

func trimmedLines(s string) []string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}

// containsLines reports whether part appears in whole as consecutive lines.
func containsLines(whole, part []string) bool {
	for i := 0; i+len(part) <= len(whole); i++ {
		if slices.Equal(whole[i:i+len(part)], part) {
			return true
		}
	}
	return false
}

// link matches a Markdown link or image target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestLinksLeadIntoTheRepository: every relative link of README.md and
// docs/ leads to a file or directory of the repository, and a link to a
// heading (page.md#heading) to a heading of that page.
func TestLinksLeadIntoTheRepository(t *testing.T) {
	abs := mustAbs(t, root)
	for _, page := range pages(t) {
		text, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(stripCode(string(text)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := filepath.Join(filepath.Dir(filepath.Join(abs, page)), file)
			if file == "" {
				path = filepath.Join(abs, page)
			}
			if rel, err := filepath.Rel(abs, path); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: link %q leads outside the repository", page, target)
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %q: no such file", page, target)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Contains(headingAnchors(string(b)), anchor) {
					t.Errorf("%s: link %q: %s has no heading with anchor #%s", page, target, file, anchor)
				}
			}
		}
	}
}

// stripCode removes fenced blocks and inline code, where "](" is not a
// link.
func stripCode(s string) string {
	var out []string
	in := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, regexp.MustCompile("`[^`]*`").ReplaceAllString(l, ""))
		}
	}
	return strings.Join(out, "\n")
}

// headingAnchors returns the anchors a Markdown renderer (GitHub's) gives
// the headings of a page: lower case, spaces to "-", punctuation other
// than "-" and "_" dropped, repeats numbered "-1", "-2", ….
func headingAnchors(s string) []string {
	var out []string
	seen := map[string]int{}
	in := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
		}
		if in || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if k := seen[a]; k > 0 {
			out = append(out, fmt.Sprintf("%s-%d", a, k))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# trellis\n## Set up\n```sh\n# not a heading\n```\n## DMTT and MURMURA\n### R-DPFL\n## Scaling out: Slurm and Kubernetes\n## Set up\n## What `f = \"auto\"` means\n")
	want := []string{"trellis", "set-up", "dmtt-and-murmura", "r-dpfl", "scaling-out-slurm-and-kubernetes", "set-up-1", "what-f--auto-means"}
	if !slices.Equal(got, want) {
		t.Errorf("headingAnchors = %q, want %q", got, want)
	}
}

// TestIndexLinksEveryGuide: docs/README.md, the documents' index, links
// every guide under docs/guides/ and every method and results page.
func TestIndexLinksEveryGuide(t *testing.T) {
	index, err := os.ReadFile(filepath.Join(root, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, m := range link.FindAllStringSubmatch(string(index), -1) {
		file, _, _ := strings.Cut(m[1], "#")
		targets = append(targets, filepath.ToSlash(filepath.Clean(file)))
	}
	n := 0
	for _, dir := range []string{"guides", "methods", "results"} {
		pages, err := filepath.Glob(filepath.Join(root, "docs", dir, "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			n++
			if rel := dir + "/" + filepath.Base(p); !slices.Contains(targets, rel) {
				t.Errorf("docs/README.md does not link docs/%s: add it to the index", rel)
			}
		}
	}
	if n < 10 {
		t.Fatalf("found %d pages under docs/guides, docs/methods and docs/results", n)
	}
}
