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

// TestCommonWithoutRunner keeps tui/common, which every screen imports,
// free of runner, directly or through the project's packages it imports:
// launching goes through tui/launch.
func TestCommonWithoutRunner(t *testing.T) {
	const module = "github.com/gnnscope/gnnscope"
	const runner = module + "/runner"
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var walk func(pkg string, chain []string)
	walk = func(pkg string, chain []string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		dir := filepath.Join("..", filepath.FromSlash(strings.TrimPrefix(pkg, module+"/")))
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files in %s (%v)", pkg, dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == runner || strings.HasPrefix(p, runner+"/") {
					t.Errorf("tui/common imports %s through %s", p, strings.Join(append(chain, path), " -> "))
				}
				if strings.HasPrefix(p, module+"/") {
					walk(p, append(chain, pkg))
				}
			}
		}
	}
	walk(module+"/tui/common", nil)
	if !seen[module+"/profile"] {
		t.Error("the walk did not reach profile: the test no longer sees tui/common's imports")
	}
}

// TestStackKnowsNoScreen keeps the root's stack (app.go) free of the
// screens it shows: it draws and routes through common.Screen only, and
// the screens it builds on navigation messages are built in screens.go.
// The sessions list, always at the bottom, is the one it names.
func TestStackKnowsNoScreen(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "app.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		switch strings.TrimPrefix(p, "github.com/gnnscope/gnnscope/tui/") {
		case "compare", "dashboard", "newexp", "exporter":
			t.Errorf("app.go imports the screen %s: build it in screens.go, route to it as a common.Screen", p)
		}
	}
}
