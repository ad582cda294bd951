//go:build unix

package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
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

// treePoll is how often endTree looks whether what it signaled is gone.
const treePoll = 20 * time.Millisecond

// endTree ends what an external command left behind once its leader
// (pid, the leader of process group pid) exited: the rest of its process
// group and the orphans this process inherited as their subreaper. It
// lets them go on their own for linger, then sends SIGTERM, and SIGKILL
// after grace, and reaps them; it returns once none is left (or, for
// processes that neither SIGKILL ends nor this process can reap, after
// another grace), with how many it found.
func endTree(pid int, linger, grace time.Duration, log io.Writer) int {
	found := 0
	left := func() bool {
		reapOrphans()
		orphans := ownChildren()
		found = max(found, len(orphans))
		alive := pid > 1 && syscall.Kill(-pid, 0) == nil
		if alive && found == 0 {
			found = 1
		}
		return alive || len(orphans) > 0
	}
	// waitGone polls for d until nothing is left, having sent sig (0:
	// none) to the group and once to every orphan, those that orphaned
	// meanwhile too.
	waitGone := func(d time.Duration, sig syscall.Signal) bool {
		if sig != 0 && pid > 1 {
			syscall.Kill(-pid, sig)
		}
		sent := map[int]bool{}
		for deadline := time.Now().Add(d); ; time.Sleep(treePoll) {
			for _, o := range ownChildren() {
				if sig != 0 && !sent[o] {
					sent[o] = true
					syscall.Kill(o, sig)
				}
			}
			if !left() {
				return true
			}
			if time.Now().After(deadline) {
				return false
			}
		}
	}
	if waitGone(linger, 0) {
		return found
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		logf(log, "the command left processes behind: %v to them", sig)
		if waitGone(grace, sig) {
			return found
		}
	}
	logf(log, "processes the command left behind are still there after SIGKILL")
	return found
}

// reapOrphans collects the exit status of every child of this process
// that has ended (the orphans it inherited), without waiting.
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
