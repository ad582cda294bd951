package tui

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportChain keeps the workbench on its side of the import chain
// (main -> tui -> runner -> gnn): no file of tui or its packages imports
// the engine directly.
func TestImportChain(t *testing.T) {
	const engine = "github.com/gnnscope/gnnscope/gnn"
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == engine || strings.HasPrefix(p, engine+"/") {
				t.Errorf("%s imports %s: go through runner", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
