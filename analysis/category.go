package analysis

import (
	"slices"
	"strings"

	"github.com/gnnscope/gnnscope/profile"
)

// Category is one part of the ledger. At every instant of a run's wall
// time exactly one category is exposed:
//
//   - train, whenever a train span (train, forward, backward, step, the
//     history pulls and pushes of GNNAutoScale, or a device-side
//     gpu.train) runs on any lane;
//   - otherwise what the trainer's lane runs itself: eval, transfer (with
//     its cache lookups), sample, or other (setup, guard, anything else);
//   - otherwise, while the trainer waits (wait, mem.wait) or runs nothing,
//     what runs on the other lanes: sampling and transfer (gpu.transfer
//     included) share the instant by the number of lanes running each,
//     else eval, else other; a data-loading worker's lane (loader/N)
//     counts as sampling whatever its spans are named, as a sampler
//     worker's does;
//   - otherwise idle.
type Category int

// The categories, in display order.
const (
	Sample Category = iota
	Transfer
	Train
	Eval
	Other
	Idle
	NumCategories
)

var categoryNames = [NumCategories]string{"sample", "transfer", "train", "eval", "other", "idle"}

// String returns the category's name: sample, transfer, train, eval,
// other, idle.
func (c Category) String() string {
	if c < 0 || c >= NumCategories {
		return "unknown"
	}
	return categoryNames[c]
}

// MarshalText writes the category's name (JSON keys and values).
func (c Category) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Categories returns every category in display order.
func Categories() []Category {
	out := make([]Category, NumCategories)
	for i := range out {
		out[i] = Category(i)
	}
	return out
}

// class is what a span counts as in the sweep.
type class uint8

const (
	clsTrain class = iota
	clsSample
	clsTransfer
	clsCache
	clsEval
	clsWait
	clsOther
	clsDevice // other gpu.* spans: the device's busy time, nothing else
	numClass
)

// classOf returns the class of a span named name.
func classOf(name string) class {
	switch name {
	case profile.StageTrain, profile.StageForward, profile.StageBackward, profile.StageStep,
		profile.StageHistoryPull, profile.StageHistoryPush, profile.StageGPUTrain:
		return clsTrain
	case profile.StageSample:
		return clsSample
	case profile.StageTransfer, profile.StageGPUTransfer:
		return clsTransfer
	case profile.StageCache:
		return clsCache
	case profile.StageEval:
		return clsEval
	case profile.StageWait, profile.StageMemWait:
		return clsWait
	}
	if isDevice(name) {
		return clsDevice
	}
	return clsOther
}

// loaderLanePrefix starts the lanes of a data loader's worker processes
// (loader/0, loader/1, ...), which the Python client records.
const loaderLanePrefix = "loader/"

// laneClass returns the class of a span named name on lane: a loader
// worker's spans that name no standard stage (fetch, collate, ...) are
// its data loading, the sampling of an external run.
func laneClass(name, lane string) class {
	cls := classOf(name)
	if cls == clsOther && strings.HasPrefix(lane, loaderLanePrefix) && !slices.Contains(profile.StageNames(), name) {
		return clsSample
	}
	return cls
}

// isDevice reports whether a span named name is device-side (gpu.*):
// it makes the device's busy time. A device-side training step counts as
// train and a device-side copy as transfer, where the host-side spans
// ended before the device did (asynchronous backends).
func isDevice(name string) bool { return strings.HasPrefix(name, "gpu.") }

// counts holds how many spans of each class are open at an instant, on
// the trainer's lane and on the others.
type counts struct {
	trainer [numClass]int32
	others  [numClass]int32
	device  int32 // device-side spans
}

// share is how an instant is split between categories: one category, or
// sampling and transfer by weight.
type share struct {
	cat              Category
	split            bool
	sample, transfer float64 // with split: the weights, summing to 1
}

// classify returns the category exposed while c holds.
func classify(c *counts) share {
	t, o := &c.trainer, &c.others
	switch {
	case t[clsTrain]+o[clsTrain] > 0:
		return share{cat: Train}
	case t[clsEval] > 0:
		return share{cat: Eval}
	case t[clsTransfer]+t[clsCache] > 0:
		return share{cat: Transfer}
	case t[clsSample] > 0:
		return share{cat: Sample}
	case t[clsOther] > 0:
		return share{cat: Other}
	}
	s := float64(o[clsSample])
	x := float64(max(o[clsTransfer], o[clsCache]))
	switch {
	case s > 0 && x > 0:
		return share{split: true, sample: s / (s + x), transfer: x / (s + x)}
	case s > 0:
		return share{cat: Sample}
	case x > 0:
		return share{cat: Transfer}
	case o[clsEval] > 0:
		return share{cat: Eval}
	case o[clsOther] > 0 || t[clsWait] > 0:
		return share{cat: Other}
	}
	return share{cat: Idle}
}
