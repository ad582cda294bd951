package profile

import (
	"encoding/json"
	"strconv"
	"time"
)

// SchemaVersion is the version of the event schema written in run_start's "v".
const SchemaVersion = 1

// Event types (the "t" field).
const (
	TypeRunStart = "run_start" // first line of every journal
	TypeSpan     = "span"      // one timed stage
	TypeMem      = "mem"       // per-batch device memory
	TypeGPU      = "gpu"       // device sample (NVML)
	TypeOOM      = "oom"       // an allocation exceeded the budget
	TypeGuard    = "guard"     // the memory guard reshaped a batch so that nothing failed
	TypeCache    = "cache"     // feature-cache outcome of one batch
	TypeStale    = "stale"     // staleness of pulled history rows
	TypeHistErr  = "hist_err"  // error of histories against exact embeddings
	TypeMetric   = "metric"    // loss, accuracy, learning rate, throughput
	TypeRunEnd   = "run_end"   // last line of a finished journal
	// TypeClock is a rank's clock measured against a collector's
	// (ts, clock), written by the collector of a run whose ranks stream
	// their events to it (docs/collector.md).
	TypeClock = "clock"
)

// Stage names (a span's "name"). New names are allowed; these are the ones
// every view understands.
const (
	StageSample      = "sample"       // build a batch's blocks (top level)
	StageTransfer    = "transfer"     // gather features and copy them to the device (top level)
	StageTrain       = "train"        // one optimizer step on a batch (top level)
	StageForward     = "forward"      // child of train
	StageBackward    = "backward"     // child of train
	StageStep        = "step"         // child of train: the optimizer update
	StageEval        = "eval"         // evaluation (top level)
	StageHistoryPull = "history.pull" // read historical embeddings
	StageHistoryPush = "history.push" // write historical embeddings
	StageCache       = "cache"        // feature cache lookups and fills
	StageGuard       = "guard"        // memory guard: prediction, re-sampling, splitting, cutting
	StageWait        = "wait"         // the trainer blocked waiting for a prepared batch
	StageMemWait     = "mem.wait"     // a training batch or inference chunk waited for device memory held by the other (memory gate)
	StageSetup       = "setup"        // one-time work before the first epoch (e.g. building inference blocks)

	// Device-side spans of an asynchronous backend (CUDA), timed with
	// device events on its streams and mapped onto the run's clock; not
	// top-level stages (the host-side spans already count that work).
	StageGPUTrain    = "gpu.train"    // a training step's kernels on the compute stream
	StageGPUTransfer = "gpu.transfer" // a batch's host-to-device feature copy
)

// VariantBaseline is the variant name (run_start's "variant") of the run
// that comparisons measure the others against by default.
const VariantBaseline = "baseline"

// StageInfo describes a standard stage: its name and its parent, the
// stage whose span usually contains its spans on the same lane ("" for
// none).
type StageInfo struct {
	Name   string
	Parent string
}

// Stages returns the standard stages in display order (the order legends
// list them), with their parents. The memory gate's mem.wait and the
// device-side gpu.* spans are not among them: views treat them as other
// names. The slice is the caller's.
func Stages() []StageInfo {
	return []StageInfo{
		{StageSample, ""},
		{StageTransfer, ""},
		{StageTrain, ""},
		{StageForward, StageTrain},
		{StageBackward, StageTrain},
		{StageStep, StageTrain},
		{StageEval, ""},
		{StageHistoryPull, StageTrain},
		{StageHistoryPush, StageTrain},
		{StageCache, StageTransfer},
		{StageGuard, ""},
		{StageWait, ""},
		{StageSetup, ""},
	}
}

// StageNames returns the names of Stages, in the same order.
func StageNames() []string {
	st := Stages()
	out := make([]string, len(st))
	for i, s := range st {
		out[i] = s.Name
	}
	return out
}

// Lanes (a span's "lane": where it ran). Sampler workers use SamplerLane(i).
const (
	LaneCompute = "compute" // the trainer's own thread / compute stream
	LaneCopy    = "copy"    // the host-to-device copy stream
	LaneEval    = "eval"    // the overlapped evaluator

	LaneGPUCompute = "gpu/compute" // a GPU's compute stream (device-side spans)
	LaneGPUCopy    = "gpu/copy"    // a GPU's copy stream (device-side spans)
	LaneGPUSampler = "gpu/sampler" // batches sampled with a GPU kernel (--sampler-device cuda)
)

// RankLane returns the lane name of lane on rank r of a distributed run:
// "rank<r>/<lane>". Readers name the lanes of every rank so, rank 0
// included, when they merge the ranks' journals into one run.
func RankLane(r int, lane string) string {
	return "rank" + strconv.Itoa(r) + "/" + lane
}

// SplitRankLane splits a lane named by RankLane into its rank and the
// rank's own lane name; ok is false (and lane returned whole) for a lane
// without a rank.
func SplitRankLane(lane string) (rank int, rest string, ok bool) {
	if len(lane) < 6 || lane[:4] != "rank" {
		return 0, lane, false
	}
	i := 4
	for i < len(lane) && lane[i] >= '0' && lane[i] <= '9' {
		i++
	}
	if i == 4 || i-4 > 9 || i >= len(lane) || lane[i] != '/' {
		return 0, lane, false
	}
	r, err := strconv.Atoi(lane[4:i])
	if err != nil {
		return 0, lane, false
	}
	return r, lane[i+1:], true
}

// samplerLanes caches the first lane names so SamplerLane does not allocate.
var samplerLanes = func() [64]string {
	var a [64]string
	for i := range a {
		a[i] = "sampler/" + strconv.Itoa(i)
	}
	return a
}()

// SamplerLane returns the lane name of sampler worker i: "sampler/<i>".
// It does not allocate for i < 64.
func SamplerLane(i int) string {
	if i >= 0 && i < len(samplerLanes) {
		return samplerLanes[i]
	}
	return "sampler/" + strconv.Itoa(i)
}

// IsSamplerLane reports whether lane is a sampler worker's lane.
func IsSamplerLane(lane string) bool {
	return len(lane) > 8 && lane[:8] == "sampler/"
}

// Actions: what the engine did about a batch that did not fit. An oom
// event's action is ActionAbort or ActionSkip (an allocation failed); a
// guard event's is ActionResampled, ActionSplit or ActionCut (the memory
// guard reshaped a batch predicted not to fit, and nothing failed).
const (
	ActionAbort     = "abort"     // the run stops
	ActionSkip      = "skip"      // the batch was skipped
	ActionResampled = "resampled" // the batch was sampled again
	ActionSplit     = "split"     // the batch was split into smaller ones
	ActionCut       = "cut"       // edges were dropped from the batch's blocks
)

// Memory phases (mem's "phase"), free-form; these are the usual ones.
const (
	PhaseTrain = "train"
	PhaseEval  = "eval"
)

// Host describes the machine a run ran on (run_start's "host").
type Host struct {
	CPU      string `json:"cpu,omitempty"`      // CPU model name
	Cores    int    `json:"cores,omitempty"`    // logical cores usable by the run
	GPU      string `json:"gpu,omitempty"`      // device name, empty on CPU runs
	Driver   string `json:"driver,omitempty"`   // GPU driver version
	GPUMem   int64  `json:"gpu_mem,omitempty"`  // GPU memory in bytes
	Gemm     string `json:"gemm,omitempty"`     // the GPU's matrix product (cuBLAS or the own kernel)
	Go       string `json:"go,omitempty"`       // Go version of the writer
	OS       string `json:"os,omitempty"`       // GOOS/GOARCH or a kernel string
	Hostname string `json:"hostname,omitempty"` // host name
	// CPUs is the number of logical CPUs online; Load the 1-minute load
	// average when the event was written (both 0 where unknown).
	CPUs int     `json:"cpus,omitempty"`
	Load float64 `json:"load,omitempty"`
}

// Usage is what a run's process got from its host (run_end's "usage"),
// written by a recorder with RecorderOptions.Usage: the process's CPU
// time (user and system), the time its threads waited for a CPU while
// runnable (Linux schedstat; 0 where unknown), the wall time since the
// recorder started, the threads it asked for (GOMAXPROCS) and the
// 1-minute load average at the end.
type Usage struct {
	CPUS    float64 `json:"cpu_s"`
	WaitS   float64 `json:"wait_s"`
	WallS   float64 `json:"wall_s"`
	Threads int     `json:"threads"`
	Load    float64 `json:"load"`
}

// Clock is a rank's clock estimate against a collector's (run_start's
// and a clock event's "clock"): the offset of the collector's wall clock
// from the rank's, the round trip of the exchange it came from (the
// offset's uncertainty is half of it), both in ns, and the number of
// exchanges it was chosen among (the one of lowest delay).
type Clock struct {
	Offset  int64 `json:"offset"`
	Delay   int64 `json:"delay"`
	Samples int   `json:"samples"`
}

// Uncertainty returns how far the true offset may lie from Offset: half
// the round trip.
func (c Clock) Uncertainty() int64 { return c.Delay / 2 }

// Event is one journal line. T selects which fields are meaningful; the table
// in DESIGN.md lists them per type. JSON field names are the schema's.
//
// Slices and raw JSON (Config, Attrs, Hist, Summary) are retained by
// reference once recorded: do not modify them afterwards.
type Event struct {
	T string `json:"t"`

	// run_start
	V       int             `json:"v,omitempty"`       // schema version
	Run     string          `json:"run,omitempty"`     // run name (unique in its session)
	Session string          `json:"session,omitempty"` // session id
	Variant string          `json:"variant,omitempty"` // variant name (baseline, optimized, ...)
	Config  json.RawMessage `json:"config,omitempty"`  // the run's configuration, any JSON
	Host    *Host           `json:"host,omitempty"`
	Wall    string          `json:"wall,omitempty"`  // wall-clock start, RFC 3339 with nanoseconds
	Rank    int             `json:"rank,omitempty"`  // this process's rank in a distributed run (RANK)
	World   int             `json:"world,omitempty"` // ranks in a distributed run (WORLD_SIZE); 0 or 1: not distributed
	// Adjusted lists what the launcher changed in the variant's config
	// before the run so that its optimizations fit the user's constraints
	// (e.g. a memory budget), one line each: what changed, and why.
	Adjusted []string `json:"adjusted,omitempty"`
	// Node is the host name of the rank's machine, NodeRank the machine's
	// index among the job's (GROUP_RANK, NODE_RANK or SLURM_NODEID); both
	// empty for a run that does not say.
	Node     string `json:"node,omitempty"`
	NodeRank int    `json:"node_rank,omitempty"`
	// WallLocal is the rank's own wall-clock start when a collector moved
	// Wall onto its clock by Clock's offset.
	WallLocal string `json:"wall_local,omitempty"`
	// Clock is the estimate a collector used (run_start), or one the rank
	// reported (clock, with ts: when, in ns from the run's start).
	Clock *Clock `json:"clock,omitempty"`

	// span (also: epoch, batch)
	Name  string          `json:"name,omitempty"` // stage or metric name
	Lane  string          `json:"lane,omitempty"`
	Epoch int             `json:"epoch"`
	Batch int             `json:"batch"`
	Start int64           `json:"start"` // ns from run start
	Dur   int64           `json:"dur"`   // ns
	Attrs json.RawMessage `json:"attrs,omitempty"`

	// mem (also: live, budget)
	Phase     string `json:"phase,omitempty"`
	Peak      int64  `json:"peak"`
	Live      int64  `json:"live"`
	Budget    int64  `json:"budget"`
	Predicted int64  `json:"predicted"`

	// gpu
	Ts    int64   `json:"ts"` // ns from run start
	Used  int64   `json:"used"`
	Total int64   `json:"total"`
	Util  float64 `json:"util"` // 0..1; -1 when not measured (no NVML)

	// oom (also: epoch, batch, live, budget)
	Requested int64  `json:"requested"`
	Action    string `json:"action,omitempty"`

	// guard (also: epoch, batch, predicted, budget, action): Predicted is
	// the peak predicted for the batch as drawn, Actual the largest peak
	// measured for what the guard trained in its place (0: nothing
	// trained).
	Actual int64 `json:"actual"`

	// cache (also: epoch, batch): the batch's input rows found in the
	// device feature cache, those gathered from host memory, and the bytes
	// that crossed to the device (the misses' rows).
	Hits     int64 `json:"hits"`
	Misses   int64 `json:"misses"`
	BytesH2D int64 `json:"bytes_h2d"`

	// stale, hist_err
	Layer  int     `json:"layer"`
	Mean   float64 `json:"mean"`
	Max    float64 `json:"max"`
	Hist   []int64 `json:"hist,omitempty"` // counts in age buckets 0, 1, 2-3, 4-7, ...
	RelErr float64 `json:"rel_err"`

	// metric
	Value float64 `json:"value"`

	// run_end
	Status  Status          `json:"status,omitempty"`
	Error   string          `json:"error,omitempty"`
	Summary json.RawMessage `json:"summary,omitempty"`
	Usage   *Usage          `json:"usage,omitempty"`
}

// Distributed reports whether a run_start belongs to a run of more than
// one rank.
func (e *Event) Distributed() bool { return e.World > 1 }

// Kind returns e's type as readers count it: T, except that an oom event
// whose action is one of the memory guard's (split, cut, resampled) is a
// guard event. Journals written before the guard event recorded the
// guard's actions so; nothing failed in them.
func (e *Event) Kind() string {
	if e.T == TypeOOM {
		switch e.Action {
		case ActionSplit, ActionCut, ActionResampled:
			return TypeGuard
		}
	}
	return e.T
}

// End returns Start+Dur, the end of a span.
func (e *Event) End() int64 { return e.Start + e.Dur }

// WallTime parses the run_start wall-clock time.
func (e *Event) WallTime() (time.Time, error) {
	return time.Parse(time.RFC3339Nano, e.Wall)
}

// MarshalJSON encodes e exactly as a journal line (without the newline).
func (e Event) MarshalJSON() ([]byte, error) {
	return AppendEvent(nil, &e), nil
}

// UnmarshalJSON decodes one event with DecodeEvent.
func (e *Event) UnmarshalJSON(b []byte) error {
	return DecodeEvent(b, e)
}

// StaleBucket returns the index of the staleness histogram bucket of an age
// in optimizer steps: 0 -> 0, 1 -> 1, 2-3 -> 2, 4-7 -> 3, ...
func StaleBucket(age int64) int {
	if age <= 0 {
		return 0
	}
	b := 1
	for age > 1 {
		age >>= 1
		b++
	}
	return b
}
