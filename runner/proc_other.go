//go:build !unix

package runner

import (
	"os"
	"os/exec"
	"syscall"
)

func detach(*exec.Cmd) {}

func terminate(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Signal(os.Interrupt)
}

var stopSignals = []os.Signal{os.Interrupt}

func ownGroup(*exec.Cmd) {}

// signalGroup kills the process: there are no process groups to signal.
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

var groupStopSignals = []syscall.Signal{syscall.SIGKILL}

func killedBy(error) (string, bool) { return "", false }
