package sessions

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// archiveSession makes a finished session with two runs, their logs, a
// pid file and a leftover temporary file (the last two are not exported).
func archiveSession(t *testing.T, st *Store) *Session {
	t.Helper()
	s, err := st.Create(SessionMeta{Name: "archive test", Spec: json.RawMessage(`{"data":"synth-tiny"}`),
		Variants: []Variant{{Name: "baseline"}, {Name: "optimized"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"baseline", "optimized"} {
		evs := replayEvents()
		evs[0].Run, evs[0].Session, evs[0].Variant = run, s.ID(), run
		writeJournal(t, s.JournalPath(run), evs)
		if err := os.WriteFile(filepath.Join(s.RunsDir(), run+".log"), []byte("log of "+run+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(s.Dir(), "launch.json"), []byte(`{"mode":"sequential","runs":["baseline","optimized"]}`+"\n"), 0o644)
	os.WriteFile(s.PidPath("baseline"), []byte(`{"pid":1,"host":"elsewhere"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(s.Dir(), ".session.json.tmp123"), []byte("partial"), 0o644)
	return s
}

func exportBytes(t *testing.T, s *Session, opts ExportOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Export(&buf, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// snapshot lists every path under root with its size and type, to tell
// whether an operation changed anything.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprint(fi.Mode(), " ", fi.Size())
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] += " " + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// comparable drops what differs between two stores holding the same
// session: folders, and pids (pid files are not exported).
func comparable(l []SessionInfo) []SessionInfo {
	l = slices.Clone(l)
	for i := range l {
		l[i].Dir = ""
		l[i].Runs = slices.Clone(l[i].Runs)
		for j := range l[i].Runs {
			l[i].Runs[j].Journal = filepath.Base(l[i].Runs[j].Journal)
			l[i].Runs[j].Pid = 0
		}
	}
	return l
}

func TestArchiveRoundTrip(t *testing.T) {
	src := newStore(t)
	s := archiveSession(t, src)
	out := filepath.Join(t.TempDir(), "s.tar.gz")
	rep, err := s.ExportFile(out, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// session.json, launch.json, 2 journals, 2 logs; no pid or temp file
	if rep.Files != 6 || len(rep.Skipped) != 0 || len(rep.Running) != 0 {
		t.Errorf("report %+v", rep)
	}
	dst := newStore(t)
	s2, irep, err := dst.ImportFile(out, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s2.ID() != s.ID() || irep.Files != 6 || irep.Replaced || irep.Manifest.Host == "" {
		t.Errorf("import report %+v", irep)
	}
	for _, rel := range []string{"session.json", "launch.json", "runs/baseline.jsonl", "runs/optimized.jsonl", "runs/baseline.log"} {
		a, err1 := os.ReadFile(filepath.Join(s.Dir(), rel))
		b, err2 := os.ReadFile(filepath.Join(s2.Dir(), rel))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs after the round trip (%v, %v)", rel, err1, err2)
		}
	}
	for _, rel := range []string{"runs/baseline.pid", ".session.json.tmp123"} {
		if _, err := os.Stat(filepath.Join(s2.Dir(), rel)); err == nil {
			t.Errorf("%s was exported", rel)
		}
	}
	l1, _ := src.List()
	l2, _ := dst.List()
	if !reflect.DeepEqual(comparable(l1), comparable(l2)) {
		t.Errorf("list entries differ:\n%+v\n%+v", l1, l2)
	}
	info, err := s2.ImportInfo()
	if err != nil || info == nil || info.Version != ArchiveVersion || info.Imported.IsZero() {
		t.Errorf("import info %+v, %v", info, err)
	}
	if info, err := s.ImportInfo(); info != nil || err != nil {
		t.Errorf("the original reads as imported: %+v %v", info, err)
	}
	// exporting the imported copy gives the same files
	var again bytes.Buffer
	if rep, err := s2.Export(&again, ExportOptions{}); err != nil || rep.Files != 6 {
		t.Errorf("re-export: %+v %v", rep, err)
	}
	// nothing left behind in the store but the session
	ents, _ := os.ReadDir(filepath.Join(dst.Root(), "sessions"))
	if len(ents) != 1 {
		t.Errorf("store holds %v", ents)
	}
}

func TestImportRefusesOverwrite(t *testing.T) {
	src := newStore(t)
	s := archiveSession(t, src)
	arc := exportBytes(t, s, ExportOptions{})
	dst := newStore(t)
	if _, _, err := dst.Import(bytes.NewReader(arc), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// mark the imported copy, so a replacement shows
	marker := filepath.Join(dst.Root(), "sessions", s.ID(), "marker")
	os.WriteFile(marker, nil, 0o644)
	before := snapshot(t, dst.Root())
	_, _, err := dst.Import(bytes.NewReader(arc), ImportOptions{})
	if !errors.Is(err, os.ErrExist) || !strings.Contains(err.Error(), s.ID()) {
		t.Errorf("second import: %v", err)
	}
	if !reflect.DeepEqual(before, snapshot(t, dst.Root())) {
		t.Error("a refused import changed the store")
	}
	// refused while a CanReplace check says no
	no := errors.New("runs pending")
	if _, _, err := dst.Import(bytes.NewReader(arc), ImportOptions{Replace: true, CanReplace: func(*Session) error { return no }}); !errors.Is(err, no) {
		t.Errorf("CanReplace: %v", err)
	}
	_, rep, err := dst.Import(bytes.NewReader(arc), ImportOptions{Replace: true})
	if err != nil || !rep.Replaced {
		t.Fatalf("forced import: %+v %v", rep, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the old session was not replaced")
	}
	ents, _ := os.ReadDir(filepath.Join(dst.Root(), "sessions"))
	if len(ents) != 1 {
		t.Errorf("store holds %v", ents)
	}
}

// runningSession makes a session whose run "live" is running: its pid file
// names this test process and its journal ends mid-line.
func runningSession(t *testing.T, st *Store) *Session {
	t.Helper()
	s, err := st.Create(SessionMeta{Name: "running"})
	if err != nil {
		t.Fatal(err)
	}
	evs := replayEvents()
	writeJournal(t, s.JournalPath("live"), evs[:3])
	f, _ := os.OpenFile(s.JournalPath("live"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"t":"span","name":"tr`)
	f.Close()
	if err := s.WritePid("live", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.RunState("live"); st.Status != profile.StatusRunning {
		t.Fatalf("status %s", st.Status)
	}
	return s
}

func TestExportRunning(t *testing.T) {
	src := newStore(t)
	s := runningSession(t, src)
	out := filepath.Join(t.TempDir(), "s.tar.gz")
	if _, err := s.ExportFile(out, ExportOptions{}); !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), "live") {
		t.Errorf("export of a running session: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 0 {
		t.Errorf("a refused export left %v", ents)
	}
	rep, err := s.ExportFile(out, ExportOptions{AllowRunning: true})
	if err != nil || !slices.Equal(rep.Running, []string{"live"}) {
		t.Fatalf("forced export: %+v %v", rep, err)
	}
	dst := newStore(t)
	s2, irep, err := dst.ImportFile(out, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// only complete lines were exported
	orig, _ := os.ReadFile(s.JournalPath("live"))
	got, _ := os.ReadFile(s2.JournalPath("live"))
	if want := orig[:bytes.LastIndexByte(orig, '\n')+1]; !bytes.Equal(got, want) {
		t.Errorf("journal of a running run:\n%q\nwant\n%q", got, want)
	}
	if !slices.Equal(irep.Manifest.Running, []string{"live"}) {
		t.Errorf("manifest %+v", irep.Manifest)
	}
	// its writer is elsewhere: the imported run reads as crashed
	st, err := s2.RunState("live")
	if err != nil || st.Status != profile.StatusCrashed || st.Error == "" {
		t.Errorf("imported running run: %+v %v", st, err)
	}
	// the original is never replaced while running
	if _, _, err := src.ImportFile(out, ImportOptions{Replace: true}); !errors.Is(err, ErrRunning) {
		t.Errorf("replacing a running session: %v", err)
	}
}

// entry is one entry of a crafted archive.
type entry struct {
	hdr  tar.Header
	data string
}

func file(name, data string) entry {
	return entry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data))}, data}
}

// craft writes a gzip-compressed tar of a manifest for id (listing the
// regular files among entries, unless files is given) and the entries.
func craft(t testing.TB, id string, entries []entry, files []ManifestFile) []byte {
	t.Helper()
	if files == nil {
		for _, e := range entries {
			if e.hdr.Typeflag == tar.TypeReg {
				files = append(files, ManifestFile{Path: strings.TrimPrefix(e.hdr.Name, id+"/"), Size: e.hdr.Size})
			}
		}
	}
	man, _ := json.Marshal(Manifest{Format: ArchiveFormat, Version: ArchiveVersion, ID: id, Files: files})
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	all := append([]entry{file(ArchiveManifestName, string(man))}, entries...)
	for _, e := range all {
		h := e.hdr
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestImportRefusesHostileArchives(t *testing.T) {
	const id = "20261122-120000-abcd"
	meta := file(id+"/session.json", `{"v":1,"id":"`+id+`"}`)
	journal := file(id+"/runs/r.jsonl", `{"t":"run_start"}`+"\n")
	link := func(typ byte, name, target string) entry {
		return entry{tar.Header{Typeflag: typ, Name: name, Linkname: target, Mode: 0o644}, ""}
	}
	good := craft(t, id, []entry{meta, journal}, nil)
	metaOnly := []ManifestFile{{Path: "session.json", Size: meta.hdr.Size}}
	big := strings.Repeat("x", 2000)
	noManifest := func() []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		tw.WriteHeader(&meta.hdr)
		tw.Write([]byte(meta.data))
		tw.Close()
		zw.Close()
		return buf.Bytes()
	}()
	cases := []struct {
		name string
		arc  []byte
		opts ImportOptions
		want string
	}{
		{"dot-dot", craft(t, id, []entry{meta, file(id+"/../evil", "x")}, metaOnly), ImportOptions{}, ".."},
		{"dot-dot first", craft(t, id, []entry{meta, file("../evil", "x")}, metaOnly), ImportOptions{}, ".."},
		{"absolute", craft(t, id, []entry{meta, file("/tmp/gnnscope-evil", "x")}, metaOnly), ImportOptions{}, "absolute"},
		{"symlink", craft(t, id, []entry{meta, link(tar.TypeSymlink, id+"/runs/r.jsonl", "/etc/passwd")}, nil), ImportOptions{}, "symbolic link"},
		{"hardlink", craft(t, id, []entry{meta, link(tar.TypeLink, id+"/runs/r.jsonl", id+"/session.json")}, nil), ImportOptions{}, "hard link"},
		{"device", craft(t, id, []entry{meta, {tar.Header{Typeflag: tar.TypeChar, Name: id + "/runs/null", Devmajor: 1, Devminor: 3, Mode: 0o666}, ""}}, nil), ImportOptions{}, "character device"},
		{"fifo", craft(t, id, []entry{meta, {tar.Header{Typeflag: tar.TypeFifo, Name: id + "/runs/p", Mode: 0o644}, ""}}, nil), ImportOptions{}, "named pipe"},
		{"two sessions", craft(t, id, []entry{meta, file("20261122-120001-abcd/session.json", "{}")}, metaOnly), ImportOptions{}, "one session"},
		{"duplicate", craft(t, id, []entry{meta, journal, journal}, []ManifestFile{{Path: "session.json", Size: meta.hdr.Size}, {Path: "runs/r.jsonl", Size: journal.hdr.Size}}), ImportOptions{}, "twice"},
		{"case duplicate", craft(t, id, []entry{meta, journal, file(id+"/runs/R.jsonl", "{}")}, nil), ImportOptions{}, "twice"},
		{"oversize entry", craft(t, id, []entry{meta, file(id+"/runs/r.jsonl", big)}, nil), ImportOptions{MaxFileBytes: 1000}, "over the limit"},
		{"oversize total", craft(t, id, []entry{meta, file(id+"/runs/a.jsonl", big), file(id+"/runs/b.jsonl", big)}, nil), ImportOptions{MaxTotalBytes: 3000}, "limit"},
		{"too many files", craft(t, id, []entry{meta, journal}, nil), ImportOptions{MaxFiles: 1}, "more than 1 files"},
		{"many folders", craft(t, id, append([]entry{meta}, func() []entry {
			var dirs []entry
			for i := range 20 {
				dirs = append(dirs, entry{tar.Header{Typeflag: tar.TypeDir, Name: fmt.Sprintf("%s/d%d/", id, i), Mode: 0o755}, ""})
			}
			return dirs
		}()...), nil), ImportOptions{MaxFiles: 1}, "more than 10 entries"},
		{"unlisted entry", craft(t, id, []entry{meta, journal}, metaOnly), ImportOptions{}, "not in the manifest"},
		{"missing entry", craft(t, id, []entry{meta}, []ManifestFile{{Path: "session.json", Size: meta.hdr.Size}, {Path: "runs/r.jsonl", Size: 3}}), ImportOptions{}, "missing"},
		{"wrong size", craft(t, id, []entry{meta, journal}, []ManifestFile{{Path: "session.json", Size: meta.hdr.Size}, {Path: "runs/r.jsonl", Size: 3}}), ImportOptions{}, "manifest says"},
		{"unsafe name", craft(t, id, []entry{meta, file(id+"/runs/a b", "x")}, nil), ImportOptions{}, "unsafe"},
		{"hidden name", craft(t, id, []entry{meta, file(id+"/.bashrc", "x")}, nil), ImportOptions{}, "unsafe"},
		{"bad id", craft(t, "../x", []entry{meta}, nil), ImportOptions{}, "session id"},
		{"variant escapes", craft(t, id, []entry{file(id+"/session.json", `{"v":1,"variants":[{"name":"../../../../tmp/x"}]}`)}, nil),
			ImportOptions{}, `variants[0]: variant name "../../../../tmp/x"`},
		{"variant with NUL", craft(t, id, []entry{file(id+"/session.json", `{"v":1,"variants":[{"name":"a\u0000b"}]}`)}, nil),
			ImportOptions{}, `control character`},
		{"refused by Check", craft(t, id, []entry{meta, file(id+"/launch.json", `{"runs":["../../../../tmp/x"]}`)}, nil),
			ImportOptions{Check: func(dir string) error {
				if b, err := os.ReadFile(filepath.Join(dir, "launch.json")); err != nil || !strings.Contains(string(b), "tmp/x") {
					return fmt.Errorf("Check did not get the extracted folder: %v", err)
				}
				return errors.New("launch.json: a run escapes")
			}}, "launch.json: a run escapes"},
		{"no session.json", craft(t, id, []entry{journal}, nil), ImportOptions{}, "session.json"},
		{"other session's meta", craft(t, id, []entry{file(id+"/session.json", `{"id":"other"}`)}, nil), ImportOptions{}, "other"},
		{"no manifest", noManifest, ImportOptions{}, "no manifest"},
		{"truncated gzip", good[:len(good)/2], ImportOptions{}, "truncated"},
		{"truncated end", good[:len(good)-4], ImportOptions{}, "truncated"},
		{"not gzip", []byte("hello, this is not an archive\n"), ImportOptions{}, "gzip"},
		{"gzip, not tar", func() []byte {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			zw.Write([]byte("plain text inside gzip, long enough to not be a tar header at all"))
			zw.Close()
			return b.Bytes()
		}(), ImportOptions{}, "tar"},
		{"empty", nil, ImportOptions{}, "gzip"},
	}
	st := newStore(t)
	parent := filepath.Dir(st.Root())
	before := snapshot(t, parent)
	for _, tc := range cases {
		_, _, err := st.Import(bytes.NewReader(tc.arc), tc.opts)
		if !errors.Is(err, ErrBadArchive) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if after := snapshot(t, parent); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: the refused import changed the store: %v", tc.name, after)
			before = after
		}
	}
	if _, err := os.Lstat("/tmp/gnnscope-evil"); err == nil {
		t.Error("an absolute path was extracted")
	}
	// the well-formed one imports
	if _, _, err := st.Import(bytes.NewReader(good), ImportOptions{}); err != nil {
		t.Errorf("good archive: %v", err)
	}
	if s, err := st.Get(id); err != nil {
		t.Error(err)
	} else if rs, err := s.RunState("r"); err != nil || rs.Status != profile.StatusCrashed {
		t.Errorf("run without run_end in an imported session: %+v %v", rs, err)
	}
}

func TestImportFileErrorsNameTheFile(t *testing.T) {
	st := newStore(t)
	p := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(p, []byte("notes"), 0o644)
	if _, _, err := st.ImportFile(p, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("error %v", err)
	}
	if _, _, err := st.ImportFile(p+".none", ImportOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestExportKeepsModTimes: journals keep their modification time, which
// lists show.
func TestExportKeepsModTimes(t *testing.T) {
	src := newStore(t)
	s := archiveSession(t, src)
	when := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
	os.Chtimes(s.JournalPath("baseline"), when, when)
	dst := newStore(t)
	s2, _, err := dst.Import(bytes.NewReader(exportBytes(t, s, ExportOptions{})), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s2.JournalPath("baseline"))
	if err != nil || !fi.ModTime().Equal(when) {
		t.Errorf("mod time %v, want %v (%v)", fi.ModTime(), when, err)
	}
}

// TestImportErrorsWrap: errors.Is sees through import errors to their
// causes, as well as to ErrBadArchive.
func TestImportErrorsWrap(t *testing.T) {
	src, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dst, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = dst.ImportFile(filepath.Join(t.TempDir(), "missing.tar.gz"), ImportOptions{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v does not wrap fs.ErrNotExist", err)
	}
	b := exportBytes(t, archiveSession(t, src), ExportOptions{})
	_, _, err = dst.Import(bytes.NewReader(b[:len(b)/2]), ImportOptions{})
	if !errors.Is(err, ErrBadArchive) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated archive: %v does not wrap ErrBadArchive and io.ErrUnexpectedEOF", err)
	}
	_, _, err = dst.Import(strings.NewReader("this is not a gzip stream at all"), ImportOptions{})
	if !errors.Is(err, ErrBadArchive) || !errors.Is(err, gzip.ErrHeader) {
		t.Errorf("not gzip: %v does not wrap ErrBadArchive and gzip.ErrHeader", err)
	}
}

// TestImportRefusesRunningNames: the manifest's list of runs exported
// while running holds run names too.
func TestImportRefusesRunningNames(t *testing.T) {
	const id = "20261122-120000-abcd"
	meta := `{"v":1,"id":"` + id + `"}`
	man, _ := json.Marshal(Manifest{Format: ArchiveFormat, Version: ArchiveVersion, ID: id,
		Running: []string{"../../../../tmp/x"}, Files: []ManifestFile{{Path: "session.json", Size: int64(len(meta))}}})
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range []entry{file(ArchiveManifestName, string(man)), file(id+"/session.json", meta)} {
		tw.WriteHeader(&e.hdr)
		tw.Write([]byte(e.data))
	}
	tw.Close()
	zw.Close()
	st := newStore(t)
	_, _, err := st.Import(&buf, ImportOptions{})
	if !errors.Is(err, ErrBadArchive) || !errors.Is(err, ErrInvalidName) || !strings.Contains(err.Error(), `running: run name "../../../../tmp/x"`) {
		t.Errorf("error %v", err)
	}
	if _, err := st.Get(id); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the session was imported: %v", err)
	}
}
