package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/stats"
)

// repeatSession is a launch of baseline and optimized with three repeats
// each; optimized's repeat k runs at base/ratios[k-1].
func repeatSession(t *testing.T, st *Store, ratios []float64, extra ...handRun) *Session {
	t.Helper()
	var runs []handRun
	for k, r := range ratios {
		b := 1.0 + 0.5*float64(k) // drift between repeats, shared by both
		runs = append(runs,
			handRun{name: fmt.Sprintf("baseline.r%d", k+1), variant: "baseline", config: baseCfg, epochS: []float64{b, b, b}, status: profile.StatusOK},
			handRun{name: fmt.Sprintf("optimized.r%d", k+1), variant: "optimized", config: optCfg, epochS: []float64{b / r, b / r, b / r}, status: profile.StatusOK})
	}
	return handSession(t, st, "rep", `{"data":"synth-tiny"}`, append(runs, extra...)...)
}

// compareSession compares all of session s's runs with default options.
func compareSession(t *testing.T, st *Store, s *Session) *Comparison {
	t.Helper()
	c, err := Compare(selectAll(t, st, s), CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func runByName(t *testing.T, c *Comparison, run string) *RunFigures {
	t.Helper()
	for i := range c.Runs {
		if c.Runs[i].Run == run {
			return &c.Runs[i]
		}
	}
	t.Fatalf("no run %s", run)
	return nil
}

func TestCompareRepeats(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := repeatSession(t, st, []float64{1.2, 1.5, 1.3})
	c := compareSession(t, st, s)
	o := runByName(t, c, "optimized.r2")
	if o.Repeat != 2 || o.SpeedupMethod != stats.MethodRepeats || o.SpeedupRepeats != 3 || o.SingleRun {
		t.Fatalf("optimized.r2: repeat %d, method %q, %d repeats, single %v", o.Repeat, o.SpeedupMethod, o.SpeedupRepeats, o.SingleRun)
	}
	if !near(o.Speedup, 1.3) || len(o.SpeedupRatios) != 3 || !near(o.SpeedupRatios[0], 1.2) || !near(o.SpeedupRatios[1], 1.5) {
		t.Errorf("speedup %v, ratios %v; want the median 1.3 of 1.2 1.5 1.3", o.Speedup, o.SpeedupRatios)
	}
	if o.SpeedupLo < 1.2-1e-9 || o.SpeedupHi > 1.5+1e-9 || o.SpeedupLo > o.Speedup || o.SpeedupHi < o.Speedup {
		t.Errorf("interval [%v, %v]", o.SpeedupLo, o.SpeedupHi)
	}
	if !near(o.VariantMedianS, 1) { // the median of 1/1.2, 1.5/1.5 and 2/1.3
		t.Errorf("variant median %v", o.VariantMedianS)
	}
	b := runByName(t, c, "baseline.r3")
	if b.Speedup != 1 || !near(b.VariantMedianS, 1.5) || b.Repeat != 3 {
		t.Errorf("baseline.r3: speedup %v, median %v, repeat %d", b.Speedup, b.VariantMedianS, b.Repeat)
	}
	if got := FormatSpeedup(o, 2); !strings.HasPrefix(got, "1.30x [") || strings.Contains(got, "single") {
		t.Errorf("FormatSpeedup = %q", got)
	}
	if got := FormatRatios(o, 2, " "); got != "1.20 1.50 1.30" {
		t.Errorf("FormatRatios = %q", got)
	}
}

// TestComparePartialRuns checks that a run that failed, was aborted by an
// OOM, crashed or was canceled has no speedup in any format and is
// labelled partial, and that a failed baseline gives no speedups.
func TestComparePartialRuns(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bad := []handRun{
		{name: "oomed", variant: "oomed", config: optCfg, epochS: []float64{0.1}, ooms: 1, status: profile.StatusOOM},
		{name: "failed", variant: "failed", config: optCfg, epochS: []float64{0.2}, status: profile.StatusFailed},
		{name: "canceled", variant: "canceled", config: optCfg, epochS: []float64{0.2}, status: profile.StatusCanceled},
		{name: "crashed", variant: "crashed", config: optCfg, epochS: []float64{0.2}, status: profile.StatusCrashed}, // as a supervisor writes it
	}
	s := repeatSession(t, st, []float64{2, 2, 2}, bad...)
	c := compareSession(t, st, s)
	for _, h := range bad {
		r := runByName(t, c, h.name)
		if r.Speedup != 0 || r.VariantMedianS != 0 || r.SpeedupRatios != nil || !r.Partial || r.Status == profile.StatusOK {
			t.Errorf("%s (%s): speedup %v, median %v, partial %v", h.name, r.Status, r.Speedup, r.VariantMedianS, r.Partial)
		}
	}
	var md, csvOut, js bytes.Buffer
	if err := c.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := c.CSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	if err := c.JSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"oom, partial", "failed, partial", "canceled, partial", "crashed, partial", "oomed: partial figures"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(csvOut.String(), "oomed,oomed,") || !strings.Contains(csvOut.String(), ",true,") {
		t.Errorf("csv:\n%s", csvOut.String())
	}
	var back struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, r := range back.Runs {
		_, has := r["speedup"]
		if partial := r["partial"] == true; partial == has {
			t.Errorf("json run %v: partial %v, speedup %v", r["run"], r["partial"], r["speedup"])
		}
	}

	// the best run is never one that stopped early, however fast
	if best := c.BestRun(); best < 0 || c.Runs[best].Variant != "optimized" {
		t.Errorf("best run %d", best)
	}

	// a baseline that stopped: nobody gets a speedup
	s2 := handSession(t, st, "badbase", `{"data":"synth-tiny"}`,
		handRun{name: "baseline", variant: "baseline", config: baseCfg, epochS: []float64{1, 1}, status: profile.StatusOOM},
		handRun{name: "optimized", variant: "optimized", config: optCfg, epochS: []float64{0.5, 0.5}, status: profile.StatusOK})
	c2 := compareSession(t, st, s2)
	for _, r := range c2.Runs {
		if r.Speedup != 0 {
			t.Errorf("%s: speedup %v over an OOM-aborted baseline", r.Run, r.Speedup)
		}
	}
}

func TestCompareHostBusy(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := handSession(t, st, "busy", `{"data":"synth-tiny"}`,
		handRun{name: "baseline", variant: "baseline", config: baseCfg, epochS: []float64{1, 1}, status: profile.StatusOK,
			host: &profile.Host{Cores: 2, CPUs: 2, Load: 0.5}, usage: &profile.Usage{CPUS: 4, WaitS: 0.1, WallS: 2, Threads: 2, Load: 1}},
		handRun{name: "optimized", variant: "optimized", config: optCfg, epochS: []float64{0.5, 0.5}, status: profile.StatusOK,
			host: &profile.Host{Cores: 2, CPUs: 2, Load: 0.5}, usage: &profile.Usage{CPUS: 2, WaitS: 1.5, WallS: 1, Threads: 2, Load: 1}},
		handRun{name: "loaded", variant: "loaded", config: optCfg, epochS: []float64{0.5, 0.5}, status: profile.StatusOK,
			host: &profile.Host{Cores: 2, CPUs: 2, Load: 3.5}})
	c := compareSession(t, st, s)
	if b := runByName(t, c, "baseline"); b.HostBusy != "" {
		t.Errorf("baseline flagged: %s", b.HostBusy)
	}
	if o := runByName(t, c, "optimized"); !strings.Contains(o.HostBusy, "waited 1.5 s for a CPU") {
		t.Errorf("optimized: %q", o.HostBusy)
	}
	if l := runByName(t, c, "loaded"); !strings.Contains(l.HostBusy, "load 3.50 above 2 CPUs at the start") {
		t.Errorf("loaded: %q", l.HostBusy)
	}
	var md bytes.Buffer
	if err := c.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "loaded: "+HostBusyLabel) || !strings.Contains(md.String(), "| host |  | busy | busy |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

func TestRepeatNumber(t *testing.T) {
	for _, c := range []struct {
		run, variant string
		want         int
	}{{"a.r1", "a", 1}, {"a.r12", "a", 12}, {"a", "a", 0}, {"a.r0", "a", 0}, {"a.r01", "a", 0}, {"a.rx", "a", 0}, {"b.r1", "a", 0}, {"a.r", "a", 0}} {
		if got := RepeatNumber(c.run, c.variant); got != c.want {
			t.Errorf("RepeatNumber(%q, %q) = %d, want %d", c.run, c.variant, got, c.want)
		}
	}
}

// TestCompareJSONTyped checks that every figure of the JSON output is a
// JSON number, never a string.
func TestCompareJSONTyped(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := compareSession(t, st, repeatSession(t, st, []float64{1.2, 1.5, 1.3}))
	var js bytes.Buffer
	if err := c.JSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	numbers := []string{"epochs", "epoch_mean_s", "epoch_median_s", "speedup", "variant_median_s", "repeat", "speedup_repeats", "events", "spans"}
	for _, r := range back.Runs {
		keys := numbers
		if r["variant"] == "optimized" {
			keys = append(keys, "speedup_lo", "speedup_hi") // the baseline has no interval
		}
		for _, k := range keys {
			if _, ok := r[k].(float64); !ok {
				t.Errorf("%v: %s = %#v, want a JSON number", r["run"], k, r[k])
			}
		}
		cfg, _ := r["config"].(map[string]any)
		if _, ok := cfg["sampler_workers"].(float64); !ok {
			t.Errorf("%v: config.sampler_workers = %#v, want a JSON number", r["run"], cfg["sampler_workers"])
		}
		if _, ok := cfg["fanouts"].([]any); !ok {
			t.Errorf("%v: config.fanouts = %#v, want a JSON list", r["run"], cfg["fanouts"])
		}
		if _, ok := cfg["model"].(string); !ok {
			t.Errorf("%v: config.model = %#v, want a string", r["run"], cfg["model"])
		}
		ratios, ok := r["speedup_ratios"].([]any)
		if !ok || len(ratios) != 3 {
			t.Fatalf("%v: speedup_ratios %#v", r["run"], r["speedup_ratios"])
		}
		for _, v := range ratios {
			if _, ok := v.(float64); !ok {
				t.Errorf("%v: ratio %#v", r["run"], v)
			}
		}
	}
}
