package train

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/profile"
)

// overlapEval evaluates a snapshot of one epoch's weights on a goroutine
// of its own while the next epoch trains (Config.OverlapEval), the
// results reported for the snapshot's epoch. At most one evaluation is in
// flight: start waits for none, so the trainer finishes the previous one
// first. The evaluation uses the device, the recorder and the inference
// state, so drain must run before any of them is released, on every path
// out of the training loop (an error, a cancel, patience running out).
type overlapEval struct {
	dev   device.Device
	model *nn.Model     // the trained model, snapshot at each start
	ds    *data.Dataset // its mapped reads guarded on the evaluation's goroutine
	eval  *evaluator    // evaluates each snapshot, on the eval lane
	// deliver receives each finished evaluation with its epoch's
	// statistics (on the training goroutine, from finish).
	deliver func(st *EpochStat, r evalResult)
	pending *EpochStat      // the epoch whose evaluation is in flight, or nil
	done    chan evalResult // its result
}

// start snapshots the model's weights and evaluates the snapshot for the
// epoch of st on the eval lane. The snapshot is freed before the result is
// delivered, so that the next epoch's snapshot never coexists with it (the
// memory gate counts one) and a finished run has nothing left on the
// device.
func (o *overlapEval) start(st EpochStat) error {
	snap, err := o.model.Snapshot(o.dev)
	if err != nil {
		return fmt.Errorf("epoch %d: snapshot for evaluation: %w", st.Epoch, err)
	}
	o.pending = &st
	o.done = make(chan evalResult, 1)
	go func(done chan<- evalResult, epoch int) {
		var r evalResult
		if err := data.Guard(o.ds, func() error { r = o.eval.evaluate(o.dev, snap, profile.LaneEval, epoch); return nil }); err != nil {
			r = evalResult{err: err}
		}
		snap.Free(o.dev)
		done <- r
	}(o.done, st.Epoch)
	return nil
}

// finish waits for the evaluation in flight, if any, and delivers it. A
// nil overlapEval (evaluation in turn) has none.
func (o *overlapEval) finish() error {
	if o == nil || o.pending == nil {
		return nil
	}
	st := o.pending
	o.pending = nil
	r := <-o.done
	if r.err != nil {
		return fmt.Errorf("epoch %d evaluation: %w", st.Epoch, r.err)
	}
	o.deliver(st, r)
	return nil
}

// drain waits for the evaluation in flight, if any, and drops its result:
// the run is ending without reporting it. Afterwards nothing of the
// evaluation is left on the device.
func (o *overlapEval) drain() {
	if o == nil || o.pending == nil {
		return
	}
	o.pending = nil
	<-o.done
}
