// Package configs holds the built-in experiment presets, embedded in the
// binary so `trellis run NAME` works anywhere. Each preset is a TOML file
// of the experiment schema (`trellis config defaults`); a preset's name is
// its path without the .toml extension.
package configs

import (
	"embed"
	"io/fs"
	"slices"
	"strings"
)

//go:embed *.toml rdpfl/*.toml lightyear/*.toml dmtt/*.toml privacy/*.toml secagg/*.toml worst-case/*.toml
var files embed.FS

// Names lists the presets, sorted.
func Names() []string {
	var names []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".toml") {
			names = append(names, strings.TrimSuffix(p, ".toml"))
		}
		return nil
	})
	slices.Sort(names)
	return names
}

// Read returns a preset's TOML text.
func Read(name string) ([]byte, bool) {
	b, err := files.ReadFile(name + ".toml")
	return b, err == nil
}

// Summary is the first sentence of a preset's leading comment (its first
// comment lines up to a period or question mark), cut to at most max
// runes (at least 20); "" for an unknown preset.
func Summary(name string, max int) string {
	b, ok := Read(name)
	if !ok {
		return ""
	}
	var words []string
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "#  ") {
			break
		}
		words = append(words, strings.Fields(line[2:])...)
		if strings.HasSuffix(line, ".") || strings.HasSuffix(line, "?") {
			break
		}
	}
	s := []rune(strings.Join(words, " "))
	if max < 20 {
		max = 20
	}
	if len(s) > max {
		return string(s[:max-1]) + "…"
	}
	return string(s)
}
