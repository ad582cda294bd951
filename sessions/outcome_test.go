package sessions

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

func TestSkipCounts(t *testing.T) {
	for _, c := range []struct {
		summary        string
		skipped, total int
	}{
		{`{"batches":9,"skipped_batches":3}`, 3, 12},
		{`{"batches":9,"skipped_batches":0}`, 0, 0},
		{`{"batches":0,"skipped_batches":4}`, 4, 4},
		{`{"batches":9}`, 0, 0},
		{`{"batches":-9,"skipped_batches":3}`, 0, 0},
		{`{"batches":"x","skipped_batches":3}`, 0, 0},
		{`[1]`, 0, 0},
		{``, 0, 0},
	} {
		if s, n := SkipCounts(json.RawMessage(c.summary)); s != c.skipped || n != c.total {
			t.Errorf("%s: %d of %d, want %d of %d", c.summary, s, n, c.skipped, c.total)
		}
	}
	if got := OutcomeText("ok", false, 3, 12); got != "ok, skipped 3 of 12 batches (25.0 %)" {
		t.Errorf("OutcomeText %q", got)
	}
	if got := OutcomeText("oom", true, 3, 12); got != "oom, partial" {
		t.Errorf("OutcomeText partial %q", got)
	}
	if got := OutcomeText("ok", false, 0, 12); got != "ok" {
		t.Errorf("OutcomeText none skipped %q", got)
	}
}

// TestCompareSkippedAndAdjusted: a run that skipped batches says how many
// of how many in its status, in every format, with a note that its
// figures cover the trained batches; a run whose config the launcher
// adjusted lists the adjustments.
func TestCompareSkippedAndAdjusted(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := handSession(t, st, "skips", `{"data":"synth-tiny"}`,
		handRun{name: "baseline", variant: "baseline", config: baseCfg, epochS: []float64{1, 1}, status: profile.StatusOK,
			summary: `{"test_acc":0.5,"batches":9,"skipped_batches":3}`, ooms: 3},
		handRun{name: "optimized", variant: "optimized", config: optCfg, epochS: []float64{0.5, 0.5}, status: profile.StatusOK,
			summary: `{"test_acc":0.5,"batches":12,"skipped_batches":0}`, adjusted: []string{"mem_guard off->split: memory budget 18.3MiB"}})
	c := compareSession(t, st, s)
	b, o := runByName(t, c, "baseline"), runByName(t, c, "optimized")
	if b.SkippedBatches != 3 || b.TotalBatches != 12 || o.TotalBatches != 0 || len(o.Adjusted) != 1 {
		t.Fatalf("baseline %d of %d, optimized %d, adjusted %q", b.SkippedBatches, b.TotalBatches, o.TotalBatches, o.Adjusted)
	}
	var md, csvOut, tex, js bytes.Buffer
	for _, w := range []struct {
		f   func(*bytes.Buffer) error
		buf *bytes.Buffer
	}{
		{func(b *bytes.Buffer) error { return c.Markdown(b) }, &md},
		{func(b *bytes.Buffer) error { return c.CSV(b) }, &csvOut},
		{func(b *bytes.Buffer) error { return c.LaTeX(b) }, &tex},
		{func(b *bytes.Buffer) error { return c.JSON(b) }, &js},
	} {
		if err := w.f(w.buf); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{
		"ok, skipped 3 of 12 batches (25.0 %)",
		`baseline: skipped 3 of 12 batches \(25.0 %\): its epoch times and accuracy cover the trained batches only`,
		`optimized: adjusted: mem\_guard off-\>split: memory budget 18.3MiB`, // Markdown-escaped notes
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	if !strings.Contains(tex.String(), "skipped 3 of 12 batches") {
		t.Errorf("latex lacks the skips:\n%s", tex.String())
	}
	if !strings.Contains(csvOut.String(), "skipped_batches,total_batches") || !strings.Contains(csvOut.String(), ",3,12,") {
		t.Errorf("csv:\n%s", csvOut.String())
	}
	var back struct {
		Runs []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if r := back.Runs[0]; r["skipped_batches"] != 3.0 || r["total_batches"] != 12.0 {
		t.Errorf("json: %v of %v", r["skipped_batches"], r["total_batches"])
	}
	if a, _ := back.Runs[1]["adjusted"].([]any); len(a) != 1 {
		t.Errorf("json adjusted: %v", back.Runs[1]["adjusted"])
	}
}
