package dashboard

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/gnnscope/gnnscope/analysis"
	"github.com/gnnscope/gnnscope/tui/common"
	"github.com/gnnscope/gnnscope/tui/internal/golden"
)

// TestGoldenAnswers: two runs side by side at 160×48, each with its
// answers pane (ledger bar and legend, verdict, advice).
func TestGoldenAnswers(t *testing.T) {
	m := finished(t, common.Options{NoColor: true}, 160, 48)
	v := ansi.Strip(m.View())
	if strings.Count(v, "Answers exposed ") != 2 || !strings.Contains(v, "bound by") {
		t.Errorf("no answers for both runs:\n%s", v)
	}
	golden.Check(t, "answers_160x48", v)
}

// TestLedgerBarCells: the bar's cells follow the exposed shares and fill
// its width exactly.
func TestLedgerBarCells(t *testing.T) {
	var w analysis.Window
	w.WallS = 1
	w.Exposed[analysis.Sample], w.Exposed[analysis.Train], w.Exposed[analysis.Idle] = 0.61, 0.335, 0.055
	cells := shareCells(&w, 20)
	if cells[analysis.Sample] != 12 || cells[analysis.Train] != 7 || cells[analysis.Idle] != 1 {
		t.Errorf("cells %v", cells)
	}
	st := common.NewStyles(common.Options{NoColor: true})
	if bar := ledgerBar(st, &w, 20); bar != "ssssssssssssTTTTTTT_" || lipgloss.Width(bar) != 20 {
		t.Errorf("bar %q", bar)
	}
}
