package gpubreak

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"

	"github.com/gnnscope/gnnscope/profile"
)

// Step is one step's breakdown; times in ns.
type Step struct {
	Epoch   int   `json:"epoch"`
	Batch   int   `json:"batch"`
	Window  int64 `json:"window_ns"`
	Idle    int64 `json:"idle_ns"`
	Compute int64 `json:"compute_ns"`
	Copy    int64 `json:"copy_ns"`
	Overlap int64 `json:"copy_while_compute_ns"`
	Kernels int   `json:"kernels"`
	Copies  int   `json:"copies"`
}

// Kernel is one kernel name's total.
type Kernel struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Total int64  `json:"total_ns"`
	// Short counts the launches whose kernel ran for less time than the
	// runtime call that launched it.
	Short int `json:"short"`
}

// Breakdown is a run's GPU breakdown.
type Breakdown struct {
	Steps []Step `json:"steps"` // by epoch and batch
	Total Step   `json:"total"` // the steps summed (Epoch, Batch 0)
	// Top are the kernels by total time, longest first; ShortTop those
	// with the most short launches, most first.
	Top      []Kernel `json:"top_kernels"`
	ShortTop []Kernel `json:"short_kernels"`
	// Short counts kernels shorter than their launch; Launched those
	// whose launch's duration is known.
	Short    int `json:"short"`
	Launched int `json:"launched"`
}

type stepKey struct{ epoch, batch int }

// maxTrains bounds the train extents kept (a run of that many batches
// and more keeps the first): 32 bytes and a map entry each, the only
// memory a run without GPU spans costs.
const maxTrains = 1 << 20

// span is a GPU interval.
type span struct{ s, e int64 }

type stepAcc struct {
	comp, copy   []span // merged into their unions by Result
	nComp, nCopy int
	lo, hi       int64
	has          bool
}

// Builder accumulates events into a Breakdown.
type Builder struct {
	steps   map[stepKey]*stepAcc
	trains  map[stepKey]span // the train spans' extents, by step
	kernels map[string]*Kernel
	short   int
	known   int
	gpu     bool
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{steps: map[stepKey]*stepAcc{}, trains: map[stepKey]span{}, kernels: map[string]*Kernel{}}
}

// Kinds of GPU work.
const (
	none = iota
	compute
	copying
)

// classify tells what a span did on the GPU.
func classify(e *profile.Event) int {
	if bytes.Contains(e.Attrs, []byte(`"kind":"kernel"`)) {
		return compute
	}
	if bytes.Contains(e.Attrs, []byte(`"kind":"memcpy"`)) || bytes.Contains(e.Attrs, []byte(`"kind":"memset"`)) {
		return copying
	}
	_, lane, _ := profile.SplitRankLane(e.Lane)
	switch lane {
	case profile.LaneGPUCompute:
		return compute
	case profile.LaneGPUCopy:
		return copying
	}
	return none
}

// Add folds one event in.
func (b *Builder) Add(e *profile.Event) {
	if e.T != profile.TypeSpan || e.Dur < 0 {
		return
	}
	k := classify(e)
	_, lane, _ := profile.SplitRankLane(e.Lane)
	train := k == none && e.Name == profile.StageTrain && lane == profile.LaneCompute
	if k == none && !train {
		return
	}
	key := stepKey{e.Epoch, e.Batch}
	end := e.Start + e.Dur
	if train {
		w, ok := b.trains[key]
		if !ok && len(b.trains) >= maxTrains {
			return
		}
		if !ok {
			w = span{e.Start, end}
		}
		b.trains[key] = span{min(w.s, e.Start), max(w.e, end)}
		return
	}
	a := b.steps[key]
	if a == nil {
		a = &stepAcc{}
		b.steps[key] = a
	}
	if !a.has {
		a.lo, a.hi, a.has = e.Start, end, true
	}
	a.lo, a.hi = min(a.lo, e.Start), max(a.hi, end)
	switch k {
	case compute:
		b.gpu = true
		a.comp = append(a.comp, span{e.Start, end})
		a.nComp++
		b.kernel(e)
	case copying:
		b.gpu = true
		a.copy = append(a.copy, span{e.Start, end})
		a.nCopy++
	}
}

// kernel counts a kernel by name, and its launch.
func (b *Builder) kernel(e *profile.Event) {
	kn := b.kernels[e.Name]
	if kn == nil {
		kn = &Kernel{Name: e.Name}
		b.kernels[e.Name] = kn
	}
	kn.Count++
	kn.Total += e.Dur
	if l, ok := attrInt(e.Attrs, "launch_ns"); ok {
		b.known++
		if e.Dur < l {
			b.short++
			kn.Short++
		}
	}
}

// attrInt finds "key":<integer> in attrs written by profile.Attrs.
func attrInt(attrs []byte, key string) (int64, bool) {
	pat := `"` + key + `":`
	i := bytes.Index(attrs, []byte(pat))
	if i < 0 {
		return 0, false
	}
	rest := attrs[i+len(pat):]
	j := 0
	for j < len(rest) && (rest[j] == '-' || (rest[j] >= '0' && rest[j] <= '9')) {
		j++
	}
	v, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return v, err == nil
}

// Result returns the breakdown with the top kernels (nil when no span
// ran on a GPU). It may be called again after more events: each call
// merges the steps' intervals into their unions, which keeps a live
// run's memory to the unions.
func (b *Builder) Result(top int) *Breakdown {
	if !b.gpu {
		return nil
	}
	out := &Breakdown{Short: b.short, Launched: b.known}
	for k, a := range b.steps {
		if a.nComp == 0 && a.nCopy == 0 {
			continue // a step without GPU work
		}
		a.comp, a.copy = union(a.comp), union(a.copy)
		comp, cp := a.comp, a.copy
		lo, hi := a.lo, a.hi
		if w, ok := b.trains[k]; ok {
			lo, hi = min(lo, w.s), max(hi, w.e)
		}
		st := Step{Epoch: k.epoch, Batch: k.batch, Window: hi - lo, Compute: length(comp), Copy: length(cp),
			Overlap: intersect(comp, cp), Kernels: a.nComp, Copies: a.nCopy}
		st.Idle = st.Window - (st.Compute + st.Copy - st.Overlap)
		out.Steps = append(out.Steps, st)
		t := &out.Total
		t.Window += st.Window
		t.Idle += st.Idle
		t.Compute += st.Compute
		t.Copy += st.Copy
		t.Overlap += st.Overlap
		t.Kernels += st.Kernels
		t.Copies += st.Copies
	}
	slices.SortFunc(out.Steps, func(x, y Step) int {
		return cmp.Or(cmp.Compare(x.Epoch, y.Epoch), cmp.Compare(x.Batch, y.Batch))
	})
	ks := make([]Kernel, 0, len(b.kernels))
	for _, k := range b.kernels {
		ks = append(ks, *k)
	}
	slices.SortFunc(ks, func(x, y Kernel) int {
		return cmp.Or(cmp.Compare(y.Total, x.Total), cmp.Compare(x.Name, y.Name))
	})
	out.Top = ks[:min(top, len(ks))]
	short := slices.DeleteFunc(slices.Clone(ks), func(k Kernel) bool { return k.Short == 0 })
	slices.SortFunc(short, func(x, y Kernel) int {
		return cmp.Or(cmp.Compare(y.Short, x.Short), cmp.Compare(x.Name, y.Name))
	})
	out.ShortTop = short[:min(top, len(short))]
	return out
}

// union sorts spans and merges those that overlap or touch.
func union(sp []span) []span {
	slices.SortFunc(sp, func(a, b span) int { return cmp.Compare(a.s, b.s) })
	out := sp[:0]
	for _, s := range sp {
		if n := len(out); n > 0 && s.s <= out[n-1].e {
			out[n-1].e = max(out[n-1].e, s.e)
			continue
		}
		out = append(out, s)
	}
	return out
}

func length(u []span) int64 {
	var n int64
	for _, s := range u {
		n += s.e - s.s
	}
	return n
}

// intersect returns the length of the intersection of two unions.
func intersect(a, b []span) int64 {
	var n int64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		lo, hi := max(a[i].s, b[j].s), min(a[i].e, b[j].e)
		if hi > lo {
			n += hi - lo
		}
		if a[i].e < b[j].e {
			i++
		} else {
			j++
		}
	}
	return n
}
