package kineto

import (
	"hash/fnv"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
)

// MaxIndexed bounds each of the index's tables (launches, flow ends,
// steps, waits): past it, the rest is not indexed (their links and
// batches fall back to what the event itself says) and Index.Dropped
// counts them, so that memory stays bounded whatever the trace.
const MaxIndexed = 1 << 21

// Step is one ProfilerStep#N range, in the trace's times.
type Step struct {
	N          int
	Start, End int64
	// WaitEnd is the end of the DataLoader wait that opens the step
	// (Start when there is none).
	WaitEnd int64
}

// launch is a runtime call with a correlation id.
type launch struct {
	corr, ts, dur int64
}

// flowEnd is one end of a flow: where (thread and time) and its id.
type flowEnd struct {
	key uint64
	id  int64
}

// Index is what the first pass learns about a trace.
type Index struct {
	Meta   Meta
	Events int
	// MinTs and MaxTs are the earliest start and latest end of the
	// trace's timed events, as written.
	MinTs, MaxTs int64
	HasTimes     bool
	Steps        []Step // by start
	// MemType and MemID select the device whose [memory] events make the
	// memory series: the first CUDA device met, else the CPU.
	MemType, MemID int64
	HasMem         bool
	Kernels        int // kernel, memcpy and memset events
	Dropped        int // events left out of a full table

	launches []launch  // by corr
	flows    []flowEnd // by key
	// bare are the runtime calls without an External id, by thread and
	// time: the conversion links each to the innermost operator that
	// holds it on its thread.
	bare  []flowEnd // key: thread, id: ts
	waits [][2]int64
	seed  maphash.Seed
}

// Scan reads a whole trace once and indexes it.
func Scan(r *Reader) (*Index, error) {
	ix := &Index{seed: maphash.MakeSeed()}
	var ev Raw
	for {
		ok, err := r.Next(&ev)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		ix.add(&ev)
	}
	ix.Meta = r.Meta
	ix.finish()
	return ix, nil
}

func (ix *Index) add(ev *Raw) {
	ix.Events++
	switch ev.Ph {
	case "X":
		end := ev.Ts + ev.Dur
		if !ix.HasTimes {
			ix.MinTs, ix.MaxTs, ix.HasTimes = ev.Ts, end, true
		}
		ix.MinTs, ix.MaxTs = min(ix.MinTs, ev.Ts), max(ix.MaxTs, end)
	case "s", "f", "t":
		if ev.Cat == "fwdbwd" { // forward op to backward op: no launch
			return
		}
		if len(ix.flows) >= MaxIndexed {
			ix.Dropped++
			return
		}
		ix.flows = append(ix.flows, flowEnd{key: ix.where(ev.Pid, ev.Tid, ev.Ts), id: flowID(ev.ID)})
		return
	case "i", "I":
		if ev.Name == "[memory]" && ev.Args.HasMem && (!ix.HasMem || (ix.MemType != 1 && ev.Args.DevType == 1)) {
			ix.MemType, ix.MemID, ix.HasMem = ev.Args.DevType, ev.Args.DevID, true
		}
		return
	default:
		return
	}
	switch kindOf(ev) {
	case KindKernel, KindMemcpy, KindMemset:
		ix.Kernels++
	case KindRuntime:
		if !ev.Args.HasExternal {
			if len(ix.bare) >= MaxIndexed {
				ix.Dropped++
			} else {
				ix.bare = append(ix.bare, flowEnd{key: ix.thread(ev.Pid, ev.Tid), id: ev.Ts})
			}
		}
		if ev.Args.HasCorrelation {
			if len(ix.launches) >= MaxIndexed {
				ix.Dropped++
			} else {
				ix.launches = append(ix.launches, launch{ev.Args.Correlation, ev.Ts, ev.Dur})
			}
		}
	}
	host := kindOf(ev) == KindAnnotation || kindOf(ev) == KindCPU
	if n, ok := stepNumber(ev.Name); ok && host { // not the GPU's copy of the range
		if len(ix.Steps) >= MaxIndexed {
			ix.Dropped++
		} else {
			ix.Steps = append(ix.Steps, Step{N: n, Start: ev.Ts, End: ev.Ts + ev.Dur, WaitEnd: ev.Ts})
		}
	} else if isLoaderWait(ev.Name) {
		if len(ix.waits) >= MaxIndexed {
			ix.Dropped++
		} else {
			ix.waits = append(ix.waits, [2]int64{ev.Ts, ev.Ts + ev.Dur})
		}
	}
}

// finish sorts the tables and places each DataLoader wait in its step.
func (ix *Index) finish() {
	slices.SortFunc(ix.Steps, func(a, b Step) int { return cmp64(a.Start, b.Start) })
	slices.SortFunc(ix.launches, func(a, b launch) int { return cmp64(a.corr, b.corr) })
	slices.SortFunc(ix.flows, cmpEnds)
	slices.SortFunc(ix.bare, cmpEnds)
	slices.SortFunc(ix.waits, func(a, b [2]int64) int { return cmp64(a[0], b[0]) })
	seen := make([]bool, len(ix.Steps))
	for _, w := range ix.waits {
		// the first wait that starts in a step opens it
		if i := ix.stepAt(w[0]); i >= 0 && !seen[i] {
			seen[i] = true
			s := &ix.Steps[i]
			s.WaitEnd = min(max(s.WaitEnd, w[1]), s.End)
		}
	}
	ix.waits = nil
}

// stepAt returns the index of the step whose range holds t (the latest
// starting one), -1 if none.
func (ix *Index) stepAt(t int64) int {
	i, _ := slices.BinarySearchFunc(ix.Steps, t, func(s Step, t int64) int {
		if s.Start <= t {
			return -1
		}
		return 1
	})
	for j := i - 1; j >= 0 && j >= i-4; j-- { // nested or overlapping steps: look a little back
		if ix.Steps[j].Start <= t && t < ix.Steps[j].End {
			return j
		}
	}
	return -1
}

// launchOf returns the runtime call of a correlation id.
func (ix *Index) launchOf(corr int64) (launch, bool) {
	i, ok := slices.BinarySearchFunc(ix.launches, corr, func(l launch, c int64) int { return cmp64(l.corr, c) })
	if !ok {
		return launch{}, false
	}
	return ix.launches[i], true
}

// flowAt returns the id of a flow that ends on thread (pid, tid) at ts.
func (ix *Index) flowAt(pid, tid string, ts int64) (int64, bool) {
	if len(ix.flows) == 0 {
		return 0, false
	}
	k := ix.where(pid, tid, ts)
	i, ok := slices.BinarySearchFunc(ix.flows, k, func(f flowEnd, k uint64) int {
		switch {
		case f.key < k:
			return -1
		case f.key > k:
			return 1
		}
		return 0
	})
	if !ok {
		return 0, false
	}
	return ix.flows[i].id, true
}

func cmpEnds(a, b flowEnd) int {
	if a.key != b.key {
		if a.key < b.key {
			return -1
		}
		return 1
	}
	return cmp64(a.id, b.id)
}

// bareIn returns the range [i, j) of ix.bare on a thread within [start, end).
func (ix *Index) bareIn(thread uint64, start, end int64) (int, int) {
	at := func(ts int64) int {
		i, _ := slices.BinarySearchFunc(ix.bare, flowEnd{key: thread, id: ts}, cmpEnds)
		return i
	}
	return at(start), at(end)
}

// thread hashes a thread.
func (ix *Index) thread(pid, tid string) uint64 {
	var h maphash.Hash
	h.SetSeed(ix.seed)
	h.WriteString(pid)
	h.WriteByte(0)
	h.WriteString(tid)
	return h.Sum64()
}

// where hashes a thread and a time.
func (ix *Index) where(pid, tid string, ts int64) uint64 {
	var h maphash.Hash
	h.SetSeed(ix.seed)
	h.WriteString(pid)
	h.WriteByte(0)
	h.WriteString(tid)
	h.WriteByte(0)
	h.WriteString(strconv.FormatInt(ts, 10))
	return h.Sum64()
}

// flowID is a flow's id as a number (its hash when not numeric).
func flowID(s string) int64 {
	if v, ok := parseInt(s); ok {
		return v
	}
	h := fnv.New64a()
	h.Write([]byte(s))
	return int64(h.Sum64() >> 1)
}

// stepNumber parses "ProfilerStep#N".
func stepNumber(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "ProfilerStep#")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// isLoaderWait reports whether an event is a DataLoader iterator's next.
func isLoaderWait(name string) bool {
	return strings.HasPrefix(name, "enumerate(DataLoader)") && strings.Contains(name, "__next__")
}

func cmp64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
