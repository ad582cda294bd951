package train

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// trainerFiles are the files that may hold or take a *trainer: the run's
// lifecycle. Everything else gets what it reads as a dependency struct or
// as parameters, so that a type's fields tell what it may touch.
var trainerFiles = map[string]bool{"run.go": true, "trainer.go": true}

// TestTrainerStaysInItsFiles fails when a struct field, a parameter or a
// receiver of type *trainer (or of a type built from it) appears in a file
// of this package outside trainerFiles, tests included.
func TestTrainerStaysInItsFiles(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, name := range names {
		if trainerFiles[name] {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, use := range trainerUses(t, name, string(src)) {
			t.Errorf("%s: a field, parameter or receiver of type *trainer outside run.go and trainer.go: give it the dependencies it reads", use)
		}
	}
}

// TestTrainerUsesFound: the check finds a field, a parameter, a receiver
// and a function-typed field that takes a *trainer (as a field and as the
// function's parameter), and no local variable.
func TestTrainerUsesFound(t *testing.T) {
	src := `package train
type a struct{ t *trainer }
type b struct{ f func(x int, t *trainer) }
func c(t *trainer) {}
func (t *trainer) d() {}
func e() { var t *trainer; _ = t }
`
	if got := trainerUses(t, "x.go", src); len(got) != 5 {
		t.Fatalf("found %d uses, want 5: %v", len(got), got)
	}
}

// trainerUses returns the positions of the struct fields, parameters and
// receivers in src whose type mentions *trainer.
func trainerUses(t *testing.T, name, src string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var uses []string
	check := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, field := range fl.List {
			if mentionsTrainer(field.Type) {
				uses = append(uses, fset.Position(field.Pos()).String())
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.StructType:
			check(n.Fields)
		case *ast.FuncType:
			check(n.Params)
		case *ast.FuncDecl:
			check(n.Recv)
		}
		return true
	})
	return uses
}

// mentionsTrainer reports whether the type expression e contains
// *trainer.
func mentionsTrainer(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if s, ok := n.(*ast.StarExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && id.Name == "trainer" {
				found = true
			}
		}
		return !found
	})
	return found
}
