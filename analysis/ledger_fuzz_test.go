package analysis

import (
	"encoding/binary"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

// FuzzLedger feeds arbitrary spans (any stage, lane, rank, epoch and
// order) and checks the ledger's identities: exposed times add up to the
// wall time in every window, and no busy or exposed time is negative or
// exceeds its window.
func FuzzLedger(f *testing.F) {
	f.Add([]byte("\x02\x00\x01\x00\x10\x00\x20\x00\x06\x01\x01\x00\x05\x00\x30\x00"))
	f.Add([]byte("\x00\x00\x01\x00\x00\x00\x10\x00\x02\x02\x02\x00\x08\x00\x10\x00\x02\x00\x03\x00\x20\x00\x10\x00"))
	names := []string{profile.StageSample, profile.StageTransfer, profile.StageTrain, profile.StageForward, profile.StageEval,
		profile.StageWait, profile.StageSetup, profile.StageCache, profile.StageMemWait, profile.StageGPUTrain, "custom"}
	lanes := []string{profile.LaneCompute, profile.SamplerLane(0), profile.SamplerLane(1), profile.LaneEval, profile.LaneCopy,
		profile.LaneGPUCompute, profile.RankLane(1, profile.LaneCompute), profile.RankLane(0, profile.LaneCompute)}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := NewLedgerBuilder()
		for ; len(data) >= 8; data = data[8:] {
			e := profile.Event{T: profile.TypeSpan, Name: names[int(data[0])%len(names)], Lane: lanes[int(data[1])%len(lanes)],
				Epoch: int(data[2] % 6), Start: int64(binary.LittleEndian.Uint16(data[4:])) * 1000,
				Dur: int64(int16(binary.LittleEndian.Uint16(data[6:]))) * 100}
			b.Add(&e)
		}
		l := b.Ledger()
		check := func(what string, w *Window) {
			if s := w.ExposedSum(); s < w.WallS*0.99-1e-12 || s > w.WallS*1.01+1e-12 {
				t.Fatalf("%s: exposed %.9f of wall %.9f", what, s, w.WallS)
			}
			for c := range NumCategories {
				if w.Busy[c] < 0 || w.Exposed[c] < 0 || w.Busy[c] > w.WallS*1.000001+1e-12 {
					t.Fatalf("%s: %s busy %.9f exposed %.9f of %.9f", what, c, w.Busy[c], w.Exposed[c], w.WallS)
				}
			}
		}
		check("whole", &l.Whole)
		for _, e := range l.Epochs {
			check("epoch", &e.Window)
		}
		for _, r := range l.Ranks {
			check("rank", &r.Whole)
		}
		tr := l.Training()
		check("training", &tr)
	})
}
