package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/gnnscope/gnnscope/sessions"
)

// WriteFile writes the file path that a command's -o names: through
// sessions.CreateOutput (an existing file refused unless force is set,
// with an error that names --force; a device, a FIFO or a folder refused
// either way; a new file claimed with O_EXCL) and a temporary file
// renamed once complete, mode perm less the umask. An interrupt (Ctrl-C,
// SIGTERM) while it writes removes the temporary file and the claim, and
// ends the write with an error; temporary files that killed writers left
// are removed first.
func WriteFile(path string, force bool, perm os.FileMode, write func(io.Writer) error) error {
	out, err := sessions.CreateOutput(path, force)
	if errors.Is(err, sessions.ErrOutputExists) {
		return fmt.Errorf("%s exists: --force overwrites it", path)
	}
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	done := make(chan error, 1)
	go func() { done <- out.Write(perm, write) }()
	select {
	case err := <-done:
		return err
	case s := <-sig:
		out.Abort()
		return fmt.Errorf("interrupted (%v): %s not written", s, path)
	}
}
