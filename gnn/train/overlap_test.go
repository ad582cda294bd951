package train

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/tensor"
)

// holdingDevice holds the first evaluation at its first Argmax (only
// inference's last layer takes one) until release is closed, after
// telling held, and counts the Argmax calls that returned. It holds the
// training of epoch 2 (the training steps after the first perEpoch, each
// taking one softmax cross-entropy) until the evaluation is held and
// canceled is closed, so that the cancel falls in the middle of epoch 2
// while epoch 1's evaluation is in flight, whatever the timing.
type holdingDevice struct {
	device.Device
	once     sync.Once
	held     chan struct{}
	release  chan struct{}
	returned atomic.Int64
	perEpoch int64
	steps    atomic.Int64
	canceled <-chan struct{}
}

func (d *holdingDevice) SoftmaxCrossEntropy(logits *tensor.Tensor, labels []int32, grad *tensor.Tensor) (float64, int) {
	if d.steps.Add(1) > d.perEpoch {
		<-d.held
		<-d.canceled
	}
	return d.Device.SoftmaxCrossEntropy(logits, labels, grad)
}

func (d *holdingDevice) Argmax(dst []int32, x *tensor.Tensor) {
	d.once.Do(func() {
		close(d.held)
		<-d.release
	})
	d.Device.Argmax(dst, x)
	d.returned.Add(1)
}

// TestCancelWhileEvaluationOverlaps cancels a run in the middle of epoch
// 2's training while epoch 1's overlapped evaluation is still running,
// and checks that Run waited for that evaluation before it returned:
// nothing is left on the device (the evaluated snapshot included) and the
// evaluation had finished. Run with -race, it also checks that nothing of
// the evaluation touches the trainer after Run has freed it.
func TestCancelWhileEvaluationOverlaps(t *testing.T) {
	ds := plantedPartition(t, 600, 4, 7)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 80, 100, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{0, 2} {
		cfg := Defaults("sage")
		cfg.Epochs, cfg.Hidden, cfg.BatchSize, cfg.Fanouts = 5, 16, 32, []int{5, 5}
		cfg.OverlapEval, cfg.SamplerWorkers = true, workers
		cfg.EvalChunk = 64
		ctx, cancel := context.WithCancel(context.Background())
		dev := &holdingDevice{Device: cpu.New(1, 0), held: make(chan struct{}), release: make(chan struct{}),
			perEpoch: int64((len(split.Train) + cfg.BatchSize - 1) / cfg.BatchSize), canceled: ctx.Done()}
		epochs := 0
		var released atomic.Bool
		go func() {
			<-dev.held // epoch 1's evaluation has begun; epoch 2 is training
			cancel()
			// Long enough for a run that does not wait to be gone.
			time.Sleep(100 * time.Millisecond)
			released.Store(true)
			close(dev.release)
		}()
		_, err := Run(ctx, cfg, ds, split, dev, Options{OnEpoch: func(EpochStat) { epochs++ }})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%d workers: err %v, want the context's cancel", workers, err)
		}
		if !released.Load() || dev.returned.Load() == 0 {
			t.Fatalf("%d workers: Run returned while epoch 1's evaluation was still running", workers)
		}
		if live := dev.Mem().Stats().Live; live != 0 {
			t.Fatalf("%d workers: %d bytes live after the canceled run", workers, live)
		}
		if epochs != 0 {
			t.Fatalf("%d workers: %d epochs reported by a run canceled before its first evaluation was delivered", workers, epochs)
		}
	}
}
