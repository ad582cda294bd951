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

// envProcs lists this host's processes whose environment holds the
// variable kv ("NAME=value"), from /proc/*/environ (those of other users
// are unreadable: skipped). An environment is inherited: it finds a
// command's whole tree, orphans included.
func envProcs(kv string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte(kv)
	self := os.Getpid()
	var out []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid <= 1 || pid == self {
			continue
		}
		b, err := os.ReadFile("/proc/" + ent.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(b, []byte{0}) {
			if bytes.Equal(v, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
