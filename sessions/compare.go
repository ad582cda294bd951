package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile"
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
// only one whose id starts with ref; "last" or "latest" (when no session
// has such an id) is the newest session.
func (st *Store) MatchSession(ref string) (*Session, error) {
	if ref == "" {
		return nil, fmt.Errorf("session: empty id: %w", ErrNoMatch)
	}
	if ValidName(ref) == nil {
		if _, err := os.Stat(filepath.Join(st.root, "sessions", ref, metaFile)); err == nil {
			return st.Get(ref)
		}
	}
	ents, err := os.ReadDir(filepath.Join(st.root, "sessions"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("session %q: %w", ref, err)
	}
	newest := ref == "last" || ref == "latest"
	var ids []string
	for _, ent := range ents {
		if ent.IsDir() && ValidName(ent.Name()) == nil && (newest || strings.HasPrefix(ent.Name(), ref)) {
			ids = append(ids, ent.Name())
		}
	}
	if newest && len(ids) > 0 {
		return st.Get(slices.Max(ids)) // ids sort by creation time
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
		if ValidName(v.Name) == nil && !slices.Contains(out, v.Name) {
			out = append(out, v.Name)
		}
	}
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
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

// CompareOptions tune Compare.
type CompareOptions struct {
	// Baseline names the run speedups are relative to: a run name or
	// SESSION/RUN (prefixes allowed) among the compared runs. Empty: the
	// first run whose variant is "baseline", else the first run.
	Baseline string
}

// Comparison is runs of one or several sessions side by side: their
// configuration differences and figures. Build it with Compare; write it
// with Write (Markdown, CSV, LaTeX or JSON).
type Comparison struct {
	// Baseline is the label of the run speedups are relative to.
	Baseline string `json:"baseline"`
	// ConfigKeys are the configuration keys whose values differ between
	// the compared runs, in the order they first appear.
	ConfigKeys []string     `json:"config_keys"`
	Runs       []RunFigures `json:"runs"`
}

// RunFigures are one run's figures in a Comparison. Times are seconds,
// memory bytes. Pointer fields are nil when the journal does not tell
// (no mem events, no stale events, no accuracy). Stage figures are zero
// when there is nothing to compute them from (see Spans).
type RunFigures struct {
	Session     string `json:"session"`
	SessionName string `json:"session_name,omitempty"`
	Run         string `json:"run"`
	// Label names the run in tables: RUN when every compared run belongs
	// to the same session, else SESSION/RUN.
	Label   string `json:"label"`
	Variant string `json:"variant"`
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`

	// Config is the run's configuration flattened to dotted keys (nested
	// objects), values as text (strings unquoted, numbers canonical,
	// lists as JSON): run_start's config, else the session's record of
	// the variant, plus "dataset" from the session's experiment when the
	// config has none.
	Config map[string]string `json:"config,omitempty"`

	// Epoch wall times (see profile.Summary): from the spans, or, for a
	// journal without spans, from the run_end summary's per-epoch history.
	// EpochSource says which ("spans", "summary" or "" for none).
	Epochs       int     `json:"epochs"`
	EpochMeanS   float64 `json:"epoch_mean_s"`
	EpochStdS    float64 `json:"epoch_std_s"`
	EpochMinS    float64 `json:"epoch_min_s"`
	EpochMedianS float64 `json:"epoch_median_s"`
	EpochMaxS    float64 `json:"epoch_max_s"`
	EpochSource  string  `json:"epoch_source,omitempty"`

	// Stage totals over all lanes, data wait, overlap and efficiency (see
	// profile.Summary), from the spans; for a journal without spans, from
	// the run_end summary (stage_s, data_wait_s, overlap, efficiency) when
	// it has them. StageSource says which ("spans", "summary" or "").
	StageSource string  `json:"stage_source,omitempty"`
	Spans       int64   `json:"spans"`
	SampleS     float64 `json:"sample_s"`
	TransferS   float64 `json:"transfer_s"`
	TrainS      float64 `json:"train_s"`
	EvalS       float64 `json:"eval_s"`
	DataWaitS   float64 `json:"data_wait_s"`
	Overlap     float64 `json:"overlap"`
	Efficiency  float64 `json:"efficiency"`

	// Memory from mem events: the largest per-batch peak and the 99th
	// percentile (nearest rank) of per-batch peaks.
	MemEvents    int64  `json:"mem_events"`
	PeakBytes    *int64 `json:"peak_bytes,omitempty"`
	P99PeakBytes *int64 `json:"p99_peak_bytes,omitempty"`
	// OOMs counts oom events.
	OOMs int64 `json:"ooms"`
	// Staleness of pulled history rows (stale events): the mean of the
	// events' means and the largest max, in optimizer steps.
	StaleEvents int64    `json:"stale_events"`
	StaleMean   *float64 `json:"staleness_mean,omitempty"`
	StaleMax    *float64 `json:"staleness_max,omitempty"`
	// Historical embeddings (GNNAutoScale): their relative error at the
	// last refresh, largest over layers (from the hist_err events, else
	// the run_end summary's history_rel_err), and their host bytes (the
	// run_end summary's history_bytes).
	HistoryRelErr *float64 `json:"history_rel_err,omitempty"`
	HistoryBytes  *int64   `json:"history_bytes,omitempty"`

	// TestAcc is run_end's summary test_acc (at the best validation
	// epoch), else the last test_acc metric; TestAccSource says which
	// ("summary" or "metric").
	TestAcc       *float64 `json:"test_acc,omitempty"`
	TestAccSource string   `json:"test_acc_source,omitempty"`
	// TestAccUncut is run_end's summary test_acc_uncut: the selected
	// weights evaluated on the whole graph after a run with an inference
	// cut (train.Result.TestAccUncut); absent for runs without one.
	TestAccUncut *float64 `json:"test_acc_uncut,omitempty"`
	ValAcc       *float64 `json:"val_acc,omitempty"`
	BestEpoch    int      `json:"best_epoch,omitempty"`

	// Speedup is the baseline's mean epoch time over this run's (0 when
	// either is unknown).
	Speedup float64 `json:"speedup,omitempty"`

	Events    int64 `json:"events"`              // journal events read
	Malformed int   `json:"malformed,omitempty"` // journal lines skipped
	Torn      bool  `json:"torn,omitempty"`      // the journal ends mid-line
}

// HasFigures reports whether anything was read from the run's journal.
func (r *RunFigures) HasFigures() bool { return r.Events > 0 }

// Compare reads the runs' journals (one streaming pass each, see
// SummarizeJournal) and puts them side by side. A run that has not
// started or whose journal cannot be read is listed with its status and
// no figures; only an unknown baseline is an error.
func Compare(refs []RunRef, opts CompareOptions) (*Comparison, error) {
	c := &Comparison{Runs: make([]RunFigures, 0, len(refs)), ConfigKeys: []string{}}
	oneSession := true
	for _, r := range refs {
		if r.Session.ID() != refs[0].Session.ID() {
			oneSession = false
		}
	}
	var order [][]string // config keys of each run, in their order
	for _, ref := range refs {
		f, keys := figures(ref)
		f.Label = ref.Run
		if !oneSession {
			f.Label = ref.Label()
		}
		c.Runs = append(c.Runs, f)
		order = append(order, keys)
	}
	c.ConfigKeys = configDifferences(c.Runs, order)
	base, err := c.baselineIndex(opts.Baseline)
	if err != nil {
		return nil, err
	}
	if base >= 0 {
		c.Baseline = c.Runs[base].Label
		if b := c.Runs[base].EpochMeanS; b > 0 {
			for i := range c.Runs {
				if m := c.Runs[i].EpochMeanS; m > 0 {
					c.Runs[i].Speedup = b / m
				}
			}
		}
	}
	return c, nil
}

// baselineIndex picks the baseline run (-1 when there are no runs).
func (c *Comparison) baselineIndex(name string) (int, error) {
	if len(c.Runs) == 0 {
		return -1, nil
	}
	if name == "" {
		for i, r := range c.Runs {
			if r.Variant == profile.VariantBaseline {
				return i, nil
			}
		}
		return 0, nil
	}
	var hits []int
	sid, run := ParseRunRef(name)
	for i, r := range c.Runs {
		if r.Label == name || r.Session+"/"+r.Run == name {
			return i, nil
		}
		if run == "" { // a run name (or prefix) alone
			if strings.HasPrefix(r.Run, sid) {
				hits = append(hits, i)
			}
		} else if strings.HasPrefix(r.Session, sid) && strings.HasPrefix(r.Run, run) {
			hits = append(hits, i)
		}
	}
	// an exact run name beats prefixes
	var exact []int
	for _, i := range hits {
		if c.Runs[i].Run == sid || c.Runs[i].Run == run {
			exact = append(exact, i)
		}
	}
	if len(exact) == 1 {
		return exact[0], nil
	}
	labels := make([]string, len(c.Runs))
	for i, r := range c.Runs {
		labels[i] = r.Label
	}
	switch len(hits) {
	case 0:
		return -1, fmt.Errorf("baseline %q is not one of the compared runs (%s): %w", name, listSome(labels), ErrNoMatch)
	case 1:
		return hits[0], nil
	}
	amb := make([]string, len(hits))
	for i, h := range hits {
		amb[i] = c.Runs[h].Session + "/" + c.Runs[h].Run
	}
	return -1, fmt.Errorf("baseline %q matches %d runs (%s); give SESSION/RUN: %w", name, len(hits), listSome(amb), ErrAmbiguous)
}

// figures reads one run; it also returns the run's config keys in order.
func figures(ref RunRef) (RunFigures, []string) {
	s := ref.Session
	f := RunFigures{Session: s.ID(), SessionName: s.Meta.Name, Run: ref.Run, Variant: ref.Run}
	var st RunState
	if ref.State != nil {
		st = *ref.State
	} else {
		var err error
		st, err = s.RunState(ref.Run)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				st.Status, st.Error = "not started", ""
			} else {
				st.Status, st.Error = StatusUnknown, err.Error()
			}
		}
	}
	f.Status, f.Error = st.Status, st.Error
	if f.Status == StatusCrashed && f.Error == "" {
		f.Error = "the writer process is gone without ending its journal (killed?)"
	}
	var config json.RawMessage
	if st.Size > 0 {
		js, err := SummarizeJournal(s.JournalPath(ref.Run))
		switch {
		case err == nil:
			f.fill(&js)
			if js.Start != nil {
				config = js.Start.Config
			}
		case errors.Is(err, os.ErrNotExist):
		default:
			if f.Error == "" {
				f.Error = err.Error()
			}
		}
	}
	if len(config) == 0 {
		config = variantConfig(s, ref.Run)
	}
	flat, keys := flattenConfig(config)
	if _, ok := flat["dataset"]; !ok {
		if ds := sessionDataset(s); ds != "" {
			flat["dataset"] = ds
			keys = append(keys, "dataset")
		}
	}
	if len(flat) > 0 {
		f.Config = flat
	}
	return f, keys
}

// fill sets the figures a journal tells.
func (f *RunFigures) fill(js *JournalSummary) {
	sum := &js.Summary
	f.Events, f.Malformed, f.Torn = sum.Events, js.Read.Malformed, js.Read.Torn
	if js.Start != nil && js.Start.Variant != "" {
		f.Variant = js.Start.Variant
	}
	f.Spans = sum.Counts[profile.TypeSpan]
	if f.Spans > 0 {
		f.StageSource = "spans"
		f.SampleS = sum.Stage(profile.StageSample)
		f.TransferS = sum.Stage(profile.StageTransfer)
		f.TrainS = sum.Stage(profile.StageTrain)
		f.EvalS = sum.Stage(profile.StageEval)
		f.DataWaitS, f.Overlap, f.Efficiency = sum.DataWaitS, sum.Overlap, sum.Efficiency
	}
	if es := sum.EpochStats; es.N > 0 {
		f.setEpochs(es, "spans")
	}
	if js.Mem.Events > 0 {
		f.MemEvents = js.Mem.Events
		peak, p99 := js.Mem.PeakMax, js.Mem.PeakP99
		f.PeakBytes, f.P99PeakBytes = &peak, &p99
	}
	f.OOMs = sum.Counts[profile.TypeOOM]
	if n := sum.Counts[profile.TypeStale]; n > 0 {
		f.StaleEvents = n
		mean, mx := sum.StaleMean, sum.StaleMax
		f.StaleMean, f.StaleMax = &mean, &mx
	}
	if sum.Counts[profile.TypeHistErr] > 0 {
		v := sum.HistRelErr
		f.HistoryRelErr = &v
	}
	if v, ok := sum.Metrics["test_acc"]; ok && finite(v) {
		f.TestAcc, f.TestAccSource = &v, "metric"
	}
	if v, ok := sum.Metrics["val_acc"]; ok && finite(v) {
		f.ValAcc = &v
	}
	if js.End != nil {
		f.fromResult(js.End.Summary)
	}
}

func (f *RunFigures) setEpochs(es profile.EpochStats, source string) {
	f.Epochs, f.EpochMeanS, f.EpochStdS, f.EpochMinS, f.EpochMedianS, f.EpochMaxS = es.N, es.MeanS, es.StdS, es.MinS, es.MedianS, es.MaxS
	f.EpochSource = source
}

// result is what Compare takes from a run_end summary (the engine's
// train.Result, or whatever an external trainer wrote).
type result struct {
	TestAcc    *float64           `json:"test_acc"`
	TestUncut  *float64           `json:"test_acc_uncut"`
	ValAcc     *float64           `json:"val_acc"`
	BestEpoch  *int               `json:"best_epoch"`
	StageS     map[string]float64 `json:"stage_s"`
	DataWaitS  *float64           `json:"data_wait_s"`
	Overlap    *float64           `json:"overlap"`
	Efficiency *float64           `json:"efficiency"`
	HistRelErr *float64           `json:"history_rel_err"`
	HistBytes  *int64             `json:"history_bytes"`
	History    []struct {
		TrainS float64 `json:"train_s"`
		EvalS  float64 `json:"eval_s"`
	} `json:"history"`
}

// fromResult takes accuracy from a run_end summary and, for a journal
// without spans, stage figures and epoch times.
func (f *RunFigures) fromResult(raw json.RawMessage) {
	if len(raw) == 0 || raw[0] != '{' {
		return
	}
	var res result
	if json.Unmarshal(raw, &res) != nil {
		return // a summary is free-form: ignore what does not fit
	}
	evaluated := res.BestEpoch == nil || *res.BestEpoch > 0
	if res.TestAcc != nil && finite(*res.TestAcc) && evaluated {
		v := *res.TestAcc
		f.TestAcc, f.TestAccSource = &v, "summary"
		if res.ValAcc != nil && finite(*res.ValAcc) {
			w := *res.ValAcc
			f.ValAcc = &w
		}
		if res.TestUncut != nil && finite(*res.TestUncut) {
			u := *res.TestUncut
			f.TestAccUncut = &u
		}
	}
	if res.BestEpoch != nil && *res.BestEpoch > 0 {
		f.BestEpoch = *res.BestEpoch
	}
	if res.HistRelErr != nil && finite(*res.HistRelErr) && f.HistoryRelErr == nil {
		v := *res.HistRelErr
		f.HistoryRelErr = &v
	}
	if res.HistBytes != nil && *res.HistBytes > 0 {
		v := *res.HistBytes
		f.HistoryBytes = &v
	}
	if f.Spans > 0 {
		return
	}
	if f.EpochSource == "" && len(res.History) > 0 {
		w := make([]float64, len(res.History))
		for i, h := range res.History {
			w[i] = h.TrainS + h.EvalS
		}
		f.setEpochs(profile.Spread(w), "summary")
	}
	if len(res.StageS) == 0 && (res.Overlap == nil || *res.Overlap <= 0) {
		return // no stage figures (the engine writes zeros without a recorder)
	}
	f.StageSource = "summary"
	f.SampleS, f.TransferS = res.StageS[profile.StageSample], res.StageS[profile.StageTransfer]
	f.TrainS, f.EvalS = res.StageS[profile.StageTrain], res.StageS[profile.StageEval]
	for _, p := range []struct {
		dst *float64
		src *float64
	}{{&f.DataWaitS, res.DataWaitS}, {&f.Overlap, res.Overlap}, {&f.Efficiency, res.Efficiency}} {
		if p.src != nil && finite(*p.src) {
			*p.dst = *p.src
		}
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// variantConfig returns the config session.json records for a variant
// (its spec's "config" object, as runner writes it), nil if none.
func variantConfig(s *Session, run string) json.RawMessage {
	for _, v := range s.Meta.Variants {
		if v.Name != run {
			continue
		}
		var spec struct {
			Config json.RawMessage `json:"config"`
		}
		if json.Unmarshal(v.Spec, &spec) == nil {
			return spec.Config
		}
	}
	return nil
}

// sessionDataset returns the dataset of the session's experiment (its
// spec's "data" or "dataset" string), "" if none.
func sessionDataset(s *Session) string {
	var spec struct {
		Data    string `json:"data"`
		Dataset string `json:"dataset"`
	}
	if len(s.Meta.Spec) == 0 || json.Unmarshal(s.Meta.Spec, &spec) != nil {
		return ""
	}
	if spec.Data != "" {
		return spec.Data
	}
	return spec.Dataset
}

// flattenConfig turns a JSON object into dotted keys (nested objects) and
// text values, and returns the keys in document order. Anything but an
// object gives none.
func flattenConfig(raw json.RawMessage) (map[string]string, []string) {
	flat := map[string]string{}
	var keys []string
	if flattenInto(raw, "", 0, flat, &keys) != nil {
		return map[string]string{}, nil
	}
	return flat, keys
}

func flattenInto(raw json.RawMessage, prefix string, depth int, flat map[string]string, keys *[]string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not an object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if prefix != "" {
			key = prefix + "." + key
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if len(v) > 0 && v[0] == '{' && depth < 8 {
			if err := flattenInto(v, key, depth+1, flat, keys); err != nil {
				return err
			}
			continue
		}
		if _, dup := flat[key]; !dup {
			*keys = append(*keys, key)
		}
		flat[key] = configText(v)
	}
	return nil
}

// configText renders one JSON value: strings unquoted, numbers canonical
// (so 0.01 and 1e-2 compare equal), null empty, anything else compact.
func configText(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	case 'n':
		return ""
	case '[':
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			return b.String()
		}
	case 't', 'f':
		return string(v)
	default:
		if x, err := strconv.ParseFloat(string(v), 64); err == nil {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	return string(v)
}

// configDifferences returns the keys whose values are not the same in
// every run (a key some runs lack differs), in order of first appearance.
// Runs without any config (not started, foreign) are left out of the
// comparison.
func configDifferences(runs []RunFigures, order [][]string) []string {
	var all []string
	seen := map[string]bool{}
	for _, keys := range order {
		for _, k := range keys {
			if !seen[k] {
				seen[k] = true
				all = append(all, k)
			}
		}
	}
	var with []*RunFigures
	for i := range runs {
		if len(runs[i].Config) > 0 {
			with = append(with, &runs[i])
		}
	}
	diff := []string{}
	if len(with) < 2 {
		return diff
	}
	for _, k := range all {
		v0, ok0 := with[0].Config[k]
		for _, r := range with[1:] {
			v, ok := r.Config[k]
			if ok != ok0 || v != v0 {
				diff = append(diff, k)
				break
			}
		}
	}
	return diff
}
