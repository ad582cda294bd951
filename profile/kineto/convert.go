package kineto

import (
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/profile"
)

// maxDepth bounds the nesting tracked per thread.
const maxDepth = 256

// Options shape a conversion.
type Options struct {
	// Origin is the trace time (as Index.Abs gives it) that becomes 0 on
	// the run's clock.
	Origin int64
	// Stages maps the trace's names onto gnnscope's stages (DataLoader
	// next: wait, Optimizer.step: step, autograd functions: backward,
	// HtoD copies: transfer) and adds a train span on lane compute for
	// every ProfilerStep (from the end of its DataLoader wait), so that
	// the stage ledger works on a trace alone. Off when the trace joins a
	// run that records its own stages.
	Stages bool
	// Epoch is every event's epoch.
	Epoch int
	// Phase is the memory events' phase (profile.PhaseTrain if empty).
	Phase string
}

// Stats count what a conversion produced.
type Stats struct {
	Spans, Mem, Samples, Skipped int
}

// Abs returns a trace time on the trace's absolute clock (ns): ts plus
// baseTimeNanoseconds where the trace has it.
func (ix *Index) Abs(ts int64) int64 {
	if ix.Meta.HasBase {
		return ts + ix.Meta.Base
	}
	return ts
}

// WallClock reports whether the trace's absolute times read as ns since
// 1970 (after 2001): Kineto traces' do, the legacy profiler's start at 0.
func (ix *Index) WallClock() bool { return ix.HasTimes && ix.Abs(ix.MinTs) > 1e18 }

// converter holds the second pass's state.
type converter struct {
	ix      *Index
	opts    Options
	emit    func(*profile.Event) error
	stacks  map[string][]int64 // per cpu lane: ends of the open spans
	starts  map[string]int64   // per cpu lane: the last start
	mem     map[int]*memAcc
	lastRes int64
	st      Stats
	// owners[i] is the innermost operator met so far that holds the
	// runtime call ix.bare[i]: its start and its External id (or one made
	// up from its event index).
	owners []owner
	index  int // the event's index in the trace
}

type owner struct {
	start, ext int64
	set        bool
}

// memAcc is one step's memory samples.
type memAcc struct{ peak, last int64 }

// Convert reads the trace a second time (r from its start) and emits its
// events on the run's clock: spans, the memory series (a mem event per
// step: the peak and last Total Allocated; a gpu sample whenever a CUDA
// device's Total Reserved changes). emit may keep nothing it is given.
func Convert(r *Reader, ix *Index, opts Options, emit func(*profile.Event) error) (Stats, error) {
	c := &converter{ix: ix, opts: opts, emit: emit, stacks: map[string][]int64{},
		starts: map[string]int64{}, mem: map[int]*memAcc{}, lastRes: -1}
	if c.opts.Phase == "" {
		c.opts.Phase = profile.PhaseTrain
	}
	if len(ix.bare) > 0 {
		c.owners = make([]owner, len(ix.bare))
	}
	var ev Raw
	for {
		ok, err := r.Next(&ev)
		if err != nil {
			return c.st, err
		}
		if !ok {
			break
		}
		c.index = r.Index()
		if err := c.event(&ev); err != nil {
			return c.st, err
		}
	}
	return c.st, c.flushMem()
}

func (c *converter) event(ev *Raw) error {
	switch ev.Ph {
	case "X":
		return c.span(ev)
	case "i", "I":
		if ev.Name == "[memory]" && ev.Args.HasMem {
			return c.memory(ev)
		}
	}
	c.st.Skipped++
	return nil
}

// batchAt returns the ProfilerStep number holding t, -1 if none.
func (c *converter) batchAt(t int64) int {
	if i := c.ix.stepAt(t); i >= 0 {
		return c.ix.Steps[i].N
	}
	return -1
}

func (c *converter) span(ev *Raw) error {
	k := kindOf(ev)
	if k == kindSkip {
		c.st.Skipped++
		return nil
	}
	lane := laneOf(ev, k)
	e := profile.Event{T: profile.TypeSpan, Name: ev.Name, Lane: lane, Epoch: c.opts.Epoch,
		Start: c.ix.Abs(ev.Ts) - c.opts.Origin, Dur: ev.Dur}
	attrs := []profile.Attr{{Key: "kind", Value: k}}
	at := ev.Ts
	if gpuKind(k) || k == KindRuntime {
		link, ok := ev.Args.Correlation, ev.Args.HasCorrelation
		if !ok {
			link, ok = c.ix.flowAt(ev.Pid, ev.Tid, ev.Ts)
		}
		if ok {
			attrs = append(attrs, profile.Attr{Key: "link", Value: link})
			if l, found := c.ix.launchOf(link); found && gpuKind(k) {
				at = l.ts
				attrs = append(attrs, profile.Attr{Key: "launch_ns", Value: l.dur})
			}
		}
	}
	if gpuKind(k) {
		attrs = append(attrs, profile.Attr{Key: "device", Value: device(ev)}, profile.Attr{Key: "stream", Value: stream(ev)})
	}
	if ext, ok := c.external(ev, k); ok {
		attrs = append(attrs, profile.Attr{Key: "ext", Value: ext})
	}
	if k == KindCPU {
		if d, ok := c.depth(lane, ev.Ts, ev.Ts+ev.Dur); ok {
			attrs = append(attrs, profile.Attr{Key: "depth", Value: d})
		}
	}
	e.Batch = c.batchAt(at)
	n, named := stepNumber(ev.Name)
	isStep := named && k != KindGPUAnnotation // the GPU's copy of a step is no batch of its own
	if named {
		e.Name = "ProfilerStep"
	}
	if isStep {
		e.Batch = n
	}
	if c.opts.Stages {
		if st := stageOf(ev, k); st != "" {
			e.Name = st
		}
	}
	if e.Name != ev.Name {
		attrs = append(attrs, profile.Attr{Key: "op", Value: ev.Name})
	}
	e.Attrs = profile.Attrs(attrs...)
	if err := c.emit(&e); err != nil {
		return err
	}
	c.st.Spans++
	if isStep && c.opts.Stages {
		return c.train(ev, n)
	}
	return nil
}

// train emits the train span of step n: on lane compute, from the end of
// the DataLoader wait that opens the step to the step's end.
func (c *converter) train(ev *Raw, n int) error {
	from := ev.Ts
	if i := c.ix.stepAt(ev.Ts); i >= 0 && c.ix.Steps[i].Start == ev.Ts {
		from = min(max(from, c.ix.Steps[i].WaitEnd), ev.Ts+ev.Dur)
	}
	e := profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute,
		Epoch: c.opts.Epoch, Batch: n, Start: c.ix.Abs(from) - c.opts.Origin, Dur: ev.Ts + ev.Dur - from,
		Attrs: profile.Attrs(profile.Attr{Key: "op", Value: ev.Name})}
	c.st.Spans++
	return c.emit(&e)
}

// external returns the External id an event shares with the operator
// that made it: its own, or, for a runtime call without one, that of
// the innermost operator holding it on its thread (time containment);
// an operator without one that holds such a call gets one made up from
// its event index (negative, never a real id).
func (c *converter) external(ev *Raw, k string) (int64, bool) {
	if ev.Args.HasExternal {
		if k == KindCPU {
			_, _ = c.own(ev, ev.Args.External)
		}
		return ev.Args.External, true
	}
	if len(c.owners) == 0 {
		return 0, false
	}
	switch k {
	case KindCPU:
		return c.own(ev, -int64(c.index))
	case KindRuntime:
		i, j := c.ix.bareIn(c.ix.thread(ev.Pid, ev.Tid), ev.Ts, ev.Ts+1)
		if i < j && c.owners[i].set {
			return c.owners[i].ext, true
		}
	}
	return 0, false
}

// own records an operator as the owner of the runtime calls it holds
// where it is the innermost so far; ok when it holds any.
func (c *converter) own(ev *Raw, ext int64) (int64, bool) {
	if len(c.owners) == 0 {
		return ext, false
	}
	i, j := c.ix.bareIn(c.ix.thread(ev.Pid, ev.Tid), ev.Ts, ev.Ts+max(ev.Dur, 1))
	held := i < j
	for ; i < j; i++ {
		if o := &c.owners[i]; !o.set || ev.Ts >= o.start {
			*o = owner{start: ev.Ts, ext: ext, set: true}
		}
	}
	return ext, held
}

// stageOf returns the stage a trace event stands for ("" for none).
func stageOf(ev *Raw, k string) string {
	switch {
	case isLoaderWait(ev.Name):
		return profile.StageWait
	case strings.HasPrefix(ev.Name, "Optimizer.step#"):
		return profile.StageStep
	case k == KindCPU && strings.HasPrefix(ev.Name, "autograd::engine::evaluate_function: "):
		return profile.StageBackward
	case k == KindMemcpy && strings.Contains(ev.Name, "HtoD"):
		return profile.StageTransfer
	}
	return ""
}

// depth returns how many spans of the lane hold [start, end): the spans
// of a thread come in order of their starts, so a stack of open ends
// tells. Out of order, the depth is unknown (false) and the stack starts
// again.
func (c *converter) depth(lane string, start, end int64) (int, bool) {
	s := c.stacks[lane]
	last, seen := c.starts[lane]
	c.starts[lane] = start
	if seen && start < last {
		c.stacks[lane] = append(s[:0], end)
		return 0, false
	}
	for len(s) > 0 && s[len(s)-1] <= start {
		s = s[:len(s)-1]
	}
	d := len(s)
	if len(s) < maxDepth {
		s = append(s, end)
	}
	c.stacks[lane] = s
	return d, true
}

// memory folds a [memory] event of the chosen device into its step.
func (c *converter) memory(ev *Raw) error {
	a := ev.Args
	if a.DevType != c.ix.MemType || a.DevID != c.ix.MemID {
		c.st.Skipped++
		return nil
	}
	b := c.batchAt(ev.Ts)
	m := c.mem[b]
	if m == nil {
		m = &memAcc{}
		c.mem[b] = m
	}
	m.peak, m.last = max(m.peak, a.Allocated), a.Allocated
	if a.DevType != 1 || a.Reserved == c.lastRes {
		return nil
	}
	c.lastRes = a.Reserved
	var total int64
	for _, d := range c.ix.Meta.Devices {
		if d.ID == a.DevID {
			total = d.Memory
		}
	}
	c.st.Samples++
	return c.emit(&profile.Event{T: profile.TypeGPU, Ts: c.ix.Abs(ev.Ts) - c.opts.Origin,
		Used: a.Reserved, Total: total, Util: -1})
}

// flushMem emits the steps' mem events, by step.
func (c *converter) flushMem() error {
	keys := make([]int, 0, len(c.mem))
	for b := range c.mem {
		keys = append(keys, b)
	}
	slices.Sort(keys)
	for _, b := range keys {
		m := c.mem[b]
		e := profile.Event{T: profile.TypeMem, Epoch: c.opts.Epoch, Batch: b, Phase: c.opts.Phase, Peak: m.peak, Live: m.last}
		if err := c.emit(&e); err != nil {
			return err
		}
		c.st.Mem++
	}
	return nil
}
