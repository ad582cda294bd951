package sessions

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

const cpuTrace = "../profile/kineto/testdata/cpu_torch113.json.gz"

// TestImportTraces makes a session of the CPU trace recorded with torch
// 1.13: its steps are the run's batches, so the stage ledger works.
func TestImportTraces(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, files, err := st.ImportTraces([]string{cpuTrace}, TraceImportOptions{Name: "mlp"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Steps != 3 || files[0].Spans != 987 || s.Meta.Name != "mlp" {
		t.Fatalf("files %+v", files)
	}
	js, err := s.SummarizeRun(TraceRun)
	if err != nil {
		t.Fatal(err)
	}
	sum := js.Summary
	if sum.Status != profile.StatusOK || sum.Batches != 3 || len(sum.Epochs) != 1 || sum.DataWaitS <= 0 || sum.Stages["backward"] <= 0 || js.GPU != nil {
		t.Errorf("summary %+v", sum)
	}
}

// trace writes a small Kineto-style trace with wall-clock times.
func trace(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.json")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestImportTracesRanks(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rank := func(r int, base string) string {
		return trace(t, `{"distributedInfo":{"rank":`+string(rune('0'+r))+`,"world_size":2},"baseTimeNanoseconds":`+base+`,"traceEvents":[`+
			`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":1,"tid":1,"ts":0,"dur":100},`+
			`{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":50,"args":{"stream":7,"device":0}}]}`)
	}
	r0, r1 := rank(0, "1700000000000000000"), rank(1, "1700000000000020000")
	s, _, err := st.ImportTraces([]string{r1, r0}, TraceImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := s.ReadRun(TraceRun)
	if err != nil {
		t.Fatal(err)
	}
	var k1 *profile.Event
	for i, e := range evs {
		if e.Lane == "rank1/gpu0/s7" {
			k1 = &evs[i]
		}
	}
	// rank 1 started 20 µs after rank 0: its kernel at 10 µs is at 30
	if k1 == nil || k1.Start != 30_000 || k1.Batch != 4 {
		t.Fatalf("rank 1's kernel %+v in %v", k1, evs)
	}
	if _, _, err := st.ImportTraces([]string{r0, r0}, TraceImportOptions{}); err == nil || !strings.Contains(err.Error(), "both rank 0") {
		t.Errorf("two rank 0: %v", err)
	}
}

// TestAttachTraces adds a trace to a finished run on the run's clock:
// the journal keeps its events and its run_end comes last.
func TestAttachTraces(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{})
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	jw, err := s.OpenJournal("ext")
	if err != nil {
		t.Fatal(err)
	}
	if err := jw.WriteEvents([]profile.Event{
		{T: profile.TypeRunStart, V: 1, Run: "ext", Wall: wall.Format(time.RFC3339Nano)},
		{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: 1, Batch: 0, Start: 1e6, Dur: 9e6},
		{T: profile.TypeRunEnd, Status: profile.StatusOK},
	}); err != nil {
		t.Fatal(err)
	}
	jw.Close()
	// 5 ms after the run's start, on the wall clock
	base := wall.Add(5 * time.Millisecond).UnixNano()
	p := trace(t, `{"baseTimeNanoseconds":`+strconv.FormatInt(base, 10)+`,"traceEvents":[`+
		`{"ph":"X","cat":"user_annotation","name":"ProfilerStep#0","pid":1,"tid":1,"ts":0,"dur":1000},`+
		`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2.5}]}`)
	files, err := s.AttachTraces("ext", []string{p}, TraceImportOptions{})
	if err != nil || len(files) != 1 || files[0].Spans != 2 {
		t.Fatalf("attach: %+v, %v", files, err)
	}
	evs, _, err := s.ReadRun("ext")
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 5 || evs[0].T != profile.TypeRunStart || evs[1].Name != profile.StageTrain || evs[4].T != profile.TypeRunEnd {
		t.Fatalf("journal %+v", evs)
	}
	if mm := evs[3]; mm.Name != "aten::mm" || mm.Start != 5_001_000 || mm.Dur != 2500 || mm.Batch != 0 {
		t.Errorf("aten::mm %+v", mm)
	}
	if js, _ := s.SummarizeRun("ext"); js.Summary.Batches != 1 {
		t.Errorf("the trace's steps count as batches: %d", js.Summary.Batches)
	}
	// a trace timed from 0 needs its start on the wall clock
	legacy := trace(t, `[{"ph":"X","name":"ProfilerStep#1","ts":0,"dur":10}]`)
	if _, err := s.AttachTraces("ext", []string{legacy}, TraceImportOptions{}); err == nil || !strings.Contains(err.Error(), "not wall-clock") {
		t.Errorf("legacy without zero: %v", err)
	}
	if _, err := s.AttachTraces("ext", []string{legacy}, TraceImportOptions{Zero: wall.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	evs, _, _ = s.ReadRun("ext")
	if e := evs[len(evs)-2]; e.Name != "ProfilerStep" || e.Start != 1e9 || evs[len(evs)-1].T != profile.TypeRunEnd {
		t.Errorf("legacy step %+v", e)
	}
}

// TestCompareGPU: a run with kernels gets the GPU rows in compare, and
// its breakdown in the JSON; the hand-checked figures are in
// profile/gpubreak.
func TestCompareGPU(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := st.ImportTraces([]string{"../profile/kineto/testdata/hta_alexnet.json.gz"}, TraceImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare([]RunRef{{Session: s, Run: TraceRun}}, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := c.Runs[0].GPU
	if !c.HasGPU() || g == nil || g.Total.Kernels != 79 || g.Total.Copies != 19 || g.Launched != 79 || g.Short != 13 {
		t.Fatalf("gpu %+v", g)
	}
	var md, js strings.Builder
	if err := c.Write(&md, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(&js, FormatJSON); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| GPU idle (%) |") || !strings.Contains(md.String(), "| kernels shorter than launch | 13 of 79 |") ||
		!strings.Contains(js.String(), `"copy_while_compute_ns"`) {
		t.Errorf("markdown:\n%s\njson:\n%.400s", md.String(), js.String())
	}
}
