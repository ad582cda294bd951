package runner

import (
	"strings"
	"testing"
)

// FuzzParseWorkerArgs feeds command lines (arguments separated by NUL, as
// /proc/<pid>/cmdline holds them) to the parser that finds a session's
// processes: it never panics, and what it accepts is a worker's command
// line naming a session and exactly one of a run and --all, which
// startDetached's own arguments give back.
func FuzzParseWorkerArgs(f *testing.F) {
	for _, seed := range []string{
		"worker\x00--store\x00/s\x00--session\x00id\x00--run\x00a",
		"worker\x00--store=/s\x00--session=id\x00--all",
		"worker\x00--session\x00id\x00--all=false\x00--run\x00b",
		"worker\x00--session", "run\x00--session\x00id\x00--run\x00a", "", "\x00\x00",
		"worker\x00--run\x00--all\x00--session\x00x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, cmdline string) {
		w, ok := parseWorkerArgs(strings.Split(cmdline, "\x00"))
		if !ok {
			return
		}
		if w.session == "" || (w.run != "") == w.all {
			t.Fatalf("accepted %q as %+v", cmdline, w)
		}
		args := []string{workerCommand, "--store", w.store, "--session", w.session}
		if w.all {
			args = append(args, "--all")
		} else {
			args = append(args, "--run", w.run)
		}
		if back, ok := parseWorkerArgs(args); !ok || back != w {
			t.Fatalf("%+v: its own arguments give %+v, %v", w, back, ok)
		}
	})
}
