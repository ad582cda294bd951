// Package golden compares views with expected text in testdata/*.golden
// files; `go test -update` rewrites the files with what the views draw
// now. Views are compared without their escape sequences, so the files
// are plain text.
package golden
