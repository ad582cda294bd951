package history

import "github.com/gnnscope/gnnscope/profile"

// Stats describes the ages of the history rows a batch pulls, in optimizer
// steps: a row pushed (or refreshed) at step p and pulled at step s has age
// s - p. Rows never written are not aged; they are counted in Unset.
type Stats struct {
	Rows  int     // rows aged (pulled rows written at least once)
	Unset int     // pulled rows never written (excluded from Mean, Max, Hist)
	Mean  float64 // mean age over Rows, 0 when Rows == 0
	Max   int64   // largest age, 0 when Rows == 0
	// Hist counts ages in the buckets of profile.StaleBucket: 0, 1, 2-3,
	// 4-7, ...; it ends at the last non-empty bucket (nil when Rows == 0).
	Hist []int64
}

// Staleness returns the age statistics of pulling nodes at optimizer step
// step (a repeated node counts each time). A row last written after step
// (a caller's bookkeeping error) counts as age 0. Node ids out of range are
// skipped and counted in Unset.
func (h *History) Staleness(nodes []int32, step int64) Stats {
	var st Stats
	var sum int64
	var hist [65]int64
	top := -1
	h.mu.RLock()
	for _, v := range nodes {
		if v < 0 || int(v) >= h.n || h.last[v] == Never {
			st.Unset++
			continue
		}
		age := max(step-h.last[v], 0)
		st.Rows++
		sum += age
		st.Max = max(st.Max, age)
		b := profile.StaleBucket(age)
		hist[b]++
		top = max(top, b)
	}
	h.mu.RUnlock()
	if st.Rows > 0 {
		st.Mean = float64(sum) / float64(st.Rows)
		st.Hist = append([]int64(nil), hist[:top+1]...)
	}
	return st
}

// EmitStale records st as the stale event of layer's pull in a batch. The
// event keeps st.Hist by reference (Staleness returns a fresh slice each
// call). A nil recorder records nothing.
func EmitStale(rec *profile.Recorder, epoch, batch, layer int, st Stats) {
	rec.Emit(profile.Event{
		T:     profile.TypeStale,
		Epoch: epoch,
		Batch: batch,
		Layer: layer,
		Mean:  st.Mean,
		Max:   float64(st.Max),
		Hist:  st.Hist,
	})
}

// EmitHistErr records relErr (from Refresh or ErrSum.RelErr) as the hist_err
// event of layer at a refresh. A nil recorder records nothing.
func EmitHistErr(rec *profile.Recorder, epoch, layer int, relErr float64) {
	rec.Emit(profile.Event{T: profile.TypeHistErr, Epoch: epoch, Layer: layer, RelErr: relErr})
}
