package train

import (
	"time"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/nn"
	"github.com/gnnscope/gnnscope/profile"
)

// evalResult is the outcome of one evaluation.
type evalResult struct {
	val, test float64
	valLoss   float64 // mean cross-entropy of the validation nodes
	secs      float64
	err       error
	params    [][]float32 // the evaluated weights on the host (evaluator.keepParams only)
}

// evaluator evaluates a model's weights on the validation and test nodes
// by layer-wise inference: in turn on the training goroutine, or on its own
// beside training (overlapEval). The trainer builds it once the schedule
// is (trainer.evaluator).
type evaluator struct {
	inf    *inference
	policy *oomPolicy // an out-of-memory evaluation aborts the run
	rec    *profile.Recorder
	y      []int32 // the labels
	isVal  []bool  // per node: in the validation set
	split  *data.Split
	// model is the trained model: an evaluation of it (not of a snapshot)
	// hands its hidden layers to keeper, the schedule when it takes them
	// (GAS refreshes its histories; nil otherwise).
	model  *nn.Model
	keeper layerKeeper
	// keepParams copies the evaluated weights to the host, for the uncut
	// reference evaluation after training (see Result.TestAccUncut).
	keepParams bool
}

// evaluate runs layer-wise inference with model m, recording an eval span
// on lane, and returns the validation and test accuracies and the
// validation loss. An out-of-memory error is recorded as an oom event
// that aborts the run.
func (t *evaluator) evaluate(dev device.Device, m *nn.Model, lane string, epoch int) evalResult {
	t0 := t.rec.Now()
	w0 := time.Now()
	req := inferRequest{dev: dev, model: m, epoch: epoch, ce: &valCE{isVal: t.isVal, y: t.y}}
	if t.keeper != nil && m == t.model {
		req.keep = t.keeper.keeper(epoch)
	}
	preds, err := t.inf.run(req)
	if err != nil {
		t.policy.abort(err, epoch, -1)
	}
	t.rec.Span(profile.StageEval, lane, epoch, 0, t0, t.rec.Now()-t0)
	if err != nil {
		return evalResult{err: err}
	}
	r := evalResult{
		val:     accuracy(preds, t.y, t.split.Valid),
		test:    accuracy(preds, t.y, t.split.Test),
		valLoss: req.ce.loss(),
		secs:    time.Since(w0).Seconds(),
	}
	if t.keepParams {
		r.params = hostParams(dev, m)
	}
	return r
}

// uncut evaluates the weights params (host copies in Params order) of a
// model like base on the whole graph, without the inference cut, and
// returns the test and validation accuracies.
func (t *evaluator) uncut(dev device.Device, base *nn.Model, params [][]float32) (test, val float64, err error) {
	m, err := base.Snapshot(dev)
	if err != nil {
		return 0, 0, err
	}
	defer m.Free(dev)
	for i, p := range m.Params() {
		dev.CopyFromHost(p.W, params[i])
	}
	preds, err := t.inf.uncut(dev, m)
	if err != nil {
		return 0, 0, err
	}
	return accuracy(preds, t.y, t.split.Test), accuracy(preds, t.y, t.split.Valid), nil
}
