//go:build unix

package sessions

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// plantLink puts a symbolic link at path to a victim file holding
// "victim", and returns the victim's path.
func plantLink(t *testing.T, path string) string {
	t.Helper()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	return victim
}

func checkVictim(t *testing.T, victim string) {
	t.Helper()
	if b, err := os.ReadFile(victim); err != nil || string(b) != "victim" {
		t.Errorf("the link's target was written: %q, %v", b, err)
	}
}

// Issue 37, point 1: every write inside a session folder refuses a link
// planted at its file (pid file, journal, log, session.json's folder) or
// in place of runs/.
func TestStoreWritesFollowNoSymlink(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	writes := map[string]func() error{
		"canceled marker": func() error {
			f, err := OpenRegularFile(filepath.Join(s.Dir(), "canceled"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err == nil {
				f.Close()
			}
			return err
		},
		"journal": func() error {
			j, err := s.OpenJournal("a")
			if err == nil {
				j.Close()
			}
			return err
		},
		"recorded exit": func() error { return s.RecordExit("a", os.Getpid(), "ok", nil, nil) },
		"log": func() error {
			f, err := OpenRegularFile(filepath.Join(s.RunsDir(), "a.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err == nil {
				f.Close()
			}
			return err
		},
	}
	paths := map[string]string{
		"canceled marker": filepath.Join(s.Dir(), "canceled"),
		"journal":         s.JournalPath("a"),
		"recorded exit":   s.PidPath("a"),
		"log":             filepath.Join(s.RunsDir(), "a.log"),
	}
	for name, write := range writes {
		victim := plantLink(t, paths[name])
		if err := write(); !errors.Is(err, ErrSymlink) {
			t.Errorf("%s through a link: %v, want ErrSymlink", name, err)
		}
		checkVictim(t, victim)
		os.Remove(paths[name])
	}
	// a link in place of runs/: nothing lands in the folder it names
	elsewhere := t.TempDir()
	if err := os.RemoveAll(s.RunsDir()); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, s.RunsDir()); err != nil {
		t.Fatal(err)
	}
	if err := s.WritePid("b", os.Getpid()); !errors.Is(err, ErrSymlink) {
		t.Errorf("pid file under a linked runs/: %v", err)
	}
	if _, err := s.OpenJournal("b"); !errors.Is(err, ErrSymlink) {
		t.Errorf("journal under a linked runs/: %v", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("files written through the linked runs/: %v", ents)
	}
	// session.json replaces a link at its place, never writes through it
	victim := plantLink(t, filepath.Join(s.Dir(), metaFile))
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	checkVictim(t, victim)
	if fi, err := os.Lstat(filepath.Join(s.Dir(), metaFile)); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("session.json after Save: %v, %v", fi, err)
	}
}

// Issue 37, point 1: a session folder writable by others draws one
// warning, however often it is opened.
func TestExposedSessionWarnsOnce(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	st.SetWarn(&warn)
	if _, err := st.Get(s.ID()); err != nil || warn.Len() != 0 {
		t.Fatalf("private folder: %q, %v", warn.String(), err)
	}
	if err := os.Chmod(s.Dir(), 0o777); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := st.MatchSession("last"); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(warn.String(), "writable by other users"); n != 1 {
		t.Errorf("%d warnings, want 1: %q", n, warn.String())
	}
}

// Issue 37, point 2: -o PATH --force refuses a device, a FIFO and a link
// to a device; only a regular file or nothing may be at PATH.
func TestOutputRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	link := filepath.Join(dir, "null")
	if err := os.Symlink(os.DevNull, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{os.DevNull, fifo, link} {
		if err := PrepareOutput(p, true); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s with overwrite: %v, want ErrNotRegular", p, err)
		}
		if _, err := CreateOutput(p, true); !errors.Is(err, ErrNotRegular) {
			t.Errorf("CreateOutput %s: %v", p, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi, err)
	}
	regular := filepath.Join(dir, "out")
	os.WriteFile(regular, []byte("old"), 0o600)
	if err := PrepareOutput(regular, true); err != nil {
		t.Errorf("regular file with overwrite: %v", err)
	}
}

// Issue 37, point 13: two writers of the same new file without overwrite
// cannot both succeed, and an aborted write leaves nothing behind.
func TestOutputClaimedExclusively(t *testing.T) {
	path := filepath.Join(t.TempDir(), "same.tgz")
	first, err := CreateOutput(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateOutput(path, false); !errors.Is(err, ErrOutputExists) {
		t.Fatalf("second writer: %v, want ErrOutputExists", err)
	}
	if err := first.Write(0o600, func(w io.Writer) error { _, err := io.WriteString(w, "one"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Errorf("content %q", b)
	}

	// interrupted mid-write: Abort removes the claim and the temporary file
	other := filepath.Join(filepath.Dir(path), "other.tgz")
	o, err := CreateOutput(other, false)
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- o.Write(0o600, func(w io.Writer) error {
			io.WriteString(w, "half")
			close(started)
			<-release
			return errors.New("stopped")
		})
	}()
	<-started
	o.Abort()
	close(release)
	<-done
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 || ents[0].Name() != "same.tgz" {
		t.Errorf("left behind: %v", ents)
	}
}

// Issue 37, point 13: the temporary file of a writer that was killed is
// removed by the next write of the same file.
func TestStaleTempsRemoved(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no true(1): %v", err)
	}
	dead := cmd.Process.Pid // reaped: gone
	dir := t.TempDir()
	path := filepath.Join(dir, "x.tgz")
	stale := filepath.Join(dir, ".x.tgz.tmpp"+strconv.Itoa(dead)+"-00ff")
	live := filepath.Join(dir, ".x.tgz.tmpp"+strconv.Itoa(os.Getpid())+"-00ff")
	for _, p := range []string{stale, live} {
		os.WriteFile(p, []byte("partial"), 0o600)
	}
	o, err := CreateOutput(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed writer's temporary file stays: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
	o.Abort()
	if _, err := os.Stat(live); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Abort left this process's temporary file: %v", err)
	}
}
