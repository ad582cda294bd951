package dashboard

import (
	"math"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/profile"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/draw"
	"github.com/gnnscope/gnnscope/tui/runstate"
)

// categoryStage is the stage whose color and letter draw a category of
// the ledger.
var categoryStage = [analysis.NumCategories]string{
	analysis.Sample: profile.StageSample, analysis.Transfer: profile.StageTransfer,
	analysis.Train: profile.StageTrain, analysis.Eval: profile.StageEval,
	analysis.Other: profile.StageSetup, analysis.Idle: profile.StageWait,
}

// categoryLetter draws a category without color.
var categoryLetter = [analysis.NumCategories]string{"s", "t", "T", "e", ".", "_"}

// answersHeight is the most lines the answers pane takes: the ledger
// bar, its legend, the verdict and two advice lines.
const answersHeight = 5

// answersView draws a run's answers in at most h lines of width w: the
// exposed share of each stage of the wall time (setup left out) as a
// stacked bar with a legend, the verdict, and the advice that fired (or
// that none did).
func answersView(st *common.Styles, a *runstate.Answers, w, h int) []string {
	if a == nil || h <= 0 || w <= 0 {
		return nil
	}
	ell := st.Glyphs.Ellipsis
	head := st.Header.Render("Answers") + " "
	win := &a.Run.Training
	if win.WallS <= 0 {
		return []string{draw.Cut(head+st.Muted.Render("no training yet"), w, ell)}
	}
	label := "exposed "
	bw := w - draw.Width("Answers ") - len(label)
	out := []string{head + st.Muted.Render(label) + ledgerBar(st, win, bw)}
	if h >= 4 { // short, the verdict and the advice come first
		out = append(out, draw.Cut(ledgerLegend(st, win, a.Run.Config.External), w, ell))
	}
	out = append(out, draw.Cut(verdictStyle(st, a.Run.Verdict).Render(a.Run.Verdict.Text), w, ell))
	fired := analysis.Fired(a.Advice)
	if len(fired) == 0 {
		out = append(out, st.Muted.Render(draw.Cut("advice: no rule fires", w, ell)))
	}
	for _, ad := range fired {
		out = append(out, draw.Cut(st.Warn.Render("advice: ")+ad.Text+tries(ad), w, ell))
	}
	return out[:min(len(out), h)]
}

// tries lists the flags an advice proposes.
func tries(ad analysis.Advice) string {
	if len(ad.Try) == 0 {
		return ""
	}
	flags := make([]string, len(ad.Try))
	for i, t := range ad.Try {
		flags[i] = t.Flag
	}
	return "; try " + strings.Join(flags, ", ")
}

// verdictStyle stresses a run bound by one stage.
func verdictStyle(st *common.Styles, v analysis.Verdict) lipgloss.Style {
	if v.Kind == analysis.VerdictBound {
		return st.Title
	}
	return st.Muted
}

// glyphOf is the cell of a category: its stage's color on a full block,
// or its letter without color.
func glyphOf(st *common.Styles, c analysis.Category) string {
	stage := categoryStage[c]
	if st.Color {
		return draw.PenOf(st.StageStyle(stage)).Paint(st.Glyphs.Full)
	}
	return categoryLetter[c]
}

// ledgerBar draws the exposed shares of w as a bar of width bw, the
// cells given to categories by the largest remainder, so that they add
// up to the width.
func ledgerBar(st *common.Styles, win *analysis.Window, bw int) string {
	if bw <= 0 {
		return ""
	}
	cells := shareCells(win, bw)
	var b strings.Builder
	for c, n := range cells {
		if n > 0 {
			b.WriteString(strings.Repeat(glyphOf(st, analysis.Category(c)), n))
		}
	}
	return b.String()
}

// shareCells splits n cells between the categories by their exposed
// shares (largest remainder).
func shareCells(win *analysis.Window, n int) [analysis.NumCategories]int {
	var cells [analysis.NumCategories]int
	var rest [analysis.NumCategories]float64
	used := 0
	for c := range cells {
		f := win.Share(analysis.Category(c)) * float64(n)
		cells[c] = int(math.Floor(f))
		rest[c] = f - float64(cells[c])
		used += cells[c]
	}
	for ; used < n; used++ {
		k := 0
		for c := range rest {
			if rest[c] > rest[k] {
				k = c
			}
		}
		if rest[k] <= 0 {
			break
		}
		cells[k]++
		rest[k] = 0
	}
	return cells
}

// ledgerLegend names the categories with any exposed time, with their
// cells and exposed shares.
func ledgerLegend(st *common.Styles, win *analysis.Window, external bool) string {
	var parts []string
	for _, c := range analysis.Categories() {
		s := win.Share(c)
		if s <= 0 {
			continue
		}
		name := c.String()
		if c == analysis.Sample && external {
			name = "loading"
		}
		parts = append(parts, glyphOf(st, c)+" "+name+" "+strconv.Itoa(int(math.Round(100*s)))+"%")
	}
	return strings.Join(parts, "  ")
}
