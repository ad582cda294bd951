package synth

import (
	"reflect"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

func collect(o Options) []profile.Event {
	var evs []profile.Event
	Generate(o, func(e *profile.Event) { evs = append(evs, *e) })
	return evs
}

// TestGenerate checks the shape of whole and cut runs, baseline and
// pipelined: run_start first, one train span per batch, one oom event per
// OOMEvery batches, stale and history-error events per layer, run_end
// last only for a whole run, and the same events for the same seed.
func TestGenerate(t *testing.T) {
	for _, o := range []Options{
		{Run: "baseline", Epochs: 3, Batches: 20, Seed: 1},
		{Run: "pipelined", Epochs: 4, Batches: 30, Samplers: 3, Layers: 2, OOMEvery: 7, Seed: 2},
		{Run: "cut", Epochs: 5, Batches: 10, Samplers: 2, Layers: 1, Cut: 23, Seed: 3},
		{Run: "guarded", Epochs: 3, Batches: 20, GuardEvery: 4, EvalChunks: 3, Status: profile.StatusFailed, Error: "boom", Seed: 4},
		{Run: "cache", Epochs: 2, Batches: 15, Samplers: 2, Cache: true, Seed: 5},
		{Run: "cache-baseline", Epochs: 2, Batches: 15, Cache: true, Seed: 6},
	} {
		t.Run(o.Run, func(t *testing.T) {
			evs := collect(o)
			if !reflect.DeepEqual(evs, collect(o)) {
				t.Fatal("two runs with one seed differ")
			}
			if n := Count(o); n != len(evs) {
				t.Fatalf("Count %d, Generate %d events", n, len(evs))
			}
			if evs[0].T != profile.TypeRunStart || evs[0].Run != o.Run {
				t.Fatalf("first event %+v", evs[0])
			}
			batches := o.Epochs * o.Batches
			if o.Cut > 0 {
				batches = o.Cut
			}
			count := map[string]int{}
			for _, e := range evs {
				count[e.T]++
				if e.T == profile.TypeSpan && e.Name == profile.StageTrain {
					count["train"]++
				}
				if e.T == profile.TypeSpan && e.Name == profile.StageCache {
					count["cache span"]++
				}
				if e.T == profile.TypeCache && (e.Hits <= 0 || e.Misses <= 0 || e.BytesH2D != 512*e.Misses) {
					t.Errorf("cache event %+v", e)
				}
				if e.T == profile.TypeSpan && e.Lane == profile.LaneEval && o.Samplers == 0 {
					t.Errorf("baseline run evaluates on the eval lane: %+v", e)
				}
			}
			if count["train"] != batches {
				t.Errorf("%d train spans, want %d", count["train"], batches)
			}
			if o.OOMEvery > 0 && count[profile.TypeOOM] != batches/o.OOMEvery {
				t.Errorf("%d oom events, want %d", count[profile.TypeOOM], batches/o.OOMEvery)
			}
			wantGuard := 0
			if o.GuardEvery > 0 {
				wantGuard = batches / o.GuardEvery
			}
			if count[profile.TypeGuard] != wantGuard {
				t.Errorf("%d guard events, want %d", count[profile.TypeGuard], wantGuard)
			}
			if o.OOMEvery == 0 && count[profile.TypeOOM] != 0 {
				t.Errorf("%d oom events without OOMEvery", count[profile.TypeOOM])
			}
			evalMem := 0
			for _, e := range evs {
				if e.T == profile.TypeMem && e.Phase == profile.PhaseEval {
					evalMem++
				}
				if e.T == profile.TypeGuard && (e.Predicted <= e.Budget || e.Actual <= 0 || e.Actual > e.Budget) {
					t.Errorf("guard event %+v: predicted over the budget, actual under it", e)
				}
			}
			if o.Cut == 0 && evalMem != o.Epochs*o.EvalChunks {
				t.Errorf("%d eval mem events, want %d", evalMem, o.Epochs*o.EvalChunks)
			}
			wantCache := 0
			if o.Cache {
				wantCache = batches
			}
			if count[profile.TypeCache] != wantCache || count["cache span"] != wantCache {
				t.Errorf("%d cache events, %d cache spans, want %d", count[profile.TypeCache], count["cache span"], wantCache)
			}
			if count[profile.TypeStale] != batches*o.Layers {
				t.Errorf("%d stale events, want %d", count[profile.TypeStale], batches*o.Layers)
			}
			last := evs[len(evs)-1].T
			if o.Cut > 0 {
				if count[profile.TypeRunEnd] != 0 {
					t.Errorf("cut run has run_end")
				}
			} else if last != profile.TypeRunEnd || count[profile.TypeHistErr] != o.Epochs*o.Layers {
				t.Errorf("last event %q, %d hist_err events", last, count[profile.TypeHistErr])
			} else if end := evs[len(evs)-1]; o.Status != "" && (end.Status != o.Status || end.Error != o.Error) {
				t.Errorf("run_end %+v, want status %q error %q", end, o.Status, o.Error)
			}
		})
	}
}
