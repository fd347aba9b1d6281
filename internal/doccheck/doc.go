// Package doccheck holds the test that keeps the documents true: it runs
// every fenced sh block of README.md and of every page under docs/ with a
// freshly built trellis on PATH, checks that every Go block is an excerpt
// of the compiled code it names, that every relative link leads to a file
// (and heading) of the repository, and that docs/README.md indexes every
// guide, method page and results page.
//
// A block may carry a marker, an HTML comment on the line just above it
// (invisible when rendered), of directives separated by ";":
//
//	<!-- doc-test: set rounds=2 nodes=6 -->        add --set rounds=2 --set nodes=6 to every
//	                                                trellis run, sweep and validate
//	                                                (and write them into the file of a
//	                                                "trellis presets show NAME > FILE", for
//	                                                launch, which takes no --set)
//	<!-- doc-test: file sweep.seeds=[1] -->         write these into such a file only
//	<!-- doc-test: demo --rounds 2 -->              add these flags to every trellis demo
//	<!-- doc-test: long 27 runs -->                 skipped under go test -short, with the reason
//	<!-- doc-test: skip needs a Slurm cluster -->   never run; the reason is printed
//	<!-- doc-test: excerpt of node/example_test.go -->  a Go block: its lines, indentation
//	                                                aside, appear in that order in the file
//	<!-- doc-test: skip-file REASON -->             (anywhere in a page) skip all its blocks
//
// The blocks of one page run in order in one temporary directory (so a
// block may use the file an earlier one wrote), which holds a link to the
// repository's configs/ directory.
package doccheck
