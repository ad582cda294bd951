package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

// Check compares got (escape sequences stripped, trailing spaces of each
// line kept, so widths are checked too) with testdata/<name>.golden.
func Check(t testing.TB, name, got string) {
	t.Helper()
	got = ansi.Strip(got)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, show(got), show(string(want)))
	}
}

// ASCII reports an error when view (escape sequences stripped) holds a
// character outside 7-bit ASCII: what the plain-ASCII mode promises.
func ASCII(t testing.TB, view string) {
	t.Helper()
	v := ansi.Strip(view)
	if i := strings.IndexFunc(v, func(r rune) bool { return r > 127 }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		t.Errorf("non-ASCII %q in an ASCII view:\n%s", r, v)
	}
}

// Fits reports an error, and returns false, when view has more than h
// lines or a line wider than w cells: a view must never wrap or scroll
// the terminal. what names the view and its state in the message.
func Fits(t testing.TB, what, view string, w, h int) bool {
	t.Helper()
	if view == "" {
		return true
	}
	lines := strings.Split(view, "\n")
	if len(lines) > h {
		t.Errorf("%s at %dx%d: %d lines", what, w, h, len(lines))
		return false
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("%s at %dx%d: line %d is %d wide: %q", what, w, h, i, n, ansi.Strip(l))
			return false
		}
	}
	return true
}

// show marks line ends so trailing spaces are visible.
func show(s string) string {
	return strings.ReplaceAll(s, "\n", "|\n") + "|"
}
