package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The one vocabulary (ARCHITECTURE.md): each run status and each value of
// a config choice is a typed constant, defined once. A Go string literal
// equal to one of their values anywhere else in non-test code is a copy
// that can drift from the type; this test finds them.

// vocabulary is a typed string enumeration: the type's constants, of
// type typ, declared in file owner, are its values.
type vocabulary struct {
	typ, owner string
}

// vocabularies are the enumerations checked.
var vocabularies = []vocabulary{
	{"Status", "profile/status.go"},
	{"Select", "gnn/train/choices.go"},
	{"PartBalance", "gnn/train/choices.go"},
	{"FeatureNorm", "gnn/train/choices.go"},
	{"CutNorm", "gnn/train/choices.go"},
	{"Activation", "gnn/nn/act.go"},
	{"Policy", "gnn/featcache/policy.go"},
	{"Rule", "gnn/memory/cut.go"},
	{"Kind", "gnn/device/name.go"}, // --device and --sampler-device
	{"Gemm", "gnn/device/gemm.go"},
	{"Place", "gnn/device/sampling.go"}, // the feature store
}

// vocabularyExceptions are literals equal to a vocabulary's value that
// mean something else in their file: file -> the values it may write.
var vocabularyExceptions = map[string][]string{
	"profile/event.go":                {"oom"},                      // TypeOOM, the event type
	"profile/decode.go":               {"error", "host", "cpu"},     // JSON keys
	"profile/kineto/scanjson.go":      {"device"},                   // a Kineto trace's "device" key
	"profile/kineto/convert.go":       {"device"},                   // the same key
	"profile/usage.go":                {"cpu"},                      // usage's "cpu" key
	"runner/machine.go":               {"cpu"},                      // the cgroup v1 CPU controller
	"analysis/category.go":            {"unknown"},                  // a category out of range
	"analysis/advice.go":              {"cuda", "uva", "device"},    // the journal's config, read as JSON: analysis may not import gnn
	"analysis/config.go":              {"cuda"},                     // the same
	"analysis/verdict.go":             {"none"},                     // a verdict's kind
	"analysis/whatif/trace.go":        {"cpu"},                      // the journal's config, read as JSON
	"cli/explain/format.go":           {"none"},                     // no epoch was evaluated
	"cli/explain/sections.go":         {"error"},                    // a column: the prediction's error
	"tui/compare/waterfall.go":        {"unknown"},                  // a part no run measured or predicted
	"tui/newexp/form.go":              {"device"},                   // the form field's key
	"tui/newexp/commands.go":          {"auto"},                     // a spec's key: auto = false is --no-auto
	"cli/replay/replay.go":            {"error", "host"},            // the printed events' keys
	"cli/bench/bench.go":              {"unknown"},                  // a CPU model nobody named
	"cli/bench/cache.go":              {"degree", "frequency"},      // the hit-rate curves (with the oracle's)
	"cli/bench/curve.go":              {"degree", "frequency"},      // the same curves
	"cli/gpucheck/gpucheck.go":        {"ok", "device"},             // a kernel check that passed; the flag's name
	"cli/trainflags/register.go":      {"device"},                   // the flag's name
	"cli/partition/partition.go":      {"nodes", "edges"},           // the partition's counts
	"gnn/data/load/stats.go":          {"nodes", "edges", "degree"}, // the printed rows' labels
	"gnn/data/ogb/ogb.go":             {"empty"},                    // an empty CSV
	"gnn/data/ogb/edges.go":           {"edges"},                    // what an allocation is for
	"gnn/data/synth/generate.go":      {"edges"},                    // a progress step
	"gnn/device/device.go":            {"unknown"},                  // an aggregation's name
	"gnn/device/cuda/kernels.go":      {"relu", "scale"},            // kernel names
	"gnn/device/cuda/ops_cuda.go":     {"relu", "scale"},            // kernel names
	"gnn/device/devcheck/compare.go":  {"relu", "scale"},            // the checked operations
	"gnn/train/gpudata.go":            {"edges"},                    // a span attribute
	"runner/external_run.go":          {"canceled"},                 // the error text of a canceled command
	"runner/launch.go":                {"canceled"},                 // the session's canceled marker file
	"runner/spec.go":                  {"auto"},                     // the external variant's key
	"runner/experiment.go":            {"auto"},                     // the split mode
	"sessions/names.go":               {"empty"},                    // what is wrong with a name
	"sessions/compare_format.go":      {"host", "partial"},          // a table row; the CSV column of stopped runs
	"tui/compare/compare.go":          {"host"},                     // a table row
	"tui/internal/fixture/fixture.go": {"error"},                    // run_end's "error" key
	"tui/internal/synth/synth.go":     {"degree"},                   // a synthetic config, as a journal holds it
	"tui/timeline/select.go":          {"none"},                     // a span without attributes
}

// vocabularyValues reads each vocabulary's values from its owner's
// constant declarations: value -> the owners that define it.
func vocabularyValues(t *testing.T, files map[string]goFile) map[string][]string {
	t.Helper()
	owners := map[string][]string{}
	for _, v := range vocabularies {
		f, ok := files[v.owner]
		if !ok {
			t.Fatalf("vocabulary %s: no file %s", v.typ, v.owner)
		}
		vals := typedConstants(f.file, v.typ)
		if len(vals) < 2 {
			t.Fatalf("vocabulary %s: %d constants of type %s in %s", v.typ, len(vals), v.typ, v.owner)
		}
		for _, s := range vals {
			owners[s] = append(owners[s], v.owner)
		}
	}
	return owners
}

// typedConstants returns the string values of f's constants declared
// with type typ.
func typedConstants(f *ast.File, typ string) []string {
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
				continue
			}
			for _, e := range vs.Values {
				if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// stringLiterals returns f's string literals with their values, leaving
// out struct tags and import paths (comments are not literals).
func stringLiterals(f *ast.File) map[*ast.BasicLit]string {
	skip := map[*ast.BasicLit]bool{}
	for _, imp := range f.Imports {
		skip[imp.Path] = true
	}
	out := map[*ast.BasicLit]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			if n.Tag != nil {
				skip[n.Tag] = true
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING && !skip[n] {
				if s, err := strconv.Unquote(n.Value); err == nil {
					out[n] = s
				}
			}
		}
		return true
	})
	return out
}

func TestVocabularyLiterals(t *testing.T) {
	files := map[string]goFile{}
	for _, f := range parseRepo(t) {
		if !strings.HasSuffix(f.path, "_test.go") {
			files[f.path] = f
		}
	}
	owners := vocabularyValues(t, files)
	used := map[string]bool{}
	for path, f := range files {
		for lit, s := range stringLiterals(f.file) {
			own, ok := owners[s]
			if !ok || slices.Contains(own, path) {
				continue
			}
			if slices.Contains(vocabularyExceptions[path], s) {
				used[path+"\x00"+s] = true
				continue
			}
			t.Errorf("%s: %q is a value of the typed constants in %s: use the constant (or, if it means something else here, list it in vocabularyExceptions)",
				f.fset.Position(lit.Pos()), s, strings.Join(own, ", "))
		}
	}
	for path, vals := range vocabularyExceptions {
		for _, s := range vals {
			if !used[path+"\x00"+s] {
				t.Errorf("vocabularyExceptions: %s no longer writes %q: remove it from the list", path, s)
			}
		}
	}
}

// The scan sees a status written as a value, and neither the same word
// in a comment nor in a struct tag.
func TestVocabularyLiteralsScan(t *testing.T) {
	src := `package p

import "fmt"

// crashed: "crashed" in a comment is no literal.
type T struct {
	S string ` + "`json:\"crashed\"`" + `
}

func f() { fmt.Println("crashed", "crashed run") }
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stringLiterals(f) {
		if s == "crashed" {
			got = append(got, s)
		}
	}
	if len(got) != 1 {
		t.Errorf("found %d literals \"crashed\", want 1 (the argument of Println)", len(got))
	}
	decl := `package p

type Status string

const (
	A Status = "a"
	B        = "b"
	C Status = "c"
)
`
	f, err = parser.ParseFile(token.NewFileSet(), "p.go", decl, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := typedConstants(f, "Status"); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("typedConstants = %q, want [a c]", got)
	}
}
