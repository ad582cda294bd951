//go:build linux

package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// smallDisk mounts a tmpfs of size bytes for the test (root only) and
// unmounts it at the end; it skips, with the reason, where it cannot.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill (needs root): %v: %s", size, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a file that leaves about free bytes on dir's file
// system, and returns its path.
func fillDisk(t *testing.T, dir string, free int64) string {
	t.Helper()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	avail := int64(fs.Bavail) * fs.Bsize
	path := filepath.Join(dir, "filler")
	if err := os.WriteFile(path, make([]byte, max(avail-free, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDiskFullRunPartial: a run whose journal fills the disk part-way
// (the repro: 5 of 40 epochs saved, reported ok with figures from the
// prefix) reads as partial once space is freed, its error saying what
// the journal kept and lost and how the run ended; the worker exits 1
// saying so.
func TestDiskFullRunPartial(t *testing.T) {
	home := filepath.Join(smallDisk(t, "2m"), "store")
	t.Setenv("GNNSCOPE_HOME", home)
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	exp := NewExperiment("synth-tiny", "sage")
	exp.Train.Epochs, exp.Train.Threads = 40, 1
	resolved, err := Resolve(exp, []Variant{{Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := createSession(st, exp, resolved, nil)
	if err != nil {
		t.Fatal(err)
	}
	filler := fillDisk(t, home, 48<<10)
	cmd := exec.Command(os.Args[0], workerCommand, "--store", st.Root(), "--session", s.ID(), "--run", "a")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "done: partial (journal incomplete") {
		t.Fatalf("worker: %v\n%s", err, out)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	rs, err := s.RunState("a")
	if err != nil || rs.Status != profile.StatusPartial || !strings.Contains(rs.Error, "no space left on device") ||
		!strings.Contains(rs.Error, "the run itself ended ok") {
		t.Fatalf("run state %+v, %v\n%s", rs, err, out)
	}
	if rs.Size == 0 {
		t.Error("the journal kept nothing")
	}
}
