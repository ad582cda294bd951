package analysis

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

const ms = int64(1e6)

// sp is a span from start to end in milliseconds.
func sp(name, lane string, epoch, batch int, start, end int64) profile.Event {
	return profile.Event{T: profile.TypeSpan, Name: name, Lane: lane, Epoch: epoch, Batch: batch, Start: start * ms, Dur: (end - start) * ms}
}

// trainSpans is a train span with its children on the compute lane.
func trainSpans(lane string, epoch, batch int, start, end int64) []profile.Event {
	third := (end - start) / 3
	return []profile.Event{
		sp(profile.StageForward, lane, epoch, batch, start, start+third),
		sp(profile.StageBackward, lane, epoch, batch, start+third, start+2*third),
		sp(profile.StageStep, lane, epoch, batch, start+2*third, end),
		sp(profile.StageTrain, lane, epoch, batch, start, end),
	}
}

func runStart(variant string, cfg map[string]any, cores int) profile.Event {
	b, _ := json.Marshal(cfg)
	return profile.Event{T: profile.TypeRunStart, V: 1, Run: variant, Variant: variant, Config: b, Host: &profile.Host{Cores: cores}}
}

func metric(name string, epoch int, v float64) profile.Event {
	return profile.Event{T: profile.TypeMetric, Name: name, Epoch: epoch, Batch: -1, Value: v}
}

func ledgerOf(evs []profile.Event) Ledger {
	b := NewLedgerBuilder()
	for i := range evs {
		b.Add(&evs[i])
	}
	return b.Ledger()
}

func runOf(evs []profile.Event) *Run {
	b := NewRunBuilder()
	for i := range evs {
		b.Add(&evs[i])
	}
	return b.Run()
}

// near reports whether a and b agree within 1e-9 s.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// checkSum fails unless the exposed times of w add up to its wall time
// within 1 %.
func checkSum(t *testing.T, what string, w *Window) {
	t.Helper()
	if s := w.ExposedSum(); math.Abs(s-w.WallS) > 0.01*w.WallS {
		t.Errorf("%s: exposed times add up to %.6f s, wall %.6f s", what, s, w.WallS)
	}
}

// checkLedgerSums checks the identity on the whole run and every window.
func checkLedgerSums(t *testing.T, l *Ledger) {
	t.Helper()
	checkSum(t, "whole", &l.Whole)
	checkSum(t, "setup", &l.Setup)
	var wall float64
	wall += l.Setup.WallS
	for _, e := range l.Epochs {
		checkSum(t, "epoch", &e.Window)
		wall += e.WallS
	}
	if wall > l.Whole.WallS*1.0000001 {
		t.Errorf("windows cover %.6f s of a %.6f s run", wall, l.Whole.WallS)
	}
}
