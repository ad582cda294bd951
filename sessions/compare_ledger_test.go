package sessions

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestCompareLedgerExports: every format carries each run's exposed
// shares and verdict, and the shares add up to the whole.
func TestCompareLedgerExports(t *testing.T) {
	c := formatComparison(t)
	if !c.HasLedger() {
		t.Fatal("no ledger")
	}
	for _, r := range c.Runs {
		var sum float64
		for _, v := range r.Ledger.Exposed {
			sum += v
		}
		if r.Ledger == nil || math.Abs(sum-1) > 0.01 || r.Ledger.Verdict == "" || r.Ledger.VerdictKind == "" {
			t.Errorf("%s: ledger %+v (shares add up to %.4f)", r.Label, r.Ledger, sum)
		}
	}
	var md, tex, cs, js bytes.Buffer
	for _, f := range []struct {
		format string
		buf    *bytes.Buffer
	}{{FormatMarkdown, &md}, {FormatLaTeX, &tex}, {FormatCSV, &cs}, {FormatJSON, &js}} {
		if err := c.Write(f.buf, f.format); err != nil {
			t.Fatal(err)
		}
	}
	for name, out := range map[string]string{"markdown": md.String(), "latex": tex.String()} {
		verdict := VerdictShort(c.Runs[0].Ledger)
		if name == "latex" {
			verdict = LaTeXEscape(verdict)
		}
		for _, want := range []string{"bound by", "exposed sample", "exposed train", "exposed idle", verdict} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil || len(recs) != 1+len(c.Runs) {
		t.Fatalf("csv %v: %v", recs, err)
	}
	for _, col := range []string{"verdict", "verdict_kind", "bound", "exposed_sample", "exposed_transfer", "exposed_train", "exposed_eval", "exposed_other", "exposed_idle"} {
		k := slices.Index(recs[0], col)
		if k < 0 || recs[1][k] == "" {
			t.Errorf("csv column %s missing or empty: %v", col, recs[0])
		}
	}
	var back struct {
		Runs []struct {
			Ledger struct {
				Exposed map[string]float64 `json:"exposed_share"`
				Verdict string
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Runs) != len(c.Runs) || len(back.Runs[0].Ledger.Exposed) != 6 || back.Runs[0].Ledger.Verdict == "" {
		t.Errorf("json %v: %s", err, js.String())
	}
}
