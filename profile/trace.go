package profile

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Chrome Trace Event export.
//
// A Trace turns the events of one or more runs into the Chrome Trace Event
// JSON format that ui.perfetto.dev and chrome://tracing open:
//
//   - one process (pid) per run, named with process_name metadata after the
//     run, its variant and its session;
//   - one thread (tid) per lane and track, named with thread_name metadata
//     ("compute", "compute #2", "sampler/0", ...);
//   - spans as complete events ("ph":"X"), ts and dur in microseconds with
//     nanosecond precision, epoch, batch and attrs as args;
//   - mem, gpu, stale and hist_err samples and metrics as counter events
//     ("ph":"C"), each series in time order;
//   - oom events (failed allocations), guard events (batches the memory
//     guard reshaped so that nothing failed: "guard (split)") and the
//     run's end, as instant events ("ph":"i").
//
// Viewers mis-render slices that overlap on one thread without nesting
// (Perfetto drops them), so the spans of each lane are spread over tracks
// greedily: a span goes on the first track where it is disjoint from, or
// properly nested in, what is already there, else on a new track. A train
// span and its forward/backward/step children stay on one track; an
// overlapped evaluation or prefetched sampling that crosses them gets
// "compute #2".
//
// Events without a time of their own (mem, metric, oom, guard, stale,
// hist_err, run_end) are placed at the latest end of the run's spans recorded
// before them: the recorder writes spans when they end and events in
// recording order, so that is when they were recorded.

// TraceRun is one run of a Trace: its process. Add its events in journal
// order.
type TraceRun struct {
	// Name, Variant and Session name the process; empty fields are taken
	// from the run's run_start event.
	Name    string
	Variant string
	Session string
	// Offset is added to every time of the run, in nanoseconds (e.g. the
	// run's wall-clock start relative to the earliest run's, to show runs
	// as they happened rather than all from zero). A time that the offset
	// would carry past the int64 range stays at its edge.
	Offset int64

	lanes    map[string][]traceSpan
	series   map[string][]traceSample
	order    []string // series names in order of appearance
	instants []traceInstant
	now      int64 // latest span end seen
	spans    int
	prefix   string // of counter and instant names (Part)
}

type traceSpan struct {
	name         string
	epoch, batch int32
	seq          int32 // order of arrival, for stable ties
	start, dur   int64
	attrs        json.RawMessage
}

type traceSample struct {
	ts    int64
	key   string // the arg's name
	value float64
}

type traceInstant struct {
	name string
	ts   int64
	args []byte // a JSON object
}

// Trace collects runs and writes them as one Chrome trace.
type Trace struct {
	runs []*TraceRun
}

// NewTrace returns an empty trace.
func NewTrace() *Trace { return &Trace{} }

// NewRun adds a run (a process) to the trace and returns it; add its
// events with Add.
func (t *Trace) NewRun(name, variant, session string) *TraceRun {
	r := &TraceRun{Name: name, Variant: variant, Session: session,
		lanes: map[string][]traceSpan{}, series: map[string][]traceSample{}}
	t.runs = append(t.runs, r)
	return r
}

// Spans returns the number of spans added to the run.
func (r *TraceRun) Spans() int { return r.spans }

// Add adds one event of the run, in journal order. The event is not
// retained (raw attrs are, by reference).
func (r *TraceRun) Add(e *Event) {
	switch e.T {
	case TypeRunStart:
		r.addRunStart(e)
	case TypeSpan:
		r.addSpan(e)
	case TypeMem:
		r.addMem(e)
	case TypeGPU:
		r.addGPU(e)
	case TypeMetric:
		if e.Name != "" {
			r.sample(e.Name, "value", r.now, e.Value)
		}
	case TypeStale:
		l := strconv.Itoa(e.Layer)
		r.sample("staleness mean L"+l, "steps", r.now, e.Mean)
		r.sample("staleness max L"+l, "steps", r.now, e.Max)
	case TypeCache:
		r.addCache(e)
	case TypeHistErr:
		r.sample("history rel_err L"+strconv.Itoa(e.Layer), "value", r.now, e.RelErr)
	case TypeOOM:
		name := "OOM"
		if e.Kind() == TypeGuard { // an older journal's guard action
			name = "guard"
		}
		r.addAlloc(name, e, "requested", e.Requested, "live", e.Live)
	case TypeGuard:
		r.addAlloc("guard", e, "predicted", e.Predicted, "actual", e.Actual)
	case TypeRunEnd:
		r.addRunEnd(e)
	}
}

// addRunStart names the run from its run_start where the trace did not.
func (r *TraceRun) addRunStart(e *Event) {
	if r.Name == "" {
		r.Name = e.Run
	}
	if r.Variant == "" {
		r.Variant = e.Variant
	}
	if r.Session == "" {
		r.Session = e.Session
	}
}

// addSpan files a span under its lane.
func (r *TraceRun) addSpan(e *Event) {
	// A span that would end past the int64 range ends at its edge,
	// so that tracks are assigned from the ends the trace shows.
	dur := addSat(e.Start, max(e.Dur, 0)) - e.Start
	r.lanes[e.Lane] = append(r.lanes[e.Lane], traceSpan{name: e.Name, epoch: clamp32(e.Epoch), batch: clamp32(e.Batch),
		seq: int32(min(r.spans, math.MaxInt32)), start: e.Start, dur: dur, attrs: e.Attrs})
	r.spans++
	r.now = max(r.now, e.Start+dur)
}

// addMem adds a batch's memory figures as counters.
func (r *TraceRun) addMem(e *Event) {
	r.sample("memory peak", "bytes", r.now, float64(e.Peak))
	r.sample("memory live", "bytes", r.now, float64(e.Live))
	if e.Budget > 0 {
		r.sample("memory budget", "bytes", r.now, float64(e.Budget))
	}
	if e.Predicted > 0 {
		r.sample("memory predicted", "bytes", r.now, float64(e.Predicted))
	}
}

// addGPU adds a device sample as counters at its own time.
func (r *TraceRun) addGPU(e *Event) {
	r.sample("gpu used", "bytes", e.Ts, float64(e.Used))
	if e.Util >= 0 { // -1: not measured
		r.sample("gpu util", "util", e.Ts, e.Util)
	}
}

// addCache adds a batch's feature-cache outcome as counters.
func (r *TraceRun) addCache(e *Event) {
	if n := e.Hits + e.Misses; n > 0 {
		r.sample("cache hit rate", "value", r.now, float64(e.Hits)/float64(n))
	}
	r.sample("cache bytes h2d", "bytes", r.now, float64(e.BytesH2D))
}

// addAlloc adds an oom or guard event as an instant named name (and its
// action) whose args are the batch, the two figures the event type
// carries, the budget and the action.
func (r *TraceRun) addAlloc(name string, e *Event, k1 string, v1 int64, k2 string, v2 int64) {
	args := []byte(`{"epoch":`)
	args = strconv.AppendInt(args, int64(e.Epoch), 10)
	args = append(args, `,"batch":`...)
	args = strconv.AppendInt(args, int64(e.Batch), 10)
	args = append(args, `,"`+k1+`":`...)
	args = strconv.AppendInt(args, v1, 10)
	args = append(args, `,"`+k2+`":`...)
	args = strconv.AppendInt(args, v2, 10)
	args = append(args, `,"budget":`...)
	args = strconv.AppendInt(args, e.Budget, 10)
	args = append(args, `,"action":`...)
	args = appendString(args, e.Action)
	args = append(args, '}')
	if e.Action != "" {
		name += " (" + e.Action + ")"
	}
	r.instants = append(r.instants, traceInstant{name: r.prefix + name, ts: r.now, args: args})
}

// addRunEnd adds the run's end as an instant with its status and error.
func (r *TraceRun) addRunEnd(e *Event) {
	args := append([]byte(`{"status":`), appendString(nil, string(e.Status))...)
	if e.Error != "" {
		args = append(args, `,"error":`...)
		args = appendString(args, e.Error)
	}
	args = append(args, '}')
	r.instants = append(r.instants, traceInstant{name: r.prefix + "run end: " + string(e.Status), ts: r.now, args: args})
}

func clamp32(v int) int32 { return int32(min(max(v, math.MinInt32), math.MaxInt32)) }

func (r *TraceRun) sample(name, key string, ts int64, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return // counters must be numbers
	}
	name = r.prefix + name
	s, ok := r.series[name]
	if !ok {
		r.order = append(r.order, name)
	}
	r.series[name] = append(s, traceSample{ts: ts, key: key, value: v})
}

// laneRank orders lanes: compute, copy, eval, samplers by number, others
// by name.
func laneRank(lane string) (int, int) {
	switch lane {
	case LaneCompute:
		return 0, 0
	case LaneCopy:
		return 1, 0
	case LaneEval:
		return 2, 0
	}
	if IsSamplerLane(lane) {
		if n, err := strconv.Atoi(lane[len("sampler/"):]); err == nil {
			return 3, n
		}
	}
	return 4, 0
}

// AssignTracks spreads spans over tracks so that on every track any two
// spans are disjoint or one contains the other: spans are taken by start
// (longer first on ties, so parents precede their children), and each goes
// on the first track whose innermost open span contains it, or that has no
// open span; otherwise on a new track. starts and durs describe the spans;
// the result gives each span's track, from 0.
func AssignTracks(starts, durs []int64) []int {
	idx := make([]int, len(starts))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if starts[a] != starts[b] {
			return cmpInt64(starts[a], starts[b])
		}
		return cmpInt64(durs[b], durs[a])
	})
	track := make([]int, len(starts))
	var stacks [][]int64 // per track: ends of the open spans, innermost last
	for _, i := range idx {
		start, end := starts[i], addSat(starts[i], max(durs[i], 0))
		placed := false
		for k := range stacks {
			st := stacks[k]
			for len(st) > 0 && st[len(st)-1] <= start {
				st = st[:len(st)-1]
			}
			stacks[k] = st
			if len(st) == 0 || end <= st[len(st)-1] {
				stacks[k] = append(st, end)
				track[i] = k
				placed = true
				break
			}
		}
		if !placed {
			stacks = append(stacks, []int64{end})
			track[i] = len(stacks) - 1
		}
	}
	return track
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// appendMicros writes ns as microseconds with three decimals.
func appendMicros(dst []byte, ns int64) []byte {
	u := uint64(ns) // the magnitude, exact even for math.MinInt64
	if ns < 0 {
		dst = append(dst, '-')
		u = -u
	}
	dst = strconv.AppendUint(dst, u/1000, 10)
	frac := u % 1000
	if frac == 0 {
		return dst
	}
	return append(dst, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

// traceWriter appends JSON to a buffered writer, remembering the first
// error.
type traceWriter struct {
	w     *bufio.Writer
	buf   []byte
	n     int64
	err   error
	first bool
}

func (tw *traceWriter) event(b []byte) {
	if tw.err != nil {
		return
	}
	if !tw.first {
		_, tw.err = tw.w.WriteString(",\n")
		tw.n += 2
	}
	tw.first = false
	var n int
	n, tw.err = tw.w.Write(b)
	tw.n += int64(n)
}

// WriteTo writes the trace as one JSON object {"traceEvents": [...],
// "displayTimeUnit": "ms"}. It returns the bytes written.
func (t *Trace) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	tw := &traceWriter{w: bw, first: true}
	head := "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
	if _, err := bw.WriteString(head); err != nil {
		return 0, err
	}
	tw.n = int64(len(head))
	tid := 0 // thread ids are unique across the trace, not only per process
	for i, r := range t.runs {
		tid = r.write(tw, i+1, tid)
	}
	if tw.err != nil {
		return tw.n, tw.err
	}
	tail := "\n]}\n"
	if _, err := bw.WriteString(tail); err != nil {
		return tw.n, err
	}
	tw.n += int64(len(tail))
	return tw.n, bw.Flush()
}

// processName is the run's process name: "RUN (variant V, session S)".
func (r *TraceRun) processName() string {
	name := r.Name
	if name == "" {
		name = "run"
	}
	var parts []string
	if r.Variant != "" {
		parts = append(parts, "variant "+r.Variant)
	}
	if r.Session != "" {
		parts = append(parts, "session "+r.Session)
	}
	if len(parts) > 0 {
		name += " (" + strings.Join(parts, ", ") + ")"
	}
	return name
}

// metadata appends a metadata event ("ph":"M").
func metadata(b []byte, name string, pid, tid int, key string, value []byte) []byte {
	b = append(b, `{"name":"`...)
	b = append(b, name...)
	b = append(b, `","ph":"M","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"args":{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = append(b, value...)
	return append(b, "}}"...)
}

// writeMetadata writes a metadata event (see metadata).
func (tw *traceWriter) writeMetadata(name string, pid, tid int, key string, value []byte) {
	tw.buf = metadata(tw.buf[:0], name, pid, tid, key, value)
	tw.event(tw.buf)
}

// write writes the run as process pid; its threads get ids after tid. It
// returns the last thread id used.
func (r *TraceRun) write(tw *traceWriter, pid, tid int) int {
	tw.writeMetadata("process_name", pid, 0, "name", appendString(nil, r.processName()))
	tw.writeMetadata("process_sort_index", pid, 0, "sort_index", strconv.AppendInt(nil, int64(pid), 10))
	instantTid := 0
	firstTid := tid
	for _, lane := range r.sortedLanes() {
		if lane == LaneCompute {
			instantTid = tid + 1
		}
		tid += r.writeLane(tw, lane, pid, tid, tid+1-firstTid)
	}
	if len(r.instants) > 0 && instantTid == 0 {
		tid++
		instantTid = tid
		tw.writeMetadata("thread_name", pid, instantTid, "name", appendString(nil, "events"))
	}
	r.writeCounters(tw, pid)
	r.writeInstants(tw, pid, instantTid)
	return tid
}

// sortedLanes returns the run's lanes in display order (laneOrder).
func (r *TraceRun) sortedLanes() []string {
	lanes := make([]string, 0, len(r.lanes))
	for l := range r.lanes {
		lanes = append(lanes, l)
	}
	slices.SortFunc(lanes, laneOrder)
	return lanes
}

// writeLane writes the spans of lane on threads after tid, one for each
// track of overlapping spans, with sort indexes from sortIndex. It returns
// the number of threads.
func (r *TraceRun) writeLane(tw *traceWriter, lane string, pid, tid, sortIndex int) int {
	spans := r.lanes[lane]
	slices.SortFunc(spans, func(x, y traceSpan) int {
		if x.start != y.start {
			return cmpInt64(x.start, y.start)
		}
		if x.dur != y.dur {
			return cmpInt64(y.dur, x.dur)
		}
		return int(x.seq) - int(y.seq)
	})
	tracks, ntracks := spanTracks(spans)
	laneName := lane
	if laneName == "" {
		laneName = "(no lane)"
	}
	for k := range ntracks {
		name := laneName
		if k > 0 {
			name += " #" + strconv.Itoa(k+1)
		}
		tw.writeMetadata("thread_name", pid, tid+1+k, "name", appendString(nil, name))
		tw.writeMetadata("thread_sort_index", pid, tid+1+k, "sort_index", strconv.AppendInt(nil, int64(sortIndex+k), 10))
	}
	for i := range spans {
		tw.buf = appendSpan(tw.buf[:0], &spans[i], laneName, pid, tid+1+tracks[i], r.Offset)
		tw.event(tw.buf)
	}
	return ntracks
}

// spanTracks assigns sorted spans to tracks (see AssignTracks) and returns
// each span's track and the number of tracks.
func spanTracks(spans []traceSpan) ([]int, int) {
	starts := make([]int64, len(spans))
	durs := make([]int64, len(spans))
	for i, s := range spans {
		starts[i], durs[i] = s.start, s.dur
	}
	tracks := AssignTracks(starts, durs)
	ntracks := 0
	for _, k := range tracks {
		ntracks = max(ntracks, k+1)
	}
	return tracks, ntracks
}

// appendSpan appends span s of category cat as a complete event ("ph":"X")
// on thread tid, its times shifted by offset.
func appendSpan(b []byte, s *traceSpan, cat string, pid, tid int, offset int64) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, s.name)
	b = append(b, `,"cat":`...)
	b = appendString(b, cat)
	b = append(b, `,"ph":"X","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"ts":`...)
	b = appendMicros(b, addSat(s.start, offset))
	b = append(b, `,"dur":`...)
	b = appendMicros(b, s.dur)
	b = append(b, `,"args":{"epoch":`...)
	b = strconv.AppendInt(b, int64(s.epoch), 10)
	b = append(b, `,"batch":`...)
	b = strconv.AppendInt(b, int64(s.batch), 10)
	if len(s.attrs) > 0 {
		b = append(b, `,"attrs":`...)
		b = appendRaw(b, s.attrs)
	}
	return append(b, "}}"...)
}

// writeCounters writes every series' samples, in time order, as counter
// events ("ph":"C") of process pid.
func (r *TraceRun) writeCounters(tw *traceWriter, pid int) {
	for _, name := range r.order {
		samples := r.series[name]
		slices.SortStableFunc(samples, func(x, y traceSample) int { return cmpInt64(x.ts, y.ts) })
		for _, s := range samples {
			b := append(tw.buf[:0], `{"name":`...)
			b = appendString(b, name)
			b = append(b, `,"ph":"C","pid":`...)
			b = strconv.AppendInt(b, int64(pid), 10)
			b = append(b, `,"tid":0,"ts":`...)
			b = appendMicros(b, addSat(s.ts, r.Offset))
			b = append(b, `,"args":{`...)
			b = appendString(b, s.key)
			b = append(b, ':')
			b = appendFloat(b, s.value)
			tw.buf = append(b, "}}"...)
			tw.event(tw.buf)
		}
	}
}

// writeInstants writes the run's instant events ("ph":"i") on thread tid.
func (r *TraceRun) writeInstants(tw *traceWriter, pid, tid int) {
	for _, in := range r.instants {
		b := append(tw.buf[:0], `{"name":`...)
		b = appendString(b, in.name)
		b = append(b, `,"ph":"i","s":"t","pid":`...)
		b = strconv.AppendInt(b, int64(pid), 10)
		b = append(b, `,"tid":`...)
		b = strconv.AppendInt(b, int64(tid), 10)
		b = append(b, `,"ts":`...)
		b = appendMicros(b, addSat(in.ts, r.Offset))
		b = append(b, `,"args":`...)
		b = append(b, in.args...)
		tw.buf = append(b, '}')
		tw.event(tw.buf)
	}
}

// WriteTrace writes the runs' events (each a journal's events, in order)
// as one Chrome trace; runs are named from their run_start events.
func WriteTrace(w io.Writer, runs ...[]Event) error {
	t := NewTrace()
	for _, evs := range runs {
		r := t.NewRun("", "", "")
		for i := range evs {
			r.Add(&evs[i])
		}
	}
	_, err := t.WriteTo(w)
	return err
}
