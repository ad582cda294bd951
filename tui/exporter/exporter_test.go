package exporter

import (
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/internal/fixture"
)

func TestWrite(t *testing.T) {
	st := fixture.Standard(t)
	refs, err := st.SelectRuns([]string{"20260102-030400-aaaa"})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	wrote, err := Write(Request{Refs: refs, Kinds: []Kind{CSV, Trace, Archive}, Dir: out,
		Session: refs[0].Session, ArchivePath: filepath.Join(out, "a.tar.gz")})
	if err != nil {
		t.Fatal(err)
	}
	const id = "20260102-030400-aaaa"
	want := []string{filepath.Join(out, id+"-compare.csv"), filepath.Join(out, id+"-trace.json"), filepath.Join(out, "a.tar.gz")}
	if strings.Join(wrote, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %v, want %v", wrote, want)
	}
	f, _ := os.Open(want[0])
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) < 3 {
		t.Fatalf("csv: %d records, %v", len(recs), err)
	}
	// the two runs, then the speedup waterfall's bars in the same table
	step := slices.Index(recs[0], "waterfall_step")
	if step < 0 || recs[1][step] != "" || recs[2][step] != "" || (len(recs) > 3 && recs[len(recs)-1][step] != "total") {
		t.Errorf("csv records %q", recs)
	}
	// the archive imports as the same session
	other, err := sessions.Open(filepath.Join(out, "other"))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := other.ImportFile(want[2], sessions.ImportOptions{})
	if err != nil || s.ID() != "20260102-030400-aaaa" {
		t.Errorf("import: %v, %v", s, err)
	}
	if got := Summary(wrote); got != "wrote "+id+"-compare.csv, "+id+"-trace.json, a.tar.gz in "+out {
		t.Errorf("summary %q", got)
	}
	// the same again: nothing is written over without Overwrite
	req := Request{Refs: refs, Kinds: []Kind{CSV, Markdown}, Dir: out}
	if err := os.WriteFile(want[0], []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ex *ExistsError
	if wrote, err := Write(req); len(wrote) != 0 || !errors.As(err, &ex) || len(ex.Paths) != 1 || ex.Paths[0] != want[0] {
		t.Errorf("onto an existing file: %v, %v", wrote, err)
	}
	if b, _ := os.ReadFile(want[0]); string(b) != "mine" {
		t.Error("the existing file was overwritten")
	}
	if _, err := os.Stat(filepath.Join(out, id+"-compare.md")); err == nil {
		t.Error("a file was written beside the existing one")
	}
	req.Overwrite = true
	if wrote, err := Write(req); err != nil || len(wrote) != 2 {
		t.Errorf("overwrite: %v, %v", wrote, err)
	}
	// missing folders are created
	deep := filepath.Join(out, "new", "deeper")
	if wrote, err := Write(Request{Refs: refs, Kinds: []Kind{Markdown}, Dir: deep}); err != nil || len(wrote) != 1 {
		t.Errorf("missing folders: %v, %v", wrote, err)
	}
	if got := Summary([]string{"/a/x", "/a/z", "/b/y"}); got != "wrote x, z in /a; y in /b" {
		t.Errorf("summary across folders %q", got)
	}
}

func TestWriteErrors(t *testing.T) {
	st := fixture.Standard(t)
	refs, _ := st.SelectRuns([]string{"20260102-030400-aaaa"})
	s := refs[0].Session
	// an archive inside the session folder would archive itself
	_, err := Write(Request{Refs: refs, Kinds: []Kind{Archive}, Session: s, ArchivePath: filepath.Join(s.Dir(), "x.tar.gz")})
	if err == nil || !strings.Contains(err.Error(), "inside the session's folder") {
		t.Errorf("archive in the session folder: %v", err)
	}
	_, err = Write(Request{Refs: refs, Kinds: []Kind{Archive}, ArchivePath: "x.tar.gz"})
	if err == nil || !strings.Contains(err.Error(), "one session") {
		t.Errorf("archive without a session: %v", err)
	}
	// no folder fails each file, and says which
	wrote, err := Write(Request{Refs: refs, Kinds: []Kind{Markdown, LaTeX}, Dir: " "})
	if len(wrote) != 0 || err == nil || !strings.Contains(err.Error(), "Markdown table: no folder given") || !strings.Contains(err.Error(), "LaTeX tabular") {
		t.Errorf("no folder: %v, %v", wrote, err)
	}
	if _, err := Write(Request{Kinds: []Kind{Markdown}, Dir: "."}); err == nil {
		t.Error("no runs: no error")
	}
	// a trace of runs without journals
	fixture.Add(t, st, fixture.Session{ID: "20260102-090000-gggg", Variants: []string{"baseline"}})
	empty, err := st.Get("20260102-090000-gggg")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Write(Request{Refs: []sessions.RunRef{{Session: empty, Run: "baseline"}}, Kinds: []Kind{Trace}, Dir: "."})
	if err == nil || !strings.Contains(err.Error(), "no run has a journal") {
		t.Errorf("trace without journals: %v", err)
	}
}

func TestDialog(t *testing.T) {
	st := fixture.Standard(t)
	refs, _ := st.SelectRuns([]string{"20260102-030400-aaaa"})
	c := fixture.Common(st, 80, 24)
	m := New(c, Target{Title: "x", Refs: refs, Checked: []Kind{Markdown}})
	m.SetWidth(80)
	var msgs []tea.Msg
	press := func(names ...string) { fixture.Press(&m, &msgs, (*Model).Update, names...) }
	if strings.Contains(m.View(), "Archive") {
		t.Error("an archive row without a session")
	}
	press("space") // uncheck Markdown: nothing to write
	press("enter")
	if !strings.Contains(m.View(), "nothing to write") {
		t.Errorf("no kind checked:\n%s", m.View())
	}
	press("down", "space", "enter") // CSV into the session folder
	if len(msgs) != 1 {
		t.Fatalf("messages %v", msgs)
	}
	done, ok := msgs[0].(DoneMsg)
	if !ok || done.Err != nil || len(done.Wrote) != 1 || filepath.Base(done.Wrote[0]) != "20260102-030400-aaaa-compare.csv" {
		t.Errorf("done %+v", msgs[0])
	}
	// again: the dialog asks before overwriting; enter confirms
	m.Update(done)
	press("enter")
	if _, ok := msgs[1].(DoneMsg); !ok || !strings.Contains(m.View(), "already") || !strings.Contains(m.View(), "enter overwrites, esc cancels") {
		t.Fatalf("second write: %+v\n%s", msgs[1:], m.View())
	}
	press("enter")
	if again, ok := msgs[2].(DoneMsg); !ok || again.Err != nil || len(again.Wrote) != 1 {
		t.Errorf("overwrite: %+v", msgs[2:])
	}
	press("esc")
	if _, ok := msgs[len(msgs)-1].(ClosedMsg); !ok {
		t.Errorf("esc sent %T", msgs[len(msgs)-1])
	}
}

func TestDone(t *testing.T) {
	st := fixture.Standard(t)
	refs, _ := st.SelectRuns([]string{"20260102-030400-aaaa"})
	m := New(fixture.Common(st, 80, 24), Target{Title: "x", Refs: refs, Checked: []Kind{Markdown}})
	m.SetWidth(80)
	// nothing written: the dialog stays open with the error
	if open, s := m.Done(DoneMsg{Err: errors.New("disk full")}); !open || s.Text != "" || !strings.Contains(m.View(), "disk full") {
		t.Errorf("failure: open %v, status %+v\n%s", open, s, m.View())
	}
	dir := filepath.Join("out", "x")
	open, s := m.Done(DoneMsg{Wrote: []string{filepath.Join(dir, "compare.md")}, Err: errors.New("trace: no run has a journal yet")})
	if open || !s.Err || s.Text != "wrote compare.md in "+dir+"; trace: no run has a journal yet" {
		t.Errorf("partial: open %v, status %+v", open, s)
	}
	open, s = m.Done(DoneMsg{Wrote: []string{filepath.Join(dir, "compare.md")}})
	if open || s.Err || s.Text != "wrote compare.md in "+dir {
		t.Errorf("success: open %v, status %+v", open, s)
	}
}
