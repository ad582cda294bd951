package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// RunFigures are one run's figures in a comparison. Times are seconds.
// Figures from spans are zero when the journal has none (see Spans).
type RunFigures struct {
	Run     string `json:"run"`
	Variant string `json:"variant"`
	Status  string `json:"status"`
	Error   string `json:"error,omitempty"`

	// Epoch wall times: from the journal's spans (profile.Summary's epoch
	// statistics), or, for a journal without spans, from the result's
	// per-epoch training and evaluation seconds. EpochSource says which
	// ("spans", "result" or "" for none).
	Epochs       int     `json:"epochs"`
	EpochMeanS   float64 `json:"epoch_mean_s"`
	EpochStdS    float64 `json:"epoch_std_s"`
	EpochMinS    float64 `json:"epoch_min_s"`
	EpochMedianS float64 `json:"epoch_median_s"`
	EpochMaxS    float64 `json:"epoch_max_s"`
	EpochSource  string  `json:"epoch_source,omitempty"`

	// Stage totals over all lanes, data wait, overlap and efficiency (see
	// profile.Summary for the definitions).
	Spans      int64   `json:"spans"`
	SampleS    float64 `json:"sample_s"`
	TransferS  float64 `json:"transfer_s"`
	TrainS     float64 `json:"train_s"`
	EvalS      float64 `json:"eval_s"`
	DataWaitS  float64 `json:"data_wait_s"`
	Overlap    float64 `json:"overlap"`
	Efficiency float64 `json:"efficiency"`
	PeakBytes  int64   `json:"peak_bytes,omitempty"`

	// Speedup is the baseline's mean epoch time over this run's (0 when
	// either is unknown).
	Speedup float64 `json:"speedup,omitempty"`

	// From the run_end summary (train.Result): test accuracy at the epoch
	// of best validation accuracy; absent when unknown.
	TestAcc   *float64 `json:"test_acc,omitempty"`
	ValAcc    *float64 `json:"val_acc,omitempty"`
	BestEpoch int      `json:"best_epoch,omitempty"`

	Events    int64 `json:"events"`              // journal events read
	Malformed int   `json:"malformed,omitempty"` // journal lines skipped
}

// Table is a comparison of a session's runs.
type Table struct {
	Session  string       `json:"session"`
	Name     string       `json:"name,omitempty"`
	Dir      string       `json:"dir"`
	Baseline string       `json:"baseline,omitempty"` // the run speedups are relative to
	Runs     []RunFigures `json:"runs"`
}

// Compare reads every run's journal (sessions.ReadJournal, aggregated by
// profile.Summarize) and run_end summary into a table, runs in launch
// order. The baseline is the run named baseline, else the first run.
// Runs that have not started or whose journal cannot be read are listed
// with their status and no figures.
func Compare(s *sessions.Session) (Table, error) {
	t := Table{Session: s.ID(), Name: s.Meta.Name, Dir: s.Dir(), Runs: []RunFigures{}}
	states, err := RunStates(s)
	if err != nil {
		return t, err
	}
	variants := map[string]string{}
	if _, resolved, err := LoadSession(s); err == nil {
		for _, r := range resolved {
			variants[r.Name] = r.Name
		}
	}
	for _, st := range states {
		f := RunFigures{Run: st.Run, Variant: variants[st.Run], Status: st.Status, Error: st.Error}
		if f.Variant == "" {
			f.Variant = st.Run
		}
		if f.Status == sessions.StatusCrashed && f.Error == "" {
			f.Error = "the worker process is gone without ending its journal (killed?)"
		}
		if st.Size > 0 {
			if err := f.read(st.Journal); err != nil {
				if f.Error == "" {
					f.Error = err.Error()
				}
			}
		}
		t.Runs = append(t.Runs, f)
	}
	base := -1
	for i, r := range t.Runs {
		if r.Run == Baseline {
			base = i
			break
		}
	}
	if base < 0 && len(t.Runs) > 0 {
		base = 0
	}
	if base >= 0 {
		t.Baseline = t.Runs[base].Run
		if b := t.Runs[base].EpochMeanS; b > 0 {
			for i := range t.Runs {
				if m := t.Runs[i].EpochMeanS; m > 0 {
					t.Runs[i].Speedup = b / m
				}
			}
		}
	}
	return t, nil
}

// resultFigures is what Compare takes from a run_end summary.
type resultFigures struct {
	TestAcc   *float64          `json:"test_acc"`
	ValAcc    *float64          `json:"val_acc"`
	BestEpoch int               `json:"best_epoch"`
	History   []train.EpochStat `json:"history"`
}

// read fills f from a journal.
func (f *RunFigures) read(path string) error {
	evs, rs, err := sessions.ReadJournal(path)
	if err != nil {
		return err
	}
	f.Malformed = rs.Malformed
	sum := profile.Summarize(evs)
	f.Events = sum.Events
	f.Spans = sum.Counts[profile.TypeSpan]
	if sum.Variant != "" {
		f.Variant = sum.Variant
	}
	f.SampleS = sum.Stage(profile.StageSample)
	f.TransferS = sum.Stage(profile.StageTransfer)
	f.TrainS = sum.Stage(profile.StageTrain)
	f.EvalS = sum.Stage(profile.StageEval)
	f.DataWaitS, f.Overlap, f.Efficiency, f.PeakBytes = sum.DataWaitS, sum.Overlap, sum.Efficiency, sum.PeakBytes
	if es := sum.EpochStats; es.N > 0 {
		f.Epochs, f.EpochMeanS, f.EpochStdS, f.EpochMinS, f.EpochMedianS, f.EpochMaxS = es.N, es.MeanS, es.StdS, es.MinS, es.MedianS, es.MaxS
		f.EpochSource = "spans"
	}
	var end *profile.Event
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].T == profile.TypeRunEnd {
			end = &evs[i]
			break
		}
	}
	if end == nil || len(end.Summary) == 0 {
		return nil
	}
	var res resultFigures
	if err := json.Unmarshal(end.Summary, &res); err != nil {
		return fmt.Errorf("run_end summary: %w", err)
	}
	if res.BestEpoch > 0 {
		f.BestEpoch = res.BestEpoch
		f.TestAcc, f.ValAcc = finite(res.TestAcc), finite(res.ValAcc)
	}
	if f.EpochSource == "" && len(res.History) > 0 {
		w := make([]float64, len(res.History))
		for i, h := range res.History {
			w[i] = h.TrainS + h.EvalS
		}
		es := spread(w)
		f.Epochs, f.EpochMeanS, f.EpochStdS, f.EpochMinS, f.EpochMedianS, f.EpochMaxS = es.N, es.MeanS, es.StdS, es.MinS, es.MedianS, es.MaxS
		f.EpochSource = "result"
	}
	return nil
}

// spread returns the mean, sample standard deviation (n-1), min, median
// and max of epoch times, as profile.EpochStats defines them.
func spread(w []float64) profile.EpochStats {
	n := len(w)
	if n == 0 {
		return profile.EpochStats{}
	}
	w = slices.Clone(w)
	slices.Sort(w)
	sum := 0.0
	for _, x := range w {
		sum += x
	}
	st := profile.EpochStats{N: n, MinS: w[0], MaxS: w[n-1], MeanS: sum / float64(n)}
	if n%2 == 1 {
		st.MedianS = w[n/2]
	} else {
		st.MedianS = (w[n/2-1] + w[n/2]) / 2
	}
	if n > 1 {
		ss := 0.0
		for _, x := range w {
			ss += (x - st.MeanS) * (x - st.MeanS)
		}
		st.StdS = math.Sqrt(ss / float64(n-1))
	}
	return st
}

func finite(p *float64) *float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return nil
	}
	return p
}

// Render writes the table as aligned plain-ASCII text: one line per run
// (EPOCH s is the mean epoch time, SD its sample standard deviation), then
// notes and the errors of runs that did not end ok.
func (t Table) Render(w io.Writer) error {
	title := "session " + t.Session
	if t.Name != "" {
		title += "  " + t.Name
	}
	if _, err := fmt.Fprintf(w, "%s\n%s\n\n", title, t.Dir); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIANT\tSTATUS\tEPOCHS\tEPOCH s\tSD\tMIN\tMEDIAN\tMAX\tSAMPLE s\tTRANSFER s\tTRAIN s\tEVAL s\tDATA WAIT s\tOVERLAP\tEFFICIENCY\tSPEEDUP\tTEST ACC")
	for _, r := range t.Runs {
		cells := []string{r.Variant, r.Status}
		if r.Epochs > 0 {
			cells = append(cells, fmt.Sprint(r.Epochs), sec(r.EpochMeanS), sec(r.EpochStdS),
				sec(r.EpochMinS), sec(r.EpochMedianS), sec(r.EpochMaxS))
		} else {
			cells = append(cells, "-", "-", "-", "-", "-", "-")
		}
		if r.Spans > 0 {
			cells = append(cells, sec(r.SampleS), sec(r.TransferS), sec(r.TrainS), sec(r.EvalS), sec(r.DataWaitS),
				fmt.Sprintf("%.2f", r.Overlap), fmt.Sprintf("%.2f", r.Efficiency))
		} else {
			cells = append(cells, "-", "-", "-", "-", "-", "-", "-")
		}
		if r.Speedup > 0 {
			cells = append(cells, fmt.Sprintf("%.2fx", r.Speedup))
		} else {
			cells = append(cells, "-")
		}
		if r.TestAcc != nil {
			cells = append(cells, fmt.Sprintf("%.4f", *r.TestAcc))
		} else {
			cells = append(cells, "-")
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	if t.Baseline != "" {
		notes = append(notes, fmt.Sprintf("speedup: mean epoch time of %s over each run's", t.Baseline))
	}
	for _, r := range t.Runs {
		if r.EpochSource == "result" {
			notes = append(notes, fmt.Sprintf("%s: no spans in the journal; epoch times from the run's own timing", r.Variant))
		}
		if r.Error != "" {
			notes = append(notes, fmt.Sprintf("%s: %s: %s", r.Variant, r.Status, r.Error))
		}
	}
	if len(notes) > 0 {
		_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
		return err
	}
	return nil
}

// sec formats seconds with three decimals (fewer for long times).
func sec(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
