package train

import "github.com/gnnscope/gnnscope/profile"

// OOMAction is what a training batch whose allocation the budget refused
// does to the run (Config.OnOOM); its values are those of the oom event's
// action.
type OOMAction string

// The OOM actions.
const (
	OOMAbort OOMAction = profile.ActionAbort // the run ends with status oom
	OOMSkip  OOMAction = profile.ActionSkip  // the batch is recorded and skipped
)

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
