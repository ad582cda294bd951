package runner

import (
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
