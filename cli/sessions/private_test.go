//go:build unix

package sessions_test

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
)

// TestPrivateFilesUnderUmask022: after run, export and import under the
// usual umask 022, nothing gnnscope wrote (sessions, journals, logs, pid
// and lock files, the dataset cache, the archive, the imported copy) is
// readable, writable or searchable by group or others. Not parallel: the
// umask belongs to the process, and the workers inherit it.
func TestPrivateFilesUnderUmask022(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	home, other := t.TempDir(), t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	if _, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--epochs", "1", "--threads", "1",
		"--variants", "baseline", "--wait", "-q"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	id := clitest.OnlySession(t, home).ID()
	archive := filepath.Join(t.TempDir(), "s.tar.gz")
	if _, stderr, err := clitest.Run(t, "sessions", "export", id, "-o", archive); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	t.Setenv("GNNSCOPE_HOME", other)
	if _, stderr, err := clitest.Run(t, "sessions", "import", archive); err != nil {
		t.Fatalf("import: %v\n%s", err, stderr)
	}
	checkPrivate(t, archive)
	for _, root := range []string{home, other} {
		err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p != root {
				checkPrivate(t, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkPrivate fails the test if group or others have any access to p.
func checkPrivate(t *testing.T, p string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	if mode := fs.FileMode(st.Mode & 0o777); mode&0o077 != 0 {
		t.Errorf("%s: mode %v, open to group or others", p, mode)
	}
}
