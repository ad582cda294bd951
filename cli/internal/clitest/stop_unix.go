//go:build unix

package clitest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// StopAll cancels the session and waits until its processes (sequencer
// and workers) have exited, killing what is left of them after a while, so
// a test leaves nothing running or writing.
func StopAll(t testing.TB, home string, s *sessions.Session) {
	st, err := sessions.Open(home)
	if err != nil {
		return
	}
	runner.Cancel(st, s.ID())
	gone := func(pid int) bool {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		return err == nil && strings.Contains(string(b), ") Z ")
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range sessionPids(s) {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Logf("killing leftover process %d", pid)
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
