//go:build unix

package sessions

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPrivateFilesUnderUmask: the store's folders and files are private
// whatever the umask, and a file written with a more open mode is never
// more open than the umask allows. Not parallel: the umask is the
// process's.
func TestPrivateFilesUnderUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	st, err := Open(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{Name: "private"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.OpenJournal("baseline")
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := s.WritePid("baseline", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(st.Root(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, readable by others", p, fi.Mode())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// an export's 0666 becomes 0644 under umask 022, 0600 under 077
	for umask, want := range map[int]fs.FileMode{0o022: 0o644, 0o077: 0o600} {
		syscall.Umask(umask)
		p := filepath.Join(t.TempDir(), "export")
		err := WriteFileAtomic(p, 0o666, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("umask %03o: mode %v, want %v (%v)", umask, fi.Mode().Perm(), want, err)
		}
	}
}
