package train

import (
	"context"
	"fmt"

	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/history"
	"github.com/gnnscope/gnnscope/gnn/memory"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/sample"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// gasState is the state of GNNAutoScale training: the partition loader, one
// history per hidden layer (history l holds layer l's node embeddings after
// its activation, nn.Model.EmbedDim(l) wide, rows in permuted ids; for
// APPNP and GCNII one per propagation step but the last), and the run's
// staleness and refresh figures.
type gasState struct {
	loader  *sample.GAS
	hist    []*history.History
	isTrain []bool // by original node id

	staleSum  float64 // sum of ages over aged pulled rows
	staleRows int64
	staleMax  int64
	relErr    float64 // largest over layers at the last refresh
	refreshed bool    // whether an evaluation refreshed the histories
	buf       []float32
}

// gasSchedule trains GNNAutoScale mini-batches (sampler gas): groups of
// whole graph parts, their 1-hop halo's embeddings pulled from the
// histories of the hidden layers and the batch's own pushed into them.
type gasSchedule struct {
	d   trainDeps
	gas gasDeps
	s   *gasState
}

// gasDeps is what GAS training reads beside trainDeps: the graph, its
// labels, feature width and degrees, the training nodes, the partition's
// and the batches' settings, the model, its optimizer (whose step count
// stamps the histories' rows) and the inference that fills the histories.
type gasDeps struct {
	g             *graph.CSR
	y             []int32
	f             int
	deg           []float32 // degree + 1 per node
	train         []int32
	parts         int         // Config.Parts
	partsPerBatch int         // Config.PartsPerBatch
	balance       PartBalance // Config.PartBalance
	layers        int
	seed          uint64
	model         *nn.Model
	opt           *nn.Optimizer
	inf           *inference
	loader        *sample.GAS // the loader fitGASParts built, or nil: setup builds it
}

// newGASSchedule partitions the graph, builds the GAS loader and the
// histories, and fills the histories by exact layer-wise inference with
// the initial weights.
func newGASSchedule(d trainDeps, gd gasDeps) (*gasSchedule, error) {
	sch := &gasSchedule{d: d, gas: gd}
	if err := sch.setup(); err != nil {
		sch.close()
		return nil, err
	}
	return sch, nil
}

// setup is newGASSchedule's work.
func (sch *gasSchedule) setup() error {
	t := &sch.gas
	g := t.g
	loader := t.loader // built by fitGASParts under a budget
	if loader == nil {
		var err error
		if loader, err = gasLoader(g, t.parts, t.seed, t.balance); err != nil {
			return err
		}
	}
	s := &gasState{loader: loader, isTrain: make([]bool, g.N)}
	sch.s = s
	for _, v := range t.train {
		s.isTrain[v] = true
	}
	for l := 0; l < t.layers-1; l++ {
		h, err := history.NewOn(sch.d.dev, g.N, t.model.EmbedDim(l))
		if err != nil {
			return fmt.Errorf("history of layer %d: %w", l+1, err)
		}
		s.hist = append(s.hist, h)
	}
	if len(s.hist) == 0 {
		return nil
	}
	_, err := t.inf.run(inferRequest{dev: sch.d.dev, model: t.model, keep: func(l int, h []float32) error {
		if _, err := s.fill(l, h, int64(t.opt.Steps())); err != nil {
			return fmt.Errorf("fill history of layer %d: %w", l+1, err)
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("initial inference: %w", err)
	}
	return nil
}

// fill replaces history l with the first Dim columns of h (layer l's
// output, N rows on the host in original node order; for APPNP and GCNII
// steps [Z | X0], of which the history holds Z) stamped with step, and
// returns the relative error the rows had.
func (s *gasState) fill(l int, h []float32, step int64) (float64, error) {
	d, n := s.hist[l].Dim(), len(s.loader.Inv)
	if n == 0 || len(h)%n != 0 || len(h)/n < d {
		return 0, fmt.Errorf("%d values for %d nodes x at least %d dims", len(h), n, d)
	}
	w := len(h) / n
	if len(s.buf) != n*d {
		s.buf = make([]float32, n*d)
	}
	for i, v := range s.loader.Inv {
		copy(s.buf[i*d:(i+1)*d], h[int(v)*w:int(v)*w+d])
	}
	return s.hist[l].RefreshHost(s.buf, step)
}

// refresh replaces history l with the exact embeddings h computed by the
// evaluation of epoch, stamped with step, and records its hist_err event.
func (s *gasState) refresh(rec *profile.Recorder, step int64, epoch, l int, h []float32) error {
	e, err := s.fill(l, h, step)
	if err != nil {
		return fmt.Errorf("refresh history of layer %d: %w", l+1, err)
	}
	history.EmitHistErr(rec, epoch, l, e)
	if l == 0 || !s.refreshed {
		s.relErr = e
	} else {
		s.relErr = max(s.relErr, e)
	}
	s.refreshed = true
	return nil
}

// epoch trains one epoch of GAS mini-batches: the non-empty parts,
// shuffled, in groups of PartsPerBatch.
func (sch *gasSchedule) epoch(ctx context.Context, epoch int, st *EpochStat) error {
	groups, err := sch.s.loader.Batches(epoch, sch.gas.partsPerBatch, sch.gas.seed)
	if err != nil {
		return err
	}
	acc := epochAcc{st: st}
	for i, parts := range groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := sch.batch(epoch, i, parts, &acc); err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
	}
	acc.finish()
	return nil
}

// batch builds, gathers and trains the GAS mini-batch of parts. A batch
// without training nodes is skipped (nothing to learn from, nothing pushed).
func (sch *gasSchedule) batch(epoch, index int, parts []int32, acc *epochAcc) error {
	t, gd := &sch.d, &sch.gas
	s, rec := sch.s, t.rec
	t0 := rec.Now()
	b, err := s.loader.Batch(epoch, index, parts, gd.layers)
	if err != nil {
		return err
	}
	orig, err := s.loader.OriginalIDs(b.Nodes)
	if err != nil {
		return err
	}
	var rows, labels []int32
	for i, v := range orig[:b.InBatch] {
		if s.isTrain[v] {
			rows = append(rows, int32(i))
			labels = append(labels, gd.y[v])
		}
	}
	if len(rows) == 0 {
		rec.Span(profile.StageSample, profile.LaneCompute, epoch, index, t0, rec.Now()-t0)
		return nil
	}
	blk := gd.model.PrepareBlock(b.Blocks[0], orig, gd.deg)
	blocks := make([]*graph.Block, gd.layers)
	for l := range blocks {
		blocks[l] = blk
	}
	t1 := rec.Now()
	rec.Span(profile.StageSample, profile.LaneCompute, epoch, index, t0, t1-t0)
	x, err := t.dev.Alloc(len(orig), gd.f)
	if err != nil {
		return t.policy.batchFailed(err, epoch, index)
	}
	defer t.dev.Free(x)
	t.load.gather(x, orig, epoch, index, profile.LaneCompute)
	rec.Span(profile.StageTransfer, profile.LaneCompute, epoch, index, t1, rec.Now()-t1)

	scope := device.NewScope()
	dev := device.Scoped(t.dev, scope)
	step := int64(gd.opt.Steps())
	halo := func(l int, y *tensor.Tensor) (*tensor.Tensor, error) {
		return s.pushPull(dev, rec, epoch, index, l, b, y, blk.NumSrc, step)
	}
	loss, ok, err := t.step.stepWith(dev, epoch, index, func(c *nn.Context) (*tensor.Tensor, error) {
		return gd.model.ForwardGAS(c, blocks, x, halo)
	}, gd.model.BackwardGAS, rows, labels)
	if err != nil {
		return t.policy.batchFailed(err, epoch, index)
	}
	t.mem.recordTrain(epoch, index, x.Bytes(), scope.Peak(), 0, memory.Shape{})
	acc.add(loss, ok, len(labels))
	return nil
}

// pushPull builds layer l+1's input from y, layer l's in-batch output: y's
// rows followed by the halo's rows pulled from history l (their staleness
// recorded first), then pushes y into history l at step.
func (s *gasState) pushPull(dev device.Device, rec *profile.Recorder, epoch, index, l int, b *sample.GASBatch, y *tensor.Tensor, numSrc int, step int64) (*tensor.Tensor, error) {
	hst := s.hist[l]
	if y.Rows != b.InBatch || y.Cols != hst.Dim() {
		return nil, fmt.Errorf("layer %d output %s, want %dx%d", l+1, y.Shape(), b.InBatch, hst.Dim())
	}
	h, err := dev.Alloc(numSrc, y.Cols)
	if err != nil {
		return nil, err
	}
	dev.Copy(h.RowSlice(0, y.Rows), y)
	tp := rec.Now()
	st := hst.Staleness(b.Halo, step)
	history.EmitStale(rec, epoch, index, l, st)
	s.staleSum += st.Mean * float64(st.Rows)
	s.staleRows += int64(st.Rows)
	s.staleMax = max(s.staleMax, st.Max)
	if err := hst.Pull(dev, h.RowSlice(b.InBatch, numSrc), b.Halo); err != nil {
		dev.Free(h)
		return nil, err
	}
	tq := rec.Now()
	rec.Span(profile.StageHistoryPull, profile.LaneCompute, epoch, index, tp, tq-tp)
	j := 0
	for _, r := range b.PushRanges {
		if err := hst.PushRange(dev, y.RowSlice(j, j+r.Count), r.Offset, r.Count, step); err != nil {
			dev.Free(h)
			return nil, err
		}
		j += r.Count
	}
	rec.Span(profile.StageHistoryPush, profile.LaneCompute, epoch, index, tq, rec.Now()-tq)
	return h, nil
}

// keeper refreshes the histories with the exact embeddings of the
// evaluation of epoch.
func (sch *gasSchedule) keeper(epoch int) func(l int, h []float32) error {
	return func(l int, h []float32) error {
		return sch.s.refresh(sch.d.rec, int64(sch.gas.opt.Steps()), epoch, l, h)
	}
}

// close releases the histories (pinned device memory on the CUDA
// backend).
func (sch *gasSchedule) close() {
	if sch.s == nil {
		return
	}
	for _, h := range sch.s.hist {
		h.Close()
	}
}

// fill stores the run's history figures in res.
func (sch *gasSchedule) fill(res *Result) {
	s := sch.s
	for _, h := range s.hist {
		res.HistoryBytes += h.Bytes()
	}
	if s.staleRows > 0 {
		mean, mx := s.staleSum/float64(s.staleRows), s.staleMax
		res.StalenessMean, res.StalenessMax = &mean, &mx
	}
	if s.refreshed {
		e := s.relErr
		res.HistoryRelErr = &e
	}
}
