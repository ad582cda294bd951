//go:build unix

package compare_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/cli/internal/clitest"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

// TestCompareAndExportRealSession runs baseline and optimized on
// synth-tiny for 2 epochs with gnnscope run, then compares and exports
// the session through the CLI.
func TestMain(m *testing.M) { clitest.Main(m) }

func TestCompareAndExportRealSession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GNNSCOPE_HOME", home)
	if _, stderr, err := clitest.Run(t, "run", "--data", "synth-tiny", "--epochs", "2", "--threads", "1",
		"--variants", "baseline,optimized", "--wait", "-q"); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	s := clitest.OnlySession(t, home)
	id := s.ID()

	t.Run("markdown", func(t *testing.T) {
		out, _, err := clitest.Run(t, "compare", id)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out, "\n")
		if lines[0] != "| run | baseline | optimized |" || lines[1] != "|---|---:|---:|" {
			t.Fatalf("header:\n%s", out)
		}
		// configuration differences first, in config order
		for i, key := range []string{"sampler_workers", "prefetch", "overlap_eval"} {
			if !strings.HasPrefix(lines[2+i], "| "+key+" | ") {
				t.Errorf("line %d: %q, want the %s difference", 2+i, lines[2+i], key)
			}
		}
		for _, want := range []string{"| status | ok | ok |", "| epochs | 2 | 2 |", "| speedup | 1.000x | ", "| test accuracy | 0.", "| OOMs | 0 | 0 |"} {
			if !strings.Contains(out, want) {
				t.Errorf("markdown lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("json", func(t *testing.T) {
		out, _, err := clitest.Run(t, "compare", "last", "--json", "--store", home)
		if err != nil {
			t.Fatal(err)
		}
		var c sessions.Comparison
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		if c.Baseline != "baseline" || len(c.Runs) != 2 || !slices.Contains(c.ConfigKeys, "sampler_workers") || slices.Contains(c.ConfigKeys, "model") {
			t.Fatalf("comparison %+v", c)
		}
		for _, r := range c.Runs {
			if r.Epochs != 2 || r.EpochMeanS <= 0 || r.Speedup <= 0 || r.TestAcc == nil || r.Spans == 0 || r.Config["dataset"] != "synth-tiny" {
				t.Errorf("run %s: %+v", r.Run, r)
			}
		}
	})

	t.Run("csv", func(t *testing.T) {
		out, _, err := clitest.Run(t, "compare", id, "--format", "csv")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil || len(recs) < 5 || recs[1][1] != "baseline" || recs[2][1] != "optimized" || len(recs[0]) != len(recs[1]) {
			t.Fatalf("csv %v: %q", err, recs)
		}
		// the waterfall's bars follow the runs in the same table
		step := slices.Index(recs[0], "waterfall_step")
		if last := recs[len(recs)-1]; step < 0 || last[1] != "" || last[step] != "total" || recs[1][step] != "" {
			t.Errorf("waterfall records %q", recs[3:])
		}
	})

	t.Run("latex file and explicit baseline", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "table.tex")
		_, _, err := clitest.Run(t, "compare", id+"/opt", "--baseline", id[:10]+"/baseline", "--format", "latex", "-o", path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte(`\begin{tabular}{lrr}`)) || !bytes.Contains(b, []byte(`run & baseline & optimized \\`)) {
			t.Errorf("latex %v:\n%s", err, b)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		for _, args := range [][]string{
			{"compare", "nosuch"},
			{"compare", id + "/nosuch"},
			{"compare", id, "--format", "yaml"},
			{"compare", id, "--baseline", "nope"},
			{"compare", id, "--json", "--format", "csv"},
			{"compare"},
			{"export", "trace", "nosuch", "-o", filepath.Join(t.TempDir(), "x.json")},
		} {
			if _, _, err := clitest.Run(t, args...); err == nil {
				t.Errorf("%q: no error", args)
			}
		}
	})

	t.Run("trace", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "trace.json")
		_, stderr, err := clitest.Run(t, "export", "trace", id, "-o", path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stderr, "2 runs") {
			t.Errorf("summary: %s", stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		checkSessionTrace(t, b, s)

		// an existing file is refused without --force, overwritten with
		// it; a missing folder is created; the default name carries the
		// session id
		if _, _, err := clitest.Run(t, "export", "trace", id, "-o", path); err == nil || !strings.Contains(err.Error(), path+" exists: --force overwrites it") {
			t.Errorf("existing file: %v", err)
		}
		if _, _, err := clitest.Run(t, "compare", id, "-o", path); err == nil || !strings.Contains(err.Error(), "--force") {
			t.Errorf("compare onto an existing file: %v", err)
		}
		if _, _, err := clitest.Run(t, "export", "trace", id, "-o", path, "--force"); err != nil {
			t.Errorf("--force: %v", err)
		}
		deep := filepath.Join(t.TempDir(), "a", "b", "t.json")
		if _, _, err := clitest.Run(t, "export", "trace", id, "-o", deep); err != nil {
			t.Errorf("missing folders: %v", err)
		} else if _, err := os.Stat(deep); err != nil {
			t.Error(err)
		}
		wd, _ := os.Getwd()
		t.Chdir(t.TempDir())
		if _, stderr, err := clitest.Run(t, "export", "trace", id); err != nil || !strings.Contains(stderr, "wrote "+s.ID()+"-trace.json") {
			t.Errorf("default name: %v\n%s", err, stderr)
		}
		t.Chdir(wd)

		// --wall-clock: runs launched one after the other follow each other
		out, _, err := clitest.Run(t, "export", "trace", id, "--wall-clock", "-o", "-")
		if err != nil {
			t.Fatal(err)
		}
		first := map[int]float64{}
		var doc struct {
			TraceEvents []struct {
				Ph  string
				Pid int
				Ts  float64
			}
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, e := range doc.TraceEvents {
			if f, ok := first[e.Pid]; e.Ph == "X" && (!ok || e.Ts < f) {
				first[e.Pid] = e.Ts
			}
		}
		if first[2] <= first[1] {
			t.Errorf("--wall-clock: optimized starts at %g us, baseline at %g us", first[2], first[1])
		}

		out, _, err = clitest.Run(t, "export", "trace", id+"/optimized", "-o", "-")
		if err != nil || !json.Valid([]byte(out)) || !strings.Contains(out, `"optimized (variant optimized, session `+id+`)"`) {
			t.Errorf("to stdout: %v", err)
		}
	})
}

// checkSessionTrace checks a trace of the session's runs against their
// journals: valid JSON, named processes and threads, every span exactly
// once, no partial overlap on a thread, counters in time order.
func checkSessionTrace(t *testing.T, b []byte, s *sessions.Session) {
	t.Helper()
	var doc struct {
		TraceEvents []struct {
			Name string          `json:"name"`
			Cat  string          `json:"cat"`
			Ph   string          `json:"ph"`
			Pid  int             `json:"pid"`
			Tid  int             `json:"tid"`
			Ts   float64         `json:"ts"`
			Dur  float64         `json:"dur"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	ns := func(us float64) int64 { return int64(math.Round(us * 1000)) }
	want := map[string]int{}
	for i, run := range []string{"baseline", "optimized"} {
		evs, _, err := sessions.ReadJournal(s.JournalPath(run))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.T == profile.TypeSpan {
				want[fmt.Sprint(i+1, e.Name, e.Lane, e.Epoch, e.Batch, e.Start, e.Dur)]++
			}
		}
	}
	procs := map[int]string{}
	threads := map[[2]int]string{}
	type iv struct{ s, e int64 }
	onThread := map[[2]int][]iv{}
	last := map[string]int64{}
	for _, e := range doc.TraceEvents {
		var a struct {
			Name         string
			Epoch, Batch int
		}
		json.Unmarshal(e.Args, &a)
		switch e.Ph {
		case "M":
			if e.Name == "process_name" {
				procs[e.Pid] = a.Name
			} else if e.Name == "thread_name" {
				threads[[2]int{e.Pid, e.Tid}] = a.Name
			}
		case "X":
			if e.Cat == "exposed" { // the stage ledger's lane, computed from the spans
				continue
			}
			k := fmt.Sprint(e.Pid, e.Name, e.Cat, a.Epoch, a.Batch, ns(e.Ts), ns(e.Dur))
			if want[k] == 0 {
				t.Fatalf("span %s not in the journals, or twice", k)
			}
			want[k]--
			th := [2]int{e.Pid, e.Tid}
			onThread[th] = append(onThread[th], iv{ns(e.Ts), ns(e.Ts) + ns(e.Dur)})
		case "C":
			key := fmt.Sprintf("%d %s", e.Pid, e.Name)
			if ns(e.Ts) < last[key] {
				t.Errorf("counter %s out of order", key)
			}
			last[key] = ns(e.Ts)
		}
	}
	for k, n := range want {
		if n != 0 {
			t.Errorf("span %s missing from the trace", k)
		}
	}
	id := s.ID()
	if procs[1] != "baseline (variant baseline, session "+id+")" || procs[2] != "optimized (variant optimized, session "+id+")" {
		t.Errorf("process names %v", procs)
	}
	for th, ivs := range onThread {
		if threads[th] == "" {
			t.Errorf("thread %v unnamed", th)
		}
		slices.SortFunc(ivs, func(x, y iv) int {
			if x.s != y.s {
				return int(x.s - y.s)
			}
			return int(y.e - x.e)
		})
		var open []int64
		for _, v := range ivs {
			for len(open) > 0 && open[len(open)-1] <= v.s {
				open = open[:len(open)-1]
			}
			if len(open) > 0 && v.e > open[len(open)-1] {
				t.Fatalf("thread %q: partially overlapping spans", threads[th])
			}
			open = append(open, v.e)
		}
	}
	if last["2 loss"] == 0 && last["1 loss"] == 0 {
		t.Error("no loss counter")
	}
}
