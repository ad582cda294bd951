package sessions

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gnnscope/gnnscope/profile/units"
)

// Comparison output formats (Write).
const (
	FormatMarkdown = "md"    // a GitHub pipe table, figures as rows, runs as columns
	FormatCSV      = "csv"   // one record per run, config differences first
	FormatLaTeX    = "latex" // a tabular environment, figures as rows, runs as columns
	FormatJSON     = "json"  // the Comparison as one JSON object
)

// Formats lists the formats Write accepts.
var Formats = []string{FormatMarkdown, FormatCSV, FormatLaTeX, FormatJSON}

// ErrFormat is returned by Write for an unknown format.
var ErrFormat = errors.New("unknown format")

// CheckFormat returns an error wrapping ErrFormat unless format is one of
// Formats (or an alias: markdown, tex).
func CheckFormat(format string) error {
	switch format {
	case FormatMarkdown, "markdown", FormatCSV, FormatLaTeX, "tex", FormatJSON:
		return nil
	}
	return fmt.Errorf("%w %q (use %s)", ErrFormat, format, strings.Join(Formats, ", "))
}

// Write writes the comparison in one of Formats.
func (c *Comparison) Write(w io.Writer, format string) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	switch format {
	case FormatMarkdown, "markdown":
		return c.Markdown(w)
	case FormatCSV:
		return c.CSV(w)
	case FormatLaTeX, "tex":
		return c.LaTeX(w)
	default: // FormatJSON
		return c.JSON(w)
	}
}

// figureRow is one figure of the comparison: its label in the
// transposed tables (Markdown, LaTeX), its CSV column, and its cell.
// human selects human-readable bytes and a speedup suffix.
type figureRow struct {
	label, column string
	cell          func(r *RunFigures, human bool) string
	only          int // 0: every format; onlyHuman, onlyCSV
}

// figureRow.only: a figure shown only in the transposed tables, or only
// as a CSV column (the parts the tables show in one cell).
const (
	onlyHuman = 1
	onlyCSV   = 2
)

// shown reports whether the row belongs to a human (true) or CSV table.
func (fr figureRow) shown(human bool) bool {
	return fr.only == 0 || (fr.only == onlyHuman) == human
}

func optCell(ok bool, s string) string {
	if !ok {
		return ""
	}
	return s
}

// Number formats, the same in every format: seconds with 3 decimals,
// ratios (overlap, efficiency, speedup) 3, accuracy and history error 4,
// staleness 2.
func fmtSec(v float64) string   { return strconv.FormatFloat(v, 'f', 3, 64) }
func fmtRatio(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
func fmtAcc(v float64) string   { return strconv.FormatFloat(v, 'f', 4, 64) }
func fmtStale(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func fmtBytes(v int64, human bool) string {
	if human {
		return units.BytesFine(v)
	}
	return strconv.FormatInt(v, 10)
}

func epochCell(get func(r *RunFigures) float64) func(*RunFigures, bool) string {
	return func(r *RunFigures, _ bool) string {
		if r.Epochs == 0 {
			return ""
		}
		return fmtSec(get(r))
	}
}

func stageCell(get func(r *RunFigures) float64, format func(float64) string) func(*RunFigures, bool) string {
	return func(r *RunFigures, _ bool) string {
		if r.StageSource == "" {
			return ""
		}
		return format(get(r))
	}
}

// floatCell is the cell of a figure a run may lack: get's value in
// format, blank when get gives nil.
func floatCell(get func(r *RunFigures) *float64, format func(float64) string) func(*RunFigures, bool) string {
	return func(r *RunFigures, _ bool) string {
		if v := get(r); v != nil {
			return format(*v)
		}
		return ""
	}
}

// bytesCell is floatCell for bytes (fmtBytes).
func bytesCell(get func(r *RunFigures) *int64) func(*RunFigures, bool) string {
	return func(r *RunFigures, human bool) string {
		if v := get(r); v != nil {
			return fmtBytes(*v, human)
		}
		return ""
	}
}

// figureRows are the figures after the configuration differences.
var figureRows = []figureRow{
	{"status", "status", func(r *RunFigures, human bool) string {
		if human {
			return r.StatusText()
		}
		return string(r.Status)
	}, 0},
	{"partial", "partial", func(r *RunFigures, _ bool) string { return strconv.FormatBool(r.Partial) }, onlyCSV},
	{"", "skipped_batches", func(r *RunFigures, _ bool) string {
		return optCell(r.TotalBatches > 0, strconv.Itoa(r.SkippedBatches))
	}, onlyCSV},
	{"", "total_batches", func(r *RunFigures, _ bool) string {
		return optCell(r.TotalBatches > 0, strconv.Itoa(r.TotalBatches))
	}, onlyCSV},
	{"repeat", "repeat", func(r *RunFigures, _ bool) string {
		return optCell(r.Repeat > 0, strconv.Itoa(r.Repeat))
	}, 0},
	{"epochs", "epochs", func(r *RunFigures, _ bool) string {
		if r.Epochs == 0 {
			return ""
		}
		return strconv.Itoa(r.Epochs)
	}, 0},
	{"epoch mean (s)", "epoch_mean_s", epochCell(func(r *RunFigures) float64 { return r.EpochMeanS }), 0},
	{"epoch min (s)", "epoch_min_s", epochCell(func(r *RunFigures) float64 { return r.EpochMinS }), 0},
	{"epoch median (s)", "epoch_median_s", epochCell(func(r *RunFigures) float64 { return r.EpochMedianS }), 0},
	{"epoch max (s)", "epoch_max_s", epochCell(func(r *RunFigures) float64 { return r.EpochMaxS }), 0},
	{"epoch std (s)", "epoch_std_s", epochCell(func(r *RunFigures) float64 { return r.EpochStdS }), 0},
	{"straggler", "straggler", func(r *RunFigures, _ bool) string {
		if r.Ranks < 2 || r.Straggler <= 0 {
			return ""
		}
		return fmtRatio(r.Straggler)
	}, 0},
	{"", "node_count", func(r *RunFigures, _ bool) string { return optCell(r.Nodes > 0, strconv.Itoa(r.Nodes)) }, onlyCSV},
	{"", "slowest_rank", slowestCell, onlyCSV},
	{"", "slowest_share", func(r *RunFigures, _ bool) string {
		return optCell(r.SlowestShare > 0, fmtRatio(r.SlowestShare))
	}, onlyCSV},
	{"sample (s)", "sample_s", stageCell(func(r *RunFigures) float64 { return r.SampleS }, fmtSec), 0},
	{"transfer (s)", "transfer_s", stageCell(func(r *RunFigures) float64 { return r.TransferS }, fmtSec), 0},
	{"train (s)", "train_s", stageCell(func(r *RunFigures) float64 { return r.TrainS }, fmtSec), 0},
	{"eval (s)", "eval_s", stageCell(func(r *RunFigures) float64 { return r.EvalS }, fmtSec), 0},
	{"data wait (s)", "data_wait_s", stageCell(func(r *RunFigures) float64 { return r.DataWaitS }, fmtSec), 0},
	{"overlap", "overlap", stageCell(func(r *RunFigures) float64 { return r.Overlap }, fmtRatio), 0},
	{"efficiency", "efficiency", stageCell(func(r *RunFigures) float64 { return r.Efficiency }, fmtRatio), 0},
	{"peak memory", "peak_bytes", bytesCell(func(r *RunFigures) *int64 { return r.PeakBytes }), 0},
	{"p99 memory", "p99_peak_bytes", bytesCell(func(r *RunFigures) *int64 { return r.P99PeakBytes }), 0},
	{"OOMs", "ooms", func(r *RunFigures, _ bool) string {
		if !r.HasFigures() {
			return ""
		}
		return strconv.FormatInt(r.OOMs, 10)
	}, 0},
	{"guard actions", "guard_actions", func(r *RunFigures, _ bool) string {
		if !r.HasFigures() {
			return ""
		}
		return strconv.FormatInt(r.GuardActions, 10)
	}, 0},
	{"staleness mean", "staleness_mean", floatCell(func(r *RunFigures) *float64 { return r.StaleMean }, fmtStale), 0},
	{"staleness max", "staleness_max", floatCell(func(r *RunFigures) *float64 { return r.StaleMax }, fmtStale), 0},
	{"history rel. error", "history_rel_err", floatCell(func(r *RunFigures) *float64 { return r.HistoryRelErr }, fmtAcc), 0},
	{"history memory", "history_bytes", bytesCell(func(r *RunFigures) *int64 { return r.HistoryBytes }), 0},
	{"test accuracy", "test_acc", floatCell(func(r *RunFigures) *float64 { return r.TestAcc }, fmtAcc), 0},
	{"test accuracy uncut", "test_acc_uncut", floatCell(func(r *RunFigures) *float64 { return r.TestAccUncut }, fmtAcc), 0},
	{"variant median (s)", "variant_median_s", func(r *RunFigures, _ bool) string {
		return optCell(r.VariantMedianS > 0, fmtSec(r.VariantMedianS))
	}, 0},
	{"speedup", "speedup", func(r *RunFigures, human bool) string {
		if human {
			return FormatSpeedup(r, 3)
		}
		return optCell(r.Speedup > 0, fmtRatio(r.Speedup))
	}, 0},
	{"", "speedup_lo", func(r *RunFigures, _ bool) string {
		return optCell(r.Speedup > 0 && r.SpeedupMethod != "", fmtRatio(r.SpeedupLo))
	}, onlyCSV},
	{"", "speedup_hi", func(r *RunFigures, _ bool) string {
		return optCell(r.Speedup > 0 && r.SpeedupMethod != "", fmtRatio(r.SpeedupHi))
	}, onlyCSV},
	{"", "speedup_method", func(r *RunFigures, _ bool) string { return r.SpeedupMethod }, onlyCSV},
	{"", "single_run", func(r *RunFigures, _ bool) string {
		return optCell(r.Speedup > 0, strconv.FormatBool(r.SingleRun))
	}, onlyCSV},
	{"per-repeat speedups", "speedup_ratios", func(r *RunFigures, human bool) string {
		if human {
			return optCell(r.SpeedupRepeats > 1, FormatRatios(r, 2, " "))
		}
		return FormatRatios(r, 3, ";")
	}, 0},
	{"host", "host_busy", func(r *RunFigures, human bool) string {
		if human {
			return optCell(r.HostBusy != "", "busy")
		}
		return strconv.FormatBool(r.HostBusy != "")
	}, 0},
}

// grid returns the transposed table: a header (the run labels), then one
// row per configuration difference and per figure; configRows says how
// many of the rows are configuration differences.
func (c *Comparison) grid(human bool) (header []string, rows [][]string, configRows int) {
	header = make([]string, 0, len(c.Runs)+1)
	header = append(header, "run")
	for _, r := range c.Runs {
		header = append(header, r.Label)
	}
	for _, k := range c.ConfigKeys {
		row := []string{k}
		for i := range c.Runs {
			row = append(row, c.Runs[i].Config[k])
		}
		rows = append(rows, row)
	}
	for _, fr := range c.figureRows() {
		if !fr.shown(human) {
			continue
		}
		row := []string{fr.label}
		for i := range c.Runs {
			row = append(row, fr.cell(&c.Runs[i], human))
		}
		rows = append(rows, row)
	}
	return header, rows, len(c.ConfigKeys)
}

// notes are the lines below a Markdown table: what speedup is relative
// to, and what went wrong with runs.
func (c *Comparison) notes() []string {
	var out []string
	if c.Baseline != "" {
		out = append(out, SpeedupNote(c.Baseline, c.Runs))
	}
	if c.HasLedger() {
		out = append(out, LedgerNote)
	}
	if c.TTA != nil {
		out = append(out, TTANote(c.TTA))
	}
	for _, r := range c.Runs {
		if r.Ranks > 1 {
			out = append(out, ranksNote(&r))
		}
		if r.EpochSource == "summary" {
			out = append(out, fmt.Sprintf("%s: no spans in the journal; epoch times from its run_end summary", r.Label))
		}
		if r.Malformed > 0 {
			out = append(out, fmt.Sprintf("%s: %d malformed journal lines skipped", r.Label, r.Malformed))
		}
		if r.Error != "" {
			out = append(out, fmt.Sprintf("%s: %s: %s", r.Label, r.Status, r.Error))
		}
		if r.Partial {
			out = append(out, fmt.Sprintf("%s: partial figures (the run stopped: %s); no speedup", r.Label, r.Status))
		}
		out = append(out, r.OutcomeNotes(r.Label)...)
		if r.HostBusy != "" {
			out = append(out, fmt.Sprintf("%s: %s (%s)", r.Label, HostBusyLabel, r.HostBusy))
		}
	}
	return out
}

// mdCell escapes text for a GitHub table cell: pipes and backslashes
// escaped, line breaks and surrounding space removed.
func mdCell(s string) string {
	s = strings.NewReplacer(`\`, `\\`, "|", `\|`, "\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return strings.TrimSpace(s)
}

// mdText escapes Markdown punctuation in running text.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || r == '\r' {
			b.WriteByte(' ')
			continue
		}
		if strings.ContainsRune("\\`*_{}[]<>()#+!|~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Markdown writes a GitHub pipe table (figures as rows, runs as columns,
// configuration differences first; bytes human-readable), then notes.
func (c *Comparison) Markdown(w io.Writer) error {
	header, rows, _ := c.grid(true)
	var b strings.Builder
	line := func(cells []string) {
		b.WriteByte('|')
		for _, s := range cells {
			b.WriteByte(' ')
			b.WriteString(mdCell(s))
			b.WriteString(" |")
		}
		b.WriteByte('\n')
	}
	line(header)
	b.WriteString("|---|")
	for range c.Runs {
		b.WriteString("---:|")
	}
	b.WriteByte('\n')
	for _, r := range rows {
		line(r)
	}
	if notes := c.notes(); len(notes) > 0 {
		b.WriteByte('\n')
		for _, n := range notes {
			b.WriteString("- " + mdText(n) + "\n")
		}
	}
	c.waterfallMarkdown(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// csvColumns returns the CSV header: session, run, variant, the
// configuration differences (prefixed "config." where a name is taken),
// then the figures.
func (c *Comparison) csvColumns() []string {
	cols := []string{"session", "run", "variant"}
	fixed := slices.Clone(cols)
	for _, fr := range c.figureRows() {
		if fr.shown(false) {
			fixed = append(fixed, fr.column)
		}
	}
	for _, k := range c.ConfigKeys {
		name := k
		if slices.Contains(fixed, name) {
			name = "config." + k
		}
		cols = append(cols, name)
	}
	for _, fr := range c.figureRows() {
		if fr.shown(false) {
			cols = append(cols, fr.column)
		}
	}
	return cols
}

// CSV writes one record per run (encoding/csv): session, run, variant,
// the configuration differences, then the figures with bytes as plain
// integers. Unknown figures are empty.
func (c *Comparison) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(append(c.csvColumns(), c.waterfallColumns()...)); err != nil {
		return err
	}
	figures := c.figureRows()
	for i := range c.Runs {
		r := &c.Runs[i]
		rec := []string{r.Session, r.Run, r.Variant}
		for _, k := range c.ConfigKeys {
			rec = append(rec, r.Config[k])
		}
		for _, fr := range figures {
			if fr.shown(false) {
				rec = append(rec, fr.cell(r, false))
			}
		}
		rec = append(rec, make([]string, len(c.waterfallColumns()))...)
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	if err := c.waterfallCSV(cw, len(c.csvColumns())); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// latexEscaper escapes LaTeX's special characters in text mode.
var latexEscaper = strings.NewReplacer(
	`\`, `\textbackslash{}`,
	"&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`,
	"{", `\{`, "}", `\}`,
	"~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	"<", `\textless{}`, ">", `\textgreater{}`, "|", `\textbar{}`,
	"\r\n", " ", "\n", " ", "\r", " ",
)

// LaTeXEscape escapes text for LaTeX's text mode: & % $ # _ { } ~ ^ \ and
// < > |, which the default font encoding does not print as such.
func LaTeXEscape(s string) string { return latexEscaper.Replace(s) }

// LaTeX writes a tabular environment only (figures as rows, runs as
// columns, configuration differences first, \hline rules; no packages
// needed), to \input into a document.
func (c *Comparison) LaTeX(w io.Writer) error {
	header, rows, configRows := c.grid(true)
	var b strings.Builder
	b.WriteString(`\begin{tabular}{l` + strings.Repeat("r", len(c.Runs)) + "}\n\\hline\n")
	line := func(cells []string) {
		for i, s := range cells {
			if i > 0 {
				b.WriteString(" & ")
			}
			b.WriteString(LaTeXEscape(s))
		}
		b.WriteString(" \\\\\n")
	}
	line(header)
	b.WriteString("\\hline\n")
	for i, r := range rows {
		if i == configRows && configRows > 0 {
			b.WriteString("\\hline\n")
		}
		line(r)
	}
	b.WriteString("\\hline\n\\end{tabular}\n")
	c.waterfallLaTeX(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON writes the comparison as one indented JSON object. Figures that
// are not finite numbers are written as 0 (JSON has no NaN).
func (c *Comparison) JSON(w io.Writer) error {
	clean := *c
	clean.Runs = slices.Clone(c.Runs)
	for i := range clean.Runs {
		clean.Runs[i].sanitize()
	}
	b, err := json.MarshalIndent(&clean, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// sanitize replaces non-finite floats by 0 and drops non-finite pointers.
func (r *RunFigures) sanitize() {
	for _, p := range []*float64{&r.EpochMeanS, &r.EpochStdS, &r.EpochMinS, &r.EpochMedianS, &r.EpochMaxS,
		&r.SampleS, &r.TransferS, &r.TrainS, &r.EvalS, &r.DataWaitS, &r.Overlap, &r.Efficiency, &r.Speedup, &r.Straggler, &r.SlowestShare,
		&r.SpeedupLo, &r.SpeedupHi, &r.VariantMedianS} {
		if math.IsNaN(*p) || math.IsInf(*p, 0) {
			*p = 0
		}
	}
	for _, pp := range []**float64{&r.StaleMean, &r.StaleMax, &r.HistoryRelErr, &r.TestAcc, &r.TestAccUncut, &r.ValAcc} {
		if *pp != nil && !finite(**pp) {
			*pp = nil
		}
	}
	if len(r.SpeedupRatios) > 0 {
		ratios := make([]float64, len(r.SpeedupRatios))
		for i, v := range r.SpeedupRatios {
			if finite(v) {
				ratios[i] = v
			}
		}
		r.SpeedupRatios = ratios
	}
}

// MarshalJSON writes the figures with Config's values in their JSON
// types: a number is a JSON number, a list a JSON list; text that did not
// come from a journal (Config set by hand) is written as strings.
func (r RunFigures) MarshalJSON() ([]byte, error) {
	type plain RunFigures
	var cfg map[string]json.RawMessage
	if len(r.Config) > 0 {
		cfg = make(map[string]json.RawMessage, len(r.Config))
		for k, v := range r.Config {
			if raw, ok := r.configJSON[k]; ok && json.Valid(raw) {
				cfg[k] = raw
			} else {
				cfg[k], _ = json.Marshal(v)
			}
		}
	}
	return json.Marshal(struct {
		plain
		Config map[string]json.RawMessage `json:"config,omitempty"`
	}{plain(r), cfg})
}

// UnmarshalJSON reads what MarshalJSON writes: Config's values back to
// their text (see flattenTyped).
func (r *RunFigures) UnmarshalJSON(b []byte) error {
	type plain RunFigures
	var v struct {
		*plain
		Config map[string]json.RawMessage `json:"config,omitempty"`
	}
	v.plain = (*plain)(r)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.Config, r.configJSON = nil, nil
	if len(v.Config) > 0 {
		r.Config = make(map[string]string, len(v.Config))
		r.configJSON = make(map[string]json.RawMessage, len(v.Config))
		for k, raw := range v.Config {
			r.Config[k], r.configJSON[k] = configText(raw), typedValue(raw)
		}
	}
	return nil
}
