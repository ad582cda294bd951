package dashboard

import (
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/sessions"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/synth"
	"github.com/gnnscope/gnnscope/tui/timeline"
)

// benchRuns shape the benchmark's session: a baseline and a pipelined
// run with histories, 56 epochs of 1000 batches each: just over a
// million events in all.
var benchRuns = []synth.Options{
	{Run: "baseline", Epochs: 56, Batches: 1000, Seed: 1, GPUEvery: 50},
	{Run: "optimized", Epochs: 56, Batches: 1000, Samplers: 2, Layers: 2, OOMEvery: 997, Seed: 2, GPUEvery: 50, Cache: true},
}

var (
	benchOnce  sync.Once
	benchModel *Model
	benchN     int64
	benchHeap  uint64
)

// loadBench digests the benchmark session once.
func loadBench() {
	benchOnce.Do(func() {
		c := common.New(nil, common.Options{})
		c.SetSize(200, 50)
		names := make([]string, len(benchRuns))
		for i, o := range benchRuns {
			names[i] = o.Run
		}
		m := newStatic(c, names, true)
		m.minGap = 0 // every View draws: the benchmark measures frames
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i, o := range benchRuns {
			synth.Generate(o, func(e *profile.Event) {
				if e.T != profile.TypeRunEnd { // live: the runs go on
					m.set.Add(i, e)
					benchN++
				}
			})
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		benchHeap = after.HeapAlloc - before.HeapAlloc
		benchModel = m
	})
}

// BenchmarkDashboardFrame draws full 200×50 frames of a live session of
// about a million events. Every frame follows a new span in each run:
// the table, the timelines and the staleness of both runs are drawn
// again; the memory and metric charts, which no span changes, come from
// their caches (BenchmarkDashboardFrameOverlay draws charts every
// frame).
func BenchmarkDashboardFrame(b *testing.B) { benchFrame(b, 0, false) }

// BenchmarkDashboardFrameWholeRun is BenchmarkDashboardFrame with the
// timelines zoomed out to the whole run: every span is drawn.
func BenchmarkDashboardFrameWholeRun(b *testing.B) { benchFrame(b, len(timeline.Windows), false) }

// BenchmarkDashboardFrameOverlay draws frames with the overlay on
// (every run's loss, accuracy and memory in one chart each, smoothed),
// and every frame also brings each run a memory point and a batch loss,
// so the overlay's charts are drawn again each time too.
func BenchmarkDashboardFrameOverlay(b *testing.B) { benchFrame(b, 0, true) }

// BenchmarkDashboardFrameWholeRunOverlay is the heaviest frame: the whole
// run's spans drawn and the overlay's charts redrawn each time.
func BenchmarkDashboardFrameWholeRunOverlay(b *testing.B) {
	benchFrame(b, len(timeline.Windows), true)
}

// benchFrame draws frames after zooming out zoomOut steps, with the
// overlay on when overlay is set.
func benchFrame(b *testing.B, zoomOut int, overlay bool) {
	loadBench()
	m := benchModel
	m.charts = charts{overlay: overlay, smooth: 3 * b2i(overlay)}
	m.applyCharts()
	defer func() { m.charts = charts{}; m.applyCharts() }()
	for _, p := range m.panels {
		for range zoomOut {
			p.timeline.ZoomOut()
		}
	}
	defer func() {
		for _, p := range m.panels {
			for range zoomOut {
				p.timeline.ZoomIn()
			}
		}
	}()
	m.set.Lock()
	ends := make([]int64, len(m.set.Runs()))
	for i, r := range m.set.Runs() {
		ends[i] = r.Spans.MaxEnd()
	}
	m.set.Unlock()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime(b)
	for i := 0; i < b.N; i++ {
		for r := range ends {
			e := profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 51, Batch: i,
				Start: ends[r], Dur: int64(time.Millisecond)}
			ends[r] += int64(time.Millisecond)
			m.set.Add(r, &e)
			if overlay {
				m.set.Add(r, &profile.Event{T: profile.TypeMem, Epoch: 51, Batch: i, Phase: profile.PhaseTrain, Peak: 600 << 20, Budget: 1 << 30})
				m.set.Add(r, &profile.Event{T: profile.TypeMetric, Name: "batch_loss", Epoch: 51, Batch: i, Value: 0.5})
			}
		}
		if len(m.View()) == 0 {
			b.Fatal("empty frame")
		}
	}
	// CPU time per frame, next to ns/op (wall time): on a machine shared
	// with other work the two differ
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(benchN), "events")
	b.ReportMetric(float64(benchHeap)/(1<<20), "state-MiB")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestFrameTime checks the frame budget (10 ms) on the benchmark's
// session, unless -short. It judges the CPU time per frame, which a
// machine busy with other work does not inflate the way it inflates
// wall time; both are logged.
func TestFrameTime(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a million events")
	}
	loadBench()
	for _, bench := range []struct {
		name string
		fn   func(*testing.B)
	}{{"panels", BenchmarkDashboardFrame}, {"overlay", BenchmarkDashboardFrameOverlay}} {
		res := testing.Benchmark(bench.fn)
		wall := time.Duration(res.NsPerOp())
		cpu := time.Duration(res.Extra["cpu-ns/op"])
		t.Logf("%s frame at 200x50 with %d events: %v CPU, %v wall, %d allocs, %d B per frame; digest %.1f MiB",
			bench.name, benchN, cpu, wall, res.AllocsPerOp(), res.AllocedBytesPerOp(), float64(benchHeap)/(1<<20))
		if cpu > 10*time.Millisecond {
			t.Errorf("a %s frame takes %v of CPU, budget 10ms", bench.name, cpu)
		}
	}
}

// TestIdleCPU runs the dashboard in a Bubble Tea program (output
// discarded) on a live session whose run is running but writes nothing,
// and measures the process's CPU time with getrusage: tick checks,
// journal polls and frames together must stay under 5 % of one core.
// GNNSCOPE_IDLE_SECONDS sets the measuring time (default 3 s);
// GNNSCOPE_IDLE_OVERLAY set to anything measures with the overlay on.
func TestIdleCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("measures for seconds")
	}
	secs := 3.0
	if s := os.Getenv("GNNSCOPE_IDLE_SECONDS"); s != "" {
		if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 {
			secs = v
		}
	}
	store, err := sessions.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Create(sessions.SessionMeta{Variants: []sessions.Variant{{Name: "baseline"}, {Name: "optimized"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range benchRuns {
		o.Epochs, o.Cut = 5, 2500 // a run caught mid-epoch
		jw, err := sess.OpenJournal(o.Run)
		if err != nil {
			t.Fatal(err)
		}
		var evs []profile.Event
		synth.Generate(o, func(e *profile.Event) { evs = append(evs, *e) })
		if err := jw.WriteEvents(evs); err != nil {
			t.Fatal(err)
		}
		if err := jw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := sess.WritePid(o.Run, os.Getpid()); err != nil { // "running": this process is alive
			t.Fatal(err)
		}
	}
	c := common.New(store, common.Options{})
	c.SetSize(200, 50)
	m, err := New(c, sess.ID(), false)
	if err != nil {
		t.Fatal(err)
	}
	if !m.live {
		t.Fatal("the session is not live")
	}
	if os.Getenv("GNNSCOPE_IDLE_OVERLAY") != "" { // measure with the overlay on
		m.charts = charts{overlay: true, smooth: 3}
		m.applyCharts()
	}
	root := &idleRoot{m: m}
	p := tea.NewProgram(root, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithWindowSize(200, 50),
		tea.WithoutSignalHandler(), tea.WithContext(t.Context()))
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	// let it digest the journals and draw, then measure the idle state
	deadline := time.Now().Add(10 * time.Second)
	for !root.loaded() {
		if time.Now().After(deadline) {
			t.Fatal("journals not digested")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	u0, wall0 := cpuTime(t), time.Now()
	frames0 := root.frames()
	time.Sleep(time.Duration(secs * float64(time.Second)))
	u1, wall1 := cpuTime(t), time.Now()
	frames := root.frames() - frames0
	p.Quit()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	cpu := (u1 - u0).Seconds() / wall1.Sub(wall0).Seconds()
	t.Logf("idle live dashboard (2 runs, 200x50): %.2f%% of one core over %.1fs (CPU %v), %d View calls",
		100*cpu, wall1.Sub(wall0).Seconds(), u1-u0, frames)
	if cpu > 0.05 {
		t.Errorf("idle dashboard uses %.1f%% of a core, budget 5%%", 100*cpu)
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// idleRoot is the smallest root model: it forwards everything to the
// dashboard, as the workbench's root does.
type idleRoot struct {
	m  *Model
	mu sync.Mutex
	n  int
}

func (r *idleRoot) Init() tea.Cmd { return r.m.Init() }

func (r *idleRoot) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := r.m.Update(msg)
	return r, cmd
}

func (r *idleRoot) View() tea.View {
	r.mu.Lock()
	r.n++
	r.mu.Unlock()
	return tea.NewView(r.m.View())
}

func (r *idleRoot) frames() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// loaded reports whether both runs hold their journals' events.
func (r *idleRoot) loaded() bool {
	r.m.set.Lock()
	defer r.m.set.Unlock()
	for _, run := range r.m.set.Runs() {
		if run.Events == 0 || run.Mem.Len() < 2500 {
			return false
		}
	}
	return true
}

// BenchmarkReplayDigest measures opening a finished million-event
// session at its end: the replay delivers every event at once and the
// runs digest them (the journals are already decoded into the replay's
// tracks, as Session.Replay does).
func BenchmarkReplayDigest(b *testing.B) {
	var tracks []sessions.Track
	var n int64
	for _, o := range benchRuns {
		tr := sessions.Track{Run: o.Run}
		synth.Generate(o, func(e *profile.Event) { tr.Events = append(tr.Events, *e) })
		n += int64(len(tr.Events))
		tracks = append(tracks, tr)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m, _ := replayModel(b, common.Options{}, 200, 50, tracks, sessions.ReplayOptions{Paused: true})
		m.replay.Seek(m.replay.Duration())
		waitEvents(b, m, n)
		m.Close()
	}
	b.ReportMetric(float64(n), "events")
}
