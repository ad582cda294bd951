package synth

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// Options shape a synthetic run.
type Options struct {
	Run     string // run and variant name
	Epochs  int
	Batches int // per epoch
	// Samplers > 0 makes a pipelined run with that many sampler lanes
	// and an overlapped evaluator; 0 a baseline run.
	Samplers int
	Layers   int   // > 0: a stale event per batch and layer
	Budget   int64 // memory budget in bytes (0: 1 GiB)
	OOMEvery int   // > 0: an oom event (action skip) every OOMEvery batches
	Seed     uint64
	// Cut stops the run after this many batches in all, without run_end
	// (0: the whole run, ended by run_end).
	Cut int
}

// Count returns the number of events Generate produces for o.
func Count(o Options) int {
	n := 0
	Generate(o, func(*profile.Event) { n++ })
	return n
}

// Generate calls fn with each event of the run, in journal order. The
// event passed is reused: copy what must be kept.
func Generate(o Options, fn func(e *profile.Event)) {
	if o.Budget <= 0 {
		o.Budget = 1 << 30
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	jit := func(d time.Duration) int64 { // d ± 20 %
		return int64(float64(d) * (0.8 + 0.4*rng.Float64()))
	}
	cfg, _ := json.Marshal(map[string]any{"epochs": o.Epochs, "sampler_workers": o.Samplers, "batch_size": 1024})
	var e profile.Event
	emit := func(ev profile.Event) { e = ev; fn(&e) }
	emit(profile.Event{T: profile.TypeRunStart, V: profile.SchemaVersion, Run: o.Run, Variant: o.Run,
		Session: "synthetic", Config: cfg, Host: &profile.Host{Cores: 8}, Wall: "2026-01-02T03:04:05.000000000Z"})
	pending := make([]profile.Event, 0, 32)
	var deferred []profile.Event // spans that end later than the batch being written
	now := int64(5 * time.Millisecond)
	flush := func() {
		kept := deferred[:0]
		for _, d := range deferred {
			if endOf(&d) <= now {
				pending = append(pending, d)
			} else {
				kept = append(kept, d)
			}
		}
		deferred = kept
		slices.SortStableFunc(pending, func(a, b profile.Event) int {
			return int(min(max(endOf(&a)-endOf(&b), -1), 1))
		})
		for i := range pending {
			fn(&pending[i])
		}
		pending = pending[:0]
	}
	span := func(name, lane string, ep, b int, start, dur int64) {
		pending = append(pending, profile.Event{T: profile.TypeSpan, Name: name, Lane: lane, Epoch: ep, Batch: b, Start: start, Dur: dur})
	}
	span(profile.StageSetup, profile.LaneCompute, 0, -1, 0, now)
	flush()
	samplerFree := make([]int64, max(o.Samplers, 1))
	total := 0
	loss := 2.0
	for ep := 1; ep <= o.Epochs; ep++ {
		for b := 0; b < o.Batches; b++ {
			if o.Cut > 0 && total >= o.Cut {
				now = math.MaxInt64
				flush()
				return
			}
			total++
			if o.Samplers == 0 {
				d := jit(2 * time.Millisecond)
				span(profile.StageSample, profile.LaneCompute, ep, b, now, d)
				now += d
				d = jit(time.Millisecond)
				span(profile.StageTransfer, profile.LaneCompute, ep, b, now, d)
				now += d
			} else {
				w := b % o.Samplers
				s := max(samplerFree[w], now-int64(8*time.Millisecond)) // a bounded prefetch
				ds, dt := jit(2*time.Millisecond), jit(time.Millisecond)
				span(profile.StageSample, profile.SamplerLane(w), ep, b, s, ds)
				span(profile.StageTransfer, profile.SamplerLane(w), ep, b, s+ds, dt)
				ready := s + ds + dt
				samplerFree[w] = ready
				if ready > now {
					span(profile.StageWait, profile.LaneCompute, ep, b, now, ready-now)
					now = ready
				}
			}
			start := now
			for _, st := range []struct {
				name string
				d    time.Duration
			}{{profile.StageForward, 2 * time.Millisecond}, {profile.StageBackward, 2500 * time.Microsecond}, {profile.StageStep, 500 * time.Microsecond}} {
				d := jit(st.d)
				span(st.name, profile.LaneCompute, ep, b, now, d)
				now += d
			}
			span(profile.StageTrain, profile.LaneCompute, ep, b, start, now-start)
			flush()
			peak := int64(float64(o.Budget) * (0.55 + 0.3*rng.Float64()))
			emit(profile.Event{T: profile.TypeMem, Epoch: ep, Batch: b, Phase: profile.PhaseTrain, Peak: peak, Live: peak / 3, Budget: o.Budget, Predicted: peak + peak/20})
			if o.OOMEvery > 0 && total%o.OOMEvery == 0 {
				emit(profile.Event{T: profile.TypeOOM, Epoch: ep, Batch: b, Requested: o.Budget / 4, Live: o.Budget, Budget: o.Budget, Action: profile.ActionSkip})
			}
			loss = loss*0.9995 + 0.0002
			emit(profile.Event{T: profile.TypeMetric, Name: "batch_loss", Epoch: ep, Batch: b, Value: loss * (0.9 + 0.2*rng.Float64())})
			for l := 0; l < o.Layers; l++ {
				h := []int64{int64(rng.IntN(100)), int64(rng.IntN(300)), int64(rng.IntN(200)), int64(rng.IntN(50))}
				emit(profile.Event{T: profile.TypeStale, Epoch: ep, Batch: b, Layer: l + 1, Mean: 1 + rng.Float64(), Max: 7, Hist: h})
			}
		}
		lane := profile.LaneCompute
		evalStart := now
		if o.Samplers > 0 {
			lane = profile.LaneEval
		}
		d := jit(time.Duration(o.Batches) * time.Millisecond)
		if o.Samplers == 0 {
			span(profile.StageEval, lane, ep, -1, evalStart, d)
			now += d
		} else {
			deferred = append(deferred, profile.Event{T: profile.TypeSpan, Name: profile.StageEval, Lane: lane, Epoch: ep, Batch: -1, Start: evalStart, Dur: d})
		}
		flush()
		acc := 1 - 0.5*math.Exp(-float64(ep)/3)
		emit(profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: ep, Batch: -1, Value: loss})
		emit(profile.Event{T: profile.TypeMetric, Name: "train_acc", Epoch: ep, Batch: -1, Value: acc})
		emit(profile.Event{T: profile.TypeMetric, Name: "val_acc", Epoch: ep, Batch: -1, Value: acc - 0.05})
		emit(profile.Event{T: profile.TypeMetric, Name: "test_acc", Epoch: ep, Batch: -1, Value: acc - 0.06})
		for l := 0; l < o.Layers; l++ {
			emit(profile.Event{T: profile.TypeHistErr, Epoch: ep, Layer: l + 1, RelErr: 0.3 / float64(ep)})
		}
	}
	now = math.MaxInt64
	flush()
	emit(profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK})
}

func endOf(e *profile.Event) int64 { return e.Start + e.Dur }
