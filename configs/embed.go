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

//go:embed *.toml rdpfl/*.toml lightyear/*.toml dmtt/*.toml
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
