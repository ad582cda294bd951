package exporter

import (
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
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
	want := []string{filepath.Join(out, "compare.csv"), filepath.Join(out, "trace.json"), filepath.Join(out, "a.tar.gz")}
	if strings.Join(wrote, " ") != strings.Join(want, " ") {
		t.Errorf("wrote %v, want %v", wrote, want)
	}
	f, _ := os.Open(want[0])
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv: %d records, %v", len(recs), err)
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
	if got := Summary(wrote); got != "wrote compare.csv, trace.json, a.tar.gz in "+out {
		t.Errorf("summary %q", got)
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
	// a missing folder fails each file, and says which
	wrote, err := Write(Request{Refs: refs, Kinds: []Kind{Markdown, LaTeX}, Dir: "nowhere"})
	if len(wrote) != 0 || err == nil || !strings.Contains(err.Error(), "Markdown table") || !strings.Contains(err.Error(), "LaTeX tabular") {
		t.Errorf("missing folder: %v, %v", wrote, err)
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
	if !ok || done.Err != nil || len(done.Wrote) != 1 || filepath.Base(done.Wrote[0]) != "compare.csv" {
		t.Errorf("done %+v", msgs[0])
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
