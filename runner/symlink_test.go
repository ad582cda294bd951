//go:build unix

package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/sessions"
)

// Issue 37, point 1, as filed: `ln -s ~/victim $S/canceled`, then
// `run --cancel ID` on a finished session overwrote the victim; with
// runs/ a link to a folder, cancel created <run>.jsonl files there.
func TestCancelFollowsNoLink(t *testing.T) {
	st, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(sessions.SessionMeta{Name: "done", Variants: []sessions.Variant{{Name: "baseline"}}})
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("victim"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(s.Dir(), canceledFile)); err != nil {
		t.Fatal(err)
	}
	_, err = Cancel(st, s.ID())
	if !errors.Is(err, sessions.ErrSymlink) {
		t.Errorf("cancel through a linked marker: %v, want ErrSymlink", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim" {
		t.Errorf("the victim was overwritten: %q", b)
	}

	// runs/ a link to a folder, a run pending (launch.json names it)
	elsewhere := t.TempDir()
	os.Remove(filepath.Join(s.Dir(), canceledFile))
	if err := writeLaunch(s, launchState{Mode: ModeSequential, Runs: []string{"baseline"}}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(s.RunsDir())
	if err := os.Symlink(elsewhere, s.RunsDir()); err != nil {
		t.Fatal(err)
	}
	rep, err := Cancel(st, s.ID())
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("cancel wrote through the linked runs/: %v (report %+v, %v)", ents, rep, err)
	}
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("cancel with a linked runs/: %v", err)
	}
}

// Issue 37, point 1: a link at runs/<pending>.log got the worker's output
// appended to its target.
func TestWorkerLogFollowsNoLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("victim"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "pending.log")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if cmd, err := startDetached(exe, link, "-test.run=^$"); !errors.Is(err, sessions.ErrSymlink) {
		if cmd != nil {
			cmd.Wait()
		}
		t.Errorf("worker started on a linked log: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim" {
		t.Errorf("the victim got output: %q", b)
	}
}
