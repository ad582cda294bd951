package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	for _, ok := range []string{"baseline", "optimized-1", "a.b_c", "20261122-153045-ab12", "X",
		"optimized-own-gemm", "async-transfer", "sage.r2", "ddp.rank1", strings.Repeat("a", MaxNameLen)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", ".hidden", "-x", "a/b", `a\b`, "a b", "é", strings.Repeat("a", MaxNameLen+1), "a\x00"} {
		if ValidName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for in, want := range map[string]string{"my run/2": "my-run-2", "..x": "x", "": "run", "ok": "ok", "héllo": "h--llo"} {
		if got := SafeName(in); got != want || ValidName(got) != nil {
			t.Errorf("SafeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNameErrors: an error quotes the name, says what it names when
// known and what is wrong, and wraps ErrInvalidName.
func TestNameErrors(t *testing.T) {
	for _, tc := range []struct{ kind, name, want string }{
		{"run", "../../../../tmp/x", `run name "../../../../tmp/x": holds a path separator '/'`},
		{"run", ".x", `starts with '.'`},
		{"run", "tmp/x", `run name "tmp/x": holds a path separator '/'`},
		{"", `a\b`, `invalid name "a\\b": holds a path separator '\\'`},
		{"variant", "a\x00b", `variant name "a\x00b": holds the control character '\x00'`},
		{"file", "a\nb", `holds the control character '\n'`},
		{"session id", "", `session id name "": empty`},
		{"run", "..", "a reference to a folder"},
		{"run", "-rf", "starts with '-'"},
		{"run", "héllo", `holds 'é'; a name holds letters, digits`},
		{"run", "a\xffb", "holds the byte 0xff (not UTF-8)"},
		{"run", strings.Repeat("x", 200), "200 bytes, over the limit of 128"},
	} {
		err := CheckName(tc.kind, tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrInvalidName) {
			t.Errorf("CheckName(%q, %q) = %v, want %q", tc.kind, tc.name, err, tc.want)
		}
		if (ValidName(tc.name) == nil) != (err == nil) {
			t.Errorf("ValidName and CheckName disagree on %q", tc.name)
		}
	}
}

// FuzzValidName: a name ValidName accepts is one path element: joined
// under a folder, with any of the suffixes the store adds, it stays a
// file directly inside that folder. Any string's SafeName is accepted.
func FuzzValidName(f *testing.F) {
	for _, seed := range []string{
		"baseline", "sage.r2", "ddp.rank3", "20261125-152514-604b", "optimized-own-gemm",
		"../../../../tmp/x", "..", ".", "", "/", "/etc/passwd", `..\..\x`, "a/../../b",
		"x\x00.jsonl", "\n", "-rf", ".hidden", "a b", "é", "\xff\xfe", "C:x", "~root",
		strings.Repeat("a", MaxNameLen), strings.Repeat("a", MaxNameLen+1), "..a", "a..", "a/.",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, name string) {
		if got := SafeName(name); ValidName(got) != nil {
			t.Fatalf("SafeName(%q) = %q is refused", name, got)
		}
		err := ValidName(name)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
				t.Fatalf("ValidName(%q) = %v: not an ErrInvalidName naming it", name, err)
			}
			return
		}
		if len(name) == 0 || len(name) > MaxNameLen {
			t.Fatalf("ValidName(%q) accepted a name of %d bytes", name, len(name))
		}
		for _, suffix := range []string{"", journalExt, pidExt, ".log", ".rank7" + journalExt, ".r2"} {
			elem := name + suffix
			p := filepath.Join(dir, elem)
			if filepath.Dir(p) != dir || filepath.Base(p) != elem {
				t.Fatalf("%q joined under %s is %s: not a file of that folder", elem, dir, p)
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil || rel != elem || rel == "." || rel == ".." || strings.ContainsRune(rel, os.PathSeparator) {
				t.Fatalf("%q joined under %s is %s (relative %q, %v)", elem, dir, p, rel, err)
			}
		}
	})
}
