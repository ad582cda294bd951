package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procRecord identifies a process in a pid file, in the format of the
// sessions package's run pid files: pid, start time (Linux clock ticks
// since boot, guards against pid reuse) and host name.
type procRecord struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start,omitempty"`
	Host  string `json:"host,omitempty"`
}

// thisProc describes process pid on this host.
func thisProc(pid int) procRecord {
	p := procRecord{Pid: pid}
	p.Host, _ = os.Hostname()
	if start, _, ok := procStat(pid); ok {
		p.Start = start
	}
	return p
}

func writeProc(path string, pid int) error {
	b, err := json.Marshal(thisProc(pid))
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func readProc(path string) (procRecord, error) {
	var p procRecord
	b, err := os.ReadFile(path)
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("pid file %s: %w", path, err)
	}
	if p.Pid <= 0 {
		return p, fmt.Errorf("pid file %s: bad pid %d", path, p.Pid)
	}
	return p, nil
}

// alive reports whether the recorded process still runs; known is false
// when that cannot be told from here (another host, no kill(pid, 0)).
func (p procRecord) alive() (alive, known bool) {
	if p.Host != "" {
		if h, err := os.Hostname(); err == nil && h != p.Host {
			return false, false
		}
	}
	exists, known := processExists(p.Pid)
	if !known || !exists {
		return false, known
	}
	if start, zombie, ok := procStat(p.Pid); ok && (zombie || (p.Start != 0 && start != p.Start)) {
		return false, true // exited but not reaped, or the pid was reused
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
	i := bytes.LastIndexByte(b, ')') // comm may hold spaces and parentheses
	if i < 0 {
		return 0, false, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0, false, false
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return 0, false, false
	}
	return start, fields[0] == "Z" || fields[0] == "X", true
}

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
