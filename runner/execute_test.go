package runner

import (
	"context"
	"errors"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/profile"
)

func TestExecute(t *testing.T) {
	t.Setenv("GNNSCOPE_HOME", t.TempDir())
	exp := NewExperiment("synth-tiny", "sage")
	exp.Train.Epochs = 1
	exp.Train.Threads = 1
	cfg, err := DefaultVariants()[1].Apply(exp.Train)
	if err != nil {
		t.Fatal(err)
	}
	rec := profile.NewRecorder(nil, profile.RecorderOptions{})
	ready := false
	res, err := Execute(context.Background(), exp, cfg, ExecOptions{Recorder: rec, OnReady: func(ds *data.Dataset, sp *data.Split) {
		ready = ds.NumNodes() > 0 && len(sp.Train) > 0
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close("", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !ready || res.Epochs != 1 || res.BestEpoch != 1 {
		t.Errorf("ready %v, result %+v", ready, res)
	}
	if sum := rec.Summary(); sum.Counts[profile.TypeSpan] == 0 {
		t.Errorf("no spans recorded: %+v", sum.Counts)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Execute(ctx, exp, cfg, ExecOptions{})
	if !errors.Is(err, context.Canceled) || RunStatus(ctx, err) != profile.StatusCanceled {
		t.Errorf("canceled: %v", err)
	}
	exp.Data = "no-such-preset"
	if _, err := Execute(context.Background(), exp, cfg, ExecOptions{}); err == nil || RunStatus(context.Background(), err) != profile.StatusFailed {
		t.Errorf("bad data: %v", err)
	}
}
