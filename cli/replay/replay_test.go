package replay

import (
	"math"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
)

func TestParseSpeed(t *testing.T) {
	for in, want := range map[string]float64{"1": 1, "10x": 10, "x10": 10, "0.5": 0.5, " MAX ": math.Inf(1)} {
		if got, err := parseSpeed(in); err != nil || got != want {
			t.Errorf("parseSpeed(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-2", "fast", "inf", "x"} {
		if _, err := parseSpeed(in); err == nil {
			t.Errorf("parseSpeed(%q): no error", in)
		}
	}
}

// A guard event prints its predicted and actual peaks and its action; it
// is no OOM.
func TestFormatReplayLineGuard(t *testing.T) {
	ev := sessions.ReplayEvent{Run: "base", Event: profile.Event{T: profile.TypeGuard, Epoch: 1, Batch: 3,
		Predicted: 5 << 20, Actual: 3 << 20, Budget: 4 << 20, Action: profile.ActionSplit}}
	got := formatReplayLine(ev, 4)
	for _, want := range []string{"guard ", "epoch=1 batch=3", "predicted=5", "actual=3", "budget=4", "action=split"} {
		if !strings.Contains(got, want) {
			t.Errorf("line %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "oom") || strings.Contains(got, "requested") {
		t.Errorf("line %q reads as an OOM", got)
	}
}

// A run_start line names the variant, host and wall clock; a mem line its
// phase, batch and sizes; a per-epoch metric no batch.
func TestFormatReplayLineFields(t *testing.T) {
	for _, tc := range []struct {
		e    profile.Event
		want string
	}{
		{profile.Event{T: profile.TypeRunStart, Variant: "optimized", Wall: "2026-11-28T10:00:00Z",
			Host: &profile.Host{Hostname: "box", Cores: 2, GPU: "H100"}},
			` variant=optimized host=box cores=2 gpu="H100" wall=2026-11-28T10:00:00Z`},
		{profile.Event{T: profile.TypeMem, Phase: profile.PhaseEval, Epoch: 2, Batch: 5, Peak: 3 << 20, Live: 1 << 20, Budget: 4 << 20},
			` phase=eval epoch=2 batch=5 peak=3.0 MiB live=1.0 MiB budget=4.0 MiB`},
		{profile.Event{T: profile.TypeMetric, Name: "loss", Epoch: 3, Batch: -1, Value: 0.25},
			` loss=0.25 epoch=3`},
	} {
		line := formatReplayLine(sessions.ReplayEvent{Run: "base", Event: tc.e}, 4)
		if _, got, _ := strings.Cut(line, tc.e.T); strings.TrimLeft(got, " ") != strings.TrimLeft(tc.want, " ") {
			t.Errorf("%s line %q, want the fields %q", tc.e.T, line, tc.want)
		}
	}
}
