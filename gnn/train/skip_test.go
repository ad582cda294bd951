package train

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/device"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/gnn/memory"
)

// TestSkipCounts: a run that skips some batches reports how many of how
// many, and the trained ones are the epochs' batches.
func TestSkipCounts(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	cfg := memConfig("sage")
	c := cfg
	c.MemBudget, c.OnOOM = memory.Size(medianTrainPeak(t, cfg, ds, split)), OOMSkip
	res, _ := runRecorded(t, c, ds, split)
	trained := 0
	for _, st := range res.History {
		trained += st.Batches
	}
	if res.SkippedBatches == 0 || res.SkippedBatches != res.OOMCount || res.Batches == 0 || res.Batches != trained {
		t.Fatalf("skipped %d (OOMs %d), trained %d (history %d)", res.SkippedBatches, res.OOMCount, res.Batches, trained)
	}
}

// TestSkipAllFails: a run whose every batch is skipped trained nothing:
// it fails after its first epoch with ErrNothingTrained, which is not an
// OOM error (the run failed; no batch was aborted), and frees everything.
func TestSkipAllFails(t *testing.T) {
	ds := plantedPartition(t, 900, 4, 3)
	split, _ := data.PerClassSplit(ds.Y, ds.NumClasses, 40, 150, 300, 0)
	c := memConfig("sage")
	res, _ := runRecorded(t, c, ds, split)
	c.MemBudget, c.OnOOM = memory.Size(res.ParamBytes+256), OOMSkip
	dev := cpu.New(1, 0)
	out, err := Run(context.Background(), c, ds, split, dev, Options{})
	if !errors.Is(err, ErrNothingTrained) || device.IsOOM(err) || out != nil {
		t.Fatalf("err %v (OOM %v), result %v", err, device.IsOOM(err), out)
	}
	if !strings.Contains(err.Error(), "batches skipped by epoch 1; the last: ") || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("err %q", err)
	}
	if live := dev.Mem().Stats().Live; live != 0 {
		t.Fatalf("%d bytes live", live)
	}
}
