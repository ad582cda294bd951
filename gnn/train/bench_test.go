package train

import (
	"context"
	"sync"
	"testing"

	"github.com/gnnscope/gnnscope/gnn/data"
	"github.com/gnnscope/gnnscope/gnn/data/synth"
	"github.com/gnnscope/gnnscope/gnn/device/cpu"
	"github.com/gnnscope/gnnscope/profile"
)

var (
	benchOnce sync.Once
	benchDS   *data.Dataset
	benchErr  error
)

// benchData generates synth-small once per benchmark process.
func benchData(b *testing.B) *data.Dataset {
	benchOnce.Do(func() {
		p, ok := synth.Lookup("synth-small")
		if !ok {
			benchErr = errNoPreset
			return
		}
		benchDS, benchErr = synth.Generate(p.Config, 0, nil)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDS
}

type benchError string

func (e benchError) Error() string { return string(e) }

const errNoPreset = benchError("synth-small preset missing")

// benchEpochs trains the configuration (sage, hidden 64, fanouts
// 15,10, batch 1024) for b.N epochs with or without a recorder writing to a
// real JSON encoder, reporting seconds per epoch. Run both with -count and
// compare with benchstat to measure the recording overhead.
func benchEpochs(b *testing.B, record bool) {
	ds := benchData(b)
	cfg := Defaults("sage")
	cfg.Hidden, cfg.Fanouts, cfg.BatchSize = 64, []int{15, 10}, 1024
	cfg.SamplerWorkers, cfg.Prefetch, cfg.OverlapEval = 2, 4, true
	cfg.Epochs = b.N
	var rec *profile.Recorder
	if record {
		rec = profile.NewRecorder(encodeSink{}, profile.RecorderOptions{})
		defer rec.Close("", nil, nil)
	}
	b.ResetTimer()
	res, err := Run(context.Background(), cfg, ds, ds.Split, cpu.New(0, 0), Options{Recorder: rec})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(res.EpochS, "s/epoch")
}

// encodeSink encodes every event as a journal writer would, then drops it.
type encodeSink struct{}

func (encodeSink) WriteEvents(evs []profile.Event) error {
	var buf []byte
	for i := range evs {
		buf = profile.AppendLine(buf[:0], &evs[i])
	}
	return nil
}
func (encodeSink) Flush() error { return nil }

func BenchmarkEpochRecorded(b *testing.B)   { benchEpochs(b, true) }
func BenchmarkEpochUnrecorded(b *testing.B) { benchEpochs(b, false) }
