//go:build unix

package sessions_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// finished makes a session of the store at home with one finished run.
func finished(t *testing.T, home string) *sessions.Session {
	t.Helper()
	st, err := sessions.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "done", Variants: []sessions.Variant{{Name: "baseline"}}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.OpenJournal("baseline")
	if err != nil {
		t.Fatal(err)
	}
	rec := profile.NewRecorder(j, profile.RecorderOptions{})
	rec.RunStart("baseline", s.ID(), "baseline", nil, nil)
	rec.Close(profile.StatusOK, nil, nil)
	j.Close()
	return s
}

// Issue 37, points 2 and 13: -o a FIFO or a device is refused, --force
// included; two concurrent exports to one new file: one succeeds, the
// other is refused, and no temporary file stays.
func TestExportTargets(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	s := finished(t, home)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO: %v", err)
	}
	for _, target := range []string{fifo, os.DevNull} {
		_, _, err := clitest.Run(t, "sessions", "export", s.ID(), "-o", target, "--force")
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("export -o %s --force: %v", target, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v", err)
	}

	same := filepath.Join(dir, "same.tgz")
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = clitest.Run(t, "sessions", "export", s.ID(), "-o", same)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !strings.Contains(err.Error(), "--force") {
			t.Errorf("the refused export: %v", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d of 2 concurrent exports succeeded: %v", ok, errs)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if _, _, err := clitest.Run(t, "sessions", "import", "--store", t.TempDir(), same); err != nil {
		t.Errorf("the export that won is not whole: %v", err)
	}
}

// Issue 37, point 5: a folder without session.json is listed broken and
// goes with rm; `rm last` never picks it.
func TestRmBrokenFolder(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	s := finished(t, home)
	broken := sessions.NewID(time.Now().Add(time.Hour))
	if err := os.MkdirAll(filepath.Join(home, "sessions", broken, "runs"), 0o700); err != nil {
		t.Fatal(err)
	}
	out, _, err := clitest.Run(t, "sessions", "ls")
	if err != nil || !strings.Contains(out, broken) || !strings.Contains(out, "broken") {
		t.Errorf("ls: %q, %v", out, err)
	}
	if out, _, err := clitest.Run(t, "sessions", "show", "last"); err != nil || !strings.Contains(out, s.ID()) {
		t.Errorf("show last: %q, %v", out, err)
	}
	if out, _, err := clitest.Run(t, "sessions", "rm", broken, "--yes"); err != nil || !strings.Contains(out, broken) {
		t.Errorf("rm broken: %q, %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(home, "sessions", s.ID())); err != nil {
		t.Errorf("the session went too: %v", err)
	}
}
