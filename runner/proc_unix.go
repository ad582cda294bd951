//go:build unix

package runner

import (
	"errors"
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
func terminate(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGTERM)
	if errors.Is(err, syscall.ESRCH) {
		err = syscall.Kill(pid, syscall.SIGTERM)
	}
	return err
}

// stopSignals are the signals that cancel a worker or the sequencer.
var stopSignals = []os.Signal{syscall.SIGTERM, os.Interrupt}
