package sessions

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/analysis/whatif"
	"github.com/gnnscope/gnnscope/profile"
)

const pipeCfg = `{"model":"sage","epochs":2,"sampler_workers":2,"prefetch":4,"overlap_eval":false,"fanouts":[25,10],"lr":0.01}`

// waterfallComparison compares a session of baseline, pipelined and
// optimized (three repeats each) with the waterfall asked for.
func waterfallComparison(t *testing.T, parts func(*Session) ([]whatif.PartConfig, error)) *Comparison {
	t.Helper()
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var pipe []handRun
	for k := 1; k <= 3; k++ {
		b := 1.0 + 0.5*float64(k-1)
		pipe = append(pipe, handRun{name: fmt.Sprintf("pipelined.r%d", k), variant: "pipelined", config: pipeCfg, epochS: []float64{b / 1.1, b / 1.1, b / 1.1}, status: profile.StatusOK})
	}
	s := repeatSession(t, st, []float64{1.2, 1.5, 1.3}, pipe...)
	c, err := Compare(selectAll(t, st, s), CompareOptions{Waterfall: &WaterfallOptions{Optimized: "optimized", Parts: parts}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCompareWaterfall(t *testing.T) {
	c := waterfallComparison(t, nil)
	if len(c.Waterfalls) != 1 {
		t.Fatalf("waterfalls %+v", c.Waterfalls)
	}
	w := c.Waterfalls[0].Waterfall
	if len(w.Parts) != 1 || w.Parts[0].Name != "pipelined" || w.Parts[0].Predicted || math.Abs(w.Parts[0].Speedup-1.1) > 1e-9 {
		t.Fatalf("parts %+v", w.Parts)
	}
	if math.Abs(w.Total.Speedup-1.3) > 1e-9 || w.Check() != nil || math.Abs(w.Interaction.Speedup-1.3/1.1) > 1e-9 {
		t.Errorf("total %+v, interaction %+v", w.Total, w.Interaction)
	}
	// Markdown, LaTeX: a table of their own after the runs'.
	var md, tex, js, cs bytes.Buffer
	for _, f := range []struct {
		b      *bytes.Buffer
		format string
	}{{&md, FormatMarkdown}, {&tex, FormatLaTeX}, {&js, FormatJSON}, {&cs, FormatCSV}} {
		if err := c.Write(f.b, f.format); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"Speedup waterfall, session ", "| pipelined | 1.100x | ", "| interaction | 1.182x |", "| total | 1.300x | "} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if strings.Count(tex.String(), `\begin{tabular}`) != 2 || !strings.Contains(tex.String(), `interaction & 1.182x`) {
		t.Errorf("latex:\n%s", tex.String())
	}
	var back Comparison
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Waterfalls) != 1 || len(back.Waterfalls[0].Bars) != 3 {
		t.Errorf("json %v: %+v", err, back.Waterfalls)
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil || len(recs) != 1+9+3 {
		t.Fatalf("csv %v: %d records", err, len(recs))
	}
	last := recs[len(recs)-1]
	if last[0] != c.Runs[0].Session || last[1] != "" || last[len(last)-8] != "total" || recs[0][len(last)-8] != "waterfall_step" {
		t.Errorf("csv waterfall record %q", last)
	}
}

// Parts named by the caller: those the session did not run alone are
// predicted from the baseline's runs, and marked so.
func TestCompareWaterfallPredicted(t *testing.T) {
	c := waterfallComparison(t, func(*Session) ([]whatif.PartConfig, error) {
		return []whatif.PartConfig{{Name: "pipelined", Config: json.RawMessage(pipeCfg)},
			{Name: "overlap-eval", Config: json.RawMessage(`{"overlap_eval":true}`)}}, nil
	})
	if len(c.Waterfalls) != 1 {
		t.Fatalf("waterfalls %+v", c.Waterfalls)
	}
	w := c.Waterfalls[0]
	if len(w.Waterfall.Parts) != 2 || !w.Waterfall.Parts[1].Predicted || w.Waterfall.Parts[0].Predicted || w.Waterfall.Check() != nil {
		t.Fatalf("parts %+v", w.Waterfall.Parts)
	}
	if w.Bars[1].Source() != "predicted" || w.PartsFrom != "the optimizations of the optimized variant" {
		t.Errorf("bars %+v, parts from %q", w.Bars, w.PartsFrom)
	}
}

// Without the option, or without an optimized run, there is none.
func TestCompareNoWaterfall(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := repeatSession(t, st, []float64{1.2, 1.5, 1.3})
	if c := compareSession(t, st, s); len(c.Waterfalls) != 0 {
		t.Errorf("waterfall without the option: %+v", c.Waterfalls)
	}
	c, err := Compare(selectAll(t, st, s), CompareOptions{Waterfall: &WaterfallOptions{Optimized: "nosuch"}})
	if err != nil || len(c.Waterfalls) != 0 {
		t.Errorf("%v: %+v", err, c.Waterfalls)
	}
}
