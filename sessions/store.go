package sessions

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// FormatVersion is the version of session.json's layout.
const FormatVersion = 1

// MaxMetaSize bounds session.json: 64 MiB, far above what an experiment
// and its variants take.
const MaxMetaSize = 64 << 20

// Store is a root folder holding sessions.
type Store struct {
	root string
	warn *warnings
}

// DefaultRoot returns the store root: $GNNSCOPE_HOME if set, else
// $XDG_DATA_HOME/gnnscope (when XDG_DATA_HOME is an absolute path), else
// ~/.local/share/gnnscope.
func DefaultRoot() (string, error) {
	if v := os.Getenv("GNNSCOPE_HOME"); v != "" {
		return v, nil
	}
	if v := os.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "gnnscope"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("store root: set GNNSCOPE_HOME: %w", err)
	}
	return filepath.Join(home, ".local", "share", "gnnscope"), nil
}

// Open opens the store at root (DefaultRoot if empty), creating its
// sessions folder if needed. Folders it creates are private (mode 0700),
// as is everything a store holds: session folders 0700, their files 0600.
func Open(root string) (*Store, error) {
	if root == "" {
		var err error
		if root, err = DefaultRoot(); err != nil {
			return nil, err
		}
	}
	dir := filepath.Join(root, "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		// MkdirAll reports a folder it cannot reach as one it cannot
		// make: name the folder that stops it.
		if _, serr := os.Stat(dir); serr != nil && !errors.Is(serr, os.ErrNotExist) {
			err = serr
		}
		return nil, fmt.Errorf("open store %s: %w", root, err)
	}
	return &Store{root: root, warn: &warnings{}}, nil
}

// Root returns the store's root folder.
func (st *Store) Root() string { return st.root }

// SessionsDir returns the folder that holds one folder per session: what
// a view watches for sessions created elsewhere.
func (st *Store) SessionsDir() string { return filepath.Join(st.root, "sessions") }

// SessionMeta is the content of session.json.
type SessionMeta struct {
	Version  int             `json:"v"`
	ID       string          `json:"id"`
	Name     string          `json:"name,omitempty"`
	Created  time.Time       `json:"created"`
	Host     *profile.Host   `json:"host,omitempty"`
	Spec     json.RawMessage `json:"spec,omitempty"` // the experiment, any JSON
	Variants []Variant       `json:"variants,omitempty"`
}

// Variant is one configuration of a session's experiment (baseline,
// optimized, ...). Its runs are usually named after it.
type Variant struct {
	Name string          `json:"name"`
	Spec json.RawMessage `json:"spec,omitempty"` // any JSON
}

// Session is one session folder.
type Session struct {
	Meta SessionMeta
	dir  string
}

// ID returns the session id.
func (s *Session) ID() string { return s.Meta.ID }

// Dir returns the session's folder.
func (s *Session) Dir() string { return s.dir }

// RunsDir returns the folder holding the session's journals.
func (s *Session) RunsDir() string { return filepath.Join(s.dir, "runs") }

// JournalPath returns the journal of a run: runs/<run>.jsonl. run must pass
// ValidName.
func (s *Session) JournalPath(run string) string {
	return filepath.Join(s.dir, "runs", run+journalExt)
}

// PidPath returns the pid file of a run: runs/<run>.pid.
func (s *Session) PidPath(run string) string {
	return filepath.Join(s.dir, "runs", run+pidExt)
}

const (
	journalExt = ".jsonl"
	pidExt     = ".pid"
	metaFile   = "session.json"
)

// NewID returns a new session id for time t: UTC yyyymmdd-hhmmss and four
// random hex digits, e.g. 20261122-153045-ab12.
func NewID(t time.Time) string {
	var r [2]byte
	_, _ = rand.Read(r[:])
	return t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:])
}

// Create makes a new session folder and writes its session.json. An empty
// ID gets a new one (NewID), a zero Created the current time, a nil Host
// this machine's (profile.LocalHost). See CreateWith.
func (st *Store) Create(meta SessionMeta) (*Session, error) {
	return st.CreateWith(meta, nil)
}

// CreateWith is Create with prepare, which writes the session's other
// first files (nil: none). The session is built in a hidden folder of the
// store (session.json, runs/, then prepare's files), then renamed to its
// id: a session appears in the store whole or not at all, and a creation
// that is interrupted leaves a hidden folder that the list shows as broken
// once it is old (see StatusBroken). During prepare, s.Dir() is the hidden
// folder; afterwards it is the session's.
func (st *Store) CreateWith(meta SessionMeta, prepare func(s *Session) error) (*Session, error) {
	if meta.Created.IsZero() {
		meta.Created = time.Now()
	}
	if meta.Host == nil {
		h := profile.LocalHost()
		meta.Host = &h
	}
	meta.Version = FormatVersion
	given := meta.ID != ""
	if given {
		if err := ValidName(meta.ID); err != nil {
			return nil, fmt.Errorf("create session: %w", err)
		}
	} else {
		meta.ID = NewID(meta.Created)
	}
	root := filepath.Join(st.root, "sessions")
	tmp := filepath.Join(root, hiddenName(newPrefix, meta.ID))
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("create session %s: %w", meta.ID, err)
	}
	s := &Session{Meta: meta, dir: tmp}
	err := os.Mkdir(s.RunsDir(), 0o700)
	if err == nil {
		err = s.Save()
	}
	if err == nil && prepare != nil {
		err = prepare(s)
	}
	for attempt := 0; err == nil; attempt++ {
		dir := filepath.Join(root, s.Meta.ID)
		if err = renameNoReplace(tmp, dir); err == nil {
			s.dir = dir
			return s, nil
		}
		if !errors.Is(err, os.ErrExist) || given || attempt >= 20 {
			break
		}
		s.Meta.ID = NewID(s.Meta.Created) // taken: draw another
		err = s.Save()
	}
	os.RemoveAll(tmp)
	return nil, fmt.Errorf("create session %s: %w", s.Meta.ID, err)
}

// Save writes the session's Meta to session.json atomically.
func (s *Session) Save() error {
	b, err := json.MarshalIndent(s.Meta, "", "  ")
	if err != nil {
		return fmt.Errorf("save session %s: %w", s.Meta.ID, err)
	}
	return writeFileAtomic(filepath.Join(s.dir, metaFile), append(b, '\n'))
}

// Get opens an existing session.
func (st *Store) Get(id string) (*Session, error) {
	if err := ValidName(id); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	dir := filepath.Join(st.root, "sessions", id)
	if st.warn != nil {
		st.checkExposure(id, dir)
	}
	b, err := ReadRegular(filepath.Join(dir, metaFile), MaxMetaSize)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	s := &Session{dir: dir}
	if err := json.Unmarshal(b, &s.Meta); err != nil {
		return nil, fmt.Errorf("session %s: %s: %w", id, metaFile, err)
	}
	s.Meta.ID = id // the folder name is authoritative
	if err := checkVariantNames(s.Meta); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return s, nil
}

// checkVariantNames checks the names of session.json's variants
// (ValidName): runs are named after them, so they become file names.
func checkVariantNames(meta SessionMeta) error {
	for i, v := range meta.Variants {
		if err := CheckName("variant", v.Name); err != nil {
			return fmt.Errorf("%s: variants[%d]: %w", metaFile, i, err)
		}
	}
	return nil
}

// SessionInfo is one entry of List.
type SessionInfo struct {
	SessionMeta
	Dir  string     `json:"dir"`
	Runs []RunState `json:"runs"`
	// Err is set when the session could not be read; the other fields
	// are then partial.
	Err string `json:"error,omitempty"`
	// Broken says why the folder is no whole session (see StatusBroken;
	// its status in the list); Err says it too.
	Broken string `json:"broken,omitempty"`
}

// List returns every session of the store, oldest first (ids sort by time),
// with the state of each run. A session that cannot be read is listed with
// Err set rather than failing the whole list; a folder that is no whole
// session (StatusBroken) with Broken set to the reason.
func (st *Store) List() ([]SessionInfo, error) {
	out, err := st.Folders()
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Broken == "" {
			out[i] = st.Info(out[i].ID)
		}
	}
	return out, nil
}

// Folders is List without reading the sessions: each folder's ID and
// Dir, and Broken and Err for a broken one (see StatusBroken). It costs
// one directory read and a few lstats per folder.
func (st *Store) Folders() ([]SessionInfo, error) {
	root := filepath.Join(st.root, "sessions")
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []SessionInfo
	for _, ent := range ents {
		if !ent.IsDir() {
			continue
		}
		info := SessionInfo{Dir: filepath.Join(root, ent.Name())}
		info.ID = ent.Name()
		if why := brokenReason(info.Dir, ent.Name()); why != "" {
			info.Broken, info.Err = why, why
			out = append(out, info)
			continue
		}
		if ValidName(ent.Name()) != nil {
			continue
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Info is List's entry of session id: its metadata and the state of
// each run, Err set when it cannot be read (fully).
func (st *Store) Info(id string) SessionInfo {
	info := SessionInfo{Dir: filepath.Join(st.root, "sessions", id)}
	info.ID = id
	s, err := st.Get(id)
	if err != nil {
		info.Err = err.Error()
		return info
	}
	info.SessionMeta = s.Meta
	runs, err := s.RunStates()
	if err != nil {
		info.Err = err.Error()
	}
	info.Runs = runs
	return info
}

// Delete removes a session folder. It refuses while a process holds the
// session (Session.Hold: a run's writer or the sequencer, with or without
// its pid file) or a run is running, and holds the session itself while it
// deletes, so no process starts working in it meanwhile. The folder is
// first renamed out of the list, then removed, so a removal that is
// killed never leaves a session without its session.json. A broken
// folder (see StatusBroken) is removed by its name.
func (st *Store) Delete(id string) error {
	if leftoverName(id) {
		dir := filepath.Join(st.root, "sessions", id)
		if st.Broken(id) == "" {
			return fmt.Errorf("delete %s: not a leftover of the store (a launch may be under way)", id)
		}
		return os.RemoveAll(dir)
	}
	s, err := st.Get(id)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && ValidName(id) == nil {
			// no session.json: remove what is there
			dir := filepath.Join(st.root, "sessions", id)
			lock, err := lockForDelete(id, dir)
			if err != nil {
				return err
			}
			defer lock.Close()
			return removeAside(dir, id)
		}
		return fmt.Errorf("delete: %w", err)
	}
	lock, err := lockForDelete(id, s.dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	runs, err := s.RunStates()
	if err != nil && !errors.Is(err, ErrNotRegular) { // a FIFO in runs/ may go
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	for _, r := range runs {
		if r.Status == profile.StatusRunning {
			if r.Pid > 0 {
				return fmt.Errorf("delete session %s: run %s is still running (pid %d)", id, r.Run, r.Pid)
			}
			return fmt.Errorf("delete session %s: run %s is still running", id, r.Run)
		}
	}
	if err := removeAside(s.dir, id); err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// lockForDelete takes the session folder dir exclusively (see
// Session.Hold), refusing while a process holds it; where locks are not
// available it goes on without. The caller closes the file.
func lockForDelete(id, dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("delete session %s: %w", id, err)
	}
	switch err := tryLock(f, true); {
	case errors.Is(err, ErrLocked):
		f.Close()
		return nil, fmt.Errorf("delete session %s: a running process holds it (a run or the sequencer); cancel it first", id)
	case err != nil && !errors.Is(err, errors.ErrUnsupported):
		f.Close()
		return nil, fmt.Errorf("delete session %s: lock %s: %w", id, dir, err)
	}
	return f, nil
}

// Runs returns the names of the session's runs (those with a journal or a
// pid file), sorted. The journals of a distributed run's ranks other than
// 0 (<run>.rank<R>.jsonl, see SplitRankRun) belong to their run and are
// not runs of their own.
func (s *Session) Runs() ([]string, error) {
	ents, err := os.ReadDir(s.RunsDir())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("runs of session %s: %w", s.Meta.ID, err)
	}
	var names []string
	for _, ent := range ents {
		n := ent.Name()
		var run string
		switch {
		case strings.HasSuffix(n, journalExt):
			run = strings.TrimSuffix(n, journalExt)
		case strings.HasSuffix(n, pidExt):
			run = strings.TrimSuffix(n, pidExt)
		default:
			continue
		}
		if _, _, rank := SplitRankRun(run); rank {
			continue
		}
		if ValidName(run) == nil && !slices.Contains(names, run) {
			names = append(names, run)
		}
	}
	slices.Sort(names)
	return names, nil
}

// RunStates returns the state of every run of the session. A run whose
// state cannot be read is left out and its error joined to the others',
// so one bad journal does not hide the other runs.
func (s *Session) RunStates() ([]RunState, error) {
	names, err := s.Runs()
	if err != nil {
		return nil, err
	}
	out := make([]RunState, 0, len(names))
	var errs []error
	for _, n := range names {
		st, err := s.RunState(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, st)
	}
	return out, errors.Join(errs...)
}

// OpenJournal opens the run's journal for appending (see OpenJournal).
func (s *Session) OpenJournal(run string) (*JournalWriter, error) {
	if err := ValidName(run); err != nil {
		return nil, fmt.Errorf("open journal: %w", err)
	}
	return OpenJournal(s.JournalPath(run))
}
