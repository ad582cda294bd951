package whatif

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// TestSessionAcceptance prints, for the session folder named by
// GNNSCOPE_WHATIF_SESSION, every variant's epoch time predicted from the
// baseline's runs beside its measured median, and the error
// (scripts/whatif-acceptance.sh runs it). GNNSCOPE_WHATIF_LIMIT, a
// fraction, makes an error beyond it fail. Skipped without the variable.
func TestSessionAcceptance(t *testing.T) {
	dir := os.Getenv("GNNSCOPE_WHATIF_SESSION")
	if dir == "" {
		t.Skip("GNNSCOPE_WHATIF_SESSION names no session folder")
	}
	files, err := filepath.Glob(filepath.Join(dir, "runs", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no journals in %s/runs (%v)", dir, err)
	}
	byVariant := map[string][]*Trace{}
	var names []string
	for _, f := range files {
		tr, err := readTrace(f)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Status != profile.StatusOK {
			continue
		}
		if _, ok := byVariant[tr.Variant]; !ok {
			names = append(names, tr.Variant)
		}
		byVariant[tr.Variant] = append(byVariant[tr.Variant], tr)
	}
	bases := byVariant[profile.VariantBaseline]
	if len(bases) == 0 {
		t.Fatal("no baseline run ended ok")
	}
	for _, b := range bases {
		m := NewModel(b)
		par, ext := m.Parallelism()
		fmt.Printf("%s: measured median %.3f s, replay error %+.1f %%, train threads %.2f, other threads %.2f\n",
			b.Run, b.MeasuredMedian(), 100*m.ReplayError(), par, ext)
	}
	limit := 0.0
	if v := os.Getenv("GNNSCOPE_WHATIF_LIMIT"); v != "" {
		if _, err := fmt.Sscan(v, &limit); err != nil {
			t.Fatalf("GNNSCOPE_WHATIF_LIMIT=%q: %v", v, err)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		for i, tr := range byVariant[n] {
			tr.Repeat = repeatOf(tr.Run, i+1)
		}
	}
	defer printWaterfalls(byVariant, names)
	fmt.Printf("%-14s %-40s %11s %10s %8s\n", "VARIANT", "SCENARIO", "PREDICTED s", "MEASURED s", "ERROR")
	for _, n := range names {
		if n == profile.VariantBaseline {
			continue
		}
		c := CheckSession(bases, byVariant[n])
		note := ""
		if len(c.Unmodeled) > 0 {
			note = "  (not modeled: " + strings.Join(c.Unmodeled, ", ") + ")"
		}
		fmt.Printf("%-14s %-40s %11.3f %10.3f %+7.1f%%%s\n", n, c.Scenario.Label(), c.Predicted, c.Measured, 100*c.Error, note)
		if limit > 0 && len(c.Unmodeled) == 0 && (c.Error > limit || c.Error < -limit) {
			t.Errorf("%s: predicted %.3f s, measured %.3f s: error %+.1f %% beyond %.0f %%", n, c.Predicted, c.Measured, 100*c.Error, 100*limit)
		}
	}
}

// printWaterfalls prints the waterfall of the optimized variant over the
// baseline with every other variant as a part: measured from the
// session's runs, then predicted from the baseline's alone.
func printWaterfalls(byVariant map[string][]*Trace, names []string) {
	opt := byVariant["optimized"]
	bases := byVariant[profile.VariantBaseline]
	if len(opt) == 0 {
		return
	}
	var measured, predicted []PartSpec
	for _, n := range names {
		if n == profile.VariantBaseline || n == "optimized" {
			continue
		}
		s := ScenarioOf(byVariant[n][0])
		measured = append(measured, PartSpec{Name: n, Runs: byVariant[n], Scenario: s})
		predicted = append(predicted, PartSpec{Name: n, Scenario: s})
	}
	for _, c := range []struct {
		what  string
		parts []PartSpec
	}{{"measured parts", measured}, {"predicted parts", predicted}} {
		w, err := SessionWaterfall(bases, opt, c.parts)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("waterfall, %s (log-speedup; parts + interaction = total):\n", c.what)
		for _, b := range w.Bars() {
			mark := ""
			if b.Predicted {
				mark = " predicted"
			}
			fmt.Printf("  %-14s %6.3fx  %+.4f  [%.3f, %.3f]  %.3f -> %.3f%s\n", b.Name, b.Speedup, b.Log, b.Lo, b.Hi, b.From, b.To, mark)
		}
		fmt.Printf("  sum of parts and interaction %+.6f, total %+.6f\n", w.Sum(), w.Total.Log)
	}
}

// readTrace reads a run journal into a Trace.
func readTrace(path string) (*Trace, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := NewBuilder()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var e profile.Event
		if err := profile.DecodeEvent([]byte(line), &e); err != nil {
			continue // a torn last line
		}
		b.Add(&e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b.Trace(), nil
}

// repeatOf returns K of a run named NAME.rK, else def.
func repeatOf(run string, def int) int {
	i := strings.LastIndex(run, ".r")
	if i < 0 {
		return def
	}
	var k int
	if _, err := fmt.Sscanf(run[i+2:], "%d", &k); err != nil || k < 1 {
		return def
	}
	return k
}
