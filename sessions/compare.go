package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/gpubreak"
)

// CompareOptions tune Compare.
type CompareOptions struct {
	// Baseline names the run speedups are relative to: a run name or
	// SESSION/RUN (prefixes allowed) among the compared runs. Empty: the
	// first run whose variant is "baseline", else the first run.
	Baseline string
	// Waterfall, when set, adds each compared session's speedup
	// waterfall (compare_waterfall.go).
	Waterfall *WaterfallOptions
	// TTATarget is the validation accuracy time to accuracy counts to;
	// 0: 99 % of the baseline's best.
	TTATarget float64
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
	// Waterfalls are the sessions' speedup waterfalls (with
	// CompareOptions.Waterfall).
	Waterfalls []SessionWaterfall `json:"waterfalls,omitempty"`
	// TTA is time to accuracy over the runs: the target (99 % of the
	// baseline's best validation accuracy) and when each run reached it;
	// nil when no run recorded a validation accuracy.
	TTA *analysis.TTA `json:"time_to_accuracy,omitempty"`
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
	Label   string         `json:"label"`
	Variant string         `json:"variant"`
	Status  profile.Status `json:"status"`
	Error   string         `json:"error,omitempty"`

	// Config is the run's configuration flattened to dotted keys (nested
	// objects), values as text (strings unquoted, numbers canonical,
	// lists as JSON): run_start's config, else the session's record of
	// the variant, plus "dataset" from the session's experiment when the
	// config has none.
	// In JSON the values keep their JSON types (numbers stay numbers;
	// see MarshalJSON).
	Config     map[string]string `json:"config,omitempty"`
	configJSON map[string]json.RawMessage

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
	// Ranks is the number of ranks of a distributed run whose epochs
	// were timed (0 for a run of one process); its epoch times are the
	// slowest rank's, and Straggler is the slowest rank's training time
	// over the median rank's (see profile.Summary; 0 when not distributed).
	Ranks     int     `json:"ranks,omitempty"`
	Straggler float64 `json:"straggler,omitempty"`
	// Nodes is the number of machines a distributed run's ranks name
	// (0: none does); SlowestRank the rank most often the slowest of the
	// StepsCompared steps, SlowestShare how often (0: no step compared);
	// RankRows each rank's figures (compare_ranks.go).
	Nodes         int           `json:"nodes,omitempty"`
	StepsCompared int           `json:"steps_compared,omitempty"`
	SlowestRank   int           `json:"slowest_rank,omitempty"`
	SlowestShare  float64       `json:"slowest_share,omitempty"`
	RankRows      []RankFigures `json:"rank_rows,omitempty"`

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
	// OOMs counts oom events: allocations that failed against the budget.
	OOMs int64 `json:"ooms"`
	// GuardActions counts guard events: batches the memory guard split,
	// cut or re-drew so that nothing failed (never counted as OOMs).
	GuardActions int64 `json:"guard_actions"`
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
	// The feature cache (cache events; unset without them): the hit rate
	// over the run (hits over hits and misses), the bytes copied
	// host-to-device per epoch (the mean over epochs with cache events),
	// and each epoch's figures.
	CacheEvents      int64        `json:"cache_events,omitempty"`
	CacheHitRate     *float64     `json:"cache_hit_rate,omitempty"`
	CacheH2DPerEpoch *int64       `json:"cache_h2d_per_epoch_bytes,omitempty"`
	CacheEpochs      []CacheEpoch `json:"cache_epochs,omitempty"`

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

	// Partial is set for a run that failed, was aborted by an OOM,
	// crashed or was canceled (profile.Status.Stopped) and has figures: they cover
	// what it did before it stopped. Such a run has no speedup.
	Partial bool `json:"partial,omitempty"`
	// SkippedBatches and TotalBatches say how many training batches a
	// run that skipped some (on_oom skip) skipped, of how many (trained
	// plus skipped; SkipCounts); zeros when none was skipped. Its epoch
	// times and accuracy cover the trained batches only.
	SkippedBatches int `json:"skipped_batches,omitempty"`
	TotalBatches   int `json:"total_batches,omitempty"`
	// Adjusted is run_start's adjusted: what the launcher changed in the
	// variant's config to fit the user's constraints.
	Adjusted []string `json:"adjusted,omitempty"`
	// Repeat is K for a launch's repeat NAME.rK, 0 for a run that is not
	// a repeat.
	Repeat int `json:"repeat,omitempty"`
	// VariantMedianS is the epoch time of the run's variant in its
	// session: the median over its timed repeats of each one's median
	// epoch time (one run: the median of its epochs; stats.VariantMedian).
	VariantMedianS float64 `json:"variant_median_s,omitempty"`

	// Speedup is the speedup of the run's variant over the baseline's
	// (stats.Compare over the timed repeats of both): the median of the
	// per-repeat ratios from stats.MinRepeats paired repeats, else the
	// ratio of the epoch medians. 0 when unknown or when the run is not
	// Timed. SpeedupLo and SpeedupHi bound its 95 % bootstrap interval,
	// over per-repeat ratios or over epochs as SpeedupMethod says ("" and
	// zeros without an interval); SpeedupRatios are the per-repeat ratios
	// in repeat order; SingleRun is set when either side is one run.
	Speedup        float64   `json:"speedup,omitempty"`
	SpeedupLo      float64   `json:"speedup_lo,omitempty"`
	SpeedupHi      float64   `json:"speedup_hi,omitempty"`
	SpeedupMethod  string    `json:"speedup_method,omitempty"`
	SpeedupRepeats int       `json:"speedup_repeats,omitempty"`
	SpeedupRatios  []float64 `json:"speedup_ratios,omitempty"`
	SingleRun      bool      `json:"single_run,omitempty"`

	// HostBusy says why the run's timing is unreliable (see HostBusy),
	// empty when nothing says so.
	HostBusy string `json:"host_busy,omitempty"`
	// HostCPUs is the number of logical CPUs of the run's host (0: the
	// journal does not tell).
	HostCPUs int `json:"host_cpus,omitempty"`

	// GPU is the GPU's own breakdown (nil for a run without device-side
	// spans; see profile/gpubreak).
	GPU *gpubreak.Breakdown `json:"gpu,omitempty"`

	// Ledger is the run's stage ledger and verdict (nil without spans);
	// ValAcc the validation accuracy after each evaluated epoch, timed
	// from the first touch of data; TTA its time to accuracy (see
	// Comparison.TTA; not repeated in JSON).
	Ledger   *RunLedger          `json:"ledger,omitempty"`
	AccCurve []analysis.AccPoint `json:"val_acc_curve,omitempty"`
	TTA      *analysis.RunTTA    `json:"-"`
	analysed *analysis.Run

	epochTimes []float64 // epoch wall times, in epoch order

	Events    int64 `json:"events"`              // journal events read
	Malformed int   `json:"malformed,omitempty"` // journal lines skipped
	Torn      bool  `json:"torn,omitempty"`      // the journal ends mid-line
}

// EpochTimes returns the run's epoch wall times in seconds, in epoch
// order (see EpochSource); nil when unknown. Do not modify them.
func (r *RunFigures) EpochTimes() []float64 { return r.epochTimes }

// HasFigures reports whether anything was read from the run's journal.
func (r *RunFigures) HasFigures() bool { return r.Events > 0 }

// Compare reads the runs' journals (one streaming pass each, see
// SummarizeRun: a distributed run's ranks are merged) and puts them side
// by side. A run that has not
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
		f.Repeat = RepeatNumber(f.Run, f.Variant)
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
	}
	c.speedups(base)
	if opts.Waterfall != nil {
		c.waterfalls(refs, opts.Waterfall)
	}
	c.timeToAccuracy(base, opts.TTATarget)
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
				st.Status, st.Error = profile.StatusNotStarted, ""
			} else {
				st.Status, st.Error = profile.StatusUnknown, err.Error()
			}
		}
	}
	f.Status, f.Error = st.Status, st.Error
	if f.Status == profile.StatusCrashed && f.Error == "" {
		f.Error = "the writer process is gone without ending its journal (killed?)"
	}
	var config json.RawMessage
	if st.Size > 0 {
		js, an, err := s.summarizeAnalysed(ref.Run)
		switch {
		case err == nil:
			f.fill(&js)
			f.analysed, f.Ledger, f.AccCurve = an, ledgerOf(an), an.Curve
			f.rankFigures(s, ref.Run, an)
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
	flat, typed, keys := flattenTyped(config)
	if _, ok := flat["dataset"]; !ok && !IsExternalConfig(config) {
		if ds := sessionDataset(s); ds != "" {
			flat["dataset"] = ds
			typed["dataset"], _ = json.Marshal(ds)
			keys = append(keys, "dataset")
		}
	}
	if len(flat) > 0 {
		f.Config, f.configJSON = flat, typed
	}
	return f, keys
}

// fill sets the figures a journal tells.
func (f *RunFigures) fill(js *JournalSummary) {
	sum := &js.Summary
	f.Events, f.Malformed, f.Torn = sum.Events, js.Read.Malformed, js.Read.Torn
	f.GPU = js.GPU
	if js.Start != nil && js.Start.Variant != "" {
		f.Variant = js.Start.Variant
	}
	if js.Start != nil {
		f.Adjusted = js.Start.Adjusted
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
		w := make([]float64, len(sum.Epochs))
		for i, e := range sum.Epochs {
			w[i] = e.WallS
		}
		f.setEpochs(w, "spans")
	}
	if len(sum.Ranks) > 1 {
		f.Ranks, f.Straggler = len(sum.Ranks), sum.Straggler
	}
	if js.Mem.Events > 0 {
		f.MemEvents = js.Mem.Events
		peak, p99 := js.Mem.PeakMax, js.Mem.PeakP99
		f.PeakBytes, f.P99PeakBytes = &peak, &p99
	}
	f.OOMs, f.GuardActions = sum.Counts[profile.TypeOOM], sum.Counts[profile.TypeGuard]
	if n := sum.Counts[profile.TypeStale]; n > 0 {
		f.StaleEvents = n
		mean, mx := sum.StaleMean, sum.StaleMax
		f.StaleMean, f.StaleMax = &mean, &mx
	}
	if sum.Counts[profile.TypeHistErr] > 0 {
		v := sum.HistRelErr
		f.HistoryRelErr = &v
	}
	f.setCache(sum.Cache, sum.Counts[profile.TypeCache])
	if v, ok := sum.Metrics["test_acc"]; ok && finite(v) {
		f.TestAcc, f.TestAccSource = &v, "metric"
	}
	if v, ok := sum.Metrics["val_acc"]; ok && finite(v) {
		f.ValAcc = &v
	}
	var usage *profile.Usage
	if js.End != nil {
		f.fromResult(js.End.Summary)
		f.SkippedBatches, f.TotalBatches = SkipCounts(js.End.Summary)
		usage = js.End.Usage
	}
	var host *profile.Host
	if js.Start != nil {
		host = js.Start.Host
	}
	f.HostBusy = HostBusy(host, usage)
	if host != nil {
		f.HostCPUs = max(host.CPUs, host.Cores)
	}
}

func (f *RunFigures) setEpochs(w []float64, source string) {
	es := profile.Spread(w)
	f.epochTimes = w
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
		f.setEpochs(w, "summary")
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
