package analysis

import (
	"cmp"
	"encoding/json"
	"slices"
)

// Window is the ledger of one stretch of a run's wall time: the whole
// run, one epoch, or the setup before the first epoch. Times are in
// seconds.
type Window struct {
	StartS float64 `json:"start_s"` // from the run's start
	WallS  float64 `json:"wall_s"`

	// Busy is the union of each category's spans over all lanes (idle
	// and other: 0 and the union of other spans); Exposed the time the
	// category was the exposed one (see Category). Exposed adds up to
	// WallS.
	Busy    [NumCategories]float64 `json:"-"`
	Exposed [NumCategories]float64 `json:"-"`

	// CacheBusyS is the union of cache spans (the transfer's cache part);
	// CacheExposedS the part of the exposed transfer time during which a
	// cache span ran.
	CacheBusyS    float64 `json:"cache_busy_s"`
	CacheExposedS float64 `json:"cache_exposed_s"`

	// TrainerIdleS is the time the trainer's lane ran no span but a wait:
	// waiting for a batch or memory, or running nothing at all.
	TrainerIdleS float64 `json:"trainer_idle_s"`
	// DeviceBusyS is the union of device-side spans (gpu.*); Device
	// reports whether the window had any.
	DeviceBusyS float64 `json:"device_busy_s"`
	Device      bool    `json:"device"`
}

// StageTime is one category's figures in a window, in seconds.
type StageTime struct {
	BusyS    float64 `json:"busy_s"`
	ExposedS float64 `json:"exposed_s"`
	HiddenS  float64 `json:"hidden_s"`
	Share    float64 `json:"share"` // exposed over wall time
}

// MarshalJSON writes the window with its categories by name.
func (w Window) MarshalJSON() ([]byte, error) {
	type plain Window
	st := map[string]StageTime{}
	for _, c := range Categories() {
		st[c.String()] = StageTime{BusyS: w.Busy[c], ExposedS: w.Exposed[c], HiddenS: w.Hidden(c), Share: w.Share(c)}
	}
	return json.Marshal(struct {
		plain
		Stages map[string]StageTime `json:"stages"`
	}{plain(w), st})
}

// Hidden returns the busy time of c that was not exposed.
func (w *Window) Hidden(c Category) float64 { return max(w.Busy[c]-w.Exposed[c], 0) }

// Share returns c's exposed time over the wall time (0 for an empty
// window).
func (w *Window) Share(c Category) float64 {
	if w.WallS <= 0 {
		return 0
	}
	return w.Exposed[c] / w.WallS
}

// ExposedSum returns the sum of the exposed times (the wall time, up to
// rounding).
func (w *Window) ExposedSum() float64 {
	var s float64
	for _, v := range w.Exposed {
		s += v
	}
	return s
}

// add adds o's times to w (o follows w in time).
func (w *Window) add(o *Window) {
	if w.WallS == 0 && w.ExposedSum() == 0 {
		w.StartS = o.StartS
	}
	w.WallS += o.WallS
	for i := range w.Busy {
		w.Busy[i] += o.Busy[i]
		w.Exposed[i] += o.Exposed[i]
	}
	w.CacheBusyS += o.CacheBusyS
	w.CacheExposedS += o.CacheExposedS
	w.TrainerIdleS += o.TrainerIdleS
	w.DeviceBusyS += o.DeviceBusyS
	w.Device = w.Device || o.Device
}

// sub removes o's times from w (o is a part of w, at its start).
func (w *Window) sub(o *Window) {
	w.StartS += o.WallS
	w.WallS = max(w.WallS-o.WallS, 0)
	for i := range w.Busy {
		w.Busy[i] = max(w.Busy[i]-o.Busy[i], 0)
		w.Exposed[i] = max(w.Exposed[i]-o.Exposed[i], 0)
	}
	w.CacheBusyS = max(w.CacheBusyS-o.CacheBusyS, 0)
	w.CacheExposedS = max(w.CacheExposedS-o.CacheExposedS, 0)
	w.TrainerIdleS = max(w.TrainerIdleS-o.TrainerIdleS, 0)
	w.DeviceBusyS = max(w.DeviceBusyS-o.DeviceBusyS, 0)
}

// span is one recorded span as the sweep needs it.
type span struct {
	start, end int64 // ns from the run's start, end > start
	cls        class
	trainer    bool // on the trainer's lane
	device     bool // device-side (gpu.*)
}

// point is one end of a span clipped to a window.
type point struct {
	t      int64
	delta  int32
	cls    class
	on     bool // trainer lane
	device bool
}

// sweep returns the ledger of [a, b) over the spans (any order; those
// outside the window are ignored).
func sweep(spans []span, a, b int64) Window {
	w := Window{StartS: seconds(a)}
	if b <= a {
		return w
	}
	w.WallS = seconds(b - a)
	pts := make([]point, 0, 2*len(spans))
	for i := range spans {
		s := &spans[i]
		lo, hi := max(s.start, a), min(s.end, b)
		if lo >= hi {
			continue
		}
		w.Device = w.Device || s.device
		pts = append(pts, point{lo, 1, s.cls, s.trainer, s.device}, point{hi, -1, s.cls, s.trainer, s.device})
	}
	slices.SortFunc(pts, func(x, y point) int { return cmp.Compare(x.t, y.t) })
	var c counts
	var acc accum
	at := a
	for i := 0; i < len(pts); {
		t := pts[i].t
		acc.segment(&c, t-at)
		at = t
		for ; i < len(pts) && pts[i].t == t; i++ {
			p := pts[i]
			if p.device {
				c.device += p.delta
			}
			if p.on {
				c.trainer[p.cls] += p.delta
			} else {
				c.others[p.cls] += p.delta
			}
		}
	}
	acc.segment(&c, b-at)
	acc.into(&w)
	return w
}

// accum sums a sweep's segments in nanoseconds.
type accum struct {
	busy, exposed                 [NumCategories]float64
	cacheBusy, cacheExposed, idle float64
	device                        float64
}

// segment adds d ns during which c held.
func (acc *accum) segment(c *counts, d int64) {
	if d <= 0 {
		return
	}
	f := float64(d)
	sh := classify(c)
	if sh.split {
		acc.exposed[Sample] += f * sh.sample
		acc.exposed[Transfer] += f * sh.transfer
	} else {
		acc.exposed[sh.cat] += f
	}
	cacheOn := c.trainer[clsCache]+c.others[clsCache] > 0
	if cacheOn {
		acc.cacheBusy += f
		switch {
		case sh.split:
			acc.cacheExposed += f * sh.transfer
		case sh.cat == Transfer:
			acc.cacheExposed += f
		}
	}
	busy := func(cls class) bool { return c.trainer[cls]+c.others[cls] > 0 }
	if busy(clsSample) {
		acc.busy[Sample] += f
	}
	if busy(clsTransfer) || cacheOn {
		acc.busy[Transfer] += f
	}
	if busy(clsTrain) {
		acc.busy[Train] += f
	}
	if busy(clsEval) {
		acc.busy[Eval] += f
	}
	if busy(clsOther) {
		acc.busy[Other] += f
	}
	working := false
	for cls := range numClass {
		if cls != clsWait && cls != clsDevice && c.trainer[cls] > 0 {
			working = true
		}
	}
	if !working {
		acc.idle += f
	}
	if c.device > 0 {
		acc.device += f
	}
}

// into stores the sums in w, in seconds.
func (acc *accum) into(w *Window) {
	for i := range w.Busy {
		w.Busy[i] = acc.busy[i] / 1e9
		w.Exposed[i] = acc.exposed[i] / 1e9
	}
	w.CacheBusyS, w.CacheExposedS = acc.cacheBusy/1e9, acc.cacheExposed/1e9
	w.TrainerIdleS, w.DeviceBusyS = acc.idle/1e9, acc.device/1e9
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }
