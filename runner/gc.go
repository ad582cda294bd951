package runner

import (
	"os"
	"runtime/debug"
)

// EngineGCPercent is the garbage collector's target (as GOGC) in a process
// that trains with the built-in engine: a collection starts once the heap
// has grown by this percentage of what the last one left live.
//
// Go's default of 100 lets the heap reach twice the live memory. The
// engine's tensors are large pointer-free buffers, which a collection does
// not scan, so collecting more often costs little; but every buffer the
// device pool does not keep (inference chunks, the output of a layer that
// has been consumed) stays resident until the next collection. At 100 a
// layer-wise evaluation over all nodes, whose live heap is the layer's
// input and output, held about twice that in resident memory.
const EngineGCPercent = 25

// TuneGC sets EngineGCPercent for the whole process unless the GOGC
// environment variable chooses a target. Commands that run the engine in
// their own process (train, the run worker) call it once before training.
func TuneGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(EngineGCPercent)
}
