package sessions

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gnnscope/gnnscope/profile"
)

// Two ranks of an external torchrun job, as the Python client writes
// them: rank 1 starts 5 ms after rank 0, has a sampler lane rank 0 lacks,
// and is slower in epoch 2. Times are ns from each rank's own start.
const (
	rank0Journal = `{"t":"run_start","v":1,"run":"ddp","session":"S","variant":"ddp","wall":"2026-11-25T10:00:00.000000000Z","rank":0,"world":2,"config":{"cmd":["python3","train.py","--lr","0.01"],"external":true,"client":"python"},"host":{"cpu":"x","cores":4}}
{"t":"span","name":"sample","lane":"compute","epoch":1,"batch":0,"start":0,"dur":10000000}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":10000000,"dur":30000000}
{"t":"metric","name":"loss","epoch":1,"batch":0,"value":2.5}
{"t":"mem","epoch":1,"batch":0,"phase":"train","peak":1000,"live":10,"budget":4000,"predicted":0}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":40000000,"dur":40000000}
{"t":"gpu","ts":50000000,"used":100,"total":1000,"util":0.5}
{"t":"run_end","status":"ok"}
`
	rank1Journal = `{"t":"run_start","v":1,"run":"ddp","session":"S","variant":"ddp","wall":"2026-11-25T10:00:00.005000000Z","rank":1,"world":2,"config":{"cmd":["python3","train.py","--lr","0.01"],"external":true,"client":"python"}}
{"t":"span","name":"sample","lane":"sampler/0","epoch":1,"batch":0,"start":0,"dur":10000000}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":10000000,"dur":30000000}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":40000000,"dur":70000000}
{"t":"gpu","ts":20000000,"used":200,"total":1000,"util":0.7}
`
	singleJournal = `{"t":"run_start","v":1,"run":"single","variant":"baseline","wall":"2026-11-25T09:59:00Z","config":{"model":"sage","epochs":2}}
{"t":"span","name":"train","lane":"compute","epoch":1,"batch":0,"start":0,"dur":50000000}
{"t":"span","name":"train","lane":"compute","epoch":2,"batch":0,"start":50000000,"dur":50000000}
{"t":"run_end","status":"ok"}
`
)

// ddpSession is a session with the two-rank run "ddp" and a run of one
// process, "single".
func ddpSession(t *testing.T) (*Store, *Session) {
	t.Helper()
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := st.Create(SessionMeta{Name: "ddp"})
	if err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{
		s.JournalPath("ddp"):        rank0Journal,
		s.RankJournalPath("ddp", 1): rank1Journal,
		s.JournalPath("single"):     singleJournal,
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return st, s
}

func TestSplitRankRun(t *testing.T) {
	for name, want := range map[string]struct {
		run  string
		rank int
		ok   bool
	}{
		"ddp.rank1":       {"ddp", 1, true},
		"a.b.rank12":      {"a.b", 12, true},
		"ddp.rank0":       {"ddp.rank0", 0, false}, // rank 0 is the run's own journal
		"ddp.rank01":      {"ddp.rank01", 0, false},
		"ddp.rank":        {"ddp.rank", 0, false},
		"ddp.rankx":       {"ddp.rankx", 0, false},
		".rank1":          {".rank1", 0, false},
		"baseline":        {"baseline", 0, false},
		"ddp.rank1.extra": {"ddp.rank1.extra", 0, false},
	} {
		run, rank, ok := SplitRankRun(name)
		if run != want.run || rank != want.rank || ok != want.ok {
			t.Errorf("SplitRankRun(%q) = %q %d %v, want %+v", name, run, rank, ok, want)
		}
	}
}

func TestRankJournalsAreNotRuns(t *testing.T) {
	st, s := ddpSession(t)
	runs, err := s.Runs()
	if err != nil || !slices.Equal(runs, []string{"ddp", "single"}) {
		t.Fatalf("runs %v %v", runs, err)
	}
	list, err := st.List()
	if err != nil || len(list) != 1 || len(list[0].Runs) != 2 || list[0].Runs[0].Status != profile.StatusOK {
		t.Fatalf("list %+v %v", list, err)
	}
	js, err := s.RankJournals("ddp")
	if err != nil || len(js) != 2 || js[1].Rank != 1 || js[1].Path != s.RankJournalPath("ddp", 1) {
		t.Errorf("rank journals %+v %v", js, err)
	}
	if js, _ := s.RankJournals("single"); len(js) != 1 {
		t.Errorf("single: %+v", js)
	}
}

// checkMerged checks a distributed run's merged events.
func checkMerged(t *testing.T, evs []profile.Event) {
	t.Helper()
	if len(evs) != 12 {
		t.Fatalf("%d events, want 12 (rank 1's run_start left out)", len(evs))
	}
	if evs[0].T != profile.TypeRunStart || evs[0].World != 2 || evs[len(evs)-1].T != profile.TypeRunEnd {
		t.Errorf("first %s (world %d), last %s", evs[0].T, evs[0].World, evs[len(evs)-1].T)
	}
	lanes := map[string]bool{}
	var prev int64
	starts := 0
	for i := range evs {
		e := &evs[i]
		if e.T == profile.TypeRunStart {
			starts++
		}
		if e.T == profile.TypeSpan {
			lanes[e.Lane] = true
		}
		at := EventTime(e, prev)
		if at != prev && at < prev || (e.T == profile.TypeSpan && e.End() < prev) {
			t.Errorf("event %d (%s %s) at %d before %d", i, e.T, e.Name, e.End(), prev)
		}
		prev = at
	}
	if starts != 1 {
		t.Errorf("%d run_starts", starts)
	}
	for _, l := range []string{"rank0/compute", "rank1/compute", "rank1/sampler/0"} {
		if !lanes[l] {
			t.Errorf("no lane %s in %v", l, lanes)
		}
	}
	for _, e := range evs {
		switch {
		case e.T == profile.TypeSpan && e.Lane == "rank1/compute" && e.Epoch == 2:
			if e.Start != 45e6 || e.Dur != 70e6 {
				t.Errorf("rank 1's epoch 2 at %d+%d, want 45 ms + 70 ms", e.Start, e.Dur)
			}
		case e.T == profile.TypeGPU && e.Used == 200 && e.Ts != 25e6:
			t.Errorf("rank 1's gpu sample at %d, want 25 ms", e.Ts)
		}
	}
}

func TestReadRunMergesRanks(t *testing.T) {
	_, s := ddpSession(t)
	evs, st, err := s.ReadRun("ddp")
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != 13 || st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
	checkMerged(t, evs)
	// a run of one process reads as its journal
	one, _, err := s.ReadRun("single")
	if err != nil || len(one) != 4 || one[1].Lane != profile.LaneCompute {
		t.Errorf("single: %d events %v", len(one), err)
	}
	if _, _, err := s.ReadRun("nope"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing run: %v", err)
	}
}

func TestSummarizeRunSlowestRank(t *testing.T) {
	_, s := ddpSession(t)
	js, err := s.SummarizeRun("ddp")
	if err != nil {
		t.Fatal(err)
	}
	sum := js.Summary
	if len(sum.Epochs) != 2 || math.Abs(sum.Epochs[0].WallS-0.040) > 1e-9 || math.Abs(sum.Epochs[1].WallS-0.070) > 1e-9 {
		t.Errorf("epochs %+v, want 0.040 and 0.070 (the slowest rank's)", sum.Epochs)
	}
	if math.Abs(sum.Straggler-0.110/0.095) > 1e-9 || len(sum.Ranks) != 2 {
		t.Errorf("straggler %g ranks %+v", sum.Straggler, sum.Ranks)
	}
	if js.Start == nil || js.Start.Rank != 0 || js.End == nil || js.End.Status != profile.StatusOK {
		t.Errorf("start %+v end %+v", js.Start, js.End)
	}
}

func TestCompareDistributedAndExternal(t *testing.T) {
	st, s := ddpSession(t)
	c := compareSession(t, st, s)
	ddp, single := c.Runs[0], c.Runs[1]
	if ddp.Run != "ddp" || ddp.Ranks != 2 || math.Abs(ddp.Straggler-0.110/0.095) > 1e-9 || math.Abs(ddp.EpochMeanS-0.055) > 1e-9 {
		t.Errorf("ddp: ranks %d straggler %g epoch mean %g", ddp.Ranks, ddp.Straggler, ddp.EpochMeanS)
	}
	if single.Ranks != 0 || single.Straggler != 0 {
		t.Errorf("single: ranks %d straggler %g", single.Ranks, single.Straggler)
	}
	if got := ddp.Config["cmd"]; got != "python3 train.py --lr 0.01" {
		t.Errorf("cmd %q", got)
	}
	if !slices.Equal(c.ConfigKeys, []string{"cmd"}) {
		t.Errorf("config differences %v, want the command alone", c.ConfigKeys)
	}
	var md, tex, js, cs bytes.Buffer
	for w, f := range map[*bytes.Buffer]string{&md: FormatMarkdown, &tex: FormatLaTeX, &js: FormatJSON, &cs: FormatCSV} {
		if err := c.Write(w, f); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(md.String(), "| straggler | 1.158 |  |") {
		t.Errorf("markdown has no straggler row:\n%s", md.String())
	}
	if !strings.Contains(md.String(), "| cmd | python3 train.py --lr 0.01 |  |") {
		t.Errorf("markdown has no command row:\n%s", md.String())
	}
	if !strings.Contains(tex.String(), `straggler & 1.158 &  \\`) {
		t.Errorf("latex has no straggler row:\n%s", tex.String())
	}
	recs, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(recs[0], "straggler")
	if col < 0 || recs[1][col] != "1.158" || recs[2][col] != "" {
		t.Errorf("csv straggler column %d: %v", col, recs)
	}
	var back Comparison
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Runs[0].Ranks != 2 || back.Runs[0].Straggler != ddp.Straggler {
		t.Errorf("json %v %+v", err, back.Runs)
	}
	if strings.Contains(js.String(), `"straggler": 0`) || strings.Count(js.String(), `"straggler"`) != 1 {
		t.Errorf("json writes a straggler for the run of one process:\n%s", js.String())
	}
}

func TestExternalCommand(t *testing.T) {
	for raw, want := range map[string]string{
		`{"cmd":["python3","train.py","--name","a b","it's"],"external":true}`: `python3 train.py --name 'a b' 'it'\''s'`,
		`{"cmd":"torchrun --nproc 2 train.py","external":true}`:                "torchrun --nproc 2 train.py",
	} {
		got, ok := ExternalCommand(json.RawMessage(raw))
		if !ok || got != want || !IsExternalConfig(json.RawMessage(raw)) {
			t.Errorf("ExternalCommand(%s) = %q %v, want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`{"model":"sage"}`, `[1]`, ``, `{"cmd":3}`} {
		if _, ok := ExternalCommand(json.RawMessage(raw)); ok {
			t.Errorf("ExternalCommand(%s) ok", raw)
		}
	}
	if IsExternalConfig(json.RawMessage(`{"model":"sage"}`)) {
		t.Error("a built-in config is external")
	}
}

func TestReplayMergesRanks(t *testing.T) {
	_, s := ddpSession(t)
	r, err := s.Replay([]string{"ddp"}, ReplayOptions{Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Duration() != 115*time.Millisecond {
		t.Errorf("duration %v, want 115ms (rank 1's last span, 5 ms late)", r.Duration())
	}
	r.Seek(r.Duration())
	got := drainDue(t, r)
	evs := make([]profile.Event, len(got))
	for i, g := range got {
		evs[i] = g.Event
	}
	checkMerged(t, evs)
	// backwards: the same events again
	r.Seek(0)
	r.Seek(r.Duration())
	if again := drainDue(t, r); len(again) != len(got) || !again[0].Restart {
		t.Errorf("after a backward seek: %d events", len(again))
	}
}

func TestTraceOneProcessPerRank(t *testing.T) {
	st, s := ddpSession(t)
	tr, ts, err := BuildTrace(selectAll(t, st, s), TraceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ts.Runs != 2 || ts.Spans != 8 {
		t.Errorf("stats %+v", ts)
	}
	var buf bytes.Buffer
	if _, err := tr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string          `json:"name"`
			Ph   string          `json:"ph"`
			Pid  int             `json:"pid"`
			Tid  int             `json:"tid"`
			Ts   float64         `json:"ts"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	procs := map[int]string{}
	pidOf := map[string]int{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "M" && e.Name == "process_name" {
			var a struct{ Name string }
			json.Unmarshal(e.Args, &a)
			procs[e.Pid] = a.Name
			pidOf[strings.Fields(a.Name + " x x x")[0]+" "+strings.Join(strings.Fields(a.Name)[1:3], " ")] = e.Pid
		}
	}
	if len(procs) != 3 {
		t.Fatalf("processes %v, want ddp rank 0, ddp rank 1 and single", procs)
	}
	p0, ok0 := pidOf["ddp rank 0"]
	p1, ok1 := pidOf["ddp rank 1"]
	if !ok0 || !ok1 || p0 == p1 {
		t.Fatalf("processes %v", procs)
	}
	// rank 1's spans are on its own process, its epoch 2 at 45 ms
	found := false
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" && e.Pid == p1 && e.Name == "train" && e.Ts == 45000 {
			found = true
		}
		if e.Ph == "X" && e.Pid == p0 && strings.HasPrefix(e.Name, "rank") {
			t.Errorf("rank lane names in a rank's process: %s", e.Name)
		}
	}
	if !found {
		t.Errorf("rank 1's epoch 2 not at 45 ms on process %d", p1)
	}
}

// A live tail of a distributed run follows the rank journal that appears
// after it started, and ends with rank 0's run_end after rank 1's last
// events.
func TestLiveFollowsRankThatAppearsLater(t *testing.T) {
	_, s := ddpSession(t)
	lines0 := strings.SplitAfter(rank0Journal, "\n")
	lines1 := strings.SplitAfter(rank1Journal, "\n")
	path0, path1 := s.JournalPath("ddp"), s.RankJournalPath("ddp", 1)
	os.Remove(path1)
	if err := os.WriteFile(path0, []byte(strings.Join(lines0[:3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	alive := true
	l, err := s.Live("ddp", TailOptions{Interval: time.Millisecond, Alive: func() bool { return alive }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []profile.Event
	for len(got) < 3 {
		e, err := l.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	appendText := func(path, text string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(text)
		f.Close()
	}
	appendText(path1, strings.Join(lines1[:3], ""))
	appendText(path0, strings.Join(lines0[3:7], ""))
	for len(got) < 9 {
		e, err := l.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	// rank 1's last lines come with rank 0's run_end
	appendText(path1, strings.Join(lines1[3:], ""))
	appendText(path0, strings.Join(lines0[7:], ""))
	for {
		e, err := l.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != 12 || got[len(got)-1].T != profile.TypeRunEnd {
		t.Fatalf("%d events, last %s", len(got), got[len(got)-1].T)
	}
	lanes := map[string]int{}
	for _, e := range got {
		if e.T == profile.TypeSpan {
			lanes[e.Lane]++
			if e.Lane == "rank1/compute" && e.Epoch == 2 && e.Start != 45e6 {
				t.Errorf("rank 1's epoch 2 starts at %d", e.Start)
			}
		}
	}
	if lanes["rank0/compute"] != 3 || lanes["rank1/compute"] != 2 || lanes["rank1/sampler/0"] != 1 {
		t.Errorf("lanes %v", lanes)
	}
	// summed up, the live events give the figures a read of the files gives
	agg := profile.NewAggregator()
	agg.AddAll(got)
	js, err := s.SummarizeRun("ddp")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := agg.Summary(), js.Summary; a.Straggler != b.Straggler || a.EpochStats != b.EpochStats {
		t.Errorf("live %g %+v, read %g %+v", a.Straggler, a.EpochStats, b.Straggler, b.EpochStats)
	}
}

func TestShortCommand(t *testing.T) {
	for line, want := range map[string]string{
		"python3 /src/examples/train.py --lr 0.01":  "train.py --lr 0.01",
		"/usr/bin/python3.11 -u train.py":           "train.py",
		"torchrun --nproc-per-node 2 train.py -e 3": "train.py -e 3",
		"./run.sh fast": "run.sh fast",
		"python3":       "python3",
		"":              "",
	} {
		if got := ShortCommand(line); got != want {
			t.Errorf("ShortCommand(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestConfigDifferencesWithExternalRuns(t *testing.T) {
	runs := []RunFigures{
		{Config: map[string]string{"model": "sage", "lr": "0.01"}},
		{Config: map[string]string{"model": "sage", "lr": "0.1"}},
		{Config: map[string]string{"cmd": "python3 a.py", "external": "true"}},
		{Config: map[string]string{"cmd": "python3 a.py", "external": "true", "client": "python"}},
		{}, // not started
	}
	order := [][]string{{"model", "lr"}, {"model", "lr"}, {"cmd", "external"}, {"cmd", "external", "client"}, nil}
	if got := configDifferences(runs, order); !slices.Equal(got, []string{"lr", "cmd"}) {
		t.Errorf("differences %v, want lr and cmd", got)
	}
	// two external runs alone: their commands
	runs[3].Config["cmd"] = "python3 b.py"
	if got := configDifferences(runs[2:], order[2:]); !slices.Equal(got, []string{"cmd"}) {
		t.Errorf("differences %v, want cmd", got)
	}
}

// A distributed run's rank journals travel in an archive with the run
// (a torn last line included: readers skip it), and they count as the
// journals of their run when it is running (cut at the last complete line).
func TestArchiveKeepsRankJournals(t *testing.T) {
	_, s := ddpSession(t)
	// rank 1 is still writing: its journal ends mid-line
	f, err := os.OpenFile(s.RankJournalPath("ddp", 1), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"t":"span","na`)
	f.Close()
	if !journalOfRunning("runs/ddp.rank1.jsonl", map[string]bool{"ddp": true}) || journalOfRunning("runs/ddp.rank1.jsonl", map[string]bool{"single": true}) {
		t.Error("a rank journal is not its run's")
	}
	out := t.TempDir() + "/s.tar.gz"
	if _, err := s.ExportFile(out, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	dst, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s2, _, err := dst.ImportFile(out, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := s2.Runs()
	evs, _, err := s2.ReadRun("ddp")
	if err != nil || !slices.Equal(runs, []string{"ddp", "single"}) {
		t.Fatalf("imported runs %v %v", runs, err)
	}
	checkMerged(t, evs)
}

// Rank 1's journal may be written before rank 0's: its events wait for
// rank 0's run_start, whose wall clock places them.
func TestLiveRankBeforeRankZero(t *testing.T) {
	_, s := ddpSession(t)
	path0 := s.JournalPath("ddp")
	os.Remove(path0)
	l, err := s.Live("ddp", TailOptions{Interval: time.Millisecond, Alive: func() bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if _, err := l.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("before rank 0's journal: %v", err)
	}
	cancel()
	if err := os.WriteFile(path0, []byte(rank0Journal), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []profile.Event
	for {
		e, err := l.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	checkMerged(t, got)
}

// A rank that started before rank 0 has times before rank 0's start.
func TestRankStartedBeforeRankZero(t *testing.T) {
	_, s := ddpSession(t)
	early := strings.Replace(rank1Journal, "2026-11-25T10:00:00.005000000Z", "2026-11-25T09:59:59.995000000Z", 1)
	if err := os.WriteFile(s.RankJournalPath("ddp", 1), []byte(early), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, _, err := s.ReadRun("ddp")
	if err != nil {
		t.Fatal(err)
	}
	first := evs[1]
	if first.T != profile.TypeSpan || first.Lane != "rank1/sampler/0" || first.Start != -5e6 {
		t.Errorf("first span %+v, want rank 1's sample at -5 ms", first)
	}
	js, err := s.SummarizeRun("ddp")
	if err != nil {
		t.Fatal(err)
	}
	// rank 1's epochs keep their lengths: 40 and 70 ms
	if e := js.Summary.Epochs; len(e) != 2 || math.Abs(e[1].WallS-0.070) > 1e-9 || math.Abs(js.Summary.WallS-0.110) > 1e-9 {
		t.Errorf("epochs %+v wall %g", e, js.Summary.WallS)
	}
	r, err := s.Replay([]string{"ddp"}, ReplayOptions{Paused: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.Seek(r.Duration())
	if got := drainDue(t, r); len(got) != 12 {
		t.Errorf("replay: %d events", len(got))
	}
}
