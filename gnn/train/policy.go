package train

import (
	"errors"
	"sync"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/profile"
)

// OOMAction is what a training batch whose allocation the budget refused
// does to the run (Config.OnOOM); its values are those of the oom event's
// action.
type OOMAction string

// The OOM actions.
const (
	OOMAbort OOMAction = profile.ActionAbort // the run ends with status oom
	OOMSkip  OOMAction = profile.ActionSkip  // the batch is recorded and skipped
)

// OOMActions lists the OOM actions, the default first.
func OOMActions() []OOMAction { return []OOMAction{OOMAbort, OOMSkip} }

// GuardMode is how the memory guard reshapes a training batch predicted
// not to fit the budget (Config.MemGuard; "" turns the guard off).
type GuardMode string

// The memory guard's modes.
const (
	GuardResample GuardMode = "resample" // draw the batch again
	GuardSplit    GuardMode = "split"    // split its targets into parts
	GuardCut      GuardMode = "cut"      // drop edges of its outermost block
)

// GuardAction is what the guard did to a batch, as its event reports it.
type GuardAction string

// The guard's actions.
const (
	ActionResampled GuardAction = profile.ActionResampled // re-drawn (GuardResample)
	ActionSplit     GuardAction = profile.ActionSplit     // split into parts (GuardSplit, and the fallback)
	ActionCut       GuardAction = profile.ActionCut       // edges dropped (GuardCut)
)

// oomPolicy is the run's one answer to memory pressure: whether an
// allocation the budget refused aborts the run or skips the batch
// (Config.OnOOM), and which reshapings the memory guard tries on a batch
// predicted not to fit (Config.MemGuard). Every schedule consults it, so
// that full-batch, sampled and GAS training decide alike; it records the
// oom events of refused allocations and the guard events of reshaped
// batches, and counts both, apart, for the result.
type oomPolicy struct {
	onOOM OOMAction
	guard GuardMode
	rec   *profile.Recorder

	mu        sync.Mutex
	ooms      int // allocations refused (batches skipped, or the abort)
	guardActs int // batches the guard reshaped
	skipped   int // training batches dropped by OOMSkip
	lastSkip  error
}

func newOOMPolicy(cfg Config, rec *profile.Recorder) *oomPolicy {
	onOOM := cfg.OnOOM
	if onOOM == "" {
		onOOM = OOMAbort
	}
	return &oomPolicy{onOOM: onOOM, guard: cfg.MemGuard, rec: rec}
}

// guarded reports whether the memory guard is on.
func (p *oomPolicy) guarded() bool { return p.guard != "" }

// batchFailed decides what a training batch's error does to the run: an
// out-of-memory error is recorded, and with OOMSkip the batch is dropped
// (nil); any other error, and every error with OOMAbort, is returned.
func (p *oomPolicy) batchFailed(err error, epoch, batch int) error {
	if p.record(err, epoch, batch, p.onOOM) == OOMSkip {
		p.mu.Lock()
		p.skipped++
		p.lastSkip = err
		p.mu.Unlock()
		return nil
	}
	return err
}

// skips returns the training batches skipped and the error of the last.
func (p *oomPolicy) skips() (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.skipped, p.lastSkip
}

// abort records err, if it is out of memory, as an oom event that ends the
// run: full-batch training and inference have no batch to skip.
func (p *oomPolicy) abort(err error, epoch, batch int) {
	p.record(err, epoch, batch, OOMAbort)
}

// record records an oom event for err if it is an out-of-memory error and
// returns action; otherwise it returns "".
func (p *oomPolicy) record(err error, epoch, batch int, action OOMAction) OOMAction {
	var o *device.OOMError
	if !errors.As(err, &o) {
		return ""
	}
	p.mu.Lock()
	p.ooms++
	p.mu.Unlock()
	p.rec.Emit(profile.Event{T: profile.TypeOOM, Epoch: epoch, Batch: batch, Requested: o.Requested, Live: o.Live, Budget: o.Budget, Action: string(action)})
	return action
}

// guardPlan is what the guard tries, in order, on a batch predicted not
// to fit: its mode's own action, then a split, which always succeeds.
func (p *oomPolicy) guardPlan() []GuardAction {
	switch p.guard {
	case GuardResample:
		return []GuardAction{ActionResampled, ActionSplit}
	case GuardCut:
		return []GuardAction{ActionCut, ActionSplit}
	}
	return []GuardAction{ActionSplit}
}

// guardActed records a guard event: the guard reshaped batch (epoch,
// batch), whose peak was predicted at pred bytes, by action, and what
// trained in its place peaked at actual bytes (0: nothing trained).
// Nothing failed: it is no oom event.
func (p *oomPolicy) guardActed(epoch, batch int, pred, actual, budget int64, action GuardAction) {
	p.rec.Emit(profile.Event{T: profile.TypeGuard, Epoch: epoch, Batch: batch, Predicted: pred, Actual: actual, Budget: budget, Action: string(action)})
	p.mu.Lock()
	p.guardActs++
	p.mu.Unlock()
}

// counts returns the oom events recorded and the batches the guard
// reshaped.
func (p *oomPolicy) counts() (ooms, guardActs int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ooms, p.guardActs
}
