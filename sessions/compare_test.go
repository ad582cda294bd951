package sessions

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gnnscope/gnnscope/profile"
)

const mib = 1 << 20

// handRun describes a hand-made journal with known figures.
type handRun struct {
	name, variant string
	config        string    // run_start config
	epochS        []float64 // one train span per epoch, back to back
	peaksMiB      []int64   // one mem event per value
	ooms          int
	guards        int          // guard events; every second one as an older journal wrote it (an oom event with action split)
	stale         [][2]float64 // (mean, max) per stale event
	histErr       [][2]float64 // (layer, rel_err) per hist_err event
	testMetrics   []float64    // test_acc metrics, in order
	summary       string       // run_end summary; "" for no run_end
	status        profile.Status
	host          *profile.Host  // run_start's host (default: 2 cores)
	usage         *profile.Usage // run_end's usage
	adjusted      []string       // run_start's adjusted
	cache         [][3]int64     // (epoch, hits, misses) per cache event; 400 bytes a miss
}

func (h handRun) events(session string) []profile.Event {
	host := h.host
	if host == nil {
		host = &profile.Host{Cores: 2}
	}
	evs := []profile.Event{{T: profile.TypeRunStart, V: 1, Run: h.name, Session: session, Variant: h.variant,
		Config: json.RawMessage(h.config), Host: host, Adjusted: h.adjusted}}
	var at int64
	for i, s := range h.epochS {
		d := int64(s * 1e9)
		evs = append(evs,
			profile.Event{T: profile.TypeSpan, Name: profile.StageSample, Lane: profile.LaneCompute, Epoch: i + 1, Start: at, Dur: d / 4},
			profile.Event{T: profile.TypeSpan, Name: profile.StageTrain, Lane: profile.LaneCompute, Epoch: i + 1, Start: at + d/4, Dur: d - d/4})
		at += d
	}
	for i, p := range h.peaksMiB {
		evs = append(evs, profile.Event{T: profile.TypeMem, Batch: i, Phase: profile.PhaseTrain, Peak: p * mib, Live: p * mib / 2, Budget: 1 << 30})
	}
	for i := range h.ooms {
		evs = append(evs, profile.Event{T: profile.TypeOOM, Batch: i, Requested: 2 << 30, Budget: 1 << 30, Action: profile.ActionSkip})
	}
	for i := range h.guards {
		e := profile.Event{T: profile.TypeGuard, Batch: i, Predicted: 2 << 30, Actual: 1 << 29, Budget: 1 << 30, Action: profile.ActionSplit}
		if i%2 == 1 {
			e = profile.Event{T: profile.TypeOOM, Batch: i, Requested: 2 << 30, Budget: 1 << 30, Action: profile.ActionSplit}
		}
		evs = append(evs, e)
	}
	for _, s := range h.stale {
		evs = append(evs, profile.Event{T: profile.TypeStale, Layer: 1, Mean: s[0], Max: s[1]})
	}
	for _, e := range h.histErr {
		evs = append(evs, profile.Event{T: profile.TypeHistErr, Layer: int(e[0]), RelErr: e[1]})
	}
	for i, c := range h.cache {
		evs = append(evs, profile.Event{T: profile.TypeCache, Epoch: int(c[0]), Batch: i, Hits: c[1], Misses: c[2], BytesH2D: 400 * c[2]})
	}
	for i, v := range h.testMetrics {
		evs = append(evs, profile.Event{T: profile.TypeMetric, Name: "test_acc", Epoch: i + 1, Batch: -1, Value: v})
	}
	if h.summary != "" || h.status != "" {
		st := h.status
		if st == "" {
			st = profile.StatusOK
		}
		var sum json.RawMessage
		if h.summary != "" {
			sum = json.RawMessage(h.summary)
		}
		evs = append(evs, profile.Event{T: profile.TypeRunEnd, Status: st, Summary: sum, Usage: h.usage})
	}
	return evs
}

// handSession creates a session of the given runs; spec is its experiment.
func handSession(t *testing.T, st *Store, name, spec string, runs ...handRun) *Session {
	t.Helper()
	meta := SessionMeta{Name: name, Spec: json.RawMessage(spec)}
	for _, r := range runs {
		meta.Variants = append(meta.Variants, Variant{Name: r.name, Spec: json.RawMessage(`{"config":` + r.config + `}`)})
	}
	s, err := st.Create(meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		writeJournal(t, s.JournalPath(r.name), r.events(s.ID()))
	}
	return s
}

const (
	baseCfg = `{"model":"sage","epochs":2,"sampler_workers":0,"prefetch":0,"overlap_eval":false,"fanouts":[25,10],"lr":0.01}`
	optCfg  = `{"model":"sage","epochs":2,"sampler_workers":2,"prefetch":4,"overlap_eval":true,"fanouts":[25,10],"lr":1e-2}`
)

func handRuns() (handRun, handRun) {
	base := handRun{name: "baseline", variant: "baseline", config: baseCfg, epochS: []float64{2, 3, 1},
		summary: `{"test_acc":0.5,"val_acc":0.6,"best_epoch":2,"history_rel_err":0.25,"test_acc_uncut":0.52}`}
	peaks := make([]int64, 100)
	for i := range peaks {
		peaks[i] = int64(100 - i) // 100..1 MiB, out of order
	}
	opt := handRun{name: "optimized", variant: "optimized", config: optCfg, epochS: []float64{1, 1, 1},
		peaksMiB: peaks, ooms: 3, guards: 4, stale: [][2]float64{{1, 4}, {3, 7}}, histErr: [][2]float64{{0, 0.5}, {1, 0.3}, {0, 0.2}},
		testMetrics: []float64{0.7, 0.8}, summary: `{"best_epoch":-1,"history_rel_err":0.9,"history_bytes":4096}`}
	return base, opt
}

// selectAll selects all of session s's runs, in launch order.
func selectAll(t *testing.T, st *Store, s *Session) []RunRef {
	t.Helper()
	refs, err := st.SelectRuns([]string{s.ID()})
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCompareFigures(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base, opt := handRuns()
	s := handSession(t, st, "hand", `{"data":"synth-tiny"}`, opt, base)

	refs, err := st.SelectRuns([]string{s.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || refs[0].Run != "optimized" || refs[1].Run != "baseline" {
		t.Fatalf("refs in launch order: %+v", refs)
	}
	c, err := Compare(refs, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sampler_workers", "prefetch", "overlap_eval"}; !reflect.DeepEqual(c.ConfigKeys, want) {
		t.Errorf("config differences %q, want %q (lr 0.01 = 1e-2, same fanouts and dataset)", c.ConfigKeys, want)
	}
	o, b := c.Runs[0], c.Runs[1]
	if c.Baseline != "baseline" || o.Label != "optimized" || b.Config["dataset"] != "synth-tiny" || o.Config["fanouts"] != "[25,10]" {
		t.Errorf("implicit baseline %q, labels %q %q, config %v", c.Baseline, o.Label, b.Label, b.Config)
	}
	if b.Epochs != 3 || !near(b.EpochMeanS, 2) || !near(b.EpochMinS, 1) || !near(b.EpochMedianS, 2) || !near(b.EpochMaxS, 3) || !near(b.EpochStdS, 1) {
		t.Errorf("baseline epochs %+v", b)
	}
	if !near(b.SampleS, 1.5) || !near(b.TrainS, 4.5) || b.Spans != 6 || !near(b.Overlap, 1) {
		t.Errorf("baseline stages %+v", b)
	}
	if !near(o.Speedup, 2) || !near(b.Speedup, 1) {
		t.Errorf("speedups %g %g", o.Speedup, b.Speedup)
	}
	// memory: max and nearest-rank p99 of 1..100 MiB; none for the baseline
	if o.PeakBytes == nil || *o.PeakBytes != 100*mib || o.P99PeakBytes == nil || *o.P99PeakBytes != 99*mib || o.MemEvents != 100 {
		t.Errorf("optimized memory %v %v", o.PeakBytes, o.P99PeakBytes)
	}
	if b.PeakBytes != nil || b.P99PeakBytes != nil || b.OOMs != 0 || o.OOMs != 3 {
		t.Errorf("baseline memory %v %v, ooms %d %d", b.PeakBytes, b.P99PeakBytes, b.OOMs, o.OOMs)
	}
	// guard actions are counted apart from OOMs, also an older journal's
	if b.GuardActions != 0 || o.GuardActions != 4 {
		t.Errorf("guard actions %d %d, want 0 4", b.GuardActions, o.GuardActions)
	}
	if o.StaleMean == nil || !near(*o.StaleMean, 2) || !near(*o.StaleMax, 7) || b.StaleMean != nil || b.StaleMax != nil {
		t.Errorf("staleness %v %v / %v", o.StaleMean, o.StaleMax, b.StaleMean)
	}
	// history error: the last refresh's (each layer's last hist_err),
	// largest over layers; else the summary's. Bytes: the summary's.
	if o.HistoryRelErr == nil || !near(*o.HistoryRelErr, 0.3) || b.HistoryRelErr == nil || !near(*b.HistoryRelErr, 0.25) {
		t.Errorf("history error %v / %v", o.HistoryRelErr, b.HistoryRelErr)
	}
	if o.HistoryBytes == nil || *o.HistoryBytes != 4096 || b.HistoryBytes != nil {
		t.Errorf("history bytes %v / %v", o.HistoryBytes, b.HistoryBytes)
	}
	// accuracy: the summary's, else (best_epoch -1: no evaluation) the last metric
	if b.TestAcc == nil || *b.TestAcc != 0.5 || b.TestAccSource != "summary" || b.BestEpoch != 2 {
		t.Errorf("baseline accuracy %v %s", b.TestAcc, b.TestAccSource)
	}
	if o.TestAcc == nil || *o.TestAcc != 0.8 || o.TestAccSource != "metric" {
		t.Errorf("optimized accuracy %v %s", o.TestAcc, o.TestAccSource)
	}

	// explicit baseline, by name, prefix and SESSION/RUN
	for _, name := range []string{"optimized", "opt", s.ID() + "/optimized", s.ID()[:10] + "/opt"} {
		c, err := Compare(refs, CompareOptions{Baseline: name})
		if err != nil {
			t.Fatalf("baseline %s: %v", name, err)
		}
		if c.Baseline != "optimized" || !near(c.Runs[0].Speedup, 1) || !near(c.Runs[1].Speedup, 0.5) {
			t.Errorf("baseline %s: %q %g %g", name, c.Baseline, c.Runs[0].Speedup, c.Runs[1].Speedup)
		}
	}
	if _, err := Compare(refs, CompareOptions{Baseline: "nope"}); !errors.Is(err, ErrNoMatch) {
		t.Errorf("unknown baseline: %v", err)
	}

	// no variant named baseline: the first run
	other := handRun{name: "workers", variant: "workers", config: optCfg, epochS: []float64{4}, status: profile.StatusOK}
	s2 := handSession(t, st, "other", `{"data":"synth-small"}`, other)
	c, err = Compare([]RunRef{{Session: s2, Run: "workers"}, {Session: s, Run: "optimized"}}, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Baseline != s2.ID()+"/workers" || !near(c.Runs[1].Speedup, 4) {
		t.Errorf("first run as baseline: %q %g", c.Baseline, c.Runs[1].Speedup)
	}
	if !reflect.DeepEqual(c.ConfigKeys, []string{"dataset"}) {
		t.Errorf("across sessions: differences %q", c.ConfigKeys)
	}
}

func TestSelectRunsErrors(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base, opt := handRuns()
	s := handSession(t, st, "hand", `{}`, base, opt)
	for _, tc := range []struct {
		args []string
		want error
	}{
		{[]string{"nosuch"}, ErrNoMatch},
		{[]string{""}, ErrNoMatch},
		{[]string{s.ID() + "/nosuch"}, ErrNoMatch},
		{[]string{"../../etc"}, ErrNoMatch},
		{[]string{s.ID() + "/"}, nil}, // all runs
		{[]string{s.ID()[:4] + "/base"}, nil},
	} {
		_, err := st.SelectRuns(tc.args)
		if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
			t.Errorf("%q: %v, want %v", tc.args, err, tc.want)
		}
	}
	// two sessions sharing a prefix; two runs sharing a prefix
	s2 := handSession(t, st, "hand2", `{}`, handRun{name: "base-2", config: `{}`}, handRun{name: "base-3", config: `{}`})
	common := ""
	for i := range s.ID() {
		if s.ID()[i] != s2.ID()[i] {
			break
		}
		common = s.ID()[:i+1]
	}
	if _, err := st.SelectRuns([]string{common}); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguous session prefix %q: %v", common, err)
	}
	if _, err := st.SelectRuns([]string{s2.ID() + "/base-"}); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguous run prefix: %v", err)
	}
	// last: the session created last, whatever the ids
	refs, err := st.SelectRuns([]string{"last"})
	newest := s2.ID()
	if err != nil || refs[0].Session.ID() != newest {
		t.Errorf("last: %+v %v, want %s", refs, err, newest)
	}
	if _, err := (&Store{root: t.TempDir()}).SelectRuns([]string{"last"}); !errors.Is(err, ErrNoMatch) {
		t.Errorf("last in an empty store: %v", err)
	}
	// the same run twice is listed once
	refs, err = st.SelectRuns([]string{s.ID() + "/baseline", s.ID()})
	if err != nil || len(refs) != 2 || refs[0].Run != "baseline" || refs[1].Run != "optimized" {
		t.Errorf("dedup: %+v %v", refs, err)
	}
}

func TestCompareDamagedJournals(t *testing.T) {
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base, _ := handRuns()
	s := handSession(t, st, "hand", `{}`, base)
	// garbage and a torn last line appended to the journal
	f, err := os.OpenFile(s.JournalPath("baseline"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage\n{\"t\":\"span\",\"dur\":\"x\"}\n\x00\x00\n{\"t\":\"span\",\"name\":\"tr")
	f.Close()
	// a run with an empty journal, one with only garbage, one not started
	os.WriteFile(s.JournalPath("empty"), nil, 0o644)
	os.WriteFile(s.JournalPath("junk"), []byte("{{{{\n]]]\n"), 0o644)
	s.Meta.Variants = append(s.Meta.Variants, Variant{Name: "later", Spec: json.RawMessage(`{"config":{"model":"gcn"}}`)})
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	c := compareSession(t, st, s)
	byRun := map[string]RunFigures{}
	for _, r := range c.Runs {
		byRun[r.Run] = r
	}
	b := byRun["baseline"]
	if b.Malformed != 3 || !b.Torn || b.Epochs != 3 || b.TestAcc == nil {
		t.Errorf("damaged baseline %+v", b)
	}
	if j := byRun["junk"]; j.Malformed != 2 || j.HasFigures() {
		t.Errorf("junk %+v", j)
	}
	if l := byRun["later"]; l.Status != "not started" || l.Config["model"] != "gcn" || l.HasFigures() {
		t.Errorf("not started %+v", l)
	}
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := c.Write(&buf, format); err != nil {
			t.Errorf("%s: %v", format, err)
		}
	}
	if err := c.Write(&bytes.Buffer{}, "yaml"); !errors.Is(err, ErrFormat) {
		t.Errorf("unknown format: %v", err)
	}
}

// formatComparison builds a comparison whose config values need escaping.
func formatComparison(t *testing.T) *Comparison {
	t.Helper()
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base, opt := handRuns()
	base.config = `{"note":"a|b & 50% $x #1 {y} ~z ^w \\v <p>","sampler_workers":0}`
	opt.config = `{"note":"plain","sampler_workers":2}`
	s := handSession(t, st, "fmt", `{}`, base, opt)
	return compareSession(t, st, s)
}

// unescapedCount counts c in s not preceded by a backslash.
func unescapedCount(s string, c byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == c {
			n++
		}
	}
	return n
}

func TestCompareMarkdown(t *testing.T) {
	c := formatComparison(t)
	var buf bytes.Buffer
	if err := c.Markdown(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var table []string
	for _, l := range lines {
		if strings.HasPrefix(l, "|") {
			table = append(table, l)
		}
	}
	want := 2 + len(c.ConfigKeys)
	for _, fr := range c.figureRows() {
		if fr.shown(true) {
			want++
		}
	}
	if len(table) != want {
		t.Fatalf("%d table lines, want %d:\n%s", len(table), want, text)
	}
	if table[0] != "| run | baseline | optimized |" || table[1] != "|---|---:|---:|" {
		t.Errorf("header:\n%s\n%s", table[0], table[1])
	}
	for _, l := range table {
		if !strings.HasSuffix(l, "|") || unescapedCount(l, '|') != len(c.Runs)+2 {
			t.Errorf("row with %d cells: %s", unescapedCount(l, '|')-1, l)
		}
	}
	if table[2] != `| note | a\|b & 50% $x #1 {y} ~z ^w \\v <p> | plain |` {
		t.Errorf("config row: %s", table[2])
	}
	for _, want := range []string{"| sampler_workers | 0 | 2 |", "| peak memory |  | 100.0 MiB |", "| p99 memory |  | 99.0 MiB |",
		"| speedup | 1.000x | 2.000x (single run) |", "| test accuracy | 0.5000 | 0.8000 |", "| epoch mean (s) | 2.000 | 1.000 |",
		"| OOMs | 0 | 3 |", "| guard actions | 0 | 4 |", "| staleness max |  | 7.00 |", "speedup: median epoch time of baseline"} {
		if !strings.Contains(text, want) {
			t.Errorf("markdown lacks %q:\n%s", want, text)
		}
	}
}

func TestCompareCSV(t *testing.T) {
	c := formatComparison(t)
	var buf bytes.Buffer
	if err := c.CSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+len(c.Runs) {
		t.Fatalf("%d records", len(recs))
	}
	hdr := recs[0]
	col := func(name string) int {
		i := slices.Index(hdr, name)
		if i < 0 {
			t.Fatalf("no column %q in %q", name, hdr)
		}
		return i
	}
	if hdr[0] != "session" || hdr[1] != "run" || hdr[3] != "note" || hdr[4] != "sampler_workers" || hdr[5] != "status" {
		t.Errorf("header %q", hdr)
	}
	b, o := recs[1], recs[2]
	for name, want := range map[string][2]string{
		"note":           {"a|b & 50% $x #1 {y} ~z ^w \\v <p>", "plain"},
		"peak_bytes":     {"", "104857600"},
		"p99_peak_bytes": {"", "103809024"},
		"epoch_mean_s":   {"2.000", "1.000"},
		"speedup":        {"1.000", "2.000"},
		"test_acc":       {"0.5000", "0.8000"},
		"test_acc_uncut": {"0.5200", ""},
		"ooms":           {"0", "3"},
		"guard_actions":  {"0", "4"},
		"staleness_mean": {"", "2.00"},
		"history_bytes":  {"", "4096"},
	} {
		if i := col(name); b[i] != want[0] || o[i] != want[1] {
			t.Errorf("%s: %q %q, want %q", name, b[i], o[i], want)
		}
	}
}

func TestCompareLaTeX(t *testing.T) {
	c := formatComparison(t)
	var buf bytes.Buffer
	if err := c.LaTeX(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Count(text, `\begin{tabular}`) != 1 || strings.Count(text, `\end{tabular}`) != 1 ||
		!strings.HasPrefix(text, `\begin{tabular}{lrr}`) || !strings.HasSuffix(text, "\\end{tabular}\n") {
		t.Errorf("not one tabular:\n%s", text)
	}
	if strings.Contains(text, "booktabs") || strings.Contains(text, `\toprule`) {
		t.Error("uses booktabs")
	}
	if o, cl := unescapedCount(text, '{'), unescapedCount(text, '}'); o != cl {
		t.Errorf("unbalanced braces: %d { and %d }", o, cl)
	}
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(l, `\`) && !strings.HasPrefix(l, `\textbackslash`) {
			continue // \begin, \hline, \end
		}
		if !strings.HasSuffix(l, ` \\`) || unescapedCount(l, '&') != len(c.Runs) {
			t.Errorf("row: %s", l)
		}
		for _, ch := range []byte{'%', '$', '#', '_', '~', '^'} {
			if unescapedCount(strings.ReplaceAll(l, `\textasciitilde{}`, ""), ch) != 0 && ch != '~' && ch != '^' {
				t.Errorf("unescaped %c in %s", ch, l)
			}
		}
	}
	want := `note & a\textbar{}b \& 50\% \$x \#1 \{y\} \textasciitilde{}z \textasciicircum{}w \textbackslash{}v \textless{}p\textgreater{} & plain \\`
	if !strings.Contains(text, want) {
		t.Errorf("escaping: want\n%s\nin\n%s", want, text)
	}
	for _, want := range []string{`sampler\_workers & 0 & 2 \\`, `peak memory &  & 100.0 MiB \\`, `OOMs & 0 & 3 \\`, `guard actions & 0 & 4 \\`, `speedup & 1.000x & 2.000x (single run) \\`} {
		if !strings.Contains(text, want) {
			t.Errorf("latex lacks %q:\n%s", want, text)
		}
	}
}

func TestCompareJSONRoundTrip(t *testing.T) {
	c := formatComparison(t)
	var buf bytes.Buffer
	if err := c.JSON(&buf); err != nil {
		t.Fatal(err)
	}
	var back Comparison
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Error("more than one JSON value")
	}
	for i := range c.Runs {
		c.Runs[i].epochTimes = nil // not part of the JSON
		c.Runs[i].analysed = nil
	}
	if !reflect.DeepEqual(&back, c) {
		t.Errorf("round trip:\n%+v\n%+v", back, *c)
	}
	// OOMs and guard actions apart, as JSON numbers
	for _, want := range []string{`"ooms": 3,`, `"guard_actions": 4,`, `"ooms": 0,`, `"guard_actions": 0,`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("JSON lacks %s", want)
		}
	}
}

// TestCompareLaTeXCompiles typesets the table with plain LaTeX where
// pdflatex is installed (skipped otherwise, and with -short).
func TestCompareLaTeXCompiles(t *testing.T) {
	pdflatex, err := exec.LookPath("pdflatex")
	if err != nil || testing.Short() {
		t.Skip("needs pdflatex")
	}
	c := formatComparison(t)
	dir := t.TempDir()
	var table bytes.Buffer
	if err := c.LaTeX(&table); err != nil {
		t.Fatal(err)
	}
	doc := "\\documentclass{article}\n\\begin{document}\n" + table.String() + "\\end{document}\n"
	if err := os.WriteFile(filepath.Join(dir, "doc.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(pdflatex, "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pdflatex: %v\n%s", err, out)
	}
}
