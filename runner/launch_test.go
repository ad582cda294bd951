package runner

import (
	"os"
	"os/exec"
	"testing"
)

// TestStartWorkerWarning: a pid file that cannot be written does not stop
// the worker; it comes back as a warning value, not as output.
func TestStartWorkerWarning(t *testing.T) {
	exe, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true executable:", err)
	}
	st, s := newSession(t, "warn")
	if err := os.MkdirAll(s.PidPath("baseline"), 0o755); err != nil { // a folder where the pid file goes
		t.Fatal(err)
	}
	cmd, warn, err := startWorker(s, st.Root(), exe, "baseline")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if warn == nil {
		t.Error("no warning for a pid file that could not be written")
	}
	if _, _, err := startWorker(s, st.Root(), "/nonexistent/gnnscope", "optimized"); err == nil {
		t.Error("a missing executable started")
	}
}
