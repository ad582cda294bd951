package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile"
)

// PidFile is the content of runs/<run>.pid.
type PidFile struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start,omitempty"` // process start time in clock ticks since boot (Linux), guards against pid reuse
	Host  string `json:"host,omitempty"`  // host name of the machine the process runs on
	// Exit is the status the writer ended the run with when it could not
	// write run_end (Session.RecordExit); ExitError is the run's error and
	// JournalError why the journal could not be ended.
	Exit         profile.Status `json:"exit,omitempty"`
	ExitError    string         `json:"exit_error,omitempty"`
	JournalError string         `json:"journal_error,omitempty"`
}

// PidFileSize is the size of a pid file as WritePidFile writes it: the
// JSON padded with spaces, so that RecordExit can rewrite it in place, in
// space the file already has, when the disk is full. ReadPidFile reads at
// most MaxPidFileSize bytes.
const (
	PidFileSize    = 512
	MaxPidFileSize = 4096
)

// maxPid is the largest pid a pid file may hold: pids are C ints, and a
// larger number would name another process once truncated.
const maxPid = 1<<31 - 1

// WritePid records the pid of the process writing a run's journal, so
// readers can tell a running run from a crashed one. It also records the
// host name and, on Linux, the process start time, so a reused pid or a
// store shared between machines is not mistaken for the writer. The file
// is JSON; a plain decimal pid is accepted too.
func (s *Session) WritePid(run string, pid int) error {
	if err := ValidName(run); err != nil {
		return fmt.Errorf("write pid: %w", err)
	}
	return WritePidFile(s.PidPath(run), pid)
}

// ThisHostProcess describes process pid as a pid file records it: its pid,
// this host's name and, on Linux, its start time.
func ThisHostProcess(pid int) PidFile {
	pf := PidFile{Pid: pid}
	pf.Host, _ = os.Hostname()
	if start, _, ok := procStat(pid); ok {
		pf.Start = start
	}
	return pf
}

// WritePidFile atomically writes a pid file for process pid (see
// ThisHostProcess), PidFileSize bytes long; ReadPidFile reads it back and
// PidFile.Alive checks it.
func WritePidFile(path string, pid int) error {
	b, err := ThisHostProcess(pid).encode()
	if err != nil {
		return fmt.Errorf("write pid file %s: %w", path, err)
	}
	return writeFileAtomic(path, b)
}

// encode returns the JSON of pf padded to PidFileSize bytes, the texts of
// its exit shortened to fit.
func (pf PidFile) encode() ([]byte, error) {
	for {
		b, err := json.Marshal(pf)
		if err != nil {
			return nil, err
		}
		if len(b) < PidFileSize || (pf.ExitError == "" && pf.JournalError == "") {
			return append(b, append(bytes.Repeat([]byte{' '}, max(PidFileSize-1-len(b), 0)), '\n')...), nil
		}
		pf.ExitError = shorten(pf.ExitError)
		pf.JournalError = shorten(pf.JournalError)
	}
}

// shorten halves a text, marking the cut.
func shorten(s string) string {
	if len(s) <= 16 {
		return ""
	}
	return strings.ToValidUTF8(s[:len(s)/2], "") + "..."
}

// RecordExit records in the run's pid file, in place, the status a
// writer ended the run with when its journal could not be ended (a full
// disk): runErr is the run's error (nil for ok), journalErr why the
// journal failed. The pid file keeps its size (PidFileSize), so the
// rewrite needs no new space on file systems that overwrite in place.
// RunState then reports the run partial, with that status in its error.
func (s *Session) RecordExit(run string, pid int, status profile.Status, runErr, journalErr error) error {
	if err := ValidName(run); err != nil {
		return fmt.Errorf("record exit: %w", err)
	}
	pf := ThisHostProcess(pid)
	pf.Exit = status
	if runErr != nil {
		pf.ExitError = runErr.Error()
	}
	if journalErr != nil {
		pf.JournalError = journalErr.Error()
	}
	path := s.PidPath(run)
	b, err := pf.encode()
	if err == nil {
		err = overwrite(path, b)
	}
	if err != nil {
		return fmt.Errorf("record exit of run %s in %s: %w", run, path, err)
	}
	return nil
}

// overwrite writes b over the start of the regular file at path and cuts
// it to len(b). A missing file is written atomically instead (a new file
// needs new space: on a full disk, no empty pid file is left behind).
func overwrite(path string, b []byte) error {
	f, err := openRegular(path, os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return writeFileAtomic(path, b)
	}
	if err != nil {
		return err
	}
	_, err = f.WriteAt(b, 0)
	if err == nil {
		err = f.Truncate(int64(len(b)))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// exitText is the error of a run whose writer recorded its exit but could
// not end its journal: why, and how the run itself ended.
func (pf PidFile) exitText() string {
	text := "journal incomplete"
	if pf.JournalError != "" {
		text += ": " + pf.JournalError
	}
	text += "; the run itself ended " + pf.Exit.String()
	if pf.ExitError != "" {
		text += "; " + pf.ExitError
	}
	return text
}

// ErrBadPidFile is wrapped by the errors of ReadPidFile for a pid file
// that holds no pid: empty or torn (a full disk as the run started). Its
// process is then unknown; readers check it another way (the journal's
// lock) rather than fail.
var ErrBadPidFile = errors.New("no pid in it (empty or torn)")

// ReadPidFile reads a pid file written by WritePidFile (a plain decimal
// pid is accepted too). It refuses a file that is not regular or is over
// MaxPidFileSize bytes, naming it.
func ReadPidFile(path string) (PidFile, error) {
	var pf PidFile
	b, err := ReadRegular(path, MaxPidFileSize)
	if err != nil {
		return pf, err
	}
	return parsePidFile(path, b)
}

// parsePidFile decodes the content b of the pid file at path.
func parsePidFile(path string, b []byte) (PidFile, error) {
	var pf PidFile
	text := strings.TrimSpace(string(b))
	if n, err := strconv.Atoi(text); err == nil {
		pf.Pid = n
	} else if err := json.Unmarshal([]byte(text), &pf); err != nil {
		return PidFile{}, fmt.Errorf("pid file %s: %w: %w", path, ErrBadPidFile, err)
	}
	if pf.Pid <= 0 || pf.Pid > maxPid {
		return PidFile{}, fmt.Errorf("pid file %s: %w: bad pid %d", path, ErrBadPidFile, pf.Pid)
	}
	return pf, nil
}

// Alive reports whether the recorded process still runs; known is false
// when that cannot be checked from here.
func (pf PidFile) Alive() (alive, known bool) {
	if pf.Host != "" {
		if h, err := os.Hostname(); err == nil && h != pf.Host {
			return false, false
		}
	}
	exists, known := processExists(pf.Pid)
	if !known || !exists {
		return false, known
	}
	if start, zombie, ok := procStat(pf.Pid); ok {
		if zombie || (pf.Start != 0 && start != pf.Start) {
			return false, true // exited but not reaped, or the pid was reused
		}
	}
	return true, true
}

// procStat reads a process's start time and whether it is a zombie from
// /proc/<pid>/stat (Linux); ok is false where that is unavailable.
func procStat(pid int) (start uint64, zombie bool, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, false
	}
	// pid (comm) state ppid ... ; comm may contain spaces and parentheses
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0, false, false
	}
	start, err = strconv.ParseUint(fields[19], 10, 64) // field 22: starttime
	if err != nil {
		return 0, false, false
	}
	return start, fields[0] == "Z" || fields[0] == "X", true
}
