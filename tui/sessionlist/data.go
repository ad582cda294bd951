package sessionlist

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/stats"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// Run is one run of a session as the list shows it.
type Run struct {
	Name    string
	Variant string // "" while unknown: the run's name stands for it
	Status  profile.Status
	Error   string
	// EpochS is the median epoch wall time of the run's variant (over its
	// repeats; 0 while unknown), Epochs the run's epoch times.
	EpochS    float64
	EpochList []float64
	// Speedup is its variant's speedup over the baseline's with its 95 %
	// interval (sessions.Speedups); zero Ratio for none (a run that
	// stopped early has none).
	Speedup stats.Speedup
	TestAcc *float64
	// Epoch and Epochs are the progress of a running run: the last epoch
	// with a loss and the configured number of epochs (0 when unknown).
	Epoch, Epochs int
	// Skipped of Batches training batches were skipped (on_oom skip;
	// sessions.SkipCounts; zeros when none was).
	Skipped, Batches int
}

// Entry is one session of the list.
type Entry struct {
	ID       string
	Name     string
	Created  time.Time
	Status   profile.Status // running, ok, crashed, oom, failed, canceled, unknown, empty, error
	Imported bool
	Data     string
	Model    string
	Variants []string
	Runs     []Run

	// Key figures: the baseline run, the best other run (highest
	// speedup, never one that stopped early; its variant's name for
	// repeats) and the speedup of the best over the baseline with its
	// interval. Epoch times are the variants' medians.
	Baseline   string
	BaseEpochS float64
	BaseAcc    *float64
	Best       string
	BestEpochS float64
	BestAcc    *float64
	Speedup    stats.Speedup

	// Err is set when the session could not be read (fully).
	Err string
	// Partial: the journals have not been read yet (no figures).
	Partial bool
	// Skips is set when a run of the session skipped training batches:
	// its figures cover the trained ones only.
	Skips bool
	// Missing is set when the session's folder has no session.json yet (a
	// launch under way writes it after making the folder): every poll
	// reads the session again until it has one. The entry is pending
	// while the folder is younger than StartGrace, an error after.
	Missing bool
}

// StartGrace is how long a session folder without session.json is taken
// for a launch under way (pending) before the list calls it an error.
const StartGrace = 30 * time.Second

// Starting reports whether the session is a launch under way whose
// session.json the list has not read yet: the list polls until it has.
func (e *Entry) Starting() bool { return e.Missing && e.Status == profile.StatusPending }

// Running reports whether a run of the session may still change.
func (e *Entry) Running() bool { return e.Status == profile.StatusRunning }

// header reads what a session says of itself (session.json) and
// returns the session, or an entry with the error.
func header(store *sessions.Store, id string) (*sessions.Session, Entry) {
	e := Entry{ID: id, Variants: []string{}}
	s, err := store.Get(id)
	if err != nil {
		e.Status, e.Err = profile.StatusError, err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			e.Missing = true
			if young(store, id) {
				e.Status, e.Err = profile.StatusPending, ""
			}
		}
		return nil, e
	}
	e.Name, e.Created = s.Meta.Name, s.Meta.Created
	for _, v := range s.Meta.Variants {
		e.Variants = append(e.Variants, v.Name)
	}
	info, _ := s.ImportInfo()
	e.Imported = info != nil
	if exp, _, err := runner.LoadSession(s); err == nil {
		e.Data, e.Model = exp.Data, string(exp.Train.Model)
	}
	var cmds []string
	for _, v := range s.Meta.Variants {
		if cmd, ok := variantCommand(v.Spec); ok {
			cmds = append(cmds, cmd)
		}
	}
	e.external(cmds, len(s.Meta.Variants))
	return s, e
}

// young reports whether the folder of session id was made less than
// StartGrace ago (or cannot be looked at: the next poll looks again).
func young(store *sessions.Store, id string) bool {
	fi, err := os.Stat(filepath.Join(store.SessionsDir(), id))
	if err != nil {
		return true
	}
	return time.Since(fi.ModTime()) < StartGrace
}

// variantCommand returns the command of an external variant as
// session.json records it: its spec's "cmd", or its config's.
func variantCommand(spec json.RawMessage) (string, bool) {
	if cmd, ok := sessions.ExternalCommand(spec); ok {
		return cmd, true
	}
	var v struct {
		Config json.RawMessage `json:"config"`
	}
	if json.Unmarshal(spec, &v) != nil {
		return "", false
	}
	return sessions.ExternalCommand(v.Config)
}

// external shows the command of a session whose runs are all external
// (cmds: the commands of those of its n runs that are) in place of the
// engine's dataset and model, which it does not use: DATA holds the
// command, shortened, and MODEL "ext".
func (e *Entry) external(cmds []string, n int) {
	if len(cmds) == 0 || len(cmds) < n {
		return
	}
	e.Data, e.Model = sessions.ShortCommand(cmds[0]), "ext"
}

// glance reads a session cheaply: session.json and the state of each run
// (the end of its journal, its writer's pid), no figures. The entry is
// Partial until describe reads the journals.
func glance(store *sessions.Store, id string) Entry {
	s, e := header(store, id)
	if s == nil {
		return e
	}
	e.Partial = true
	states, err := runner.RunStates(s)
	if err != nil {
		e.Err = err.Error()
	}
	for _, st := range states {
		run := Run{Name: st.Run, Status: st.Status, Error: st.Error}
		e.Runs = append(e.Runs, run)
		if len(s.Meta.Variants) == 0 {
			e.Variants = append(e.Variants, st.Run)
		}
	}
	e.finish()
	return e
}

// describe reads one session fully: its experiment, the state of every
// run and the figures from the journals (runner.Compare).
func describe(store *sessions.Store, id string) Entry {
	s, e := header(store, id)
	if s == nil {
		return e
	}
	t, err := runner.Compare(s)
	if err != nil {
		e.Err = err.Error()
	}
	var cmds []string
	for _, r := range t.Runs {
		if cmd, ok := r.Config["cmd"]; ok && cmd != "" {
			cmds = append(cmds, cmd)
		}
	}
	e.external(cmds, len(t.Runs))
	for _, r := range t.Runs {
		run := Run{Name: r.Run, Variant: r.Variant, Status: r.Status, Error: r.Error, EpochList: r.EpochTimes(), TestAcc: r.TestAcc,
			Skipped: r.SkippedBatches, Batches: r.TotalBatches}
		e.Runs = append(e.Runs, run)
		if len(s.Meta.Variants) == 0 {
			e.Variants = append(e.Variants, r.Run)
		}
	}
	e.Baseline = t.Baseline
	e.finish()
	return e
}

// finish derives the session status and the key figures from the runs.
func (e *Entry) finish() {
	statuses := make([]profile.Status, len(e.Runs))
	for i, r := range e.Runs {
		statuses[i] = r.Status
	}
	if e.Status != profile.StatusError {
		e.Status = runner.SessionStatus(statuses)
	}
	if e.Baseline == "" {
		for _, r := range e.Runs {
			if r.Name == string(runner.Baseline) {
				e.Baseline = r.Name
			}
		}
		if e.Baseline == "" && len(e.Runs) > 0 {
			e.Baseline = e.Runs[0].Name
		}
	}
	e.Skips = slices.ContainsFunc(e.Runs, func(r Run) bool { return r.Skipped > 0 })
	e.BaseEpochS, e.BaseAcc = 0, nil
	e.Best, e.BestEpochS, e.BestAcc, e.Speedup = "", 0, nil, stats.Speedup{}
	base := -1
	runs := make([]sessions.RunTiming, len(e.Runs))
	for i, r := range e.Runs {
		if r.Name == e.Baseline {
			base = i
		}
		v := r.Variant
		if v == "" {
			v = r.Name
		}
		runs[i] = sessions.RunTiming{Group: v, Repeat: sessions.RepeatNumber(r.Name, v), Status: r.Status, Epochs: r.EpochList}
	}
	timings := sessions.Speedups(runs, base, true)
	for i, t := range timings {
		e.Runs[i].EpochS, e.Runs[i].Speedup = t.VariantMedianS, t.Speedup
	}
	if base >= 0 {
		e.BaseEpochS, e.BaseAcc = e.Runs[base].EpochS, e.Runs[base].TestAcc
	}
	if best := sessions.Best(runs, timings, base); best >= 0 {
		r := e.Runs[best]
		e.Best, e.BestEpochS, e.BestAcc, e.Speedup = r.Name, r.EpochS, r.TestAcc, r.Speedup
		if runs[best].Repeat > 0 {
			e.Best = runs[best].Group
		}
	}
}

// glanceAll glances at every session of the store, newest first; the
// list then describes them one by one.
func glanceAll(store *sessions.Store) ([]Entry, error) {
	ids, err := sessionIDs(store)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(ids))
	for _, id := range ids {
		out = append(out, glance(store, id))
	}
	return out, nil
}

// sessionIDs lists the session folders of the store, newest first (ids
// sort by creation time). It reads the folder only.
func sessionIDs(store *sessions.Store) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(store.Root(), "sessions"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var ids []string
	for _, ent := range ents {
		if ent.IsDir() && sessions.ValidName(ent.Name()) == nil {
			ids = append(ids, ent.Name())
		}
	}
	slices.SortFunc(ids, func(a, b string) int { return strings.Compare(b, a) })
	return ids, nil
}

// poller follows the running sessions between polls: one journal tail
// per running run, so a poll reads only what was appended. A poll runs in
// a command; the list keeps at most one in flight.
type poller struct {
	mu    sync.Mutex // a poll against close at exit
	store *sessions.Store
	runs  map[string]*liveRun // by SESSION/RUN
}

// liveRun is a running run's tail and what it has shown so far.
type liveRun struct {
	tail    *sessions.RunTailer // the run's journals, a distributed run's ranks merged
	agg     *profile.Aggregator
	epochs  int // configured, from run_start
	epoch   int // last epoch with a loss
	acc     *float64
	variant string // from run_start
}

func newPoller(store *sessions.Store) *poller {
	return &poller{store: store, runs: map[string]*liveRun{}}
}

// pollResult is what a poll found: fresh entries for sessions that are
// new or were running, and the ids of the store in list order.
type pollResult struct {
	ids     []string
	updated map[string]Entry
	err     error
}

// poll lists the store's session folders, describes new ones (and those
// that had no session.json at the last look), and
// refreshes the running ones of prev (keyed by id): run states from the
// end of the journals, progress and figures from the tails. A session
// whose runs have all ended is described once more from its whole
// journals, and its tails are closed.
func (p *poller) poll(prev map[string]Entry) pollResult {
	p.mu.Lock()
	defer p.mu.Unlock()
	res := pollResult{updated: map[string]Entry{}}
	ids, err := sessionIDs(p.store)
	if err != nil {
		res.err = err
		return res
	}
	res.ids = ids
	live := map[string]bool{}
	for _, id := range ids {
		old, known := prev[id]
		switch {
		case !known, old.Missing: // new, or read before its session.json existed
			res.updated[id] = describe(p.store, id)
		case old.Running():
			e := p.refresh(old)
			if e.Running() {
				for _, r := range e.Runs {
					live[id+"/"+r.Name] = true
				}
				res.updated[id] = e
			} else {
				res.updated[id] = describe(p.store, id)
			}
		}
	}
	for k, lr := range p.runs {
		if !live[k] {
			lr.tail.Close()
			delete(p.runs, k)
		}
	}
	return res
}

// refresh updates a running session's entry from its run states and the
// tails of its journals.
func (p *poller) refresh(old Entry) Entry {
	e := old
	e.Runs, e.Partial = nil, false // the tails give the figures
	s, err := p.store.Get(old.ID)
	if err != nil {
		e.Status, e.Err = profile.StatusError, err.Error()
		e.Runs = old.Runs
		return e
	}
	states, err := runner.RunStates(s)
	if err != nil {
		e.Err = err.Error()
	}
	for _, st := range states {
		r := Run{Name: st.Run, Status: st.Status, Error: st.Error}
		key := old.ID + "/" + st.Run
		lr := p.runs[key]
		if lr == nil && st.Size > 0 {
			tail, err := s.TailRunRanks(st.Run, sessions.TailOptions{})
			if err != nil {
				if e.Err == "" {
					e.Err = err.Error()
				}
			} else {
				lr = &liveRun{tail: tail, agg: profile.NewAggregator()}
				p.runs[key] = lr
			}
		}
		if lr != nil {
			evs, err := lr.tail.Poll()
			if err != nil && e.Err == "" {
				e.Err = err.Error()
			}
			lr.add(evs)
			sum := lr.agg.Summary()
			r.EpochList = make([]float64, len(sum.Epochs))
			for i, ep := range sum.Epochs {
				r.EpochList[i] = ep.WallS
			}
			r.Variant, r.Epoch, r.Epochs, r.TestAcc = lr.variant, lr.epoch, lr.epochs, lr.acc
		}
		e.Runs = append(e.Runs, r)
	}
	e.finish()
	return e
}

// add folds new events into the run's figures.
func (lr *liveRun) add(evs []profile.Event) {
	lr.agg.AddAll(evs)
	for i := range evs {
		ev := &evs[i]
		switch ev.T {
		case profile.TypeRunStart:
			lr.variant = ev.Variant
			var cfg struct {
				Epochs int `json:"epochs"`
			}
			if json.Unmarshal(ev.Config, &cfg) == nil {
				lr.epochs = cfg.Epochs
			}
		case profile.TypeMetric:
			switch ev.Name {
			case "loss":
				lr.epoch = max(lr.epoch, ev.Epoch)
			case "test_acc":
				v := ev.Value
				lr.acc = &v
			}
		}
	}
}

// close ends every tail.
func (p *poller) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, lr := range p.runs {
		lr.tail.Close()
		delete(p.runs, k)
	}
}
