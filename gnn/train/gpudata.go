package train

import (
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/internal/enum"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/profile/units"
)

// checkGPUData checks the feature store and the sampler's device.
func (c Config) checkGPUData(p *problems) {
	kind, _, err := device.ParseName(c.Device)
	if err != nil {
		return // reported by checkSchedule
	}
	switch c.FeatureStore {
	case "", device.PlaceHost:
	case device.PlaceDevice, device.PlaceUVA:
		if kind != device.KindCUDA {
			p.add("feature store %s keeps the features for a GPU: it needs --device cuda (the CPU device reads them from host memory)", c.FeatureStore)
		}
	default:
		p.add("feature store %q is not one of %s", c.FeatureStore, enum.Join(device.Places(), ", "))
	}
	switch c.SamplerDevice {
	case "", device.KindCPU:
	case device.KindCUDA:
		if kind != device.KindCUDA {
			p.add("sampler device cuda samples with a GPU kernel: it needs --device cuda")
		}
		if c.Sampler != SamplerNeighbor {
			p.add("sampler device cuda draws neighbor-sampled mini-batches: it needs --sampler neighbor")
		}
	default:
		p.add("sampler device %q is not one of %s", c.SamplerDevice, enum.Join(device.Kinds(), ", "))
	}
}

// gpuData is where a run on a GPU keeps its feature matrix and where it
// samples (Config.FeatureStore, Config.SamplerDevice).
type gpuData struct {
	store  device.Place   // device, uva or host; "" on a device without its own memory
	why    string         // how the store was chosen, for the plan line
	xDev   *tensor.Tensor // the features in device memory (store device)
	pinned []float32      // the features in mapped pinned host memory (store uva)
	drawer device.NeighborDrawer
	graph  int64 // device bytes the drawer's graph holds
	held   int64 // of xDev and graph, the bytes holdResident counted
}

// isGPU reports whether dev is a CUDA device.
func isGPU(dev device.Device) bool {
	d, ok := device.Unwrap(dev).(device.Describer)
	return ok && d.Info().Backend == device.KindCUDA
}

// openGPUData places the features x (f wide, as the model sees them) as
// cfg.FeatureStore asks, or, when it is "", by the room on dev: device
// memory when the matrix takes at most half of it (device.FitsHalf),
// else mapped pinned host memory (uva); host memory on a device without
// memory of its own. It returns the placement and the features host code
// gathers from: x, or its pinned copy. Call it once the model is on the
// device, so that the room is what training leaves.
func openGPUData(cfg Config, dev device.Device, x []float32, f int) (*gpuData, []float32, error) {
	g := &gpuData{}
	if !isGPU(dev) {
		return g, x, nil
	}
	bytes := 4 * int64(len(x))
	g.store, g.why = cfg.FeatureStore, "asked for"
	if g.store == "" {
		g.store = device.PlaceUVA
		g.why = fmt.Sprintf("chosen: more than half of the %s free on the device", units.FormatSize(device.Room(dev)))
		if device.FitsHalf(dev, bytes) {
			g.store = device.PlaceDevice
			g.why = fmt.Sprintf("chosen: at most half of the %s free on the device", units.FormatSize(device.Room(dev)))
		}
	}
	switch g.store {
	case device.PlaceDevice:
		t, err := dev.Alloc(len(x)/max(f, 1), f)
		if err != nil {
			return nil, nil, fmt.Errorf("feature store device: the %s feature matrix does not fit (try --features uva): %w", units.FormatSize(bytes), err)
		}
		dev.CopyFromHost(t, x)
		g.xDev = t
	case device.PlaceUVA:
		ph, ok := device.Unwrap(dev).(device.PinnedHost)
		if !ok {
			return nil, nil, fmt.Errorf("feature store uva: %s has no mapped pinned host memory", dev.Name())
		}
		p, err := ph.AllocPinned(max(len(x), 1))
		if err != nil {
			return nil, nil, fmt.Errorf("feature store uva: %w", err)
		}
		copy(p, x)
		g.pinned = p[:len(x)]
		return g, g.pinned, nil
	}
	return g, x, nil
}

// attachSampler makes s draw its hops with a GPU kernel when
// cfg.SamplerDevice is cuda (s nil: no neighbor sampling), and counts the
// device memory of its graph as held in m (see holdResident).
func (g *gpuData) attachSampler(cfg Config, dev device.Device, s *sample.Neighbor, m *memState, in *inference) error {
	if cfg.SamplerDevice != device.KindCUDA || s == nil {
		return nil
	}
	gs, ok := device.Unwrap(dev).(device.GraphSampler)
	if !ok {
		return fmt.Errorf("sampler device cuda: %s cannot sample with a kernel", dev.Name())
	}
	live := dev.Mem().Stats().Live
	d, err := gs.NeighborDrawer(s.Graph())
	if err != nil {
		return fmt.Errorf("sampler device cuda: %w", err)
	}
	g.drawer = d
	g.graph = max(dev.Mem().Stats().Live-live, 0)
	s.SetDrawer(d)
	return g.holdResident(m, cfg, in)
}

// residentBytes is the device memory the placement holds for the whole
// run: the features in device memory and the GPU sampler's graph.
func (g *gpuData) residentBytes() int64 {
	if g == nil {
		return 0
	}
	n := g.graph
	if g.xDev != nil {
		n += g.xDev.Bytes()
	}
	return n
}

// holdResident counts the device memory the placement holds, and has not
// counted yet, as the run's data beside the model (memState.hold), which
// every batch's peak, the memory gate and inference's room (in nil: not
// made yet) count.
func (g *gpuData) holdResident(m *memState, cfg Config, in *inference) error {
	n := g.residentBytes() - g.held
	if n == 0 {
		return nil
	}
	g.held += n
	return m.hold(cfg, in, n, fmt.Sprintf("the %s of features and graph kept on the device (try --features uva)", units.FormatSize(g.held)))
}

// planLines returns the lines the run's plan (run_start) records: where
// the features live and how that was chosen, and where sampling runs.
func (g *gpuData) planLines(x []float32) []string {
	if g == nil {
		return nil
	}
	var out []string
	if g.store != "" {
		out = append(out, fmt.Sprintf("features: %s (%s matrix; %s)", g.store, units.FormatSize(4*int64(len(x))), g.why))
	}
	if g.drawer != nil {
		out = append(out, fmt.Sprintf("sampler: cuda kernel, graph in %s memory, spans on lane %s", g.drawer.Where(), profile.LaneGPUSampler))
	}
	return out
}

// allOnDevice reports whether the whole feature matrix is in device
// memory, where a feature cache would only duplicate rows.
func (g *gpuData) allOnDevice() bool { return g != nil && g.xDev != nil }

// gatherDevice gathers dst's rows from the features in device memory and
// reports whether it did (false: the store is not device).
func (g *gpuData) gatherDevice(dev device.Device, dst *tensor.Tensor, nodes []int32) bool {
	if g == nil || g.xDev == nil {
		return false
	}
	dev.Gather(dst, g.xDev, nodes)
	return true
}

// sampleLane is the lane of a batch's sample span: the GPU sampler's when
// a kernel draws the hops, else the worker's own.
func (g *gpuData) sampleLane(lane string) string {
	if g != nil && g.drawer != nil {
		return profile.LaneGPUSampler
	}
	return lane
}

// sampleSpan records a batch's sample span on lane (see sampleLane), with
// the edges sampled and their rate over the span (sampled edges per
// second, host and device time together) as attributes.
func (l *batchLoader) sampleSpan(lane string, epoch, index int, t0, dur int64, b *sample.Batch) {
	if l.rec == nil {
		return
	}
	lane = l.gpu.sampleLane(lane)
	if b == nil || dur <= 0 {
		l.rec.Span(profile.StageSample, lane, epoch, index, t0, dur)
		return
	}
	e := b.NumEdges()
	l.rec.SpanAttrs(profile.StageSample, lane, epoch, index, t0, dur,
		profile.Attrs(profile.Attr{Key: "edges", Value: e}, profile.Attr{Key: "edges_per_s", Value: float64(e) / (float64(dur) / 1e9)}))
}

// close releases the placement's memory and the sampler's graph.
func (g *gpuData) close(dev device.Device) error {
	if g == nil {
		return nil
	}
	var err error
	if g.drawer != nil {
		err = g.drawer.Close()
		g.drawer = nil
	}
	if g.xDev != nil {
		dev.Free(g.xDev)
		g.xDev = nil
	}
	if g.pinned != nil {
		dev.Sync()
		device.Unwrap(dev).(device.PinnedHost).FreePinned(g.pinned[:cap(g.pinned)])
		g.pinned = nil
	}
	return err
}
