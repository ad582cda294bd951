package runner

import (
	"bytes"
	"os"
	"strconv"
)

// listProcs lists this host's processes with their command lines, from
// /proc (those of other users may be unreadable: skipped).
func listProcs() []procInfo {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []procInfo
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid <= 1 {
			continue
		}
		dir := "/proc/" + ent.Name()
		b, err := os.ReadFile(dir + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		args := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
		p := procInfo{pid: pid, cwd: func() string {
			cwd, _ := os.Readlink(dir + "/cwd")
			return cwd
		}}
		for _, a := range args[1:] {
			p.args = append(p.args, string(a))
		}
		out = append(out, p)
	}
	return out
}
