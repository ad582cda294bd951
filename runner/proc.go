package runner

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gnnscope/gnnscope/sessions"
)

// procRecord identifies a process in a pid file: the sessions package's
// run pid file format (pid, start time, host), shared so that one
// liveness check serves runs, the sequencer and the launcher.
type procRecord = sessions.PidFile

// thisProc describes process pid on this host.
func thisProc(pid int) procRecord { return sessions.ThisHostProcess(pid) }

func writeProc(path string, pid int) error { return sessions.WritePidFile(path, pid) }

func readProc(path string) (procRecord, error) { return sessions.ReadPidFile(path) }

// writeFileAtomic writes through a temporary file and a rename, so readers
// see the old or the new content, never a part.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
