package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// Reading a launched session back: its launch.json, the state of each of
// its runs, and the experiment it was launched with.

// NotStartedBeforeExport is the error of a launched run of an imported
// session that had not started when the session was exported.
const NotStartedBeforeExport = "not started before the session was exported"

// imported reports whether the session was imported from an archive.
func imported(s *sessions.Session) bool {
	info, _ := s.ImportInfo()
	return info != nil
}

// canceled reports whether the session was canceled.
func canceled(s *sessions.Session) bool {
	_, err := os.Stat(filepath.Join(s.Dir(), canceledFile))
	return err == nil
}

// variantOf returns the variant a run of the session runs: the one
// launch.json maps it to (a repeat), else the one of its name.
func variantOf(s *sessions.Session, run string) string {
	if st, err := readLaunch(s); err == nil {
		if v, ok := st.Variants[run]; ok {
			return v
		}
	}
	return run
}

// readLaunch reads the session's launch.json (readLaunchFile). A
// missing one is an error wrapping os.ErrNotExist.
func readLaunch(s *sessions.Session) (launchState, error) {
	st, err := readLaunchFile(s.Dir())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return st, fmt.Errorf("session %s: %w", s.ID(), err)
	}
	return st, err
}

// readLaunchFile reads the launch.json of the session folder dir and
// checks its names (launchState.checkNames).
func readLaunchFile(dir string) (launchState, error) {
	var st launchState
	b, err := sessions.ReadRegular(filepath.Join(dir, launchFile), sessions.MaxMetaSize)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("%s: %w", launchFile, err)
	}
	if err := st.checkNames(); err != nil {
		return launchState{}, fmt.Errorf("%s: %w", launchFile, err)
	}
	return st, nil
}

// MaxRuns is the most runs one session holds (variants times repeats). A
// launch.json listing more is refused: reading the state of 100,000 runs
// took 18 s.
const MaxRuns = 4096

// checkNames checks the number of runs and the run and variant names of
// launch.json, which
// become file names (runs/<run>.jsonl, .pid, .log): a session folder
// edited by hand or imported must not lead a run outside the store.
func (st launchState) checkNames() error {
	if len(st.Runs) > MaxRuns {
		return fmt.Errorf("%d runs: at most %d run in one session", len(st.Runs), MaxRuns)
	}
	for i, run := range st.Runs {
		if err := checkRunName(run); err != nil {
			return fmt.Errorf("runs[%d]: %w", i, err)
		}
	}
	for _, run := range slices.Sorted(maps.Keys(st.Variants)) {
		if err := checkRunName(run); err != nil {
			return fmt.Errorf("variants: %w", err)
		}
		if err := checkVariantName(st.Variants[run]); err != nil {
			return fmt.Errorf("variants[%q]: %w", run, err)
		}
	}
	return nil
}

// CheckImport checks the files this package adds to a session folder in
// dir, a session being imported (see sessions.ImportOptions.Check): the
// run and variant names of its launch.json, if it has one.
func CheckImport(dir string) error {
	if _, err := readLaunchFile(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// LoadSession returns the experiment and the resolved variants that Launch
// recorded in a session's session.json.
func LoadSession(s *sessions.Session) (Experiment, []Resolved, error) {
	var exp Experiment
	if len(s.Meta.Spec) == 0 {
		return exp, nil, fmt.Errorf("session %s has no experiment (not made by gnnscope run)", s.ID())
	}
	if err := json.Unmarshal(s.Meta.Spec, &exp); err != nil {
		return exp, nil, fmt.Errorf("session %s: experiment: %w", s.ID(), err)
	}
	out := make([]Resolved, 0, len(s.Meta.Variants))
	for _, v := range s.Meta.Variants {
		var vs variantSpec
		if err := json.Unmarshal(v.Spec, &vs); err != nil {
			return exp, nil, fmt.Errorf("session %s: variant %s: %w", s.ID(), v.Name, err)
		}
		r := Resolved{Variant: Variant{Name: v.Name, Overrides: vs.Overrides, External: vs.External}, Adjusted: vs.Adjusted}
		if vs.External == nil && len(vs.Config) > 0 {
			if err := json.Unmarshal(vs.Config, &r.Config); err != nil {
				return exp, nil, fmt.Errorf("session %s: variant %s: %w", s.ID(), v.Name, err)
			}
		}
		out = append(out, r)
	}
	return exp, out, nil
}

// RunStates returns the state of every run of the session, in launch order
// (then any other run, by name): what sessions reports for runs that have
// a journal or a pid file, and for launched runs that have neither:
// pending while their sequencer (or, for a parallel launch, the launcher)
// is alive, canceled once the session was canceled, crashed ("not
// started") when the process that was to start them is gone, and crashed
// (NotStartedBeforeExport) in an imported session, where nothing will
// start them.
func RunStates(s *sessions.Session) ([]sessions.RunState, error) {
	states, err := s.RunStates()
	if err != nil {
		return states, err
	}
	st, lerr := readLaunch(s)
	if errors.Is(lerr, os.ErrNotExist) {
		return states, nil
	}
	if lerr != nil {
		return states, lerr
	}
	out := make([]sessions.RunState, 0, max(len(states), len(st.Runs)))
	for _, run := range st.Runs {
		i := slices.IndexFunc(states, func(r sessions.RunState) bool { return r.Run == run })
		if i >= 0 {
			out = append(out, states[i])
			continue
		}
		rs := sessions.RunState{Run: run, Journal: s.JournalPath(run), Status: profile.StatusPending}
		switch {
		case canceled(s):
			rs.Status, rs.Error = profile.StatusCanceled, errCanceledBeforeStart.Error()
		case !starterAlive(s, st):
			rs.Status, rs.Error = profile.StatusCrashed, notStarted(s)
		case imported(s):
			rs.Status, rs.Error = profile.StatusCrashed, NotStartedBeforeExport
		}
		out = append(out, rs)
	}
	for _, r := range states {
		if !slices.Contains(st.Runs, r.Run) {
			out = append(out, r)
		}
	}
	return out, nil
}

// notStarted is the error of a launched run that never started and never
// will: the process that was to start it is gone. When the runs folder
// cannot be written (a read-only session folder), which is why, that
// error comes first, naming the folder.
func notStarted(s *sessions.Session) string {
	const gone = "the process that was to start it is gone"
	if err := sessions.CheckWritable(s.RunsDir()); err != nil {
		return fmt.Sprintf("not started: %v (%s)", err, gone)
	}
	return "not started: " + gone
}

// starterAlive reports whether the process that starts the session's runs
// may still start one: the sequencer, or the launcher until it has
// recorded the sequencer or (parallel) started every run. Unknown counts
// as alive.
func starterAlive(s *sessions.Session, st launchState) bool {
	if locked, known := sessions.Locked(filepath.Join(s.Dir(), launchFile)); known && locked {
		return true
	}
	if st.Mode == ModeSequential {
		p, err := readProc(filepath.Join(s.Dir(), sequencerPid))
		if err == nil {
			alive, known := p.Alive()
			return alive || !known
		}
	}
	alive, known := st.Launcher.Alive()
	return alive || !known
}
