// Package imports holds the repository's self-checks: that the module's
// packages import only what the package table of docs/architecture.md
// allows, that README.md's package map has a row for every package, and
// that no tracked file cites something outside the repository (a team
// write-up's path or an issue number). The citation pattern is exported
// (OutsideCitation) for the other self-checks that read text, such as the
// presets' lint.
package imports
