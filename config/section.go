package config

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// The optional sections ([consensus], [timing]) are pointers that a file
// sets by naming them; the keys it leaves out take the section's
// defaults. These helpers do that, and list the section's dotted keys, by
// the fields' TOML tags.

// fillSection sets every field of s whose key the file did not define
// under section to its value in def.
func fillSection[T any](s *T, def T, md toml.MetaData, section string) {
	sv, dv := reflect.ValueOf(s).Elem(), reflect.ValueOf(def)
	for i := range sv.NumField() {
		if !md.IsDefined(section, sectionKey[T](i)) {
			sv.Field(i).Set(dv.Field(i))
		}
	}
}

// sectionKey is the TOML key of T's i-th field.
func sectionKey[T any](i int) string {
	return strings.Split(reflect.TypeFor[T]().Field(i).Tag.Get("toml"), ",")[0]
}

// tomlComments is v encoded as TOML, each line a comment ("# key = value"),
// without a final newline: how the defaults text lists an optional
// section's keys.
func tomlComments(v any) string {
	var b strings.Builder
	_ = toml.NewEncoder(&b).Encode(v)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	for i, l := range lines {
		lines[i] = "# " + l
	}
	return strings.Join(lines, "\n")
}

// sectionKeys are the dotted keys of section, T its type.
func sectionKeys[T any](section string) []string {
	var out []string
	for i := range reflect.TypeFor[T]().NumField() {
		out = append(out, section+"."+sectionKey[T](i))
	}
	return out
}
