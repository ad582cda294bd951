package runner

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/gnnscope/gnnscope/sessions"
)

// workerArgs is what a worker or sequencer process of a session was
// started with (startDetached): `worker --store ROOT --session ID
// (--run RUN | --all)`.
type workerArgs struct {
	store, session, run string
	all                 bool
}

// parseWorkerArgs reads a process's command line (its arguments after the
// program) as a worker's; ok is false when it is no worker's.
func parseWorkerArgs(args []string) (w workerArgs, ok bool) {
	isWorker := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == workerCommand {
			isWorker = true
			continue
		}
		name, val, inline := strings.Cut(a, "=")
		if name == "--all" {
			w.all = !inline || val == "true"
			continue
		}
		var dst *string
		switch name {
		case "--store":
			dst = &w.store
		case "--session":
			dst = &w.session
		case "--run":
			dst = &w.run
		default:
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return w, false
			}
			i++
			val = args[i]
		}
		*dst = val
	}
	return w, isWorker && w.session != "" && (w.run != "") != w.all
}

// sameStore reports whether root, as a process with working folder cwd
// named it, is the store folder want.
func sameStore(root, cwd string, want os.FileInfo) bool {
	if root == "" || want == nil {
		return false
	}
	if !filepath.IsAbs(root) {
		if cwd == "" {
			return false
		}
		root = filepath.Join(cwd, root)
	}
	fi, err := os.Stat(root)
	return err == nil && os.SameFile(fi, want)
}

// sessionProcs finds the live processes working for session id of the
// store at root from their command lines, not from pid files (which may
// be missing): the sequencer's pids and each run's worker pids. It finds
// nothing where processes cannot be listed (see listProcs).
func sessionProcs(root, id string) (seq []int, runs map[string][]int) {
	want, err := os.Stat(root)
	if err != nil {
		return nil, nil
	}
	runs = map[string][]int{}
	self := os.Getpid()
	for _, p := range listProcs() {
		if p.pid == self {
			continue
		}
		w, ok := parseWorkerArgs(p.args)
		if !ok || w.session != id || !sameStore(w.store, p.cwd(), want) {
			continue
		}
		if w.all {
			seq = append(seq, p.pid)
		} else {
			runs[w.run] = append(runs[w.run], p.pid)
		}
	}
	return seq, runs
}

// procInfo is a process as listProcs finds it.
type procInfo struct {
	pid  int
	args []string      // command line after the program name
	cwd  func() string // working folder ("" if unknown), read on demand
}

// TrainerProcs lists the living processes of an external run's command
// on this host, whole tree and orphans included, found by the run's
// journal in their environment (GNNSCOPE_JOURNAL; Linux only, none
// elsewhere). Once the run's worker is gone, they are what is left of it.
func TrainerProcs(s *sessions.Session, run string) []int {
	return envProcs(EnvJournal + "=" + s.JournalPath(run))
}
