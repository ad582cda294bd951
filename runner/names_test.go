package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/sessions"
)

// escape is the run name of issue 18's hostile archive. Under a store at
// T/store, runs/../../../../tmp/x is T/tmp/x: what it would create stays
// inside the test's folder, where the tests look for it (T/tmp exists).
const escape = "../../../../tmp/x"

// hostileSession makes a session in a store at T/store whose launch.json
// is launch, and returns T.
func hostileSession(t *testing.T, launch string) (*sessions.Store, *sessions.Session, string) {
	t.Helper()
	st, top := escapeStore(t)
	s, err := st.Create(sessions.SessionMeta{Name: "hostile", Variants: []sessions.Variant{{Name: "baseline"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), launchFile), []byte(launch), 0o644); err != nil {
		t.Fatal(err)
	}
	return st, s, top
}

// escapeStore opens a store at T/store and makes T/tmp, where escape
// leads; it returns T.
func escapeStore(t *testing.T) (*sessions.Store, string) {
	t.Helper()
	top := t.TempDir()
	if err := os.Mkdir(filepath.Join(top, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	st, err := sessions.Open(filepath.Join(top, "store"))
	if err != nil {
		t.Fatal(err)
	}
	return st, top
}

// outside lists what exists in top and its tmp folder but the store and
// that folder: anything there was written through a hostile name.
func outside(t *testing.T, top string) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{top, filepath.Join(top, "tmp")} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if dir != top || e.Name() != "store" && e.Name() != "tmp" {
				out = append(out, filepath.Join(dir, e.Name()))
			}
		}
	}
	return out
}

// TestLaunchFileNamesRefusedAtLoad: a launch.json edited to name a run or
// variant that is no safe file name is refused where it is read, with an
// error naming the file, the entry and the name; cancel and the run
// states touch nothing outside the store.
func TestLaunchFileNamesRefusedAtLoad(t *testing.T) {
	for _, tc := range []struct{ launch, want string }{
		{`{"mode":"parallel","runs":["baseline","` + escape + `"]}`, `launch.json: runs[1]: run name "` + escape + `": holds a path separator '/'`},
		{`{"mode":"sequential","runs":["/tmp/x"]}`, `runs[0]: run name "/tmp/x"`},
		{`{"mode":"sequential","runs":["baseline.r1"],"variants":{"baseline.r1":"` + escape + `"}}`, `variants["baseline.r1"]: variant name "` + escape + `"`},
		{`{"mode":"sequential","runs":["baseline"],"variants":{"` + escape + `":"baseline"}}`, `variants: run name "` + escape + `"`},
		{`{"mode":"sequential","runs":["x\u0000y"]}`, `control character`},
		{`{"mode":"sequential","runs":[""]}`, `run name "": empty`},
		{`{"mode":"sequential","runs":["baseline.rank1"]}`, `rank 1's journal`},
	} {
		st, s, top := hostileSession(t, tc.launch)
		check := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, sessions.ErrInvalidName) || !strings.Contains(err.Error(), tc.want) ||
				what != "CheckImport" && !strings.Contains(err.Error(), "session "+s.ID()) {
				t.Errorf("%s of %s: error %v, want %q", what, tc.launch, err, tc.want)
			}
		}
		_, err := RunStates(s)
		check("RunStates", err)
		_, err = Cancel(st, s.ID())
		check("Cancel", err)
		check("RunSequence", RunSequence(context.Background(), st, s.ID(), "/bin/false", io.Discard))
		check("CheckImport", CheckImport(s.Dir()))
		if got := outside(t, top); len(got) > 0 {
			t.Errorf("%s: written outside the store: %v", tc.launch, got)
		}
	}
}

// TestLaunchFileNamesAccepted: the names gnnscope writes pass, and a
// session without launch.json is no error for an import.
func TestLaunchFileNamesAccepted(t *testing.T) {
	_, s, _ := hostileSession(t, `{"mode":"sequential","runs":["baseline.r1","baseline.r2"],"variants":{"baseline.r1":"baseline","baseline.r2":"baseline"}}`)
	if _, err := RunStates(s); err != nil {
		t.Error(err)
	}
	if err := CheckImport(s.Dir()); err != nil {
		t.Error(err)
	}
	if err := CheckImport(t.TempDir()); err != nil {
		t.Errorf("no launch.json: %v", err)
	}
}

// TestImportRefusesLaunchFileNames is issue 18's case: an archive whose
// launch.json lists a run named ../../../../tmp/x is refused at import
// with CheckImport; the store is left as it was.
func TestImportRefusesLaunchFileNames(t *testing.T) {
	_, s, _ := hostileSession(t, `{"mode":"sequential","runs":["baseline","`+escape+`"]}`)
	var arc bytes.Buffer
	if _, err := s.Export(&arc, sessions.ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	st, top := escapeStore(t)
	_, _, err := st.Import(bytes.NewReader(arc.Bytes()), sessions.ImportOptions{Check: CheckImport})
	if !errors.Is(err, sessions.ErrBadArchive) || !errors.Is(err, sessions.ErrInvalidName) || !strings.Contains(err.Error(), `run name "`+escape+`"`) {
		t.Errorf("import: %v", err)
	}
	if list, err := st.List(); err != nil || len(list) != 0 {
		t.Errorf("the store holds %+v (%v)", list, err)
	}
	if got := outside(t, top); len(got) > 0 {
		t.Errorf("written outside the store: %v", got)
	}
}

// TestLaunchRefusesNames: names that come from a spec, --cmd or
// --variants are refused before a session is created.
func TestLaunchRefusesNames(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ext := &External{Cmd: "true", Argv: []string{"true"}}
	for _, name := range []string{escape, "/tmp/x", "a\x00b", "..", "-x", ".x", "x.rank2", strings.Repeat("n", 200)} {
		_, err := Launch(st, Experiment{}, []Variant{{Name: name, External: ext}}, LaunchOptions{Executable: "/bin/false"})
		if !errors.Is(err, sessions.ErrInvalidName) || !strings.Contains(err.Error(), "variant name") {
			t.Errorf("Launch(%q): %v", name, err)
		}
		if _, err := SelectVariants(nil, []string{"baseline", name}, DefaultVariantParams()); !errors.Is(err, sessions.ErrInvalidName) {
			t.Errorf("SelectVariants(%q): %v", name, err)
		}
		if _, err := ParseSpec("s.toml", []byte("[variants.\""+strings.ReplaceAll(name, "\x00", `\u0000`)+"\"]\ncmd = \"true\"\n")); !errors.Is(err, sessions.ErrInvalidName) {
			t.Errorf("ParseSpec(%q): %v", name, err)
		}
	}
	if _, err := ParseCmd(escape + "=python3 t.py"); !errors.Is(err, sessions.ErrInvalidName) || !strings.Contains(err.Error(), `--cmd`) {
		t.Errorf("ParseCmd: %v", err)
	}
	if list, err := st.List(); err != nil || len(list) != 0 {
		t.Errorf("sessions created: %d (%v)", len(list), err)
	}
}

// TestRunWorkerRefusesNames: the worker's --run is checked before any
// file is made from it.
func TestRunWorkerRefusesNames(t *testing.T) {
	st, s, top := hostileSession(t, `{"mode":"parallel","runs":["baseline"]}`)
	if _, err := RunWorker(context.Background(), st, s.ID(), escape, io.Discard); !errors.Is(err, sessions.ErrInvalidName) || !strings.Contains(err.Error(), `run name "`+escape+`"`) {
		t.Errorf("RunWorker: %v", err)
	}
	if got := outside(t, top); len(got) > 0 {
		t.Errorf("written outside the store: %v", got)
	}
}
