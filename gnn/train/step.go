package train

import (
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/graph"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/gnn/tensor"
	"github.com/gnnscope/gnnscope/profile"
)

// stepper is the training step every schedule shares: forward, the loss,
// backward and one optimizer update of its model. The memory guard's
// calibration runs one of its own, on a scratch model, unrecorded.
type stepper struct {
	model *nn.Model
	opt   *nn.Optimizer
	rec   *profile.Recorder // nil: nothing recorded
	seed  uint64
}

// ctx is the training context of one step on dev.
func (s *stepper) ctx(dev device.Device) *nn.Context {
	return &nn.Context{Dev: dev, Train: true, Seed: s.seed, Step: uint64(s.opt.Steps())}
}

// step runs forward, loss on rows (indices into the logits) and backward,
// then one optimizer update on dev (the trainer's device, or a scoped view
// of it that measures the step's own peak), recording a train span with its
// forward, backward and step children on the compute lane.
func (s *stepper) step(dev device.Device, epoch, batch int, blocks []*graph.Block, x *tensor.Tensor, rows []int32, labels []int32) (loss float64, correct int, err error) {
	return s.stepWith(dev, epoch, batch, func(c *nn.Context) (*tensor.Tensor, error) {
		return s.model.Forward(c, blocks, x)
	}, s.model.Backward, rows, labels)
}

// stepWith is step with the model's forward and backward passes given as
// functions (GAS training runs its own).
func (s *stepper) stepWith(dev device.Device, epoch, batch int, forward func(*nn.Context) (*tensor.Tensor, error), backward func(*nn.Context, *tensor.Tensor) error, rows []int32, labels []int32) (loss float64, correct int, err error) {
	rec := s.rec
	t0 := rec.Now()
	defer func() { rec.Span(profile.StageTrain, profile.LaneCompute, epoch, batch, t0, rec.Now()-t0) }()
	defer gpuSpan(rec, dev, profile.StageGPUTrain, epoch, batch)()
	c := s.ctx(dev)
	logits, err := forward(c)
	if err != nil {
		return 0, 0, err
	}
	defer dev.Free(logits)
	grad, err := dev.Alloc(logits.Rows, logits.Cols)
	if err != nil {
		s.model.Release(c)
		return 0, 0, err
	}
	defer dev.Free(grad)
	if rows == nil { // every logit row is a target
		loss, correct = dev.SoftmaxCrossEntropy(logits, labels, grad)
	} else {
		sel, err := dev.Alloc(len(rows), logits.Cols)
		if err != nil {
			s.model.Release(c)
			return 0, 0, err
		}
		defer dev.Free(sel)
		gsel, err := dev.Alloc(len(rows), logits.Cols)
		if err != nil {
			s.model.Release(c)
			return 0, 0, err
		}
		defer dev.Free(gsel)
		dev.Gather(sel, logits, rows)
		loss, correct = dev.SoftmaxCrossEntropy(sel, labels, gsel)
		dev.ScatterAdd(grad, gsel, rows)
	}
	t1 := rec.Now()
	rec.Span(profile.StageForward, profile.LaneCompute, epoch, batch, t0, t1-t0)
	if err := backward(c, grad); err != nil {
		return 0, 0, err
	}
	t2 := rec.Now()
	rec.Span(profile.StageBackward, profile.LaneCompute, epoch, batch, t1, t2-t1)
	s.opt.Step(dev, s.model.Params())
	rec.Span(profile.StageStep, profile.LaneCompute, epoch, batch, t2, rec.Now()-t2)
	rec.Metric("batch_loss", epoch, batch, loss)
	return loss, correct, nil
}

// gpuSpan marks dev's compute stream and returns a function that marks it
// again and records the work queued in between as a span called name,
// once the device has run it. It does nothing on a synchronous device.
func gpuSpan(rec *profile.Recorder, dev device.Device, name string, epoch, batch int) func() {
	a, ok := device.AsAsync(dev)
	if !ok || rec == nil {
		return func() {}
	}
	begin := a.Mark(device.StreamCompute)
	return func() {
		a.Span(begin, a.Mark(device.StreamCompute), func(start, dur int64) {
			rec.Span(name, profile.LaneGPUCompute, epoch, batch, start, dur)
		})
	}
}
