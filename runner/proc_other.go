//go:build !unix

package runner

import (
	"os"
	"os/exec"
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
