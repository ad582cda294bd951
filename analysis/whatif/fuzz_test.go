package whatif

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// FuzzReplay feeds the builder spans of any name, lane, epoch, batch,
// start and duration (negative ones included) and replays the trace under
// every kind of scenario: nothing panics, hangs or predicts a negative or
// non-finite time.
func FuzzReplay(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 10, 5, 2, 0, 1, 0, 20, 9, 4, 1, 1, 0, 12, 7}, uint8(2), uint8(1))
	f.Add([]byte{1, 2, 1, 1, 0, 200, 3, 0, 2, 0, 255, 255}, uint8(1), uint8(0))
	names := []string{profile.StageSample, profile.StageTransfer, profile.StageTrain, profile.StageEval, profile.StageWait, profile.StageCache, profile.StageSetup}
	lanes := []string{profile.LaneCompute, profile.SamplerLane(0), profile.LaneEval, "rank1/compute", "rank0/compute"}
	f.Fuzz(func(t *testing.T, data []byte, cpus, threads uint8) {
		if len(data) > 6*400 {
			return
		}
		cfg, _ := json.Marshal(map[string]any{"threads": int(threads % 5), "sampler_workers": int(threads % 3), "overlap_eval": threads%2 == 1})
		b := NewBuilder()
		b.Add(&profile.Event{T: profile.TypeRunStart, Host: &profile.Host{CPUs: int(cpus % 9)}, Config: cfg})
		for i := 0; i+6 <= len(data); i += 6 {
			d := data[i : i+6]
			b.Add(&profile.Event{T: profile.TypeSpan, Name: names[int(d[0])%len(names)], Lane: lanes[int(d[1])%len(lanes)],
				Epoch: int(d[2] % 4), Batch: int(d[3] % 5), Start: int64(d[4]) * ms, Dur: (int64(d[5]) - 20) * ms})
		}
		b.Add(&profile.Event{T: profile.TypeCache, Hits: int64(cpus), Misses: int64(threads)})
		b.Add(&profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK, Usage: &profile.Usage{CPUS: float64(cpus) / 10, WaitS: float64(threads) / 10, WallS: 1, Threads: int(cpus % 3)}})
		m := NewModel(b.Trace())
		for _, s := range []Scenario{{}, {Workers: 1}, {Workers: 3, Prefetch: 1, OverlapEval: true}, {Free: []string{profile.StageTrain}, Cache: true, HitRate: 2}, {Cores: 1, Procs: 1, Workers: 2}} {
			e := m.Predict(s)
			for _, x := range append(e.Epochs, e.EpochS, e.Speedup, e.Threads) {
				if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
					t.Fatalf("scenario %+v: %+v", s, e)
				}
			}
		}
	})
}
