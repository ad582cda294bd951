//go:build !unix

package runner

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
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

func becomeSubreaper() error { return errors.ErrUnsupported }

// endTree finds nothing left: without process groups the command was
// its own tree.
func endTree(int, time.Duration, time.Duration, io.Writer) int { return 0 }
