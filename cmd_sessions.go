package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnnscope/gnnscope/cli/iostreams"
	"github.com/gnnscope/gnnscope/profile/units"
	"github.com/gnnscope/gnnscope/runner"
	"github.com/gnnscope/gnnscope/sessions"
)

// sessionsFlags are the flags shared by the sessions subcommands.
type sessionsFlags struct {
	store   string
	json    bool
	reverse bool
}

func newSessionsCmd() *cobra.Command {
	f := &sessionsFlags{}
	cmd := &cobra.Command{
		Use:     "sessions [ls|show|rm|export|import]",
		Aliases: []string{"session"},
		Short:   "List, show, delete, export and import saved sessions",
		Long: `Browse the sessions in the store ($GNNSCOPE_HOME, else the XDG data folder
gnnscope/; --store picks another). Every 'gnnscope run' makes one session:
a folder with the experiment (session.json), how its runs were launched
(launch.json), and one journal and log per run.

Without a subcommand, 'sessions' lists them (as 'sessions ls').

A SESSION argument is a session id, a unique prefix of one, or "last" for
the newest.`,
		Example: `  gnnscope sessions
  gnnscope sessions show last
  gnnscope sessions export 20261122-153045-ab12 -o cora-sage.tar.gz
  gnnscope sessions import cora-sage.tar.gz
  gnnscope sessions rm 20261122-153045-ab12 --yes`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return sessionsList(cmd, f) },
	}
	cmd.PersistentFlags().StringVar(&f.store, "store", "", "store root `DIR` (default: $GNNSCOPE_HOME, else the XDG data folder)")
	addListFlags(cmd, f)
	cmd.AddCommand(newSessionsLsCmd(f), newSessionsShowCmd(f), newSessionsRmCmd(f), newSessionsExportCmd(f), newSessionsImportCmd(f))
	return cmd
}

func addListFlags(cmd *cobra.Command, f *sessionsFlags) {
	cmd.Flags().BoolVar(&f.json, "json", false, "print a JSON array")
	cmd.Flags().BoolVarP(&f.reverse, "reverse", "r", false, "newest first")
}

func newSessionsLsCmd(f *sessionsFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the sessions, oldest first (newest last, next to the prompt)",
		Long: `List the sessions of the store, one line each, oldest first so the newest
is right above the prompt (-r: newest first):

  ID        the session id (its creation time, UTC, and a random suffix)
  CREATED   creation time (local)
  STATUS    running if a run is running or waiting to start; otherwise
            crashed, oom, failed, canceled or unknown if a run ended so
            (the first of these that applies); else ok
  VARIANTS  the session's runs
  DATA, MODEL
  BASE s    mean epoch time of the baseline run (the run named baseline,
            else the first)
  BEST s    mean epoch time of the fastest other run
  SPEEDUP   the baseline's mean epoch time over the best run's, and which
            run that is
  TEST ACC  test accuracy (at the best validation epoch) of the baseline,
            and of the best run after a slash

Figures come from the runs' journals, as in 'gnnscope sessions show'.
--json prints an array with every run's figures.`,
		Example: `  gnnscope sessions ls
  gnnscope sessions ls -r --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return sessionsList(cmd, f) },
	}
	addListFlags(cmd, f)
	return cmd
}

// openStore opens the store of --store (default: DefaultRoot).
func (f *sessionsFlags) openStore() (*sessions.Store, error) {
	return sessions.Open(f.store)
}

// resolveSession returns the id of the session ref names: an id, a unique
// prefix of one, or "last"/"latest" for the newest.
func resolveSession(store *sessions.Store, ref string) (string, error) {
	if ref == "" {
		return "", errors.New("no session given (gnnscope sessions lists them)")
	}
	s, err := store.MatchSession(ref)
	if err != nil {
		return "", err
	}
	return s.ID(), nil
}

// getSession opens the session ref names.
func getSession(store *sessions.Store, ref string) (*sessions.Session, error) {
	id, err := resolveSession(store, ref)
	if err != nil {
		return nil, err
	}
	return store.Get(id)
}

// sessionEntry is one session of `sessions ls`.
type sessionEntry struct {
	ID       string    `json:"id"`
	Name     string    `json:"name,omitempty"`
	Created  time.Time `json:"created"`
	Status   string    `json:"status"`
	Variants []string  `json:"variants"`
	Data     string    `json:"data,omitempty"`
	Model    string    `json:"model,omitempty"`
	Imported bool      `json:"imported,omitempty"`
	Dir      string    `json:"dir"`

	// Key figures: the baseline, the best other run (highest speedup) and
	// the speedup of the best over the baseline.
	Baseline       string   `json:"baseline,omitempty"`
	BaselineEpochS float64  `json:"baseline_epoch_s,omitempty"`
	BaselineAcc    *float64 `json:"baseline_test_acc,omitempty"`
	Best           string   `json:"best,omitempty"`
	BestEpochS     float64  `json:"best_epoch_s,omitempty"`
	BestAcc        *float64 `json:"best_test_acc,omitempty"`
	Speedup        float64  `json:"speedup,omitempty"`

	Runs  []sessions.RunFigures `json:"runs"`
	Error string                `json:"error,omitempty"`
}

// describeSession builds a session's list entry; errors go into Error.
func describeSession(store *sessions.Store, info sessions.SessionInfo) sessionEntry {
	e := sessionEntry{ID: info.ID, Name: info.Name, Created: info.Created, Dir: info.Dir, Variants: []string{}, Runs: []sessions.RunFigures{}, Error: info.Err}
	for _, v := range info.Variants {
		e.Variants = append(e.Variants, v.Name)
	}
	s, err := store.Get(info.ID)
	if err != nil {
		e.Status, e.Error = "error", err.Error()
		return e
	}
	if ii, _ := s.ImportInfo(); ii != nil {
		e.Imported = true
	}
	if exp, _, err := runner.LoadSession(s); err == nil {
		e.Data, e.Model = exp.Data, exp.Train.Model
	}
	t, err := runner.Compare(s)
	if err != nil && e.Error == "" {
		e.Error = err.Error()
	}
	e.Runs = t.Runs
	statuses := make([]string, len(t.Runs))
	for i, r := range t.Runs {
		statuses[i] = r.Status
		if len(info.Variants) == 0 {
			e.Variants = append(e.Variants, r.Run)
		}
	}
	e.Status = runner.SessionStatus(statuses)
	e.Baseline = t.Baseline
	best := -1
	for i, r := range t.Runs {
		if r.Run == t.Baseline {
			e.BaselineEpochS, e.BaselineAcc = r.EpochMeanS, r.TestAcc
			continue
		}
		if r.Speedup > 0 && (best < 0 || r.Speedup > t.Runs[best].Speedup) {
			best = i
		}
	}
	if best >= 0 {
		r := t.Runs[best]
		e.Best, e.BestEpochS, e.BestAcc, e.Speedup = r.Run, r.EpochMeanS, r.TestAcc, r.Speedup
	}
	return e
}

func sessionsList(cmd *cobra.Command, f *sessionsFlags) error {
	store, err := f.openStore()
	if err != nil {
		return err
	}
	infos, err := store.List()
	if err != nil {
		return err
	}
	entries := make([]sessionEntry, 0, len(infos))
	for _, info := range infos {
		entries = append(entries, describeSession(store, info))
	}
	if f.reverse {
		slices.Reverse(entries)
	}
	out := cmd.OutOrStdout()
	if f.json {
		return iostreams.WriteJSON(out, entries)
	}
	if len(entries) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "no sessions in %s yet (gnnscope run makes one)\n", store.Root())
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCREATED\tSTATUS\tVARIANTS\tDATA\tMODEL\tBASE s\tBEST s\tSPEEDUP\tTEST ACC")
	for _, e := range entries {
		status := e.Status
		if e.Imported {
			status += " (imported)"
		}
		cells := []string{e.ID, localTime(e.Created, "2006-01-02 15:04"), status, dash(strings.Join(e.Variants, ",")), dash(e.Data), dash(e.Model)}
		cells = append(cells, secOrDash(e.BaselineEpochS), secOrDash(e.BestEpochS))
		if e.Speedup > 0 {
			cells = append(cells, fmt.Sprintf("%.2fx %s", e.Speedup, e.Best))
		} else {
			cells = append(cells, "-")
		}
		acc := accOrDash(e.BaselineAcc)
		if e.Best != "" {
			acc += "/" + accOrDash(e.BestAcc)
		}
		cells = append(cells, acc)
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Error != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "session %s: %s\n", e.ID, e.Error)
		}
	}
	return nil
}

func localTime(t time.Time, layout string) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format(layout)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func secOrDash(v float64) string {
	if v <= 0 {
		return "-"
	}
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func accOrDash(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.4f", *p)
}

func newSessionsShowCmd(f *sessionsFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "Show a session: its experiment, the state of each run and the comparison table",
		Long: `Show one session: the experiment (dataset, model and the key training
settings, each variant's overrides), where it ran, the state of every run
(running, pending, ok, oom, failed, canceled, crashed) with its journal,
and the comparison table of 'gnnscope run --wait'.

--json prints {"session", "dir", "status", "imported", "runs", "comparison"}.`,
		Example: `  gnnscope sessions show last
  gnnscope sessions show 20261122-153045 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return sessionsShow(cmd, f, args[0]) },
	}
	cmd.Flags().BoolVar(&f.json, "json", false, "print JSON")
	return cmd
}

// sessionShow is the JSON of `sessions show`.
type sessionShow struct {
	Session    sessions.SessionMeta `json:"session"`
	Dir        string               `json:"dir"`
	Status     string               `json:"status"`
	Imported   *sessions.ImportInfo `json:"imported,omitempty"`
	Runs       []sessions.RunState  `json:"runs"`
	Comparison runner.Table         `json:"comparison"`
	Experiment *runner.Experiment   `json:"-"`
	Variants   []runner.Resolved    `json:"-"`
}

func sessionsShow(cmd *cobra.Command, f *sessionsFlags, ref string) error {
	store, err := f.openStore()
	if err != nil {
		return err
	}
	s, err := getSession(store, ref)
	if err != nil {
		return err
	}
	v := sessionShow{Session: s.Meta, Dir: s.Dir()}
	if v.Imported, err = s.ImportInfo(); err != nil {
		return err
	}
	if v.Runs, err = runner.RunStates(s); err != nil {
		return fmt.Errorf("session %s: %w", s.ID(), err)
	}
	if v.Comparison, err = runner.Compare(s); err != nil {
		return fmt.Errorf("session %s: %w", s.ID(), err)
	}
	statuses := make([]string, len(v.Runs))
	for i, r := range v.Runs {
		statuses[i] = r.Status
	}
	v.Status = runner.SessionStatus(statuses)
	if exp, resolved, err := runner.LoadSession(s); err == nil {
		v.Experiment, v.Variants = &exp, resolved
	}
	out := cmd.OutOrStdout()
	if f.json {
		return iostreams.WriteJSON(out, v)
	}
	return renderShow(out, s, v)
}

func renderShow(w io.Writer, s *sessions.Session, v sessionShow) error {
	m := s.Meta
	title := m.ID
	if m.Name != "" {
		title += "  " + m.Name
	}
	fmt.Fprintf(w, "session   %s\n", title)
	fmt.Fprintf(w, "created   %s\n", localTime(m.Created, "2006-01-02 15:04:05 MST"))
	if h := m.Host; h != nil {
		desc := []string{}
		for _, part := range []string{h.CPU, plural(h.Cores, "core"), h.GPU, h.OS} {
			if part != "" {
				desc = append(desc, part)
			}
		}
		name := h.Hostname
		if name == "" {
			name = "-"
		}
		fmt.Fprintf(w, "host      %s: %s\n", name, strings.Join(desc, ", "))
	}
	fmt.Fprintf(w, "folder    %s\n", s.Dir())
	fmt.Fprintf(w, "status    %s\n", v.Status)
	if ii := v.Imported; ii != nil {
		from := ii.Host
		if from == "" {
			from = "another machine"
		}
		fmt.Fprintf(w, "imported  %s, exported from %s %s\n", localTime(ii.Imported, "2006-01-02 15:04"), from, localTime(ii.Exported, "2006-01-02 15:04"))
	}
	if exp := v.Experiment; exp != nil {
		c := exp.Train
		split := exp.Split.Mode
		fmt.Fprintf(w, "data      %s (split %s)\n", exp.Data, split)
		model := fmt.Sprintf("%s, %d layers of %d", c.Model, c.Layers, c.Hidden)
		if c.Sampler == "neighbor" {
			model += fmt.Sprintf(", neighbor sampling (fanouts %s, batches of %d)", joinInts(c.Fanouts), c.BatchSize)
		} else {
			model += ", full batch"
		}
		fmt.Fprintf(w, "model     %s\n", model)
		fmt.Fprintf(w, "training  %d epochs, lr %g, weight decay %g, dropout %g, seed %d, threads %d, eval every %d\n",
			c.Epochs, c.LR, c.WeightDecay, c.Dropout, c.Seed, c.Threads, c.EvalEvery)
		for i, r := range v.Variants {
			label := "variants"
			if i > 0 {
				label = ""
			}
			keys := make([]string, 0, len(r.Overrides))
			for k := range r.Overrides {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			over := make([]string, len(keys))
			for j, k := range keys {
				b, _ := json.Marshal(r.Overrides[k])
				over[j] = k + "=" + string(b)
			}
			if len(over) == 0 {
				over = []string{"(no overrides)"}
			}
			fmt.Fprintf(w, "%-8s  %s: %s\n", label, r.Name, strings.Join(over, " "))
		}
	} else if len(m.Spec) > 0 {
		fmt.Fprintf(w, "spec      %s\n", compactJSON(m.Spec))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tPID\tJOURNAL\tLAST WRITE\tERROR")
	for _, r := range v.Runs {
		pid := "-"
		if r.Pid > 0 && r.Status == sessions.StatusRunning {
			pid = fmt.Sprint(r.Pid)
		}
		size := "-"
		if r.Size > 0 {
			size = units.Bytes(r.Size)
		}
		mod := "-"
		if !r.Modified.IsZero() {
			mod = localTime(r.Modified, "2006-01-02 15:04:05")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Run, r.Status, pid, size, mod, oneLine(r.Error))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return v.Comparison.Render(w)
}

func plural(n int, what string) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

func compactJSON(raw json.RawMessage) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	var v any
	if json.Unmarshal(raw, &v) != nil || enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSpace(b.String())
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// isTerminal reports whether r or w (an io.Reader or io.Writer) is a
// terminal; tests replace it.
var isTerminal = func(rw any) bool {
	f, ok := rw.(*os.File)
	return ok && fileIsTerminal(f)
}

func newSessionsRmCmd(f *sessionsFlags) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "rm SESSION...",
		Aliases: []string{"delete", "remove"},
		Short:   "Delete sessions (not running ones)",
		Long: `Delete sessions and everything in their folders (journals, logs).

A session with a running run, or runs still waiting to start, is refused:
cancel it first with 'gnnscope run --cancel ID'. On a terminal rm asks for
confirmation unless --yes; without a terminal it refuses unless --yes.
Nothing is deleted if any session given is refused.`,
		Example: `  gnnscope sessions rm 20261122-153045-ab12
  gnnscope sessions rm 20261122-153045 20261122-160212 --yes`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return sessionsRm(cmd, f, args, yes) },
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func sessionsRm(cmd *cobra.Command, f *sessionsFlags, refs []string, yes bool) error {
	store, err := f.openStore()
	if err != nil {
		return err
	}
	var ids []string
	for _, ref := range refs {
		id, err := resolveSession(store, ref)
		if err != nil {
			return err
		}
		if slices.Contains(ids, id) {
			continue
		}
		if s, err := store.Get(id); err == nil {
			states, err := runner.RunStates(s)
			if err != nil {
				return fmt.Errorf("session %s: %w", id, err)
			}
			if runner.Active(states) {
				var busy []string
				for _, r := range states {
					if r.Status == sessions.StatusRunning || r.Status == runner.StatusPending {
						busy = append(busy, r.Run+" "+r.Status)
					}
				}
				return fmt.Errorf("session %s is running (%s); cancel it first: gnnscope run --cancel %s", id, strings.Join(busy, ", "), id)
			}
		}
		ids = append(ids, id)
	}
	if !yes {
		in := cmd.InOrStdin()
		if !isTerminal(in) {
			return fmt.Errorf("not deleting %s without confirmation: stdin is not a terminal (pass --yes)", strings.Join(ids, ", "))
		}
		what := "session " + ids[0]
		if len(ids) > 1 {
			what = fmt.Sprintf("%d sessions (%s)", len(ids), strings.Join(ids, ", "))
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "Delete %s and its journals? [y/N] ", what)
		answer, _ := bufio.NewReader(in).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(answer)) {
		case "y", "yes":
		default:
			return errors.New("nothing deleted")
		}
	}
	for _, id := range ids {
		if err := store.Delete(id); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "deleted session %s\n", id)
	}
	return nil
}

func newSessionsExportCmd(f *sessionsFlags) *cobra.Command {
	var out string
	var force bool
	cmd := &cobra.Command{
		Use:   "export SESSION [-o FILE]",
		Short: "Write a session to one archive file (.tar.gz) to import elsewhere",
		Long: `Write a session to one archive file: a gzip-compressed tar holding a small
manifest (format version, session id, files and sizes) and the session
folder (session.json, launch.json, every run's journal and log). Pid files
are left out. Any tar lists it: tar tzf FILE.

The default FILE is ID.tar.gz in the current folder; -o - writes to stdout.
The file is written through a temporary file and a rename, so it is either
complete or not there.

A session that is still running (or has runs waiting to start) is refused:
its journals are being written. --force exports it anyway, each journal up
to its last complete line; the imported copy shows those runs as crashed.`,
		Example: `  gnnscope sessions export last
  gnnscope sessions export 20261122-153045-ab12 -o cora-sage.tar.gz
  gnnscope sessions export last -o - | ssh laptop gnnscope sessions import -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return sessionsExport(cmd, f, args[0], out, force) },
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "archive `FILE` (default ID.tar.gz; - for stdout)")
	cmd.Flags().BoolVar(&force, "force", false, "export a running session (complete journal lines only)")
	cmd.Flags().BoolVar(&f.json, "json", false, "print what was exported as JSON (not with -o -)")
	return cmd
}

func sessionsExport(cmd *cobra.Command, f *sessionsFlags, ref, out string, force bool) error {
	store, err := f.openStore()
	if err != nil {
		return err
	}
	s, err := getSession(store, ref)
	if err != nil {
		return err
	}
	states, err := runner.RunStates(s)
	if err != nil {
		return fmt.Errorf("session %s: %w", s.ID(), err)
	}
	if runner.Active(states) && !force {
		return fmt.Errorf("session %s is still running: its journals are being written (export with --force to take them as they are, or cancel it: gnnscope run --cancel %s)", s.ID(), s.ID())
	}
	opts := sessions.ExportOptions{AllowRunning: force}
	var rep sessions.ExportReport
	if out == "-" {
		if f.json {
			return errors.New("--json does not go with -o - (the archive goes to stdout)")
		}
		w := cmd.OutOrStdout()
		if isTerminal(w) {
			return errors.New("not writing an archive to a terminal: give -o FILE, or redirect stdout")
		}
		if rep, err = s.Export(w, opts); err != nil {
			return err
		}
	} else {
		if out == "" {
			out = s.ID() + ".tar.gz"
		}
		if rep, err = s.ExportFile(out, opts); err != nil {
			return err
		}
	}
	if f.json {
		return iostreams.WriteJSON(cmd.OutOrStdout(), struct {
			sessions.ExportReport
			File string `json:"file"`
		}{rep, out})
	}
	errw := cmd.ErrOrStderr()
	for _, sk := range rep.Skipped {
		fmt.Fprintf(errw, "left out %s\n", sk)
	}
	if len(rep.Running) > 0 {
		fmt.Fprintf(errw, "runs still running, exported up to their last complete line: %s\n", strings.Join(rep.Running, ", "))
	}
	dest := out
	if out == "-" {
		dest = "stdout"
	}
	fmt.Fprintf(errw, "exported session %s (%d files, %s) to %s\n", s.ID(), rep.Files, units.Bytes(rep.Bytes), dest)
	return nil
}

func newSessionsImportCmd(f *sessionsFlags) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Add a session from an archive made by 'sessions export'",
		Long: `Add the session in an archive made by 'gnnscope sessions export' to the
store (--store, else $GNNSCOPE_HOME, else the XDG data folder). FILE - reads
stdin.

The archive is checked before anything is added: it must hold exactly one
session folder of regular files and folders with safe names, as its
manifest lists them. Absolute paths, "..", links, devices, duplicate or
unlisted entries, files over the size limits and damaged or truncated files
are refused. It is extracted into a temporary folder inside the store and
renamed into place, so a refused or failed import leaves nothing behind.

An existing session with the same id is not replaced unless --force (and
never while it is running). Runs of the imported session read their status
from their journals; one without an end (it was still running when it was
exported, or it crashed) reads as crashed.`,
		Example: `  gnnscope sessions import cora-sage.tar.gz
  gnnscope sessions import --store /data/gnnscope cora-sage.tar.gz
  ssh gpu-box gnnscope sessions export last -o - | gnnscope sessions import -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return sessionsImport(cmd, f, args[0], force) },
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing session with the same id")
	cmd.Flags().BoolVar(&f.json, "json", false, "print what was imported as JSON")
	return cmd
}

func sessionsImport(cmd *cobra.Command, f *sessionsFlags, file string, force bool) error {
	store, err := f.openStore()
	if err != nil {
		return err
	}
	opts := sessions.ImportOptions{Replace: force, CanReplace: func(old *sessions.Session) error {
		states, err := runner.RunStates(old)
		if err != nil {
			return err
		}
		if runner.Active(states) {
			return fmt.Errorf("it is running (cancel it first: gnnscope run --cancel %s)", old.ID())
		}
		return nil
	}}
	var s *sessions.Session
	var rep sessions.ImportReport
	if file == "-" {
		s, rep, err = store.Import(cmd.InOrStdin(), opts)
		if err != nil {
			err = fmt.Errorf("import from stdin: %w", err)
		}
	} else {
		s, rep, err = store.ImportFile(file, opts)
	}
	if err != nil {
		if errors.Is(err, os.ErrExist) && !force {
			return fmt.Errorf("%w; pass --force to replace it", err)
		}
		return err
	}
	states, serr := runner.RunStates(s)
	if f.json {
		return iostreams.WriteJSON(cmd.OutOrStdout(), struct {
			sessions.ImportReport
			Runs []sessions.RunState `json:"runs"`
		}{rep, states})
	}
	out := cmd.OutOrStdout()
	verb := "imported"
	if rep.Replaced {
		verb = "replaced"
	}
	title := s.ID()
	if s.Meta.Name != "" {
		title += " (" + s.Meta.Name + ")"
	}
	fmt.Fprintf(out, "%s session %s: %d files, %s\nfolder %s\n", verb, title, rep.Files, units.Bytes(rep.Bytes), s.Dir())
	for _, r := range states {
		fmt.Fprintf(out, "  %-16s %s\n", r.Run, r.Status)
	}
	return serr
}
