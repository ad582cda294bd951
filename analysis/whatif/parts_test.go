package whatif

import (
	"encoding/json"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// variantTrace is a journal's trace filed under a variant.
func variantTrace(j journal, variant string) *Trace {
	t := j.trace()
	t.Variant = variant
	return t
}

// A session's waterfall from part configs: a part with runs is
// measured, one without is predicted from its config; runs that did not
// end ok are not filed.
func TestSessionPartsWaterfall(t *testing.T) {
	s := Session{}
	s.Add(variantTrace(journal{cpus: 2, threads: 1, epochs: 3, batches: 1, step: 100 * ms, eval: 50 * ms}, profile.VariantBaseline))
	s.Add(variantTrace(journal{cpus: 2, threads: 1, epochs: 3, batches: 1, step: 80 * ms, eval: 20 * ms}, "optimized"))
	s.Add(variantTrace(journal{cpus: 2, threads: 1, epochs: 3, batches: 1, step: 100 * ms, eval: 25 * ms}, "pipelined"))
	failed := variantTrace(journal{cpus: 2, threads: 1, epochs: 3, batches: 1, step: 10 * ms}, "pipelined")
	failed.Status = profile.StatusFailed
	if s.Add(failed) || len(s["pipelined"]) != 1 {
		t.Fatalf("a failed run was filed: %d pipelined", len(s["pipelined"]))
	}
	parts := []PartConfig{{Name: "pipelined"}, {Name: "overlap-eval", Config: json.RawMessage(`{"overlap_eval":true}`)}}
	w, err := s.Waterfall(profile.VariantBaseline, "optimized", parts, 0)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "pipelined", w.Parts[0].Speedup, 1.2)
	near(t, "overlap-eval", w.Parts[1].Speedup, 1.5)
	if w.Parts[0].Predicted || !w.Parts[1].Predicted || w.Check() != nil {
		t.Errorf("parts %+v", w.Parts)
	}
	bars := w.Bars()
	if bars[0].Source() != "measured (1 repeat)" || bars[1].Source() != "predicted" || bars[2].Source() != "remainder" {
		t.Errorf("sources %q, %q, %q", bars[0].Source(), bars[1].Source(), bars[2].Source())
	}
	if got := s.PartsOf([]string{profile.VariantBaseline, "pipelined", "gas", "optimized"}, profile.VariantBaseline, "optimized"); len(got) != 1 || got[0].Name != "pipelined" {
		t.Errorf("parts of the session %+v", got)
	}
	if _, err := s.Waterfall(profile.VariantBaseline, "nosuch", parts, 0); err == nil {
		t.Error("a waterfall without optimized runs")
	}
	if _, err := s.Waterfall(profile.VariantBaseline, "optimized", []PartConfig{{Name: "cache", Config: json.RawMessage(`[`)}}, 0); err == nil {
		t.Error("a part with a config that does not decode")
	}
}

func TestSessionHitRate(t *testing.T) {
	s := Session{}
	if _, ok := s.HitRate("optimized"); ok {
		t.Error("a hit rate without runs")
	}
	mk := func(variant string, rate float64) *Trace {
		tr := variantTrace(journal{cpus: 2, threads: 1, epochs: 1, batches: 1, step: 10 * ms}, variant)
		tr.HasCache, tr.HitRate = true, rate
		return tr
	}
	s.Add(mk("cache", 0.4))
	s.Add(mk("cache", 0.6))
	if h, ok := s.HitRate("optimized"); !ok || h != 0.5 {
		t.Errorf("any run's: %v %v", h, ok)
	}
	s.Add(mk("optimized", 0.9))
	if h, ok := s.HitRate("optimized"); !ok || h != 0.9 {
		t.Errorf("the preferred variant's: %v %v", h, ok)
	}
}
