package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The repository's layout rules (ARCHITECTURE.md), checked over every Go
// file: the direction of imports between the top-level folders, and the
// size limits of non-test, non-generated code.

const module = "github.com/gnnscope/gnnscope"

// allowedImports lists, for each top-level folder, the top-level folders of
// the project that its packages may import (besides their own folder).
var allowedImports = map[string][]string{
	"profile":  {},
	"clients":  {},
	"sessions": {"profile", "analysis"},
	"gnn":      {"profile"},
	"analysis": {"profile"},
	"runner":   {"gnn", "sessions", "profile", "clients", "analysis"},
	"tui":      {"runner", "sessions", "profile", "analysis"},
	"cli":      {"tui", "runner", "gnn", "sessions", "profile", "analysis"},
	".":        {"cli"},
}

// Size limits of non-test, non-generated code.
const (
	maxFuncLines   = 100
	maxFileLines   = 600
	maxTrainMethod = 15 // methods of one type in gnn/train
)

// goFile is one parsed Go file of the repository.
type goFile struct {
	path string // slash-separated, relative to the repository root
	fset *token.FileSet
	file *ast.File
}

func parseRepo(t *testing.T) []goFile {
	t.Helper()
	var files []goFile
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		files = append(files, goFile{path: filepath.ToSlash(path), fset: fset, file: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Go files found: run from the repository root")
	}
	return files
}

// topFolder returns the top-level folder of a slash-separated path, "."
// for files at the root.
func topFolder(path string) string {
	if i := strings.IndexByte(path, '/'); i >= 0 {
		return path[:i]
	}
	return "."
}

func TestImportDirection(t *testing.T) {
	for _, f := range parseRepo(t) {
		from := topFolder(f.path)
		allowed, ok := allowedImports[from]
		if !ok || (from == "." && strings.HasSuffix(f.path, "_test.go")) {
			continue // scripts, examples; the root's end-to-end tests
		}
		for _, imp := range f.file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rest, ok := strings.CutPrefix(p, module+"/")
			if !ok {
				continue
			}
			to := topFolder(rest + "/")
			if to == from || slices.Contains(allowed, to) {
				continue
			}
			t.Errorf("%s imports %s: %s may import only %v", f.path, p, from, allowed)
		}
		if strings.HasPrefix(f.path, "tui/common/") {
			for _, imp := range f.file.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == module+"/runner" {
					t.Errorf("%s imports runner: tui/common takes launching, canceling and comparing as injected functions", f.path)
				}
			}
		}
	}
}

func TestSizeLimits(t *testing.T) {
	methods := map[string]int{} // "dir.Type" in gnn/train -> methods
	for _, f := range parseRepo(t) {
		if strings.HasSuffix(f.path, "_test.go") || ast.IsGenerated(f.file) {
			continue
		}
		if n := f.fset.File(f.file.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s: %d lines (at most %d)", f.path, n, maxFileLines)
		}
		for _, d := range f.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			start, end := f.fset.Position(fd.Pos()), f.fset.Position(fd.End())
			if n := end.Line - start.Line + 1; n > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines (at most %d)", f.path, start.Line, fd.Name.Name, n, maxFuncLines)
			}
			if fd.Recv != nil && strings.HasPrefix(f.path, "gnn/train/") {
				methods[filepath.Dir(f.path)+"."+recvName(fd.Recv.List[0].Type)]++
			}
		}
	}
	for typ, n := range methods {
		if n > maxTrainMethod {
			t.Errorf("%s has %d methods (at most %d in gnn/train)", typ, n, maxTrainMethod)
		}
	}
}

// recvName returns the name of a method receiver's type.
func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// TestArchitecturePaths keeps ARCHITECTURE.md true: every file or folder
// of the repository it names in backticks exists.
func TestArchitecturePaths(t *testing.T) {
	b, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("`([^`\\s<>*]+)`")
	tops := []string{"cli/", "gnn/", "profile/", "sessions/", "runner/", "tui/", "scripts/", "clients/", "examples/", "docs/"}
	checked := 0
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		p := m[1]
		isFile := strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".py")
		inRepo := slices.ContainsFunc(tops, func(top string) bool { return strings.HasPrefix(p, top) })
		if !isFile && !inRepo {
			continue
		}
		checked++
		if _, err := os.Stat(filepath.FromSlash(p)); err != nil {
			t.Errorf("ARCHITECTURE.md names %s: %v", p, err)
		}
	}
	if checked < 30 {
		t.Errorf("ARCHITECTURE.md: only %d paths found; the where-does-it-live table names more", checked)
	}
}
