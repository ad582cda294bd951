//go:build unix

package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// deadPid returns the pid of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("no process to run: %v", err)
	}
	return cmd.Process.Pid
}

// TestImportRemovesStaleFolders: the folders of imports that were
// killed are removed by the next import; those of running imports (their
// lock is held), or of a process that may still take its lock, are kept.
func TestImportRemovesStaleFolders(t *testing.T) {
	src := newStore(t)
	arc := exportBytes(t, archiveSession(t, src), ExportOptions{})
	st := newStore(t)
	dir := filepath.Join(st.Root(), "sessions")
	dead := deadPid(t)
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, "s", "runs"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "s", "runs", "a.jsonl"), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := mk(fmt.Sprintf(".import-p%d-1", dead))
	legacy := mk(".import-12345")
	live := mk(fmt.Sprintf(".import-p%d-2", dead))
	starting := mk(fmt.Sprintf(".import-p%d-3", os.Getpid())) // not locked yet
	lock, held, err := lockDir(live)
	if err != nil || !held {
		t.Fatalf("lock: %v %v", held, err)
	}
	defer lock.Close()

	if _, _, err := st.Import(bytes.NewReader(arc), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{stale, legacy} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there (%v)", filepath.Base(p), err)
		}
	}
	for _, p := range []string{live, starting} {
		if _, err := os.Stat(filepath.Join(p, "s", "runs", "a.jsonl")); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	// once its import is over, the next one removes it; so is a folder
	// of a live process older than a day
	lock.Close()
	old := time.Now().Add(-25 * time.Hour)
	os.Chtimes(starting, old, old)
	removeStaleImports(dir)
	for _, p := range []string{live, starting} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there (%v)", filepath.Base(p), err)
		}
	}
}

// TestArchivesArePrivate: under umask 022, export writes an archive only
// its owner can read, and import makes a session nobody else can read.
func TestArchivesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	src := newStore(t)
	p := filepath.Join(t.TempDir(), "s.tar.gz")
	if _, err := archiveSession(t, src).ExportFile(p, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("archive mode %v (%v), want 0600", fi.Mode(), err)
	}
	st := newStore(t)
	s, _, err := st.ImportFile(p, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(s.Dir(), func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, open to others", q, fi.Mode())
		}
		n++
		return nil
	})
	if err != nil || n < 5 {
		t.Errorf("%d files (%v)", n, err)
	}
}

// TestImportReadOnlyStore: a store that cannot be written is blamed, not
// the archive.
func TestImportReadOnlyStore(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into read-only folders")
	}
	src := newStore(t)
	p := filepath.Join(t.TempDir(), "s.tar.gz")
	if _, err := archiveSession(t, src).ExportFile(p, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	st := newStore(t)
	dir := filepath.Join(st.Root(), "sessions")
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	_, _, err := st.ImportFile(p, ImportOptions{})
	if !errors.Is(err, fs.ErrPermission) || errors.Is(err, ErrBadArchive) || !strings.Contains(err.Error(), "writing to store "+st.Root()) {
		t.Errorf("error %v", err)
	}
}
