package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RunRef names one run of one session for Compare.
type RunRef struct {
	Session *Session
	Run     string
	// State, if set, is the run's state as the caller knows it (runner
	// knows launched runs that have not started); otherwise Compare asks
	// Session.RunState.
	State *RunState
}

// Label returns "SESSION/RUN".
func (r RunRef) Label() string { return r.Session.ID() + "/" + r.Run }

// ErrNoMatch is wrapped by the errors of MatchSession and SelectRuns when
// a session or run does not exist.
var ErrNoMatch = errors.New("no match")

// ErrAmbiguous is wrapped when a prefix matches more than one session or
// run.
var ErrAmbiguous = errors.New("ambiguous")

// MatchSession opens the session whose id is ref or, failing that, the
// only one whose id starts with ref; "last" or "latest" is the newest
// session by creation time (session.json's created), never a folder of
// that name. Only folders named as the store names sessions (CheckID)
// match.
func (st *Store) MatchSession(ref string) (*Session, error) {
	if ref == "" {
		return nil, fmt.Errorf("session: empty id: %w", ErrNoMatch)
	}
	newest := ref == "last" || ref == "latest"
	if !newest && CheckID(ref) == nil {
		if _, err := os.Stat(filepath.Join(st.root, "sessions", ref, metaFile)); err == nil {
			return st.Get(ref)
		}
	}
	ents, err := os.ReadDir(filepath.Join(st.root, "sessions"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("session %q: %w", ref, err)
	}
	var ids []string
	for _, ent := range ents {
		if ent.IsDir() && CheckID(ent.Name()) == nil && (newest || strings.HasPrefix(ent.Name(), ref)) {
			ids = append(ids, ent.Name())
		}
	}
	if newest {
		if s := st.newest(ids); s != nil {
			return s, nil
		}
		return nil, fmt.Errorf("session %q: no session in %s: %w", ref, st.root, ErrNoMatch)
	}
	switch len(ids) {
	case 0:
		return nil, fmt.Errorf("session %q: no session has that id or id prefix in %s: %w", ref, st.root, ErrNoMatch)
	case 1:
		return st.Get(ids[0])
	}
	slices.Sort(ids)
	return nil, fmt.Errorf("session %q: the prefix matches %d sessions (%s): %w", ref, len(ids), listSome(ids), ErrAmbiguous)
}

// newest returns the session of ids created last (session.json's created;
// the larger id on a tie), nil if none reads.
func (st *Store) newest(ids []string) *Session {
	var best *Session
	for _, id := range ids {
		s, err := st.Get(id)
		if err != nil {
			continue // broken: no session.json
		}
		if best == nil || s.Meta.Created.After(best.Meta.Created) ||
			s.Meta.Created.Equal(best.Meta.Created) && id > best.ID() {
			best = s
		}
	}
	return best
}

// listSome joins up to 6 names.
func listSome(names []string) string {
	if len(names) > 6 {
		return strings.Join(names[:6], ", ") + fmt.Sprintf(", and %d more", len(names)-6)
	}
	return strings.Join(names, ", ")
}

// OrderedRuns returns the session's runs in launch order: the variants of
// session.json in their order, then any other run by name. Variants that
// have neither journal nor pid file (not started) are included.
func (s *Session) OrderedRuns() ([]string, error) {
	names, err := s.Runs()
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(names)+len(s.Meta.Variants))
	for _, v := range s.Meta.Variants {
		if ValidName(v.Name) != nil || slices.Contains(out, v.Name) {
			continue
		}
		// a variant run with --repeats has runs NAME.r1 ... instead of NAME
		if !slices.Contains(names, v.Name) && slices.ContainsFunc(names, func(n string) bool { return isRepeatOf(n, v.Name) }) {
			continue
		}
		out = append(out, v.Name)
	}
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// isRepeatOf reports whether run is a repeat of variant: NAME.rK, K a
// positive number.
func isRepeatOf(run, variant string) bool {
	k, ok := strings.CutPrefix(run, variant+".r")
	if !ok || k == "" || k[0] == '0' {
		return false
	}
	for _, c := range k {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// MatchRun returns the run of s named run or, failing that, the only run
// whose name starts with run.
func (s *Session) MatchRun(run string) (string, error) {
	runs, err := s.OrderedRuns()
	if err != nil {
		return "", err
	}
	if slices.Contains(runs, run) {
		return run, nil
	}
	var hits []string
	for _, r := range runs {
		if run != "" && strings.HasPrefix(r, run) {
			hits = append(hits, r)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		if len(runs) == 0 {
			return "", fmt.Errorf("run %q: session %s has no runs: %w", run, s.ID(), ErrNoMatch)
		}
		return "", fmt.Errorf("run %q: session %s has no such run (its runs: %s): %w", run, s.ID(), listSome(runs), ErrNoMatch)
	}
	return "", fmt.Errorf("run %q: the prefix matches %d runs of session %s (%s): %w", run, len(hits), s.ID(), listSome(hits), ErrAmbiguous)
}

// ParseRunRef splits "SESSION" or "SESSION/RUN" (run empty for the
// former).
func ParseRunRef(arg string) (session, run string) {
	session, run, _ = strings.Cut(strings.TrimSpace(arg), "/")
	return session, run
}

// SelectRuns resolves arguments of the form SESSION (every run of the
// session, in launch order) or SESSION/RUN (one run); session ids and run
// names may be unique prefixes, and SESSION "last" is the newest session.
// Runs named twice are listed once.
func (st *Store) SelectRuns(args []string) ([]RunRef, error) {
	var out []RunRef
	seen := map[string]bool{}
	add := func(s *Session, run string) {
		r := RunRef{Session: s, Run: run}
		if !seen[r.Label()] {
			seen[r.Label()] = true
			out = append(out, r)
		}
	}
	for _, arg := range args {
		sid, run := ParseRunRef(arg)
		s, err := st.MatchSession(sid)
		if err != nil {
			return nil, err
		}
		if run != "" {
			name, err := s.MatchRun(run)
			if err != nil {
				return nil, err
			}
			add(s, name)
			continue
		}
		runs, err := s.OrderedRuns()
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			return nil, fmt.Errorf("session %s has no runs: %w", s.ID(), ErrNoMatch)
		}
		for _, r := range runs {
			add(s, r)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no runs to compare: %w", ErrNoMatch)
	}
	return out, nil
}
