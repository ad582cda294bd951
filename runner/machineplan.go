package runner

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/train"
	"github.com/gnnscope/gnnscope/profile/units"
)

// Bounds of the machine-sized pipeline.
const (
	// maxSizedWorkers caps the sampler workers the plan picks: past it a
	// worker adds little but contention on the prepared-batch queue.
	maxSizedWorkers = 32
	// gpuSampledWorkers caps them when a GPU kernel samples: workers then
	// only launch the kernel and gather.
	gpuSampledWorkers = 4
	// maxSizedPrefetch caps the prepared batches waiting.
	maxSizedPrefetch = 64
)

// Workload is what the machine plan knows of the data a run trains on.
type Workload struct {
	Nodes, Edges int64
	Features     int
	Classes      int
}

// Free says which settings the machine plan may choose: those that
// neither the variant nor the experiment sets.
type Free struct {
	Workers, Prefetch, SamplerDevice, FeatureStore bool
}

// freeSettings returns the settings of a resolved variant that the
// machine plan may choose: only the optimized variant's, on neighbor
// sampling, those its overrides do not name and its config leaves unset.
func freeSettings(v Variant, cfg train.Config) Free {
	if v.Name != string(Optimized) || v.External != nil || cfg.Sampler != train.SamplerNeighbor {
		return Free{}
	}
	has := func(k string) bool { _, ok := v.Overrides[k]; return ok }
	return Free{
		Workers:       !has("sampler_workers") && cfg.SamplerWorkers == 0,
		Prefetch:      !has("prefetch") && cfg.Prefetch == 0,
		SamplerDevice: !has("sampler_device") && cfg.SamplerDevice == "",
		FeatureStore:  !has("feature_store") && cfg.FeatureStore == "",
	}
}

// onCUDA reports whether cfg trains on a CUDA device.
func onCUDA(cfg train.Config) bool {
	k, _, err := device.ParseName(cfg.Device)
	return err == nil && k == device.KindCUDA
}

// PlanWorkers returns the sampler workers for cfg on m and the line that
// says why. The trainer keeps what its own kernel threads need: on a GPU
// one core drives the device; on the CPU its kernels take cfg.Threads
// cores when set, else half the usable cores (at least one). The workers
// get the rest, at least one, at most maxSizedWorkers, or
// gpuSampledWorkers when a GPU kernel samples.
func PlanWorkers(m Machine, cfg train.Config) (int, string) {
	cores := m.Cores()
	var keep int
	var why string
	switch {
	case onCUDA(cfg):
		keep, why = 1, "1 core drives the GPU"
	case cfg.Threads > 0:
		keep, why = min(cfg.Threads, cores), fmt.Sprintf("%d kept for the CPU kernels' threads (--threads)", min(cfg.Threads, cores))
	default:
		keep = max(cores/2, 1)
		why = fmt.Sprintf("%d kept for the CPU kernels' threads (half)", keep)
	}
	n := min(max(cores-keep, 1), maxSizedWorkers)
	limit := ""
	if cfg.SamplerDevice == device.KindCUDA && n > gpuSampledWorkers {
		n, limit = gpuSampledWorkers, fmt.Sprintf("; at most %d, as a GPU kernel samples", gpuSampledWorkers)
	} else if n == maxSizedWorkers {
		limit = fmt.Sprintf("; at most %d", maxSizedWorkers)
	}
	return n, fmt.Sprintf("sampler_workers %d: %s, %s, the rest to the workers (at least 1)%s", n, m, why, limit)
}

// Sizes are the estimated bytes behind the machine plan's choices.
type Sizes struct {
	Features int64 // the feature matrix (4-byte floats)
	Graph    int64 // the CSR as the GPU sampler holds it
	Model    int64 // parameters, gradients and Adam's two moments
	BatchIn  int64 // one batch's gathered input rows
	Batch    int64 // one training batch's peak, input included
}

// EstimateSizes estimates the sizes of cfg's run on w: the batch's input
// rows grow by 1 + fanout a hop (bounded by the nodes), the model's
// weights take two matrices a layer (GraphSAGE's self and neighbor), the
// batch's peak four hidden-wide activations for each layer's destination
// rows beside its input twice over. Rows are counted before
// deduplication, so they are upper bounds; the memory guard measures.
func EstimateSizes(w Workload, cfg train.Config) Sizes {
	var s Sizes
	f, h := int64(w.Features), int64(max(cfg.Hidden, 1))
	s.Features = 4 * w.Nodes * f
	s.Graph = 8*(w.Nodes+1) + 4*w.Edges
	layers := int64(max(cfg.Layers, 1))
	params := 2 * (f*h + (layers-2)*h*h + h*int64(max(w.Classes, 1)))
	if layers == 1 {
		params = 2 * f * int64(max(w.Classes, 1))
	}
	s.Model = 4 * 4 * params
	rows, acts := int64(max(cfg.BatchSize, 1)), int64(0)
	for _, fan := range cfg.Fanouts {
		acts += rows
		if fan < 0 || rows*int64(1+fan) > w.Nodes {
			rows = w.Nodes
		} else {
			rows *= int64(1 + fan)
		}
	}
	rows = min(rows, max(w.Nodes, 1))
	s.BatchIn = 4 * rows * f
	s.Batch = 2*s.BatchIn + 4*4*acts*h
	return s
}

// PlanCores sizes, at launch, what the cores decide for cfg on m among
// the settings free leaves open, and returns the config and one line per
// choice: on a CUDA device the sampler (the GPU kernel; the engine keeps
// the graph in device memory when it takes at most half the room, else
// in mapped pinned host memory, and its plan line says which), then the
// sampler workers (PlanWorkers). It is a pure function of its arguments.
func PlanCores(m Machine, cfg train.Config, free Free) (train.Config, []string) {
	if cfg.Sampler != train.SamplerNeighbor {
		return cfg, nil
	}
	var notes []string
	if onCUDA(cfg) && free.SamplerDevice {
		cfg.SamplerDevice = device.KindCUDA
		notes = append(notes, "sampler_device cpu->cuda: nothing set on a CUDA device, so a GPU kernel samples (the graph in device memory when it fits, else mapped host memory)")
	}
	if free.Workers {
		var note string
		cfg.SamplerWorkers, note = PlanWorkers(m, cfg)
		notes = append(notes, note)
	}
	return cfg, notes
}

// PlanMemory sizes, once the data is loaded and the device opened, what
// memory decides for cfg's run of w on m among the settings free leaves
// open, and returns the config and one line per choice with the sizes
// behind it:
//
//   - on a GPU, the features: device memory when they fit beside the
//     model, the graph the GPU sampler keeps there, a training batch's peak
//     and the gathered batches prefetch holds, with a tenth of the room to spare; else uva,
//     with the feature cache the launcher gave the variant;
//   - on a GPU sampling with its kernel, where the graph goes (a line of
//     sizes; the engine decides by the same rule);
//   - prefetch: 2 batches a worker, at most maxSizedPrefetch, and no more
//     than a quarter of the memory left (host memory on the CPU, the
//     device's on a GPU) holds.
//
// It is a pure function of its arguments, so that it can be tested on
// described machines.
func PlanMemory(m Machine, w Workload, cfg train.Config, free Free) (train.Config, []string) {
	if cfg.Sampler != train.SamplerNeighbor || cfg.SamplerWorkers <= 0 {
		return cfg, nil
	}
	s := EstimateSizes(w, cfg)
	var notes []string
	gpu := m.GPU && onCUDA(cfg)
	room := m.HostFree
	if gpu {
		room = m.DeviceFree - s.Model
	}
	graphOnDev := gpu && cfg.SamplerDevice == device.KindCUDA && s.Graph <= max(room-s.Features, 0)/2
	if gpu && free.FeatureStore {
		need := s.Features + s.Batch + s.BatchIn*int64(2*cfg.SamplerWorkers)
		if graphOnDev {
			need += s.Graph
		}
		if need <= room-room/10 {
			cfg.FeatureStore = device.PlaceDevice
			notes = append(notes, fmt.Sprintf("feature_store device: the %s features fit beside the model (%s), the graph, a training batch (%s, estimated) and the prefetched inputs in the %s free on the device",
				units.FormatSize(s.Features), units.FormatSize(s.Model), units.FormatSize(s.Batch), units.FormatSize(m.DeviceFree)))
		} else {
			cfg.FeatureStore = device.PlaceUVA
			notes = append(notes, fmt.Sprintf("feature_store uva: the %s features, a training batch (%s, estimated) and the prefetched inputs need more than the %s the device has beside the model (%s); the feature cache (%s) keeps hot rows on the device",
				units.FormatSize(s.Features), units.FormatSize(s.Batch), units.FormatSize(room), units.FormatSize(s.Model), cacheWords(cfg.CacheBytes)))
		}
	}
	if cfg.FeatureStore == device.PlaceDevice {
		room -= s.Features
	}
	graphOnDev = gpu && cfg.SamplerDevice == device.KindCUDA && s.Graph <= max(room, 0)/2
	if gpu && cfg.SamplerDevice == device.KindCUDA {
		where := "device memory"
		if !graphOnDev {
			where = "mapped pinned host memory (uva)"
		}
		notes = append(notes, fmt.Sprintf("graph: %s (CSR) for the GPU sampler, in %s: the limit is half the %s the features leave",
			units.FormatSize(s.Graph), where, units.FormatSize(max(room, 0))))
	}
	if graphOnDev {
		room -= s.Graph
	}
	if free.Prefetch {
		var note string
		cfg.Prefetch, note = planPrefetch(cfg.SamplerWorkers, room, s.BatchIn, gpu)
		notes = append(notes, note)
	}
	return cfg, notes
}

// planPrefetch returns the prefetch depth for workers workers with room
// bytes left (host or device) and batches of in bytes gathered, and its
// line.
func planPrefetch(workers int, room, in int64, gpu bool) (int, string) {
	where := "host memory"
	if gpu {
		where = "device memory"
	}
	want := min(2*max(workers, 1), maxSizedPrefetch)
	if room <= 0 {
		return want, fmt.Sprintf("prefetch %d: 2 a worker; the %s left is not known", want, where)
	}
	fit := room / 4 / max(in, 1)
	d := max(min(int64(want), fit), 1)
	return int(d), fmt.Sprintf("prefetch %d: 2 a worker (%d), at most a quarter of the %s %s left over batches of %s gathered (estimated)",
		d, want, units.FormatSize(room), where, units.FormatSize(in))
}

// cacheWords names a cache size for a plan line.
func cacheWords(b string) string {
	if b == "" || b == "0" {
		return "no cache"
	}
	return b
}
