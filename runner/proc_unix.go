//go:build unix

package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// detach makes cmd start in a new process session (setsid): it has no
// controlling terminal, survives the terminal's hang-up, and leads its own
// process group, which terminate signals as a whole.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// terminate sends SIGTERM to the process group that pid leads (workers and
// the sequencer lead their own), or to the process alone if it leads none.
// It refuses pids below 2: kill(-1) would signal every process the user
// owns, and init is never a worker.
func terminate(pid int) error {
	if pid <= 1 {
		return fmt.Errorf("refusing to signal pid %d", pid)
	}
	err := syscall.Kill(-pid, syscall.SIGTERM)
	if errors.Is(err, syscall.ESRCH) {
		err = syscall.Kill(pid, syscall.SIGTERM)
	}
	return err
}

// stopSignals are the signals that cancel a worker or the sequencer.
var stopSignals = []os.Signal{syscall.SIGTERM, os.Interrupt}

// ownGroup makes cmd lead a new process group (so that a cancel signals
// the command and its children as a whole) and, on Linux, be killed when
// the thread that starts it dies: a supervisor killed with SIGKILL takes
// its command along, so the run's pid file (the supervisor's) never names
// a dead process while the command goes on.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
}

// signalGroup sends sig to the process group pid leads (pids below 2
// refused, as terminate does).
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 1 {
		return fmt.Errorf("refusing to signal group %d", pid)
	}
	return syscall.Kill(-pid, sig)
}

// groupStopSignals are sent in turn to a canceled external command's
// process group.
var groupStopSignals = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}

// killedBy reports the signal that killed a process, from its wait error.
func killedBy(err error) (string, bool) {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return "", false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	return fmt.Sprintf("%d (%v)", int(ws.Signal()), ws.Signal()), true
}
