package dashboard

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
)

// gpuRuns are twoRuns with gpu samples every 10 batches.
func gpuRuns() []sessions.Track {
	return []sessions.Track{
		{Run: "baseline", Events: collect(synth.Options{Run: "baseline", Epochs: 3, Batches: 200, Seed: 1, GPUEvery: 10})},
		{Run: "optimized", Events: collect(synth.Options{Run: "optimized", Epochs: 3, Batches: 200, Samplers: 2, Layers: 2, OOMEvery: 97, Seed: 2, GPUEvery: 10})},
	}
}

// finishedTracks opens a replay of tracks at its end.
func finishedTracks(t testing.TB, opts common.Options, w, h int, tracks []sessions.Track) *Model {
	m, _ := replayModel(t, opts, w, h, tracks, sessions.ReplayOptions{Paused: true})
	m.replay.Seek(m.replay.Duration())
	waitEvents(t, m, total(tracks))
	waitDrained(t, m)
	return m
}

func TestOverlayKey(t *testing.T) {
	m := finishedTracks(t, common.Options{NoColor: true}, 160, 48, gpuRuns())
	before := ansi.Strip(m.View())
	if m.Overlay() || strings.Contains(before, "Memory peak") {
		t.Fatal("overlay on before o")
	}
	m.Update(press("o"))
	v := ansi.Strip(m.View())
	if !m.Overlay() {
		t.Fatal("o did not turn the overlay on")
	}
	// one chart for all runs: a legend entry per run, with its own
	// marker without color, in the loss, accuracy and memory charts
	for _, want := range []string{"Loss  * baseline 1.59", "+ optimized 1.59", "Accuracy val  * baseline", "Memory peak  * baseline", "budget 1.00 GiB", "OOM"} {
		if !strings.Contains(v, want) {
			t.Errorf("overlay lacks %q:\n%s", want, v)
		}
	}
	// one panel (the focused run's timeline), not two side by side
	if strings.Count(v, "Timeline") != 1 {
		t.Errorf("%d timelines in the overlay", strings.Count(v, "Timeline"))
	}
	golden.Check(t, "overlay_160x48", v)
	m.Update(press("o"))
	if m.Overlay() || ansi.Strip(m.View()) != before {
		t.Error("a second o did not bring the panels back")
	}
}

func TestSmoothingKeys(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 120, 40)
	m.Update(press("s"))
	m.Update(press("s"))
	if m.Smoothing() != 0.8 {
		t.Fatalf("smoothing %v after s s", m.Smoothing())
	}
	if v := ansi.Strip(m.View()); !strings.Contains(v, "Loss (EMA 0.8)") || !strings.Contains(v, "Accuracy (EMA 0.8)") {
		t.Errorf("titles do not show the smoothing:\n%s", v)
	}
	for range 10 {
		m.Update(press("s"))
	}
	if m.Smoothing() != 0.99 {
		t.Errorf("smoothing %v past the top", m.Smoothing())
	}
	for range 10 {
		m.Update(press("S"))
	}
	if m.Smoothing() != 0 || strings.Contains(ansi.Strip(m.View()), "EMA") {
		t.Errorf("S did not turn the smoothing off: %v", m.Smoothing())
	}
	m.Update(press("o"))
	m.Update(press("s"))
	if v := ansi.Strip(m.View()); !strings.Contains(v, "Loss (EMA 0.5)  * baseline") {
		t.Errorf("overlay title without smoothing:\n%s", v)
	}
}

func TestLogScaleKey(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 120, 40)
	m.Update(press("y"))
	if !m.LogLoss() {
		t.Fatal("y did not set the log scale")
	}
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "Loss (log)") || strings.Contains(v, "Accuracy (log)") {
		t.Errorf("log scale on the loss only:\n%s", v)
	}
	m.Update(press("y"))
	if m.LogLoss() || strings.Contains(ansi.Strip(m.View()), "(log)") {
		t.Error("a second y did not turn the log scale off")
	}
}

func TestGPULane(t *testing.T) {
	m := finishedTracks(t, common.Options{NoColor: true}, 120, 40, gpuRuns())
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "GPU util ") || !strings.Contains(v, "GPU mem  ") {
		t.Fatalf("no GPU lane:\n%s", v)
	}
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "GPU util ") {
			// under the timeline's legend, over the answers and the memory chart
			if !strings.Contains(strings.Join(lines[:i], "\n"), "Timeline") || !strings.HasPrefix(lines[i+2], "Answers") {
				t.Errorf("lane misplaced:\n%s", v)
			}
			if !strings.ContainsAny(l, "▁▂▃▄▅▆▇█") || !strings.HasSuffix(strings.TrimSpace(l), "%") {
				t.Errorf("util lane %q", l)
			}
		}
	}
	golden.Check(t, "gpu_120x40", v)
	// without gpu events, no lane
	if v := ansi.Strip(finished(t, common.Options{NoColor: true}, 120, 40).View()); strings.Contains(v, "GPU util") {
		t.Error("a lane without gpu events")
	}
	a := finishedTracks(t, common.Options{NoColor: true, ASCII: true}, 120, 40, gpuRuns())
	av := a.View()
	golden.ASCII(t, av)
	if !strings.Contains(av, "GPU util ") {
		t.Errorf("no ASCII lane:\n%s", av)
	}
}

// TestGoldenOverlaySmall is the overlay at 80x24 (the README's screen).
func TestGoldenOverlaySmall(t *testing.T) {
	m := finishedTracks(t, common.Options{NoColor: true}, 80, 24, gpuRuns())
	m.Update(press("o"))
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "Loss  * baseline") || !strings.Contains(v, "Memory peak") {
		t.Errorf("overlay at 80x24:\n%s", v)
	}
	golden.Check(t, "overlay_80x24", v)
}

func TestOverlayASCII(t *testing.T) {
	m := finished(t, common.Options{NoColor: true, ASCII: true}, 80, 24)
	m.Update(press("o"))
	v := m.View()
	golden.ASCII(t, v)
	golden.Check(t, "overlay_ascii_80x24", ansi.Strip(v))
}
