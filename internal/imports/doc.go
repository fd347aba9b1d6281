// Package imports holds one test: that the module's packages import only
// what the package table of docs/architecture.md allows, and that the
// table matches the design's.
package imports
