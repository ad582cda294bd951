package whatif

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

const ms = int64(1e6)

// journal crafts a run's events: a serial schedule (sample, transfer,
// train on the trainer, in turn, each batch after the previous one plus
// gap) with an evaluation in turn after each epoch.
type journal struct {
	cpus, threads          int
	device                 string
	epochs, batches        int
	sample, transfer, step int64 // per batch (ns)
	gap, eval              int64
	usage                  *profile.Usage
}

func (j journal) events() []profile.Event {
	dev := j.device
	if dev == "" {
		dev = "cpu"
	}
	cfg, _ := json.Marshal(map[string]any{"threads": j.threads, "sampler_workers": 0, "device": dev})
	evs := []profile.Event{{T: profile.TypeRunStart, Run: "baseline", Variant: profile.VariantBaseline, Host: &profile.Host{CPUs: j.cpus}, Config: cfg}}
	span := func(name string, ep, b int, start, dur int64) {
		evs = append(evs, profile.Event{T: profile.TypeSpan, Name: name, Lane: profile.LaneCompute, Epoch: ep, Batch: b, Start: start, Dur: dur})
	}
	now := int64(0)
	for ep := 1; ep <= j.epochs; ep++ {
		for b := 0; b < j.batches; b++ {
			if j.sample > 0 {
				span(profile.StageSample, ep, b, now, j.sample)
			}
			now += j.sample
			if j.transfer > 0 {
				span(profile.StageTransfer, ep, b, now, j.transfer)
			}
			now += j.transfer + j.gap
			span(profile.StageForward, ep, b, now, j.step/2)
			span(profile.StageBackward, ep, b, now+j.step/2, j.step/2)
			span(profile.StageTrain, ep, b, now, j.step)
			now += j.step
		}
		if j.eval > 0 {
			span(profile.StageEval, ep, 0, now, j.eval)
			now += j.eval
		}
	}
	evs = append(evs, profile.Event{T: profile.TypeRunEnd, Status: profile.StatusOK, Usage: j.usage})
	return evs
}

func (j journal) trace() *Trace {
	b := NewBuilder()
	for _, e := range j.events() {
		b.Add(&e)
	}
	return b.Trace()
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.6f, want %.6f", what, got, want)
	}
}

func TestBuilderRecordsBatches(t *testing.T) {
	tr := journal{cpus: 2, threads: 1, epochs: 2, batches: 3, sample: 4 * ms, transfer: 2 * ms, step: 10 * ms, gap: 1 * ms, eval: 7 * ms}.trace()
	if len(tr.Batches) != 6 || len(tr.Epochs) != 2 {
		t.Fatalf("%d batches, %d epochs; want 6 and 2", len(tr.Batches), len(tr.Epochs))
	}
	for _, b := range tr.Batches {
		if b.Sample != 4*ms || b.Transfer != 2*ms || b.Train != 10*ms || b.Forward != 5*ms || b.Backward != 5*ms || !b.OnTrainer {
			t.Errorf("batch %d/%d: %+v", b.Epoch, b.Index, b)
		}
		if b.Gap != 1*ms {
			t.Errorf("batch %d/%d: gap %d ns, want %d", b.Epoch, b.Index, b.Gap, 1*ms)
		}
	}
	if tr.Epochs[0].Eval != 7*ms || tr.Epochs[0].Overlapped {
		t.Errorf("epoch 1: %+v", tr.Epochs[0])
	}
	if tr.Cores != 2 || tr.KernelThreads != 1 || tr.Workers != 0 || !tr.HostMemory {
		t.Errorf("host and schedule: %+v", tr)
	}
	// 3 × (4+2+1+10) + 7 ms an epoch
	near(t, "measured median", tr.MeasuredMedian(), 0.058)
	near(t, "replay error", NewModel(tr).ReplayError(), 0)
}

// A sampling-bound serial run pipelined on one worker, beside a trainer
// of one thread on two cores: nothing contends, and each batch takes
// max(sample, train) once the pipeline is full.
func TestPipelinedOneWorkerIsMaxOfStages(t *testing.T) {
	for _, c := range []struct {
		name         string
		sample, step int64
		first, later float64 // epoch 1 (the pipeline fills), epochs after
	}{
		{"sampling-bound", 30 * ms, 10 * ms, 0.310, 0.300},
		{"training-bound", 10 * ms, 30 * ms, 0.310, 0.300},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := journal{cpus: 2, threads: 1, epochs: 3, batches: 10, sample: c.sample, step: c.step}.trace()
			m := NewModel(tr)
			near(t, "measured", tr.MeasuredMedian(), 0.400)
			e := m.Predict(Scenario{Workers: 1, Prefetch: 1})
			if len(e.Epochs) != 3 {
				t.Fatalf("%d epochs predicted, want 3", len(e.Epochs))
			}
			near(t, "epoch 1", e.Epochs[0], c.first)
			near(t, "epoch 2", e.Epochs[1], c.later)
			near(t, "epoch 3", e.Epochs[2], c.later)
			near(t, "speedup", e.Speedup, 0.4/0.3)
		})
	}
}

// A worker beside a trainer whose kernels use both cores: three threads
// on two cores. The work is 20 ms of one thread and 20 ms of two a batch,
// 60 thread-ms, so no schedule beats 30 ms a batch on two cores; the
// replay reaches it, where one that ignored the cores would say 20.
func TestWorkersCannotUseCoresThatDoNotExist(t *testing.T) {
	tr := journal{cpus: 2, threads: 2, epochs: 3, batches: 10, sample: 20 * ms, step: 20 * ms}.trace()
	e := NewModel(tr).Predict(Scenario{Workers: 1, Prefetch: 1})
	near(t, "epoch 2", e.Epochs[1], 0.300)
	if e.Threads <= 2 {
		t.Errorf("average runnable threads %.2f, want above the 2 cores", e.Threads)
	}
	// With four cores the same pipeline is bound by its longest stage.
	e = NewModel(tr).Predict(Scenario{Workers: 1, Prefetch: 1, Cores: 4, Procs: 4})
	near(t, "epoch 2 on 4 cores", e.Epochs[1], 0.200)
}

// Evaluation overlapped with the next epoch: one batch of 100 ms and an
// evaluation of 50 ms an epoch, one thread each on two cores. Each
// epoch's evaluation hides under the next epoch's training but the
// last's, which the run waits for.
func TestOverlapEval(t *testing.T) {
	tr := journal{cpus: 2, threads: 1, epochs: 4, batches: 1, step: 100 * ms, eval: 50 * ms}.trace()
	near(t, "measured", tr.MeasuredMedian(), 0.150)
	e := NewModel(tr).Predict(Scenario{OverlapEval: true})
	want := []float64{0.150, 0.100, 0.100, 0.100}
	for i, w := range want {
		near(t, "epoch", e.Epochs[i], w)
	}
	// On one core the evaluation shares it with training: no gain.
	e = NewModel(tr).Predict(Scenario{OverlapEval: true, Cores: 1, Procs: 1})
	near(t, "total on one core", sum(e.Epochs), 0.600)
}

func TestFreeStages(t *testing.T) {
	tr := journal{cpus: 1, threads: 1, epochs: 2, batches: 4, sample: 5 * ms, transfer: 3 * ms, step: 12 * ms, eval: 20 * ms}.trace()
	m := NewModel(tr)
	near(t, "measured", tr.MeasuredMedian(), 0.100)
	for _, c := range []struct {
		stage string
		want  float64
	}{
		{profile.StageSample, 0.080},
		{profile.StageTransfer, 0.088},
		{profile.StageTrain, 0.052},
		{profile.StageEval, 0.080},
	} {
		near(t, c.stage+" free", m.Predict(Scenario{Free: []string{c.stage}}).EpochS, c.want)
	}
}

// Transfers through a cache move only the misses on a device of its own
// memory; on the CPU device a hit is copied as a miss is, and the
// lookups come on top.
func TestCacheScenario(t *testing.T) {
	j := journal{cpus: 1, threads: 1, epochs: 2, batches: 2, transfer: 20 * ms, step: 30 * ms, device: "cuda"}
	e := NewModel(j.trace()).Predict(Scenario{Cache: true, HitRate: 0.75})
	near(t, "cuda", e.EpochS, 2*(0.005+0.030))
	j.device = "cpu"
	e = NewModel(j.trace()).Predict(Scenario{Cache: true, HitRate: 0.75})
	near(t, "cpu", e.EpochS, 2*(0.020*(1+hostCacheCost)+0.030))
}

// Other processes' threads slow a run alike whatever its schedule; the
// model takes them from the run's usage and its speeds from them.
func TestHostCalibration(t *testing.T) {
	// 4 epochs of 10 × (10 ms sampling + 20 ms training): 1.2 s, 0.4 s
	// of it serial; two threads runnable on average over training and
	// half of the runnable time waiting.
	u := &profile.Usage{WallS: 1.2, CPUS: 1.0, WaitS: 1.0, Threads: 2}
	tr := journal{cpus: 2, threads: 2, epochs: 4, batches: 10, sample: 10 * ms, step: 20 * ms, usage: u}.trace()
	m := NewModel(tr)
	par, ext := m.Parallelism()
	// runnable 2/1.2 on average: (2 − 0.4) / 0.8 = 2 threads over training
	near(t, "train threads", par, 2)
	// speed 1/2 at 1.667 runnable: 2 × 1 / 0.5 − 1.667 other threads
	near(t, "other threads", ext, 4-2.0/1.2)
	h := hostModel{cores: 2, procs: 2, ext: 0}
	near(t, "speed(3)", h.speed(3), 2.0/3)
	h.ext = 2
	near(t, "speed(1) beside 2 others", h.speed(1), 2.0/3)
	near(t, "speed(4) beside 2 others", h.speed(4), 0.5*0.5)
}

func TestScenarioFromConfig(t *testing.T) {
	s, err := ScenarioFromConfig("optimized", json.RawMessage(`{"sampler_workers":2,"prefetch":4,"overlap_eval":true,"cache_bytes":"20%"}`), 0.4)
	if err != nil {
		t.Fatal(err)
	}
	if s.Workers != 2 || s.depth() != 4 || !s.OverlapEval || !s.Cache || s.HitRate != 0.4 {
		t.Errorf("scenario %+v", s)
	}
	if _, err := ScenarioFromConfig("x", json.RawMessage(`[`), 0); err == nil {
		t.Error("a broken config gave no error")
	}
	if got := (Scenario{Workers: 2}).Label(); got != "2 workers, prefetch 4" {
		t.Errorf("label %q", got)
	}
}

func TestCheckRunAgainstItsOwnSchedule(t *testing.T) {
	base := journal{cpus: 2, threads: 1, epochs: 3, batches: 10, sample: 30 * ms, step: 10 * ms}.trace()
	c := CheckRun(base, base)
	near(t, "predicted", c.Predicted, c.Measured)
	near(t, "error", c.Error, 0)
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// A run recorded with one sampler worker: its waits are not work, and
// the replay of its own schedule gives back its epoch times; taking the
// worker away puts the sampling back in turn.
func TestPipelinedTrace(t *testing.T) {
	cfg, _ := json.Marshal(map[string]any{"threads": 1, "sampler_workers": 1, "prefetch": 1, "device": "cpu"})
	b := NewBuilder()
	add := func(e profile.Event) { b.Add(&e) }
	add(profile.Event{T: profile.TypeRunStart, Variant: "pipelined", Host: &profile.Host{CPUs: 2}, Config: cfg})
	span := func(name, lane string, ep, i int, start, dur int64) {
		add(profile.Event{T: profile.TypeSpan, Name: name, Lane: lane, Epoch: ep, Batch: i, Start: start, Dur: dur})
	}
	// sampling 30 ms on the worker, training 10 ms: batch k ready at
	// 30(k+1), trained right after
	for k := 0; k < 20; k++ {
		ep, i := 1+k/10, k%10
		span("sample", profile.SamplerLane(0), ep, i, int64(k)*30*ms, 30*ms)
		prevEnd := int64(0)
		if k > 0 {
			prevEnd = int64(k)*30*ms + 10*ms
		}
		span("wait", profile.LaneCompute, ep, i, prevEnd, int64(k+1)*30*ms-prevEnd)
		span("train", profile.LaneCompute, ep, i, int64(k+1)*30*ms, 10*ms)
	}
	tr := b.Trace()
	if tr.Workers != 1 || tr.Batches[3].OnTrainer || tr.Batches[3].Wait != 20*ms || tr.Batches[3].Gap != 0 {
		t.Fatalf("trace %+v, batch 3 %+v", tr, tr.Batches[3])
	}
	m := NewModel(tr)
	near(t, "replay error", m.ReplayError(), 0)
	near(t, "serial", m.Predict(Scenario{}).EpochS, 0.400*tr.MeasuredMedian()/0.305)
}

// Stages recorded side by side ran slower: the speed they ran at is the
// average over their interval of the speed the demand then gave.
func TestRecordedSpeeds(t *testing.T) {
	tr := &Trace{Batches: []Batch{{prepStart: 0, prepEnd: 20 * ms, prepSet: true, trainStart: 10 * ms, trainEnd: 30 * ms, Train: 20 * ms}},
		Epochs: []EpochRec{{Epoch: 1}}}
	h := hostModel{cores: 1, procs: 1, par: 1}
	s := recordedSpeeds(tr, h)
	// [0, 10) one thread: 1; [10, 20) two: 1/2; [20, 30) one: 1
	near(t, "prep", s.prep[0], 0.75)
	near(t, "train", s.train[0], 0.75)
	near(t, "gap", s.gap[0], 1)
	near(t, "no eval", s.eval[0], 1)
}

func TestStandardScenarios(t *testing.T) {
	labels := func(ss []Scenario) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Label())
		}
		return out
	}
	sampled := journal{cpus: 2, threads: 1, epochs: 2, batches: 2, sample: ms, transfer: ms, step: ms, eval: ms}.trace()
	got := labels(Standard(sampled, 0.4))
	want := []string{"sample free", "transfer free", "train free", "eval free", "2 workers, prefetch 4", "eval overlapped", "cache 40 % hits"}
	if len(got) != len(want) {
		t.Fatalf("scenarios %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("scenario %d %q, want %q", i, got[i], want[i])
		}
	}
	// full batch: nothing to sample on workers; no evaluation: nothing to overlap
	full := journal{cpus: 2, threads: 1, epochs: 2, batches: 1, transfer: ms, step: ms}.trace()
	if got := labels(Standard(full, 0)); len(got) != 4 {
		t.Errorf("full-batch scenarios %q", got)
	}
	if n := len(NewModel(sampled).Table(0.4)); n != 7 {
		t.Errorf("table of %d rows", n)
	}
}

func TestUnmodeledKeys(t *testing.T) {
	a := json.RawMessage(`{"hidden":64,"sampler_workers":0,"mem_guard":"","epochs":5}`)
	b := json.RawMessage(`{"hidden":64,"sampler_workers":2,"mem_guard":"split","epochs":5,"cache_bytes":"20%"}`)
	if got := unmodeled(a, b); len(got) != 1 || got[0] != "mem_guard" {
		t.Errorf("unmodeled %v", got)
	}
	if got := unmodeled(a, a); got != nil {
		t.Errorf("unmodeled of the same config %v", got)
	}
}
