package train

import (
	"context"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
)

// TestSelectorCriteria feeds a hand-made sequence of evaluations to each
// criterion and checks the selected epoch, where patience stops the run,
// ties (the first stays) and NaN (never selected).
func TestSelectorCriteria(t *testing.T) {
	type ev struct{ acc, loss float64 }
	// Accuracy peaks at epoch 3 (ties at 6), loss bottoms at epoch 5;
	// epoch 2 is NaN in both.
	seq := []ev{
		{0.50, 1.90}, {math.NaN(), math.NaN()}, {0.80, 1.20}, {0.78, 1.00}, {0.79, 0.90},
		{0.80, 0.95}, {0.77, 1.10}, {0.76, 1.30}, {0.81, 1.40}, {0.70, 1.50},
	}
	for _, tc := range []struct {
		criterion Select
		patience  int
		best      int // the selected epoch when the run ends
		stop      int // the epoch after which patience stops it (0: never)
	}{
		{SelectValAcc, 0, 9, 0},
		{"", 0, 9, 0},            // "" is val-acc
		{SelectValAcc, 3, 3, 6},  // 4, 5 and 6 (a tie) do not beat 3
		{SelectValAcc, 10, 9, 0}, // the late best at 9
		{SelectValLoss, 0, 5, 0},
		{SelectValLoss, 3, 5, 8},
		{SelectValLoss, 2, 5, 7}, // 3, 4 and 5 each improve on the one before
		{SelectValLoss, 1, 1, 2}, // NaN at 2 is no improvement
	} {
		s := newSelector(tc.criterion, tc.patience)
		stopped := 0
		for i, e := range seq {
			s.observe(i+1, e.acc, e.loss)
			if s.stop() {
				stopped = i + 1
				break
			}
		}
		if s.best != tc.best || stopped != tc.stop {
			t.Errorf("%q patience %d: selected epoch %d, stopped after %d; want %d and %d",
				tc.criterion, tc.patience, s.best, stopped, tc.best, tc.stop)
		}
	}
}

// TestRunSelectValLoss checks that a run reports the validation loss of
// every evaluated epoch and, with val-loss selection, the figures of the
// epoch of the lowest one, stopping Patience epochs after it; with
// overlapped evaluation too.
func TestRunSelectValLoss(t *testing.T) {
	ds := plantedPartition(t, 400, 4, 2)
	split, err := data.PerClassSplit(ds.Y, ds.NumClasses, 20, 100, 200, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, overlap := range []bool{false, true} {
		cfg := Defaults("gcn")
		cfg.Epochs, cfg.Hidden, cfg.Patience, cfg.Select, cfg.OverlapEval = 150, 16, 10, SelectValLoss, overlap
		cfg.EvalChunk = 128 // several chunks
		res, err := Run(context.Background(), cfg, ds, split, cpu.New(2, 0), Options{})
		if err != nil {
			t.Fatal(err)
		}
		best, last := EpochStat{ValLoss: math.Inf(1)}, 0
		for _, st := range res.History {
			if !st.Evaluated {
				continue
			}
			if !(st.ValLoss > 0) || math.IsInf(st.ValLoss, 0) {
				t.Fatalf("overlap %v: epoch %d validation loss %g", overlap, st.Epoch, st.ValLoss)
			}
			if st.ValLoss < best.ValLoss {
				best = st
			}
			last = st.Epoch
		}
		if res.BestEpoch != best.Epoch || res.ValLoss != best.ValLoss || res.TestAcc != best.TestAcc || res.ValAcc != best.ValAcc {
			t.Errorf("overlap %v: selected epoch %d (loss %g, test %g), want %d (loss %g, test %g)",
				overlap, res.BestEpoch, res.ValLoss, res.TestAcc, best.Epoch, best.ValLoss, best.TestAcc)
		}
		if res.Epochs < cfg.Epochs && last-res.BestEpoch != cfg.Patience {
			t.Errorf("overlap %v: stopped with the last evaluation at epoch %d, %d after the selected one; want %d",
				overlap, last, last-res.BestEpoch, cfg.Patience)
		}
	}
}

func TestSelectValidate(t *testing.T) {
	cfg := Defaults("gcn")
	for _, s := range []Select{"", SelectValAcc, SelectValLoss} {
		cfg.Select = s
		if err := cfg.Validate(); err != nil {
			t.Errorf("select %q: %v", s, err)
		}
	}
	cfg.Select = "val-f1"
	if err := cfg.Validate(); err == nil {
		t.Error("select val-f1 was accepted")
	}
}
